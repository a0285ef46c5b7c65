/*
 * Discrete-event simulation of one iteration over all pipeline ranks.
 *
 * Each rank runs its task list in order; a task waits for its rank and for
 * its input (the previous virtual stage's activation, the next one's
 * gradient), which travels on the sender's link stream.  The lists are
 * swept rank by rank until every task has run: a sweep advances each rank as
 * far as its inputs allow, so the number of sweeps is bounded by the
 * dependency chain's turns, and the whole run is O(tasks + sweeps x ranks).
 */
#include <stdlib.h>
#include <string.h>

#include "paraplan/schedule_type.h"
#include "paraplan/sim.h"
#include "util/util.h"

struct pp_sim {
	int p, v;
	bool folded; /* U or V fold: rank r holds virtual stages r and 2p - 1 - r */
	/* A placement given as data (pp_sim_set_placement); lines == 0: none.
	 * stage_at[r v + c] is rank r's chunk c's virtual stage, where_at its
	 * inverse; the p v stages are cut into `lines` pipelines of line_len. */
	int lines, line_len;
	int *stage_at, *where_at;
	size_t cap_place;
	long long m;
	/* Task lists: rank r's tasks are tasks[off[r] .. off[r] + len[r]). */
	pp_task *tasks;
	size_t *off, *len;
	size_t ntasks, cap_tasks;
	int cap_ranks;
	/* Completion times per (rank, chunk, micro-batch); -1 = not yet. */
	double *f_arrive, *b_arrive; /* when the input of F / B is on this rank */
	double *f_end, *bi_end;
	/* Blocking exchanges (pp_sim_stage.p2p_blocking): f_arrive / b_arrive
	 * hold when the sender posted the send, f_post / b_post when the
	 * receiver posted the receive (the end of its task before). */
	double *f_post, *b_post;
	size_t cap_slots;
	/* Per rank: compute free, link free per direction, next task; the sends
	 * of its last task not yet matched (blocking: at most 2, an SI block's). */
	double *free_at, *send_f, *send_b;
	size_t *ptr;
	struct pending {
		int to, mb, chunk, from_chunk; /* the receiver's slot; the sender's chunk */
		bool grad;
	} * pend;
	int *npend;
	pp_sim_event *ev;
	size_t nev, cap_ev;
	bool custom; /* lists given as data, not by pp_sim_orders */
};

static const char *const kind_names[] = {"F",  "B",         "BI",    "W", "send",
                                         "dp", "optimizer", "other", "SI"};
static const char *const stream_names[] = {"compute", "send-fwd", "send-bwd", "dp"};

const char *pp_event_kind_name(pp_event_kind k)
{
	return (unsigned)k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k] : "?";
}

const char *pp_stream_name(pp_stream s)
{
	return (unsigned)s < PP_NSTREAMS ? stream_names[s] : "?";
}

pp_status pp_sim_new(pp_sim **out, pp_error *err)
{
	*out = ppi_calloc(1, sizeof **out);
	if (!*out) {
		ppi_fail(err, "", "sim", "out of memory");
		return PP_ENOMEM;
	}
	return PP_OK;
}

void pp_sim_free(pp_sim *sim)
{
	if (!sim)
		return;
	free(sim->tasks);
	free(sim->off);
	free(sim->len);
	free(sim->f_arrive);
	free(sim->b_arrive);
	free(sim->f_end);
	free(sim->bi_end);
	free(sim->f_post);
	free(sim->b_post);
	free(sim->pend);
	free(sim->npend);
	free(sim->ev);
	free(sim->free_at);
	free(sim->send_f);
	free(sim->send_b);
	free(sim->ptr);
	free(sim->stage_at);
	free(sim->where_at);
	free(sim);
}

/* Grow *buf to hold n elements of `size` bytes. */
static bool grow(void **buf, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return true;
	size_t c = *cap ? *cap : 64;
	while (c < n)
		c *= 2;
	void *b = ppi_realloc(*buf, c * size);
	if (!b)
		return false;
	*buf = b;
	*cap = c;
	return true;
}

