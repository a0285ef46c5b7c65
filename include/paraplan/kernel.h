/*
 * paraplan — kernel model: seconds of one GEMM, grouped (MoE) GEMM, fused
 * attention call or memory-bound kernel on a GPU, from a handful of physical
 * parameters (pp_kernel_params in spec.h) fitted to that GPU's measured
 * kernel tables (docs/kernel.md).
 *
 * GEMM: cuBLAS/CUTLASS split C into output tiles, one per SM at a time; the
 * time is the number of waves (ceil(tiles / SMs)) times one tile's k loop at
 * the per-SM share of peak x gemm_eff x k/(k + gemm_k_half), the best of the
 * tile shapes the library picks among, bounded below by the HBM traffic at the
 * measured bandwidth, plus a fixed per-call time.  A grouped GEMM is the same
 * over every expert's tiles at once (torch._grouped_mm, one kernel).
 * Attention: FLOPs / (peak x eff x S/(S + attn_seq_half)) + attn_fixed_s.
 * Memory-bound: bytes / (bandwidth x hbm_eff) + mem_fixed_s.
 *
 * A profile is a directory of JSONL tables in the format of
 * ../shared/measurements/h100-sxm (what tools/probe/paraplan_probe.py writes):
 * gemm_bf16.jsonl, gemm_fp8_tensorwise.jsonl, attention_bf16.jsonl,
 * grouped_gemm_bf16.jsonl, memory_bandwidth.jsonl and device.json.
 */
#ifndef PARAPLAN_KERNEL_H
#define PARAPLAN_KERNEL_H

#include "error.h"
#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Input precision of a GEMM and, for FP8, its scaling recipe. */
typedef enum pp_kernel_dtype {
	PP_KDT_BF16 = 0,
	PP_KDT_FP8_TENSORWISE = 1, /* one scale per tensor (TE delayed / current scaling) */
	PP_KDT_FP8_ROWWISE = 2,    /* one scale per row of A and column of B (torchao rowwise) */
	PP_KDT_FP8_BLOCKWISE = 3,  /* 1x128 activation, 128x128 weight blocks (DeepSeek-V3) */
	PP_KDT_MXFP8 = 4,          /* OCP MX: one E8M0 scale per 32 elements (Blackwell) */
	PP_KDT_NVFP4 = 5,          /* E2M1, one E4M3 scale per 16 elements (Blackwell) */
} pp_kernel_dtype;

/*
 * The quantisation pass of one BF16 GEMM operand (an activation or output
 * gradient, rows x cols, cols the GEMM's reduction dimension) per FP8 recipe,
 * as named HBM traffic (docs/kernel.md gives each recipe's code path):
 *  - every cast reads the BF16 tensor (2 bytes/element) and writes one FP8
 *    copy (1 byte/element) per usage it produces;
 *  - delayed scaling takes its scale from the amax history and records the
 *    amax inside the cast (TE Float8Quantizer::quantize, one cast-transpose);
 *  - current scaling reads the tensor once more for its amax first
 *    (TE Float8CurrentScalingQuantizer::quantize_impl: nvte_compute_amax,
 *    nvte_compute_scale_from_amax, nvte_quantize_v2);
 *  - tensor-wise recipes write the transposed copy the weight gradient reads
 *    where the GPU's FP8 GEMM takes only TN operands: Hopper, not Blackwell
 *    (TE nvte_is_non_tn_fp8_gemm_supported: compute capability 10.x, 11.x,
 *    >= 13.0);
 *  - MXFP8 and block-wise scale along the reduction dimension, which differs
 *    between the forward/dgrad GEMM and the wgrad GEMM, so they write a
 *    row-wise and a column-wise copy, each with its scales, in one kernel on
 *    every architecture (TE MXFP8Quantizer / Float8BlockQuantizer: rowwise
 *    and columnwise data and scale_inv; 1 E8M0 byte per 32 elements, 1 FP32
 *    per 128);
 *  - row-wise (torchao Float8Linear "rowwise") casts the BF16 tensor twice,
 *    along rows for the first GEMM and along columns for the weight
 *    gradient (torchao/float8/float8_linear.py
 *    manual_float8_matmul_with_args_in_hp: axiswise_dim -1 and 0), the scales
 *    computed inside each compiled cast, one FP32 scale per row (column).
 */
