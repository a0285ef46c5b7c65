/*
 * paraplan validate: judge paraplan's predictions against published,
 * measured training runs (shared/validation/public-runs.json).
 *
 * Default: throughput, like for like (pp_run_compare): per record the metric,
 * measured, predicted and signed error; then counts and the mean absolute
 * percentage error overall, per source and per scale (GPU count).
 *
 * --memory: every published run ran, so it fit in GPU memory; a plan paraplan
 * judges not to fit is a wrong prediction.  Per record: the plan as read
 * (fills listed), the predicted peak per-GPU memory and its fraction of HBM.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "util/util.h"
#include "paraplan/calib.h"

#define GIB 1073741824.0

/*
 * validate's flags (cli_args_parse: exact names, -h/--help; a flag given
 * twice: the last one wins).  A new flag: a code here, a row in
 * validate_opts, a field in validate_args, a case in validate_flag, a line in
 * validate_usage, and a refusal in validate_check if it does not combine.
 */
enum { OPT_DATA = 256, OPT_MEMORY, OPT_SEARCH, OPT_JSON, OPT_OUTPUT, OPT_QUIET };

static const struct option validate_opts[] = {{"data", required_argument, 0, OPT_DATA},
                                              {"memory", no_argument, 0, OPT_MEMORY},
                                              {"search", no_argument, 0, OPT_SEARCH},
                                              {"json", no_argument, 0, OPT_JSON},
                                              {"output", required_argument, 0, OPT_OUTPUT},
                                              {"quiet", no_argument, 0, OPT_QUIET},
                                              {"help", no_argument, 0, 0},
                                              {0, 0, 0, 0}};

typedef struct validate_args {
	const char *data, *output;
	bool json, memory, search, quiet;
} validate_args;

static int validate_flag(const struct option *opt, const char *v, void *ctx)
{
	validate_args *a = ctx;
	switch (opt->val) {
	case OPT_DATA: a->data = v; return 0;
	case OPT_MEMORY: a->memory = true; return 0;
	case OPT_SEARCH: a->search = true; return 0;
	case OPT_JSON: a->json = true; return 0;
	case OPT_OUTPUT: a->output = v; return 0;
	case OPT_QUIET: a->quiet = true; return 0;
	default: return EXIT_INTERNAL;
	}
}

/* Flags that do not combine: refused rather than one of them ignored. */
static int validate_check(const validate_args *a)
{
	const char *other = a->memory ? "--memory" : a->json ? "--json" : NULL;
	if (a->search && other) {
		cli_message("validate: --search does not take %s (its table is text, of times)",
		            other);
		return EXIT_BADINPUT;
	}
	return 0;
}

static void validate_usage(FILE *f)
{
	fprintf(f,
	        "usage: paraplan validate [--data FILE] [--memory | --search] [--json] "
	        "[--output FILE]\n"
	        "\n"
	        "  --data FILE   run records (default: $PARAPLAN_SHARED_DIR/validation/"
	        "public-runs.json,\n"
	        "                else ../shared/validation/public-runs.json, else the installed\n"
	        "                <prefix>/share/paraplan/public-runs.json); - reads standard\n"
	        "                input.  A file with no usable record is an error (exit 2)\n"
	        "  --memory      judge the predicted peak memory per GPU instead of throughput\n"
	        "  --search      for each record, the fastest plan paraplan finds for its model,\n"
	        "                GPUs and batch, next to the authors' plan (predicted times;\n"
	        "                text only: not with --memory or --json)\n"
	        "  --json        JSON instead of text\n"
	        "  --output FILE write there (atomically) instead of standard output\n"
	        "  --quiet       no progress on stderr (shown only when it is a terminal)\n"
	        "  -h, --help    this text\n"
	        "Options are named in full (no abbreviations); one given twice: the last wins.\n");
}

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The default data file; false when none of the places has it. */
bool cli_default_data(char *out, size_t n)
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

void cli_skips_add(cli_skips *s, const char *reason)
{
	char kind[sizeof s->kind[0]];
	reason_kind(reason, kind, sizeof kind);
	s->total++;
	size_t k = 0;
	while (k < s->n && strcmp(s->kind[k], kind) != 0)
		k++;
	if (k == s->n) {
		if (s->n == CLI_SKIP_KINDS) {
			k = CLI_SKIP_KINDS - 1; /* the last kind counts the rest */
			snprintf(s->kind[k], sizeof s->kind[k], "other reasons");
		} else {
			snprintf(s->kind[k], sizeof s->kind[k], "%s", kind);
			s->n++;
		}
	}
	s->count[k]++;
}

