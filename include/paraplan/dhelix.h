/*
 * paraplan — DHelix strand interleaving (seed 002, Wang et al.): the forward
 * pass of one micro-batch co-executed with the backward pass of another on
 * the same GPU, paired operator segment by operator segment.
 *
 *   - A layer's forward and backward operator sequences (segments: one
 *     operator, or an operator with the communication it already hides inside
 *     its own strand, §4.2 Fig. 10), built from the layer's operations and
 *     collectives (pp_layer_work) and timed by the cost model; the candidate
 *     backward orders in which the weight-gradient GEMMs move and the forward
 *     orders in which the MoE router moves (§4.2).
 *   - The overlap model: OEF(i, j) = (T_i + T_j - P_ij) / min(T_i, T_j)
 *     (Eq. 1) per pair of operator kinds, per GPU platform, as data
 *     (data/overlap/NAME.json or built in), with Table 7's concurrent-kernel
 *     slowdown and launch interval as named parameters.
 *   - Pairing by dynamic programming (Eq. 2), communication-communication
 *     pairs on the same link forbidden; the plan and the SI block speedup
 *     s = (T_f + T_b) / T_SI.
 *
 * The W-shaped pipeline schedule that uses s is PP_SCHED_WSHAPE (spec.h,
 * sim.h, schedule.h).
 */
#ifndef PARAPLAN_DHELIX_H
#define PARAPLAN_DHELIX_H

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Operator kinds of the overlap table (Table 2's bases, grouped as Fig. 4
 * measures them: grouped GEMM is a GEMM; fused BDA, norms, router top-k and
 * permute are element-wise; a collective is intra- or cross-node). */
typedef enum pp_dh_kind {
	PP_DH_GEMM = 0,
	PP_DH_ATTN = 1, /* FlashAttention */
	PP_DH_ELEM = 2,
	PP_DH_COMM_INTRA = 3, /* collective inside one NVLink domain / node */
	PP_DH_COMM_CROSS = 4, /* collective that crosses nodes */
} pp_dh_kind;
#define PP_DH_NKINDS 5

const char *pp_dh_kind_name(pp_dh_kind k); /* "gemm", "attn", "elem", "comm-intra", ... */

#define PP_DH_TP_ROWS 4

/* The overlap model of one GPU platform. */
typedef struct pp_dh_overlap {
	char name[PP_NAME_MAX];
	double oef[PP_DH_NKINDS][PP_DH_NKINDS]; /* symmetric; Eq. 1 */
	/* Table 7 (H100, cross-node TP): of a communication kernel's time paired
	 * with computation, the share left visible by the slowdown of concurrent
	 * kernels, and by the launch interval at the start of each paired
	 * segment.  The default OEF of a computation-communication pair is
	 * 1 - kernel_slowdown; the launch interval is added to P on top. */
	double kernel_slowdown;
	double launch_interval;
	/* Table 7's rows for larger TP sizes: at a plan's TP the row with the
	 * largest tp <= it replaces kernel_slowdown and launch_interval, and
	 * every computation-collective OEF becomes 1 - its kernel_slowdown
	 * (pp_dh_overlap_at_tp); below the first row the values above hold. */
	int ntp;
	struct pp_dh_tp_row {
		int tp;
		double kernel_slowdown, launch_interval;
	} tp_row[PP_DH_TP_ROWS];
	/* CUDA streams the runtime gives computation inside a paired segment:
	 * 1, seed 002 §5 (three streams by type: computation, intra-node and
	 * cross-node communication; both strands' computation on the one), so
	 * two computation operators of the two strands never co-run and their
	 * pair costs T_i + T_j whatever `oef` says; 2, each strand its own, at
	 * the measured `oef`.  JSON "compute_streams", 1 when absent (§5);
	 * pp_dh_overlap_at_tp applies it. */
	int compute_streams;
	char source[PP_SOURCE_MAX];
} pp_dh_overlap;

/* The built-in platforms' tables: data/overlap/NAME.json ("a40", "a800",
 * "h100"), embedded, each value with its source. */
pp_status pp_dh_overlap_default(const char *platform, pp_dh_overlap *out, pp_error *err);
/* The platform whose table holds for a GPU, as its file names it
 * (pp_gpu.overlap_platform; pp_gpu.overlap_assumed says whether that is an
 * assumption); NULL when the file names none. */
