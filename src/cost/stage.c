/*
 * Per-stage cost: sum the seconds of a stage's operations and collectives,
 * deciding what communication is exposed.
 */
#include <stdint.h>
#include <string.h>

#include "cost_int.h"
#include "paraplan/schedule_type.h"
#include "util/hash.h"
#include "util/util.h"
#include "workload/workload_int.h"

/* Bytes one GPU puts on the wire for a collective of a `bytes` buffer on n GPUs. */
static double wire_bytes(pp_coll_kind kind, double bytes, int n)
{
	if (n <= 1)
		return 0;
	switch (kind) {
	case PP_COLL_ALLREDUCE: return 2.0 * (n - 1) / n * bytes;
	case PP_COLL_ALLGATHER:
	case PP_COLL_REDUCESCATTER: return (double)(n - 1) / n * bytes;
	case PP_COLL_ALLTOALL: return (double)(n - 1) / n * bytes;
	case PP_COLL_BROADCAST:
	case PP_COLL_REDUCE: return (double)(n - 1) / n * bytes; /* all but one forward it */
	case PP_COLL_P2P:
	default: return bytes;
	}
}

typedef struct acc {
	double compute[4]; /* by phase */
	double attn[4];    /* attention-core compute by phase (hides CP traffic) */
	double exposed[PP_NGROUPS];
	double hidden_cp[4]; /* overlappable CP traffic by phase */
	double bytes[PP_NGROUPS];
	double summa; /* exposed SUMMA broadcast/reduce time */
	double model_flops, hw_flops;
	double flops[4]; /* executed FLOPs by phase */
	bool overflow;
} acc;

/* a += n * b */
static void acc_add(acc *a, const acc *b, double n)
{
	for (int i = 0; i < 4; i++) {
		a->compute[i] += n * b->compute[i];
		a->attn[i] += n * b->attn[i];
		a->hidden_cp[i] += n * b->hidden_cp[i];
		a->flops[i] += n * b->flops[i];
	}
	for (int g = 0; g < PP_NGROUPS; g++) {
		a->exposed[g] += n * b->exposed[g];
		a->bytes[g] += n * b->bytes[g];
	}
	a->summa += n * b->summa;
	a->model_flops += n * b->model_flops;
	a->hw_flops += n * b->hw_flops;
	a->overflow |= b->overflow;
}

/* Entries being written: a profile, or scratch for one unit. */
typedef struct ebuf {
	pp_profile_entry *e;
	int n, cap;
	bool overflow;
} ebuf;

#define UNIT_MAX (PP_MAX_OPS + PP_MAX_COLLS)

static pp_profile_entry *entry_new(ebuf *b, const char *name, pp_profile_unit unit, double times)
{
	if (b->n >= b->cap) {
		b->overflow = true;
		return NULL;
	}
	pp_profile_entry *e = &b->e[b->n++];
	memset(e, 0, sizeof *e);
	e->name = name;
	e->unit = unit;
	e->count = 1;
	e->times = times;
	e->panels = 1;
	e->overlap = -1;
	return e;
}

/* The overlap rule of a layer's collective. */
static pp_overlap_rule coll_rule(const pp_coll *c)
{
	if (c->overlap_op >= 0)
		return PP_RULE_SUMMA;
	if (c->group == PP_GROUP_CP && c->overlapped)
		return PP_RULE_CP_RING;
	if (c->overlapped)
		return PP_RULE_HIDDEN; /* e.g. SP's re-gather for wgrad, under the dgrad GEMM */
	if (c->group == PP_GROUP_TP)
		return PP_RULE_TP;
	if (c->group == PP_GROUP_EP || c->group == PP_GROUP_ETP)
		return PP_RULE_EP;
	return PP_RULE_EXPOSED;
}

/* Time one operation of a unit into entry `e` (every field written). */
static void fill_op(pp_profile_entry *e, const pp_op *o, const pp_system *s, const pp_job *job,
                    pp_profile_unit unit, double times)
{
	e->name = o->name;
	e->coll = false;
	e->kind = o->kind;
	e->group = PP_GROUP_TP;
	e->phase = o->phase;
	e->rule = PP_RULE_EXPOSED;
	e->unit = unit;
	e->count = 1;
	e->times = times;
	e->seconds = pp_op_time(&s->gpu, job->precision, o);
	e->flops = o->flops;
	e->bytes = o->bytes;
	e->wire_bytes = 0;
	e->panels = 1;
	e->overlap = -1;
	e->algo = NULL;
}

/* Time one collective of a unit into entry `e`; `base` is the index of the
 * unit's first operation entry (SUMMA panels point at their GEMM). */
