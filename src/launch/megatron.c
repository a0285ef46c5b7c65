/*
 * Megatron-LM flags in: the words of a string or a launch script
 * (megatron_shell.c) read as flags with Megatron-LM's semantics and defaults
 * (core_v0.15.3, megatron/training/arguments.py, commit
 * 309ffca6a40553362d44fd17efc56b772fa1aa44; line numbers below are that
 * file's), into the job and the plan; the model is megatron_model.c's.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_int.h"
#include "megatron_int.h"
#include "paraplan/launch.h"
#include "paraplan/schedule_type.h"
#include "util/util.h"

/* ---------------------------------------------------------------- flags */

const ppi_mflag ppi_mflags[F_COUNT] = {
    [F_NUM_LAYERS] = {"num-layers", true},
    [F_HIDDEN] = {"hidden-size", true},
    [F_FFN] = {"ffn-hidden-size", true},
    [F_HEADS] = {"num-attention-heads", true},
    [F_GQA] = {"group-query-attention", false},
    [F_GROUPS] = {"num-query-groups", true},
    [F_KV_CHANNELS] = {"kv-channels", true},
    [F_SEQ] = {"seq-length", true},
    [F_MAX_POS] = {"max-position-embeddings", true},
    [F_GBS] = {"global-batch-size", true},
    [F_MBS] = {"micro-batch-size", true},
    [F_TP] = {"tensor-model-parallel-size", true},
    [F_PP] = {"pipeline-model-parallel-size", true},
    [F_VP_LAYERS] = {"num-layers-per-virtual-pipeline-stage", true},
    [F_VP_STAGES] = {"num-virtual-stages-per-pipeline-rank", true},
    [F_CP] = {"context-parallel-size", true},
    [F_EP] = {"expert-model-parallel-size", true},
    [F_ETP] = {"expert-tensor-parallel-size", true},
    [F_SP] = {"sequence-parallel", false},
    [F_RECOMP_GRAN] = {"recompute-granularity", true},
    [F_RECOMP_METHOD] = {"recompute-method", true},
    [F_RECOMP_NUM] = {"recompute-num-layers", true},
    [F_DIST_OPT] = {"use-distributed-optimizer", false},
    [F_MEGATRON_FSDP] = {"use-megatron-fsdp", false},
    [F_TORCH_FSDP2] = {"use-torch-fsdp2", false},
    [F_SHARDING] = {"data-parallel-sharding-strategy", true},
    [F_BF16] = {"bf16", false},
    [F_FP16] = {"fp16", false},
    [F_FP8] = {"fp8-format", true},
    [F_FP8_RECIPE] = {"fp8-recipe", true},
    [F_FP8_PARAM_GATHER] = {"fp8-param-gather", false},
    [F_GRAD_BF16] = {"grad-reduce-in-bf16", false},
    [F_OPTIMIZER] = {"optimizer", true},
    [F_EXPERTS] = {"num-experts", true},
    [F_TOPK] = {"moe-router-topk", true},
    [F_MOE_FFN] = {"moe-ffn-hidden-size", true},
    [F_MOE_SHARED] = {"moe-shared-expert-intermediate-size", true},
    [F_MOE_FREQ] = {"moe-layer-freq", true},
    [F_MOE_BIAS] = {"moe-router-enable-expert-bias", false},
    [F_ROUTER_GROUPS] = {"moe-router-num-groups", true},
    [F_ROUTER_GROUP_TOPK] = {"moe-router-group-topk", true},
    [F_DISPATCHER] = {"moe-token-dispatcher-type", true},
    [F_DEEPEP] = {"moe-enable-deepep", false},
    [F_FIRST] = {"decoder-first-pipeline-num-layers", true},
    [F_LAST] = {"decoder-last-pipeline-num-layers", true},
    [F_EMB_SPLIT] = {"account-for-embedding-in-pipeline-split", false},
    [F_LOSS_SPLIT] = {"account-for-loss-in-pipeline-split", false},
    [F_SWIGLU] = {"swiglu", false},
    [F_UNTIE] = {"untie-embeddings-and-output-weights", false},
    [F_VOCAB] = {"vocab-size", true},
    [F_PADDED_VOCAB] = {"padded-vocab-size", true},
    [F_DIVISIBLE] = {"make-vocab-size-divisible-by", true},
    [F_NORM] = {"normalization", true},
    [F_POSITION] = {"position-embedding-type", true},
    [F_NO_BIAS] = {"disable-bias-linear", false},
    [F_QKV_BIAS] = {"add-qkv-bias", false},
    [F_QK_NORM] = {"qk-layernorm", false},
    [F_ATTN_DROPOUT] = {"attention-dropout", true},
    [F_HIDDEN_DROPOUT] = {"hidden-dropout", true},
    [F_MLA] = {"multi-latent-attention", false},
    [F_Q_LORA] = {"q-lora-rank", true},
    [F_KV_LORA] = {"kv-lora-rank", true},
    [F_QK_HEAD] = {"qk-head-dim", true},
    [F_QK_POS] = {"qk-pos-emb-head-dim", true},
    [F_V_HEAD] = {"v-head-dim", true},
    [F_TP_OVERLAP] = {"tp-comm-overlap", false},
    [F_EP_OVERLAP] = {"overlap-moe-expert-parallel-comm", false},
    [F_ATTN_BACKEND] = {"attention-backend", true},
    [F_TP_PP_DP] = {"use-tp-pp-dp-mapping", false},
    [F_TRAIN_ITERS] = {"train-iters", true},
    [F_TRAIN_SAMPLES] = {"train-samples", true},
    [F_NPROC] = {"nproc_per_node", true},
    [F_NPROC2] = {"nproc-per-node", true},
    [F_NNODES] = {"nnodes", true},
};

