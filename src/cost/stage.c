/*
 * Per-stage cost: sum the seconds of a stage's operations and collectives,
 * deciding what communication is exposed.  This file is the memoised cost of
 * a rank (ppi_stage_cost, the search's hot path: the layer memo, the stage
 * memo, the layers' floor); the overlap rules are in stage_rules.c, the
 * stage-level entries in stage_entries.c, the kept profile in
 * stage_profile.c (stage_int.h lists who owns what).
 */
#include <stdint.h>
#include <string.h>

#include "paraplan/schedule_type.h"
#include "stage_int.h"
#include "util/hash.h"
#include "util/util.h"
#include "workload/workload_int.h"

/* The memo's slots: a dense layer, an MoE layer, the embedding, the head. */
enum {
	SLOT_DENSE = 0,
	SLOT_MOE = 1,
	SLOT_EMBEDDING = 2,
	SLOT_HEAD = 3,
	SLOT_FROZEN = 4 /* + the kind: a layer below --freeze layers:N */
};

/* One unit (a layer of kind `slot` with index `layer`, the embedding or the
 * head), from the workspace's memo when nothing that shapes it changed. */
static void unit_cost(acc *one, const pp_model *m, const pp_system *s, const pp_job *job,
                      const pp_plan *p, const pp_layout *lay, int layer, int slot, pp_work *ws)
{
	/* the slot is the unit's kind: the key is the layer's (the embedding
	 * and the head read no more) */
	ppi_layer_key k;
	ppi_layer_key_set(&k, m, s, job, p, lay);
	ppi_layer_key_ft(&k, job, layer);
	_Static_assert(sizeof k <= sizeof ws->cache_key[0], "memo key does not fit");
	_Static_assert(sizeof *one <= sizeof ws->cache[0], "memo value does not fit");
	if (ws->cache_valid[slot] && ppi_key_equal(ws->cache_key[slot], &k, sizeof k)) {
		memcpy(one, ws->cache[slot], sizeof *one);
		return;
	}
	memset(one, 0, sizeof *one);
	pp_profile_unit unit;
	switch (slot) {
	case SLOT_EMBEDDING:
		pp_embedding_work(m, job, p, ws);
		unit = PP_UNIT_EMBEDDING;
		break;
	case SLOT_HEAD:
		pp_head_work(m, job, p, ws);
		unit = PP_UNIT_HEAD;
		break;
	default:
		pp_layer_work(m, job, p, layer, ws);
		unit = slot == SLOT_MOE || slot == SLOT_FROZEN + 1 ? PP_UNIT_MOE_LAYERS
		                                                   : PP_UNIT_DENSE_LAYERS;
		break;
	}
	ppi_stage_acc_work(one, ws, s, job, lay, unit, ppi_moe_host_sync(s, p));
	memcpy(ws->cache_key[slot], &k, sizeof k);
	memcpy(ws->cache[slot], one, sizeof *one);
	ws->cache_valid[slot] = true;
}

/*
 * A floor under the compute seconds of one micro-batch on pipeline rank
 * `stage`: its transformer layers' operation seconds (every phase, recompute
 * included), each layer kind once from the memo and scaled by its count.
 * ppi_stage_cost adds the embedding, the head and the communication, all
 * >= 0, to the same memoised per-layer sums, so its fwd_compute_s +
 * bwd_compute_s is never below this (up to rounding).  It reads the same memo
 * (and fills it for the ppi_stage_cost that follows), so it stays a floor
 * whatever rates pp_op_time uses.  Allocates nothing.
 *
 * *comm_s: the same layers' part of what `finish` makes tp_s + cp_s + ep_s:
 * exposed n_1 traffic (times the share tp_overlap leaves), n_2 gathers and
 * SUMMA's panels, exposed CP and EP traffic (less, under --ep-overlap, what
 * pairing every forward with a backward would hide: ppi_stage_finish pairs
 * fewer).
 * Each is a sum of non-negative per-unit terms over the stage's units (the
 * layers, and the embedding and head besides), so the layers' part is below
 * the stage's; the CP ring's exposed steps, which finish adds, are >= 0 and
 * left out.  fwd_s + bwd_s = the compute plus tp_s + cp_s + ep_s + zero3_s,
 * so compute + *comm_s is below it.  A share below 0 (a hiding fraction above
 * 1) would make tp_s negative: *comm_s is then 0.
 */
