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
#include "netmap.h"
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

/*
 * What a front end sees of the searches pp_search_answer_run runs, e.g. for
 * a progress line (each member but ctx may be NULL): `start` once a search of
 * `gpus` GPUs is set up, before its first step; `step` after each step
 * (pp_search_iterate) and once more, `last`, when the search is done (or a
 * step failed); `skip` for a GPU count among several that has no plan space
 * (pp_search_new's PP_EINPUT, its reason in `why`): a candidate without a plan.
 */
typedef struct pp_search_hooks {
	void *ctx;
	void (*start)(void *ctx, long long gpus, const pp_search *s);
	void (*step)(void *ctx, const pp_search *s, bool last);
	void (*skip)(void *ctx, long long gpus, const pp_error *why);
} pp_search_hooks;

/* A search run to its end, or the inverse question answered by a search per
 * GPU count (pp_inverse_search).  Read only; the pointers are the caller's. */
typedef struct pp_search_request {
	const pp_model *model;
	const pp_system *system;
	const pp_job *job;            /* its train_tokens are the question's */
	const pp_search_space *space; /* its base plan and headroom included */
	const pp_search_options *opts;
	bool simulate;        /* pp_search_simulate the top K of each search */
	long long gpus;       /* the GPU count (when `counts` is empty) */
	pp_search_dim counts; /* several GPU counts (with a question only); count 0: gpus */
	pp_inverse_query q;   /* deadline_days, budget_usd: both 0, no question */
	/* Failures and checkpoints (NULL: none): the question's days are
	 * goodput-aware, and the answer carries the winner's goodput. */
	const pp_goodput_params *gp;
	pp_search_hooks hooks;
	/* A measured bandwidth matrix (pp_netmap_bandwidth_for; NULL: none): the
	 * top K mapped and re-ranked on it (pp_netmap_rank, seed 1, place's
	 * 100,000 moves).  One GPU count, no question. */
	const char *bandwidth;
} pp_search_request;

/* pp_search_answer_run's answer; pp_search_answer_free frees what it owns. */
typedef struct pp_search_answer {
	/* The search of the one GPU count, or of the question's answer (NULL
	 * when no count answers it). */
	pp_search *search;
	bool asked;                  /* a question: the members below are set */
	pp_inverse_query q;          /* as answered (train_tokens, goodput filled in) */
	pp_inverse_candidate *cands; /* one per GPU count searched, ascending */
	size_t n;
	pp_inverse_result res;
	/* With gp and a winner: the winner under failures and checkpoints
	 * (pp_search_winner_goodput); NULL otherwise. */
	pp_estimate *winner_goodput;
	/* With rq->bandwidth: the search's K plans mapped on the matrix and
	 * re-ranked (n 0 otherwise). */
	pp_netmap_ranking mapping;
} pp_search_answer;

/*
 * Run the request `rq` into *out (pp_search_answer_free it after PP_OK; on
 * any other status it is left empty, nothing to free): one search to its end (with `simulate`, its top K
 * simulated), or, with a question, a search per GPU count of rq->counts
 * (pp_inverse_search: `soft` when there are several) and the answer; then,
 * with rq->gp, the winner's goodput; with rq->bandwidth, the K plans mapped
 * (the matrix read before the search).  PP_OK; PP_EINPUT for several GPU
 * counts without a question, a bandwidth matrix with a question, a matrix
 * the reader refuses or too small for the GPUs, or as pp_search_new; any status of
 * pp_search_iterate, pp_search_simulate, pp_inverse_search or
 * pp_search_winner_goodput (a run that never finishes); PP_ENOMEM.
 */
pp_status pp_search_answer_run(const pp_search_request *rq, pp_search_answer *out, pp_error *err);
void pp_search_answer_free(pp_search_answer *a);

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
