/*
 * paraplan validate's computation: each record of a runs file estimated and
 * compared with what it measured (optionally with a search for the fastest
 * plan beside the authors'), and the judged records summarised: MAPE overall,
 * per source and per GPU-count band, the memory MAPE, how many plans fit and
 * the spread of their fraction of HBM.  The CLI prints.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paraplan/calib.h"
#include "paraplan/schedule_type.h"
#include "paraplan/search.h"
#include "util/util.h"

void pp_run_source_name(const char *title, char *out, size_t n)
{
	size_t k = strcspn(title, ",(");
	if (k >= n)
		k = n - 1;
	memcpy(out, title, k);
	while (k > 0 && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
}

/* Upper edges of the GPU-count bands, inclusive. */
static const long long scale_edges[PP_VALIDATE_SCALES] = {64, 512, 4096, 1LL << 40};
static const char *const scale_names[PP_VALIDATE_SCALES] = {"<=64 GPUs", "65-512 GPUs",
                                                            "513-4096 GPUs", ">4096 GPUs"};

int pp_validate_scale(long long gpus)
{
	int b = 0;
	while (b < PP_VALIDATE_SCALES - 1 && gpus > scale_edges[b])
		b++;
	return b;
}

const char *pp_validate_scale_name(int band)
{
	return band >= 0 && band < PP_VALIDATE_SCALES ? scale_names[band] : "?";
}

/* The fastest plan that fits for the record's model, system, GPUs and job, in
 * a space that contains the authors' plan (their schedule and order added, the
 * flags that are not searched taken from it). */
static pp_status best_plan(pp_validate_row *r, const pp_inputs *in, pp_error *err)
{
	const pp_plan *theirs = &in->plan;
	pp_search_space space;
	pp_search_space_init(&space);
	space.headroom_fraction = 0; /* the authors' plan ran: the whole HBM */
	space.base = *theirs;
	space.schedule_mask = pp_schedule_search_default_mask() | (1u << theirs->schedule);
	static const char *const orders[] = {"tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp", "tp-pp-cp-ep-dp",
	                                     "cp-tp-ep-dp-pp"};
	space.norders = 0;
	for (size_t i = 0; i < sizeof orders / sizeof *orders; i++)
		snprintf(space.orders[space.norders++], PP_ORDER_MAX, "%s", orders[i]);
	bool listed = false;
	for (int i = 0; i < space.norders; i++)
		listed |= strcmp(space.orders[i], theirs->order) == 0;
	if (!listed)
		snprintf(space.orders[space.norders++], PP_ORDER_MAX, "%s", theirs->order);
	if (theirs->etp != theirs->tp) {
		space.etp.count = 2;
		space.etp.values[0] = theirs->tp;
		space.etp.values[1] = theirs->etp;
	}
	pp_search_options opts;
	pp_search_options_init(&opts);
	opts.top_k = 1;
	pp_search *srch;
	pp_status st =
	    pp_search_new(&in->model, &in->system, &in->job, in->gpus, &space, &opts, &srch, err);
	while (!st && !pp_search_done(srch))
		st = pp_search_iterate(srch, err);
	if (st) {
		if (st != PP_EINPUT)
			pp_search_free(srch);
		return st;
	}
	r->searched = pp_search_count(srch) > 0;
	if (r->searched) {
		r->best_s = pp_search_plan(srch, 0)->time.iteration_s;
		r->best = pp_search_plan(srch, 0)->plan;
	}
	pp_search_free(srch);
	return PP_OK;
}

static void skip(pp_validate_row *row, const char *reason)
{
	row->skipped = true;
	snprintf(row->skip_reason, sizeof row->skip_reason, "%s", reason);
}

