/*
 * Megatron-LM flags -> the model they describe: sizes, attention, the
 * vocabulary's padding, norms and positions, multi-head latent attention and
 * the experts, with the MoE layer pattern of --moe-layer-freq (arguments.py
 * at core_v0.15.3; line numbers below are that file's).
 */
#include <stdlib.h>
#include <string.h>

#include "megatron_int.h"
#include "paraplan/launch.h"
#include "util/util.h"

/* "([0]*3+[1]*58)" (Megatron's moe_freq_type, arguments.py:310): a sum of
 * lists, each optionally repeated, parentheses allowed.  Writes up to `max`
 * entries to `out`; returns the count, or -1 when malformed or too long. */
typedef struct pat {
	const char *p;
	int max;
	int depth; /* parentheses open now, at most PAT_DEPTH_MAX */
} pat;

/* Nesting of parentheses in a pattern: Megatron's own are one deep. */
#define PAT_DEPTH_MAX 32

static void skip_ws(pat *q)
{
	while (*q->p == ' ')
		q->p++;
}

static int pat_expr(pat *q, int *out, int max);

static int pat_repeat(pat *q, int *out, int n, int max)
{
	skip_ws(q);
	while (*q->p == '*') {
		q->p++;
		skip_ws(q);
		char *end;
		long k = strtol(q->p, &end, 10);
		if (end == q->p || k < 0 || k > max || (long)n * k > max)
			return -1;
		q->p = end;
		for (long r = 1; r < k; r++)
			memmove(out + r * n, out, (size_t)n * sizeof *out);
		n = (int)(n * k);
		skip_ws(q);
	}
	return n;
}

static int pat_term(pat *q, int *out, int max)
{
	skip_ws(q);
	int n = 0;
	if (*q->p == '(') {
		if (++q->depth > PAT_DEPTH_MAX)
			return -1;
		q->p++;
		n = pat_expr(q, out, max);
		skip_ws(q);
		if (n < 0 || *q->p != ')')
			return -1;
		q->p++;
		q->depth--;
	} else if (*q->p == '[') {
		q->p++;
		for (;;) {
			skip_ws(q);
			if (*q->p == ']')
				break;
			char *end;
			long v = strtol(q->p, &end, 10);
			if (end == q->p || (v != 0 && v != 1) || n >= max)
				return -1;
			out[n++] = (int)v;
			q->p = end;
			skip_ws(q);
			if (*q->p == ',')
				q->p++;
			else if (*q->p != ']')
				return -1;
		}
		q->p++;
	} else {
		return -1;
	}
	return pat_repeat(q, out, n, max);
}

static int pat_expr(pat *q, int *out, int max)
{
	int n = pat_term(q, out, max);
	if (n < 0)
		return -1;
	skip_ws(q);
	while (*q->p == '+') {
		q->p++;
		int k = pat_term(q, out + n, max - n);
		if (k < 0)
			return -1;
		n += k;
		skip_ws(q);
	}
	return n;
}

/* The MoE layer pattern in paraplan's form (first_k_dense, layer_freq:
 * pp_model_layer_is_moe); false when it has no such form. */
static bool pattern_to_moe(const int *is_moe, int layers, pp_moe *moe)
{
	int first = -1, second = -1;
	for (int i = 0; i < layers; i++)
		if (is_moe[i]) {
			if (first < 0)
				first = i;
			else if (second < 0) {
				second = i;
				break;
			}
		}
	if (first < 0)
		return false;
	int freq = second > 0 ? second - first : layers - first;
	int k = first - freq + 1;
	if (k < 0)
		return false;
	pp_moe m = *moe;
	m.first_k_dense = k;
	m.layer_freq = freq;
	for (int i = 0; i < layers; i++) {
		pp_model tmp;
		memset(&tmp, 0, sizeof tmp);
		tmp.moe = m;
		tmp.moe.num_experts = 1;
		if (pp_model_layer_is_moe(&tmp, i) != (is_moe[i] != 0))
			return false;
	}
	*moe = m;
	return true;
}

