/*
 * paraplan sweep: one plan along one axis (GPUs, dp or micro-batch) ->
 * pp_sweep_run -> a format of report's table (text, CSV, JSON, ...).  Takes
 * every estimate flag.
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "paraplan/search_parse.h"

typedef struct sweep_args {
	const char *over, *values;
	pp_sweep_opts so; /* --usd-per-gpu, --replica-batch; the axis and its points */
	long long points[PP_SWEEP_MAX_POINTS]; /* so.values */
	bool csv;
	cli_charts charts;   /* --html, --svg */
	bool quiet;          /* --quiet: no progress on a terminal */
	cli_inverse inv;     /* --deadline-days, --budget-usd, goodput flags */
	pp_study_request rq; /* a study: --vary, --search, --model A,B */
} sweep_args;

/* --vary FIELD=VALUES, repeatable: one axis more. */
static int vary_flag(void *ctx, const char *verb, const char *name, const char *v)
{
	sweep_args *a = ctx;
	pp_error err;
	return cli_fail(pp_study_axis_add(a->rq.axes, &a->rq.naxes, v, "--vary", &err), &err);
}

#define AT(m) offsetof(sweep_args, m)
static const cli_flag sweep_flags[] = {
    CLI_ROW("over", CLI_F_STR, AT(over)),
    CLI_ROW("values", CLI_F_STR, AT(values)),
    CLI_ROW("usd-per-gpu", CLI_F_PRICE, AT(so.usd_per_gpu), .hi = 1e7),
    CLI_ROW("life-years", CLI_F_REAL, AT(so.life_years), .lo = 0.1, .hi = 30,
            .what = "0.1..30 years"),
    CLI_ROW("hosting-usd-per-kw-month", CLI_F_PRICE, AT(so.hosting_usd_per_kw_month), .hi = 1e4),
    CLI_ROW("replica-batch", CLI_F_LL, AT(so.replica_batch), .lo = 1, .hi = 1000000000),
    CLI_ROW("csv", CLI_F_SET, AT(csv)),
    CLI_PAGE_FLAGS(sweep_args, charts),
    CLI_ROW("quiet", CLI_F_SET, AT(quiet)),
    CLI_ROW("checkpoint", CLI_F_STR, AT(so.checkpoint)),
    CLI_INVERSE_FLAGS(sweep_args, inv),
    CLI_ROW("vary", CLI_F_CALL, 0, .call = vary_flag),
    CLI_ROW("search", CLI_F_SET, AT(rq.search)),
    CLI_ROW("max-points", CLI_F_LL, AT(rq.max_points), .lo = 1, .hi = PP_STUDY_POINTS_HARD_MAX),
    CLI_ROW("threads", CLI_F_INT, AT(rq.opts.threads), .lo = 1, .hi = 1024),
    CLI_ROW("headroom", CLI_F_REAL, AT(rq.space.headroom_fraction), .lo = 0, .hi = 1,
            .hi_open = true, .what = "a fraction in 0..1"),
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

/* A plan flag into the study's search space too; a list only there. */
static int sweep_take(const char *flag, const char *v, void *a)
{
	pp_error err;
	bool t; /* taken: a list, the search's only */
	int rc = cli_fail(pp_study_plan_flag(&((sweep_args *)a)->rq, flag, v, &t, &err), &err);
	return rc ? rc : t ? 0 : CLI_CONTINUE;
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
	pp_study_request_init(&a->rq);
	const cli_verb verb = {"sweep", sweep_usage, sweep_flags, a, sweep_take};
	int rc = cli_opts_parse(argc, argv, &verb, o);
	if (rc != CLI_CONTINUE)
		return rc;
	pp_error err;
	const char *fmt = o->format ? o->format->name : NULL;
	if ((rc = cli_fail(pp_study_request_check(&a->rq, o->model_ref, cli_inverse_asked(&a->inv),
	                                          a->charts.svg_dir, fmt, a->over, o->gpus, &err),
	                   &err)))
		return rc;
	bool study = a->rq.study;
	if ((!study || a->over) && (!a->over || !a->values)) {
		cli_message("sweep: %s is required (see 'paraplan sweep --help')",
		            !a->over ? "--over" : "--values");
		return EXIT_BADINPUT;
	}
	pp_error_clear(&err);
	pp_status st = pp_sweep_axis_parse(a->over ? a->over : "gpus", "--over", &a->so.axis, &err);
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
	pp_result_kind kind =
	    cli_inverse_asked(&a->inv) ? PP_RESULT_SWEEP_INVERSE : PP_RESULT_SWEEP;
	if ((!study && (rc = cli_format_check("sweep", o->format, kind))) ||
	    (rc = cli_charts_format(&a->charts, "sweep", o)))
		return rc;
	/* The swept quantity comes from --values only (the flags alone: no
	 * model read yet). */
	if ((a->over || !study) && (st = pp_sweep_check(a->so.axis, &o->plan, o->gpus, &err)))
		return cli_plan_fail(st, &err, &(pp_model){.name = ""});
	if ((rc = cli_opts_require(o, "sweep", false, a->so.replica_batch == 0)) ||
	    (rc = cli_overlap_check("sweep", o)))
		return rc;
	if (a->so.replica_batch > 0 && o->have_gbs) {
		cli_message("sweep: --gbs and --replica-batch exclude each other");
		return EXIT_BADINPUT;
	}
	long long max_value = a->so.axis == PP_SWEEP_MBS ? 1 << 20 : 10000000;
	if (a->values)
		st = pp_sweep_parse_values(a->values, "--values", max_value, a->points,
		                           PP_SWEEP_MAX_POINTS, &a->so.nvalues, &err);
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

/* cli_message_hook of the MPI ranks but rank 0: rank 0 alone says what failed. */
static void message_drop(const char *line)
{
	(void)line;
}

/* The sweep of `a`, with progress, on `comm`'s ranks: 0 or an exit code after one message. */
static int sweep_run(sweep_args *a, cli_opts *o, pp_shard_comm *comm, pp_error *err)
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
	bool root = pp_shard_comm_root(a->so.comm = comm);
	cli_progress pr;
	cli_progress_start(&pr, "sweep", a->quiet || !root, "%zu points over %s on %d rank(s)",
	                   a->so.nvalues, a->over, pp_shard_comm_size(a->so.comm));
	pr.on |= a->so.comm && root && !a->quiet; /* mpirun pipes stderr: no tty to ask */
	a->so.progress = sweep_progress;
	a->so.progress_ctx = &pr;
	pp_error_clear(err);
	pp_status st = pp_sweep_run(&model, &sys, &o->job, &o->plan, o->gpus, &a->so, sw, err);
	cli_progress_end(&pr);
	if (!(rc = cli_plan_fail(st, err, &model)) && root)
		rc = cli_charts_emit(&a->charts, "sweep", NULL, NULL, NULL, NULL, sw, &model);
	if (!rc && root && !a->charts.as_report)
		rc = sweep_write(sw, &a->inv, o);
	pp_sweep_free(sw);
	return rc;
}

/* The study of `a` over each model of --model A,B on `comm`'s ranks into --html and --output. */
static int study_run(sweep_args *a, cli_opts *o, const pp_shard_comm *comm, pp_error *err)
{
	pp_system sys;
	char ref[512];
	int rc = cli_fail(pp_study_models(&a->rq, o->model_ref, "--model", ref, 512, err), err);
	cli_opts one = *o; /* the system and the first model */
	one.model_ref = o->model_ref ? ref : NULL;
	rc = rc ? rc : cli_opts_inputs(&one, a->rq.models, &sys);
	pp_study_spec *sp = pp_study_request_spec(
	    &a->rq, &sys, &o->job, &o->plan, a->so.nvalues ? a->points : &o->gpus, a->so.nvalues);
	pp_study_row *rows = NULL;
	size_t n = pp_study_size(sp);
	rc = rc ? rc : cli_fail(pp_study_rows_new(&a->rq, sp, &rows, err), err);
	cli_progress pr;
	bool root = pp_shard_comm_root(comm);
	cli_progress_start(&pr, "sweep", a->quiet || !root || rc, "%zu points on %d rank(s)", n,
	                   pp_shard_comm_size(comm));
	pr.on |= comm && root && !a->quiet && !rc; /* mpirun pipes stderr: no tty to ask */
	pp_shard sh = {.checkpoint = a->so.checkpoint,
	               .args_hash = a->so.args_hash,
	               .comm = comm,
	               .progress = sweep_progress,
	               .progress_ctx = &pr};
	rc = rc ? rc : cli_plan_fail(pp_study_run(sp, rows, &sh, err), err, a->rq.models);
	cli_progress_end(&pr);
	cli_out out; /* --html FILE, then --output */
	const char *f = a->csv ? "csv" : o->json ? "json" : "text";
	for (int k = !a->charts.html; k < 2 && !rc && root; k++)
		if (!(rc = cli_out_open(&out, k ? o->output : a->charts.html)))
			rc = cli_out_close(
			    &out, cli_report_ok(pp_report_study(sp, rows, n, k ? f : "html", out.f),
			                        out.f));
	free(rows);
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
	a->so.args_hash = pp_shard_args_hash(argc, argv, "--checkpoint", "--quiet");
	pp_error err = {0};         /* the runs' scratch */
	pp_shard_comm *comm = NULL; /* mpirun's ranks (NULL: this process); rank 0 writes */
	if (rc == CLI_CONTINUE &&
	    !(rc = cli_out_check("sweep", "--output", a->charts.as_report ? NULL : o.output)) &&
	    !(rc = cli_charts_check("sweep", &a->charts)) &&
	    !(rc = cli_fail(pp_shard_comm_open(&comm, &err), &err)) &&
	    (pp_shard_comm_root(comm) || (cli_message_hook = message_drop)))
		rc = a->rq.study ? study_run(a, &o, comm, &err) : sweep_run(a, &o, comm, &err);
	pp_shard_comm_close(comm);
	free(a);
	return rc;
}
