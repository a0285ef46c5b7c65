#!/bin/sh
# Issue 25's scale-out bench: a sweep study on one plain single-threaded
# process against `mpirun -n 2` (and -n 2 with contiguous blocks instead of
# shuffled shards, the design choice), two ways:
#   phase   bench/bench_shard.c: wall time of the study itself, 4,096 points
#           (one pp_estimate_run each), from entering pp_sweep_run to every
#           row merged on rank 0; median of REPS repetitions.  No launcher.
#   command the CLI end to end on the same 4,096 points, plain against
#           `mpirun -n 2` (median of 3 each), outputs compared with cmp.
# And a control: two plain processes side by side, each the phase alone.
# 2 x t(one) / t(pair) is how many cores this machine gave two processes at
# the time -- the ceiling of any 2-rank speedup here.  The figures go in
# docs/hwsweep.md ("Scaling out on Open MPI").
#
#   bench/mpi_sweep.sh [BUILD [REPS]]     (default build 15)
#   cmake --build BUILD --target bench_shard paraplan_cli  first
set -u
build=${1:-build}
reps=${2:-15}
bs=$build/bench/bench_shard
bin=$build/paraplan
[ -x "$bs" ] && [ -x "$bin" ] || { echo "mpi_sweep: build $bs and $bin first (cmake --build $build --target bench_shard paraplan_cli)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0
SHARED=${SHARED:-/work/shared}
export SHARED
med() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n 's/.*median \([0-9.]*\) s per study.*/\1/p'; }
now() { date +%s.%N; }
echo "mpi_sweep: $(date -u '+%F %T') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(mpirun --version | head -1)"

one=$("$bs" "$reps" | tee /dev/stderr | field)
pair=$( ("$bs" "$reps" & "$bs" "$reps" & wait) | field | sort -n | tail -1)
n2=$(mpirun -n 2 "$bs" "$reps" | tee /dev/stderr | field)
blk=$(PARAPLAN_SHARD_ORDER=block mpirun -x PARAPLAN_SHARD_ORDER -n 2 "$bs" "$reps" | tee /dev/stderr | field)
awk -v a="$one" -v p="$pair" -v c="$n2" -v b="$blk" 'BEGIN {
	printf "phase:   one process %.3f s, mpirun -n 2 shuffled %.3f s (%.2fx), blocks %.3f s (%.2fx)\n", a, c, a / c, b, a / b
	printf "control: two plain processes side by side: %.3f s each -> %.2f cores available\n", p, 2 * a / p }'

study="sweep --model gpt-145.6b --system configtuner-hopper --tp 8 --pp 8 --seq 2048
  --recompute full --over dp --values 1:4096 --replica-batch 96 --tokens 300B --csv --quiet"
tp="" tm=""
for _ in 1 2 3; do
	t0=$(now)
	# shellcheck disable=SC2086
	"$bin" $study --output plain.csv.$$ || exit 1
	t1=$(now)
	# shellcheck disable=SC2086
	mpirun -n 2 "$bin" $study --output mpi.csv.$$ || exit 1
	t2=$(now)
	tp="$tp $(echo "$t1 - $t0" | bc)" tm="$tm $(echo "$t2 - $t1" | bc)"
done
cmp plain.csv.$$ mpi.csv.$$ && same=identical || same=DIFFERENT
rm -f plain.csv.$$ mpi.csv.$$
a=$(echo "$tp" | tr ' ' '\n' | grep . | med) b=$(echo "$tm" | tr ' ' '\n' | grep . | med)
awk -v a="$a" -v b="$b" -v s="$same" 'BEGIN {
	printf "command: plain %.3f s, mpirun -n 2 %.3f s (%.2fx; mpirun start-up included), CSV %s\n", a, b, a / b, s }'
[ "$same" = identical ]
