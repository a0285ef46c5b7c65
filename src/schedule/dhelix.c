/*
 * DHelix (seed 002): operator sequences of a layer, the overlap model (Eq. 1)
 * and the pairing of a forward with a backward sequence by dynamic
 * programming (Eq. 2).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "paraplan/cost.h"
#include "paraplan/dhelix.h"
#include "util/util.h"

static const char *const kind_names[PP_DH_NKINDS] = {"gemm", "attn", "elem", "comm-intra",
                                                     "comm-cross"};

const char *pp_dh_kind_name(pp_dh_kind k)
{
	return (unsigned)k < PP_DH_NKINDS ? kind_names[k] : "?";
}

static bool is_comm(pp_dh_kind k)
{
	return k == PP_DH_COMM_INTRA || k == PP_DH_COMM_CROSS;
}

/* ------------------------------------------------------- overlap model */

/*
 * Built-in platforms.  Seed 002 §3.1 and Fig. 4 give the ranking of the
 * pairwise OEF, not numbers in its text: computation-computation pairs
 * overlap poorly, FlashAttention with GEMM worst; computation with
 * communication well; intra- with cross-node communication well; a
 * collective with one of its own kind poorly (forbidden on the same link,
 * §4.2).  The values below follow that ranking (data/overlap/NAME.json cite
 * each); Table 7 (H100, TP 8) gives kernel_slowdown 32.48% and launch
 * interval 9.65% of the communication time, and the computation-
 * communication OEF is 1 - kernel_slowdown.
 */
typedef struct builtin {
	const char *name;
	double gemm_gemm, gemm_attn, attn_attn, elem_gemm, elem_attn, elem_elem, intra_cross;
	double slowdown, launch;
} builtin;

static const builtin builtins[] = {
    {"a40", 0.15, 0.0, 0.10, 0.30, 0.20, 0.20, 0.80, 0.3248, 0.0965},
    {"a800", 0.15, 0.0, 0.10, 0.30, 0.20, 0.20, 0.80, 0.3248, 0.0965},
    {"h100", 0.15, 0.0, 0.10, 0.30, 0.20, 0.20, 0.80, 0.3248, 0.0965},
};

static void fill_table(pp_dh_overlap *o, const builtin *b)
{
	memset(o, 0, sizeof *o);
	snprintf(o->name, sizeof o->name, "%s", b->name);
	double comp_comm = 1 - b->slowdown;
	double t[PP_DH_NKINDS][PP_DH_NKINDS] = {
	    /* gemm       attn          elem          intra       cross */
	    {b->gemm_gemm, b->gemm_attn, b->elem_gemm, comp_comm, comp_comm},
	    {b->gemm_attn, b->attn_attn, b->elem_attn, comp_comm, comp_comm},
	    {b->elem_gemm, b->elem_attn, b->elem_elem, comp_comm, comp_comm},
	    {comp_comm, comp_comm, comp_comm, 0.0, b->intra_cross},
	    {comp_comm, comp_comm, comp_comm, b->intra_cross, 0.0},
	};
	memcpy(o->oef, t, sizeof t);
	o->kernel_slowdown = b->slowdown;
	o->launch_interval = b->launch;
	snprintf(o->source, sizeof o->source,
	         "built in (data/overlap/%s.json): seed 002 §3.1/Fig. 4 ranking, Table 7 (H100 "
	         "TP 8) slowdown and launch interval",
	         b->name);
}

pp_status pp_dh_overlap_default(const char *platform, pp_dh_overlap *out, pp_error *err)
{
	/* filled once per thread: a search over wshape asks for it per plan */
	enum { NB = sizeof builtins / sizeof builtins[0] };
	static _Thread_local pp_dh_overlap filled[NB];
	static _Thread_local bool done[NB];
	for (size_t i = 0; i < NB; i++)
		if (ppi_streq(builtins[i].name, platform)) {
			if (!done[i]) {
				fill_table(&filled[i], &builtins[i]);
				done[i] = true;
			}
			*out = filled[i];
			return PP_OK;
		}
	return ppi_fail(err, "", "overlap", "unknown overlap platform \"%s\" (a40, a800, h100)",
	                platform);
}

const char *pp_dh_platform_of_gpu(const char *g)
{
	if (strncasecmp(g, "a40", 3) == 0)
		return "a40";
	if (strncasecmp(g, "a100", 4) == 0 || strncasecmp(g, "a800", 4) == 0)
		return "a800";
	return "h100";
}

