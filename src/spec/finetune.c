/*
 * Fine-tuning: which weights of the job train (docs/finetune.md).  Frozen
 * pretrained weights (--freeze embeddings, layers:N, base), LoRA adapters of
 * rank r on chosen projections (--lora-rank, --lora-targets; Hu et al.,
 * "LoRA", ICLR 2022, §4) and QLoRA's NF4 storage of the frozen weights
 * (--base-weights nf4; Dettmers et al., "QLoRA", NeurIPS 2023, §3).  The
 * words of the flags are parsed here (fields.c's table names the parsers);
 * the memory and time models ask the predicates below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_int.h"
#include "util/util.h"

/* QLoRA §3 "Double Quantization": 4-bit NF4 weights in blocks of 64 whose
 * absmax constants are themselves quantised to 8 bits in blocks of 256 with
 * an fp32 constant each: 4 + 8/64 + 32/(64*256) bits per parameter (the
 * paper's 0.127 bits of constants).  torchao's NF4Tensor, torchtune's QLoRA,
 * uses the same block sizes (block_size 64, scaler_block_size 256). */
#define NF4_BITS (4.0 + 8.0 / 64 + 32.0 / (64 * 256))

double pp_finetune_nf4_bytes(void)
{
	return NF4_BITS / 8;
}

bool pp_finetune_on(const pp_job *j)
{
	const pp_finetune *f = &j->ft;
	return f->lora_rank > 0 || f->freeze_embeddings || f->freeze_layers > 0 || f->freeze_base ||
	       f->nf4;
}

bool pp_finetune_layer_frozen(const pp_job *j, int layer)
{
	return j->ft.freeze_base || j->ft.lora_rank > 0 || layer < j->ft.freeze_layers;
}

bool pp_finetune_layer_trains(const pp_job *j, int layer)
{
	return layer >= j->ft.freeze_layers && (j->ft.lora_rank > 0 || !j->ft.freeze_base);
}

unsigned pp_finetune_targets(const pp_job *j)
{
	if (j->ft.lora_rank <= 0)
		return 0;
	return j->ft.lora_targets ? j->ft.lora_targets : PP_LORA_ALL;
}

/* Target `bit`'s input and output widths in the layer; column: whether the
 * base GEMM splits its output over TP (else its input).  The MLP targets
 * apply to a dense MLP only (an MoE layer's experts carry no adapters). */
static bool target_shape(const pp_model *m, int layer, unsigned bit, double *in, double *out,
                         bool *column)
{
	double h = m->hidden, hd = (double)m->num_heads * m->head_dim;
	double f = m->ffn_hidden;
	bool dense = !pp_model_layer_is_moe(m, layer);
	switch (bit) {
	case PP_LORA_QKV:
		*in = h, *out = hd + 2.0 * m->num_kv_heads * m->head_dim, *column = true;
		return true;
	case PP_LORA_PROJ: *in = hd, *out = h, *column = false; return true;
	case PP_LORA_FC1: *in = h, *out = f * (m->gated_mlp ? 2 : 1), *column = true; return dense;
	case PP_LORA_FC2: *in = f, *out = h, *column = false; return dense;
	default: return false;
	}
}

double pp_finetune_lora_params(const pp_job *j, const pp_model *m, int layer, int tp)
{
	unsigned targets = pp_finetune_targets(j);
	if (!targets)
		return 0;
	double r = j->ft.lora_rank, t = tp > 0 ? tp : 1, sum = 0;
	for (unsigned bit = 1; bit <= PP_LORA_FC2; bit <<= 1) {
		double in, out;
		bool column;
		if (!(targets & bit) || !target_shape(m, layer, bit, &in, &out, &column))
			continue;
		sum += column ? r * (in + out / t) : r * (in / t + out);
	}
	return sum;
}

double pp_finetune_lora_fwd_flops(const pp_job *j, const pp_model *m, int layer, int tp,
                                  double tokens)
{
	/* x A then (x A) B: each adapter parameter is one multiply-add per token */
	return 2.0 * tokens * pp_finetune_lora_params(j, m, layer, tp);
}

pp_status pp_finetune_check(const pp_job *j, const pp_model *m, pp_error *err)
{
	const pp_finetune *f = &j->ft;
	if (f->lora_rank < 0 || f->lora_rank > m->hidden)
		return ppi_fail(err, "", "job.lora_rank",
		                "expected a LoRA rank of 1..%d (the hidden size of %s), got %d",
		                m->hidden, m->name, f->lora_rank);
	if (f->lora_targets && f->lora_rank == 0)
		return ppi_fail(err, "", "job.lora_targets",
		                "adapter targets need a LoRA rank (--lora-rank)");
	if (f->freeze_layers < 0 || f->freeze_layers > m->num_layers)
		return ppi_fail(err, "", "job.freeze",
		                "expected at most %d frozen layers (the layers of %s), got %d",
		                m->num_layers, m->name, f->freeze_layers);
	if (f->freeze_base && f->lora_rank == 0)
		return ppi_fail(err, "", "job.freeze",
		                "freezing the base leaves nothing to train without --lora-rank");
	bool emb_frozen = f->freeze_embeddings || f->freeze_base || f->lora_rank > 0;
	if (f->freeze_layers == m->num_layers && emb_frozen && f->lora_rank == 0)
		return ppi_fail(err, "", "job.freeze",
		                "every layer and the embeddings frozen leaves nothing to train");
	if (f->nf4 && !f->freeze_base && f->lora_rank == 0 && f->freeze_layers == 0)
		return ppi_fail(err, "", "job.base_weights",
		                "NF4 stores frozen weights only: give --lora-rank or --freeze "
		                "base or layers:N");
	if (f->nf4 && j->precision == PP_PREC_FP8)
		return ppi_fail(err, "", "job.base_weights",
		                "NF4 base weights are dequantised to bf16, not fp8");
	return PP_OK;
}

