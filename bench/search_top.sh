#!/bin/bash
# Issue 9's "--top 10000 within 2x of --top 10" (bench/README.md, "--top 10000 against
# --top 10"): the whole command `paraplan search ... --top K` (text report to /dev/null)
# for gpt-1t on 3072 H100 and GPT-3 175B on 1024 A100-80G (gbs 1536, seq 2048),
# K = 10 and 10000:
#   - wall time, best of ROUNDS, 1 and 2 threads (the runs of K = 10 and K = 10000,
#     and of each binary given, interleaved, so a busy spell hits them alike), and the
#     CPU time (user + system) of the process, best of ROUNDS: with one thread, the
#     steadier figure on a machine shared with other work;
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
TIMEFORMAT='%3R %3U %3S'
for c in "${cases[@]}"; do
	name=${c%%|*}
	read -r -a args <<<"${c#*|}"
	for t in 1 2; do
		declare -A wall=() cpu=()
		for ((r = 0; r < rounds; r++)); do
			for b in "$@"; do
				for k in 10 10000; do
					read -r w u sy < <({ time "$b" search "${args[@]}" --threads "$t" \
						--top "$k" --quiet >/dev/null; } 2>&1)
					key="$b|$k"
					wall[$key]=$(awk -v a="${wall[$key]:-}" -v c="$w" 'BEGIN { print (a == "" || c < a + 0) ? c : a }')
					cpu[$key]=$(awk -v a="${cpu[$key]:-}" -v c="$u" -v d="$sy" 'BEGIN { print (a == "" || c + d < a + 0) ? c + d : a }')
				done
			done
		done
		for b in "$@"; do
			awk -v b="$b" -v n="$name" -v t="$t" -v a="${wall[$b|10]}" -v z="${wall[$b|10000]}" \
				-v ca="${cpu[$b|10]}" -v cz="${cpu[$b|10000]}" \
				'BEGIN { printf "%s  %s, %d thread%s: --top 10 %.3f s, --top 10000 %.3f s: %.2fx (wall, best of '"$rounds"'); CPU %.3f / %.3f s: %.2fx\n", b, n, t, (t > 1 ? "s" : ""), a, z, z / a, ca, cz, cz / ca }'
		done
		unset wall cpu
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
