/*
 * The parameter registry (include/paraplan/params.h): every named model
 * parameter once, in the order the JSON readers read them and the fitter
 * sweeps them.  Changing an order, a range or a bound here changes what the
 * readers accept or what `paraplan calibrate` finds.
 */
#include <math.h>
#include <string.h>

#include "paraplan/params.h"
#include "spec_int.h"

#define GPU(field) PP_PARAM_GPU, offsetof(pp_gpu, eff.field)
#define SYS(field) PP_PARAM_SYSTEM, offsetof(pp_system, field)
#define FW(field) PP_PARAM_FRAMEWORK, offsetof(pp_system, field)
/* Fit bounds, log scale, neutral start; or not fitted. */
#define FIT(lo, hi, log, start) true, lo, hi, log, start
#define NOFIT false, 0, 0, false, 0

/*
 * Fit bounds are what the hardware allows, so a fit cannot buy accuracy with
 * an impossible value: GEMMs between 30% and 90% of peak (cuBLAS/cuBLASLt
 * benchmarks span that), FP8 at most the BF16 fraction's reach, kernels 1-30 us
 * of fixed cost, collectives 50-95% of link rate (nccl-tests bus bandwidth).
 * The valid ranges are the readers' sanity checks: wide enough for any
 * accelerator or stack in sight, narrow enough to catch a wrong unit.
 */