pp_status pp_sim_reset(pp_sim *sim, int p, long long m, int v, pp_error *err)
{
	if (p < 1 || m < 1 || v < 1 || p > 1 << 20 || v > 1 << 10 || m > 1LL << 24 ||
	    (double)p * v * m > 1e8)
		return ppi_fail(
		    err, "", "sim",
		    "expected 1 <= p, m, v and p x v x m <= 1e8, got p %d, m %lld, v %d", p, m, v);
	sim->p = p;
	sim->m = m;
	sim->v = v;
	sim->folded = false;
	sim->lines = 0;
	sim->ntasks = 0;
	sim->nev = 0;
	sim->custom = true; /* pp_sim_orders clears it */
	if (p > sim->cap_ranks) {
		size_t n = (size_t)p;
		void *b[7] = {
		    ppi_realloc(sim->off, n * sizeof(size_t)), NULL, NULL, NULL, NULL, NULL, NULL};
		if (b[0])
			sim->off = b[0];
		if (b[0] && (b[1] = ppi_realloc(sim->len, n * sizeof(size_t))))
			sim->len = b[1];
		if (b[1] && (b[2] = ppi_realloc(sim->ptr, n * sizeof(size_t))))
			sim->ptr = b[2];
		if (b[2] && (b[3] = ppi_realloc(sim->free_at, n * sizeof(double))))
			sim->free_at = b[3];
		if (b[3] && (b[4] = ppi_realloc(sim->send_f, n * sizeof(double))))
			sim->send_f = b[4];
		if (b[4] && (b[5] = ppi_realloc(sim->send_b, n * sizeof(double))))
			sim->send_b = b[5];
		if (b[5] && (b[6] = ppi_realloc(sim->npend, n * sizeof(int))))
			sim->npend = b[6];
		void *pd = b[6] ? ppi_realloc(sim->pend, 2 * n * sizeof *sim->pend) : NULL;
		if (pd)
			sim->pend = pd;
		if (!pd) {
			ppi_fail(err, "", "sim", "out of memory");
			return PP_ENOMEM;
		}
		sim->cap_ranks = p;
	}
	for (int r = 0; r < p; r++)
		sim->off[r] = sim->len[r] = 0;
	size_t slots = (size_t)p * (size_t)v * (size_t)m, cap = sim->cap_slots;
	bool ok = true;
	cap = sim->cap_slots;
	ok &= grow((void **)&sim->f_arrive, &cap, slots, sizeof(double));
	cap = sim->cap_slots;
	ok &= grow((void **)&sim->b_arrive, &cap, slots, sizeof(double));
	cap = sim->cap_slots;
	ok &= grow((void **)&sim->f_end, &cap, slots, sizeof(double));
	cap = sim->cap_slots;
	ok &= grow((void **)&sim->bi_end, &cap, slots, sizeof(double));
	cap = sim->cap_slots;
	ok &= grow((void **)&sim->f_post, &cap, slots, sizeof(double));
	cap = sim->cap_slots;
	ok &= grow((void **)&sim->b_post, &cap, slots, sizeof(double));
	if (!ok) {
		ppi_fail(err, "", "sim", "out of memory");
		return PP_ENOMEM;
	}
	sim->cap_slots = cap;
	return PP_OK;
}

/* Append a task to rank r's list (lists are appended rank by rank). */
static bool push(pp_sim *sim, int r, pp_task_kind k, long long mb, int chunk)
{
	if (!grow((void **)&sim->tasks, &sim->cap_tasks, sim->ntasks + 1, sizeof(pp_task)))
		return false;
	if (sim->len[r] == 0)
		sim->off[r] = sim->ntasks;
	sim->tasks[sim->ntasks++] = (pp_task){k, (int)mb, chunk};
	sim->len[r]++;
	return true;
}

static const char *task_name(pp_task_kind k)
{
	return k == PP_TASK_SI ? "SI" : kind_names[k];
}

/* Virtual stage of (rank, chunk), and back. */
static int vs_of(const pp_sim *sim, int r, int c)
{
	if (sim->lines)
		return sim->stage_at[r * sim->v + c];
	if (sim->folded)
		return c == 0 ? r : 2 * sim->p - 1 - r;
	return c * sim->p + r;
}

static void rank_chunk_of(const pp_sim *sim, int vs, int *r, int *c)
{
	if (sim->lines) {
		*r = sim->where_at[vs] / sim->v;
		*c = sim->where_at[vs] % sim->v;
	} else if (sim->folded) {
		*c = vs < sim->p ? 0 : 1;
		*r = vs < sim->p ? vs : 2 * sim->p - 1 - vs;
	} else {
		*r = vs % sim->p;
		*c = vs / sim->p;
	}
}

