#!/bin/sh
# Runs one end-to-end CLI case: tests/cli/<case>/
#   args        the command-line arguments (one line, shell words; $SHARED is the shared/ dir)
#   exit        expected exit code (default 0)
#   stderr      expected standard error, exactly (optional)
#   stdout      expected standard output, exactly (optional; a golden file)
#   contains    lines that must each appear in stdout, as fixed strings (optional)
#   lacks       lines that must not appear anywhere in stdout, fixed strings (optional)
# The command runs inside the case directory, so input files sit next to args.
bin=$1
dir=$2
cd "$dir" || exit 1
SHARED=${PARAPLAN_SHARED_DIR:-../../../../shared}
export SHARED
want_exit=0
[ -f exit ] && want_exit=$(cat exit)
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
eval "set -- $(cat args)"
"$bin" "$@" >"$out" 2>"$err" </dev/null
got=$?
fail=0
if [ "$got" != "$want_exit" ]; then
  echo "exit code $got, expected $want_exit"; fail=1
fi
if [ -f stderr ] && ! cmp -s stderr "$err"; then
  echo "stderr differs:"; diff stderr "$err"; fail=1
fi
if [ -f stdout ] && ! cmp -s stdout "$out"; then
  echo "stdout differs:"; diff stdout "$out"; fail=1
fi
if [ -f contains ]; then
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    if ! grep -qF -- "$line" "$out"; then echo "stdout lacks: $line"; fail=1; fi
  done < contains
fi
if [ -f lacks ]; then
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    if grep -qF -- "$line" "$out"; then echo "stdout has: $line"; fail=1; fi
  done < lacks
fi
if [ $fail != 0 ]; then
  echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
fi
exit $fail
