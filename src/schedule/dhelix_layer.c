/*
 * DHelix (seed 002): the operator sequences of a layer (its forward and
 * backward, timed by the cost model) and their candidate orders -- the
 * backward's movable weight gradients, the forward's MoE router (sec. 4.2).
 */
#include <string.h>

#include "dhelix_int.h"
#include "paraplan/cost.h"
#include "util/util.h"
#include "workload/workload_int.h"

/* ------------------------------------------------------------ sequences */

/* Where a collective goes in its phase's sequence: before or after the first
 * operator named `anchor` (several names: the first that exists). */
typedef struct anchor {
	const char *coll;
	pp_phase phase;
	bool after;
	const char *ops[4];
} anchor;

static const anchor anchors[] = {
    /* forward: all-gather in before the column-parallel GEMM, reduce-scatter
     * (or all-reduce) out after the row-parallel one; EP around the experts */
    {"tp_attn_in", PP_PHASE_FWD, true, {"attn_norm"}},
    {"tp_attn_out", PP_PHASE_FWD, true, {"proj"}},
    {"tp2_k", PP_PHASE_FWD, false, {"attn"}},
    {"tp2_v", PP_PHASE_FWD, false, {"attn"}},
    {"tp_mlp_in", PP_PHASE_FWD, true, {"mlp_norm"}},
    {"ep_dispatch", PP_PHASE_FWD, true, {"permute"}},
    {"etp_gather", PP_PHASE_FWD, true, {"permute"}},
    {"etp_scatter", PP_PHASE_FWD, true, {"expert_fc2"}},
    {"ep_combine", PP_PHASE_FWD, true, {"expert_fc2"}},
    {"tp_mlp_out", PP_PHASE_FWD, true, {"fc2", "shared_fc2"}},
    /* backward (sequence order): the conjugates */
    {"tp_mlp_out", PP_PHASE_BWD_INPUT, false, {"fc2", "shared_fc2"}},
    {"ep_combine", PP_PHASE_BWD_INPUT, false, {"expert_fc2"}},
    {"etp_scatter", PP_PHASE_BWD_INPUT, false, {"expert_fc2"}},
    {"etp_gather", PP_PHASE_BWD_INPUT, false, {"permute"}},
    {"ep_dispatch", PP_PHASE_BWD_INPUT, false, {"permute"}},
    {"tp_mlp_in", PP_PHASE_BWD_INPUT, true, {"fc1", "shared_fc1"}},
    {"tp_attn_out", PP_PHASE_BWD_INPUT, false, {"proj"}},
    {"tp2_k", PP_PHASE_BWD_INPUT, true, {"attn"}},
    {"tp2_v", PP_PHASE_BWD_INPUT, true, {"attn"}},
    {"tp_attn_in", PP_PHASE_BWD_INPUT, true, {"qkv", "q", "q_down"}},
};

static const anchor *find_anchor(const char *name, pp_phase ph)
{
	for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; i++)
		if (anchors[i].phase == ph && strcmp(anchors[i].coll, name) == 0)
			return &anchors[i];
	return NULL;
}

static pp_dh_kind op_kind(pp_op_kind k)
{
	return k == PP_OP_GEMM ? PP_DH_GEMM : k == PP_OP_ATTN ? PP_DH_ATTN : PP_DH_ELEM;
}

/* Static "NAME.wgrad" names for the weight gradients of the GEMMs the layer
 * builder knows; other GEMMs fall back to "wgrad". */
static const char *wgrad_name(const char *op)
{
	static const char *const names[][2] = {
	    {"qkv", "qkv.wgrad"},
	    {"q", "q.wgrad"},
	    {"q_down", "q_down.wgrad"},
	    {"q_up", "q_up.wgrad"},
	    {"kv_down", "kv_down.wgrad"},
	    {"kv_up", "kv_up.wgrad"},
	    {"proj", "proj.wgrad"},
	    {"fc1", "fc1.wgrad"},
	    {"fc2", "fc2.wgrad"},
	    {"router", "router.wgrad"},
	    {"expert_fc1", "expert_fc1.wgrad"},
	    {"expert_fc2", "expert_fc2.wgrad"},
	    {"shared_fc1", "shared_fc1.wgrad"},
	    {"shared_fc2", "shared_fc2.wgrad"},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(names[i][0], op) == 0)
			return names[i][1];
	return "wgrad";
}

typedef struct builder {
	pp_dh_seq *q;
	bool overflow;
} builder;

static int push_seg(builder *b, const char *name, pp_dh_kind k, double s)
{
	if (b->q->n >= PP_DH_MAX_SEGS) {
		b->overflow = true;
		return -1;
	}
	pp_dh_seg *g = &b->q->s[b->q->n];
	g->name = name;
	g->kind = k;
	g->seconds = s;
	g->dep = -1;
	g->before = -1;
	g->movable = false;
	return b->q->n++;
}