static void fill_coll(pp_profile_entry *e, const pp_coll *c, const pp_work *w, const pp_system *s,
                      const pp_layout *lay, pp_profile_unit unit, double times, int base)
{
	const pp_layout *l = &lay[c->group];
	e->name = c->name;
	e->coll = true;
	e->kind = c->kind;
	e->group = c->group;
	e->phase = c->phase;
	e->rule = coll_rule(c);
	e->unit = unit;
	e->count = c->count;
	e->times = times;
	e->flops = 0;
	e->bytes = c->bytes;
	e->wire_bytes = wire_bytes(c->kind, c->bytes, l->size);
	e->panels = 1;
	e->overlap = -1;
	/* the algorithm through a local: `e` itself does not escape to
	 * pp_coll_time, so the search's hot path (acc_work) keeps it in
	 * registers */
	const pp_coll_algo *algo;
	if (e->rule == PP_RULE_SUMMA && c->overlap_op < w->nops) {
		e->panels = c->panels >= 1 ? c->panels : 1;
		e->overlap = base + c->overlap_op;
		e->seconds = pp_coll_time(s, l, c->kind, c->bytes / e->panels, &algo);
	} else {
		if (e->rule == PP_RULE_SUMMA)
			e->rule = PP_RULE_EXPOSED;
		e->seconds = pp_coll_time(s, l, c->kind, c->bytes, &algo);
	}
	e->algo = algo;
}

/* SUMMA panel time gathered per GEMM of one unit. */
typedef struct panel_acc {
	bool any;
	double s[PP_MAX_OPS], n[PP_MAX_OPS];
} panel_acc;

/* Accumulate one entry of a unit under the per-layer overlap rules (stage
 * entries are left to finish()); `from` is the unit's first entry index. */
static void acc_entry(acc *a, const pp_profile_entry *x, int from, panel_acc *pa)
{
	double n = x->count * x->times;
	if (!x->coll) {
		double t = x->seconds * n;
		a->compute[x->phase] += t;
		if (x->kind == PP_OP_ATTN)
			a->attn[x->phase] += t;
		if (x->kind != PP_OP_ELEM) {
			a->hw_flops += x->flops * n;
			a->flops[x->phase] += x->flops * n;
			if (x->phase != PP_PHASE_RECOMPUTE)
				a->model_flops += x->flops * n;
		}
		return;
	}
	a->bytes[x->group] += x->wire_bytes * n;
	double t = x->seconds * n;
	switch (x->rule) {
	case PP_RULE_SUMMA: {
		int k = x->overlap - from;
		if (k < 0 || k >= PP_MAX_OPS)
			break;
		if (!pa->any) {
			memset(pa->s, 0, sizeof pa->s);
			memset(pa->n, 0, sizeof pa->n);
			pa->any = true;
		}
		pa->s[k] += x->seconds * x->count;
		pa->n[k] = x->panels;
		break;
	}
	case PP_RULE_CP_RING: a->hidden_cp[x->phase] += t; break;
	case PP_RULE_HIDDEN: break;
	default: a->exposed[x->group == PP_GROUP_ETP ? PP_GROUP_EP : x->group] += t; break;
	}
}

/* Seed 003 App. A: t_comm = t_prologue + n_b t_exposed.  The first panel's
 * broadcasts are the prologue; each later panel's run under the previous
 * panel's GEMM and show only what exceeds it (n_b - 1 of them).  op_s[k]:
 * seconds of the unit's k-th operation. */
static void acc_panels(acc *a, const panel_acc *pa, const double *op_s, int nops, double times)
{
	for (int k = 0; pa->any && k < nops; k++) {
		if (pa->s[k] <= 0)
			continue;
		double n = pa->n[k] >= 1 ? pa->n[k] : 1;
		double per = op_s[k] / n;
		double over = pa->s[k] - per;
		a->summa += (pa->s[k] + (n - 1) * (over > 0 ? over : 0)) * times;
	}
}

/* Time every operation and collective of one unit (the work in `w`, `times`
 * of it on the stage) and append them to `b`. */
static void unit_entries(ebuf *b, const pp_work *w, const pp_system *s, const pp_job *job,
                         const pp_layout *lay, pp_profile_unit unit, double times)
{
	if (w->overflow)
		b->overflow = true;
	int base = b->n;
	if (b->n + w->nops + w->ncolls > b->cap) {
		b->overflow = true;
		return;
	}
	for (int i = 0; i < w->nops; i++)
		fill_op(&b->e[b->n++], &w->ops[i], s, job, unit, times);
	for (int i = 0; i < w->ncolls; i++)
		fill_coll(&b->e[b->n++], &w->colls[i], w, s, lay, unit, times, base);
}

/* Accumulate the entries [from, to) of one unit (all of one `times`): the
 * operations come first, then the collectives. */