/* "gemm" .. "comm-cross" -> kind, -1 when unknown. */
static int kind_parse(const char *s, size_t n)
{
	for (int k = 0; k < PP_DH_NKINDS; k++)
		if (strlen(kind_names[k]) == n && strncmp(kind_names[k], s, n) == 0)
			return k;
	return -1;
}

pp_status pp_dh_overlap_from_json(const char *text, size_t len, const char *source,
                                  pp_dh_overlap *out, pp_error *err)
{
	json_t *root;
	PPI_TRY(ppi_json_parse_object(text, len, source, &root, err));
	memset(out, 0, sizeof *out);
	for (int i = 0; i < PP_DH_NKINDS; i++)
		for (int j = 0; j < PP_DH_NKINDS; j++)
			out->oef[i][j] = -1;
	ppi_obj r = {root, source, "overlap", err};
	static const char *const keys[] = {
	    "name", "kernel_slowdown", "launch_interval", "oef", "source", "sources", NULL};
	pp_status st = ppi_obj_keys(&r, keys);
	if (!st)
		st = ppi_get_str(&r, "name", true, out->name, sizeof out->name);
	if (!st)
		st = ppi_get_num(&r, "kernel_slowdown", true, 0, 1, &out->kernel_slowdown);
	if (!st)
		st = ppi_get_num(&r, "launch_interval", true, 0, 1, &out->launch_interval);
	json_t *oef = NULL;
	if (!st)
		st = ppi_get_obj(&r, "oef", true, &oef);
	if (!st) {
		const char *key;
		json_t *v;
		json_object_foreach (oef, key, v) {
			/* "KIND-KIND": kinds contain '-' ("comm-intra"), so try each split */
			int a = -1, b = -1;
			size_t n = strlen(key);
			for (size_t c = 1; c + 1 < n && (a < 0 || b < 0); c++) {
				if (key[c] != '-')
					continue;
				a = kind_parse(key, c);
				b = kind_parse(key + c + 1, n - c - 1);
			}
			if (a < 0 || b < 0) {
				st = ppi_fail(
				    err, source, "overlap.oef",
				    "unknown pair \"%s\": expected KIND-KIND with kinds gemm, "
				    "attn, elem, comm-intra, comm-cross",
				    key);
				break;
			}
			if (!json_is_number(v) || json_number_value(v) < 0 ||
			    json_number_value(v) > 1) {
				st = ppi_fail(err, source, "overlap.oef",
				              "oef.%s must be a number in [0, 1]", key);
				break;
			}
			out->oef[a][b] = out->oef[b][a] = json_number_value(v);
		}
	}
	for (int i = 0; i < PP_DH_NKINDS && !st; i++)
		for (int j = 0; j < PP_DH_NKINDS && !st; j++)
			if (out->oef[i][j] < 0)
				st = ppi_fail(err, source, "overlap.oef", "oef.%s-%s is missing",
				              kind_names[i], kind_names[j]);
	if (!st)
		snprintf(out->source, sizeof out->source, "%s", source);
	json_decref(root);
	return st;
}

pp_status pp_dh_overlap_load(const char *path, pp_dh_overlap *out, pp_error *err)
{
	char *text;
	size_t len;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_dh_overlap_from_json(text, len, path, out, err);
	free(text);
	return st;
}

pp_status pp_dh_overlap_resolve(const char *ref, pp_dh_overlap *out, pp_error *err)
{
	if (strchr(ref, '/') || strstr(ref, ".json"))
		return pp_dh_overlap_load(ref, out, err);
	return pp_dh_overlap_default(ref, out, err);
}

void pp_dh_overlap_of_system(const pp_system *s, pp_dh_overlap *out)
{
	if (!s->dh_overlap_set) {
		pp_error err;
		if (pp_dh_overlap_default(pp_dh_platform_of_gpu(s->gpu.name), out, &err) == PP_OK)
			return;
	}
	memset(out, 0, sizeof *out);
	memcpy(out->name, s->dh_overlap_name, sizeof out->name);
	_Static_assert(sizeof out->oef == sizeof s->dh_oef, "overlap table shape");
	memcpy(out->oef, s->dh_oef, sizeof out->oef);
	out->kernel_slowdown = s->dh_kernel_slowdown;
	out->launch_interval = s->dh_launch_interval;
}

