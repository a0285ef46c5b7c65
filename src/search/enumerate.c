/*
 * The search's enumeration: the sub-spaces (tp, tp2, pp, cp, pipeline split)
 * a search is cut into, and within one sub-space the values of every other
 * dimension, in the order the search has always enumerated them, handed to
 * the pruning (prune.c) a micro-batch loop at a time (search_int.h).
 */
#include <string.h>

#include "paraplan/schedule_type.h"
#include "paraplan/search.h"
#include "search_int.h"
#include "util/util.h"

const char *const ppi_search_default_orders[PPI_SEARCH_NDEFAULT_ORDERS] = {
    "tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp", "tp-pp-cp-ep-dp", "cp-tp-ep-dp-pp",
    /* seed 003 §III: SUMMA's panel broadcasts run along both grid axes;
     * with n_2 innermost the n_2 groups stay in the NVLink domain and the
     * tp groups span it (the order that halves GPT-3 1T's iteration on
     * 4,096 A100 with NVS 4, issue 24) */
    "tp2-tp-cp-ep-dp-pp"};

/* ------------------------------------------------------------ sub-spaces */

/* Candidate values of a dimension: the user's, or 1..max filtered by `ok`. */
typedef bool (*dim_ok)(const struct pp_search *s, int v);

static int dim_values(const struct pp_search *s, const pp_search_dim *d, int lo, int max, dim_ok ok,
                      int *out, int cap)
{
	int n = 0;
	if (d->count > 0) {
		for (int i = 0; i < d->count && n < cap; i++)
			if (d->values[i] >= lo && d->values[i] <= max &&
			    (!ok || ok(s, d->values[i])))
				out[n++] = d->values[i];
		return n;
	}
	for (int v = lo; v <= max && n < cap; v++)
		if (!ok || ok(s, v))
			out[n++] = v;
	return n;
}

static bool tp_ok(const struct pp_search *s, int v)
{
	const pp_model *m = &s->model;
	if (m->num_heads % v || s->gpus % v)
		return false;
	if (m->mla.kv_lora_rank == 0 && m->num_kv_heads % v)
		return false;
	return m->ffn_hidden == 0 || m->ffn_hidden % v == 0;
}

/* The user fixed the pipeline split (first/last stage layers, embedding or
 * loss counted as a layer). */
static bool fixed_split(const pp_plan *base)
{
	return base->first_stage_layers > 0 || base->last_stage_layers > 0 ||
	       base->embedding_as_layer || base->loss_as_layer;
}

/*
 * Uneven splits tried for a pp that does not divide the L layers, as
 * Megatron's first/last stage layer counts: the pp - 2 middle stages hold k
 * layers, k = ceil(L/pp) (the ends lighter) and also k = floor(L/pp) when
 * L mod pp <= 2 (the ends at most one layer heavier); the first and last
 * stages share the rest, halved, both ways round when it is odd.  Each end
 * holds at least one layer.  At most 4 splits, in this order, into out.
 */
static int uneven_splits(int L, int pp, int out[4][2])
{
	int n = 0;
	if (pp < 2 || L % pp == 0)
		return 0;
	const int ks[2] = {(L + pp - 1) / pp, L / pp};
	int nk = pp > 2 && L % pp <= 2 ? 2 : 1;
	for (int a = 0; a < nk; a++) {
		int rest = L - (pp - 2) * ks[a];
		if (ks[a] < 1 || rest < 2)
			continue;
		int lo = rest / 2, hi = rest - lo;
		const int cand[2][2] = {{lo, hi}, {hi, lo}};
		for (int c = 0; c < (lo == hi ? 1 : 2); c++) {
			bool dup = false;
			for (int i = 0; i < n; i++)
				dup |= out[i][0] == cand[c][0] && out[i][1] == cand[c][1];
			if (!dup) {
				out[n][0] = cand[c][0];
				out[n][1] = cand[c][1];
				n++;
			}
		}
	}
	return n;
}

static bool pp_ok(const struct pp_search *s, int v)
{
	if (s->gpus % v)
		return false;
	const pp_model *m = &s->model;
	if (fixed_split(&s->space.base)) {
		pp_plan probe = s->space.base;
		probe.pp = v;
		probe.vp = 1;
		pp_error err;
		return pp_plan_check_split(&probe, m, &err) == PP_OK;
	}
	int splits[4][2];
	return m->num_layers % v == 0 || uneven_splits(m->num_layers, v, splits) > 0;
}

