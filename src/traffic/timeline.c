/*
 * Bytes on the wire over time, from a simulated iteration's events and, for
 * the TP, CP and EP collectives inside its compute tasks, the stage profiles
 * (include/paraplan/traffic.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/cost.h"
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
	free(tl->type_on_s);
	free(tl->type_bytes);
	free(tl);
}

static bool is_comm(const pp_sim_event *e)
{
	return e->stream == PP_STREAM_SEND_FWD || e->stream == PP_STREAM_SEND_BWD ||
	       e->stream == PP_STREAM_DP;
}

static pp_traffic_type stream_type(pp_stream s)
{
	return s == PP_STREAM_SEND_FWD   ? PP_TRAFFIC_PP_FWD
	       : s == PP_STREAM_SEND_BWD ? PP_TRAFFIC_PP_BWD
	                                 : PP_TRAFFIC_DP;
}

/* ------------------------------------------- collectives inside the tasks */

/* A stage profile sorted for walking: the entries of each (phase, unit) in
 * profile order, and their summed seconds per unit instance. */
typedef struct walk_prof {
	const pp_stage_profile *prof;
	int idx[PP_PROFILE_MAX];
	int first[4][PP_UNIT_STAGE + 1], count[4][PP_UNIT_STAGE + 1];
	double unit_s[4][PP_UNIT_STAGE + 1];
	int vp;
} walk_prof;

/* The TP, CP and EP collectives of a task (else -1). */
static int in_task_type(const pp_profile_entry *x)
{
	if (!x->coll || !x->algo || x->unit == PP_UNIT_STAGE)
		return -1;
	switch (x->group) {
	case PP_GROUP_TP:
	case PP_GROUP_TP2: return PP_TRAFFIC_TP;
	case PP_GROUP_CP: return PP_TRAFFIC_CP;
	case PP_GROUP_EP:
	case PP_GROUP_ETP: return PP_TRAFFIC_EP;
	default: return -1;
	}
}

static double entry_s(const pp_profile_entry *x)
{
	return x->seconds * x->count * x->panels;
}

static void walk_prof_init(walk_prof *w, const pp_stage_profile *prof, int vp)
{
	memset(w, 0, sizeof *w);
	w->prof = prof;
	w->vp = vp < 1 ? 1 : vp;
	int k = 0;
	for (int ph = 0; ph < 4; ph++)
		for (int u = 0; u < PP_UNIT_STAGE; u++) {
			w->first[ph][u] = k;
			for (int i = 0; i < prof->n; i++) {
				const pp_profile_entry *x = &prof->e[i];
				if ((int)x->phase != ph || (int)x->unit != u)
					continue;
				w->idx[k++] = i;
				w->unit_s[ph][u] += entry_s(x);
			}
			w->count[ph][u] = k - w->first[ph][u];
		}
}

/* Instances of unit u in a task of chunk `chunk` (-1: the only chunk). */
static double unit_reps(const walk_prof *w, int ph, int u, int chunk)
{
	if (!w->count[ph][u])
		return 0;
	if (u == PP_UNIT_EMBEDDING)
		return chunk <= 0 ? 1 : 0;
	if (u == PP_UNIT_HEAD)
		return chunk < 0 || chunk == w->vp - 1 ? 1 : 0;
	/* the layers of the unit: `times` of its first entry, split over the vp
	 * chunks as evenly as whole layers go (the chunks' counts sum to it) */
	double t = w->prof->e[w->idx[w->first[ph][u]]].times;
	if (chunk < 0)
		return t;
	return floor((chunk + 1) * t / w->vp) - floor(chunk * t / w->vp);
}

/* The phases of a task kind, in order (-1 ends). */
static const int *task_phases(pp_event_kind k)
{
	static const int f[] = {PP_PHASE_FWD, -1};
	static const int b[] = {PP_PHASE_RECOMPUTE, PP_PHASE_BWD_INPUT, PP_PHASE_BWD_WEIGHT, -1};
	static const int bi[] = {PP_PHASE_RECOMPUTE, PP_PHASE_BWD_INPUT, -1};
	static const int wg[] = {PP_PHASE_BWD_WEIGHT, -1};
	static const int si[] = {PP_PHASE_FWD, PP_PHASE_RECOMPUTE, PP_PHASE_BWD_INPUT,
	                         PP_PHASE_BWD_WEIGHT, -1};
	static const int none[] = {-1};
	switch (k) {
	case PP_EV_F: return f;
	case PP_EV_B: return b;
	case PP_EV_BI: return bi;
	case PP_EV_W: return wg;
	case PP_EV_SI: return si;
	default: return none;
	}
}

