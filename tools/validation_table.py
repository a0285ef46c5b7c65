#!/usr/bin/env python3
"""Regenerate the per-record table of docs/validation.md from paraplan's own output.

    tools/validation_table.py [PARAPLAN] [DOC]   (defaults: build/paraplan, docs/validation.md)

Runs `validate --json` (throughput) and `validate --memory --json` (peak memory) on the
default public runs and replaces the table under "### Per record" (to the end of the file),
so the table is what the current model prints, not a copy kept by hand.
"""
import json
import os
import subprocess
import sys
import tempfile

GIB = 2.0**30


def run(binary, *args):
    out = subprocess.run([binary, "validate", "--quiet", "--json", *args], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/paraplan"
    doc = sys.argv[2] if len(sys.argv) > 2 else "docs/validation.md"
    speed = run(binary)
    memory = {r["id"]: r for r in run(binary, "--memory")["records"]}
    rows = ["| id | system | GPUs | tp/pp/dp/cp/ep | mbs | ZeRO | recompute | peak GiB | of HBM "
            "| fits | metric | measured | predicted | error |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in speed["records"]:
        m = memory[r["id"]]
        p = m["plan"]
        degrees = "/".join(str(p[k]) for k in ("tp", "pp", "dp", "cp", "ep"))
        rows.append("| %s | %s | %d | %s | %d | %d | %s | %.1f | %.3f | %s | %s | %.4g | %.4g | %+.1f%% |"
                    % (r["id"], r["system"], r["gpus"], degrees, p["mbs"], p["zero"],
                       p["recompute"], m["peak_bytes"] / GIB, m["fraction_of_hbm"],
                       "yes" if m["fits"] else "no", r["metric"], r["measured"],
                       r["predicted"], 100 * r["error"]))
    text = open(doc).read()
    head = text.index("### Per record")
    table = text.index("| id | system |", head)
    new = text[:table] + "\n".join(rows) + "\n"
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(doc)))
    with os.fdopen(fd, "w") as f:
        f.write(new)
    os.chmod(tmp, 0o644)
    os.replace(tmp, doc)
    print("%s: %d records" % (doc, len(speed["records"])))


if __name__ == "__main__":
    main()