#define PP_FP8_QUANT_READ_BYTES 2.0    /* BF16 element read by a cast */
#define PP_FP8_QUANT_WRITE_BYTES 1.0   /* FP8 element written per copy */
#define PP_FP8_AMAX_READ_BYTES 2.0     /* current scaling's amax pass over BF16 */
#define PP_FP8_ROWWISE_CASTS 2.0       /* torchao rowwise: dim -1 and dim 0 casts */
#define PP_FP8_ROWWISE_SCALE_BYTES 4.0 /* FP32 scale per row (column) */
#define PP_FP8_MX_BLOCK 32.0           /* OCP MX v1.0: 32 elements per scale */
#define PP_FP8_MX_SCALE_BYTES 1.0      /* E8M0 */
#define PP_FP8_BLOCK_LEN 128.0         /* 1x128 activation blocks (DeepSeek-V3 3.3.2) */
#define PP_FP8_BLOCK_SCALE_BYTES 4.0   /* FP32 scale_inv (TE Float8BlockQuantizer) */
/*
 * NVFP4 (NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision
 * Inference", 2025; TE NVFP4BlockScaling; "Pretraining Large Language Models
 * with NVFP4", arXiv:2509.25149): E2M1 elements, two per byte, one E4M3
 * scale per 16 consecutive elements along the reduction dimension, and one
 * FP32 scale per tensor computed from the tensor's amax.  The pass reads the
 * BF16 tensor for that amax first (as current scaling does), then once more
 * in the cast, which writes a row-wise and a column-wise copy (1x16 and 16x1
 * blocks: the reduction dimension differs between fprop/dgrad and wgrad),
 * each with its scales (TE quantize_transpose_nvfp4).  The wgrad inputs'
 * random Hadamard transform runs inside that cast and adds no HBM traffic;
 * the per-tensor scale is 4 bytes per tensor, not per element, and is left
 * out of the bytes.
 */
#define PP_FP4_ELEMENT_BYTES 0.5     /* E2M1: two elements per byte */
#define PP_NVFP4_BLOCK 16.0          /* elements per E4M3 scale */
#define PP_NVFP4_SCALE_BYTES 1.0     /* E4M3 block scale */
#define PP_NVFP4_AMAX_READ_BYTES 2.0 /* the per-tensor amax pass over BF16 */

/*
 * FP8 GEMM rates by scaling recipe and accumulator on Hopper, relative to the
 * measured tensor-wise table (torch._scaled_mm with one scale per tensor and
 * the split accumulator, its default).  Measured on one H100 SXM,
 * tools/probe/h100-2026-11-28/fp8_recipes.jsonl: eight shapes of the tables
 * (m 4096 and 16384; k x n 4096 x 6144, 4096 x 28672, 8192 x 57344, 8192 x
 * 8192), the recipes interleaved in rotating order with cool-downs, medians of
 * three rounds; the median ratio over the shapes.  Fast accumulation
 * (cuBLASLt's, use_fast_accum) skips the split accumulator's promotion of the
 * partial sums; row-wise scaling applies its per-row and per-column scales in
 * the epilogue; block-wise scaling promotes and rescales every 128 elements
 * of K on CUDA cores (DeepSeek-V3, arXiv:2412.19437, 3.3.2), which no fast mode
 * avoids.  The 1x128 x 1x128 weight-gradient GEMM of block-wise scaling was
 * timed in the earlier, sequential pass only (0.57-0.75; that pass put the
 * 1x128 x 128x128 case at 0.87 where the interleaved one gives 0.905), its
 * median taken.
 */
