#!/bin/sh
# Progress on long work: search, sweep, validate and calibrate print progress
# on stderr when it is a terminal (here a pseudo-terminal from util-linux's
# `script`), never with --quiet, never when stderr is not a terminal, and
# never into the JSON/CSV/text on stdout.
#
#   progress_tty.sh PARAPLAN_BINARY
#
# Exits 77 (ctest's SKIP_RETURN_CODE) when `script` is not installed.
set -u
bin=$1
command -v script >/dev/null 2>&1 || { echo "progress_tty: no script(1): skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

# tty NAME CMD: run CMD with stdout to $tmp/NAME.out and stderr on a pseudo-terminal
tty() {
	script -qec "$2 >'$tmp/$1.out'" /dev/null >"$tmp/$1.tty" 2>&1 </dev/null ||
		bad "$1: exited $?"
}

# progress VERB NAME: the pseudo-terminal shows VERB's progress
progress() {
	grep -q "paraplan: $1: " "$tmp/$2.tty" || bad "$2: no progress on the terminal"
}
# none NAME: nothing on the terminal
none() {
	[ ! -s "$tmp/$1.tty" ] || { bad "$1: the terminal shows:"; cat -v "$tmp/$1.tty"; }
}
# clean NAME: stdout holds no progress (no 'paraplan:', no carriage return, no escape)
clean() {
	if grep -q "paraplan: \|$(printf '\r')\|$(printf '\033')" "$tmp/$1.out"; then
		bad "$1: progress in the output on stdout"
	fi
}

model="--model gpt-18.4b --system dgx-h100 --seq 2048"
sweep="$bin sweep $model --over gpus --values 8,16,32,64 --tp 2 --pp 4 --gbs 256"
search="$bin search $model --gpus 16 --gbs 64 --threads 2"

for v in sweep search; do
	case $v in
	sweep) cmd=$sweep ;;
	*) cmd=$search ;;
	esac
	tty "$v" "$cmd"
	progress "$v" "$v"
	clean "$v"
	tty "$v-quiet" "$cmd --quiet"
	none "$v-quiet"
	tty "$v-json" "$cmd --json"
	progress "$v" "$v-json"
	clean "$v-json"
	head -c 1 "$tmp/$v-json.out" | grep -q '{' || bad "$v --json: not JSON on stdout"
	# stderr not a terminal: no progress
	$cmd --json >"$tmp/$v-pipe.out" 2>"$tmp/$v-pipe.err" || bad "$v: exited $?"
	[ ! -s "$tmp/$v-pipe.err" ] || bad "$v: progress with stderr not a terminal"
	cmp -s "$tmp/$v-pipe.out" "$tmp/$v-json.out" || [ $v = search ] ||
		bad "$v: the JSON differs on a terminal"
done
tty sweep-csv "$sweep --csv"
clean sweep-csv
head -n 1 "$tmp/sweep-csv.out" | grep -q '^[a-z_]*,' || bad "sweep --csv: no CSV header"

tty validate "$bin validate"
progress validate validate
clean validate
tty validate-quiet "$bin validate --quiet"
none validate-quiet
tty validate-json "$bin validate --json"
progress validate validate-json
clean validate-json

tty calibrate "$bin calibrate --gpu h100-sxm"
progress calibrate calibrate
clean calibrate
tty calibrate-quiet "$bin calibrate --gpu h100-sxm --quiet"
none calibrate-quiet

[ $fail = 0 ] && echo "progress_tty: progress on a terminal only, off with --quiet, never on stdout"
exit $fail
