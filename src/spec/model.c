/*
 * Models: parameter counting, range checks and paraplan's model JSON.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spec_int.h"

/* ---------------------------------------------------------- parameters */

static double norm_params(const pp_model *m, double width)
{
	return m->norm == PP_NORM_LAYERNORM ? 2.0 * width : width;
}

bool pp_model_layer_is_moe(const pp_model *m, int layer)
{
	if (m->moe.num_experts <= 0 || layer < m->moe.first_k_dense)
		return false;
	int freq = m->moe.layer_freq > 0 ? m->moe.layer_freq : 1;
	/* Qwen2-MoE's decoder_sparse_step convention: layer i is sparse when
	 * (i + 1) % freq == 0 after the dense prefix (the HF reader converts
	 * DeepSeek's i % moe_layer_freq == 0 into this form). */
	return ((layer - m->moe.first_k_dense + 1) % freq) == 0;
}

static void attention_params(const pp_model *m, double *total, double *replicated)
{
	double h = m->hidden, H = m->num_heads;
	double t = 0, r = 0;
	if (m->mla.kv_lora_rank > 0) {
		const pp_mla *a = &m->mla;
		double qk = a->qk_nope_head_dim + a->qk_rope_head_dim;
		if (a->q_lora_rank > 0) {
			/* Down projection and its norm are duplicated on TP ranks (Megatron MLA). */
			double down = h * a->q_lora_rank + a->q_lora_rank;
			t += down + (double)a->q_lora_rank * H * qk;
			r += down;
		} else {
			t += h * H * qk;
		}
		double kv_down = h * (a->kv_lora_rank + a->qk_rope_head_dim) + a->kv_lora_rank;
		t += kv_down + (double)a->kv_lora_rank * H * (a->qk_nope_head_dim + a->v_head_dim);
		r += kv_down;
		t += H * a->v_head_dim * h;
	} else {
		double d = m->head_dim, kv = m->num_kv_heads;
		t += h * H * d + 2.0 * h * kv * d + H * d * h;
		if (m->linear_bias || m->qkv_bias)
			t += H * d + 2.0 * kv * d;
		if (m->linear_bias) {
			t += h; /* output projection bias: row-parallel, so replicated */
			r += h;
		}
		if (m->qk_norm) {
			t += 2.0 * d;
			r += 2.0 * d;
		}
	}
	double n = norm_params(m, h);
	t += n;
	r += n;
	*total = t;
	*replicated = r;
}

static double mlp_matrices(const pp_model *m, double ffn)
{
	return (m->gated_mlp ? 3.0 : 2.0) * m->hidden * ffn;
}

void pp_model_layer_params(const pp_model *m, int layer, pp_layer_params *out)
{
	memset(out, 0, sizeof *out);
	double h = m->hidden;
	attention_params(m, &out->attention, &out->replicated);
	double n = norm_params(m, h);
	if (pp_model_layer_is_moe(m, layer)) {
		const pp_moe *e = &m->moe;
		double router = h * e->num_experts + (e->router_bias ? e->num_experts : 0);
		double shared =
		    e->shared_ffn_hidden > 0 ? mlp_matrices(m, e->shared_ffn_hidden) : 0;
		double gate = e->shared_expert_gate ? h : 0;
		out->mlp = n + router + shared + gate;
		out->replicated += n + router + gate;
		out->experts = (double)e->num_experts * mlp_matrices(m, e->expert_ffn_hidden);
	} else {
		double mlp = mlp_matrices(m, m->ffn_hidden);
		if (m->linear_bias) {
			mlp += (m->gated_mlp ? 2.0 : 1.0) * m->ffn_hidden + h;
			out->replicated += h; /* second-linear bias is row-parallel */
		}
		out->mlp = n + mlp;
		out->replicated += n;
	}
}

