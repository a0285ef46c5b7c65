#!/bin/sh
# Issue 25's scale-out bench on a hardware study: a 1,000-point
# `sweep --vary ... --search --threads 1` (a plan search at every point,
# about 10 ms each), one plain single-threaded process against `mpirun -n 2`,
# RUNS times each (default 3), the CSVs compared with cmp; then a control: two
# plain processes started side by side, whose slowdown against one says how
# many cores the machine gave two processes at the time (the ceiling of any
# 2-rank speedup there).  Prints the load (uptime) before and after, each
# run's wall time, and min/median/max.
#
#   bench/mpi_study.sh BUILD [RUNS]     (BUILD/paraplan built with MPI)
#
# MEM_STEP (default 10e9) is the step of the HBM-capacity axis: 10e9 gives
# 1,000 points; 2.5e9 gives 3,700, enough that mpirun's start-up (about 1 s)
# no longer decides the ratio.
set -u
bin=$(cd "$1" && pwd)/paraplan
runs=${2:-3}
[ -x "$bin" ] || { echo "mpi_study: build $bin first"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_base_warn_component_unused=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
study="sweep --search --model gpt3-1t --system lbnl-b200 --over gpus --values 4096,16384
  --gbs 4096 --seq 2048 --tokens 1e12 --headroom 0 --vary gpu.memory_bytes=80e9:170e9:${MEM_STEP:-10e9}
  --vary gpu.memory_bw_bytes_per_s=1e12,2e12,3.35e12,4.8e12,8e12 --vary nvlink_domain=8,64
  --vary gpu.bf16_flops+gpu.fp16_flops=990e12,1250e12,2250e12,2500e12,5000e12
  --tp 4,8 --cp 1 --recompute none --threads 1 --quiet --csv"
now() { date +%s.%N; }
# stats: min median max of the numbers on stdin
stats() { sort -g | awk '{v[NR]=$1} END {printf "min %.2f s, median %.2f s, max %.2f s", v[1], v[int((NR+1)/2)], v[NR]}'; }
echo "load before: $(uptime)"
: >"$work/plain" ; : >"$work/mpi" ; : >"$work/pair"
for r in $(seq "$runs"); do
	t0=$(now)
	# shellcheck disable=SC2086
	"$bin" $study >"$work/plain.csv" || exit 1
	t1=$(now)
	# shellcheck disable=SC2086
	mpirun -n 2 "$bin" $study >"$work/mpi.csv" || exit 1
	t2=$(now)
	# shellcheck disable=SC2086
	{ "$bin" $study >"$work/a.csv" & "$bin" $study >"$work/b.csv" & wait; }
	t3=$(now)
	cmp -s "$work/plain.csv" "$work/mpi.csv" || { echo "run $r: the -n 2 CSV differs from the plain one"; exit 1; }
	echo "$t1 - $t0" | bc >>"$work/plain"
	echo "$t2 - $t1" | bc >>"$work/mpi"
	echo "$t3 - $t2" | bc >>"$work/pair"
	echo "run $r: plain $(tail -1 "$work/plain") s, mpirun -n 2 $(tail -1 "$work/mpi") s, two plain side by side $(tail -1 "$work/pair") s; $(uptime | sed 's/.*load/load/')"
done
echo "points: $(($(wc -l <"$work/plain.csv") - 1)); CSVs identical (plain, -n 2)"
echo "plain, 1 process:        $(stats <"$work/plain")"
echo "mpirun -n 2:             $(stats <"$work/mpi")"
echo "two plain side by side:  $(stats <"$work/pair")"
paste "$work/plain" "$work/mpi" "$work/pair" | awk '{printf "run %d: speedup %.2fx, control %.2f cores\n", NR, $1/$2, 2*$1/$3}'
echo "load after: $(uptime)"
