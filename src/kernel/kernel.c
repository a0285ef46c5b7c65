/*
 * The kernel model: GEMMs by wave and tile quantisation over the SMs, fused
 * attention by key length, memory-bound kernels at the measured bandwidth
 * (docs/kernel.md), and its fit to a GPU's measured tables.
 */
#include <math.h>
#include <string.h>

#include "paraplan/kernel.h"
#include "util/util.h"

/*
 * Output tile shapes (rows x columns of C) the GEMM library picks among for
 * BF16/FP8 on Hopper: CUTLASS 3.x sm90 warp-specialised kernels and cuBLAS's
 * heuristics use 128x256, 256x128 and 128x128 (NVIDIA "Matrix Multiplication
 * Background User's Guide", tile and wave quantisation; CUTLASS
 * include/cutlass/gemm/collective/sm90_*), and 64-row tiles (wgmma's m64) for
 * thin problems.  The model takes the fastest, as the heuristic tries to.
 */
static const double tile_shapes[][2] = {{128, 256}, {256, 128}, {128, 128}, {64, 256}};
#define N_TILES (sizeof tile_shapes / sizeof tile_shapes[0])

static double peak_of(const pp_gpu *g, pp_kernel_dtype dt)
{
	double bf16 = g->bf16_flops > 0 ? g->bf16_flops : g->fp16_flops;
	if (dt == PP_KDT_BF16)
		return bf16;
	if (dt == PP_KDT_NVFP4)
		return g->fp4_flops;
	return g->fp8_flops > 0 ? g->fp8_flops : bf16;
}

void pp_kernel_stream_params(const pp_kernel_params *p, pp_kernel_params *gpu, double *host_gemm_s,
                             double *host_mem_s)
{
	*gpu = *p;
	double gap = PP_KERNEL_STREAM_GAP_S;
	double hg = p->gemm_fixed_s > gap ? p->gemm_fixed_s - gap : 0;
	double hm = p->mem_fixed_s > gap ? p->mem_fixed_s - gap : 0;
	gpu->gemm_fixed_s = p->gemm_fixed_s < gap ? p->gemm_fixed_s : gap;
	gpu->mem_fixed_s = p->mem_fixed_s < gap ? p->mem_fixed_s : gap;
	gpu->attn_fixed_s = p->attn_fixed_s > hg + gap ? p->attn_fixed_s - hg : gap;
	*host_gemm_s = hg;
	*host_mem_s = hm;
}

double pp_kernel_mem_s(const pp_gpu *g, double bytes)
{
	const pp_kernel_params *p = &g->kern;
	if (bytes <= 0)
		return 0;
	return bytes / (g->memory_bw_bytes_per_s * p->hbm_eff) + p->mem_fixed_s;
}

double pp_kernel_gemm_s(const pp_gpu *g, double m, double k, double n, double count,
                        pp_kernel_dtype dt)
{
	const pp_kernel_params *p = &g->kern;
	if (m <= 0 || k <= 0 || n <= 0 || count <= 0 || p->sms <= 0)
		return -1;
	bool fp8 = dt != PP_KDT_BF16;
	if ((dt == PP_KDT_MXFP8 && g->fp8_flops <= 0) || (dt == PP_KDT_NVFP4 && g->fp4_flops <= 0))
		return -1;
	/* No measured FP4 GEMM table: NVFP4 runs at the FP8 ceiling's fraction
	 * of its own (FP4) peak, twice the FP8 rate where the datasheet's FP4
	 * peak is twice its FP8 (B200, GB200). */
	double eff = fp8 && g->fp8_flops > 0 ? p->gemm_fp8_eff : p->gemm_eff;
	double per_sm = peak_of(g, dt) * eff / p->sms * (k / (k + p->gemm_k_half));
	double best = INFINITY;
	for (size_t i = 0; i < N_TILES; i++) {
		double a = tile_shapes[i][0], b = tile_shapes[i][1];
		double tiles = count * ceil(m / a) * ceil(n / b);
		double waves = ceil(tiles / p->sms);
		double t = waves * 2.0 * a * b * k / per_sm;
		if (t < best)
			best = t;
	}
	double in_b = dt == PP_KDT_NVFP4
	                  ? PP_FP4_ELEMENT_BYTES + PP_NVFP4_SCALE_BYTES / PP_NVFP4_BLOCK
	              : fp8 ? 1.0
	                    : 2.0;
	double bytes = count * ((m * k + k * n) * in_b + m * n * 2.0);
	double tm = bytes / (g->memory_bw_bytes_per_s * p->hbm_eff);
	double t = (best > tm ? best : tm);
	return t + p->gemm_fixed_s;
}

