/*
 * --html FILE and --svg DIR of estimate, search and sweep: the charts of
 * report/ written atomically (cli_out), one page or one SVG file per chart.
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"

int cli_charts_format(cli_charts *c, const char *verb, const cli_opts *o)
{
	if (o->format != pp_format_find("html"))
		return 0;
	if (c->html) {
		cli_message("%s: --format html and --html: give one of them", verb);
		return EXIT_BADINPUT;
	}
	c->html = o->output ? o->output : "-";
	c->as_report = true;
	return 0;
}

int cli_large_output_check(const char *verb, const char *flag, long long gpus, bool large)
{
	if (gpus <= CLI_LARGE_OUTPUT_GPUS || large)
		return 0;
	cli_message("%s: %s at %lld GPUs: its size grows with the GPUs, %d at most without "
	            "--large-output",
	            verb, flag, gpus, CLI_LARGE_OUTPUT_GPUS);
	return EXIT_BADINPUT;
}

int cli_charts_large_check(const char *verb, const cli_charts *c, long long gpus)
{
	if (!cli_charts_wanted(c) || gpus <= CLI_LARGE_CHARTS_GPUS || c->large)
		return 0;
	cli_message("%s: %s at %lld GPUs: the traffic heat map sums every GPU pair (memory and "
	            "time grow with the GPUs), %d at most without --large-output",
	            verb, c->html ? "--html" : "--svg", gpus, CLI_LARGE_CHARTS_GPUS);
	return EXIT_BADINPUT;
}

/* The page and the SVG files (DIR/memory.svg, ...) of what `in` holds.  0 or
 * an exit code. */
static int charts_write(const cli_charts *c, const char *verb, const pp_report_inputs *in)
{
	int rc = 0;
	if (c->html) {
		pp_result r = {.kind = in->sweep    ? PP_RESULT_SWEEP
		                       : in->search ? PP_RESULT_SEARCH
		                                    : PP_RESULT_ESTIMATE,
		               .charts = in};
		rc = cli_render_to(c->html, pp_format_find("html"), &r);
	}
	pp_error err;
	for (int k = 0; c->svg_dir && k < PP_NCHARTS && !rc; k++) {
		char path[PP_OUTPUT_PATH_MAX];
		cli_out out;
		if (!pp_report_chart_available(in, (pp_chart)k))
			continue;
		pp_status st = pp_report_svg_path(verb, "--svg", c->svg_dir, (pp_chart)k, path,
		                                  sizeof path, &err);
		if (st)
			rc = cli_fail(st, &err);
		else if (!(rc = cli_out_open(&out, path)))
			rc = cli_out_close(&out, pp_report_svg(in, (pp_chart)k, out.f) == 0);
	}
	return rc;
}

int cli_charts_emit(const cli_charts *c, const char *verb, const pp_estimate *e, const pp_sim *sim,
                    const pp_traffic *traffic, const pp_search *search, const pp_sweep *sweep,
                    const pp_model *model)
{
	if (!cli_charts_wanted(c))
		return 0;
	int rc = 0;
	if (e && (rc = cli_charts_large_check(verb, c, e->gpus)))
		return rc;
	pp_report_charts ch;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_report_charts_gather(&ch, verb, e, sim, traffic, search, sweep, &err);
	if (ch.gantt_refused[0])
		cli_note("%s: no Gantt chart: the simulator refuses this plan: %s", verb,
		         ch.gantt_refused);
	if (st)
		rc = cli_plan_fail(st, &err, model);
	else
		rc = charts_write(c, verb, &ch.in);
	pp_report_charts_release(&ch);
	return rc;
}