void cli_skips_format(const cli_skips *s, char *buf, size_t n)
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

/* "validate: no usable record in FILE: 3 skipped (...)"; EXIT_BADINPUT. */
static int no_usable(const char *verb, const char *data, const cli_skips *s)
{
	char why[1024];
	cli_skips_format(s, why, sizeof why);
	cli_message("%s: no usable record in %s: %s", verb, data, why);
	return EXIT_BADINPUT;
}

/* One evaluated record. */
typedef struct row {
	pp_run_info info;
	pp_estimate est;
	double fraction; /* peak / HBM */
	pp_comparison speed, mem;
	bool searched; /* --search: the best plan for the record's model, GPUs, batch */
	double best_s;
	pp_plan best;
} row;

typedef struct skip {
	char id[PP_RUN_ID_MAX];
	char reason[PP_ERROR_TEXT_MAX];
} skip;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void fill_keys(unsigned fills, char *buf, size_t n)
{
	buf[0] = '\0';
	for (int k = 0; k < PP_RUN_FILL_KINDS; k++) {
		if (!(fills & (1u << k)))
			continue;
		if (buf[0])
			strncat(buf, ",", n - strlen(buf) - 1);
		strncat(buf, pp_run_fill_name(1u << k), n - strlen(buf) - 1);
	}
	if (!buf[0])
		snprintf(buf, n, "-");
}

