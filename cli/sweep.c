/*
 * paraplan sweep: one plan along one axis (GPUs, dp or micro-batch) ->
 * pp_sweep_run -> a format of report's table (text, CSV, JSON, ...).  Takes
 * every estimate flag.
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"

enum {
	OPT_OVER = CLI_OPT_VERB,
	OPT_VALUES,
	OPT_USD_PER_GPU,
	OPT_REPLICA_BATCH,
	OPT_CSV,
	OPT_HTML,
	OPT_SVG,
	OPT_QUIET,
	OPT_DEADLINE,
	OPT_BUDGET,
	OPT_MTBF,
	OPT_CKPT_GBPS,
	OPT_RESTART,
	OPT_CKPT_ASYNC
};

static const struct option sweep_opts[] = {
    {"over", required_argument, 0, OPT_OVER},
    {"values", required_argument, 0, OPT_VALUES},
    {"usd-per-gpu", required_argument, 0, OPT_USD_PER_GPU},
    {"replica-batch", required_argument, 0, OPT_REPLICA_BATCH},
    {"csv", no_argument, 0, OPT_CSV},
    {"html", required_argument, 0, OPT_HTML},
    {"svg", required_argument, 0, OPT_SVG},
    {"quiet", no_argument, 0, OPT_QUIET},
    {"deadline-days", required_argument, 0, OPT_DEADLINE},
    {"budget-usd", required_argument, 0, OPT_BUDGET},
    {"mtbf-gpu-hours", required_argument, 0, OPT_MTBF},
    {"ckpt-write-gbps", required_argument, 0, OPT_CKPT_GBPS},
    {"restart-min", required_argument, 0, OPT_RESTART},
    {"ckpt-async", required_argument, 0, OPT_CKPT_ASYNC},
    {0, 0, 0, 0}};

typedef struct sweep_args {
	const char *over, *values;
	double usd_per_gpu;
	long long replica_batch;
	bool csv;
	cli_charts charts; /* --html, --svg */
	bool quiet;        /* --quiet: no progress on a terminal */
	cli_inverse inv;   /* --deadline-days, --budget-usd, goodput flags */
} sweep_args;

static void sweep_usage(FILE *f)
{
	cli_usage(f, "sweep"); /* docs/usage/sweep.txt */
}

/* pp_sweep_opts.progress: points done, their rate. */
static void sweep_progress(void *ctx, size_t done, size_t total)
{
	cli_progress *p = ctx;
	double t = cli_progress_elapsed(p);
	cli_progress_show(p, total ? (double)done / (double)total : 0, done == total,
	                  "%zu of %zu points (%.1f/s)", done, total,
	                  t > 0 ? (double)done / t : 0.0);
}

static int sweep_flag(int code, const char *v, void *ctx)
{
	sweep_args *a = ctx;
	switch (code) {
	case OPT_OVER: a->over = v; return 0;
	case OPT_VALUES: a->values = v; return 0;
	case OPT_USD_PER_GPU: return cli_parse_price("usd-per-gpu", v, 1e7, &a->usd_per_gpu);
	case OPT_REPLICA_BATCH:
		return cli_parse_ll("replica-batch", v, 1, 1000000000, &a->replica_batch);
	case OPT_CSV: a->csv = true; return 0;
	case OPT_QUIET: a->quiet = true; return 0;
	case OPT_DEADLINE:
	case OPT_BUDGET:
	case OPT_MTBF:
	case OPT_CKPT_GBPS:
	case OPT_RESTART:
	case OPT_CKPT_ASYNC:
		return cli_inverse_flag("sweep", sweep_opts[code - CLI_OPT_VERB].name, v, &a->inv);
	case OPT_HTML:
	case OPT_SVG: return cli_charts_flag(&a->charts, "sweep", code == OPT_SVG, v);
	default: return EXIT_INTERNAL;
	}
}

