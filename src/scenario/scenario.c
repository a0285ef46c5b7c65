/*
 * The resolved scenario: every quantity derived from the inputs, once.
 */
#include <stdlib.h>
#include <string.h>

#include "paraplan/kernel.h"
#include "paraplan/schedule_type.h"
#include "scenario_int.h"
#include "util/util.h"

/* Transformer layers of the first, of every middle and of the last pipeline
 * rank (Megatron-LM's get_num_layers_to_build; pp_plan_check_split has the
 * rules the plan meets): given end counts and an even share of the rest, or
 * an even split of layers + 1 (+ 1) with the embedding (loss) counted as a
 * layer on the first (last) rank, or an even split. */
static void stage_split(const pp_model *m, const pp_plan *p, int *first, int *mid, int *last)
{
	int L = m->num_layers, P = p->pp > 0 ? p->pp : 1;
	if (p->first_stage_layers > 0 || p->last_stage_layers > 0) {
		int given = (p->first_stage_layers > 0) + (p->last_stage_layers > 0);
		int rest = L - p->first_stage_layers - p->last_stage_layers;
		*mid = P > given ? rest / (P - given) : 0;
		*first = p->first_stage_layers > 0 ? p->first_stage_layers : *mid;
		*last = p->last_stage_layers > 0 ? p->last_stage_layers : *mid;
	} else {
		int e = p->embedding_as_layer, l = p->loss_as_layer;
		*mid = (L + e + l) / P;
		*first = *mid - e;
		*last = *mid - l;
	}
}

int pp_stage_layers(const pp_model *m, const pp_plan *plan, int stage)
{
	if (plan->pp <= 1)
		return m->num_layers;
	int first, mid, last;
	stage_split(m, plan, &first, &mid, &last);
	return stage == 0 ? first : stage == plan->pp - 1 ? last : mid;
}

/*
 * The global index of the i-th transformer layer of rank `stage`, its model
 * chunks in order (Megatron-LM's get_transformer_layer_offset).  Model chunk
 * c of rank r is virtual stage k = c pp + r.  With the embedding (loss)
 * counted as a layer every virtual stage has n_v = (L + e + l) / (pp vp)
 * slots, the first one fewer layers (the embedding's slot) and the last one
 * fewer (the loss's), so virtual stage k starts at layer k n_v - e (k > 0).
 * Otherwise each rank splits its layers into vp equal chunks, chunk round c
 * holding layers c L / vp ... with the ranks' chunks in rank order.
 */
static int split_index(const pp_model *m, const pp_plan *p, int first, int mid, int last, int stage,
                       int i)
{
	if (p->pp <= 1)
		return i;
	int v = p->vp > 1 ? p->vp : 1, P = p->pp;
	int e = p->embedding_as_layer, l = p->loss_as_layer;
	if (p->first_stage_layers == 0 && p->last_stage_layers == 0 && (e || l)) {
		int nv = (m->num_layers + e + l) / (P * v);
		for (int c = 0; c < v; c++) {
			int k = c * P + stage;
			int size = nv - (k == 0 ? e : 0) - (k == P * v - 1 ? l : 0);
			if (i < size)
				return k * nv - (k > 0 ? e : 0) + i;
			i -= size;
		}
		return m->num_layers - 1; /* past the rank's layers */
	}
	int n = stage == 0 ? first : stage == P - 1 ? last : mid, chunk_layers = n / v;
	if (chunk_layers < 1)
		return i;
	int chunk = i / chunk_layers, off = i % chunk_layers;
	int before = stage == 0 ? 0 : first / v + (stage - 1) * (mid / v);
	return chunk * (m->num_layers / v) + before + off;
}

int pp_stage_layer_index(const pp_model *m, const pp_plan *p, int stage, int i)
{
	int first, mid, last;
	stage_split(m, p, &first, &mid, &last);
	return split_index(m, p, first, mid, last, stage, i);
}

void ppi_mb_shape_init(ppi_mb_shape *c, const pp_job *job, const pp_plan *p)
{
	c->n2 = p->tp2 > 1 ? p->tp2 : 1;
	c->T = (double)p->mbs * job->seq_len / p->cp / c->n2;
	c->S = job->seq_len;
	c->kv_extra = c->n2 > 1 ? (double)p->mbs * job->seq_len - c->T : 0;
	c->t = p->tp;
	/* SUMMA splits activations over e by n_1: the bytes of SP's l / n_1. */
	c->sd = ((p->sp || p->summa) && p->tp > 1) ? p->tp : 1;
	c->fp8 = job->precision == PP_PREC_FP8;
	c->wb = job->precision == PP_PREC_FP32 ? 4.0 : 2.0;
	c->nb = p->summa_nb > 1 ? p->summa_nb : 1;
	c->ab = pp_activation_bytes(job->precision);
	c->saved_in_b = c->fp8 ? pp_fp8_saved_input_bytes(job->fp8_recipe) : c->ab;
	c->fp8_w_b = 0; /* ppi_scenario_init_ws sets it from the system's GPU */
}

