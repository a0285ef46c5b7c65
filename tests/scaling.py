#!/usr/bin/env python3
"""Every reader bounded: feed each input reader of paraplan generated inputs of
about 1 KB, 100 KB and 1 MB and check that its time and peak memory grow no
faster than the input (issue 23).

Each run's CPU time and peak RSS are the child's own (os.wait4), so a loaded
machine slows all sizes alike.  The bounds are generous against load but
catch a quadratic pass or an allocation driven by a declared size:

  time(1 MB)  <= TIME_FACTOR x time(100 KB) + TIME_SLACK_S   (linear: 10x; quadratic: 100x)
  RSS(1 MB)   <= RSS(1 KB) + RSS_FACTOR x 1 MB

A run may succeed or refuse the input (exit 0 or 2); a crash, a signal or
exit 1 fails the test.

usage: scaling.py PARAPLAN [--verbose] [--no-rss]   (--no-rss: a sanitizer build)
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SIZES = (1 << 10, 100 << 10, 1 << 20)
TIME_FACTOR = 25    # 1 MB is 10x 100 KB: 25x leaves room for a loaded machine
TIME_SLACK_S = 0.5  # start-up and fixed work, never a quadratic
RSS_FACTOR = 64     # bytes of memory per byte of input, above the 1 KB run's


def fill(unit, size):
    """Lines from unit(i) until `size` bytes."""
    out, n, i = [], 0, 0
    while n < size:
        s = unit(i)
        out.append(s)
        n += len(s)
        i += 1
    return "".join(out)


def nccl_text(size):
    # Rank lines on many hosts (8 each): the host de-duplication scales with them.
    head = ("# Collective test starting: all_reduce_perf\n"
            "# nThread 1 nGpus 8 minBytes 8 maxBytes 1073741824\n")
    # Short rank lines (the reader needs "# Rank N ... on HOST"): the most
    # ranks and hosts a megabyte can hold.
    body = fill(lambda i: "# Rank %d on h%d\n" % (i, i // 8), size - 2048)
    n = body.count("\n")
    body = "".join(l + "\n" for l in body.splitlines()[: n - n % 8])
    table = ["#       size         count      type   redop    root     time   algbw   busbw "
             "#wrong     time   algbw   busbw #wrong\n"]
    b = 8
    while b <= 1 << 30:
        t = 20 + b / 4e5
        table.append("%12d  %12d  float  sum  -1  %.2f  %.2f  %.2f  0  %.2f  %.2f  %.2f  0\n"
                     % (b, b // 4, t, b / t / 1e3, b / t / 1e3 * 1.5, t, b / t / 1e3,
                        b / t / 1e3 * 1.5))
        b *= 2
    table.append("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 100.0\n")
    return head + body + "".join(table)


def nccl_json(size):
    # nccl-tests -J: one device entry per rank, 8 ranks a host.
    import json
    devs, n = [], 0
    while n < size - 2048 or len(devs) % 8:
        d = {"hostname": "h%d" % (len(devs) // 8)}
        devs.append(d)
        n += len(json.dumps(d)) + 2
    res, b = [], 8
    while b <= 1 << 30:
        t = 20 + b / 4e5
        res.append({"size": b, "out_of_place": {"time": t, "alg_bw": b / t / 1e3,
                                                "bus_bw": b / t / 1e3 * 1.5}})
        b *= 2
    return json.dumps({"args": ["all_reduce_perf"], "config": {"nthreads": 1, "ngpus": 8},
                       "devices": devs, "results": res}, indent=1)


def mpigraph(size):
    n = max(2, int((size / 10) ** 0.5))
    rows = ["START mpiGraph v1.5\nMsgSize\t1048576\nTimes\t10\nWindow\t50\nProcs\t%d\n\n" % n,
            "Send" + "".join("\tn%d:%d" % (i, i) for i in range(n)) + "\t\n"]
    for i in range(n):
        rows.append("n%d:%d to" % (i, i) + "".join(
            "\t0.000" if i == j else "\t%d.5" % (20000 + (i * 7 + j) % 999) for j in range(n))
            + "\t\n")
    rows.append("END mpiGraph\n")
    return "".join(rows)


def pipette(size):
    n = max(2, int((size / 6) ** 0.5))
    rows = ",\n".join("[" + ", ".join("0" if i == j else "%d" % (20 + (i + j) % 9)
                                      for j in range(n)) + "]" for i in range(n))
    return '{"unit": "GB/s", "gpus_per_endpoint": 8, "bandwidth": [\n%s]}\n' % rows


def toml(size):
    # Short keys: the most a megabyte holds (past 10,000 the reader refuses).
    return "[extra]\n" + fill(lambda i: 'k%d = %d\n' % (i, i), size)


def megatron(size):
    # Variables set and used, and flags paraplan does not read (listed once each).
    base = ("--bf16 --num-layers 4 --hidden-size 256 --num-attention-heads 8 "
            "--vocab-size 1024 --seq-length 1024 --global-batch-size 8 \\\n")
    return "#!/bin/bash\n" + fill(lambda i: "V%d=value%d\n" % (i, i), size // 2) + \
        "torchrun pretrain_gpt.py " + base + \
        fill(lambda i: "  --unused-flag-%d $V%d \\\n" % (i, i), size // 2) + "  --bf16\n"


def steps(size):
    # Two runs; the rest comments (the runs themselves are bounded at 256).
    runs = ("9.070,--model llama3-8b --system dgx-h100 --gpus 8 --gbs 128 --seq 8192 "
            "--mbs 1 --tp 1 --pp 1 --zero 3 --precision fp8\n")
    return fill(lambda i: "# padding line %d of a step-time file\n" % i, size) + runs


def overlap(size):
    head = ('{"name": "t", "kernel_slowdown": 0.1, "launch_interval": 0.05, "oef": {'
            '"gemm-gemm": 0.1, "gemm-attn": 0.2, "attn-attn": 0.1, "elem-gemm": 0.3, '
            '"elem-attn": 0.3, "elem-elem": 0.2, "gemm-comm-intra": 0.9, "gemm-comm-cross": 0.9, '
            '"attn-comm-intra": 0.9, "attn-comm-cross": 0.9, "elem-comm-intra": 0.9, '
            '"elem-comm-cross": 0.9, "comm-intra-comm-intra": 0, "comm-cross-comm-cross": 0, '
            '"comm-intra-comm-cross": 0.8}, "sources": {\n')
    body = fill(lambda i: '"note%d": "%s",\n' % (i, "x" * 60), size)
    return head + body + '"end": ""}}\n'


def profile(size, d):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "device.json"), "w") as f:
        f.write('{"name": "NVIDIA H100 80GB HBM3", "sms": 132}\n')
    with open(os.path.join(d, "memory_bandwidth.jsonl"), "w") as f:
        f.write('{"kind": "copy", "bytes": 1073741824, "s": 0.0004}\n')
    recs = fill(lambda i: '{"m": %d, "n": %d, "k": %d, "s": %g}\n'
                % (64 * (1 + i % 64), 64 * (1 + (i // 64) % 64), 64 * (1 + i // 4096),
                   1e-5 * (1 + i % 97)), size)
    with open(os.path.join(d, "gemm_bf16.jsonl"), "w") as f:
        f.write(recs)


def nest(depth):
    """A JSON object `depth` levels deep: legal, far below the parser's limit."""
    return '{"n": ' * depth + "1" + "}" * depth