#define PP_FP8_FAST_ACCUM_RATE_SM90 1.051    /* tensor-wise, fast accumulation */
#define PP_FP8_ROWWISE_SPLIT_RATE_SM90 0.867 /* row-wise, split accumulator */
#define PP_FP8_ROWWISE_FAST_RATE_SM90 1.045  /* row-wise, fast accumulation */
#define PP_FP8_BLOCK_RATE_SM90 0.905         /* 1x128 x 128x128 (forward, dgrad) */
#define PP_FP8_BLOCK_WGRAD_RATE_SM90 0.66    /* 1x128 x 1x128 (weight gradient) */

/*
 * Rate of an FP8 GEMM of kind `dt` relative to the measured tensor-wise
 * table, on a GPU of compute capability arch x 10: `fast_accum` for a GEMM
 * run with fast accumulation (Transformer Engine's and torchao's forward
 * GEMMs; their dgrad and wgrad keep the split accumulator), `wgrad` for the
 * weight-gradient GEMM.  Hopper (90) as measured above; 1 on every other
 * architecture (Blackwell has no split-accumulator mode, Transformer Engine
 * PR 2748: "there is no fastAccuMode for sm100", and no per-recipe table is
 * measured there) and for BF16, MXFP8 and NVFP4.
 */
double pp_kernel_fp8_rate(pp_kernel_dtype dt, bool fast_accum, bool wgrad, int arch);

/* Whether architecture `arch` (compute capability x 10) runs FP8 GEMMs on
 * non-TN operands, so tensor-wise recipes need no transposed copy (TE
 * nvte_is_non_tn_fp8_gemm_supported). */
bool pp_kernel_fp8_non_tn(int arch);

/* HBM bytes of the quantisation of a rows x cols BF16 operand under recipe
 * `r` on architecture `arch` (compute capability x 10; 0 unknown, taken as
 * needing TN operands), scales included; 0 for an empty tensor. */
double pp_kernel_fp8_quant_bytes(pp_fp8_recipe r, double rows, double cols, int arch);

/* Seconds of `count` GEMMs (m x k) . (k x n) run as one (grouped) kernel on
 * `g` (g->kern must be valid).  Every FP8 recipe runs at the measured
 * tensor-wise FP8 rate (no published GEMM-only figure sets another:
 * docs/kernel.md); none adds the quantisation pass (pp_kernel_fp8_quant_s).
 * NVFP4 runs at gemm_fp8_eff of the FP4 peak (fp4_flops; no FP4 table is
 * measured) with 0.5-byte operands and their 1/16-byte scales.  Returns a
 * negative value for MXFP8 on a GPU without FP8, NVFP4 on one without FP4, or
 * for bad shapes. */
double pp_kernel_gemm_s(const pp_gpu *g, double m, double k, double n, double count,
                        pp_kernel_dtype dt);

/* Seconds of the quantisation pass of a rows x cols BF16 operand under recipe
 * `r` on `g` (its architecture from g->compute_capability_x10): the
 * bytes of pp_kernel_fp8_quant_bytes at the memory-bound rate of
 * pp_kernel_mem_s; 0 for an empty tensor. */
double pp_kernel_fp8_quant_s(const pp_gpu *g, double rows, double cols, pp_fp8_recipe r);

/*
 * Bytes per element of a GEMM input a layer keeps for its weight gradient
 * under recipe `r`: Transformer Engine keeps the quantised input with its
 * column-wise usage only (transformer_engine/pytorch/module/linear.py:
 * update_usage(rowwise_usage=False, columnwise_usage=True)), one FP8 byte
 * plus, for MXFP8 and block-wise, its scales (1 E8M0 byte per 32, one FP32
 * per 128); torchao's row-wise Float8Linear keeps the BF16 input and casts
 * it again in backward (float8_linear.py: save_for_backward(input_hp, ...)):
 * 2.  A tensor-wise scale is one number per tensor: 1.  NVFP4 keeps its
 * column-wise FP4 copy with its E4M3 scales: 0.5 + 1/16.
 */