/* Whether virtual stage vs is the last (first) of its pipeline line. */
static bool vs_last(const pp_sim *sim, int vs)
{
	if (sim->lines)
		return vs % sim->line_len == sim->line_len - 1;
	return vs == sim->p * sim->v - 1;
}

static bool vs_first(const pp_sim *sim, int vs)
{
	return sim->lines ? vs % sim->line_len == 0 : vs == 0;
}

pp_status pp_sim_set_placement(pp_sim *sim, const int *stage, int lines, pp_error *err)
{
	const int n = sim->p * sim->v;
	if (sim->p < 1)
		return ppi_fail(err, "", "sim", "no task lists (call pp_sim_reset first)");
	if (lines < 1 || n % lines != 0)
		return ppi_fail(err, "", "sim.placement",
		                "%d virtual stages do not cut into %d lines of equal length", n,
		                lines);
	size_t cap = sim->cap_place;
	bool ok = grow((void **)&sim->stage_at, &cap, (size_t)n, sizeof(int));
	cap = sim->cap_place;
	ok = ok && grow((void **)&sim->where_at, &cap, (size_t)n, sizeof(int));
	if (!ok) {
		ppi_fail(err, "", "sim", "out of memory");
		return PP_ENOMEM;
	}
	sim->cap_place = cap;
	for (int i = 0; i < n; i++)
		sim->where_at[i] = -1;
	for (int i = 0; i < n; i++) {
		if (stage[i] < 0 || stage[i] >= n || sim->where_at[stage[i]] >= 0) {
			sim->lines = 0;
			return ppi_fail(err, "", "sim.placement",
			                "rank %d chunk %d: virtual stage %d is outside 0..%d or "
			                "placed twice",
			                i / sim->v, i % sim->v, stage[i], n - 1);
		}
		sim->where_at[stage[i]] = i;
		sim->stage_at[i] = stage[i];
	}
	sim->lines = lines;
	sim->line_len = n / lines;
	sim->folded = false;
	return PP_OK;
}

pp_status pp_sim_set_order(pp_sim *sim, int rank, const pp_task *tasks, size_t n, pp_error *err)
{
	if (rank < 0 || rank >= sim->p)
		return ppi_fail(err, "", "sim.rank", "rank %d is outside 0..%d", rank, sim->p - 1);
	if (sim->len[rank])
		return ppi_fail(err, "", "sim.rank", "rank %d's order is already set", rank);
	for (size_t i = 0; i < n; i++) {
		const pp_task *t = &tasks[i];
		if ((unsigned)t->kind > PP_TASK_SI || t->mb < 0 || t->mb >= sim->m ||
		    t->chunk < 0 || t->chunk >= sim->v)
			return ppi_fail(
			    err, "", "sim.order",
			    "rank %d task %zu: kind %d, micro-batch %d, chunk %d out of "
			    "range",
			    rank, i, (int)t->kind, t->mb, t->chunk);
		if (t->kind == PP_TASK_SI && (i + 1 >= n || tasks[i + 1].kind != PP_TASK_B))
			return ppi_fail(err, "", "sim.order",
			                "rank %d task %zu: an SI block's forward must be followed "
			                "by the backward it runs with",
			                rank, i);
		if (!push(sim, rank, t->kind, t->mb, t->chunk)) {
			ppi_fail(err, "", "sim", "out of memory");
			return PP_ENOMEM;
		}
	}
	return PP_OK;
}

bool pp_sim_orders_custom(const pp_sim *sim, int p, long long m, int v)
{
	return sim->custom && sim->p == p && sim->m == m && sim->v == v;
}

/* Rank r's task list; NULL when no rank has a task (a list given as data may
 * be empty, and NULL + 0 is undefined behaviour). */
static const pp_task *rank_tasks(const pp_sim *sim, int r)
{
	return sim->tasks ? sim->tasks + sim->off[r] : NULL;
}

const pp_task *pp_sim_order(const pp_sim *sim, int rank, size_t *n)
{
	if (rank < 0 || rank >= sim->p) {
		*n = 0;
		return NULL;
	}
	*n = sim->len[rank];
	return rank_tasks(sim, rank);
}

