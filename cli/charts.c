/*
 * --html FILE and --svg DIR of estimate, search and sweep: the charts of
 * report/ written atomically (cli_out), one page or one SVG file per chart.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "options.h"

int cli_charts_flag(cli_charts *c, const char *verb, bool svg, const char *value)
{
	if (!*value) {
		cli_message("%s: %s needs a %s", verb, svg ? "--svg" : "--html",
		            svg ? "directory" : "file name");
		return EXIT_BADINPUT;
	}
	if (svg)
		c->svg_dir = value;
	else
		c->html = value;
	return 0;
}

/* DIR/NAME.svg of chart `k` into `path`.  0 or EXIT_BADINPUT. */
static int svg_path(const char *verb, const char *dir, pp_chart k, char *path, size_t n)
{
	if ((size_t)snprintf(path, n, "%s/%s.svg", dir, pp_chart_name(k)) >= n) {
		cli_message("%s: --svg %s: path too long", verb, dir);
		return EXIT_BADINPUT;
	}
	return 0;
}

int cli_charts_check(const char *verb, const cli_charts *c)
{
	int rc;
	if (c->html && (rc = cli_out_check(verb, "--html", c->html)))
		return rc;
	if (c->svg_dir) {
		struct stat st;
		if (stat(c->svg_dir, &st) != 0) {
			cli_message("%s: --svg %s: %s", verb, c->svg_dir, strerror(errno));
			return EXIT_BADINPUT;
		}
		if (!S_ISDIR(st.st_mode)) {
			cli_message("%s: --svg %s: not a directory", verb, c->svg_dir);
			return EXIT_BADINPUT;
		}
		/* each file the directory may receive, whichever charts the
		 * verb's result turns out to have */
		for (int k = 0; k < PP_NCHARTS; k++) {
			char path[4096];
			if ((rc = svg_path(verb, c->svg_dir, (pp_chart)k, path, sizeof path)) ||
			    (rc = cli_out_check(verb, "--svg", path)))
				return rc;
		}
	}
	return 0;
}

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

int cli_charts_write(const cli_charts *c, const pp_report_inputs *in)
{
	int rc = 0;
	if (c->html) {
		pp_result r = {.kind = in->sweep    ? PP_RESULT_SWEEP
		                       : in->search ? PP_RESULT_SEARCH
		                                    : PP_RESULT_ESTIMATE,
		               .charts = in};
		if ((rc = cli_render_to(c->html, pp_format_find("html"), &r)))
			return rc;
	}
	if (!c->svg_dir)
		return 0;
	for (int k = 0; k < PP_NCHARTS; k++) {
		if (!pp_report_chart_available(in, (pp_chart)k))
			continue;
		char path[4096];
		if ((rc = svg_path("paraplan", c->svg_dir, (pp_chart)k, path, sizeof path)))
			return rc;
		cli_out out;
		if ((rc = cli_out_open(&out, path)))
			return rc;
		if ((rc = cli_out_close(&out, pp_report_svg(in, (pp_chart)k, out.f) == 0)))
			return rc;
	}
	return 0;
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
		rc = cli_charts_write(c, &ch.in);
	pp_report_charts_release(&ch);
	return rc;
}