const char *pp_dh_platform_of_gpu(const pp_gpu *g);
/* A measured table, in the format of data/overlap/NAME.json. */
pp_status pp_dh_overlap_from_json(const char *text, size_t len, const char *source,
                                  pp_dh_overlap *out, pp_error *err);
pp_status pp_dh_overlap_load(const char *path, pp_dh_overlap *out, pp_error *err);
/* A platform name or a file path. */
pp_status pp_dh_overlap_resolve(const char *ref, pp_dh_overlap *out, pp_error *err);

/* The table schedule wshape uses on `s` for a plan of tensor-parallel size
 * `tp`: the one set on it, or the built-in table its GPU's file names, at
 * that TP (pp_dh_overlap_at_tp); PP_EINPUT (field gpu.overlap_platform) when
 * neither is there: never another GPU's table in silence.  And setting one
 * (pp_dh_overlap_resolve's result, its TP rows with it). */
pp_status pp_dh_overlap_of_system(const pp_system *s, int tp, pp_dh_overlap *out, pp_error *err);
void pp_dh_system_set_overlap(pp_system *s, const pp_dh_overlap *o);
/* `o` at tensor-parallel size `tp`: Table 7's row for it applied (see
 * pp_dh_overlap.tp_row), the rows dropped; `out` may be `o`. */
void pp_dh_overlap_at_tp(const pp_dh_overlap *o, int tp, pp_dh_overlap *out);

/* Eq. 1 from measured times: (T_i + T_j - P_ij) / min(T_i, T_j). */
double pp_dh_oef(double t_i, double t_j, double p_ij);
/* P(i, j): the overlapped time of two single operators under the model;
 * INFINITY for a forbidden pair (two collectives on the same link).  A solo
 * operator (t of the other 0) takes its own time. */
double pp_dh_pair_time(const pp_dh_overlap *o, pp_dh_kind ki, double ti, pp_dh_kind kj, double tj);

/* ------------------------------------------------------------ sequences */

/* Operators in one segment at most, K (seed 002 §4.2: a sequence is
 * partitioned into contiguous segments, barriers between them).  2: with
 * K = 3 DeepSeek-V3's MoE layer (256 x 3 orders) would pair in more than
 * 1 ms, and K = 3 was 2.9x a search without wshape before the search's
 * floors (docs/dhelix.md, "Pairing", K = 1..4 measured). */
#define PP_DH_SEG_OPS 2
#define PP_DH_MAX_SEGS 64
#define PP_DH_MAX_MOVABLE 8 /* weight-gradient GEMMs whose place is searched */
#define PP_DH_FWD_MOVABLE 2 /* forward operators that move: the MoE router's gate GEMM, top-k */

typedef struct pp_dh_seg {
	const char *name; /* static: "qkv", "tp_attn_in", "qkv.wgrad", ... */
	pp_dh_kind kind;
	double seconds;
	int dep;      /* a movable segment: index (default order) of the segment it must
	                 follow; -1 for the others (they keep their relative order) */
	int before;   /* a movable segment: index of the segment it must precede, -1 none */
	bool movable; /* backward: a weight-gradient GEMM; forward: the MoE router */
} pp_dh_seg;

typedef struct pp_dh_seq {
	int n;
	pp_dh_seg s[PP_DH_MAX_SEGS];
} pp_dh_seq;

/* One layer's two sequences for one micro-batch on one GPU. */
typedef struct pp_dh_layer {
	pp_dh_seq fwd; /* default order: the MoE router right before its permute */
	pp_dh_seq bwd; /* default order: each weight gradient right after its dgrad */
	int nmovable;  /* movable weight gradients searched (<= PP_DH_MAX_MOVABLE) */
	double fwd_s, bwd_s;
} pp_dh_layer;

/*
 * The sequences of layer `layer` under a resolved plan: forward operators
 * with their collectives at their data-dependence positions (TP/SP
 * all-gather before the column-parallel GEMM, reduce-scatter after the
 * row-parallel one, EP all-to-all around the experts), backward in reverse
 * with recompute first, the CP ring merged into its attention (it already
 * hides under it) and the SP re-gather that hides under the dgrad GEMM left
 * out; each timed by the cost model (pp_op_time, pp_coll_time on the
 * group's layout).  TP traffic under tp_overlap is scaled as the stage cost
 * scales it, so fwd_s + bwd_s is the layer's single-strand time; EP traffic
 * is not (ep_overlap is Megatron-Core's combined 1F1B, which the stage cost
 * applies to 1F1B and interleaved schedules only: the strands pair
 * micro-batches themselves).  PP_EINPUT for SUMMA plans (not modelled).
 */