/* The schedule types' way into push() (schedule_type.h's pp_sched_push). */
static bool push_task(void *ctx, int rank, pp_task_kind kind, long long mb, int chunk)
{
	return push(ctx, rank, kind, mb, chunk);
}

pp_status pp_sim_orders(pp_sim *sim, pp_schedule sched, int p, long long m, int v, pp_error *err)
{
	const pp_schedule_type *t = pp_schedule_type_of(sched);
	if (!t)
		return ppi_fail(err, "", "plan.schedule", "unknown schedule %d", (int)sched);
	int chunks = 1;
	PPI_TRY(t->sim_shape(p, m, v, &chunks, err));
	/* two model copies (PP_FOLD_DUAL): half the micro-batches run through
	 * each, chunk c of every rank on line c (the type's virtual_stage) */
	const bool dual = t->fold == PP_FOLD_DUAL;
	PPI_TRY(pp_sim_reset(sim, p, dual ? m / 2 : m, chunks, err));
	if (dual) {
		int *stage = ppi_calloc((size_t)p * (size_t)chunks, sizeof *stage);
		if (!stage)
			return ppi_oom(err);
		pp_plan plan = {.pp = p, .vp = v, .microbatches = m};
		for (int r = 0; r < p; r++)
			for (int c = 0; c < chunks; c++)
				stage[r * chunks + c] = t->virtual_stage(&plan, r, c);
		pp_status st = pp_sim_set_placement(sim, stage, chunks, err);
		free(stage);
		PPI_TRY(st);
	}
	/* the U and the V put chunks r and 2p - 1 - r on rank r (vs_of) */
	sim->folded = t->fold == PP_FOLD_U || t->fold == PP_FOLD_V;
	sim->custom = false;
	bool ok = true;
	for (int r = 0; r < p && ok; r++)
		ok = t->sim_order(p, m, v, r, push_task, sim);
	if (!ok) {
		ppi_fail(err, "", "sim", "out of memory");
		return PP_ENOMEM;
	}
	return PP_OK;
}

static void record(pp_sim *sim, int rank, pp_stream s, pp_event_kind k, int mb, int chunk,
                   double t0, double t1, double flops, double bytes)
{
	if (sim->nev < sim->cap_ev)
		sim->ev[sim->nev++] =
		    (pp_sim_event){rank, s, k, mb, chunk, t0, t1, flops, bytes, -1, -1};
}

/* Send an activation (a gradient where `grad`) of (mb, chunk) that rank r
 * finished at t1 to rank nr; returns when it arrives.  The link is the
 * sender's stream: activations on send-fwd and gradients on send-bwd, or,
 * under a placement (pp_sim_set_placement), where both travel either way,
 * send-fwd to a higher rank and send-bwd to a lower one. */
static double ship(pp_sim *sim, const pp_sim_stage *s, int r, int nr, bool grad, double t1, int mb,
                   int chunk)
{
	bool up = sim->lines ? nr > r : !grad;
	double *link = up ? &sim->send_f[r] : &sim->send_b[r];
	/* the hop it crosses: to the next rank (the wrap to rank 0 included) at
	 * send_fwd_s, to the previous one at send_bwd_s, whatever it carries */
	double dur = nr == (r + 1) % sim->p ? s->send_fwd_s : s->send_bwd_s;
	double a = t1 > *link ? t1 : *link;
	*link = a + dur;
	if (dur > 0)
		record(sim, r, up ? PP_STREAM_SEND_FWD : PP_STREAM_SEND_BWD, PP_EV_SEND, mb, chunk,
		       a, *link, 0, s->send_bytes);
	return *link;
}

/* Check that every (micro-batch, chunk) runs its forward once and its
 * backward once (as B, or as BI and W) on every rank. */
