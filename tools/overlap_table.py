#!/usr/bin/env python3
"""Write the computation-computation OEFs of DHelix's overlap tables from the
H100 measurement (seed 002 Eq. 1; docs/dhelix.md, "Overlap model").

    python3 tools/overlap_table.py [--check] [JSONL]

JSONL defaults to /work/shared/measurements/h100-sxm/overlap_compute_pairs.jsonl
(each line one pair of kernels co-run on two CUDA streams of one H100 SXM:
Ta_s, Tb_s alone, P_s together, and its oef = (Ta + Tb - P) / min(Ta, Tb),
seed 002's Eq. 1).  The kernels map to paraplan's operator kinds: gemm and
gemm_b -> gemm, flash_attn and flash_attn_b -> attn, copy and rmsnorm -> elem
(element-wise / memory-bound).  The OEF of a kind pair is the plain mean of
the measured oef over its lines (both token counts, both element-wise
kernels), rounded to 4 decimals.  A negative value (co-running slower than the
two alone one after the other) is written as measured, not clamped: the
pairing then never co-runs that pair on its own (running the two alone is
shorter), and inside a longer segment it costs what was measured.

elem-elem has no measured line (two memory-bound kernels were not co-run); it
is written as 0 with that reason.  The communication pairs (Table 7, §3.1) are
not touched.  data/overlap/h100.json gets the values as measured there;
a40.json and a800.json get the same values, stated as carried over from h100.
--check compares instead of writing (exit 1 when a file differs).
Python 3 standard library only.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = "/work/shared/measurements/h100-sxm/overlap_compute_pairs.jsonl"
KIND = {"gemm": "gemm", "gemm_b": "gemm", "flash_attn": "attn", "flash_attn_b": "attn",
        "copy": "elem", "rmsnorm": "elem"}
# the table's key for each unordered pair of kinds (its existing spelling)
KEY = {("gemm", "gemm"): "gemm-gemm", ("attn", "gemm"): "gemm-attn",
       ("attn", "attn"): "attn-attn", ("elem", "gemm"): "elem-gemm",
       ("attn", "elem"): "elem-attn", ("elem", "elem"): "elem-elem"}
LABEL = "measurements/h100-sxm/overlap_compute_pairs.jsonl"
TABLES = {"h100": None, "a40": "A40 (PCIe)", "a800": "A800 SXM (NVLink)"}


def measured(path):
    """{table key: [(tokens, a, b, oef), ...]} from the jsonl."""
    pairs = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                ka, kb = KIND[r["a"]], KIND[r["b"]]
                ta, tb, p = float(r["Ta_s"]), float(r["Tb_s"]), float(r["P_s"])
            except (ValueError, KeyError) as e:
                sys.exit(f"overlap_table: {path}:{n}: expected an overlap line with a, b "
                         f"in {sorted(KIND)}, Ta_s, Tb_s, P_s ({e})")
            oef = (ta + tb - p) / min(ta, tb)  # Eq. 1, recomputed from the times
            if abs(oef - r.get("oef", oef)) > 1e-9:
                sys.exit(f"overlap_table: {path}:{n}: oef {r['oef']} is not Eq. 1 of "
                         f"its times ({oef})")
            key = KEY[tuple(sorted((ka, kb)))]
            pairs.setdefault(key, []).append((r["tokens"], r["a"], r["b"], oef))
    return pairs


def entries(pairs, src):
    """{key: (value, source)} for the six computation-computation pairs."""
    out = {}
    for key in KEY.values():
        rows = pairs.get(key, [])
        if not rows:
            out[key] = (0.0, "not measured: no pair of two element-wise (memory-bound) "
                        "kernels in " + src + "; 0, no overlap claimed without a "
                        "measurement (two kernels that each move bytes at 0.88-0.90 of "
                        "HBM's peak alone, memory_bandwidth.jsonl, have little left to "
                        "share, and element-wise kernels beside a GEMM or flash attention "
                        "measured only 0.07)")
            continue
        v = round(sum(r[3] for r in rows) / len(rows), 4)
        detail = ", ".join(f"{a} with {b} at {t} tokens {o:+.4f}" for t, a, b, o in rows)
        neg = (" Negative: co-running is slower than the two alone in sequence; kept as "
               "measured, not clamped, so the pairing never co-runs this pair by itself "
               "and a longer segment that does pays for it." if v < 0 else "")
        out[key] = (v, f"measured: the mean of seed 002 Eq. 1, (Ta + Tb - P) / min(Ta, Tb), "
                       f"over {len(rows)} lines of {src} ({detail}) = {v:+.4f}.{neg}")
    return out


def update(name, path, ent, check):
    file = os.path.join(ROOT, "data", "overlap", name + ".json")
    with open(file, encoding="utf-8") as f:
        text = f.read()
    t = json.loads(text)
    carried = TABLES[name]
    for key, (v, why) in ent.items():
        t["oef"][key] = v
        if carried:
            why = (f"carried over from h100 (data/overlap/h100.json): no measurement on "
                   f"{carried}; h100's value is {why}")
        t["sources"]["oef." + key] = why
    t["sources"]["oef"] = (
        "the computation-computation pairs: see oef.KIND-KIND, written by "
        "tools/overlap_table.py from the shared " + LABEL + "; the others: seed 002 §3.1 and Fig. 4 "
        "give the ranking, not numbers: computation-communication well (1 - "
        "kernel_slowdown = 0.6752, so Table 7's hidden share 57.87% = 1 - 0.3248 - "
        "0.0965 comes out), a collective with one of its own kind poorly (0.0; such "
        "pairs are forbidden on the same link, §4.2), intra- with cross-node "
        "communication well (0.80). Replace with a measured table (--overlap FILE) "
        "where one exists")
    new = json.dumps(t, indent=2, ensure_ascii=False) + "\n"
    if new == text:
        return 0
    if check:
        print(f"overlap_table: {file} differs from what {path} gives (run it)", file=sys.stderr)
        return 1
    tmp = file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(new)
    os.replace(tmp, file)
    print(f"overlap_table: wrote {file}")
    return 0


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    path = args[0] if args else DEFAULT
    src = LABEL + " (one H100 SXM5)"
    ent = entries(measured(path), src)
    for key, (v, _) in ent.items():
        print(f"{key:10s} {v:+.4f}")
    return max(update(name, path, ent, check) for name in TABLES)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
