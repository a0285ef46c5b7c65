#!/usr/bin/env python3
"""paraplan_probe: measure the kernel tables paraplan's kernel model reads on
whatever GPU this machine has, and write them as a GPU profile directory.

    python3 tools/probe/paraplan_probe.py --out my-gpu-profile [--quick]
    paraplan estimate ... --gpu-profile my-gpu-profile

The tables and their fields are those of ../shared/measurements/h100-sxm
(README there): gemm_bf16.jsonl, gemm_fp8_tensorwise.jsonl,
attention_bf16.jsonl, grouped_gemm_bf16.jsonl, memory_bandwidth.jsonl and
device.json; and stream_launch.jsonl (not in the H100 set: back-to-back calls
against isolated ones and the host's issue time per call, for the host queue of
docs/kernel.md).  Method as there: random bf16 inputs (never zeros), two input sets
rotated between calls so small shapes are not served from L2, the median of
the timed calls after warm-up calls, each timed with CUDA events.

PyTorch (with CUDA) is needed only to measure; paraplan never needs it to
build or test.  `--check DIR` validates a profile directory's format without
PyTorch (the unit tests run it on ../shared/measurements/h100-sxm).
Exit codes: 0 done, 2 bad input or no usable GPU/PyTorch.
"""
import argparse
import json
import math
import os
import statistics
import sys

TABLES = {
    "gemm_bf16.jsonl": ("m", "k", "n", "s"),
    "gemm_fp8_tensorwise.jsonl": ("m", "k", "n", "s"),
    "attention_bf16.jsonl": ("b", "hq", "hkv", "seq", "d", "fwd_s", "bwd_s"),
    "grouped_gemm_bf16.jsonl": ("experts", "tokens_per_expert", "k", "n", "grouped_s"),
    "memory_bandwidth.jsonl": ("kind", "bytes", "s"),
    # optional: the host queue's split (docs/kernel.md "The host queue")
    "stream_launch.jsonl": ("bytes", "n", "isolated_s", "chain_s", "host_s"),
}
REQUIRED = ("gemm_bf16.jsonl", "memory_bandwidth.jsonl")

# Llama-3-8B (h 4096, 32 heads, 8 kv, ffn 14336) and Llama-3-70B (h 8192, 64
# heads, 8 kv, ffn 28672) linear layers at tp 1/2/4/8, as the H100 tables.
MODELS = {"8b": (4096, 32, 8, 14336), "70b": (8192, 64, 8, 28672)}
MOE = {  # name: (hidden, expert ffn, local expert counts)
    "qwen3-30b-a3b": (2048, 768, (16, 128)),
    "deepseek-v3": (7168, 2048, (8, 32)),
    "mixtral-8x7b": (4096, 14336, (2, 8)),
}


def fail(msg):
    print("paraplan_probe: " + msg, file=sys.stderr)
    sys.exit(2)


def check_profile(d):
    """Validate a profile directory; returns the record counts.  One line and
    exit 2 on the first problem."""
    dev = os.path.join(d, "device.json")
    try:
        with open(dev) as f:
            info = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (dev, e))
    if not isinstance(info, dict) or not isinstance(info.get("sms", 0), int):
        fail("%s: 'sms' must be an integer" % dev)
    counts = {}
    for name, fields in TABLES.items():
        path = os.path.join(d, name)
        if not os.path.exists(path):
            if name in REQUIRED:
                fail("%s: missing (required)" % path)
            continue
        n = 0
        with open(path) as f:
            for i, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                except ValueError as e:
                    fail("%s:%d: %s" % (path, i, e))
                for k in fields:
                    v = r.get(k)
                    if k == "kind":
                        if v not in ("copy", "add"):
                            fail("%s:%d: field 'kind' must be copy or add" % (path, i))
                    elif not isinstance(v, (int, float)) or not v > 0 or math.isinf(v):
                        fail("%s:%d: field '%s' missing or not a positive number" % (path, i, k))
                n += 1
        counts[name] = n
    return counts