static pp_status check_orders(const pp_sim *sim, unsigned char *seen, pp_error *err)
{
	size_t slots = (size_t)sim->v * (size_t)sim->m;
	for (int r = 0; r < sim->p; r++) {
		memset(seen, 0, slots);
		const pp_task *t = rank_tasks(sim, r);
		for (size_t i = 0; i < sim->len[r]; i++) {
			size_t k = (size_t)t[i].chunk * (size_t)sim->m + (size_t)t[i].mb;
			unsigned bit = t[i].kind == PP_TASK_F || t[i].kind == PP_TASK_SI ? 1u
			               : t[i].kind == PP_TASK_B                          ? 2u | 4u
			               : t[i].kind == PP_TASK_BI                         ? 2u
			                                                                 : 4u;
			if (seen[k] & bit)
				return ppi_fail(err, "", "sim.order",
				                "rank %d runs micro-batch %d chunk %d's %s twice",
				                r, t[i].mb, t[i].chunk, task_name(t[i].kind));
			seen[k] |= (unsigned char)bit;
		}
		for (size_t k = 0; k < slots; k++)
			if (seen[k] != 7u)
				return ppi_fail(
				    err, "", "sim.order",
				    "rank %d never runs the %s of micro-batch %zu chunk %zu", r,
				    (seen[k] & 1u) ? "backward" : "forward", k % (size_t)sim->m,
				    k / (size_t)sim->m);
	}
	return PP_OK;
}

/* Index of (rank, chunk, micro-batch) in the per-slot arrays. */
static size_t slot(const pp_sim *sim, int r, int c, int mb)
{
	return ((size_t)r * (size_t)sim->v + (size_t)c) * (size_t)sim->m + (size_t)mb;
}

/* Hand the output of rank r's virtual stage `vs` for micro-batch mb, ready at
 * t1, to the virtual stage after it (before it, a gradient where `grad`): on
 * the same rank at once (the fold), else over the sender's link. */
static void pass_on(pp_sim *sim, const pp_sim_stage *s, int r, int vs, int chunk, int mb, bool grad,
                    double t1)
{
	int nr, nc;
	rank_chunk_of(sim, grad ? vs - 1 : vs + 1, &nr, &nc);
	double *arrive = grad ? sim->b_arrive : sim->f_arrive;
	if (nr != r && s->p2p_blocking > 0) {
		/* posted: the transfer waits for the receiver (sends_end, input_at) */
		arrive[slot(sim, nr, nc, mb)] = t1;
		sim->pend[2 * r + sim->npend[r]++] = (struct pending){nr, mb, nc, chunk, grad};
		return;
	}
	arrive[slot(sim, nr, nc, mb)] = nr == r ? t1 : ship(sim, s, r, nr, grad, t1, mb, chunk);
}

/* Blocking exchanges: one transfer from rank `from` to `to`, the hop as
 * ship() times it, p2p_blocking times over. */
static double hop_s(const pp_sim *sim, const pp_sim_stage *st, int from, int to)
{
	const pp_sim_stage *s = &st[from];
	double d = to == (from + 1) % sim->p ? s->send_fwd_s : s->send_bwd_s;
	return d * s->p2p_blocking;
}

/* When the input of rank r's (chunk c, mb) F (B's gradient where `grad`) is
 * on the rank, -1 not yet.  Blocking: the transfer from its sender starts
 * when both have posted (the sender after the task that made it, the
 * receiver after its task before this one). */
static double input_at(const pp_sim *sim, const pp_sim_stage *st, int r, int c, int mb, bool grad)
{
	size_t k = slot(sim, r, c, mb);
	double a = grad ? sim->b_arrive[k] : sim->f_arrive[k];
	int vs = vs_of(sim, r, c), from, fc;
	if (a < 0 || st[r].p2p_blocking <= 0 || (!grad && vs_first(sim, vs)))
		return a;
	rank_chunk_of(sim, grad ? vs + 1 : vs - 1, &from, &fc);
	double post = grad ? sim->b_post[k] : sim->f_post[k];
	if (from == r || post < 0)
		return from == r ? a : -1;
	return (a > post ? a : post) + hop_s(sim, st, from, r);
}

/* Blocking: when rank r's sends of its last task have all ended (its
 * compute end where none), -1 while a receiver has not posted; `commit`
 * records them and clears the list. */
