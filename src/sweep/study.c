/*
 * Hardware studies (include/paraplan/study.h): a Cartesian grid of hardware
 * values x models x GPU counts, each point one system evaluated on its own.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/inputs.h"
#include "paraplan/search_parse.h"
#include "paraplan/study.h"
#include "util/util.h"

void pp_study_spec_init(pp_study_spec *sp)
{
	memset(sp, 0, sizeof *sp);
}

/* The fields of "a+b+c" (text up to '=') into ax. */
static pp_status axis_fields(const char *text, size_t len, const char *flag, pp_study_axis *ax,
                             pp_error *err)
{
	if (len == 0 || len >= sizeof ax->name)
		return ppi_fail(err, "", flag, "expected FIELD=VALUES, got '%s'", text);
	memcpy(ax->name, text, len);
	ax->name[len] = '\0';
	char name[sizeof ax->name];
	ppi_strlcpy(name, ax->name, sizeof name);
	ax->nfields = 0;
	for (char *save = NULL, *f = strtok_r(name, "+", &save); f;
	     f = strtok_r(NULL, "+", &save)) {
		const pp_hw_field *h = pp_hw_field_find(f);
		if (!h)
			return ppi_fail(
			    err, "", flag,
			    "unknown hardware field '%s' (the hardware rows of 'paraplan "
			    "list params')",
			    f);
		if (ax->nfields == PP_STUDY_MAX_LINKED)
			return ppi_fail(err, "", flag, "at most %d fields share one axis",
			                PP_STUDY_MAX_LINKED);
		ax->fields[ax->nfields++] = h;
	}
	if (ax->nfields == 0)
		return ppi_fail(err, "", flag, "expected FIELD=VALUES, got '%s'", text);
	return PP_OK;
}

/* A number at *p (strtod's form, finite), advancing *p past it. */
static bool read_num(const char **p, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(*p, &end);
	if (end == *p || errno || !isfinite(*v))
		return false;
	*p = end;
	return true;
}

/* v is a value every field of `ax` accepts; else the refusal. */
static pp_status value_check(const pp_study_axis *ax, double v, const char *flag, pp_error *err)
{
	for (size_t k = 0; k < ax->nfields; k++) {
		const pp_hw_field *h = ax->fields[k];
		if (v < h->valid_lo || v > h->valid_hi)
			return ppi_fail(err, "", flag, "%s: %g is outside %g..%g %s", h->name, v,
			                h->valid_lo, h->valid_hi, h->unit);
		if (h->integer && v != floor(v))
			return ppi_fail(err, "", flag, "%s: expected a whole number, got %g",
			                h->name, v);
	}
	return PP_OK;
}

pp_status pp_study_axis_parse(const char *text, const char *flag, pp_study_axis *ax, pp_error *err)
{
	const char *eq = strchr(text, '=');
	if (!eq)
		return ppi_fail(err, "", flag, "expected FIELD=VALUES, got '%s'", text);
	PPI_TRY(axis_fields(text, (size_t)(eq - text), flag, ax, err));
	const char *p = eq + 1;
	ax->n = 0;
	if (!*p)
		return ppi_fail(err, "", flag, "%s: the list of values is empty", ax->name);
	for (;;) {
		double a, b = 0, step = 0;
		bool range = false;
		if (!read_num(&p, &a))
			return ppi_fail(
			    err, "", flag,
			    "%s: expected numbers such as 80e9,141e9 or a range A:B:STEP, "
			    "got '%s'",
			    ax->name, eq + 1);
		if (*p == ':') {
			p++;
			range = true;
			if (!read_num(&p, &b) || *p != ':' || (p++, !read_num(&p, &step)) ||
			    !(step > 0) || b < a)
				return ppi_fail(
				    err, "", flag,
				    "%s: expected a range A:B:STEP with A <= B and STEP > "
				    "0, got '%s'",
				    ax->name, eq + 1);
		}
		/* A + k STEP up to B (a relative 1e-9 of slack for B itself). */
		double count = range ? floor((b - a) / step + 1e-9) + 1 : 1;
		if (count > (double)(PP_STUDY_MAX_VALUES - ax->n))
			return ppi_fail(err, "", flag, "%s: more than %d values", ax->name,
			                PP_STUDY_MAX_VALUES);
		for (size_t k = 0; k < (size_t)count; k++) {
			double v = a + (double)k * step;
			PPI_TRY(value_check(ax, v, flag, err));
			ax->values[ax->n++] = v;
		}
		if (*p == '\0')
			return PP_OK;
		if (*p != ',')
			return ppi_fail(err, "", flag, "%s: unexpected '%s' in '%s'", ax->name, p,
			                eq + 1);
		p++;
	}
}

