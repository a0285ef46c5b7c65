/*
 * paraplan — calibration data: published, measured training runs.
 *
 * pp_runs reads a file in the format of shared/validation/public-runs.json
 * (an object with "records": [...]) and turns each record into paraplan
 * inputs (model, system, job, plan, GPU count) plus what was measured.
 *
 * Values a record leaves unknown are filled by documented rules, never per
 * record; every filled value is listed in pp_run_info (bitmask and text).
 * Records that cannot be turned into inputs (unknown GPU, no system preset,
 * missing shape, no parallel plan...) make pp_run_inputs return PP_EINPUT
 * with the reason in err->text and the record's field in err->field.
 * See docs/validation.md for the rules and the alias tables.
 *
 * The library never prints.
 */
#ifndef PARAPLAN_CALIB_H
#define PARAPLAN_CALIB_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "estimate.h"
#include "inputs.h"
#include "params.h"
#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_runs pp_runs;

/* What a fill rule supplied.  One bit per kind of value. */
typedef enum pp_run_fill {
	PP_FILL_KV_HEADS = 1u << 0,   /* num_kv_heads unknown: = heads (MHA) */
	PP_FILL_FFN = 1u << 1,        /* ffn_hidden_size unknown: 4 x hidden (GPT family) */
	PP_FILL_HEAD_DIM = 1u << 2,   /* head_dim from the family table or arch_notes */
	PP_FILL_LAYERS = 1u << 3,     /* layers padded to a multiple of pp x vp */
	PP_FILL_TP_PP = 1u << 4,      /* tp/pp unknown: from model_parallel_size or dp */
	PP_FILL_DP = 1u << 5,         /* dp unknown, or GPU count inconsistent with the plan */
	PP_FILL_CP = 1u << 6,         /* cp unknown: 1 */
	PP_FILL_EP = 1u << 7,         /* ep unknown: 1 */
	PP_FILL_VP = 1u << 8,         /* virtual pipeline size unknown: 1 */
	PP_FILL_SP = 1u << 9,         /* sequence parallelism unknown: on when tp > 1 */
	PP_FILL_ZERO = 1u << 10,      /* optimizer sharding unknown: distributed optimizer */
	PP_FILL_RECOMPUTE = 1u << 11, /* recompute unknown: lightest mode that fits */
	PP_FILL_MBS = 1u << 12,       /* micro-batch size unknown: 1 */
	PP_FILL_GBS = 1u << 13,       /* global batch from global_batch_tokens / seq */
	PP_FILL_PRECISION = 1u << 14, /* 16-bit unspecified, or precision inferred by the dataset */
	PP_FILL_ETP = 1u << 15,       /* expert tensor parallelism unknown: tp if valid, else 1 */
	PP_FILL_TP_OVERLAP = 1u << 16, /* TP comm overlap unknown: NeMo/Bridge on, NVFP4 off */
	PP_FILL_GPU = 1u << 17,        /* an ambiguous GPU name read as one preset */
	PP_FILL_ARCH = 1u << 18,       /* a model name in no family: the architecture's defaults */
	PP_FILL_GRAPHS = 1u << 19,     /* CUDA graphs unknown (data/runs/cuda-graphs.json): none */
	PP_FILL_STATE_DTYPES = 1u << 20, /* gradient dtype, FP8 parameters: the source's recipes */
	PP_FILL_DDP = 1u << 21,          /* DDP implementation from the launch script */
} pp_run_fill;

#define PP_RUN_FILL_KINDS 22
#define PP_RUN_FILLS_MAX 16
#define PP_RUN_FILL_TEXT_MAX 192
#define PP_RUN_ID_MAX 128
#define PP_RUN_DEF_MAX 256

/* Short name of one fill bit ("mbs", "recompute", ...); "?" for anything else. */
const char *pp_run_fill_name(unsigned bit);

/*
 * What the record says was measured, and how its inputs were completed.
 * Every measured number is NAN when the source gives none.
 */
typedef struct pp_run_info {
	char id[PP_RUN_ID_MAX];
	char title[PP_SOURCE_MAX];              /* source.title */
	char gpu_type[PP_NAME_MAX];             /* hardware.gpu_type as written */
	char system[PP_NAME_MAX];               /* system preset it maps to */
	double tflops_per_gpu;                  /* in TFLOP/s (10^12), as the source counts them */
	char tflops_definition[PP_RUN_DEF_MAX]; /* what the source's TFLOP/s count */
	double mfu;                             /* fraction 0..1, the source's peak basis */
	double hfu;                             /* fraction 0..1 */
	double tokens_per_s_per_gpu;
	double iteration_time_s;
	double peak_memory_bytes; /* measured peak (source gives GiB; stored in bytes) */
	unsigned fills;           /* OR of pp_run_fill */
	int nfilled;
	char filled[PP_RUN_FILLS_MAX][PP_RUN_FILL_TEXT_MAX]; /* "mbs unknown: 1", ... */
} pp_run_info;

/*
 * Read `path` ("-": standard input).  Fails (PP_EINPUT, with line/column on a
 * JSON syntax error) when the file is unreadable, is not a JSON object or has
 * no "records" array.  A record that is not an object, or one of whose fields
 * has a value of the wrong type (a string for a count, a negative number...),
 * does not fail the file: pp_run_read skips that record alone, naming the
 * field's path ("malformed field records[3].parallelism.tp: expected ...").
 * A field that is absent or null is unknown, not wrong; what a record lacks
 * is reported later by pp_run_read.  *runs is freed by pp_runs_free.
 */
