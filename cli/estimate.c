/*
 * paraplan estimate: flags -> model, system, job, plan -> pp_estimate_run ->
 * report.  The shared flags are parsed in options.c (shared with sweep and
 * search); estimate's own are the table below.
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"

static void estimate_usage(FILE *f)
{
	cli_usage(f, "estimate"); /* docs/usage/estimate.txt */
}

typedef struct estimate_flags {
	bool sim;       /* the iteration is simulated: --sim on, or a flag below that needs it */
	bool sim_given; /* --sim given (last as off when !sim): refused with what simulates */
	const char *trace, *schedule_file;
	const char *traffic;     /* --traffic: JSON, CSV when the name ends in .csv */
	const char *traffic_csv; /* --traffic-csv (both files are written when both are given) */
	bool timeline; /* --timeline on: the traffic timeline of the simulated iteration */
	bool pairing;
	cli_emit emit;     /* --emit: the plan as launch flags instead of the report */
	cli_inverse gp;    /* the goodput flags (gp.goodput: one was given; gp.gp) */
	cli_charts charts; /* --html, --svg, --large-output */
} estimate_flags;

/* --sim on|off, remembered as given: "--sim off" with a flag that simulates
 * is refused rather than overruled. */
static int sim_flag(void *ctx, const char *verb, const char *name, const char *value)
{
	estimate_flags *f = ctx;
	f->sim_given = true;
	pp_error err;
	pp_status st = pp_arg_onoff(verb, name, value, &f->sim, &err);
	return st ? cli_fail(st, &err) : 0;
}

#define AT(m) offsetof(estimate_flags, m)
static const cli_flag estimate_table[] = {
    CLI_ROW("sim", CLI_F_CALL, 0, .call = sim_flag),
    CLI_ROW("trace", CLI_F_FILE, AT(trace)),
    CLI_ROW("schedule-file", CLI_F_FILE, AT(schedule_file)),
    CLI_ROW("traffic", CLI_F_FILE, AT(traffic)),
    CLI_ROW("traffic-csv", CLI_F_FILE, AT(traffic_csv)),
    CLI_ROW("timeline", CLI_F_ONOFF, AT(timeline)),
    CLI_ROW("pairing", CLI_F_ONOFF, AT(pairing)),
    CLI_ROW("emit", CLI_F_EMIT, AT(emit)),
    CLI_GOODPUT_FLAGS(estimate_flags, gp),
    CLI_CHARTS_FLAGS(estimate_flags, charts),
    CLI_END,
};
#undef AT

/* Flags that contradict each other or have nothing to act on: refused, one
 * line; --trace, --schedule-file and --timeline on simulate the iteration.
 * CLI_CONTINUE or EXIT_BADINPUT. */
static int estimate_consistent(estimate_flags *f, const cli_opts *o)
{
	const char *sim_by = f->schedule_file ? "--schedule-file"
	                     : f->trace       ? "--trace"
	                     : f->timeline    ? "--timeline on"
	                                      : NULL;
	if (f->sim_given && !f->sim && sim_by) {
		cli_message("estimate: --sim off contradicts %s, which simulates the iteration",
		            sim_by);
		return EXIT_BADINPUT;
	}
	f->sim |= sim_by != NULL;
	if (cli_overlap_check("estimate", o))
		return EXIT_BADINPUT;
	if (f->emit.on && o->plan.schedule == PP_SCHED_WSHAPE) {
		cli_message("estimate: --emit cannot express --schedule wshape (DHelix "
		            "co-execution has no launch flag in any framework)");
		return EXIT_BADINPUT;
	}
	if (f->emit.on && f->pairing) {
		cli_message("estimate: --emit and --pairing on: give one of them (the pairing "
		            "table is no launch flag)");
		return EXIT_BADINPUT;
	}
	const char *big = f->traffic ? "--traffic" : f->traffic_csv ? "--traffic-csv" : NULL;
	int rc;
	if (big && (rc = cli_large_output_check("estimate", big, o->gpus, f->charts.large)))
		return rc;
	if ((rc = cli_charts_large_check("estimate", &f->charts, o->gpus)))
		return rc;
	return CLI_CONTINUE;
}

/* The options into `o` and `flags`, checked for form: CLI_CONTINUE or an
 * exit code.  Reads no file. */
static int estimate_parse(int argc, char **argv, estimate_flags *flags, cli_opts *o)
{
	memset(flags, 0, sizeof *flags);
	pp_goodput_params_init(&flags->gp.gp);
	const cli_verb verb = {"estimate", estimate_usage, estimate_table, flags, NULL};
	int rc = cli_opts_parse(argc, argv, &verb, o);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc = cli_opts_require(o, "estimate", true, true)))
		return rc;
	if (flags->emit.on && !cli_format_is_text(o->format)) {
		cli_message("estimate: --emit and --%s: give one of them",
		            o->json ? "json" : "format");
		return EXIT_BADINPUT;
	}
	if ((rc = cli_format_check("estimate", o->format, PP_RESULT_ESTIMATE)) ||
	    (rc = cli_charts_format(&flags->charts, "estimate", o)))
		return rc;
	return estimate_consistent(flags, o);
}

