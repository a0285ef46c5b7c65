/*
 * HuggingFace config.json reader.
 *
 * A config.json describes a model for the transformers library; this reader
 * maps the keys that determine the parameter count and the activation shape
 * onto a pp_model.  HF files carry many other keys (torch_dtype, rope_scaling,
 * bos_token_id, quantization_config, ...): those are accepted and ignored.  The
 * keys that are read must have the right type and a sane value, and the
 * structural ones (sizes, layer and head counts) must be present; every error
 * names the file and the HF key ("config.json: hidden_size: ...").
 *
 * Defaults follow the transformers configuration classes where a key may be
 * left out (num_key_value_heads, tie_word_embeddings, head_dim for Qwen3 and
 * Gemma, n_inner for GPT-2, ...).  Sizes that have a default in transformers
 * only for convenience (intermediate_size, num_experts, ...) are required:
 * a file saved by transformers always carries them, and defaulting a size
 * silently would give a wrong plan.
 */
#include <stdio.h>
#include <string.h>

#include "spec_int.h"

typedef enum hf_family {
	HF_LLAMA,
	HF_MISTRAL,
	HF_MIXTRAL,
	HF_QWEN2,
	HF_QWEN2_MOE,
	HF_QWEN3,
	HF_QWEN3_MOE,
	HF_DEEPSEEK_V2,
	HF_DEEPSEEK_V3,
	HF_GPT2,
	HF_GPT_NEOX,
	HF_GEMMA,
} hf_family;

static const struct {
	const char *model_type;
	const char *architecture; /* the usual "architectures" entry */
	hf_family family;
} hf_families[] = {
    {"llama", "LlamaForCausalLM", HF_LLAMA},
    {"mistral", "MistralForCausalLM", HF_MISTRAL},
    {"mixtral", "MixtralForCausalLM", HF_MIXTRAL},
    {"qwen2", "Qwen2ForCausalLM", HF_QWEN2},
    {"qwen2_moe", "Qwen2MoeForCausalLM", HF_QWEN2_MOE},
    {"qwen3", "Qwen3ForCausalLM", HF_QWEN3},
    {"qwen3_moe", "Qwen3MoeForCausalLM", HF_QWEN3_MOE},
    {"deepseek_v2", "DeepseekV2ForCausalLM", HF_DEEPSEEK_V2},
    {"deepseek_v3", "DeepseekV3ForCausalLM", HF_DEEPSEEK_V3},
    {"gpt2", "GPT2LMHeadModel", HF_GPT2},
    {"gpt_neox", "GPTNeoXForCausalLM", HF_GPT_NEOX},
    {"gemma", "GemmaForCausalLM", HF_GEMMA},
};
#define HF_NFAMILIES (sizeof hf_families / sizeof hf_families[0])

/* Limits shared with paraplan's own model format (see ppi_model_read). */
#define MAX_LAYERS 10000
#define MAX_HIDDEN 1048576
#define MAX_HEADS 65536
#define MAX_FFN 16777216
#define MAX_VOCAB 100000000
#define MAX_POSITIONS 100000000
#define MAX_EXPERTS 65536

bool ppi_is_hf_config(json_t *obj)
{
	return json_object_get(obj, "model_type") || json_object_get(obj, "architectures");
}

static void supported_list(char *buf, size_t n)
{
	buf[0] = '\0';
	for (size_t i = 0; i < HF_NFAMILIES; i++) {
		if (i > 0)
			strncat(buf, ", ", n - strlen(buf) - 1);
		strncat(buf, hf_families[i].model_type, n - strlen(buf) - 1);
	}
}