pp_status pp_runs_load(const char *path, pp_runs **runs, pp_error *err);
/* From memory (`text` need not be NUL-terminated); `source` names it in errors. */
pp_status pp_runs_from_json(const char *text, size_t len, const char *source, pp_runs **runs,
                            pp_error *err);
void pp_runs_free(pp_runs *runs);
size_t pp_runs_count(const pp_runs *runs);
/* Record id of record i (static storage of `runs`), "" when it has none. */
const char *pp_runs_id(const pp_runs *runs, size_t i);

/*
 * Inputs of record `i` into the bundle *in (caller-owned): model, system
 * (from the preset the GPU alias names), job, plan (resolved by
 * pp_plan_resolve), GPU count, and `info` (id, source,
 * measured values, fills).  `info` is filled as far as the record could be
 * read even when the call fails, so a caller can name a skipped record.
 * The record is read first, with no model evaluated; only when it does not
 * state its activation recompute is the plan then estimated under none,
 * selective and full, and the lightest that fits taken (PP_FILL_RECOMPUTE).
 * Returns PP_EINPUT when the record cannot be evaluated; err->text says why.
 */
pp_status pp_run_read(const pp_runs *runs, size_t i, pp_inputs *in, pp_run_info *info,
                      pp_error *err);
/* pp_run_read into five separate outputs (the older form, kept for its callers). */
pp_status pp_run_inputs(const pp_runs *runs, size_t i, pp_model *model, pp_system *system,
                        pp_job *job, pp_plan *plan, long long *gpus, pp_run_info *info,
                        pp_error *err);

/* The record states a throughput to fit to (pp_run_compare): an iteration
 * time, tokens/s, TFLOP/s, MFU or HFU that is a positive number. */
bool pp_run_measured(const pp_run_info *info);

/*
 * The readers behind pp_run_inputs, for tools and tests.
 *
 * pp_run_gpu_system: the system preset a free-text GPU name maps to
 * ("H100-SXM5-80GB" -> "dgx-h100", "Ampere" -> "dgx-a100-80g", "H800" ->
 * "hgx-h800"); NULL when the name is unknown or names a part without a system
 * preset (H20, H100 PCIe).  Static storage.
 *
 * pp_run_zero_stage: the ZeRO stage a sharding phrase states (FSDP, FSDP2,
 * HSDP, FULL_SHARD, SHARD_GRAD_OP, "fully sharded", ZeRO-1/2/3, "distributed
 * optimizer", DDP); -1 when it says it is not stated, -2 when the phrase is
 * unknown.
 *
 * pp_run_global_batch: the global batch in sequences, from the first rule that
 * applies: stated (gbs > 0), tokens / seq (tokens a multiple of seq), mbs x dp
 * x accum (all > 0, dp the data-parallel replicas); 0 and PP_GBS_NONE when
 * none does.  Arguments <= 0 are "not stated".
 *
 * pp_run_framework: the data/framework preset a record's words name (its
 * source title, sharding phrase, schedule, notes; any may be NULL):
 * "llm-foundry", "torchtitan", "deepspeed", "megatron-lm-2021" (a schedule
 * naming scatter/gather or PTD-P, or a Megatron source of 2022 or before by
 * its arXiv id or 'YY marker that names neither Megatron-Core, NeMo nor
 * Megatron-Bridge: that generation split pipeline sends across the TP ranks
 * without SP), else "megatron" (also when the words carry
 * --no-scatter-gather-tensors-in-pipeline).  Static storage.
 */
typedef enum pp_gbs_rule {
	PP_GBS_NONE = 0,
	PP_GBS_STATED,
	PP_GBS_TOKENS,
	PP_GBS_ACCUM,
} pp_gbs_rule;

const char *pp_run_gpu_system(const char *gpu_type);
int pp_run_zero_stage(const char *sharding);
long long pp_run_global_batch(long long gbs, long long tokens, long long seq, long long mbs,
                              long long dp, long long accum, pp_gbs_rule *rule);
const char *pp_run_framework(const char *title, const char *sharding, const char *schedule,
                             const char *other);

/* ------------------------------------------------------------ comparison */

typedef enum pp_metric {
	PP_METRIC_NONE = 0,
	PP_METRIC_ITERATION_S,  /* seconds per iteration */
	PP_METRIC_TOKENS_PER_S, /* tokens per second per GPU */
	PP_METRIC_TFLOPS,       /* TFLOP/s per GPU in the source's own FLOP count */
	PP_METRIC_MFU,          /* model FLOPs utilisation on the source's peak basis */
	PP_METRIC_HFU,
	PP_METRIC_PEAK_MEMORY, /* bytes per GPU */
} pp_metric;

const char *pp_metric_name(pp_metric m);

/* One like-for-like comparison; error = (predicted - measured) / measured. */
typedef struct pp_comparison {
	pp_metric metric;
	double measured;
	double predicted;
	double error;
} pp_comparison;

/*
 * Compare an estimate with what the record measured, like for like: iteration
 * time or tokens/s when the record gives them; otherwise its TFLOP/s counted
 * the way its `tflops_definition` says (model FLOPs; hardware FLOPs with
 * recompute; Megatron SC'21 Eq. 3); otherwise MFU or HFU.  `speed` gets the
 * throughput comparison (metric NONE when the record measured none), `memory`
 * (may be NULL) the peak-memory one (NONE when not measured).
 */
void pp_run_compare(const pp_run_info *info, const pp_estimate *e, pp_comparison *speed,
                    pp_comparison *memory);

