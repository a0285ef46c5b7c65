#!/bin/sh
# The HTML report in a real browser: headless Chromium (Debian's chromium)
# loads an estimate, a search and a sweep report, runs the page's self-test
# (which counts each chart's elements by class into <pre id="selftest">) and
# takes a screenshot of each.  Checks: no console message and no uncaught
# error (and that a page with a deliberate error IS caught), every chart drawn
# with no element lacking its data-chart, the element counts the plans imply
# (a memory bar and a Gantt row per pipeline rank, 2 x micro-batches x ranks
# F and B tasks under 1F1B, a Pareto point per plan of the search's front, a
# point per sweep value), the standalone SVGs of --svg, and non-empty PNGs.
#
#   html_chromium.sh PARAPLAN_BINARY
#
# Exits 77 (ctest's SKIP_RETURN_CODE) when chromium is not installed.
# PARAPLAN_SHOTS_DIR, when set, receives the screenshots.
set -eu
bin=$1
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	echo "html_chromium: chromium not installed: skipped"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

# load NAME: dump the DOM after the page's script ran, and a screenshot.
load() {
	DBUS_SYSTEM_BUS_ADDRESS=disabled: DBUS_SESSION_BUS_ADDRESS=disabled: \
		timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-extensions --disable-dev-shm-usage --user-data-dir="$tmp/profile" \
		--enable-logging=stderr --v=0 --window-size=1100,2800 \
		--screenshot="$tmp/$1.png" --dump-dom "file://$tmp/$1.html" \
		>"$tmp/$1.dom" 2>"$tmp/$1.log" || bad "$1: chromium exited $?"
	sed -n '/<pre id="selftest">/,/<\/pre>/p' "$tmp/$1.dom" |
		sed 's/<[^>]*>//g' >"$tmp/$1.counts"
}

# console_clean NAME: no CONSOLE line (console.log/error, uncaught errors)
console_clean() {
	if grep -E 'CONSOLE|Uncaught' "$tmp/$1.log"; then
		bad "$1: the browser console reported the lines above"
	fi
}

# count NAME CHART CLASS: the self-test's count (0 when absent)
count() {
	awk -v c="$2" -v k="$3" '$1 == c && $2 == k { n = $3 } END { print n + 0 }' "$tmp/$1.counts"
}

# expect NAME CHART CLASS N
expect() {
	got=$(count "$1" "$2" "$3")
	[ "$got" = "$4" ] || bad "$1: $2 $3: expected $4, got $got"
}

# drawn NAME CHART...: each chart drawn, every element labelled with its chart
drawn() {
	n=$1
	shift
	for c in "$@"; do
		expect "$n" "$c" drawn 1
		expect "$n" "$c" unlabelled 0
		[ "$(count "$n" "$c" elements)" -gt 5 ] || bad "$n: $c has almost no elements"
	done
}

png() {
	[ -s "$tmp/$1.png" ] || { bad "$1: no screenshot"; return; }
	sig=$(head -c 8 "$tmp/$1.png" | od -An -tx1 | tr -d ' \n')
	[ "$sig" = 89504e470d0a1a0a ] || bad "$1: the screenshot is not a PNG"
	[ "$(wc -c <"$tmp/$1.png")" -gt 20000 ] || bad "$1: the screenshot is nearly empty"
	if [ -n "${PARAPLAN_SHOTS_DIR:-}" ]; then
		mkdir -p "$PARAPLAN_SHOTS_DIR"
		cp "$tmp/$1.png" "$tmp/$1.html" "$PARAPLAN_SHOTS_DIR/"
	fi
}

common="--model gpt-18.4b --system dgx-h100 --seq 2048"

# ---- estimate: tp 2, pp 4, dp 2 on 16 GPUs; gbs 64, mbs 1: m = 64 / 2 = 32
mkdir "$tmp/svg"
"$bin" estimate $common --gpus 16 --gbs 64 --tp 2 --pp 4 --mbs 1 \
	--html "$tmp/estimate.html" --svg "$tmp/svg" >"$tmp/estimate.txt" ||
	bad "estimate --html exited $?"