double ppi_stage_layers_compute(const pp_scenario *sc, int stage, pp_work *ws, double *comm_s)
{
	return ppi_stage_layers_compute_fwd(sc, stage, ws, comm_s, NULL);
}

double ppi_stage_layers_compute_fwd(const pp_scenario *sc, int stage, pp_work *ws, double *comm_s,
                                    double *fwd_s)
{
	ppi_stage_kinds k;
	ppi_scenario_stage_kinds(sc, stage, &k);
	const pp_plan *p = &sc->plan;
	const pp_system *s = sc->system;
	double ftp = p->tp_overlap ? 1 - s->tp_overlap_hidden : 1;
	bool pairs = ppi_ep_pairs(p, s);
	double sum = 0, comm = 0, fwd = 0;
	for (int u = 0; u < 4; u++) {
		int i = u % 2, n = u < 2 ? k.counts[i] - k.frozen[i] : k.frozen[i];
		if (n <= 0)
			continue;
		acc one;
		unit_cost(&one, sc->model, s, sc->job, p, sc->place.group,
		          u < 2 ? k.index[i] : k.frozen_index[i], u < 2 ? i : SLOT_FROZEN + i, ws);
		double c = one.compute[0] + one.compute[1] + one.compute[2] + one.compute[3];
		sum += c * n;
		fwd += one.compute[PP_PHASE_FWD] * n;
		double x = one.exposed[PP_GROUP_TP2] + one.summa + one.exposed[PP_GROUP_CP];
		/* every forward paired: the most the pairing can hide */
		double ep = one.exposed[PP_GROUP_EP] - (pairs ? one.ep_pair_hidden : 0);
		x += one.exposed[PP_GROUP_TP] * ftp + (ep > 0 ? ep : 0);
		comm += x * n;
	}
	if (comm_s)
		*comm_s = ftp >= 0 ? comm : 0;
	if (fwd_s)
		*fwd_s = fwd;
	return sum;
}

/* The rank holding the LM head, from the schedule's placement (the last,
 * or under DHelix's U the first, next to the embedding; schedule_type.h),
 * looked up once per plan by the scenario. */
static int head_stage(const pp_scenario *sc)
{
	return sc->head_stage;
}

/* The layer kinds of pipeline rank `stage` and the parameters this GPU owns
 * (dense, expert, embedding), from the scenario. */
void ppi_stage_layers(const pp_scenario *sc, int stage, stage_ctx *c)
{
	const pp_model *m = sc->model;
	const pp_plan *p = &sc->plan;
	memset(c, 0, sizeof *c);
	c->layer_kind_max = -1;
	ppi_scenario_stage_kinds(sc, stage, &c->k);
	for (int k = 0; k < 2; k++) {
		if (!c->k.counts[k])
			continue;
		const ppi_layer_kind *x = &sc->kind[k];
		c->dense_params += x->mine * c->k.counts[k];
		c->expert_params += x->mine_e * c->k.counts[k];
		if (x->mine + x->mine_e > c->layer_params_max) {
			c->layer_params_max = x->mine + x->mine_e;
			c->layer_kind_max = k;
		}
	}
	c->emb = (double)m->vocab * m->hidden / p->tp; /* vocab-parallel over n_1 */
	if (stage == 0)
		c->emb_params += c->emb;
	if (stage == head_stage(sc) && (!m->tied_embeddings || head_stage(sc) != 0))
		c->emb_params += c->emb;
	c->dense_params += c->emb_params;
	ppi_scenario_stage_train(sc, stage, &c->k, &c->train);
	/* The position table and the norms outside the layers have gradients and
	 * optimizer state too (replicated over TP, as the memory model holds). */
	if (stage == 0)
		c->dense_params += sc->first_extra_params;
	if (stage == head_stage(sc))
		c->dense_params += sc->head_extra_params;
}

pp_status ppi_stage_overflow_fail(pp_error *err)
{
	ppi_fail(err, "", "workload",
	         "internal: a layer has more operations than PP_MAX_OPS/PP_MAX_COLLS hold");
	return PP_EINTERNAL;
}

pp_status pp_stage_cost(const pp_model *m, const pp_system *s, const pp_job *job, const pp_plan *p,
                        int stage, pp_work *ws, pp_stage_time *out, pp_error *err)
{
	pp_scenario sc;
	ppi_scenario_init(&sc, m, s, job, p, 0);
	return ppi_stage_cost(&sc, stage, ws, out, err);
}