pp_status pp_study_axis_add(pp_study_axis *axes, size_t *n, const char *text, const char *flag,
                            pp_error *err)
{
	if (*n == PP_STUDY_MAX_AXES)
		return ppi_fail(err, "", flag, "at most %d axes", PP_STUDY_MAX_AXES);
	PPI_TRY(pp_study_axis_parse(text, flag, &axes[*n], err));
	++*n;
	return PP_OK;
}

size_t pp_study_size(const pp_study_spec *sp)
{
	size_t n = sp->nmodels;
	if (n && sp->ngpus > SIZE_MAX / n)
		return SIZE_MAX;
	n *= sp->ngpus;
	for (size_t a = 0; a < sp->naxes; a++) {
		if (n && sp->axes[a].n > SIZE_MAX / n)
			return SIZE_MAX;
		n *= sp->axes[a].n;
	}
	return n;
}

pp_status pp_study_check(const pp_study_spec *sp, size_t max_points, const char *flag,
                         pp_error *err)
{
	for (size_t m = 0; sp->search && m < sp->nmodels; m++)
		PPI_TRY(pp_search_space_check(sp->space, &sp->models[m], err));
	size_t n = pp_study_size(sp);
	if (max_points == 0)
		max_points = PP_STUDY_POINTS_DEFAULT_MAX;
	if (max_points > PP_STUDY_POINTS_HARD_MAX)
		max_points = PP_STUDY_POINTS_HARD_MAX;
	if (n == 0)
		return ppi_fail(err, "", flag, "the study has no points");
	if (n > max_points) {
		if (n == SIZE_MAX)
			return ppi_fail(err, "", flag, "the study's points overflow a count");
		return ppi_fail(err, "", flag,
		                "the study has %zu points, more than %zu: narrow the axes, or give "
		                "--max-points N (at most %d)",
		                n, max_points, PP_STUDY_POINTS_HARD_MAX);
	}
	return PP_OK;
}

struct pp_study_ws {
	pp_sweep *sw; /* one point of one plan (pp_sweep_run) */
};

pp_study_ws *pp_study_ws_new(void)
{
	pp_study_ws *ws = ppi_calloc(1, sizeof *ws);
	if (ws && !(ws->sw = pp_sweep_new(1))) {
		free(ws);
		ws = NULL;
	}
	return ws;
}

void pp_study_ws_free(pp_study_ws *ws)
{
	if (ws) {
		pp_sweep_free(ws->sw);
		free(ws);
	}
}

const char *pp_study_plan_text(const pp_plan *p, char *buf, size_t n)
{
	snprintf(buf, n, "tp %d tp2 %d%s pp %d dp %d cp %d vp %d mbs %d z%d %s %s %s", p->tp,
	         p->tp2, p->summa ? " summa" : "", p->pp, p->dp, p->cp, p->vp, p->mbs, p->zero,
	         pp_recompute_name(p->recompute), p->sp ? "sp" : "nosp",
	         pp_schedule_name(p->schedule));
	return buf;
}

/* The largest overhead of a time breakdown: what holds the fastest plan back. */
static const char *largest_overhead(const pp_study_row *r)
{
	const char *name[] = {"bubble", "tp", "pp", "dp"};
	double t[] = {r->bubble_s, r->tp_s, r->pp_s, r->dp_s}, best = 0;
	const char *w = "compute";
	for (size_t k = 0; k < 4; k++)
		if (t[k] > best) {
			best = t[k];
			w = name[k];
		}
	return w;
}

