/*
 * paraplan calibrate --cross-validate source: leave one source out.
 *
 * Every GPU's parameters are fitted on its records (in-sample), then, for each
 * source in turn, refitted without that source's records and used to predict
 * them (out of sample).  A GPU whose only records come from the held-out
 * source borrows the held-out fit of the GPU on the same silicon
 * (pp_fit_sibling); with none, its records are listed as not predicted, with
 * the reason.  The mean absolute percentage error is reported per source,
 * GPU, stack (the framework the record runs under), dense/MoE and scale, in
 * text or JSON; fitted parameters that sit at a bound of their physical range
 * are flagged.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "paraplan/calib.h"
#include "paraplan/params.h"

#define CV_GPUS 16
#define CV_SOURCE_MAX 96
#define CV_BOUND_MAX 16

typedef struct cv_row {
	char id[PP_RUN_ID_MAX];
	char source[CV_SOURCE_MAX];
	char gpu[PP_NAME_MAX];
	char stack[PP_NAME_MAX];
	bool moe;
	long long gpus;
	int fit;  /* index of its GPU's fit */
	size_t k; /* record index inside that fit */
	double in_err, out_err;
	char how[160]; /* how the out-of-sample prediction was made, or why not */
} cv_row;

typedef struct cv_fit {
	const char *gpu;
	pp_fit *f;
	size_t n;
	double *insample;  /* [np] in-sample parameters */
	double *held;      /* [np] parameters of the current held-out fit */
	bool held_ok;      /* the current held-out fit had records to fit */
	size_t at_bound_n; /* in-sample parameters at a bound */
	const pp_param *at_bound[CV_BOUND_MAX];
	double at_bound_v[CV_BOUND_MAX];
	double mape_in;
} cv_fit;

static void run_fit(pp_fit *f)
{
	do
		pp_fit_iterate(f);
	while (!pp_fit_test(f, 1e-4) && pp_fit_iterations(f) < 30);
}

/* Records of the file that no fit holds, with the reason. */
typedef struct cv_skip {
	char id[PP_RUN_ID_MAX];
	char reason[PP_ERROR_TEXT_MAX];
} cv_skip;

/* The grouping dimensions. */
enum { DIM_SOURCE, DIM_GPU, DIM_STACK, DIM_KIND, DIM_SCALE, DIMS };
static const char *const dim_names[DIMS] = {"source", "gpu", "stack", "dense/moe", "scale"};

static const long long scale_edges[] = {64, 512, 4096, 1LL << 40};
static const char *const scale_names[] = {"<=64 GPUs", "65-512 GPUs", "513-4096 GPUs",
                                          ">4096 GPUs"};

static const char *row_key(const cv_row *r, int dim)
{
	switch (dim) {
	case DIM_SOURCE: return r->source;
	case DIM_GPU: return r->gpu;
	case DIM_STACK: return r->stack;
	case DIM_KIND: return r->moe ? "moe" : "dense";
	default: {
		int b = 0;
		while (b < 3 && r->gpus > scale_edges[b])
			b++;
		return scale_names[b];
	}
	}
}

typedef struct cv_group {
	const char *key;
	size_t n_in, n_out;
	double sum_in, sum_out;
} cv_group;

/* Groups of one dimension, in order of first appearance; returns how many. */
static size_t group_rows(const cv_row *rows, size_t n, int dim, cv_group *g, size_t max)
{
	size_t ng = 0;
	for (size_t i = 0; i < n; i++) {
		const char *key = row_key(&rows[i], dim);
		size_t k = 0;
		while (k < ng && strcmp(g[k].key, key) != 0)
			k++;
		if (k == ng) {
			if (ng == max)
				continue;
			memset(&g[ng], 0, sizeof g[ng]);
			g[ng++].key = key;
		}
		if (isfinite(rows[i].in_err)) {
			g[k].sum_in += fabs(rows[i].in_err);
			g[k].n_in++;
		}
		if (isfinite(rows[i].out_err)) {
			g[k].sum_out += fabs(rows[i].out_err);
			g[k].n_out++;
		}
	}
	return ng;
}

static json_t *mape_json(double sum, size_t n)
{
	return n ? json_real(sum / n) : json_null();
}

