/*
 * The search's Pareto front of (time, memory): no kept point is both slower
 * and larger (search_int.h).
 */
#include <stdlib.h>

#include "search_int.h"
#include "topk.h"
#include "util/util.h"

/* Does e dominate point p (e before p in time, memory and rank)? */
static bool dominates_point(const pp_estimate *e, const point *p)
{
	return e->time.iteration_s <= p->time_s && e->memory.total_bytes <= p->bytes &&
	       ppi_search_compare_parts(e->time.iteration_s, e->memory.total_bytes, &e->plan,
	                                p->time_s, p->bytes, &p->ranked) < 0;
}

/* `e` into the front unless a point dominates it, dropping the points it
 * dominates.  Sets f->oom when the front cannot grow. */
void ppi_front_insert(front *f, const pp_estimate *e)
{
	if (ppi_front_dominated(f, e))
		return;
	size_t k = 0;
	for (size_t i = 0; i < f->n; i++)
		if (!dominates_point(e, &f->pts[i])) {
			if (k != i) {
				f->pts[k] = f->pts[i];
				f->full[k] = f->full[i];
			}
			k++;
		}
	f->n = k;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		point *np = ppi_realloc(f->pts, cap * sizeof *np);
		if (np)
			f->pts = np;
		pp_estimate *nv = np ? ppi_realloc(f->full, cap * sizeof *nv) : NULL;
		if (!nv) {
			f->oom = true;
			return;
		}
		f->full = nv;
		f->cap = cap;
	}
	f->pts[f->n] = (point){e->time.iteration_s, e->memory.total_bytes, e->plan};
	f->full[f->n++] = *e;
}

void ppi_front_free(front *f)
{
	free(f->pts);
	free(f->full);
}

/* The front fastest first (the ranking's total order), by selection on the
 * points: each ~8 KB estimate moves at most once, where an insertion sort
 * moved it once per place (60 points: ~20 MB copied at the search's end). */
void ppi_front_sort(front *f)
{
	for (size_t i = 0; i + 1 < f->n; i++) {
		size_t best = i;
		for (size_t j = i + 1; j < f->n; j++) {
			const point *a = &f->pts[j], *b = &f->pts[best];
			if (ppi_search_compare_parts(a->time_s, a->bytes, &a->ranked, b->time_s,
			                             b->bytes, &b->ranked) < 0)
				best = j;
		}
		if (best == i)
			continue;
		point q = f->pts[i];
		f->pts[i] = f->pts[best];
		f->pts[best] = q;
		pp_estimate t = f->full[i];
		f->full[i] = f->full[best];
		f->full[best] = t;
	}
}