static double sends_end(pp_sim *sim, const pp_sim_stage *st, int r, bool commit)
{
	double end = sim->free_at[r];
	for (int i = 0; i < sim->npend[r]; i++) {
		const struct pending *q = &sim->pend[2 * r + i];
		size_t k = slot(sim, q->to, q->chunk, q->mb);
		double post = q->grad ? sim->b_post[k] : sim->f_post[k];
		if (post < 0)
			return -1;
		double a = q->grad ? sim->b_arrive[k] : sim->f_arrive[k];
		double t0 = a > post ? a : post, t1 = t0 + hop_s(sim, st, r, q->to);
		bool up = sim->lines ? q->to > r : !q->grad;
		if (commit && t1 > t0)
			record(sim, r, up ? PP_STREAM_SEND_FWD : PP_STREAM_SEND_BWD, PP_EV_SEND,
			       q->mb, q->from_chunk, t0, t1, 0, st[r].send_bytes);
		end = t1 > end ? t1 : end;
	}
	if (commit)
		sim->npend[r] = 0;
	return end;
}

/* Blocking: whether rank r's receive for task i of its list goes with its
 * pending sends (Megatron's send_forward_recv_backward and
 * send_backward_recv_forward: one neighbour both ways, posted together) or
 * after them (the warm-up's send_forward then recv_forward, the cool-down's
 * send_backward then recv_backward: two neighbours, one call after the
 * other): the former where every pending send goes to the rank the input
 * comes from, or there is nothing to receive. */
static bool grouped(const pp_sim *sim, int r, size_t i)
{
	if (i >= sim->len[r] || sim->npend[r] == 0)
		return true;
	const pp_task *t = &rank_tasks(sim, r)[i];
	int vs = vs_of(sim, r, t->chunk), from = r, fc;
	if (t->kind == PP_TASK_F || t->kind == PP_TASK_SI) {
		if (!vs_first(sim, vs))
			rank_chunk_of(sim, vs - 1, &from, &fc);
	} else if (t->kind == PP_TASK_B || t->kind == PP_TASK_BI) {
		if (!vs_last(sim, vs))
			rank_chunk_of(sim, vs + 1, &from, &fc);
	}
	if (from == r)
		return true;
	for (int k = 0; k < sim->npend[r]; k++)
		if (sim->pend[2 * r + k].to != from)
			return false;
	return true;
}

/* Blocking: rank r posts the receives of task i of its list at t (the end
 * of its task before, or of its sends to another neighbour; 0 for its
 * first). */
static void post_inputs(pp_sim *sim, int r, size_t i, double t)
{
	if (i >= sim->len[r])
		return;
	const pp_task *t0 = &rank_tasks(sim, r)[i];
	if (t0->kind == PP_TASK_F || t0->kind == PP_TASK_SI)
		sim->f_post[slot(sim, r, t0->chunk, t0->mb)] = t;
	const pp_task *tb = t0->kind == PP_TASK_SI && i + 1 < sim->len[r] ? t0 + 1 : t0;
	if (tb->kind == PP_TASK_B || tb->kind == PP_TASK_BI)
		sim->b_post[slot(sim, r, tb->chunk, tb->mb)] = t;
}

/* Run rank r's next task if its inputs are there: the tasks it consumed (2
 * for an SI block, 0 when it must wait). */