static void acc_unit(acc *a, const pp_profile_entry *e, int from, int to)
{
	panel_acc pa;
	pa.any = false;
	double op_s[PP_MAX_OPS];
	int nops = 0;
	for (int i = from; i < to; i++) {
		if (!e[i].coll && nops < PP_MAX_OPS)
			op_s[nops++] = e[i].seconds;
		acc_entry(a, &e[i], from, &pa);
	}
	acc_panels(a, &pa, op_s, nops, to > from ? e[from].times : 1);
}

/* acc_unit of the work in `w` without keeping the entries: the same fill
 * and accumulation, entry by entry (the search's hot path). */
static void acc_work(acc *a, const pp_work *w, const pp_system *s, const pp_job *job,
                     const pp_layout *lay, pp_profile_unit unit)
{
	if (w->overflow)
		a->overflow = true;
	panel_acc pa;
	pa.any = false;
	double op_s[PP_MAX_OPS];
	pp_profile_entry e;
	for (int i = 0; i < w->nops; i++) {
		fill_op(&e, &w->ops[i], s, job, unit, 1);
		op_s[i] = e.seconds;
		acc_entry(a, &e, 0, &pa);
	}
	for (int i = 0; i < w->ncolls; i++) {
		fill_coll(&e, &w->colls[i], w, s, lay, unit, 1, 0);
		acc_entry(a, &e, 0, &pa);
	}
	acc_panels(a, &pa, op_s, w->nops, 1);
}

/* The memo's slots: a dense layer, an MoE layer, the embedding, the head. */
enum { SLOT_DENSE = 0, SLOT_MOE = 1, SLOT_EMBEDDING = 2, SLOT_HEAD = 3 };

/* One unit (a layer of kind `slot` with index `layer`, the embedding or the
 * head), from the workspace's memo when nothing that shapes it changed. */
static void unit_cost(acc *one, const pp_model *m, const pp_system *s, const pp_job *job,
                      const pp_plan *p, const pp_layout *lay, int layer, int slot, pp_work *ws)
{
	/* the slot is the unit's kind: the key is the layer's (the embedding
	 * and the head read no more) */
	ppi_layer_key k;
	ppi_layer_key_set(&k, m, s, job, p, lay);
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
		unit = slot == SLOT_MOE ? PP_UNIT_MOE_LAYERS : PP_UNIT_DENSE_LAYERS;
		break;
	}
	acc_work(one, ws, s, job, lay, unit);
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
 * SUMMA's panels, exposed CP and (times ep_overlap's share) EP traffic.
 * Each is a sum of non-negative per-unit terms over the stage's units (the
 * layers, and the embedding and head besides), so the layers' part is below
 * the stage's; the CP ring's exposed steps, which finish adds, are >= 0 and
 * left out.  fwd_s + bwd_s = the compute plus tp_s + cp_s + ep_s + zero3_s,
 * so compute + *comm_s is below it.  A share below 0 (a hiding fraction above
 * 1) would make tp_s or ep_s negative: *comm_s is then 0.
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
	double fep = p->ep_overlap ? 1 - s->ep_overlap_hidden : 1;
	double sum = 0, comm = 0, fwd = 0;
	for (int i = 0; i < 2; i++) {
		if (!k.counts[i])
			continue;
		acc one;
		unit_cost(&one, sc->model, s, sc->job, p, sc->place.group, k.index[i], i, ws);
		double c = one.compute[0] + one.compute[1] + one.compute[2] + one.compute[3];
		sum += c * k.counts[i];
		fwd += one.compute[PP_PHASE_FWD] * k.counts[i];
		double x = one.exposed[PP_GROUP_TP2] + one.summa + one.exposed[PP_GROUP_CP];
		x += one.exposed[PP_GROUP_TP] * ftp + one.exposed[PP_GROUP_EP] * fep;
		comm += x * k.counts[i];
	}
	if (comm_s)
		*comm_s = ftp >= 0 && fep >= 0 ? comm : 0;
	if (fwd_s)
		*fwd_s = fwd;
	return sum;
}

/* What the stage-level entries need besides the layers' totals. */
typedef struct stage_ctx {
	ppi_stage_kinds k;
	double layer_params_max, dense_params, expert_params, emb_params, emb;
} stage_ctx;

/* The rank holding the LM head, from the schedule's placement (the last,
 * or under DHelix's U the first, next to the embedding; schedule_type.h),
 * looked up once per plan by the scenario. */
static int head_stage(const pp_scenario *sc)
{
	return sc->head_stage;
}

/* The layer kinds of pipeline rank `stage` and the parameters this GPU owns
 * (dense, expert, embedding), from the scenario. */