pp_status pp_validate_record(const pp_runs *runs, size_t i, bool search, pp_validate_row *row,
                             pp_error *err)
{
	pp_inputs in;
	row->skipped = false;
	row->searched = false;
	pp_status st = pp_run_read(runs, i, &in, &row->info, err);
	if (st == PP_OK)
		st = pp_inputs_estimate(&in, &row->est, err);
	if (st == PP_EINPUT) {
		skip(row, err->text);
		return PP_OK;
	}
	if (st)
		return st;
	row->fraction = row->est.memory.total_bytes / row->est.capacity_bytes;
	pp_run_compare(&row->info, &row->est, &row->speed, &row->mem);
	if (!isfinite(row->fraction) ||
	    (row->speed.metric != PP_METRIC_NONE && !isfinite(row->speed.error)) ||
	    (row->mem.metric != PP_METRIC_NONE && !isfinite(row->mem.error))) {
		/* Never printed as nan: a prediction that is not a number is a
		 * skipped record (and a bug to report). */
		skip(row, "the prediction is not a number");
		return PP_OK;
	}
	return search ? best_plan(row, &in, err) : PP_OK;
}

/* Which rows a group holds: all (kind 0), one source (1), one band (2). */
typedef struct group_sel {
	int kind;
	const char *source;
	int band;
} group_sel;

static bool selected(const pp_validate_row *r, const group_sel *sel)
{
	if (sel->kind == 1) {
		char a[PP_RUN_SOURCE_NAME_MAX];
		pp_run_source_name(r->info.title, a, sizeof a);
		return strcmp(a, sel->source) == 0;
	}
	if (sel->kind == 2) {
		long long lo = sel->band ? scale_edges[sel->band - 1] : 0;
		return r->est.gpus > lo && r->est.gpus <= scale_edges[sel->band];
	}
	return true;
}

/* Mean absolute error of the selected rows' throughput (or memory) comparisons. */
static void mape(const pp_validate_row *rows, size_t nrows, bool mem, const group_sel *sel,
                 pp_validate_group *g)
{
	double sum = 0;
	size_t k = 0;
	for (size_t i = 0; i < nrows; i++) {
		const pp_comparison *c = mem ? &rows[i].mem : &rows[i].speed;
		if (c->metric == PP_METRIC_NONE || !isfinite(c->error))
			continue;
		if (!selected(&rows[i], sel))
			continue;
		sum += fabs(c->error);
		k++;
	}
	g->records = k;
	g->mape = k ? sum / k : NAN;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Fit count and min / median / max of the fraction of HBM. */
static pp_status memory_spread(const pp_validate_row *rows, size_t n, pp_validate_summary *out,
                               pp_error *err)
{
	out->fraction_min = out->fraction_median = out->fraction_max = NAN;
	for (size_t i = 0; i < n; i++)
		out->fit += rows[i].est.fits;
	if (n == 0)
		return PP_OK;
	double *sorted = ppi_malloc(n * sizeof *sorted);
	if (!sorted)
		return ppi_oom(err);
	for (size_t i = 0; i < n; i++)
		sorted[i] = rows[i].fraction;
	qsort(sorted, n, sizeof *sorted, cmp_double);
	out->fraction_min = sorted[0];
	out->fraction_median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
	out->fraction_max = sorted[n - 1];
	free(sorted);
	return PP_OK;
}

pp_status pp_validate_summarise(const pp_validate_row *rows, size_t n, pp_validate_summary *out,
                                pp_error *err)
{
	memset(out, 0, sizeof *out);
	group_sel sel = {0, NULL, 0};
	mape(rows, n, false, &sel, &out->all);
	mape(rows, n, true, &sel, &out->memory);
	for (size_t i = 0; i < n; i++) {
		out->unmeasured += rows[i].speed.metric == PP_METRIC_NONE;
		char a[PP_RUN_SOURCE_NAME_MAX];
		pp_run_source_name(rows[i].info.title, a, sizeof a);
		size_t k = 0;
		while (k < out->nsources && strcmp(out->by_source[k].name, a) != 0)
			k++;
		if (k == out->nsources && out->nsources < PP_VALIDATE_SOURCES_MAX)
			snprintf(out->by_source[out->nsources++].name, sizeof a, "%s", a);
	}
	sel.kind = 1;
	for (size_t k = 0; k < out->nsources; k++) {
		sel.source = out->by_source[k].name;
		mape(rows, n, false, &sel, &out->by_source[k]);
	}
	sel.kind = 2;
	for (int b = 0; b < PP_VALIDATE_SCALES; b++) {
		sel.band = b;
		snprintf(out->by_scale[b].name, sizeof out->by_scale[b].name, "%s", scale_names[b]);
		mape(rows, n, false, &sel, &out->by_scale[b]);
	}
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		const pp_validate_row *r = &rows[i];
		if (!r->searched)
			continue;
		double their = r->est.time.iteration_s;
		out->searched++;
		out->search_as_fast += r->best_s <= their * (1 + 1e-12);
		sum += their / r->best_s;
	}
	out->search_mean_speedup = out->searched ? sum / out->searched : 0.0;
	return memory_spread(rows, n, out, err);
}

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The default data file; false when none of the places has it. */
bool pp_runs_default_path(char *out, size_t n)
{
	const char *shared = getenv("PARAPLAN_SHARED_DIR");
	if (shared && shared[0]) {
		snprintf(out, n, "%s/validation/public-runs.json", shared);
		if (readable(out))
			return true;
	}
	snprintf(out, n, "../shared/validation/public-runs.json");
	if (readable(out))
		return true;
	/* Installed: <prefix>/bin/paraplan -> <prefix>/share/paraplan/. */
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (len > 0) {
		exe[len] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, n, "%s/../share/paraplan/public-runs.json", exe);
			if (readable(out))
				return true;
		}
	}
	return false;
}