static int run_task(pp_sim *sim, int r, const pp_sim_stage *st, double *busy)
{
	const pp_sim_stage *s = &st[r];
	const bool blk = s->p2p_blocking > 0;
	/* blocking: the last task's sends end before the rank computes again */
	if (blk && sim->npend[r]) {
		double end = sends_end(sim, st, r, false);
		if (end < 0)
			return 0; /* a receiver has not posted yet */
		bool with = grouped(sim, r, sim->ptr[r]);
		sends_end(sim, st, r, true);
		sim->free_at[r] = end;
		if (!with) /* the receive after the sends (another neighbour) */
			post_inputs(sim, r, sim->ptr[r], end);
	}
	const int v = sim->v;
	const double fwd = s->fwd_s / v, bwd = s->bwd_s / v, w = s->wgrad_s / v;
	const pp_task *t = &rank_tasks(sim, r)[sim->ptr[r]];
	size_t k = slot(sim, r, t->chunk, t->mb);
	int vs = vs_of(sim, r, t->chunk);
	/* the backward part: the task itself, or an SI block's second */
	bool has_f = t->kind == PP_TASK_F || t->kind == PP_TASK_SI;
	bool has_b = t->kind == PP_TASK_B || t->kind == PP_TASK_BI || t->kind == PP_TASK_SI;
	const pp_task *tb = t->kind == PP_TASK_SI ? t + 1 : t;
	int bmb = tb->mb, bchunk = tb->chunk;
	size_t kb = slot(sim, r, bchunk, bmb);
	int bvs = vs_of(sim, r, bchunk);
	double ready = 0, dur = 0, flops = 0;
	pp_event_kind ek = PP_EV_F;
	if (has_f) {
		ready = input_at(sim, st, r, t->chunk, t->mb, false);
		dur = fwd;
		flops = s->fwd_flops;
	}
	if (has_b && ready >= 0) {
		double rb =
		    vs_last(sim, bvs) ? sim->f_end[kb] : input_at(sim, st, r, bchunk, bmb, true);
		if (sim->f_end[kb] < 0)
			rb = -1;
		ready = rb < 0 ? -1 : (rb > ready ? rb : ready);
		bool split = t->kind == PP_TASK_BI;
		dur += split ? bwd - w : bwd;
		flops += split ? s->bwd_flops - s->wgrad_flops : s->bwd_flops;
		ek = t->kind == PP_TASK_SI ? PP_EV_SI : split ? PP_EV_BI : PP_EV_B;
	}
	if (t->kind == PP_TASK_SI && s->si_speedup > 0)
		dur /= s->si_speedup;
	if (t->kind == PP_TASK_W) {
		ready = sim->bi_end[k];
		dur = w;
		flops = s->wgrad_flops;
		ek = PP_EV_W;
	}
	if (ready < 0)
		return 0; /* input not there yet */
	double *free_at = &sim->free_at[r];
	double t0 = ready > *free_at ? ready : *free_at, t1 = t0 + dur;
	*free_at = t1;
	size_t next = sim->ptr[r] + (t->kind == PP_TASK_SI ? 2 : 1);
	if (blk && grouped(sim, r, next)) /* posted with this task's sends */
		post_inputs(sim, r, next, t1);
	record(sim, r, PP_STREAM_COMPUTE, ek, t->mb, t->chunk, t0, t1, flops, 0);
	if (t->kind == PP_TASK_SI && sim->nev) {
		sim->ev[sim->nev - 1].mb2 = bmb;
		sim->ev[sim->nev - 1].chunk2 = bchunk;
	}
	if (has_f) {
		sim->f_end[k] = t1;
		if (!vs_last(sim, vs)) /* activation to the next virtual stage */
			pass_on(sim, s, r, vs, t->chunk, t->mb, false, t1);
	}
	if (has_b) {
		sim->bi_end[kb] = t1;
		if (!vs_first(sim, bvs)) /* gradient to the previous virtual stage */
			pass_on(sim, s, r, bvs, bchunk, bmb, true, t1);
	}
	busy[r] += dur;
	return t->kind == PP_TASK_SI ? 2 : 1;
}

/* After the pipeline: data parallelism, then the optimizer after a global
 * sync, then `other_s`; fills out. */
static void finish(pp_sim *sim, const pp_sim_stage *st, double other_s, const double *busy,
                   pp_sim_result *out)
{
	const int p = sim->p;
	const long long m = sim->m;
	const double *free_at = sim->free_at;
	double pipe = 0, fin = 0, opt = 0, busiest = 0;
	int crit = 0;
	for (int r = 0; r < p; r++) {
		if (free_at[r] > pipe) {
			pipe = free_at[r];
			crit = r;
		}
		/* (the list's sum; the product form kept for the other schedules) */
		double b = sim->folded || sim->lines
		               ? busy[r]
		               : st[r].fwd_s * (double)m + st[r].bwd_s * (double)m;
		if (b > busiest)
			busiest = b;
	}
	for (int r = 0; r < p; r++) {
		double end = free_at[r];
		if (st[r].dp_s > 0) {
			double a = end - st[r].dp_hide_s;
			if (a < 0)
				a = 0;
			record(sim, r, PP_STREAM_DP, PP_EV_DP, -1, -1, a, a + st[r].dp_s, 0,
			       st[r].dp_bytes);
			if (a + st[r].dp_s > end)
				end = a + st[r].dp_s;
		}
		if (end > fin)
			fin = end;
		if (st[r].optimizer_s > opt)
			opt = st[r].optimizer_s;
	}
	for (int r = 0; r < p; r++) {
		if (st[r].optimizer_s > 0)
			record(sim, r, PP_STREAM_COMPUTE, PP_EV_OPTIMIZER, -1, -1, fin,
			       fin + st[r].optimizer_s, 0, 0);
		if (other_s > 0)
			record(sim, r, PP_STREAM_COMPUTE, PP_EV_OTHER, -1, -1, fin + opt,
			       fin + opt + other_s, 0, 0);
	}
	out->pipeline_s = pipe;
	out->dp_exposed_s = fin - pipe;
	out->optimizer_s = opt;
	out->other_s = other_s;
	out->iteration_s = fin + opt + other_s;
	out->busy_s = busiest;
	out->bubble_s = pipe - busiest > 0 ? pipe - busiest : 0;
	out->critical_rank = crit;
	out->tasks = (long long)sim->ntasks;
}

