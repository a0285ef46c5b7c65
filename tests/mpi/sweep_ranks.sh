#!/bin/sh
# paraplan sweep under Open MPI gives the bytes of one plain process
# (issue 25): the CSV, the JSON and the table of a 600-point classic sweep
# (--over dp) and of a 24-point hardware study (--vary ... --search, each
# point a plan search), written to standard output and with --output, by
# `mpirun -n 1`, `-n 2` and `-n 4 --oversubscribe`, compared with cmp against
# the plain run.  Then, for each, a run killed partway under `-n 2` and
# resumed under `-n 4` from its --checkpoint gives the uninterrupted run's
# bytes.
#
#   tests/mpi/sweep_ranks.sh BUILD/paraplan
#
# Needs mpirun (Debian openmpi-bin) and a paraplan built with MPI
# (libopenmpi-dev found by CMake): .ci/run installs both and runs this; ctest
# runs it as mpi.sweep_ranks when CMake found MPI.  Exit 0 when every
# comparison holds, 1 with a line per difference otherwise.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
command -v mpirun >/dev/null || { echo "sweep_ranks: no mpirun (apt-get install openmpi-bin)"; exit 1; }
# As root (CI containers) Open MPI wants this said.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Quiet, and no warnings of a machine without a high-speed network.
export OMPI_MCA_btl_base_warn_component_unused=0 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
sweep="sweep --model gpt-145.6b --system configtuner-hopper --tp 8 --pp 8 --seq 2048
  --recompute full --over dp --values 1:600 --replica-batch 96 --tokens 300B
  --usd-per-gpu 20000 --quiet"
hw="sweep --search --model gpt3-1t --system lbnl-b200 --over gpus --values 4096,16384
  --gbs 4096 --seq 2048 --tokens 1e12 --headroom 0 --vary gpu.memory_bytes=80e9,141e9,192e9
  --vary nvlink_domain=8,64 --vary gpu.memory_bw_bytes_per_s=4800e9,8000e9 --tp 4,8 --cp 1
  --recompute none --threads 1 --quiet"
fail=0
# check NAME POINTS KILL ARGS...: the comparisons above for one command.
check() {
	tag=$1 points=$2 kill=$3
	shift 3
	for fmt in --csv --json ""; do
		name=$tag.plain$fmt
		"$bin" "$@" $fmt >"$name.out" 2>"$name.err" || { echo "$tag plain $fmt: exit $?"; cat "$name.err"; fail=1; }
		[ -s "$name.out" ] || { echo "$tag plain $fmt: no output"; fail=1; }
		for n in 1 2 4; do
			mpirun -n $n "$bin" "$@" $fmt >"$tag.n$n$fmt.out" 2>"$tag.n$n$fmt.err" ||
				{ echo "$tag mpirun -n $n $fmt: exit $?"; cat "$tag.n$n$fmt.err"; fail=1; }
			cmp "$name.out" "$tag.n$n$fmt.out" || { echo "$tag mpirun -n $n $fmt: bytes differ from the plain process"; fail=1; }
		done
	done
	# --output FILE: written by rank 0 only, atomically, the same bytes.
	mpirun -n 4 "$bin" "$@" --json --output "$tag.out4.json" 2>"$tag.out4.err" || { echo "$tag -n 4 --output: exit $?"; fail=1; }
	cmp "$tag.plain--json.out" "$tag.out4.json" || { echo "$tag mpirun -n 4 --output: bytes differ"; fail=1; }
	# Killed after $kill of $points points under -n 2, resumed under -n 4.
	ck=$tag.ck
	PARAPLAN_TEST_KILL_AFTER=$kill mpirun -x PARAPLAN_TEST_KILL_AFTER -n 2 "$bin" "$@" --csv \
		--checkpoint "$ck" >"$tag.killed.out" 2>"$tag.killed.err" && { echo "$tag: the killed run exited 0"; fail=1; }
	records=$(($(wc -l <"$ck") - 1))
	[ "$records" = "$kill" ] || { echo "$tag: killed run left $records records, expected $kill"; fail=1; }
	mpirun -n 4 "$bin" "$@" --csv --checkpoint "$ck" >"$tag.resumed.out" 2>"$tag.resumed.err" ||
		{ echo "$tag resumed run: exit $?"; cat "$tag.resumed.err"; fail=1; }
	cmp "$tag.plain--csv.out" "$tag.resumed.out" || { echo "$tag resumed under -n 4: bytes differ from one uninterrupted run"; fail=1; }
	# Each evaluation appends one record: $points in all means the resumed run
	# evaluated only the unfinished points.
	total=$(($(wc -l <"$ck") - 1))
	uniq=$(tail -n +2 "$ck" | cut -d' ' -f1 | sort -u | wc -l)
	[ "$total" = "$points" ] && [ "$uniq" = "$points" ] ||
		{ echo "$tag: checkpoint holds $total records of $uniq points, expected $points of $points"; fail=1; }
}
# shellcheck disable=SC2086
check sweep 600 250 $sweep
# shellcheck disable=SC2086
check study 24 10 $hw
[ $fail = 0 ] && echo "sweep_ranks: sweep (600 points) and --vary --search study (24 points): -n 1, 2, 4 byte-identical (CSV, JSON, table, --output); killed under -n 2 (250/600, 10/24), resumed under -n 4: identical, only the unfinished points re-evaluated"
exit $fail
