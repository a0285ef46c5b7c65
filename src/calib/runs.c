/*
 * Published training runs (shared/validation/public-runs.json) as paraplan
 * inputs.
 *
 * A record states a model shape, the hardware, a parallel plan, a batch and a
 * precision in the words of its source.  This file maps those words onto
 * paraplan's structs with fixed tables (architecture families by model name,
 * system presets by GPU name, ZeRO stages and recompute modes by phrase) and
 * completes what a source leaves unknown with fill rules that are the same
 * for every record.  Each fill is reported in pp_run_info.  The tables and
 * rules are documented in docs/validation.md; keep the two in step.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "paraplan/calib.h"
#include "paraplan/estimate.h"
#include "paraplan/schedule_type.h"
#include "util/util.h"

struct pp_runs {
	json_t *root;
	json_t *records; /* borrowed from root */
	char source[PP_ERROR_SOURCE_MAX];
};

/* ------------------------------------------------------------- loading */

/*
 * The type of every field this file reads.  A field may be absent or null
 * (unknown: a fill rule or a skip says what happens), but a value of another
 * type is an error of the whole file, never a silently skipped record.
 * Parents come before their fields.
 */
typedef enum field_type {
	F_OBJECT,
	F_STRING,
	F_BOOL,
	F_COUNT,    /* a whole number >= 1 (1e3 written as a real is whole) */
	F_COUNT0,   /* a whole number >= 0 */
	F_POSITIVE, /* a number > 0 */
} field_type;

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

static const struct record_field {
	const char *parent; /* "" for the record itself */
	const char *key;
	field_type type;
	long long max; /* counts: largest value (NO_MAX: none) */
} record_fields[] = {
    {"", "id", F_STRING, NO_MAX},
    {"", "source", F_OBJECT, NO_MAX},
    {"", "hardware", F_OBJECT, NO_MAX},
    {"", "model", F_OBJECT, NO_MAX},
    {"", "batch", F_OBJECT, NO_MAX},
    {"", "parallelism", F_OBJECT, NO_MAX},
    {"", "measured", F_OBJECT, NO_MAX},
    {"", "precision", F_STRING, NO_MAX},
    {"source", "title", F_STRING, NO_MAX},
    {"hardware", "gpu_type", F_STRING, NO_MAX},
    {"hardware", "num_gpus", F_COUNT, GPUS_MAX},
    {"hardware", "inter_node_network", F_STRING, NO_MAX},
    {"model", "name", F_STRING, NO_MAX},
    {"model", "num_layers", F_COUNT, 10000},
    {"model", "hidden_size", F_COUNT, 1048576},
    {"model", "num_attention_heads", F_COUNT, 65536},
    {"model", "num_kv_heads", F_COUNT, 65536},
    {"model", "ffn_hidden_size", F_COUNT, 16777216},
    {"model", "vocab_size", F_COUNT, 100000000},
    {"model", "seq_length", F_COUNT, SEQ_MAX},
    {"model", "total_params_B", F_POSITIVE, NO_MAX},
    {"model", "arch_notes", F_STRING, NO_MAX},
    {"model", "moe", F_OBJECT, NO_MAX},
    {"model.moe", "num_experts", F_COUNT, INT_COUNT},
    {"model.moe", "top_k", F_COUNT, INT_COUNT},
    {"model.moe", "expert_ffn_hidden_size", F_COUNT, 16777216},
    {"model.moe", "num_shared_experts", F_COUNT0, INT_COUNT},
    {"model.moe", "dense_layers", F_COUNT0, 10000},
    {"batch", "global_batch_size", F_COUNT, GBS_MAX},
    {"batch", "global_batch_tokens", F_COUNT, NO_MAX},
    {"batch", "micro_batch_size", F_COUNT, DEGREE_MAX},
    {"batch", "grad_accum_steps", F_COUNT, GBS_MAX},
    {"parallelism", "tp", F_COUNT, DEGREE_MAX},
    {"parallelism", "pp", F_COUNT, DEGREE_MAX},
    {"parallelism", "dp", F_COUNT, GPUS_MAX},
    {"parallelism", "cp", F_COUNT, DEGREE_MAX},
    {"parallelism", "ep", F_COUNT, DEGREE_MAX},
    {"parallelism", "virtual_pipeline_size", F_COUNT, DEGREE_MAX},
    {"parallelism", "model_parallel_size", F_COUNT, GPUS_MAX},
    {"parallelism", "pipeline_schedule", F_STRING, NO_MAX},
    {"parallelism", "other", F_STRING, NO_MAX},
    {"parallelism", "zero_or_dist_optimizer", F_STRING, NO_MAX},
    {"parallelism", "activation_recompute", F_STRING, NO_MAX},
    {"parallelism", "sequence_parallel", F_BOOL, NO_MAX},
    {"measured", "tflops_per_gpu", F_POSITIVE, NO_MAX},
    {"measured", "tflops_definition", F_STRING, NO_MAX},
    {"measured", "mfu", F_POSITIVE, NO_MAX},
    {"measured", "hfu", F_POSITIVE, NO_MAX},
    {"measured", "tokens_per_s_per_gpu", F_POSITIVE, NO_MAX},
    {"measured", "iteration_time_s", F_POSITIVE, NO_MAX},
    {"measured", "peak_memory_GiB", F_POSITIVE, NO_MAX},
};