def _preset(path, drop=("aliases", "sources")):
    import json
    with open(os.path.join(ROOT, path)) as f:
        d = json.load(f)
    return json.dumps({k: v for k, v in d.items() if k not in drop})[:-1]


def _aliases_sources(size):
    # Half the bytes in aliases (a long array), half in sources (many keys,
    # each a note nested 32 deep: legal, the notes are not read).
    al = fill(lambda i: '"alias-%d", ' % i, size // 2)
    so = fill(lambda i: '"note%d": %s, ' % (i, nest(32)), size // 2)
    return ', "aliases": [%s"alias"], "sources": {%s"end": "x"}}\n' % (al, so)


def model_json(size):
    return _preset("data/models/llama3-8b.json") + _aliases_sources(size)


def system_json(size):
    # The GPU inline, its own sources as long as the system's.
    gpu = _preset("data/gpus/h100-sxm.json") + _aliases_sources(size // 3)
    return _preset("data/systems/dgx-h100.json", ("aliases", "sources", "gpu")) + \
        ', "gpu": ' + gpu.rstrip("\n") + _aliases_sources(2 * size // 3)


def hf_config(size):
    # Qwen MoE: mlp_only_layers is read element by element (a long array of
    # one dense layer, repeated); the rest are keys paraplan ignores, with
    # arrays and nesting as real configs have (rope_scaling, quantization).
    head = _preset("tests/data/hf/Qwen1.5-MoE-A2.7B.json", ())
    mlp = ", ".join(["0"] * max(1, size // 6))
    extra = fill(lambda i: '"extra_%d": {"list": [%s], "deep": %s}, '
                 % (i, ", ".join(str(j) for j in range(16)), nest(16)), size // 2)
    return head + ', "mlp_only_layers": [%s], %s"end": null}\n' % (mlp, extra)


def runs_json(size):
    # Published-run records (fuzz/seeds/fuzz_runs/00.json's), every other one
    # without a parallel plan (skipped and counted), each its own source.
    import copy
    import json
    with open(os.path.join(ROOT, "fuzz/seeds/fuzz_runs/00.json")) as f:
        rec = json.load(f)["records"][0]
    out, n, i = [], 0, 0
    while not out or n < size - 2048:
        r = copy.deepcopy(rec)
        r["id"] = "run%d" % i
        r["source"]["title"] = "source %d" % i
        if i % 2:
            r["parallelism"]["tp"] = None
        s = json.dumps(r, separators=(",", ":"))
        out.append(s)
        n += len(s) + 1
        i += 1
    return '{"records": [\n%s]}\n' % ",\n".join(out)


SCHED_PP = 32  # llama3-8b's 32 layers, one a stage


def schedule_m(size):
    """Micro-batches of the schedule file of `size` bytes (the plan's --gbs)."""
    return max(1, size // (SCHED_PP * 2 * 7))


def schedule_json(size):
    # Every rank F0 B0 F1 B1 ...: no warm-up, so each micro-batch's backward
    # walks the whole pipeline before the next forward (the most passes of
    # the simulator over the ranks that a schedule of this length can make).
    m = schedule_m(size)
    rank = "[" + ",".join('"F%d","B%d"' % (i, i) for i in range(m)) + "]"
    return '{"pp": %d, "microbatches": %d, "vp": 1, "source": "serial", "ranks": [\n%s]}\n' \
        % (SCHED_PP, m, ",\n".join([rank] * SCHED_PP))


CAL = ["calibrate", "--system", "dgx-h100", "--nccl-tests"]
EST = ["estimate", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", "8", "--gbs",
       "64", "--seq", "4096"]
PLACE = ["place", "--model", "gpt-39.1b", "--system", "configtuner-hopper", "--gpus", "32",
         "--tp", "8", "--pp", "4", "--gbs", "32", "--seq", "2048", "--recompute", "full",
         "--bandwidth"]
OV = ["estimate", "--model", "llama3-70b", "--system", "dgx-a100-80g", "--gpus", "64", "--gbs",
      "512", "--seq", "8192", "--tp", "8", "--sp", "on", "--pp", "2", "--schedule", "wshape",
      "--pairing", "on", "--overlap"]

# name, file name, generator, arguments before the file
READERS = [
    ("nccl-tests log", "all_reduce.txt", nccl_text, CAL),
    ("nccl-tests JSON", "all_reduce.json", nccl_json, CAL),
    ("mpiGraph", "bw.mpigraph", mpigraph, PLACE),
    ("Pipette matrix", "bw.json", pipette, PLACE),
    ("torchtitan TOML", "job.toml", toml, EST + ["--from-torchtitan"]),
    ("Megatron script", "run.sh", megatron, EST + ["--from-megatron"]),
    ("step times", "steps.csv", steps, ["calibrate", "--output", "-", "--step-times"]),
    ("overlap table", "ov.json", overlap, OV),
    ("GPU profile", "prof", profile, EST + ["--tp", "2", "--gpu-profile"]),
    ("model JSON", "model.json", model_json, ["estimate", "--system", "dgx-h100", "--gpus", "8",
                                              "--gbs", "64", "--seq", "4096", "--model"]),
    ("system JSON", "system.json", system_json, ["estimate", "--model", "llama3-8b", "--gpus",
                                                 "8", "--gbs", "64", "--seq", "4096",
                                                 "--system"]),
    ("HF config.json", "config.json", hf_config, ["estimate", "--system", "dgx-h100", "--gpus",
                                                  "8", "--gbs", "64", "--seq", "4096",
                                                  "--model"]),
    ("run records", "runs.json", runs_json, ["validate", "--data"]),
    ("schedule file", "sched.json", schedule_json,
     ["estimate", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus", str(SCHED_PP),
      "--pp", str(SCHED_PP), "--seq", "4096", "--gbs", "{m}", "--schedule-file"]),
]


GNU_TIME = "/usr/bin/time"


def run(cmd, tmp):
    """CPU seconds and peak RSS (KiB) of the command itself; its exit code.

    The peak comes from GNU time when it is installed: a process forked from
    this Python inherits Python's peak into its own (Linux keeps the larger of
    the two across exec), so wait4's figure has Python's size as a floor.
    Without GNU time that floor stays, and the RSS check is looser by it."""
    rssfile = os.path.join(tmp, "rss")
    gnu = os.access(GNU_TIME, os.X_OK)
    if gnu:
        cmd = [GNU_TIME, "-f", "%M", "-o", rssfile] + cmd
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    # CPU seconds (user and system, GNU time's own included: a few ms), not
    # the wall clock: on a loaded machine the wall clock of one size can
    # stretch many times over while the CPU time stays the program's own.
    seconds = ru.ru_utime + ru.ru_stime
    rc = os.waitstatus_to_exitcode(status)
    rss = ru.ru_maxrss
    if gnu:
        with open(rssfile) as f:
            lines = f.read().split()
        # "Command exited with non-zero status N" comes before the figure
        rss = int(lines[-1])
    return seconds, rss, rc, err.decode(errors="replace")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    exe, verbose = sys.argv[1], "--verbose" in sys.argv
    check_rss = "--no-rss" not in sys.argv
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, fname, gen, args in READERS:
            res = []
            for size in SIZES:
                path = os.path.join(tmp, "%d_%s" % (size, fname))
                if gen is profile:
                    profile(size, path)
                    nbytes = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
                else:
                    with open(path, "w") as f:
                        f.write(gen(size))
                    nbytes = os.path.getsize(path)
                arg = ("@" + path) if args[-1] == "--from-megatron" else path
                argv = [a.replace("{m}", str(schedule_m(size))) for a in args]
                t, rss, rc, err = run([exe] + argv + [arg], tmp)
                res.append((nbytes, t, rss, rc))
                if rc not in (0, 2):
                    print("FAIL %s at %d bytes: exit %d: %s" % (name, nbytes, rc, err.strip()))
                    fails += 1
                if verbose:
                    print("  %-16s %8d B  %7.3f s  %7d KiB  exit %d  %s"
                          % (name, nbytes, t, rss, rc, err.strip().splitlines()[0][:100]
                             if err.strip() else ""))
            (b0, t0, r0, _), (b1, t1, r1, _), (b2, t2, r2, _) = res
            ok_t = t2 <= TIME_FACTOR * t1 + TIME_SLACK_S
            ok_r = not check_rss or (r2 - r0) * 1024 <= RSS_FACTOR * b2
            print("%-16s %5.0f KB %.3f s %6d KiB | %5.0f KB %.3f s %6d KiB | %5.0f KB %.3f s "
                  "%6d KiB  %s" % (name, b0 / 1e3, t0, r0, b1 / 1e3, t1, r1, b2 / 1e3, t2, r2,
                                   "ok" if ok_t and ok_r else "FAIL"))
            if not ok_t:
                print("FAIL %s: %.3f s at %d bytes > %d x %.3f s + %.1f s"
                      % (name, t2, b2, TIME_FACTOR, t1, TIME_SLACK_S))
            if not ok_r:
                print("FAIL %s: peak RSS %d KiB at %d bytes > %d KiB + %d x the input"
                      % (name, r2, b2, r0, RSS_FACTOR))
            fails += (not ok_t) + (not ok_r)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