static void print_text(FILE *f, const char *data, const row *rows, size_t nrows, const skip *skips,
                       size_t nskips, const double *sorted)
{
	fprintf(f, "paraplan validate --memory: %zu records from %s\n\n", nrows + nskips, data);
	fprintf(f, "%-52s %-13s %5s %3s %3s %4s %3s %3s %3s %1s %-9s %8s %6s %4s  %s\n", "id",
	        "system", "gpus", "tp", "pp", "dp", "cp", "ep", "mbs", "z", "recompute", "peak GiB",
	        "of HBM", "fits", "filled");
	size_t fit = 0;
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		const pp_plan *p = &r->est.plan;
		char keys[256];
		fill_keys(r->info.fills, keys, sizeof keys);
		fit += r->est.fits;
		fprintf(
		    f, "%-52s %-13s %5lld %3d %3d %4d %3d %3d %3d %1d %-9s %8.1f %6.3f %4s  %s\n",
		    r->info.id, r->info.system, r->est.gpus, p->tp, p->pp, p->dp, p->cp, p->ep,
		    p->mbs, p->zero, pp_recompute_name(p->recompute),
		    r->est.memory.total_bytes / GIB, r->fraction, r->est.fits ? "yes" : "NO", keys);
		if (!r->est.fits) {
			const pp_stage_memory *sm = &r->est.memory;
			fprintf(
			    f,
			    "    stage %d: weights %.1f, gradients %.1f, optimizer %.1f, "
			    "activations %.1f (layers %.1f, logits %.1f), other %.1f (transient "
			    "%.1f, framework %.1f, fragmentation %.1f) GiB; HBM %.1f GiB\n",
			    sm->stage, sm->weights_bytes / GIB, sm->gradients_bytes / GIB,
			    sm->optimizer_bytes / GIB, sm->activations_bytes / GIB,
			    sm->act_layers_bytes / GIB, sm->act_logits_bytes / GIB,
			    sm->other_bytes / GIB, sm->transient_bytes / GIB,
			    sm->framework_bytes / GIB, sm->fragmentation_bytes / GIB,
			    r->est.capacity_bytes / GIB);
		}
	}
	if (nskips) {
		fprintf(f, "\nskipped:\n");
		for (size_t i = 0; i < nskips; i++)
			fprintf(f, "  %-52s %s\n", skips[i].id, skips[i].reason);
	}
	fprintf(f, "\nevaluated %zu, skipped %zu", nrows, nskips);
	/* Skip reasons, counted (the first of each kind in order of appearance). */
	for (size_t i = 0; i < nskips; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(skips[j].reason, skips[i].reason) == 0;
		if (seen)
			continue;
		size_t c = 0;
		for (size_t j = i; j < nskips; j++)
			c += strcmp(skips[j].reason, skips[i].reason) == 0;
		fprintf(f, "%s %zu: %s", i == 0 ? " --" : ";", c, skips[i].reason);
	}
	fprintf(f, "\nfit: %zu of %zu evaluated\n", fit, nrows);
	if (nrows)
		fprintf(f, "fraction of HBM: min %.3f, median %.3f, max %.3f\n", sorted[0],
		        nrows % 2 ? sorted[nrows / 2]
		                  : 0.5 * (sorted[nrows / 2 - 1] + sorted[nrows / 2]),
		        sorted[nrows - 1]);
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static int print_json(FILE *f, const char *data, const row *rows, size_t nrows, const skip *skips,
                      size_t nskips, const double *sorted)
{
	long long mark = ppi_alloc_failed(); /* a value dropped: out of memory */
	json_t *root = json_object();
	json_object_set_new(root, "data", json_string(data));
	json_t *arr = json_array();
	size_t fit = 0;
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		const pp_plan *p = &r->est.plan;
		const pp_stage_memory *sm = &r->est.memory;
		fit += r->est.fits;
		json_t *o = json_object();
		json_object_set_new(o, "id", json_string(r->info.id));
		json_object_set_new(o, "gpu_type", json_string(r->info.gpu_type));
		json_object_set_new(o, "system", json_string(r->info.system));
		json_object_set_new(o, "gpus", json_integer(r->est.gpus));
		json_t *jp = json_object();
		json_object_set_new(jp, "tp", json_integer(p->tp));
		json_object_set_new(jp, "pp", json_integer(p->pp));
		json_object_set_new(jp, "dp", json_integer(p->dp));
		json_object_set_new(jp, "cp", json_integer(p->cp));
		json_object_set_new(jp, "ep", json_integer(p->ep));
		json_object_set_new(jp, "etp", json_integer(p->etp));
		json_object_set_new(jp, "vp", json_integer(p->vp));
		json_object_set_new(jp, "mbs", json_integer(p->mbs));
		json_object_set_new(jp, "zero", json_integer(p->zero));
		json_object_set_new(jp, "recompute", json_string(pp_recompute_name(p->recompute)));
		json_object_set_new(jp, "sp", json_boolean(p->sp));
		json_object_set_new(jp, "flash", json_boolean(p->flash));
		json_object_set_new(jp, "schedule", json_string(pp_schedule_name(p->schedule)));
		json_object_set_new(jp, "microbatches", json_integer(p->microbatches));
		json_object_set_new(o, "plan", jp);
		json_object_set_new(o, "precision",
		                    json_string(pp_precision_name(r->est.job.precision)));
		json_object_set_new(o, "peak_stage", json_integer(sm->stage));
		json_object_set_new(o, "peak_bytes", json_real(sm->total_bytes));
		json_object_set_new(o, "hbm_bytes", json_real(r->est.capacity_bytes));
		json_object_set_new(o, "fraction_of_hbm", json_real(r->fraction));
		json_object_set_new(o, "fits", json_boolean(r->est.fits));
		json_t *b = json_object();
		json_object_set_new(b, "weights_bytes", json_real(sm->weights_bytes));
		json_object_set_new(b, "gradients_bytes", json_real(sm->gradients_bytes));
		json_object_set_new(b, "optimizer_bytes", json_real(sm->optimizer_bytes));
		json_object_set_new(b, "activations_bytes", json_real(sm->activations_bytes));
		json_object_set_new(b, "other_bytes", json_real(sm->other_bytes));
		json_object_set_new(o, "breakdown", b);
		json_t *fl = json_array();
		for (int k = 0; k < r->info.nfilled; k++)
			json_array_append_new(fl, json_string(r->info.filled[k]));
		json_object_set_new(o, "filled", fl);
		json_t *ms = json_object();
		json_object_set_new(ms, "tflops_per_gpu", num_or_null(r->info.tflops_per_gpu));
		json_object_set_new(ms, "tflops_definition",
		                    json_string(r->info.tflops_definition));
		json_object_set_new(ms, "mfu", num_or_null(r->info.mfu));
		json_object_set_new(ms, "hfu", num_or_null(r->info.hfu));
		json_object_set_new(ms, "tokens_per_s_per_gpu",
		                    num_or_null(r->info.tokens_per_s_per_gpu));
		json_object_set_new(ms, "iteration_time_s", num_or_null(r->info.iteration_time_s));
		json_object_set_new(ms, "peak_memory_bytes",
		                    num_or_null(r->info.peak_memory_bytes));
		json_object_set_new(o, "measured", ms);
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "records", arr);
	json_t *sk = json_array();
	for (size_t i = 0; i < nskips; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "id", json_string(skips[i].id));
		json_object_set_new(o, "reason", json_string(skips[i].reason));
		json_array_append_new(sk, o);
	}
	json_object_set_new(root, "skipped", sk);
	json_t *sum = json_object();
	json_object_set_new(sum, "evaluated", json_integer((json_int_t)nrows));
	json_object_set_new(sum, "skipped", json_integer((json_int_t)nskips));
	json_object_set_new(sum, "fit", json_integer((json_int_t)fit));
	if (nrows) {
		json_object_set_new(sum, "fraction_min", json_real(sorted[0]));
		json_object_set_new(
		    sum, "fraction_median",
		    json_real(nrows % 2 ? sorted[nrows / 2]
		                        : 0.5 * (sorted[nrows / 2 - 1] + sorted[nrows / 2])));
		json_object_set_new(sum, "fraction_max", json_real(sorted[nrows - 1]));
	}
	json_object_set_new(root, "summary", sum);
	return cli_json_dump(root, mark, f);
}