/* Collective seconds as the stage cost counts them (one micro-batch). */
static double coll_seconds(const pp_coll *c, const pp_system *s, const pp_plan *p,
                           const pp_layout *lay)
{
	double scale = c->busiest > 0 ? c->busiest : 1; /* skewed MoE routing */
	double t = pp_coll_time(s, &lay[c->group], c->kind, c->bytes * scale, NULL) * c->count;
	if (c->group == PP_GROUP_TP && p->tp_overlap)
		t *= 1 - s->tp_overlap_hidden;
	return t;
}

static pp_dh_kind coll_kind(const pp_coll *c, const pp_layout *lay)
{
	const pp_layout *l = &lay[c->group];
	return l->size > (l->per_domain < 1 ? 1 : l->per_domain) ? PP_DH_COMM_CROSS
	                                                         : PP_DH_COMM_INTRA;
}

/* The sequence of one phase group: operations of phases `ph` (recompute
 * first in backward), in forward (fwd) or reverse order, with their
 * collectives. */
static void build_seq(builder *b, const pp_work *w, bool fwd, const pp_system *s, const pp_job *job,
                      const pp_plan *p, const pp_layout *lay, int *nmov)
{
	/* Operation indices of the phase, in sequence order. */
	int idx[PP_MAX_OPS], n = 0;
	if (!fwd) /* recompute: the forward again, before the backward */
		for (int i = 0; i < w->nops; i++)
			if (w->ops[i].phase == PP_PHASE_RECOMPUTE)
				push_seg(b, w->ops[i].name, op_kind(w->ops[i].kind),
				         pp_op_time(&s->gpu, job->precision, &w->ops[i]));
	for (int i = 0; i < w->nops; i++) {
		int k = fwd ? i : w->nops - 1 - i;
		if (w->ops[k].phase == (fwd ? PP_PHASE_FWD : PP_PHASE_BWD_INPUT))
			idx[n++] = k;
	}
	pp_phase ph = fwd ? PP_PHASE_FWD : PP_PHASE_BWD_INPUT;
	/* CP ring traffic: merged into the attention of its phase. */
	double cp = 0;
	for (int c = 0; c < w->ncolls; c++)
		if (w->colls[c].phase == ph && w->colls[c].group == PP_GROUP_CP)
			cp += coll_seconds(&w->colls[c], s, p, lay);
	/* Which collective goes before / after which operation. */
	int where[PP_MAX_COLLS];
	bool after[PP_MAX_COLLS];
	for (int c = 0; c < w->ncolls; c++) {
		where[c] = -1;
		after[c] = true;
		const pp_coll *x = &w->colls[c];
		if (x->phase != ph || x->group == PP_GROUP_CP || x->overlapped)
			continue;
		const anchor *a = find_anchor(x->name, ph);
		if (a) {
			for (int t = 0; t < 4 && a->ops[t] && where[c] < 0; t++)
				for (int j = 0; j < n; j++)
					if (strcmp(w->ops[idx[j]].name, a->ops[t]) == 0) {
						where[c] = j;
						break;
					}
			after[c] = a->after;
		}
		if (where[c] < 0) /* no anchor: at the end of the phase */
			where[c] = n - 1;
	}
	for (int j = 0; j < n; j++) {
		for (int c = 0; c < w->ncolls; c++)
			if (where[c] == j && !after[c])
				push_seg(b, w->colls[c].name, coll_kind(&w->colls[c], lay),
				         coll_seconds(&w->colls[c], s, p, lay));
		const pp_op *o = &w->ops[idx[j]];
		double t = pp_op_time(&s->gpu, job->precision, o);
		if (o->kind == PP_OP_ATTN && cp > t)
			t = cp; /* the ring hides under attention, the excess shows */
		int at = push_seg(b, o->name, op_kind(o->kind), t);
		if (!fwd && o->kind == PP_OP_GEMM) {
			/* its weight gradient: created right after the dgrad op */
			for (int k = idx[j] + 1; k < w->nops; k++) {
				const pp_op *g = &w->ops[k];
				if (g->phase == PP_PHASE_BWD_WEIGHT &&
				    strcmp(g->name, o->name) == 0) {
					int wi = push_seg(b, wgrad_name(o->name), PP_DH_GEMM,
					                  pp_op_time(&s->gpu, job->precision, g));
					if (wi >= 0 && at >= 0 && *nmov < PP_DH_MAX_MOVABLE) {
						b->q->s[wi].dep = at;
						b->q->s[wi].movable = true;
						(*nmov)++;
					}
					break;
				}
				if (g->phase == PP_PHASE_FWD)
					break;
			}
		}
		for (int c = 0; c < w->ncolls; c++)
			if (where[c] == j && after[c])
				push_seg(b, w->colls[c].name, coll_kind(&w->colls[c], lay),
				         coll_seconds(&w->colls[c], s, p, lay));
	}
}

