#!/usr/bin/env python3
"""Turn the Megatron-Bridge performance tables of the releases after 25.11 into run records.

    tools/mbridge_outside.py ARCHIVE_MD CURRENT_MD PUBLIC_RUNS OUT

ARCHIVE_MD and CURRENT_MD are docs/performance-summary-archive.md and
docs/performance-summary.md of an NVIDIA-NeMo/Megatron-Bridge checkout; PUBLIC_RUNS is
shared/validation/public-runs.json.  Each pre-training row of a release later than 25.11, on
a system paraplan has a preset for (DGX-H100, DGX-B200, DGX-GB200) and of a model the 25.11
records describe, becomes a record: the model block (architecture from NeMo's source) is copied
from the 25.11 record of the same model, the plan, batch, precision and tokens/s per GPU come
from the row.  What a row does not state (recompute, CUDA graphs, dispatcher, offloading) is
left to `paraplan validate`'s fill rules, as for any record that does not state it.

These runs are outside shared/validation: paraplan is never calibrated on them
(tests/data/outside/README.md).  The output is deterministic for given inputs.
"""
import json
import re
import sys

SYSTEMS = {"DGX-H100": ("H100-SXM5-80GB (DGX H100)", 8), "DGX-B200": ("B200 (DGX B200)", 8),
           "DGX-GB200": ("GB200 (NVL72 rack)", 4)}
# The tables write FP8 for per-tensor current scaling from 26.02 on (25.11: FP8-CS).
PRECISION = {"FP8": "FP8-CS", "MXFP8": "FP8-MX", "BF16": "BF16", "NVFP4": "NVFP4"}


def model_key(name):
    return name.upper().replace(".", "").replace("_", "-").replace(" ", "-")


def number(cell):
    cell = re.sub(r"\s*\(.*\)", "", cell).replace(",", "")
    if cell in ("n/a", "", "-"):
        return None
    return float(cell) if "." in cell else int(cell)


def templates(public):
    """The 25.11 record of each (model, system), and of each model on any system."""
    out = {}
    for r in public["records"]:
        m = re.match(r"mbridge_25\.11_(DGX-[A-Z0-9]+)_(.+?)_\d+gpu_", r["id"])
        if m:
            out.setdefault((model_key(m.group(2)), m.group(1)), r)
            out.setdefault((model_key(m.group(2)), "*"), r)
    return out


def rows(path):
    """(release, model, row dict) of every pre-training table row of a summary file."""
    release = model = header = None
    pretraining = False
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        m = re.match(r"^## (\d\d\.\d\d(?:\.\d\d)?) NeMo Container", line)
        if m:
            release, model, pretraining = m.group(1), None, False
            continue
        if line.startswith("### "):
            model = None
            pretraining = "Pre-Training" in line
            continue
        m = re.match(r"^#### Model: (.+)$", line)
        if m:
            model, header = (m.group(1).strip() if release and pretraining else None), None
            continue
        if not (model and line.startswith("|")):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == "System":
            header = cells
        elif header and len(cells) == len(header) and not cells[0].startswith("--"):
            yield release, model, dict(zip(header, cells))


def record(template, release, model, row):
    r = json.loads(json.dumps(template))
    system = row["System"]
    gpus = number(row["#-GPUs"])
    tp, pp, cp = (number(row[k]) or 1 for k in ("TP", "PP", "CP"))
    gbs, seq = number(row["GBS"]), number(row["Sequence Length"])
    r["id"] = "mbridge_%s_%s_%s_%dgpu_%s" % (release, system, model.replace(" ", "_"), gpus,
                                            row["Precision"])
    r["source"]["location"] = "%s NeMo Container, Pre-Training Performance, %s / %s" % (
        release, system, model)
    r["source"]["accessed_via"] = ("NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md "
                                   "and docs/performance-summary.md (commit 067f987)")
    r["hardware"]["gpu_type"], r["hardware"]["gpus_per_node"] = SYSTEMS[system]
    r["hardware"]["num_gpus"] = gpus
    fsdp = number(row.get("FSDP", "0")) or 0
    r["parallelism"].update({
        "tp": tp, "pp": pp, "cp": cp, "dp": gpus // (tp * pp * cp), "ep": number(row["EP"]) or 1,
        "virtual_pipeline_size": number(row["VP"]), "activation_recompute": None,
        "zero_or_dist_optimizer": ("Megatron FSDP (sharding group = #GPUs/(TP*PP))" if fsdp else
                                   "DDP (FSDP=0); distributed optimizer not stated")})
    r["model"]["seq_length"] = seq
    r["batch"] = {"micro_batch_size": number(row["MBS"]), "global_batch_size": gbs,
                  "global_batch_tokens": gbs * seq, "grad_accum_steps": None}
    r["precision"] = PRECISION.get(row["Precision"], row["Precision"])
    r["measured"] = {"tflops_per_gpu": None, "tflops_definition": "model TFLOP/s per GPU",
                     "mfu": None, "hfu": None, "iteration_time_s": None,
                     "tokens_per_s_per_gpu": number(row["Tokens / sec / GPU"]),
                     "tokens_per_s_total": None, "aggregate_pflops": None,
                     "peak_memory_GiB": None, "other": None}
    for k in ("inferred", "derived", "completeness"):
        r.pop(k, None)
    r["notes"] = ("Outside shared/validation (tools/mbridge_outside.py): model block from the 25.11 "
                  "record of the same model; plan, batch, precision and throughput from the row. "
                  "MoE benchmarks force-balance tokens across experts (token-dropless).")
    return r


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    public = json.load(open(sys.argv[3], encoding="utf-8"))
    tmpl = templates(public)
    out, skipped = [], 0
    for path in sys.argv[1:3]:
        for release, model, row in rows(path):
            if release <= "25.11":
                continue
            t = tmpl.get((model_key(model), row["System"])) or tmpl.get((model_key(model), "*"))
            if row["System"] not in SYSTEMS or t is None:
                skipped += 1
                continue
            out.append(record(t, release, model, row))
    with open(sys.argv[4], "w", encoding="utf-8") as f:
        json.dump({"records": out}, f, indent=1)
        f.write("\n")
    print("%d records, %d rows skipped (no preset for the system or no 25.11 record of the model)"
          % (len(out), skipped), file=sys.stderr)


if __name__ == "__main__":
    main()
