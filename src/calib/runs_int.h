/*
 * Private to src/calib/runs*.c: the published training runs
 * (shared/validation/public-runs.json) read as paraplan inputs.
 *
 *   runs_load.c   loading: the file parsed, its records array checked
 *                 (pp_runs_from_json, pp_runs_load; owns struct pp_runs and
 *                 its jansson tree); each record's field types checked when
 *                 it is read (ppi_run_check_record)
 *   runs_alias.c  the words of the sources: architecture families by model
 *                 name, system presets by GPU name, ZeRO stages, recompute
 *                 modes, FP8 recipes and frameworks by phrase
 *   runs.c        one record read into a model, system, job and plan with
 *                 the fill rules (ppi_run_read_inputs; reads, never
 *                 estimates)
 *   runs_graphs.c the CUDA graphs a record ran under (data/runs/cuda-graphs.json)
 *   runs_recipe.c the recompute and offload its recipe ran with (data/runs/recompute.json)
 *   runs_eval.c   the evaluation step after the read (pick_recompute) and
 *                 pp_run_inputs
 *
 * Every json_t a reader holds is borrowed from the pp_runs; the outputs are
 * the caller's.  The tables and fill rules are documented in
 * docs/validation.md; keep the two in step.
 */
#ifndef PPI_CALIB_RUNS_INT_H
#define PPI_CALIB_RUNS_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "paraplan/calib.h"
#include "util/util.h"

struct pp_runs {
	json_t *root;
	json_t *records; /* borrowed from root */
	char source[PP_ERROR_SOURCE_MAX];
};

/* Largest value of a count field, 0: any whole number below 9e15.  A record
 * is bounded as the same input is elsewhere: the model's shape by the ranges
 * src/spec/model.c reads a model file with (4 x a hidden size of 2^31
 * overflowed an int: fuzz_runs), the job and plan by the command line's
 * (cli/options.c: --gpus and --dp 1e7, --gbs 1e9, --seq 1e8, the other
 * degrees and --mbs 2^20); their product is checked where it is formed. */
enum {
	NO_MAX = 0,
	INT_COUNT = INT_MAX,
	GPUS_MAX = 10000000,
	DEGREE_MAX = 1 << 20,
	GBS_MAX = 1000000000,
	SEQ_MAX = 100000000
};

/*
 * Architecture families, matched in order against model.name
 * (case-insensitive substring; the first match wins).
 */
typedef struct family {
	const char *match;
	bool gated_mlp, rmsnorm, linear_bias, qkv_bias, dropout, tied, embedding_norm, qk_norm;
	bool flash; /* the training stack fused attention (no s x s scores kept) */
	pp_position position;
	int head_dim; /* 0: hidden / heads */
	bool ffn_4h;  /* a missing ffn_hidden_size is 4 x hidden */
	bool mla_v3;  /* DeepSeek-V3 MLA ranks and router bias */
} family;

/*
 * GPU names (hardware.gpu_type, free text) to system presets: matched in
 * order; every `all` word must appear (case-insensitive, not inside a longer
 * number: "H20" is not "H200") and no `none` word.  An entry with a `note` is
 * a reading of an ambiguous name (an architecture name, a size not stated, a
 * part whose only preset is one cluster's): the note is reported as a fill.
 * An entry without a system names a part paraplan knows but has no system
 * preset for; the record is skipped with that reason.
 */
typedef struct gpu_alias {
	const char *all[2];
	const char *none;
	const char *system;
	const char *note;
} gpu_alias;

/* The table, in match order: data/runs/gpu-aliases.json (each entry with its
 * source), compiled by cmake/gpu_aliases.cmake into gpu_aliases_data.c. */
extern const gpu_alias ppi_run_gpu_aliases[];
extern const size_t ppi_run_gpu_aliases_n;

static inline bool has(const char *hay, const char *needle)
{
	return ppi_contains(hay, needle);
}

/* runs_load.c */

/* Record i an object and every field it has of its type, or null: else
 * PP_EINPUT, "malformed field <path>: expected ..., got ...", the path in
 * err->field (the record is skipped alone; the file stays readable). */
pp_status ppi_run_check_record(const pp_runs *runs, size_t i, pp_error *err);

/* runs_alias.c */

/* The family of a model name (the first entry whose match is in it), NULL
 * when none. */
const family *ppi_run_family_of(const char *name);
/* The architecture of a model name in no family, into *out (returned): a
 * name hint (Nemotron), else the words of arch_notes (SwiGLU, squared ReLU,
 * RMSNorm, LayerNorm, RoPE, ALiBi, learned, tied), else a Llama-style
 * decoder; each value not stated by arch_notes is a PP_FILL_ARCH fill in
 * `info`.  out->match is a name for messages. */
