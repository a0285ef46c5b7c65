#!/bin/sh
# Seed 002 (DHelix) §6 scenarios: paraplan's predicted gain of the W-shaped
# schedule with strand interleaving (--schedule wshape) over its own 1F1B
# Megatron-LM baseline, next to the gain the paper reports.  Where the paper's
# text gives no plan (Fig. 11's (DP, TP, PP) tuples are in the figure only),
# the plan used is marked "assumed".
# Then §6.5's maximum model size (1F1B / wshape / bi-directional against the
# paper's 40B / 39B / 32B) under each stated and assumed setup:
# bench/bench_dhelix_s65.c, built on demand.
#   usage: bench/dhelix_s6.sh [PARAPLAN [BENCH_DHELIX_S65]]
#          (defaults ./build/paraplan, ./build/bench/bench_dhelix_s65)
bin=${1:-./build/paraplan}
s65=${2:-./build/bench/bench_dhelix_s65}
printf '%-34s %-28s %-8s %9s %9s %7s %s\n' scenario plan paper closed simulated "s" fits
row() {
	name=$1 paper=$2 plan=$3
	shift 3
	b=$("$bin" estimate "$@" --schedule 1f1b --sim on) || exit 1
	w=$("$bin" estimate "$@" --schedule wshape --sim on --pairing on) || exit 1
	tb=$(printf '%s\n' "$b" | awk '/^throughput/ {print $2}')
	tw=$(printf '%s\n' "$w" | awk '/^throughput/ {print $2}')
	sb=$(printf '%s\n' "$b" | awk '/^simulated iteration/ {print $3}')
	sw=$(printf '%s\n' "$w" | awk '/^simulated iteration/ {print $3}')
	s=$(printf '%s\n' "$w" | awk '/^  SI block/ {print $NF}' | tr '\n' '/' | sed 's#/$##')
	fit=$(printf '%s\n' "$w" | awk '/^verdict/ {print ($2 == "fits,") ? "yes" : "no"}')
	awk -v n="$name" -v pl="$plan" -v pa="$paper" -v tb="$tb" -v tw="$tw" -v sb="$sb" \
	    -v sw="$sw" -v s="$s" -v f="$fit" 'BEGIN {
		printf "%-34s %-28s %-8s %+8.1f%% %+8.1f%% %7s %s\n", n, pl, pa,
		       (tw / tb - 1) * 100, (sb / sw - 1) * 100, s, f }'
}
a40="--system dhelix-a40 --gpus 64"
# §6.2.1, Fig. 11: dense models, 8K sequences, 8M-token global batch, A40
row "Fig.11 Llama-8B A40 8K" 27-40% "dp8 tp8 pp1 (assumed)" \
	--model llama3.1-8b $a40 --gbs 1024 --seq 8192 --tp 8 --sp on --pp 1
row "Fig.11 Llama-25B A40 8K" 27-40% "dp4 tp8 pp2 (§6.5's)" \
	--model dhelix-llama-25b $a40 --gbs 1024 --seq 8192 --tp 8 --sp on --pp 2
row "Fig.11 Llama-39B A40 8K" 27-40% "dp2 tp8 pp4 (assumed)" \
	--model dhelix-llama-39b $a40 --gbs 1024 --seq 8192 --tp 8 --sp on --pp 4
# §6.2.2, Fig. 12: 16K sequences with context parallelism
row "Fig.12 Llama-25B A40 16K cp2" 22-39% "dp2 tp8 pp2 cp2 (assumed)" \
	--model dhelix-llama-25b $a40 --gbs 512 --seq 16384 --tp 8 --sp on --pp 2 --cp 2
# §6.2.3, Table 6: Phi-31B, EP 8, DP 16, PP 4, 3072 tokens, global batch 1600
row "Tab.6 Phi-31B A40 ep8" 27% "dp16 ep8 pp4" \
	--model dhelix-phi-31b $a40 --gbs 1600 --seq 3072 --pp 4 --ep 8
# §6.3.1, Fig. 13(a): Llama-66B on A800 with CP 2 (16K) and CP 4 (32K)
a800="--system dhelix-a800 --gpus 64"
row "Fig.13a Llama-66B A800 16K cp2" 7-24% "tp8 cp2 pp4 (assumed)" \
	--model dhelix-llama-66b $a800 --gbs 512 --seq 16384 --tp 8 --sp on --cp 2 --pp 4
row "Fig.13a Llama-66B A800 32K cp4" 7-24% "tp8 cp4 pp2 rc-full (assumed)" \
	--model dhelix-llama-66b $a800 --gbs 256 --seq 32768 --tp 8 --sp on --cp 4 --pp 2 \
	--recompute full
# §6.3.3, Fig. 14: cross-node TP on 4 H100 nodes, Llama3.1-405B layers
h100="--system dgx-h100 --gpus 32"
row "Fig.14 L8 H100 tp8" "<=17%" "dp4 tp8 (assumed 8K)" \
	--model dhelix-llama405-l8 $h100 --gbs 1024 --seq 8192 --tp 8 --sp on
row "Fig.14 L16 H100 tp16" "<=17%" "dp2 tp16 (assumed 8K)" \
	--model dhelix-llama405-l16 $h100 --gbs 1024 --seq 8192 --tp 16 --sp on
row "Fig.14 L32 H100 tp32" "<=17%" "tp32 (assumed 8K)" \
	--model dhelix-llama405-l32 $h100 --gbs 1024 --seq 8192 --tp 32 --sp on
# §6.5, maximum model size: Llama-25B's layer, A40, DP 4 TP 8 PP 2, mbs 1
echo
if [ -x "$s65" ]; then
	"$s65" || exit 1
else
	echo "§6.5: build it first: cmake --build build --target bench_dhelix_s65" >&2
	exit 1
fi
