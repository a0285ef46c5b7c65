#!/usr/bin/env python3
"""train_step_probe: rerun the eager training steps of a train_steps_eager.jsonl
(../shared/measurements/h100-sxm) on this machine's GPU, and say where each
step's time goes.

    python3 tools/probe/train_step_probe.py --steps train_steps_eager.jsonl \
        --out steps.jsonl [--profile N]

For each line of --steps it builds the loop that README describes (plain
PyTorch, eager: RMSNorm in fp32 cast back, fused QKV, interleaved RoPE, causal
SDPA with K/V expanded by repeat_interleave, fused gate+up, SiLU-gate, fp32
parameters, autocast bf16, fp32 cross-entropy, fused AdamW, zero_grad(set_to_none=False),
torch.utils.checkpoint for full recompute), times two warm-up and three steps
with CUDA events, and writes the line back with `probe_step_s` (the median),
`probe_host_s` (host clock from the step's start until its last launch was
issued: the host's part) and the peaks.  For the first N lines (--profile) it
also profiles one step (torch.profiler, CUDA activity) and writes the GPU time
by kernel family (`kernel_s`: gemm, attention, optimizer, loss, other) and
`busy_s`, the union of kernel intervals: step_s - busy_s is the time the GPU
waited for the host.

PyTorch with CUDA is needed; paraplan never needs it to build or test.
Exit codes: 0 done, 2 bad input or no usable GPU/PyTorch.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time


def fail(msg):
    print("train_step_probe: " + msg, file=sys.stderr)
    sys.exit(2)


def build(torch, r):
    nn, F = torch.nn, torch.nn.functional
    hidden, heads, kv = r["hidden"], r["heads"], r["kv_heads"]
    hd = hidden // heads

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(hidden))

        def forward(self, x):
            xf = x.float()
            y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
            return (y * self.w).to(x.dtype)

    def rope(x, cos, sin):
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1).flatten(-2)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = RMSNorm(), RMSNorm()
            self.qkv = nn.Linear(hidden, (heads + 2 * kv) * hd, bias=False)
            self.o = nn.Linear(heads * hd, hidden, bias=False)
            self.up = nn.Linear(hidden, 2 * r["ffn"], bias=False)
            self.down = nn.Linear(r["ffn"], hidden, bias=False)

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.n1(x)).split((heads * hd, kv * hd, kv * hd), -1)
            q = rope(q.view(b, s, heads, hd).transpose(1, 2), cos, sin)
            k = rope(k.view(b, s, kv, hd).transpose(1, 2), cos, sin)
            v = v.view(b, s, kv, hd).transpose(1, 2)
            if kv != heads:
                k = k.repeat_interleave(heads // kv, dim=1)
                v = v.repeat_interleave(heads // kv, dim=1)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.o(a.transpose(1, 2).reshape(b, s, hidden))
            g, u = self.up(self.n2(x)).chunk(2, -1)
            return x + self.down(F.silu(g) * u)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(r["vocab"], hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(r["layers"]))
            self.norm = RMSNorm()
            self.head = nn.Linear(hidden, r["vocab"], bias=False)
            if r.get("tied"):
                self.head.weight = self.emb.weight

        def forward(self, tok, cos, sin):
            x = self.emb(tok)
            for blk in self.blocks:
                if r["recompute"] == "full":
                    x = torch.utils.checkpoint.checkpoint(blk, x, cos, sin, use_reentrant=False)
                else:
                    x = blk(x, cos, sin)
            return self.head(self.norm(x))

    return Model()


FAMILIES = (  # first match wins; names of cuBLAS/cuDNN/flash/ATen kernels
    ("attention", ("flash", "fmha", "attention", "cudnn", "sdpa")),
    ("gemm", ("gemm", "nvjet", "cutlass", "xmma", "sm90_", "sm80_", "cublas", "splitk")),
    ("optimizer", ("multi_tensor", "adam", "foreach")),
    ("loss", ("nll", "softmax", "cross_entropy", "embedding")),
)


def family(name):
    low = name.lower()
    for fam, keys in FAMILIES:
        if any(k in low for k in keys):
            return fam
    return "other"


def run_step(torch, model, opt, data, r):
    tok, lab, cos, sin = data
    for _ in range(r["microbatches"]):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tok, cos, sin).float()  # the bf16 logits die here
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), lab.flatten())
        del logits
        (loss / r["microbatches"]).backward()
        del loss
    opt.step()
    opt.zero_grad(set_to_none=False)


def measure(torch, r, profile, shapes=False):
    dev = "cuda"
    torch.manual_seed(0)
    with torch.device(dev):  # initialised on the GPU: seconds, not a minute, for 1B
        model = build(torch, r)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    hd = r["hidden"] // r["heads"]
    pos = torch.arange(r["seq"], device=dev, dtype=torch.float32)
    inv = 1.0 / (500000.0 ** (torch.arange(0, hd // 2, device=dev) / (hd // 2)))
    ang = torch.outer(pos, inv)
    data = (torch.randint(0, r["vocab"], (r["mbs"], r["seq"]), device=dev),
            torch.randint(0, r["vocab"], (r["mbs"], r["seq"]), device=dev),
            ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16))
    for _ in range(2):
        run_step(torch, model, opt, data, r)
    torch.cuda.synchronize()
    static = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    steps, hosts = [], []
    for _ in range(3):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        t0 = time.perf_counter()
        run_step(torch, model, opt, data, r)
        hosts.append(time.perf_counter() - t0)
        b.record()
        b.synchronize()
        steps.append(a.elapsed_time(b) / 1e3)
    out = dict(r)
    out.update(probe_step_s=statistics.median(steps), probe_steps_s=steps,
               probe_host_s=statistics.median(hosts),
               probe_static_bytes=static, probe_peak_alloc_bytes=torch.cuda.max_memory_allocated(),
               probe_peak_reserved_bytes=torch.cuda.max_memory_reserved())
    if profile:
        from torch.profiler import ProfilerActivity, profile as prof_ctx
        acts = [ProfilerActivity.CUDA] + ([ProfilerActivity.CPU] if shapes else [])
        with prof_ctx(activities=acts, record_shapes=shapes) as p:
            run_step(torch, model, opt, data, r)
            torch.cuda.synchronize()
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        p.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
        os.unlink(path)
        ivs, fam, names, ops, cpu = [], {}, {}, {}, {}
        for e in trace.get("traceEvents", []):
            if e.get("cat") == "cpu_op":
                a_ = e.get("args", {})
                cpu[a_.get("External id")] = "%s %s" % (e.get("name", ""),
                                                        json.dumps(a_.get("Input Dims", [])))
        for e in trace.get("traceEvents", []):
            if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset") or "dur" not in e:
                continue
            s, d = float(e["ts"]) * 1e-6, float(e["dur"]) * 1e-6
            ivs.append((s, s + d))
            f_ = family(e.get("name", "")) if e["cat"] == "kernel" else "copy"
            fam[f_] = fam.get(f_, 0.0) + d
            key = e.get("name", "")[:90]
            c = names.setdefault(key, [0, 0.0])
            c[0] += 1
            c[1] += d
            if shapes:
                o_ = ops.setdefault("%s | %s" % (cpu.get(e.get("args", {}).get("External id"), "?"),
                                                 key[:60]), [0, 0.0])
                o_[0] += 1
                o_[1] += d
        ivs.sort()
        busy, end = 0.0, None
        for s, e in ivs:
            if end is None or s > end:
                busy += e - s
                end = e
            elif e > end:
                busy += e - end
                end = e
        out.update(kernels=len(ivs), busy_s=busy, kernel_s=fam,
                   span_s=(ivs[-1][1] - ivs[0][0]) if ivs else 0.0,
                   top=sorted(([k, v[0], v[1]] for k, v in names.items()),
                              key=lambda x: -x[2])[:25])
        if shapes:
            out["ops"] = sorted(([k, v[0], v[1]] for k, v in ops.items()), key=lambda x: -x[2])
    del model, opt, data
    torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", required=True, help="train_steps_eager.jsonl to rerun")
    ap.add_argument("--out", required=True, help="JSON lines written here")
    ap.add_argument("--profile", type=int, default=0, help="profile the first N steps")
    ap.add_argument("--shapes", action="store_true",
                    help="profile with CPU ops and shapes: GPU time per (op, input dims)")
    ap.add_argument("--only", help="comma-separated line numbers (1-based) to run")
    a = ap.parse_args()
    try:
        with open(a.steps) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        fail("%s: %s" % (a.steps, e))
    try:
        import torch
    except ImportError:
        fail("PyTorch is not installed; paraplan itself does not need it")
    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    pick = [int(x) for x in a.only.split(",")] if a.only else range(1, len(rows) + 1)
    done = 0
    with open(a.out, "w") as f:
        for i in pick:
            r = rows[i - 1]
            t0 = time.time()
            o = measure(torch, r, done < a.profile, a.shapes)
            o.update(line=i, wall_t0=t0, wall_t1=time.time())  # to align with a clock log
            f.write(json.dumps(o) + "\n")
            f.flush()
            done += 1
            print("train_step_probe: line %d %s seq %d mbs %d %s: %.4f s (shared %.4f), "
                  "host %.4f s%s" % (i, r["model"], r["seq"], r["mbs"], r["recompute"],
                                     o["probe_step_s"], r["step_s"], o["probe_host_s"],
                                     ", busy %.4f s" % o["busy_s"] if "busy_s" in o else ""),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