static const pp_param registry[] = {
    /* GPU "efficiency" (pp_gpu.eff), calibrated per GPU: the training stack's
     * fractions of the kernel model's rates (docs/calibration.md).  A stack can
     * be slower than the measured kernels, not faster: upper bound 1 (the GEMM's
     * is the GPU's own measured best where its table is carried, set by the
     * fitter: pp_kernel_gemm_fit_ceiling); lower bounds where a stack would be
     * broken rather than slow. */
    {"efficiency.gemm", "gemm", GPU(gemm), "fraction", 0.01, 2, FIT(0.3, 1, false, 0.8),
     "the stack's fraction of the kernel model's BF16/FP16 GEMM rate"},
    {"efficiency.gemm_fp8", "gemm_fp8", GPU(gemm_fp8), "fraction", 0.01, 2, FIT(0.2, 1, false, 0.8),
     "the stack's fraction of the kernel model's FP8 GEMM rate (quantisation included)"},
    {"efficiency.attn", "attn", GPU(attn), "fraction", 0.01, 2, FIT(0.2, 1, false, 0.8),
     "the stack's fraction of the kernel model's fused-attention rate"},
    {"efficiency.memory", "memory", GPU(memory), "fraction", 0.01, 2, FIT(0.2, 1, false, 0.8),
     "the stack's fraction of the kernel model's memory-bound rate"},
    {"efficiency.kernel_s", "kernel_s", GPU(kernel_s), "s", 0, 1e-3, NOFIT,
     "the GPU's time per kernel launched beyond its rate term, in a busy stream (the measured "
     "gap, PP_KERNEL_STREAM_GAP_S; the host's issue time is the host queue's)"},
    /* System "framework" object (pp_system), in the order read_framework reads. */
    {"framework.comm_buffer_bytes", "comm_buffer_bytes", FW(comm_buffer_bytes), "bytes", 0, 1e11,
     NOFIT, "NCCL and framework communication buffers per GPU (NCCL_BUFFSIZE x channels)"},
    {"framework.allocator_fraction", "allocator_fraction", FW(allocator_fraction), "fraction", 0,
     0.5, NOFIT,
     "flat caching-allocator fragmentation beyond the modelled reserve, a fraction "
     "of the allocated tensors (0: none)"},
    {"framework.allocator_transient_segments", "allocator_transient_segments",
     FW(allocator_transient_segments), "buffers", 0, 4, NOFIT,
     "the caching allocator's reserve at the peak, in largest transient buffers (segments "
     "cached beyond what is allocated; calibrate --memory)"},
    {"framework.eager_activation_copies", "eager_activation_copies", FW(eager_activation_copies),
     "flag", 0, 1, NOFIT,
     "1: eager element-wise ops keep their own saved copies (RoPE fp32 q/k, GQA-expanded K/V, "
     "contiguous SDPA output); 0: fused or compiled"},
    {"framework.fp8_weight_cache", "fp8_weight_cache", FW(fp8_weight_cache), "flag", 0, 1, NOFIT,
     "1: the quantised GEMM weights (per recipe and GPU, docs/memory.md) are cached across "
     "micro-batches (TransformerEngine); 0: cast per use (torchao)"},
    {"framework.grads_set_to_none", "grads_set_to_none", FW(grads_set_to_none), "flag", 0, 1, NOFIT,
     "1: gradients are freed after each optimizer step (zero_grad(set_to_none=True)); 0: kept in "
     "buffers across steps"},
    {"framework.nvlink_eff", "nvlink_eff", SYS(nvlink_eff), "fraction", 0.01, 1,
     FIT(0.5, 0.95, false, 0.8),
     "fraction of the NVLink one-way rate collectives sustain (nccl-tests)"},
    {"framework.nic_eff", "nic_eff", SYS(nic_eff), "fraction", 0.01, 1, FIT(0.3, 0.95, false, 0.8),
     "fraction of the NIC line rate collectives sustain (nccl-tests; fitted per system only "
     "where none measure the network, the system's fit_nic_eff)"},
    {"framework.nvls_gain", "nvls_gain", SYS(nvls_gain), "ratio", 0, 4, NOFIT,
     "NVLS all-reduce bus bandwidth over ring's, 0 = none (nccl-tests on H100)"},
    {"framework.dp_overlap", "dp_overlap", FW(dp_overlap), "fraction", 0, 1, NOFIT,
     "fraction of the last backward that hides DP gradient traffic"},
    {"framework.param_gather_overlap", "param_gather_overlap", FW(param_gather_overlap), "fraction",
     0, 1, NOFIT,
     "fraction of the first forward that hides the parameter all-gather after the step"},
    {"framework.iteration_overhead_s", "iteration_overhead_s", FW(iteration_overhead_s), "s", 0,
     100, NOFIT, "fixed cost per iteration: data loading, logging, synchronisation"},
    {"framework.logit_bytes", "logit_bytes", FW(logit_bytes), "bytes/element", 0, 16, NOFIT,
     "bytes kept per logit element for the loss's backward"},
    {"framework.loss_transient_bytes", "loss_transient_bytes", FW(loss_transient_bytes),
     "bytes/element", 0, 16, NOFIT, "extra bytes per logit element while the loss runs"},
    {"framework.zero3_live_params", "zero3_live_params", FW(zero3_live_params), "params", 0, 1e13,
     NOFIT, "ZeRO-3 parameters gathered at once; 0 = two whole layers (FSDP)"},
    {"framework.zero3_bucket_params", "zero3_bucket_params", FW(zero3_bucket_params), "elements", 0,
     1e13, NOFIT, "ZeRO-3 unsharded gradient elements reduced at once; 0 = one whole layer"},
    {"framework.zero3_reduce_bytes", "zero3_reduce_bytes", FW(zero3_reduce_bytes), "bytes/element",
     0, 4, NOFIT,
     "bytes per gradient element ZeRO-3's reduce-scatter moves (unless --grad-reduce-dtype); 0 "
     "= the gradients' own"},
    {"framework.zero3_reuse_params", "zero3_reuse_params", FW(zero3_reuse_params), "params", 0,
     1e13, NOFIT,
     "under full recompute, a module whose recompute and backward are further apart (parameters "
     "used between) is gathered a third time (DeepSpeed's stage3_max_reuse_distance); 0 = none"},
    {"framework.zero3_overlap", "zero3_overlap", FW(zero3_overlap), "fraction", 0, 1, NOFIT,
     "fraction of a layer's compute that hides its ZeRO-3 traffic"},
    {"framework.tp_overlap_hidden", "tp_overlap_hidden", FW(tp_overlap_hidden), "fraction", 0, 1,
     NOFIT, "fraction of TP traffic hidden when TP overlap is on"},
    {"framework.ep_overlap_pairs", "ep_overlap_pairs", FW(ep_overlap_pairs), "flag", 0, 1, NOFIT,
     "1: --ep-overlap runs one micro-batch's layer forward beside another's backward, each "
     "expert all-to-all under the other's compute (Megatron-Core's combined 1F1B); 0: none"},
    {"framework.deepep_sms", "deepep_sms", FW(deepep_sms), "SMs", 0, 1024, NOFIT,
     "SMs DeepEP's dispatch and combine kernels hold (--moe-dispatcher deepep): the compute "
     "beside them runs on the rest, so deepep_sms / sm_count of what they hide still shows"},
    {"framework.param_bytes", "param_bytes", FW(param_bytes), "bytes/param", 0, 8, NOFIT,
     "bytes of a resident parameter (sharded under ZeRO-3); 0 = the training dtype's, with an "
     "fp32 master copy in the optimizer; 4 = fp32 parameters that are their own master"},
    {"framework.compute_copy_bytes", "compute_copy_bytes", FW(compute_copy_bytes), "bytes/param", 0,
     8, NOFIT,
     "bytes of the low-precision copy GEMMs read when parameters are kept wider (FSDP's "
     "gathered bf16 weights, torch.autocast's cast cache); 0 = none"},
    {"framework.reshard_after_forward_pp", "reshard_after_forward_pp", FW(reshard_after_forward_pp),
     "flag", 0, 1, NOFIT,
     "1: ZeRO-3/FSDP frees gathered weights after each layer's forward also with pp > 1; 0: "
     "keeps the stage's weights gathered until its backward"},
    {"framework.selective_op_sac", "selective_op_sac", FW(selective_op_sac), "flag", 0, 1, NOFIT,
     "what --recompute selective drops: 0 the attention core (Megatron); 1 per-op selective "
     "checkpointing (torchtitan: keep every other matmul output and SDPA's, recompute the rest)"},
    {"framework.pp_scatter_gather", "pp_scatter_gather", FW(pp_scatter_gather), "flag", 0, 1, NOFIT,
     "1: without SP a pipeline send carries 1/tp of the activation per TP rank and the receiver "
     "all-gathers it over TP (Megatron-LM 2021 scatter/gather); 0: every TP rank sends it whole"},
    {"framework.pp_p2p_blocking", "pp_p2p_blocking", FW(pp_p2p_blocking), "transfers", 0, 2, NOFIT,
     "non-interleaved 1F1B: transfer times a neighbour exchange holds the rank for (1 a grouped "
     "send + receive, Megatron-Core / torch.distributed.pipelining; 2 a blocking send then a "
     "receive, DeepSpeed); 0: the sends run under the compute"},
    {"framework.attn_sm90_fraction", "attn_sm90_fraction", FW(attn_sm90_fraction), "fraction", 0.1,
     1, NOFIT,
     "on Hopper GPUs, the fraction of the measured (cuDNN) flash-attention rate the stack's "
     "attention kernel reaches: 1 Hopper-native; 0.56 FlashAttention-2 / Triton"},
    {"framework.fused_bias_dropout_add", "fused_bias_dropout_add", FW(fused_bias_dropout_add),
     "flag", 0, 1, NOFIT,
     "1: bias + dropout + residual add run as one fused kernel (Megatron), 0: separately "
     "(PyTorch eager); dropout models"},
    {"framework.sp_gathered_gemm_inputs", "sp_gathered_gemm_inputs", FW(sp_gathered_gemm_inputs),
     "flag", 0, 1, NOFIT,
     "1: with SP the QKV and FC1 GEMMs keep their all-gathered input (seq x hidden) for the "
     "weight gradient (DHelix's block); 0: the local seq/tp norm output, gathered again in "
     "backward (TransformerEngine)"},
    {"framework.fsdp_grad_passes", "fsdp_grad_passes", FW(fsdp_grad_passes), "flag", 0, 1, NOFIT,
     "1: PyTorch FSDP1 casts each unit's unsharded gradient to the reduce dtype and pre-divides "
     "it before the reduce-scatter, every micro-batch (memory-bound kernels); 0: none"},
    {"framework.fsdp2_copies", "fsdp2_copies", FW(fsdp2_copies), "flag", 0, 1, NOFIT,
     "1: PyTorch FSDP2 copies each gathered unit out of the all-gather buffer and each unit's "
     "gradient into the reduce-scatter buffer, every micro-batch (memory-bound kernels); 0: none"},
    {"framework.moe_host_sync", "moe_host_sync", FW(moe_host_sync), "mode", 0, 2, NOFIT,
     "where a dropless MoE layer's forward reads its routed token counts on the host (a "
     "device-to-host sync): 0 never, 1 with ep > 1 (all-to-all splits), 2 always (grouped "
     "GEMM sizes)"},
    {"framework.pipe_engine_reduce", "pipe_engine_reduce", FW(pipe_engine_reduce), "flag", 0, 1,
     NOFIT,
     "1: DeepSpeed's pipeline engine: with pp > 1 the DP gradients reduce after the last "
     "backward, nothing hidden, and under bf16 as an all-reduce of the fp32 gradient; 0: neither"},
    {"framework.moe_probs_in_expert", "moe_probs_in_expert", FW(moe_probs_in_expert), "flag", 0, 1,
     NOFIT,
     "1: an MoE layer's routing weights multiply the experts' activation, so no expert output is "
     "saved for their gradient (Megatron-Core); 0: the combine weights and keeps the outputs"},
    /* The stack's kernels (pp_kernel_params): kept in the GPU's kernel
     * parameters so that pp_op_time sees them. */
    {"framework.eager_elementwise", "eager_elementwise", FW(gpu.kern.eager_elementwise), "flag", 0,
     1, NOFIT,
     "1: element-wise, norm, RoPE and activation ops run as separate eager PyTorch kernels "
     "unless --compile on; 0: fused (Transformer Engine / Megatron fusions)"},
    {"framework.autocast_weight_cast", "autocast_weight_cast", FW(gpu.kern.autocast_weight_cast),
     "flag", 0, 1, NOFIT,
     "1: fp32 parameters outside ZeRO-3 are cast to bf16 by torch.autocast each forward; "
     "kernel model only"},
    {"framework.unfused_cross_entropy", "unfused_cross_entropy", FW(gpu.kern.unfused_cross_entropy),
     "flag", 0, 1, NOFIT,
     "1: the vocab-parallel cross entropy runs unfused (Megatron-Core without "
     "--cross-entropy-loss-fusion: six kernels over the fp32 logits forward, two backward); 0: "
     "fused"},
    {"framework.grad_accum_kernel", "grad_accum_kernel", FW(gpu.kern.grad_accum_kernel), "flag", 0,
     1, NOFIT,
     "1: weight gradients are cast to fp32 and added into their buffer by separate kernels "
     "every micro-batch; 0: inside the weight-gradient GEMM (Megatron)"},
    {"framework.measured_kernels", "measured_kernels", FW(gpu.kern.measured_kernels), "flag", 0, 1,
     NOFIT,
     "1: the stack is the loop the kernel tables were measured in (plain PyTorch on one GPU): "
     "measured rates and per-call fixed times, not the GPU's fitted stack fractions"},
    {"framework.host_queue", "host_queue", FW(gpu.kern.host_queue), "flag", 0, 1, NOFIT,
     "1: the host issues kernels ahead of the GPU, each in the measured per-call fixed time less "
     "a busy stream's gap; a layer's phase takes at least its kernels' issue time"},
    {"framework.host_issue_factor", "host_issue_factor", FW(gpu.kern.host_issue_factor), "ratio", 0,
     10, NOFIT,
     "the stack's host time to issue a kernel over plain PyTorch's measured issue time "
     "(Transformer Engine modules: 2.7); 0 reads as 1"},
    {"framework.cuda_graphs", "cuda_graphs", FW(gpu.kern.cuda_graphs), "flag", 0, 1, NOFIT,
     "1: the step replays CUDA graphs: no host launch time per kernel"},
};