/*
 * The MoE router's forward may move (seed 002 §4.2: "the router computation
 * in MoE").  Its gate GEMM reads the MLP norm's output and its top-k reads
 * the gate's logits; the permute is the first consumer of both (it sorts
 * the tokens by the top-k's choice).  In src/workload/ops.c the router reads
 * the tokens this rank holds, Td = T / sd: under SP the local shard, not the
 * all-gathered tensor, so the TP/SP all-gather of the MLP input (present in
 * an MoE layer only with a shared expert, whose column-parallel FC1 is its
 * one consumer) is independent of the router, and the router may run before
 * it, around it (the gate before, the top-k after) or after it, the
 * default.  Nothing else lies between the norm and the permute in the
 * forward (without SP or without a shared expert: nothing at all, one
 * order).  The backward does not move: in paraplan's operation list the
 * permute is one element-wise operation (permute and unpermute together)
 * whose backward follows the dispatch's all-to-all, the top-k's backward
 * needs it, and the router's dgrad must precede the MLP norm's backward,
 * with nothing between them; the router's weight gradient already moves as
 * every weight gradient does.  Marks the gate and top-k movable with their
 * bounds (dep: the norm resp. the gate; before: the permute).
 */
static void mark_router(pp_dh_seq *q)
{
	int norm = -1, r = -1;
	for (int i = 0; i < q->n && r < 0; i++) {
		if (strcmp(q->s[i].name, "mlp_norm") == 0)
			norm = i;
		else if (strcmp(q->s[i].name, "router") == 0)
			r = i;
	}
	if (norm < 0 || r < 0 || r + 2 >= q->n || strcmp(q->s[r + 1].name, "topk") != 0 ||
	    strcmp(q->s[r + 2].name, "permute") != 0)
		return;
	for (int i = norm + 1; i < r; i++)
		if (!ppi_dh_is_comm(q->s[i].kind)) /* only the norm's own collectives lie between */
			return;
	q->s[r].movable = q->s[r + 1].movable = true;
	q->s[r].dep = norm;
	q->s[r + 1].dep = r;
	q->s[r].before = q->s[r + 1].before = r + 2;
}

pp_status pp_dh_layer_build(const pp_model *m, const pp_system *s, const pp_job *job,
                            const pp_plan *plan, int layer, pp_work *ws, pp_dh_layer *out,
                            pp_error *err)
{
	if (plan->summa || plan->tp2 > 1)
		return ppi_fail(err, "", "plan.summa",
		                "DHelix pairing is not modelled for 2D tensor parallelism");
	if (layer < 0 || layer >= m->num_layers)
		return ppi_fail(err, "", "layer", "layer %d is outside 0..%d", layer,
		                m->num_layers - 1);
	memset(out, 0, sizeof *out);
	pp_layout lay[PP_NGROUPS];
	pp_plan_layouts(plan, s, lay);
	pp_layer_work(m, job, plan, layer, ws);
	int nmov = 0;
	builder bf = {&out->fwd, false}, bb = {&out->bwd, false};
	build_seq(&bf, ws, true, s, job, plan, lay, &nmov);
	build_seq(&bb, ws, false, s, job, plan, lay, &nmov);
	if (ws->overflow || bf.overflow || bb.overflow)
		return ppi_fail(err, "", "workload",
		                "internal: a layer has more operators than PP_DH_MAX_SEGS hold");
	out->nmovable = nmov;
	mark_router(&out->fwd);
	for (int i = 0; i < out->fwd.n; i++)
		out->fwd_s += out->fwd.s[i].seconds;
	for (int i = 0; i < out->bwd.n; i++)
		out->bwd_s += out->bwd.s[i].seconds;
	return PP_OK;
}

int pp_dh_candidate_count(const pp_dh_layer *l)
{
	return 1 << l->nmovable;
}

void pp_dh_candidate(const pp_dh_layer *l, int idx, pp_dh_seq *out)
{
	const pp_dh_seq *b = &l->bwd;
	int n = 0, k = 0;
	int deferred[PP_DH_MAX_SEGS], nd = 0;
	/* dep indices refer to the default order; remap as segments move */
	int map[PP_DH_MAX_SEGS];
	for (int i = 0; i < b->n; i++) {
		if (b->s[i].movable) {
			if (idx >> k & 1) {
				deferred[nd++] = i;
				k++;
				continue;
			}
			k++;
		}
		map[i] = n;
		out->s[n++] = b->s[i];
	}
	for (int d = 0; d < nd; d++) {
		map[deferred[d]] = n;
		out->s[n++] = b->s[deferred[d]];
	}
	out->n = n;
	for (int i = 0; i < n; i++)
		if (out->s[i].dep >= 0)
			out->s[i].dep = map[out->s[i].dep];
}