int cli_estimate_parse_only(int argc, char **argv)
{
	estimate_flags flags;
	cli_opts o;
	int rc = estimate_parse(argc, argv, &flags, &o);
	return rc == CLI_CONTINUE ? EXIT_ANSWERED : rc;
}

/* `e`'s traffic matrix into `path` (none when NULL): CSV or JSON. */
static int write_traffic(const char *path, bool csv, const pp_traffic *t)
{
	pp_result r = {.kind = PP_RESULT_TRAFFIC, .traffic = t};
	return path ? cli_render_to(path, pp_format_find(csv ? "csv" : "json"), &r) : 0;
}

/*
 * The work beyond the estimate `e` and the files beside its report: the
 * goodput (with a goodput flag or --tokens), the simulated iteration into
 * *sim (--trace written), the traffic views into *tv (--traffic,
 * --traffic-csv written), the charts.  0 or an exit code (after one message).
 */
static int estimate_extras(const estimate_flags *f, const cli_opts *o, const pp_model *model,
                           pp_estimate *e, pp_sim **sim, pp_traffic_views *tv)
{
	pp_error err;
	pp_error_clear(&err);
	pp_status st = PP_OK;
	if (f->gp.goodput || o->job.train_tokens > 0)
		st = pp_estimate_goodput(e, &f->gp.gp, &err);
	if (!st && f->sim)
		st = pp_estimate_simulate_file(e, f->schedule_file, sim, &err);
	if (st)
		return cli_plan_fail(st, &err, model);
	int rc;
	cli_out out;
	if (f->trace &&
	    ((rc = cli_out_open(&out, f->trace)) ||
	     (rc = cli_out_close(&out, cli_report_ok(pp_report_trace(e, *sim, out.f), out.f)))))
		return rc;
	if ((f->traffic || f->traffic_csv || f->timeline) &&
	    (st = pp_traffic_views_build(e, f->traffic || f->traffic_csv, f->timeline ? *sim : NULL,
	                                 tv, &err)))
		return cli_plan_fail(st, &err, model);
	size_t n = f->traffic ? strlen(f->traffic) : 0;
	bool csv = n >= 4 && strcmp(f->traffic + n - 4, ".csv") == 0;
	if ((rc = write_traffic(f->traffic, csv, tv->matrix)) ||
	    (rc = write_traffic(f->traffic_csv, true, tv->matrix)))
		return rc;
	return cli_charts_emit(&f->charts, "estimate", e, *sim, tv->matrix, NULL, NULL, model);
}

/* The report of `e` (or --emit's launch flags) on --output, the pairing
 * table after a text one.  0 or an exit code. */
static int estimate_report(const estimate_flags *f, const cli_opts *o, const pp_estimate *e,
                           const pp_traffic_views *tv)
{
	cli_out out;
	int rc = cli_out_open(&out, o->output);
	if (rc)
		return rc;
	pp_result r = {.kind = PP_RESULT_ESTIMATE,
	               .estimate = e,
	               .traffic = tv->matrix,
	               .timeline = tv->timeline,
	               .timeline_place = tv->timeline ? &tv->place : NULL};
	int wr = f->emit.on ? cli_emit_write(&f->emit, e, out.f) : cli_render(o->format, &r, out.f);
	pp_error err;
	pp_error_clear(&err);
	pp_status st = PP_OK;
	if (f->pairing && cli_format_is_text(o->format) && wr == 0 &&
	    (st = pp_report_pairing_text(e, out.f, &err))) {
		pp_output_abandon(&out); /* removed without a word: the refusal is the message */
		if (st == PP_ENOMEM)
			return cli_fail(st, &err); /* "out of memory" */
		cli_message("estimate: --pairing: %s", err.text);
		return EXIT_BADINPUT;
	}
	return cli_out_close(&out, cli_report_ok(wr, out.f));
}

int cli_estimate(int argc, char **argv)
{
	estimate_flags f;
	cli_opts o;
	int rc = estimate_parse(argc, argv, &f, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc = cli_out_check("estimate", "--output", f.charts.as_report ? NULL : o.output)) ||
	    (rc = cli_out_check("estimate", "--trace", f.trace)) ||
	    (rc = cli_out_check("estimate", "--traffic", f.traffic)) ||
	    (rc = cli_out_check("estimate", "--traffic-csv", f.traffic_csv)) ||
	    (rc = cli_charts_check("estimate", &f.charts)))
		return rc;
	pp_model model;
	pp_system sys;
	pp_estimate *e;
	if ((rc = cli_estimate_inputs(&o, &model, &sys, &e)))
		return rc;
	pp_sim *sim = NULL;
	pp_traffic_views tv;
	memset(&tv, 0, sizeof tv);
	rc = estimate_extras(&f, &o, &model, e, &sim, &tv);
	if (!rc && !f.charts.as_report) /* --format html: the charts' page was the report */
		rc = estimate_report(&f, &o, e, &tv);
	pp_traffic_views_free(&tv);
	pp_sim_free(sim);
	free(e);
	return rc;
}
