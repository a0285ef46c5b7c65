/*
 * Estimate: resolve the plan, then run the models in flow order
 * (workload -> cost -> schedule as they land).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost_int.h"
#include "estimate_int.h"
#include "paraplan/inputs.h"
#include "spec/spec_int.h"
#include "paraplan/dhelix.h"
#include "paraplan/estimate.h"
#include "paraplan/schedule_type.h"
#include "util/util.h"
#include "workload/workload_int.h"

/* The plan splits the layers unevenly over the pipeline stages. */
static bool uneven_split(const pp_plan *p)
{
	return p->first_stage_layers > 0 || p->last_stage_layers > 0 || p->embedding_as_layer ||
	       p->loss_as_layer;
}

pp_status pp_estimate_run(const pp_model *m, const pp_system *s, const pp_job *job,
                          const pp_plan *plan, long long gpus, pp_estimate *out, pp_error *err)
{
	return pp_estimate_eval(m, s, job, plan, gpus, 0, NULL, out, err);
}

/* DHelix (schedule wshape): the SI block speedup of one stage, from the
 * pairing of its layers on the GPU's overlap platform (dhelix.h). */
static pp_status si_speedup(const pp_scenario *sc, pp_stage_time *t, pp_work *ws, pp_error *err)
{
	pp_dh_overlap o;
	PPI_TRY(pp_dh_overlap_of_system(sc->system, sc->plan.tp, &o, err));
	return pp_dh_stage_speedup(sc->model, sc->system, sc->job, &sc->plan, t->stage,
	                           t->fwd_s + t->bwd_s, &o, ws, &t->si_speedup, err);
}

/* si_speedup's upper bounds (pp_dh_stage_speedup_bound) for every stage of
 * `st`, into their si_speedup. */
static pp_status si_speedup_bounds(const pp_scenario *sc, pp_stage_time *st, pp_work *ws,
                                   pp_error *err)
{
	const pp_plan *p = &sc->plan;
	pp_dh_overlap o;
	PPI_TRY(pp_dh_overlap_of_system(sc->system, sc->plan.tp, &o, err));
	for (int i = 0; i < p->pp; i++) {
		pp_stage_time *t = &st[i];
		if (i > 1 && i < p->pp - 1 && sc->uniform_layers) {
			t->si_speedup = st[1].si_speedup;
			continue;
		}
		pp_status rc =
		    pp_dh_stage_speedup_bound(sc->model, sc->system, sc->job, p, t->stage,
		                              t->fwd_s + t->bwd_s, &o, ws, &t->si_speedup, err);
		if (rc)
			return rc;
	}
	return PP_OK;
}

/*
 * A lower bound of the iteration time pp_schedule_iteration gives the
 * resolved plan of `sc` (not DHelix's wshape, which has its own form): with
 * c_i the layer compute of one micro-batch on rank i plus the layers' own
 * exposed TP, CP and EP seconds (ppi_stage_layers_compute, from the same memo
 * the stage costs sum),
 *   iteration_s = m t_b + bubble + dp + optimizer + other,
 * t_b the steady state's period per micro-batch, >= max_i (fwd_s + bwd_s)_i
 * >= max_i c_i (the sends add to it only where no stage's slack hides them:
 * sched_int.h), every term >= 0, other >= the framework's per-iteration
 * overhead, and the fill-and-drain of 1F1B is the sum of the other ranks'
 * (fwd_s + bwd_s + pp_s) >= sum_i c_i - max_i c_i (interleaved: their fwd_s +
 * bwd_s over v and p v - 1 sends, >= a v-th of 1F1B's; zero-bubble: >= 0).
 * So
 *   iteration_s >= m max c + bubble floor + overhead.
 * Scaled by 1 - 1e-9 against the rounding of sums taken in another order.
 * Every rank sends the same pp_s per micro-batch (ppi_stage_pp_send_s), so
 * the 1F1B fill >= sum_i c_i - max_i c_i + (pp - 1) pp_s (over v when
 * interleaved); the steady state is only known to be >= max_i c_i.  With
 * blocking exchanges (sched_1f1b.c) the pipeline part is (m - 1)(c_B + e_B)
 * + sum_i (c_i + e_i) with c_B + e_B the largest and sum_i e_i = k x the
 * line's sends, k >= 1: the same bound holds.
 * The optimizer term is max_i optimizer_s_i >= the optimizer_s of any rank
 * (ppi_stage_dp_s gives it as the stage cost does): opt_s.
 * The data-parallel term is max_i (dp_s_i - hide_i) (or 0), where
 * pp_schedule_dp_hide_s hides at most dp_overlap bwd_compute_s_i +
 * param_gather_overlap fwd_compute_s_i <= ov (fwd_s_i + bwd_s_i) <= ov t_b,
 * ov the larger fraction; so it is >= D - ov t_b with D = max_i dp_s_i; and
 * m t + max(0, D - ov t) grows with t when ov <= m (a fraction, m >= 1), so
 * with t_b >= T = max_i c_i the two terms are >= m T + max(0, D -
 * ov T): dp_s = D, overlap = ov (the term is left out if ov is outside
 * [0, m]).  Interleaved, the vp chunks' shares hide under windows up to
 * (vp - 1) pp chunk-steps longer, but the first share (D / vp) has only its
 * own: the term is >= (D - ov t_b) / vp, i.e. dp_s = D / vp, overlap =
 * ov / vp.
 * time_floor gives the bound without the optimizer and DP terms, and
 * time_floor_dp with them (from some ranks only: still a lower bound).
 * *order_free_s: the bound with the compute alone in c_i, no sends and no
 * optimizer or data-parallel term, which does not depend on where the groups
 * land (the same for every rank order).
 * `sched` is the plan's schedule type.
 */
