/*
 * The K best search results in a bounded 4-ary heap of indices into the
 * entries, so an entry is copied when it comes in and when the list is
 * sorted, never moved by a sift.
 */
#include "topk.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/*
 * Children per heap node.  At K = 10000 the heap (240 KB of nodes) is out of
 * cache between merges, and a sift is a chain of dependent misses, one per
 * level below the few that stay cached: four children (96 bytes, read
 * together) halve the levels of a binary heap (7 against 14), and a sift
 * took 4.6% of `search --top 10000` with two.
 */
enum { ARITY = 4 };

int ppi_search_compare_parts(double time_a, double bytes_a, const pp_plan *p, double time_b,
                             double bytes_b, const pp_plan *q)
{
	if (time_a != time_b)
		return time_a < time_b ? -1 : 1;
	if (bytes_a != bytes_b)
		return bytes_a < bytes_b ? -1 : 1;
	const int x[] = {p->tp,
	                 p->pp,
	                 p->cp,
	                 p->ep,
	                 p->etp,
	                 p->vp,
	                 p->mbs,
	                 p->zero,
	                 (int)p->recompute,
	                 p->sp,
	                 (int)p->schedule,
	                 p->first_stage_layers,
	                 p->last_stage_layers,
	                 p->embedding_as_layer,
	                 p->loss_as_layer};
	const int y[] = {q->tp,
	                 q->pp,
	                 q->cp,
	                 q->ep,
	                 q->etp,
	                 q->vp,
	                 q->mbs,
	                 q->zero,
	                 (int)q->recompute,
	                 q->sp,
	                 (int)q->schedule,
	                 q->first_stage_layers,
	                 q->last_stage_layers,
	                 q->embedding_as_layer,
	                 q->loss_as_layer};
	for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return strcmp(p->order, q->order);
}

int ppi_search_compare(const pp_estimate *a, const pp_estimate *b)
{
	return ppi_search_compare_parts(a->time.iteration_s, a->memory.total_bytes, &a->plan,
	                                b->time.iteration_s, b->memory.total_bytes, &b->plan);
}

void ppi_topk_entry_set(ppi_topk_entry *x, const pp_estimate *e, ppi_topk_key key, bool by_energy)
{
	x->time_s = ppi_rank_key(e, by_energy);
	x->bytes = e->memory.total_bytes;
	x->ranked = e->plan;
	x->key = key;
	const pp_iteration *t = &e->time;
	/* A search's estimate may keep fields of the plan before it where the
	 * models write nothing (PPI_EVAL_TRUSTED): the cost of a token budget is
	 * taken only where pp_estimate_eval sets it. */
	bool budget = e->train_tokens > 0 && e->tokens_per_s > 0;
	x->row = (ppi_topk_row){e->headroom_bytes,
	                        t->compute_s,
	                        t->tp_s,
	                        t->pp_s,
	                        t->bubble_s,
	                        t->dp_s,
	                        e->mfu,
	                        e->tokens_per_s,
	                        budget ? e->train_days : 0,
	                        budget ? e->cost_usd : 0,
	                        e->energy.facility_w,
	                        budget ? e->energy.train_mwh : 0,
	                        t->iteration_s};
}

static int key_cmp(ppi_topk_key a, ppi_topk_key b)
{
	if (a.outer != b.outer)
		return a.outer < b.outer ? -1 : 1;
	return (a.seq > b.seq) - (a.seq < b.seq);
}

/* Rank of a result (time, bytes, plan, key) against heap node y: < 0 when
 * it comes first.  The entry is read only on a tie of time and bytes. */
static int rank(const ppi_topk *t, double time_s, double bytes, const pp_plan *p, ppi_topk_key k,
                const ppi_topk_node *y)
{
	if (time_s != y->time_s)
		return time_s < y->time_s ? -1 : 1;
	if (bytes != y->bytes)
		return bytes < y->bytes ? -1 : 1;
	const ppi_topk_entry *e = &t->v[y->i];
	int c = ppi_search_compare_parts(time_s, bytes, p, e->time_s, e->bytes, &e->ranked);
	return c ? c : key_cmp(k, e->key);
}