double pp_kernel_fp8_rate(pp_kernel_dtype dt, bool fast_accum, bool wgrad, int arch)
{
	if (arch != 90)
		return 1;
	switch (dt) {
	case PP_KDT_FP8_TENSORWISE: return fast_accum ? PP_FP8_FAST_ACCUM_RATE_SM90 : 1;
	case PP_KDT_FP8_ROWWISE:
		return fast_accum ? PP_FP8_ROWWISE_FAST_RATE_SM90 : PP_FP8_ROWWISE_SPLIT_RATE_SM90;
	case PP_KDT_FP8_BLOCKWISE:
		return wgrad ? PP_FP8_BLOCK_WGRAD_RATE_SM90 : PP_FP8_BLOCK_RATE_SM90;
	default: return 1;
	}
}

bool pp_kernel_fp8_non_tn(int arch)
{
	return (arch >= 100 && arch < 120) || arch >= 130;
}

double pp_kernel_fp8_quant_bytes(pp_fp8_recipe r, double rows, double cols, int arch)
{
	if (!(rows > 0) || !(cols > 0))
		return 0;
	double elems = rows * cols;
	const double rd = PP_FP8_QUANT_READ_BYTES, wr = PP_FP8_QUANT_WRITE_BYTES;
	switch (r) {
	case PP_FP8_MX: /* row-wise and column-wise copies, 1x32 and 32x1 scales */
		return elems * (rd + 2 * wr * (1 + PP_FP8_MX_SCALE_BYTES / PP_FP8_MX_BLOCK));
	case PP_FP8_BLOCKWISE: /* idem with FP32 scales per 128 */
		return elems * (rd + 2 * wr) +
		       2 * elems / PP_FP8_BLOCK_LEN * PP_FP8_BLOCK_SCALE_BYTES;
	case PP_FP8_NVFP4: /* amax read, then row- and column-wise FP4 copies, 1x16 / 16x1 scales */
		return elems * (PP_NVFP4_AMAX_READ_BYTES + rd +
		                2 * (PP_FP4_ELEMENT_BYTES + PP_NVFP4_SCALE_BYTES / PP_NVFP4_BLOCK));
	case PP_FP8_ROWWISE: /* two casts, scales per row and per column */
		return PP_FP8_ROWWISE_CASTS * elems * (rd + wr) +
		       (rows + cols) * PP_FP8_ROWWISE_SCALE_BYTES;
	case PP_FP8_CURRENT:
	case PP_FP8_DELAYED:
	default: {
		double b = elems * (rd + wr);
		if (!pp_kernel_fp8_non_tn(arch))
			b += elems * wr; /* the transposed copy for the weight gradient */
		if (r == PP_FP8_CURRENT)
			b += elems * PP_FP8_AMAX_READ_BYTES;
		return b;
	}
	}
}

double pp_kernel_fp8_quant_s(const pp_gpu *g, double rows, double cols, pp_fp8_recipe r)
{
	double b = pp_kernel_fp8_quant_bytes(r, rows, cols, g->compute_capability_x10);
	return b > 0 ? pp_kernel_mem_s(g, b) : 0;
}