/*
 * Lay task `ev` out (see pp_traffic_timeline_of_estimate): with `out` NULL,
 * count its in-task intervals; else write them to out.  Returns the count.
 */
static size_t walk_task(const walk_prof *w, const pp_sim_event *ev, pp_traffic_interval *out)
{
	static const int fwd_units[] = {PP_UNIT_EMBEDDING, PP_UNIT_DENSE_LAYERS, PP_UNIT_MOE_LAYERS,
	                                PP_UNIT_HEAD};
	const int *phases = task_phases(ev->kind);
	int chunk = w->vp > 1 ? ev->chunk : -1;
	double total = 0;
	size_t n = 0;
	for (const int *ph = phases; *ph >= 0; ph++)
		for (int u = 0; u < PP_UNIT_STAGE; u++) {
			double reps = unit_reps(w, *ph, u, chunk);
			total += reps * w->unit_s[*ph][u];
			if (reps > 0)
				for (int k = 0; k < w->count[*ph][u]; k++)
					if (in_task_type(
					        &w->prof->e[w->idx[w->first[*ph][u] + k]]) >= 0)
						n += (size_t)reps;
		}
	if (!out || total <= 0 || n == 0)
		return total > 0 ? n : 0;
	double scale = (ev->end_s - ev->start_s) / total, t = ev->start_s;
	size_t m = 0;
	for (const int *ph = phases; *ph >= 0; ph++) {
		bool back = *ph != PP_PHASE_FWD;
		for (int j = 0; j < PP_UNIT_STAGE; j++) {
			int u = fwd_units[back ? PP_UNIT_STAGE - 1 - j : j];
			double reps = unit_reps(w, *ph, u, chunk);
			for (double r = 0; r < reps; r++)
				for (int k = 0; k < w->count[*ph][u]; k++) {
					const pp_profile_entry *x =
					    &w->prof->e[w->idx[w->first[*ph][u] + k]];
					double d = entry_s(x) * scale;
					int type = in_task_type(x);
					if (type >= 0 && m < n)
						out[m++] = (pp_traffic_interval){
						    t,
						    t + d,
						    x->wire_bytes * x->count,
						    (pp_traffic_type)type,
						    x->name,
						    x->algo->name,
						    pp_coll_proto_name(x->proto)};
					t += d;
				}
		}
	}
	return m;
}

/* ---------------------------------------------------------------- build */

static pp_traffic_timeline *timeline_alloc(int ranks, double iteration_s)
{
	pp_traffic_timeline *tl = ppi_calloc(1, sizeof *tl);
	if (!tl)
		return NULL;
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
	tl->type_on_s = ppi_calloc(R, sizeof *tl->type_on_s);
	tl->type_bytes = ppi_calloc(R, sizeof *tl->type_bytes);
	if (!tl->nevents || !tl->non || !tl->events || !tl->on || !tl->on_s || !tl->off_s ||
	    !tl->bytes || !tl->type_on_s || !tl->type_bytes) {
		pp_traffic_timeline_free(tl);
		return NULL;
	}
	return tl;
}

/* Rank r's events: the communication events of `sim` and, with `w`, the
 * collectives inside its compute tasks.  False when out of memory. */