/* Find the family from "model_type" or, failing that, from "architectures". */
static pp_status hf_family_of(const ppi_obj *r, hf_family *out)
{
	char list[200];
	supported_list(list, sizeof list);
	char type[64] = "";
	PPI_TRY(ppi_get_str(r, "model_type", false, type, sizeof type));
	if (type[0]) {
		for (size_t i = 0; i < HF_NFAMILIES; i++)
			if (ppi_streq(type, hf_families[i].model_type)) {
				*out = hf_families[i].family;
				return PP_OK;
			}
		return ppi_fail(r->err, r->source, "model_type",
		                "unsupported model type \"%s\"; supported: %s (describe other "
		                "models in paraplan's own model JSON)",
		                type, list);
	}
	json_t *arch = json_object_get(r->obj, "architectures");
	if (!arch || json_is_null(arch))
		return ppi_fail(
		    r->err, r->source, "model_type",
		    "missing required key (neither model_type nor architectures given)");
	if (!json_is_array(arch) || json_array_size(arch) == 0 ||
	    !json_is_string(json_array_get(arch, 0))) {
		char got[80];
		ppi_json_repr(arch, got, sizeof got);
		return ppi_fail(r->err, r->source, "architectures",
		                "expected a non-empty array of strings, got %s", got);
	}
	const char *a = json_string_value(json_array_get(arch, 0));
	for (size_t i = 0; i < HF_NFAMILIES; i++)
		if (strcmp(a, hf_families[i].architecture) == 0) {
			*out = hf_families[i].family;
			return PP_OK;
		}
	return ppi_fail(r->err, r->source, "architectures",
	                "unsupported architecture \"%.60s\" and no model_type; supported model "
	                "types: %s",
	                a, list);
}

/* "_name_or_path" when given (a hub id or a local path), else the model type. */
static pp_status hf_name(const ppi_obj *r, hf_family fam, pp_model *m)
{
	json_t *v = json_object_get(r->obj, "_name_or_path");
	const char *name = NULL;
	if (v && !json_is_null(v)) {
		if (!json_is_string(v)) {
			char got[80];
			ppi_json_repr(v, got, sizeof got);
			return ppi_fail(r->err, r->source, "_name_or_path",
			                "expected a string, got %s", got);
		}
		name = json_string_value(v);
		/* A long local path: keep its last component(s) that fit. */
		size_t len = strlen(name);
		while (len >= sizeof m->name) {
			const char *slash = strchr(name, '/');
			if (!slash)
				break;
			name = slash + 1;
			len = strlen(name);
		}
	}
	if (!name || !name[0]) {
		for (size_t i = 0; i < HF_NFAMILIES; i++)
			if (hf_families[i].family == fam)
				name = hf_families[i].model_type;
	}
	ppi_strlcpy(m->name, name, sizeof m->name);
	return PP_OK;
}

/*
 * Which layers have an MoE MLP, the way transformers decides it:
 *  - Qwen2-MoE / Qwen3-MoE: not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0;
 *  - DeepSeek-V2/V3: i >= first_k_dense_replace and i % moe_layer_freq == 0;
 *  - Mixtral: every layer.
 */
typedef struct hf_moe_layers {
	hf_family fam;
	int freq;
	int first_k_dense;         /* DeepSeek */
	bool mlp_only[MAX_LAYERS]; /* Qwen: layers listed in mlp_only_layers */
} hf_moe_layers;

static bool hf_layer_is_moe(const hf_moe_layers *s, int i)
{
	switch (s->fam) {
	case HF_QWEN2_MOE:
	case HF_QWEN3_MOE: return !s->mlp_only[i] && (i + 1) % s->freq == 0;
	case HF_DEEPSEEK_V2:
	case HF_DEEPSEEK_V3: return i >= s->first_k_dense && i % s->freq == 0;
	default: return true;
	}
}

/*
 * Express the HF layer pattern as paraplan's (first_k_dense, layer_freq), see
 * pp_model_layer_is_moe: layer i is MoE when i >= k and (i - k + 1) % freq == 0.
 * Sets m->moe.num_experts to 0 when no layer is MoE (a dense model).
 */
