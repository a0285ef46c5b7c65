/*
 * The overlap rules of the stage cost, applied in one place: each operation
 * and collective of a unit timed into an entry with its rule (fill_op,
 * fill_coll), the per-unit sums under the per-layer rules (acc_entry,
 * SUMMA's panels), and the rules that span the stage (finish: CP's ring,
 * tp/ep overlap, ZeRO-3 prefetch, the phase split).  Allocates nothing.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "paraplan/moe.h"
#include "paraplan/schedule_type.h"
#include "stage_int.h"
#include "util/util.h"

/* a += n * b */
void ppi_stage_acc_add(acc *a, const acc *b, double n)
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
	a->ep_pair_hidden += n * b->ep_pair_hidden;
	a->sync_bwd_s += n * b->sync_bwd_s;
	if (n > 0 && b->sync_bwd_max_s > a->sync_bwd_max_s)
		a->sync_bwd_max_s = b->sync_bwd_max_s;
	a->model_flops += n * b->model_flops;
	a->hw_flops += n * b->hw_flops;
	a->overflow |= b->overflow;
}

/* The overlap rule of a layer's collective. */
/* The bytes a collective's time is taken at: the busiest GPU's (pp_coll.busiest;
 * 0, a pp_coll built elsewhere, is 1). */
static double busiest(const pp_coll *c)
{
	return c->busiest > 0 ? c->busiest : 1;
}

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
void ppi_stage_fill_op(pp_profile_entry *e, const pp_op *o, const pp_system *s, const pp_job *job,
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
	e->host_s = pp_op_host_s(&s->gpu, job->precision, o);
	e->flops = o->flops;
	e->bytes = o->bytes;
	e->wire_bytes = 0;
	e->panels = 1;
	e->overlap = -1;
	e->algo = NULL;
	e->proto = PP_PROTO_SIMPLE;
}

/* Time one collective of a unit into entry `e`; `base` is the index of the
 * unit's first operation entry (SUMMA panels point at their GEMM). */
void ppi_stage_fill_coll(pp_profile_entry *e, const pp_coll *c, const pp_work *w,
                         const pp_system *s, const pp_layout *lay, pp_profile_unit unit,
                         double times, int base, pp_work *memo)
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
	e->host_s = 0;
	e->flops = 0;
	e->bytes = c->bytes;
	e->wire_bytes = ppi_stage_wire_bytes(c->kind, c->bytes, l->size);
	e->panels = 1;
	e->overlap = -1;
	/* the algorithm through a local: `e` itself does not escape to
	 * pp_coll_time, so the search's hot path (acc_work) keeps it in
	 * registers */
	const pp_coll_algo *algo;
	pp_coll_proto proto;
	if (c->dedup_k > 0 && c->kind == PP_COLL_ALLTOALL) {
		/* DeepEP: the copies the dispatch deduplicates to, over each link */
		double nic, nvl, tok = c->bytes / c->dedup_k;
		pp_moe_dispatch_copies(c->dedup_experts, c->dedup_k, c->dedup_groups,
		                       c->dedup_group_topk, l->size, l->per_domain, &nic, &nvl);
		e->wire_bytes = tok * (nic + nvl);
		e->seconds = pp_coll_dispatch_time(s, l, tok * nic * busiest(c),
		                                   tok * nvl * busiest(c), &algo);
		proto = PP_PROTO_SIMPLE;
	} else if (e->rule == PP_RULE_SUMMA && c->overlap_op < w->nops) {
		e->panels = c->panels >= 1 ? c->panels : 1;
		e->overlap = base + c->overlap_op;
		e->seconds = ppi_stage_coll_time(memo, s, l, c->kind,
		                                 c->bytes * busiest(c) / e->panels, &algo, &proto);
	} else {
		if (e->rule == PP_RULE_SUMMA)
			e->rule = PP_RULE_EXPOSED;
		e->seconds =
		    ppi_stage_coll_time(memo, s, l, c->kind, c->bytes * busiest(c), &algo, &proto);
	}
	e->algo = algo;
	e->proto = proto;
}

/* SUMMA panel time gathered per GEMM of one unit. */
typedef struct panel_acc {
	bool any;
	double s[PP_MAX_OPS], n[PP_MAX_OPS];
} panel_acc;

/* Accumulate one entry of a unit under the per-layer overlap rules (stage
 * entries are left to ppi_stage_finish()); `from` is the unit's first entry index. */
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