void pp_dh_system_set_overlap(pp_system *s, const pp_dh_overlap *o)
{
	s->dh_overlap_set = true;
	memcpy(s->dh_overlap_name, o->name, sizeof s->dh_overlap_name);
	memcpy(s->dh_oef, o->oef, sizeof s->dh_oef);
	s->dh_kernel_slowdown = o->kernel_slowdown;
	s->dh_launch_interval = o->launch_interval;
}

double pp_dh_oef(double ti, double tj, double pij)
{
	double mn = ti < tj ? ti : tj;
	return mn > 0 ? (ti + tj - pij) / mn : 0;
}

double pp_dh_pair_time(const pp_dh_overlap *o, pp_dh_kind ki, double ti, pp_dh_kind kj, double tj)
{
	if (ti <= 0)
		return tj > 0 ? tj : 0;
	if (tj <= 0)
		return ti;
	if (is_comm(ki) && is_comm(kj) && ki == kj)
		return INFINITY; /* two collectives on the same link */
	double mn = ti < tj ? ti : tj;
	double p = ti + tj - o->oef[ki][kj] * mn;
	/* Table 7: each paired segment with a collective and a computation
	 * pays the launch interval on the collective's time. */
	if (is_comm(ki) != is_comm(kj))
		p += o->launch_interval * (is_comm(ki) ? ti : tj);
	return p;
}

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
	g->movable = false;
	return b->q->n++;
}