/* Short name of a source: its title up to the first comma or parenthesis. */
static void source_name(const char *title, char *out, size_t n)
{
	size_t k = strcspn(title, ",(");
	if (k >= n)
		k = n - 1;
	memcpy(out, title, k);
	while (k > 0 && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
}

void cli_source_name(const char *title, char *out, size_t n)
{
	source_name(title, out, n);
}

/* Mean absolute error of the rows `keep` selects; *count gets how many. */
typedef bool (*row_filter)(const row *r, const void *arg);
static double mape(const row *rows, size_t nrows, bool mem, row_filter keep, const void *arg,
                   size_t *count)
{
	double sum = 0;
	size_t k = 0;
	for (size_t i = 0; i < nrows; i++) {
		const pp_comparison *c = mem ? &rows[i].mem : &rows[i].speed;
		if (c->metric == PP_METRIC_NONE || !isfinite(c->error))
			continue;
		if (keep && !keep(&rows[i], arg))
			continue;
		sum += fabs(c->error);
		k++;
	}
	*count = k;
	return k ? sum / k : NAN;
}

static bool same_source(const row *r, const void *arg)
{
	char a[96];
	source_name(r->info.title, a, sizeof a);
	return strcmp(a, (const char *)arg) == 0;
}

/* GPU-count bands for "how error varies with scale". */
static const long long scale_edges[] = {64, 512, 4096, 1LL << 40};
static const char *const scale_names[] = {"<=64 GPUs", "65-512 GPUs", "513-4096 GPUs",
                                          ">4096 GPUs"};
static bool in_scale(const row *r, const void *arg)
{
	int b = *(const int *)arg;
	long long lo = b ? scale_edges[b - 1] : 0;
	return r->est.gpus > lo && r->est.gpus <= scale_edges[b];
}

/* Distinct source names of the rows, in order of first appearance. */
static size_t sources_of(const row *rows, size_t nrows, char (*names)[96], size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < nrows; i++) {
		char a[96];
		source_name(rows[i].info.title, a, sizeof a);
		size_t k = 0;
		while (k < n && strcmp(names[k], a) != 0)
			k++;
		if (k == n && n < max)
			snprintf(names[n++], sizeof names[0], "%s", a);
	}
	return n;
}