static pp_status read_moe_freq(const ppi_mseen *s, const char *source, int layers, pp_moe *moe,
                               pp_error *err)
{
	const char *v = s->val[F_MOE_FREQ];
	if (!strchr(v, '[')) {
		int n;
		PPI_TRY(ppi_mflag_int(s, F_MOE_FREQ, 1, 1 << 20, source, &n, err));
		/* Megatron: layer i is MoE when i % n == 0 (arguments.py moe_freq_type). */
		int *pat_ = ppi_calloc((size_t)layers, sizeof *pat_);
		if (!pat_)
			return ppi_fail(err, source, "", "out of memory");
		for (int i = 0; i < layers; i++)
			pat_[i] = i % n == 0;
		bool ok = pattern_to_moe(pat_, layers, moe);
		free(pat_);
		if (!ok)
			return ppi_mflag_bad(
			    err, source, F_MOE_FREQ,
			    "'%s': paraplan models MoE layers as a dense prefix, then every "
			    "n-th layer; Megatron's integer form puts one on layer 0",
			    v);
		return PP_OK;
	}
	int *p = ppi_calloc((size_t)layers + 1, sizeof *p);
	if (!p)
		return ppi_fail(err, source, "", "out of memory");
	pat q = {v, layers + 1, 0};
	int n = pat_expr(&q, p, layers + 1);
	skip_ws(&q);
	pp_status st = PP_OK;
	if (q.depth > PAT_DEPTH_MAX)
		st = ppi_mflag_bad(err, source, F_MOE_FREQ, "parentheses nested more than %d deep",
		                   PAT_DEPTH_MAX);
	else if (n < 0 || *q.p)
		st = ppi_mflag_bad(
		    err, source, F_MOE_FREQ,
		    "expected an integer or a pattern such as ([0]*3+[1]*58), got '%.64s'", v);
	else if (n != layers)
		st = ppi_mflag_bad(err, source, F_MOE_FREQ,
		                   "the pattern '%s' has %d entries, the model %d layers", v, n,
		                   layers);
	else if (!pattern_to_moe(p, layers, moe))
		st = ppi_mflag_bad(
		    err, source, F_MOE_FREQ,
		    "'%s': paraplan models MoE layers as a dense prefix, then every n-th layer", v);
	free(p);
	return st;
}

/* The sizes: layers, hidden, heads, the MLP's width, the key/value groups,
 * the head dimension and the vocabulary padded for tp (arguments.py:
 * validate_args, lines 828-845, 1028). */
static pp_status read_sizes(const ppi_mseen *s, const char *source, const pp_plan *plan,
                            pp_model *m, pp_error *err)
{
	static const int req[] = {F_NUM_LAYERS, F_HIDDEN, F_HEADS};
	for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
		if (!s->set[req[i]])
			return ppi_fail(err, source, "", "--%s is required to describe the model",
			                ppi_mflags[req[i]].name);
	PPI_TRY(ppi_mflag_int(s, F_NUM_LAYERS, 1, 10000, source, &m->num_layers, err));
	PPI_TRY(ppi_mflag_int(s, F_HIDDEN, 1, 1048576, source, &m->hidden, err));
	PPI_TRY(ppi_mflag_int(s, F_HEADS, 1, 65536, source, &m->num_heads, err));
	m->gated_mlp = s->set[F_SWIGLU];
	if (s->set[F_FFN])
		PPI_TRY(ppi_mflag_int(s, F_FFN, 0, 16777216, source, &m->ffn_hidden, err));
	else if (m->gated_mlp)
		m->ffn_hidden = (int)((4.0 * m->hidden * 2 / 3) / 64) * 64;
	else
		m->ffn_hidden = 4 * m->hidden;
	m->num_kv_heads = m->num_heads;
	if (s->set[F_GQA]) {
		m->num_kv_heads = 1; /* --num-query-groups defaults to 1 (line 1570) */
		if (s->set[F_GROUPS])
			PPI_TRY(
			    ppi_mflag_int(s, F_GROUPS, 1, 65536, source, &m->num_kv_heads, err));
	}
	if (s->set[F_KV_CHANNELS])
		PPI_TRY(ppi_mflag_int(s, F_KV_CHANNELS, 1, 65536, source, &m->head_dim, err));
	else {
		if (m->hidden % m->num_heads)
			return ppi_fail(
			    err, source, "--num-attention-heads",
			    "%d heads do not divide hidden size %d (give --kv-channels)",
			    m->num_heads, m->hidden);
		m->head_dim = m->hidden / m->num_heads;
	}
	/* The vocabulary: --padded-vocab-size, or --vocab-size padded to a multiple
	 * of --make-vocab-size-divisible-by (128) x tp (tokenizer.py
	 * _vocab_size_with_padding). */
	if (s->set[F_PADDED_VOCAB])
		PPI_TRY(ppi_mflag_int(s, F_PADDED_VOCAB, 1, 100000000, source, &m->vocab, err));
	else if (s->set[F_VOCAB]) {
		int v, div = 128;
		PPI_TRY(ppi_mflag_int(s, F_VOCAB, 1, 100000000, source, &v, err));
		if (s->set[F_DIVISIBLE])
			PPI_TRY(ppi_mflag_int(s, F_DIVISIBLE, 1, 1 << 20, source, &div, err));
		long long mult = (long long)div * plan->tp;
		m->vocab = (int)((v + mult - 1) / mult * mult);
	} else
		return ppi_fail(err, source, "",
		                "--vocab-size or --padded-vocab-size is required to describe the "
		                "model (Megatron-LM takes it from the tokenizer)");
	return PP_OK;
}