static bool cp_ok(const struct pp_search *s, int v)
{
	return v == 1 || (s->job.seq_len % (2 * v) == 0 && s->gpus % v == 0);
}

/* 2D TP splits the sequence over n_2 (seed 003 Table II); not with MoE. */
static bool tp2_ok(const struct pp_search *s, int v)
{
	return v == 1 || (s->job.seq_len % v == 0 && s->gpus % v == 0 &&
	                  s->model.moe.num_experts == 0 && s->model.mla.kv_lora_rank == 0);
}

/* The pipeline splits of pipeline degree pp into splits: the user's, the
 * even one, or the uneven ones when pp does not divide the layers; returns
 * how many (at most 4). */
static int pp_splits(const pp_search *s, int pp, int splits[4][2])
{
	const pp_plan *base = &s->space.base;
	splits[0][0] = base->first_stage_layers;
	splits[0][1] = base->last_stage_layers;
	if (!fixed_split(base) && s->model.num_layers % pp)
		return uneven_splits(s->model.num_layers, pp, splits);
	return 1;
}

/* Does the space allow the data-parallel degree dp? */
static bool dp_in_space(const pp_search_space *space, long long dp)
{
	bool dp_ok = space->dp.count == 0;
	for (int i = 0; i < space->dp.count; i++)
		dp_ok |= space->dp.values[i] == dp;
	return dp_ok;
}

/* Why a space with a fixed split has no sub-space, into err: PP_EINPUT. */
static pp_status no_split(const pp_search *s, pp_error *err)
{
	const pp_search_space *space = &s->space;
	const pp_model *m = &s->model;
	const pp_plan *b = &space->base;
	pp_plan probe = *b; /* one pp asked for: why it does not split */
	probe.pp = space->pp.count == 1 ? space->pp.values[0] : 0;
	probe.vp = 1;
	if (probe.pp > 0 && pp_plan_check_split(&probe, m, err))
		return PP_EINPUT;
	return ppi_fail(err, "",
	                b->first_stage_layers   ? "plan.first_stage_layers"
	                : b->last_stage_layers  ? "plan.last_stage_layers"
	                : b->embedding_as_layer ? "plan.embedding_as_layer"
	                                        : "plan.loss_as_layer",
	                "no pipeline degree in the space splits the %d layers of %s this way "
	                "on %lld GPUs",
	                m->num_layers, m->name, s->gpus);
}

pp_status ppi_search_outers(pp_search *s, pp_error *err)
{
	const pp_search_space *space = &s->space;
	const pp_model *m = &s->model;
	long long gpus = s->gpus;
	/* The outer sub-spaces: (tp, pp, cp) with tp*pp*cp dividing the GPUs. */
	int tps[PP_SEARCH_MAX_VALUES], pps[PP_SEARCH_MAX_VALUES], cps[PP_SEARCH_MAX_VALUES];
	int tp2s[PP_SEARCH_MAX_VALUES];
	int ntp = dim_values(s, &space->tp, 1,
	                     s->system.nvlink_domain > m->num_heads ? s->system.nvlink_domain
	                                                            : m->num_heads,
	                     tp_ok, tps, PP_SEARCH_MAX_VALUES);
	int npp = dim_values(s, &space->pp, 1, m->num_layers + 2, pp_ok, pps, PP_SEARCH_MAX_VALUES);
	int ncp = dim_values(s, &space->cp, 1, s->job.seq_len / 2 > 1 ? s->job.seq_len / 2 : 1,
	                     cp_ok, cps, PP_SEARCH_MAX_VALUES);
	/* 2D TP is opt-in (no mainstream framework runs it): searched only over the
	 * tp2 values asked for. */
	int ntp2 = 1;
	tp2s[0] = 1;
	if (space->tp2.count > 0)
		ntp2 = dim_values(s, &space->tp2, 1, 64, tp2_ok, tp2s, PP_SEARCH_MAX_VALUES);
	/* Up to 4 pipeline splits per pp (uneven_splits). */
	s->outers = ppi_calloc((size_t)(ntp ? ntp : 1) * (npp ? npp : 1) * 4 * (ncp ? ncp : 1) *
	                           (ntp2 ? ntp2 : 1),
	                       sizeof *s->outers);
	if (!s->outers)
		return PP_ENOMEM;
	for (int a = 0; a < ntp; a++)
		for (int b = 0; b < npp; b++) {
			int splits[4][2];
			int nsplit = pp_splits(s, pps[b], splits);
			for (int c = 0; c < ncp; c++)
				for (int d = 0; d < ntp2; d++) {
					if (tp2s[d] > 1 && cps[c] > 1)
						continue; /* 2D TP already splits the sequence */
					long long mp =
					    (long long)tps[a] * tp2s[d] * pps[b] * cps[c];
					if (gpus % mp || !dp_in_space(space, gpus / mp))
						continue;
					for (int e = 0; e < nsplit; e++) {
						outer o = {tps[a], tp2s[d],      pps[b],
						           cps[c], splits[e][0], splits[e][1]};
						s->outers[s->nouters++] = o;
					}
				}
		}
	if (s->nouters == 0 && fixed_split(&space->base))
		return no_split(s, err);
	if (s->nouters == 0)
		return ppi_fail(
		    err, "", "plan",
		    "no (tp, pp, cp) allowed by the model and %lld GPUs is in the space", gpus);
	return PP_OK;
}

