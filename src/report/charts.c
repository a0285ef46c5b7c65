/*
 * The charts' inputs of estimate, search and sweep gathered in one place
 * (include/paraplan/report.h, pp_report_charts_gather): the page's title,
 * each stage's memory, the simulated iteration and the traffic matrix; the
 * directory of --svg checked before any work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "paraplan/report.h"
#include "paraplan/workload.h"
#include "util/util.h"

/* pp_memory_stage of every stage of `e` into *out (NULL with no stages). */
static pp_status stages_of(const pp_estimate *e, pp_stage_memory **out, pp_error *err)
{
	*out = NULL;
	if (e->nstages <= 0)
		return PP_OK;
	pp_stage_memory *m = ppi_calloc((size_t)e->nstages, sizeof *m);
	if (!m)
		return ppi_fail(err, "", "stages", "out of memory");
	for (int s = 0; s < e->nstages; s++) {
		pp_status st =
		    pp_memory_stage(&e->model, &e->system, &e->job, &e->plan, s, &m[s], err);
		if (st) {
			free(m);
			return st;
		}
	}
	*out = m;
	return PP_OK;
}

pp_status pp_report_charts_gather(pp_report_charts *c, const char *verb, const pp_estimate *e,
                                  const pp_sim *sim, const pp_traffic *traffic,
                                  const pp_search *search, const pp_sweep *sweep, pp_error *err)
{
	memset(c, 0, sizeof *c);
	c->in = (pp_report_inputs){.title = c->title, .search = search, .sweep = sweep};
	if (sweep)
		snprintf(c->title, sizeof c->title, "paraplan sweep: %s on %s, over %s",
		         sweep->model.name, sweep->system.gpu.name,
		         pp_sweep_axis_name(sweep->axis));
	else if (e)
		snprintf(c->title, sizeof c->title, "paraplan %s: %s on %lld x %s", verb,
		         e->model.name, e->gpus, e->system.gpu.name);
	else
		snprintf(c->title, sizeof c->title, "paraplan %s", verb);
	if (!e)
		return PP_OK;
	pp_status st = stages_of(e, &c->stages, err);
	if (st)
		return st;
	if (e->fits && !(e->simulated && sim)) {
		/* simulate a copy, so the verb's own report stays as it was */
		c->copy = ppi_malloc(sizeof *c->copy);
		if (!c->copy)
			return ppi_fail(err, "", "charts", "out of memory");
		pp_error refused;
		pp_error_clear(&refused);
		st = pp_sim_new(&c->sim, &refused);
		if (st == PP_ENOMEM) {
			*err = refused;
			return st;
		}
		*c->copy = *e;
		if (!st)
			st = pp_estimate_simulate(c->copy, c->sim, &refused);
		if (st)
			snprintf(c->gantt_refused, sizeof c->gantt_refused, "%s", refused.text);
		else
			sim = c->sim;
		e = c->copy;
	}
	if (!traffic) {
		if ((st = pp_traffic_of_estimate(e, &c->traffic, err)))
			return st;
		traffic = c->traffic;
	}
	c->in.estimate = e;
	c->in.stages = c->stages;
	c->in.sim = e->simulated ? sim : NULL;
	c->in.traffic = traffic;
	return PP_OK;
}

void pp_report_charts_release(pp_report_charts *c)
{
	pp_traffic_free(c->traffic);
	pp_sim_free(c->sim);
	free(c->copy);
	free(c->stages);
	memset(c, 0, sizeof *c);
}

pp_status pp_report_svg_path(const char *verb, const char *flag, const char *dir, pp_chart c,
                             char *path, size_t n, pp_error *err)
{
	if ((size_t)snprintf(path, n, "%s/%s.svg", dir, pp_chart_name(c)) >= n)
		return ppi_fail(err, verb, NULL, "%s %s: path too long", flag, dir);
	return PP_OK;
}

pp_status pp_report_svg_dir_check(pp_output_set *set, const char *verb, const char *flag,
                                  const char *dir, pp_error *err)
{
	struct stat st;
	if (stat(dir, &st) != 0 && errno == ENOENT) {
		/* Created, with the folders above it that are missing (mkdir -p). */
		char path[PP_OUTPUT_PATH_MAX];
		if ((size_t)snprintf(path, sizeof path, "%s", dir) >= sizeof path)
			return ppi_fail(err, verb, NULL, "%s %s: path too long", flag, dir);
		for (char *p = path + 1;; p++) {
			bool end = *p == '\0';
			if (*p != '/' && !end)
				continue;
			*p = '\0';
			if (mkdir(path, 0777) != 0 && errno != EEXIST)
				return ppi_fail(err, verb, NULL, "%s %s: cannot create %s: %s",
				                flag, dir, path, strerror(errno));
			if (end)
				break;
			*p = '/';
		}
	}
	if (stat(dir, &st) != 0)
		return ppi_fail(err, verb, NULL, "%s %s: %s", flag, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return ppi_fail(err, verb, NULL, "%s %s: not a directory", flag, dir);
	pp_status s = PP_OK;
	for (int k = 0; k < PP_NCHARTS && !s; k++) {
		char path[PP_OUTPUT_PATH_MAX];
		s = pp_report_svg_path(verb, flag, dir, (pp_chart)k, path, sizeof path, err);
		if (!s)
			s = pp_output_check(set, verb, flag, path, err);
	}
	return s;
}