double pp_finetune_trainable_params(const pp_job *j, const pp_model *m)
{
	pp_param_count pc;
	pp_model_params(m, &pc);
	if (!pp_finetune_on(j))
		return pc.total;
	double sum =
	    pp_finetune_embeddings_frozen(j) ? 0 : pc.embedding + pc.lm_head + pc.final_norm;
	for (int l = 0; l < m->num_layers; l++) {
		if (!pp_finetune_layer_trains(j, l))
			continue;
		pp_layer_params lp;
		pp_model_layer_params(m, l, &lp);
		if (!pp_finetune_layer_frozen(j, l))
			sum += lp.attention + lp.mlp + lp.experts;
		sum += pp_finetune_lora_params(j, m, l, 1);
	}
	return sum;
}

/* "qkv,proj,fc1,fc2" of `bits` into buf. */
const char *pp_finetune_targets_name(unsigned bits, char *buf, size_t n)
{
	static const char *const names[] = {"qkv", "proj", "fc1", "fc2"};
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < 4; i++)
		if (bits & (1u << i))
			len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s",
			                        len ? "," : "", names[i]);
	return buf;
}

bool pp_finetune_embeddings_frozen(const pp_job *j)
{
	return j->ft.freeze_embeddings || j->ft.freeze_base || j->ft.lora_rank > 0;
}

int pp_finetune_backward_from(const pp_job *j)
{
	return pp_finetune_embeddings_frozen(j) ? j->ft.freeze_layers : 0;
}

/* --lora-targets qkv,proj,fc1,fc2 (or all): a comma list. */
pp_status pp_finetune_targets_parse(const char *s, void *dst, pp_error *err)
{
	static const char *const names[] = {"qkv", "proj", "fc1", "fc2"};
	unsigned bits = 0;
	const char *p = s;
	while (*p) {
		size_t n = strcspn(p, ",");
		unsigned bit = 0;
		if (n == 3 && strncmp(p, "all", 3) == 0)
			bit = PP_LORA_ALL;
		for (int i = 0; i < 4; i++)
			if (strlen(names[i]) == n && strncmp(p, names[i], n) == 0)
				bit = 1u << i;
		if (!bit)
			return ppi_fail(
			    err, NULL, NULL,
			    "expected a comma list of qkv, proj, fc1, fc2 (or all), got "
			    "'%.*s'",
			    (int)n, p);
		bits |= bit;
		p += n;
		if (*p == ',' && *++p == '\0')
			return ppi_fail(err, NULL, NULL, "a comma list ends with ',': '%s'", s);
	}
	if (!bits)
		return ppi_fail(err, NULL, NULL, "expected qkv, proj, fc1, fc2 or all, got ''");
	*(unsigned *)dst = bits;
	return PP_OK;
}

/* --freeze embeddings,layers:N,base (a comma list; none: nothing). */
pp_status pp_finetune_freeze_parse(const char *s, void *dst, pp_error *err)
{
	pp_finetune f = *(pp_finetune *)dst;
	f.freeze_embeddings = f.freeze_base = false;
	f.freeze_layers = 0;
	const char *p = s;
	if (!*p)
		return ppi_fail(err, NULL, NULL, "expected embeddings, layers:N, base or none");
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n == 10 && strncmp(p, "embeddings", 10) == 0)
			f.freeze_embeddings = true;
		else if (n == 4 && strncmp(p, "base", 4) == 0)
			f.freeze_base = true;
		else if (n == 4 && strncmp(p, "none", 4) == 0)
			;
		else if (n > 7 && strncmp(p, "layers:", 7) == 0) {
			char *end;
			long v = strtol(p + 7, &end, 10);
			if (end != p + n || v < 1 || v > 1000000)
				return ppi_fail(
				    err, NULL, NULL,
				    "expected layers:N with N a count of layers, got '%.*s'",
				    (int)n, p);
			f.freeze_layers = (int)v;
		} else
			return ppi_fail(err, NULL, NULL,
			                "expected a comma list of embeddings, layers:N, base (or "
			                "none), got '%.*s'",
			                (int)n, p);
		p += n;
		if (*p == ',' && *++p == '\0')
			return ppi_fail(err, NULL, NULL, "a comma list ends with ',': '%s'", s);
	}
	*(pp_finetune *)dst = f;
	return PP_OK;
}

/* --base-weights nf4|train: the frozen weights' storage. */
pp_status pp_finetune_base_parse(const char *s, void *dst, pp_error *err)
{
	if (strcmp(s, "nf4") == 0)
		*(bool *)dst = true;
	else if (strcmp(s, "train") == 0)
		*(bool *)dst = false;
	else
		return ppi_fail(err, NULL, NULL,
		                "expected nf4 (QLoRA) or train (the training dtype), got '%s'", s);
	return PP_OK;
}