/* ------------------------------------------------------------ calibration */

/*
 * Fitting a GPU's efficiency parameters to the records measured on it, as an
 * init / iterate / test loop (like GSL's fsolver):
 *
 *     pp_fit *f;  pp_fit_new(runs, "h100-sxm", &f, &err);
 *     do { pp_fit_iterate(f); } while (!pp_fit_test(f, 1e-4) && pp_fit_iterations(f) < 50);
 *     pp_fit_result(f, &eff, &net); pp_fit_free(f);
 *
 * The objective is the MAPE of pp_run_compare over the records measured on the
 * GPU; one coordinate-descent sweep per iterate over the parameters the
 * registry marks fitted (include/paraplan/params.h: the GPU's efficiencies and
 * the network efficiencies of the systems those records ran on), within their
 * fit bounds, from their neutral start.  One set of parameters per GPU: no
 * record gets its own.
 */
typedef struct pp_fit pp_fit;

typedef struct pp_fit_net {
	double nvlink_eff;
	double nic_eff;
} pp_fit_net;

/* Loads the records measured on `gpu` (a GPU preset name) and on the GPU on
 * the same silicon (pp_fit_sibling: one set of fractions per die, each of
 * its own part's peaks), or on GPU and training stack when it reads
 * "GPU:STACK" (STACK the data/framework preset the record's words name,
 * pp_run_framework: one fit per (GPU, stack), which pp_fit_sibling does not
 * pair).  *out is freed by pp_fit_free.  PP_EINPUT
 * when no record of the file ran on that GPU (and stack). */
pp_status pp_fit_new(const pp_runs *runs, const char *gpu, pp_fit **out, pp_error *err);
/* Names of the systems the fit's records ran on (pointers into the fit). */
size_t pp_fit_systems(const pp_fit *f, const char **names, size_t max);
/* One sweep over all parameters.  Never fails on a loaded fit. */
void pp_fit_iterate(pp_fit *f);
/* True when the last sweep improved the MAPE by less than `tol` (absolute). */
bool pp_fit_test(const pp_fit *f, double tol);
int pp_fit_iterations(const pp_fit *f);
size_t pp_fit_records(const pp_fit *f);
/* MAPE at the starting (preset) parameters and at the current ones. */
double pp_fit_mape_start(const pp_fit *f);
double pp_fit_mape(const pp_fit *f);
/* The system of the fit's first record with every fitted parameter at its
 * fitted value (read them with pp_param_get). */
void pp_fit_result_system(const pp_fit *f, pp_system *out);
/* The same, as the GPU's efficiencies and the two network efficiencies. */
void pp_fit_result(const pp_fit *f, pp_gpu_eff *eff, pp_fit_net *net);
/* The NIC efficiencies fitted per system: one for each system of the fit's
 * records that no nccl-tests measure (pp_system.fit_nic_eff), at most
 * PP_FIT_NETS_MAX, set from that system's records alone (its neutral start
 * when they do not pin it: *pinned false).  systems[k] points into the fit.
 * Returns how many, at most `max`. */
#define PP_FIT_NETS_MAX 8
size_t pp_fit_networks(const pp_fit *f, const char **systems, double *nic_eff, bool *pinned,
                       size_t max);
/* How many of the fitted parameters every fit shares (the registry's, in its
 * order): the first ones of pp_fit_get_params; the per-system slots
 * (pp_fit_networks) come after them. */
size_t pp_fit_shared_count(const pp_fit *f);
/* Cross-validation: restart the fit from its neutral point with record k
 * (0-based among pp_fit_records) left out of the objective... */
void pp_fit_hold_out(pp_fit *f, size_t k);
/* ...and, after iterating, the signed error of record k at the fitted values. */
double pp_fit_error(pp_fit *f, size_t k);
void pp_fit_free(pp_fit *f);

/*
 * Watching a long fit (a progress line): `sweep` after each sweep of
 * pp_fit_converge, `held_out` before record k of n is held out by
 * pp_fit_leave_one_out; either may be NULL, as may the watch itself.
 */
typedef struct pp_fit_watch {
	void (*sweep)(const pp_fit *f, void *ctx);
	void (*held_out)(const pp_fit *f, size_t k, size_t n, void *ctx);
	void *ctx;
} pp_fit_watch;
/* The sweeps of a fit until one improves the MAPE by less than PP_FIT_TOL
 * or PP_FIT_SWEEPS_MAX have run (at least one). */
#define PP_FIT_TOL 1e-4
#define PP_FIT_SWEEPS_MAX 30
void pp_fit_converge(pp_fit *f, const pp_fit_watch *w);
/* Leave-one-out: each record in turn held out (pp_fit_hold_out), the fit
 * converged without it and the record predicted; the absolute errors that
 * are numbers are added to *sum_abs and counted in *count. */
void pp_fit_leave_one_out(pp_fit *f, const pp_fit_watch *w, double *sum_abs, size_t *count);

/*
 * calibrate's fits (paraplan calibrate): each of gpus[0..n) ("GPU" or
 * "GPU:STACK", as pp_fit_new) fitted to its records of `runs` in turn,
 * converged (pp_fit_converge), then with `loo` left one out
 * (pp_fit_leave_one_out).  `w` (may be NULL) sees each fit's sweeps and
 * held-out records (w->fit), the fit converged, before the leave-one-out
 * restarts it (w->fitted: `f` is valid until w->done returns), and the GPU
 * done (w->done: `loo_sum` and `loo_n` its leave-one-out's, 0 without
 * `loo`); either callback may be NULL.  *loo_sum and *loo_n: the
 * leave-one-out over the fits done, on failure too.  PP_EINPUT, after the
 * fits before it were seen: a GPU with no record (pp_fit_new), none with a
 * throughput measurement (nothing to fit to);
 * PP_ENOMEM.
 */