/*
 * The host's queue of one unit: its kernels in a phase take at least the
 * time the host needs to issue them.  The host runs ahead of the GPU
 * (asynchronous launches) and issues a kernel while the one before runs, so
 * within a layer's phase the short kernels hide behind the long ones and the
 * GPU waits only where the phase's kernels in all run shorter than their
 * issue: the phase takes max(GPU time, host time), not the per-op sum.  The
 * layer's phase is where the queue is taken to empty (a layer's backward
 * waits for the gradient of the layer above, a stage for its receive), an
 * upper bound on the host's lead.  A host sync inside a forward (a dropless
 * MoE layer reading its token counts, framework.moe_host_sync) empties it
 * there too: the part before it and the part after it each take their own
 * max.  `before`: the accumulator's compute before the unit; `host`: the
 * unit's issue time per phase; `mid`, `host_mid`: the same at the sync, or
 * NULL without one; `layers`: how many layers the totals hold; `resync`:
 * the recompute re-runs the op the sync comes before (full recompute).
 *
 * With the sync, the layer's backward also keeps what it costs beyond
 * max(host, GPU) when its queue starts empty (a->sync_bwd_s, per layer
 * sync_bwd_max_s): its first block, the experts' backward (the ops after
 * the sync point, which the backward runs first), gets no lead from the
 * host, so it takes its issue time, and the attention's backward after it
 * its GPU time: max(host, GPU, host_experts + GPU_rest).  The phase rule
 * above lets the host's lead from the layer before cover it; where the
 * schedule issues that backward right after a forward's sync (a 1F1B step,
 * a combined-1F1B pair) there is no lead, and ppi_stage_finish charges it.
 */
static void host_queue(acc *a, const double *before, const double *host, const double *mid,
                       const double *host_mid, double layers, bool resync)
{
	/* the forward, the recompute, and the backward's two halves together
	 * (a layer's input- and weight-gradient kernels are issued in turn);
	 * the backward's wait is charged to its input-gradient half */
	static const int phases[3][2] = {{PP_PHASE_FWD, -1},
	                                 {PP_PHASE_RECOMPUTE, -1},
	                                 {PP_PHASE_BWD_INPUT, PP_PHASE_BWD_WEIGHT}};
	for (int q = 0; q < 3; q++) {
		int ph = phases[q][0];
		if (mid && phases[q][1] < 0) {
			/* a forward pass with the sync: two queues */
			double g1 = mid[ph] - before[ph], g2 = a->compute[ph] - mid[ph];
			double h1 = host_mid[ph], h2 = host[ph] - host_mid[ph];
			a->compute[ph] += fmax(h1 - g1, 0) + fmax(h2 - g2, 0);
			continue;
		}
		double gpu = 0, issue = 0, issue_q = 0, gpu_p = 0;
		for (int k = 0; k < 2 && phases[q][k] >= 0; k++) {
			int pk = phases[q][k];
			gpu += a->compute[pk] - before[pk];
			issue += host[pk];
			if (mid) {
				issue_q += host[pk] - host_mid[pk];
				gpu_p += mid[pk] - before[pk];
			}
		}
		if (issue > gpu)
			a->compute[ph] += issue - gpu;
		if (mid && layers > 0) {
			double over = issue_q + gpu_p - fmax(issue, gpu);
			/* a recompute that re-ran the experts synced right before:
			 * every layer's backward starts empty, whatever the schedule */
			if (over > 0 && resync) {
				a->compute[ph] += over;
			} else if (over > 0) {
				a->sync_bwd_s += over;
				a->sync_bwd_max_s = fmax(a->sync_bwd_max_s, over / layers);
			}
		}
	}
}

bool ppi_moe_host_sync(const pp_system *s, const pp_plan *p)
{
	return s->moe_host_sync >= 1.5 || (s->moe_host_sync >= 0.5 && p->ep > 1);
}

/* The op the sync comes before: the experts' first GEMM, after the router,
 * top-k and permutation (the dispatcher's preprocessing reads the counts
 * those produce). */
static bool sync_point(const char *name)
{
	return strcmp(name, "expert_fc1") == 0;
}

