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
 * The platforms' tables are data: data/overlap/NAME.json (embedded like the
 * presets, PP_KIND_OVERLAP), each value with its source.  Seed 002 §3.1 and
 * Fig. 4 give the ranking of the pairwise OEF, not numbers in its text:
 * computation-computation pairs overlap poorly, FlashAttention with GEMM
 * worst; computation with communication well; intra- with cross-node
 * communication well; a collective with one of its own kind poorly
 * (forbidden on the same link, §4.2).  Table 7 (H100, TP 8, 16, 32) gives
 * the kernel slowdown and launch interval, and the computation-communication
 * OEF is 1 - kernel_slowdown.  A GPU names its table in its own file
 * (data/gpus, "overlap_platform"; pp_dh_platform_of_gpu).
 */

/* Overlap tables parsed per thread, looked up by name before the embedded
 * files are walked (a search over wshape asks per plan and stage). */
#define OVERLAP_CACHE_MAX 16

pp_status pp_dh_overlap_default(const char *platform, pp_dh_overlap *out, pp_error *err)
{
	static _Thread_local pp_dh_overlap filled[OVERLAP_CACHE_MAX];
	static _Thread_local int nfilled;
	for (int i = 0; i < nfilled; i++)
		if (ppi_streq(filled[i].name, platform)) {
			*out = filled[i];
			return PP_OK;
		}
	size_t n = pp_preset_count(PP_KIND_OVERLAP);
	for (size_t i = 0; i < n; i++) {
		const char *name = pp_preset_name(PP_KIND_OVERLAP, i);
		if (!ppi_streq(name, platform))
			continue;
		const char *text, *path;
		PPI_TRY(pp_preset_text(PP_KIND_OVERLAP, name, &text, &path, err));
		pp_status st = pp_dh_overlap_from_json(text, strlen(text), path, out, err);
		if (st) /* out of memory, or the build embedded a table that does not read */
			return st == PP_ENOMEM ? st : PP_EINTERNAL;
		if (nfilled < OVERLAP_CACHE_MAX && ppi_streq(out->name, platform))
			filled[nfilled++] = *out;
		return PP_OK;
	}
	char list[256] = "";
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(list);
		snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
		         pp_preset_name(PP_KIND_OVERLAP, i));
	}
	return ppi_fail(err, "", "overlap", "unknown overlap platform \"%s\" (%s)", platform, list);
}

const char *pp_dh_platform_of_gpu(const pp_gpu *g)
{
	return g->overlap_platform[0] ? g->overlap_platform : NULL;
}

/* "gemm" .. "comm-cross" -> kind, -1 when unknown. */
static int kind_parse(const char *s, size_t n)
{
	for (int k = 0; k < PP_DH_NKINDS; k++)
		if (strlen(kind_names[k]) == n && strncmp(kind_names[k], s, n) == 0)
			return k;
	return -1;
}

/* "by_tp": [{"tp": N, "kernel_slowdown": x, "launch_interval": y}, ...],
 * optional, at most PP_DH_TP_ROWS rows in increasing tp. */
static pp_status tp_rows_from_json(const ppi_obj *r, pp_dh_overlap *out)
{
	json_t *a = json_object_get(r->obj, "by_tp");
	out->ntp = 0;
	if (!a)
		return PP_OK;
	if (!json_is_array(a) || json_array_size(a) > PP_DH_TP_ROWS)
		return ppi_fail(r->err, r->source, "overlap.by_tp",
		                "expected an array of at most %d rows {tp, kernel_slowdown, "
		                "launch_interval}",
		                PP_DH_TP_ROWS);
	size_t i;
	json_t *v;
	json_array_foreach (a, i, v) {
		static const char *const keys[] = {"tp", "kernel_slowdown", "launch_interval",
		                                   NULL};
		char path[64];
		snprintf(path, sizeof path, "overlap.by_tp[%zu]", i);
		if (!json_is_object(v))
			return ppi_fail(r->err, r->source, path, "expected an object");
		ppi_obj o = {v, r->source, path, r->err};
		struct pp_dh_tp_row *row = &out->tp_row[i];
		PPI_TRY(ppi_obj_keys(&o, keys));
		PPI_TRY(ppi_get_int(&o, "tp", true, 2, 1 << 20, &row->tp));
		PPI_TRY(ppi_get_num(&o, "kernel_slowdown", true, 0, 1, &row->kernel_slowdown));
		PPI_TRY(ppi_get_num(&o, "launch_interval", true, 0, 1, &row->launch_interval));
		if (i > 0 && row->tp <= out->tp_row[i - 1].tp)
			return ppi_fail(r->err, r->source, path,
			                "tp must be larger than the previous row's (%d), got %d",
			                out->tp_row[i - 1].tp, row->tp);
		out->ntp = (int)i + 1;
	}
	return PP_OK;
}

void pp_dh_overlap_at_tp(const pp_dh_overlap *o, int tp, pp_dh_overlap *out)
{
	if (out != o)
		*out = *o;
	int k = -1;
	for (int i = 0; i < o->ntp; i++)
		if (o->tp_row[i].tp <= tp)
			k = i;
	if (k >= 0) {
		out->kernel_slowdown = o->tp_row[k].kernel_slowdown;
		out->launch_interval = o->tp_row[k].launch_interval;
		for (int a = 0; a < PP_DH_NKINDS; a++)
			for (int b = 0; b < PP_DH_NKINDS; b++)
				if (is_comm((pp_dh_kind)a) != is_comm((pp_dh_kind)b))
					out->oef[a][b] = 1 - out->kernel_slowdown;
	}
	out->ntp = 0;
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
	static const char *const keys[] = {"name",  "kernel_slowdown", "launch_interval", "oef",
	                                   "by_tp", "source",          "sources",         NULL};
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
			/* One pair, one value: "gemm-attn" and "attn-gemm" name the
			 * same pair, and two values would leave the result to the
			 * order of the keys. */
			if (out->oef[a][b] >= 0 && out->oef[a][b] != json_number_value(v)) {
				st = ppi_fail(err, source, "overlap.oef",
				              "oef.%s is %g, but oef.%s-%s gave the same pair %g",
				              key, json_number_value(v), kind_names[b],
				              kind_names[a], out->oef[a][b]);
				break;
			}
			out->oef[a][b] = out->oef[b][a] = json_number_value(v);
		}
	}
	if (!st)
		st = tp_rows_from_json(&r, out);
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

