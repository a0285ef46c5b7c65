/*
 * DHelix (seed 002): what pairing saves on a pipeline stage -- the stage's
 * speedup through the workspace's memo (by plan) and a thread-local memo by
 * the layer's content, and the upper bounds the search's floor reads before
 * it pairs (per layer, per stage).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dhelix_int.h"
#include "util/hash.h"
#include "util/util.h"
#include "workload/workload_int.h"

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
			double *fa = &best[0][a][ppi_dh_is_comm((pp_dh_kind)b)];
			double *bb = &best[1][b][ppi_dh_is_comm((pp_dh_kind)a)];
			*fa = *fa > e ? *fa : e;
			*bb = *bb > e ? *bb : e;
		}
	for (int k = 0; k < PP_DH_NKINDS; k++) {
		const double *f = best[0][k], *b = best[1][k];
		uf[k][0] = f[0] > f[1] ? f[0] : f[1];
		vb[k][0] = 0;
		uf[k][1] = 0;
		vb[k][1] = b[0] > b[1] ? b[0] : b[1];
		if (ppi_dh_is_comm((pp_dh_kind)k)) {
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

/* Everything a layer's pairing depends on besides its index: the layer's
 * work (the key every memo of it uses, workload_int.h; it includes the FP8
 * recipe, which sets the GEMMs' seconds), its kind and the overlap table
 * the pairing reads. */
typedef struct dh_key {
	ppi_layer_key layer;
	int moe;
	double slowdown, launch;
	double oef[PP_DH_NKINDS][PP_DH_NKINDS];
} dh_key;

static void make_key(dh_key *k, const pp_model *m, const pp_system *s, const pp_job *job,
                     const pp_plan *p, const pp_dh_overlap *o, int moe)
{
	memset(k, 0, sizeof *k);
	pp_layout lay[PP_NGROUPS];
	pp_plan_layouts(p, s, lay); /* as pp_dh_layer_build places the layer */
	ppi_layer_key_set(&k->layer, m, s, job, p, lay);
	k->moe = moe;
	k->slowdown = o->kernel_slowdown;
	k->launch = o->launch_interval;
	memcpy(k->oef, o->oef, sizeof k->oef);
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

/* ppi_dh_best_order's T_SI through the content memo. */
static double best_order_memo(const pp_dh_overlap *o, const pp_dh_layer *l)
{
	static _Thread_local content_memo cm;
	static _Thread_local double v[DH_CLEN];
	int n = layer_content(o, l, v), best;
	if (n < 0)
		return ppi_dh_best_order(o, l, PP_DH_SEG_OPS, &best, NULL);
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < n; i++) {
		uint64_t b;
		memcpy(&b, &v[i], sizeof b);
		h = (h ^ b) * 1099511628211ull;
	}
	int slot = (int)(h % DH_CMEMO);
	if (cm.len[slot] == n && memcmp(cm.v[slot], v, (size_t)n * sizeof *v) == 0)
		return cm.t_si[slot];
	double t = ppi_dh_best_order(o, l, PP_DH_SEG_OPS, &best, NULL);
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
			bool ca = ppi_dh_is_comm((pp_dh_kind)a), cb = ppi_dh_is_comm((pp_dh_kind)b);
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
		int slot = (int)(ppi_key_hash(&key, sizeof key) % PP_DH_MEMO);
		bool hit = ws->dh_valid[slot] && ppi_key_equal(ws->dh_key[slot], &key, sizeof key);
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