pp_status ppi_mflag_bad(pp_error *err, const char *source, int f, const char *fmt, ...)
{
	char field[PP_ERROR_FIELD_MAX], msg[512];
	snprintf(field, sizeof field, "--%s", ppi_mflags[f].name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ppi_fail(err, source, field, "%s", msg);
}

pp_status ppi_mflag_ll(const ppi_mseen *s, int f, long long lo, long long hi, const char *source,
                       long long *out, pp_error *err)
{
	const char *v = s->val[f];
	long long x = 0;
	char why[160];
	if (!ppi_parse_ll(v, (size_t)-1, lo, hi, &x, why, sizeof why))
		return ppi_mflag_bad(err, source, f, "%s", why);
	*out = x;
	return PP_OK;
}

pp_status ppi_mflag_int(const ppi_mseen *s, int f, int lo, int hi, const char *source, int *out,
                        pp_error *err)
{
	long long x = 0;
	PPI_TRY(ppi_mflag_ll(s, f, lo, hi, source, &x, err));
	*out = (int)x;
	return PP_OK;
}

pp_status ppi_mflag_double(const ppi_mseen *s, int f, const char *source, double *out,
                           pp_error *err)
{
	const char *v = s->val[f];
	double x;
	char why[160];
	if (!ppi_parse_double(v, (size_t)-1, 0, 1, &x, why, sizeof why)) /* a probability */
		return ppi_mflag_bad(err, source, f, "%s", why);
	*out = x;
	return PP_OK;
}

/* One of `choices` (NULL-terminated), exactly as Megatron spells it; its index. */
pp_status ppi_mflag_choice(const ppi_mseen *s, int f, const char *const *choices,
                           const char *source, int *out, pp_error *err)
{
	for (int i = 0; choices[i]; i++)
		if (strcmp(s->val[f], choices[i]) == 0) {
			*out = i;
			return PP_OK;
		}
	char msg[256] = "";
	for (int i = 0; choices[i]; i++) {
		size_t l = strlen(msg);
		snprintf(msg + l, sizeof msg - l, "%s%s", i ? (choices[i + 1] ? ", " : " or ") : "",
		         choices[i]);
	}
	return ppi_mflag_bad(err, source, f, "expected %s, got '%s'", msg, s->val[f]);
}

/* Each unused flag once (`listed`: the names so far, a hash set); -1 when
 * out of memory. */
static int add_unused(pp_launch *out, ppi_strmap *listed, const char *name, size_t n)
{
	char flag[128];
	snprintf(flag, sizeof flag, "--%.*s", (int)(n < 100 ? n : 100), name);
	size_t fl = strlen(flag);
	bool added;
	if (!ppi_strmap_add(listed, flag, fl, &added))
		return -1;
	if (!added)
		return 0; /* listed once */
	out->unused++;
	size_t l = strlen(out->unused_flags);
	if (l + fl + 2 < sizeof out->unused_flags)
		snprintf(out->unused_flags + l, sizeof out->unused_flags - l, "%s%s", l ? " " : "",
		         flag);
	return 0;
}

/* The flag named by the `n` bytes at `name` (without dashes); -1 when
 * paraplan does not read it. */
static int flag_index(const char *name, size_t n)
{
	for (int k = 0; k < F_COUNT; k++)
		if (strlen(ppi_mflags[k].name) == n && strncmp(ppi_mflags[k].name, name, n) == 0)
			return k;
	return -1;
}

/*
 * The words read as flags into *s (zeroed here): "--name=value", "--name
 * value" or a store_true "--name"; a flag's last value wins and borrows from
 * `w`.  Other words (the launcher's, positional ones) are skipped; "--" flags
 * paraplan does not read are listed in out->unused_flags once each
 * (`listed`).  PP_EINPUT for a flag paraplan reads written with one dash or
 * left without its value; PP_ENOMEM.
 */
static pp_status read_flags(const ppi_words *w, const char *source, ppi_mseen *s, pp_launch *out,
                            ppi_strmap *listed, pp_error *err)
{
	memset(s, 0, sizeof *s);
	for (int i = 0; i < w->n; i++) {
		const char *a = w->w[i];
		if (a[0] == '-' && a[1] != '-' && a[1]) {
			/* One dash: Megatron's argparse reads "-num-layers" as nothing
			 * it knows and stops; a flag paraplan reads is refused rather
			 * than dropped.  Other one-dash words (python -m, -u) are the
			 * launcher's. */
			const char *name = a + 1, *eq = strchr(name, '=');
			int f = flag_index(name, eq ? (size_t)(eq - name) : strlen(name));
			if (f >= 0)
				return ppi_fail(err, source, "",
				                "'-%s' has one dash: Megatron-LM's flag is --%s",
				                ppi_mflags[f].name, ppi_mflags[f].name);
			continue;
		}
		if (a[0] != '-' || a[1] != '-' || !a[2])
			continue;
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t n = eq ? (size_t)(eq - name) : strlen(name);
		int f = flag_index(name, n);
		if (f < 0) {
			if (add_unused(out, listed, name, n))
				return ppi_fail(err, source, "", "out of memory"), PP_ENOMEM;
			continue;
		}
		s->set[f] = true;
		if (!ppi_mflags[f].value)
			continue;
		if (eq)
			s->val[f] = eq + 1;
		else if (i + 1 < w->n)
			s->val[f] = w->w[++i];
		else
			return ppi_fail(err, source, "", "--%s needs a value", ppi_mflags[f].name);
	}
	return PP_OK;
}

/* The largest degree, micro-batch or stage layer count read: the command
 * line's bound (cli/options.c). */
#define MEGATRON_DEGREE_MAX (1 << 20)

/* The degrees, the micro-batch, uneven end stages, the sequence and batch,
 * the pipeline-split and overlap switches, the rank order and the attention
 * backend, in Megatron's spelling, over the defaults in *p and *j.  PP_EINPUT
 * on the first malformed value, in the order of the table. */
static pp_status read_shape(const ppi_mseen *s, const char *src, pp_plan *p, pp_job *j,
                            pp_launch *out, pp_error *err)
{
	const struct {
		int flag;
		int *dst;
	} ints[] = {{F_TP, &p->tp},
	            {F_PP, &p->pp},
	            {F_CP, &p->cp},
	            {F_EP, &p->ep},
	            {F_ETP, &p->etp},
	            {F_MBS, &p->mbs},
	            {F_FIRST, &p->first_stage_layers},
	            {F_LAST, &p->last_stage_layers}};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
		if (s->set[ints[i].flag])
			PPI_TRY(ppi_mflag_int(s, ints[i].flag, 1, MEGATRON_DEGREE_MAX, src,
			                      ints[i].dst, err));
	if (s->set[F_SEQ])
		PPI_TRY(ppi_mflag_int(s, F_SEQ, 1, 100000000, src, &j->seq_len, err));
	const struct {
		int flag;
		bool *dst;
	} switches[] = {{F_EMB_SPLIT, &p->embedding_as_layer},
	                {F_LOSS_SPLIT, &p->loss_as_layer},
	                {F_SP, &p->sp},
	                {F_TP_OVERLAP, &p->tp_overlap},
	                {F_EP_OVERLAP, &p->ep_overlap}};
	for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++)
		*switches[i].dst = s->set[switches[i].flag];
	if (s->set[F_TP_PP_DP])
		ppi_strlcpy(p->order, "tp-cp-ep-pp-dp", sizeof p->order);
	/* DeepEP: --moe-enable-deepep under --moe-token-dispatcher-type flex
	 * (arguments.py: "Only works with flex token dispatcher") */
	if (s->set[F_DISPATCHER]) {
		static const char *const types[] = {"allgather", "alltoall", "flex", NULL};
		int k = 0;
		PPI_TRY(ppi_mflag_choice(s, F_DISPATCHER, types, src, &k, err));
		if (s->set[F_DEEPEP] && k != 2)
			return ppi_mflag_bad(err, src, F_DEEPEP,
			                     "needs --moe-token-dispatcher-type flex, got %s",
			                     types[k]);
		j->moe_dispatcher = s->set[F_DEEPEP] ? PP_DISPATCH_DEEPEP : PP_DISPATCH_ALLTOALL;
	} else if (s->set[F_DEEPEP])
		return ppi_mflag_bad(err, src, F_DEEPEP, "needs --moe-token-dispatcher-type flex");
	if (s->set[F_GBS]) {
		PPI_TRY(ppi_mflag_ll(s, F_GBS, 1, 1000000000, src, &j->global_batch, err));
		out->has_gbs = true;
	}
	out->has_seq = s->set[F_SEQ];
	if (s->set[F_ATTN_BACKEND]) {
		static const char *const be[] = {"flash", "fused", "unfused",
		                                 "local", "auto",  NULL};
		int k = 0;
		PPI_TRY(ppi_mflag_choice(s, F_ATTN_BACKEND, be, src, &k, err));
		p->flash = k != 2 && k != 3;
	}
	return PP_OK;
}

