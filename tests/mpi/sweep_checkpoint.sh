#!/bin/sh
# paraplan sweep --checkpoint FILE survives a kill (issue 25): a 400-point
# study killed (SIGKILL, by the test hook PARAPLAN_TEST_KILL_AFTER=K, right
# after its K-th record is flushed) and rerun with the same arguments gives the
# bytes of one uninterrupted run and re-evaluates only the unfinished points:
# every evaluation appends one record, so the file then holds exactly 400
# records of 400 distinct points (K from the killed run, 400-K from the
# rerun).  A record torn by the kill is dropped; a checkpoint of other
# arguments is refused in one line, exit 2.  The same kill and rerun for a
# 24-point hardware study (--vary ... --search, each point a plan search).
# No MPI needed.
#
#   tests/mpi/sweep_checkpoint.sh BUILD/paraplan
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
study="sweep --model gpt-145.6b --system configtuner-hopper --tp 8 --pp 8 --seq 2048
  --recompute full --over dp --values 1:400 --replica-batch 96 --tokens 300B --quiet --csv"
fail=0
records() { echo $(($(wc -l <"$1") - 1)); }
# shellcheck disable=SC2086
"$bin" $study >plain.out || { echo "plain run failed"; exit 1; }
for k in 1 150 399; do
	rm -f ck
	# shellcheck disable=SC2086
	PARAPLAN_TEST_KILL_AFTER=$k "$bin" $study --checkpoint ck >killed.out 2>/dev/null
	got=$?
	[ $got = 137 ] || { echo "K=$k: the run was not killed (exit $got)"; fail=1; }
	[ "$(records ck)" = $k ] || { echo "K=$k: $(records ck) records after the kill"; fail=1; }
	# shellcheck disable=SC2086
	"$bin" $study --checkpoint ck >resumed.out || { echo "K=$k: rerun failed"; fail=1; }
	cmp plain.out resumed.out || { echo "K=$k: rerun differs from the uninterrupted run"; fail=1; }
	n=$(records ck) u=$(tail -n +2 ck | cut -d' ' -f1 | sort -u | wc -l)
	[ "$n" = 400 ] && [ "$u" = 400 ] || { echo "K=$k: $n records of $u points, expected 400 of 400"; fail=1; }
done
# A torn last record (a kill in the middle of a write): dropped, the point
# evaluated again, the file whole.
rm -f ck
# shellcheck disable=SC2086
PARAPLAN_TEST_KILL_AFTER=200 "$bin" $study --checkpoint ck >/dev/null 2>&1
size=$(wc -c <ck)
head -c $((size - 100)) ck >ck.torn && mv ck.torn ck
# shellcheck disable=SC2086
"$bin" $study --checkpoint ck >resumed.out || { echo "torn: rerun failed"; fail=1; }
cmp plain.out resumed.out || { echo "torn: rerun differs"; fail=1; }
[ "$(records ck)" = 400 ] || { echo "torn: $(records ck) records, expected 400"; fail=1; }
# Other arguments: one line, exit 2, the file untouched.
cp ck ck.before
# shellcheck disable=SC2086
"$bin" $study --tokens 200B --checkpoint ck >other.out 2>other.err
got=$?
[ $got = 2 ] || { echo "other arguments: exit $got, expected 2"; fail=1; }
[ "$(wc -l <other.err)" = 1 ] && grep -q "checkpoint of other arguments" other.err ||
	{ echo "other arguments: expected one line:"; cat other.err; fail=1; }
cmp ck ck.before || { echo "other arguments: the checkpoint was changed"; fail=1; }
# A hardware study: killed after 10 of its 24 points, rerun.
hw="sweep --search --model gpt3-1t --system lbnl-b200 --over gpus --values 4096,16384
  --gbs 4096 --seq 2048 --tokens 1e12 --headroom 0 --vary gpu.memory_bytes=80e9,141e9,192e9
  --vary nvlink_domain=8,64 --vary gpu.memory_bw_bytes_per_s=4800e9,8000e9 --tp 4,8 --cp 1
  --recompute none --threads 1 --quiet --csv"
rm -f ck
# shellcheck disable=SC2086
"$bin" $hw >study.out || { echo "study: plain run failed"; exit 1; }
# shellcheck disable=SC2086
PARAPLAN_TEST_KILL_AFTER=10 "$bin" $hw --checkpoint ck >/dev/null 2>&1
got=$?
[ $got = 137 ] || { echo "study: the run was not killed (exit $got)"; fail=1; }
[ "$(records ck)" = 10 ] || { echo "study: $(records ck) records after the kill"; fail=1; }
# shellcheck disable=SC2086
"$bin" $hw --checkpoint ck >study.resumed || { echo "study: rerun failed"; fail=1; }
cmp study.out study.resumed || { echo "study: rerun differs from the uninterrupted run"; fail=1; }
n=$(records ck) u=$(tail -n +2 ck | cut -d' ' -f1 | sort -u | wc -l)
[ "$n" = 24 ] && [ "$u" = 24 ] || { echo "study: $n records of $u points, expected 24 of 24"; fail=1; }
[ $fail = 0 ] && echo "sweep_checkpoint: killed at 1, 150, 399 and 200 (torn) of 400: reruns identical, each point evaluated once; other arguments refused; a 24-point --vary --search study killed at 10 and rerun: identical, 24 records of 24 points"
exit $fail