/* Short form of a skip reason: up to its first " (", " '" or ": ". */
static void reason_kind(const char *reason, char *out, size_t n)
{
	size_t k = strlen(reason);
	const char *cuts[] = {" (", " '", ": "};
	for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
		const char *p = strstr(reason, cuts[i]);
		if (p && (size_t)(p - reason) < k)
			k = (size_t)(p - reason);
	}
	snprintf(out, n, "%.*s", (int)k, reason);
}

void pp_skips_add(pp_skips *s, const char *reason)
{
	char kind[sizeof s->kind[0]];
	reason_kind(reason, kind, sizeof kind);
	s->total++;
	size_t k = 0;
	while (k < s->n && strcmp(s->kind[k], kind) != 0)
		k++;
	if (k == s->n) {
		if (s->n == PP_SKIP_KINDS) {
			k = PP_SKIP_KINDS - 1; /* the last kind counts the rest */
			snprintf(s->kind[k], sizeof s->kind[k], "other reasons");
		} else {
			snprintf(s->kind[k], sizeof s->kind[k], "%s", kind);
			s->n++;
		}
	}
	s->count[k]++;
}

void pp_skips_format(const pp_skips *s, char *buf, size_t n)
{
	if (s->total == 0) {
		snprintf(buf, n, "it holds no record");
		return;
	}
	size_t off = (size_t)snprintf(buf, n, "%zu skipped (", s->total);
	for (size_t k = 0; k < s->n && off < n; k++)
		off += (size_t)snprintf(buf + off, n - off, "%s%zu %s", k ? ", " : "", s->count[k],
		                        s->kind[k]);
	if (off < n)
		snprintf(buf + off, n - off, ")");
}

size_t pp_validate_usable(const pp_validate_row *rows, size_t nrows, pp_skips *why)
{
	size_t usable = 0;
	for (size_t i = 0; i < nrows; i++) {
		if (rows[i].speed.metric != PP_METRIC_NONE)
			usable++;
		else
			pp_skips_add(why, "without a throughput measurement");
	}
	return usable;
}