static double bound(const pp_plan *p, const pp_schedule_type *sched, double cmax, double sum,
                    double pp_s, double overhead_s, double opt_s, double dp_s, double overlap)
{
	double m = (double)p->microbatches, bubble = 0;
	if (sched->floor_bubble_s)
		bubble = sched->floor_bubble_s(p, sum - cmax, pp_s);
	if (bubble == -INFINITY) /* the type has no bound (DualPipe's pairs) */
		return 0;
	if (bubble < 0)
		bubble = 0;
	double t = cmax, dp = 0;
	if (overlap >= 0 && overlap <= m && dp_s - overlap * t > 0)
		dp = dp_s - overlap * t;
	return (m * t + bubble + dp + opt_s + overhead_s) * (1 - 1e-9);
}

/* What time_floor found, for time_floor_dp. */
typedef struct floor_parts {
	double xmax, xsum, pp_s, overhead_s;
} floor_parts;

/* The floor without the optimizer and data-parallel terms (and, in
 * *order_free_s, the order-free one); *fp: its parts. */
static double time_floor(const pp_scenario *sc, pp_work *ws, double *order_free_s, floor_parts *fp)
{
	const pp_plan *p = &sc->plan;
	double cmax = 0, sum = 0, xmax = 0, xsum = 0;
	for (int i = 0; i < p->pp; i++) {
		double comm;
		double c = ppi_stage_layers_compute(sc, i, ws, &comm), n = 1;
		double x = c + comm;
		if (i == 1 && p->pp > 3 && sc->uniform_layers) {
			/* ranks 1 .. pp-2 of alike layers hold the same */
			n = p->pp - 2;
			i = p->pp - 2;
		}
		sum += c * n;
		xsum += x * n;
		if (c > cmax)
			cmax = c;
		if (x > xmax)
			xmax = x;
	}
	fp->xmax = xmax;
	fp->xsum = xsum;
	fp->pp_s = ppi_stage_pp_send_s(sc, ws);
	fp->overhead_s = sc->system->iteration_overhead_s;
	const pp_schedule_type *sched = sc->sched;
	*order_free_s = bound(p, sched, cmax, sum, 0, fp->overhead_s, 0, 0, 0);
	return bound(p, sched, xmax, xsum, fp->pp_s, fp->overhead_s, 0, 0, 0);
}

/* time_floor's floor with the optimizer and data-parallel terms, from rank
 * 0 alone (D = max_i dp_s_i >= dp_s_0, and the same for the optimizer; rank
 * 0 holds the embedding, so as many parameters as any unless an uneven split
 * loads the middle ranks; the last rank as well cut no more plans on GPT-3
 * 175B / 16,384 A100 and cost 3% more instructions): asked only of a plan
 * time_floor does not cut, as it costs the rank's parameter count and DP
 * collective times. */
static double time_floor_dp(const pp_scenario *sc, pp_work *ws, const floor_parts *fp)
{
	const pp_plan *p = &sc->plan;
	double opt, d = ppi_stage_dp_s(sc, 0, ws, &opt);
	const pp_schedule_type *sched = sc->sched;
	double ov = sc->system->dp_overlap > sc->system->param_gather_overlap
	                ? sc->system->dp_overlap
	                : sc->system->param_gather_overlap;
	/* DP hidden under compute: the optimizer's share alone (~1e-4 of the
	 * time) rarely decides a cut, so the lists are not asked again (0). */
	if (d - ov * fp->xmax <= 0)
		return 0;
	/* the chunks' shares (pp_schedule_dp_hide_s) */
	double c = sched->dp_per_chunk && p->vp > 1 ? p->vp : 1;
	return bound(p, sched, fp->xmax, fp->xsum, fp->pp_s, fp->overhead_s, opt, d / c, ov / c);
}

