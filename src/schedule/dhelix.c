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
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
		if (ppi_streq(builtins[i].name, platform)) {
			fill_table(out, &builtins[i]);
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

double pp_dh_pair(const pp_dh_overlap *o, const pp_dh_seq *f, const pp_dh_seq *b, pp_dh_plan *plan)
{
	const int nf = f->n, nb = b->n, W = PP_DH_MAX_SEGS + 1;
	/* T[i][j]: best make-span of the first i forward and j backward segments;
	 * how[i][j]: 0 forward alone, 1 backward alone, 2 paired. */
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
				h = 0;
			}
			if (j > 0) {
				double t = T[i * W + j - 1] + b->s[j - 1].seconds;
				if (t < best) {
					best = t;
					h = 1;
				}
			}
			if (i > 0 && j > 0) {
				double t = T[(i - 1) * W + j - 1] +
				           pp_dh_pair_time(o, f->s[i - 1].kind, f->s[i - 1].seconds,
				                           b->s[j - 1].kind, b->s[j - 1].seconds);
				if (t < best) {
					best = t;
					h = 2;
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
			unsigned char h = how[i * W + j];
			pp_dh_step st;
			if (h == 2) {
				st.f = i - 1;
				st.b = j - 1;
				st.seconds =
				    pp_dh_pair_time(o, f->s[i - 1].kind, f->s[i - 1].seconds,
				                    b->s[j - 1].kind, b->s[j - 1].seconds);
				i--, j--;
			} else if (h == 1) {
				st.f = -1;
				st.b = j - 1;
				st.seconds = b->s[j - 1].seconds;
				j--;
			} else {
				st.f = i - 1;
				st.b = -1;
				st.seconds = f->s[i - 1].seconds;
				i--;
			}
			rev[n++] = st;
		}
		plan->nsteps = n;
		for (int k = 0; k < n; k++)
			plan->step[k] = rev[n - 1 - k];
	}
	return t;
}

/* Candidate `idx`'s order as indices into the default backward order. */
static void candidate_perm(const pp_dh_layer *l, int idx, int *perm)
{
	int n = 0, k = 0, nd = 0, deferred[PP_DH_MAX_SEGS];
	for (int i = 0; i < l->bwd.n; i++) {
		if (l->bwd.s[i].movable && (idx >> k++ & 1)) {
			deferred[nd++] = i;
			continue;
		}
		perm[n++] = i;
	}
	for (int d = 0; d < nd; d++)
		perm[n++] = deferred[d];
}

/* Eq. 2's make-span over a precomputed pair matrix (row i: forward segment,
 * column: default backward index), the backward in order `perm`. */
static double dp_time(int nf, int nb, const double *P, const double *tf, const double *tb,
                      const int *perm)
{
	double row[PP_DH_MAX_SEGS + 1], prev[PP_DH_MAX_SEGS + 1];
	prev[0] = 0;
	for (int j = 1; j <= nb; j++)
		prev[j] = prev[j - 1] + tb[perm[j - 1]];
	for (int i = 1; i <= nf; i++) {
		row[0] = prev[0] + tf[i - 1];
		const double *Pi = P + (i - 1) * PP_DH_MAX_SEGS;
		for (int j = 1; j <= nb; j++) {
			int bj = perm[j - 1];
			double a = prev[j] + tf[i - 1];
			double b = row[j - 1] + tb[bj];
			double c = prev[j - 1] + Pi[bj];
			double m = a < b ? a : b;
			row[j] = m < c ? m : c;
		}
		memcpy(prev, row, (size_t)(nb + 1) * sizeof *row);
	}
	return prev[nb];
}

/* The best SI block time over the candidate orders, and which. */
static double best_order(const pp_dh_overlap *o, const pp_dh_layer *l, int *best)
{
	double t_si = INFINITY;
	*best = 0;
	const int nf = l->fwd.n, nb = l->bwd.n;
	static _Thread_local double P[PP_DH_MAX_SEGS * PP_DH_MAX_SEGS];
	double tf[PP_DH_MAX_SEGS], tb[PP_DH_MAX_SEGS];
	for (int i = 0; i < nf; i++)
		tf[i] = l->fwd.s[i].seconds;
	for (int j = 0; j < nb; j++)
		tb[j] = l->bwd.s[j].seconds;
	for (int i = 0; i < nf; i++)
		for (int j = 0; j < nb; j++)
			P[i * PP_DH_MAX_SEGS + j] =
			    pp_dh_pair_time(o, l->fwd.s[i].kind, tf[i], l->bwd.s[j].kind, tb[j]);
	int perm[PP_DH_MAX_SEGS];
	for (int c = 0; c < pp_dh_candidate_count(l); c++) {
		candidate_perm(l, c, perm);
		double t = dp_time(nf, nb, P, tf, tb, perm);
		if (t < t_si) {
			t_si = t;
			*best = c;
		}
	}
	return t_si;
}

void pp_dh_layer_pair(const pp_dh_overlap *o, const pp_dh_layer *l, pp_dh_result *out)
{
	out->t_f = l->fwd_s;
	out->t_b = l->bwd_s;
	out->candidates = pp_dh_candidate_count(l);
	out->t_si = best_order(o, l, &out->best);
	pp_dh_candidate(l, out->best, &out->bwd);
	pp_dh_pair(o, &l->fwd, &out->bwd, &out->plan);
	out->speedup = out->t_si > 0 ? (out->t_f + out->t_b) / out->t_si : 1;
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
				int best;
				saved_kind[k] = l->fwd_s + l->bwd_s - best_order(o, l, &best);
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