/* Virtual stages (arguments.py lines 531-585): --num-virtual-stages-per-
 * pipeline-rank, or --num-layers-per-virtual-pipeline-stage turned into it;
 * then the schedule (vp > 1 interleaves).  Needs p->pp and the split
 * switches read. */
static pp_status read_virtual(const ppi_mseen *s, const char *src, pp_plan *p, pp_error *err)
{
	if (s->set[F_VP_STAGES] && s->set[F_VP_LAYERS])
		return ppi_fail(err, src, "--num-virtual-stages-per-pipeline-rank",
		                "not with --num-layers-per-virtual-pipeline-stage (Megatron-LM "
		                "takes one of them)");
	if (s->set[F_VP_STAGES])
		PPI_TRY(ppi_mflag_int(s, F_VP_STAGES, 1, MEGATRON_DEGREE_MAX, src, &p->vp, err));
	if (s->set[F_VP_LAYERS]) {
		int per, layers;
		PPI_TRY(ppi_mflag_int(s, F_VP_LAYERS, 1, MEGATRON_DEGREE_MAX, src, &per, err));
		if (!s->set[F_NUM_LAYERS])
			return ppi_fail(err, src, "--num-layers-per-virtual-pipeline-stage",
			                "needs --num-layers");
		PPI_TRY(ppi_mflag_int(s, F_NUM_LAYERS, 1, 10000, src, &layers, err));
		if (s->set[F_FIRST] || s->set[F_LAST])
			return ppi_fail(
			    err, src, "--num-layers-per-virtual-pipeline-stage",
			    "not with uneven stages; give "
			    "--num-virtual-stages-per-pipeline-rank (as Megatron-LM asks)");
		layers += p->embedding_as_layer + p->loss_as_layer;
		if (layers % p->pp || (layers / p->pp) % per)
			return ppi_fail(
			    err, src, "--num-layers-per-virtual-pipeline-stage",
			    "%d layers over %d pipeline stages do not split into chunks "
			    "of %d",
			    layers, p->pp, per);
		p->vp = layers / p->pp / per;
	}
	p->schedule = pp_schedule_for_vp(PP_SCHED_1F1B, p->vp); /* Megatron: vp > 1 interleaves */
	return PP_OK;
}