void pp_model_params(const pp_model *m, pp_param_count *out)
{
	memset(out, 0, sizeof *out);
	double h = m->hidden;
	out->embedding = (double)m->vocab * h;
	if (m->position == PP_POS_LEARNED)
		out->embedding += (double)m->max_position * h;
	if (m->embedding_norm)
		out->embedding += norm_params(m, h);
	out->lm_head = m->tied_embeddings ? 0.0 : (double)m->vocab * h;
	out->final_norm = norm_params(m, h);
	/* A layer's parameters depend only on whether it is MoE: count each kind once. */
	pp_layer_params kinds[2];
	bool have[2] = {false, false};
	for (int l = 0; l < m->num_layers; l++) {
		int k = pp_model_layer_is_moe(m, l);
		if (!have[k]) {
			pp_model_layer_params(m, l, &kinds[k]);
			have[k] = true;
		}
		const pp_layer_params lp = kinds[k];
		out->attention += lp.attention;
		if (k) {
			const pp_moe *e = &m->moe;
			double router = h * e->num_experts + (e->router_bias ? e->num_experts : 0);
			out->moe_router += router;
			out->moe_shared += lp.mlp - router - norm_params(m, h);
			out->dense_mlp += norm_params(m, h); /* the MLP-side norm */
			out->moe_routed += lp.experts;
		} else {
			out->dense_mlp += lp.mlp;
		}
	}
	out->total = out->embedding + out->lm_head + out->final_norm + out->attention +
	             out->dense_mlp + out->moe_router + out->moe_shared + out->moe_routed;
	out->active = out->total - out->moe_routed;
	if (m->moe.num_experts > 0)
		out->active += out->moe_routed * m->moe.top_k / m->moe.num_experts;
}

/* ---------------------------------------------------------------- check */

#define CHECK(cond, field, ...)                                                                    \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return ppi_fail(err, m->name[0] ? m->name : "model", field, __VA_ARGS__);  \
	} while (0)

pp_status pp_model_check(const pp_model *m, pp_error *err)
{
	CHECK(m->num_layers >= 1 && m->num_layers <= 10000, "model.num_layers",
	      "expected 1..10000, got %d", m->num_layers);
	CHECK(m->hidden >= 1 && m->hidden <= 1048576, "model.hidden_size",
	      "expected 1..1048576, got %d", m->hidden);
	CHECK(m->num_heads >= 1 && m->num_heads <= 65536, "model.num_attention_heads",
	      "expected 1..65536, got %d", m->num_heads);
	CHECK(m->vocab >= 1 && m->vocab <= 100000000, "model.vocab_size",
	      "expected 1..100000000, got %d", m->vocab);
	if (m->mla.kv_lora_rank > 0) {
		CHECK(m->mla.qk_rope_head_dim >= 0 && m->mla.qk_nope_head_dim >= 1 &&
		          m->mla.v_head_dim >= 1,
		      "model.mla", "qk_nope_head_dim and v_head_dim must be positive");
	} else {
		CHECK(m->num_kv_heads >= 1 && m->num_kv_heads <= m->num_heads, "model.num_kv_heads",
		      "expected 1..%d (the number of attention heads), got %d", m->num_heads,
		      m->num_kv_heads);
		CHECK(m->num_heads % m->num_kv_heads == 0, "model.num_kv_heads",
		      "%d key/value heads do not divide %d attention heads", m->num_kv_heads,
		      m->num_heads);
		CHECK(m->head_dim >= 1 && m->head_dim <= 65536, "model.head_dim",
		      "expected 1..65536, got %d", m->head_dim);
	}
	bool all_moe =
	    m->moe.num_experts > 0 && m->moe.first_k_dense == 0 && m->moe.layer_freq <= 1;
	if (!all_moe)
		CHECK(m->ffn_hidden >= 1 && m->ffn_hidden <= 16777216, "model.ffn_hidden_size",
		      "expected 1..16777216, got %d", m->ffn_hidden);
	if (m->position == PP_POS_LEARNED)
		CHECK(m->max_position >= 1 && m->max_position <= 100000000,
		      "model.max_position_embeddings",
		      "learned positions need a table size in 1..100000000, got %d",
		      m->max_position);
	if (m->moe.num_experts > 0) {
		const pp_moe *e = &m->moe;
		CHECK(e->num_experts <= 65536, "model.moe.num_experts", "expected 1..65536, got %d",
		      e->num_experts);
		CHECK(e->top_k >= 1 && e->top_k <= e->num_experts, "model.moe.top_k",
		      "expected 1..%d (the number of experts), got %d", e->num_experts, e->top_k);
		CHECK(e->expert_ffn_hidden >= 1, "model.moe.expert_ffn_hidden_size",
		      "expected a positive integer, got %d", e->expert_ffn_hidden);
		CHECK(e->first_k_dense >= 0 && e->first_k_dense < m->num_layers,
		      "model.moe.first_k_dense", "expected 0..%d, got %d", m->num_layers - 1,
		      e->first_k_dense);
		CHECK(e->layer_freq >= 1 && e->layer_freq <= m->num_layers, "model.moe.layer_freq",
		      "expected 1..%d, got %d", m->num_layers, e->layer_freq);
		CHECK(e->num_groups >= 0 &&
		          (e->num_groups == 0 || e->num_experts % e->num_groups == 0),
		      "model.moe.num_groups", "expected a divisor of the %d experts, got %d",
		      e->num_experts, e->num_groups);
		CHECK(e->num_groups == 0 ? e->group_topk == 0
		                         : e->group_topk >= 1 && e->group_topk <= e->num_groups,
		      "model.moe.group_topk", "expected 1..%d (num_groups) with num_groups, got %d",
		      e->num_groups, e->group_topk);
	}
	return PP_OK;
}
#undef CHECK