static void stage_layers(const pp_scenario *sc, int stage, stage_ctx *c)
{
	const pp_model *m = sc->model;
	const pp_plan *p = &sc->plan;
	memset(c, 0, sizeof *c);
	ppi_scenario_stage_kinds(sc, stage, &c->k);
	for (int k = 0; k < 2; k++) {
		if (!c->k.counts[k])
			continue;
		const ppi_layer_kind *x = &sc->kind[k];
		c->dense_params += x->mine * c->k.counts[k];
		c->expert_params += x->mine_e * c->k.counts[k];
		if (x->mine + x->mine_e > c->layer_params_max)
			c->layer_params_max = x->mine + x->mine_e;
	}
	c->emb = (double)m->vocab * m->hidden / p->tp; /* vocab-parallel over n_1 */
	if (stage == 0)
		c->emb_params += c->emb;
	if (stage == head_stage(sc) && (!m->tied_embeddings || head_stage(sc) != 0))
		c->emb_params += c->emb;
	c->dense_params += c->emb_params;
	/* The position table and the norms outside the layers have gradients and
	 * optimizer state too (replicated over TP, as the memory model holds). */
	if (stage == 0)
		c->dense_params += sc->first_extra_params;
	if (stage == head_stage(sc))
		c->dense_params += sc->head_extra_params;
}

/* pp_coll_time(s, l, kind, bytes, algo), from the workspace's memo when the
 * same (system, layout, kind, bytes) was timed before: the same seconds, to
 * the bit, and the same algorithm, since pp_coll_time reads nothing else.
 * ws NULL: no memo. */
static double coll_time_memo(pp_work *ws, const pp_system *s, const pp_layout *l, pp_coll_kind kind,
                             double bytes, const pp_coll_algo **algo)
{
	if (l->size <= 1 || bytes <= 0) {
		*algo = NULL; /* pp_coll_time's answer: nothing moves */
		return 0;
	}
	if (!ws)
		return pp_coll_time(s, l, kind, bytes, algo);
	struct pp_coll_memo_key k;
	memset(&k, 0, sizeof k); /* padding too: the key is compared as bytes */
	k.system = s;
	k.bytes = bytes;
	k.kind = (int)kind;
	k.size = l->size;
	k.per_domain = l->per_domain;
	unsigned slot = (unsigned)(ppi_key_hash(&k, sizeof k) % PP_COLL_MEMO);
	if (ws->coll_valid[slot] && ppi_key_equal(&ws->coll_key[slot], &k, sizeof k)) {
		*algo = ws->coll_algo[slot];
		return ws->coll_s[slot];
	}
	double t = pp_coll_time(s, l, kind, bytes, algo);
	memcpy(&ws->coll_key[slot], &k, sizeof k);
	ws->coll_s[slot] = t;
	ws->coll_algo[slot] = *algo;
	ws->coll_valid[slot] = true;
	return t;
}

static void coll_entry(ebuf *b, pp_work *ws, const char *name, pp_overlap_rule rule, pp_group g,
                       pp_coll_kind kind, const pp_system *s, const pp_layout *l, double bytes,
                       double count, double times)
{
	pp_profile_entry *e = entry_new(b, name, PP_UNIT_STAGE, times);
	if (!e)
		return;
	e->coll = true;
	e->kind = kind;
	e->group = g;
	e->phase = PP_PHASE_BWD_WEIGHT;
	e->rule = rule;
	e->count = count;
	e->bytes = bytes;
	e->wire_bytes = wire_bytes(kind, bytes, l->size);
	e->seconds = coll_time_memo(ws, s, l, kind, bytes, &e->algo);
}

/*
 * One pipeline transfer of a rank (pp > 1; every rank has the same): the
 * activations forward and their gradients backward, 1/tp of the tensor per
 * GPU.  With SP (or SUMMA) the tensor is already sequence-sharded.  Without
 * SP every TP rank holds the whole tensor and sends it whole (Megatron-Core),
 * or, with framework.pp_scatter_gather, Megatron-LM 2021's scatter/gather
 * (Narayanan et al. SC'21 Sec. 4.1, Megatron-LM scatter_gather_tensors_in_pipeline)
 * sends 1/tp of it from each rank over the inter-stage link and all-gathers
 * it over TP (NVLink) on the receiver before the next stage can start: the
 * gather is on the transfer's critical path, its bytes on the TP group's
 * links.  Returns its seconds; *act_bytes: the bytes sent; *algo: the
 * algorithm of the send.
 */
enum { PP_SENDS = 2 }; /* per micro-batch: one activation, one gradient */

static double pp_send(const pp_scenario *sc, pp_work *ws, double *act_bytes,
                      const pp_coll_algo **algo)
{
	const pp_model *m = sc->model;
	const pp_system *s = sc->system;
	const pp_plan *p = &sc->plan;
	const pp_layout *lay = sc->place.group;
	double n2 = p->tp2 > 1 ? p->tp2 : 1;
	double full = (double)p->mbs * sc->job->seq_len / p->cp / n2 * m->hidden * sc->mb.ab;
	bool gather = p->tp > 1 && !(p->sp || p->summa) && s->pp_scatter_gather >= 0.5;
	double act = p->tp > 1 && (p->sp || p->summa || gather) ? full / p->tp : full;
	double seconds = coll_time_memo(ws, s, &lay[PP_GROUP_PP], PP_COLL_P2P, act, algo);
	if (gather) {
		const pp_coll_algo *gather_algo;
		seconds +=
		    coll_time_memo(ws, s, &lay[PP_GROUP_TP], PP_COLL_ALLGATHER, full, &gather_algo);
	}
	*act_bytes = act;
	return seconds;
}