/* One plan at the point: the sweep's gpus axis with one value. */
static pp_status point_plan(const pp_study_spec *sp, const pp_model *m, const pp_system *s,
                            pp_study_ws *ws, pp_study_row *r, pp_error *err)
{
	pp_sweep_opts o;
	pp_sweep_opts_init(&o);
	o.values = &r->gpus;
	o.nvalues = 1;
	pp_plan base = *sp->plan;
	base.dp = 0;
	PPI_TRY(pp_sweep_run(m, s, sp->job, &base, 0, &o, ws->sw, err));
	const pp_sweep_row *w = &ws->sw->rows[0];
	if (!w->ok) {
		ppi_strlcpy(r->reason, w->reason, sizeof r->reason);
		ppi_strlcpy(r->binding, "divisibility", sizeof r->binding);
		return PP_OK;
	}
	r->plan = w->plan;
	r->iteration_s = w->iteration_s;
	r->tokens_per_s = w->tokens_per_s;
	r->mfu = w->mfu;
	r->compute_s = w->time.compute_s;
	r->tp_s = w->time.tp_s + w->time.cp_s + w->time.ep_s;
	r->pp_s = w->time.pp_s;
	r->bubble_s = w->time.bubble_s;
	r->dp_s = w->time.dp_s + w->time.zero3_s;
	r->train_days = w->train_days;
	r->gpu_hours = w->gpu_hours;
	r->cost_usd = w->rent_usd;
	r->peak_bytes = w->peak_bytes;
	r->capacity_bytes = w->capacity_bytes;
	r->headroom_bytes = w->capacity_bytes - w->peak_bytes;
	r->ok = w->fits;
	if (!w->fits) {
		snprintf(r->reason, sizeof r->reason, "needs %.2f GiB of %.2f GiB HBM",
		         w->peak_bytes / 1073741824.0, w->capacity_bytes / 1073741824.0);
		ppi_strlcpy(r->binding, "memory", sizeof r->binding);
	} else {
		ppi_strlcpy(r->binding, largest_overhead(r), sizeof r->binding);
	}
	return PP_OK;
}

/* The best plan of `s` (top 1): *best_s its iteration time (0 when no plan
 * fits), *row its row when one does, *plans the plans evaluated.  An input
 * the search refuses (no plan can be formed on this GPU count) is *why. */
static pp_status search_best(const pp_study_spec *sp, const pp_model *m, const pp_system *s,
                             long long gpus, pp_search_row *row, double *best_s, long long *plans,
                             pp_error *why, pp_error *err)
{
	pp_search_options o = *sp->opts;
	o.top_k = 1;
	pp_search *srch = NULL;
	*best_s = 0;
	pp_status st = pp_search_new(m, s, sp->job, gpus, sp->space, &o, &srch, why);
	if (st == PP_EINPUT)
		return PP_OK;
	if (st) {
		*err = *why;
		return st;
	}
	while (!st && !pp_search_done(srch))
		st = pp_search_iterate(srch, err);
	if (!st && pp_search_count(srch) > 0 && !(st = pp_search_row_get(srch, 0, row, err)))
		*best_s = row->iteration_s;
	pp_search_stats stats;
	pp_search_get_stats(srch, &stats);
	*plans += stats.evaluated;
	pp_search_free(srch);
	return st;
}

/* The best plan at the point, and whether memory stops a faster one (the
 * same search with HBM of the readers' largest valid size, no headroom). */