static void print_mape(FILE *f, double sum, size_t n)
{
	if (n)
		fprintf(f, "%6.1f%% %4zu", 100 * sum / n, n);
	else
		fprintf(f, "%7s %4s", "-", "0");
}

static void print_text(FILE *f, const char *data, const cv_row *rows, size_t nrows,
                       const cv_fit *fits, int nfits, cv_group *g, size_t gmax,
                       const cv_skip *skips, size_t nskips)
{
	fprintf(f,
	        "paraplan calibrate --cross-validate source: %zu records from %s: %zu fitted, "
	        "%zu skipped\n\n",
	        nrows + nskips, data, nrows, nskips);
	if (nskips) {
		fprintf(f, "skipped:\n");
		for (size_t i = 0; i < nskips; i++)
			fprintf(f, "  %-52s %s\n", skips[i].id, skips[i].reason);
		fputc('\n', f);
	}
	fprintf(f, "in-sample fit per GPU (bounds are the physical ranges of 'paraplan list "
	           "params'):\n");
	for (int i = 0; i < nfits; i++) {
		const cv_fit *c = &fits[i];
		fprintf(f, "  %-10s %3zu records  in-sample MAPE %5.1f%%", c->gpu, c->n,
		        100 * c->mape_in);
		if (c->at_bound_n == 0) {
			fprintf(f, "  no fitted parameter at a bound\n");
			continue;
		}
		fprintf(f, "  AT BOUND:");
		for (size_t k = 0; k < c->at_bound_n && k < CV_BOUND_MAX; k++)
			fprintf(f, " %s=%.3g", c->at_bound[k]->key, c->at_bound_v[k]);
		fputc('\n', f);
	}
	fprintf(f, "\n%-52s %-10s %-16s %9s %9s  %s\n", "id", "gpu", "stack", "in-sample",
	        "held-out", "held-out prediction");
	for (size_t i = 0; i < nrows; i++) {
		const cv_row *r = &rows[i];
		fprintf(f, "%-52s %-10s %-16s ", r->id, r->gpu, r->stack);
		if (isfinite(r->in_err))
			fprintf(f, "%+8.1f%% ", 100 * r->in_err);
		else
			fprintf(f, "%9s ", "-");
		if (isfinite(r->out_err))
			fprintf(f, "%+8.1f%% ", 100 * r->out_err);
		else
			fprintf(f, "%9s ", "-");
		fprintf(f, " %s\n", r->how);
	}
	fprintf(f, "\nMAPE (records)          %-50s %12s %18s\n", "", "in-sample",
	        "leave-source-out");
	for (int d = 0; d < DIMS; d++) {
		size_t ng = group_rows(rows, nrows, d, g, gmax);
		fprintf(f, "by %s:\n", dim_names[d]);
		for (size_t k = 0; k < ng; k++) {
			fprintf(f, "  %-72.72s ", g[k].key);
			print_mape(f, g[k].sum_in, g[k].n_in);
			fprintf(f, "      ");
			print_mape(f, g[k].sum_out, g[k].n_out);
			fputc('\n', f);
		}
	}
	double si = 0, so = 0;
	size_t ni = 0, no = 0, missing = 0;
	for (size_t i = 0; i < nrows; i++) {
		if (isfinite(rows[i].in_err)) {
			si += fabs(rows[i].in_err);
			ni++;
			if (!isfinite(rows[i].out_err))
				missing++;
		}
		if (isfinite(rows[i].out_err)) {
			so += fabs(rows[i].out_err);
			no++;
		}
	}
	fprintf(f,
	        "\nall: in-sample MAPE %.1f%% over %zu records; leave-one-source-out MAPE "
	        "%.1f%% over %zu records",
	        ni ? 100 * si / ni : 0.0, ni, no ? 100 * so / no : 0.0, no);
	if (missing)
		fprintf(f, "; %zu not predicted out of sample (listed above with the reason)",
		        missing);
	fputc('\n', f);
}

