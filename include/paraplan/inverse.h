/*
 * paraplan — the inverse questions (issue 12 item 5): given a token budget,
 * the fewest GPUs that train it by a deadline, or the fastest plan that
 * trains it within a budget in US dollars, among candidates a sweep or a
 * series of searches produced (one per GPU count or sweep point).
 *
 *     pp_inverse_query q = {.deadline_days = 30, .budget_usd = 0};
 *     pp_inverse_result r;
 *     pp_inverse_pick(&q, cands, n, &r);
 */
#ifndef PARAPLAN_INVERSE_H
#define PARAPLAN_INVERSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "estimate.h"
#include "goodput.h"
#include "search.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_inverse_query {
	double deadline_days; /* train within this many days; 0 = no deadline */
	double budget_usd;    /* rent for at most this; 0 = no budget */
	double train_tokens;  /* the budget the days and costs are for (for reports) */
	bool goodput;         /* days and costs are under failures (pp_estimate_goodput) */
} pp_inverse_query;

/* One candidate: a GPU count's best plan, or a sweep point. */
typedef struct pp_inverse_candidate {
	long long value; /* the sweep's axis value, or the GPU count */
	long long gpus;
	bool ok;   /* a plan was estimated (a sweep point that resolved, a search that
	              found a plan that fits) */
	bool fits; /* in memory */
	pp_plan plan;
	double days; /* to train the token budget (goodput-aware when the query says so) */
	double usd;  /* rent for those days */
} pp_inverse_candidate;

typedef enum pp_inverse_bind {
	PP_BIND_NONE = 0, /* nothing stops a better candidate (the best one qualifies) */
	PP_BIND_DEADLINE, /* the deadline */
	PP_BIND_BUDGET,   /* the budget */
	PP_BIND_MEMORY,   /* the plan does not fit, or no plan was found */
	PP_BIND_RANGE,    /* no candidate with fewer GPUs was given */
} pp_inverse_bind;

typedef struct pp_inverse_result {
	ptrdiff_t pick;        /* the answer's index, -1 when no candidate qualifies */
	pp_inverse_bind binds; /* why the next better candidate is not the answer (or, with
	                          no answer, the constraint no candidate meets) */
	ptrdiff_t next;        /* that candidate, -1 when none */
	ptrdiff_t fastest;     /* the fastest candidate that fits, -1 when none */
	ptrdiff_t cheapest;    /* the cheapest candidate that fits, -1 when none */
} pp_inverse_result;

/* Does candidate `c` meet the query: ok, fits, within the deadline and the budget? */
bool pp_inverse_meets(const pp_inverse_query *q, const pp_inverse_candidate *c);

/*
 * Candidate *x (caller-owned, cleared here) of `gpus` GPUs from the winner
 * of a search at that count (NULL: none found; x is then not ok): the plan,
 * the days to train and their rent; with `gp` (NULL: none) the goodput-aware
 * days and rent (pp_estimate_goodput on a copy of the winner).  PP_OK, or
 * pp_estimate_goodput's error (a run that never finishes) or PP_ENOMEM.
 */
pp_status pp_inverse_candidate_of(const pp_estimate *winner, long long gpus,
                                  const pp_goodput_params *gp, pp_inverse_candidate *x,
                                  pp_error *err);

/*
 * With a deadline: the candidate with the fewest GPUs that meets every
 * constraint (ties: the cheapest, then the fastest); what binds is why the
 * qualifying-or-not candidate with the next fewer GPUs (the most GPUs below
 * the answer's) fails: memory, then the deadline, then the budget; RANGE when
 * there is none.  With a budget only: the fastest candidate within it (ties:
 * fewer GPUs, then cheaper); the budget binds when a faster candidate that
 * fits costs more (the slowest of those is `next`), NONE otherwise.  With no
 * answer: DEADLINE when no candidate that fits meets the deadline, else
 * BUDGET (none of those within the deadline is within the budget), MEMORY
 * when none fits.  The query must give a deadline or a budget (> 0).
 */
void pp_inverse_pick(const pp_inverse_query *q, const pp_inverse_candidate *c, size_t n,
                     pp_inverse_result *out);

/*
 * One search of `gpus` GPUs for pp_inverse_search, run by the caller (who
 * may show progress): PP_OK with *out (handed over; NULL: no plan space at
 * that count, a candidate without a plan, allowed when `soft`), or any other
 * status, which stops the series and is returned as it is (err as the
 * function left it).
 */
typedef pp_status (*pp_inverse_search_fn)(void *ctx, long long gpus, bool soft, pp_search **out,
                                          pp_error *err);

/*
 * The inverse question `q` (deadline, budget, train_tokens; goodput when `gp`
 * is not NULL) answered by a search per GPU count of `counts` (taken in
 * ascending order; `soft` for each when there are several), each run by
 * `run(ctx, ...)`, its winner a candidate (pp_inverse_candidate_of).  With a
 * deadline the series stops at the first count whose winner meets every
 * constraint: the fewest GPUs.  c: room for counts->count candidates
 * (caller's); *n of them filled; *res the answer (pp_inverse_pick), set on
 * PP_OK; *picked the answer's search (the caller frees it; NULL when none),
 * the other searches freed here.  PP_OK, run's status, or
 * pp_inverse_candidate_of's.
 */
pp_status pp_inverse_search(const pp_inverse_query *q, const pp_search_dim *counts,
                            const pp_goodput_params *gp, pp_inverse_search_fn run, void *ctx,
                            pp_inverse_candidate *c, size_t *n, pp_inverse_result *res,
                            pp_search **picked, pp_error *err);

const char *pp_inverse_bind_name(pp_inverse_bind b);

/* The candidates, the answer and what binds, as text (days, USD) or as one
 * JSON object ({"deadline_days", "budget_usd", "answer": {...} | null,
 * "binds", "candidates": [...]}).  0 or -1. */
int pp_report_inverse_text(const pp_inverse_query *q, const pp_inverse_candidate *c, size_t n,
                           const pp_inverse_result *r, const char *axis, FILE *out);
int pp_report_inverse_json(const pp_inverse_query *q, const pp_inverse_candidate *c, size_t n,
                           const pp_inverse_result *r, const char *axis, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
