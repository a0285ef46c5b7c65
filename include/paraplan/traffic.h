/*
 * paraplan — traffic: which GPU pairs talk, how many bytes, of which kind,
 * on which link tier (seed 000 §3.1: the communication matrix and the traffic
 * volume are determined by the parallel configuration and the model).
 *
 * The matrix is built from the stage profiles (cost.h): every collective a
 * GPU of pipeline rank s runs, its wire bytes (what this GPU sends per
 * occurrence) x count x times, x micro-batches for per-micro-batch traffic
 * (once for the per-iteration DP, embedding-sync and optimizer traffic), is
 * distributed over the group's members by the collective's pattern:
 *
 *   all-reduce, all-gather, reduce-scatter, broadcast, reduce:
 *       NCCL's ring — every member sends all its wire bytes to its ring
 *       successor, the next member in rank order (the last to the first);
 *   all-to-all: every member sends wire/(n - 1) to each other member;
 *   CP ring p2p: to the ring successor;
 *   pipeline send/receive: activations to the next pipeline rank and
 *       gradients to the previous one, per micro-batch and model chunk (with
 *       v chunks a rank sends v activations, the last rank v - 1 to rank 0;
 *       the same for gradients; seed 000 §4: T_PP^interleaved = v T_PP).
 *
 * Storage is sparse: the non-zero (type, source GPU, destination GPU) cells,
 * sorted.  A ring puts one successor per member and group, so a plan has
 * O(GPUs x groups) cells (all-to-all adds ep - 1 per member) where a dense
 * double matrix per type would take 8 MB per type at 1024 GPUs and 512 MB at
 * 8192.  Reports write the sparse cells; JSON adds dense rows for up to
 * PP_TRAFFIC_DENSE_MAX GPUs (heat maps of seed 000 Fig. 3/4 size).
 */
#ifndef PARAPLAN_TRAFFIC_H
#define PARAPLAN_TRAFFIC_H

#include <stdio.h>

#include "estimate.h"
#include "scenario.h"
#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pp_traffic_type {
	PP_TRAFFIC_TP = 0,     /* tensor parallel (n_1 and 2D TP's n_2; Megatron SP's gathers) */
	PP_TRAFFIC_CP = 1,     /* context / sequence parallel (ring p2p, all-to-all) */
	PP_TRAFFIC_EP = 2,     /* expert parallel all-to-all and expert-TP */
	PP_TRAFFIC_PP_FWD = 3, /* pipeline: activations to the next rank */
	PP_TRAFFIC_PP_BWD = 4, /* pipeline: gradients to the previous rank */
	PP_TRAFFIC_DP = 5,     /* data parallel gradients / parameters, per iteration */
	PP_TRAFFIC_EMB = 6,    /* tied-embedding gradient sync, first <-> last stage */
	PP_TRAFFIC_ZERO3 = 7,  /* ZeRO-3 per-layer gathers and reduce-scatters */
} pp_traffic_type;
#define PP_TRAFFIC_NTYPES 8

typedef enum pp_tier {
	PP_TIER_NVLINK = 0, /* both GPUs in one NVLink domain */
	PP_TIER_NIC = 1,    /* across domains: the network */
} pp_tier;
#define PP_NTIERS 2

#define PP_TRAFFIC_DENSE_MAX 128

/* One non-zero cell: bytes per iteration from `src` to `dst` (global GPUs). */
typedef struct pp_traffic_cell {
	long long src, dst;
	pp_traffic_type type;
	pp_tier tier;
	double bytes;
} pp_traffic_cell;

typedef struct pp_traffic {
	long long gpus;
	int gpus_per_node;
	int domain;                                       /* GPUs per NVLink domain */
	long long microbatches;                           /* per pipeline, per iteration */
	size_t n;                                         /* cells */
	pp_traffic_cell *cell;                            /* sorted by type, src, dst */
	double total_bytes[PP_TRAFFIC_NTYPES][PP_NTIERS]; /* summed over all pairs */
	double max_nic_egress_bytes; /* the busiest node's bytes out of the node */
	long long nodes;             /* gpus / gpus_per_node, rounded up */
	double *node_out_bytes;      /* per node: bytes leaving it (its NICs to the leaf) */
	double *node_in_bytes;       /* per node: bytes entering it */
	/* The tiers as the system names them (pp_intra_link_label,
	 * pp_inter_network_label): "NVLink", "PCIe 4.0"; "InfiniBand", "RoCE". */
	char tier_label[PP_NTIERS][24];
} pp_traffic;