double pp_fp8_saved_input_bytes(pp_fp8_recipe r)
{
	const double wr = PP_FP8_QUANT_WRITE_BYTES;
	switch (r) {
	case PP_FP8_MX: return wr * (1 + PP_FP8_MX_SCALE_BYTES / PP_FP8_MX_BLOCK);
	case PP_FP8_BLOCKWISE: return wr + PP_FP8_BLOCK_SCALE_BYTES / PP_FP8_BLOCK_LEN;
	case PP_FP8_NVFP4: return PP_FP4_ELEMENT_BYTES + PP_NVFP4_SCALE_BYTES / PP_NVFP4_BLOCK;
	case PP_FP8_ROWWISE: return PP_FP8_QUANT_READ_BYTES; /* the BF16 input itself */
	case PP_FP8_CURRENT:
	case PP_FP8_DELAYED:
	default: return wr;
	}
}

double pp_fp8_weight_bytes(pp_fp8_recipe r, int arch)
{
	const double wr = PP_FP8_QUANT_WRITE_BYTES;
	switch (r) {
	case PP_FP8_MX: return 2 * wr * (1 + PP_FP8_MX_SCALE_BYTES / PP_FP8_MX_BLOCK);
	case PP_FP8_BLOCKWISE:
		return 2 * (wr + PP_FP8_BLOCK_SCALE_BYTES / (PP_FP8_BLOCK_LEN * PP_FP8_BLOCK_LEN));
	case PP_FP8_NVFP4:
		return 2 * (PP_FP4_ELEMENT_BYTES + PP_NVFP4_SCALE_BYTES / PP_NVFP4_BLOCK);
	case PP_FP8_ROWWISE: return 2 * wr;
	case PP_FP8_CURRENT:
	case PP_FP8_DELAYED:
	default: return pp_kernel_fp8_non_tn(arch) ? wr : 2 * wr;
	}
}

pp_kernel_dtype pp_kernel_dtype_of_recipe(pp_fp8_recipe r)
{
	switch (r) {
	case PP_FP8_ROWWISE: return PP_KDT_FP8_ROWWISE;
	case PP_FP8_BLOCKWISE: return PP_KDT_FP8_BLOCKWISE;
	case PP_FP8_MX: return PP_KDT_MXFP8;
	case PP_FP8_NVFP4: return PP_KDT_NVFP4;
	case PP_FP8_CURRENT:
	case PP_FP8_DELAYED:
	default: return PP_KDT_FP8_TENSORWISE;
	}
}

/*
 * Attention's rate at head dimension 64 over its rate at 128 on an H100
 * SXM5, FlashAttention-3 (arXiv:2407.08608) Fig. 5 (forward) and Fig. 6
 * (backward), without causal mask, sequence lengths 1k-16k, mean of the
 * ratios: cuDNN forward 373/574, 395/617, 408/609, 412/600, 413/595 =
 * 0.668, backward 348/408, 395/465, 417/499, 432/518, 433/516 = 0.842 (the
 * measured tables' kernel: their causal d 128 rates, 553 forward and 481
 * backward TFLOP/s at 16k, are cuDNN's 539 and 516, not FlashAttention-2's
 * 335 and 322); FlashAttention-2 forward 306/350, 318/362, 321/368,
 * 322/370, 324/370 = 0.874, backward 238/260, 264/291, 279/310, 287/318,
 * 291/322 = 0.906.
 */
#define PP_ATTN_D64_RATIO_CUDNN_FWD 0.668
#define PP_ATTN_D64_RATIO_CUDNN_BWD 0.842
#define PP_ATTN_D64_RATIO_FA2_FWD 0.874
#define PP_ATTN_D64_RATIO_FA2_BWD 0.906
#define PP_ATTN_MEASURED_HEAD_DIM 128.0

/* Dense BF16 tensor FLOPs per SM per clock over Hopper's, for the
 * softmax's share: the special-function units issue 16 exponentials per SM
 * per clock on Ampere and Hopper alike while Hopper's tensor cores do twice
 * Ampere's work per clock (NVIDIA H100 Tensor Core GPU Architecture
 * whitepaper, 2022: "2x the MMA rate of the A100 SM on a clock-for-clock
 * basis"), so the exponentials weigh half as much beside the matmuls on an
 * Ampere part.  Other parts keep Hopper's (no published pair). */
