/*
 * paraplan — search: the fastest plans that fit.
 *
 * Enumerates tp, pp, cp, ep, etp, vp, micro-batch, ZeRO stage, recompute,
 * sequence parallelism, schedule and rank order (placement) for a model, a
 * system, a GPU count and a job; keeps the K fastest plans that fit and the
 * Pareto front of time vs memory.  Constraints are applied while enumerating
 * (divisors of heads, layers, experts, batch, sequence), and whole sub-spaces
 * are skipped only when provably infeasible (memory grows with the
 * micro-batch).  An init / iterate / test loop (like GSL's fsolver):
 *
 *     pp_search *s;
 *     pp_search_new(&model, &system, &job, gpus, &space, &opts, &s, &err);
 *     while (!pp_search_done(s))
 *             pp_search_iterate(s);
 *     for (size_t i = 0; i < pp_search_count(s); i++) use(pp_search_plan(s, i));
 *     pp_search_free(s);
 */
#ifndef PARAPLAN_SEARCH_H
#define PARAPLAN_SEARCH_H

#include "estimate.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_SEARCH_MAX_VALUES 64
#define PP_SEARCH_MAX_ORDERS 8

/* Candidate values of one integer dimension; count 0 means "search it" (every
 * value the model, job and GPU count allow). */
typedef struct pp_search_dim {
	int count;
	int values[PP_SEARCH_MAX_VALUES];
} pp_search_dim;

typedef struct pp_search_space {
	pp_search_dim tp, pp, dp, cp, ep, etp, vp, mbs, zero;
	pp_search_dim tp2;       /* second dimension of 2D tensor parallelism (seed 003);
	                            opt-in: count 0 means tp2 = 1 only */
	pp_search_dim summa_nb;  /* SUMMA panel counts; 0 values = powers of two up to 64 */
	unsigned summa_mask;     /* for tp2 > 1: bit 0 2D TP with shared weights, bit 1 SUMMA;
	                            0 = both (tp2 = 1 plain 1D TP; summa_mask 2 alone makes
	                            tp2 = 1 plans SUMMA on the tp x 1 grid, seed 003) */
	unsigned recompute_mask; /* bit (1 << pp_recompute); 0 = all */
	unsigned schedule_mask;  /* bit (1 << pp_schedule); 0 = 1f1b, interleaved and zb */
	unsigned sp_mask;        /* bit 0 off, bit 1 on; 0 = both (only on with tp > 1) */
	unsigned offload_mask;   /* --offload-optimizer: bit 0 off, bit 1 on; 0 = off only
	                            (CPU offload is searched only when asked for) */
	int norders;             /* rank orders (placements) to try; 0 = a built-in set */
	char orders[PP_SEARCH_MAX_ORDERS][PP_ORDER_MAX];
	bool nvs_split;           /* --order's keyword nvs: also every factorisation of the NVLink
	                   domain over the plan's tp, tp2, cp, dp, pp groups (seed 003
	                   S3.2), as split orders (place.h) */
	double headroom_fraction; /* keep this fraction of HBM free (default
	                             PP_SEARCH_HEADROOM_DEFAULT; 0 = none) */
	pp_plan base;             /* flags not searched (flash, overlaps) come from here */
} pp_search_space;

/*
 * The fraction of HBM a search keeps free by default: 0.06.  The peak it is
 * kept against (memory.total_bytes) already holds the caching allocator's
 * reserve (fragmentation, docs/memory.md), so this is not a fragmentation
 * margin but the error of that prediction: predicted = (1 - e) x measured
 * fits a measured run iff predicted <= (1 - e) x HBM.  The reserved peak's
 * worst leave-one-out error over the 12 measured steps of docs/memory.md is
 * 5.54% (`calibrate --memory`; worst in-sample under-prediction 3.04%):
 * rounded up to a whole percent.  --headroom 0 keeps none.
 */
#define PP_SEARCH_HEADROOM_DEFAULT 0.06

/* Every dimension searched, base plan = pp_plan_init, headroom
 * PP_SEARCH_HEADROOM_DEFAULT. */
void pp_search_space_init(pp_search_space *space);

/* What a search ranks by: iteration time (the default), or the facility
 * energy of an iteration (pp_energy.iteration_j; docs/energy.md), the same
 * order as energy per token since every plan runs the same batch. */