double ppi_stage_pp_send_s(const pp_scenario *sc, pp_work *ws)
{
	double act;
	const pp_coll_algo *algo;
	/* as finish sums it: the entry's seconds times its count */
	return sc->plan.pp > 1 ? pp_send(sc, ws, &act, &algo) * PP_SENDS : 0;
}

/* One data-parallel collective of a rank (PP_RULE_DP, or PP_RULE_DP_GATHER
 * for the parameter all-gather after the step; once per iteration): an
 * entry into b when b is not NULL; returns its seconds as the entry holds
 * them. */
static double dp_coll(ebuf *b, pp_work *ws, const char *name, pp_group g, pp_coll_kind kind,
                      const pp_system *s, const pp_layout *l, double bytes)
{
	if (b)
		coll_entry(b, ws, name, kind == PP_COLL_ALLGATHER ? PP_RULE_DP_GATHER : PP_RULE_DP,
		           g, kind, s, l, bytes, 1, 1);
	const pp_coll_algo *algo;
	return coll_time_memo(ws, s, l, kind, bytes, &algo);
}

/* The data-parallel traffic of rank `c` per iteration, as entries into b
 * when b is not NULL (stage_entries); returns their seconds summed in the
 * order finish sums the entries, so the sum is the stage's dp_s to the bit
 * (ppi_stage_dp_s). */
static double dp_colls(ebuf *b, const pp_scenario *sc, const stage_ctx *c, pp_work *ws)
{
	const pp_system *s = sc->system;
	const pp_job *job = sc->job;
	const pp_plan *p = &sc->plan;
	const pp_layout *lay = sc->place.group;
	double wb = sc->mb.wb, sum = 0;
	/* Data parallelism, per iteration: gradients reduced (all-reduce, or
	 * reduce-scatter with a sharded optimizer), parameters gathered after the
	 * step (ZeRO-1/2).  ZeRO-3 already moved its traffic per micro-batch. */
	if (p->zero < 3) {
		const pp_layout *ld = &lay[PP_GROUP_DP], *le = &lay[PP_GROUP_EDP];
		pp_coll_kind red = p->zero >= 1 ? PP_COLL_REDUCESCATTER : PP_COLL_ALLREDUCE;
		const char *rn = p->zero >= 1 ? "dp-reducescatter" : "dp-allreduce";
		sum +=
		    dp_coll(b, ws, rn, PP_GROUP_DP, red, s, ld, c->dense_params * job->grad_bytes);
		sum += dp_coll(b, ws, p->zero >= 1 ? "edp-reducescatter" : "edp-allreduce",
		               PP_GROUP_EDP, red, s, le, c->expert_params * job->grad_bytes);
		if (p->zero >= 1) {
			sum += dp_coll(b, ws, "dp-allgather", PP_GROUP_DP, PP_COLL_ALLGATHER, s, ld,
			               c->dense_params * wb);
			sum += dp_coll(b, ws, "edp-allgather", PP_GROUP_EDP, PP_COLL_ALLGATHER, s,
			               le, c->expert_params * wb);
		}
	}
	/* 2D TP's weight-gradient reduction over n_2 rides in the DP group above
	 * (dp x cp x tp2, seed 003 App. A).  SUMMA's weights are split, not
	 * replicated, except the vocab-parallel embedding/head: all-reduce those
	 * gradients over n_2 with the DP traffic. */
	if (p->summa && p->tp2 > 1 && c->emb_params > 0)
		sum += dp_coll(b, ws, "tp2-embedding-allreduce", PP_GROUP_TP2, PP_COLL_ALLREDUCE, s,
		               &lay[PP_GROUP_TP2], c->emb_params * job->grad_bytes);
	return sum;
}

/* Optimizer: memory-bound pass over this GPU's shard.  Adam reads the
 * gradient, master weight, m and v and writes the last three and the
 * low-precision weight.  Returns its seconds; *bytes: the bytes moved. */
static double optimizer_pass(const pp_scenario *sc, const stage_ctx *c, double *bytes)
{
	const pp_system *s = sc->system;
	const pp_job *job = sc->job;
	const pp_plan *p = &sc->plan;
	double shard_d = p->zero >= 1 ? sc->shard_dense : 1;
	double shard_e = p->zero >= 1 ? sc->shard_expert : 1;
	double local = c->dense_params / shard_d + c->expert_params / shard_e;
	double state = job->optimizer == PP_OPT_ADAM ? 3 : 2; /* fp32 master (+ m) + v */
	double per_param = job->grad_bytes + 2 * 4 * state + sc->mb.wb;
	*bytes = local * per_param;
	return local * per_param / (s->gpu.memory_bw_bytes_per_s * s->gpu.eff.memory);
}

