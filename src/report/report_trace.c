/*
 * Chrome / Perfetto trace of a simulated iteration.
 *
 * Trace Event Format, JSON object form: {"traceEvents": [...],
 * "displayTimeUnit": "ms"}.  Metadata events name the processes (pipeline
 * ranks) and threads (streams); complete events ("ph": "X") carry ts and dur
 * in microseconds.  The TP, CP and EP collectives inside the compute tasks
 * (pp_traffic_timeline_of_estimate) are threads of their own, each event
 * with its algorithm; otherData.collectives lists the paced stage's
 * collectives as estimate --json does.
 */
#include <stdlib.h>

#include "paraplan/report.h"
#include "paraplan/traffic.h"
#include "report_int.h"
#include "util/util.h"

static const char *const phase_names[] = {"forward",         "backward", "backward-input",
                                          "backward-weight", "send",     "data-parallel",
                                          "optimizer",       "other",    "strand-interleaved"};
_Static_assert(sizeof phase_names / sizeof phase_names[0] == PP_EV_SI + 1,
               "a phase name per event kind");

static json_t *meta(const char *what, int pid, int tid, const char *name)
{
	return json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", what, "ph", "M", "pid", pid, "tid",
	                 tid, "args", "name", name);
}

static json_t *complete(const char *name, const char *cat, int pid, int tid, double t0_s,
                        double t1_s, json_t *args)
{
	return json_pack("{s:s,s:s,s:s,s:i,s:i,s:f,s:f,s:o}", "name", name, "cat", cat, "ph", "X",
	                 "pid", pid, "tid", tid, "ts", t0_s * 1e6, "dur", (t1_s - t0_s) * 1e6,
	                 "args", args);
}

/* The TP, CP and EP collectives inside the compute tasks, on threads
 * PP_NSTREAMS + type of each rank's process.  0, or -1 when the timeline
 * cannot be built. */
static int in_task_events(const pp_estimate *e, const pp_sim *sim, json_t *evs)
{
	pp_traffic_timeline *tl;
	pp_error err;
	if (pp_traffic_timeline_of_estimate(e, sim, &tl, &err))
		return -1;
	static const pp_traffic_type types[] = {PP_TRAFFIC_TP, PP_TRAFFIC_CP, PP_TRAFFIC_EP};
	for (int r = 0; r < tl->ranks; r++)
		for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
			if (tl->type_bytes[r][types[k]] > 0)
				json_array_append_new(evs, meta("thread_name", r,
				                                PP_NSTREAMS + (int)types[k],
				                                pp_traffic_type_name(types[k])));
	for (int r = 0; r < tl->ranks; r++)
		for (size_t i = 0; i < tl->nevents[r]; i++) {
			const pp_traffic_interval *x = &tl->events[r][i];
			if (x->type != PP_TRAFFIC_TP && x->type != PP_TRAFFIC_CP &&
			    x->type != PP_TRAFFIC_EP)
				continue;
			const char *type = pp_traffic_type_name(x->type);
			json_array_append_new(
			    evs,
			    complete(x->name, type, r, PP_NSTREAMS + (int)x->type, x->start_s,
			             x->end_s,
			             json_pack("{s:s,s:s,s:s,s:f}", "algo", x->algo ? x->algo : "",
			                       "protocol", x->protocol ? x->protocol : "", "type",
			                       type, "bytes", x->bytes)));
		}
	pp_traffic_timeline_free(tl);
	return 0;
}

int pp_report_trace(const pp_estimate *e, const pp_sim *sim, FILE *out)
{
	long long mark = ppi_alloc_failed();
	if (!e->simulated)
		return -1;
	int p = e->plan.pp;
	json_t *evs = json_array();
	if (!evs)
		return -1;
	for (int r = 0; r < p; r++) {
		char name[64];
		snprintf(name, sizeof name, "pipeline rank %d", r);
		json_array_append_new(evs, meta("process_name", r, 0, name));
		for (int s = 0; s < PP_NSTREAMS; s++)
			json_array_append_new(
			    evs, meta("thread_name", r, s, pp_stream_name((pp_stream)s)));
	}
	double *cursor = ppi_calloc((size_t)p, sizeof *cursor);
	if (!cursor) {
		json_decref(evs);
		return -1;
	}
	size_t n = pp_sim_event_count(sim);
	for (size_t i = 0; i < n; i++) {
		const pp_sim_event *ev = pp_sim_event_at(sim, i);
		/* Compute events are recorded in order per rank: fill gaps as idle. */
		if (ev->stream == PP_STREAM_COMPUTE && ev->start_s > cursor[ev->rank]) {
			json_array_append_new(evs, complete("idle", "bubble", ev->rank,
			                                    PP_STREAM_COMPUTE, cursor[ev->rank],
			                                    ev->start_s, json_object()));
		}
		if (ev->stream == PP_STREAM_COMPUTE)
			cursor[ev->rank] = ev->end_s;
		char name[64];
		if (ev->kind == PP_EV_SI) /* two strands: one's forward, the other's backward */
			snprintf(name, sizeof name, "SI F mb%d c%d + B mb%d c%d", ev->mb, ev->chunk,
			         ev->mb2, ev->chunk2);
		else if (ev->mb >= 0 && e->plan.vp > 1)
			snprintf(name, sizeof name, "%s mb%d c%d", pp_event_kind_name(ev->kind),
			         ev->mb, ev->chunk);
		else if (ev->mb >= 0)
			snprintf(name, sizeof name, "%s mb%d", pp_event_kind_name(ev->kind),
			         ev->mb);
		else
			snprintf(name, sizeof name, "%s", pp_event_kind_name(ev->kind));
		json_t *args =
		    json_pack("{s:s,s:i,s:i,s:f,s:f}", "phase", phase_names[ev->kind], "microbatch",
		              ev->mb, "chunk", ev->chunk, "flops", ev->flops, "bytes", ev->bytes);
		json_array_append_new(evs, complete(name, phase_names[ev->kind], ev->rank,
		                                    ev->stream, ev->start_s, ev->end_s, args));
	}
	/* Close each rank's compute track at the end of the iteration. */
	for (int r = 0; r < p; r++)
		if (cursor[r] < e->sim.iteration_s)
			json_array_append_new(evs, complete("idle", "bubble", r, PP_STREAM_COMPUTE,
			                                    cursor[r], e->sim.iteration_s,
			                                    json_object()));
	free(cursor);
	if (in_task_events(e, sim, evs)) {
		json_decref(evs);
		return -1;
	}
	json_t *colls = ppi_report_colls_json(e);
	json_t *root =
	    json_pack("{s:o,s:s,s:{s:f,s:f,s:s,s:s,s:o}}", "traceEvents", evs, "displayTimeUnit",
	              "ms", "otherData", "iteration_s", e->sim.iteration_s,
	              "closed_form_iteration_s", e->time.iteration_s, "model", e->model.name,
	              "system", e->system.name, "collectives", colls ? colls : json_null());
	return ppi_report_dump(root, mark, out);
}