pp_status pp_sim_run(pp_sim *sim, const pp_sim_stage *st, double other_s, pp_sim_result *out,
                     pp_error *err)
{
	memset(out, 0, sizeof *out);
	const int p = sim->p, v = sim->v;
	const long long m = sim->m;
	if (p < 1)
		return ppi_fail(err, "", "sim", "no task lists (call pp_sim_orders first)");
	size_t slots = (size_t)p * (size_t)v * (size_t)m;
	/* Events: every task, its send, and per rank DP, optimizer, other. */
	if (!grow((void **)&sim->ev, &sim->cap_ev, 2 * sim->ntasks + 3 * (size_t)p,
	          sizeof(pp_sim_event))) {
		ppi_fail(err, "", "sim", "out of memory");
		return PP_ENOMEM;
	}
	/* f_end doubles as scratch for the order check before the run. */
	PPI_TRY(check_orders(sim, (unsigned char *)sim->f_end, err));
	sim->nev = 0;
	for (size_t i = 0; i < slots; i++)
		sim->f_arrive[i] = sim->b_arrive[i] = sim->f_end[i] = sim->bi_end[i] =
		    sim->f_post[i] = sim->b_post[i] = -1;
	/* The first virtual stage's inputs are there from the start (each line's). */
	for (int vs = 0; vs < p * v; vs++) {
		if (!vs_first(sim, vs))
			continue;
		int r0, c0;
		rank_chunk_of(sim, vs, &r0, &c0);
		for (long long i = 0; i < m; i++)
			sim->f_arrive[slot(sim, r0, c0, (int)i)] = 0;
	}
	size_t *ptr = sim->ptr;
	for (int r = 0; r < p; r++) {
		sim->free_at[r] = sim->send_f[r] = sim->send_b[r] = 0, ptr[r] = 0;
		sim->npend[r] = 0;
		post_inputs(sim, r, 0, 0);
	}
	double *busy = ppi_calloc((size_t)p, sizeof *busy); /* compute-stream time per rank */
	if (!busy) {
		ppi_fail(err, "", "sim", "out of memory");
		return PP_ENOMEM;
	}
	size_t done = 0;
	while (done < sim->ntasks) {
		size_t before = done;
		for (int r = 0; r < p; r++) {
			int n = 1;
			while (ptr[r] < sim->len[r] && (n = run_task(sim, r, st, busy)) > 0) {
				ptr[r] += (size_t)n;
				done += (size_t)n;
			}
		}
		if (done == before) {
			int r = 0;
			while (r < p && ptr[r] >= sim->len[r])
				r++;
			const pp_task *t = sim->tasks + sim->off[r] + ptr[r];
			free(busy);
			return ppi_fail(err, "", "sim.order",
			                "the task lists deadlock: rank %d waits forever for the "
			                "input of %s micro-batch %d chunk %d",
			                r, task_name(t->kind), t->mb, t->chunk);
		}
	}
	/* blocking: the last sends hold their ranks until received */
	for (int r = 0; r < p; r++)
		if (sim->npend[r])
			sim->free_at[r] = sends_end(sim, st, r, true);
	finish(sim, st, other_s, busy, out);
	free(busy);
	return PP_OK;
}

size_t pp_sim_event_count(const pp_sim *sim)
{
	return sim->nev;
}

const pp_sim_event *pp_sim_event_at(const pp_sim *sim, size_t i)
{
	return i < sim->nev ? &sim->ev[i] : NULL;
}
