#!/bin/sh
# Runs one end-to-end CLI case: tests/cli/<case>/
#   args        the command-line arguments (one line, shell words; $SHARED is the shared/ dir)
#   exit        expected exit code (default 0)
#   stderr      expected standard error, exactly (optional)
#   stdout      expected standard output, exactly (optional; a golden file)
#   contains    lines that must each appear in stdout, as fixed strings (optional)
#   lacks       lines that must not appear anywhere in stdout, fixed strings (optional)
#   setup       shell commands sourced before the command (optional): make what git
#               cannot hold (a FIFO, a symbolic link, a large sparse file), set a umask;
#               `skip REASON` skips the case (exit 77: what it needs cannot be had)
#   check       shell commands run after the command (optional); they see the exit code
#               in $got and the output files in $out and $err, print what is wrong and
#               exit non-zero on a failure (a file's mode, a link still a link)
#   stdin       standard input of the command (optional, setup may make it; default /dev/null)
# The command runs inside a temporary copy of the case directory, so input files sit
# next to args and whatever the case writes never lands in the source tree.
bin=$1
dir=$(cd "$2" && pwd) || exit 1
SHARED=${PARAPLAN_SHARED_DIR:-$dir/../../../../shared}
export SHARED
want_exit=0
[ -f "$dir/exit" ] && want_exit=$(cat "$dir/exit")
work=$(mktemp -d) out=$(mktemp) err=$(mktemp)
top=$work
trap 'rm -rf "$top" "$out" "$err"' EXIT
# The copy sits where the case sits relative to its siblings and to
# tests/data (links to them), so relative paths such as ../../data/x or
# ../other_case/stdout in args still resolve.
cases=$(cd "$dir/.." && pwd) name=$(basename "$dir")
mkdir "$work/cli" && ln -s "$cases"/* "$work/cli/" && rm "$work/cli/$name" &&
  mkdir "$work/cli/$name" && ln -s "$cases/../data" "$work/data" || exit 1
work=$work/cli/$name
cp -R "$dir/." "$work/" && cd "$work" || exit 1
skip() { echo "skipped: $*"; exit 77; }
if [ -f setup ]; then
  . ./setup || { echo "setup failed"; exit 1; }
fi
input=/dev/null
[ -f stdin ] && input=$work/stdin
eval "set -- $(cat args)"
"$bin" "$@" >"$out" 2>"$err" <"$input"
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
if [ -f check ] && ! (got=$got out=$out err=$err sh ./check); then
  echo "check failed"; fail=1
fi
if [ $fail != 0 ]; then
  echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
fi
exit $fail