/* ----------------------------------------------------------------- JSON */

static const char *const model_keys[] = {"name",
                                         "aliases",
                                         "source",
                                         "sources",
                                         "notes",
                                         "published_params",
                                         "num_layers",
                                         "hidden_size",
                                         "num_attention_heads",
                                         "num_kv_heads",
                                         "head_dim",
                                         "ffn_hidden_size",
                                         "vocab_size",
                                         "max_position_embeddings",
                                         "gated_mlp",
                                         "tied_embeddings",
                                         "linear_bias",
                                         "qkv_bias",
                                         "qk_norm",
                                         "dropout",
                                         "parallel_block",
                                         "embedding_norm",
                                         "norm",
                                         "position",
                                         "moe",
                                         "mla",
                                         NULL};
static const char *const moe_keys[] = {"num_experts",
                                       "top_k",
                                       "expert_ffn_hidden_size",
                                       "num_shared_experts",
                                       "shared_ffn_hidden_size",
                                       "shared_expert_gate",
                                       "first_k_dense",
                                       "layer_freq",
                                       "router_bias",
                                       "num_groups",
                                       "group_topk",
                                       NULL};
static const char *const mla_keys[] = {"q_lora_rank",      "kv_lora_rank", "qk_nope_head_dim",
                                       "qk_rope_head_dim", "v_head_dim",   NULL};

static pp_status read_enum(const ppi_obj *r, const char *key, const char *const *names, int count,
                           int *out)
{
	char s[32] = "";
	pp_status st = ppi_get_str(r, key, false, s, sizeof s);
	if (st || !s[0])
		return st;
	for (int i = 0; i < count; i++)
		if (ppi_streq(s, names[i])) {
			*out = i;
			return PP_OK;
		}
	char path[PP_ERROR_FIELD_MAX], list[160] = "";
	for (int i = 0; i < count; i++) {
		strncat(list, names[i], sizeof list - strlen(list) - 1);
		if (i + 1 < count)
			strncat(list, i + 2 == count ? " or " : ", ",
			        sizeof list - strlen(list) - 1);
	}
	return ppi_fail(r->err, r->source, ppi_obj_path(r, key, path, sizeof path),
	                "expected %s, got \"%s\"", list, s);
}