static double tensor_per_clock_vs_sm90(int cc_x10)
{
	return cc_x10 >= 80 && cc_x10 < 90 ? 0.5 : 1.0;
}

double pp_kernel_attn_head_factor(double d, bool bwd, bool fa2, int cc_x10)
{
	double u = d / PP_ATTN_MEASURED_HEAD_DIM;
	if (!(u > 0) || u >= 1)
		return 1;
	double r = fa2 ? (bwd ? PP_ATTN_D64_RATIO_FA2_BWD : PP_ATTN_D64_RATIO_FA2_FWD)
	               : (bwd ? PP_ATTN_D64_RATIO_CUDNN_BWD : PP_ATTN_D64_RATIO_CUDNN_FWD);
	/* r = (1 + x) / 2 / (1/2 + x) at u = 1/2 */
	double x = 0.5 * (1 - r) / (r - 0.5) * tensor_per_clock_vs_sm90(cc_x10);
	return (1 + x) * u / (u + x);
}

double pp_kernel_attn_s(const pp_gpu *g, double b, double hq, double sq, double sk, double d,
                        bool causal, bool bwd)
{
	const pp_kernel_params *p = &g->kern;
	if (b <= 0 || hq <= 0 || sq <= 0 || sk <= 0 || d <= 0)
		return 0;
	double flops = 4.0 * b * hq * sq * sk * d * (causal ? 0.5 : 1.0) * (bwd ? 2.5 : 1.0);
	double eff =
	    (bwd ? p->attn_bwd_eff : p->attn_fwd_eff) * sk / (sk + p->attn_seq_half) *
	    pp_kernel_attn_head_factor(d, bwd, p->attn_fa2 >= 0.5, g->compute_capability_x10);
	return flops / (peak_of(g, PP_KDT_BF16) * eff) + p->attn_fixed_s;
}

/* ---------------------------------------------------------------- MAPE */

static double table_mape(const pp_kernel_profile *pr, const pp_gpu *g, pp_kernel_table t)
{
	double sum = 0;
	int n = pr->n[t];
	if (n <= 0)
		return NAN;
	for (int i = 0; i < n; i++) {
		double pred = 0, meas = 0;
		switch (t) {
		case PP_KT_GEMM_BF16:
		case PP_KT_GEMM_FP8: {
			const pp_kernel_gemm_rec *r =
			    t == PP_KT_GEMM_BF16 ? &pr->gemm[i] : &pr->fp8[i];
			pred = pp_kernel_gemm_s(g, r->m, r->k, r->n, 1,
			                        t == PP_KT_GEMM_BF16 ? PP_KDT_BF16
			                                             : PP_KDT_FP8_TENSORWISE);
			meas = r->s;
			break;
		}
		case PP_KT_ATTN: {
			/* forward and backward are two measurements of the row */
			const pp_kernel_attn_rec *r = &pr->attn[i];
			double f =
			    pp_kernel_attn_s(g, r->b, r->hq, r->seq, r->seq, r->d, true, false);
			double b =
			    pp_kernel_attn_s(g, r->b, r->hq, r->seq, r->seq, r->d, true, true);
			sum +=
			    0.5 * (fabs(f - r->fwd_s) / r->fwd_s + fabs(b - r->bwd_s) / r->bwd_s);
			continue;
		}
		case PP_KT_MOE: {
			const pp_kernel_moe_rec *r = &pr->moe[i];
			pred = pp_kernel_gemm_s(g, r->tokens_per_expert, r->k, r->n, r->experts,
			                        PP_KDT_BF16);
			meas = r->grouped_s;
			break;
		}
		case PP_KT_MEM:
		default: {
			const pp_kernel_mem_rec *r = &pr->mem[i];
			/* `add` rows count x twice; the kernel moves 2/3 of that (README) */
			pred = pp_kernel_mem_s(g, r->add ? r->bytes * 2.0 / 3.0 : r->bytes);
			meas = r->s;
			break;
		}
		}
		sum += fabs(pred - meas) / meas;
	}
	return 100.0 * sum / n;
}