/*
 * The floor of a wshape plan before its stages are costed (DHelix's W,
 * sched_wshape.c iteration): with t_i = fwd_s + bwd_s + 2 pp_s of rank i
 * and s_i its SI speedup, for m > p micro-batches
 *   iteration_s >= (m - p) t_b / s_b + p t_b + sum_{i != b} t_i / s_i + other,
 * b the rank with the largest t.  t_i / s_i >= fwd_s + bwd_s - saved_i, and
 * the saving is at most cc of the forward computation and beta of the
 * exposed communication (pp_dh_stage_saved_cap), so with the layers' shares
 * (ppi_stage_layers_compute_fwd: forward f_i, all phases c_i, communication
 * x_i, each no more than the stage's)
 *   t_i / s_i >= y_i = (1 - cc) f_i + (c_i - f_i) + (1 - beta) x_i,
 * t_b >= max_i (c_i + x_i), the fill carries the other stages' two sends
 * each, 2 (p - 1) pp_s, and the sum is >= (m - p - 1) min y + sum y + p
 * max (c + x) + 2 (p - 1) pp_s; with m <= p it is >= m t_b.  The
 * order-free floor takes x = 0 and pp_s = 0 (the compute does not depend on
 * where the groups land, nor do cc and beta).  Both 0 when a table has an
 * OEF above 1 (pp_dh_rates.le1 false).
 */
static double wshape_floor(const pp_scenario *sc, pp_work *ws, const pp_dh_rates *r,
                           double *order_free_s)
{
	const pp_plan *p = &sc->plan;
	*order_free_s = 0;
	if (!r->le1) /* an OEF above 1: 1 - beta < 0 and the shares bound nothing */
		return 0;
	double m = (double)p->microbatches, P = p->pp;
	double ymin = INFINITY, ysum = 0, xmax = 0, y0min = INFINITY, y0sum = 0, cmax = 0;
	for (int i = 0; i < p->pp; i++) {
		double comm, f, n = 1;
		double c = ppi_stage_layers_compute_fwd(sc, i, ws, &comm, &f);
		if (i == 1 && p->pp > 3 && sc->uniform_layers) {
			/* ranks 1 .. pp-2 of alike layers hold the same */
			n = p->pp - 2;
			i = p->pp - 2;
		}
		double y0 = (1 - r->cc) * f + (c - f), y = y0 + (1 - r->beta) * comm;
		ysum += y * n;
		y0sum += y0 * n;
		ymin = y < ymin ? y : ymin;
		y0min = y0 < y0min ? y0 : y0min;
		xmax = c + comm > xmax ? c + comm : xmax;
		cmax = c > cmax ? c : cmax;
	}
	double pp_s = ppi_stage_pp_send_s(sc, ws), other = sc->system->iteration_overhead_s;
	double lo = 1 - 1e-9;
	if (m <= P) {
		*order_free_s = (m * cmax + other) * lo;
		return (m * xmax + other) * lo;
	}
	*order_free_s = ((m - P - 1) * y0min + y0sum + P * cmax + other) * lo;
	return ((m - P - 1) * ymin + ysum + P * xmax + 2 * (P - 1) * pp_s + other) * lo;
}

pp_status pp_estimate_eval(const pp_model *m, const pp_system *s, const pp_job *job,
                           const pp_plan *plan, long long gpus, unsigned flags, pp_work *ws,
                           pp_estimate *out, pp_error *err)
{
	return ppi_estimate_eval_cut(m, s, job, plan, gpus, flags, ws, out, NULL, NULL, NULL, NULL,
	                             err);
}

/* The resolved plan into out: with PPI_EVAL_TRUSTED only the plan and the
 * GPUs are written (and resolved without the checks), else out is cleared
 * and given copies of the inputs first.  PP_EINPUT for a refused plan or
 * more than PP_MAX_STAGES stages. */
static pp_status eval_resolve(const pp_model *m, const pp_system *s, const pp_job *job,
                              const pp_plan *plan, long long gpus, unsigned flags, pp_estimate *out,
                              pp_error *err)
{
	bool trusted = flags & PPI_EVAL_TRUSTED;
	if (!trusted) {
		memset(out, 0, sizeof *out);
		out->model = *m;
		out->system = *s;
		out->job = *job;
	}
	out->plan = *plan;
	out->gpus = gpus;
	pp_status st = trusted ? ppi_plan_resolve_trusted(&out->plan, m, s, gpus, job, err)
	                       : pp_plan_resolve(&out->plan, m, s, gpus, job, err);
	if (st)
		return st;
	if (out->plan.pp > PP_MAX_STAGES)
		return ppi_fail(err, "", "plan.pp",
		                "at most %d pipeline stages are supported, got %d", PP_MAX_STAGES,
		                out->plan.pp);
	return PP_OK;
}