static void print_speed_text(FILE *f, const char *data, const row *rows, size_t nrows,
                             const skip *skips, size_t nskips)
{
	fprintf(f, "paraplan validate: %zu records from %s\n\n", nrows + nskips, data);
	fprintf(f, "%-52s %-20s %6s %12s %12s %8s\n", "id", "metric", "gpus", "measured",
	        "predicted", "error");
	size_t none = 0;
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		if (r->speed.metric == PP_METRIC_NONE) {
			none++;
			continue;
		}
		fprintf(f, "%-52s %-20s %6lld %12.4g %12.4g %+7.1f%%\n", r->info.id,
		        pp_metric_name(r->speed.metric), r->est.gpus, r->speed.measured,
		        r->speed.predicted, 100 * r->speed.error);
	}
	if (nskips) {
		fprintf(f, "\nskipped:\n");
		for (size_t i = 0; i < nskips; i++)
			fprintf(f, "  %-52s %s\n", skips[i].id, skips[i].reason);
	}
	size_t n;
	double all = mape(rows, nrows, false, NULL, NULL, &n);
	fprintf(f, "\nevaluated %zu, skipped %zu", n, nskips + none);
	if (none)
		fprintf(f, " (%zu without a throughput measurement)", none);
	fprintf(f, "\nMAPE %.1f%% over %zu records\n", 100 * all, n);
	char names[32][96];
	size_t ns = sources_of(rows, nrows, names, 32);
	fprintf(f, "\nby source:\n");
	for (size_t k = 0; k < ns; k++) {
		double e = mape(rows, nrows, false, same_source, names[k], &n);
		if (n)
			fprintf(f, "  %-60.60s %4zu records  MAPE %5.1f%%\n", names[k], n, 100 * e);
	}
	fprintf(f, "\nby scale:\n");
	for (int b = 0; b < 4; b++) {
		double e = mape(rows, nrows, false, in_scale, &b, &n);
		if (n)
			fprintf(f, "  %-16s %4zu records  MAPE %5.1f%%\n", scale_names[b], n,
			        100 * e);
	}
	double mm = mape(rows, nrows, true, NULL, NULL, &n);
	if (n)
		fprintf(f, "\nmemory MAPE %.1f%% over %zu records with a measured peak\n", 100 * mm,
		        n);
	else
		fprintf(f, "\nmemory: no record reports a measured peak (memory_mape null)\n");
}

static int print_speed_json(FILE *f, const char *data, const row *rows, size_t nrows,
                            const skip *skips, size_t nskips)
{
	long long mark = ppi_alloc_failed(); /* a value dropped: out of memory */
	json_t *root = json_object();
	json_object_set_new(root, "data", json_string(data));
	json_t *arr = json_array();
	size_t none = 0;
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		if (r->speed.metric == PP_METRIC_NONE) {
			none++;
			continue;
		}
		char src[96];
		source_name(r->info.title, src, sizeof src);
		json_t *o =
		    json_pack("{s:s,s:s,s:f,s:f,s:f,s:s,s:I,s:s}", "id", r->info.id, "metric",
		              pp_metric_name(r->speed.metric), "measured", r->speed.measured,
		              "predicted", r->speed.predicted, "error", r->speed.error, "source",
		              src, "gpus", (json_int_t)r->est.gpus, "system", r->info.system);
		json_object_set_new(o, "stack", json_string(r->est.system.framework));
		if (r->mem.metric != PP_METRIC_NONE)
			json_object_set_new(o, "memory_error", json_real(r->mem.error));
		json_t *fl = json_array();
		for (int k = 0; k < r->info.nfilled; k++)
			json_array_append_new(fl, json_string(r->info.filled[k]));
		json_object_set_new(o, "filled", fl);
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "records", arr);
	size_t n;
	double all = mape(rows, nrows, false, NULL, NULL, &n);
	json_object_set_new(root, "evaluated", json_integer((json_int_t)n));
	json_object_set_new(root, "skipped", json_integer((json_int_t)(nskips + none)));
	json_object_set_new(root, "mape", num_or_null(all));
	json_t *bys = json_object();
	char names[32][96];
	size_t ns = sources_of(rows, nrows, names, 32);
	for (size_t k = 0; k < ns; k++) {
		double e = mape(rows, nrows, false, same_source, names[k], &n);
		if (n)
			json_object_set_new(bys, names[k], json_real(e));
	}
	json_object_set_new(root, "mape_by_source", bys);
	json_t *byg = json_object();
	for (int b = 0; b < 4; b++) {
		double e = mape(rows, nrows, false, in_scale, &b, &n);
		if (n)
			json_object_set_new(byg, scale_names[b], json_real(e));
	}
	json_object_set_new(root, "mape_by_scale", byg);
	double mm = mape(rows, nrows, true, NULL, NULL, &n);
	json_object_set_new(root, "memory_mape", num_or_null(mm));
	json_t *sk = json_array();
	for (size_t i = 0; i < nskips; i++)
		json_array_append_new(
		    sk, json_pack("{s:s,s:s}", "id", skips[i].id, "reason", skips[i].reason));
	json_object_set_new(root, "skipped_records", sk);
	return cli_json_dump(root, mark, f);
}