void ppi_dh_fwd_block(const pp_dh_seq *f, int *r, int *n, int *m)
{
	*r = -1;
	*n = *m = 0;
	for (int i = 0; i < f->n; i++)
		if (f->s[i].movable) {
			*r = i;
			break;
		}
	if (*r < 0)
		return;
	while (*r + *n < f->n && *n < PP_DH_FWD_MOVABLE && f->s[*r + *n].movable)
		(*n)++;
	*m = *r - f->s[*r].dep - 1;
}

int pp_dh_fwd_candidate_count(const pp_dh_layer *l)
{
	int r, n, m;
	ppi_dh_fwd_block(&l->fwd, &r, &n, &m);
	return r < 0 ? 1 : n == 1 ? m + 1 : (m + 1) * (m + 2) / 2;
}

void pp_dh_fwd_candidate(const pp_dh_layer *l, int idx, pp_dh_seq *out)
{
	const pp_dh_seq *f = &l->fwd;
	int r, nb, m;
	ppi_dh_fwd_block(f, &r, &nb, &m);
	*out = *f;
	if (r < 0 || idx <= 0 || idx >= pp_dh_fwd_candidate_count(l))
		return;
	/* placement idx: how many of the m fixed segments precede each movable
	 * one, p[0] <= p[1], counted down from (m, m), the default */
	int p[PP_DH_FWD_MOVABLE] = {m, m}, c = 0;
	for (int p1 = m; p1 >= 0; p1--)
		for (int p0 = p1; p0 >= (nb == 1 ? p1 : 0); p0--, c++)
			if (c == idx) {
				p[0] = p0;
				p[1] = p1;
			}
	int g0 = r - m, map[PP_DH_MAX_SEGS], n = g0;
	for (int i = 0; i < g0; i++)
		map[i] = i;
	for (int q = 0; q <= m; q++) {
		for (int e = 0; e < nb; e++)
			if (p[e] == q) {
				map[r + e] = n;
				out->s[n++] = f->s[r + e];
			}
		if (q < m) {
			map[g0 + q] = n;
			out->s[n++] = f->s[g0 + q];
		}
	}
	for (int i = r + nb; i < f->n; i++)
		map[i] = i;
	for (int i = 0; i < f->n; i++) {
		if (out->s[i].dep >= 0)
			out->s[i].dep = map[out->s[i].dep];
		if (out->s[i].before >= 0)
			out->s[i].before = map[out->s[i].before];
	}
}

/* q matched segment by segment to the default order b (name, time and
 * movable flag): pos[i] its index there; false when q is not a permutation
 * of b. */
static bool match_order(const pp_dh_seq *b, const pp_dh_seq *q, int *pos)
{
	if (q->n != b->n)
		return false;
	bool used[PP_DH_MAX_SEGS] = {false};
	for (int i = 0; i < q->n; i++) {
		pos[i] = -1;
		for (int j = 0; j < b->n; j++)
			if (!used[j] && b->s[j].name == q->s[i].name &&
			    b->s[j].seconds == q->s[i].seconds &&
			    b->s[j].movable == q->s[i].movable) {
				used[j] = true;
				pos[i] = j;
				break;
			}
		if (pos[i] < 0)
			return false;
	}
	return true;
}

bool pp_dh_order_valid(const pp_dh_layer *l, const pp_dh_seq *q)
{
	/* Match each segment of q to the default order by name, time and flag:
	 * the fixed ones must appear in default order, each movable one after
	 * its dep and before its bound. */
	int pos[PP_DH_MAX_SEGS];
	const pp_dh_seq *b = &l->fwd;
	if (!match_order(b, q, pos)) {
		b = &l->bwd;
		if (!match_order(b, q, pos))
			return false;
	}
	int at[PP_DH_MAX_SEGS]; /* default index -> place in q */
	for (int i = 0; i < q->n; i++)
		at[pos[i]] = i;
	int last_fixed = -1;
	for (int i = 0; i < q->n; i++) {
		const pp_dh_seg *g = &b->s[pos[i]];
		if (!g->movable) {
			if (pos[i] < last_fixed)
				return false;
			last_fixed = pos[i];
		} else if ((g->dep >= 0 && at[g->dep] > i) ||
		           (g->before >= 0 && at[g->before] < i)) {
			return false;
		}
	}
	return true;
}