typedef struct pp_calib_watch {
	pp_fit_watch fit; /* fit.ctx is every callback's */
	void (*fitted)(const pp_fit *f, const char *gpu, void *ctx);
	void (*done)(const char *gpu, double loo_sum, size_t loo_n, void *ctx);
} pp_calib_watch;
pp_status pp_calib_fit(const pp_runs *runs, const char *const *gpus, size_t n, bool loo,
                       const pp_calib_watch *w, double *loo_sum, size_t *loo_n, pp_error *err);

/*
 * Cross-validation by group (calibrate --cross-validate source).
 *
 * pp_fit_case: record k of the fit (0 <= k < pp_fit_records): what was read,
 * the system it runs on (its framework names the stack) and its model; the
 * pointers are into the fit (NULL when k is out of range).
 * pp_fit_exclude: restart from the neutral point with the records whose
 * excluded[k] is true held out (NULL: none); iterate, then pp_fit_error.
 * pp_fit_param_count / get / set: the fitted parameters (registry order, the
 * same list in every fit), to carry one fit's values to another's records.
 * pp_fit_pinned: whether some record in the objective (the ones not
 * excluded) reacts to parameter j; one none reacts to stays at its neutral
 * start and says nothing about the hardware.
 * pp_fit_at_bounds: the parameters some record reacts to whose value sits
 * within 0.5% of the fit range of a bound; up to `max` into out and values;
 * returns how many.
 * pp_fit_sibling: the GPU preset on the same silicon as `gpu`, whose records
 * a fit of `gpu` takes (pp_fit_new) and whose fitted efficiencies stand in
 * when `gpu` has no record of its own (static storage, with the reason in
 * *why), or NULL.
 */
void pp_fit_case(const pp_fit *f, size_t k, const pp_run_info **info, const pp_system **system,
                 const pp_model **model, long long *gpus);
void pp_fit_exclude(pp_fit *f, const bool *excluded);
size_t pp_fit_param_count(const pp_fit *f);
bool pp_fit_pinned(const pp_fit *f, size_t j);
/* Fill the entries of x (a point of f, registry order) that f's records do
 * not pin: a GEMM fraction takes the die's other one where that one is
 * pinned (gemm from gemm_fp8 and back), any other pool[j] (the one set;
 * pool NULL: left as it is).  pp_fit_result_system applies the first. */
void pp_fit_fill_unpinned(const pp_fit *f, double *x, const double *pool);
void pp_fit_get_params(const pp_fit *f, double *x);
void pp_fit_set_params(pp_fit *f, const double *x);
/* The neutral start of every fitted parameter (registry order, as get/set). */
void pp_fit_get_start(const pp_fit *f, double *x);
size_t pp_fit_at_bounds(const pp_fit *f, const pp_param **out, double *values, size_t max);
const char *pp_fit_sibling(const char *gpu, const char **why);

/* A user's own measured runs (paraplan calibrate --step-times): inputs as
 * for pp_estimate_run and the measured seconds per iteration. */
typedef struct pp_fit_input {
	const pp_model *model;
	const pp_system *system;
	const pp_job *job;
	const pp_plan *plan;
	long long gpus;
	double iteration_s;
	const char *id; /* names the run in errors and results; may be NULL */
} pp_fit_input;

/* The fit of pp_fit_new over these runs instead of a records file (copied;
 * all on one GPU).  PP_EINPUT when empty, on two GPUs, or a time is not
 * positive. */
pp_status pp_fit_new_cases(const pp_fit_input *in, size_t n, pp_fit **out, pp_error *err);
/* The fitted parameters some run reacts to (the others stay at their neutral
 * start and say nothing about the hardware); returns how many. */
size_t pp_fit_used(const pp_fit *f, const pp_param **out, size_t max);

/* ------------------------------------------------------------ step times */

/*
 * A user's measured step times (paraplan calibrate --step-times FILE): one
 * run per line of a small CSV ("seconds,estimate flags"; '#' comments, blank
 * lines and an "iteration_s,..." header skipped) or a JSON file
 * ({"runs": [{"flags": "...", "iteration_s": s, "id": "..."}]}).  The flags
 * are kept as text for the caller to read (the command line's parser).
 */
#define PP_STEPS_MAX 256
#define PP_STEP_ID_MAX 64
#define PP_STEP_S_MIN 1e-6          /* a measured iteration: a microsecond */
#define PP_STEP_S_MAX 1e7           /* ... to about 116 days */
#define PP_STEPS_FILE_MAX (1 << 20) /* bytes: a step-times file is small */
typedef struct pp_step_run {
	char id[PP_STEP_ID_MAX]; /* "line 3", "runs[2]" or the run's "id" */
	char *flags;             /* owned (pp_steps_clear frees it) */
	double iteration_s;
} pp_step_run;
typedef struct pp_steps {
	size_t n;
	pp_step_run run[PP_STEPS_MAX];
} pp_steps;

/*
 * Append the runs of `text` (NUL-terminated; the CSV reader cuts it into
 * lines in place) to `out` (caller-owned, n 0 at first); `source` names it in
 * errors ("file:3: ...", "file: runs[2]: ...").  On failure the runs read so
 * far stay in `out`.  Release with pp_steps_clear.  PP_EINPUT or PP_ENOMEM.
 */
