#!/bin/sh
# paraplan sweep under Open MPI gives the bytes of one plain process
# (issue 25): the CSV, the JSON and the table of a 600-point study, written to
# standard output and with --output, by `mpirun -n 1`, `-n 2` and
# `-n 4 --oversubscribe`, compared with cmp against the plain run.  Then a run
# killed halfway under `-n 2` and resumed under `-n 4` from its --checkpoint
# gives the uninterrupted run's bytes.
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
study="sweep --model gpt-145.6b --system configtuner-hopper --tp 8 --pp 8 --seq 2048
  --recompute full --over dp --values 1:600 --replica-batch 96 --tokens 300B
  --usd-per-gpu 20000 --quiet"
fail=0
for fmt in --csv --json ""; do
	name=plain$fmt
	# shellcheck disable=SC2086
	"$bin" $study $fmt >"$name.out" 2>"$name.err" || { echo "plain $fmt: exit $?"; cat "$name.err"; fail=1; }
	[ -s "$name.out" ] || { echo "plain $fmt: no output"; fail=1; }
	for n in 1 2 4; do
		# shellcheck disable=SC2086
		mpirun -n $n "$bin" $study $fmt >"n$n$fmt.out" 2>"n$n$fmt.err" ||
			{ echo "mpirun -n $n $fmt: exit $?"; cat "n$n$fmt.err"; fail=1; }
		cmp "$name.out" "n$n$fmt.out" || { echo "mpirun -n $n $fmt: bytes differ from the plain process"; fail=1; }
	done
done
# --output FILE: written by rank 0 only, atomically, the same bytes.
# shellcheck disable=SC2086
mpirun -n 4 "$bin" $study --json --output out4.json 2>out4.err || { echo "-n 4 --output: exit $?"; fail=1; }
cmp plain--json.out out4.json || { echo "mpirun -n 4 --output: bytes differ"; fail=1; }
# Killed after 250 of 600 points under -n 2, resumed under -n 4.
# shellcheck disable=SC2086
PARAPLAN_TEST_KILL_AFTER=250 mpirun -x PARAPLAN_TEST_KILL_AFTER -n 2 "$bin" $study --csv \
	--checkpoint ck >killed.out 2>killed.err && { echo "the killed run exited 0"; fail=1; }
records=$(($(wc -l <ck) - 1))
[ "$records" = 250 ] || { echo "killed run left $records records, expected 250"; fail=1; }
# shellcheck disable=SC2086
mpirun -n 4 "$bin" $study --csv --checkpoint ck >resumed.out 2>resumed.err ||
	{ echo "resumed run: exit $?"; cat resumed.err; fail=1; }
cmp plain--csv.out resumed.out || { echo "resumed under -n 4: bytes differ from one uninterrupted run"; fail=1; }
# Each evaluation appends one record: 600 in all means the resumed run
# evaluated only the 350 unfinished points.
total=$(($(wc -l <ck) - 1))
uniq=$(tail -n +2 ck | cut -d' ' -f1 | sort -u | wc -l)
[ "$total" = 600 ] && [ "$uniq" = 600 ] ||
	{ echo "checkpoint holds $total records of $uniq points, expected 600 of 600"; fail=1; }
[ $fail = 0 ] && echo "sweep_ranks: -n 1, 2, 4 byte-identical (CSV, JSON, table, --output); kill at 250/600 under -n 2, resume under -n 4: identical, 350 re-evaluated"
exit $fail