/*
 * Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm,
 * core_v0.15.0 models/common/model_chunk_schedule_plan.py,
 * TransformerLayerSchedulePlan.run) runs one layer's forward of micro-batch
 * i+1 beside another layer's backward of micro-batch i, on a compute and a
 * communication stream:
 *   comm: combine_bwd       | dispatch_fwd | dispatch_bwd        | combine_fwd
 *   comp: attn_fwd (+ post) | mlp_bwd      | mlp_bwd_dw, mlp_fwd | attn_bwd
 * each all-to-all hidden up to the compute beside it (mlp_fwd needs its
 * dispatch, dispatch_bwd needs mlp_bwd).  A layer's blocks: the experts and
 * shared experts (mlp) and the rest (attention, norms, router, permutation);
 * the recompute runs with the backward's attention.
 */
typedef struct ep_pair {
	bool any;
	double attn[4], mlp[4];  /* compute by phase */
	double disp[2], comb[2]; /* all-to-all: forward, backward */
} ep_pair;

static void ep_pair_add(ep_pair *q, const char *name, bool coll, pp_group g, pp_phase ph, double t)
{
	if (coll) {
		if (g != PP_GROUP_EP)
			return;
		int b = ph == PP_PHASE_FWD ? 0 : 1;
		if (strcmp(name, "ep_dispatch") == 0)
			q->disp[b] += t, q->any = true;
		else if (strcmp(name, "ep_combine") == 0)
			q->comb[b] += t, q->any = true;
		return;
	}
	bool mlp = strncmp(name, "expert_", 7) == 0 || strncmp(name, "shared_", 7) == 0;
	(mlp ? q->mlp : q->attn)[ph] += t;
}

/* The all-to-all seconds one pair hides: its all-to-alls less what shows
 * beyond the compute beside each, and of what the compute covers the share
 * `visible` still shows (an NCCL kernel beside a compute kernel slows it and
 * each overlapped segment starts with a launch gap: seed 002 Table 7, the
 * GPU's overlap table, as for ZeRO-3's prefetch; 0 where none is known). */
static double ep_pair_hidden(const ep_pair *q, double visible)
{
	if (!(visible > 0))
		visible = 0;
	if (!q->any)
		return 0;
	double attn_f = q->attn[PP_PHASE_FWD];
	double attn_b = q->attn[PP_PHASE_BWD_INPUT] + q->attn[PP_PHASE_BWD_WEIGHT] +
	                q->attn[PP_PHASE_RECOMPUTE] + q->mlp[PP_PHASE_RECOMPUTE];
	double mlp_b = q->mlp[PP_PHASE_BWD_INPUT];
	double mlp_rest = q->mlp[PP_PHASE_BWD_WEIGHT] + q->mlp[PP_PHASE_FWD];
	double comm[4] = {q->comb[1], q->disp[0], q->disp[1], q->comb[0]};
	double comp[4] = {attn_f, mlp_b, mlp_rest, attn_b};
	double hidden = 0;
	for (int k = 0; k < 4; k++) {
		double shown = comm[k] - comp[k];
		if (shown < visible * comm[k])
			shown = visible * comm[k];
		hidden += comm[k] - shown;
	}
	return hidden;
}

bool ppi_ep_pairs(const pp_plan *p, const pp_system *s)
{
	return p->ep_overlap && s->ep_overlap_pairs >= 0.5 &&
	       (p->pp == 1 || p->schedule == PP_SCHED_1F1B || p->schedule == PP_SCHED_INTERLEAVED);
}

double ppi_ep_paired_share(const pp_plan *p)
{
	double m = p->microbatches > 0 ? (double)p->microbatches : 1;
	double share = (m - p->pp) / m;
	return share > 0 ? share : 0;
}

/* Accumulate the entries [from, to) of one unit (all of one `times`): the
 * operations come first, then the collectives. */