/* Recomputation and ZeRO.  Full recomputes layers (uniform, 1 layer a chunk =
 * every layer); selective the core attention; the recompute method and count
 * paraplan does not model are listed in out->unused_flags (`listed`).  The
 * distributed optimizer is ZeRO-1; Megatron FSDP's sharding strategies are
 * ZeRO 0-3. */
static pp_status read_memory(const ppi_mseen *s, const char *src, pp_plan *p, pp_launch *out,
                             ppi_strmap *listed, pp_error *err)
{
	if (s->set[F_RECOMP_GRAN]) {
		static const char *const g[] = {"full", "selective", NULL};
		int k = 0;
		PPI_TRY(ppi_mflag_choice(s, F_RECOMP_GRAN, g, src, &k, err));
		p->recompute = k == 0 ? PP_RECOMPUTE_FULL : PP_RECOMPUTE_SELECTIVE;
	}
	if (s->set[F_RECOMP_METHOD] || s->set[F_RECOMP_NUM]) {
		static const char *const g[] = {"uniform", "block", NULL};
		int k = 0, num = 1;
		if (s->set[F_RECOMP_METHOD])
			PPI_TRY(ppi_mflag_choice(s, F_RECOMP_METHOD, g, src, &k, err));
		if (s->set[F_RECOMP_NUM])
			PPI_TRY(ppi_mflag_int(s, F_RECOMP_NUM, 1, 10000, src, &num, err));
		/* Full recompute of every layer is uniform with 1 layer a chunk;
		 * block (the first N layers of each stage) and larger chunks are
		 * not what paraplan models: listed, and modelled as every layer.
		 * Without full granularity Megatron-LM takes neither flag: listed. */
		if (p->recompute != PP_RECOMPUTE_FULL || k == 1 || num != 1) {
			if ((s->set[F_RECOMP_METHOD] &&
			     add_unused(out, listed, ppi_mflags[F_RECOMP_METHOD].name,
			                strlen(ppi_mflags[F_RECOMP_METHOD].name))) ||
			    (s->set[F_RECOMP_NUM] &&
			     add_unused(out, listed, ppi_mflags[F_RECOMP_NUM].name,
			                strlen(ppi_mflags[F_RECOMP_NUM].name))))
				return ppi_fail(err, src, "", "out of memory"), PP_ENOMEM;
		}
	}
	if (s->set[F_DIST_OPT])
		p->zero = 1;
	if (s->set[F_SHARDING]) {
		static const char *const g[] = {"no_shard", "optim", "optim_grads",
		                                "optim_grads_params", NULL};
		int k = 0;
		PPI_TRY(ppi_mflag_choice(s, F_SHARDING, g, src, &k, err));
		if (s->set[F_MEGATRON_FSDP] || s->set[F_TORCH_FSDP2])
			p->zero = k;
	}
	if (s->set[F_TORCH_FSDP2] && !s->set[F_SHARDING])
		p->zero = 3;
	return PP_OK;
}