pp_status pp_steps_parse(char *text, const char *source, pp_steps *out, pp_error *err);
/* The file `path` (at most PP_STEPS_FILE_MAX bytes, no NUL) read with
 * pp_steps_parse; a file with no run is refused. */
pp_status pp_steps_load(const char *path, pp_steps *out, pp_error *err);
/* Free the runs' flags; `s` is empty after. */
void pp_steps_clear(pp_steps *s);
/* A run's flags cut into words in place, as a shell would for the simple
 * cases: whitespace separates them, "double quotes" group (the quotes
 * dropped).  Up to `max` words into words[]; returns how many there are
 * (more than `max` when they did not all fit). */
size_t pp_step_words(char *flags, char **words, size_t max);

/*
 * The calibrated system as JSON text (*out malloc'ed, the caller frees it):
 * the system `system_ref` names (a preset or file) with its GPU written
 * inline, each of the `nused` fitted parameters set to its value in `fitted`
 * (four significant digits) with `note` as its source, and the name
 * "<fitted->name>-steps".  The text is read back as a system before it is
 * returned.  PP_EINPUT or PP_ENOMEM.
 */
pp_status pp_fit_system_json(const char *system_ref, const pp_system *fitted,
                             const pp_param *const *used, size_t nused, const char *note,
                             char **out, pp_error *err);

/*
 * A step-times fit (calibrate --step-times): the fit of pp_fit_new_cases over
 * `in[0..n)` (n <= PP_STEPS_MAX), converged (pp_fit_converge).  Per run the
 * signed error at the neutral start (`before`) and fitted (`after`); the MAPE
 * of each, the sweeps, the parameters the runs react to (pp_fit_used; the
 * registry's, never freed) and the system with their fitted values
 * (pp_fit_result_system).  *out is caller-owned and holds no pointer to free.
 * PP_EINPUT (as pp_fit_new_cases, or more than PP_STEPS_MAX runs) or
 * PP_ENOMEM.
 */
#define PP_STEPS_FIT_PARAMS_MAX 64
typedef struct pp_steps_fit {
	size_t n;
	double before[PP_STEPS_MAX], after[PP_STEPS_MAX];
	double mape_start, mape; /* fractions */
	int sweeps;
	const pp_param *used[PP_STEPS_FIT_PARAMS_MAX];
	size_t nused;
	pp_system fitted;
} pp_steps_fit;
pp_status pp_steps_fit_run(const pp_fit_input *in, size_t n, pp_steps_fit *out, pp_error *err);
/* The calibrated system of fit `r` of the step-times file `path`, as the
 * text of a system file (pp_fit_system_json's, a newline after; *out
 * malloc'ed, the caller frees it): its parameters' source notes name the
 * file and the fit's MAPE before and after.  PP_EINPUT or PP_ENOMEM. */
pp_status pp_steps_system_json(const char *path, const pp_steps_fit *r, const char *system_ref,
                               char **out, pp_error *err);

/* ------------------------------------------------------------ validation */

/*
 * paraplan validate: each record of a runs file judged against paraplan's
 * prediction for it, one record per call (so a caller can show progress),
 * then the judged records summarised.
 */
#define PP_RUN_SOURCE_NAME_MAX 96
#define PP_VALIDATE_SOURCES_MAX 32
#define PP_VALIDATE_SCALES 4

/* Short name of a source: its title up to the first comma or parenthesis,
 * trailing blanks dropped, cut to n - 1 bytes. */
void pp_run_source_name(const char *title, char *out, size_t n);
/* The GPU-count band of `gpus` (0 <= band < PP_VALIDATE_SCALES) and its name
 * ("<=64 GPUs", "65-512 GPUs", "513-4096 GPUs", ">4096 GPUs"). */
int pp_validate_scale(long long gpus);
const char *pp_validate_scale_name(int band);

/* One record judged. */
typedef struct pp_validate_row {
	bool skipped; /* not evaluated: skip_reason says why */
	char skip_reason[PP_ERROR_TEXT_MAX];
	pp_run_info info;
	pp_estimate est;          /* the record's plan, estimated */
	double fraction;          /* predicted peak memory / HBM */
	pp_comparison speed, mem; /* pp_run_compare */
	bool searched;            /* search: a best plan was found */
	double best_s;            /* its predicted seconds per iteration */
	pp_plan best;
} pp_validate_row;

/*
 * Record `i` of `runs` into *row: its inputs (pp_run_inputs), estimate and
 * comparisons.  A record that cannot be evaluated, or whose prediction is not
 * a number, is skipped (row->skipped, with the reason), not an error.  With
 * `search`, an evaluated record also gets the fastest plan that fits for its
 * model, system, GPUs and job, in a space that holds the authors' plan (their
 * schedule and rank order added to 1F1B, interleaved, zero-bubble and four
 * orders; the flags not searched taken from their plan).  Fails only when the
 * estimate or the search fails otherwise (a search's PP_EINPUT included).
 */
pp_status pp_validate_record(const pp_runs *runs, size_t i, bool search, pp_validate_row *row,
                             pp_error *err);

/* A group of judged records: how many have a throughput comparison, and their
 * mean absolute percentage error (a fraction; NAN when none). */
typedef struct pp_validate_group {
	char name[PP_RUN_SOURCE_NAME_MAX];
	size_t records;
	double mape;
} pp_validate_group;