void ppi_stage_acc_unit(acc *a, const pp_profile_entry *e, int from, int to, bool moe_sync,
                        double ep_visible)
{
	panel_acc pa;
	pa.any = false;
	double op_s[PP_MAX_OPS];
	double before[4], host[4] = {0, 0, 0, 0}, mid[4] = {0, 0, 0, 0}, host_mid[4] = {0, 0, 0, 0};
	bool split = false, resync = false;
	memcpy(before, a->compute, sizeof before);
	int nops = 0;
	ep_pair q;
	memset(&q, 0, sizeof q);
	for (int i = from; i < to; i++) {
		ep_pair_add(&q, e[i].name, e[i].coll, e[i].group, e[i].phase,
		            e[i].seconds * e[i].count);
		if (!e[i].coll && nops < PP_MAX_OPS)
			op_s[nops++] = e[i].seconds;
		if (moe_sync && !e[i].coll && sync_point(e[i].name)) {
			if (!split) {
				memcpy(mid, a->compute, sizeof mid);
				memcpy(host_mid, host, sizeof host_mid);
				split = true;
			}
			resync |= e[i].phase == PP_PHASE_RECOMPUTE;
		}
		if (!e[i].coll)
			host[e[i].phase] += e[i].host_s * e[i].count * e[i].times;
		acc_entry(a, &e[i], from, &pa);
	}
	host_queue(a, before, host, split ? mid : NULL, host_mid, to > from ? e[from].times : 1,
	           resync);
	acc_panels(a, &pa, op_s, nops, to > from ? e[from].times : 1);
	a->ep_pair_hidden += ep_pair_hidden(&q, ep_visible) * (to > from ? e[from].times : 1);
}

/* acc_unit of the work in `w` without keeping the entries: the same fill
 * and accumulation, entry by entry (the search's hot path). */
void ppi_stage_acc_work(acc *a, pp_work *w, const pp_system *s, const pp_job *job,
                        const pp_layout *lay, pp_profile_unit unit, bool moe_sync)
{
	if (w->overflow)
		a->overflow = true;
	panel_acc pa;
	pa.any = false;
	double op_s[PP_MAX_OPS];
	double before[4], host[4] = {0, 0, 0, 0}, mid[4] = {0, 0, 0, 0}, host_mid[4] = {0, 0, 0, 0};
	bool split = false, resync = false;
	memcpy(before, a->compute, sizeof before);
	pp_profile_entry e;
	/* the pairing's blocks only where the layer has an expert all-to-all */
	bool ep = false;
	for (int i = 0; i < w->ncolls && !ep; i++)
		ep = w->colls[i].group == PP_GROUP_EP;
	ep_pair q;
	memset(&q, 0, sizeof q);
	for (int i = 0; i < w->nops; i++) {
		if (moe_sync && !split && sync_point(w->ops[i].name)) {
			memcpy(mid, a->compute, sizeof mid);
			memcpy(host_mid, host, sizeof host_mid);
			split = true;
		}
		ppi_stage_fill_op(&e, &w->ops[i], s, job, unit, 1);
		if (moe_sync && sync_point(e.name))
			resync |= e.phase == PP_PHASE_RECOMPUTE;
		if (ep)
			ep_pair_add(&q, e.name, false, e.group, e.phase, e.seconds * e.count);
		op_s[i] = e.seconds;
		host[e.phase] += e.host_s;
		acc_entry(a, &e, 0, &pa);
	}
	host_queue(a, before, host, split ? mid : NULL, host_mid, 1, resync);
	for (int i = 0; i < w->ncolls; i++) {
		ppi_stage_fill_coll(&e, &w->colls[i], w, s, lay, unit, 1, 0, w);
		if (ep)
			ep_pair_add(&q, e.name, true, e.group, e.phase, e.seconds * e.count);
		acc_entry(a, &e, 0, &pa);
	}
	acc_panels(a, &pa, op_s, w->nops, 1);
	a->ep_pair_hidden += ep_pair_hidden(&q, ppi_ep_visible(s, job));
}

/*
 * What the dropless MoE layers' backwards cost, per micro-batch, where the
 * schedule issues them right after a forward's host sync (host_queue's
 * sync_bwd_s): in the steady state of a schedule whose type says
 * fb_alternate (1F1B, interleaved, ZB-H1) each
 * backward chunk follows a forward chunk whose last layer synced and then
 * issued its experts with the host's queue empty, so the chunk's first
 * layer pays it (vp chunks a rank); under combined 1F1B
 * (--ep-overlap) each layer's backward runs right after another micro-batch's
 * forward reached its sync (TransformerLayerSchedulePlan.run: attn_fwd and
 * its dispatch preprocessing, then mlp_bwd), so every paired layer pays it.
 * GPipe runs its backwards back to back and DualPipe and the W shape pair
 * chunks their own way: none.
 */
static double sync_bwd_s(const acc *a, const pp_system *s, const pp_plan *p)
{
	if (!(a->sync_bwd_s > 0))
		return 0;
	const pp_schedule_type *t = pp_schedule_type_of(p->schedule);
	double chunks = p->pp > 1 && t && t->fb_alternate ? t->chunks(p) * a->sync_bwd_max_s : 0;
	if (!ppi_ep_pairs(p, s))
		return chunks;
	double share = ppi_ep_paired_share(p);
	return share * a->sync_bwd_s + (1 - share) * chunks;
}