#undef GPU
#undef SYS
#undef FW
#undef FIT
#undef NOFIT

#define NREG (sizeof registry / sizeof registry[0])

size_t pp_param_registry_size(void)
{
	return NREG;
}

const pp_param *pp_param_at(size_t i)
{
	return i < NREG ? &registry[i] : NULL;
}

const pp_param *pp_param_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < NREG; i++)
		if (strcmp(registry[i].name, name) == 0 || strcmp(registry[i].key, name) == 0)
			return &registry[i];
	return NULL;
}

const char *pp_param_kind_name(pp_param_kind k)
{
	switch (k) {
	case PP_PARAM_GPU: return "gpu";
	case PP_PARAM_SYSTEM: return "system";
	case PP_PARAM_FRAMEWORK: return "framework";
	}
	return "?";
}

double *ppi_param_gpu_slot(const pp_param *p, pp_gpu *g)
{
	return p->kind == PP_PARAM_GPU ? (double *)((char *)g + p->offset) : NULL;
}

double *ppi_param_slot(const pp_param *p, pp_system *s)
{
	return p->kind == PP_PARAM_GPU ? ppi_param_gpu_slot(p, &s->gpu)
	                               : (double *)((char *)s + p->offset);
}

double pp_param_get(const pp_param *p, const pp_system *s)
{
	const char *base = p->kind == PP_PARAM_GPU ? (const char *)&s->gpu : (const char *)s;
	return *(const double *)(base + p->offset);
}