class Timer:
    """Median seconds of fn(i) over `iters` calls after `warmup`, CUDA events."""

    def __init__(self, torch, warmup, iters):
        self.torch, self.warmup, self.iters = torch, warmup, iters

    def __call__(self, fn):
        torch = self.torch
        for i in range(self.warmup):
            fn(i)
        torch.cuda.synchronize()
        times = []
        for i in range(self.iters):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn(i)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) / 1e3)
        return statistics.median(times)


def gemm_shapes(quick):
    tokens = (4096,) if quick else (1024, 4096, 16384)
    tps = (1, 8) if quick else (1, 2, 4, 8)
    for m in tokens:
        for name, (h, heads, kv, ffn) in MODELS.items():
            d = h // heads
            for tp in tps:
                yield m, "%s.qkv.tp%d" % (name, tp), h, (heads + 2 * kv) * d // tp
                yield m, "%s.proj.tp%d" % (name, tp), h // tp, h
                yield m, "%s.fc1.tp%d" % (name, tp), h, 2 * ffn // tp
                yield m, "%s.fc2.tp%d" % (name, tp), ffn // tp, h


def rand(torch, shape, dtype):
    return (torch.randn(*shape, device="cuda", dtype=torch.float32) + 0.01).to(dtype)


def stream_rows(torch, time, quick):
    """What of an isolated call's fixed time stays on the GPU in a busy stream
    (docs/kernel.md "The host queue"): per op, the isolated call (CUDA events
    around one call from an idle GPU, as the other tables), `chain_s` the time
    per call of n calls back to back (events around the chain: the GPU's
    part), and `host_s` the host's time per call issuing n calls while the
    GPU is held by a long kernel (host clock: the host's part).  The
    `linear_autocast` op is a training forward's call: F.linear on an fp32
    weight under torch.autocast with autograd recording."""
    import time as clock
    import torch.nn.functional as F
    bf = torch.bfloat16
    n_calls = 50 if quick else 200
    cases = []
    for nbytes in (8 << 20, 64 << 20):
        n = nbytes // 4
        src = [rand(torch, (n,), bf) for _ in range(2)]
        dst = torch.empty_like(src[0])
        cases.append(("copy", nbytes, lambda i, s=src, d=dst: d.copy_(s[i % 2])))
    a = [rand(torch, (2048, 2048), bf) for _ in range(2)]
    c = torch.empty_like(a[0])
    cases.append(("matmul", 3 * 2048 * 2048 * 2,
                  lambda i: torch.matmul(a[i % 2], a[(i + 1) % 2], out=c)))
    x = rand(torch, (2048, 2048), torch.float32).requires_grad_()
    w = rand(torch, (2048, 2048), torch.float32).requires_grad_()

    def linear(i):
        with torch.autocast("cuda", dtype=bf):
            return F.linear(x, w)
    cases.append(("linear_autocast", 2048 * 2048 * (4 + 2 + 2 + 2), linear))
    rows = []
    for op, nbytes, fn in cases:
        iso = time(fn)
        chain, host = [], []
        for _ in range(3 if quick else 5):
            torch.cuda.synchronize()
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            for i in range(n_calls):
                fn(i)
            e1.record()
            e1.synchronize()
            chain.append(e0.elapsed_time(e1) / 1e3 / n_calls)
            torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU cycles: the host runs ahead
            t0 = clock.perf_counter()
            for i in range(n_calls):
                fn(i)
            host.append((clock.perf_counter() - t0) / n_calls)
            torch.cuda.synchronize()
        rows.append({"kind": "stream", "op": op, "bytes": nbytes, "n": n_calls,
                     "isolated_s": iso, "chain_s": statistics.median(chain),
                     "host_s": statistics.median(host)})
    return rows


