#!/bin/sh
# Fault injection over the verbs that compute (tests/fault/oom.c): every
# allocation of the library (jansson's included) on a representative input
# fails once in turn; each run must exit 1 with the one line "paraplan: out of
# memory", without a crash or (under the ASan build) a leak.
#   oom.sh PARAPLAN_OOM_BINARY
set -e
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
data=$here/../data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" # the files place and calibrate write land here
"$bin" estimate --model llama3-8b --system dgx-h100 --gpus 16 --gbs 64 --seq 4096 --tp 2 \
	--pp 2 --json
# search: the whole space on two threads (the engine allocates up front),
# then a fixed plan's JSON report (a JSON value per field)
"$bin" search --model llama3-8b --system dgx-h100 --gpus 8 --gbs 16 --seq 2048 --top 3 \
	--threads 2
"$bin" search --model llama3-8b --system dgx-h100 --gpus 4 --gbs 8 --seq 2048 --tp 2 --pp 2 \
	--mbs 1 --zero 1 --recompute selective --sp on --cp 1 --vp 1 --schedule 1f1b --top 1 \
	--threads 1 --json
"$bin" sweep --model llama3-8b --system dgx-h100 --tp 2 --seq 2048 --over dp --values 1,2,4 \
	--replica-batch 8 --tokens 1T
"$bin" validate --data "$here/runs.json"
"$bin" validate --data "$here/runs.json" --memory --json
# place: the annealing, the simulated mappings, the rankfile and the mapped
# traffic (a file each); kernel: a GPU profile's tables fitted
"$bin" place --model llama3-8b --system dgx-h100 --gpus 16 --gbs 64 --seq 4096 --tp 2 --pp 2 \
	--synthetic 1 --moves 200 --rankfile rankfile.txt --traffic traffic.json
"$bin" kernel --system dgx-h100 --gpu-profile "$here/kernel" # 28 records of h100-subset
# calibrate --nccl-tests: a log read, both tiers fitted, the system JSON written
"$bin" calibrate --nccl-tests "$data/nccl/h100x4_all_reduce.txt" --system dgx-h100 \
	--output system.json
# calibrate --step-times: the runs estimated, the system fitted and written
# with its GPU inline (two JSON documents read through the shielded parser)
"$bin" calibrate --step-times "$data/steps/h100_megatron_bridge.csv" --output steps-system.json
# --from-megatron: a launch script read (every flag used: no note)
"$bin" estimate --from-megatron "@$here/train_llama3_8b.sh" --system dgx-h100 --gpus 16 --json
"$bin" plan-run "$here/recipe.json" --format json
