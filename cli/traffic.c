/*
 * estimate's traffic flags: the GPU x GPU traffic matrix (--traffic,
 * --traffic-csv) and the traffic timeline of the simulated iteration
 * (--timeline).
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);
	return n >= k && strcmp(s + n - k, tail) == 0;
}

int cli_traffic_flag(cli_traffic_opts *o, int which, const char *value)
{
	static const char *const names[] = {"--traffic", "--traffic-csv", "--timeline"};
	if (which == 2) {
		if (strcmp(value, "on") == 0)
			o->timeline = true;
		else if (strcmp(value, "off") == 0)
			o->timeline = false;
		else {
			cli_message("estimate: --timeline expects on or off, got '%s'", value);
			return EXIT_BADINPUT;
		}
		return 0;
	}
	if (!*value) {
		cli_message("estimate: %s needs a file name", names[which]);
		return EXIT_BADINPUT;
	}
	*(which == 0 ? &o->file : &o->csv) = value;
	return 0;
}

/* The matrix into `path`: the csv or json format of report's table. */
static int write_file(const char *path, const pp_traffic *t, bool csv)
{
	return cli_render_to(path, pp_format_find(csv ? "csv" : "json"),
	                     &(pp_result){.kind = PP_RESULT_TRAFFIC, .traffic = t});
}

int cli_traffic_run(const cli_traffic_opts *o, const pp_estimate *e, const pp_sim *sim,
                    const pp_model *model, cli_traffic_result *out)
{
	out->traffic = NULL;
	out->timeline = NULL;
	pp_error err;
	pp_error_clear(&err);
	if (o->file || o->csv) {
		pp_status st = pp_traffic_of_estimate(e, &out->traffic, &err);
		if (st)
			return cli_plan_fail(st, &err, model);
		int rc = 0;
		if (o->file && (rc = write_file(o->file, out->traffic, ends_with(o->file, ".csv"))))
			return rc;
		if (o->csv && (rc = write_file(o->csv, out->traffic, true)))
			return rc;
	}
	if (o->timeline && sim) {
		pp_status st = pp_traffic_timeline_build(sim, e->sim.iteration_s, e->plan.pp,
		                                         &out->timeline, &err);
		if (st)
			return cli_fail(st, &err);
		pp_place_build(&e->plan, &e->system, &out->place);
		out->have_place = true;
	}
	return 0;
}

void cli_traffic_done(cli_traffic_result *r)
{
	pp_traffic_free(r->traffic);
	pp_traffic_timeline_free(r->timeline);
	r->traffic = NULL;
	r->timeline = NULL;
}