typedef enum pp_search_objective { PP_SEARCH_TIME = 0, PP_SEARCH_ENERGY = 1 } pp_search_objective;

/* "time" or "energy" into *out; PP_EINPUT naming --objective otherwise. */
pp_status pp_search_objective_parse(const char *s, pp_search_objective *out, pp_error *err);

typedef struct pp_search_options {
	int top_k;                     /* plans kept (default 10) */
	pp_search_objective objective; /* PP_SEARCH_TIME */
	int threads;                   /* worker threads (default: online CPUs) */
	bool exhaustive;               /* evaluate every plan, no sub-space skipped (for tests) */
	/* Bounds, checked by pp_search_iterate between batches of sub-spaces (0 =
	 * none).  When one is reached the search is done, with the best plans
	 * found so far, and its stats say why (stop). */
	double time_limit_s; /* wall time since pp_search_new */
	long long max_plans; /* plans evaluated: the search ends after the
	                        sub-space (in search order, order_outers) that reaches
	                        it, so the answer is the same for any thread count */
} pp_search_options;

void pp_search_options_init(pp_search_options *opts);

/* Why a search ended. */
typedef enum pp_search_stop {
	PP_SEARCH_COMPLETE = 0, /* every sub-space searched */
	PP_SEARCH_TIME_LIMIT,   /* stopped early: options.time_limit_s */
	PP_SEARCH_MAX_PLANS     /* stopped early: options.max_plans */
} pp_search_stop;

typedef struct pp_search_stats {
	double space; /* plans in the space: every combination enumerated */
	/* Plans the memory model ran on (and, if they fit and are not pruned_time,
	 * the time model). */
	long long evaluated;
	long long pruned; /* plans skipped inside a sub-space proven infeasible */
	/* Evaluated plans that fit but were not timed: a floor under their time
	 * proves they enter neither the top K nor the Pareto front (branch and
	 * bound by time). */
	long long pruned_time;
	long long infeasible; /* evaluated plans that do not fit (with the headroom) */
	long long rejected;   /* combinations the plan rules reject (e.g. ep with tp, no sp) */
	/* Timed plans that fit but draw more facility power than the job's
	 * power cap (job.energy.power_cap_w; docs/energy.md), and the least
	 * facility power among them (0 = none). */
	long long over_cap;
	double min_over_cap_w;
	double wall_s;       /* so far, while the search runs */
	long long subspaces; /* (tp, tp2, pp, cp, split) sub-spaces, known from pp_search_new */
	long long subspaces_done;
	double best_s;       /* iteration time of the fastest plan found so far; 0 if none */
	pp_search_stop stop; /* COMPLETE, or why the search stopped early */
} pp_search_stats;

typedef struct pp_search pp_search;

/* Set up a search; inputs are copied.  PP_EINPUT on inconsistent inputs or an
 * empty space.  *out is freed by pp_search_free. */
pp_status pp_search_new(const pp_model *m, const pp_system *s, const pp_job *job, long long gpus,
                        const pp_search_space *space, const pp_search_options *opts,
                        pp_search **out, pp_error *err);
/* Evaluate the next batch of sub-spaces (their number depends on the space
 * only) on the search's thread pool. */
pp_status pp_search_iterate(pp_search *s, pp_error *err);
/* Every sub-space searched, or a bound of the options reached. */
bool pp_search_done(const pp_search *s);
/* Fraction of sub-spaces done, 0..1. */
double pp_search_progress(const pp_search *s);

/* The K fastest plans that fit, fastest first (ties broken by memory, then by
 * the plan's fields, then by the order of enumeration, so results are
 * deterministic).  Empty until the search is done.  The stats
 * (pp_search_get_stats) can be read at any time.
 *
 * The search keeps what ranks a plan and its row of a table (pp_search_row_get,
 * below); a plan's whole estimate is evaluated again when it is first asked
 * for.  pp_search_plan keeps it in the search
 * (the pointer stays valid until pp_search_free; NULL when i is out of range
 * or, on an internal inconsistency, the plan does not evaluate as it was
 * ranked); it fills a cache, so it must not be called from two threads on
 * the same search at once.  pp_search_plan_get evaluates (or copies) plan i
 * into the caller's `out` and keeps nothing: a report of 10000 plans reads
 * them through one estimate. */