/* ws's parameter counts and FLOPs per token, for model m at the job's
 * sequence length (computed once per model and sequence). */
static void work_params(pp_work *ws, const pp_model *m, const pp_job *job)
{
	if (ws->params_model != m || ws->params_seq != job->seq_len) {
		pp_model_params(m, &ws->params);
		ws->flops_per_token = pp_model_flops_per_token(m, job->seq_len);
		ws->params_model = m;
		ws->params_seq = job->seq_len;
	}
}

/* The time cut an evaluation asks (ppi_estimate_eval_cut): the caller's
 * function and context, and wshape's order-free floor once known
 * (cut_wshape_before). */
pp_status ppi_offload_check(const pp_plan *p, const pp_system *s, pp_error *err)
{
	if (p->offload_layers > 0 && !p->offload_activations)
		return ppi_fail(err, "", "--offload-layers",
		                "needs --offload-activations on: it counts the layers whose "
		                "saved activations go to the host");
	if (!p->offload_optimizer && !p->offload_params && !p->offload_activations)
		return PP_OK;
	if (p->offload_optimizer && p->zero < 1)
		return ppi_fail(
		    err, "", "--offload-optimizer",
		    "needs --zero 1 or more: the host steps this GPU's optimizer shard "
		    "(Megatron's --optimizer-cpu-offload needs its distributed optimizer, "
		    "DeepSpeed's offload_optimizer ZeRO 1-3)");
	if (p->offload_params && p->zero < 3)
		return ppi_fail(
		    err, "", "--offload-params",
		    "needs --zero 3: ZeRO-Infinity offloads the ZeRO-3 parameter shards");
	const char *missing = !(s->host_link_bytes_per_s > 0) ? "host_link_bytes_per_s"
	                      : !(s->host_memory_bytes > 0)   ? "host_memory_bytes"
	                      : p->offload_optimizer && !(s->host_memory_bw_bytes_per_s > 0)
	                          ? "host_memory_bw_bytes_per_s"
	                          : NULL;
	if (missing) {
		char field[64];
		snprintf(field, sizeof field, "system.%s", missing);
		return ppi_fail(
		    err, s->name, field,
		    "not stated, and CPU offload needs it: give it in the system's file "
		    "(docs/memory.md, \"CPU offload\")");
	}
	return PP_OK;
}

/* --recompute-modules names what selective recompute recomputes: without
 * selective recompute, or MLA's up-projections in a model without MLA, it
 * would be ignored, so it is refused. */
static pp_status recompute_modules_check(const pp_plan *p, const pp_model *m, pp_error *err)
{
	if (!p->recompute_modules)
		return PP_OK;
	if (p->recompute != PP_RECOMPUTE_SELECTIVE)
		return ppi_fail(err, "", "--recompute-modules",
		                "needs --recompute selective: it names what selective recompute "
		                "recomputes");
	if ((p->recompute_modules & PP_RECOMPUTE_MODULE_MLA_UP_PROJ) && !(m->mla.kv_lora_rank > 0))
		return ppi_fail(err, "", "--recompute-modules",
		                "mla_up_proj needs a model with multi-head latent attention "
		                "(kv_lora_rank), which '%s' has not",
		                m->name);
	return PP_OK;
}

typedef struct eval_cut {
	ppi_time_cut fn;
	void *ctx;
	double w_order_free_s;
} eval_cut;

/* The peak memory of the plan of sc into out (memory, stage_total_bytes of
 * the stages sized, capacity, headroom and fits), or known's peak when
 * given (a trusted plan whose peak is known). */
static pp_status eval_memory(const pp_scenario *sc, const pp_system *s, unsigned flags,
                             const ppi_eval_known *known, pp_estimate *out, pp_error *err)
{
	/* With alike layers the peak is on the first stage (most micro-batches in
	 * flight, the embedding) or the last (the head and the logits).  With an
	 * uneven split the ends hold other layer counts than the middle stages,
	 * which are alike among themselves, and of those stage 1 has the most
	 * micro-batches in flight (in-flight counts never grow with the stage
	 * index): then stages 0, 1 and pp-1 can peak. */
	bool ends_only = (flags & PP_EVAL_PEAK_ONLY) && sc->uniform_layers;
	int mid_too = uneven_split(&out->plan) ? 1 : 0;
	double host = 0; /* a known peak is of a plan that fits, host memory too */
	if (known)
		out->memory.total_bytes = known->bytes;
	for (int i = 0; i < out->plan.pp && !known; i++) {
		if (ends_only && i > mid_too && i < out->plan.pp - 1)
			continue;
		pp_stage_memory sm;
		PPI_TRY(ppi_memory_stage(sc, i, &sm, err));
		out->stage_total_bytes[i] = sm.total_bytes;
		if (i == 0 || sm.total_bytes > out->memory.total_bytes)
			out->memory = sm;
		host = fmax(host, sm.host_bytes);
	}
	out->capacity_bytes = s->gpu.memory_bytes;
	out->headroom_bytes = out->capacity_bytes - out->memory.total_bytes;
	out->fits = out->headroom_bytes >= 0;
	/* CPU offload: the node's GPUs in use each keep their state in the
	 * node's host memory (docs/memory.md, "CPU offload"). */
	double node_gpus = (double)(out->gpus < s->gpus_per_node ? out->gpus : s->gpus_per_node);
	out->host_bytes_per_node = host * node_gpus;
	out->host_fits = !(host > 0 && out->host_bytes_per_node > s->host_memory_bytes);
	if (!out->host_fits)
		out->fits = false;
	return PP_OK;
}