void pp_kernel_profile_mape(const pp_kernel_profile *p, const pp_gpu *g, double *mape)
{
	for (int t = 0; t < PP_KT_COUNT; t++)
		mape[t] = table_mape(p, g, (pp_kernel_table)t);
}

/* ----------------------------------------------------------------- fit */

/*
 * Reference H100 SXM values: what pp_kernel_fit gives on
 * ../shared/measurements/h100-sxm (tests/unit/test_kernel.c checks that they
 * still do, within 2%).  Used for GPUs without their own tables.
 */
#define PP_KERNEL_H100_GEMM_EFF 0.7023
#define PP_KERNEL_H100_GEMM_FP8_EFF 0.6343
#define PP_KERNEL_H100_GEMM_K_HALF 74.45
#define PP_KERNEL_H100_GEMM_FIXED_S 2.366e-5
#define PP_KERNEL_H100_ATTN_FWD_EFF 0.6256
#define PP_KERNEL_H100_ATTN_BWD_EFF 0.5386
#define PP_KERNEL_H100_ATTN_SEQ_HALF 1313.0
#define PP_KERNEL_H100_ATTN_FIXED_S 1.398e-4
#define PP_KERNEL_H100_HBM_EFF 0.9025
#define PP_KERNEL_H100_MEM_FIXED_S 1.47e-5

/*
 * Sustained tensor-core GEMM rate relative to the reference H100's, as
 * fractions of each part's own datasheet BF16 peak: the largest BF16 matmul
 * rate found by Stas Bekman's Maximum Achievable Matmul FLOPS finder
 * (ml-engineering, compute/accelerator "Maximum Achievable Matmul FLOPS
 * comparison table": A100 SXM 267.9 of 312 TFLOP/s = 0.859, H100 SXM 792.1 of
 * 989.4 = 0.801, H100 PCIe 499.5 of 756.5 = 0.660).  The parts differ in how
 * close to the boost clock their power limit lets dense tensor work run (H100
 * SXM 700 W, H100 PCIe 350 W); the ratio carries that from the measured H100
 * tables.  Parts not in the table keep the H100's fraction (ratio 1).
 */
#define PP_MAMF_A100 (267.9 / 312.0)
#define PP_MAMF_H100_SXM (792.1 / 989.4)
#define PP_MAMF_H100_PCIE (499.5 / 756.5)
static const struct {
	const char *gpu;
	double ratio;
} gemm_ceiling_ratio[] = {
    {"a100-40g", PP_MAMF_A100 / PP_MAMF_H100_SXM}, /* same GA100 at the same clocks */
    {"a100-80g", PP_MAMF_A100 / PP_MAMF_H100_SXM},
    {"a800-80g", PP_MAMF_A100 / PP_MAMF_H100_SXM}, /* A100 silicon, NVLink cut */
    {"h100-pcie", PP_MAMF_H100_PCIE / PP_MAMF_H100_SXM},
};

double pp_kernel_gemm_ceiling_ratio(const char *gpu)
{
	for (size_t i = 0; gpu && i < sizeof gemm_ceiling_ratio / sizeof gemm_ceiling_ratio[0]; i++)
		if (ppi_streq(gpu, gemm_ceiling_ratio[i].gpu))
			return gemm_ceiling_ratio[i].ratio;
	return 1;
}

/*
 * What the hardware allows a stack's GEMMs is the part's own measured best,
 * its MAMF above.  On a GPU whose GEMM table is carried (the MAMF ratio
 * above) the carried rate is an assumption: that the stack's shapes reach the
 * same share of the best achievable rate as on the measured H100
 * (PP_KERNEL_H100_GEMM_EFF / PP_MAMF_H100_SXM = 0.877), so a fit may raise it
 * up to the part's MAMF: MAMF / (PP_KERNEL_H100_GEMM_EFF x ratio), the same
 * 1.14 for every part in the table.  The measured reference is held to the
 * same ceiling, its MAMF over its fitted kernel model (1.14): the tables are
 * one H100's, whose best shape ran at 756.6 TFLOP/s where the part's MAMF is
 * 792.1, and the model's asymptote (PP_KERNEL_H100_GEMM_EFF) is a fit over
 * every shape, below its largest ones.  Parts without a MAMF figure stay at
 * 1: no ceiling of their own to stop at below the datasheet.
 */