double ppi_stage_dp_s(const pp_scenario *sc, int stage, pp_work *ws, double *optimizer_s)
{
	stage_ctx c;
	stage_layers(sc, stage, &c);
	double bytes;
	*optimizer_s = optimizer_pass(sc, &c, &bytes);
	return dp_colls(NULL, sc, &c, ws);
}

/* The stage's own transfers, ZeRO-3 traffic, data-parallel traffic,
 * embedding sync and optimizer, as entries. */
static void stage_entries(ebuf *b, const pp_scenario *sc, int stage, const stage_ctx *c,
                          pp_work *ws)
{
	const pp_model *m = sc->model;
	const pp_system *s = sc->system;
	const pp_job *job = sc->job;
	const pp_plan *p = &sc->plan;
	const pp_layout *lay = sc->place.group;
	/* Pipeline: activations forward and their gradients backward (pp_send). */
	if (p->pp > 1) {
		const pp_coll_algo *algo;
		double act, seconds = pp_send(sc, ws, &act, &algo);
		pp_profile_entry *e = entry_new(b, "pp-sendrecv", PP_UNIT_STAGE, 1);
		if (e) {
			e->coll = true;
			e->kind = PP_COLL_P2P;
			e->group = PP_GROUP_PP;
			e->phase = PP_PHASE_FWD;
			e->rule = PP_RULE_PP;
			e->count = PP_SENDS; /* one activation, one gradient */
			e->bytes = e->wire_bytes = act;
			e->seconds = seconds;
			e->algo = algo;
		}
	}
	/* ZeRO-3: each layer's parameters gathered for forward and again for
	 * backward, gradients reduce-scattered, every micro-batch; prefetch hides
	 * them under the layers' compute (FSDP's backward/forward prefetch). */
	double wb = sc->mb.wb;
	if (p->zero >= 3 && lay[PP_GROUP_DP].size > 1) {
		const pp_layout *l = &lay[PP_GROUP_DP];
		/* DeepSpeed moves a layer in buckets (prefetch/reduce bucket of
		 * zero3_bucket_params), each paying a collective's latency; FSDP moves
		 * the whole layer unit at once. */
		double chunk = c->layer_params_max, chunks = 1;
		if (s->zero3_bucket_params > 0 && s->zero3_bucket_params < c->layer_params_max) {
			chunk = s->zero3_bucket_params;
			chunks = c->layer_params_max / chunk;
		}
		coll_entry(b, ws, "zero3-allgather", PP_RULE_ZERO3, PP_GROUP_DP, PP_COLL_ALLGATHER,
		           s, l, chunk * wb, 2 * chunks, c->k.layers);
		coll_entry(b, ws, "zero3-reducescatter", PP_RULE_ZERO3, PP_GROUP_DP,
		           PP_COLL_REDUCESCATTER, s, l, chunk * job->grad_bytes, chunks,
		           c->k.layers);
	}
	dp_colls(b, sc, c, ws);
	if (m->tied_embeddings && head_stage(sc) != 0 && (stage == 0 || stage == p->pp - 1))
		coll_entry(b, ws, "embedding-sync", PP_RULE_EMB_SYNC, PP_GROUP_EMB,
		           PP_COLL_ALLREDUCE, s, &lay[PP_GROUP_EMB], c->emb * job->grad_bytes, 1,
		           1);

	double bytes, seconds = optimizer_pass(sc, c, &bytes);
	pp_profile_entry *e = entry_new(b, "optimizer", PP_UNIT_STAGE, 1);
	if (e) {
		e->kind = PP_OP_ELEM;
		e->phase = PP_PHASE_BWD_WEIGHT;
		e->rule = PP_RULE_OPTIMIZER;
		e->bytes = bytes;
		e->seconds = seconds;
	}
}

/* The stage's times from the layers' totals `a` and the stage entries
 * [from, to) of `e`: the overlap rules that span the stage. */
