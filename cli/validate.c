/*
 * paraplan validate: judge paraplan's predictions against published,
 * measured training runs (shared/validation/public-runs.json).
 *
 * --memory (the default, and for now the only check): every published run
 * ran, so it fit in GPU memory; a plan paraplan judges not to fit is a wrong
 * prediction.  Per record: the plan as read (fills listed), the predicted peak
 * per-GPU memory and its fraction of HBM.  Then counts and the distribution.
 */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "paraplan/calib.h"

#define GIB 1073741824.0

enum { OPT_DATA = 256, OPT_MEMORY, OPT_JSON, OPT_HELP };

static const struct option validate_opts[] = {
	{"data", required_argument, 0, OPT_DATA},
	{"memory", no_argument, 0, OPT_MEMORY},
	{"json", no_argument, 0, OPT_JSON},
	{"help", no_argument, 0, OPT_HELP},
	{0, 0, 0, 0}};

static void validate_usage(FILE *f)
{
	fprintf(f,
	        "usage: paraplan validate [--data FILE] [--memory] [--json]\n"
	        "\n"
	        "  --data FILE   run records (default: $PARAPLAN_SHARED_DIR/validation/"
	        "public-runs.json,\n"
	        "                else ../shared/validation/public-runs.json, else the installed\n"
	        "                <prefix>/share/paraplan/public-runs.json)\n"
	        "  --memory      judge the predicted peak memory per GPU (the default)\n"
	        "  --json        JSON instead of text\n");
}

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The default data file; false when none of the places has it. */
static bool default_data(char *out, size_t n)
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

/* One evaluated record. */
typedef struct row {
	pp_run_info info;
	pp_estimate est;
	double fraction; /* peak / HBM */
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

static void print_text(FILE *f, const char *data, const row *rows, size_t nrows,
                       const skip *skips, size_t nskips, const double *sorted)
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
		fprintf(f, "%-52s %-13s %5lld %3d %3d %4d %3d %3d %3d %1d %-9s %8.1f %6.3f %4s  %s\n",
		        r->info.id, r->info.system, r->est.gpus, p->tp, p->pp, p->dp, p->cp, p->ep,
		        p->mbs, p->zero, pp_recompute_name(p->recompute),
		        r->est.memory.total_bytes / GIB, r->fraction, r->est.fits ? "yes" : "NO",
		        keys);
		if (!r->est.fits) {
			const pp_stage_memory *sm = &r->est.memory;
			fprintf(f,
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
	fprintf(f, "throughput: not yet modelled\n");
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static int print_json(FILE *f, const char *data, const row *rows, size_t nrows,
                      const skip *skips, size_t nskips, const double *sorted)
{
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
		json_object_set_new(ms, "peak_memory_bytes", num_or_null(r->info.peak_memory_bytes));
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
		json_object_set_new(sum, "fraction_median",
		                    json_real(nrows % 2 ? sorted[nrows / 2]
		                                        : 0.5 * (sorted[nrows / 2 - 1] +
		                                                 sorted[nrows / 2])));
		json_object_set_new(sum, "fraction_max", json_real(sorted[nrows - 1]));
	}
	json_object_set_new(root, "summary", sum);
	json_object_set_new(root, "throughput", json_string("not yet modelled"));
	int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(root);
	return rc;
}

int cli_validate(int argc, char **argv)
{
	const char *data = NULL;
	bool json = false;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", validate_opts, NULL)) != -1) {
		switch (c) {
		case OPT_DATA:
			data = optarg;
			break;
		case OPT_MEMORY:
			break; /* the default (and only) check for now */
		case OPT_JSON:
			json = true;
			break;
		case OPT_HELP:
			validate_usage(stdout);
			return EXIT_ANSWERED;
		case ':':
			cli_message("validate: option '%s' needs a value", argv[optind - 1]);
			return EXIT_BADINPUT;
		default:
			cli_message("validate: unknown option '%s' (try 'paraplan validate --help')",
			            argv[optind - 1]);
			return EXIT_BADINPUT;
		}
	}
	if (optind < argc) {
		cli_message("validate: unexpected argument '%s'", argv[optind]);
		return EXIT_BADINPUT;
	}
	char path[PATH_MAX + 64];
	if (!data) {
		if (!default_data(path, sizeof path)) {
			cli_message("validate: no run records found: set PARAPLAN_SHARED_DIR or pass "
			            "--data FILE");
			return EXIT_BADINPUT;
		}
		data = path;
	}

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
	int rc = EXIT_ANSWERED;
	for (size_t i = 0; i < n; i++) {
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
			continue;
		}
		if (st) {
			rc = cli_fail(st, &err);
			break;
		}
		r->fraction = r->est.memory.total_bytes / r->est.capacity_bytes;
		sorted[nrows] = r->fraction;
		nrows++;
	}
	if (rc == EXIT_ANSWERED) {
		qsort(sorted, nrows, sizeof *sorted, cmp_double);
		if (json) {
			if (print_json(stdout, data, rows, nrows, skips, nskips, sorted))
				rc = EXIT_INTERNAL;
		} else {
			print_text(stdout, data, rows, nrows, skips, nskips, sorted);
		}
		if (fflush(stdout) != 0) {
			cli_message("cannot write the output");
			rc = EXIT_INTERNAL;
		}
	}
	free(rows);
	free(skips);
	free(sorted);
	pp_runs_free(runs);
	return rc;
}