/* Tied embeddings, biases, dropout, the norm, positions (core_transformer_config_from_args,
 * line 1276); `seq` is --max-position-embeddings' default. */
static pp_status read_style(const ppi_mseen *s, const char *source, int seq, pp_model *m,
                            pp_error *err)
{
	m->tied_embeddings = !s->set[F_UNTIE];
	m->linear_bias = !s->set[F_NO_BIAS];
	m->qkv_bias = s->set[F_QKV_BIAS];
	m->qk_norm = s->set[F_QK_NORM];
	double ad = 0.1, hd = 0.1; /* lines 1876-1878 */
	if (s->set[F_ATTN_DROPOUT])
		PPI_TRY(ppi_mflag_double(s, F_ATTN_DROPOUT, source, &ad, err));
	if (s->set[F_HIDDEN_DROPOUT])
		PPI_TRY(ppi_mflag_double(s, F_HIDDEN_DROPOUT, source, &hd, err));
	m->dropout = ad > 0 || hd > 0;
	m->norm = PP_NORM_LAYERNORM;
	if (s->set[F_NORM]) {
		static const char *const norms[] = {"LayerNorm", "RMSNorm", NULL};
		int k = 0;
		PPI_TRY(ppi_mflag_choice(s, F_NORM, norms, source, &k, err));
		m->norm = k == 1 ? PP_NORM_RMSNORM : PP_NORM_LAYERNORM;
	}
	m->position = PP_POS_LEARNED;
	if (s->set[F_POSITION]) {
		static const char *const pos[] = {"learned_absolute", "rope", "mrope",
		                                  "relative",         "none", NULL};
		int k = 0;
		PPI_TRY(ppi_mflag_choice(s, F_POSITION, pos, source, &k, err));
		m->position = k == 0 ? PP_POS_LEARNED : PP_POS_ROPE; /* no parameters */
	}
	m->max_position = seq;
	if (s->set[F_MAX_POS])
		PPI_TRY(ppi_mflag_int(s, F_MAX_POS, 1, 100000000, source, &m->max_position, err));
	return PP_OK;
}