/* ------------------------------------------------------------ one sub-space */

/* Layout signature of a plan under an order: where every group lands. */
static void signature(const pp_model *m, const pp_plan *p, const pp_system *sys, pp_layout *sig)
{
	pp_plan_layouts(p, sys, sig);
	for (int g = 0; g < PP_NGROUPS; g++) {
		bool expert = g == PP_GROUP_EP || g == PP_GROUP_ETP || g == PP_GROUP_EDP;
		/* A group of one, or an expert group of a dense model, moves nothing. */
		if (sig[g].size <= 1 || (expert && m->moe.num_experts == 0)) {
			sig[g].size = 1;
			sig[g].per_domain = 1;
		}
	}
}

/* Seed 003 S3.2's factorisations of the NVLink domain: every (f_tp, f_tp2,
 * f_cp, f_dp, f_pp), each dividing its group's degree, whose product is the
 * domain, as a split order (place.h): the factors innermost (`dim:f`, or
 * `dim` for all of it), then the rest of every dimension.  At most `cap`
 * into out; the count.  None without NVLink, for a job smaller than the
 * domain, or with experts a split does not place (ep > 1, etp != tp). */
static int nvs_orders(const pp_plan *p, const pp_system *sys, char (*out)[PP_ORDER_MAX], int cap)
{
	static const char *const names[5] = {"tp2", "tp", "cp", "dp", "pp"};
	const int deg[5] = {p->tp2 > 1 ? p->tp2 : 1, p->tp, p->cp, p->dp, p->pp};
	long long dom = sys->nvlink_bytes_per_s > 0 ? sys->nvlink_domain : 1;
	int etp = p->etp > 0 ? p->etp : p->tp;
	if (dom < 2 || p->ep > 1 || etp != p->tp)
		return 0;
	int f[5] = {1, 1, 1, 1, 1}, n = 0, i = 0;
	/* odometer over f[i] = divisors of deg[i], kept while the product divides dom */
	for (;;) {
		long long prod = 1;
		for (int k = 0; k < 5; k++)
			prod *= f[k];
		if (prod == dom && n < cap) {
			char *o = out[n];
			size_t len = 0;
			bool fits = true;
			for (int pass = 0; pass < 2 && fits; pass++)
				for (int k = 0; k < 5 && fits; k++) {
					bool inner = f[k] > 1, rest = f[k] < deg[k];
					bool named = k > 0 || deg[0] > 1;
					int w;
					if (pass == 0 && inner && rest)
						w = snprintf(o + len, PP_ORDER_MAX - len, "%s:%d-",
						             names[k], f[k]);
					else if ((pass == 0 && inner) ||
					         (pass == 1 && named && (rest || !inner)))
						w = snprintf(o + len, PP_ORDER_MAX - len, "%s-",
						             names[k]);
					else
						continue;
					fits = w > 0 && len + (size_t)w < PP_ORDER_MAX;
					len += fits ? (size_t)w : 0;
				}
			if (fits && len > 0) {
				o[len - 1] = '\0';
				n++;
			}
		}
		/* next tuple: bump the first factor that can grow */
		for (i = 0; i < 5; i++) {
			int v = f[i] + 1;
			while (v <= deg[i] && (deg[i] % v != 0 || prod / f[i] * v > dom ||
			                       dom % (prod / f[i] * v) != 0))
				v++;
			if (v <= deg[i]) {
				f[i] = v;
				break;
			}
			prod /= f[i];
			f[i] = 1;
		}
		if (i == 5)
			return n;
	}
}