/* The fastest plan that fits for the record's model, system, GPUs and job, in
 * a space that contains the authors' plan (their schedule and order added, the
 * flags that are not searched taken from it). */
static int best_plan(row *r, const pp_model *m, const pp_system *s, const pp_job *job,
                     const pp_plan *theirs, long long gpus)
{
	pp_search_space space;
	pp_search_space_init(&space);
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
	pp_error err;
	pp_status st = pp_search_new(m, s, job, gpus, &space, &opts, &srch, &err);
	while (!st && !pp_search_done(srch))
		st = pp_search_iterate(srch, &err);
	if (st) {
		if (st != PP_EINPUT)
			pp_search_free(srch);
		return cli_fail(st, &err);
	}
	r->searched = pp_search_count(srch) > 0;
	if (r->searched) {
		r->best_s = pp_search_plan(srch, 0)->time.iteration_s;
		r->best = pp_search_plan(srch, 0)->plan;
	}
	pp_search_free(srch);
	return 0;
}

static void print_search_text(FILE *f, const row *rows, size_t nrows)
{
	fprintf(f, "%-52s %6s %10s %10s %7s  %s\n", "id", "gpus", "theirs s", "best s", "speedup",
	        "best plan");
	size_t n = 0, ok = 0;
	double sum = 0;
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		if (!r->searched)
			continue;
		const pp_plan *p = &r->best;
		double their = r->est.time.iteration_s;
		fprintf(
		    f,
		    "%-52s %6lld %10.4g %10.4g %6.2fx  tp %d pp %d dp %d cp %d ep %d vp %d mbs %d "
		    "z%d %s%s %s %s",
		    r->info.id, r->est.gpus, their, r->best_s, their / r->best_s, p->tp, p->pp,
		    p->dp, p->cp, p->ep, p->vp, p->mbs, p->zero, pp_recompute_name(p->recompute),
		    p->sp ? " sp" : "", pp_schedule_name(p->schedule), p->order);
		if (p->first_stage_layers > 0 || p->last_stage_layers > 0)
			fprintf(f, " first %d last %d", p->first_stage_layers,
			        p->last_stage_layers);
		fputc('\n', f);
		n++;
		ok += r->best_s <= their * (1 + 1e-12);
		sum += their / r->best_s;
	}
	fprintf(f,
	        "\n%zu records searched; the best plan is at least as fast as the authors' in %zu; "
	        "mean predicted speedup %.2fx\n",
	        n, ok, n ? sum / n : 0.0);
}

/* validate's flags into `a`: CLI_CONTINUE or the exit code. */
static int validate_parse(int argc, char **argv, validate_args *a)
{
	cli_args args = {"validate", validate_usage, validate_opts, validate_flag, NULL, a};
	int rc = cli_args_parse(argc, argv, &args);
	if (rc == CLI_CONTINUE && (rc = validate_check(a)) == 0)
		rc = CLI_CONTINUE;
	return rc;
}

int cli_validate_parse_only(int argc, char **argv)
{
	validate_args a = {0};
	int rc = validate_parse(argc, argv, &a);
	return rc == CLI_CONTINUE ? 0 : rc;
}