/*
 * The traffic of one iteration of the scenario's plan on its placement
 * (pp_scenario_placement; a rank -> GPU permutation is honoured).  *out is
 * freed by pp_traffic_free.
 */
pp_status pp_traffic_build(const pp_scenario *sc, pp_traffic **out, pp_error *err);
/* The same with ranks on GPUs `rank_gpu` (rank -> global GPU, a permutation;
 * e.g. an annealed mapping, netmap.h) instead of the scenario's map. */
pp_status pp_traffic_build_map(const pp_scenario *sc, const long long *rank_gpu, pp_traffic **out,
                               pp_error *err);
void pp_traffic_free(pp_traffic *t);

/*
 * The traffic of one iteration of estimate `e`'s plan (its model, system,
 * job, plan and GPU count) on the plan's placement: pp_scenario_new then
 * pp_traffic_build.  *out is NULL on failure, else freed by pp_traffic_free.
 * A plan the scenario refuses is that error (err's field names it).
 */
pp_status pp_traffic_of_estimate(const pp_estimate *e, pp_traffic **out, pp_error *err);
/*
 * The same with the plan's pp x tp x dp workers on GPUs `worker_gpu` (worker
 * w -> global GPU, a permutation; worker w has tp coordinate w % tp, dp
 * w / tp % dp and pp w / (tp dp), the annealer's numbering, netmap.h)
 * instead of the placement's map.  A plan with cp or tp2 beyond 1 has ranks
 * outside this numbering: PP_EINPUT.  `worker_gpu` is borrowed.
 */
pp_status pp_traffic_of_estimate_mapped(const pp_estimate *e, const long long *worker_gpu,
                                        pp_traffic **out, pp_error *err);

/* Bytes per iteration from GPU `src` to GPU `dst` of `type` (0 if none). */
double pp_traffic_bytes(const pp_traffic *t, pp_traffic_type type, long long src, long long dst);
/* Bytes of `type` GPU `gpu` sends (row sum) and receives (column sum). */
double pp_traffic_sent(const pp_traffic *t, pp_traffic_type type, long long gpu);
double pp_traffic_received(const pp_traffic *t, pp_traffic_type type, long long gpu);

/* "tp", "cp", "ep", "pp-fwd", "pp-bwd", "dp", "emb-sync", "zero3"; "intra_node",
 * "inter_node" (what the tier is: pp_traffic.tier_label). */
const char *pp_traffic_type_name(pp_traffic_type type);
const char *pp_tier_name(pp_tier tier);

/* ------------------------------------------------------------- timeline */

/*
 * Bytes on the wire over time (seed 000 §3.1, Fig. 6: the "On-Off" pattern),
 * from the events of a simulated iteration (pp_estimate_simulate): the
 * pipeline sends and the data-parallel reduction of each pipeline rank, every
 * GPU of the rank sending its share; and, from the stage profile
 * (pp_traffic_timeline_of_estimate), the TP, CP and EP collectives inside its
 * compute tasks.
 */
typedef struct pp_traffic_interval {
	double start_s, end_s;
	double bytes;         /* sent by one GPU of the rank in [start_s, end_s) */
	pp_traffic_type type; /* what it carries */
	const char *name;     /* static: the profile entry ("tp_attn_out") or stream name */
	const char *algo;     /* static: the collective algorithm chosen, or NULL */
	const char *protocol; /* static: its NCCL protocol (pp_coll_proto_name), or NULL */
} pp_traffic_interval;

typedef struct pp_traffic_timeline {
	int ranks; /* pipeline ranks */
	double iteration_s;
	/* per pipeline rank: its communication events (sorted by start) and
	 * their union, the "on" periods; the gaps between them and the ends of
	 * the iteration are the "off" periods */
	size_t *nevents, *non;
	pp_traffic_interval **events, **on;
	double *on_s, *off_s; /* total on and off seconds per rank */
	double *bytes;        /* bytes one GPU of the rank sends per iteration */
	/* per rank and type: the seconds of the union of that type's intervals,
	 * and the bytes one GPU sends */
	double (*type_on_s)[PP_TRAFFIC_NTYPES];
	double (*type_bytes)[PP_TRAFFIC_NTYPES];
	bool in_task; /* the TP, CP and EP intervals are in (of_estimate) */
} pp_traffic_timeline;

/* The pipeline sends and DP reductions of `sim`'s events alone. */
pp_status pp_traffic_timeline_build(const pp_sim *sim, double iteration_s, int ranks,
                                    pp_traffic_timeline **out, pp_error *err);