static void finish(pp_stage_time *out, acc *a, const pp_profile_entry *e, int from, int to,
                   const pp_system *s, const pp_plan *p, int layers)
{
	out->fwd_compute_s = a->compute[PP_PHASE_FWD];
	out->recompute_s = a->compute[PP_PHASE_RECOMPUTE];
	out->wgrad_compute_s = a->compute[PP_PHASE_BWD_WEIGHT];
	out->bwd_compute_s = a->compute[PP_PHASE_BWD_INPUT] + a->compute[PP_PHASE_BWD_WEIGHT] +
	                     a->compute[PP_PHASE_RECOMPUTE];
	/* CP's ring (Megatron-Core / Transformer Engine ring attention,
	 * attn_forward_func_with_cp): a layer's attention runs as cp steps of
	 * 1/cp of its work each (load-balanced causal chunks); step i's compute
	 * overlaps the K/V (backward: K/V and dK/dV) transfer that step i+1
	 * needs, and the last step has no transfer to hide.  Per step exposed =
	 * max(0, comm_step - attn/cp), over cp - 1 steps.  Every layer of a
	 * stage has the same attention, so the stage's sums give the same total:
	 * (cp-1) max(0, hidden/(cp-1) - attn/cp) per phase. */
	int steps = p->cp > 1 ? p->cp - 1 : 0;
	for (int ph = 0; ph < 4 && steps > 0; ph++) {
		double comm_step = a->hidden_cp[ph] / steps;
		double compute_step = a->attn[ph] / p->cp;
		if (comm_step > compute_step)
			a->exposed[PP_GROUP_CP] += steps * (comm_step - compute_step);
	}
	/* tp_overlap (Megatron's userbuffers) hides n_1 traffic; 2D TP's n_2
	 * gathers and SUMMA's panels (already overlapped) are added as they are. */
	out->tp_s = a->exposed[PP_GROUP_TP] * (p->tp_overlap ? 1 - s->tp_overlap_hidden : 1) +
	            a->exposed[PP_GROUP_TP2] + a->summa;
	out->cp_s = a->exposed[PP_GROUP_CP];
	out->ep_s = a->exposed[PP_GROUP_EP] * (p->ep_overlap ? 1 - s->ep_overlap_hidden : 1);
	out->model_flops = a->model_flops;
	out->hw_flops = a->hw_flops;
	out->fwd_flops = a->flops[PP_PHASE_FWD];
	out->wgrad_flops = a->flops[PP_PHASE_BWD_WEIGHT];
	out->bwd_flops = a->flops[PP_PHASE_BWD_INPUT] + a->flops[PP_PHASE_BWD_WEIGHT] +
	                 a->flops[PP_PHASE_RECOMPUTE];
	out->tp_bytes = a->bytes[PP_GROUP_TP] + a->bytes[PP_GROUP_TP2];
	out->cp_bytes = a->bytes[PP_GROUP_CP];
	out->ep_bytes = a->bytes[PP_GROUP_EP] + a->bytes[PP_GROUP_ETP];

	double z3_comm = 0, z3_bytes = 0;
	bool z3 = false;
	for (int i = from; i < to; i++) {
		const pp_profile_entry *x = &e[i];
		double t = x->seconds * x->count, w = x->wire_bytes * x->count;
		switch (x->rule) {
		case PP_RULE_PP:
			out->pp_s += t;
			out->pp_bytes += w;
			break;
		case PP_RULE_ZERO3:
			z3 = true;
			z3_comm += t; /* per layer */
			z3_bytes += w * x->times;
			break;
		case PP_RULE_DP:
			out->dp_s += t;
			out->dp_bytes += w;
			break;
		case PP_RULE_DP_GATHER:
			out->dp_s += t;
			out->dp_gather_s += t;
			out->dp_bytes += w;
			break;
		case PP_RULE_EMB_SYNC: out->emb_sync_s += t; break;
		case PP_RULE_OPTIMIZER: out->optimizer_s += t; break;
		default: break;
		}
	}
	if (z3) {
		double per_layer_comp =
		    layers ? (out->fwd_compute_s + out->bwd_compute_s) / layers : 0;
		double over = z3_comm - s->zero3_overlap * per_layer_comp;
		/* What compute hides still costs its visible share (seed 002 Table 7). */
		if (over < s->zero3_visible * z3_comm)
			over = s->zero3_visible * z3_comm;
		out->zero3_s = over > 0 ? over * layers : 0;
		out->dp_bytes += z3_bytes;
	}
	/* Exposed communication splits over phases in proportion to compute. */
	double comm = out->tp_s + out->cp_s + out->ep_s + out->zero3_s;
	double comp = out->fwd_compute_s + out->bwd_compute_s;
	double fwd_share = comp > 0 ? out->fwd_compute_s / comp : 0.5;
	out->fwd_s = out->fwd_compute_s + comm * fwd_share;
	out->bwd_s = out->bwd_compute_s + comm * (1 - fwd_share);
}

static pp_status overflow_fail(pp_error *err)
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

pp_status pp_scenario_profile(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_profile *out,
                              pp_error *err)
{
	return ppi_stage_profile(sc, stage, ws, out, err);
}

/*
 * Everything ppi_stage_cost reads: the inputs (by address, as the layer memo
 * keys them, and the job's fields it reads by value), the resolved plan with
 * its rank order cleared past its end, every group's layout, the rank's layer
 * kinds and the rank.  Two fields are normalised: vp (it shapes a rank's cost
 * only through the layer kinds and indices, which are in the key; with alike
 * layers the index does not shape it either, as the layer memo already
 * holds) and the schedule (read only to place the LM head, which DHelix's
 * wshape moves).
 */
