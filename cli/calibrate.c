/*
 * paraplan calibrate: fit each GPU's efficiency parameters (and its systems'
 * network efficiencies) to the published runs measured on it (pp_fit), and
 * print them for the presets.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "paraplan/calib.h"

/*
 * calibrate's flags, of its three modes (cli_args_parse: exact names,
 * -h/--help).  A flag given twice: the last one wins, except --gpu and
 * --nccl-tests, which add.  A flag of another mode is refused
 * (calibrate_mode), never ignored.  A new flag: a code, a row, a field of
 * calibrate_args, a case in calibrate_flag, the mode it belongs to in
 * calibrate_mode, and a line in docs/usage/calibrate.txt.
 */
enum {
	OPT_DATA = 256,
	OPT_GPU,
	OPT_CV,
	OPT_JSON,
	OPT_QUIET,
	OPT_NCCL,
	OPT_SYSTEM,
	OPT_OUTPUT,
	OPT_STEPS,
	OPT_KERNEL,
	OPT_FORMAT
};

static const struct option calibrate_opts[] = {{"data", required_argument, 0, OPT_DATA},
                                               {"gpu", required_argument, 0, OPT_GPU},
                                               {"cross-validate", required_argument, 0, OPT_CV},
                                               {"json", no_argument, 0, OPT_JSON},
                                               {"quiet", no_argument, 0, OPT_QUIET},
                                               {"nccl-tests", required_argument, 0, OPT_NCCL},
                                               {"system", required_argument, 0, OPT_SYSTEM},
                                               {"output", required_argument, 0, OPT_OUTPUT},
                                               {"step-times", required_argument, 0, OPT_STEPS},
                                               {"kernel-model", no_argument, 0, OPT_KERNEL},
                                               {"format", required_argument, 0, OPT_FORMAT},
                                               {"help", no_argument, 0, 0},
                                               {0, 0, 0, 0}};

#define MAX_GPUS 16

typedef struct calibrate_args {
	const char *data, *system, *output, *steps;
	const char *gpus[MAX_GPUS];
	int ngpus;
	bool cv, cv_source, json, quiet, kernel;
	const pp_format_type *format;        /* --format, --json; NULL: text */
	const char *logs[CLI_NCCL_MAX_LOGS]; /* --nccl-tests, and the operands after it */
	size_t nlogs;
	const char *operand; /* the first argument that is not an option */
} calibrate_args;

static void calibrate_usage(FILE *f)
{
	cli_usage(f, "calibrate"); /* docs/usage/calibrate.txt */
}

static int add_log(calibrate_args *a, const char *path)
{
	if (a->nlogs == CLI_NCCL_MAX_LOGS) {
		cli_message("calibrate: at most %d nccl-tests logs", CLI_NCCL_MAX_LOGS);
		return EXIT_BADINPUT;
	}
	a->logs[a->nlogs++] = path;
	return 0;
}

static int calibrate_flag(const struct option *opt, const char *v, void *ctx)
{
	calibrate_args *a = ctx;
	switch (opt->val) {
	case OPT_DATA: a->data = v; return 0;
	case OPT_GPU:
		if (a->ngpus == MAX_GPUS) {
			cli_message("calibrate: at most %d --gpu options", MAX_GPUS);
			return EXIT_BADINPUT;
		}
		a->gpus[a->ngpus++] = v;
		return 0;
	case OPT_CV:
		if (strcmp(v, "record") == 0) {
			a->cv = true;
			a->cv_source = false;
		} else if (strcmp(v, "source") == 0) {
			a->cv_source = true;
			a->cv = false;
		} else {
			cli_message("calibrate: --cross-validate takes record or source, not '%s'",
			            v);
			return EXIT_BADINPUT;
		}
		return 0;
	case OPT_JSON:
		a->json = true;
		a->format = pp_format_find("json");
		return 0;
	case OPT_FORMAT: {
		int rc = cli_format_flag(v, &a->format);
		a->json = false; /* --json given last: its own refusals */
		return rc;
	}
	case OPT_QUIET: a->quiet = true; return 0;
	case OPT_KERNEL: a->kernel = true; return 0;
	case OPT_NCCL: return add_log(a, v);
	case OPT_SYSTEM: a->system = v; return 0;
	case OPT_OUTPUT: a->output = v; return 0;
	case OPT_STEPS: a->steps = v; return 0;
	default: return EXIT_INTERNAL;
	}
}