static int print_json(FILE *f, const char *data, bool kernel, const cv_row *rows, size_t nrows,
                      const cv_fit *fits, int nfits, cv_group *g, size_t gmax, const cv_skip *skips,
                      size_t nskips)
{
	json_t *root = json_object();
	json_object_set_new(root, "data", json_string(data));
	json_object_set_new(root, "cross_validate", json_string("source"));
	/* Which compute model the fractions belong to: the measured kernel model
	 * (--kernel-model, the stack's fractions of it) or the roofline. */
	json_object_set_new(root, "kernel_model", json_boolean(kernel));
	json_t *sk = json_array();
	for (size_t i = 0; i < nskips; i++)
		json_array_append_new(
		    sk, json_pack("{s:s,s:s}", "id", skips[i].id, "reason", skips[i].reason));
	json_object_set_new(root, "skipped", sk);
	json_t *jf = json_array();
	for (int i = 0; i < nfits; i++) {
		const cv_fit *c = &fits[i];
		json_t *o = json_object();
		json_object_set_new(o, "gpu", json_string(c->gpu));
		json_object_set_new(o, "records", json_integer((json_int_t)c->n));
		json_object_set_new(o, "mape_in_sample", json_real(c->mape_in));
		json_t *params = json_object();
		size_t np = pp_fit_param_count(c->f);
		size_t j = 0;
		for (size_t r = 0; r < pp_param_registry_size() && j < np; r++) {
			const pp_param *p = pp_param_at(r);
			if (!p->fitted)
				continue;
			json_object_set_new(params, p->key, json_real(c->insample[j++]));
		}
		json_object_set_new(o, "parameters", params);
		json_t *ab = json_array();
		for (size_t k = 0; k < c->at_bound_n && k < CV_BOUND_MAX; k++)
			json_array_append_new(ab, json_string(c->at_bound[k]->key));
		json_object_set_new(o, "at_bound", ab);
		json_array_append_new(jf, o);
	}
	json_object_set_new(root, "fits", jf);
	json_t *jr = json_array();
	for (size_t i = 0; i < nrows; i++) {
		const cv_row *r = &rows[i];
		json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "id", r->id, "source", r->source,
		                      "gpu", r->gpu, "stack", r->stack, "kind",
		                      r->moe ? "moe" : "dense", "gpus", (json_int_t)r->gpus);
		json_object_set_new(o, "error_in_sample",
		                    isfinite(r->in_err) ? json_real(r->in_err) : json_null());
		json_object_set_new(o, "error_held_out",
		                    isfinite(r->out_err) ? json_real(r->out_err) : json_null());
		json_object_set_new(o, "held_out", json_string(r->how));
		json_array_append_new(jr, o);
	}
	json_object_set_new(root, "records", jr);
	json_t *by = json_object();
	for (int d = 0; d < DIMS; d++) {
		size_t ng = group_rows(rows, nrows, d, g, gmax);
		json_t *jd = json_object();
		for (size_t k = 0; k < ng; k++) {
			json_t *o = json_object();
			json_object_set_new(o, "mape_in_sample", mape_json(g[k].sum_in, g[k].n_in));
			json_object_set_new(o, "records_in_sample",
			                    json_integer((json_int_t)g[k].n_in));
			json_object_set_new(o, "mape_held_out",
			                    mape_json(g[k].sum_out, g[k].n_out));
			json_object_set_new(o, "records_held_out",
			                    json_integer((json_int_t)g[k].n_out));
			json_object_set_new(jd, g[k].key, o);
		}
		json_object_set_new(by, dim_names[d], jd);
	}
	json_object_set_new(root, "by", by);
	double si = 0, so = 0;
	size_t ni = 0, no = 0;
	for (size_t i = 0; i < nrows; i++) {
		if (isfinite(rows[i].in_err)) {
			si += fabs(rows[i].in_err);
			ni++;
		}
		if (isfinite(rows[i].out_err)) {
			so += fabs(rows[i].out_err);
			no++;
		}
	}
	json_object_set_new(root, "mape_in_sample", mape_json(si, ni));
	json_object_set_new(root, "records_in_sample", json_integer((json_int_t)ni));
	json_object_set_new(root, "mape_held_out", mape_json(so, no));
	json_object_set_new(root, "records_held_out", json_integer((json_int_t)no));
	int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(root);
	return rc;
}

static int fits_find(const cv_fit *fits, int nfits, const char *gpu)
{
	for (int i = 0; i < nfits; i++)
		if (strcmp(fits[i].gpu, gpu) == 0)
			return i;
	return -1;
}

