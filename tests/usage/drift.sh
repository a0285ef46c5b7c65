#!/bin/sh
# tools/usage_check.py finds drift between a verb's help text and its options:
# on a copy of the tree (cli/, docs/usage/, include/paraplan/, the schedule
# types, the job's and plan's fields), each change below must exit 1 and name what drifted; the copy
# unchanged must pass.
#   drift.sh PYTHON SOURCE_DIR
py=$1 src=$2
tmp=$(mktemp -d) || exit 1
out=$tmp/out
trap 'rm -rf "$tmp"' EXIT
fail() { echo "drift.sh: $*"; cat "$out"; exit 1; }
fresh() {
	rm -rf "$tmp/root" && mkdir -p "$tmp/root/docs" "$tmp/root/include" "$tmp/root/src/spec" &&
		cp -R "$src/cli" "$tmp/root/" && cp -R "$src/docs/usage" "$tmp/root/docs/" &&
		cp -R "$src/include/paraplan" "$tmp/root/include/" &&
		cp "$src"/src/spec/sched_*.c "$src/src/spec/fields.c" "$tmp/root/src/spec/" || exit 1
}
check() { "$py" "$src/tools/usage_check.py" --root "$tmp/root" >"$out" 2>&1; }
# want WHAT LINE: the check exits 1 and prints LINE
want() {
	check
	rc=$?
	[ $rc -eq 1 ] || fail "$1: exit $rc, want 1"
	grep -qF -- "$2" "$out" || fail "$1: no line '$2'"
}

fresh
check || fail "the real texts do not pass"

# An option the text does not mention (the line of --top removed).
fresh
grep -v -- '--top K' "$src/docs/usage/search.txt" >"$tmp/root/docs/usage/search.txt"
want "option missing" "docs/usage/search.txt: --top is an option of search but the text does not mention it"

# A text that names an option its verb does not take.
fresh
echo "  --no-such-flag   nothing" >>"$tmp/root/docs/usage/validate.txt"
want "option unknown" "docs/usage/validate.txt: --no-such-flag is not an option of validate"

# A new option in a verb's table, not documented.
fresh
sed 's/CLI_ROW("quiet", CLI_F_SET, AT(quiet)),/&\nCLI_ROW("verbose", CLI_F_SET, AT(quiet)),/' \
	"$src/cli/validate.c" >"$tmp/root/cli/validate.c"
want "option undocumented" "docs/usage/validate.txt: --verbose is an option of validate but the text does not mention it"

# A new field of the job or plan (a shared flag), not documented.
fresh
sed 's/PLAN_ONOFF("sp", sp),/&\nPLAN_ONOFF("new-field", sp),/' \
	"$src/src/spec/fields.c" >"$tmp/root/src/spec/fields.c"
want "field undocumented" "docs/usage/estimate.txt: --new-field is an option of estimate but the text does not mention it"

# A constant the text states, changed in the code.
fresh
sed 's/^#define MAX_GPUS 16/#define MAX_GPUS 32/' "$src/cli/calibrate.c" >"$tmp/root/cli/calibrate.c"
want "constant" "docs/usage/calibrate.txt: should say 'at most 32)' (MAX_GPUS)"

# A new schedule type, not named where --schedule is.
fresh
printf 'const int x = 0;\nstatic const t y = {\n    .name = "newsched",\n};\n' \
	>"$tmp/root/src/spec/sched_newsched.c"
want "schedule" "docs/usage/estimate.txt: does not name the schedule type 'newsched'"

# A text no verb prints.
fresh
echo "usage: paraplan orphan" >"$tmp/root/docs/usage/orphan.txt"
want "orphan" "docs/usage/orphan.txt: no verb prints it"
exit 0