size_t pp_search_count(const pp_search *s);
const pp_estimate *pp_search_plan(const pp_search *s, size_t i);
pp_status pp_search_plan_get(const pp_search *s, size_t i, pp_estimate *out /* OUT */,
                             pp_error *err);
/*
 * Equivalent plans: plans with the same iteration time and the same peak
 * memory (each within a relative 1e-9) are one row of the K, ranked as the
 * first of them (the search's order: time, memory, the plan's fields, the
 * enumeration); the others are listed under it.  The K rows are the first K
 * such groups among the 4 x K best plans the search keeps (fewer rows only
 * where equivalents fill more than 3 x K of those), and a row lists the
 * equivalents among those kept.  pp_search_equivalent_count: how many plans
 * row i stands for besides its own (0 out of range); pp_search_equivalent:
 * the k-th, in rank order, resolved as pp_search_row.plan (NULL out of
 * range; valid until pp_search_free).
 */
size_t pp_search_equivalent_count(const pp_search *s, size_t i);
const pp_plan *pp_search_equivalent(const pp_search *s, size_t i, size_t k);
/*
 * The winner (plan 0) of done search `s` with its goodput under failures and
 * checkpoints (pp_estimate_goodput with `gp`), on a copy: *out is malloc'ed
 * and the caller frees it (NULL on failure).  PP_OK; pp_estimate_goodput's
 * error (a run that never finishes); PP_EINPUT when the search has no
 * winner; PP_ENOMEM.
 */
pp_status pp_search_winner_goodput(const pp_search *s, const pp_goodput_params *gp,
                                   pp_estimate **out, pp_error *err);
/*
 * What a table of the K plans shows of plan i, kept with it since it entered
 * the K best: reading it evaluates nothing (a text report of 10000 plans
 * would otherwise evaluate each in full again).  Each field equals the field
 * of the same name in plan i's estimate (pp_search_plan_get).  PP_EINPUT
 * when i is out of range.
 */
typedef struct pp_search_row {
	pp_plan plan;          /* resolved (dp, microbatches, order), as estimate.plan */
	double total_bytes;    /* memory.total_bytes: peak per GPU */
	double headroom_bytes; /* capacity_bytes - total_bytes */
	double iteration_s, compute_s, tp_s, pp_s, bubble_s, dp_s; /* time.* */
	double mfu, tokens_per_s;
	double train_days, cost_usd; /* with a token budget (job.train_tokens > 0), else 0 */
	/* Facility power (IT power without a PUE) and the token budget's energy
	 * (0 without one): energy.facility_w, train_mwh (docs/energy.md). */
	double facility_w, train_mwh;
	bool simulated;         /* pp_search_simulate ran the simulator on it */
	double sim_iteration_s; /* sim.iteration_s when simulated, else 0 */
} pp_search_row;

pp_status pp_search_row_get(const pp_search *s, size_t i, pp_search_row *out /* OUT */,
                            pp_error *err);
/* Pareto front of iteration time vs peak memory among plans that fit,
 * fastest first. */
/* Simulate the iteration of each of the K plans (pp_estimate_simulate) once the
 * search is done; a plan whose schedule the simulator refuses keeps
 * `simulated` false.  The ranking stays the closed form's. */
pp_status pp_search_simulate(pp_search *s, pp_error *err);
size_t pp_search_pareto_count(const pp_search *s);
const pp_estimate *pp_search_pareto(const pp_search *s, size_t i);
void pp_search_get_stats(const pp_search *s, pp_search_stats *out);
/* Why the search stopped early, in words ("time limit 2 s reached after 12 of
 * 4410 sub-spaces"), into buf; "" when it searched every sub-space. */
const char *pp_search_stop_reason(const pp_search *s, char *buf, size_t n);

/* Why the winner wins: the breakdown term by which the runner-up (the first
 * plan that is slower, 0-based index in *runner_up) loses most, e.g. "bubble",
 * and by how many seconds; NULL when there is no runner-up, or when the search
 * ranks by energy (PP_SEARCH_ENERGY: the runner-up need not be slower). */
const char *pp_search_explain(const pp_search *s, double *margin_s, size_t *runner_up);

void pp_search_free(pp_search *s);

#ifdef __cplusplus
}
#endif
#endif