/*
 * The whole timeline of e's simulated iteration (`sim`, from
 * pp_estimate_simulate(e); borrowed): the events of pp_traffic_timeline_build
 * and the TP, CP and EP collectives inside each compute task.  A task's
 * collectives come from the stage profile of its pipeline rank
 * (pp_stage_profile_build): the entries of its phases (forward: fwd;
 * backward: recompute, bwd-input, bwd-weight; zero-bubble's B and W split
 * them), unit by unit (embedding, dense layers, MoE layers, head; reversed
 * backward), each layer unit repeated for its layers (a chunk c of vp gets
 * floor((c+1) L / vp) - floor(c L / vp) of L; the embedding is in chunk 0
 * and the head in the last), each entry one
 * period of `count` occurrences at its own seconds; the sequence is stretched
 * to the task's simulated length, so overlap the schedule applied shows as
 * shorter periods, not as parallel ones.  A DHelix SI block holds a forward
 * and a backward in turn.  Caller frees *out.
 */
pp_status pp_traffic_timeline_of_estimate(const pp_estimate *e, const pp_sim *sim,
                                          pp_traffic_timeline **out, pp_error *err);

/* One node's view: the GPUs of the placement on node `node`, the pipeline
 * ranks they belong to, the union of those ranks' on periods (a caller-owned
 * array of up to the sum of their periods, malloc'ed into *on), and the
 * bytes the node's GPUs send (each GPU its rank's bytes; the traffic inside
 * the node included). */
typedef struct pp_node_timeline {
	long long node;
	int gpus;                /* GPUs of the plan on the node */
	unsigned long long mask; /* pipeline ranks present (bit r, ranks < 64) */
	size_t non;
	pp_traffic_interval *on; /* freed by the caller */
	double on_s, off_s, bytes;
} pp_node_timeline;
pp_status pp_traffic_timeline_node(const pp_traffic_timeline *tl, const pp_placement *pl,
                                   long long node, pp_node_timeline *out, pp_error *err);
void pp_traffic_timeline_free(pp_traffic_timeline *tl);

/*
 * What an estimate's report shows of its traffic (paraplan estimate
 * --traffic, --timeline): the GPU x GPU matrix, and the timeline of the
 * simulated iteration with the placement that names its nodes.
 * Caller-owned; zero-initialised is empty; pp_traffic_views_free empties it.
 */
typedef struct pp_traffic_views {
	pp_traffic *matrix;            /* owned, or NULL */
	pp_traffic_timeline *timeline; /* owned, or NULL */
	pp_placement place;            /* the plan's placement when `timeline` is set */
} pp_traffic_views;
/*
 * Build into *v (emptied first) the matrix when `matrix`
 * (pp_traffic_of_estimate), and, when `sim` is not NULL (the simulator of
 * pp_estimate_simulate(e); borrowed), the timeline of e's simulated
 * iteration over its pipeline ranks and e's placement (pp_place_build).
 * PP_OK, or the first step's error (the matrix's names the plan's field);
 * either way *v holds what was built, for pp_traffic_views_free.
 */
pp_status pp_traffic_views_build(const pp_estimate *e, bool matrix, const pp_sim *sim,
                                 pp_traffic_views *v, pp_error *err);
void pp_traffic_views_free(pp_traffic_views *v);

/* ------------------------------------------------------------- reports */

/* {"gpus", "gpus_per_node", ..., "totals": {type: {nvlink_bytes, nic_bytes,
 * total_bytes}}, "types": [{"type", "cells": [[src, dst, bytes], ...],
 * "matrix_bytes": [[...]] (up to PP_TRAFFIC_DENSE_MAX GPUs)}],
 * "nodes": [{"node", "out_bytes", "in_bytes"}]}.  0 or -1. */
int pp_report_traffic_json(const pp_traffic *t, FILE *out);
/* One line per cell: src_gpu,dst_gpu,src_node,dst_node,type,tier,bytes.  0 or -1. */
int pp_report_traffic_csv(const pp_traffic *t, FILE *out);
/* The per-type and per-tier totals as a text table.  0 or -1. */
int pp_report_traffic_text(const pp_traffic *t, FILE *out);
/* The timeline: per pipeline rank its on/off periods; with `pl`, per node
 * too (up to `max_nodes` nodes).  0 or -1. */
int pp_report_timeline_text(const pp_traffic_timeline *tl, const pp_placement *pl,
                            long long max_nodes, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