static bool rank_events(pp_traffic_timeline *tl, const pp_sim *sim, int r, const walk_prof *w)
{
	size_t n = pp_sim_event_count(sim), k = 0;
	for (size_t i = 0; i < n; i++) {
		const pp_sim_event *e = pp_sim_event_at(sim, i);
		if (e->rank != r)
			continue;
		if (is_comm(e))
			k++;
		else if (w && e->stream == PP_STREAM_COMPUTE)
			k += walk_task(w, e, NULL);
	}
	tl->events[r] = ppi_malloc((k ? k : 1) * sizeof **tl->events);
	tl->on[r] = ppi_malloc((k ? k : 1) * sizeof **tl->on);
	if (!tl->events[r] || !tl->on[r])
		return false;
	size_t m = 0;
	for (size_t i = 0; i < n && m < k; i++) {
		const pp_sim_event *e = pp_sim_event_at(sim, i);
		if (e->rank != r)
			continue;
		if (is_comm(e)) {
			pp_traffic_type type = stream_type(e->stream);
			tl->events[r][m++] = (pp_traffic_interval){
			    e->start_s, e->end_s, e->bytes, type, pp_stream_name(e->stream),
			    NULL,       NULL};
		} else if (w && e->stream == PP_STREAM_COMPUTE) {
			size_t want = walk_task(w, e, NULL);
			if (want && m + want <= k)
				m += walk_task(w, e, tl->events[r] + m);
		}
	}
	tl->nevents[r] = m;
	for (size_t i = 0; i < m; i++) {
		tl->bytes[r] += tl->events[r][i].bytes;
		tl->type_bytes[r][tl->events[r][i].type] += tl->events[r][i].bytes;
	}
	return true;
}

/* The on periods of rank r: the union of its intervals, and of each type's. */
static void rank_union(pp_traffic_timeline *tl, int r)
{
	pp_traffic_interval *ev = tl->events[r];
	qsort(ev, tl->nevents[r], sizeof *ev, by_start);
	double t_end[PP_TRAFFIC_NTYPES];
	for (int t = 0; t < PP_TRAFFIC_NTYPES; t++)
		t_end[t] = -1;
	size_t k = 0;
	for (size_t i = 0; i < tl->nevents[r]; i++) {
		if (ev[i].end_s <= ev[i].start_s)
			continue;
		/* the type's union: sorted by start, each adds what passes its end */
		int ty = ev[i].type;
		double from = ev[i].start_s > t_end[ty] ? ev[i].start_s : t_end[ty];
		if (ev[i].end_s > from) {
			tl->type_on_s[r][ty] += ev[i].end_s - from;
			t_end[ty] = ev[i].end_s;
		}
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
	tl->off_s[r] = tl->iteration_s - tl->on_s[r];
}

pp_status pp_traffic_timeline_build(const pp_sim *sim, double iteration_s, int ranks,
                                    pp_traffic_timeline **out, pp_error *err)
{
	*out = NULL;
	if (ranks < 1)
		return ppi_fail(err, "", "ranks", "expected at least 1 pipeline rank, got %d",
		                ranks);
	pp_traffic_timeline *tl = timeline_alloc(ranks, iteration_s);
	bool oom = !tl;
	for (int r = 0; r < ranks && !oom; r++)
		oom = !rank_events(tl, sim, r, NULL);
	if (oom) {
		pp_traffic_timeline_free(tl);
		return ppi_fail(err, "", "timeline", "out of memory");
	}
	for (int r = 0; r < ranks; r++)
		rank_union(tl, r);
	*out = tl;
	return PP_OK;
}

pp_status pp_traffic_timeline_of_estimate(const pp_estimate *e, const pp_sim *sim,
                                          pp_traffic_timeline **out, pp_error *err)
{
	*out = NULL;
	int ranks = e->plan.pp;
	if (ranks < 1)
		return ppi_fail(err, "", "pp", "expected at least 1 pipeline rank, got %d", ranks);
	pp_traffic_timeline *tl = timeline_alloc(ranks, e->sim.iteration_s);
	pp_work *ws = ppi_malloc(sizeof *ws);
	pp_stage_profile *prof = ppi_malloc(sizeof *prof);
	walk_prof *w = ppi_malloc(sizeof *w);
	pp_status st = PP_OK;
	bool oom = !tl || !ws || !prof || !w;
	if (!oom)
		pp_work_init(ws);
	for (int r = 0; r < ranks && !oom && !st; r++) {
		st = pp_stage_profile_build(&e->model, &e->system, &e->job, &e->plan, r, ws, prof,
		                            err);
		if (st)
			break;
		walk_prof_init(w, prof, e->plan.vp);
		oom = !rank_events(tl, sim, r, w);
		rank_union(tl, r);
	}
	free(ws);
	free(prof);
	free(w);
	if (oom && !st)
		st = ppi_fail(err, "", "timeline", "out of memory");
	if (st) {
		pp_traffic_timeline_free(tl);
		return st;
	}
	tl->in_task = true;
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
	st = pp_traffic_timeline_of_estimate(e, sim, &v->timeline, err);
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
