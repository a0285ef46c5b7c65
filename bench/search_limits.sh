#!/bin/sh
# Issue 13's figures of the search (bench/README.md, "Search at the physical limit"):
#   - evaluated plans per second per core, one thread, on (a) Megatron-1T / 3072 A100
#     and (b+) GPT3-1T / 4096 B200 with every dimension (bench_search cases a and c):
#     evaluated / CPU seconds of the process, and evaluated / wall seconds;
#   - the speedup of 2 threads over 1 on both (wall, best of REPEATS each);
#   - wall time of `paraplan search` for gpt-1t on 1,048,576 H100 (every dimension)
#     and for GPT-3 175B on 512 ... 16,384 A100 (the search's own wall time, from
#     its "search:" line, best of REPEATS);
#   - the CPU time per evaluated plan of gpt-1t on 1,048,576 H100 at gbs 16,384
#     and 536,870,912 (bench_search_mbs, one thread, best of REPEATS; issue 21:
#     within 2x of each other).
# On a machine shared with other work the wall-clock figures are noisy; the CPU
# seconds of a one-thread run are the steadier rate.  Instruction counts per
# evaluated plan (callgrind) are the primary guide: see bench/README.md.
#
#   usage: bench/search_limits.sh [BUILD_DIR] [REPEATS]     (defaults: build, 3)
set -eu
build=${1:-build}
reps=${2:-3}
cmake --build "$build" --target paraplan_cli bench_search bench_search_mbs >/dev/null
bin=$build/paraplan
bs=$build/bench/bench_search

# best (smallest) value of field $2 over $reps runs of: bench_search $1 (threads) $3 (case)
best() {
	i=0
	b=
	while [ "$i" -lt "$reps" ]; do
		v=$("$bs" "$1" "$3" | sed -n "s/.*RESULT.* $2=\([0-9.]*\).*/\1/p")
		b=$(awk -v a="$b" -v c="$v" 'BEGIN { if (a == "" || c + 0 < a + 0) print c; else print a }')
		i=$((i + 1))
	done
	echo "$b"
}

for c in a c; do
	line=$("$bs" 1 "$c" | sed -n 's/.*RESULT //p')
	ev=$(echo "$line" | sed -n 's/.*evaluated=\([0-9]*\).*/\1/p')
	space=$(echo "$line" | sed -n 's/.*space=\([0-9]*\).*/\1/p')
	cpu1=$(best 1 cpu_s "$c")
	wall1=$(best 1 wall_s "$c")
	wall2=$(best 2 wall_s "$c")
	awk -v c="$c" -v ev="$ev" -v sp="$space" -v cpu="$cpu1" -v w1="$wall1" -v w2="$wall2" 'BEGIN {
		printf "case (%s): %d plans, %d evaluated; 1 thread: cpu %.3f s, wall %.3f s: %.0f evaluated/s per core (cpu), %.0f (wall); 2 threads: wall %.3f s, speedup %.2fx\n",
		    c == "a" ? "a" : "b+", sp, ev, cpu, w1, ev / cpu, ev / w1, w2, w1 / w2 }'
done

# best search wall time of `paraplan search ARGS` over $reps runs
search_s() {
	i=0
	b=
	while [ "$i" -lt "$reps" ]; do
		v=$("$bin" search "$@" | sed -n 's/^search: .*, \([0-9.]*\) s$/\1/p')
		b=$(awk -v a="$b" -v c="$v" 'BEGIN { if (a == "" || c + 0 < a + 0) print c; else print a }')
		i=$((i + 1))
	done
	echo "$b"
}

echo "gpt-1t on 1048576 x dgx-h100, every dimension (2D TP SUMMA too), 2 threads:" \
	"$(search_s --model gpt-1t --system dgx-h100 --gpus 1048576 --gbs 16384 --seq 2048 \
		--tp2 1,2,4,8,16,32,64 --summa on --threads 2) s"
for g in 512 1024 2048 4096 8192 16384; do
	echo "gpt3-175b on $g x dgx-a100-80g, gbs 1536 x 2048, 2 threads:" \
		"$(search_s --model gpt3-175b --system dgx-a100-80g --gpus "$g" --gbs 1536 --seq 2048 \
			--threads 2) s"
done
"$build/bench/bench_search_mbs" 1 "$reps"
