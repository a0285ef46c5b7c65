/*
 * Cross-validation, leave one source out (calibrate --cross-validate source).
 *
 * Every GPU's parameters are fitted on its records (in-sample), then, for each
 * source in turn, refitted without that source's records and used to predict
 * them (out of sample).  A GPU's fit holds the records of the GPU on the
 * same silicon too (pp_fit_sibling, pp_fit_new); one whose silicon's records
 * all come from the held-out source takes the one set fitted without it, and
 * with none of that either the neutral start, said in the record.  The absolute errors are summed per source, GPU, stack (the
 * framework the record runs under), dense/MoE and scale.  The CLI prints.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/calib.h"
#include "util/util.h"

static const char *const dim_names[PP_CV_DIMS] = {"source", "gpu", "stack", "dense/moe", "scale"};

const char *pp_cv_dim_name(int dim)
{
	return dim >= 0 && dim < PP_CV_DIMS ? dim_names[dim] : "?";
}

/* The state of one fit while cross-validating. */
typedef struct cv_work {
	pp_fit *f[PP_CV_FITS_MAX];
	double *held[PP_CV_FITS_MAX]; /* parameters of the current held-out fit */
	bool held_ok[PP_CV_FITS_MAX]; /* the current held-out fit had records to fit */
	double *start;                /* the registry's neutral start */
	bool *ex;                     /* records of a fit held out */
	/* The one set over every GPU's records (the presets' fallback for a
	 * value a GPU's records do not pin: gpu_efficiency of
	 * data/framework/megatron.json); NULL when the fits are not per GPU. */
	pp_fit *pool;
	double *pool_x; /* its values, in sample or without the held-out source */
	bool pool_ok;   /* pool_x holds a fit (some record left to fit on) */
	bool *pool_ex;  /* the pool's records held out */
} cv_work;

static void run_fit(pp_fit *f)
{
	pp_fit_converge(f, NULL);
}

static const char *record_key(const pp_cv_record *r, int dim)
{
	switch (dim) {
	case PP_CV_SOURCE: return r->source;
	case PP_CV_GPU: return r->gpu;
	case PP_CV_STACK: return r->stack;
	case PP_CV_KIND: return r->moe ? "moe" : "dense";
	default: return pp_validate_scale_name(pp_validate_scale(r->gpus));
	}
}

static void group_add(pp_cv_group *g, const pp_cv_record *r)
{
	if (isfinite(r->error_in_sample)) {
		g->sum_in += fabs(r->error_in_sample);
		g->n_in++;
	}
	if (isfinite(r->error_held_out)) {
		g->sum_out += fabs(r->error_held_out);
		g->n_out++;
	}
}

/* Groups of one dimension, in order of first appearance (at most `max`). */
static size_t group_records(const pp_cv_record *rows, size_t n, int dim, pp_cv_group *g, size_t max)
{
	size_t ng = 0;
	for (size_t i = 0; i < n; i++) {
		const char *key = record_key(&rows[i], dim);
		size_t k = 0;
		while (k < ng && strcmp(g[k].key, key) != 0)
			k++;
		if (k == ng) {
			if (ng == max)
				continue;
			memset(&g[ng], 0, sizeof g[ng]);
			g[ng++].key = key;
		}
		group_add(&g[k], &rows[i]);
	}
	return ng;
}

static int fits_find(const pp_cv_result *res, const char *gpu)
{
	for (int i = 0; i < res->nfits; i++)
		if (strcmp(res->fits[i].gpu, gpu) == 0)
			return i;
	return -1;
}

/* Whether one of the fits ("GPU", "GPU:STACK", "*", "*:STACK") takes a record
 * measured on `gpu` under `stack`. */
static bool fits_hold(const pp_cv_result *res, const char *gpu, const char *stack)
{
	for (int i = 0; i < res->nfits; i++) {
		const char *spec = res->fits[i].gpu, *colon = strchr(spec, ':');
		size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
		bool any = len == 1 && spec[0] == '*';
		/* a plain GPU's fit holds its sibling's records (pp_fit_new) */
		const char *sib = colon ? NULL : pp_fit_sibling(spec, NULL);
		if (sib && strcmp(sib, gpu) == 0)
			any = true;
		if (!any && (strlen(gpu) != len || strncmp(spec, gpu, len) != 0))
			continue;
		if (!colon || strcmp(colon + 1, stack) == 0)
			return true;
	}
	return false;
}