double pp_kernel_gemm_fit_ceiling(const char *gpu)
{
	double r = pp_kernel_gemm_ceiling_ratio(gpu);
	if (r == 1 && !(gpu && ppi_streq(gpu, PP_KERNEL_REFERENCE_GPU)))
		return 1;
	return PP_MAMF_H100_SXM / PP_KERNEL_H100_GEMM_EFF;
}

/*
 * The FP8 counterpart for the measured reference.  No MAMF figure is
 * published for FP8, but the reference's own FP8 table holds the part's
 * best: its fastest shape ran at 1340.9 TFLOP/s
 * (../shared/measurements/h100-sxm/gemm_fp8_tensorwise.jsonl, tensor-wise
 * scaling, split accumulator), where the kernel model's asymptote, a fit
 * over every shape, is PP_KERNEL_H100_GEMM_FP8_EFF of the 1978.9 TFLOP/s
 * dense FP8 peak (1255.2): a stack's FP8 GEMMs can reach 1.068 of the
 * model's rate on the shapes the part runs best.  Carried GPUs stay at 1.
 */
#define PP_KERNEL_H100_FP8_BEST_FLOPS 1340.9e12
#define PP_KERNEL_H100_FP8_PEAK_FLOPS 1978.9e12
double pp_kernel_gemm_fp8_fit_ceiling(const char *gpu)
{
	if (!(gpu && ppi_streq(gpu, PP_KERNEL_REFERENCE_GPU)))
		return 1;
	return PP_KERNEL_H100_FP8_BEST_FLOPS /
	       (PP_KERNEL_H100_GEMM_FP8_EFF * PP_KERNEL_H100_FP8_PEAK_FLOPS);
}

pp_status pp_kernel_scale(pp_gpu *g, double sms, pp_error *err)
{
	if (!(sms > 0))
		return ppi_fail(err, g->name, "sms", "the SM count must be positive, got %g", sms);
	if (!(g->bf16_flops > 0 || g->fp16_flops > 0) || !(g->memory_bw_bytes_per_s > 0))
		return ppi_fail(err, g->name, "bf16_flops",
		                "the kernel model needs the GPU's BF16 peak and HBM bandwidth");
	pp_kernel_params *p = &g->kern;
	p->sms = sms;
	p->gemm_eff = PP_KERNEL_H100_GEMM_EFF;
	p->gemm_fp8_eff = PP_KERNEL_H100_GEMM_FP8_EFF;
	p->gemm_k_half = PP_KERNEL_H100_GEMM_K_HALF;
	p->gemm_fixed_s = PP_KERNEL_H100_GEMM_FIXED_S;
	p->attn_fwd_eff = PP_KERNEL_H100_ATTN_FWD_EFF;
	p->attn_bwd_eff = PP_KERNEL_H100_ATTN_BWD_EFF;
	p->attn_seq_half = PP_KERNEL_H100_ATTN_SEQ_HALF;
	p->attn_fixed_s = PP_KERNEL_H100_ATTN_FIXED_S;
	p->hbm_eff = PP_KERNEL_H100_HBM_EFF;
	p->mem_fixed_s = PP_KERNEL_H100_MEM_FIXED_S;
	double r = pp_kernel_gemm_ceiling_ratio(g->name);
	p->gemm_eff = fmin(1, p->gemm_eff * r);
	p->gemm_fp8_eff = fmin(1, p->gemm_fp8_eff * r);
	p->valid = true;
	p->profiled = false;
	return PP_OK;
}

typedef struct fit_var {
	double *v;
	double lo, hi;
	bool log;
} fit_var;

/* Golden-section search of one variable on [lo, hi] after a coarse scan
 * (the MAPE is not unimodal across tile-quantisation steps). */