static pp_status hf_moe_pattern(const ppi_obj *r, const hf_moe_layers *s, const char *field,
                                pp_model *m)
{
	int first = -1;
	for (int i = 0; i < m->num_layers; i++)
		if (hf_layer_is_moe(s, i)) {
			first = i;
			break;
		}
	if (first < 0) {
		memset(&m->moe, 0, sizeof m->moe);
		return PP_OK;
	}
	int k = first - s->freq + 1;
	bool ok = k >= 0;
	if (ok) {
		m->moe.first_k_dense = k;
		m->moe.layer_freq = s->freq;
		for (int i = 0; i < m->num_layers && ok; i++)
			ok = hf_layer_is_moe(s, i) == pp_model_layer_is_moe(m, i);
	}
	if (!ok)
		return ppi_fail(
		    r->err, r->source, field,
		    "this pattern of MoE and dense layers cannot be represented (paraplan "
		    "supports a dense prefix followed by every n-th layer being MoE)");
	return PP_OK;
}

/* mlp_only_layers: an array of layer indices in 0..num_layers-1. */
static pp_status hf_mlp_only_layers(const ppi_obj *r, int num_layers, bool *dense, bool *any)
{
	json_t *v = json_object_get(r->obj, "mlp_only_layers");
	*any = false;
	if (!v || json_is_null(v))
		return PP_OK;
	char got[80];
	if (!json_is_array(v)) {
		ppi_json_repr(v, got, sizeof got);
		return ppi_fail(r->err, r->source, "mlp_only_layers",
		                "expected an array of layer indices, got %s", got);
	}
	size_t i;
	json_t *e;
	json_array_foreach (v, i, e) {
		if (!json_is_integer(e) || json_integer_value(e) < 0 ||
		    json_integer_value(e) >= num_layers) {
			ppi_json_repr(e, got, sizeof got);
			char path[PP_ERROR_FIELD_MAX];
			snprintf(path, sizeof path, "mlp_only_layers[%zu]", i);
			return ppi_fail(r->err, r->source, path,
			                "expected a layer index in 0..%d, got %s", num_layers - 1,
			                got);
		}
		dense[json_integer_value(e)] = true;
		*any = true;
	}
	return PP_OK;
}

/* Dropout probability key: > 0 turns paraplan's dropout on. */
static pp_status hf_dropout(const ppi_obj *r, const char *key, bool *dropout)
{
	double p = 0;
	PPI_TRY(ppi_get_num(r, key, false, 0.0, 1.0, &p));
	if (p > 0)
		*dropout = true;
	return PP_OK;
}

static pp_status hf_read_gpt2(const ppi_obj *r, pp_model *m)
{
	PPI_TRY(ppi_get_int(r, "n_layer", true, 1, MAX_LAYERS, &m->num_layers));
	PPI_TRY(ppi_get_int(r, "n_embd", true, 1, MAX_HIDDEN, &m->hidden));
	PPI_TRY(ppi_get_int(r, "n_head", true, 1, MAX_HEADS, &m->num_heads));
	PPI_TRY(ppi_get_int(r, "vocab_size", true, 1, MAX_VOCAB, &m->vocab));
	PPI_TRY(ppi_get_int(r, "n_positions", true, 1, MAX_POSITIONS, &m->max_position));
	if (m->hidden % m->num_heads != 0)
		return ppi_fail(r->err, r->source, "n_head", "%d heads do not divide n_embd %d",
		                m->num_heads, m->hidden);
	m->num_kv_heads = m->num_heads;
	m->head_dim = m->hidden / m->num_heads;
	m->ffn_hidden = 4 * m->hidden; /* n_inner: null means 4 * n_embd */
	PPI_TRY(ppi_get_int(r, "n_inner", false, 1, MAX_FFN, &m->ffn_hidden));
	m->tied_embeddings = true;
	PPI_TRY(ppi_get_bool(r, "tie_word_embeddings", false, &m->tied_embeddings));
	/* GPT2Config's dropout defaults are 0.1. */
	bool drop = false;
	const char *const keys[] = {"resid_pdrop", "embd_pdrop", "attn_pdrop"};
	for (int i = 0; i < 3; i++) {
		double p = 0.1;
		PPI_TRY(ppi_get_num(r, keys[i], false, 0.0, 1.0, &p));
		drop = drop || p > 0;
	}
	m->dropout = drop;
	m->norm = PP_NORM_LAYERNORM;
	m->position = PP_POS_LEARNED;
	m->linear_bias = true;
	m->gated_mlp = false;
	return PP_OK;
}