/* The one set over every GPU's records, when each fit is one GPU's (the
 * presets' grouping): what a GPU takes for a value its own records do not
 * pin (docs/calibration.md, "Fitted values"). */
static pp_status load_pool(const pp_runs *runs, const char *const *gpus, int ngpus,
                           const pp_cv_result *res, cv_work *w, pp_error *err)
{
	for (int i = 0; i < ngpus; i++)
		if (strchr(gpus[i], ':') || strchr(gpus[i], '*'))
			return PP_OK;
	if (res->nfits == 0)
		return PP_OK;
	pp_status st = pp_fit_new(runs, "*", &w->pool, err);
	if (st)
		return st;
	size_t np = pp_fit_param_count(w->pool), n = pp_fit_records(w->pool);
	if (pp_fit_shared_count(w->pool) != res->fits[0].nshared)
		return ppi_fail(err, "", NULL,
		                "internal: the pooled fit has %zu parameters, not %zu",
		                pp_fit_shared_count(w->pool), res->fits[0].nshared);
	w->pool_x = ppi_calloc(np ? np : 1, sizeof *w->pool_x);
	w->pool_ex = ppi_calloc(n ? n : 1, sizeof *w->pool_ex);
	return w->pool_x && w->pool_ex ? PP_OK : ppi_oom(err);
}

/* The values of `f` in x (its fitted ones) with each parameter its records
 * do not pin filled in (pp_fit_fill_unpinned): a GEMM fraction from the
 * die's other one, any other from the one set, when there is one. */
static void take_unpinned(const cv_work *w, const pp_fit *f, double *x)
{
	pp_fit_fill_unpinned(f, x, w->pool && w->pool_ok ? w->pool_x : NULL);
}

/* The one set fitted without the records of source `src` (all of them
 * when src is NULL); pool_ok false when no record is left to fit. */
static void fit_pool(cv_work *w, const char *src)
{
	w->pool_ok = false;
	if (!w->pool)
		return;
	size_t n = pp_fit_records(w->pool), left = 0;
	for (size_t k = 0; k < n; k++) {
		const pp_run_info *info;
		const pp_system *sys;
		const pp_model *m;
		long long gpus;
		char name[PP_RUN_SOURCE_NAME_MAX];
		pp_fit_case(w->pool, k, &info, &sys, &m, &gpus);
		pp_run_source_name(info->title, name, sizeof name);
		w->pool_ex[k] = src && strcmp(name, src) == 0;
		left += !w->pool_ex[k] && pp_run_measured(info);
	}
	if (left == 0)
		return;
	pp_fit_exclude(w->pool, w->pool_ex);
	run_fit(w->pool);
	pp_fit_get_params(w->pool, w->pool_x);
	w->pool_ok = true;
}

/* The fits loaded, with room for their parameters; the record count. */
static pp_status load_fits(const pp_runs *runs, const char *const *gpus, int ngpus,
                           pp_cv_result *res, cv_work *w, size_t *total, pp_error *err)
{
	*total = 0;
	size_t nstart = 0; /* the most parameters of a fit: w->start's room */
	for (int i = 0; i < ngpus && i < PP_CV_FITS_MAX; i++) {
		/* A GPU whose sibling is already a fit: that fit holds its
		 * records (pp_fit_new), which would otherwise count twice. */
		const char *sib = strchr(gpus[i], ':') ? NULL : pp_fit_sibling(gpus[i], NULL);
		if (sib && fits_find(res, sib) >= 0)
			continue;
		pp_cv_fit *c = &res->fits[res->nfits];
		pp_status st = pp_fit_new(runs, gpus[i], &w->f[res->nfits], err);
		if (st)
			return st;
		c->gpu = gpus[i];
		c->records = pp_fit_records(w->f[res->nfits]);
		c->nparams = pp_fit_param_count(w->f[res->nfits]);
		c->nshared = pp_fit_shared_count(w->f[res->nfits]);
		const char *nets[PP_FIT_NETS_MAX];
		double nic[PP_FIT_NETS_MAX];
		size_t nn = pp_fit_networks(w->f[res->nfits], nets, nic, NULL, PP_FIT_NETS_MAX);
		for (size_t k = 0; k < nn; k++)
			snprintf(c->nets[k], sizeof c->nets[k], "%s", nets[k]);
		if (c->nparams > nstart)
			nstart = c->nparams;
		size_t np = c->nparams ? c->nparams : 1;
		c->params = ppi_calloc(np, sizeof *c->params);
		w->held[res->nfits] = ppi_calloc(np, sizeof *w->held[0]);
		res->nfits++;
		if (!c->params || !w->held[res->nfits - 1])
			return ppi_oom(err);
		*total += c->records;
	}
	w->start = ppi_calloc(nstart ? nstart : 1, sizeof *w->start);
	w->ex = ppi_calloc(*total ? *total : 1, sizeof *w->ex);
	res->records = ppi_calloc(*total ? *total : 1, sizeof *res->records);
	res->skips = ppi_calloc(pp_runs_count(runs) ? pp_runs_count(runs) : 1, sizeof *res->skips);
	for (int d = 0; d < PP_CV_DIMS; d++)
		res->groups[d] = ppi_calloc(*total + 1, sizeof *res->groups[d]);
	for (int d = 0; d < PP_CV_DIMS; d++)
		if (!res->groups[d])
			return ppi_oom(err);
	if (!w->start || !w->ex || !res->records || !res->skips)
		return ppi_oom(err);
	return load_pool(runs, gpus, ngpus, res, w, err);
}