static pp_status point_search(const pp_study_spec *sp, const pp_model *m, const pp_system *s,
                              pp_study_row *r, pp_error *err)
{
	pp_search_row w;
	pp_error why;
	pp_error_clear(&why);
	double best;
	PPI_TRY(search_best(sp, m, s, r->gpus, &w, &best, &r->plans, &why, err));
	if (why.text[0]) {
		pp_error_format(&why, r->reason, sizeof r->reason);
		ppi_strlcpy(r->binding, "gpus", sizeof r->binding);
		return PP_OK;
	}
	pp_system big = *s;
	big.gpu.memory_bytes = pp_hw_field_find("gpu.memory_bytes")->valid_hi;
	pp_search_space space = *sp->space;
	space.headroom_fraction = 0;
	pp_study_spec relaxed = *sp;
	relaxed.space = &space;
	pp_search_row u;
	PPI_TRY(search_best(&relaxed, m, &big, r->gpus, &u, &r->unbound_iteration_s, &r->plans,
	                    &why, err));
	bool memory =
	    r->unbound_iteration_s > 0 && (best == 0 || r->unbound_iteration_s < best * (1 - 1e-9));
	if (best == 0) {
		snprintf(r->reason, sizeof r->reason, "no plan fits in %.2f GiB HBM",
		         s->gpu.memory_bytes / 1073741824.0);
		ppi_strlcpy(r->binding, memory ? "memory" : "gpus", sizeof r->binding);
		return PP_OK;
	}
	r->ok = true;
	r->plan = w.plan;
	r->iteration_s = w.iteration_s;
	r->tokens_per_s = w.tokens_per_s;
	r->mfu = w.mfu;
	r->compute_s = w.compute_s;
	r->tp_s = w.tp_s;
	r->pp_s = w.pp_s;
	r->bubble_s = w.bubble_s;
	r->dp_s = w.dp_s;
	r->train_days = w.train_days;
	r->gpu_hours = w.train_days * 24 * (double)r->gpus;
	r->cost_usd = w.cost_usd;
	r->peak_bytes = w.total_bytes;
	r->capacity_bytes = s->gpu.memory_bytes;
	r->headroom_bytes = w.headroom_bytes;
	ppi_strlcpy(r->binding, memory ? "memory" : largest_overhead(r), sizeof r->binding);
	return PP_OK;
}

pp_status pp_study_point(const pp_study_spec *sp, size_t i, pp_study_ws *ws, pp_study_row *r,
                         pp_error *err)
{
	memset(r, 0, sizeof *r);
	r->index = i;
	/* Innermost first: GPU counts, the axes last to first, models. */
	size_t rest = i;
	r->gpus = sp->gpus[rest % sp->ngpus];
	rest /= sp->ngpus;
	pp_system s = *sp->system;
	for (size_t a = sp->naxes; a-- > 0;) {
		const pp_study_axis *ax = &sp->axes[a];
		r->values[a] = ax->values[rest % ax->n];
		rest /= ax->n;
		for (size_t k = 0; k < ax->nfields; k++)
			pp_hw_field_set(ax->fields[k], &s, r->values[a]);
	}
	r->model = rest;
	const pp_model *m = &sp->models[rest];
	pp_error perr;
	pp_error_clear(&perr);
	pp_status st = pp_system_check(&s, &perr);
	if (!st)
		st = pp_system_compute_model(&s, &perr);
	if (st == PP_EINPUT) {
		pp_error_format(&perr, r->reason, sizeof r->reason);
		ppi_strlcpy(r->binding, "system", sizeof r->binding);
		return PP_OK;
	}
	if (st) {
		*err = perr;
		return st;
	}
	return sp->search ? point_search(sp, m, &s, r, err) : point_plan(sp, m, &s, ws, r, err);
}

/* pp_shard_eval_fn: point i of the study (pp_study_point with this rank's
 * workspace). */
typedef struct study_eval_ctx {
	const pp_study_spec *sp;
	pp_study_ws *ws;
} study_eval_ctx;

static pp_status study_eval(void *ctx, size_t i, void *row, pp_error *err)
{
	const study_eval_ctx *c = ctx;
	return pp_study_point(c->sp, i, c->ws, row, err);
}

pp_status pp_study_run(const pp_study_spec *sp, pp_study_row *rows, pp_shard *exec, pp_error *err)
{
	size_t n = pp_study_size(sp);
	if (n == 0 || n > PP_STUDY_POINTS_HARD_MAX)
		return ppi_fail(err, "", "study", "%zu points", n);
	study_eval_ctx c = {.sp = sp, .ws = pp_study_ws_new()};
	if (!c.ws)
		return ppi_oom(err);
	pp_shard plain = {0}; /* one process, no checkpoint */
	pp_shard *sh = exec ? exec : &plain;
	sh->npoints = n;
	sh->row_bytes = sizeof *rows;
	sh->rows = rows;
	sh->eval = study_eval;
	sh->ctx = &c;
	pp_status st = pp_shard_run(sh, err);
	pp_study_ws_free(c.ws);
	return st;
}