pp_status pp_dh_layer_build(const pp_model *m, const pp_system *s, const pp_job *job,
                            const pp_plan *plan, int layer, pp_work *ws, pp_dh_layer *out,
                            pp_error *err);

/* Number of candidate backward orders: 2^nmovable (each weight gradient
 * right after its dgrad, or deferred to the end of the layer). */
int pp_dh_candidate_count(const pp_dh_layer *l);
/* Candidate `idx` (bit k set: the k-th movable weight gradient deferred). */
void pp_dh_candidate(const pp_dh_layer *l, int idx, pp_dh_seq *out);
/* Number of candidate forward orders: 1, or in an MoE layer whose router
 * (gate GEMM, then top-k) has m fixed segments between its input's producer
 * (the MLP norm) and itself, each placement of the two among them:
 * (m + 1)(m + 2) / 2 (m is the TP/SP all-gather of the MLP input or none;
 * docs/dhelix.md, "Operator sequences"). */
int pp_dh_fwd_candidate_count(const pp_dh_layer *l);
/* Forward candidate `idx` (0: the default order, the router after the
 * fixed segments, right before the permute). */
void pp_dh_fwd_candidate(const pp_dh_layer *l, int idx, pp_dh_seq *out);
/* Is `seq` a valid order of `l`'s forward DAG or of its backward DAG?  The
 * sequence is matched to `l`'s forward (if it holds the same segments) or
 * backward; every movable segment must follow its `dep` (a weight gradient
 * its dgrad; the router the MLP norm, the top-k the router) and precede its
 * `before` (the router and top-k: the permute), every other segment keeps
 * its original relative order.  Reads both, owns nothing. */
bool pp_dh_order_valid(const pp_dh_layer *l, const pp_dh_seq *seq);

/* ------------------------------------------------------------- pairing */

/*
 * P(segment_f, segment_b): the make-span of two segments, `nf` operators `f`
 * (forward, in order) and `nb` operators `b`, co-run between two barriers.
 * Each strand runs its operators in its own order; while operator x of one
 * and y of the other are both active each progresses at rate
 * 1 / (2 - OEF(x, y)), an operator alone at rate 1 (for two single operators
 * this is Eq. 1 inverted: T_x + T_y - OEF min(T_x, T_y)).  A collective that
 * co-runs with computation of the other strand adds the launch interval on
 * its time, once, at the start of the paired segment (Table 7).  Two single
 * collectives on the same link: INFINITY (pp_dh_pair_time); inside longer
 * segments they co-run at the table's OEF (one stream per link, §5).  A
 * segment with nb == 0 (or nf == 0) runs alone: the sum of its times; a
 * pair with more than PP_DH_SEG_OPS operators on a side: INFINITY.  Reads
 * the operators only (not owned), allocates nothing.
 */
double pp_dh_segment_time(const pp_dh_overlap *o, const pp_dh_seg *f, int nf, const pp_dh_seg *b,
                          int nb);

typedef struct pp_dh_step {
	int f, b;   /* first operator of each segment; -1 = none (the other runs alone) */
	int nf, nb; /* operators in each segment (0 with -1) */
	double seconds;
} pp_dh_step;

typedef struct pp_dh_plan {
	double t_opt; /* T_opt(N_f, N_b) */
	int nsteps;
	pp_dh_step step[2 * PP_DH_MAX_SEGS];
} pp_dh_plan;

/* Eq. 2 over segments of up to `k` operators (1 <= k <= PP_DH_SEG_OPS):
 * T_opt(i, j) = min(T_opt(i-1, j) + T_f,i, T_opt(i, j-1) + T_b,j,
 * min over 1 <= a, c <= k of T_opt(i-a, j-c) + P(f[i-a..i), b[j-c..j))).
 * A segment alone is the sum of its operators, so alone one operator at a
 * time is the same make-span.  The plan may be NULL (time only).  Returns
 * T_opt. */
double pp_dh_pair_k(const pp_dh_overlap *o, const pp_dh_seq *f, const pp_dh_seq *b, int k,
                    pp_dh_plan *plan);
