/*
 * paraplan calibrate: fit each GPU's efficiency parameters (and its systems'
 * network efficiencies) to the published runs measured on it (pp_calib_fit),
 * and print them for the presets; or, --cross-validate source, leave one
 * source out (pp_calib_cross_validate, rendered by report's
 * PP_RESULT_CROSS_VALIDATION).  --nccl-tests and --step-times are
 * cli/calibrate_system.c's.
 */
#include <limits.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "paraplan/calib.h"

#define MAX_GPUS 16

typedef struct calibrate_args {
	const char *data, *system, *output, *steps, *memory;
	const char *gpus[MAX_GPUS];
	size_t ngpus;
	bool cv, cv_source, json, quiet;
	const pp_format_type *format;        /* --format, --json; NULL: text */
	const char *logs[CLI_NCCL_MAX_LOGS]; /* --nccl-tests, and the operands after it */
	size_t nlogs;
	const char *operand; /* the first argument that is not an option */
} calibrate_args;

static void calibrate_usage(FILE *f)
{
	cli_usage(f, "calibrate"); /* docs/usage/calibrate.txt */
}

/* --gpu, --nccl-tests (and the operands after it) add to a list of at most `max`. */
static int add(const char **list, size_t *n, size_t max, const char *what, const char *v)
{
	if (*n == max) {
		cli_message("calibrate: at most %zu %s", max, what);
		return EXIT_BADINPUT;
	}
	list[(*n)++] = v;
	return 0;
}

static int list_flag(void *ctx, const char *verb, const char *name, const char *v)
{
	calibrate_args *a = ctx;
	(void)verb;
	if (strcmp(name, "gpu") == 0)
		return add(a->gpus, &a->ngpus, MAX_GPUS, "--gpu options", v);
	return add(a->logs, &a->nlogs, CLI_NCCL_MAX_LOGS, "nccl-tests logs", v);
}

/* --cross-validate record|source: the last one given wins. */
static int cv_flag(void *ctx, const char *verb, const char *name, const char *v)
{
	calibrate_args *a = ctx;
	(void)verb;
	(void)name;
	a->cv = strcmp(v, "record") == 0;
	a->cv_source = strcmp(v, "source") == 0;
	if (a->cv || a->cv_source)
		return 0;
	cli_message("calibrate: --cross-validate takes record or source, not '%s'", v);
	return EXIT_BADINPUT;
}

/* --format NAME, which undoes an earlier --json (the last of the two wins):
 * after the flags, json means --json came last, and its format is json. */
static int format_flag(void *ctx, const char *verb, const char *name, const char *v)
{
	calibrate_args *a = ctx;
	(void)verb;
	(void)name;
	a->json = false;
	return cli_format_flag(v, &a->format);
}

/*
 * calibrate's flags, of its three modes (cli_args_parse: exact names,
 * -h/--help).  A flag given twice: the last one wins, except --gpu and
 * --nccl-tests, which add.  A flag of another mode is refused
 * (pp_calib_mode_of), never ignored.  A new flag: a row, a field of
 * calibrate_args and of pp_calib_given (src/calib/mode.c), and a line in
 * docs/usage/calibrate.txt.
 */
#define AT(m) offsetof(calibrate_args, m)
static const cli_flag calibrate_flags[] = {
    CLI_ROW("data", CLI_F_STR, AT(data)),
    CLI_ROW("gpu", CLI_F_CALL, 0, .call = list_flag),
    CLI_ROW("cross-validate", CLI_F_CALL, 0, .call = cv_flag),
    CLI_ROW("json", CLI_F_SET, AT(json)),
    CLI_ROW("quiet", CLI_F_SET, AT(quiet)),
    CLI_ROW("nccl-tests", CLI_F_CALL, 0, .call = list_flag),
    CLI_ROW("system", CLI_F_STR, AT(system)),
    CLI_ROW("output", CLI_F_STR, AT(output)),
    CLI_ROW("step-times", CLI_F_STR, AT(steps)),
    CLI_ROW("memory", CLI_F_STR, AT(memory)),
    CLI_ROW("format", CLI_F_CALL, 0, .call = format_flag),
    CLI_END};