void pp_study_request_init(pp_study_request *rq)
{
	memset(rq, 0, sizeof *rq);
	pp_search_space_init(&rq->space);
	pp_search_options_init(&rq->opts);
	rq->nmodels = 1;
}

pp_status pp_study_plan_flag(pp_study_request *rq, const char *flag, const char *value, bool *taken,
                             pp_error *err)
{
	char f[64];
	snprintf(f, sizeof f, "--%s", flag);
	bool known;
	*taken = false;
	PPI_TRY(pp_search_space_set(&rq->space, flag, f, value, &known, err));
	if (known && strpbrk(value, ",:")) {
		rq->listed = flag;
		*taken = true;
	}
	return PP_OK;
}

pp_status pp_study_request_check(pp_study_request *rq, const char *model_ref, bool inverse,
                                 bool svg, const char *format, const char *over, long long gpus,
                                 pp_error *err)
{
	rq->study = rq->naxes || rq->search || (model_ref && strchr(model_ref, ','));
	if (!rq->study && !rq->listed)
		return PP_OK;
	if (rq->listed && !rq->search)
		return ppi_fail(err, "", "sweep", "--%s takes a list only with --search",
		                rq->listed);
	if (inverse || svg)
		return ppi_fail(
		    err, "", "sweep", "a study (--vary, --search, --model A,B) takes no %s",
		    inverse ? "--deadline-days or --budget-usd" : "--svg (use --html FILE)");
	if (format && strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json"))
		return ppi_fail(err, "", "sweep",
		                "a study is written as text, --csv or --json (and --html FILE), "
		                "not --format %s",
		                format);
	if (over && strcmp(over, "gpus") != 0)
		return ppi_fail(err, "", "sweep", "a study takes --over gpus only, not --over %s",
		                over);
	if (!over && gpus <= 0)
		return ppi_fail(err, "", "sweep",
		                "a study needs --gpus N or --over gpus --values LIST");
	return PP_OK;
}

pp_study_spec *pp_study_request_spec(pp_study_request *rq, const pp_system *s, const pp_job *job,
                                     const pp_plan *plan, const long long *gpus, size_t ngpus)
{
	rq->space.base = *plan;
	ngpus = ngpus ? ngpus : 1;
	rq->spec =
	    (pp_study_spec){rq->models, rq->nmodels, s,         job,        plan,       gpus,
	                    ngpus,      rq->axes,    rq->naxes, rq->search, &rq->space, &rq->opts};
	return &rq->spec;
}

pp_status pp_study_models(pp_study_request *rq, const char *list, const char *flag, char *first,
                          size_t n, pp_error *err)
{
	rq->nmodels = 1;
	snprintf(first, n, "%.*s", list ? (int)strcspn(list, ",") : 0, list ? list : "");
	if (!list || !strchr(list, ','))
		return PP_OK;
	rq->nmodels = 0;
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");
		char ref[1024];
		if (len == 0)
			return ppi_fail(err, "", flag, "an empty model name in '%s'", list);
		if (len >= sizeof ref || rq->nmodels == PP_STUDY_MAX_MODELS)
			return ppi_fail(err, "", flag,
			                "at most %d models of at most %zu characters",
			                PP_STUDY_MAX_MODELS, sizeof ref - 1);
		memcpy(ref, p, len);
		ref[len] = '\0';
		PPI_TRY(pp_model_resolve(ref, &rq->models[rq->nmodels++], err));
		p += len;
		if (!*p)
			return PP_OK;
	}
}

pp_status pp_study_rows_new(const pp_study_request *rq, const pp_study_spec *sp,
                            pp_study_row **rows, pp_error *err)
{
	*rows = NULL;
	PPI_TRY(pp_study_check(sp, (size_t)rq->max_points, "--max-points", err));
	*rows = ppi_calloc(pp_study_size(sp), sizeof **rows);
	return *rows ? PP_OK : ppi_oom(err);
}
