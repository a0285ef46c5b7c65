/*
 * paraplan estimate: flags -> model, system, job, plan -> pp_estimate_run ->
 * report.  The flags are parsed in options.c (shared with sweep).
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"

static void estimate_usage(FILE *f)
{
	cli_usage(f, "estimate"); /* docs/usage/estimate.txt */
}

enum {
	OPT_SIM = CLI_OPT_VERB,
	OPT_TRACE,
	OPT_TRAFFIC,
	OPT_TRAFFIC_CSV,
	OPT_TIMELINE,
	OPT_SCHEDULE_FILE,
	OPT_PAIRING,
	OPT_MTBF,
	OPT_CKPT_GBPS,
	OPT_RESTART,
	OPT_CKPT_ASYNC,
	OPT_EMIT,
	OPT_HTML,
	OPT_SVG,
	OPT_LARGE
};

static const struct option estimate_opts[] = {
    {"sim", required_argument, 0, OPT_SIM},
    {"trace", required_argument, 0, OPT_TRACE},
    {"schedule-file", required_argument, 0, OPT_SCHEDULE_FILE},
    {"traffic", required_argument, 0, OPT_TRAFFIC},
    {"traffic-csv", required_argument, 0, OPT_TRAFFIC_CSV},
    {"timeline", required_argument, 0, OPT_TIMELINE},
    {"pairing", required_argument, 0, OPT_PAIRING},
    {"mtbf-gpu-hours", required_argument, 0, OPT_MTBF},
    {"ckpt-write-gbps", required_argument, 0, OPT_CKPT_GBPS},
    {"restart-min", required_argument, 0, OPT_RESTART},
    {"ckpt-async", required_argument, 0, OPT_CKPT_ASYNC},
    {"emit", required_argument, 0, OPT_EMIT},
    {"html", required_argument, 0, OPT_HTML},
    {"svg", required_argument, 0, OPT_SVG},
    {"large-output", no_argument, 0, OPT_LARGE},
    {0, 0, 0, 0}};

typedef struct estimate_flags {
	bool sim;
	bool sim_off; /* "--sim off" given last: refused with what simulates */
	const char *trace;
	const char *schedule_file;
	cli_traffic_opts traffic;
	bool pairing;
	bool goodput; /* a goodput flag was given */
	bool emit;    /* --emit: the plan as launch flags instead of the report */
	pp_launch_format format;
	pp_goodput_params gp;
	cli_charts charts; /* --html, --svg */
} estimate_flags;

static int estimate_flag(int code, const char *value, void *ctx)
{
	estimate_flags *f = ctx;
	switch (code) {
	case OPT_HTML:
	case OPT_SVG: return cli_charts_flag(&f->charts, "estimate", code == OPT_SVG, value);
	case OPT_LARGE: f->charts.large = true; return 0;
	case OPT_EMIT: {
		pp_error err;
		pp_error_clear(&err);
		pp_status st = pp_launch_format_parse(value, "--emit", &f->format, &err);
		if (st)
			return cli_fail(st, &err);
		f->emit = true;
		return 0;
	}
	case OPT_MTBF:
	case OPT_CKPT_GBPS:
	case OPT_RESTART:
	case OPT_CKPT_ASYNC:
		f->goodput = true;
		return cli_goodput_flag("estimate", estimate_opts[code - CLI_OPT_VERB].name, value,
		                        &f->gp);
	}
	if (code == OPT_PAIRING)
		return cli_parse_onoff("estimate", "pairing", value, &f->pairing);
	if (code == OPT_SCHEDULE_FILE) {
		if (!*value) {
			cli_message("estimate: --schedule-file needs a file name");
			return EXIT_BADINPUT;
		}
		f->schedule_file = value;
		f->sim = true;
		return 0;
	}
	if (code == OPT_TRAFFIC || code == OPT_TRAFFIC_CSV || code == OPT_TIMELINE) {
		int rc = cli_traffic_flag(&f->traffic, code - OPT_TRAFFIC, value);
		if (!rc && f->traffic.timeline)
			f->sim = true;
		return rc;
	}
	if (code == OPT_TRACE) {
		if (!*value) {
			cli_message("estimate: --trace needs a file name");
			return EXIT_BADINPUT;
		}
		f->trace = value;
		f->sim = true;
		return 0;
	}
	bool on;
	int rc = cli_parse_onoff("estimate", "sim", value, &on);
	if (rc)
		return rc;
	f->sim = on || f->trace != NULL || f->schedule_file != NULL || f->traffic.timeline;
	f->sim_off = !on;
	return 0;
}

/* Simulate the iteration of `e`; write the trace when asked; keep the
 * simulator for the traffic timeline (*keep, when not NULL).  0 or an exit code. */
static int simulate(pp_estimate *e, const estimate_flags *f, const pp_model *model, pp_sim **keep)
{
	pp_sim *sim;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_estimate_simulate_file(e, f->schedule_file, &sim, &err);
	if (st)
		return cli_plan_fail(st, &err, model);
	int rc = 0;
	if (f->trace) {
		cli_out out;
		if ((rc = cli_out_open(&out, f->trace)) == 0)
			rc = cli_out_close(&out,
			                   cli_report_ok(pp_report_trace(e, sim, out.f), out.f));
	}
	if (keep && !rc)
		*keep = sim;
	else
		pp_sim_free(sim);
	return rc;
}

