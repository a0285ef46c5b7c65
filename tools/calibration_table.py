#!/usr/bin/env python3
"""Regenerates the results table of docs/calibration.md (Results): in-sample /
leave-one-source-out MAPE per group for the kernel model's stack fractions
fitted per GPU (the presets' grouping) and three other groupings.

    tools/calibration_table.py [PARAPLAN] > table.md

Runs `paraplan calibrate --cross-validate source --json` four times (a few
minutes); prints the markdown table, then the fitted values per GPU.
"""
import json
import subprocess
import sys

BIN = sys.argv[1] if len(sys.argv) > 1 else "./build/paraplan"
STACKS = ["megatron", "llm-foundry", "deepspeed", "megatron-lm-2021"]
GPU_STACK = ["a100-40g:llm-foundry", "a100-80g:deepspeed", "a100-80g:llm-foundry",
             "a100-80g:megatron-lm-2021", "b200:megatron", "gb200:megatron",
             "h100-sxm:llm-foundry", "h100-sxm:megatron"]
COLUMNS = [
    ("per GPU (presets)", []),
    ("per stack", [a for s in STACKS for a in ("--gpu", "*:" + s)]),
    ("one set", ["--gpu", "*"]),
    ("per (GPU, stack)", [a for g in GPU_STACK for a in ("--gpu", g)]),
]
SOURCES = [("Narayanan et al.", "Narayanan et al."),
           ("BigScience BLOOM-176B", "BigScience BLOOM-176B"),
           ("MosaicML llm-foundry", "MosaicML llm-foundry"),
           ("NVIDIA Megatron-LM README", "NVIDIA Megatron-LM README"),
           ("NVIDIA NeMo long sequence", "NVIDIA NeMo Framework 'Long Sequence"),
           ("NVIDIA NeMo Megatron-Bridge", "NVIDIA NeMo Megatron-Bridge")]


def run(args):
    out = subprocess.run([BIN, "calibrate", "--cross-validate", "source", "--json", "--quiet"]
                         + args, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def cell(g):
    if not g:
        return "-"
    return "%.1f / %.1f" % (100 * g["mape_in_sample"], 100 * g["mape_held_out"])


def find(by, prefix):
    for k, v in by.items():
        if k.startswith(prefix):
            return v
    return None


def main():
    res = [run(a) for _, a in COLUMNS]
    rows = []
    n = res[0]["records_held_out"]
    rows.append(("**all (%d)**" % n, [
        "**%.1f / %.1f**" % (100 * r["mape_in_sample"], 100 * r["mape_held_out"]) for r in res]))
    for label, prefix in SOURCES:
        g = find(res[0]["by"]["source"], prefix)
        rows.append(("%s (%d)" % (label, g["records_held_out"]),
                     [cell(find(r["by"]["source"], prefix)) for r in res]))
    for gpu, g in res[0]["by"]["gpu"].items():
        rows.append(("%s (%d)" % (gpu, g["records_held_out"]),
                     [cell(r["by"]["gpu"].get(gpu)) if i < 1 else "-"
                      for i, r in enumerate(res)]))
    for part in ("stack", "dense/moe", "scale"):
        for key, g in res[0]["by"].get(part, {}).items():
            label = ("stack " + key) if part == "stack" else key
            rows.append(("%s (%d)" % (label, g["records_held_out"]),
                         [cell(r["by"].get(part, {}).get(key)) for r in res]))
    print("| group (records) | " + " | ".join(c for c, _ in COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 1) + "|")
    for label, cells in rows:
        print("| " + label + " | " + " | ".join(cells) + " |")
    print()
    print("Fitted values, per GPU:")
    for f in res[0]["fits"]:
        p = f["parameters"]
        print("  %-9s %3d records  gemm %.3f  gemm_fp8 %.3f  attn %.3f  memory %.3f  "
              "in-sample %.1f%%  at a bound: %s" % (
                  f["gpu"], f["records"], p["gemm"], p["gemm_fp8"], p["attn"], p["memory"],
                  100 * f["mape_in_sample"], ", ".join(f["at_bound"]) or "none"))
        for system, v in f.get("networks", {}).items():
            print("  %-9s system %s: nic_eff %.3f (no nccl-tests measure its network)" % (
                "", system, v["nic_eff"]))


if __name__ == "__main__":
    main()