/* Collective seconds as the stage cost counts them (one micro-batch). */
static double coll_seconds(const pp_coll *c, const pp_system *s, const pp_plan *p,
                           const pp_layout *lay)
{
	double t = pp_coll_time(s, &lay[c->group], c->kind, c->bytes, NULL) * c->count;
	if (c->group == PP_GROUP_TP && p->tp_overlap)
		t *= 1 - s->tp_overlap_hidden;
	if ((c->group == PP_GROUP_EP || c->group == PP_GROUP_ETP) && p->ep_overlap)
		t *= 1 - s->ep_overlap_hidden;
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

bool pp_dh_order_valid(const pp_dh_layer *l, const pp_dh_seq *q)
{
	const pp_dh_seq *b = &l->bwd;
	if (q->n != b->n)
		return false;
	/* Match each segment of q to the default order by name and kind: the
	 * fixed ones must appear in default order, each weight gradient after
	 * the dgrad it depends on. */
	int pos[PP_DH_MAX_SEGS];
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
	int last_fixed = -1;
	for (int i = 0; i < q->n; i++) {
		const pp_dh_seg *g = &b->s[pos[i]];
		if (!g->movable) {
			if (pos[i] < last_fixed)
				return false;
			last_fixed = pos[i];
		} else {
			/* its dgrad (default index g->dep) must come earlier in q */
			bool ok = false;
			for (int k = 0; k < i; k++)
				ok |= pos[k] == g->dep;
			if (!ok)
				return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------- pairing */

_Static_assert(PP_DH_SEG_OPS >= 1 && PP_DH_SEG_OPS <= 4, "segment length: 1..4 operators");

/*
 * The co-run of two operator chains between barriers (pp_dh_segment_time's
 * model): kinds `ka`, times `ta` of one strand's `na` operators in order, the
 * same for the other's `nb`.  While x and y are both active each advances at
 * rate 1 / sigma, sigma = 2 - OEF(x, y), so the one with less work left ends
 * after sigma x its remaining work; that strand's next operator then starts.
 * For two single operators: sigma min + (max - min) = T_x + T_y - OEF min
 * (Eq. 1), so the 1 x 1 case is pp_dh_pair_time itself (with its same-link
 * rule).  out[a - 1] = P(ka[0..a), kb[0..nb)) for every a = 1..na: the
 * shorter prefixes run the same until their last operator ends, and the
 * other strand's rest then runs alone (one pass for all a).
 */
/* The overlap table as chain_prefixes reads it: sigma = 2 - OEF, and the
 * launch interval a collective pays when co-run with computation. */
typedef struct chain_model {
	double sigma[PP_DH_NKINDS][PP_DH_NKINDS];
	double launch[PP_DH_NKINDS][PP_DH_NKINDS]; /* row: the collective's kind */
	const pp_dh_overlap *o;
} chain_model;

static void chain_model_of(const pp_dh_overlap *o, chain_model *m)
{
	for (int a = 0; a < PP_DH_NKINDS; a++)
		for (int b = 0; b < PP_DH_NKINDS; b++) {
			m->sigma[a][b] = 2 - o->oef[a][b];
			m->launch[a][b] = is_comm((pp_dh_kind)a) && !is_comm((pp_dh_kind)b)
			                      ? o->launch_interval
			                      : 0;
		}
	m->o = o;
}

static void chain_prefixes(const chain_model *m, const pp_dh_kind *ka, const double *ta, int na,
                           const pp_dh_kind *kb, const double *tb, int nb, double *out)
{
	double rest[PP_DH_SEG_OPS + 1]; /* rest[j]: tb[j + 1..nb) */
	rest[nb - 1] = 0;
	for (int j = nb - 2; j >= 0; j--)
		rest[j] = rest[j + 1] + tb[j + 1];
	double t = 0, launch = 0;
	int i = 0, j = 0;
	double ra = ta[0], rb = tb[0];
	bool ca = false, cb = false; /* launch interval charged for the current op */
	while (i < na) {
		if (ra <= 0) { /* prefix i + 1 ends here; the other strand's rest alone */
			out[i] = t + launch + (j < nb ? (rb > 0 ? rb : 0) + rest[j] : 0);
			if (++i < na)
				ra = ta[i], ca = false;
			continue;
		}
		if (j >= nb) { /* the other strand is done: this one alone */
			t += ra;
			ra = 0;
			continue;
		}
		if (rb <= 0) {
			if (++j < nb)
				rb = tb[j], cb = false;
			continue;
		}
		double d = ra < rb ? ra : rb;
		t += m->sigma[ka[i]][kb[j]] * d;
		ra -= d;
		rb -= d;
		/* Table 7: a collective co-run with computation of the other strand
		 * leaves launch_interval of its time visible (paid at the start of
		 * the paired segment, once per collective). */
		double la = m->launch[ka[i]][kb[j]], lb = m->launch[kb[j]][ka[i]];
		if (la > 0 && !ca) {
			launch += la * ta[i];
			ca = true;
		}
		if (lb > 0 && !cb) {
			launch += lb * tb[j];
			cb = true;
		}
	}
	if (nb == 1) /* a single operator with a single operator: Eq. 1 */
		out[0] = pp_dh_pair_time(m->o, ka[0], ta[0], kb[0], tb[0]);
}

double pp_dh_segment_time(const pp_dh_overlap *o, const pp_dh_seg *f, int nf, const pp_dh_seg *b,
                          int nb)
{
	pp_dh_kind ka[PP_DH_SEG_OPS], kb[PP_DH_SEG_OPS];
	double ta[PP_DH_SEG_OPS], tb[PP_DH_SEG_OPS];
	double solo = 0;
	if (nf == 0 || nb == 0 || nf > PP_DH_SEG_OPS || nb > PP_DH_SEG_OPS) {
		if (nf && nb)
			return INFINITY; /* longer than a segment may be */
		for (int i = 0; i < nf; i++)
			solo += f[i].seconds;
		for (int i = 0; i < nb; i++)
			solo += b[i].seconds;
		return solo;
	}
	for (int i = 0; i < nf; i++)
		ka[i] = f[i].kind, ta[i] = f[i].seconds;
	for (int i = 0; i < nb; i++)
		kb[i] = b[i].kind, tb[i] = b[i].seconds;
	double out[PP_DH_SEG_OPS];
	chain_model m;
	chain_model_of(o, &m);
	chain_prefixes(&m, ka, ta, nf, kb, tb, nb, out);
	return out[nf - 1];
}

static int clamp_k(int k)
{
	return k < 1 ? 1 : k > PP_DH_SEG_OPS ? PP_DH_SEG_OPS : k;
}

double pp_dh_pair_k(const pp_dh_overlap *o, const pp_dh_seq *f, const pp_dh_seq *b, int k,
                    pp_dh_plan *plan)
{
	const int nf = f->n, nb = b->n, W = PP_DH_MAX_SEGS + 1, K = clamp_k(k);
	/* T[i][j]: best make-span of the first i forward and j backward operators;
	 * how[i][j]: the last step's segment lengths, forward a and backward c
	 * (a 0: the backward alone, c 0: the forward alone), as 16 a + c. */
	static _Thread_local double T[(PP_DH_MAX_SEGS + 1) * (PP_DH_MAX_SEGS + 1)];
	static _Thread_local unsigned char how[(PP_DH_MAX_SEGS + 1) * (PP_DH_MAX_SEGS + 1)];
	T[0] = 0;
	for (int i = 0; i <= nf; i++)
		for (int j = 0; j <= nb; j++) {
			if (!i && !j)
				continue;
			double best = INFINITY;
			unsigned char h = 0;
			if (i > 0) {
				best = T[(i - 1) * W + j] + f->s[i - 1].seconds;
				h = 16;
			}
			if (j > 0) {
				double t = T[i * W + j - 1] + b->s[j - 1].seconds;
				if (t < best) {
					best = t;
					h = 1;
				}
			}
			for (int c = 1; c <= K && c <= j; c++)
				for (int a = 1; a <= K && a <= i; a++) {
					double t =
					    T[(i - a) * W + j - c] +
					    pp_dh_segment_time(o, &f->s[i - a], a, &b->s[j - c], c);
					if (t < best) {
						best = t;
						h = (unsigned char)(16 * a + c);
					}
				}
			T[i * W + j] = best;
			how[i * W + j] = h;
		}
	double t = T[nf * W + nb];
	if (plan) {
		plan->t_opt = t;
		int i = nf, j = nb, n = 0;
		pp_dh_step rev[2 * PP_DH_MAX_SEGS];
		while (i > 0 || j > 0) {
			int a = how[i * W + j] / 16, c = how[i * W + j] % 16;
			pp_dh_step st;
			st.nf = a;
			st.nb = c;
			st.f = a ? i - a : -1;
			st.b = c ? j - c : -1;
			st.seconds = pp_dh_segment_time(o, &f->s[i - a], a, &b->s[j - c], c);
			i -= a;
			j -= c;
			rev[n++] = st;
		}
		plan->nsteps = n;
		for (int s = 0; s < n; s++)
			plan->step[s] = rev[n - 1 - s];
	}
	return t;
}

double pp_dh_pair(const pp_dh_overlap *o, const pp_dh_seq *f, const pp_dh_seq *b, pp_dh_plan *plan)
{
	return pp_dh_pair_k(o, f, b, PP_DH_SEG_OPS, plan);
}

/*
 * Scratch of the pairing over candidate orders (thread-local, reused: no
 * allocation).  A backward segment is a tuple of up to K default-order
 * indices; the candidates share most of them, so P of every forward segment
 * with a backward tuple (a column) is computed once per layer and found
 * again by the tuple (open addressing, generation-stamped slots).
 */
#define DH_SLOTS 4096
#define DH_COL_CAP (PP_DH_MAX_SEGS * PP_DH_SEG_OPS * PP_DH_MAX_SEGS * PP_DH_SEG_OPS)
typedef struct pair_scratch {
	unsigned gen;
	unsigned stamp[DH_SLOTS];
	uint32_t key[DH_SLOTS];
	int col[DH_SLOTS]; /* offset of the column in P */
	int used;          /* doubles of P in use */
	int nkeys;         /* slots in use */
	chain_model m;     /* the layer's table and forward sequence */
	pp_dh_kind kf[PP_DH_MAX_SEGS];
	double tf[PP_DH_MAX_SEGS];
	double P[DH_COL_CAP];
	double T[(PP_DH_MAX_SEGS + 1) * (PP_DH_MAX_SEGS + 1)];
} pair_scratch;

static void scratch_reset(pair_scratch *x)
{
	if (++x->gen == 0) { /* wrapped: stamps of old generations could match */
		memset(x->stamp, 0, sizeof x->stamp);
		x->gen = 1;
	}
	x->used = 0;
	x->nkeys = 0;
}

/* The column of backward tuple perm[j-c..j): P(f[i-a..i), tuple) at
 * (i - 1) K + a - 1, INFINITY where a > i. */
static const double *pair_column(pair_scratch *x, const pp_dh_layer *l, int K, const int *perm,
                                 int j, int c)
{
	uint32_t key = (uint32_t)c;
	for (int q = 0; q < c; q++)
		key |= (uint32_t)perm[j - c + q] << (3 + 7 * q);
	uint32_t h = (key * 2654435761u) >> 20; /* 12 bits: DH_SLOTS */
	for (;; h = (h + 1) & (DH_SLOTS - 1)) {
		if (x->stamp[h] != x->gen)
			break;
		if (x->key[h] == key)
			return x->P + x->col[h];
	}
	const int nf = l->fwd.n;
	double *col = x->P + x->used;
	x->stamp[h] = x->gen;
	x->key[h] = key;
	x->col[h] = x->used;
	x->used += nf * K;
	x->nkeys++;
	pp_dh_kind kb[PP_DH_SEG_OPS];
	double tb[PP_DH_SEG_OPS];
	for (int q = 0; q < c; q++) {
		kb[q] = l->bwd.s[perm[j - c + q]].kind;
		tb[q] = l->bwd.s[perm[j - c + q]].seconds;
	}
	for (int i = 1; i <= nf; i++)
		for (int a = i + 1; a <= K; a++)
			col[(i - 1) * K + a - 1] = INFINITY; /* longer than the forward so far */
	/* each start i0: the segments f[i0..i0 + a) end at i0 + a */
	double out[PP_DH_SEG_OPS];
	for (int i0 = 0; i0 < nf; i0++) {
		int na = nf - i0 < K ? nf - i0 : K;
		chain_prefixes(&x->m, x->kf + i0, x->tf + i0, na, kb, tb, c, out);
		for (int a = 1; a <= na; a++)
			col[(i0 + a - 1) * K + a - 1] = out[a - 1];
	}
	return col;
}

/*
 * The candidate orders share their prefixes: each movable weight gradient is
 * either placed where it is or deferred to the end, so the orders form a
 * binary tree over the default order, and the DP's columns (j: backward
 * operators done, every i) of a common prefix are the same.  A depth-first
 * walk of that tree computes each prefix's columns once and only the
 * branches' own columns after it (for a dense layer about half of the
 * candidates x N_b columns); the leaves are the candidates of
 * pp_dh_candidate, numbered by the same bits.
 */
typedef struct order_walk {
	pair_scratch *x;
	const pp_dh_layer *l;
	int K;
	int ord[PP_DH_MAX_SEGS]; /* ordinal of each movable weight gradient */
	int perm[PP_DH_MAX_SEGS];
	double tf[PP_DH_MAX_SEGS];
	double best;
	int best_idx;
} order_walk;

/* Column jn of T (column-major, nf + 1 rows): Eq. 2 over segments of up to
 * K operators, the backward's last operator perm[jn - 1], from the K
 * columns before it.  K is a constant at each call (so the loops unroll). */
static inline void dp_column(order_walk *w, int jn, const int K)
{
	pair_scratch *x = w->x;
	const int nf = w->l->fwd.n, H = nf + 1;
	/* this column's lookups must fit: start the cache afresh when not */
	if (x->used + K * nf * K > DH_COL_CAP || x->nkeys + K > DH_SLOTS / 2)
		scratch_reset(x);
	const double *col[PP_DH_SEG_OPS + 1] = {NULL};
	for (int c = 1; c <= K && c <= jn; c++)
		col[c] = pair_column(x, w->l, K, w->perm, jn, c);
	double *Tj = x->T + jn * H;
	const double *Tp = Tj - H;
	const double tb = w->l->bwd.s[w->perm[jn - 1]].seconds;
	Tj[0] = Tp[0] + tb;
	for (int i = 1; i <= nf; i++) {
		double a = Tj[i - 1] + w->tf[i - 1], b = Tp[i] + tb;
		double m = a < b ? a : b;
		for (int c = 1; c <= K && c <= jn; c++) {
			const double *Tq = Tj - c * H, *p = col[c] + (i - 1) * K;
			for (int s = 1; s <= K && s <= i; s++) {
				double t = Tq[i - s] + p[s - 1];
				m = t < m ? t : m;
			}
		}
		Tj[i] = m;
	}
}

static void column(order_walk *w, int jn)
{
	switch (w->K) {
	case 1: dp_column(w, jn, 1); break;
	case 2: dp_column(w, jn, 2); break;
	case 3: dp_column(w, jn, 3); break;
	default: dp_column(w, jn, PP_DH_SEG_OPS); break;
	}
}

/* Orders whose first j backward operators are perm[0..j) and whose
 * remaining default operators from d on are still to place; `mask`: the
 * weight gradients deferred so far (bit = ordinal). */
static void walk(order_walk *w, int d, int j, unsigned mask)
{
	const pp_dh_seq *b = &w->l->bwd;
	for (; d < b->n; d++) {
		if (b->s[d].movable) /* deferred: the other branch */
			walk(w, d + 1, j, mask | 1u << w->ord[d]);
		w->perm[j++] = d;
		column(w, j);
	}
	for (int e = 0; e < b->n; e++)
		if (b->s[e].movable && (mask >> w->ord[e] & 1)) {
			w->perm[j++] = e;
			column(w, j);
		}
	double t = w->x->T[j * (w->l->fwd.n + 1) + w->l->fwd.n];
	if (t < w->best || (t == w->best && (int)mask < w->best_idx)) {
		w->best = t;
		w->best_idx = (int)mask;
	}
}

/* The best SI block time over the candidate orders, and which. */
static double best_order(const pp_dh_overlap *o, const pp_dh_layer *l, int K, int *best)
{
	static _Thread_local pair_scratch x;
	static _Thread_local order_walk w;
	scratch_reset(&x);
	w.x = &x;
	w.l = l;
	w.K = K;
	w.best = INFINITY;
	w.best_idx = 0;
	for (int i = 0, k = 0; i < l->bwd.n; i++)
		w.ord[i] = l->bwd.s[i].movable ? k++ : -1;
	for (int i = 0; i < l->fwd.n; i++) {
		w.tf[i] = x.tf[i] = l->fwd.s[i].seconds;
		x.kf[i] = l->fwd.s[i].kind;
	}
	chain_model_of(o, &x.m);
	/* column 0: the forward alone */
	x.T[0] = 0;
	for (int i = 1; i <= l->fwd.n; i++)
		x.T[i] = x.T[i - 1] + w.tf[i - 1];
	walk(&w, 0, 0, 0);
	*best = w.best_idx;
	return w.best;
}

void pp_dh_layer_pair_k(const pp_dh_overlap *o, const pp_dh_layer *l, int k, pp_dh_result *out)
{
	out->t_f = l->fwd_s;
	out->t_b = l->bwd_s;
	out->candidates = pp_dh_candidate_count(l);
	out->t_si = best_order(o, l, clamp_k(k), &out->best);
	pp_dh_candidate(l, out->best, &out->bwd);
	pp_dh_pair_k(o, &l->fwd, &out->bwd, clamp_k(k), &out->plan);
	out->speedup = out->t_si > 0 ? (out->t_f + out->t_b) / out->t_si : 1;
}

void pp_dh_layer_pair(const pp_dh_overlap *o, const pp_dh_layer *l, pp_dh_result *out)
{
	pp_dh_layer_pair_k(o, l, PP_DH_SEG_OPS, out);
}

/* Everything a layer's pairing depends on besides its index. */
typedef struct dh_key {
	const void *model, *system;
	int seq, precision, tp, tp2, summa, cp, ep, etp, mbs, sp, recompute, flash;
	int tp_overlap, ep_overlap, moe;
	pp_layout lay[4];
	double slowdown, launch, oef_sum;
	char name[16];
} dh_key;

static void make_key(dh_key *k, const pp_model *m, const pp_system *s, const pp_job *job,
                     const pp_plan *p, const pp_dh_overlap *o, int moe)
{
	memset(k, 0, sizeof *k);
	k->model = m;
	k->system = s;
	k->seq = job->seq_len;
	k->precision = job->precision;
	k->tp = p->tp;
	k->tp2 = p->tp2;
	k->summa = p->summa;
	k->cp = p->cp;
	k->ep = p->ep;
	k->etp = p->etp;
	k->mbs = p->mbs;
	k->sp = p->sp;
	k->recompute = p->recompute;
	k->flash = p->flash;
	k->tp_overlap = p->tp_overlap;
	k->ep_overlap = p->ep_overlap;
	k->moe = moe;
	pp_layout lay[PP_NGROUPS];
	pp_plan_layouts(p, s, lay);
	k->lay[0] = lay[PP_GROUP_TP];
	k->lay[1] = lay[PP_GROUP_CP];
	k->lay[2] = lay[PP_GROUP_EP];
	k->lay[3] = lay[PP_GROUP_ETP];
	k->slowdown = o->kernel_slowdown;
	k->launch = o->launch_interval;
	for (int i = 0; i < PP_DH_NKINDS; i++)
		for (int j = 0; j < PP_DH_NKINDS; j++)
			k->oef_sum += o->oef[i][j] * (1 + i * PP_DH_NKINDS + j);
	memcpy(k->name, o->name, sizeof k->name);
}

/*
 * A second memo, by what the pairing reads: the overlap table's OEFs and
 * launch interval and the two sequences' times, kinds and movable flags.
 * Plans with different keys often build the same layer (rank orders that
 * give the same layouts, recompute or ZeRO choices that leave the layer's
 * operators alike): in a search over wshape about a third of the pairings
 * the plan memo misses are repeats of one already done.  The entry keeps
 * the whole content and is compared in full (no hash-only match);
 * thread-local, as the result is a function of the content alone.
 */
#define DH_CMEMO 256
/* room for layers of up to 66 operators in all (a dense or MoE layer with
 * full recompute has 49-65); longer ones are paired without the memo */
#define DH_CLEN 160
typedef struct content_memo {
	int len[DH_CMEMO]; /* 0: empty */
	double v[DH_CMEMO][DH_CLEN];
	double t_si[DH_CMEMO];
} content_memo;

static int layer_content(const pp_dh_overlap *o, const pp_dh_layer *l, double *v)
{
	int n = 0;
	if (PP_DH_NKINDS * PP_DH_NKINDS + 3 + 2 * (l->fwd.n + l->bwd.n) > DH_CLEN)
		return -1;
	for (int i = 0; i < PP_DH_NKINDS; i++)
		for (int j = 0; j < PP_DH_NKINDS; j++)
			v[n++] = o->oef[i][j];
	v[n++] = o->launch_interval;
	v[n++] = l->fwd.n;
	v[n++] = l->bwd.n;
	for (int i = 0; i < l->fwd.n; i++) {
		v[n++] = l->fwd.s[i].seconds;
		v[n++] = l->fwd.s[i].kind;
	}
	for (int i = 0; i < l->bwd.n; i++) {
		v[n++] = l->bwd.s[i].seconds;
		v[n++] = l->bwd.s[i].kind + 16 * l->bwd.s[i].movable;
	}
	return n;
}

/* best_order's T_SI through the content memo. */
static double best_order_memo(const pp_dh_overlap *o, const pp_dh_layer *l)
{
	static _Thread_local content_memo cm;
	static _Thread_local double v[DH_CLEN];
	int n = layer_content(o, l, v), best;
	if (n < 0)
		return best_order(o, l, PP_DH_SEG_OPS, &best);
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < n; i++) {
		uint64_t b;
		memcpy(&b, &v[i], sizeof b);
		h = (h ^ b) * 1099511628211ull;
	}
	int slot = (int)(h % DH_CMEMO);
	if (cm.len[slot] == n && memcmp(cm.v[slot], v, (size_t)n * sizeof *v) == 0)
		return cm.t_si[slot];
	double t = best_order(o, l, PP_DH_SEG_OPS, &best);
	memcpy(cm.v[slot], v, (size_t)n * sizeof *v);
	cm.len[slot] = n;
	cm.t_si[slot] = t;
	return t;
}

pp_status pp_dh_stage_speedup(const pp_model *m, const pp_system *s, const pp_job *job,
                              const pp_plan *plan, int stage, double stage_s,
                              const pp_dh_overlap *o, pp_work *ws, double *speedup, pp_error *err)
{
	*speedup = 1;
	int n = pp_stage_layers(m, plan, stage);
	double saved = 0;
	/* One pairing per layer kind (dense, MoE): the layers of a kind are alike. */
	double saved_kind[2] = {-1, -1};
	static _Thread_local pp_dh_layer layer;
	pp_dh_layer *l = &layer;
	pp_status st = PP_OK;
	bool dense = m->moe.num_experts == 0; /* every layer alike: one pairing, n times */
	for (int i = 0; i < (dense && n ? 1 : n) && !st; i++) {
		int g = pp_stage_layer_index(m, plan, stage, i);
		int k = !dense && pp_model_layer_is_moe(m, g) ? 1 : 0;
		if (saved_kind[k] < 0) {
			dh_key key;
			make_key(&key, m, s, job, plan, o, k);
			_Static_assert(sizeof key <= sizeof ws->dh_key[0], "dhelix memo key");
			/* FNV-1a of the key picks the memo slot */
			uint64_t h = 1469598103934665603ull;
			for (size_t b = 0; b < sizeof key; b++)
				h = (h ^ ((const unsigned char *)&key)[b]) * 1099511628211ull;
			int slot = (int)(h % PP_DH_MEMO);
			if (ws->dh_valid[slot] && memcmp(ws->dh_key[slot], &key, sizeof key) == 0) {
				saved_kind[k] = ws->dh_saved[slot];
			} else {
				st = pp_dh_layer_build(m, s, job, plan, g, ws, l, err);
				if (st)
					break;
				saved_kind[k] = l->fwd_s + l->bwd_s - best_order_memo(o, l);
				memcpy(ws->dh_key[slot], &key, sizeof key);
				ws->dh_saved[slot] = saved_kind[k];
				ws->dh_valid[slot] = true;
			}
		}
		saved += saved_kind[k] * (dense ? n : 1);
	}
	if (!st && stage_s > 0 && stage_s - saved > 0)
		*speedup = stage_s / (stage_s - saved);
	return st;
}