/* The orders of the space that place the groups differently under base's
 * degrees into u (ord_set): the space's orders (split ones whose radices fit
 * these degrees), then with --order nvs the domain's factorisations. */
static void distinct_orders(const struct pp_search *s, const pp_plan *base, ord_set *u)
{
	const pp_search_space *sp = &s->space;
	int norders = sp->norders ? sp->norders : PPI_SEARCH_NDEFAULT_ORDERS;
	int nnvs = sp->nvs_split ? nvs_orders(base, &s->system, u->nvs, PPI_SEARCH_MAX_NVS) : 0;
	pp_layout seen[PP_SEARCH_MAX_ORDERS + PPI_SEARCH_MAX_NVS][PP_NGROUPS];
	pp_plan plan = *base;
	u->n = 0;
	for (int k = 0; k < norders + nnvs; k++) {
		const char *ord = k >= norders  ? u->nvs[k - norders]
		                  : sp->norders ? sp->orders[k]
		                                : ppi_search_default_orders[k];
		ppi_strlcpy(plan.order, ord, sizeof plan.order);
		if (k < norders && !pp_order_split_fits(&plan, NULL))
			continue;
		pp_layout sig[PP_NGROUPS];
		signature(&s->model, &plan, &s->system, sig);
		bool dup = false;
		for (int q = 0; q < u->n && !dup; q++)
			dup = memcmp(seen[q], sig, sizeof sig) == 0;
		if (dup)
			continue;
		memcpy(seen[u->n], sig, sizeof sig);
		u->order[u->n++] = ord;
	}
}

/* The space's base plan with sub-space o's degrees and pipeline split, dp
 * what the GPUs leave. */
void ppi_search_outer_plan(const pp_search *s, const outer *o, pp_plan *plan)
{
	*plan = s->space.base;
	plan->tp = o->tp;
	plan->tp2 = o->tp2;
	plan->pp = o->pp;
	plan->cp = o->cp;
	plan->first_stage_layers = o->first;
	plan->last_stage_layers = o->last;
	plan->dp = (int)(s->gpus / ((long long)o->tp * o->tp2 * o->pp * o->cp));
}

int ppi_search_mbs_values(const int *gbs_div, int ngbs_div, long long per_replica,
                          const pp_search_dim *mbs, int *out)
{
	int n = 0;
	for (int d = 0; d < ngbs_div && n < PP_SEARCH_MAX_VALUES; d++) {
		int v = gbs_div[d];
		if (v > per_replica)
			break;
		bool want = mbs->count == 0;
		for (int i = 0; i < mbs->count; i++)
			want |= mbs->values[i] == v;
		if (want && per_replica % v == 0)
			out[n++] = v;
	}
	return n;
}

/* The ep values of sub-space o with dp replicas into eps: those that divide
 * the experts and tp cp dp (the space's only, when it lists values); 1 for a
 * dense model.  Returns how many. */
static int ep_values(const pp_search *s, const outer *o, long long dp, int *eps)
{
	const pp_search_space *sp = &s->space;
	const pp_model *m = &s->model;
	if (m->moe.num_experts == 0) {
		eps[0] = 1;
		return 1;
	}
	int nep = 0;
	int cap = m->moe.num_experts;
	for (int v = 1; v <= cap && nep < PP_SEARCH_MAX_VALUES; v++) {
		bool want = sp->ep.count == 0;
		for (int i = 0; i < sp->ep.count; i++)
			want |= sp->ep.values[i] == v;
		long long inner = (long long)o->tp * o->cp * dp;
		if (want && m->moe.num_experts % v == 0 && inner % v == 0)
			eps[nep++] = v;
	}
	return nep;
}

/* The expert-TP values of sub-space o into etps: the space's (MoE), else
 * tp and, for MoE with tp > 1, also 1.  Returns how many. */