/* "--nccl-tests A B C": the operands are logs too (checked in calibrate_mode). */
static int calibrate_operand(const char *arg, void *ctx)
{
	calibrate_args *a = ctx;
	if (!a->operand)
		a->operand = arg;
	return a->nlogs ? add_log(a, arg) : 0;
}

/* The mode the flags ask for ('f'it, 'n'ccl, 's'teps), or 0 after one message
 * naming a flag that mode cannot apply. */
static char calibrate_mode(const calibrate_args *a)
{
	char mode = a->steps ? 's' : a->nlogs ? 'n' : 'f';
	const char *bad = NULL;
	if (mode != 'f')
		bad = a->data                 ? "--data"
		      : a->ngpus              ? "--gpu"
		      : a->cv || a->cv_source ? "--cross-validate"
		      : a->json               ? "--json"
		      : a->format             ? "--format"
		      : a->kernel             ? "--kernel-model"
		                              : NULL;
	if (!bad && mode == 's')
		bad = a->nlogs ? "--nccl-tests" : a->system ? "--system" : NULL;
	if (!bad && mode == 'f')
		bad = a->system ? "--system" : a->output ? "--output" : NULL;
	if (bad) {
		cli_message("calibrate: %s does not apply %s (see 'paraplan calibrate --help')",
		            bad,
		            mode == 's'   ? "with --step-times"
		            : mode == 'n' ? "with --nccl-tests"
		                          : "without --nccl-tests or --step-times");
		return 0;
	}
	if (mode != 'n' && a->operand) {
		cli_message("calibrate: unexpected argument '%s'", a->operand);
		return 0;
	}
	return mode;
}

/* Progress of the fits on a terminal (cli_progress), and the GPU being fitted. */
static cli_progress fit_progress;
static const char *fit_gpu;

/* The progress line of the fits: after each sweep, before each record held out. */
static void on_sweep(const pp_fit *f, void *ctx)
{
	(void)ctx;
	cli_progress_show(&fit_progress, 0, false, "%s: %zu records, sweep %d, MAPE %.1f%%",
	                  fit_gpu, pp_fit_records(f), pp_fit_iterations(f), 100 * pp_fit_mape(f));
}

static void on_held_out(const pp_fit *f, size_t k, size_t n, void *ctx)
{
	(void)f;
	(void)ctx;
	cli_progress_show(&fit_progress, (double)k / (double)n, false,
	                  "%s: leave-one-out, record %zu of %zu", fit_gpu, k + 1, n);
}

static const pp_fit_watch fit_watch = {on_sweep, on_held_out, NULL};

static int fit_one(const pp_runs *runs, const char *gpu, bool kernel, bool cv,
                   const pp_format_type *format, double *cv_sum, size_t *cv_n)
{
	pp_fit *f;
	pp_error err;
	pp_status st = pp_fit_new(runs, gpu, &f, &err);
	if (!st && kernel && (st = pp_fit_kernel_model(f, &err)))
		pp_fit_free(f);
	if (st)
		return cli_fail(st, &err);
	fit_gpu = gpu;
	pp_fit_converge(f, &fit_watch);
	cli_progress_end(&fit_progress);
	if (!isfinite(pp_fit_mape_start(f))) {
		/* Nothing to fit to: never print "MAPE inf%". */
		cli_message("calibrate: no record measured on GPU '%s' has a throughput "
		            "measurement",
		            gpu);
		pp_fit_free(f);
		return EXIT_BADINPUT;
	}
	pp_fit_report_data d;
	pp_fit_report fr = pp_fit_report_of(f, gpu, kernel, &d);
	fr.loo = cv;
	if (cv) {
		pp_fit_leave_one_out(f, &fit_watch, &fr.loo_sum, &fr.loo_n);
		cli_progress_end(&fit_progress);
		*cv_sum += fr.loo_sum;
		*cv_n += fr.loo_n;
	}
	pp_result r = {.kind = PP_RESULT_FIT, .fit = &fr};
	cli_render(format, &r, stdout); /* a write error: cli_finish's, on stdout */
	pp_fit_free(f);
	return EXIT_ANSWERED;
}