void ppi_scenario_init(pp_scenario *sc, const pp_model *m, const pp_system *s, const pp_job *job,
                       const pp_plan *p, long long gpus)
{
	ppi_scenario_init_ws(sc, m, s, job, p, gpus, NULL);
}

void ppi_scenario_init_ws(pp_scenario *sc, const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *p, long long gpus, pp_place_memo *memo)
{
	sc->model = m;
	sc->system = s;
	sc->job = job;
	sc->plan = *p;
	sc->gpus = gpus;
	if (memo)
		pp_place_build_memo(p, s, memo, &sc->place);
	else
		pp_place_build(p, s, &sc->place);
	ppi_mb_shape_init(&sc->mb, job, p);
	sc->mb.fp8_w_b =
	    sc->mb.fp8 ? pp_fp8_weight_bytes(job->fp8_recipe, s->gpu.compute_capability_x10) : 0;
	sc->etp = p->etp > 0 ? p->etp : p->tp;
	/* Layer weights: split over n_1 and replicated over n_2 under 2D TP; split
	 * over n_1 x n_2 under SUMMA (seed 003 Tables II, A2). */
	sc->weight_split = p->summa ? (double)p->tp * p->tp2 : p->tp;
	/* ZeRO shards over the gradient-reduction group: dp x cp, x tp2 for 2D TP's
	 * replicated weights; experts over the expert-data-parallel ranks. */
	sc->shard_dense = p->dp * p->cp * (p->summa ? 1 : p->tp2);
	sc->shard_expert = (int)((double)p->tp * p->cp * p->dp / ((double)p->ep * sc->etp));
	stage_split(m, p, &sc->split_first, &sc->split_mid, &sc->split_last);
	sc->uniform_layers = m->moe.first_k_dense == 0 && m->moe.layer_freq <= 1;
	/* an unchecked schedule counts as 1F1B, as the memory model always did */
	sc->sched = pp_schedule_type_of(p->schedule);
	if (!sc->sched)
		sc->sched = pp_schedule_type_of(PP_SCHED_1F1B);
	sc->head_stage = sc->sched->head_stage(p);
	double h = m->hidden, norm = m->norm == PP_NORM_LAYERNORM ? 2 * h : h;
	sc->first_extra_params = (m->position == PP_POS_LEARNED ? (double)m->max_position * h : 0) +
	                         (m->embedding_norm ? norm : 0);
	sc->head_extra_params = norm;
	memset(sc->kind, 0, sizeof sc->kind);
	/* A layer's parameters depend only on its kind: work each out once. */
	for (int l = 0; l < m->num_layers; l++) {
		int k = pp_model_layer_is_moe(m, l);
		if (sc->kind[k].have)
			continue;
		pp_layer_params lp;
		pp_model_layer_params(m, l, &lp);
		double split = lp.attention + lp.mlp - lp.replicated;
		ppi_layer_kind *x = &sc->kind[k];
		x->have = true;
		x->index = l;
		x->mine = split / sc->weight_split + lp.replicated;
		x->mine_e = lp.experts / ((double)p->ep * sc->etp);
		x->gemm = split / sc->weight_split + x->mine_e;
		x->lora = pp_finetune_lora_params(job, m, l, p->tp);
		if (sc->kind[0].have && sc->kind[1].have)
			break;
		if (sc->uniform_layers)
			break;
	}
}

/* pp_stage_layer_index from the split the scenario holds (no split worked out
 * again: every stage's memory and cost asks for it). */
static int layer_index(const pp_scenario *sc, int stage, int i)
{
	return split_index(sc->model, &sc->plan, sc->split_first, sc->split_mid, sc->split_last,
	                   stage, i);
}

