#!/bin/bash
# Issue 9's "--top 10000 within 2x of --top 10" (bench/README.md, "--top 10000 against
# --top 10"): the whole command `paraplan search ... --top K` (text report to /dev/null)
# for gpt-1t on 3072 H100 and GPT-3 175B on 1024 A100-80G (gbs 1536, seq 2048),
# K = 10 and 10000:
#   - wall time, best of ROUNDS, 1 and 2 threads (the runs of K = 10 and K = 10000,
#     and of each binary given, interleaved, so a busy spell hits them alike);
#   - with CALLGRIND=1, the instructions of the whole process, one thread
#     (callgrind's "Collected": steady where the wall clock is not).
# The ratio printed is K = 10000 over K = 10.
#
#   usage: bench/search_top.sh [ROUNDS] [PARAPLAN...]    (defaults: 5, build/paraplan)
#   e.g.   CALLGRIND=1 bench/search_top.sh 7 /tmp/paraplan.main build/paraplan
set -eu
rounds=${1:-5}
shift || true
[ $# -gt 0 ] || set -- build/paraplan
cases=("gpt-1t on 3072 H100|--model gpt-1t --system dgx-h100 --gpus 3072 --gbs 1536 --seq 2048"
	"GPT-3 175B on 1024 A100|--model gpt3-175b --system dgx-a100-80g --gpus 1024 --gbs 1536 --seq 2048")
now_us() { date +%s%6N; }
for c in "${cases[@]}"; do
	name=${c%%|*}
	read -r -a args <<<"${c#*|}"
	for t in 1 2; do
		declare -A best=()
		for ((r = 0; r < rounds; r++)); do
			for b in "$@"; do
				for k in 10 10000; do
					s=$(now_us)
					"$b" search "${args[@]}" --threads "$t" --top "$k" --quiet >/dev/null
					d=$(($(now_us) - s))
					key="$b|$k"
					if [ -z "${best[$key]:-}" ] || [ "$d" -lt "${best[$key]}" ]; then
						best[$key]=$d
					fi
				done
			done
		done
		for b in "$@"; do
			awk -v b="$b" -v n="$name" -v t="$t" -v a="${best[$b|10]}" -v z="${best[$b|10000]}" \
				'BEGIN { printf "%s  %s, %d thread%s: --top 10 %.3f s, --top 10000 %.3f s: %.2fx (wall, best of '"$rounds"')\n", b, n, t, (t > 1 ? "s" : ""), a / 1e6, z / 1e6, z / a }'
		done
		unset best
	done
	if [ "${CALLGRIND:-0}" = 1 ]; then
		for b in "$@"; do
			ir() {
				valgrind --tool=callgrind --callgrind-out-file=/dev/null "$b" search "${args[@]}" \
					--threads 1 --top "$1" --quiet 2>&1 >/dev/null | awk '/Collected/ { print $4 }'
			}
			a=$(ir 10)
			z=$(ir 10000)
			awk -v b="$b" -v n="$name" -v a="$a" -v z="$z" \
				'BEGIN { printf "%s  %s, 1 thread: --top 10 %.3f G, --top 10000 %.3f G instructions: %.2fx\n", b, n, a / 1e9, z / 1e9, z / a }'
		done
	fi
done