/* calibrate's flags into `a` and its mode (*mode): CLI_CONTINUE or the exit code. */
static int calibrate_parse(int argc, char **argv, calibrate_args *a, char *mode)
{
	memset(a, 0, sizeof *a);
	cli_args args = {
	    "calibrate", calibrate_usage, calibrate_opts, calibrate_flag, calibrate_operand, a,
	    NULL};
	int rc = cli_args_parse(argc, argv, &args);
	if (rc != CLI_CONTINUE)
		return rc;
	*mode = calibrate_mode(a);
	if (!*mode)
		return EXIT_BADINPUT;
	/* --json without --cross-validate source is refused with its own words below */
	if (*mode == 'f' && !(a->json && !a->cv_source) &&
	    (rc = cli_format_check("calibrate", a->format,
	                           a->cv_source ? PP_RESULT_CROSS_VALIDATION : PP_RESULT_FIT)))
		return rc;
	return CLI_CONTINUE;
}

static calibrate_args args_store; /* 64 log paths: not on the stack */

int cli_calibrate_parse_only(int argc, char **argv)
{
	char mode;
	int rc = calibrate_parse(argc, argv, &args_store, &mode);
	return rc == CLI_CONTINUE ? 0 : rc;
}

int cli_calibrate(int argc, char **argv)
{
	char mode;
	int rc = calibrate_parse(argc, argv, &args_store, &mode);
	if (rc != CLI_CONTINUE)
		return rc;
	calibrate_args a = args_store;
	if (mode == 's')
		return cli_calibrate_steps(a.steps, a.output);
	if (mode == 'n')
		return cli_calibrate_nccl(a.logs, a.nlogs, a.system, a.output);
	const char *data = a.data;
	const char **systems = a.gpus;
	int nsys = a.ngpus;
	bool cv = a.cv;
	bool cv_source = a.cv_source, json = a.json, quiet = a.quiet, kernel = a.kernel;
	char path[PATH_MAX + 64];
	if (!data) {
		if (!pp_runs_default_path(path, sizeof path)) {
			cli_message(
			    "calibrate: no run records found: set PARAPLAN_SHARED_DIR or pass "
			    "--data FILE");
			return EXIT_BADINPUT;
		}
		data = path;
	}
	pp_runs *runs;
	pp_error err;
	pp_status st = pp_runs_load(data, &runs, &err);
	if (st)
		return cli_fail(st, &err);
	if (nsys == 0) {
		/* Every GPU some record ran on, in order of appearance. */
		static char names[MAX_GPUS][PP_NAME_MAX];
		pp_skips why = {0};
		size_t ng = 0;
		if ((st = pp_runs_gpus(runs, names, MAX_GPUS, &ng, &why, &err))) {
			pp_runs_free(runs);
			return cli_fail(st, &err);
		}
		for (nsys = 0; nsys < (int)ng; nsys++)
			systems[nsys] = names[nsys];
		if (nsys == 0) {
			char text[1024];
			pp_skips_format(&why, text, sizeof text);
			cli_message("calibrate: no usable record in %s: %s", data, text);
			pp_runs_free(runs);
			return EXIT_BADINPUT;
		}
	}
	if (json && !cv_source) {
		cli_message("calibrate: --json needs --cross-validate source");
		pp_runs_free(runs);
		return EXIT_BADINPUT;
	}
	if (cv_source) {
		int r = cli_calibrate_cv_source(runs, data, systems, nsys, kernel, a.format);
		pp_runs_free(runs);
		return r;
	}
	rc = EXIT_ANSWERED;
	double cv_sum = 0;
	size_t cv_n = 0;
	cli_progress_start(&fit_progress, "calibrate", quiet, "fitting %d GPU%s%s", nsys,
	                   nsys == 1 ? "" : "s", cv ? ", leave-one-out" : "");
	for (int k = 0; k < nsys && rc == EXIT_ANSWERED; k++)
		rc = fit_one(runs, systems[k], kernel, cv, a.format, &cv_sum, &cv_n);
	cli_progress_end(&fit_progress);
	pp_fit_report all = {.loo = cv, .loo_sum = cv_sum, .loo_n = cv_n};
	cli_render(a.format, &(pp_result){.kind = PP_RESULT_FIT, .fit = &all}, stdout);
	pp_runs_free(runs);
	return rc;
}