typedef struct pp_validate_summary {
	size_t unmeasured; /* rows with no throughput measurement */
	pp_validate_group all;
	size_t nsources; /* distinct sources, in order of first appearance (at most 32) */
	pp_validate_group by_source[PP_VALIDATE_SOURCES_MAX];
	pp_validate_group by_scale[PP_VALIDATE_SCALES];
	pp_validate_group memory; /* peak memory, over the records that measured it */
	size_t fit;               /* rows whose plan fits in HBM */
	double fraction_min, fraction_median, fraction_max; /* peak / HBM; NAN with no row */
	size_t searched;                                    /* rows with a best plan */
	size_t search_as_fast;      /* ...at least as fast as the authors' (1e-12 relative) */
	double search_mean_speedup; /* mean of theirs / best; 0 with none searched */
} pp_validate_summary;

/* Summary of n evaluated rows (none skipped).  PP_ENOMEM only. */
pp_status pp_validate_summarise(const pp_validate_row *rows, size_t n, pp_validate_summary *out,
                                pp_error *err);

/*
 * Why run records were skipped, counted by kind (a reason's words up to its
 * first " (", " '" or ": "), for "3 skipped (2 parallel plan not stated, 1
 * unknown GPU)".  Caller-owned; zero-initialised is empty.  Past
 * PP_SKIP_KINDS kinds, the last counts "other reasons".
 */
#define PP_SKIP_KINDS 12
#define PP_SKIP_KIND_MAX 96
typedef struct pp_skips {
	size_t total, n;
	char kind[PP_SKIP_KINDS][PP_SKIP_KIND_MAX];
	size_t count[PP_SKIP_KINDS];
} pp_skips;
void pp_skips_add(pp_skips *s, const char *reason);
/* "3 skipped (2 ..., 1 ...)", or "it holds no record" when none was skipped,
 * into `buf` (at most `n` bytes with the NUL). */
void pp_skips_format(const pp_skips *s, char *buf, size_t n);

/* The rows of `rows` with a throughput measurement to judge (the usable rows
 * of a speed validation); each other row is added to `why` as "without a
 * throughput measurement". */
size_t pp_validate_usable(const pp_validate_row *rows, size_t nrows, pp_skips *why);

/*
 * A validation of every record of `runs` (paraplan validate): each record
 * judged (pp_validate_record, with `search`), the skipped ones listed with
 * their reason and counted by kind in `why`; with `measured` (a throughput
 * validation), the rows without a throughput measurement are not usable
 * either (pp_validate_usable, added to `why`).  When some row is usable,
 * `summary` is of the rows (pp_validate_summarise); with none, `usable` is 0
 * and `summary` is zero, for the caller to refuse with `why`.
 * `rows` and `skips` are owned by the result: pp_validate_result_free.
 */
typedef struct pp_validate_result {
	pp_validate_row *rows; /* the evaluated records */
	size_t nrows;
	struct pp_cv_skip *skips; /* the others, and why (pp_cv_skip, below) */
	size_t nskips;
	pp_skips why;
	size_t usable;
	pp_validate_summary summary;
} pp_validate_result;

/* Watching a validation (a progress line): `progress`, when not NULL, is
 * called before record `done` of `total` is judged. */
typedef struct pp_validate_watch {
	void (*progress)(void *ctx, size_t done, size_t total);
	void *ctx;
} pp_validate_watch;

/* *out filled (caller-owned struct; zeroed first).  PP_OK, or the failure of
 * pp_validate_record or pp_validate_summarise, or PP_ENOMEM; on failure *out
 * holds nothing to free.  `watch` may be NULL. */
pp_status pp_validate_run(const pp_runs *runs, bool search, bool measured,
                          const pp_validate_watch *watch, pp_validate_result *out, pp_error *err);
void pp_validate_result_free(pp_validate_result *r);

/*
 * The default run-records file (public-runs.json) into `out` (at most `n`
 * bytes): $PARAPLAN_SHARED_DIR/validation/, else
 * ../shared/validation/, else <prefix>/share/paraplan/ of the installed
 * executable; the first that is readable.  false when none is.
 */
bool pp_runs_default_path(char *out, size_t n);

/*
 * The run-records file a verb reads: `data` (its --data, may be NULL) when
 * given, else the default (pp_runs_default_path, into `path`, `n` bytes);
 * *file points at the one chosen.  PP_OK, or PP_EINPUT (err->field `verb`)
 * when there is none.
 */
pp_status pp_runs_path(const char *data, const char *verb, char *path, size_t n, const char **file,
                       pp_error *err);

/*
 * The GPUs the usable records of `runs` were measured on, in order of
 * appearance, one per silicon (a GPU whose sibling, pp_fit_sibling, is listed
 * is not: that fit holds its records), at most `max`, into names[0..*n)
 * (caller-owned).  A record that
 * cannot be read or states no throughput (pp_run_measured) is added to `why`
 * (caller-owned) with the reason.  PP_OK, or PP_ENOMEM / PP_EINTERNAL from
 * the read.
 */
pp_status pp_runs_gpus(const pp_runs *runs, char (*names)[PP_NAME_MAX], size_t max, size_t *n,
                       pp_skips *why, pp_error *err);

/*
 * Cross-validation, leave one source out (calibrate --cross-validate source).
 *
 * Every fit named in `gpus` ("GPU", "GPU:STACK", "*", "*:STACK"; at most
 * PP_CV_FITS_MAX, the rest ignored) is fitted on its records (in-sample),
 * then, for each source in turn, refitted without that source's records and
 * used to predict them (out of sample).  A GPU whose only records come from
 * the held-out source borrows the held-out fit of the GPU on the same silicon
 * (pp_fit_sibling); with none, the registry's neutral start, said in the
 * record's `held_out`.  Records no fit holds are
 * listed as skipped with the reason.  MAPE is summed per source, GPU, stack,
 * dense/MoE and GPU-count band (pp_validate_scale).
 */