/* A fitting wshape plan, before its stages are costed: its saving rates
 * into *rates and the cut asked with wshape_floor (c->w_order_free_s set).
 * *was_cut: the cut answered true. */
static pp_status cut_wshape_before(const pp_scenario *sc, pp_work *ws, const pp_estimate *out,
                                   eval_cut *c, pp_dh_rates *rates, bool *was_cut, pp_error *err)
{
	pp_dh_overlap o;
	PPI_TRY(pp_dh_overlap_of_system(sc->system, out->plan.tp, &o, err));
	pp_dh_saving_rates(&o, rates);
	double floor_s = wshape_floor(sc, ws, rates, &c->w_order_free_s);
	*was_cut = c->fn(c->ctx, out, floor_s, c->w_order_free_s);
	return PP_OK;
}

/* A fitting plan of another schedule: the cut asked with time_floor's
 * floor, then with time_floor_dp's when that is tighter.  Returns whether
 * the cut answered true. */
static bool cut_floor_before(const pp_scenario *sc, pp_work *ws, const pp_estimate *out,
                             const eval_cut *c)
{
	floor_parts fp;
	double order_free_s, floor_s = time_floor(sc, ws, &order_free_s, &fp);
	if (c->fn(c->ctx, out, floor_s, order_free_s))
		return true;
	double dp_floor_s = time_floor_dp(sc, ws, &fp);
	return dp_floor_s > floor_s && c->fn(c->ctx, out, dp_floor_s, order_free_s);
}

/* Each stage's cost of the plan of sc into stt[0 .. pp): inner stages of a
 * uniform model are alike (an uneven split changes only the end stages), so
 * only the distinct ones are costed, all but their sends: each rank's link
 * is its own hop (ppi_stage_pp_link_s, as its stage cost gives it). */
static pp_status stage_costs(const pp_scenario *sc, pp_work *ws, pp_stage_time *stt, pp_error *err)
{
	const pp_plan *p = &sc->plan;
	for (int i = 0; i < p->pp; i++) {
		if (i > 1 && i < p->pp - 1 && sc->uniform_layers) {
			stt[i] = stt[1];
			stt[i].stage = i;
			stt[i].pp_s = ppi_stage_pp_link_s(sc, ws, i);
			continue;
		}
		PPI_TRY(ppi_stage_cost(sc, i, ws, &stt[i], err));
	}
	return PP_OK;
}

/* Two more floors of a wshape plan, now that its stages stt are costed:
 * its own closed form with each stage's speedup at an upper bound (the time
 * falls as a speedup grows; pp_dh_stage_saved_cap from the stage's seconds,
 * then the layers' pp_dh_layer_saved_bound), before the pairing, which costs
 * most of its evaluation.  Overwrites stt's si_speedup.  *was_cut: the cut
 * answered true. */
static pp_status cut_costed_wshape(const pp_scenario *sc, pp_work *ws, const pp_estimate *out,
                                   const eval_cut *c, const pp_dh_rates *rates, pp_stage_time *stt,
                                   bool *was_cut, pp_error *err)
{
	const pp_plan *p = &out->plan;
	pp_iteration it;
	for (int i = 0; i < p->pp; i++) {
		pp_stage_time *t = &stt[i];
		double st_s = t->fwd_s + t->bwd_s;
		double cap = pp_dh_stage_saved_cap(rates, t->fwd_compute_s, t->bwd_compute_s,
		                                   t->fwd_s, t->bwd_s);
		t->si_speedup = st_s - cap > 0 ? st_s / (st_s - cap) : INFINITY;
	}
	pp_schedule_iteration(p, sc->system, stt, &it);
	bool cut = c->fn(c->ctx, out, it.iteration_s * (1 - 1e-9), c->w_order_free_s);
	if (!cut) {
		PPI_TRY(si_speedup_bounds(sc, stt, ws, err));
		pp_schedule_iteration(p, sc->system, stt, &it);
		cut = c->fn(c->ctx, out, it.iteration_s * (1 - 1e-9), c->w_order_free_s);
	}
	*was_cut = cut;
	return PP_OK;
}

