/*
 * Sweep: one plan estimated at every point of one axis (seed 000 §6).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/shard.h"
#include "paraplan/sweep.h"
#include "util/util.h"

const char *pp_sweep_axis_name(pp_sweep_axis a)
{
	switch (a) {
	case PP_SWEEP_GPUS: return "gpus";
	case PP_SWEEP_DP: return "dp";
	case PP_SWEEP_MBS: return "mbs";
	}
	return "?";
}

pp_status pp_sweep_axis_parse(const char *s, const char *field, pp_sweep_axis *out, pp_error *err)
{
	static const pp_sweep_axis all[] = {PP_SWEEP_GPUS, PP_SWEEP_DP, PP_SWEEP_MBS};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (ppi_streq(s, pp_sweep_axis_name(all[i]))) {
			*out = all[i];
			return PP_OK;
		}
	return ppi_fail(err, "", field, "expected gpus, dp or mbs, got '%s'", s);
}

/* A whole number at *p, advancing *p past it; false when there is none. */
static bool read_ll(const char **p, long long *v)
{
	char *end;
	if (**p < '0' || **p > '9')
		return false;
	errno = 0;
	*v = strtoll(*p, &end, 10);
	if (errno)
		return false;
	*p = end;
	return true;
}

pp_status pp_sweep_parse_values(const char *s, const char *field, long long max_value,
                                long long *out, size_t cap, size_t *n, pp_error *err)
{
	const char *p = s;
	size_t k = 0;
	if (cap > PP_SWEEP_MAX_POINTS)
		cap = PP_SWEEP_MAX_POINTS;
	*n = 0;
	for (;;) {
		long long a, b, step = 1;
		const char *item = p;
		if (!read_ll(&p, &a))
			return ppi_fail(
			    err, "", field,
			    "expected a list such as 1,2,4 or a range A:B[:STEP], got '%s'", s);
		b = a;
		if (*p == ':') {
			p++;
			if (!read_ll(&p, &b))
				return ppi_fail(err, "", field,
				                "expected a range A:B[:STEP] at '%s'", item);
			if (*p == ':') {
				p++;
				if (!read_ll(&p, &step) || step < 1)
					return ppi_fail(
					    err, "", field,
					    "expected a positive STEP in A:B:STEP at '%s'", item);
			}
			if (b < a)
				return ppi_fail(err, "", field,
				                "range %lld:%lld is empty (A must not exceed B)", a,
				                b);
		}
		if (*p && *p != ',')
			return ppi_fail(
			    err, "", field,
			    "expected a list such as 1,2,4 or a range A:B[:STEP], got '%s'", s);
		if (a < 1 || b > max_value)
			return ppi_fail(err, "", field, "values must lie in 1..%lld, got '%.*s'",
			                max_value, (int)(p - item), item);
		for (long long v = a; v <= b; v += step) {
			if (k >= cap)
				return ppi_fail(err, "", field, "at most %zu points, got more",
				                cap);
			out[k++] = v;
			if (b - v < step)
				break;
		}
		if (!*p)
			break;
		p++;
	}
	*n = k;
	return PP_OK;
}

void pp_sweep_opts_init(pp_sweep_opts *o)
{
	memset(o, 0, sizeof *o);
	o->axis = PP_SWEEP_GPUS;
}

pp_sweep *pp_sweep_new(size_t capacity)
{
	if (capacity == 0 || capacity > PP_SWEEP_MAX_POINTS)
		return NULL;
	pp_sweep *sw = ppi_calloc(1, sizeof *sw);
	if (!sw)
		return NULL;
	sw->rows = ppi_calloc(capacity, sizeof *sw->rows);
	if (!sw->rows) {
		free(sw);
		return NULL;
	}
	sw->capacity = capacity;
	sw->baseline = sw->best_time = sw->best_rent = -1;
	return sw;
}

void pp_sweep_free(pp_sweep *sw)
{
	if (!sw)
		return;
	free(sw->rows);
	free(sw);
}