int cli_validate(int argc, char **argv)
{
	validate_args a = {0};
	int rc = validate_parse(argc, argv, &a);
	if (rc != CLI_CONTINUE)
		return rc;
	const char *data = a.data, *output = a.output;
	const bool json = a.json, memory = a.memory, search = a.search, quiet = a.quiet;
	char path[PATH_MAX + 64];
	if (!data) {
		if (!cli_default_data(path, sizeof path)) {
			cli_message(
			    "validate: no run records found: set PARAPLAN_SHARED_DIR or pass "
			    "--data FILE");
			return EXIT_BADINPUT;
		}
		data = path;
	}

	if ((rc = cli_out_check("validate", "--output", output)))
		return rc;
	pp_error err;
	pp_runs *runs = NULL;
	pp_status st = pp_runs_load(data, &runs, &err);
	if (st)
		return cli_fail(st, &err);
	size_t n = pp_runs_count(runs);
	row *rows = calloc(n ? n : 1, sizeof *rows);
	skip *skips = calloc(n ? n : 1, sizeof *skips);
	double *sorted = calloc(n ? n : 1, sizeof *sorted);
	if (!rows || !skips || !sorted) {
		free(rows);
		free(skips);
		free(sorted);
		pp_runs_free(runs);
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	size_t nrows = 0, nskips = 0;
	cli_skips why = {0};
	cli_progress pr;
	cli_progress_start(&pr, "validate", quiet, "%zu run records%s", n,
	                   search ? ", a search for each" : "");
	for (size_t i = 0; i < n; i++) {
		double t = cli_progress_elapsed(&pr);
		cli_progress_show(&pr, (double)i / (double)n, false, "%zu of %zu records (%.1f/s)",
		                  i, n, t > 0 ? (double)i / t : 0.0);
		pp_model m;
		pp_system s;
		pp_job job;
		pp_plan plan;
		long long gpus = 0;
		row *r = &rows[nrows];
		st = pp_run_inputs(runs, i, &m, &s, &job, &plan, &gpus, &r->info, &err);
		if (st == PP_OK)
			st = pp_estimate_run(&m, &s, &job, &plan, gpus, &r->est, &err);
		if (st == PP_EINPUT) {
			skip *k = &skips[nskips++];
			snprintf(k->id, sizeof k->id, "%s", pp_runs_id(runs, i));
			snprintf(k->reason, sizeof k->reason, "%s", err.text);
			cli_skips_add(&why, err.text);
			continue;
		}
		if (st) {
			rc = cli_fail(st, &err);
			break;
		}
		r->fraction = r->est.memory.total_bytes / r->est.capacity_bytes;
		pp_run_compare(&r->info, &r->est, &r->speed, &r->mem);
		if (!isfinite(r->fraction) ||
		    (r->speed.metric != PP_METRIC_NONE && !isfinite(r->speed.error)) ||
		    (r->mem.metric != PP_METRIC_NONE && !isfinite(r->mem.error))) {
			/* Never printed as nan: a prediction that is not a number is a
			 * skipped record (and a bug to report). */
			skip *k = &skips[nskips++];
			snprintf(k->id, sizeof k->id, "%s", pp_runs_id(runs, i));
			snprintf(k->reason, sizeof k->reason, "the prediction is not a number");
			cli_skips_add(&why, k->reason);
			continue;
		}
		if (search && (rc = best_plan(r, &m, &s, &job, &plan, gpus)))
			break;
		sorted[nrows] = r->fraction;
		nrows++;
	}
	cli_progress_show(&pr, 1, true, "%zu of %zu records", n, n);
	cli_progress_end(&pr);
	if (rc == EXIT_ANSWERED) {
		/* Usable: evaluated, and for throughput, measured. */
		size_t usable = nrows;
		if (!memory && !search) {
			cli_skips w = why;
			usable = 0;
			for (size_t i = 0; i < nrows; i++) {
				if (rows[i].speed.metric != PP_METRIC_NONE)
					usable++;
				else
					cli_skips_add(&w, "without a throughput measurement");
			}
			why = w;
		}
		if (usable == 0)
			rc = no_usable("validate", data, &why);
	}
	cli_out out;
	if (rc == EXIT_ANSWERED && (rc = cli_out_open(&out, output)) == EXIT_ANSWERED) {
		qsort(sorted, nrows, sizeof *sorted, cmp_double);
		FILE *f = out.f;
		int wr = 0;
		if (search)
			print_search_text(f, rows, nrows);
		else if (!memory && json)
			wr = print_speed_json(f, data, rows, nrows, skips, nskips);
		else if (!memory)
			print_speed_text(f, data, rows, nrows, skips, nskips);
		else if (json)
			wr = print_json(f, data, rows, nrows, skips, nskips, sorted);
		else
			print_text(f, data, rows, nrows, skips, nskips, sorted);
		rc = cli_out_close(&out, cli_report_ok(wr, f));
	}
	free(rows);
	free(skips);
	free(sorted);
	pp_runs_free(runs);
	return rc;
}
