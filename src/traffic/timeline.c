/*
 * Bytes on the wire over time, from a simulated iteration's events
 * (include/paraplan/traffic.h).
 */
#include <stdlib.h>
#include <string.h>

#include "paraplan/traffic.h"
#include "util/util.h"

static int by_start(const void *a, const void *b)
{
	const pp_traffic_interval *x = a, *y = b;
	if (x->start_s != y->start_s)
		return x->start_s < y->start_s ? -1 : 1;
	return (x->end_s > y->end_s) - (x->end_s < y->end_s);
}

void pp_traffic_timeline_free(pp_traffic_timeline *tl)
{
	if (!tl)
		return;
	for (int r = 0; r < tl->ranks; r++) {
		if (tl->events)
			free(tl->events[r]);
		if (tl->on)
			free(tl->on[r]);
	}
	free(tl->events);
	free(tl->on);
	free(tl->nevents);
	free(tl->non);
	free(tl->on_s);
	free(tl->off_s);
	free(tl->bytes);
	free(tl);
}

static bool is_comm(const pp_sim_event *e)
{
	return e->stream == PP_STREAM_SEND_FWD || e->stream == PP_STREAM_SEND_BWD ||
	       e->stream == PP_STREAM_DP;
}

pp_status pp_traffic_timeline_build(const pp_sim *sim, double iteration_s, int ranks,
                                    pp_traffic_timeline **out, pp_error *err)
{
	*out = NULL;
	if (ranks < 1)
		return ppi_fail(err, "", "ranks", "expected at least 1 pipeline rank, got %d",
		                ranks);
	pp_traffic_timeline *tl = ppi_calloc(1, sizeof *tl);
	if (!tl)
		return ppi_fail(err, "", "timeline", "out of memory");
	tl->ranks = ranks;
	tl->iteration_s = iteration_s;
	size_t R = (size_t)ranks;
	tl->nevents = ppi_calloc(R, sizeof *tl->nevents);
	tl->non = ppi_calloc(R, sizeof *tl->non);
	tl->events = ppi_calloc(R, sizeof *tl->events);
	tl->on = ppi_calloc(R, sizeof *tl->on);
	tl->on_s = ppi_calloc(R, sizeof *tl->on_s);
	tl->off_s = ppi_calloc(R, sizeof *tl->off_s);
	tl->bytes = ppi_calloc(R, sizeof *tl->bytes);
	bool oom = !tl->nevents || !tl->non || !tl->events || !tl->on || !tl->on_s || !tl->off_s ||
	           !tl->bytes;
	size_t n = pp_sim_event_count(sim);
	for (size_t i = 0; i < n && !oom; i++) {
		const pp_sim_event *e = pp_sim_event_at(sim, i);
		if (is_comm(e) && e->rank >= 0 && e->rank < ranks)
			tl->nevents[e->rank]++;
	}
	for (size_t r = 0; r < R && !oom; r++) {
		size_t k = tl->nevents[r] ? tl->nevents[r] : 1;
		tl->events[r] = ppi_malloc(k * sizeof **tl->events);
		tl->on[r] = ppi_malloc(k * sizeof **tl->on);
		oom = !tl->events[r] || !tl->on[r];
		tl->nevents[r] = 0;
	}
	for (size_t i = 0; i < n && !oom; i++) {
		const pp_sim_event *e = pp_sim_event_at(sim, i);
		if (!is_comm(e) || e->rank < 0 || e->rank >= ranks)
			continue;
		pp_traffic_interval *x = &tl->events[e->rank][tl->nevents[e->rank]++];
		x->start_s = e->start_s;
		x->end_s = e->end_s;
		x->bytes = e->bytes;
		tl->bytes[e->rank] += e->bytes;
	}
	if (oom) {
		pp_traffic_timeline_free(tl);
		return ppi_fail(err, "", "timeline", "out of memory");
	}
	/* The on periods: the union of the communication intervals. */
	for (size_t r = 0; r < R; r++) {
		pp_traffic_interval *ev = tl->events[r];
		qsort(ev, tl->nevents[r], sizeof *ev, by_start);
		size_t k = 0;
		for (size_t i = 0; i < tl->nevents[r]; i++) {
			if (ev[i].end_s <= ev[i].start_s)
				continue;
			if (k > 0 && ev[i].start_s <= tl->on[r][k - 1].end_s) {
				pp_traffic_interval *o = &tl->on[r][k - 1];
				if (ev[i].end_s > o->end_s)
					o->end_s = ev[i].end_s;
				o->bytes += ev[i].bytes;
			} else {
				tl->on[r][k++] = ev[i];
			}
		}
		tl->non[r] = k;
		for (size_t i = 0; i < k; i++)
			tl->on_s[r] += tl->on[r][i].end_s - tl->on[r][i].start_s;
		tl->off_s[r] = iteration_s - tl->on_s[r];
	}
	*out = tl;
	return PP_OK;
}

pp_status pp_traffic_timeline_node(const pp_traffic_timeline *tl, const pp_placement *pl,
                                   long long node, pp_node_timeline *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	out->node = node;
	size_t cap = 0;
	for (long long r = 0; r < pl->ranks; r++) {
		pp_gpu_loc loc;
		pp_place_locate(pl, r, &loc);
		if (loc.node != node)
			continue;
		int c[PP_NDIMS];
		pp_place_coords(pl, r, c);
		int s = c[PP_DIM_PP];
		if (s < 0 || s >= tl->ranks)
			continue;
		out->gpus++;
		out->bytes += tl->bytes[s];
		if (s < 64 && !(out->mask & (1ULL << s))) {
			out->mask |= 1ULL << s;
			cap += tl->non[s];
		}
	}
	out->on = ppi_malloc((cap ? cap : 1) * sizeof *out->on);
	if (!out->on)
		return ppi_fail(err, "", "timeline", "out of memory");
	size_t k = 0;
	for (int s = 0; s < tl->ranks && s < 64; s++)
		if (out->mask & (1ULL << s))
			for (size_t i = 0; i < tl->non[s]; i++)
				out->on[k++] = tl->on[s][i];
	qsort(out->on, k, sizeof *out->on, by_start);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m > 0 && out->on[i].start_s <= out->on[m - 1].end_s) {
			if (out->on[i].end_s > out->on[m - 1].end_s)
				out->on[m - 1].end_s = out->on[i].end_s;
			out->on[m - 1].bytes += out->on[i].bytes;
		} else
			out->on[m++] = out->on[i];
	}
	out->non = m;
	for (size_t i = 0; i < m; i++)
		out->on_s += out->on[i].end_s - out->on[i].start_s;
	out->off_s = tl->iteration_s - out->on_s;
	return PP_OK;
}

pp_status pp_traffic_views_build(const pp_estimate *e, bool matrix, const pp_sim *sim,
                                 pp_traffic_views *v, pp_error *err)
{
	memset(v, 0, sizeof *v);
	pp_status st = matrix ? pp_traffic_of_estimate(e, &v->matrix, err) : PP_OK;
	if (st || !sim)
		return st;
	st = pp_traffic_timeline_build(sim, e->sim.iteration_s, e->plan.pp, &v->timeline, err);
	if (!st)
		pp_place_build(&e->plan, &e->system, &v->place);
	return st;
}

void pp_traffic_views_free(pp_traffic_views *v)
{
	pp_traffic_free(v->matrix);
	pp_traffic_timeline_free(v->timeline);
	v->matrix = NULL;
	v->timeline = NULL;
}