/* Largest GPU count a point may have (pp_plan_resolve's own bound is lower). */
#define SWEEP_MAX_GPUS 100000000LL

/* Fill the plan, GPU count and batch of one point; false (with a reason) when
 * the point cannot even be formed. */
static bool point_setup(const pp_sweep *sw, const pp_sweep_opts *o, long long gpus, long long v,
                        pp_plan *plan, pp_job *job, pp_sweep_row *r)
{
	long long tpc = (long long)plan->tp * plan->pp * plan->cp;
	r->value = v;
	switch (o->axis) {
	case PP_SWEEP_GPUS:
		plan->dp = 0;
		r->gpus = v;
		break;
	case PP_SWEEP_DP:
		if (v > SWEEP_MAX_GPUS / tpc) {
			snprintf(r->reason, sizeof r->reason,
			         "dp: %lld x tp pp cp %lld GPUs is too many", v, tpc);
			return false;
		}
		plan->dp = (int)v;
		r->gpus = tpc * v;
		break;
	case PP_SWEEP_MBS:
		plan->mbs = (int)v;
		r->gpus = gpus > 0 ? gpus : tpc * plan->dp;
		break;
	}
	long long dp = plan->dp > 0 ? plan->dp : (r->gpus % tpc == 0 ? r->gpus / tpc : 0);
	if (o->replica_batch > 0 && dp > 0) {
		if (dp > 1000000000LL / o->replica_batch) {
			snprintf(r->reason, sizeof r->reason,
			         "global batch: %lld x dp %lld sequences is too many",
			         o->replica_batch, dp);
			return false;
		}
		job->global_batch = o->replica_batch * dp;
	}
	r->global_batch = job->global_batch;
	(void)sw;
	return true;
}

pp_status pp_sweep_check(pp_sweep_axis axis, const pp_plan *base, long long gpus, pp_error *err)
{
	bool by_gpus = axis == PP_SWEEP_GPUS || axis == PP_SWEEP_DP;
	const char *clash = by_gpus && gpus                          ? "gpus"
	                    : by_gpus && base->dp                    ? "plan.dp"
	                    : axis == PP_SWEEP_MBS && base->mbs != 1 ? "plan.mbs"
	                                                             : NULL;
	if (clash)
		return ppi_fail(err, "", clash, "the sweep over %s sets it; leave it out",
		                pp_sweep_axis_name(axis));
	if (axis == PP_SWEEP_MBS && gpus <= 0 && base->dp <= 0)
		return ppi_fail(err, "", "gpus",
		                "a micro-batch sweep needs the GPU count or the dp degree");
	return PP_OK;
}

/* The batch and prices of the options, and the TCO inputs (docs/energy.md):
 * a life needs the purchase price it amortises, hosting needs a life (it is
 * a TCO term), each in range. */
static pp_status tco_check(const pp_sweep_opts *o, const pp_job *job, pp_error *err)
{
	if (o->replica_batch < 0 || !(o->usd_per_gpu >= 0))
		return ppi_fail(err, "", "sweep", "negative batch or price");
	if (!(o->life_years >= 0 && o->life_years <= 30))
		return ppi_fail(err, "", "sweep.life_years", "expected 0.1..30 years, got %g",
		                o->life_years);
	if (!(o->hosting_usd_per_kw_month >= 0 && o->hosting_usd_per_kw_month <= 1e4))
		return ppi_fail(err, "", "sweep.hosting_usd_per_kw_month",
		                "expected 0..10000 USD per kW-month, got %g",
		                o->hosting_usd_per_kw_month);
	if (o->life_years > 0 && o->usd_per_gpu <= 0)
		return ppi_fail(err, "", "sweep.life_years",
		                "amortises a purchase: give --usd-per-gpu too");
	if (o->hosting_usd_per_kw_month > 0 && o->life_years <= 0)
		return ppi_fail(err, "", "sweep.hosting_usd_per_kw_month",
		                "is a term of the TCO: give --life-years and --usd-per-gpu too");
	if (o->life_years > 0 && (job->train_tokens <= 0 || job->energy.usd_per_kwh <= 0))
		return ppi_fail(err, "", "sweep.life_years",
		                "the TCO is of the token budget and its power: give --tokens and "
		                "--usd-per-kwh (with --pue) too");
	return PP_OK;
}