/* The object at a dotted path of `rec` ("model.moe"), NULL when absent. */
static json_t *at_path(json_t *rec, const char *path)
{
	char buf[64];
	ppi_strlcpy(buf, path, sizeof buf);
	json_t *v = rec;
	char *save = NULL;
	for (char *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
		v = json_is_object(v) ? json_object_get(v, k) : NULL;
	return json_is_object(v) ? v : NULL;
}

static bool whole(const json_t *v, double min, long long max)
{
	double d = json_number_value(v), hi = max ? (double)max : 9e15;
	if (json_is_integer(v))
		return (double)json_integer_value(v) >= min && (double)json_integer_value(v) <= hi;
	return json_is_real(v) && d == floor(d) && fabs(d) < 9e15 && d >= min && d <= hi;
}

static bool type_ok(const json_t *v, field_type t, long long max)
{
	switch (t) {
	case F_OBJECT: return json_is_object(v);
	case F_STRING: return json_is_string(v);
	case F_BOOL: return json_is_boolean(v);
	case F_COUNT: return whole(v, 1, max);
	case F_COUNT0: return whole(v, 0, max);
	case F_POSITIVE: return json_is_number(v) && json_number_value(v) > 0;
	}
	return false;
}

static const char *const type_words[] = {"an object",           "a string",
                                         "true, false",         "a whole number >= 1",
                                         "a whole number >= 0", "a number > 0"};

/* Every record an object, every field it has of its type (or null). */
static pp_status check_types(json_t *records, const char *source, pp_error *err)
{
	size_t i;
	json_t *rec;
	json_array_foreach (records, i, rec) {
		char path[128], got[80], who[PP_RUN_ID_MAX + 16] = "";
		if (!json_is_object(rec)) {
			snprintf(path, sizeof path, "records[%zu]", i);
			ppi_json_repr(rec, got, sizeof got);
			return ppi_fail(err, source, path, "expected a record (an object), got %s",
			                got);
		}
		const char *id = json_string_value(json_object_get(rec, "id"));
		if (id)
			snprintf(who, sizeof who, " (record %.*s)", PP_RUN_ID_MAX, id);
		for (size_t k = 0; k < sizeof record_fields / sizeof *record_fields; k++) {
			const struct record_field *f = &record_fields[k];
			json_t *parent = f->parent[0] ? at_path(rec, f->parent) : rec;
			json_t *v = parent ? json_object_get(parent, f->key) : NULL;
			if (!v || json_is_null(v) || type_ok(v, f->type, f->max))
				continue;
			snprintf(path, sizeof path, "records[%zu].%s%s%s", i, f->parent,
			         f->parent[0] ? "." : "", f->key);
			ppi_json_repr(v, got, sizeof got);
			if (f->max && (f->type == F_COUNT || f->type == F_COUNT0) &&
			    type_ok(v, f->type, NO_MAX))
				return ppi_fail(
				    err, source, path,
				    "expected a whole number %d..%lld or null, got %s%s",
				    f->type == F_COUNT, f->max, got, who);
			return ppi_fail(err, source, path, "expected %s or null, got %s%s",
			                type_words[f->type], got, who);
		}
	}
	return PP_OK;
}

pp_status pp_runs_from_json(const char *text, size_t len, const char *source, pp_runs **runs,
                            pp_error *err)
{
	*runs = NULL;
	json_t *root = NULL;
	pp_status st = ppi_json_parse_object(text, len, source, &root, err);
	if (st)
		return st;
	json_t *records = json_object_get(root, "records");
	if (!json_is_array(records)) {
		json_decref(root);
		return ppi_fail(err, source, "records", "expected an array of run records");
	}
	if ((st = check_types(records, source, err))) {
		json_decref(root);
		return st;
	}
	pp_runs *r = ppi_calloc(1, sizeof *r);
	if (!r) {
		json_decref(root);
		return PP_ENOMEM;
	}
	r->root = root;
	r->records = records;
	ppi_strlcpy(r->source, source ? source : "", sizeof r->source);
	*runs = r;
	return PP_OK;
}

pp_status pp_runs_load(const char *path, pp_runs **runs, pp_error *err)
{
	char *text = NULL;
	size_t len = 0;
	*runs = NULL;
	pp_status st = ppi_read_file(path, &text, &len, err);
	if (st)
		return st;
	st = pp_runs_from_json(text, len, path, runs, err);
	free(text);
	return st;
}

void pp_runs_free(pp_runs *runs)
{
	if (!runs)
		return;
	json_decref(runs->root);
	free(runs);
}

size_t pp_runs_count(const pp_runs *runs)
{
	return runs ? json_array_size(runs->records) : 0;
}

const char *pp_runs_id(const pp_runs *runs, size_t i)
{
	json_t *rec = runs ? json_array_get(runs->records, i) : NULL;
	const char *id = json_string_value(json_object_get(rec, "id"));
	return id ? id : "";
}

/* ------------------------------------------------------ small readers */

/* A field that is present and not null. */
static json_t *jget(json_t *obj, const char *key)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	return json_is_null(v) ? NULL : v;
}

static const char *jstr(json_t *obj, const char *key)
{
	return json_string_value(jget(obj, key));
}

/* An integral number (0 when absent); *bad set when present but not integral. */
static long long jint(json_t *obj, const char *key, bool *bad)
{
	json_t *v = jget(obj, key);
	if (!v)
		return 0;
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (d == floor(d) && fabs(d) < 9e15)
			return (long long)d;
	}
	if (bad)
		*bad = true;
	return 0;
}

