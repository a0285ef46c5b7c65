/*
 * paraplan — sim: a discrete-event simulation of one training iteration.
 *
 * Every pipeline rank executes its list of tasks in order — forward (F),
 * backward (B: input gradients, or input + weight gradients where the
 * schedule does not split them) and weight gradients (W) of one micro-batch on
 * one model chunk — on its compute stream.  A task starts when its rank is
 * free and its input has arrived: the activation (gradient) of the previous
 * (next) virtual stage, sent over the pipeline link to this rank, which is a
 * stream of its own (one per rank and direction; transfers on it queue).  After
 * its last backward each rank reduces its gradients on a data-parallel stream
 * (buckets start while the last backward still runs, up to the system's
 * overlap), then every rank waits for the slowest (gradient clipping's global
 * norm) and steps the optimizer.  Stages of different cost, uneven layer
 * splits and any task order (GPipe, 1F1B, interleaved 1F1B, ZB-H1, or one
 * given as data) come out right by construction; the closed forms of
 * schedule.h are checked against it.
 *
 *     pp_sim *sim;
 *     pp_sim_new(&sim, &err);
 *     pp_sim_orders(sim, PP_SCHED_1F1B, p, m, v, &err);   (or pp_sim_set_order)
 *     pp_sim_run(sim, stages, other_s, &result, &err);
 *     ... pp_sim_event_count(sim), pp_sim_event_at(sim, i) ...
 *     pp_sim_free(sim);
 */
#ifndef PARAPLAN_SIM_H
#define PARAPLAN_SIM_H

#include "schedule.h"
#include "schedule_type.h"

