#!/bin/sh
# llama3-8b on 16 GPUs, tp 2, pp 2 (paraplan estimate --emit megatron)
torchrun pretrain_gpt.py \
--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 --group-query-attention --num-query-groups 8 --kv-channels 128 --padded-vocab-size 128256 --normalization RMSNorm --position-embedding-type rope --max-position-embeddings 4096 --swiglu --untie-embeddings-and-output-weights --disable-bias-linear --attention-dropout 0.0 --hidden-dropout 0.0 \
--seq-length 4096 --global-batch-size 64 --micro-batch-size 1 --bf16 --optimizer adam \
--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --context-parallel-size 1 --expert-model-parallel-size 1 --expert-tensor-parallel-size 2