/* The records no fit holds: unreadable ones (the reason pp_run_inputs gives)
 * and those measured on a GPU not asked for. */
static pp_status list_skips(const pp_runs *runs, pp_cv_result *res)
{
	for (size_t i = 0; i < pp_runs_count(runs); i++) {
		pp_inputs in;
		pp_run_info info;
		pp_error err;
		pp_status st = pp_run_read(runs, i, &in, &info, &err);
		const char *why = NULL;
		char text[PP_ERROR_TEXT_MAX];
		if (st == PP_EINPUT) {
			why = err.text;
		} else if (st == PP_OK &&
		           !fits_hold(res, in.system.gpu.name, in.system.framework)) {
			snprintf(text, sizeof text, "GPU %s not asked for (--gpu)",
			         in.system.gpu.name);
			why = text;
		}
		if (why) {
			pp_cv_skip *k = &res->skips[res->nskips++];
			snprintf(k->id, sizeof k->id, "%s", pp_runs_id(runs, i));
			snprintf(k->reason, sizeof k->reason, "%s", why);
		}
	}
	return PP_OK;
}

/* In-sample: each GPU fitted on all its records, one row per record. */
static void fit_in_sample(pp_cv_result *res, cv_work *w)
{
	fit_pool(w, NULL);
	for (int i = 0; i < res->nfits; i++) {
		pp_cv_fit *c = &res->fits[i];
		pp_fit *f = w->f[i];
		run_fit(f);
		pp_fit_get_params(f, c->params);
		take_unpinned(w, f, c->params);
		pp_fit_set_params(f, c->params);
		c->mape_in_sample = pp_fit_mape(f);
		c->at_bound_n = pp_fit_at_bounds(f, c->at_bound, c->at_bound_v, PP_CV_BOUND_MAX);
		for (size_t k = 0; k < c->records; k++) {
			pp_cv_record *r = &res->records[res->nrecords++];
			const pp_run_info *info;
			const pp_system *sys;
			const pp_model *m;
			pp_fit_case(f, k, &info, &sys, &m, &r->gpus);
			snprintf(r->id, sizeof r->id, "%s", info->id);
			pp_run_source_name(info->title, r->source, sizeof r->source);
			/* the record's own GPU: a fit may hold its sibling's */
			snprintf(r->gpu, sizeof r->gpu, "%s", sys->gpu.name);
			snprintf(r->stack, sizeof r->stack, "%s", sys->framework);
			r->moe = m->moe.num_experts > 0;
			r->fit = i;
			r->k = k;
			r->error_in_sample = pp_fit_error(f, k);
			r->error_held_out = NAN;
			snprintf(r->held_out, sizeof r->held_out, "no throughput measurement");
		}
	}
}

/* Every GPU fitted without the records of source `src`. */
static void fit_without(pp_cv_result *res, cv_work *w, const char *src)
{
	fit_pool(w, src);
	for (int i = 0; i < res->nfits; i++) {
		size_t held = 0, left = 0;
		for (size_t r = 0; r < res->nrecords; r++) {
			const pp_cv_record *row = &res->records[r];
			if (row->fit != i)
				continue;
			bool out = strcmp(row->source, src) == 0;
			w->ex[row->k] = out;
			held += out;
			left += !out && isfinite(row->error_in_sample);
		}
		w->held_ok[i] = false;
		if (left == 0)
			continue;
		if (held == 0) {
			/* The fit never saw this source: its in-sample values. */
			memcpy(w->held[i], res->fits[i].params,
			       res->fits[i].nparams * sizeof *w->held[i]);
			w->held_ok[i] = true;
			continue;
		}
		pp_fit_exclude(w->f[i], w->ex);
		run_fit(w->f[i]);
		pp_fit_get_params(w->f[i], w->held[i]);
		take_unpinned(w, w->f[i], w->held[i]);
		w->held_ok[i] = true;
	}
}