/* Multi-head latent attention (--multi-latent-attention and its sizes). */
static pp_status read_mla(const ppi_mseen *s, const char *source, pp_model *m, pp_error *err)
{
	if (!s->set[F_MLA])
		return PP_OK;
	/* Defaults: lines 3167-3176. */
	m->mla.q_lora_rank = 0;
	m->mla.kv_lora_rank = 32;
	m->mla.qk_nope_head_dim = 128;
	m->mla.qk_rope_head_dim = 64;
	m->mla.v_head_dim = 128;
	if (s->set[F_Q_LORA])
		PPI_TRY(ppi_mflag_int(s, F_Q_LORA, 0, 1 << 20, source, &m->mla.q_lora_rank, err));
	if (s->set[F_KV_LORA])
		PPI_TRY(ppi_mflag_int(s, F_KV_LORA, 1, 1 << 20, source, &m->mla.kv_lora_rank, err));
	if (s->set[F_QK_HEAD])
		PPI_TRY(
		    ppi_mflag_int(s, F_QK_HEAD, 1, 1 << 20, source, &m->mla.qk_nope_head_dim, err));
	if (s->set[F_QK_POS])
		PPI_TRY(
		    ppi_mflag_int(s, F_QK_POS, 0, 1 << 20, source, &m->mla.qk_rope_head_dim, err));
	if (s->set[F_V_HEAD])
		PPI_TRY(ppi_mflag_int(s, F_V_HEAD, 1, 1 << 20, source, &m->mla.v_head_dim, err));
	return PP_OK;
}

/* The experts (--num-experts and the moe-* flags). */
static pp_status read_moe(const ppi_mseen *s, const char *source, pp_model *m, pp_error *err)
{
	if (!s->set[F_EXPERTS])
		return PP_OK;
	pp_moe *e = &m->moe;
	PPI_TRY(ppi_mflag_int(s, F_EXPERTS, 1, 65536, source, &e->num_experts, err));
	e->top_k = 2; /* line 3094 */
	if (s->set[F_TOPK])
		PPI_TRY(ppi_mflag_int(s, F_TOPK, 1, 65536, source, &e->top_k, err));
	e->expert_ffn_hidden = m->ffn_hidden; /* line 1028 */
	if (s->set[F_MOE_FFN])
		PPI_TRY(
		    ppi_mflag_int(s, F_MOE_FFN, 1, 16777216, source, &e->expert_ffn_hidden, err));
	if (s->set[F_MOE_SHARED]) {
		PPI_TRY(ppi_mflag_int(s, F_MOE_SHARED, 0, 16777216, source, &e->shared_ffn_hidden,
		                      err));
		e->num_shared_experts = e->shared_ffn_hidden > 0;
	}
	e->router_bias = s->set[F_MOE_BIAS];
	if (s->set[F_ROUTER_GROUPS] != s->set[F_ROUTER_GROUP_TOPK])
		return ppi_mflag_bad(
		    err, source, s->set[F_ROUTER_GROUPS] ? F_ROUTER_GROUP_TOPK : F_ROUTER_GROUPS,
		    "group-limited routing takes --moe-router-num-groups and "
		    "--moe-router-group-topk together");
	if (s->set[F_ROUTER_GROUPS]) {
		PPI_TRY(ppi_mflag_int(s, F_ROUTER_GROUPS, 1, 65536, source, &e->num_groups, err));
		PPI_TRY(
		    ppi_mflag_int(s, F_ROUTER_GROUP_TOPK, 1, 65536, source, &e->group_topk, err));
	}
	e->layer_freq = 1;
	if (s->set[F_MOE_FREQ])
		PPI_TRY(read_moe_freq(s, source, m->num_layers, e, err));
	return PP_OK;
}

pp_status ppi_megatron_model(const ppi_mseen *s, const char *source, const pp_plan *plan, int seq,
                             pp_model *m, pp_error *err)
{
	memset(m, 0, sizeof *m);
	ppi_strlcpy(m->name, "megatron", sizeof m->name);
	ppi_strlcpy(m->source, "Megatron-LM flags", sizeof m->source);
	PPI_TRY(read_sizes(s, source, plan, m, err));
	PPI_TRY(read_style(s, source, seq, m, err));
	PPI_TRY(read_mla(s, source, m, err));
	PPI_TRY(read_moe(s, source, m, err));
	pp_status st = pp_model_check(m, err);
	if (st)
		ppi_strlcpy(err->source, source, sizeof err->source);
	return st;
}