static pp_status hf_read_neox(const ppi_obj *r, pp_model *m)
{
	PPI_TRY(ppi_get_int(r, "num_hidden_layers", true, 1, MAX_LAYERS, &m->num_layers));
	PPI_TRY(ppi_get_int(r, "hidden_size", true, 1, MAX_HIDDEN, &m->hidden));
	PPI_TRY(ppi_get_int(r, "num_attention_heads", true, 1, MAX_HEADS, &m->num_heads));
	PPI_TRY(ppi_get_int(r, "intermediate_size", true, 1, MAX_FFN, &m->ffn_hidden));
	PPI_TRY(ppi_get_int(r, "vocab_size", true, 1, MAX_VOCAB, &m->vocab));
	PPI_TRY(
	    ppi_get_int(r, "max_position_embeddings", false, 1, MAX_POSITIONS, &m->max_position));
	if (m->hidden % m->num_heads != 0)
		return ppi_fail(r->err, r->source, "num_attention_heads",
		                "%d heads do not divide hidden_size %d", m->num_heads, m->hidden);
	m->num_kv_heads = m->num_heads;
	m->head_dim = m->hidden / m->num_heads;
	m->parallel_block = true;
	PPI_TRY(ppi_get_bool(r, "use_parallel_residual", false, &m->parallel_block));
	m->tied_embeddings = false;
	PPI_TRY(ppi_get_bool(r, "tie_word_embeddings", false, &m->tied_embeddings));
	/* Both spellings occur: the 20B checkpoint predates the rename. */
	PPI_TRY(hf_dropout(r, "hidden_dropout", &m->dropout));
	PPI_TRY(hf_dropout(r, "attention_dropout", &m->dropout));
	PPI_TRY(hf_dropout(r, "hidden_dropout_prob", &m->dropout));
	PPI_TRY(hf_dropout(r, "attention_probs_dropout_prob", &m->dropout));
	/* Rotary on rotary_pct of each head adds no parameters.  attention_bias
	 * (default true) is not read: the MLP keeps its biases either way, and a
	 * bias-free attention would change the count by 4 * hidden per layer. */
	m->norm = PP_NORM_LAYERNORM;
	m->position = PP_POS_ROPE;
	m->linear_bias = true;
	m->gated_mlp = false;
	return PP_OK;
}