void pp_param_set(const pp_param *p, pp_system *s, double v)
{
	*ppi_param_slot(p, s) = v;
}

double pp_param_get_gpu(const pp_param *p, const pp_gpu *g)
{
	return p->kind == PP_PARAM_GPU ? *(const double *)((const char *)g + p->offset) : NAN;
}

bool pp_param_set_gpu(const pp_param *p, pp_gpu *g, double v)
{
	double *x = ppi_param_gpu_slot(p, g);
	if (x)
		*x = v;
	return x != NULL;
}

/*
 * The hardware registry (params.h, pp_hw_field): the datasheet values of a
 * GPU and a system that a hardware study varies.  The valid ranges are the
 * JSON readers' (src/spec/hardware.c: MIN_/MAX_MEMORY, _FLOPS, _BW and the
 * integer bounds), so a study point is a system the readers would accept.
 */
#define HW_GPU(field, lo, hi) true, false, offsetof(pp_gpu, field), lo, hi
#define HW_SYS(field, lo, hi) false, false, offsetof(pp_system, field), lo, hi
#define HW_INT(field, lo, hi) false, true, offsetof(pp_system, field), lo, hi

static const pp_hw_field hw_registry[] = {
    {"gpu.memory_bytes", HW_GPU(memory_bytes, 1e9, 1e13), "bytes",
     "HBM capacity of one GPU (the driver's total)"},
    {"gpu.memory_bw_bytes_per_s", HW_GPU(memory_bw_bytes_per_s, 1e9, 1e14), "bytes/s",
     "HBM bandwidth of one GPU"},
    {"gpu.fp32_flops", HW_GPU(fp32_flops, 1e11, 1e17), "FLOP/s",
     "vector (non-tensor) peak: the rate of non-matrix operations"},
    {"gpu.tf32_flops", HW_GPU(tf32_flops, 0, 1e17), "FLOP/s", "dense TF32 tensor peak"},
    {"gpu.fp16_flops", HW_GPU(fp16_flops, 1e12, 1e17), "FLOP/s", "dense FP16 tensor peak"},
    {"gpu.bf16_flops", HW_GPU(bf16_flops, 0, 1e17), "FLOP/s",
     "dense BF16 tensor peak (0: the FP16 peak)"},
    {"gpu.fp8_flops", HW_GPU(fp8_flops, 0, 1e17), "FLOP/s", "dense FP8 tensor peak"},
    {"gpu.fp4_flops", HW_GPU(fp4_flops, 0, 1e17), "FLOP/s", "dense NVFP4 tensor peak"},
    {"gpu.cuda_context_bytes", HW_GPU(cuda_context_bytes, 0, 1e11), "bytes",
     "HBM the CUDA context and kernels take at start"},
    {"gpus_per_node", HW_INT(gpus_per_node, 1, 4096), "GPUs", "GPUs in one node"},
    {"nvlink_domain", HW_INT(nvlink_domain, 1, 65536), "GPUs",
     "GPUs that share one NVLink/NVSwitch domain"},
    {"nvlink_bytes_per_s", HW_SYS(nvlink_bytes_per_s, 0, 1e14), "bytes/s",
     "NVLink (intra-domain) bandwidth per GPU, one direction"},
    {"nvlink_latency_s", HW_SYS(nvlink_latency_s, 0, 1e-3), "s", "NVLink latency per message"},
    {"nics_per_node", HW_INT(nics_per_node, 0, 4096), "NICs", "network interfaces per node"},
    {"nic_bytes_per_s", HW_SYS(nic_bytes_per_s, 0, 1e14), "bytes/s",
     "bandwidth of one NIC, one direction"},
    {"nic_latency_s", HW_SYS(nic_latency_s, 0, 1e-2), "s", "network latency per message"},
    {"usd_per_gpu_hour", HW_SYS(usd_per_gpu_hour, 0, 1e4), "USD",
     "rental price of one GPU for one hour"},
    {"host_link_bytes_per_s", HW_SYS(host_link_bytes_per_s, 0, 1e14), "bytes/s",
     "GPU <-> host link per GPU, one direction (CPU offload)"},
    {"host_memory_bytes", HW_SYS(host_memory_bytes, 0, 1e15), "bytes",
     "host memory per node (CPU offload)"},
};

size_t pp_hw_field_count(void)
{
	return sizeof hw_registry / sizeof hw_registry[0];
}

const pp_hw_field *pp_hw_field_at(size_t i)
{
	return i < pp_hw_field_count() ? &hw_registry[i] : NULL;
}

const pp_hw_field *pp_hw_field_find(const char *name)
{
	for (size_t i = 0; i < pp_hw_field_count(); i++) {
		const char *n = hw_registry[i].name;
		if (strcmp(n, name) == 0 || (hw_registry[i].gpu && strcmp(n + 4, name) == 0))
			return &hw_registry[i];
	}
	return NULL;
}

double pp_hw_field_get(const pp_hw_field *f, const pp_system *s)
{
	const char *base = f->gpu ? (const char *)&s->gpu : (const char *)s;
	if (f->integer)
		return *(const int *)(base + f->offset);
	return *(const double *)(base + f->offset);
}

void pp_hw_field_set(const pp_hw_field *f, pp_system *s, double v)
{
	char *base = f->gpu ? (char *)&s->gpu : (char *)s;
	if (f->integer)
		*(int *)(base + f->offset) = (int)v;
	else
		*(double *)(base + f->offset) = v;
}
