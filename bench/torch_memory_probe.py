#!/usr/bin/env python3
"""Peak training memory of Llama-shaped models on one GPU, next to paraplan's.

What it measures: a plain PyTorch training step as PyTorch-native stacks run it
on one GPU -- fp32 parameters, torch.autocast(bfloat16), F.cross_entropy on the
logits upcast to fp32, fused AdamW -- and torch.cuda.max_memory_allocated() over
a steady-state step (the optimizer state already exists).  For each shape it
writes a paraplan model JSON and, with --paraplan, runs

    paraplan estimate --model SHAPE.json --system dgx-h100 --gpus 1 --gbs MBS
                      --mbs MBS --seq SEQ --framework torchtitan --json

and compares the measured peak with paraplan's tensor bytes (the total less the
CUDA context, the NCCL buffers and the allocator's fragmentation, which
max_memory_allocated does not count).  --recompute selective wraps each block
in torch.utils.checkpoint with torchtitan's per-op policy (save mm outputs
except every second one, and SDPA's).

PyTorch is optional for paraplan and never needed to build or test it; this
script is for whoever has a GPU.  Usage:

    python3 bench/torch_memory_probe.py --paraplan build/paraplan [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys

# Three Llama-shaped models (hidden, layers, heads, kv heads, ffn, vocab).
SHAPES = {
    "llama-0.5b": (1024, 24, 16, 8, 4096, 128256),
    "llama-1.2b": (2048, 16, 32, 8, 8192, 128256),
    "llama-3b": (3072, 28, 24, 8, 8192, 128256),
}


def build(torch, hidden, layers, heads, kv, ffn, vocab, recompute):
    nn = torch.nn
    F = torch.nn.functional
    hd = hidden // heads

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return F.rms_norm(x, (x.shape[-1],), self.w, 1e-5)

    def rope(x, cos, sin):
        x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), -1)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = RMSNorm(hidden), RMSNorm(hidden)
            self.wq = nn.Linear(hidden, heads * hd, bias=False)
            self.wk = nn.Linear(hidden, kv * hd, bias=False)
            self.wv = nn.Linear(hidden, kv * hd, bias=False)
            self.wo = nn.Linear(heads * hd, hidden, bias=False)
            self.w1 = nn.Linear(hidden, ffn, bias=False)
            self.w3 = nn.Linear(hidden, ffn, bias=False)
            self.w2 = nn.Linear(ffn, hidden, bias=False)

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            h = self.n1(x)
            q = self.wq(h).view(b, s, heads, hd).transpose(1, 2)
            k = self.wk(h).view(b, s, kv, hd).transpose(1, 2)
            v = self.wv(h).view(b, s, kv, hd).transpose(1, 2)
            q, k = rope(q, cos, sin), rope(k, cos, sin)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.wo(o.transpose(1, 2).reshape(b, s, heads * hd))
            h = self.n2(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.norm = RMSNorm(hidden)
            self.head = nn.Linear(hidden, vocab, bias=False)

        def forward(self, tok, cos, sin):
            x = self.emb(tok)
            for blk in self.blocks:
                if recompute == "selective":
                    x = torch.utils.checkpoint.checkpoint(
                        blk, x, cos, sin, use_reentrant=False, context_fn=sac_context(torch)
                    )
                elif recompute == "full":
                    x = torch.utils.checkpoint.checkpoint(blk, x, cos, sin, use_reentrant=False)
                else:
                    x = blk(x, cos, sin)
            return self.head(self.norm(x))

    return Model()


def sac_context(torch):
    """torchtitan's op-level selective checkpoint policy (activation_checkpoint.py)."""
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    save = {
        torch.ops.aten.mm.default,
        torch.ops.aten._scaled_dot_product_efficient_attention.default,
        torch.ops.aten._scaled_dot_product_flash_attention.default,
        torch.ops.aten._scaled_dot_product_cudnn_attention.default,
    }
    meta = {"forward": 0, "recompute": 0}

    def policy(ctx, func, *args, **kwargs):
        mode = "recompute" if ctx.is_recompute else "forward"
        if func == torch.ops.aten.mm.default:
            meta[mode] += 1
        keep = func in save and not (func == torch.ops.aten.mm.default and meta[mode] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return lambda: create_selective_checkpoint_contexts(policy)


def measure(torch, shape, seq, mbs, recompute):
    hidden, layers, heads, kv, ffn, vocab = shape
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = build(torch, hidden, layers, heads, kv, ffn, vocab, recompute).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    hd = hidden // heads
    pos = torch.arange(seq, device=dev, dtype=torch.float32)
    inv = 1.0 / (500000.0 ** (torch.arange(0, hd // 2, device=dev) / (hd // 2)))
    ang = torch.outer(pos, inv)
    cos, sin = ang.cos().to(torch.bfloat16), ang.sin().to(torch.bfloat16)
    tok = torch.randint(0, vocab, (mbs, seq), device=dev)
    lab = torch.randint(0, vocab, (mbs, seq), device=dev)
    peak = 0
    for step in range(3):
        if step == 2:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            pred = model(tok, cos, sin)
            loss = torch.nn.functional.cross_entropy(pred.flatten(0, 1).float(), lab.flatten())
        del pred
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    params = sum(p.numel() for p in model.parameters())
    return peak, params


def model_json(name, shape):
    hidden, layers, heads, kv, ffn, vocab = shape
    return {
        "name": name,
        "num_layers": layers,
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_kv_heads": kv,
        "ffn_hidden_size": ffn,
        "vocab_size": vocab,
        "gated_mlp": True,
        "tied_embeddings": False,
        "norm": "rmsnorm",
        "position": "rope",
    }


def predict(paraplan, path, seq, mbs, recompute):
    cmd = [paraplan, "estimate", "--model", path, "--system", "dgx-h100", "--gpus", "1",
           "--gbs", str(mbs), "--mbs", str(mbs), "--seq", str(seq), "--framework",
           "torchtitan", "--recompute", recompute, "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = json.loads(out)["memory"]
    d = m["detail"]
    return m["total_bytes"] - d["framework_bytes"] - d["fragmentation_bytes"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paraplan", help="paraplan executable to compare with")
    ap.add_argument("--out", default=".", help="where the model JSON files go")
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--mbs", type=int, default=1)
    ap.add_argument("--recompute", choices=["none", "selective", "full"], default="none")
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit("torch_memory_probe: no CUDA GPU")
    rows = []
    for name, shape in SHAPES.items():
        path = os.path.join(args.out, name + ".json")
        with open(path, "w") as f:
            json.dump(model_json(name, shape), f, indent=2)
        peak, params = measure(torch, shape, args.seq, args.mbs, args.recompute)
        row = {"shape": name, "params": params, "seq": args.seq, "mbs": args.mbs,
               "recompute": args.recompute, "max_memory_allocated_bytes": peak,
               "gpu": torch.cuda.get_device_name(), "torch": torch.__version__}
        if args.paraplan:
            pred = predict(args.paraplan, path, args.seq, args.mbs, args.recompute)
            row["paraplan_tensor_bytes"] = pred
            row["error"] = (pred - peak) / peak
        rows.append(row)
        torch.cuda.empty_cache()
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