pp_status ppi_model_read(json_t *obj, const char *source, const char *prefix, pp_model *out,
                         pp_error *err)
{
	pp_model m;
	memset(&m, 0, sizeof m);
	ppi_obj r = {obj, source, prefix, err};
	PPI_TRY(ppi_obj_keys(&r, model_keys));
	PPI_TRY(ppi_get_str(&r, "name", true, m.name, sizeof m.name));
	PPI_TRY(ppi_get_str(&r, "source", false, m.source, sizeof m.source));
	PPI_TRY(ppi_get_num(&r, "published_params", false, 0, 1e16, &m.published_params));
	PPI_TRY(ppi_get_int(&r, "num_layers", true, 1, 10000, &m.num_layers));
	PPI_TRY(ppi_get_int(&r, "hidden_size", true, 1, 1048576, &m.hidden));
	PPI_TRY(ppi_get_int(&r, "num_attention_heads", true, 1, 65536, &m.num_heads));
	m.num_kv_heads = m.num_heads;
	PPI_TRY(ppi_get_int(&r, "num_kv_heads", false, 1, 65536, &m.num_kv_heads));
	m.head_dim = m.hidden / m.num_heads;
	if (m.hidden % m.num_heads != 0 && !json_object_get(obj, "head_dim")) {
		char path[PP_ERROR_FIELD_MAX];
		return ppi_fail(
		    err, source, ppi_obj_path(&r, "num_attention_heads", path, sizeof path),
		    "%d heads do not divide hidden_size %d; give head_dim", m.num_heads, m.hidden);
	}
	PPI_TRY(ppi_get_int(&r, "head_dim", false, 1, 65536, &m.head_dim));
	PPI_TRY(ppi_get_int(&r, "ffn_hidden_size", false, 1, 16777216, &m.ffn_hidden));
	PPI_TRY(ppi_get_int(&r, "vocab_size", true, 1, 100000000, &m.vocab));
	PPI_TRY(ppi_get_int(&r, "max_position_embeddings", false, 1, 100000000, &m.max_position));
	PPI_TRY(ppi_get_bool(&r, "gated_mlp", false, &m.gated_mlp));
	PPI_TRY(ppi_get_bool(&r, "tied_embeddings", false, &m.tied_embeddings));
	PPI_TRY(ppi_get_bool(&r, "linear_bias", false, &m.linear_bias));
	PPI_TRY(ppi_get_bool(&r, "qkv_bias", false, &m.qkv_bias));
	PPI_TRY(ppi_get_bool(&r, "qk_norm", false, &m.qk_norm));
	PPI_TRY(ppi_get_bool(&r, "dropout", false, &m.dropout));
	PPI_TRY(ppi_get_bool(&r, "parallel_block", false, &m.parallel_block));
	PPI_TRY(ppi_get_bool(&r, "embedding_norm", false, &m.embedding_norm));
	static const char *const norms[] = {"rmsnorm", "layernorm"};
	static const char *const poss[] = {"rope", "learned", "alibi"};
	int e = (int)m.norm;
	PPI_TRY(read_enum(&r, "norm", norms, 2, &e));
	m.norm = (pp_norm)e;
	e = (int)m.position;
	PPI_TRY(read_enum(&r, "position", poss, 3, &e));
	m.position = (pp_position)e;

	char sub[PP_ERROR_FIELD_MAX];
	json_t *moe = NULL, *mla = NULL;
	PPI_TRY(ppi_get_obj(&r, "moe", false, &moe));
	if (moe) {
		ppi_obj q = {moe, source, ppi_obj_path(&r, "moe", sub, sizeof sub), err};
		PPI_TRY(ppi_obj_keys(&q, moe_keys));
		PPI_TRY(ppi_get_int(&q, "num_experts", true, 1, 65536, &m.moe.num_experts));
		PPI_TRY(ppi_get_int(&q, "top_k", true, 1, 65536, &m.moe.top_k));
		PPI_TRY(ppi_get_int(&q, "expert_ffn_hidden_size", true, 1, 16777216,
		                    &m.moe.expert_ffn_hidden));
		PPI_TRY(ppi_get_int(&q, "num_shared_experts", false, 0, 65536,
		                    &m.moe.num_shared_experts));
		long long shared = (long long)m.moe.num_shared_experts * m.moe.expert_ffn_hidden;
		if (shared > 16777216) {
			char path[PP_ERROR_FIELD_MAX];
			return ppi_fail(err, source,
			                ppi_obj_path(&q, "num_shared_experts", path, sizeof path),
			                "%d shared experts of %d make an MLP wider than 16777216",
			                m.moe.num_shared_experts, m.moe.expert_ffn_hidden);
		}
		m.moe.shared_ffn_hidden = (int)shared;
		PPI_TRY(ppi_get_int(&q, "shared_ffn_hidden_size", false, 0, 16777216,
		                    &m.moe.shared_ffn_hidden));
		PPI_TRY(ppi_get_bool(&q, "shared_expert_gate", false, &m.moe.shared_expert_gate));
		PPI_TRY(ppi_get_int(&q, "first_k_dense", false, 0, 10000, &m.moe.first_k_dense));
		m.moe.layer_freq = 1;
		PPI_TRY(ppi_get_int(&q, "layer_freq", false, 1, 10000, &m.moe.layer_freq));
		PPI_TRY(ppi_get_bool(&q, "router_bias", false, &m.moe.router_bias));
		PPI_TRY(ppi_get_int(&q, "num_groups", false, 0, 65536, &m.moe.num_groups));
		PPI_TRY(ppi_get_int(&q, "group_topk", false, 0, 65536, &m.moe.group_topk));
	}
	PPI_TRY(ppi_get_obj(&r, "mla", false, &mla));
	if (mla) {
		ppi_obj q = {mla, source, ppi_obj_path(&r, "mla", sub, sizeof sub), err};
		PPI_TRY(ppi_obj_keys(&q, mla_keys));
		PPI_TRY(ppi_get_int(&q, "q_lora_rank", false, 0, 1048576, &m.mla.q_lora_rank));
		PPI_TRY(ppi_get_int(&q, "kv_lora_rank", true, 1, 1048576, &m.mla.kv_lora_rank));
		PPI_TRY(
		    ppi_get_int(&q, "qk_nope_head_dim", true, 1, 65536, &m.mla.qk_nope_head_dim));
		PPI_TRY(
		    ppi_get_int(&q, "qk_rope_head_dim", true, 0, 65536, &m.mla.qk_rope_head_dim));
		PPI_TRY(ppi_get_int(&q, "v_head_dim", true, 1, 65536, &m.mla.v_head_dim));
		m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
	}
	/* Semantic checks report against the file, not the model's own name. */
	pp_status st = pp_model_check(&m, err);
	if (st != PP_OK) {
		ppi_strlcpy(err->source, source, sizeof err->source);
		return st;
	}
	*out = m;
	return PP_OK;
}

pp_status pp_model_from_json(const char *text, size_t len, const char *source, pp_model *out,
                             pp_error *err)
{
	json_t *root;
	PPI_TRY(ppi_json_parse_object(text, len, source, &root, err));
	pp_status st = ppi_is_hf_config(root) ? ppi_model_read_hf(root, source, out, err)
	                                      : ppi_model_read(root, source, "", out, err);
	json_decref(root);
	return st;
}

pp_status pp_model_from_hf_json(const char *text, size_t len, const char *source, pp_model *out,
                                pp_error *err)
{
	json_t *root;
	PPI_TRY(ppi_json_parse_object(text, len, source, &root, err));
	pp_status st = ppi_model_read_hf(root, source, out, err);
	json_decref(root);
	return st;
}

pp_status pp_model_load(const char *path, pp_model *out, pp_error *err)
{
	char *text;
	size_t len;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_model_from_json(text, len, path, out, err);
	free(text);
	return st;
}