/* The stage's times from the layers' totals `a` and the stage entries
 * [from, to) of `e`: the overlap rules that span the stage. */
void ppi_stage_finish(pp_stage_time *out, acc *a, const pp_profile_entry *e, int from, int to,
                      const pp_system *s, const pp_plan *p, int layers)
{
	out->fwd_compute_s = a->compute[PP_PHASE_FWD];
	out->recompute_s = a->compute[PP_PHASE_RECOMPUTE];
	out->wgrad_compute_s = a->compute[PP_PHASE_BWD_WEIGHT];
	out->bwd_compute_s = a->compute[PP_PHASE_BWD_INPUT] + a->compute[PP_PHASE_BWD_WEIGHT] +
	                     a->compute[PP_PHASE_RECOMPUTE];
	out->bwd_compute_s += sync_bwd_s(a, s, p);
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
	/* --ep-overlap: Megatron-Core's combined 1F1B, which its 1F1B and
	 * interleaved schedules (and no pipeline) run; DualPipe pairs its
	 * chunks itself (pp_dualpipe_pair_s) and DHelix its strands. */
	out->ep_s = a->exposed[PP_GROUP_EP];
	out->ep_pair_hidden_s = a->ep_pair_hidden;
	if (ppi_ep_pairs(p, s)) {
		out->ep_s -= ppi_ep_paired_share(p) * a->ep_pair_hidden;
		if (out->ep_s < 0)
			out->ep_s = 0;
	}
	out->model_flops = a->model_flops;
	out->hw_flops = a->hw_flops;
	out->fwd_flops = a->flops[PP_PHASE_FWD];
	out->wgrad_flops = a->flops[PP_PHASE_BWD_WEIGHT];
	out->bwd_flops = a->flops[PP_PHASE_BWD_INPUT] + a->flops[PP_PHASE_BWD_WEIGHT] +
	                 a->flops[PP_PHASE_RECOMPUTE];
	out->tp_bytes = a->bytes[PP_GROUP_TP] + a->bytes[PP_GROUP_TP2];
	out->cp_bytes = a->bytes[PP_GROUP_CP];
	out->ep_bytes = a->bytes[PP_GROUP_EP] + a->bytes[PP_GROUP_ETP];

	double z3_comm = 0, z3_bytes = 0, host_comm = 0, host_layers = 0;
	double pass[4] = {0, 0, 0, 0}; /* FSDP's passes and copies, by phase */
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
			if (!x->coll) { /* FSDP's passes and copies: compute */
				pass[x->phase] += t * x->times;
				break;
			}
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
		case PP_RULE_HOST: /* per layer, over the layers that offload */
			host_comm += t;
			host_layers = fmax(host_layers, x->times);
			break;
		default: break;
		}
	}
	out->fwd_compute_s += pass[PP_PHASE_FWD];
	out->wgrad_compute_s += pass[PP_PHASE_BWD_WEIGHT];
	out->bwd_compute_s +=
	    pass[PP_PHASE_BWD_INPUT] + pass[PP_PHASE_BWD_WEIGHT] + pass[PP_PHASE_RECOMPUTE];
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
	/* CPU offload's per-layer host transfers run on their own copy engine
	 * (DeepSpeed's swap-in/out streams, Megatron-Core's offload stream) and
	 * are prefetched a layer ahead: a layer's compute hides them, what is
	 * beyond it shows, with the per-layer parameter traffic (zero3_s). */
	if (host_comm > 0 && layers > 0) {
		double per_layer_comp = (out->fwd_compute_s + out->bwd_compute_s) / layers;
		if (host_comm > per_layer_comp)
			out->zero3_s += (host_comm - per_layer_comp) * host_layers;
	}
	/* Exposed communication splits over phases in proportion to compute. */
	double comm = out->tp_s + out->cp_s + out->ep_s + out->zero3_s;
	double comp = out->fwd_compute_s + out->bwd_compute_s;
	double fwd_share = comp > 0 ? out->fwd_compute_s / comp : 0.5;
	out->fwd_s = out->fwd_compute_s + comm * fwd_share;
	out->bwd_s = out->bwd_compute_s + comm * (1 - fwd_share);
}