/* Each stage's SI speedup of a wshape plan into stt (si_speedup; inner
 * stages of alike layers share stage 1's). */
static pp_status si_speedups(const pp_scenario *sc, pp_work *ws, pp_stage_time *stt, pp_error *err)
{
	const pp_plan *p = &sc->plan;
	for (int i = 0; i < p->pp; i++) {
		if (i > 1 && i < p->pp - 1 && sc->uniform_layers) {
			stt[i].si_speedup = stt[1].si_speedup;
			continue;
		}
		PPI_TRY(si_speedup(sc, &stt[i], ws, err));
	}
	return PP_OK;
}

/* The GPU's peak FLOP/s at the job's precision. */
static double peak_flops(const pp_system *s, const pp_job *job)
{
	switch (job->precision) {
	case PP_PREC_FP8:
	case PP_PREC_BF16: return s->gpu.bf16_flops > 0 ? s->gpu.bf16_flops : s->gpu.fp16_flops;
	case PP_PREC_FP16: return s->gpu.fp16_flops;
	case PP_PREC_FP32:
	default: return s->gpu.tf32_flops > 0 ? s->gpu.tf32_flops : s->gpu.fp32_flops;
	}
}

/*
 * The fraction of the iteration the mean GPU computes (docs/energy.md): the
 * schedule's compute time (the bottleneck stage's) carried to each stage in
 * proportion to its compute per micro-batch, over the iteration, averaged
 * over the stages.
 */
static double busy_fraction(const pp_estimate *out, const pp_stage_time *stt)
{
	double it = out->time.iteration_s;
	const pp_stage_time *b = &stt[out->time.bottleneck_stage];
	double per_b = b->fwd_compute_s + b->bwd_compute_s;
	int n = out->plan.pp > 0 ? out->plan.pp : 1;
	if (!(it > 0))
		return 0;
	double sum = 0;
	for (int i = 0; i < n; i++) {
		double per = stt[i].fwd_compute_s + stt[i].bwd_compute_s;
		double c = per_b > 0 ? out->time.compute_s * per / per_b : out->time.compute_s;
		sum += c < it ? c / it : 1;
	}
	return sum / n;
}

/* What follows the iteration time (out->time set, its stages stt): the
 * bottleneck stage, throughput, FLOPs and utilisation, training days and
 * cost, and the bytes per iteration of each parallelism. */
static void eval_results(pp_estimate *out, const pp_system *s, const pp_job *job, const pp_work *ws,
                         const pp_stage_time *stt, long long gpus)
{
	const pp_plan *p = &out->plan;
	out->bottleneck = stt[out->time.bottleneck_stage];
	out->tokens_per_iteration = (double)job->global_batch * job->seq_len;
	double it = out->time.iteration_s;
	out->tokens_per_s = it > 0 ? out->tokens_per_iteration / it : 0;
	out->model_flops_per_token = ws->flops_per_token;
	out->model_tflops_per_gpu =
	    out->model_flops_per_token * out->tokens_per_s / (double)gpus / 1e12;
	/* Executed FLOPs: every stage's GPUs, all micro-batches. */
	double hw = 0, model_ops = 0;
	for (int i = 0; i < p->pp; i++) {
		hw += stt[i].hw_flops;
		model_ops += stt[i].model_flops;
	}
	double per_gpu_hw = hw * (double)p->microbatches / p->pp;
	double per_gpu_model = model_ops * (double)p->microbatches / p->pp;
	/* Recompute adds to executed work; report hardware FLOPs on the model
	 * convention scaled by the executed/model ratio of the op list. */
	double ratio = per_gpu_model > 0 ? per_gpu_hw / per_gpu_model : 1;
	out->hardware_tflops_per_gpu = out->model_tflops_per_gpu * ratio;
	out->peak_flops = peak_flops(s, job);
	out->mfu = out->model_tflops_per_gpu * 1e12 / out->peak_flops;
	out->hfu = out->hardware_tflops_per_gpu * 1e12 / out->peak_flops;
	out->train_tokens = job->train_tokens;
	out->usd_per_gpu_hour = s->usd_per_gpu_hour;
	double secs = 0;
	if (job->train_tokens > 0 && out->tokens_per_s > 0) {
		secs = job->train_tokens / out->tokens_per_s;
		out->train_days = secs / 86400.0;
		out->gpu_hours = secs / 3600.0 * (double)gpus;
		out->cost_usd = out->gpu_hours * s->usd_per_gpu_hour;
	}
	pp_energy_compute(s, &job->energy, gpus, it, busy_fraction(out, stt), secs, &out->energy);
	const pp_stage_time *b = &out->bottleneck;
	double mb = (double)p->microbatches;
	out->tp_bytes = b->tp_bytes * mb;
	out->cp_bytes = b->cp_bytes * mb;
	out->ep_bytes = b->ep_bytes * mb;
	/* one activation and one gradient per send (schedule_type.h) */
	out->pp_bytes =
	    b->pp_bytes * mb * pp_schedule_type_of(p->schedule)->sends_per_microbatch(p);
	out->dp_bytes = b->dp_bytes * (pp_plan_layer_gathers(p, s) > 0 ? mb : 1);
}