pp_status pp_scenario_cost(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_time *out,
                           pp_error *err)
{
	return ppi_stage_cost(sc, stage, ws, out, err);
}

/*
 * Everything ppi_stage_cost reads: the inputs (by address, as the layer memo
 * keys them, and the job's fields it reads by value), the resolved plan with
 * its rank order cleared past its end, every group's layout, the rank's layer
 * kinds and the rank.  Two fields are normalised: vp (it shapes a rank's cost
 * only through the layer kinds and indices, which are in the key; with alike
 * layers the index does not shape it either, as the layer memo already
 * holds) and the schedule (read only to place the LM head, which DHelix's
 * wshape moves, and for the last rank's pipeline link).
 */
typedef struct stage_key {
	const void *model, *system, *job;
	double grad_bytes, reduce_bytes;
	int seq, precision, fp8_recipe, optimizer, stage;
	int ft_rank, ft_targets, ft_layers, ft_emb, ft_base, ft_nf4; /* job.ft */
	int head;                                                    /* the schedule's head rank */
	int peer;            /* the other end of the rank's pipeline link */
	int exchange;        /* the schedule's blocking exchanges (p2p_exchange) */
	int ep_pairs;        /* the schedule pairs layers under --ep-overlap (ppi_ep_pairs) */
	int dispatcher;      /* job.moe_dispatcher */
	double param_copies; /* the schedule's parameter copies */
	long long gpus;
	pp_plan plan;
	pp_layout lay[PP_NGROUPS];
	ppi_stage_kinds k;
} stage_key;

static void stage_key_set(stage_key *key, const pp_scenario *sc, int stage,
                          const ppi_stage_kinds *k)
{
	memset(key, 0, sizeof *key);
	key->model = sc->model;
	key->system = sc->system;
	key->job = sc->job;
	key->grad_bytes = sc->job->grad_bytes;
	key->reduce_bytes = ppi_zero3_reduce_bytes(sc->system, sc->job);
	key->seq = sc->job->seq_len;
	key->precision = (int)sc->job->precision;
	key->fp8_recipe = (int)sc->job->fp8_recipe;
	key->optimizer = (int)sc->job->optimizer;
	const pp_finetune *ft = &sc->job->ft;
	key->ft_rank = ft->lora_rank;
	key->ft_targets = (int)ft->lora_targets;
	key->ft_layers = ft->freeze_layers;
	key->ft_emb = ft->freeze_embeddings;
	key->ft_base = ft->freeze_base;
	key->ft_nf4 = ft->nf4;
	key->stage = stage;
	key->gpus = sc->gpus;
	/* field by field: no padding or bytes past the order's end in the key */
	const pp_plan *p = &sc->plan;
	pp_plan *q = &key->plan;
	q->tp = p->tp;
	q->pp = p->pp;
	q->dp = p->dp;
	q->cp = p->cp;
	q->ep = p->ep;
	q->etp = p->etp;
	q->vp = 0;
	q->mbs = p->mbs;
	q->zero = p->zero;
	q->recompute = p->recompute;
	q->sp = p->sp;
	q->flash = p->flash;
	q->tp_overlap = p->tp_overlap;
	q->ep_overlap = p->ep_overlap;
	/* The schedule shapes a stage's cost only through the head's rank, the
	 * parameter copies (schedule_type.h) and the last rank's pipeline link
	 * (the wrap under interleaving): those, not its id, key it. */
	q->schedule = PP_SCHED_1F1B;
	key->head = head_stage(sc);
	key->peer = p->pp > 1 ? ppi_stage_pp_peer(sc, stage) : -1;
	key->param_copies = sc->sched->param_copies;
	key->exchange = sc->sched->p2p_exchange;
	key->ep_pairs = ppi_ep_pairs(p, sc->system);
	key->dispatcher = (int)sc->job->moe_dispatcher;
	q->tp2 = p->tp2;
	q->summa = p->summa;
	q->summa_nb = p->summa_nb;
	for (size_t i = 0; i < sizeof q->order && p->order[i]; i++)
		q->order[i] = p->order[i];
	q->first_stage_layers = p->first_stage_layers;
	q->last_stage_layers = p->last_stage_layers;
	q->embedding_as_layer = p->embedding_as_layer;
	q->loss_as_layer = p->loss_as_layer;
	q->microbatches = p->microbatches;
	memcpy(key->lay, sc->place.group, sizeof key->lay);
	key->k = *k;
	if (sc->uniform_layers)
		key->k.index[0] = key->k.index[1] = 0;
}