pp_status pp_dh_overlap_of_system(const pp_system *s, int tp, pp_dh_overlap *out, pp_error *err)
{
	if (!s->dh_overlap_set) {
		const char *platform = pp_dh_platform_of_gpu(&s->gpu);
		if (!platform)
			return ppi_fail(
			    err, s->gpu.name, "gpu.overlap_platform",
			    "DHelix's overlap table for GPU '%s' is not known: name the "
			    "table that holds for it in its GPU file (\"overlap_platform\", "
			    "with \"overlap_assumed\": true when it was not measured there) "
			    "or give one (--overlap)",
			    s->gpu.name);
		PPI_TRY(pp_dh_overlap_default(platform, out, err));
		pp_dh_overlap_at_tp(out, tp, out);
		return PP_OK;
	}
	memset(out, 0, sizeof *out);
	memcpy(out->name, s->dh_overlap_name, sizeof out->name);
	_Static_assert(sizeof out->oef == sizeof s->dh_oef, "overlap table shape");
	memcpy(out->oef, s->dh_oef, sizeof out->oef);
	out->kernel_slowdown = s->dh_kernel_slowdown;
	out->launch_interval = s->dh_launch_interval;
	_Static_assert(PP_DH_TP_ROWS == sizeof s->dh_tp_row / sizeof s->dh_tp_row[0],
	               "overlap TP rows");
	out->ntp = s->dh_ntp;
	for (int i = 0; i < s->dh_ntp; i++) {
		out->tp_row[i].tp = (int)s->dh_tp_row[i][0];
		out->tp_row[i].kernel_slowdown = s->dh_tp_row[i][1];
		out->tp_row[i].launch_interval = s->dh_tp_row[i][2];
	}
	pp_dh_overlap_at_tp(out, tp, out);
	return PP_OK;
}

void pp_dh_system_set_overlap(pp_system *s, const pp_dh_overlap *o)
{
	s->dh_overlap_set = true;
	memcpy(s->dh_overlap_name, o->name, sizeof s->dh_overlap_name);
	memcpy(s->dh_oef, o->oef, sizeof s->dh_oef);
	s->dh_kernel_slowdown = o->kernel_slowdown;
	s->dh_launch_interval = o->launch_interval;
	s->dh_ntp = o->ntp;
	for (int i = 0; i < o->ntp; i++) {
		s->dh_tp_row[i][0] = o->tp_row[i].tp;
		s->dh_tp_row[i][1] = o->tp_row[i].kernel_slowdown;
		s->dh_tp_row[i][2] = o->tp_row[i].launch_interval;
	}
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
	g->before = -1;
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
		if (!is_comm(q->s[i].kind)) /* only the norm's own collectives lie between */
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

/* The forward's movable block: its first segment r, n (1..2) segments, and
 * the fixed segments between its dep and r, m; r < 0 when none. */
static void fwd_block(const pp_dh_seq *f, int *r, int *n, int *m)
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
	fwd_block(&l->fwd, &r, &n, &m);
	return r < 0 ? 1 : n == 1 ? m + 1 : (m + 1) * (m + 2) / 2;
}