double pp_fp8_saved_input_bytes(pp_fp8_recipe r);
/*
 * Bytes per GEMM parameter of the quantised weight TransformerEngine holds
 * for both of its uses (the forward and data-gradient GEMMs read it
 * row-wise, on Hopper the weight gradient's transposed GEMM column-wise),
 * on a GPU of compute capability arch x 10 (0 = unknown: Hopper's rules):
 * per-tensor scaling (delayed, current) 1 byte, plus its FP8 transpose
 * where FP8 GEMMs must be TN (pp_kernel_fp8_non_tn false:
 * transformer_engine/pytorch/csrc/quantizer.cpp, with_transpose =
 * columnwise_usage && !is_non_tn_fp8_gemm_supported); MXFP8 a row-wise and
 * a column-wise copy with an E8M0 scale per 32 each (2 x 1.03125);
 * block-wise a row-wise and a column-wise copy (block-scaled FP8 GEMMs are
 * TN only on every GPU: cublaslt_grouped_gemm.cu, non_tn_fp8_ok = fp8_block
 * ? false) with an FP32 scale per 128 x 128 weight block; NVFP4 two FP4
 * copies with an E4M3 scale per 16 (2 x 0.5625); row-wise (torchao) a
 * row-wise and a column-wise scaled cast, 2.  docs/memory.md "FP8 weights".
 */
double pp_fp8_weight_bytes(pp_fp8_recipe r, int arch);

/* The GEMM kind recipe `r` runs (tensor-wise for delayed and current, NVFP4
 * for nvfp4). */
pp_kernel_dtype pp_kernel_dtype_of_recipe(pp_fp8_recipe r);

/*
 * Fused attention's rate at head dimension d relative to its rate at d =
 * 128, the head dimension of the measured tables: 1 at d >= 128, below 1
 * under it.  The matmuls' FLOPs per score element scale with d, the
 * softmax's exponentials per score element do not (FlashAttention-3, Shah
 * et al. 2024, arXiv:2407.08608, sec. 3: H100 SXM5 has 989 TFLOPS of matmul
 * and 3.9 TFLOPS of special functions), so with each element's time d/128 +
 * x (matmul at d = 128 as the unit) the rate is (1 + x) (d/128) / (d/128 +
 * x), x set by the published H100 rate at d = 64 (src/kernel/kernel.c) and
 * halved on Ampere (cc_x10 80-89: half Hopper's tensor work per clock, the
 * same exponential rate).  `fa2`: the FlashAttention-2 family's x, else the
 * measured kernel's (cuDNN).
 */
double pp_kernel_attn_head_factor(double d, bool bwd, bool fa2, int cc_x10);

/* Seconds of fused attention over b sequences, hq query heads, sq queries, sk
 * keys, head dim d; causal halves the score matrix; bwd: the backward
 * (2.5x the forward's FLOPs). */
double pp_kernel_attn_s(const pp_gpu *g, double b, double hq, double sq, double sk, double d,
                        bool causal, bool bwd);

/*
 * The GPU-side part of an isolated call's fixed time: what a kernel still
 * pays once the host has issued it ahead, in a busy stream (the gap between
 * back-to-back kernels on the GPU).  NVIDIA, "Getting Started with CUDA
 * Graphs" (developer.nvidia.com/blog/cuda-graphs, 2019): a 2.9 us kernel
 * takes 9.6 us per launch with a stream synchronise after each, 3.8 us
 * launched back to back (the host's launch hidden under the previous
 * kernel), 3.4 us replayed as a graph: 3.8 - 2.9 = 0.9 us per kernel stays
 * on the GPU.  Measured on a V100; no H100 figure is published.
 */
#define PP_KERNEL_STREAM_GAP_S 0.9e-6

/*
 * The measured per-call fixed times of `p` (CUDA events around one call
 * from an idle GPU, which take in the host's time to issue the call) as a
 * busy stream pays them, into *gpu (a copy of p): GEMM and memory-bound
 * kernels PP_KERNEL_STREAM_GAP_S each; attention attn_fixed_s less a GEMM
 * call's host time (its rest is GPU work the S/(S + S_half) form misses).
 * *host_gemm_s and *host_mem_s: the host's issue time of a GEMM or
 * attention call and of a memory-bound kernel (the fixed time less the gap).
 */