/* Does heap node x come after heap node y? */
static bool after(const ppi_topk *t, const ppi_topk_node *x, const ppi_topk_node *y)
{
	if (x->time_s != y->time_s)
		return x->time_s > y->time_s;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes;
	const ppi_topk_entry *e = &t->v[x->i];
	return rank(t, e->time_s, e->bytes, &e->ranked, e->key, y) > 0;
}

static void sift_up(ppi_topk *t, size_t pos)
{
	ppi_topk_node *h = t->heap;
	while (pos > 0) {
		size_t parent = (pos - 1) / ARITY;
		if (!after(t, &h[pos], &h[parent]))
			break;
		ppi_topk_node x = h[pos];
		h[pos] = h[parent];
		h[parent] = x;
		pos = parent;
	}
}

static void sift_down(ppi_topk *t, size_t pos, size_t n)
{
	ppi_topk_node *h = t->heap;
	for (;;) {
		size_t first = ARITY * pos + 1, big = pos;
		if (first >= n)
			return;
		size_t end = n - first < ARITY ? n : first + ARITY;
		/* The next level's nodes, whichever child wins: fetched together,
		 * not one miss after the other. */
		size_t next = ARITY * first + 1;
		if (next < n)
			for (size_t b = 0;
			     b < ARITY * ARITY * sizeof *h && next + b / sizeof *h < n; b += 64)
				__builtin_prefetch((const char *)&h[next] + b);
		for (size_t c = first; c < end; c++)
			if (after(t, &h[c], &h[big]))
				big = c;
		if (big == pos)
			return;
		ppi_topk_node x = h[pos];
		h[pos] = h[big];
		h[big] = x;
		pos = big;
	}
}

void ppi_topk_init(ppi_topk *t, size_t cap)
{
	memset(t, 0, sizeof *t);
	t->cap = cap;
}

bool ppi_topk_wants(const ppi_topk *t, const pp_estimate *e, ppi_topk_key key)
{
	if (t->cap == 0 || t->sorted)
		return false;
	return t->n < t->cap || rank(t, ppi_rank_key(e, t->by_energy), e->memory.total_bytes,
	                             &e->plan, key, &t->heap[0]) < 0;
}

double ppi_topk_worst_s(const ppi_topk *t)
{
	if (t->cap == 0 || t->sorted || t->n < t->cap)
		return INFINITY;
	return t->heap[0].time_s;
}

/* Room for one more result: false when it cannot be had. */
static bool grow(ppi_topk *t)
{
	if (t->n < t->alloc)
		return true;
	size_t want = t->alloc ? 2 * t->alloc : 16;
	if (want > t->cap)
		want = t->cap;
	ppi_topk_entry *v = ppi_realloc(t->v, want * sizeof *v);
	if (v)
		t->v = v;
	ppi_topk_node *h = ppi_realloc(t->heap, want * sizeof *h);
	if (h)
		t->heap = h;
	if (!v || !h)
		return false;
	t->alloc = want;
	return true;
}

void ppi_topk_insert(ppi_topk *t, const ppi_topk_entry *x)
{
	if (t->cap == 0 || t->sorted || t->worst_only)
		return;
	if (t->n < t->cap) {
		if (!grow(t)) {
			t->oom = true;
			return;
		}
		t->v[t->n] = *x;
		t->heap[t->n] = (ppi_topk_node){x->time_s, x->bytes, t->n};
		t->n++;
		sift_up(t, t->n - 1);
		return;
	}
	/* Full: the newcomer takes the place of the worst, if it ranks before it. */
	if (rank(t, x->time_s, x->bytes, &x->ranked, x->key, &t->heap[0]) >= 0)
		return;
	size_t w = t->heap[0].i;
	t->v[w] = *x;
	t->heap[0] = (ppi_topk_node){x->time_s, x->bytes, w};
	sift_down(t, 0, t->n);
}