/* The base plan's degrees, and the GPU count or dp a micro-batch sweep needs. */
static pp_status base_check(const pp_sweep_opts *opts, const pp_plan *base, long long gpus,
                            pp_error *err)
{
	if (base->tp < 1 || base->pp < 1 || base->cp < 1)
		return ppi_fail(err, "", "plan", "tp, pp and cp must be at least 1");
	if (opts->axis == PP_SWEEP_MBS && gpus <= 0 && base->dp <= 0)
		return ppi_fail(err, "", "gpus",
		                "a micro-batch sweep needs the GPU count or the dp degree");
	return PP_OK;
}

/* Row r's energy from its estimate e, and its TCO when asked (opts). */
static void row_energy(pp_sweep_row *r, const pp_estimate *e, const pp_sweep_opts *opts)
{
	const pp_energy *en = &e->energy;
	r->facility_w = en->facility_w;
	r->it_w = en->it_w;
	r->train_mwh = en->train_mwh;
	r->co2e_kg = en->co2e_kg;
	r->power_usd = en->power_usd;
	if (opts->life_years <= 0 || r->train_days <= 0)
		return;
	r->amortised_usd = r->buy_usd * r->train_days / (opts->life_years * 365.25);
	r->hosting_usd =
	    opts->hosting_usd_per_kw_month * r->it_w / 1e3 * r->train_days / (365.25 / 12);
	r->tco_usd = r->amortised_usd + r->power_usd + r->hosting_usd;
}

/* One point of a sweep: what pp_sweep_run hands pp_shard_run. */
typedef struct sweep_point_ctx {
	const pp_model *m;
	const pp_system *s;
	const pp_job *job;
	const pp_plan *base;
	long long gpus;
	const pp_sweep_opts *opts;
	const pp_sweep *out;
	pp_estimate *e; /* scratch */
} sweep_point_ctx;

/* pp_shard_eval_fn: point i of the sweep into `row` (a pp_sweep_row, zeroed):
 * a row with the reason when the plan is invalid; PP_ENOMEM / PP_EINTERNAL
 * stop the sweep. */
static pp_status sweep_point(void *ctxp, size_t i, void *row, pp_error *err)
{
	sweep_point_ctx *c = ctxp;
	const pp_sweep_opts *opts = c->opts;
	pp_estimate *e = c->e;
	pp_sweep_row *r = row;
	pp_plan plan = *c->base;
	pp_job pj = *c->job;
	if (!point_setup(c->out, opts, c->gpus, opts->values[i], &plan, &pj, r))
		return PP_OK;
	r->plan = plan;
	pp_error perr;
	pp_error_clear(&perr);
	pp_status st = pp_estimate_run(c->m, c->s, &pj, &plan, r->gpus, e, &perr);
	if (st == PP_EINPUT) {
		pp_error_format(&perr, r->reason, sizeof r->reason);
		return PP_OK;
	}
	if (st) {
		if (err)
			*err = perr;
		return st;
	}
	r->ok = true;
	r->plan = e->plan;
	r->fits = e->fits;
	r->peak_bytes = e->memory.total_bytes;
	r->capacity_bytes = e->capacity_bytes;
	r->time = e->time;
	r->iteration_s = e->time.iteration_s;
	r->tokens_per_s = e->tokens_per_s;
	r->mfu = e->mfu;
	r->train_days = e->train_days;
	r->gpu_hours = e->gpu_hours;
	r->rent_usd = e->cost_usd;
	r->buy_usd = (double)r->gpus * opts->usd_per_gpu;
	row_energy(r, e, opts);
	if (opts->goodput && e->fits && e->train_tokens > 0) {
		st = pp_estimate_goodput(e, opts->goodput, &perr);
		if (st) {
			if (err)
				*err = perr;
			return st;
		}
		r->has_goodput = true;
		r->goodput = e->goodput.goodput;
		r->goodput_days = e->goodput.effective_days;
		r->goodput_usd = e->goodput.cost_usd;
	}
	return PP_OK;
}