#define PP_CV_FITS_MAX 16
#define PP_CV_BOUND_MAX 16
#define PP_CV_HOW_MAX 160

enum { PP_CV_SOURCE, PP_CV_GPU, PP_CV_STACK, PP_CV_KIND, PP_CV_SCALE, PP_CV_DIMS };
/* "source", "gpu", "stack", "dense/moe", "scale". */
const char *pp_cv_dim_name(int dim);

typedef struct pp_cv_record {
	char id[PP_RUN_ID_MAX];
	char source[PP_RUN_SOURCE_NAME_MAX];
	char gpu[PP_NAME_MAX];   /* the fit's name, as given */
	char stack[PP_NAME_MAX]; /* the framework preset the record runs under */
	bool moe;
	long long gpus;
	int fit;                      /* index into the result's fits */
	size_t k;                     /* record index inside that fit */
	double error_in_sample;       /* signed; NAN when not measured */
	double error_held_out;        /* signed; NAN when not predicted */
	char held_out[PP_CV_HOW_MAX]; /* how it was predicted out of sample, or why not */
} pp_cv_record;

typedef struct pp_cv_fit {
	const char *gpu; /* the caller's string */
	size_t records;
	double mape_in_sample;
	size_t nparams;
	/* [nparams] in-sample values, registry order of the fitted ones, then
	 * the per-system NIC efficiencies (nets) */
	double *params;
	size_t nshared;                          /* of which the registry's (pp_fit_shared_count) */
	char nets[PP_FIT_NETS_MAX][PP_NAME_MAX]; /* the systems of params[nshared..] */
	size_t at_bound_n;                       /* in-sample parameters at a bound */
	const pp_param *at_bound[PP_CV_BOUND_MAX];
	double at_bound_v[PP_CV_BOUND_MAX];
} pp_cv_fit;

typedef struct pp_cv_skip {
	char id[PP_RUN_ID_MAX];
	char reason[PP_ERROR_TEXT_MAX];
} pp_cv_skip;

/* Absolute errors of a group summed (the MAPE is sum / records). */
typedef struct pp_cv_group {
	const char *key; /* into the result's records, or static */
	size_t n_in, n_out;
	double sum_in, sum_out;
} pp_cv_group;

/* Caller-owned; pp_cv_result_free frees what pp_calib_cross_validate put in it. */
typedef struct pp_cv_result {
	int nfits;
	pp_cv_fit fits[PP_CV_FITS_MAX];
	size_t nrecords;
	pp_cv_record *records;
	size_t nskips;
	pp_cv_skip *skips;
	size_t ngroups[PP_CV_DIMS];
	pp_cv_group *groups[PP_CV_DIMS]; /* in order of first appearance */
	pp_cv_group all;
	size_t not_predicted; /* measured in sample, not predicted out of sample */
} pp_cv_result;

pp_status pp_calib_cross_validate(const pp_runs *runs, const char *const *gpus, int ngpus,
                                  pp_cv_result *out, pp_error *err);
void pp_cv_result_free(pp_cv_result *r);

/* ------------------------------------------------ measured training steps
 * A JSONL file in the format of
 * ../shared/measurements/h100-sxm/train_steps_eager.jsonl (its README): one
 * JSON object a line, each a whole training step of a Llama-shaped model on
 * one GPU, measured with plain PyTorch (BF16 autocast over fp32 parameters
 * and gradients, fused AdamW).  Blank lines are skipped; unknown keys are
 * refused (with a suggestion).
 */
#define PP_TRAIN_STEP_TEXT_MAX 96

typedef struct pp_train_step {
	int line;                               /* 1-based line of the file */
	char model[PP_NAME_MAX];                /* the line's "model" ("" when absent) */
	char precision[PP_TRAIN_STEP_TEXT_MAX]; /* the line's "precision" text */
	double step_s;                          /* median step time, seconds */
	double opt_s;                           /* opt.step() alone, seconds (0: not given) */
	double static_bytes;                    /* memory_allocated() after warm-up */
	double peak_alloc_bytes;                /* max_memory_allocated() */
	double peak_reserved_bytes;             /* max_memory_reserved() */
	double params;                          /* parameters the line states (0: not given) */
	bool compiled;                          /* torch.compile'd (false: eager) */
	pp_recompute recompute; /* none, or full (torch.utils.checkpoint per block) */
	long long microbatches; /* forward+backward passes per step */
	/* The same loop as an estimate's inputs, ready for pp_inputs_estimate:
	 * the llama3-8b preset with the line's shape (layers, hidden, heads,
	 * kv_heads, ffn, vocab, tied; RMSNorm, SwiGLU, RoPE, no bias), one GPU of
	 * dgx-h100 (h100-sxm) under --framework torchtitan (alias pytorch: fp32
	 * parameters and gradients, a bf16 autocast copy, AdamW m + v), bf16,
	 * mbs, global batch mbs x microbatches, seq, the recompute mode; the
	 * plan resolved (pp_plan_resolve). */
	pp_inputs in;
} pp_train_step;

/* The steps of one file; caller-owned, freed by pp_train_steps_free. */
typedef struct pp_train_steps {
	size_t n;
	pp_train_step *step; /* [n], malloc'ed */
} pp_train_steps;