/* Precision (bf16/fp16 flags; FP8 GEMMs with --fp8-format and its recipe),
 * the gradients' width and the optimizer. */
static pp_status read_precision(const ppi_mseen *s, const char *src, pp_job *j, pp_error *err)
{
	if (s->set[F_BF16] && s->set[F_FP16])
		return ppi_fail(err, src, "--fp16",
		                "not with --bf16 (Megatron-LM asserts: cannot have both fp16 and "
		                "bf16 enabled)");
	j->precision = s->set[F_BF16] ? PP_PREC_BF16 : s->set[F_FP16] ? PP_PREC_FP16 : PP_PREC_FP32;
	if (s->set[F_FP8]) {
		static const char *const g[] = {"e4m3", "hybrid", NULL};
		int k = 0;
		PPI_TRY(ppi_mflag_choice(s, F_FP8, g, src, &k, err));
		j->precision = PP_PREC_FP8;
	}
	/* --fp8-recipe (arguments.py, default delayed): "tensorwise" is
	 * Transformer Engine's Float8CurrentScaling; it applies only with
	 * --fp8-format (Megatron ignores it otherwise, and so does paraplan). */
	if (s->set[F_FP8_RECIPE] && s->set[F_FP8]) {
		static const char *const g[] = {"delayed", "tensorwise", "mxfp8", "blockwise",
		                                NULL};
		static const pp_fp8_recipe r[] = {PP_FP8_DELAYED, PP_FP8_CURRENT, PP_FP8_MX,
		                                  PP_FP8_BLOCKWISE};
		int k = 0;
		PPI_TRY(ppi_mflag_choice(s, F_FP8_RECIPE, g, src, &k, err));
		j->fp8_recipe = r[k];
	}
	/* --fp8-param-gather: the model is built under TE's fp8_model_init, its
	 * GEMM weights FP8 (docs/memory.md "FP8 weights"); with --fp8-format only. */
	j->fp8_params = s->set[F_FP8_PARAM_GATHER] && s->set[F_FP8];
	j->grad_bytes = s->set[F_GRAD_BF16] ? 2 : 4;
	j->optimizer = PP_OPT_ADAM;
	if (s->set[F_OPTIMIZER]) {
		static const char *const g[] = {"adam", "sgd", NULL};
		int k = 0;
		PPI_TRY(ppi_mflag_choice(s, F_OPTIMIZER, g, src, &k, err));
		j->optimizer = k == 1 ? PP_OPT_SGD : PP_OPT_ADAM;
	}
	return PP_OK;
}

