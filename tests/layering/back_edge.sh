#!/bin/sh
# The layering check fails on a back edge: tests/layering/back_edge.c, taken as
# a file of spec/, includes estimate.h and (its object) calls pp_estimate_run.
#   back_edge.sh PYTHON SOURCE_DIR BUILD_DIR BACK_EDGE_OBJECT
# Each way (by include, by call) must exit 1 and name the edge and the cycle
# it closes; the real tree alone must pass.
py=$1 src=$2 build=$3 obj=$4
check="$py $src/tools/layering.py --root $src"
out=$(mktemp) || exit 1
allow=$(mktemp) || exit 1
trap 'rm -f "$out" "$allow"' EXIT
fail() { echo "back_edge.sh: $*"; cat "$out"; exit 1; }

$check --build "$build" >"$out" 2>&1 || fail "the real tree does not pass"

$check --extra "spec=$src/tests/layering/back_edge.c" >"$out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "include back edge: exit $rc, want 1"
grep -q 'tests/layering/back_edge.c: paraplan/estimate.h: spec -> estimate (a back edge)' "$out" ||
	fail "include back edge not named"
grep -q 'cycle: .*spec -> estimate' "$out" || fail "include back edge: no cycle named"

$check --build "$build" --extra-object "spec=$obj" >"$out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "call back edge: exit $rc, want 1"
grep -q 'back_edge.c.o: pp_estimate_run(): spec -> estimate (a back edge)' "$out" ||
	fail "call back edge not named"
grep -q 'cycle: .*spec -> estimate' "$out" || fail "call back edge: no cycle named"
# An allow-list that lets a module use one listed after it is refused (exit 2):
# the allowed graph itself must go one way.
sed 's/^spec: .*/spec: util estimate/' "$src/tools/layering.allow" >"$allow"
$check --allow "$allow" >"$out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "allow-list against its own order: exit $rc, want 2"
grep -q 'spec may use estimate, which is not listed before it' "$out" ||
	fail "allow-list against its own order not named"
echo "back_edge.sh: the back edge fails both ways; an allow-list against its order is refused"