pp_status pp_sweep_run(const pp_model *m, const pp_system *s, const pp_job *job,
                       const pp_plan *base, long long gpus, const pp_sweep_opts *opts,
                       pp_sweep *out, pp_error *err)
{
	if (!opts->values || opts->nvalues == 0)
		return ppi_fail(err, "", "sweep.values", "no points to sweep");
	if (opts->nvalues > out->capacity)
		return ppi_fail(err, "", "sweep.values", "%zu points, room for %zu", opts->nvalues,
		                out->capacity);
	for (size_t i = 0; i < opts->nvalues; i++)
		if (opts->values[i] < 1 ||
		    (opts->axis == PP_SWEEP_MBS && opts->values[i] > (1 << 20)) ||
		    opts->values[i] > SWEEP_MAX_GPUS)
			return ppi_fail(err, "", "sweep.values", "point %zu is %lld, out of range",
			                i, opts->values[i]);
	PPI_TRY(tco_check(opts, job, err));
	PPI_TRY(base_check(opts, base, gpus, err));

	pp_sweep_row *rows = out->rows;
	size_t capacity = out->capacity;
	memset(out, 0, sizeof *out);
	out->rows = rows;
	out->capacity = capacity;
	out->model = *m;
	out->system = *s;
	out->job = *job;
	out->base = *base;
	out->axis = opts->axis;
	out->replica_batch = opts->replica_batch;
	out->usd_per_gpu_hour = s->usd_per_gpu_hour;
	out->usd_per_gpu = opts->usd_per_gpu;
	out->life_years = opts->life_years;
	out->hosting_usd_per_kw_month = opts->hosting_usd_per_kw_month;
	out->baseline = out->best_time = out->best_rent = -1;

	pp_estimate *e = ppi_malloc(sizeof *e);
	if (!e)
		return PP_ENOMEM;
	sweep_point_ctx ctx = {m, s, job, base, gpus, opts, out, e};
	pp_shard st = {.npoints = opts->nvalues,
	               .row_bytes = sizeof *rows,
	               .rows = rows,
	               .eval = sweep_point,
	               .ctx = &ctx,
	               .checkpoint = opts->checkpoint,
	               .args_hash = opts->args_hash,
	               .comm = opts->comm,
	               .progress = opts->progress,
	               .progress_ctx = opts->progress_ctx};
	pp_status rc = pp_shard_run(&st, err);
	free(e);
	if (rc)
		return rc;
	out->nrows = opts->nvalues;
	out->resumed = st.resumed;
	out->evaluated = st.evaluated;
	if (!pp_shard_comm_root(opts->comm))
		return PP_OK; /* the rows are the root's */

	/* Scaling against the baseline, and the best rows. */
	double best_gpu_s_per_token = 0;
	for (size_t i = 0; i < out->nrows; i++) {
		pp_sweep_row *r = &rows[i];
		if (!r->ok)
			continue;
		if (out->baseline < 0)
			out->baseline = (ptrdiff_t)i;
		const pp_sweep_row *b = &rows[out->baseline];
		r->speedup = b->tokens_per_s > 0 ? r->tokens_per_s / b->tokens_per_s : 0;
		r->ideal_speedup = (double)r->gpus / (double)b->gpus;
		r->scaling_eff = r->speedup / r->ideal_speedup;
		if (!r->fits || r->tokens_per_s <= 0)
			continue;
		if (out->best_time < 0 || r->tokens_per_s > rows[out->best_time].tokens_per_s)
			out->best_time = (ptrdiff_t)i;
		double gpu_s = (double)r->gpus / r->tokens_per_s;
		if (out->best_rent < 0 || gpu_s < best_gpu_s_per_token) {
			out->best_rent = (ptrdiff_t)i;
			best_gpu_s_per_token = gpu_s;
		}
	}
	return PP_OK;
}
