/*
 * paraplan sweep: one plan along one axis (GPUs, dp or micro-batch) ->
 * pp_sweep_run -> a format of report's table (text, CSV, JSON, ...).  Takes
 * every estimate flag.
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"

typedef struct sweep_args {
	const char *over, *values;
	pp_sweep_opts so; /* --usd-per-gpu, --replica-batch; the axis and its points */
	long long points[PP_SWEEP_MAX_POINTS]; /* so.values */
	bool csv;
	cli_charts charts; /* --html, --svg */
	bool quiet;        /* --quiet: no progress on a terminal */
	cli_inverse inv;   /* --deadline-days, --budget-usd, goodput flags */
} sweep_args;

#define AT(m) offsetof(sweep_args, m)
static const cli_flag sweep_flags[] = {
    CLI_ROW("over", CLI_F_STR, AT(over)),
    CLI_ROW("values", CLI_F_STR, AT(values)),
    CLI_ROW("usd-per-gpu", CLI_F_PRICE, AT(so.usd_per_gpu), .hi = 1e7),
    CLI_ROW("replica-batch", CLI_F_LL, AT(so.replica_batch), .lo = 1, .hi = 1000000000),
    CLI_ROW("csv", CLI_F_SET, AT(csv)),
    CLI_PAGE_FLAGS(sweep_args, charts),
    CLI_ROW("quiet", CLI_F_SET, AT(quiet)),
    CLI_ROW("checkpoint", CLI_F_STR, AT(so.checkpoint)),
    CLI_INVERSE_FLAGS(sweep_args, inv),
    CLI_END};
#undef AT

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

/*
 * The options into `a` (the axis and its points into a->so) and `o`, checked
 * for form: CLI_CONTINUE or an exit code.  Reads no file.
 */
static int sweep_parse(int argc, char **argv, sweep_args *a, cli_opts *o)
{
	memset(a, 0, sizeof *a);
	pp_sweep_opts_init(&a->so);
	pp_goodput_params_init(&a->inv.gp);
	const cli_verb verb = {"sweep", sweep_usage, sweep_flags, a, NULL};
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
	pp_status st = pp_sweep_axis_parse(a->over, "--over", &a->so.axis, &err);
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
	/* The swept quantity comes from --values only (the flags alone: no
	 * model read yet). */
	if ((st = pp_sweep_check(a->so.axis, &o->plan, o->gpus, &err)))
		return cli_plan_fail(st, &err, &(pp_model){.name = ""});
	if ((rc = cli_opts_require(o, "sweep", false, a->so.replica_batch == 0)) ||
	    (rc = cli_overlap_check("sweep", o)))
		return rc;
	if (a->so.replica_batch > 0 && o->have_gbs) {
		cli_message("sweep: --gbs and --replica-batch exclude each other");
		return EXIT_BADINPUT;
	}
	long long max_value = a->so.axis == PP_SWEEP_MBS ? 1 << 20 : 10000000;
	st = pp_sweep_parse_values(a->values, "--values", max_value, a->points, PP_SWEEP_MAX_POINTS,
	                           &a->so.nvalues, &err);
	a->so.values = a->points;
	return st ? cli_fail(st, &err) : CLI_CONTINUE;
}

int cli_sweep_parse_only(int argc, char **argv)
{
	sweep_args *a = malloc(sizeof *a);
	if (!a)
		return EXIT_INTERNAL;
	cli_opts o;
	int rc = sweep_parse(argc, argv, a, &o);
	free(a);
	return rc == CLI_CONTINUE ? EXIT_ANSWERED : rc;
}

/* The sweep (and the answer to --deadline-days / --budget-usd over its
 * points, PP_RESULT_SWEEP_INVERSE) rendered into --output.  0 or an exit code. */
static int sweep_write(const pp_sweep *sw, const cli_inverse *inv, const cli_opts *o)
{
	if (!cli_inverse_asked(inv))
		return cli_render_to(o->output, o->format,
		                     &(pp_result){.kind = PP_RESULT_SWEEP, .sweep = sw});
	pp_inverse_query asked = inv->q, q;
	asked.goodput = inv->goodput;
	pp_inverse_candidate *c;
	pp_inverse_result res;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_sweep_inverse(sw, &asked, &q, &c, &res, &err);
	pp_inverse_report iv = {&q, c, sw->nrows, &res, pp_sweep_axis_name(sw->axis)};
	pp_result r = {.kind = PP_RESULT_SWEEP_INVERSE, .sweep = sw, .inverse = &iv};
	int rc = st ? cli_fail(st, &err) : cli_render_to(o->output, o->format, &r);
	free(c);
	return rc;
}

/* The sweep of `a`, with progress: 0 or an exit code after one message. */
static int sweep_run(sweep_args *a, cli_opts *o)
{
	pp_model model;
	pp_system sys;
	int rc;
	if ((rc = cli_opts_inputs(o, &model, &sys)) ||
	    (rc = cli_inverse_price("sweep", &a->inv, &sys)))
		return rc;
	a->so.goodput = a->inv.goodput ? &a->inv.gp : NULL;
	if (a->so.replica_batch > 0)
		o->job.global_batch = a->so.replica_batch; /* per point: x dp */
	pp_sweep *sw = pp_sweep_new(a->so.nvalues);
	if (!sw) {
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	pp_error err;
	pp_error_clear(&err);
	pp_study_comm *comm; /* mpirun's ranks (NULL: this process); rank 0 writes */
	pp_status st = pp_study_comm_open(&comm, &err);
	bool root = pp_study_comm_root(comm);
	cli_progress pr;
	cli_progress_start(&pr, "sweep", a->quiet || !root, "%zu points over %s on %d rank(s)",
	                   a->so.nvalues, a->over, pp_study_comm_size(comm));
	pr.on |= comm && root && !a->quiet; /* mpirun pipes stderr: no tty to ask */
	a->so.progress = sweep_progress;
	a->so.progress_ctx = &pr;
	a->so.comm = comm;
	if (!st)
		st = pp_sweep_run(&model, &sys, &o->job, &o->plan, o->gpus, &a->so, sw, &err);
	cli_progress_end(&pr);
	rc = !root ? (st == PP_EINPUT ? EXIT_BADINPUT
	              : st            ? EXIT_INTERNAL
	                              : 0)
	     : st  ? cli_plan_fail(st, &err, &model)
	           : cli_charts_emit(&a->charts, "sweep", NULL, NULL, NULL, NULL, sw, &model);
	if (!rc && root && !a->charts.as_report)
		rc = sweep_write(sw, &a->inv, o);
	pp_sweep_free(sw);
	pp_study_comm_close(comm);
	return rc;
}

int cli_sweep(int argc, char **argv)
{
	sweep_args *a = malloc(sizeof *a); /* its points: 32 KiB */
	if (!a) {
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	cli_opts o;
	int rc = sweep_parse(argc, argv, a, &o);
	a->so.args_hash = pp_study_args_hash(argc, argv, "--checkpoint", "--quiet");
	if (rc == CLI_CONTINUE &&
	    !(rc = cli_out_check("sweep", "--output", a->charts.as_report ? NULL : o.output)) &&
	    !(rc = cli_charts_check("sweep", &a->charts)))
		rc = sweep_run(a, &o);
	free(a);
	return rc;
}