#undef AT

/* "--nccl-tests A B C": the operands are logs too (checked in calibrate_mode). */
static int calibrate_operand(const char *arg, void *ctx)
{
	calibrate_args *a = ctx;
	if (!a->operand)
		a->operand = arg;
	return a->nlogs ? add(a->logs, &a->nlogs, CLI_NCCL_MAX_LOGS, "nccl-tests logs", arg) : 0;
}

/* The mode the flags ask for (pp_calib_mode_of), or -1 after one message. */
static int calibrate_mode(const calibrate_args *a)
{
	const pp_calib_given g = {a->data,  a->ngpus,  a->cv || a->cv_source,
	                          a->json,  a->format, a->nlogs,
	                          a->steps, a->memory, a->system,
	                          a->output};
	pp_calib_mode mode;
	pp_error err;
	if (cli_fail(pp_calib_mode_of(&g, &mode, &err), &err))
		return -1;
	if (mode != PP_CALIB_MODE_NCCL && a->operand) {
		cli_message("calibrate: unexpected argument '%s'", a->operand);
		return -1;
	}
	return (int)mode;
}

/* The fits' progress on a terminal and each fit's report (pp_calib_watch):
 * the GPU being fitted is gpus[done]; its report is read from the converged
 * fit, and rendered with its leave-one-out. */
typedef struct fit_view {
	cli_progress pr;
	const calibrate_args *a;
	size_t done;
	pp_fit_report fr;
	pp_fit_report_data d;
} fit_view;

static void on_sweep(const pp_fit *f, void *ctx)
{
	fit_view *v = ctx;
	cli_progress_show(&v->pr, 0, false, "%s: %zu records, sweep %d, MAPE %.1f%%",
	                  v->a->gpus[v->done], pp_fit_records(f), pp_fit_iterations(f),
	                  100 * pp_fit_mape(f));
}

static void on_held_out(const pp_fit *f, size_t k, size_t n, void *ctx)
{
	fit_view *v = ctx;
	(void)f;
	cli_progress_show(&v->pr, (double)k / (double)n, false,
	                  "%s: leave-one-out, record %zu of %zu", v->a->gpus[v->done], k + 1, n);
}

static void on_fitted(const pp_fit *f, const char *gpu, void *ctx)
{
	fit_view *v = ctx;
	cli_progress_end(&v->pr);
	v->fr = pp_fit_report_of(f, gpu, &v->d);
}

/* A GPU done: its report on standard output (a write error: cli_finish's). */
static void on_done(const char *gpu, double loo_sum, size_t loo_n, void *ctx)
{
	fit_view *v = ctx;
	(void)gpu;
	cli_progress_end(&v->pr);
	v->fr.loo = v->a->cv;
	v->fr.loo_sum = loo_sum;
	v->fr.loo_n = loo_n;
	cli_render(v->a->format, &(pp_result){.kind = PP_RESULT_FIT, .fit = &v->fr}, stdout);
	v->done++;
}

/* --cross-validate source: the library's leave one source out, rendered. */
static int cv_source(const pp_runs *runs, const char *data, const calibrate_args *a)
{
	pp_cv_result res;
	pp_error err;
	pp_status st = pp_calib_cross_validate(runs, a->gpus, (int)a->ngpus, &res, &err);
	if (st)
		return cli_fail(st, &err);
	pp_cv_report cv = {data, &res};
	pp_result r = {.kind = PP_RESULT_CROSS_VALIDATION, .cv = &cv};
	int rc = cli_render_to(NULL, a->format, &r);
	pp_cv_result_free(&res);
	return rc;
}

/* The fits of `a` (its GPUs; none given: every GPU some usable record of
 * `data` ran on) over `runs`, reported.  The exit code. */