void pp_kernel_stream_params(const pp_kernel_params *p, pp_kernel_params *gpu, double *host_gemm_s,
                             double *host_mem_s);

/* Seconds of a memory-bound kernel moving `bytes` (read + written). */
double pp_kernel_mem_s(const pp_gpu *g, double bytes);

/* ------------------------------------------------------------- profiles */

typedef struct pp_kernel_gemm_rec {
	double m, k, n, s;
} pp_kernel_gemm_rec;
typedef struct pp_kernel_attn_rec {
	double b, hq, hkv, seq, d, fwd_s, bwd_s;
} pp_kernel_attn_rec;
typedef struct pp_kernel_moe_rec {
	double experts, tokens_per_expert, k, n, grouped_s, loop_s;
} pp_kernel_moe_rec;
typedef struct pp_kernel_mem_rec {
	double bytes, s;
	bool add; /* an `x + x` row: counts x twice though the kernel reads it once */
} pp_kernel_mem_rec;

typedef enum pp_kernel_table {
	PP_KT_GEMM_BF16 = 0,
	PP_KT_GEMM_FP8 = 1,
	PP_KT_ATTN = 2,
	PP_KT_MOE = 3,
	PP_KT_MEM = 4,
	PP_KT_COUNT = 5
} pp_kernel_table;

/* Measured tables of one GPU (owned by the profile; pp_kernel_profile_free). */
typedef struct pp_kernel_profile {
	char device[PP_NAME_MAX]; /* device.json "name" */
	double sms;               /* device.json "sms"; 0 when absent */
	pp_kernel_gemm_rec *gemm, *fp8;
	pp_kernel_attn_rec *attn;
	pp_kernel_moe_rec *moe;
	pp_kernel_mem_rec *mem;
	int n[PP_KT_COUNT]; /* records per table */
} pp_kernel_profile;

/* The table's file name in a profile directory ("gemm_bf16.jsonl"). */
const char *pp_kernel_table_file(pp_kernel_table t);

/*
 * Read the profile directory `dir` into a new profile (*out, caller frees with
 * pp_kernel_profile_free).  gemm_bf16.jsonl, memory_bandwidth.jsonl and
 * device.json are required, the other tables optional (missing: 0 records).
 * A malformed line is PP_EINPUT naming file, line and column or the field.
 */
pp_status pp_kernel_profile_read(const char *dir, pp_kernel_profile **out, pp_error *err);
void pp_kernel_profile_free(pp_kernel_profile *p);

/*
 * The readers pp_kernel_profile_read runs on each file, for a profile held in
 * memory.  pp_kernel_profile_new: an empty profile (no device name, sms 0, no
 * records; caller frees with pp_kernel_profile_free), NULL when out of memory.
 * pp_kernel_profile_parse_device: device.json's `len` bytes of `text` (no NUL
 * needed at the end) into p->device and p->sms.  pp_kernel_profile_parse_table:
 * one table's JSONL text (one record a line, blank lines skipped) into table
 * `t` of p, replacing its records; a table of no records is not an error here
 * (the directory reader requires gemm_bf16 and memory_bandwidth).  `source`
 * names the text in messages; a malformed line is PP_EINPUT naming source, line
 * and column or the field, and leaves the table empty.  The profile keeps no
 * pointer into `text`.
 */
pp_kernel_profile *pp_kernel_profile_new(void);
pp_status pp_kernel_profile_parse_device(pp_kernel_profile *p, const char *text, size_t len,
                                         const char *source, pp_error *err);
pp_status pp_kernel_profile_parse_table(pp_kernel_profile *p, pp_kernel_table t, const char *text,
                                        size_t len, const char *source, pp_error *err);

