/*
 * Fine-tuning's transforms of a layer's work (job.ft, docs/finetune.md):
 * frozen layers' phases dropped, LoRA's adapter GEMMs and QLoRA's NF4
 * dequantisation added, on what ops.c built.  Allocates nothing.
 */
#include "ops_int.h"
#include "paraplan/spec.h"

/* Keep the ops and collectives `keep` says yes to, in order; SUMMA's
 * overlap_op indices follow their op (-1 when it goes). */
static void ft_filter(ppi_ops *c, bool (*keep)(const pp_op *o, const ppi_ops *c),
                      bool (*keep_coll)(const pp_coll *x))
{
	pp_work *w = c->w;
	int map[PP_MAX_OPS], n = 0;
	for (int i = 0; i < w->nops; i++) {
		map[i] = keep(&w->ops[i], c) ? n : -1;
		if (map[i] >= 0)
			w->ops[n++] = w->ops[i];
	}
	w->nops = n;
	n = 0;
	for (int i = 0; i < w->ncolls; i++) {
		if (!keep_coll(&w->colls[i]))
			continue;
		pp_coll x = w->colls[i];
		if (x.overlap_op >= 0)
			x.overlap_op = map[x.overlap_op];
		w->colls[n++] = x;
	}
	w->ncolls = n;
}

static bool fwd_op(const pp_op *o, const ppi_ops *c)
{
	(void)c;
	return o->phase == PP_PHASE_FWD;
}

static bool fwd_coll(const pp_coll *x)
{
	return x->phase == PP_PHASE_FWD;
}

/* A frozen weight's GEMM has no weight gradient (nor its accumulation). */
static bool no_wgrad_op(const pp_op *o, const ppi_ops *c)
{
	(void)c;
	return !(o->kind == PP_OP_GEMM && o->phase == PP_PHASE_BWD_WEIGHT);
}

static bool no_wgrad_coll(const pp_coll *x)
{
	return x->phase != PP_PHASE_BWD_WEIGHT;
}

/* The GEMM weights of the layer's ops (one forward use each), on this GPU. */
static double gemm_weights(const ppi_ops *c)
{
	double sum = 0;
	for (int i = 0; i < c->w->nops; i++) {
		const pp_op *o = &c->w->ops[i];
		if (o->kind == PP_OP_GEMM && o->phase == PP_PHASE_FWD)
			sum += o->k * o->n * o->count;
	}
	return sum;
}

/* QLoRA: before each use of a frozen NF4 weight -- forward, recompute,
 * the data gradient -- bitsandbytes' MatMul4Bit (and torchao's linear_nf4)
 * dequantises it to a bf16 copy the GEMM then reads (dequantize_4bit, then
 * torch.matmul; backward dequantises again): a memory-bound kernel reading
 * the NF4 bytes and writing the bf16 ones. */
static void nf4_dequant(ppi_ops *c, double params, bool fwd_only, bool full_rc)
{
	double bytes = params * (pp_finetune_nf4_bytes() + c->ab);
	const pp_phase ph[] = {PP_PHASE_FWD, PP_PHASE_BWD_INPUT, PP_PHASE_RECOMPUTE};
	for (int i = 0; i < (fwd_only ? 1 : full_rc ? 3 : 2); i++) {
		pp_op *o = ppi_ops_add_op(c, "nf4_dequant", PP_OP_ELEM, ph[i]);
		if (o)
			o->bytes = bytes;
	}
}

/* LoRA adapters of a layer that trains (Hu et al. 2022, §4.1: h = W0 x +
 * B A x): per target two thin GEMMs, x A (tokens x in -> r) and (x A) B
 * (r -> out), forward, both gradients and the recompute; the side the base
 * GEMM splits over TP is split the same way (pp_finetune_lora_params). */
static void lora(ppi_ops *c, int layer, bool full_rc)
{
	const pp_model *m = c->m;
	unsigned tg = pp_finetune_targets(c->job);
	double r = c->job->ft.lora_rank, h = m->hidden, hd = (double)m->num_heads * m->head_dim;
	double f = m->ffn_hidden, t = c->t, T = c->T;
	bool dense = !pp_model_layer_is_moe(m, layer);
	if (tg & PP_LORA_QKV) {
		ppi_ops_gemm(c, "lora_a", T, h, r, 1, full_rc);
		ppi_ops_gemm(c, "lora_b", T, r, (hd + 2.0 * m->num_kv_heads * m->head_dim) / t, 1,
		             full_rc);
	}
	if (tg & PP_LORA_PROJ) {
		ppi_ops_gemm(c, "lora_a", T, hd / t, r, 1, full_rc);
		ppi_ops_gemm(c, "lora_b", T, r, h, 1, full_rc);
	}
	if (tg & PP_LORA_FC1 && dense) {
		ppi_ops_gemm(c, "lora_a", T, h, r, 1, full_rc);
		ppi_ops_gemm(c, "lora_b", T, r, f * (m->gated_mlp ? 2 : 1) / t, 1, full_rc);
	}
	if (tg & PP_LORA_FC2 && dense) {
		ppi_ops_gemm(c, "lora_a", T, f / t, r, 1, full_rc);
		ppi_ops_gemm(c, "lora_b", T, r, h, 1, full_rc);
	}
}

/* Fine-tuning (job.ft, docs/finetune.md) on a layer's work: a layer below
 * the first backward reaches runs its forward only; a frozen layer above it
 * keeps the data gradients (backward passes through it) without the weight
 * gradients, a third of its GEMM FLOPs; a layer that trains adapters adds
 * their GEMMs; NF4 weights add their dequantisation. */
void ppi_ops_ft_layer(ppi_ops *c, int layer, bool full_rc)
{
	const pp_job *job = c->job;
	if (!pp_finetune_on(job) || !pp_finetune_layer_frozen(job, layer))
		return;
	bool fwd_only = layer < pp_finetune_backward_from(job);
	double w = job->ft.nf4 ? gemm_weights(c) : 0;
	if (fwd_only)
		ft_filter(c, fwd_op, fwd_coll);
	else
		ft_filter(c, no_wgrad_op, no_wgrad_coll);
	if (w > 0) {
		/* the dequantisation, not an autocast cast, makes the bf16 copy */
		for (int i = 0; i < c->w->nops; i++)
			c->w->ops[i].cast_kernels = c->w->ops[i].cast_bytes = 0;
		nf4_dequant(c, w, fwd_only, full_rc);
	}
	if (pp_finetune_layer_trains(job, layer))
		lora(c, layer, full_rc);
}

void ppi_ops_ft_forward_only(ppi_ops *c)
{
	ft_filter(c, fwd_op, fwd_coll);
}

void ppi_ops_ft_no_wgrad(ppi_ops *c)
{
	ft_filter(c, no_wgrad_op, no_wgrad_coll);
}