/*
 * Read `path` ("-": standard input) into *out (emptied first).  PP_EINPUT
 * for a bad line, naming the file and line (and jansson's column for a
 * syntax error, or the field: "file:3: hidden: expected an integer ...");
 * a file with no step is refused too.  PP_ENOMEM; a file that cannot be
 * read fails as ppi_read_file does.  On failure *out holds nothing.
 */
pp_status pp_train_steps_read(const char *path, pp_train_steps *out, pp_error *err);
/* The same on `text` (len bytes, borrowed), `source` naming it in errors. */
pp_status pp_train_steps_parse(const char *text, size_t len, const char *source,
                               pp_train_steps *out, pp_error *err);
/* Frees what *steps holds and empties it (safe on NULL and on an empty one). */
void pp_train_steps_free(pp_train_steps *steps);

/* ------------------------------------------- predicted against measured peaks
 * pp_memory_check_steps: each step's predicted allocated and reserved peaks
 * (pp_memory_peak of its inputs; `allocator`, when not NULL, lends its
 * allocator parameters, allocator_transient_segments and allocator_fraction)
 * against the measured ones; signed errors in percent, (predicted -
 * measured) / measured.
 */
typedef struct pp_memory_check_row {
	const pp_train_step *step;      /* borrowed from the steps */
	double allocated_bytes;         /* predicted allocated peak (tensors) */
	double reserved_bytes;          /* predicted reserved peak (tensors + reserve) */
	double largest_transient_bytes; /* the reserve's buffer term */
	double allocated_err_pct, reserved_err_pct;
} pp_memory_check_row;

/* Caller-owned; pp_memory_check_free frees the rows. */
typedef struct pp_memory_check {
	size_t n;
	pp_memory_check_row *row;               /* [n] */
	double mape_allocated, mape_reserved;   /* percent */
	double worst_allocated, worst_reserved; /* largest |error|, percent */
} pp_memory_check;

/* PP_OK, PP_EINPUT (a step that does not evaluate, naming its line) or
 * PP_ENOMEM; on failure *out holds nothing. */
pp_status pp_memory_check_steps(const pp_train_steps *steps, const pp_system *allocator,
                                pp_memory_check *out, pp_error *err);
void pp_memory_check_free(pp_memory_check *c);

/*
 * calibrate --memory: the allocator's two named parameters fitted to the
 * measured reserved peaks of `steps`, the reserve being
 * max(segments x largest transient buffer, fraction x allocated): the
 * MAPE of the reserved peak minimised over the physical ranges (a grid, then
 * refined); leave-one-out refits without each step and predicts it.
 */
typedef struct pp_memory_fit {
	size_t n;                        /* steps */
	double segments, fraction;       /* fitted */
	double segments_lo, segments_hi; /* their ranges */
	double fraction_lo, fraction_hi;
	double preset_segments, preset_fraction; /* the steps' framework's values */
	double mape_preset;                      /* reserved MAPE with those, percent */
	double mape_in;                          /* in-sample, percent */
	double mape_loo;                         /* leave-one-out, percent */
	double worst_loo;                        /* largest |error| left out, percent */
	bool segments_at_bound, fraction_at_bound;
} pp_memory_fit;

/* *out filled; PP_EINPUT with fewer than 2 steps; as pp_memory_check_steps. */
pp_status pp_memory_fit_steps(const pp_train_steps *steps, pp_memory_fit *out, pp_error *err);

/* calibrate --memory FILE: the allocator's fit to the measured steps of
 * `path`, and the steps checked under the fitted values (all borrowed), as
 * the renderers read it (format.h, PP_RESULT_MEMORY_FIT). */
typedef struct pp_memory_fit_report {
	const char *path;
	const pp_memory_fit *fit;
	const pp_memory_check *check;
} pp_memory_fit_report;

/* A measured-steps file read, checked and (with `fit`) fitted, in one
 * caller-owned bundle for the command line: `check` is under the fitted
 * values when fitted, else under the steps' own; pp_memory_steps_free frees
 * it (safe on a zeroed or failed one). */
typedef struct pp_memory_steps {
	pp_train_steps steps;
	pp_memory_check check;
	pp_memory_fit fit;
	bool fitted;
	pp_memory_fit_report report; /* path (borrowed), &fit, &check */
} pp_memory_steps;
pp_status pp_memory_steps_load(const char *path, bool fit, pp_memory_steps *out, pp_error *err);
void pp_memory_steps_free(pp_memory_steps *m);

/* ---------------------------------------------------- calibrate's modes */

/* What calibrate does: fit the published runs, nccl-tests logs, the user's
 * step times, or the allocator's memory steps. */
typedef enum pp_calib_mode {
	PP_CALIB_MODE_FIT,
	PP_CALIB_MODE_NCCL,
	PP_CALIB_MODE_STEPS,
	PP_CALIB_MODE_MEMORY
} pp_calib_mode;

/* The calibrate flags given (each true when its flag was given). */
typedef struct pp_calib_given {
	bool data, gpu, cross_validate, json, format, nccl_tests, step_times, memory, system,
	    output;
} pp_calib_given;

/*
 * The mode the flags `g` ask for (--memory, else --step-times, else
 * --nccl-tests, else the fit) into *mode: PP_OK, or PP_EINPUT naming in
 * err->text the first given flag that mode does not apply (err->field
 * "calibrate"; *mode is set either way).
 */
pp_status pp_calib_mode_of(const pp_calib_given *g, pp_calib_mode *mode, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