void ppi_scenario_stage_kinds(const pp_scenario *sc, int stage, ppi_stage_kinds *out)
{
	const pp_plan *p = &sc->plan;
	out->layers = p->pp <= 1           ? sc->model->num_layers
	              : stage == 0         ? sc->split_first
	              : stage == p->pp - 1 ? sc->split_last
	                                   : sc->split_mid;
	out->counts[0] = out->counts[1] = 0;
	out->index[0] = out->index[1] = -1;
	out->frozen[0] = out->frozen[1] = 0;
	out->frozen_index[0] = out->frozen_index[1] = -1;
	int nfrozen = sc->job->ft.freeze_layers;
	for (int i = 0; nfrozen > 0 && i < out->layers; i++) {
		int l = layer_index(sc, stage, i);
		if (l >= nfrozen)
			continue;
		int k = pp_model_layer_is_moe(sc->model, l);
		out->frozen[k]++;
		out->frozen_index[k] = l;
	}
	if (sc->uniform_layers) {
		int k = sc->kind[1].have ? 1 : 0;
		out->counts[k] = out->layers;
		if (out->layers > 0)
			out->index[k] = layer_index(sc, stage, out->layers - 1);
		return;
	}
	for (int i = 0; i < out->layers; i++) {
		int l = layer_index(sc, stage, i);
		int k = pp_model_layer_is_moe(sc->model, l);
		out->counts[k]++;
		out->index[k] = l;
	}
}

void ppi_scenario_stage_train(const pp_scenario *sc, int stage, const ppi_stage_kinds *k,
                              ppi_stage_train *out)
{
	const pp_job *job = sc->job;
	const pp_model *m = sc->model;
	memset(out, 0, sizeof *out);
	bool base = job->ft.freeze_base || job->ft.lora_rank > 0;
	for (int i = 0; i < 2; i++) {
		if (!k->counts[i])
			continue;
		const ppi_layer_kind *x = &sc->kind[i];
		double frozen = base ? k->counts[i] : k->frozen[i];
		double trains = k->counts[i] - k->frozen[i];
		out->frozen_dense += x->mine * frozen;
		out->frozen_experts += x->mine_e * frozen;
		out->frozen_gemm += x->gemm * frozen;
		out->dense += x->mine * (k->counts[i] - frozen);
		out->experts += x->mine_e * (k->counts[i] - frozen);
		if (trains > 0) {
			out->lora += x->lora * trains;
			double per = base ? x->lora : x->mine + x->mine_e + x->lora;
			if (per > out->layer_train_max)
				out->layer_train_max = per;
		}
	}
	out->dense += out->lora;
	/* the embedding, the head and the norms outside the layers */
	double emb = (double)m->vocab * m->hidden / sc->plan.tp, outside = 0;
	if (stage == 0)
		outside += emb + sc->first_extra_params;
	if (stage == sc->head_stage) {
		outside += sc->head_extra_params;
		if (!m->tied_embeddings || sc->head_stage != 0)
			outside += emb;
	}
	if (pp_finetune_embeddings_frozen(job))
		out->frozen_dense += outside;
	else
		out->dense += outside;
}

pp_status pp_scenario_new(const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *plan, long long gpus, pp_scenario **out, pp_error *err)
{
	*out = NULL;
	ppi_scenario_box *b = ppi_malloc(sizeof *b);
	if (!b) {
		ppi_fail(err, "", "scenario", "out of memory");
		return PP_ENOMEM;
	}
	b->model = *m;
	b->system = *s;
	b->job = *job;
	pp_plan p = *plan;
	pp_status st = pp_plan_resolve(&p, &b->model, &b->system, gpus, &b->job, err);
	if (st) {
		free(b);
		return st;
	}
	ppi_scenario_init(&b->sc, &b->model, &b->system, &b->job, &p, gpus);
	*out = &b->sc;
	return PP_OK;
}

void pp_scenario_free(pp_scenario *sc)
{
	/* The scenario is the box's first member. */
	free(sc);
}

const pp_model *pp_scenario_model(const pp_scenario *sc)
{
	return sc->model;
}
const pp_system *pp_scenario_system(const pp_scenario *sc)
{
	return sc->system;
}
const pp_job *pp_scenario_job(const pp_scenario *sc)
{
	return sc->job;
}
const pp_plan *pp_scenario_plan(const pp_scenario *sc)
{
	return &sc->plan;
}
const pp_placement *pp_scenario_placement(const pp_scenario *sc)
{
	return &sc->place;
}
double pp_scenario_microbatch_tokens(const pp_scenario *sc)
{
	return sc->mb.T;
}
int pp_scenario_stage_layers(const pp_scenario *sc, int stage)
{
	if (stage < 0 || stage >= sc->plan.pp)
		return 0;
	ppi_stage_kinds k;
	ppi_scenario_stage_kinds(sc, stage, &k);
	return k.layers;
}