load estimate
console_clean estimate
[ "$(awk '$1 == "charts" { print $2 }' "$tmp/estimate.counts")" = 4 ] ||
	bad "estimate: expected 4 charts"
drawn estimate memory iteration gantt traffic
expect estimate memory memory-bar 4
expect estimate memory memory-hbm 1
expect estimate gantt gantt-row 4
expect estimate gantt gantt-task 256
[ "$(count estimate memory memory-seg)" -ge 16 ] || bad "estimate: memory segments missing"
[ "$(count estimate iteration iter-seg)" -ge 2 ] || bad "estimate: iteration terms missing"
[ "$(count estimate traffic traffic-cell)" -gt 0 ] || bad "estimate: empty heat map"
for c in memory iteration gantt traffic; do
	f="$tmp/svg/$c.svg"
	[ -s "$f" ] || { bad "--svg: no $c.svg"; continue; }
	head -c 5 "$f" | grep -q '<svg' || bad "--svg: $c.svg is not an SVG"
done
[ "$(grep -c 'class="memory-bar"' "$tmp/svg/memory.svg")" = 4 ] || bad "memory.svg: 4 bars"
[ "$(grep -c 'class="gantt-row"' "$tmp/svg/gantt.svg")" = 4 ] || bad "gantt.svg: 4 rows"
png estimate

# ---- the detection works: a page with a deliberate error is caught
sed 's#<pre id="selftest">#<script>paraplan_no_such_function();</script>&#' \
	"$tmp/estimate.html" >"$tmp/broken.html"
load broken
grep -q 'Uncaught ReferenceError: paraplan_no_such_function' "$tmp/broken.log" ||
	bad "a deliberate error in the page was not caught in the console log"

# ---- search: the Pareto front as the JSON output lists it
"$bin" search $common --gpus 16 --gbs 64 --threads 2 --json \
	--html "$tmp/search.html" >"$tmp/search.json" || bad "search --html exited $?"
front=$(awk '/^  "pareto": \[/ { on = 1; next } on && /^  \]/ { on = 0 }
	on && /^    \{/ { n++ } END { print n + 0 }' "$tmp/search.json")
top=$(awk '/^  "plans": \[/ { on = 1; next } on && /^  \]/ { on = 0 }
	on && /^    \{/ { n++ } END { print n + 0 }' "$tmp/search.json")
[ "$front" -gt 1 ] || bad "search: a front of $front plans (expected several)"
load search
console_clean search
drawn search memory iteration gantt traffic pareto
expect search pareto pareto-point "$front"
expect search pareto pareto-top "$top"
expect search pareto pareto-front 1
grep -c 'class="top-plan"' "$tmp/search.html" | grep -qx "$top" ||
	bad "search: the top plans table has not $top rows"
png search

# ---- sweep: five GPU counts, a token budget: five points on both curves
"$bin" sweep $common --over gpus --values 8,16,32,64,128 --tp 2 --pp 4 --gbs 256 \
	--tokens 300B --html "$tmp/sweep.html" >"$tmp/sweep.txt" || bad "sweep --html exited $?"
load sweep
console_clean sweep
drawn sweep scaling cost
expect sweep scaling scaling-point 5
expect sweep scaling scaling-ideal 1
expect sweep cost cost-point 5
expect sweep cost cost-usd-point 5
png sweep

# ---- no network: nothing in the pages points outside them
if grep -E '(src|href)="(https?:)?//' "$tmp"/estimate.html "$tmp"/search.html "$tmp"/sweep.html; then
	bad "a page refers to an external resource"
fi

[ $fail = 0 ] && echo "html_chromium: estimate, search and sweep rendered; counts as expected"
exit $fail