def probe(out, quick):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        fail("PyTorch is not installed (pip install torch); paraplan itself does not need it")
    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to PyTorch")
    os.makedirs(out, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    time = Timer(torch, 3 if quick else 5, 10 if quick else 20)
    bf = torch.bfloat16
    rows = {k: [] for k in TABLES}

    def write_all():
        for name, rs in rows.items():
            if rs:
                tmp = os.path.join(out, name + ".tmp")
                with open(tmp, "w") as f:
                    for r in rs:
                        f.write(json.dumps(r) + "\n")
                os.replace(tmp, os.path.join(out, name))

    with open(os.path.join(out, "device.json"), "w") as f:
        json.dump({"kind": "device", "name": props.name, "sms": props.multi_processor_count,
                   "mem_bytes": props.total_memory, "torch": torch.__version__}, f, indent=1)

    # GEMMs: fwd m x k . k x n, dgrad m x n . n x k, wgrad k x m . m x n.
    for m, name, k, n in gemm_shapes(quick):
        sets = [(rand(torch, (m, k), bf), rand(torch, (k, n), bf), rand(torch, (m, n), bf))
                for _ in range(2)]
        ops = {
            "fwd": lambda i: torch.mm(sets[i % 2][0], sets[i % 2][1]),
            "dgrad": lambda i: torch.mm(sets[i % 2][2], sets[i % 2][1].t()),
            "wgrad": lambda i: torch.mm(sets[i % 2][0].t(), sets[i % 2][2]),
        }
        for op, fn in ops.items():
            s = time(fn)
            rows["gemm_bf16.jsonl"].append({"kind": "gemm", "name": name, "op": op, "m": m,
                                            "k": k, "n": n, "s": s,
                                            "tflops": 2 * m * k * n / s / 1e12})
        del sets
    write_all()

    # FP8, one scale per tensor (torch._scaled_mm, e4m3 x e4m3 -> bf16).
    if hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn"):
        for m in ((4096,) if quick else (4096, 16384)):
            for k, n in ((4096, 6144), (4096, 28672), (8192, 57344), (8192, 8192)):
                try:
                    a = [rand(torch, (m, k), bf).to(torch.float8_e4m3fn) for _ in range(2)]
                    b = [rand(torch, (n, k), bf).to(torch.float8_e4m3fn).t() for _ in range(2)]
                    one = torch.ones((), device="cuda")
                    s = time(lambda i: torch._scaled_mm(a[i % 2], b[i % 2], scale_a=one,
                                                        scale_b=one, out_dtype=bf))
                except (RuntimeError, TypeError) as e:  # no FP8 tensor cores
                    print("paraplan_probe: fp8 skipped: %s" % str(e).splitlines()[0],
                          file=sys.stderr)
                    break
                rows["gemm_fp8_tensorwise.jsonl"].append(
                    {"kind": "gemm_fp8", "m": m, "k": k, "n": n, "s": s,
                     "tflops": 2 * m * k * n / s / 1e12})
                del a, b
            else:
                continue
            break
    write_all()

    # Flash attention, causal, d 128, 16384 tokens per call.
    for hq, hkv in ((8, 2), (32, 8), (64, 8)):
        for seq in ((2048, 8192) if quick else (2048, 4096, 8192, 16384, 32768)):
            b, d = max(1, 16384 // seq), 128
            qs = [rand(torch, (b, hq, seq, d), bf).requires_grad_() for _ in range(2)]
            kv = [rand(torch, (b, hkv, seq, d), bf).requires_grad_() for _ in range(2)]

            def fwd(i):
                k = kv[i % 2].repeat_interleave(hq // hkv, dim=1)
                return F.scaled_dot_product_attention(qs[i % 2], k, k, is_causal=True)

            fwd_s = time(fwd)
            outs = [fwd(i) for i in range(2)]
            grads = [torch.randn_like(o) for o in outs]
            bwd_s = time(lambda i: torch.autograd.grad(outs[i % 2], (qs[i % 2], kv[i % 2]),
                                                       grads[i % 2], retain_graph=True))
            fl = 2 * 2 * b * hq * seq * seq * d / 2
            rows["attention_bf16.jsonl"].append(
                {"kind": "attn", "b": b, "hq": hq, "hkv": hkv, "seq": seq, "d": d,
                 "fwd_s": fwd_s, "bwd_s": bwd_s, "fwd_tflops_causal": fl / fwd_s / 1e12,
                 "bwd_tflops_causal": 2.5 * fl / bwd_s / 1e12})
            del qs, kv, outs, grads
    write_all()

    # Grouped expert GEMMs (torch._grouped_mm) and the per-expert loop.
    grouped = getattr(torch, "_grouped_mm", None)
    for model, (h, f, counts) in MOE.items():
        for e in counts:
            for tpe in ((64, 512, 2048) if quick else (64, 128, 256, 512, 1024, 2048, 4096,
                                                        8192)):
                for op, k, n in (("fc1", h, 2 * f), ("fc2", f, h)):
                    if e * tpe * max(k, n) * 2 * 3 > props.total_memory // 4:
                        continue
                    x = [rand(torch, (e * tpe, k), bf) for _ in range(2)]
                    w = [rand(torch, (e, k, n), bf) for _ in range(2)]
                    offs = torch.arange(tpe, e * tpe + 1, tpe, device="cuda",
                                        dtype=torch.int32)
                    flops = 2.0 * e * tpe * k * n
                    r = {"kind": "moe_gemm", "model": model, "op": op, "experts": e,
                         "tokens_per_expert": tpe, "k": k, "n": n, "flops": flops}
                    loop_s = time(lambda i: [torch.mm(x[i % 2][j * tpe:(j + 1) * tpe],
                                                      w[i % 2][j]) for j in range(e)])
                    r.update(loop_s=loop_s, loop_tflops=flops / loop_s / 1e12)
                    if grouped is not None:
                        try:
                            s = time(lambda i: grouped(x[i % 2], w[i % 2], offs=offs))
                            r.update(grouped_s=s, grouped_tflops=flops / s / 1e12)
                        except RuntimeError as ex:  # pre-Hopper: no grouped kernel
                            print("paraplan_probe: grouped_mm: %s" % str(ex).splitlines()[0],
                                  file=sys.stderr)
                            grouped = None
                    if "grouped_s" in r:
                        rows["grouped_gemm_bf16.jsonl"].append(r)
                    del x, w
    write_all()

    # HBM: copies (bytes = read + written) and x + x (counts x twice).
    for nbytes in (64 << 20, 512 << 20, 2 << 30):
        n = nbytes // 4  # bf16 elements so that read + written = nbytes
        src = [rand(torch, (n,), bf) for _ in range(2)]
        dst = torch.empty_like(src[0])
        s = time(lambda i: dst.copy_(src[i % 2]))
        rows["memory_bandwidth.jsonl"].append({"kind": "copy", "bytes": nbytes, "s": s,
                                               "tb_per_s": nbytes / s / 1e12})
        s = time(lambda i: torch.add(src[i % 2], src[i % 2], out=dst))
        rows["memory_bandwidth.jsonl"].append({"kind": "add", "bytes": 3 * n * 2, "s": s,
                                               "tb_per_s": 3 * n * 2 / s / 1e12})
        del src, dst
    write_all()

    rows["stream_launch.jsonl"] = stream_rows(torch, time, quick)
    write_all()
    counts = check_profile(out)
    print("paraplan_probe: %s (%d SMs): wrote %s: %s" % (
        props.name, props.multi_processor_count, out,
        ", ".join("%s %d" % (k, v) for k, v in counts.items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="profile directory to write")
    ap.add_argument("--quick", action="store_true", help="fewer shapes and calls")
    ap.add_argument("--check", metavar="DIR", help="validate a profile directory and exit")
    a = ap.parse_args()
    if a.check:
        counts = check_profile(a.check)
        print("paraplan_probe: %s: %s" % (a.check, ", ".join(
            "%s %d" % (k, v) for k, v in counts.items())))
        return 0
    if not a.out:
        fail("--out DIR is required (or --check DIR)")
    probe(a.out, a.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