static double jnum(json_t *obj, const char *key)
{
	json_t *v = jget(obj, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *jbool(json_t *obj, const char *key)
{
	json_t *v = jget(obj, key);
	return json_is_boolean(v) ? v : NULL;
}

static bool has(const char *hay, const char *needle)
{
	return ppi_contains(hay, needle);
}

static void fill(pp_run_info *info, unsigned bit, const char *fmt, ...) PPI_PRINTF(3, 4);
static void fill(pp_run_info *info, unsigned bit, const char *fmt, ...)
{
	info->fills |= bit;
	if (info->nfilled >= PP_RUN_FILLS_MAX)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(info->filled[info->nfilled], PP_RUN_FILL_TEXT_MAX, fmt, ap);
	va_end(ap);
	info->nfilled++;
}

static const char *const fill_names[PP_RUN_FILL_KINDS] = {
    "kv_heads", "ffn",  "head_dim",  "layers", "tp/pp", "dp",        "cp",  "ep",         "vp",
    "sp",       "zero", "recompute", "mbs",    "gbs",   "precision", "etp", "tp_overlap", "gpu"};

const char *pp_run_fill_name(unsigned bit)
{
	for (int i = 0; i < PP_RUN_FILL_KINDS; i++)
		if (bit == (1u << i))
			return fill_names[i];
	return "?";
}

/* ------------------------------------------------------------- tables */

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

static const family families[] = {
    /* match          gated  rms    bias   qkvb   drop   tied   embn   qkn    flash  pos */
    {"deepseek-v3", true, true, false, false, false, false, false, false, true, PP_POS_ROPE, 0,
     false, true},
    {"deepseek", true, true, false, false, false, false, false, false, true, PP_POS_ROPE, 0, false,
     false},
    {"qwen3", true, true, false, false, false, false, false, true, true, PP_POS_ROPE, 128, false,
     false},
    {"qwen", true, true, false, true, false, false, false, false, true, PP_POS_ROPE, 0, false,
     false},
    {"mixtral", true, true, false, false, false, false, false, false, true, PP_POS_ROPE, 0, false,
     false},
    {"mistral", true, true, false, false, false, false, false, false, true, PP_POS_ROPE, 0, false,
     false},
    {"llama", true, true, false, false, false, false, false, false, true, PP_POS_ROPE, 0, false,
     false},
    {"mpt", false, false, false, false, false, true, false, false, true, PP_POS_ALIBI, 0, true,
     false},
    {"bloom", false, false, true, false, false, true, true, false, false, PP_POS_ALIBI, 0, true,
     false},
    {"megatron-core", false, false, true, false, true, true, false, false, true, PP_POS_LEARNED, 0,
     true, false},
    {"gpt", false, false, true, false, true, true, false, false, false, PP_POS_LEARNED, 0, true,
     false},
};

/* DeepSeek-V3 (arXiv:2412.19437 §4.2; HF config.json): MLA ranks. */
static const pp_mla deepseek_v3_mla = {1536, 512, 128, 64, 128};
enum { DEEPSEEK_V3_FIRST_DENSE = 3 };

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

static const gpu_alias gpu_aliases[] = {
    {{"GB200", NULL}, NULL, "gb200-nvl72", NULL},
    {{"B200", NULL}, NULL, "dgx-b200", NULL},
    {{"Blackwell", NULL},
     NULL,
     "dgx-b200",
     "architecture name 'Blackwell': B200 (DGX B200, the data-centre Blackwell part)"},
    {{"H800", NULL}, NULL, "hgx-h800", NULL},
    {{"H20", NULL}, NULL, "hgx-h20", NULL},
    {{"H200", NULL}, NULL, "dgx-h200", NULL},
    {{"H100", "PCIe"}, NULL, "h100-pcie-8", NULL},
    {{"H100", "NVL"}, NULL, "h100-nvl-8", NULL},
    {{"H100", NULL}, NULL, "dgx-h100", NULL},
    {{"Hopper", NULL},
     NULL,
     "dgx-h100",
     "architecture name 'Hopper': H100 SXM (DGX H100, the common Hopper training part)"},
    {{"A800", NULL},
     NULL,
     "dhelix-a800",
     "A800 80GB: the dhelix-a800 system preset (8 GPUs, NVLink 400 GB/s, 4 NICs per node)"},
    {{"A100", "40G"}, "PCIe", "dgx-a100-40g", NULL},
    {{"A100", "80G"}, "PCIe", "dgx-a100-80g", NULL},
    {{"A100", NULL}, "PCIe", "dgx-a100-80g", "A100 memory size not stated: 80 GB (DGX A100)"},
    {{"Ampere", NULL},
     NULL,
     "dgx-a100-80g",
     "architecture name 'Ampere': A100 80GB (DGX A100, the data-centre Ampere training part)"},
};

/* Case-insensitive `word` in `hay`, not inside a longer number (the
 * characters beside it are not digits when its own ends are). */
static bool has_word(const char *hay, const char *word)
{
	size_t n = strlen(word);
	if (!hay || n == 0)
		return false;
	for (const char *p = hay; *p; p++) {
		if (strncasecmp(p, word, n) != 0)
			continue;
		bool digit_end = isdigit((unsigned char)word[n - 1]);
		bool digit_start = isdigit((unsigned char)word[0]);
		if (digit_end && isdigit((unsigned char)p[n]))
			continue;
		if (digit_start && p > hay && isdigit((unsigned char)p[-1]))
			continue;
		return true;
	}
	return false;
}

/* The alias entry of a GPU name, NULL when none matches. */
static const gpu_alias *gpu_alias_of(const char *gpu_type)
{
	for (size_t i = 0; i < sizeof gpu_aliases / sizeof gpu_aliases[0]; i++) {
		const gpu_alias *a = &gpu_aliases[i];
		if (!has_word(gpu_type, a->all[0]) || (a->all[1] && !has_word(gpu_type, a->all[1])))
			continue;
		if (a->none && has(gpu_type, a->none))
			continue;
		return a;
	}
	return NULL;
}

const char *pp_run_gpu_system(const char *gpu_type)
{
	const gpu_alias *a = gpu_alias_of(gpu_type);
	return a ? a->system : NULL;
}

/* The stage of a "ZeRO-3", "ZeRO 2", "zero_stage=1", "ZeRO stage 3" phrase,
 * -1 when `s` names none. */
static int zero_number(const char *s)
{
	for (const char *p = s; p && *p; p++) {
		if (strncasecmp(p, "zero", 4) != 0)
			continue;
		const char *q = p + 4;
		while (*q == '-' || *q == '_' || *q == ' ' || *q == '=' || *q == ':')
			q++;
		if (strncasecmp(q, "stage", 5) == 0) {
			q += 5;
			while (*q == '-' || *q == '_' || *q == ' ' || *q == '=' || *q == ':')
				q++;
		}
		if (*q >= '0' && *q <= '3' && !isdigit((unsigned char)q[1]))
			return *q - '0';
	}
	return -1;
}

int pp_run_zero_stage(const char *s)
{
	if (!s || has(s, "not stated") || has(s, "unknown"))
		return -1;
	int z = zero_number(s);
	if (z >= 0)
		return z;
	/* PyTorch FSDP sharding strategies; FSDP2 (fully_shard) and HSDP shard
	 * parameters, gradients and optimizer state (HSDP within a replica group). */
	if (has(s, "NO_SHARD"))
		return 0;
	if (has(s, "SHARD_GRAD_OP"))
		return 2;
	if (has(s, "FULL_SHARD") || has(s, "HYBRID_SHARD") || has(s, "HSDP") ||
	    has(s, "fully shard") || has(s, "fully_shard") || has(s, "FSDP") ||
	    has(s, "Megatron FSDP"))
		return 3;
	if (has(s, "distributed optimizer") || has(s, "distributed optimiser") ||
	    has(s, "distributed-optimizer") || has(s, "dist-opt") || has(s, "dist_opt"))
		return 1;
	if (has(s, "none") || has(s, "DDP") || has(s, "plain data parallel") ||
	    has(s, "no sharding"))
		return 0;
	return -2; /* a phrase the table does not know */
}

/* Recompute mode from parallelism.activation_recompute; -1 when not stated. */
static int recompute_mode(const char *s)
{
	if (!s)
		return -1;
	if (has(s, "selective"))
		return PP_RECOMPUTE_SELECTIVE;
	if (has(s, "full"))
		return PP_RECOMPUTE_FULL;
	if (has(s, "none") || has(s, "no "))
		return PP_RECOMPUTE_NONE;
	return -2;
}

long long pp_run_global_batch(long long gbs, long long tokens, long long seq, long long mbs,
                              long long dp, long long accum, pp_gbs_rule *rule)
{
	*rule = PP_GBS_NONE;
	if (gbs > 0) {
		*rule = PP_GBS_STATED;
		return gbs;
	}
	if (tokens > 0 && seq > 0 && tokens % seq == 0) {
		*rule = PP_GBS_TOKENS;
		return tokens / seq;
	}
	if (mbs > 0 && dp > 0 && accum > 0 && mbs <= LLONG_MAX / dp / accum) {
		*rule = PP_GBS_ACCUM;
		return mbs * dp * accum;
	}
	return 0;
}

const char *pp_run_framework(const char *title, const char *sharding, const char *schedule,
                             const char *other)
{
	const char *const said[] = {title, sharding, schedule, other};
	for (size_t k = 0; k < sizeof said / sizeof *said; k++)
		if (said[k] && (has(said[k], "llm-foundry") || has(said[k], "MosaicML")))
			return "llm-foundry";
	for (size_t k = 0; k < sizeof said / sizeof *said; k++)
		if (said[k] && (has(said[k], "torchtitan") || has(said[k], "FSDP2") ||
		                has(said[k], "fully_shard") || has(said[k], "HSDP")))
			return "torchtitan";
	/* PyTorch FSDP outside llm-foundry: the PyTorch-native layout (fp32
	 * shards, bf16 gathered copies); not Megatron's own FSDP, not "FSDP=0". */
	if (sharding && (has(sharding, "FSDP") || has(sharding, "fully shard")) &&
	    !has(sharding, "Megatron FSDP") && !has(sharding, "FSDP=0"))
		return "torchtitan";
	for (size_t k = 0; k < sizeof said / sizeof *said; k++)
		if (said[k] && has(said[k], "DeepSpeed"))
			return "deepspeed";
	/* Megatron-LM before Megatron-Core: a schedule naming the scatter/gather
	 * of pipeline sends, or PTD-P, the method of Narayanan et al. SC'21 whose
	 * implementation includes it (Sec. 4.1). */
	if (schedule && (has(schedule, "scatter/gather") || has(schedule, "scatter-gather") ||
	                 has(schedule, "PTD-P")))
		return "megatron-lm-2021";
	return "megatron";
}

/* ---------------------------------------------------------- the record */

#define SKIP(field, ...) ppi_fail(err, runs->source, field, __VA_ARGS__)

static void info_read(json_t *rec, pp_run_info *info)
{
	memset(info, 0, sizeof *info);
	ppi_strlcpy(info->id, jstr(rec, "id") ? jstr(rec, "id") : "", sizeof info->id);
	const char *title = jstr(jget(rec, "source"), "title");
	ppi_strlcpy(info->title, title ? title : "", sizeof info->title);
	const char *gt = jstr(jget(rec, "hardware"), "gpu_type");
	ppi_strlcpy(info->gpu_type, gt ? gt : "", sizeof info->gpu_type);
	json_t *ms = jget(rec, "measured");
	info->tflops_per_gpu = jnum(ms, "tflops_per_gpu");
	const char *def = jstr(ms, "tflops_definition");
	ppi_strlcpy(info->tflops_definition, def ? def : "", sizeof info->tflops_definition);
	info->mfu = jnum(ms, "mfu");
	info->hfu = jnum(ms, "hfu");
	info->tokens_per_s_per_gpu = jnum(ms, "tokens_per_s_per_gpu");
	info->iteration_time_s = jnum(ms, "iteration_time_s");
	double gib = jnum(ms, "peak_memory_GiB");
	info->peak_memory_bytes = isnan(gib) ? NAN : gib * 1073741824.0;
}

/* head_dim stated in free text ("head_dim 128"), 0 when absent. */
static int notes_head_dim(const char *notes)
{
	const char *p = notes ? strstr(notes, "head_dim") : NULL;
	if (!p)
		return 0;
	p += strlen("head_dim");
	while (*p == ' ' || *p == '=' || *p == ':')
		p++;
	int v = atoi(p);
	return v > 0 && v <= 65536 ? v : 0;
}

static pp_status read_model(const pp_runs *runs, json_t *rec, size_t i, pp_model *m,
                            const family **fam_out, pp_run_info *info, pp_error *err)
{
	json_t *jm = jget(rec, "model");
	char path[64];
	snprintf(path, sizeof path, "records[%zu].model", i);
	if (!jm)
		return SKIP(path, "record has no model");
	const char *name = jstr(jm, "name");
	if (!name)
		return SKIP(path, "model has no name");
	const family *fam = NULL;
	for (size_t k = 0; k < sizeof families / sizeof families[0] && !fam; k++)
		if (has(name, families[k].match))
			fam = &families[k];
	if (!fam)
		return SKIP(path, "unknown architecture family '%s' (no entry in the name table)",
		            name);
	*fam_out = fam;

	bool bad = false;
	memset(m, 0, sizeof *m);
	ppi_strlcpy(m->name, name, sizeof m->name);
	m->num_layers = (int)jint(jm, "num_layers", &bad);
	m->hidden = (int)jint(jm, "hidden_size", &bad);
	m->num_heads = (int)jint(jm, "num_attention_heads", &bad);
	m->num_kv_heads = (int)jint(jm, "num_kv_heads", &bad);
	m->ffn_hidden = (int)jint(jm, "ffn_hidden_size", &bad);
	m->vocab = (int)jint(jm, "vocab_size", &bad);
	if (bad)
		return SKIP(path, "a shape field is not an integer");
	if (m->num_layers <= 0 || m->hidden <= 0 || m->num_heads <= 0 || m->vocab <= 0)
		return SKIP(path, "missing shape (num_layers, hidden_size, num_attention_heads or "
		                  "vocab_size is null)");
	m->gated_mlp = fam->gated_mlp;
	m->norm = fam->rmsnorm ? PP_NORM_RMSNORM : PP_NORM_LAYERNORM;
	m->position = fam->position;
	m->linear_bias = fam->linear_bias;
	m->qkv_bias = fam->qkv_bias;
	m->dropout = fam->dropout;
	m->tied_embeddings = fam->tied;
	m->embedding_norm = fam->embedding_norm;
	m->qk_norm = fam->qk_norm;
	double tp = jnum(jm, "total_params_B");
	m->published_params = isnan(tp) ? 0 : tp * 1e9;
	ppi_strlcpy(m->source, "validation record ", sizeof m->source);
	strncat(m->source, info->id, sizeof m->source - strlen(m->source) - 1);

	/* Mixture of experts, from the record's own moe object. */
	json_t *moe = jget(jm, "moe");
	if (moe) {
		pp_moe *e = &m->moe;
		e->num_experts = (int)jint(moe, "num_experts", &bad);
		e->top_k = (int)jint(moe, "top_k", &bad);
		e->expert_ffn_hidden = (int)jint(moe, "expert_ffn_hidden_size", &bad);
		e->num_shared_experts = (int)jint(moe, "num_shared_experts", &bad);
		e->first_k_dense = (int)jint(moe, "dense_layers", &bad);
		if (bad || e->num_experts <= 0 || e->top_k <= 0 || e->expert_ffn_hidden <= 0)
			return SKIP(path,
			            "moe needs num_experts, top_k and expert_ffn_hidden_size");
		e->shared_ffn_hidden = e->num_shared_experts * e->expert_ffn_hidden;
		e->layer_freq = 1;
	}
	if (fam->mla_v3) {
		m->mla = deepseek_v3_mla;
		m->moe.router_bias = m->moe.num_experts > 0;
		if (m->moe.num_experts > 0 && !jget(moe, "dense_layers"))
			m->moe.first_k_dense = DEEPSEEK_V3_FIRST_DENSE;
	}

	if (m->num_kv_heads <= 0) {
		m->num_kv_heads = m->num_heads;
		if (m->mla.kv_lora_rank == 0)
			fill(info, PP_FILL_KV_HEADS, "num_kv_heads unknown: %d (= heads, MHA)",
			     m->num_heads);
	}
	int hd = notes_head_dim(jstr(jm, "arch_notes"));
	if (hd) {
		m->head_dim = hd;
	} else if (fam->head_dim) {
		m->head_dim = fam->head_dim;
		if (fam->head_dim * m->num_heads != m->hidden)
			fill(info, PP_FILL_HEAD_DIM, "head_dim unknown: %d (family table)",
			     fam->head_dim);
	} else {
		m->head_dim = m->hidden / m->num_heads;
	}
	if (m->mla.kv_lora_rank > 0)
		m->head_dim = m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim;
	bool all_moe = m->moe.num_experts > 0 && m->moe.first_k_dense == 0;
	if (m->ffn_hidden <= 0 && !all_moe) {
		if (!fam->ffn_4h)
			return SKIP(path,
			            "ffn_hidden_size is null and the %s family has no default",
			            fam->match);
		m->ffn_hidden = 4 * m->hidden;
		fill(info, PP_FILL_FFN, "ffn_hidden_size unknown: %d (4 x hidden, GPT family)",
		     m->ffn_hidden);
	}
	int seq = (int)jint(jm, "seq_length", &bad);
	if (m->position == PP_POS_LEARNED)
		m->max_position = seq > 0 ? seq : 0;
	return PP_OK;
}

/* Largest tensor-parallel degree <= cap that divides mp and the model. */
static int split_tp(const pp_model *m, long long mp, int cap)
{
	for (int t = cap; t >= 1; t--) {
		if (mp % t || m->num_heads % t || m->num_kv_heads % t)
			continue;
		if (m->ffn_hidden > 0 && m->ffn_hidden % t)
			continue;
		return t;
	}
	return 1;
}

/*
 * The FP8 recipe a record's precision names.  The recipe named first is the
 * one measured ("FP8-CS (FP8-MX)": the alternative's figures are in
 * measured.other).  NeMo/Megatron-Bridge write FP8-CS (current scaling),
 * FP8-MX (MXFP8) and FP8-DS (delayed); "tensorwise" is current scaling in
 * Megatron-LM's --fp8-recipe and torchao's recipe names alike; block-wise
 * (DeepSeek-V3, TE Float8BlockScaling) and row-wise (torchao) by name.  A
 * bare "FP8" is Transformer Engine's default, delayed scaling.
 */
static pp_fp8_recipe fp8_recipe_of(const char *prec)
{
	static const struct {
		const char *phrase;
		pp_fp8_recipe recipe;
	} words[] = {
	    {"fp8-cs", PP_FP8_CURRENT},
	    {"current scaling", PP_FP8_CURRENT},
	    {"tensorwise", PP_FP8_CURRENT},
	    {"tensor-wise", PP_FP8_CURRENT},
	    {"fp8-mx", PP_FP8_MX},
	    {"mxfp8", PP_FP8_MX},
	    {"fp8-ds", PP_FP8_DELAYED},
	    {"delayed scaling", PP_FP8_DELAYED},
	    {"blockwise", PP_FP8_BLOCKWISE},
	    {"block-wise", PP_FP8_BLOCKWISE},
	    {"block scaling", PP_FP8_BLOCKWISE},
	    {"rowwise", PP_FP8_ROWWISE},
	    {"row-wise", PP_FP8_ROWWISE},
	};
	pp_fp8_recipe r = PP_FP8_DELAYED;
	long first = -1;
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		long at = ppi_find_ci(prec, words[i].phrase);
		if (at >= 0 && (first < 0 || at < first)) {
			first = at;
			r = words[i].recipe;
		}
	}
	return r;
}

/* pp_plan_resolve, with the record named in a failure. */
static pp_status resolve(const pp_runs *runs, size_t i, pp_plan *plan, const pp_model *m,
                         const pp_system *s, long long gpus, const pp_job *job, pp_error *err)
{
	pp_status st = pp_plan_resolve(plan, m, s, gpus, job, err);
	if (st == PP_EINPUT && err) {
		char text[PP_ERROR_TEXT_MAX], field[PP_ERROR_FIELD_MAX];
		ppi_strlcpy(text, err->text, sizeof text);
		ppi_strlcpy(field, err->field, sizeof field);
		char where[64];
		snprintf(where, sizeof where, "records[%zu].parallelism", i);
		ppi_fail(err, runs->source, where, "plan does not resolve: %s: %s", field, text);
	}
	return st;
}

/* Record i's inputs as the record gives them, completed by the fills that
 * need no model evaluation; *recompute_unknown when the record does not say
 * which activation recompute ran (the plan is then left unresolved). */
static pp_status read_inputs(const pp_runs *runs, size_t i, pp_model *model, pp_system *system,
                             pp_job *job, pp_plan *plan, long long *gpus_out, pp_run_info *info,
                             bool *recompute_unknown, pp_error *err)
{
	pp_error_clear(err);
	json_t *rec = runs ? json_array_get(runs->records, i) : NULL;
	if (!rec) {
		memset(info, 0, sizeof *info);
		return ppi_fail(err, runs ? runs->source : "", "records",
		                "no record %zu (there are %zu)", i, pp_runs_count(runs));
	}
	info_read(rec, info);
	char path[96];
	pp_status st;

	/* ---- hardware */
	json_t *jh = jget(rec, "hardware");
	snprintf(path, sizeof path, "records[%zu].hardware.gpu_type", i);
	if (!info->gpu_type[0])
		return SKIP(path, "GPU type not stated");
	const gpu_alias *alias = gpu_alias_of(info->gpu_type);
	if (!alias)
		return SKIP(path, "unknown GPU '%s' (no entry in the alias table)", info->gpu_type);
	if (!alias->system)
		return SKIP(path, "no system preset for GPU '%s' (%s%s%s)", info->gpu_type,
		            alias->all[0], alias->all[1] ? " " : "",
		            alias->all[1] ? alias->all[1] : "");
	const char *sys = alias->system;
	/* BLOOM's Jean Zay nodes have the DGX A100's GPUs but an Omni-Path fabric. */
	const char *net = jstr(jget(rec, "hardware"), "inter_node_network");
	if (net && has(net, "Omni-Path") && has(info->gpu_type, "A100"))
		sys = "jean-zay-a100";
	else if (alias->note)
		fill(info, PP_FILL_GPU, "GPU '%s' read as %s", info->gpu_type, alias->note);
	ppi_strlcpy(info->system, sys, sizeof info->system);
	pp_error perr;
	if (pp_system_preset(sys, system, &perr))
		return SKIP(path, "no system preset '%s' for GPU '%s'", sys, info->gpu_type);
	bool bad = false;
	long long gpus = jint(jh, "num_gpus", &bad);
	if (gpus <= 0 || bad) {
		snprintf(path, sizeof path, "records[%zu].hardware.num_gpus", i);
		return SKIP(path, "number of GPUs not stated");
	}

	/* ---- model */
	const family *fam = NULL;
	if ((st = read_model(runs, rec, i, model, &fam, info, err)))
		return st;
	pp_model *m = model;

	/* ---- job */
	pp_job_init(job);
	json_t *jm = jget(rec, "model");
	json_t *jb = jget(rec, "batch");
	json_t *jp = jget(rec, "parallelism");
	int seq = (int)jint(jm, "seq_length", &bad);
	if (seq <= 0) {
		snprintf(path, sizeof path, "records[%zu].model.seq_length", i);
		return SKIP(path, "sequence length not stated");
	}
	job->seq_len = seq;
	const char *prec = json_is_string(jget(rec, "precision")) ? jstr(rec, "precision") : NULL;
	snprintf(path, sizeof path, "records[%zu].precision", i);
	if (!prec)
		return SKIP(path, "precision not stated");
	if (has(prec, "fp8")) {
		job->precision = PP_PREC_FP8;
		job->fp8_recipe = fp8_recipe_of(prec);
	} else if (has(prec, "16-bit") || has(prec, "unspecified") || has(prec, "not stated")) {
		job->precision = PP_PREC_BF16;
		fill(info, PP_FILL_PRECISION,
		     "16-bit type unspecified: bf16 (fp16 has the same memory footprint)");
	} else if (has(prec, "bf16")) {
		job->precision = PP_PREC_BF16;
	} else if (has(prec, "fp16")) {
		job->precision = PP_PREC_FP16;
	} else if (has(prec, "fp32") || has(prec, "tf32")) {
		job->precision = PP_PREC_FP32;
	} else {
		return SKIP(path, "unknown precision '%s'", prec);
	}
	if (has(prec, "inferred"))
		fill(info, PP_FILL_PRECISION, "precision inferred by the dataset: %s",
		     pp_precision_name(job->precision));
	/* Gradients: fp32 main grads (Megatron), fp32 sharded grads (FSDP mixed
	 * precision keeps fp32 flat parameters), fp32 accumulation (DeepSpeed
	 * BF16Optimizer): 4 bytes in every source. */
	job->grad_bytes = 4;

	/* The global batch: stated, or from the tokens, or (once dp is known)
	 * micro-batch x dp x accumulation; pp_run_global_batch. */
	long long gbs_stated = jint(jb, "global_batch_size", &bad);
	long long gbs_tokens = jint(jb, "global_batch_tokens", &bad);
	long long mbs_stated = jint(jb, "micro_batch_size", &bad);
	long long accum = jint(jb, "grad_accum_steps", &bad);

	/* ---- plan */
	pp_plan_init(plan);
	plan->flash = fam->flash;
	long long tp = jint(jp, "tp", &bad), pp = jint(jp, "pp", &bad), dp = jint(jp, "dp", &bad);
	long long cp = jint(jp, "cp", &bad), ep = jint(jp, "ep", &bad);
	long long vp = jint(jp, "virtual_pipeline_size", &bad);
	long long mp = jint(jp, "model_parallel_size", &bad);
	snprintf(path, sizeof path, "records[%zu].parallelism", i);
	if (bad)
		return SKIP(path, "a parallel degree is not an integer");
	if (cp <= 0) {
		cp = 1;
		fill(info, PP_FILL_CP, "cp unknown: 1");
	}
	/* Each degree is bounded (record_fields); their product is the GPU count
	 * and must be one, so no product below overflows. */
	if ((tp > 0 ? (double)tp : 1) * (pp > 0 ? (double)pp : 1) * (double)cp *
	        (dp > 0 ? (double)dp : 1) >
	    GPUS_MAX)
		return SKIP(path, "tp x pp x cp x dp is more than %d GPUs", GPUS_MAX);
	if (ep <= 0) {
		ep = 1;
		if (m->moe.num_experts > 0)
			fill(info, PP_FILL_EP, "ep unknown: 1");
	}
	if (tp <= 0 || pp <= 0) {
		/* Model-parallel size: stated, or what the data-parallel degree leaves. */
		if (mp <= 0 && tp > 0 && dp > 0 && gpus % (tp * dp * cp) == 0)
			mp = gpus / (dp * cp);
		else if (mp <= 0 && pp > 0 && dp > 0 && gpus % (pp * dp * cp) == 0)
			mp = gpus / (dp * cp);
		else if (mp <= 0 && dp > 0 && gpus % (dp * cp) == 0)
			mp = gpus / (dp * cp);
		if (mp <= 0)
			return SKIP(path, "parallel plan not stated (tp, pp, dp and "
			                  "model_parallel_size are null)");
		int cap = system->gpus_per_node > 0 ? system->gpus_per_node : 8;
		if (tp <= 0 && pp > 0)
			tp = mp % pp == 0 ? mp / pp : 0;
		else if (tp <= 0)
			tp = split_tp(m, mp, cap);
		if (pp <= 0)
			pp = tp > 0 && mp % tp == 0 ? mp / tp : 0;
		if (tp <= 0 || pp <= 0)
			return SKIP(path, "tp/pp cannot be derived from model_parallel_size %lld",
			            mp);
		fill(info, PP_FILL_TP_PP,
		     "tp/pp unknown: tp %lld, pp %lld (model-parallel size %lld; tp the largest "
		     "divisor <= %d GPUs per node)",
		     tp, pp, mp, cap);
	}
	if (dp > 0 && tp * pp * cp * dp != gpus) {
		fill(info, PP_FILL_DP,
		     "num_gpus %lld != tp*pp*cp*dp = %lld: the stated plan is evaluated on %lld "
		     "GPUs (per-GPU memory depends on the plan only)",
		     gpus, tp * pp * cp * dp, tp * pp * cp * dp);
		gpus = tp * pp * cp * dp;
	}
	if (dp <= 0) {
		if (gpus % (tp * pp * cp))
			return SKIP(path, "%lld GPUs not divisible by tp*pp*cp = %lld", gpus,
			            tp * pp * cp);
		dp = gpus / (tp * pp * cp);
		fill(info, PP_FILL_DP, "dp unknown: %lld (num_gpus / (tp*pp*cp))", dp);
	}
	plan->tp = (int)tp;
	plan->pp = (int)pp;
	plan->dp = (int)dp;

	pp_gbs_rule rule;
	long long gbs =
	    pp_run_global_batch(gbs_stated, gbs_tokens, seq, mbs_stated, dp, accum, &rule);
	snprintf(path, sizeof path, "records[%zu].batch.global_batch_size", i);
	if (rule == PP_GBS_NONE)
		return SKIP(path, "global batch not stated (neither global_batch_size, "
		                  "global_batch_tokens nor micro_batch_size x dp x "
		                  "grad_accum_steps)");
	if (rule == PP_GBS_TOKENS)
		fill(info, PP_FILL_GBS,
		     "global_batch_size unknown: %lld (global_batch_tokens / seq)", gbs);
	else if (rule == PP_GBS_ACCUM)
		fill(info, PP_FILL_GBS,
		     "global_batch_size unknown: %lld (micro_batch_size %lld x dp %lld x "
		     "grad_accum_steps %lld)",
		     gbs, mbs_stated, dp, accum);
	job->global_batch = gbs;
	plan->cp = (int)cp;
	plan->ep = (int)ep;

	const char *sched = jstr(jp, "pipeline_schedule");
	if (vp <= 0) {
		vp = 1;
		if (pp > 1 && has(sched, "interleaved"))
			fill(info, PP_FILL_VP,
			     "interleaved schedule without a virtual pipeline size: vp 1 (plain "
			     "1F1B)");
	} else if (vp > 1 && pp == 1) {
		fill(info, PP_FILL_VP, "virtual pipeline size %lld with pp 1 has no effect: vp 1",
		     vp);
		vp = 1;
	}
	plan->vp = (int)vp;
	plan->schedule = pp_schedule_for_vp(PP_SCHED_1F1B, (int)vp); /* vp > 1: interleaved */
	/* Layers that pp x vp does not divide: Megatron-LM then needs an uneven
	 * split (--decoder-first/last-pipeline-num-layers, or the embedding and
	 * the loss counted as layers), and no record says which ran.  The model is
	 * padded here, where the record is read, not in pp_plan_resolve, which
	 * refuses such a plan from a user who can state the split (--first-stage-
	 * layers ...): every stage then holds ceil(L / (pp vp)) layers per chunk,
	 * at least what the fullest stage of any split held, so the stage that
	 * paces the pipeline and holds the peak is modelled at its size or above
	 * (an upper bound, listed as a fill). */
	if (m->num_layers % (pp * vp)) {
		int unit = (int)(pp * vp);
		int padded = (m->num_layers + unit - 1) / unit * unit;
		fill(info, PP_FILL_LAYERS,
		     "num_layers %d not divisible by pp*vp = %d: padded to %d (every stage holds "
		     "the largest share; an upper bound)",
		     m->num_layers, unit, padded);
		m->num_layers = padded;
	}

	/* TP communication overlap: stated in the record's notes, or the default
	 * of NVIDIA's NeMo / Megatron-Bridge performance recipes when tp > 1. */
	const char *other = jstr(jp, "other");
	if (tp > 1 && other && has(other, "tp-comm-overlap")) {
		plan->tp_overlap = true;
	} else if (tp > 1 && (has(info->title, "Megatron-Bridge") || has(info->title, "NeMo"))) {
		plan->tp_overlap = true;
		fill(info, PP_FILL_TP_OVERLAP,
		     "TP communication overlap unknown: on (NeMo/Megatron-Bridge performance "
		     "recipes enable tp_comm_overlap)");
	}

	json_t *jsp = jbool(jp, "sequence_parallel");
	if (jsp) {
		plan->sp = json_is_true(jsp);
	} else {
		plan->sp = tp > 1;
		if (tp > 1)
			fill(info, PP_FILL_SP, "sequence_parallel unknown: on (tp > 1)");
	}
	/* Expert tensor parallelism is never stated: Megatron-Core's default
	 * (etp = tp) when the expert ranks fit in the stage, else 1. */
	if (m->moe.num_experts > 0) {
		long long inner = tp * cp * dp;
		plan->etp =
		    (inner % (ep * tp) == 0 && m->moe.expert_ffn_hidden % tp == 0) ? (int)tp : 1;
		if (tp > 1)
			fill(info, PP_FILL_ETP, "expert tensor parallelism unknown: %d", plan->etp);
	}

	const char *zs = jstr(jp, "zero_or_dist_optimizer");
	int z = pp_run_zero_stage(zs);
	if (z == -2) {
		snprintf(path, sizeof path, "records[%zu].parallelism.zero_or_dist_optimizer", i);
		return SKIP(path, "unknown optimizer sharding '%s'", zs);
	}
	if (z < 0) {
		z = 1;
		fill(info, PP_FILL_ZERO,
		     "optimizer sharding unknown: distributed optimizer (ZeRO-1), the default of "
		     "Megatron-Core recipes");
	}
	plan->zero = z;
	if (zs && (has(zs, "HSDP") || has(zs, "HYBRID_SHARD")))
		fill(info, PP_FILL_ZERO,
		     "HSDP: sharded over the whole data-parallel group (the replica groups "
		     "are not modelled; an upper bound on sharding)");

	/* The training framework, from what the source says it ran (never per
	 * record): MosaicML's benchmarks ran llm-foundry; DeepSpeed's ZeRO or
	 * pipeline engine runs with DeepSpeed's defaults; the rest are Megatron. */
	const char *ps = jstr(jp, "pipeline_schedule");
	const char *fw = pp_run_framework(info->title, zs, ps, other);
	if ((st = pp_system_set_framework(system, fw, err)))
		return st;

	long long mbs = jint(jb, "micro_batch_size", &bad);
	if (mbs <= 0) {
		mbs = 1;
		fill(info, PP_FILL_MBS, "micro_batch_size unknown: 1");
	}
	plan->mbs = (int)mbs;

	const char *rs = jstr(jp, "activation_recompute");
	int rc = recompute_mode(rs);
	if (rc == -2) {
		snprintf(path, sizeof path, "records[%zu].parallelism.activation_recompute", i);
		return SKIP(path, "unknown recompute setting '%s'", rs);
	}

	/* ---- resolve.  An unknown recompute mode is left to pick_recompute: the
	 * reader only checks that the plan resolves (reading estimates nothing). */
	*gpus_out = gpus;
	if (rc >= 0) {
		plan->recompute = (pp_recompute)rc;
		return resolve(runs, i, plan, m, system, gpus, job, err);
	}
	*recompute_unknown = true;
	pp_plan probe = *plan;
	return resolve(runs, i, &probe, m, system, gpus, job, err);
}

/* The evaluation step after the read, for a record that does not state its
 * activation recompute: the lightest mode under which the estimate fits
 * (none, else selective, else full), noted as a fill; `plan` as read
 * (unresolved) comes back resolved under it. */
static pp_status pick_recompute(const pp_runs *runs, size_t i, pp_model *m, pp_system *system,
                                pp_job *job, pp_plan *plan, long long gpus, pp_run_info *info,
                                pp_error *err)
{
	static const pp_recompute order[] = {PP_RECOMPUTE_NONE, PP_RECOMPUTE_SELECTIVE,
	                                     PP_RECOMPUTE_FULL};
	pp_estimate *est = ppi_malloc(sizeof *est);
	if (!est)
		return PP_ENOMEM;
	pp_recompute chosen = PP_RECOMPUTE_FULL;
	for (int k = 0; k < 3; k++) {
		plan->recompute = order[k];
		pp_status st = pp_estimate_run(m, system, job, plan, gpus, est, err);
		if (st) {
			free(est);
			return st;
		}
		if (est->fits) {
			chosen = order[k];
			break;
		}
	}
	free(est);
	plan->recompute = chosen;
	fill(info, PP_FILL_RECOMPUTE,
	     "activation_recompute unknown: %s (none if the plan fits without it, else "
	     "selective, else full)",
	     pp_recompute_name(chosen));
	return resolve(runs, i, plan, m, system, gpus, job, err);
}

pp_status pp_run_inputs(const pp_runs *runs, size_t i, pp_model *model, pp_system *system,
                        pp_job *job, pp_plan *plan, long long *gpus, pp_run_info *info,
                        pp_error *err)
{
	bool recompute_unknown = false;
	pp_status st =
	    read_inputs(runs, i, model, system, job, plan, gpus, info, &recompute_unknown, err);
	if (st || !recompute_unknown)
		return st;
	return pick_recompute(runs, i, model, system, job, plan, *gpus, info, err);
}