pp_status ppi_estimate_eval_cut(const pp_model *m, const pp_system *s, const pp_job *job,
                                const pp_plan *plan, long long gpus, unsigned flags, pp_work *ws,
                                pp_estimate *out, ppi_time_cut cut, void *ctx, bool *was_cut,
                                const ppi_eval_known *known, pp_error *err)
{
	if (was_cut)
		*was_cut = false;
	/* A system that has not been through pp_system_compute_model (a caller
	 * that built it by hand): its compute model on a copy. */
	pp_system resolved;
	if (!s->gpu.kern.stack_fractions) {
		resolved = *s;
		PPI_TRY(pp_system_compute_model(&resolved, err));
		s = &resolved;
	}
	PPI_TRY(eval_resolve(m, s, job, plan, gpus, flags, out, err));
	PPI_TRY(ppi_offload_check(&out->plan, s, err));
	PPI_TRY(recompute_modules_check(&out->plan, m, err));
	if (pp_plan_layer_gathers(&out->plan, s) > 0 && isnan(s->zero3_visible))
		return ppi_fail(err, s->gpu.name, "gpu.overlap_platform",
		                "ZeRO-3's (and FSDP's ZeRO-2) per-layer traffic keeps the visible "
		                "share in the GPU's "
		                "overlap table, not known for GPU '%s': name it in its file "
		                "(\"overlap_platform\") or give one (--overlap)",
		                s->gpu.name);
	pp_work local;
	if (!ws) {
		pp_work_init(&local);
		ws = &local;
	}
	work_params(ws, m, job);
	out->params = ws->params;
	out->nstages = out->plan.pp;
	/* Everything derived from the inputs, once; memory and cost read it. */
	pp_scenario sc;
	ppi_scenario_init_ws(&sc, m, s, job, &out->plan, gpus, &ws->place_memo);
	bool trusted = flags & PPI_EVAL_TRUSTED;
	PPI_TRY(eval_memory(&sc, s, flags, trusted ? known : NULL, out, err));
	if ((flags & PP_EVAL_MEMORY_ONLY) || (!out->fits && (flags & PP_EVAL_FIT_ONLY)))
		return PP_OK;
	const pp_schedule_type *sched = pp_schedule_type_of(out->plan.schedule);
	eval_cut c = {cut, ctx, 0}; /* w_order_free_s: wshape's order-free floor */
	pp_dh_rates rates;
	bool was = false;
	if (cut && out->fits && sched->si)
		PPI_TRY(cut_wshape_before(&sc, ws, out, &c, &rates, &was, err));
	if (cut && out->fits && !sched->si)
		was = cut_floor_before(&sc, ws, out, &c);
	if (was) {
		*was_cut = true;
		return PP_OK;
	}
	/* Time: each stage's cost, then the schedule. */
	pp_stage_time stt[PP_MAX_STAGES];
	PPI_TRY(stage_costs(&sc, ws, stt, err));
	if (cut && out->fits && sched->si)
		PPI_TRY(cut_costed_wshape(&sc, ws, out, &c, &rates, stt, &was, err));
	if (was) {
		*was_cut = true;
		return PP_OK;
	}
	if (sched->si)
		PPI_TRY(si_speedups(&sc, ws, stt, err));
	pp_schedule_iteration(&out->plan, s, stt, &out->time);
	eval_results(out, s, job, ws, stt, gpus);
	return PP_OK;
}