static int etp_values(const pp_search *s, const outer *o, int *etps)
{
	const pp_search_space *sp = &s->space;
	const pp_model *m = &s->model;
	int netp = 0;
	if (sp->etp.count > 0 && m->moe.num_experts > 0) {
		for (int i = 0; i < sp->etp.count; i++)
			etps[netp++] = sp->etp.values[i];
		return netp;
	}
	etps[netp++] = o->tp; /* Megatron's default: experts split like the dense layers */
	if (m->moe.num_experts > 0 && o->tp > 1 && sp->etp.count == 0)
		etps[netp++] = 1;
	return netp;
}

/* The vp values of sub-space o into vps: vp divides every stage's layers
 * (Megatron: the stage's vp chunks are alike), > 1 only with a pipeline.
 * Returns how many. */
static int vp_values(const pp_search *s, const outer *o, int *vps)
{
	const pp_search_space *sp = &s->space;
	const pp_model *m = &s->model;
	pp_plan split = sp->base;
	split.pp = o->pp;
	split.first_stage_layers = o->first;
	split.last_stage_layers = o->last;
	bool even = !fixed_split(&split);
	int vmax = even ? m->num_layers / o->pp : pp_stage_layers(m, &split, 0);
	if (!even && vmax < 1)
		vmax = 1; /* a first stage of the embedding alone: vp = 1 */
	int nvp = 0;
	for (int v = 1; v <= vmax && nvp < PP_SEARCH_MAX_VALUES; v++) {
		bool want = sp->vp.count == 0 ? (v == 1 || o->pp > 1) : false;
		for (int i = 0; i < sp->vp.count; i++)
			want |= sp->vp.values[i] == v;
		if (want && !even && v > 1) {
			pp_error err;
			split.vp = v;
			want = pp_plan_check_split(&split, m, &err) == PP_OK;
		}
		if (want && vmax % v == 0 && (v == 1 || o->pp > 1))
			vps[nvp++] = v;
	}
	return nvp;
}

/* The ZeRO stages of the space into zeros (0..3, ascending); returns how many. */
static int zero_values(const pp_search_space *sp, int *zeros)
{
	int nzero = 0;
	for (int z = 0; z <= 3; z++) {
		bool want = sp->zero.count == 0;
		for (int i = 0; i < sp->zero.count; i++)
			want |= sp->zero.values[i] == z;
		if (want)
			zeros[nzero++] = z;
	}
	return nzero;
}

/* The 2D TP variants of sub-space o into variants ({summa, nb}): plain 1D
 * TP (tp2 = 1) or shared-weight 2D TP, and SUMMA with its panel counts.
 * Returns how many. */
static int tp2_variants(const pp_search *s, const outer *o, int variants[][2])
{
	const pp_search_space *sp = &s->space;
	const pp_model *m = &s->model;
	int nvar = 0;
	unsigned summask = sp->summa_mask ? sp->summa_mask : 3u;
	/* tp2 = 1 is plain 1D TP unless --summa on alone; with tp2 > 1, bit 0 is 2D
	 * TP with shared weights.  An explicit --summa on also searches SUMMA on
	 * the n_1 x 1 grid: seed 003's SUMMA sweeps include n_2 = 1 (§IV(iv),
	 * Fig. 3a's fastest (n_1, n_2, n_p) = (8, 1, 128); docs/summa.md). */
	if (o->tp2 == 1 ? sp->summa_mask != 2u : (summask & 1u) != 0)
		variants[nvar][0] = 0, variants[nvar][1] = 1, nvar++;
	if (!(summask & 2u) || (o->tp2 == 1 && !(sp->summa_mask & 2u)))
		return nvar;
	int h = m->hidden, f = m->ffn_hidden;
	for (int v = 1; v <= 64 && nvar < 2 * PP_SEARCH_MAX_VALUES; v *= 2) {
		bool want = sp->summa_nb.count == 0;
		for (int i = 0; i < sp->summa_nb.count; i++)
			want |= sp->summa_nb.values[i] == v;
		if (want && h % v == 0 && (f == 0 || f % v == 0))
			variants[nvar][0] = 1, variants[nvar][1] = v, nvar++;
	}
	for (int i = 0; i < sp->summa_nb.count && nvar < 2 * PP_SEARCH_MAX_VALUES; i++) {
		int v = sp->summa_nb.values[i];
		if (v > 64 || (v & (v - 1)))
			variants[nvar][0] = 1, variants[nvar][1] = v, nvar++;
	}
	return nvar;
}