/* The records of source `src` predicted by the fits made without it. */
static void predict_source(pp_cv_result *res, cv_work *w, const char *src)
{
	for (size_t r = 0; r < res->nrecords; r++) {
		pp_cv_record *row = &res->records[r];
		if (strcmp(row->source, src) != 0 || !isfinite(row->error_in_sample))
			continue;
		const char *gpu = res->fits[row->fit].gpu;
		pp_fit *f = w->f[row->fit];
		/* A plain GPU's fit holds its sibling's records (pp_fit_new):
		 * the silicon's, named by both. */
		const char *sib = strchr(gpu, ':') ? NULL : pp_fit_sibling(gpu, NULL);
		char name[PP_NAME_MAX];
		snprintf(name, sizeof name, "%s%s%s", gpu, sib ? "+" : "", sib ? sib : "");
		if (w->held_ok[row->fit]) {
			pp_fit_set_params(f, w->held[row->fit]);
			snprintf(row->held_out, sizeof row->held_out,
			         "%s fitted without this source", name);
		} else if (w->pool_ok) {
			/* the one set's shared values; a per-system NIC efficiency
			 * its neutral start (no record outside the source ran there) */
			pp_fit_get_start(f, w->start);
			memcpy(w->start, w->pool_x, pp_fit_shared_count(f) * sizeof *w->start);
			pp_fit_set_params(f, w->start);
			snprintf(row->held_out, sizeof row->held_out,
			         "no %s record outside this source: the one set fitted without it",
			         name);
		} else {
			/* Nothing outside the source to fit on: the registry's
			 * neutral start, which no record has moved. */
			pp_fit_get_start(f, w->start);
			pp_fit_set_params(f, w->start);
			snprintf(row->held_out, sizeof row->held_out,
			         "no %s record outside this source: the neutral start", name);
		}
		row->error_held_out = pp_fit_error(f, row->k);
	}
}

/* The groups of every dimension and the totals. */
static void summarise(pp_cv_result *res)
{
	for (int d = 0; d < PP_CV_DIMS; d++)
		res->ngroups[d] = group_records(res->records, res->nrecords, d, res->groups[d],
		                                res->nrecords + 1);
	memset(&res->all, 0, sizeof res->all);
	res->all.key = "all";
	res->not_predicted = 0;
	for (size_t i = 0; i < res->nrecords; i++) {
		const pp_cv_record *r = &res->records[i];
		group_add(&res->all, r);
		res->not_predicted += isfinite(r->error_in_sample) && !isfinite(r->error_held_out);
	}
}

static void work_free(cv_work *w)
{
	for (int i = 0; i < PP_CV_FITS_MAX; i++) {
		pp_fit_free(w->f[i]);
		free(w->held[i]);
	}
	free(w->start);
	free(w->ex);
	pp_fit_free(w->pool);
	free(w->pool_x);
	free(w->pool_ex);
}

pp_status pp_calib_cross_validate(const pp_runs *runs, const char *const *gpus, int ngpus,
                                  pp_cv_result *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	cv_work w;
	memset(&w, 0, sizeof w);
	size_t total;
	pp_status st = load_fits(runs, gpus, ngpus, out, &w, &total, err);
	if (st == PP_OK)
		st = list_skips(runs, out);
	if (st == PP_OK) {
		fit_in_sample(out, &w);
		for (size_t s = 0; s < out->nrecords; s++) {
			bool first = true;
			for (size_t j = 0; j < s && first; j++)
				first = strcmp(out->records[j].source, out->records[s].source) != 0;
			if (!first)
				continue;
			fit_without(out, &w, out->records[s].source);
			predict_source(out, &w, out->records[s].source);
		}
		summarise(out);
	}
	work_free(&w);
	if (st)
		pp_cv_result_free(out);
	return st;
}

void pp_cv_result_free(pp_cv_result *r)
{
	if (!r)
		return;
	for (int i = 0; i < PP_CV_FITS_MAX; i++)
		free(r->fits[i].params);
	free(r->records);
	free(r->skips);
	for (int d = 0; d < PP_CV_DIMS; d++)
		free(r->groups[d]);
	memset(r, 0, sizeof *r);
}