const family *ppi_run_family_by_shape(const char *name, const char *notes, family *out,
                                      pp_run_info *info);
/* The name or arch_notes say the model interleaves Mamba (state-space)
 * layers with attention (Nemotron-H, Jamba): not modelled. */
bool ppi_run_hybrid(const char *name, const char *notes);
/* The alias entry of a GPU name, NULL when none matches. */
const gpu_alias *ppi_run_gpu_alias_of(const char *gpu_type);
/* Recompute mode from parallelism.activation_recompute; -1 when not stated,
 * -2 when the phrase is not known. */
int ppi_run_recompute_mode(const char *s);
/* The FP8 recipe a record's precision names (the first named). */
pp_fp8_recipe ppi_run_fp8_recipe(const char *prec);
/* The gradient dtype and FP8 parameter storage of the stack a source names
 * (title, source.location; either may be NULL) into job->grad_bytes and
 * job->fp8_params (job->precision and fp8_recipe already read), each a
 * PP_FILL_STATE_DTYPES fill in `info`; the job is left as it is for every
 * other source. */
void ppi_run_state_dtypes(const char *title, const char *location, pp_job *job, pp_run_info *info);
/* The cross entropy of a NeMo 2 / Megatron-Bridge source's model configs
 * (fused) into g->kern.unfused_cross_entropy, after the framework's
 * defaults are set; every other source keeps its stack's. */
void ppi_run_loss_fusion(const char *title, const char *location, pp_gpu *g);

/* runs.c */

/* Note a fill: its bit in info->fills, its text in info->filled. */
void ppi_run_fill(pp_run_info *info, unsigned bit, const char *fmt, ...) PPI_PRINTF(3, 4);
/* Record i's inputs as the record gives them, completed by the fills that
 * need no model evaluation; *recompute_unknown when the record does not say
 * which activation recompute ran (the plan is then left unresolved). */
pp_status ppi_run_read_inputs(const pp_runs *runs, size_t i, pp_model *model, pp_system *system,
                              pp_job *job, pp_plan *plan, long long *gpus_out, pp_run_info *info,
                              bool *recompute_unknown, pp_error *err);

/* runs_graphs.c */

/* The entry of data/runs/<table>.json (an object with an "entries" array of
 * objects with an "id") whose id is `id`: *entry, or NULL when none is; *root
 * the parsed table, which holds *entry and the caller frees (json_decref),
 * *path its name for messages.  A malformed embedded table: PP_EINTERNAL. */
pp_status ppi_run_table_entry(const char *table, const char *id, json_t **root, json_t **entry,
                              const char **path, pp_error *err);

/* The CUDA graphs record `id` ran under, from data/runs/cuda-graphs.json,
 * into g->kern.cuda_graphs (the whole step) and g->kern.graph_parts (the
 * layer parts captured); a record the table lists as unknown gets a
 * PP_FILL_GRAPHS fill, one it does not list is left as it is. */
pp_status ppi_run_graphs(const char *id, pp_gpu *g, pp_run_info *info, pp_error *err);

/* runs_recipe.c */

/* The activation recompute record `id`'s recipe ran with, from
 * data/runs/recompute.json: *mode its pp_recompute and plan's activation
 * offload set, noted as a PP_FILL_RECOMPUTE fill; *mode -1 (plan untouched)
 * when the table does not list it. */
pp_status ppi_run_recipe_recompute(const char *id, pp_plan *plan, int *mode, pp_run_info *info,
                                   pp_error *err);

/* What record `id`'s launch script ran with (data/runs/batching.json). */
typedef struct ppi_script {
	long long mbs;       /* micro-batch size; 0 when the table does not list the record */
	long long vp;        /* virtual pipeline size; 0 when the entry does not state it */
	double dp_overlap;   /* its DDP's gradient all-reduce overlap; NAN: not stated */
	char ddp_impl[16];   /* that DDP ("torch", "local"); "" when not stated */
	bool split_emb_loss; /* the embedding and the loss counted as pipeline layers */
} ppi_script;

/* Fill *out from the table's entry for `id` (all zero / NAN / "" when the
 * table does not list it).  PP_EINTERNAL on a malformed embedded table. */
pp_status ppi_run_recipe_batching(const char *id, ppi_script *out, pp_error *err);

/* runs_eval.c */

/* pp_plan_resolve, with the record named in a failure. */
pp_status ppi_run_resolve(const pp_runs *runs, size_t i, pp_plan *plan, const pp_model *m,
                          const pp_system *s, long long gpus, const pp_job *job, pp_error *err);

#endif
