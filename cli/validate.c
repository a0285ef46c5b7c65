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
 * The judging and the summary are the library's (pp_validate_run over the
 * records: src/calib/validate_run.c); this file parses the flags, shows its
 * progress and renders the result.
 */
#include <limits.h>

#include "cli.h"
#include "options.h"
#include "paraplan/calib.h"

typedef struct validate_args {
	const char *data, *output, *steps;
	bool json, memory, search, quiet;
	const pp_format_type *format; /* --format, --json; NULL: text */
} validate_args;

/* --format NAME, which undoes an earlier --json (the last of the two wins):
 * after the flags, json means --json came last, and its format is json. */
static int format_flag(void *ctx, const char *verb, const char *name, const char *v)
{
	validate_args *a = ctx;
	(void)verb;
	(void)name;
	a->json = false;
	return cli_format_flag(v, &a->format);
}

/*
 * validate's flags (cli_args_parse: exact names, -h/--help; a flag given
 * twice: the last one wins).  A new flag: a row here, a field in
 * validate_args, a line in docs/usage/validate.txt, and a refusal in
 * validate_check if it does not combine.
 */
#define AT(m) offsetof(validate_args, m)
static const cli_flag validate_flags[] = {CLI_ROW("data", CLI_F_STR, AT(data)),
                                          CLI_ROW("memory", CLI_F_SET, AT(memory)),
                                          CLI_ROW("steps", CLI_F_STR, AT(steps)),
                                          CLI_ROW("search", CLI_F_SET, AT(search)),
                                          CLI_ROW("json", CLI_F_SET, AT(json)),
                                          CLI_ROW("format", CLI_F_CALL, 0, .call = format_flag),
                                          CLI_ROW("output", CLI_F_STR, AT(output)),
                                          CLI_ROW("quiet", CLI_F_SET, AT(quiet)),
                                          CLI_END};
#undef AT

/* The result the flags ask for. */
static pp_result_kind validate_kind(const validate_args *a)
{
	return a->search   ? PP_RESULT_VALIDATE_SEARCH
	       : a->memory ? PP_RESULT_VALIDATE_MEMORY
	                   : PP_RESULT_VALIDATE;
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
	return cli_format_check("validate", a->format, validate_kind(a));
}

static void validate_usage(FILE *f)
{
	cli_usage(f, "validate"); /* docs/usage/validate.txt */
}

/* The progress line before record `done` of `total` (pp_validate_watch). */
static void validate_progress(void *ctx, size_t done, size_t total)
{
	cli_progress *pr = ctx;
	double t = cli_progress_elapsed(pr);
	cli_progress_show(pr, (double)done / (double)total, false, "%zu of %zu records (%.1f/s)",
	                  done, total, t > 0 ? (double)done / t : 0.0);
}

/* validate's flags into `a`: CLI_CONTINUE or the exit code. */
static int validate_parse(int argc, char **argv, validate_args *a)
{
	cli_args args = {"validate", validate_usage, validate_flags, a, NULL};
	int rc = cli_args_parse(argc, argv, &args);
	a->memory = a->memory || a->steps; /* --steps: measured peaks, a memory check */
	if (a->json)
		a->format = pp_format_find("json");
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
	const char *data;
	char path[PATH_MAX + 64];
	pp_error err;
	pp_status st = pp_runs_path(a.data, "validate", path, sizeof path, &data, &err);
	if (st || (rc = cli_out_check("validate", "--output", a.output)))
		return st ? cli_fail(st, &err) : rc;
	pp_runs *runs = NULL;
	if ((st = pp_runs_load(data, &runs, &err)))
		return cli_fail(st, &err);
	size_t n = pp_runs_count(runs);
	cli_progress pr;
	cli_progress_start(&pr, "validate", a.quiet, "%zu run records%s", n,
	                   a.search ? ", a search for each" : "");
	pp_validate_watch watch = {validate_progress, &pr};
	pp_validate_result v;
	pp_memory_steps ms = {0};
	if ((st = pp_validate_run(runs, a.search, !a.memory && !a.search, &watch, &v, &err)) ||
	    (a.steps && (st = pp_memory_steps_load(a.steps, false, &ms, &err))))
		rc = cli_fail(st, &err);
	cli_progress_show(&pr, 1, true, "%zu of %zu records", n, n);
	cli_progress_end(&pr);
	if (rc == EXIT_ANSWERED && v.usable == 0) {
		char text[1024];
		pp_skips_format(&v.why, text, sizeof text);
		cli_message("validate: no usable record in %s: %s", data, text);
		rc = EXIT_BADINPUT;
	}
	if (rc == EXIT_ANSWERED) {
		pp_validate_report r = {data,     v.rows,     v.nrows,   v.skips,
		                        v.nskips, &v.summary, &ms.check, a.steps};
		pp_result res = {.kind = validate_kind(&a), .validate = &r};
		rc = cli_render_to(a.output, a.format, &res);
	}
	pp_validate_result_free(&v);
	pp_memory_steps_free(&ms);
	pp_runs_free(runs);
	return rc;
}