static pp_status hf_read_deepseek(const ppi_obj *r, hf_family fam, pp_model *m)
{
	pp_mla *a = &m->mla;
	/* q_lora_rank null (V2-Lite): queries are projected directly. */
	PPI_TRY(ppi_get_int(r, "q_lora_rank", false, 0, MAX_HIDDEN, &a->q_lora_rank));
	PPI_TRY(ppi_get_int(r, "kv_lora_rank", true, 1, MAX_HIDDEN, &a->kv_lora_rank));
	PPI_TRY(ppi_get_int(r, "qk_nope_head_dim", true, 1, MAX_HEADS, &a->qk_nope_head_dim));
	PPI_TRY(ppi_get_int(r, "qk_rope_head_dim", true, 0, MAX_HEADS, &a->qk_rope_head_dim));
	PPI_TRY(ppi_get_int(r, "v_head_dim", true, 1, MAX_HEADS, &a->v_head_dim));
	/* num_key_value_heads is carried but unused by MLA: every head has its own
	 * key and value decompressed from the shared latent. */
	int kv = m->num_heads;
	PPI_TRY(ppi_get_int(r, "num_key_value_heads", false, 1, MAX_HEADS, &kv));
	m->num_kv_heads = m->num_heads;
	m->head_dim = a->qk_nope_head_dim + a->qk_rope_head_dim;
	/* attention_bias (false in every released checkpoint) is read for its type
	 * only: the few biases it would add are not counted. */
	bool bias = false;
	PPI_TRY(ppi_get_bool(r, "attention_bias", false, &bias));

	/* n_routed_experts null: a dense model. */
	int experts = 0;
	PPI_TRY(ppi_get_int(r, "n_routed_experts", false, 1, MAX_EXPERTS, &experts));
	int k = 0, freq = 1;
	PPI_TRY(ppi_get_int(r, "first_k_dense_replace", false, 0, MAX_LAYERS, &k));
	PPI_TRY(ppi_get_int(r, "moe_layer_freq", false, 1, MAX_LAYERS, &freq));
	static const hf_moe_layers zero;
	hf_moe_layers s = zero;
	s.fam = fam;
	s.freq = freq;
	s.first_k_dense = k;
	if (experts > 0) {
		pp_moe *e = &m->moe;
		e->num_experts = experts;
		PPI_TRY(ppi_get_int(r, "num_experts_per_tok", true, 1, MAX_EXPERTS, &e->top_k));
		PPI_TRY(ppi_get_int(r, "moe_intermediate_size", true, 1, MAX_FFN,
		                    &e->expert_ffn_hidden));
		PPI_TRY(ppi_get_int(r, "n_shared_experts", false, 0, MAX_EXPERTS,
		                    &e->num_shared_experts));
		long long shared = (long long)e->num_shared_experts * e->expert_ffn_hidden;
		if (shared > MAX_FFN)
			return ppi_fail(
			    r->err, r->source, "n_shared_experts",
			    "%d shared experts of moe_intermediate_size %d exceed %d in total",
			    e->num_shared_experts, e->expert_ffn_hidden, MAX_FFN);
		/* Each shared expert is an MLP of moe_intermediate_size: together one MLP
		 * of n_shared_experts times that width. */
		e->shared_ffn_hidden = (int)shared;
		/* V3 adds e_score_correction_bias (n_routed_experts) to its router. */
		e->router_bias = fam == HF_DEEPSEEK_V3;
		/* Group-limited routing (V2 group_limited_greedy, V3 noaux_tc): the
		 * experts in n_group groups, a token's within topk_group of them. */
		PPI_TRY(ppi_get_int(r, "n_group", false, 1, MAX_EXPERTS, &e->num_groups));
		PPI_TRY(ppi_get_int(r, "topk_group", false, 1, MAX_EXPERTS, &e->group_topk));
		if (e->num_groups == 0 || e->group_topk == 0)
			e->num_groups = e->group_topk = 0;
		if (e->top_k > e->num_experts)
			return ppi_fail(r->err, r->source, "num_experts_per_tok",
			                "expected 1..%d (n_routed_experts), got %d", e->num_experts,
			                e->top_k);
		PPI_TRY(
		    hf_moe_pattern(r, &s, k > 0 ? "first_k_dense_replace" : "moe_layer_freq", m));
	}
	/* num_nextn_predict_layers (V3's multi-token-prediction module, 14B for
	 * V3) is not counted: it is not part of the 671B main model and plans that
	 * train with MTP must add it themselves. */
	bool all_moe =
	    m->moe.num_experts > 0 && m->moe.first_k_dense == 0 && m->moe.layer_freq == 1;
	PPI_TRY(ppi_get_int(r, "intermediate_size", !all_moe, 1, MAX_FFN, &m->ffn_hidden));
	m->tied_embeddings = false;
	PPI_TRY(ppi_get_bool(r, "tie_word_embeddings", false, &m->tied_embeddings));
	m->gated_mlp = true;
	m->norm = PP_NORM_RMSNORM;
	m->position = PP_POS_ROPE;
	return PP_OK;
}