/*
 * Rank `stage`'s seconds per micro-batch in blocking neighbour exchanges
 * (stage_time.h's pp_block_s) where the schedule runs them so
 * (p2p_exchange) and the stack blocks (framework.pp_p2p_blocking = k):
 * k one-way transfers of each adjacent link, half its pp_s (an activation
 * one way and a gradient the other, at once on a full-duplex link): the
 * link to the next rank after each forward, to the previous one after each
 * backward; the first and the last rank have one neighbour.  `pp_s` is the
 * rank's own link's (to stage + 1; the last rank's back to p - 2).
 */
static double block_s(const pp_scenario *sc, int stage, pp_work *ws, double pp_s)
{
	const pp_plan *p = &sc->plan;
	double k = sc->system->pp_p2p_blocking;
	if (p->pp <= 1 || !sc->sched->p2p_exchange || k <= 0)
		return 0;
	if (stage == p->pp - 1)
		return k * pp_s / 2;
	double prev = stage > 0 ? ppi_stage_pp_link_s(sc, ws, stage - 1) : 0;
	return k * (prev + pp_s) / 2;
}

pp_status ppi_stage_cost(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_time *out,
                         pp_error *err)
{
	const pp_model *m = sc->model;
	const pp_system *s = sc->system;
	const pp_job *job = sc->job;
	const pp_plan *p = &sc->plan;
	if (stage < 0 || stage >= p->pp)
		return ppi_fail(err, "", "stage", "stage %d is outside 0..%d", stage, p->pp - 1);
	_Static_assert(sizeof(stage_key) <= sizeof ws->stage_key[0], "stage memo key does not fit");
	_Static_assert(sizeof(pp_stage_time) <= sizeof ws->stage_val[0],
	               "stage memo value does not fit");
	memset(out, 0, sizeof *out);
	out->stage = stage;
	const pp_layout *lay = sc->place.group;
	stage_ctx c;
	ppi_stage_layers(sc, stage, &c);
	/* The rank's times from the memo when nothing that shapes them changed. */
	stage_key key;
	unsigned slot = 0;
	if (ws) {
		stage_key_set(&key, sc, stage, &c.k);
		int cls = stage == 0 ? 0 : stage == p->pp - 1 ? 1 : 2;
		slot = (unsigned)(cls * 4 + (p->zero & 3)) % PP_STAGE_MEMO;
		if (ws->stage_valid[slot] && ppi_key_equal(ws->stage_key[slot], &key, sizeof key)) {
			memcpy(out, ws->stage_val[slot], sizeof *out);
			return PP_OK;
		}
	}
	acc a;
	memset(&a, 0, sizeof a);
	/* Each unit once, from the memo; layers scaled by their count. */
	for (int u = 0; u < 4; u++) {
		int k = u % 2, n = u < 2 ? c.k.counts[k] - c.k.frozen[k] : c.k.frozen[k];
		if (n <= 0)
			continue;
		acc one;
		unit_cost(&one, m, s, job, p, lay, u < 2 ? c.k.index[k] : c.k.frozen_index[k],
		          u < 2 ? k : SLOT_FROZEN + k, ws);
		ppi_stage_acc_add(&a, &one, n);
	}
	if (stage == 0) {
		acc one;
		unit_cost(&one, m, s, job, p, lay, -1, SLOT_EMBEDDING, ws);
		ppi_stage_acc_add(&a, &one, 1);
	}
	if (stage == head_stage(sc)) {
		acc one;
		unit_cost(&one, m, s, job, p, lay, -1, SLOT_HEAD, ws);
		ppi_stage_acc_add(&a, &one, 1);
	}
	pp_profile_entry buf[32];
	ebuf b = {buf, 0, 32, false};
	if (a.overflow)
		return ppi_stage_overflow_fail(err);
	ppi_stage_entries(&b, sc, stage, &c, ws);
	if (b.overflow)
		return ppi_stage_overflow_fail(err);
	ppi_stage_finish(out, &a, buf, 0, b.n, s, p, c.k.layers);
	out->pp_block_s = block_s(sc, stage, ws, out->pp_s);
	if (ws) {
		memcpy(ws->stage_key[slot], &key, sizeof key);
		memcpy(ws->stage_val[slot], out, sizeof *out);
		ws->stage_valid[slot] = true;
	}
	return PP_OK;
}