pp_status ppi_sim_stage_of(const pp_scenario *sc, int stage, pp_work *ws, pp_stage_time *t,
                           pp_sim_stage *s, pp_error *err)
{
	const pp_plan *p = &sc->plan;
	const pp_schedule_type *sched = pp_schedule_type_of(p->schedule);
	/* FLOPs of one chunk: the stage's over its chunks (vp, or the U's two) */
	double nchunks = sched->chunks(p);
	memset(s, 0, sizeof *s);
	pp_status rc = ppi_stage_cost(sc, stage, ws, t, err);
	if (rc)
		return rc;
	s->fwd_s = t->fwd_s;
	s->bwd_s = t->bwd_s;
	/* The closed form's zero-bubble W is the weight-gradient compute. */
	s->wgrad_s = sched->split_wgrad ? t->wgrad_compute_s : 0;
	/* pp_s is one activation and one gradient transfer per micro-batch over
	 * the rank's link to the next rank (the wrap from the last, interleaved);
	 * its sends to the previous rank cross that rank's link. */
	s->send_fwd_s = t->pp_s / 2;
	s->send_bwd_s = ppi_stage_pp_link_s(sc, ws, stage > 0 ? stage - 1 : p->pp - 1) / 2;
	s->send_bytes = t->pp_bytes / 2;
	/* the rank blocks in its exchanges as the cost's pp_block_s counts them */
	s->p2p_blocking = p->pp > 1 && sched->p2p_exchange ? sc->system->pp_p2p_blocking : 0;
	s->dp_s = t->dp_s;
	s->dp_bytes = t->dp_bytes;
	s->dp_hide_s = pp_schedule_dp_hide_s(sc->system, p, t->dp_s, t->dp_gather_s,
	                                     t->fwd_compute_s, t->bwd_compute_s);
	s->optimizer_s = t->optimizer_s;
	s->fwd_flops = t->fwd_flops / nchunks;
	s->bwd_flops = t->bwd_flops / nchunks;
	s->wgrad_flops = t->wgrad_flops / nchunks;
	if (sched->si) {
		rc = si_speedup(sc, t, ws, err);
		s->si_speedup = t->si_speedup;
	}
	if (sched->sim_stage) {
		double scale = 1, pair = 0;
		sched->sim_stage(p, t, &scale, &pair);
		s->fwd_s *= scale;
		s->bwd_s *= scale;
		s->wgrad_s *= scale;
		s->fwd_flops *= scale;
		s->bwd_flops *= scale;
		s->wgrad_flops *= scale;
		if (pair > 0)
			s->si_speedup = pair;
	}
	return rc;
}

pp_status ppi_sim_orders_of(pp_sim *sim, const pp_plan *p, pp_error *err)
{
	/* the chunks the caller names to the simulator: vp (1 unless interleaved) */
	int v = pp_schedule_type_of(p->schedule)->uses_vp ? p->vp : 1;
	/* Task lists given as data for this shape are kept; else the plan's. */
	if (pp_sim_orders_custom(sim, p->pp, p->microbatches, v))
		return PP_OK;
	return pp_sim_orders(sim, p->schedule, p->pp, p->microbatches, v, err);
}

pp_status pp_estimate_simulate(pp_estimate *e, pp_sim *sim, pp_error *err)
{
	const pp_plan *p = &e->plan;
	if (e->time.iteration_s <= 0)
		return ppi_fail(err, "", "estimate",
		                "no time model to simulate (the plan was not timed)");
	pp_work *ws = ppi_malloc(sizeof *ws);
	pp_sim_stage *st = ppi_calloc((size_t)p->pp, sizeof *st);
	if (!ws || !st) {
		free(ws);
		free(st);
		ppi_fail(err, "", "sim", "out of memory");
		return PP_ENOMEM;
	}
	pp_work_init(ws);
	pp_scenario sc;
	ppi_scenario_init(&sc, &e->model, &e->system, &e->job, p, e->gpus);
	pp_status rc = PP_OK;
	for (int i = 0; i < p->pp && !rc; i++) {
		pp_stage_time t;
		rc = ppi_sim_stage_of(&sc, i, ws, &t, &st[i], err);
	}
	if (!rc)
		rc = ppi_sim_orders_of(sim, p, err);
	if (!rc)
		rc = pp_sim_run(sim, st, e->time.other_s, &e->sim, err);
	e->simulated = rc == PP_OK;
	free(ws);
	free(st);
	return rc;
}

pp_status pp_estimate_simulate_file(pp_estimate *e, const char *schedule_file, pp_sim **out,
                                    pp_error *err)
{
	pp_sim *sim = NULL;
	*out = NULL;
	pp_error_clear(err);
	pp_status st = pp_sim_new(&sim, err);
	if (!st && schedule_file) {
		const pp_plan *p = &e->plan;
		int v = pp_schedule_type_of(p->schedule)->uses_vp ? p->vp : 1;
		st = pp_sim_orders_load(sim, schedule_file, p->pp, p->microbatches, v, err);
	}
	if (!st)
		st = pp_estimate_simulate(e, sim, err);
	if (st) {
		pp_sim_free(sim);
		/* the task lists of the file are what failed (a deadlock): name it */
		if (schedule_file && !err->source[0])
			snprintf(err->source, sizeof err->source, "%s", schedule_file);
		return st;
	}
	*out = sim;
	return PP_OK;
}