/* Llama-like decoders: llama, mistral, mixtral, qwen2(_moe), qwen3(_moe), gemma. */
static pp_status hf_read_llama_like(const ppi_obj *r, hf_family fam, pp_model *m)
{
	m->num_kv_heads = m->num_heads;
	PPI_TRY(ppi_get_int(r, "num_key_value_heads", false, 1, MAX_HEADS, &m->num_kv_heads));
	if (m->num_kv_heads > m->num_heads || m->num_heads % m->num_kv_heads != 0)
		return ppi_fail(r->err, r->source, "num_key_value_heads",
		                "%d key/value heads do not divide %d attention heads",
		                m->num_kv_heads, m->num_heads);
	/* head_dim: Qwen3Config and GemmaConfig default it (128, 256); elsewhere
	 * hidden_size / num_attention_heads unless given (Mistral-NeMo). */
	bool has_head_dim = json_object_get(r->obj, "head_dim") &&
	                    !json_is_null(json_object_get(r->obj, "head_dim"));
	if (fam == HF_QWEN3 || fam == HF_QWEN3_MOE)
		m->head_dim = 128;
	else if (fam == HF_GEMMA)
		m->head_dim = 256;
	else if (!has_head_dim && m->hidden % m->num_heads != 0)
		return ppi_fail(r->err, r->source, "num_attention_heads",
		                "%d heads do not divide hidden_size %d; give head_dim",
		                m->num_heads, m->hidden);
	else
		m->head_dim = m->hidden / m->num_heads;
	PPI_TRY(ppi_get_int(r, "head_dim", false, 1, MAX_HEADS, &m->head_dim));

	m->gated_mlp = true;
	m->norm = PP_NORM_RMSNORM;
	m->position = PP_POS_ROPE;
	m->tied_embeddings = fam == HF_GEMMA;
	PPI_TRY(ppi_get_bool(r, "tie_word_embeddings", false, &m->tied_embeddings));

	/* Biases.  Qwen2 hard-codes a bias on q, k and v.  Elsewhere attention_bias
	 * puts one on q, k, v and o and mlp_bias on the MLP; paraplan counts the
	 * qkv biases, and all biases when both are set (the o-projection bias alone,
	 * hidden_size per layer, is not counted). */
	bool attn_bias = fam == HF_QWEN2 || fam == HF_QWEN2_MOE, mlp_bias = false;
	if (fam != HF_QWEN2 && fam != HF_QWEN2_MOE)
		PPI_TRY(ppi_get_bool(r, "attention_bias", false, &attn_bias));
	PPI_TRY(ppi_get_bool(r, "mlp_bias", false, &mlp_bias));
	m->linear_bias = attn_bias && mlp_bias;
	m->qkv_bias = attn_bias && !mlp_bias;
	m->qk_norm = fam == HF_QWEN3 || fam == HF_QWEN3_MOE;

	bool moe = fam == HF_MIXTRAL || fam == HF_QWEN2_MOE || fam == HF_QWEN3_MOE;
	if (fam == HF_MIXTRAL) {
		/* Every layer is MoE; intermediate_size is the size of one expert. */
		pp_moe *e = &m->moe;
		PPI_TRY(ppi_get_int(r, "num_local_experts", true, 1, MAX_EXPERTS, &e->num_experts));
		PPI_TRY(ppi_get_int(r, "num_experts_per_tok", true, 1, MAX_EXPERTS, &e->top_k));
		PPI_TRY(
		    ppi_get_int(r, "intermediate_size", true, 1, MAX_FFN, &e->expert_ffn_hidden));
		m->ffn_hidden = e->expert_ffn_hidden;
		e->layer_freq = 1;
		if (e->top_k > e->num_experts)
			return ppi_fail(r->err, r->source, "num_experts_per_tok",
			                "expected 1..%d (num_local_experts), got %d",
			                e->num_experts, e->top_k);
	} else if (moe) {
		pp_moe *e = &m->moe;
		PPI_TRY(ppi_get_int(r, "num_experts", true, 1, MAX_EXPERTS, &e->num_experts));
		PPI_TRY(ppi_get_int(r, "num_experts_per_tok", true, 1, MAX_EXPERTS, &e->top_k));
		PPI_TRY(ppi_get_int(r, "moe_intermediate_size", true, 1, MAX_FFN,
		                    &e->expert_ffn_hidden));
		if (e->top_k > e->num_experts)
			return ppi_fail(r->err, r->source, "num_experts_per_tok",
			                "expected 1..%d (num_experts), got %d", e->num_experts,
			                e->top_k);
		if (fam == HF_QWEN2_MOE) {
			/* One shared expert of shared_expert_intermediate_size behind a
			 * sigmoid gate (hidden_size x 1). */
			PPI_TRY(ppi_get_int(r, "shared_expert_intermediate_size", true, 0, MAX_FFN,
			                    &e->shared_ffn_hidden));
			e->num_shared_experts = e->shared_ffn_hidden > 0 ? 1 : 0;
			e->shared_expert_gate = e->shared_ffn_hidden > 0;
		}
		/* norm_topk_prob, router_aux_loss_coef, ... do not change the shape. */
		int freq = 1;
		PPI_TRY(ppi_get_int(r, "decoder_sparse_step", false, 1, MAX_LAYERS, &freq));
		static const hf_moe_layers zero;
		hf_moe_layers s = zero;
		s.fam = fam;
		s.freq = freq;
		bool mlp_only;
		PPI_TRY(hf_mlp_only_layers(r, m->num_layers, s.mlp_only, &mlp_only));
		PPI_TRY(
		    hf_moe_pattern(r, &s, mlp_only ? "mlp_only_layers" : "decoder_sparse_step", m));
	}
	bool all_moe =
	    m->moe.num_experts > 0 && m->moe.first_k_dense == 0 && m->moe.layer_freq == 1;
	/* intermediate_size is the dense MLP: required unless every layer is MoE. */
	if (fam != HF_MIXTRAL)
		PPI_TRY(ppi_get_int(r, "intermediate_size", !all_moe, 1, MAX_FFN, &m->ffn_hidden));
	return PP_OK;
}