#ifdef __cplusplus
extern "C" {
#endif

/* pp_task_kind: schedule_type.h (the schedule types build the task lists). */

/* One entry of a rank's task list. */
typedef struct pp_task {
	pp_task_kind kind;
	int mb;    /* micro-batch, 0-based */
	int chunk; /* model chunk (virtual stage) on this rank, 0-based */
} pp_task;

/* What one pipeline rank costs: per micro-batch over all its chunks (a chunk
 * takes 1/v of it), per iteration for the rest. */
typedef struct pp_sim_stage {
	double fwd_s;      /* forward: compute + exposed TP/CP/EP/ZeRO-3 communication */
	double bwd_s;      /* backward incl. weight gradients and recompute */
	double wgrad_s;    /* of bwd_s, the weight gradients (split off by zero-bubble) */
	double send_fwd_s; /* one transfer to the next rank (rank p - 1: to rank 0), an
	                       activation in a line, either kind where the chunks fold */
	double send_bwd_s; /* one transfer to the previous rank (rank 0: to rank p - 1) */
	/* > 0: the rank's sends and receives block it (non-interleaved 1F1B under
	 * Megatron-Core, torch, DeepSpeed: framework.pp_p2p_blocking).  After a
	 * task the rank posts the sends of its outputs and the receive of its
	 * next task's input at once; a transfer starts when both ends have posted
	 * (a rendezvous) and takes p2p_blocking x the sender's send_*_s; the rank
	 * computes again when all have ended.  Every rank must agree on it; 0:
	 * sends run on the sender's link streams under the compute. */
	double p2p_blocking;
	double dp_s;        /* gradient reduction + parameter gather, per iteration */
	double dp_hide_s;   /* how long before the end of the last backward DP may start */
	double optimizer_s; /* optimizer step over this rank's shard */
	/* For the trace only: FLOPs and bytes of one chunk's F, B and W. */
	double fwd_flops, bwd_flops, wgrad_flops;
	double send_bytes; /* bytes of one activation (or gradient) transfer */
	double dp_bytes;
	double si_speedup; /* PP_TASK_SI: s of seed 002 (dhelix.h); 0 = 1 */
} pp_sim_stage;

typedef enum pp_stream {
	PP_STREAM_COMPUTE = 0,
	PP_STREAM_SEND_FWD = 1, /* activations to the next pipeline rank */
	PP_STREAM_SEND_BWD = 2, /* gradients to the previous pipeline rank */
	PP_STREAM_DP = 3,       /* data-parallel gradient reduction */
} pp_stream;
#define PP_NSTREAMS 4

typedef enum pp_event_kind {
	PP_EV_F = 0,
	PP_EV_B = 1,
	PP_EV_BI = 2,
	PP_EV_W = 3,
	PP_EV_SEND = 4,
	PP_EV_DP = 5,
	PP_EV_OPTIMIZER = 6,
	PP_EV_OTHER = 7, /* tied-embedding sync and fixed per-iteration overhead */
	PP_EV_SI = 8,    /* DHelix SI block (mb, chunk: its forward's) */
} pp_event_kind;

/* One interval on one stream of one pipeline rank; seconds from the start. */
typedef struct pp_sim_event {
	int rank; /* pipeline rank */
	pp_stream stream;
	pp_event_kind kind;
	int mb, chunk; /* -1 where it does not apply */
	double start_s, end_s;
	double flops, bytes;
	int mb2, chunk2; /* PP_EV_SI: the backward's micro-batch and chunk (else -1) */
} pp_sim_event;

typedef struct pp_sim_result {
	double iteration_s;  /* end of the iteration */
	double pipeline_s;   /* end of the last compute task on any rank */
	double dp_exposed_s; /* from pipeline_s to the end of the slowest DP reduction */
	double optimizer_s;  /* the slowest rank's optimizer step */
	double other_s;      /* as given */
	double busy_s;       /* compute-stream time of the busiest rank */
	double bubble_s;     /* pipeline_s - busy_s of the busiest rank */
	int critical_rank;   /* the rank whose compute ends last */
	long long tasks;     /* tasks simulated */
} pp_sim_result;

typedef struct pp_sim pp_sim;

/* A simulator with empty task lists; *out is freed by pp_sim_free. */
pp_status pp_sim_new(pp_sim **out, pp_error *err);
void pp_sim_free(pp_sim *sim);

/*
 * Task lists of a built-in schedule for p ranks, m micro-batches and v chunks
 * per rank: GPipe, 1F1B (Megatron's warm-up of p - r - 1 forwards), interleaved
 * 1F1B (Megatron's order: warm-up 2(p - r - 1) + (v - 1) p chunk forwards,
 * micro-batches in groups of p), ZB-H1 (Qi et al. 2023: 1F1B with B split from
 * W; rank r defers the W of its first r micro-batches to the end).  PP_EINPUT
 * when the schedule does not apply (v > 1 without interleaving, ...).
 * DHelix's W shape (seed 002 §4.1, Fig. 8; v must be 1): the model folded
 * into a U, rank r holding virtual stage r (chunk 0) and 2p - 1 - r (chunk 1),
 * so a micro-batch's forward goes down and back up and its backward likewise;
 * wave w (0 <= w < m + p) runs the forward of micro-batch w (if w < m) fused
 * with the backward of micro-batch w - p (if w >= p) as SI blocks, chunk c's
 * forward with chunk 1 - c's backward; rank r runs a wave's chunk 0 at slot
 * 2w + r and its chunk 1 at slot 2w + 2p - 1 - r, in slot order.
 */
pp_status pp_sim_orders(pp_sim *sim, pp_schedule sched, int p, long long m, int v, pp_error *err);

/*
 * A schedule given as data: rank `rank`'s task list (copied).  Call for every
 * rank 0..p-1 after pp_sim_reset(sim, p, m, v).  pp_sim_run checks that every
 * (micro-batch, chunk) runs F and B (or BI and W) exactly once per rank.
 */
pp_status pp_sim_reset(pp_sim *sim, int p, long long m, int v, pp_error *err);
pp_status pp_sim_set_order(pp_sim *sim, int rank, const pp_task *tasks, size_t n, pp_error *err);
/*
 * A placement of the virtual stages, after pp_sim_reset(sim, p, m, v) and
 * before pp_sim_run: stage[r * v + c] is the virtual stage rank r's chunk c
 * runs, a permutation of 0 .. p v - 1, cut into `lines` pipelines of L = p v
 * / lines stages each (line k: stages k L .. k L + L - 1).  A micro-batch of
 * line k enters at its first stage and turns back at its last; micro-batch i
 * of one line is not micro-batch i of another.  DualPipe runs two lines, one
 * per direction (dualpipe.h); without a placement rank r's chunk c runs
 * virtual stage c p + r of one line (wshape's fold: r and 2p - 1 - r).
 */
pp_status pp_sim_set_placement(pp_sim *sim, const int *stage, int lines, pp_error *err);
/*
 * Task lists from a JSON schedule (text of `len` bytes; `source` names it in
 * errors): {"pp": P, "microbatches": M, "vp": V, "ranks": [["F0", "B0", ...],
 * ...]} with tasks F<mb>, B<mb>, BI<mb>, W<mb> and ".c<chunk>" when vp > 1.
 * P, M and V must be those of the plan (p, m, v).  The lists are checked when
 * run (pp_sim_run).  pp_sim_orders_load reads a file.
 */
pp_status pp_sim_orders_from_json(pp_sim *sim, const char *text, size_t len, const char *source,
                                  int p, long long m, int v, pp_error *err);
pp_status pp_sim_orders_load(pp_sim *sim, const char *path, int p, long long m, int v,
                             pp_error *err);
/* True when the task lists were set as data (pp_sim_reset + pp_sim_set_order,
 * or a JSON schedule) for p ranks, m micro-batches and v chunks. */
bool pp_sim_orders_custom(const pp_sim *sim, int p, long long m, int v);

/* Rank `rank`'s current task list (owned by the simulator). */
const pp_task *pp_sim_order(const pp_sim *sim, int rank, size_t *n);

/*
 * Simulate one iteration of the task lists over stages st[0..p-1];
 * `other_s` (embedding sync, fixed overhead) is added at the end.  Records
 * the events (pp_sim_event_at).  PP_EINPUT when the lists deadlock or are
 * incomplete.
 */
pp_status pp_sim_run(pp_sim *sim, const pp_sim_stage *st, double other_s, pp_sim_result *out,
                     pp_error *err);

size_t pp_sim_event_count(const pp_sim *sim);
const pp_sim_event *pp_sim_event_at(const pp_sim *sim, size_t i);

/* Names for reports: "F", "B", "send", "compute", "send-fwd", ... */
const char *pp_event_kind_name(pp_event_kind k);
const char *pp_stream_name(pp_stream s);

#ifdef __cplusplus
}
#endif
#endif