static int fit_mode(const pp_runs *runs, const char *data, calibrate_args *a)
{
	pp_error err;
	if (a->ngpus == 0) {
		/* Every GPU some record ran on, in order of appearance. */
		static char names[MAX_GPUS][PP_NAME_MAX];
		pp_skips why = {0};
		pp_status st = pp_runs_gpus(runs, names, MAX_GPUS, &a->ngpus, &why, &err);
		if (st)
			return cli_fail(st, &err);
		for (size_t k = 0; k < a->ngpus; k++)
			a->gpus[k] = names[k];
		if (a->ngpus == 0) {
			char text[1024];
			pp_skips_format(&why, text, sizeof text);
			cli_message("calibrate: no usable record in %s: %s", data, text);
			return EXIT_BADINPUT;
		}
	}
	if (a->cv_source)
		return cv_source(runs, data, a);
	fit_view v = {.a = a};
	cli_progress_start(&v.pr, "calibrate", a->quiet, "fitting %zu GPU%s%s", a->ngpus,
	                   a->ngpus == 1 ? "" : "s", a->cv ? ", leave-one-out" : "");
	const pp_calib_watch w = {{on_sweep, on_held_out, &v}, on_fitted, on_done};
	pp_fit_report all = {.loo = a->cv};
	pp_status st =
	    pp_calib_fit(runs, a->gpus, a->ngpus, a->cv, &w, &all.loo_sum, &all.loo_n, &err);
	cli_progress_end(&v.pr);
	int rc = st ? cli_fail(st, &err) : EXIT_ANSWERED;
	cli_render(a->format, &(pp_result){.kind = PP_RESULT_FIT, .fit = &all}, stdout);
	return rc;
}

/* calibrate's flags into `a` and its mode (*mode): CLI_CONTINUE or the exit code. */
static int calibrate_parse(int argc, char **argv, calibrate_args *a, int *mode)
{
	memset(a, 0, sizeof *a);
	cli_args args = {"calibrate", calibrate_usage, calibrate_flags, a, calibrate_operand};
	int rc = cli_args_parse(argc, argv, &args);
	if (rc != CLI_CONTINUE)
		return rc;
	if (a->json)
		a->format = pp_format_find("json");
	if ((*mode = calibrate_mode(a)) < 0)
		return EXIT_BADINPUT;
	if (*mode == PP_CALIB_MODE_FIT && a->json && !a->cv_source) {
		cli_message("calibrate: --json needs --cross-validate source");
		return EXIT_BADINPUT;
	}
	if (*mode == PP_CALIB_MODE_FIT &&
	    (rc = cli_format_check("calibrate", a->format,
	                           a->cv_source ? PP_RESULT_CROSS_VALIDATION : PP_RESULT_FIT)))
		return rc;
	return CLI_CONTINUE;
}

static calibrate_args args_store; /* 64 log paths: not on the stack */

int cli_calibrate_parse_only(int argc, char **argv)
{
	int mode;
	int rc = calibrate_parse(argc, argv, &args_store, &mode);
	return rc == CLI_CONTINUE ? 0 : rc;
}

int cli_calibrate(int argc, char **argv)
{
	int mode;
	int rc = calibrate_parse(argc, argv, &args_store, &mode);
	if (rc != CLI_CONTINUE)
		return rc;
	calibrate_args *a = &args_store;
	if (mode == PP_CALIB_MODE_STEPS || mode == PP_CALIB_MODE_MEMORY)
		return cli_calibrate_steps(a->steps, a->memory, a->output);
	if (mode == PP_CALIB_MODE_NCCL)
		return cli_calibrate_nccl(a->logs, a->nlogs, a->system, a->output);
	const char *data;
	char path[PATH_MAX + 64];
	pp_runs *runs;
	pp_error err;
	pp_status st = pp_runs_path(a->data, "calibrate", path, sizeof path, &data, &err);
	if (st || (st = pp_runs_load(data, &runs, &err)))
		return cli_fail(st, &err);
	rc = fit_mode(runs, data, a);
	pp_runs_free(runs);
	return rc;
}