/* pp_dh_pair_k with k = PP_DH_SEG_OPS. */
double pp_dh_pair(const pp_dh_overlap *o, const pp_dh_seq *f, const pp_dh_seq *b, pp_dh_plan *plan);

/* The best pairing of a layer over every candidate forward and backward
 * order. */
typedef struct pp_dh_result {
	double t_f, t_b;    /* single-strand times */
	double t_si;        /* the best SI block: forward of one micro-batch with
	                    backward of another */
	double speedup;     /* s = (t_f + t_b) / t_si */
	int candidates;     /* backward orders tried (per forward order) */
	int best;           /* the winning candidate */
	pp_dh_seq bwd;      /* its order */
	int fwd_candidates; /* forward orders tried (the MoE router's placements) */
	int fwd_best;       /* the winning forward candidate */
	pp_dh_seq fwd;      /* its order */
	pp_dh_plan plan;
} pp_dh_result;

/* With segments of up to `k` operators (1..PP_DH_SEG_OPS); pp_dh_layer_pair
 * uses PP_DH_SEG_OPS.  Scratch is thread-local: no allocation. */
void pp_dh_layer_pair_k(const pp_dh_overlap *o, const pp_dh_layer *l, int k, pp_dh_result *out);
void pp_dh_layer_pair(const pp_dh_overlap *o, const pp_dh_layer *l, pp_dh_result *out);

/*
 * SI speedup of pipeline stage `stage`: the stage's per-micro-batch time
 * `stage_s` (fwd_s + bwd_s of its pp_stage_time) with each of its layers'
 * time replaced by that layer's best SI block:
 * stage_s / (stage_s - sum over layers of (t_f + t_b - t_si)).
 */
pp_status pp_dh_stage_speedup(const pp_model *m, const pp_system *s, const pp_job *job,
                              const pp_plan *plan, int stage, double stage_s,
                              const pp_dh_overlap *o, pp_work *ws, double *speedup, pp_error *err);

/*
 * pp_dh_stage_speedup's value bounded from above without pairing: from the
 * pairing the workspace's memo already holds, else from each layer's
 * pp_dh_layer_saved_bound (INFINITY if that bound reaches stage_s).  The
 * wshape iteration time falls as any stage's speedup grows, so with these
 * it is a floor under the plan's time (the search's branch and bound).
 */
pp_status pp_dh_stage_speedup_bound(const pp_model *m, const pp_system *s, const pp_job *job,
                                    const pp_plan *plan, int stage, double stage_s,
                                    const pp_dh_overlap *o, pp_work *ws, double *speedup,
                                    pp_error *err);

/* An upper bound of t_f + t_b - t_si of pp_dh_layer_pair_k for every k, from
 * the layer's work per operator kind and the table alone (no pairing; the
 * derivation is at its definition in src/schedule/dhelix_stage.c). */
double pp_dh_layer_saved_bound(const pp_dh_overlap *o, const pp_dh_layer *l);

/* The rates pp_dh_stage_saved_cap counts the seconds of a stage at, from
 * the overlap table: at most `cc` of the forward's computation and `beta`
 * of the communication is saved (le1: every OEF <= 1, so neither strand
 * runs faster than alone and the shorter one bounds the saving too). */
typedef struct pp_dh_rates {
	double cc, beta;
	bool le1;
} pp_dh_rates;
void pp_dh_saving_rates(const pp_dh_overlap *o, pp_dh_rates *out);

/* A cruder upper bound of what pairing saves on a stage's layers, from its
 * per-micro-batch seconds alone (no layer is built): cc fwd_compute_s + beta
 * (fwd_s + bwd_s - fwd_compute_s - bwd_compute_s), and with le1 at most
 * min(fwd_s, bwd_s).  It holds for any parts at least the layers' own
 * (forward computation, backward computation, exposed communication: the
 * segments pp_dh_layer_build times sum to them), so also for the layers'
 * shares that ppi_stage_layers_compute gives (tests/unit/test_wshape.c
 * checks it against the pairing over a grid of plans). */
double pp_dh_stage_saved_cap(const pp_dh_rates *r, double fwd_compute_s, double bwd_compute_s,
                             double fwd_s, double bwd_s);

#ifdef __cplusplus
}
#endif
#endif