static void fit_one(const pp_kernel_profile *pr, pp_gpu *g, pp_kernel_table t, fit_var *x)
{
	double lo = x->log ? log(x->lo) : x->lo, hi = x->log ? log(x->hi) : x->hi;
#define VAL(u) (x->log ? exp(u) : (u))
	if (*x->v < x->lo) /* the start lies inside the bounds */
		*x->v = x->lo;
	if (*x->v > x->hi)
		*x->v = x->hi;
	double best_u = x->log ? log(*x->v) : *x->v, best = table_mape(pr, g, t);
	const int scan = 24;
	for (int i = 0; i <= scan; i++) {
		double u = lo + (hi - lo) * i / scan;
		*x->v = VAL(u);
		double e = table_mape(pr, g, t);
		if (e < best) {
			best = e;
			best_u = u;
		}
	}
	double step = (hi - lo) / scan;
	double a = best_u - step > lo ? best_u - step : lo;
	double b = best_u + step < hi ? best_u + step : hi;
	const double gr = 0.6180339887498949;
	for (int it = 0; it < 40; it++) {
		double c = b - gr * (b - a), d = a + gr * (b - a);
		*x->v = VAL(c);
		double fc = table_mape(pr, g, t);
		*x->v = VAL(d);
		double fd = table_mape(pr, g, t);
		if (fc < fd)
			b = d;
		else
			a = c;
		double m = 0.5 * (a + b);
		*x->v = VAL(m);
		double fm = table_mape(pr, g, t);
		if (fm < best) {
			best = fm;
			best_u = m;
		}
	}
	*x->v = VAL(best_u);
#undef VAL
}

static void fit_table(const pp_kernel_profile *pr, pp_gpu *g, pp_kernel_table t, fit_var *v, int nv)
{
	if (pr->n[t] <= 0)
		return;
	double prev = table_mape(pr, g, t);
	for (int sweep = 0; sweep < 30; sweep++) {
		for (int i = 0; i < nv; i++)
			fit_one(pr, g, t, &v[i]);
		double e = table_mape(pr, g, t);
		if (prev - e < 1e-4)
			break;
		prev = e;
	}
}

const char *pp_kernel_rates_origin(const pp_gpu *g)
{
	if (!g->kern.valid)
		return NULL;
	if (g->kern.profiled)
		return "profile";
	return strcmp(g->name, PP_KERNEL_REFERENCE_GPU) == 0 ? "measured" : "derived";
}

pp_status pp_kernel_fit(const pp_kernel_profile *pr, pp_gpu *g, pp_error *err)
{
	double sms = pr->sms > 0 ? pr->sms : g->kern.sms;
	PPI_TRY(pp_kernel_scale(g, sms, err));
	pp_kernel_params *p = &g->kern;
	/* Physical bounds: an efficiency is at most 1 of the datasheet figure;
	 * fixed times between 0.1 us and 1 ms. */
	fit_var mem[] = {{&p->hbm_eff, 0.3, 1.0, false}, {&p->mem_fixed_s, 1e-7, 1e-3, true}};
	fit_table(pr, g, PP_KT_MEM, mem, 2);
	fit_var gemm[] = {{&p->gemm_eff, 0.3, 1.0, false},
	                  {&p->gemm_k_half, 1, 8192, true},
	                  {&p->gemm_fixed_s, 1e-7, 1e-3, true}};
	fit_table(pr, g, PP_KT_GEMM_BF16, gemm, 3);
	fit_var fp8[] = {{&p->gemm_fp8_eff, 0.2, 1.0, false}};
	fit_table(pr, g, PP_KT_GEMM_FP8, fp8, 1);
	fit_var attn[] = {{&p->attn_fwd_eff, 0.2, 1.0, false},
	                  {&p->attn_bwd_eff, 0.2, 1.0, false},
	                  {&p->attn_seq_half, 1, 65536, true},
	                  {&p->attn_fixed_s, 1e-7, 1e-3, true}};
	fit_table(pr, g, PP_KT_ATTN, attn, 4);
	p->profiled = true;
	return PP_OK;
}
