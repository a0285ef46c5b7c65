#!/bin/bash
# A launch script in the style of Megatron-LM's examples/gpt3/train_gpt3_175b_distributed.sh:
# variables, arrays, line continuations, comments; torchrun's world size.
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
NUM_NODES=128
CHECKPOINT_PATH=$1
DATA_PATH=$2

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr localhost
    --master_port 6000
)

GPT_MODEL_ARGS=(
    --num-layers 96
    --hidden-size 12288
    --num-attention-heads 96
    --seq-length 2048
    --max-position-embeddings 2048
    --vocab-size 51200  # GPT-2 BPE, padded
    --attention-backend auto
)

TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 1536
    --train-iters 500000
    --weight-decay 0.1
    --lr 6.0e-5
    --fp16
    --recompute-granularity full --recompute-method uniform --recompute-num-layers 1
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size ${TP:-8}
    --pipeline-model-parallel-size 16
    --use-distributed-optimizer
    --sequence-parallel
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${GPT_MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    --data-path $DATA_PATH \
    --save $CHECKPOINT_PATH \
    --load $CHECKPOINT_PATH