/* The training tokens, from these flags alone, so that the order of the
 * command line (--gbs before or after --from-megatron) cannot change them:
 * iterations need the batch and the sequence among the flags.  Then
 * torchrun's world size into out->gpus, when a script gives both parts. */
static pp_status read_tokens(const ppi_mseen *s, const char *src, pp_job *j, pp_launch *out,
                             pp_error *err)
{
	if ((s->set[F_TRAIN_SAMPLES] || s->set[F_TRAIN_ITERS]) && !s->set[F_SEQ])
		return ppi_fail(err, src,
		                s->set[F_TRAIN_SAMPLES] ? "--train-samples" : "--train-iters",
		                "needs --seq-length among the same flags (tokens = %s x sequence)",
		                s->set[F_TRAIN_SAMPLES] ? "samples" : "iterations x batch");
	if (s->set[F_TRAIN_SAMPLES]) {
		long long n = 0;
		PPI_TRY(ppi_mflag_ll(s, F_TRAIN_SAMPLES, 0, LLONG_MAX / 2, src, &n, err));
		j->train_tokens = (double)n * j->seq_len;
	} else if (s->set[F_TRAIN_ITERS] && !s->set[F_GBS]) {
		return ppi_fail(err, src, "--train-iters",
		                "needs --global-batch-size among the same flags (tokens = "
		                "iterations x batch x sequence)");
	} else if (s->set[F_TRAIN_ITERS]) {
		long long n = 0;
		PPI_TRY(ppi_mflag_ll(s, F_TRAIN_ITERS, 0, LLONG_MAX / 2, src, &n, err));
		j->train_tokens = (double)n * (double)j->global_batch * j->seq_len;
	}
	int nproc_f = s->set[F_NPROC2] ? F_NPROC2 : F_NPROC;
	if (s->set[nproc_f] && s->set[F_NNODES]) {
		long long a = 0, b = 0;
		if (ppi_mflag_ll(s, nproc_f, 1, MEGATRON_DEGREE_MAX, src, &a, NULL) == PP_OK &&
		    ppi_mflag_ll(s, F_NNODES, 1, MEGATRON_DEGREE_MAX, src, &b, NULL) == PP_OK)
			out->gpus = a * b;
	}
	return PP_OK;
}

/* The flags of *s over Megatron's defaults (the plan's) and *job, in the
 * order each is checked: the first malformed one is the error. */
static pp_status read_job_plan(const ppi_mseen *s, const char *src, pp_job *j, pp_plan *p,
                               pp_launch *out, ppi_strmap *listed, pp_error *err)
{
	PPI_TRY(read_shape(s, src, p, j, out, err));
	PPI_TRY(read_virtual(s, src, p, err));
	PPI_TRY(read_memory(s, src, p, out, listed, err));
	PPI_TRY(read_precision(s, src, j, err));
	PPI_TRY(read_tokens(s, src, j, out, err));
	out->has_model = s->set[F_NUM_LAYERS] || s->set[F_HIDDEN] || s->set[F_HEADS];
	if (out->has_model)
		PPI_TRY(ppi_megatron_model(s, src, p, j->seq_len, &out->model, err));
	return PP_OK;
}

pp_status pp_launch_from_megatron(const char *text, size_t len, const char *source, pp_job *job,
                                  pp_plan *plan, pp_launch *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	ppi_words w;
	PPI_TRY(ppi_shell_words(text, len, source, &w, err));
	ppi_mseen s;
	ppi_strmap listed = {0};
	pp_status st = read_flags(&w, source, &s, out, &listed, err);
	/* The plan: Megatron's defaults, then the flags. */
	pp_plan p;
	pp_plan_init(&p);
	pp_job j = *job;
	if (!st)
		st = read_job_plan(&s, source, &j, &p, out, &listed, err);
	ppi_strmap_free(&listed);
	ppi_words_free(&w);
	if (st)
		return st;
	*plan = p;
	*job = j;
	return PP_OK;
}

pp_status pp_launch_load_megatron(const char *path, pp_job *job, pp_plan *plan, pp_launch *out,
                                  pp_error *err)
{
	char *text;
	size_t len;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_launch_from_megatron(text, len, path, job, plan, out, err);
	free(text);
	return st;
}