/*
 * The options into `a`, `o`, the axis and its values (malloc'ed into *values,
 * *n of them, when the result is CLI_CONTINUE), checked for form: CLI_CONTINUE
 * or an exit code.  Reads no file.
 */
static int sweep_parse(int argc, char **argv, sweep_args *a, cli_opts *o, pp_sweep_axis *axis,
                       long long **values, size_t *n)
{
	*a = (sweep_args){0};
	pp_goodput_params_init(&a->inv.gp);
	*values = NULL;
	*n = 0;
	const cli_verb verb = {"sweep", sweep_usage, sweep_opts, sweep_flag, a, NULL, NULL};
	int rc = cli_opts_parse(argc, argv, &verb, o);
	if (rc != CLI_CONTINUE)
		return rc;
	if (!a->over || !a->values) {
		cli_message("sweep: %s is required (see 'paraplan sweep --help')",
		            !a->over ? "--over" : "--values");
		return EXIT_BADINPUT;
	}
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_sweep_axis_parse(a->over, "--over", axis, &err);
	if (st)
		return cli_fail(st, &err);
	if (a->csv && o->json) {
		cli_message("sweep: --csv and --json exclude each other");
		return EXIT_BADINPUT;
	}
	if (a->csv && o->format && o->format != pp_format_find("csv")) {
		cli_message("sweep: --csv and --format %s exclude each other", o->format->name);
		return EXIT_BADINPUT;
	}
	if (a->csv) /* --csv: --format csv */
		o->format = pp_format_find("csv");
	rc = cli_inverse_check("sweep", &a->inv, o->job.train_tokens);
	if (rc == CLI_CONTINUE) {
		cli_message("sweep: the goodput flags make the days of --deadline-days and "
		            "--budget-usd goodput-aware: give one of them");
		return EXIT_BADINPUT;
	}
	if (rc)
		return rc;
	if (cli_inverse_asked(&a->inv) && a->csv) {
		cli_message("sweep: --csv has no place for the answer of --deadline-days or "
		            "--budget-usd: use the table or --json");
		return EXIT_BADINPUT;
	}
	if ((rc = cli_format_check("sweep", o->format,
	                           cli_inverse_asked(&a->inv) ? PP_RESULT_SWEEP_INVERSE
	                                                      : PP_RESULT_SWEEP)) ||
	    (rc = cli_charts_format(&a->charts, "sweep", o)))
		return rc;
	/* The swept quantity comes from --values only. */
	const char *clash = *axis == PP_SWEEP_GPUS && o->gpus           ? "--gpus"
	                    : *axis == PP_SWEEP_GPUS && o->plan.dp      ? "--dp"
	                    : *axis == PP_SWEEP_DP && o->gpus           ? "--gpus"
	                    : *axis == PP_SWEEP_DP && o->plan.dp        ? "--dp"
	                    : *axis == PP_SWEEP_MBS && o->plan.mbs != 1 ? "--mbs"
	                                                                : NULL;
	if (clash) {
		cli_message("sweep: %s is set by --over %s; leave it out", clash, a->over);
		return EXIT_BADINPUT;
	}
	if (*axis == PP_SWEEP_MBS && !o->gpus && !o->plan.dp) {
		cli_message("sweep: --over mbs needs --gpus or --dp");
		return EXIT_BADINPUT;
	}
	if ((rc = cli_opts_require(o, "sweep", false, a->replica_batch == 0)) ||
	    (rc = cli_overlap_check("sweep", o)))
		return rc;
	if (a->replica_batch > 0 && o->have_gbs) {
		cli_message("sweep: --gbs and --replica-batch exclude each other");
		return EXIT_BADINPUT;
	}
	long long *v = malloc(PP_SWEEP_MAX_POINTS * sizeof *v);
	if (!v) {
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	long long max_value = *axis == PP_SWEEP_MBS ? 1 << 20 : 10000000;
	st = pp_sweep_parse_values(a->values, "--values", max_value, v, PP_SWEEP_MAX_POINTS, n,
	                           &err);
	if (st) {
		free(v);
		return cli_fail(st, &err);
	}
	*values = v;
	return CLI_CONTINUE;
}

int cli_sweep_parse_only(int argc, char **argv)
{
	sweep_args a;
	cli_opts o;
	pp_sweep_axis axis;
	long long *values;
	size_t n;
	int rc = sweep_parse(argc, argv, &a, &o, &axis, &values, &n);
	free(values);
	return rc == CLI_CONTINUE ? EXIT_ANSWERED : rc;
}

/* The sweep and the answer to --deadline-days / --budget-usd over its points
 * rendered in `format` (PP_RESULT_SWEEP_INVERSE).  The renderer's return. */
static int sweep_inverse(const pp_sweep *sw, const cli_inverse *inv, const pp_format_type *format,
                         FILE *f)
{
	pp_inverse_query asked = inv->q, q;
	asked.goodput = inv->goodput;
	pp_inverse_candidate *c;
	pp_inverse_result res;
	pp_error err;
	pp_error_clear(&err);
	if (pp_sweep_inverse(sw, &asked, &q, &c, &res, &err))
		return -1;
	pp_inverse_report iv = {&q, c, sw->nrows, &res, pp_sweep_axis_name(sw->axis)};
	pp_result r = {.kind = PP_RESULT_SWEEP_INVERSE, .sweep = sw, .inverse = &iv};
	int wr = cli_render(format, &r, f);
	free(c);
	return wr;
}

int cli_sweep(int argc, char **argv)
{
	sweep_args a;
	cli_opts o;
	pp_sweep_axis axis;
	long long *values;
	size_t n;
	int rc = sweep_parse(argc, argv, &a, &o, &axis, &values, &n);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc = cli_out_check("sweep", "--output", a.charts.as_report ? NULL : o.output)) ||
	    (rc = cli_charts_check("sweep", &a.charts))) {
		free(values);
		return rc;
	}
	pp_error err;
	pp_error_clear(&err);
	pp_status st;
	pp_model model;
	pp_system sys;
	if ((rc = cli_opts_inputs(&o, &model, &sys)) ||
	    (rc = cli_inverse_price("sweep", &a.inv, &sys))) {
		free(values);
		return rc;
	}
	pp_sweep_opts so;
	pp_sweep_opts_init(&so);
	so.axis = axis;
	so.values = values;
	so.nvalues = n;
	so.replica_batch = a.replica_batch;
	so.usd_per_gpu = a.usd_per_gpu;
	if (a.inv.goodput)
		so.goodput = &a.inv.gp;
	if (a.replica_batch > 0)
		o.job.global_batch = a.replica_batch; /* per point: x dp */
	pp_sweep *sw = pp_sweep_new(n);
	if (!sw) {
		free(values);
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	cli_progress pr;
	cli_progress_start(&pr, "sweep", a.quiet, "%zu points over %s", n, a.over);
	so.progress = sweep_progress;
	so.progress_ctx = &pr;
	st = pp_sweep_run(&model, &sys, &o.job, &o.plan, o.gpus, &so, sw, &err);
	cli_progress_end(&pr);
	free(values);
	if (st) {
		pp_sweep_free(sw);
		return cli_plan_fail(st, &err, &model);
	}
	if ((rc = cli_charts_emit(&a.charts, "sweep", NULL, NULL, NULL, NULL, sw, &model))) {
		pp_sweep_free(sw);
		return rc;
	}
	cli_out out;
	if (a.charts.as_report || (rc = cli_out_open(&out, o.output))) {
		pp_sweep_free(sw);
		return rc;
	}
	int wr;
	if (cli_inverse_asked(&a.inv))
		wr = sweep_inverse(sw, &a.inv, o.format, out.f);
	else
		wr =
		    cli_render(o.format, &(pp_result){.kind = PP_RESULT_SWEEP, .sweep = sw}, out.f);
	pp_sweep_free(sw);
	return cli_out_close(&out, cli_report_ok(wr, out.f));
}
