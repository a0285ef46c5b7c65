#!/bin/sh
# Write failures (tests/fault/enospc.c, an LD_PRELOAD shim: the disk is full):
# --output to a file exits 1 with one line naming the file and the cause, and
# leaves no partial output: a file that was there keeps its content, no
# temporary file stays (nor any other output of the command: all or none).
# Standard output on a full device (/dev/full) exits 1, for every verb.
#   write_fail.sh PARAPLAN_BINARY SHIM
bin=$1
shim=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail=0
# The shim is not built with the sanitizers: let it come before their runtime.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
check() { # name, then the command's arguments (without --output)
	name=$1
	shift
	rm -rf out && mkdir out
	echo old >out/kept.txt
	LD_PRELOAD=$shim "$bin" "$@" --output out/kept.txt >stdout 2>stderr
	got=$?
	lines=$(wc -l <stderr)
	# the file named: the first output written (out/kept.txt unless $first says)
	want="paraplan: ${first:-out/kept.txt}: cannot write the output file: No space left on device"
	if [ $got != 1 ] || [ "$lines" != 1 ] || [ "$(cat stderr)" != "$want" ]; then
		echo "$name: exit $got (want 1), stderr:"; cat stderr; fail=1
	fi
	if [ "$(cat out/kept.txt)" != old ] || [ "$(ls -A out)" != kept.txt ]; then
		echo "$name: the output directory changed:"; ls -la out; fail=1
	fi
	echo "$name: exit $got, '$(cat stderr)'"
	first=
}
est="--model llama3-8b --system dgx-h100 --gpus 16 --gbs 64 --seq 4096 --tp 2"
# shellcheck disable=SC2086
check estimate estimate $est
# shellcheck disable=SC2086
check estimate-json estimate $est --json
# shellcheck disable=SC2086
check search search $est --top 2 --threads 1
check sweep sweep --model llama3-8b --system dgx-h100 --tp 2 --seq 2048 --over dp \
	--values 1,2 --replica-batch 8
check validate validate --data "$here/runs.json"
# shellcheck disable=SC2086
check place place $est --pp 2 --synthetic 1 --moves 200
# shellcheck disable=SC2086
first=out/rankfile.txt check place-rankfile place $est --pp 2 --synthetic 1 --moves 200 --rankfile out/rankfile.txt
check calibrate-nccl calibrate --nccl-tests "$here/../data/nccl/h100x4_all_reduce.txt" \
	--system dgx-h100
check from-megatron estimate --from-megatron "@$here/train_llama3_8b.sh" --system dgx-h100 \
	--gpus 16
# shellcheck disable=SC2086
first=out/trace.json check traffic-trace estimate $est --traffic out/traffic.json --trace out/trace.json
# Standard output that cannot be written: exit 1, one line, for every verb
# (cli_finish checks standard output at the end of each).
full() { # name, then the command's arguments
	name=$1
	shift
	"$bin" "$@" >/dev/full 2>stderr
	got=$?
	if [ $got != 1 ] || [ "$(cat stderr)" != "paraplan: cannot write the output" ]; then
		echo "$name: stdout on /dev/full: exit $got, stderr:"; cat stderr; fail=1
	else
		echo "$name: stdout on /dev/full: exit 1, '$(cat stderr)'"
	fi
}
# shellcheck disable=SC2086
full estimate estimate $est
# shellcheck disable=SC2086
full place place $est --pp 2 --synthetic 1 --moves 200
full kernel kernel --system dgx-h100
full kernel-help kernel -h
full list list gpus
full version --version
full help --help
full estimate-help estimate --help
full validate validate --data "$here/runs.json"
# the report on standard output fails: the file written beside it is not kept
rm -f system.json
full calibrate-nccl calibrate --nccl-tests "$here/../data/nccl/h100x4_all_reduce.txt" \
	--system dgx-h100 --output system.json
stray=
for f in .* *; do
	case $f in .|..|stdout|stderr|out|'*') ;; *) stray="$stray $f" ;; esac
done
if [ -e system.json ] || [ -n "$stray" ]; then
	echo "calibrate-nccl: a file stayed although standard output failed:"; ls -la; fail=1
fi
exit $fail