/* Whether one of the fits ("GPU", "GPU:STACK", "*", "*:STACK") takes a record
 * measured on `gpu` under `stack`. */
static bool fits_hold(const cv_fit *fits, int nfits, const char *gpu, const char *stack)
{
	for (int i = 0; i < nfits; i++) {
		const char *spec = fits[i].gpu, *colon = strchr(spec, ':');
		size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
		bool any = len == 1 && spec[0] == '*';
		if (!any && (strlen(gpu) != len || strncmp(spec, gpu, len) != 0))
			continue;
		if (!colon || strcmp(colon + 1, stack) == 0)
			return true;
	}
	return false;
}

int cli_calibrate_cv_source(const pp_runs *runs, const char *data, const char *const *gpus,
                            int ngpus, bool kernel, bool json)
{
	cv_fit fits[CV_GPUS];
	memset(fits, 0, sizeof fits);
	int nfits = 0, rc = EXIT_ANSWERED;
	size_t total = 0;
	pp_error err;
	for (int i = 0; i < ngpus && i < CV_GPUS; i++) {
		cv_fit *c = &fits[nfits];
		pp_status st = pp_fit_new(runs, gpus[i], &c->f, &err);
		if (!st && kernel && (st = pp_fit_kernel_model(c->f, &err))) {
			pp_fit_free(c->f);
			c->f = NULL;
		}
		if (st) {
			rc = cli_fail(st, &err);
			goto done;
		}
		c->gpu = gpus[i];
		c->n = pp_fit_records(c->f);
		size_t np = pp_fit_param_count(c->f);
		c->insample = calloc(np ? np : 1, sizeof *c->insample);
		c->held = calloc(np ? np : 1, sizeof *c->held);
		nfits++;
		if (!c->insample || !c->held) {
			cli_message("out of memory");
			rc = EXIT_INTERNAL;
			goto done;
		}
		total += c->n;
	}
	size_t nrec = pp_runs_count(runs), nskips = 0;
	size_t nstart = nfits ? pp_fit_param_count(fits[0].f) : 0;
	double *start = calloc(nstart ? nstart : 1, sizeof *start);
	if (start && nfits)
		pp_fit_get_start(fits[0].f, start);
	cv_row *rows = calloc(total ? total : 1, sizeof *rows);
	bool *ex = calloc(total ? total : 1, sizeof *ex);
	cv_group *groups = calloc(total + 1, sizeof *groups);
	cv_skip *skips = calloc(nrec ? nrec : 1, sizeof *skips);
	if (!rows || !ex || !groups || !skips || !start) {
		free(start);
		free(rows);
		free(ex);
		free(groups);
		free(skips);
		cli_message("out of memory");
		rc = EXIT_INTERNAL;
		goto done;
	}

	/* The records no fit holds: unreadable ones (the reason pp_run_inputs
	 * gives) and those measured on a GPU not asked for. */
	for (size_t i = 0; i < nrec; i++) {
		pp_model m;
		pp_system s;
		pp_job j;
		pp_plan p;
		long long g;
		pp_run_info info;
		pp_status st = pp_run_inputs(runs, i, &m, &s, &j, &p, &g, &info, &err);
		const char *why = NULL;
		char text[PP_ERROR_TEXT_MAX];
		if (st == PP_EINPUT) {
			why = err.text;
		} else if (st == PP_OK && !fits_hold(fits, nfits, s.gpu.name, s.framework)) {
			snprintf(text, sizeof text, "GPU %s not asked for (--gpu)", s.gpu.name);
			why = text;
		}
		if (why) {
			snprintf(skips[nskips].id, sizeof skips[nskips].id, "%s",
			         pp_runs_id(runs, i));
			snprintf(skips[nskips].reason, sizeof skips[nskips].reason, "%s", why);
			nskips++;
		}
	}

	/* In-sample: each GPU fitted on all its records. */
	size_t nrows = 0;
	for (int i = 0; i < nfits; i++) {
		cv_fit *c = &fits[i];
		run_fit(c->f);
		pp_fit_get_params(c->f, c->insample);
		c->mape_in = pp_fit_mape(c->f);
		c->at_bound_n = pp_fit_at_bounds(c->f, c->at_bound, c->at_bound_v, CV_BOUND_MAX);
		for (size_t k = 0; k < c->n; k++) {
			cv_row *r = &rows[nrows++];
			const pp_run_info *info;
			const pp_system *sys;
			const pp_model *m;
			pp_fit_case(c->f, k, &info, &sys, &m, &r->gpus);
			snprintf(r->id, sizeof r->id, "%s", info->id);
			cli_source_name(info->title, r->source, sizeof r->source);
			snprintf(r->gpu, sizeof r->gpu, "%s", c->gpu);
			snprintf(r->stack, sizeof r->stack, "%s", sys->framework);
			r->moe = m->moe.num_experts > 0;
			r->fit = i;
			r->k = k;
			r->in_err = pp_fit_error(c->f, k);
			r->out_err = NAN;
			snprintf(r->how, sizeof r->how, "no throughput measurement");
		}
	}

	/* Leave one source out. */
	for (size_t s = 0; s < nrows; s++) {
		bool first = true;
		for (size_t j = 0; j < s && first; j++)
			first = strcmp(rows[j].source, rows[s].source) != 0;
		if (!first)
			continue;
		const char *src = rows[s].source;
		/* Fit every GPU without the source's records. */
		for (int i = 0; i < nfits; i++) {
			cv_fit *c = &fits[i];
			size_t held = 0, left = 0;
			for (size_t r = 0; r < nrows; r++) {
				if (rows[r].fit != i)
					continue;
				bool out = strcmp(rows[r].source, src) == 0;
				ex[rows[r].k] = out;
				held += out;
				left += !out && isfinite(rows[r].in_err);
			}
			c->held_ok = false;
			if (left == 0)
				continue;
			if (held == 0) {
				/* The fit never saw this source: its in-sample values. */
				memcpy(c->held, c->insample,
				       pp_fit_param_count(c->f) * sizeof *c->held);
				c->held_ok = true;
				continue;
			}
			pp_fit_exclude(c->f, ex);
			run_fit(c->f);
			pp_fit_get_params(c->f, c->held);
			c->held_ok = true;
		}
		/* Predict the source's records. */
		for (size_t r = 0; r < nrows; r++) {
			cv_row *row = &rows[r];
			if (strcmp(row->source, src) != 0 || !isfinite(row->in_err))
				continue;
			cv_fit *c = &fits[row->fit];
			const char *why = NULL;
			const char *sib = pp_fit_sibling(c->gpu, &why);
			int si = sib ? fits_find(fits, nfits, sib) : -1;
			if (c->held_ok) {
				pp_fit_set_params(c->f, c->held);
				snprintf(row->how, sizeof row->how, "%s fitted without this source",
				         c->gpu);
			} else if (si >= 0 && fits[si].held_ok) {
				pp_fit_set_params(c->f, fits[si].held);
				snprintf(row->how, sizeof row->how,
				         "no %s record outside this source: %s's held-out fit (%s)",
				         c->gpu, sib, why);
			} else {
				/* Nothing outside the source to fit on: the registry's
				 * neutral start, which no record has moved. */
				pp_fit_set_params(c->f, start);
				snprintf(row->how, sizeof row->how,
				         "no %s record outside this source%s: the neutral start",
				         c->gpu, sib ? " nor in its sibling's" : "");
			}
			row->out_err = pp_fit_error(c->f, row->k);
		}
	}

	cli_out out;
	if ((rc = cli_out_open(&out, NULL)) == EXIT_ANSWERED) {
		int wr = 0;
		if (json)
			wr = print_json(out.f, data, kernel, rows, nrows, fits, nfits, groups,
			                total + 1, skips, nskips);
		else
			print_text(out.f, data, rows, nrows, fits, nfits, groups, total + 1, skips,
			           nskips);
		rc = cli_out_close(&out, wr == 0 && !ferror(out.f));
	}
	free(start);
	free(rows);
	free(ex);
	free(groups);
	free(skips);
done:
	for (int i = 0; i < nfits; i++) {
		pp_fit_free(fits[i].f);
		free(fits[i].insample);
		free(fits[i].held);
	}
	return rc;
}