void pp_dh_fwd_candidate(const pp_dh_layer *l, int idx, pp_dh_seq *out)
{
	const pp_dh_seq *f = &l->fwd;
	int r, nb, m;
	fwd_block(f, &r, &nb, &m);
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

/* pp_dh_segment_time under a table already in chain_prefixes' form. */
static double segment_time(const chain_model *m, const pp_dh_seg *f, int nf, const pp_dh_seg *b,
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
	chain_prefixes(m, ka, ta, nf, kb, tb, nb, out);
	return out[nf - 1];
}

double pp_dh_segment_time(const pp_dh_overlap *o, const pp_dh_seg *f, int nf, const pp_dh_seg *b,
                          int nb)
{
	chain_model m;
	chain_model_of(o, &m);
	return segment_time(&m, f, nf, b, nb);
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
	chain_model m;
	chain_model_of(o, &m);
	/* P of forward f[i0..i0 + a) with backward b[j - c..j): one chain pass
	 * from each i0 gives every a (the shorter segments are its prefixes) */
	static _Thread_local double P[PP_DH_SEG_OPS + 1][PP_DH_MAX_SEGS][PP_DH_SEG_OPS];
	T[0] = 0;
	for (int j = 0; j <= nb; j++) {
		for (int c = 1; c <= K && c <= j; c++) {
			pp_dh_kind ka[PP_DH_SEG_OPS], kb[PP_DH_SEG_OPS];
			double ta[PP_DH_SEG_OPS], tb[PP_DH_SEG_OPS];
			for (int q = 0; q < c; q++)
				kb[q] = b->s[j - c + q].kind, tb[q] = b->s[j - c + q].seconds;
			for (int i0 = 0; i0 < nf; i0++) {
				int na = nf - i0 < K ? nf - i0 : K;
				for (int q = 0; q < na; q++)
					ka[q] = f->s[i0 + q].kind, ta[q] = f->s[i0 + q].seconds;
				chain_prefixes(&m, ka, ta, na, kb, tb, c, P[c][i0]);
			}
		}
		for (int i = 0; i <= nf; i++) {
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
					double t = T[(i - a) * W + j - c] + P[c][i - a][a - 1];
					if (t < best) {
						best = t;
						h = (unsigned char)(16 * a + c);
					}
				}
			T[i * W + j] = best;
			how[i * W + j] = h;
		}
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
			st.seconds = segment_time(&m, &f->s[i - a], a, &b->s[j - c], c);
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
 * (a path of the forward's DAG, below) with a backward tuple (a column) is
 * computed once per layer and found again by the tuple (open addressing,
 * generation-stamped slots).
 */
#define DH_SLOTS 4096
#define DH_COL_CAP (DH_PATHS * PP_DH_MAX_SEGS * PP_DH_SEG_OPS)
/*
 * The forward as a DAG of states (rows of the DP).  A state is a set of
 * forward operators done that every candidate forward order passes through:
 * a prefix of the default order outside the MoE router's window, and inside
 * it (x, y): the first x of the m fixed segments between the MLP norm and
 * the router and the first y of the router's nb (gate, top-k), each a chain
 * of its own, so (m + 1)(nb + 1) states whose paths from (0, 0) to (m, nb)
 * are exactly the router's placements (pp_dh_fwd_candidate).  A forward
 * segment of a operators is a path of a edges; Eq. 2 over this DAG is the
 * minimum over the candidate forward orders of Eq. 2 over each (every order
 * is a path, every path an order, segments are sub-paths), at the cost of
 * m nb extra rows instead of one DP per order.  A dense layer's DAG is the
 * chain of its forward: the DP as before, step for step.
 */
#define DH_ROWS (PP_DH_MAX_SEGS + 1 + 8)
#define DH_PATHS (DH_ROWS * PP_DH_SEG_OPS + 64)
typedef struct fwd_dag {
	int rows;
	int np[DH_ROWS];      /* predecessors of each state (1 or 2; 0 for state 0) */
	int pred[DH_ROWS][2]; /* and the operator (default index) on each edge */
	int op[DH_ROWS][2];
	/* paths of up to K edges ending at each state: poff[i]..poff[i+1], by
	 * length; start state and the operators in order */
	int poff[DH_ROWS + 1];
	bool lin[DH_ROWS]; /* the paths into it: the chain's, lengths 1..K in order */
	int wa, wb;        /* the rows that are not: [wa, wb), empty for a chain */
	int pstart[DH_PATHS];
	int plen[DH_PATHS];
	int pops[DH_PATHS][PP_DH_SEG_OPS];
} fwd_dag;

static int dag_add(fwd_dag *d, int p0, int o0, int p1, int o1)
{
	int r = d->rows++;
	d->np[r] = p1 < 0 ? 1 : 2;
	d->pred[r][0] = p0;
	d->op[r][0] = o0;
	d->pred[r][1] = p1;
	d->op[r][1] = o1;
	return r;
}

/* Paths of exactly `a` edges ending at state `r` (appended), ops[a - 1 - k]
 * the k-th edge back from r; false when the table is full. */
static bool dag_paths(fwd_dag *d, int r, int a, int at, int *ops, int end)
{
	if (at == a) {
		int n = d->poff[end + 1];
		if (n >= DH_PATHS)
			return false;
		d->pstart[n] = r;
		d->plen[n] = a;
		memcpy(d->pops[n], ops, (size_t)a * sizeof *ops);
		d->poff[end + 1]++;
		return true;
	}
	for (int p = 0; p < d->np[r]; p++) {
		ops[a - 1 - at] = d->op[r][p];
		if (!dag_paths(d, d->pred[r][p], a, at + 1, ops, end))
			return false;
	}
	return true;
}

typedef struct pair_scratch {
	unsigned gen;
	unsigned stamp[DH_SLOTS];
	uint32_t key[DH_SLOTS];
	int col[DH_SLOTS];      /* offset of the column in P */
	int used;               /* doubles of P in use */
	int nkeys;              /* slots in use */
	chain_model m;          /* the layer's table */
	fwd_dag d;              /* the layer's forward */
	double tf[DH_ROWS];     /* the time of each state's first in-edge */
	pp_dh_kind kf[DH_ROWS]; /* and its kind */
	double P[DH_COL_CAP];
	double T[DH_ROWS * (PP_DH_MAX_SEGS + 1)];
} pair_scratch;

/* The DAG of `f` (a movable block as pp_dh_fwd_candidate finds it); false
 * when it does not fit (then the caller pairs the default order only). */
static bool dag_build(fwd_dag *d, const pp_dh_seq *f, int K)
{
	int r, nb, m;
	fwd_block(f, &r, &nb, &m);
	if (r < 0)
		r = f->n, nb = m = 0; /* a chain */
	int g0 = r - m;
	d->rows = 1;
	d->np[0] = 0;
	int last = 0;
	for (int i = 0; i < g0; i++)
		last = dag_add(d, last, i, -1, -1);
	/* the window: state (x, y) at row id[x][y] */
	int id[PP_DH_MAX_SEGS + 1][PP_DH_FWD_MOVABLE + 1];
	if (d->rows + (m + 1) * (nb + 1) + (f->n - r - nb) > DH_ROWS)
		return false;
	id[0][0] = last;
	for (int sum = 1; sum <= m + nb; sum++)
		for (int y = 0; y <= nb; y++) {
			int x = sum - y;
			if (x < 0 || x > m)
				continue;
			int px = x > 0 ? id[x - 1][y] : -1, py = y > 0 ? id[x][y - 1] : -1;
			if (px >= 0 && py >= 0)
				id[x][y] = dag_add(d, px, g0 + x - 1, py, r + y - 1);
			else if (px >= 0)
				id[x][y] = dag_add(d, px, g0 + x - 1, -1, -1);
			else
				id[x][y] = dag_add(d, py, r + y - 1, -1, -1);
		}
	last = id[m][nb];
	for (int i = r + nb; i < f->n; i++)
		last = dag_add(d, last, i, -1, -1);
	/* a chain row (its K rows back single in-edges, in order) takes K path
	 * slots, the paths of lengths 1..K (those longer than the row's depth
	 * are never read), so dp_rows finds them at an affine offset */
	d->lin[0] = true;
	for (int i = 1; i < d->rows; i++) {
		d->lin[i] = true;
		for (int q = 0; q < K && q < i; q++)
			d->lin[i] &= d->np[i - q] == 1 && d->pred[i - q][0] == i - q - 1;
	}
	d->wa = d->wb = d->rows;
	for (int i = 1; i < d->rows; i++)
		if (!d->lin[i]) {
			if (d->wa == d->rows)
				d->wa = i;
			d->wb = i + 1;
		}
	if (d->wa == d->rows)
		d->wa = d->wb = 1;
	for (int i = d->wa; i < d->wb; i++)
		d->lin[i] = false; /* dp_column takes the window's rows as a DAG's */
	d->poff[0] = d->poff[1] = 0;
	for (int i = 1; i < d->rows; i++) {
		d->poff[i + 1] = d->poff[i];
		int ops[PP_DH_SEG_OPS];
		for (int a = 1; a <= K; a++) {
			if (d->lin[i] && a > i) { /* a slot never read */
				int n = d->poff[i + 1]++;
				if (n >= DH_PATHS)
					return false;
				d->pstart[n] = 0;
				d->plen[n] = a;
				continue;
			}
			if (!dag_paths(d, i, a, 0, ops, i))
				return false;
		}
	}
	return true;
}

static void scratch_reset(pair_scratch *x)
{
	if (++x->gen == 0) { /* wrapped: stamps of old generations could match */
		memset(x->stamp, 0, sizeof x->stamp);
		x->gen = 1;
	}
	x->used = 0;
	x->nkeys = 0;
}

/* The column of backward tuple perm[j-c..j): P(path, tuple) for every path
 * of the forward's DAG, at the path's index. */
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
	const fwd_dag *d = &x->d;
	const int np = d->poff[d->rows];
	double *col = x->P + x->used;
	x->stamp[h] = x->gen;
	x->key[h] = key;
	x->col[h] = x->used;
	x->used += np;
	x->nkeys++;
	pp_dh_kind kb[PP_DH_SEG_OPS], ka[PP_DH_SEG_OPS];
	double tb[PP_DH_SEG_OPS], ta[PP_DH_SEG_OPS], out[PP_DH_SEG_OPS];
	for (int q = 0; q < c; q++) {
		kb[q] = l->bwd.s[perm[j - c + q]].kind;
		tb[q] = l->bwd.s[perm[j - c + q]].seconds;
	}
	/* along the chain, one pass from each start gives the paths of all
	 * lengths from it (the shorter ones are its prefixes) */
	if (d->wa == d->wb) { /* all of it a chain: row i is operator i - 1 */
		for (int i0 = 0; i0 < d->rows - 1; i0++) {
			int na = d->rows - 1 - i0 < K ? d->rows - 1 - i0 : K;
			chain_prefixes(&x->m, x->kf + i0 + 1, x->tf + i0 + 1, na, kb, tb, c, out);
			for (int a = 1; a <= na; a++)
				col[(i0 + a - 1) * K + a - 1] = out[a - 1];
		}
		return col;
	}
	for (int i0 = 0; i0 < d->rows - 1; i0++) {
		int na = 0;
		while (na < K && i0 + na + 1 < d->rows && d->np[i0 + na + 1] == 1 &&
		       d->pred[i0 + na + 1][0] == i0 + na) {
			ka[na] = l->fwd.s[d->op[i0 + na + 1][0]].kind;
			ta[na] = l->fwd.s[d->op[i0 + na + 1][0]].seconds;
			na++;
		}
		if (!na)
			continue;
		chain_prefixes(&x->m, ka, ta, na, kb, tb, c, out);
		for (int a = 1; a <= na; a++)
			if (d->lin[i0 + a])
				col[d->poff[i0 + a] + a - 1] = out[a - 1];
	}
	/* the router's window: one pass per path */
	for (int e = 1; e < d->rows; e++) {
		if (d->lin[e])
			continue;
		for (int t = d->poff[e]; t < d->poff[e + 1]; t++) {
			int a = d->plen[t];
			for (int q = 0; q < a; q++) {
				ka[q] = l->fwd.s[d->pops[t][q]].kind;
				ta[q] = l->fwd.s[d->pops[t][q]].seconds;
			}
			chain_prefixes(&x->m, ka, ta, a, kb, tb, c, out);
			col[t] = out[a - 1];
		}
	}
	return col;
}

/*
 * The candidate orders share their prefixes: each movable weight gradient is
 * either placed where it is or deferred to the end, so the orders form a
 * binary tree over the default order, and the DP's columns (j: backward
 * operators done, every forward state) of a common prefix are the same.  A
 * depth-first walk of that tree computes each prefix's columns once and
 * only the branches' own columns after it (for a dense layer about half of
 * the candidates x N_b columns); the leaves are the candidates of
 * pp_dh_candidate, numbered by the same bits.
 */
typedef struct order_walk {
	pair_scratch *x;
	const pp_dh_layer *l;
	int K;
	int ord[PP_DH_MAX_SEGS]; /* ordinal of each movable weight gradient */
	int perm[PP_DH_MAX_SEGS];
	double best;
	int best_idx;
} order_walk;

/* Rows [i0, i1) of column Tj on the chain (each row's paths: lengths 1..K
 * from i - a, in order), as the DP over one forward order. */
static inline void dp_rows(const pair_scratch *x, double *Tj, const double *Tp, double tb,
                           const double *const *col, int i0, int i1, int jn, const int K)
{
	const int H = x->d.rows, off = x->d.poff[i0] - (i0 - 1) * K;
	if (K == 2 && jn >= 2) {
		/* The common case written out (segments of up to 2 and both
		 * columns there; the same sums and minima as the loop below): a
		 * row's pairs read only the earlier columns, and the serial part
		 * is the forward alone, Tj[i - 1] + tf[i]. */
		for (; i0 < i1 && i0 < 2; i0++) {
			const int i = i0;
			double fa = Tj[i - 1] + x->tf[i], b = Tp[i] + tb, m = fa < b ? fa : b;
			for (int c = 1; c <= 2; c++) {
				double v = Tj[i - 1 - c * H] + col[c][off + (i - 1) * 2];
				m = v < m ? v : m;
			}
			Tj[i] = m;
		}
		const double *T2 = Tj - 2 * H, *p1 = col[1] + off, *p2 = col[2] + off;
		const double *tf = x->tf;
		double prev = i0 > 0 ? Tj[i0 - 1] : 0;
		for (int i = i0; i < i1; i++) {
			const double *q1 = p1 + (i - 1) * 2, *q2 = p2 + (i - 1) * 2;
			double a = Tp[i] + tb;
			double v0 = Tp[i - 1] + q1[0], v1 = Tp[i - 2] + q1[1];
			double v2 = T2[i - 1] + q2[0], v3 = T2[i - 2] + q2[1];
			/* the pairs first: only the last step waits for Tj[i - 1] */
			double m = v0 < a ? v0 : a;
			m = v1 < m ? v1 : m;
			m = v2 < m ? v2 : m;
			m = v3 < m ? v3 : m;
			double fa = prev + tf[i];
			Tj[i] = prev = fa < m ? fa : m;
		}
		return;
	}
	for (int i = i0; i < i1; i++) {
		double fa = Tj[i - 1] + x->tf[i], b = Tp[i] + tb;
		double m = fa < b ? fa : b;
		const int na = i < K ? i : K;
		for (int c = 1; c <= K && c <= jn; c++) {
			const double *Tq = Tj - c * H, *p = col[c] + off + (i - 1) * K;
			if (na == K) /* all K lengths: the loop unrolls */
				for (int a = 1; a <= K; a++) {
					double v = Tq[i - a] + p[a - 1];
					m = v < m ? v : m;
				}
			else
				for (int a = 1; a <= na; a++) {
					double v = Tq[i - a] + p[a - 1];
					m = v < m ? v : m;
				}
		}
		Tj[i] = m;
	}
}

/* Column jn of T (column-major, one row per forward state): Eq. 2 over
 * segments of up to K operators, the backward's last operator
 * perm[jn - 1], from the K columns before it.  K is a constant at each call
 * (so the loops unroll). */
static inline void dp_column(order_walk *w, int jn, const int K)
{
	pair_scratch *x = w->x;
	const fwd_dag *d = &x->d;
	const int H = d->rows, np = d->poff[H];
	/* this column's lookups must fit: start the cache afresh when not */
	if (x->used + K * np > DH_COL_CAP || x->nkeys + K > DH_SLOTS / 2)
		scratch_reset(x);
	const double *col[PP_DH_SEG_OPS + 1] = {NULL};
	for (int c = 1; c <= K && c <= jn; c++)
		col[c] = pair_column(x, w->l, K, w->perm, jn, c);
	double *Tj = x->T + jn * H;
	const double *Tp = Tj - H;
	const double tb = w->l->bwd.s[w->perm[jn - 1]].seconds;
	const pp_dh_seg *f = w->l->fwd.s;
	Tj[0] = Tp[0] + tb;
	dp_rows(x, Tj, Tp, tb, col, 1, d->wa, jn, K);
	/* the router's window: every in-edge and every path */
	for (int i = d->wa; i < d->wb; i++) {
		double m = Tp[i] + tb;
		for (int e = 0; e < d->np[i]; e++) {
			double v = Tj[d->pred[i][e]] + f[d->op[i][e]].seconds;
			m = v < m ? v : m;
		}
		for (int c = 1; c <= K && c <= jn; c++) {
			const double *Tq = Tj - c * H;
			for (int t = d->poff[i]; t < d->poff[i + 1]; t++) {
				double v = Tq[d->pstart[t]] + col[c][t];
				m = v < m ? v : m;
			}
		}
		Tj[i] = m;
	}
	dp_rows(x, Tj, Tp, tb, col, d->wb, H, jn, K);
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
	const int H = w->x->d.rows;
	double t = w->x->T[j * H + H - 1];
	if (t < w->best || (t == w->best && (int)mask < w->best_idx)) {
		w->best = t;
		w->best_idx = (int)mask;
	}
}

/* The forward order of the best pairing: the DP's columns again for the
 * winning backward order, then back from the last state along a step that
 * gives its value exactly (the same sums as the DP's).  ops[k]: the
 * default index of the k-th forward operator.  False when no step matches
 * (not expected; the caller then tries the orders one by one). */
static bool fwd_backtrack(order_walk *w, int *ops)
{
	pair_scratch *x = w->x;
	const pp_dh_layer *l = w->l;
	const fwd_dag *d = &x->d;
	const pp_dh_seq *b = &l->bwd;
	const int H = d->rows, K = w->K;
	int j = 0;
	for (int e = 0; e < b->n; e++)
		if (!b->s[e].movable || !(w->best_idx >> w->ord[e] & 1))
			w->perm[j++] = e;
	for (int e = 0; e < b->n; e++)
		if (b->s[e].movable && (w->best_idx >> w->ord[e] & 1))
			w->perm[j++] = e;
	for (int c = 1; c <= j; c++)
		column(w, c);
	int i = H - 1, n = l->fwd.n;
	while (i > 0 || j > 0) {
		const double v = x->T[j * H + i];
		if (j > 0 && x->T[(j - 1) * H + i] + l->bwd.s[w->perm[j - 1]].seconds == v) {
			j--;
			continue;
		}
		bool found = false;
		for (int e = 0; e < d->np[i] && !found; e++)
			if (x->T[j * H + d->pred[i][e]] + l->fwd.s[d->op[i][e]].seconds == v ||
			    (e == 0 && d->lin[i] && x->T[j * H + i - 1] + x->tf[i] == v)) {
				ops[--n] = d->op[i][e];
				i = d->pred[i][e];
				found = true;
			}
		for (int c = 1; c <= K && c <= j && !found; c++) {
			const double *col = pair_column(x, l, K, w->perm, j, c);
			for (int t = d->poff[i]; t < d->poff[i + 1] && !found; t++) {
				if (d->lin[i] && d->plen[t] > i)
					continue; /* a slot never filled */
				if (x->T[(j - c) * H + d->pstart[t]] + col[t] == v) {
					for (int q = d->plen[t] - 1; q >= 0; q--)
						ops[--n] = d->pops[t][q];
					i = d->pstart[t];
					j -= c;
					found = true;
				}
			}
		}
		if (!found || n < 0)
			return false;
	}
	return n == 0;
}

/* The best SI block time over the candidate orders (every forward order of
 * the router's placements with every backward order), and the backward
 * candidate.  A forward DAG that does not fit the scratch is paired in its
 * default order only. */
/*
 * An upper bound of what pairing can save on a layer, fwd_s + bwd_s - t_si,
 * over every order and segmentation (pp_dh_segment_time's model):
 *
 * While operator x of one strand and y of the other co-run, both advance
 * d seconds of their own work in (2 - OEF(x, y)) d: the pair saves OEF d
 * against running them one after the other, d of x's work and d of y's
 * alike; an operator alone saves nothing, and the launch interval only
 * adds.  So the saving is a sum of OEF(a, b) x_ab over kind pairs, x_ab the
 * work co-run between forward kind a and backward kind b, with sum_b x_ab
 * <= WF_a (the forward's work of kind a) and sum_a x_ab <= WB_b: for any
 * u_a, v_b >= 0 with u_a + v_b >= OEF(a, b) on every pair present, the
 * saving is at most sum u_a WF_a + sum v_b WB_b (the transport problem's
 * dual).  Four such (u, v): each forward kind at its best partner (v = 0);
 * each backward kind at its best; and a collective on either side at the
 * larger of its best computation partner and half its best collective
 * partner (two collectives cover their pair together), with the
 * computation of one side at its best computation partner and the other's
 * at 0 (a computation-collective pair is covered by the collective's
 * share), either way round.  With every OEF <= 1 a strand
 * advances no faster than alone, so the saving is also at most the shorter
 * strand.  The search's floor for wshape plans (estimate.c) reads it before
 * it pairs.
 */
static bool saving_duals(const pp_dh_overlap *o, const pp_dh_layer *l, double *wf, double *wb,
                         double (*uf)[4], double (*vb)[4])
{
	for (int k = 0; k < PP_DH_NKINDS; k++)
		wf[k] = wb[k] = 0;
	for (int i = 0; i < l->fwd.n; i++)
		wf[l->fwd.s[i].kind] += l->fwd.s[i].seconds;
	for (int i = 0; i < l->bwd.n; i++)
		wb[l->bwd.s[i].kind] += l->bwd.s[i].seconds;
	/* best[side][kind][0]: its best computation partner in the other
	 * strand, [1]: its best collective partner */
	double best[2][PP_DH_NKINDS][2] = {{{0}}};
	bool le1 = true;
	for (int a = 0; a < PP_DH_NKINDS; a++)
		for (int b = 0; b < PP_DH_NKINDS; b++) {
			if (wf[a] <= 0 || wb[b] <= 0)
				continue;
			double e = o->oef[a][b] > 0 ? o->oef[a][b] : 0;
			le1 = le1 && e <= 1;
			double *fa = &best[0][a][is_comm((pp_dh_kind)b)];
			double *bb = &best[1][b][is_comm((pp_dh_kind)a)];
			*fa = *fa > e ? *fa : e;
			*bb = *bb > e ? *bb : e;
		}
	for (int k = 0; k < PP_DH_NKINDS; k++) {
		const double *f = best[0][k], *b = best[1][k];
		uf[k][0] = f[0] > f[1] ? f[0] : f[1];
		vb[k][0] = 0;
		uf[k][1] = 0;
		vb[k][1] = b[0] > b[1] ? b[0] : b[1];
		if (is_comm((pp_dh_kind)k)) {
			/* a collective: its best computation partner, or half its
			 * best collective partner (the other half is that one's) */
			uf[k][2] = uf[k][3] = f[0] > f[1] / 2 ? f[0] : f[1] / 2;
			vb[k][2] = vb[k][3] = b[0] > b[1] / 2 ? b[0] : b[1] / 2;
		} else {
			uf[k][2] = f[0];
			vb[k][2] = 0;
			uf[k][3] = 0;
			vb[k][3] = b[0];
		}
	}
	return le1;
}

static double best_order(const pp_dh_overlap *o, const pp_dh_layer *l, int K, int *best,
                         int *fwd_ops)
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
	if (!dag_build(&x.d, &l->fwd, K)) {
		static _Thread_local pp_dh_seq chain;
		chain = l->fwd;
		for (int i = 0; i < chain.n; i++)
			chain.s[i].movable = false;
		dag_build(&x.d, &chain, K); /* a chain always fits */
	}
	chain_model_of(o, &x.m);
	for (int i = 1; i < x.d.rows; i++) {
		x.tf[i] = l->fwd.s[x.d.op[i][0]].seconds;
		x.kf[i] = l->fwd.s[x.d.op[i][0]].kind;
	}
	/* column 0: the forward alone (every path to a state has the same sum
	 * but for rounding; the least, as the other columns take) */
	x.T[0] = 0;
	for (int i = 1; i < x.d.rows; i++) {
		x.T[i] = x.T[x.d.pred[i][0]] + l->fwd.s[x.d.op[i][0]].seconds;
		if (x.d.np[i] > 1)
			x.T[i] = fmin(x.T[i], x.T[x.d.pred[i][1]] + l->fwd.s[x.d.op[i][1]].seconds);
	}
	walk(&w, 0, 0, 0);
	*best = w.best_idx;
	if (fwd_ops && x.d.wa == x.d.wb) /* a chain: the default order */
		for (int i = 0; i < l->fwd.n; i++)
			fwd_ops[i] = i;
	else if (fwd_ops && !fwd_backtrack(&w, fwd_ops))
		fwd_ops[0] = -1;
	return w.best;
}

void pp_dh_layer_pair_k(const pp_dh_overlap *o, const pp_dh_layer *l, int k, pp_dh_result *out)
{
	out->t_f = l->fwd_s;
	out->t_b = l->bwd_s;
	out->candidates = pp_dh_candidate_count(l);
	out->fwd_candidates = pp_dh_fwd_candidate_count(l);
	int ops[PP_DH_MAX_SEGS];
	out->t_si = best_order(o, l, clamp_k(k), &out->best, ops);
	pp_dh_candidate(l, out->best, &out->bwd);
	/* which forward order: the one the DP's best path takes (or, should the
	 * path not be found, the first whose pairing reaches T_SI) */
	out->fwd_best = -1;
	for (int c = 0; c < out->fwd_candidates && out->fwd_best < 0 && ops[0] >= 0; c++) {
		pp_dh_fwd_candidate(l, c, &out->fwd);
		bool same = true;
		for (int i = 0; i < l->fwd.n && same; i++)
			same = out->fwd.s[i].name == l->fwd.s[ops[i]].name;
		if (same)
			out->fwd_best = c;
	}
	if (out->fwd_best >= 0) {
		pp_dh_pair_k(o, &out->fwd, &out->bwd, clamp_k(k), &out->plan);
	} else {
		double t_best = INFINITY;
		int last = 0;
		out->fwd_best = 0;
		for (int c = 0; c < out->fwd_candidates; c++) {
			last = c;
			pp_dh_fwd_candidate(l, c, &out->fwd);
			double t = pp_dh_pair_k(o, &out->fwd, &out->bwd, clamp_k(k), &out->plan);
			if (t < t_best) {
				t_best = t;
				out->fwd_best = c;
			}
			if (t <= out->t_si * (1 + 1e-12))
				break;
		}
		if (last != out->fwd_best) { /* out->fwd and the plan: the last one tried */
			pp_dh_fwd_candidate(l, out->fwd_best, &out->fwd);
			pp_dh_pair_k(o, &out->fwd, &out->bwd, clamp_k(k), &out->plan);
		}
	}
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
	for (int i = 0; i < l->fwd.n; i++) { /* a movable one with its bounds */
		const pp_dh_seg *g = &l->fwd.s[i];
		v[n++] = g->seconds;
		v[n++] =
		    g->kind + 16 * g->movable * (1 + g->dep + PP_DH_MAX_SEGS * (1 + g->before));
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
		return best_order(o, l, PP_DH_SEG_OPS, &best, NULL);
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < n; i++) {
		uint64_t b;
		memcpy(&b, &v[i], sizeof b);
		h = (h ^ b) * 1099511628211ull;
	}
	int slot = (int)(h % DH_CMEMO);
	if (cm.len[slot] == n && memcmp(cm.v[slot], v, (size_t)n * sizeof *v) == 0)
		return cm.t_si[slot];
	double t = best_order(o, l, PP_DH_SEG_OPS, &best, NULL);
	memcpy(cm.v[slot], v, (size_t)n * sizeof *v);
	cm.len[slot] = n;
	cm.t_si[slot] = t;
	return t;
}

double pp_dh_layer_saved_bound(const pp_dh_overlap *o, const pp_dh_layer *l)
{
	double wf[PP_DH_NKINDS], wb[PP_DH_NKINDS], uf[PP_DH_NKINDS][4], vb[PP_DH_NKINDS][4];
	bool le1 = saving_duals(o, l, wf, wb, uf, vb);
	double d[4] = {0, 0, 0, 0}, tf = 0, tb = 0;
	for (int k = 0; k < PP_DH_NKINDS; k++) {
		for (int q = 0; q < 4; q++)
			d[q] += wf[k] * uf[k][q] + wb[k] * vb[k][q];
		tf += wf[k];
		tb += wb[k];
	}
	double s = le1 ? (tf < tb ? tf : tb) : INFINITY;
	for (int q = 0; q < 4; q++)
		s = d[q] < s ? d[q] : s;
	/* rounding: the DP sums in another order */
	return s * (1 + 1e-9) + 1e-15;
}

void pp_dh_saving_rates(const pp_dh_overlap *o, pp_dh_rates *r)
{
	/* pp_dh_layer_saved_bound's third (u, v) with one rate per class: a
	 * collective at beta = max(its best computation partner, half its best
	 * collective partner) on both sides (two collectives then cover their
	 * OEF together), forward computation at the best computation pair, the
	 * backward's at 0; a second that is not computation is counted at beta
	 * (raised to the computation pair's rate if that is higher). */
	r->cc = r->beta = 0;
	r->le1 = true;
	for (int a = 0; a < PP_DH_NKINDS; a++)
		for (int b = 0; b < PP_DH_NKINDS; b++) {
			double e = o->oef[a][b] > 0 ? o->oef[a][b] : 0;
			r->le1 = r->le1 && e <= 1;
			bool ca = is_comm((pp_dh_kind)a), cb = is_comm((pp_dh_kind)b);
			double x = ca && cb ? e / 2 : ca || cb ? e : 0;
			r->beta = x > r->beta ? x : r->beta;
			if (!ca && !cb)
				r->cc = e > r->cc ? e : r->cc;
		}
	r->beta = r->beta > r->cc ? r->beta : r->cc;
}

double pp_dh_stage_saved_cap(const pp_dh_rates *r, double fwd_compute_s, double bwd_compute_s,
                             double fwd_s, double bwd_s)
{
	double comm = fwd_s + bwd_s - fwd_compute_s - bwd_compute_s;
	double s = r->cc * fwd_compute_s + r->beta * (comm > 0 ? comm : 0);
	double shorter = fwd_s < bwd_s ? fwd_s : bwd_s;
	if (r->le1 && shorter < s)
		s = shorter;
	return s * (1 + 1e-9) + 1e-15;
}

/* The layer stage_saved built last, for the workspace and memo slot that
 * ws->dh_last_slot names: a bound asked first and the pairing after it
 * read the same layer. */
static _Thread_local pp_dh_layer last_layer;
static _Thread_local const pp_work *last_ws;

/* The seconds an SI block saves on stage `stage`'s layers: paired (exact),
 * or bounded from above (pp_dh_layer_saved_bound) where the memo holds no
 * pairing.  The memo keeps either, marked. */
static pp_status stage_saved(const pp_model *m, const pp_system *s, const pp_job *job,
                             const pp_plan *plan, int stage, const pp_dh_overlap *o, pp_work *ws,
                             bool exact, double *out, pp_error *err)
{
	int n = pp_stage_layers(m, plan, stage);
	double saved = 0;
	/* One pairing per layer kind (dense, MoE): the layers of a kind are alike. */
	double saved_kind[2] = {-1, -1};
	pp_dh_layer *l = &last_layer;
	pp_status st = PP_OK;
	bool dense = m->moe.num_experts == 0; /* every layer alike: one pairing, n times */
	for (int i = 0; i < (dense && n ? 1 : n) && !st; i++) {
		int g = pp_stage_layer_index(m, plan, stage, i);
		int k = !dense && pp_model_layer_is_moe(m, g) ? 1 : 0;
		if (saved_kind[k] >= 0)
			continue;
		dh_key key;
		make_key(&key, m, s, job, plan, o, k);
		_Static_assert(sizeof key <= sizeof ws->dh_key[0], "dhelix memo key");
		/* FNV-1a of the key picks the memo slot */
		uint64_t h = 1469598103934665603ull;
		for (size_t b = 0; b < sizeof key; b++)
			h = (h ^ ((const unsigned char *)&key)[b]) * 1099511628211ull;
		int slot = (int)(h % PP_DH_MEMO);
		bool hit = ws->dh_valid[slot] && memcmp(ws->dh_key[slot], &key, sizeof key) == 0;
		if (hit && (ws->dh_exact[slot] || !exact)) {
			saved_kind[k] = ws->dh_saved[slot];
			continue;
		}
		/* the layer depends on g only through its kind (make_key's moe) */
		if (!(hit && last_ws == ws && ws->dh_last_slot == slot)) {
			ws->dh_last_slot = -1;
			st = pp_dh_layer_build(m, s, job, plan, g, ws, l, err);
			if (st)
				break;
		}
		saved_kind[k] = exact ? l->fwd_s + l->bwd_s - best_order_memo(o, l)
		                      : pp_dh_layer_saved_bound(o, l);
		memcpy(ws->dh_key[slot], &key, sizeof key);
		ws->dh_saved[slot] = saved_kind[k];
		ws->dh_exact[slot] = exact;
		ws->dh_valid[slot] = true;
		ws->dh_last_slot = slot;
		last_ws = ws;
	}
	for (int i = 0; i < n && !st; i++) {
		if (dense) {
			saved = saved_kind[0] * n;
			break;
		}
		int g = pp_stage_layer_index(m, plan, stage, i);
		saved += saved_kind[pp_model_layer_is_moe(m, g) ? 1 : 0];
	}
	*out = saved;
	return st;
}

pp_status pp_dh_stage_speedup(const pp_model *m, const pp_system *s, const pp_job *job,
                              const pp_plan *plan, int stage, double stage_s,
                              const pp_dh_overlap *o, pp_work *ws, double *speedup, pp_error *err)
{
	*speedup = 1;
	double saved;
	pp_status st = stage_saved(m, s, job, plan, stage, o, ws, true, &saved, err);
	if (!st && stage_s > 0 && stage_s - saved > 0)
		*speedup = stage_s / (stage_s - saved);
	return st;
}

pp_status pp_dh_stage_speedup_bound(const pp_model *m, const pp_system *s, const pp_job *job,
                                    const pp_plan *plan, int stage, double stage_s,
                                    const pp_dh_overlap *o, pp_work *ws, double *speedup,
                                    pp_error *err)
{
	*speedup = 1;
	double saved;
	pp_status st = stage_saved(m, s, job, plan, stage, o, ws, false, &saved, err);
	if (st)
		return st;
	if (stage_s > 0 && stage_s - saved > 0)
		*speedup = stage_s / (stage_s - saved);
	else if (saved > 0)
		*speedup = INFINITY;
	return PP_OK;
}