typedef struct stage_key {
	const void *model, *system, *job;
	double grad_bytes;
	int seq, precision, fp8_recipe, optimizer, stage;
	int head;            /* the schedule's head rank */
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
	key->seq = sc->job->seq_len;
	key->precision = (int)sc->job->precision;
	key->fp8_recipe = (int)sc->job->fp8_recipe;
	key->optimizer = (int)sc->job->optimizer;
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
	/* The schedule shapes a stage's cost only through the head's rank and
	 * the parameter copies (schedule_type.h): those, not its id, key it. */
	q->schedule = PP_SCHED_1F1B;
	key->head = head_stage(sc);
	key->param_copies = sc->sched->param_copies;
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
	stage_layers(sc, stage, &c);
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
	for (int k = 0; k < 2; k++) {
		if (!c.k.counts[k])
			continue;
		acc one;
		unit_cost(&one, m, s, job, p, lay, c.k.index[k], k, ws);
		acc_add(&a, &one, c.k.counts[k]);
	}
	if (stage == 0) {
		acc one;
		unit_cost(&one, m, s, job, p, lay, -1, SLOT_EMBEDDING, ws);
		acc_add(&a, &one, 1);
	}
	if (stage == head_stage(sc)) {
		acc one;
		unit_cost(&one, m, s, job, p, lay, -1, SLOT_HEAD, ws);
		acc_add(&a, &one, 1);
	}
	pp_profile_entry buf[32];
	ebuf b = {buf, 0, 32, false};
	if (a.overflow)
		return overflow_fail(err);
	stage_entries(&b, sc, stage, &c, ws);
	if (b.overflow)
		return overflow_fail(err);
	finish(out, &a, buf, 0, b.n, s, p, c.k.layers);
	if (ws) {
		memcpy(ws->stage_key[slot], &key, sizeof key);
		memcpy(ws->stage_val[slot], out, sizeof *out);
		ws->stage_valid[slot] = true;
	}
	return PP_OK;
}

pp_status pp_stage_profile_build(const pp_model *m, const pp_system *s, const pp_job *job,
                                 const pp_plan *p, int stage, pp_work *ws, pp_stage_profile *out,
                                 pp_error *err)
{
	pp_scenario sc;
	ppi_scenario_init(&sc, m, s, job, p, 0);
	return ppi_stage_profile(&sc, stage, ws, out, err);
}

pp_status ppi_stage_profile(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_profile *out,
                            pp_error *err)
{
	const pp_model *m = sc->model;
	const pp_system *s = sc->system;
	const pp_job *job = sc->job;
	const pp_plan *p = &sc->plan;
	if (stage < 0 || stage >= p->pp)
		return ppi_fail(err, "", "stage", "stage %d is outside 0..%d", stage, p->pp - 1);
	out->stage = stage;
	out->n = 0;
	const pp_layout *lay = sc->place.group;
	stage_ctx c;
	stage_layers(sc, stage, &c);
	out->layers = c.k.layers;
	ebuf b = {out->e, 0, PP_PROFILE_MAX, false};
	if (stage == 0) {
		pp_embedding_work(m, job, p, ws);
		unit_entries(&b, ws, s, job, lay, PP_UNIT_EMBEDDING, 1);
	}
	for (int k = 0; k < 2; k++) {
		if (!c.k.counts[k])
			continue;
		pp_layer_work(m, job, p, c.k.index[k], ws);
		unit_entries(&b, ws, s, job, lay, k ? PP_UNIT_MOE_LAYERS : PP_UNIT_DENSE_LAYERS,
		             c.k.counts[k]);
	}
	if (stage == head_stage(sc)) {
		pp_head_work(m, job, p, ws);
		unit_entries(&b, ws, s, job, lay, PP_UNIT_HEAD, 1);
	}
	stage_entries(&b, sc, stage, &c, ws);
	out->n = b.n;
	if (b.overflow)
		return overflow_fail(err);
	return PP_OK;
}

void pp_stage_profile_sum(const pp_stage_profile *prof, const pp_system *s, const pp_plan *p,
                          pp_stage_time *out)
{
	memset(out, 0, sizeof *out);
	out->stage = prof->stage;
	acc a;
	memset(&a, 0, sizeof a);
	/* Unit by unit: SUMMA's panels are matched within their unit. */
	int i = 0;
	while (i < prof->n && prof->e[i].unit != PP_UNIT_STAGE) {
		int j = i;
		while (j < prof->n && prof->e[j].unit == prof->e[i].unit)
			j++;
		acc_unit(&a, prof->e, i, j);
		i = j;
	}
	finish(out, &a, prof->e, i, prof->n, s, p, prof->layers);
}
