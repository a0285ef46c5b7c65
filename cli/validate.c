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
 *
 * The judging and the summary are the library's (pp_validate_record,
 * pp_validate_summarise: src/calib/validate.c); this file parses the flags,
 * calls them record by record (with progress) and prints.
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
 * docs/usage/validate.txt, and a refusal in validate_check if it does not combine.
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
	cli_usage(f, "validate"); /* docs/usage/validate.txt */
}

/* One evaluated record. */
typedef pp_validate_row row;

typedef struct skip {
	char id[PP_RUN_ID_MAX];
	char reason[PP_ERROR_TEXT_MAX];
} skip;

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
                       size_t nskips, const pp_validate_summary *sum)
{
	fprintf(f, "paraplan validate --memory: %zu records from %s\n\n", nrows + nskips, data);
	fprintf(f, "%-52s %-13s %5s %3s %3s %4s %3s %3s %3s %1s %-9s %8s %6s %4s  %s\n", "id",
	        "system", "gpus", "tp", "pp", "dp", "cp", "ep", "mbs", "z", "recompute", "peak GiB",
	        "of HBM", "fits", "filled");
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		const pp_plan *p = &r->est.plan;
		char keys[256];
		fill_keys(r->info.fills, keys, sizeof keys);
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
	fprintf(f, "\nfit: %zu of %zu evaluated\n", sum->fit, nrows);
	if (nrows)
		fprintf(f, "fraction of HBM: min %.3f, median %.3f, max %.3f\n", sum->fraction_min,
		        sum->fraction_median, sum->fraction_max);
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static int print_json(FILE *f, const char *data, const row *rows, size_t nrows, const skip *skips,
                      size_t nskips, const pp_validate_summary *sum)
{
	long long mark = ppi_alloc_failed(); /* a value dropped: out of memory */
	json_t *root = json_object();
	json_object_set_new(root, "data", json_string(data));
	json_t *arr = json_array();
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		const pp_plan *p = &r->est.plan;
		const pp_stage_memory *sm = &r->est.memory;
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
	json_t *js = json_object();
	json_object_set_new(js, "evaluated", json_integer((json_int_t)nrows));
	json_object_set_new(js, "skipped", json_integer((json_int_t)nskips));
	json_object_set_new(js, "fit", json_integer((json_int_t)sum->fit));
	if (nrows) {
		json_object_set_new(js, "fraction_min", json_real(sum->fraction_min));
		json_object_set_new(js, "fraction_median", json_real(sum->fraction_median));
		json_object_set_new(js, "fraction_max", json_real(sum->fraction_max));
	}
	json_object_set_new(root, "summary", js);
	return cli_json_dump(root, mark, f);
}

static void print_speed_text(FILE *f, const char *data, const row *rows, size_t nrows,
                             const skip *skips, size_t nskips, const pp_validate_summary *sum)
{
	fprintf(f, "paraplan validate: %zu records from %s\n\n", nrows + nskips, data);
	fprintf(f, "%-52s %-20s %6s %12s %12s %8s\n", "id", "metric", "gpus", "measured",
	        "predicted", "error");
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		if (r->speed.metric == PP_METRIC_NONE)
			continue;
		fprintf(f, "%-52s %-20s %6lld %12.4g %12.4g %+7.1f%%\n", r->info.id,
		        pp_metric_name(r->speed.metric), r->est.gpus, r->speed.measured,
		        r->speed.predicted, 100 * r->speed.error);
	}
	if (nskips) {
		fprintf(f, "\nskipped:\n");
		for (size_t i = 0; i < nskips; i++)
			fprintf(f, "  %-52s %s\n", skips[i].id, skips[i].reason);
	}
	fprintf(f, "\nevaluated %zu, skipped %zu", sum->all.records, nskips + sum->unmeasured);
	if (sum->unmeasured)
		fprintf(f, " (%zu without a throughput measurement)", sum->unmeasured);
	fprintf(f, "\nMAPE %.1f%% over %zu records\n", 100 * sum->all.mape, sum->all.records);
	fprintf(f, "\nby source:\n");
	for (size_t k = 0; k < sum->nsources; k++) {
		const pp_validate_group *g = &sum->by_source[k];
		if (g->records)
			fprintf(f, "  %-60.60s %4zu records  MAPE %5.1f%%\n", g->name, g->records,
			        100 * g->mape);
	}
	fprintf(f, "\nby scale:\n");
	for (int b = 0; b < PP_VALIDATE_SCALES; b++) {
		const pp_validate_group *g = &sum->by_scale[b];
		if (g->records)
			fprintf(f, "  %-16s %4zu records  MAPE %5.1f%%\n", g->name, g->records,
			        100 * g->mape);
	}
	if (sum->memory.records)
		fprintf(f, "\nmemory MAPE %.1f%% over %zu records with a measured peak\n",
		        100 * sum->memory.mape, sum->memory.records);
	else
		fprintf(f, "\nmemory: no record reports a measured peak (memory_mape null)\n");
}