/*
 * Fit g->kern to the profile's tables, holding g's datasheet peaks
 * (bf16_flops, fp8_flops, memory_bw_bytes_per_s): the HBM parameters to the
 * memory table, the GEMM ones to gemm_bf16, the FP8 ceiling to the FP8 table,
 * the attention ones to the attention table (each a coordinate descent on the
 * table's MAPE within physical bounds: every efficiency <= 1, never above the
 * datasheet).  The grouped-GEMM table is not fitted: the GEMM model predicts
 * it.  Tables without records leave their parameters at the values
 * pp_kernel_scale gives from the reference H100.  Sets g->kern.valid.
 */
pp_status pp_kernel_fit(const pp_kernel_profile *p, pp_gpu *g, pp_error *err);

/*
 * Per-table MAPE (percent) of the model on `g` against the profile, into
 * mape[PP_KT_COUNT] (NAN for an empty table).  Allocates nothing.
 */
void pp_kernel_profile_mape(const pp_kernel_profile *p, const pp_gpu *g, double *mape);

/*
 * A GPU without measurements: the reference H100 SXM kernel parameters
 * (PP_KERNEL_H100_*, fitted once to ../shared/measurements/h100-sxm) carried
 * over as fractions of `g`'s own datasheet peaks and bandwidth, with `sms`
 * its SM count (the named ratio is g's peak over the H100's, applied through
 * the efficiencies being fractions of peak); fixed times are kept.  Sets
 * g->kern.  Returns PP_EINPUT when sms <= 0 or g has no BF16 peak.
 */
pp_status pp_kernel_scale(pp_gpu *g, double sms, pp_error *err);

/* The GPU's sustained BF16 GEMM fraction of its datasheet peak over the
 * reference H100's (src/kernel/kernel.c cites the measurements); 1 for a GPU
 * not in the table.  pp_kernel_scale multiplies the GEMM ceilings by it. */
double pp_kernel_gemm_ceiling_ratio(const char *gpu);
/* The largest factor by which a calibrated stack may run the GPU's BF16
 * GEMMs above the kernel model's rate: the part's own measured best (MAMF)
 * over that rate for a part with a MAMF figure, the measured reference
 * included (1.14), 1 for parts without one. */
double pp_kernel_gemm_fit_ceiling(const char *gpu);
/* The same for FP8 GEMMs: on the measured reference the fastest shape of its
 * own FP8 table over the kernel model's FP8 rate (1.068); 1 elsewhere. */
double pp_kernel_gemm_fp8_fit_ceiling(const char *gpu);

/*
 * The kernel model of `g` (g->kern set), as `paraplan kernel` reports it:
 * fitted to the measured tables in `dir` (pp_kernel_profile_read,
 * pp_kernel_fit; *profile the tables, freed by pp_kernel_profile_free), or,
 * when `dir` is NULL, the reference H100's parameters carried over with g's
 * own SM count (pp_kernel_scale; *profile NULL).  PP_OK; PP_EINPUT when g's
 * SM count is unknown (field gpu.sm_count); or the reader's or the fit's
 * error (*profile NULL).
 */
pp_status pp_kernel_model_of(pp_gpu *g, const char *dir, pp_kernel_profile **profile,
                             pp_error *err);

/* The GPU whose measured tables (../shared/measurements/h100-sxm) the
 * reference parameters PP_KERNEL_H100_* were fitted to. */
#define PP_KERNEL_REFERENCE_GPU "h100-sxm"

/*
 * Where g's kernel rates come from, as the report says it: "profile" (fitted
 * to measured tables, pp_kernel_fit), "measured" (g is the reference GPU and
 * carries its own measured parameters), "derived" (the reference's carried
 * to g's datasheet by pp_kernel_scale); NULL when g->kern is not set.  A
 * static string.
 */
const char *pp_kernel_rates_origin(const pp_gpu *g);

/* The SM count and compute capability of a preset GPU are spec's facts:
 * pp_gpu_datasheet_sms, pp_gpu_datasheet_arch (spec.h). */

#ifdef __cplusplus
}
#endif
#endif