/* The (vp, schedule, ZeRO) tails of sub-space o into tails, in the order
 * the search has always enumerated them; returns how many. */
static int outer_tails(const pp_search *s, const outer *o, const int *vps, int nvp,
                       const int *zeros, int nzero, tail *tails)
{
	const pp_search_space *sp = &s->space;
	unsigned smask = sp->schedule_mask ? sp->schedule_mask : pp_schedule_search_default_mask();
	int ntails = 0;
	for (int c = 0; c < nvp; c++)
		for (int sc = 0; sc < pp_schedule_type_n; sc++) {
			const pp_schedule_type *st = pp_schedule_types[sc];
			if (!(smask & (1u << sc)))
				continue;
			/* vp > 1 is a schedule with virtual stages (interleaved); vp = 1
			 * is not */
			if ((vps[c] > 1) != st->uses_vp)
				continue;
			/* no pipeline: every schedule is the same as 1F1B, but those
			 * marked at_pp1 (DHelix's co-execution, SI without PP) */
			if (o->pp == 1 && !st->at_pp1)
				continue;
			for (int z = 0; z < nzero && ntails < MAX_TAILS; z++)
				tails[ntails++] = (tail){vps[c], zeros[z], (pp_schedule)sc};
		}
	return ntails;
}

void ppi_search_run_outer(worker *w, slot *r, const outer *o)
{
	struct pp_search *s = w->s;
	const pp_search_space *sp = &s->space;
	long long dp = s->gpus / ((long long)o->tp * o->tp2 * o->pp * o->cp);
	long long per_replica = s->job.global_batch % dp ? 0 : s->job.global_batch / dp;
	if (per_replica == 0) {
		r->rejected++;
		return;
	}
	int eps[PP_SEARCH_MAX_VALUES], etps[PP_SEARCH_MAX_VALUES], vps[PP_SEARCH_MAX_VALUES];
	int mbss[PP_SEARCH_MAX_VALUES], zeros[4];
	int nep = ep_values(s, o, dp, eps);
	int netp = etp_values(s, o, etps);
	int nvp = vp_values(s, o, vps);
	int nmbs = ppi_search_mbs_values(s->gbs_div, s->ngbs_div, per_replica, &sp->mbs, mbss);
	int nzero = zero_values(sp, zeros);
	unsigned rmask = sp->recompute_mask ? sp->recompute_mask : 7u;
	unsigned spmask = sp->sp_mask ? sp->sp_mask : 3u;
	unsigned omask = sp->offload_mask ? sp->offload_mask : 1u; /* opt-in */
	int variants[2 * PP_SEARCH_MAX_VALUES][2];                 /* {summa, nb} */
	int nvar = tp2_variants(s, o, variants);

	pp_plan plan;
	ppi_search_outer_plan(s, o, &plan);
	tail tails[MAX_TAILS];
	int ntails = outer_tails(s, o, vps, nvp, zeros, nzero, tails);
	for (int vv = 0; vv < nvar; vv++) {
		plan.summa = variants[vv][0];
		plan.summa_nb = variants[vv][1];
		for (int a = 0; a < nep; a++)
			for (int b = 0; b < netp; b++) {
				plan.ep = eps[a];
				plan.etp = etps[b];
				/* Where every group lands depends on the degrees fixed
				 * here, not on vp, sp, schedule, ZeRO, recompute or the
				 * micro-batch: the orders that place the groups alike
				 * are told apart once, the first of each kept. */
				ord_set u;
				distinct_orders(s, &plan, &u);
				for (int ov = 0; ov < 2; ov++) {
					if (!(omask & (1u << ov)))
						continue;
					plan.offload_optimizer = ov;
					for (int spv = 0; spv < 2; spv++) {
						if (!(spmask & (1u << spv)) || (spv && o->tp == 1))
							continue;
						/* SUMMA shards every activation whatever sp
						 * says: its sp-on twin is the same plan */
						if (spv && plan.summa && (spmask & 1u))
							continue;
						for (int rc = 0; rc < 3; rc++) {
							if (!(rmask & (1u << rc)))
								continue;
							plan.sp = spv;
							plan.recompute = (pp_recompute)rc;
							ppi_search_run_mbs(w, r, &plan, mbss, nmbs,
							                   &u, tails, ntails);
							if (r->status)
								return;
						}
					}
				}
			}
	}
}