void ppi_topk_sort(ppi_topk *t)
{
	if (t->sorted)
		return;
	/* Heapsort on the nodes: the worst goes to the end, then the next... */
	for (size_t n = t->n; n > 1; n--) {
		ppi_topk_node x = t->heap[0];
		t->heap[0] = t->heap[n - 1];
		t->heap[n - 1] = x;
		sift_down(t, 0, n - 1);
	}
	/* ...so heap[k].i is the index of the k-th best.  Permute v in place along
	 * the cycles of that permutation (one entry in hand). */
	for (size_t k = 0; k < t->n; k++) {
		if (t->heap[k].i == k)
			continue;
		ppi_topk_entry e = t->v[k];
		size_t j = k;
		for (;;) {
			size_t from = t->heap[j].i;
			t->heap[j].i = j;
			if (from == k) {
				t->v[j] = e;
				break;
			}
			t->v[j] = t->v[from];
			j = from;
		}
	}
	t->sorted = true;
}

static bool close_rel(double a, double b)
{
	double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
	return fabs(a - b) <= PPI_SEARCH_EQUIV_REL * m;
}

bool ppi_search_equivalent(double time_a, double bytes_a, double time_b, double bytes_b)
{
	return close_rel(time_a, time_b) && close_rel(bytes_a, bytes_b);
}

size_t ppi_topk_group(const ppi_topk *t, size_t rows_max, size_t *row_of, size_t *row_at,
                      size_t *eq_off, size_t *eq_idx)
{
	size_t nrows = 0;
	const ppi_topk_entry *v = t->v;
	for (size_t j = 0; j < t->n; j++) {
		size_t r = SIZE_MAX;
		/* Sorted by time: the rows a result can join start within the
		 * tolerance of its time, at the end of the rows so far. */
		for (size_t q = nrows; q-- > 0;) {
			const ppi_topk_entry *f = &v[row_at[q]];
			if (!close_rel(f->time_s, v[j].time_s))
				break;
			if (ppi_search_equivalent(f->time_s, f->bytes, v[j].time_s, v[j].bytes))
				r = q;
		}
		if (r == SIZE_MAX && nrows < rows_max) {
			r = nrows;
			row_at[nrows++] = j;
		}
		row_of[j] = r;
	}
	/* A counting sort of the others by row, rank order kept. */
	for (size_t r = 0; r <= nrows; r++)
		eq_off[r] = 0;
	for (size_t j = 0; j < t->n; j++)
		if (row_of[j] != SIZE_MAX && row_at[row_of[j]] != j)
			eq_off[row_of[j] + 1]++;
	for (size_t r = 0; r < nrows; r++)
		eq_off[r + 1] += eq_off[r];
	for (size_t j = 0; j < t->n; j++) {
		size_t r = row_of[j];
		if (r != SIZE_MAX && row_at[r] != j)
			eq_idx[eq_off[r]++] = j;
	}
	/* eq_off[r] now ends row r's list: shift back to starts. */
	for (size_t r = nrows; r > 0; r--)
		eq_off[r] = eq_off[r - 1];
	eq_off[0] = 0;
	return nrows;
}

void ppi_topk_copy_worst(ppi_topk *dst, const ppi_topk *src)
{
	dst->n = 0;
	dst->sorted = false;
	dst->worst_only = true;
	dst->cap = src->cap;
	if (src->n == 0)
		return;
	if (dst->alloc == 0) {
		ppi_topk_entry *v = ppi_realloc(dst->v, sizeof *v);
		if (v)
			dst->v = v;
		ppi_topk_node *h = ppi_realloc(dst->heap, sizeof *h);
		if (h)
			dst->heap = h;
		if (!v || !h) {
			dst->oom = true;
			return;
		}
		dst->alloc = 1;
	}
	/* wants and worst_s read heap[0] (and, on a tie, the entry it names)
	 * and n against cap: nothing else. */
	const ppi_topk_node *w = &src->heap[0];
	dst->v[0] = src->v[w->i];
	dst->heap[0] = (ppi_topk_node){w->time_s, w->bytes, 0};
	dst->n = src->n;
	dst->by_energy = src->by_energy;
}

void ppi_topk_clear(ppi_topk *t)
{
	t->n = 0;
	t->sorted = false;
	t->worst_only = false;
}

void ppi_topk_free(ppi_topk *t)
{
	free(t->v);
	free(t->heap);
	memset(t, 0, sizeof *t);
}
