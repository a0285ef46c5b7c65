/*
 * The ranking of search results and the K best of them, kept in a bounded
 * heap: O(log K) per result offered, whatever K (up to 10000).
 * Private to the search (prefix ppi_).
 */
#ifndef PPI_TOPK_H
#define PPI_TOPK_H

#include <stdbool.h>
#include <stddef.h>

#include "paraplan/estimate.h"

/* Total order on results: time, then memory, then the plan's fields. */
int ppi_search_compare(const pp_estimate *a, const pp_estimate *b);
/* The same order on those three parts of two results. */
int ppi_search_compare_parts(double time_a, double bytes_a, const pp_plan *a, double time_b,
                             double bytes_b, const pp_plan *b);

/*
 * Where a result came from: its sub-space and its place in that sub-space's
 * evaluation order.  Two results that ppi_search_compare finds equal are
 * ranked by it, so the K kept and their order do not depend on the thread
 * count or on the order in which results are offered.
 */
typedef struct ppi_topk_key {
	unsigned long long outer, seq;
} ppi_topk_key;

/*
 * What a text report's row shows of a result beyond what ranks it, taken
 * from its estimate when it enters the list (pp_search_row): the report of
 * K rows then evaluates nothing again.
 */
typedef struct ppi_topk_row {
	double headroom_bytes;
	double compute_s, tp_s, pp_s, bubble_s, dp_s; /* time.* */
	double mfu, tokens_per_s;
	double train_days, cost_usd;  /* 0 without a token budget */
	double facility_w, train_mwh; /* energy.*: docs/energy.md */
	double iteration_s;           /* time.iteration_s (time_s is the rank key) */
} ppi_topk_row;

/*
 * A result as the list keeps it: what ranks it, what its report row shows and
 * what evaluates it again (the resolved plan: resolving it again changes
 * nothing, so it evaluates as the plan the search enumerated).  A full
 * estimate is several KB; the list keeps these ~230 bytes (each written to
 * memory that is seldom in cache: at K = 10000 the copies were most of the
 * time of ppi_topk_insert), and the search evaluates a plan once more in
 * full only when it is asked for.
 */
typedef struct ppi_topk_entry {
	double time_s, bytes; /* the rank key (ppi_rank_key), memory.total_bytes */
	pp_plan ranked;       /* the estimate's (resolved) plan, as ranked */
	ppi_topk_key key;
	ppi_topk_row row;
} ppi_topk_entry;

/* What ranks estimate `e` (timed): its iteration time, or under
 * `by_energy` its facility energy per iteration (docs/energy.md). */
static inline double ppi_rank_key(const pp_estimate *e, bool by_energy)
{
	return by_energy ? e->energy.iteration_j : e->time.iteration_s;
}

/* The entry of estimate `e` (timed), ranked by ppi_rank_key. */
void ppi_topk_entry_set(ppi_topk_entry *x, const pp_estimate *e, ppi_topk_key key, bool by_energy);

/* A heap node: what decides almost every comparison, next to the index of
 * the entry (a sift then reads 24-byte nodes, not ~300-byte entries, which
 * at K = 10000 do not stay in cache). */
typedef struct ppi_topk_node {
	double time_s, bytes;
	size_t i; /* into v */
} ppi_topk_node;

typedef struct ppi_topk {
	ppi_topk_entry *v;   /* the results kept, v[0..n) */
	ppi_topk_node *heap; /* a max-heap over v, the worst kept at heap[0] */
	size_t n, cap, alloc;
	bool sorted;     /* v is best first (ppi_topk_sort); heap unused */
	bool worst_only; /* ppi_topk_copy_worst: n counts the kept, v[0] is the worst */
	bool oom;        /* an allocation failed: results were lost */
	bool by_energy;  /* ranked by energy per iteration (ppi_rank_key), else time */
} ppi_topk;

/* An empty list of at most `cap` results; storage grows as results come. */
void ppi_topk_init(ppi_topk *t, size_t cap);
/* True when `e` (from `key`) would be kept: the list is not full, or e ranks
 * before the worst kept. */
bool ppi_topk_wants(const ppi_topk *t, const pp_estimate *e, ppi_topk_key key);
/* The time of the worst kept result when the list is full (a result slower
 * than it cannot be kept), else +INFINITY. */
double ppi_topk_worst_s(const ppi_topk *t);
/* Keep `x` if it is among the `cap` best offered so far; O(log cap). */
void ppi_topk_insert(ppi_topk *t, const ppi_topk_entry *x);
/* Make `dst` what ppi_topk_wants and ppi_topk_worst_s read of `src` — its
 * count and its worst kept result — in O(1) whatever K: the copy of the
 * search's list that a batch prunes against.  No insert into `dst` after it
 * until ppi_topk_clear (an insert is ignored); `dst->oom` on a failed
 * allocation. */
void ppi_topk_copy_worst(ppi_topk *dst, const ppi_topk *src);
/* Order v[0..n) best first; no insert after it until ppi_topk_clear. */
void ppi_topk_sort(ppi_topk *t);
/*
 * Equivalent results: the same iteration time and the same peak memory, each
 * within a relative PPI_SEARCH_EQUIV_REL (two plans the models cannot tell
 * apart, e.g. rank orders that place the groups alike, or dp64 cp4 mbs1 and
 * dp32 cp8 mbs2 where every term comes out the same).  1e-9 is far above the
 * rounding of a sum of a few hundred terms (~1e-14) and far below any
 * difference a plan's degrees make (the closest distinct plans differ by
 * ~1e-6 of their time).
 */
#define PPI_SEARCH_EQUIV_REL 1e-9
/* Entries the search keeps per row shown: the K rows are the first K groups
 * of equivalent results among the PPI_SEARCH_KEEP_PER_ROW x K best; fewer
 * rows only where more than (PPI_SEARCH_KEEP_PER_ROW - 1) x K of those are
 * equivalents of earlier ones. */
enum { PPI_SEARCH_KEEP_PER_ROW = 4 };
bool ppi_search_equivalent(double time_a, double bytes_a, double time_b, double bytes_b);
/*
 * Group sorted list `t` (ppi_topk_sort) into at most `rows_max` rows of
 * equivalent results: a result joins the first row (in rank order) whose
 * first result it is equivalent to, else starts a row.  row_at[r] is the
 * index in t->v of row r's first result (what ranks it), and the indices of
 * the others of row r, in rank order, are eq_idx[eq_off[r] .. eq_off[r + 1]).
 * row_of (scratch: each result's row), row_at and eq_idx hold t->n, eq_off
 * t->n + 1 (caller's storage).  Results
 * after the last row's first that start no row are dropped.  Returns the
 * number of rows.
 */
size_t ppi_topk_group(const ppi_topk *t, size_t rows_max, size_t *row_of, size_t *row_at,
                      size_t *eq_off, size_t *eq_idx);
/* Empty the list, keeping its storage. */
void ppi_topk_clear(ppi_topk *t);
void ppi_topk_free(ppi_topk *t);

#endif