/* Flags that contradict each other or have nothing to act on: refused, one
 * line.  CLI_CONTINUE or EXIT_BADINPUT. */
static int estimate_consistent(const estimate_flags *f, const cli_opts *o)
{
	const char *sim_by = f->schedule_file      ? "--schedule-file"
	                     : f->trace            ? "--trace"
	                     : f->traffic.timeline ? "--timeline on"
	                                           : NULL;
	if (f->sim_off && sim_by) {
		cli_message("estimate: --sim off contradicts %s, which simulates the iteration",
		            sim_by);
		return EXIT_BADINPUT;
	}
	bool wshape = o->plan.schedule == PP_SCHED_WSHAPE;
	if (cli_overlap_check("estimate", o))
		return EXIT_BADINPUT;
	if (f->emit && wshape) {
		cli_message("estimate: --emit cannot express --schedule wshape (DHelix "
		            "co-execution has no launch flag in any framework)");
		return EXIT_BADINPUT;
	}
	if (f->emit && f->pairing) {
		cli_message("estimate: --emit and --pairing on: give one of them (the pairing "
		            "table is no launch flag)");
		return EXIT_BADINPUT;
	}
	const char *big = f->traffic.file ? "--traffic" : f->traffic.csv ? "--traffic-csv" : NULL;
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
	flags->format = PP_LAUNCH_MEGATRON;
	pp_goodput_params_init(&flags->gp);
	const cli_verb verb = {"estimate", estimate_usage, estimate_opts, estimate_flag,
	                       flags,      NULL,           NULL};
	int rc = cli_opts_parse(argc, argv, &verb, o);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc = cli_opts_require(o, "estimate", true, true)))
		return rc;
	if (flags->emit && !cli_format_is_text(o->format)) {
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

int cli_estimate(int argc, char **argv)
{
	estimate_flags flags;
	cli_opts o;
	int rc = estimate_parse(argc, argv, &flags, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc =
	         cli_out_check("estimate", "--output", flags.charts.as_report ? NULL : o.output)) ||
	    (rc = cli_out_check("estimate", "--trace", flags.trace)) ||
	    (rc = cli_out_check("estimate", "--traffic", flags.traffic.file)) ||
	    (rc = cli_out_check("estimate", "--traffic-csv", flags.traffic.csv)) ||
	    (rc = cli_charts_check("estimate", &flags.charts)))
		return rc;
	pp_model model;
	pp_system sys;
	pp_estimate *e;
	if ((rc = cli_estimate_inputs(&o, &model, &sys, &e)))
		return rc;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = PP_OK;
	if ((flags.goodput || o.job.train_tokens > 0) &&
	    (st = pp_estimate_goodput(e, &flags.gp, &err))) {
		free(e);
		return cli_plan_fail(st, &err, &model);
	}
	pp_sim *sim = NULL;
	if (flags.sim && (rc = simulate(e, &flags, &model, &sim))) {
		free(e);
		return rc;
	}
	cli_traffic_result tr;
	memset(&tr, 0, sizeof tr);
	if ((rc = cli_traffic_run(&flags.traffic, e, sim, &model, &tr)) ||
	    (rc = cli_charts_emit(&flags.charts, "estimate", e, sim, tr.traffic, NULL, NULL,
	                          &model))) {
		cli_traffic_done(&tr);
		pp_sim_free(sim);
		free(e);
		return rc;
	}
	pp_sim_free(sim);
	cli_out out;
	if (flags.charts.as_report || (rc = cli_out_open(&out, o.output))) {
		cli_traffic_done(&tr);
		free(e);
		return rc;
	}
	int wr;
	if (flags.emit) {
		char notes[PP_LAUNCH_NOTES_MAX];
		wr = pp_launch_emit(e, flags.format, out.f, notes, sizeof notes);
		for (char *line = notes, *nl; *line && (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			cli_note("--emit: %s", line);
		}
	} else {
		pp_result r = {.kind = PP_RESULT_ESTIMATE,
		               .estimate = e,
		               .traffic = tr.traffic,
		               .timeline = tr.timeline,
		               .timeline_place = tr.have_place ? &tr.place : NULL};
		wr = cli_render(o.format, &r, out.f);
	}
	cli_traffic_done(&tr);
	if (flags.pairing && cli_format_is_text(o.format) && wr == 0 &&
	    (st = pp_report_pairing_text(e, out.f, &err))) {
		if (st == PP_ENOMEM)
			cli_message("out of memory");
		else
			cli_message("estimate: --pairing: %s", err.text);
		free(e);
		cli_out_close(&out, false);
		return st == PP_ENOMEM ? EXIT_INTERNAL : EXIT_BADINPUT;
	}
	free(e);
	return cli_out_close(&out, cli_report_ok(wr, out.f));
}