pp_status ppi_model_read_hf(json_t *obj, const char *source, pp_model *out, pp_error *err)
{
	pp_model m;
	memset(&m, 0, sizeof m);
	ppi_obj r = {obj, source, "", err};
	hf_family fam = HF_LLAMA;
	PPI_TRY(hf_family_of(&r, &fam));
	PPI_TRY(hf_name(&r, fam, &m));
	ppi_strlcpy(m.source, source ? source : "", sizeof m.source);

	switch (fam) {
	case HF_GPT2: PPI_TRY(hf_read_gpt2(&r, &m)); break;
	case HF_GPT_NEOX: PPI_TRY(hf_read_neox(&r, &m)); break;
	default:
		PPI_TRY(ppi_get_int(&r, "num_hidden_layers", true, 1, MAX_LAYERS, &m.num_layers));
		PPI_TRY(ppi_get_int(&r, "hidden_size", true, 1, MAX_HIDDEN, &m.hidden));
		PPI_TRY(ppi_get_int(&r, "num_attention_heads", true, 1, MAX_HEADS, &m.num_heads));
		PPI_TRY(ppi_get_int(&r, "vocab_size", true, 1, MAX_VOCAB, &m.vocab));
		/* Only used for learned positions; read to check its type. */
		PPI_TRY(ppi_get_int(&r, "max_position_embeddings", false, 1, MAX_POSITIONS,
		                    &m.max_position));
		if (fam == HF_DEEPSEEK_V2 || fam == HF_DEEPSEEK_V3)
			PPI_TRY(hf_read_deepseek(&r, fam, &m));
		else
			PPI_TRY(hf_read_llama_like(&r, fam, &m));
		break;
	}

	/* What is left is a bug here or a combination the readers above let
	 * through; report it against the file. */
	pp_status st = pp_model_check(&m, err);
	if (st != PP_OK) {
		if (err)
			ppi_strlcpy(err->source, source ? source : "", sizeof err->source);
		return st;
	}
	*out = m;
	return PP_OK;
}