static int print_speed_json(FILE *f, const char *data, const row *rows, size_t nrows,
                            const skip *skips, size_t nskips, const pp_validate_summary *sum)
{
	long long mark = ppi_alloc_failed(); /* a value dropped: out of memory */
	json_t *root = json_object();
	json_object_set_new(root, "data", json_string(data));
	json_t *arr = json_array();
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		if (r->speed.metric == PP_METRIC_NONE)
			continue;
		char src[PP_RUN_SOURCE_NAME_MAX];
		pp_run_source_name(r->info.title, src, sizeof src);
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
	json_object_set_new(root, "evaluated", json_integer((json_int_t)sum->all.records));
	json_object_set_new(root, "skipped", json_integer((json_int_t)(nskips + sum->unmeasured)));
	json_object_set_new(root, "mape", num_or_null(sum->all.mape));
	json_t *bys = json_object();
	for (size_t k = 0; k < sum->nsources; k++)
		if (sum->by_source[k].records)
			json_object_set_new(bys, sum->by_source[k].name,
			                    json_real(sum->by_source[k].mape));
	json_object_set_new(root, "mape_by_source", bys);
	json_t *byg = json_object();
	for (int b = 0; b < PP_VALIDATE_SCALES; b++)
		if (sum->by_scale[b].records)
			json_object_set_new(byg, sum->by_scale[b].name,
			                    json_real(sum->by_scale[b].mape));
	json_object_set_new(root, "mape_by_scale", byg);
	json_object_set_new(root, "memory_mape", num_or_null(sum->memory.mape));
	json_t *sk = json_array();
	for (size_t i = 0; i < nskips; i++)
		json_array_append_new(
		    sk, json_pack("{s:s,s:s}", "id", skips[i].id, "reason", skips[i].reason));
	json_object_set_new(root, "skipped_records", sk);
	return cli_json_dump(root, mark, f);
}

static void print_search_text(FILE *f, const row *rows, size_t nrows,
                              const pp_validate_summary *sum)
{
	fprintf(f, "%-52s %6s %10s %10s %7s  %s\n", "id", "gpus", "theirs s", "best s", "speedup",
	        "best plan");
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
	}
	fprintf(f,
	        "\n%zu records searched; the best plan is at least as fast as the authors' in %zu; "
	        "mean predicted speedup %.2fx\n",
	        sum->searched, sum->search_as_fast, sum->search_mean_speedup);
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
		if (!pp_runs_default_path(path, sizeof path)) {
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
	if (!rows || !skips) {
		free(rows);
		free(skips);
		pp_runs_free(runs);
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	size_t nrows = 0, nskips = 0;
	pp_skips why = {0};
	cli_progress pr;
	cli_progress_start(&pr, "validate", quiet, "%zu run records%s", n,
	                   search ? ", a search for each" : "");
	for (size_t i = 0; i < n; i++) {
		double t = cli_progress_elapsed(&pr);
		cli_progress_show(&pr, (double)i / (double)n, false, "%zu of %zu records (%.1f/s)",
		                  i, n, t > 0 ? (double)i / t : 0.0);
		row *r = &rows[nrows];
		st = pp_validate_record(runs, i, search, r, &err);
		if (st) {
			rc = cli_fail(st, &err);
			break;
		}
		if (r->skipped) {
			skip *k = &skips[nskips++];
			snprintf(k->id, sizeof k->id, "%s", pp_runs_id(runs, i));
			snprintf(k->reason, sizeof k->reason, "%s", r->skip_reason);
			pp_skips_add(&why, r->skip_reason);
			continue;
		}
		nrows++;
	}
	cli_progress_show(&pr, 1, true, "%zu of %zu records", n, n);
	cli_progress_end(&pr);
	if (rc == EXIT_ANSWERED) {
		/* Usable: evaluated, and for throughput, measured. */
		size_t usable = !memory && !search ? pp_validate_usable(rows, nrows, &why) : nrows;
		if (usable == 0) {
			char text[1024];
			pp_skips_format(&why, text, sizeof text);
			cli_message("validate: no usable record in %s: %s", data, text);
			rc = EXIT_BADINPUT;
		}
	}
	pp_validate_summary sum;
	if (rc == EXIT_ANSWERED && (st = pp_validate_summarise(rows, nrows, &sum, &err)))
		rc = cli_fail(st, &err);
	cli_out out;
	if (rc == EXIT_ANSWERED && (rc = cli_out_open(&out, output)) == EXIT_ANSWERED) {
		FILE *f = out.f;
		int wr = 0;
		if (search)
			print_search_text(f, rows, nrows, &sum);
		else if (!memory && json)
			wr = print_speed_json(f, data, rows, nrows, skips, nskips, &sum);
		else if (!memory)
			print_speed_text(f, data, rows, nrows, skips, nskips, &sum);
		else if (json)
			wr = print_json(f, data, rows, nrows, skips, nskips, &sum);
		else
			print_text(f, data, rows, nrows, skips, nskips, &sum);
		rc = cli_out_close(&out, cli_report_ok(wr, f));
	}
	free(rows);
	free(skips);
	pp_runs_free(runs);
	return rc;
}
