/*
 * Published training runs (shared/validation/public-runs.json) as paraplan
 * inputs.
 *
 * A record states a model shape, the hardware, a parallel plan, a batch and a
 * precision in the words of its source.  This file reads one record into
 * paraplan's structs, mapping those words with the fixed tables of
 * runs_alias.c, and completes what a source leaves unknown with fill rules
 * that are the same for every record.  Each fill is reported in
 * pp_run_info.  The tables and rules are documented in docs/validation.md;
 * keep the two in step.  runs_int.h lists the other parts.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/schedule_type.h"
#include "runs_int.h"
#include "util/util.h"

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

void ppi_run_fill(pp_run_info *info, unsigned bit, const char *fmt, ...)
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
    "kv_heads",   "ffn", "head_dim", "layers",    "tp/pp",  "dp",  "cp",        "ep",
    "vp",         "sp",  "zero",     "recompute", "mbs",    "gbs", "precision", "etp",
    "tp_overlap", "gpu", "arch",     "graphs",    "dtypes", "ddp"};

const char *pp_run_fill_name(unsigned bit)
{
	for (int i = 0; i < PP_RUN_FILL_KINDS; i++)
		if (bit == (1u << i))
			return fill_names[i];
	return "?";
}

/* ---------------------------------------------------------- the record */

#define SKIP(field, ...) ppi_fail(err, runs->source, field, __VA_ARGS__)

/* DeepSeek-V3 (arXiv:2412.19437 §4.2; HF config.json): MLA ranks. */
static const pp_mla deepseek_v3_mla = {1536, 512, 128, 64, 128};
enum { DEEPSEEK_V3_FIRST_DENSE = 3 };

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

/* The model: record i's model object into *m (cleared here; the shape as
 * stated, the architecture from the family table, MoE and MLA), its family
 * into *fam_out, a fill for each value the record leaves unknown.  A name in
 * no family is read from its shape alone (ppi_run_family_by_shape, into
 * *own: its architecture from arch_notes or the defaults, each a fill). */
static pp_status read_model(const pp_runs *runs, json_t *rec, size_t i, pp_model *m,
                            const family **fam_out, family *own, pp_run_info *info, pp_error *err)
{
	json_t *jm = jget(rec, "model");
	char path[64];
	snprintf(path, sizeof path, "records[%zu].model", i);
	if (!jm)
		return SKIP(path, "record has no model");
	const char *name = jstr(jm, "name");
	if (!name)
		return SKIP(path, "model has no name");
	const char *notes = jstr(jm, "arch_notes");
	if (ppi_run_hybrid(name, notes))
		return SKIP(path,
		            "hybrid Mamba-Transformer '%s' (Mamba layers are not modelled; the "
		            "shape fields describe attention layers only)",
		            name);
	const family *fam = ppi_run_family_of(name);
	if (!fam)
		fam = ppi_run_family_by_shape(name, notes, own, info);
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
			ppi_run_fill(info, PP_FILL_KV_HEADS,
			             "num_kv_heads unknown: %d (= heads, MHA)", m->num_heads);
	}
	int hd = notes_head_dim(notes);
	if (hd) {
		m->head_dim = hd;
	} else if (fam->head_dim) {
		m->head_dim = fam->head_dim;
		if (fam->head_dim * m->num_heads != m->hidden)
			ppi_run_fill(info, PP_FILL_HEAD_DIM, "head_dim unknown: %d (family table)",
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
		ppi_run_fill(info, PP_FILL_FFN,
		             "ffn_hidden_size unknown: %d (4 x hidden, GPT family)", m->ffn_hidden);
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
 * read_inputs in steps.  Each step reads one part of record r->i and writes
 * the caller's outputs it names; a step returns a skip (PP_EINPUT naming the
 * field) or PP_OK.  The steps run in the order below, which is the order of
 * the fills in pp_run_info and of the checks (the first failing one is
 * reported).  Every json_t is borrowed from runs->records; nothing is
 * allocated.
 */
typedef struct reading {
	const pp_runs *runs;
	size_t i;
	json_t *rec, *jh, *jm, *jb, *jp; /* the record and its objects (NULL: absent) */
	pp_model *m;                     /* the caller's outputs, written by the steps */
	pp_system *system;
	pp_job *job;
	pp_plan *plan;
	pp_run_info *info;
	const family *fam; /* read_model's family of the model name (or &shape_fam) */
	family shape_fam;  /* a name in no family: its architecture by shape */
	bool bad;          /* a field read so far was not an integer */
	long long gpus;    /* hardware.num_gpus, then the plan's product */
	int seq;           /* model.seq_length */
	/* batch fields as stated (0: absent); local: per data-parallel rank */
	long long gbs_stated, gbs_tokens, mbs_stated, accum, local;
	bool torchtitan; /* the source names torchtitan (its batch rules) */
	/* the parallel degrees as stated, then completed by read_degrees */
	long long tp, pp, dp, cp, ep, vp, mp;
	bool split_emb_loss; /* its launch script counts the embedding and the loss as layers */
} reading;

static pp_status read_gpus(reading *r, pp_error *err);

/* A record's hardware.system: a system preset's name, or a system JSON file
 * ('/' or ".json" in it), a relative path read from the records file's
 * folder so that the two travel together.  Never standard input. */
static pp_status record_system(const pp_runs *runs, const char *ref, pp_system *out, pp_error *err)
{
	if (!strchr(ref, '/') && !strstr(ref, ".json"))
		return pp_system_preset(ref, out, err);
	char file[4096];
	const char *slash = strrchr(runs->source, '/');
	int n = ref[0] != '/' && slash ? snprintf(file, sizeof file, "%.*s/%s",
	                                          (int)(slash - runs->source), runs->source, ref)
	                               : snprintf(file, sizeof file, "%s", ref);
	if (n < 0 || (size_t)n >= sizeof file)
		return ppi_fail(err, NULL, NULL, "system file path too long");
	return pp_system_load(file, out, err);
}

/* Hardware: the record's own system (hardware.system), else hardware.gpu_type
 * through the alias table to a system preset (into r->system, its name into
 * r->info->system, an ambiguous name's reading as a fill), and
 * hardware.num_gpus into r->gpus. */
static pp_status read_hardware(reading *r, pp_error *err)
{
	const pp_runs *runs = r->runs;
	size_t i = r->i;
	pp_run_info *info = r->info;
	char path[96];
	json_t *rec = r->rec;
	json_t *jh = jget(rec, "hardware");
	r->jh = jh;
	snprintf(path, sizeof path, "records[%zu].hardware.gpu_type", i);
	if (!info->gpu_type[0])
		return SKIP(path, "GPU type not stated");
	const gpu_alias *alias = ppi_run_gpu_alias_of(info->gpu_type);
	const char *own = jstr(jh, "system");
	if (own) {
		/* a cluster the presets do not describe: its GPU must be the one
		 * the record names, where the alias table knows that name */
		snprintf(path, sizeof path, "records[%zu].hardware.system", i);
		pp_error serr;
		pp_error_clear(&serr);
		if (record_system(runs, own, r->system, &serr)) {
			char why[PP_ERROR_SOURCE_MAX + PP_ERROR_TEXT_MAX + 64];
			return SKIP(path, "hardware.system '%s': %s", own,
			            pp_error_format(&serr, why, sizeof why));
		}
		pp_system named;
		if (alias && alias->system &&
		    pp_system_preset(alias->system, &named, &serr) == PP_OK &&
		    strcmp(named.gpu.name, r->system->gpu.name) != 0)
			return SKIP(path,
			            "hardware.system '%s' has GPU '%s'; the record's '%s' is %s",
			            own, r->system->gpu.name, info->gpu_type, named.gpu.name);
		ppi_strlcpy(info->system, r->system->name, sizeof info->system);
		return read_gpus(r, err);
	}
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
		ppi_run_fill(info, PP_FILL_GPU, "GPU '%s' read as %s", info->gpu_type, alias->note);
	ppi_strlcpy(info->system, sys, sizeof info->system);
	pp_error perr;
	if (pp_system_preset(sys, r->system, &perr))
		return SKIP(path, "no system preset '%s' for GPU '%s'", sys, info->gpu_type);
	return read_gpus(r, err);
}

/* hardware.num_gpus into r->gpus. */
static pp_status read_gpus(reading *r, pp_error *err)
{
	const pp_runs *runs = r->runs;
	size_t i = r->i;
	char path[96];
	long long gpus = jint(r->jh, "num_gpus", &r->bad);
	if (gpus <= 0 || r->bad) {
		snprintf(path, sizeof path, "records[%zu].hardware.num_gpus", i);
		return SKIP(path, "number of GPUs not stated");
	}
	r->gpus = gpus;
	return PP_OK;
}

/* The job: model.seq_length and precision into r->job (initialised here),
 * and the batch fields as stated into r (the global batch is formed by
 * read_batch once dp is known). */
static pp_status read_job(reading *r, pp_error *err)
{
	const pp_runs *runs = r->runs;
	size_t i = r->i;
	pp_run_info *info = r->info;
	pp_job *job = r->job;
	json_t *rec = r->rec;
	char path[96];
	pp_job_init(job);
	r->jm = jget(rec, "model");
	r->jb = jget(rec, "batch");
	r->jp = jget(rec, "parallelism");
	json_t *jm = r->jm, *jb = r->jb;
	int seq = (int)jint(jm, "seq_length", &r->bad);
	if (seq <= 0) {
		snprintf(path, sizeof path, "records[%zu].model.seq_length", i);
		return SKIP(path, "sequence length not stated");
	}
	r->seq = seq;
	job->seq_len = seq;
	const char *prec = json_is_string(jget(rec, "precision")) ? jstr(rec, "precision") : NULL;
	snprintf(path, sizeof path, "records[%zu].precision", i);
	if (!prec)
		return SKIP(path, "precision not stated");
	if (has(prec, "mxfp4"))
		return SKIP(path, "unknown precision '%s' (MXFP4 is not modelled; NVFP4 is)", prec);
	if (has(prec, "fp8") || has(prec, "fp4")) {
		/* NVFP4 is an FP8-class recipe (pp_fp8_recipe): FP4 GEMMs, the rest
		 * of the step as under FP8. */
		job->precision = PP_PREC_FP8;
		job->fp8_recipe = ppi_run_fp8_recipe(prec);
		if (job->fp8_recipe == PP_FP8_NVFP4 && !has(prec, "nvfp4"))
			ppi_run_fill(info, PP_FILL_PRECISION,
			             "FP4 format unspecified: NVFP4 (the FP4 recipe of Transformer "
			             "Engine and Megatron-LM, --fp4-format e2m1)");
	} else if (has(prec, "16-bit") || has(prec, "unspecified") || has(prec, "not stated")) {
		job->precision = PP_PREC_BF16;
		ppi_run_fill(info, PP_FILL_PRECISION,
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
		ppi_run_fill(info, PP_FILL_PRECISION, "precision inferred by the dataset: %s",
		             pp_precision_name(job->precision));
	/* Gradients: fp32 main grads (Megatron), fp32 sharded grads (FSDP mixed
	 * precision keeps fp32 flat parameters), fp32 accumulation (DeepSpeed
	 * BF16Optimizer): 4 bytes, except in NVIDIA's NeMo / Megatron-Bridge
	 * performance recipes, which also store FP8 parameters (fills). */
	job->grad_bytes = 4;
	ppi_run_state_dtypes(info->title, jstr(jget(rec, "source"), "location"), job, info);

	/* The global batch: stated, or from the tokens, or (once dp is known)
	 * micro-batch x dp x accumulation; pp_run_global_batch. */
	r->gbs_stated = jint(jb, "global_batch_size", &r->bad);
	r->gbs_tokens = jint(jb, "global_batch_tokens", &r->bad);
	r->mbs_stated = jint(jb, "micro_batch_size", &r->bad);
	r->accum = jint(jb, "grad_accum_steps", &r->bad);
	r->local = jint(jb, "local_batch_size", &r->bad);
	const char *other = jstr(r->jp, "other");
	r->torchtitan = has(info->title, "torchtitan") || (other && has(other, "torchtitan"));
	return PP_OK;
}

/* The parallel degrees: r->plan initialised here, tp, pp and dp stated or
 * derived (from model_parallel_size and the GPU count, each derivation a
 * fill) into r->plan and r; cp, ep, vp and mp as stated (cp, ep completed
 * to 1) into r; r->gpus becomes tp x pp x cp x dp when the record's count
 * differs. */
static pp_status read_degrees(reading *r, pp_error *err)
{
	const pp_runs *runs = r->runs;
	size_t i = r->i;
	pp_run_info *info = r->info;
	pp_plan *plan = r->plan;
	const pp_model *m = r->m;
	json_t *jp = r->jp;
	bool bad = r->bad;
	long long gpus = r->gpus;
	char path[96];
	pp_plan_init(plan);
	plan->flash = r->fam->flash;
	long long tp = jint(jp, "tp", &bad), pp = jint(jp, "pp", &bad), dp = jint(jp, "dp", &bad);
	long long cp = jint(jp, "cp", &bad), ep = jint(jp, "ep", &bad);
	long long vp = jint(jp, "virtual_pipeline_size", &bad);
	long long mp = jint(jp, "model_parallel_size", &bad);
	r->bad = bad;
	snprintf(path, sizeof path, "records[%zu].parallelism", i);
	if (bad)
		return SKIP(path, "a parallel degree is not an integer");
	if (cp <= 0) {
		cp = 1;
		ppi_run_fill(info, PP_FILL_CP, "cp unknown: 1");
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
			ppi_run_fill(info, PP_FILL_EP, "ep unknown: 1");
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
		int cap = r->system->gpus_per_node > 0 ? r->system->gpus_per_node : 8;
		if (tp <= 0 && pp > 0)
			tp = mp % pp == 0 ? mp / pp : 0;
		else if (tp <= 0)
			tp = split_tp(m, mp, cap);
		if (pp <= 0)
			pp = tp > 0 && mp % tp == 0 ? mp / tp : 0;
		if (tp <= 0 || pp <= 0)
			return SKIP(path, "tp/pp cannot be derived from model_parallel_size %lld",
			            mp);
		ppi_run_fill(info, PP_FILL_TP_PP,
		             "tp/pp unknown: tp %lld, pp %lld (model-parallel size %lld; tp the "
		             "largest divisor <= %d GPUs per node)",
		             tp, pp, mp, cap);
	}
	if (dp > 0 && tp * pp * cp * dp != gpus) {
		ppi_run_fill(info, PP_FILL_DP,
		             "num_gpus %lld != tp*pp*cp*dp = %lld: the stated plan is evaluated on "
		             "%lld GPUs (per-GPU memory depends on the plan only)",
		             gpus, tp * pp * cp * dp, tp * pp * cp * dp);
		gpus = tp * pp * cp * dp;
	}
	r->gpus = gpus;
	if (dp <= 0) {
		if (gpus % (tp * pp * cp))
			return SKIP(path, "%lld GPUs not divisible by tp*pp*cp = %lld", gpus,
			            tp * pp * cp);
		dp = gpus / (tp * pp * cp);
		ppi_run_fill(info, PP_FILL_DP, "dp unknown: %lld (num_gpus / (tp*pp*cp))", dp);
	}
	plan->tp = (int)tp;
	plan->pp = (int)pp;
	plan->dp = (int)dp;
	r->tp = tp, r->pp = pp, r->dp = dp, r->cp = cp, r->ep = ep, r->vp = vp, r->mp = mp;
	return PP_OK;
}

/* The global batch (pp_run_global_batch: stated, from the tokens, or
 * micro-batch x dp x accumulation, the last two as fills) into r->job, and
 * cp and ep into r->plan. */
static pp_status read_batch(reading *r, pp_error *err)
{
	const pp_runs *runs = r->runs;
	pp_run_info *info = r->info;
	long long dp = r->dp, mbs_stated = r->mbs_stated, accum = r->accum;
	char path[96];
	pp_gbs_rule rule;
	long long gbs =
	    pp_run_global_batch(r->gbs_stated, r->gbs_tokens, r->seq, mbs_stated, dp, accum, &rule);
	snprintf(path, sizeof path, "records[%zu].batch.global_batch_size", r->i);
	if (rule == PP_GBS_NONE && r->local > 0 && r->local <= GBS_MAX / dp) {
		/* torchtitan states the batch per data-parallel rank. */
		gbs = r->local * dp;
		rule = PP_GBS_ACCUM;
		ppi_run_fill(info, PP_FILL_GBS,
		             "global_batch_size unknown: %lld (local_batch_size %lld x dp %lld)",
		             gbs, r->local, dp);
	} else if (rule == PP_GBS_NONE)
		return SKIP(path, "global batch not stated (neither global_batch_size, "
		                  "global_batch_tokens nor micro_batch_size x dp x "
		                  "grad_accum_steps)");
	if (rule == PP_GBS_TOKENS)
		ppi_run_fill(info, PP_FILL_GBS,
		             "global_batch_size unknown: %lld (global_batch_tokens / seq)", gbs);
	else if (rule == PP_GBS_ACCUM && r->accum > 0)
		ppi_run_fill(info, PP_FILL_GBS,
		             "global_batch_size unknown: %lld (micro_batch_size %lld x dp %lld x "
		             "grad_accum_steps %lld)",
		             gbs, mbs_stated, dp, accum);
	r->job->global_batch = gbs;
	r->plan->cp = (int)r->cp;
	r->plan->ep = (int)r->ep;
	return PP_OK;
}

/* The pipeline: vp (completed to 1, a fill where it cannot apply) and the
 * schedule into r->plan; the model's layers padded (a fill) to a multiple
 * of pp x vp in r->m. */
static void read_pipeline(reading *r)
{
	pp_run_info *info = r->info;
	pp_plan *plan = r->plan;
	pp_model *m = r->m;
	long long pp = r->pp, vp = r->vp;
	const char *sched = jstr(r->jp, "pipeline_schedule");
	if (vp <= 0) {
		vp = 1;
		if (pp > 1 && has(sched, "interleaved"))
			ppi_run_fill(info, PP_FILL_VP,
			             "interleaved schedule without a virtual pipeline size: vp 1 "
			             "(plain 1F1B)");
	} else if (vp > 1 && pp == 1) {
		ppi_run_fill(info, PP_FILL_VP,
		             "virtual pipeline size %lld with pp 1 has no effect: vp 1", vp);
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
	/* A launch script that counts the embedding and the loss as pipeline
	 * layers (data/runs/batching.json) splits L + 2 over pp x vp chunks. */
	if (r->split_emb_loss && pp > 1 && (m->num_layers + 2) % (pp * vp) == 0) {
		plan->embedding_as_layer = plan->loss_as_layer = true;
		ppi_run_fill(
		    info, PP_FILL_LAYERS,
		    "num_layers %d + the embedding + the loss over pp*vp = %lld model chunks, "
		    "as its launch script splits them: %d layers on the first and on the "
		    "last stage (data/runs/batching.json)",
		    m->num_layers, pp * vp, (m->num_layers + 2) / (int)pp - 1);
	} else if (m->num_layers % (pp * vp)) {
		int unit = (int)(pp * vp);
		int padded = (m->num_layers + unit - 1) / unit * unit;
		ppi_run_fill(info, PP_FILL_LAYERS,
		             "num_layers %d not divisible by pp*vp = %d: padded to %d (every stage "
		             "holds the largest share; an upper bound)",
		             m->num_layers, unit, padded);
		m->num_layers = padded;
	}
	r->vp = vp;
}

/* The plan's options: TP communication overlap, sequence parallelism and
 * expert TP (each stated or a fill) into r->plan; the optimizer sharding
 * (ZeRO stage) into r->plan; the training framework into r->system. */
static pp_status read_options(reading *r, pp_error *err)
{
	const pp_runs *runs = r->runs;
	pp_run_info *info = r->info;
	pp_plan *plan = r->plan;
	const pp_model *m = r->m;
	json_t *jp = r->jp;
	long long tp = r->tp, cp = r->cp, dp = r->dp, ep = r->ep;
	char path[96];
	pp_status st;
	/* TP communication overlap: stated in the record's notes, or the default
	 * of NVIDIA's NeMo / Megatron-Bridge performance recipes when tp > 1,
	 * which turn it off under NVFP4 (Megatron-Bridge c0b9a0003, the 26.02
	 * performance summary's commit: scripts/performance/configs/llama/
	 * llama3_llm_pretrain.py and llama31_llm_pretrain.py, every config:
	 * tp_comm_overlap = False if precision == "nvfp4"). */
	const char *other = jstr(jp, "other");
	bool bridge = has(info->title, "Megatron-Bridge") || has(info->title, "NeMo");
	if (tp > 1 && other && has(other, "tp-comm-overlap")) {
		plan->tp_overlap = true;
	} else if (tp > 1 && bridge && r->job->fp8_recipe == PP_FP8_NVFP4 &&
	           r->job->precision == PP_PREC_FP8) {
		plan->tp_overlap = false;
		ppi_run_fill(info, PP_FILL_TP_OVERLAP,
		             "TP communication overlap unknown: off (Megatron-Bridge performance "
		             "recipes turn tp_comm_overlap off under NVFP4)");
	} else if (tp > 1 && bridge) {
		plan->tp_overlap = true;
		ppi_run_fill(info, PP_FILL_TP_OVERLAP,
		             "TP communication overlap unknown: on (NeMo/Megatron-Bridge "
		             "performance recipes enable tp_comm_overlap)");
	}

	json_t *jsp = jbool(jp, "sequence_parallel");
	if (jsp) {
		plan->sp = json_is_true(jsp);
	} else {
		plan->sp = tp > 1;
		if (tp > 1)
			ppi_run_fill(info, PP_FILL_SP, "sequence_parallel unknown: on (tp > 1)");
	}
	/* Expert tensor parallelism is never stated: Megatron-Core's default
	 * (etp = tp) when the expert ranks fit in the stage, else 1. */
	if (m->moe.num_experts > 0) {
		long long inner = tp * cp * dp;
		plan->etp =
		    (inner % (ep * tp) == 0 && m->moe.expert_ffn_hidden % tp == 0) ? (int)tp : 1;
		if (tp > 1)
			ppi_run_fill(info, PP_FILL_ETP, "expert tensor parallelism unknown: %d",
			             plan->etp);
	}

	const char *zs = jstr(jp, "zero_or_dist_optimizer");
	int z = pp_run_zero_stage(zs);
	if (z == -2) {
		snprintf(path, sizeof path, "records[%zu].parallelism.zero_or_dist_optimizer",
		         r->i);
		return SKIP(path, "unknown optimizer sharding '%s'", zs);
	}
	if (z < 0) {
		z = 1;
		ppi_run_fill(info, PP_FILL_ZERO,
		             "optimizer sharding unknown: distributed optimizer (ZeRO-1), the "
		             "default of Megatron-Core recipes");
	}
	plan->zero = z;
	/* PyTorch FSDP's MixedPrecision reduce dtype: Composer's PURE reduces
	 * in the compute dtype, its DEFAULT in fp32 (the gradients' own 4). */
	if (zs && has(zs, "mixed-precision mode PURE"))
		r->job->reduce_bytes = 2;
	if (zs && (has(zs, "HSDP") || has(zs, "HYBRID_SHARD")))
		ppi_run_fill(info, PP_FILL_ZERO,
		             "HSDP: sharded over the whole data-parallel group (the replica "
		             "groups are not modelled; an upper bound on sharding)");

	/* The training framework, from what the source says it ran (never per
	 * record): MosaicML's benchmarks ran llm-foundry; DeepSpeed's ZeRO or
	 * pipeline engine runs with DeepSpeed's defaults; the rest are Megatron. */
	const char *ps = jstr(jp, "pipeline_schedule");
	const char *fw = pp_run_framework(info->title, zs, ps, other);
	if ((st = pp_system_set_framework(r->system, fw, err)))
		return st;
	ppi_run_loss_fusion(info->title, jstr(jget(r->rec, "source"), "location"), &r->system->gpu);
	/* The CUDA graphs its recipe captured (data/runs/cuda-graphs.json). */
	return ppi_run_graphs(info->id, &r->system->gpu, info, err);
}

/*
 * The micro-batch a record does not state: 1, except where its source is
 * torchtitan, whose local_batch_size (per data-parallel rank per step;
 * stated, or global / dp) runs as one micro-batch, unless pipeline
 * parallelism splits it into micro-batches of pipeline_parallel_microbatch_size,
 * 1 by default (torchtitan config/job_config.py, Parallelism).  A fill.
 */
static long long default_mbs(const reading *r)
{
	long long gbs = r->job->global_batch, dp = r->dp;
	long long local = r->local > 0 ? r->local : (dp > 0 && gbs % dp == 0 ? gbs / dp : 0);
	if (r->torchtitan && r->pp > 1) {
		ppi_run_fill(
		    r->info, PP_FILL_MBS,
		    "micro_batch_size unknown: 1 (torchtitan: pipeline_parallel_microbatch_size, "
		    "default 1, splits the local batch)");
		return 1;
	}
	if (r->torchtitan && local > 0 && local <= DEGREE_MAX) {
		ppi_run_fill(
		    r->info, PP_FILL_MBS,
		    "micro_batch_size unknown: %lld (torchtitan runs its local batch, %s, as "
		    "one micro-batch)",
		    local, r->local > 0 ? "local_batch_size" : "global / dp");
		return local;
	}
	ppi_run_fill(r->info, PP_FILL_MBS, "micro_batch_size unknown: 1");
	return 1;
}

pp_status ppi_run_read_inputs(const pp_runs *runs, size_t i, pp_model *model, pp_system *system,
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
	pp_status st = ppi_run_check_record(runs, i, err);
	if (st)
		return st;
	reading r;
	memset(&r, 0, sizeof r);
	r.runs = runs;
	r.i = i;
	r.rec = rec;
	r.m = model;
	r.system = system;
	r.job = job;
	r.plan = plan;
	r.info = info;
	if ((st = read_hardware(&r, err)))
		return st;
	if ((st = read_model(runs, rec, i, model, &r.fam, &r.shape_fam, info, err)))
		return st;
	if ((st = read_job(&r, err)) || (st = read_degrees(&r, err)) || (st = read_batch(&r, err)))
		return st;
	/* Not stated: what the authors' launch script ran, where it is known. */
	ppi_script script;
	if ((st = ppi_run_recipe_batching(info->id, &script, err)))
		return st;
	r.split_emb_loss = script.split_emb_loss;
	if (r.vp <= 0 && script.vp > 0) {
		r.vp = script.vp;
		ppi_run_fill(info, PP_FILL_VP,
		             "virtual_pipeline_size from its launch script: %lld "
		             "(data/runs/batching.json)",
		             script.vp);
	}
	read_pipeline(&r);
	if ((st = read_options(&r, err)))
		return st;
	/* After read_options: the script's DDP replaces its stack's overlap. */
	if (isfinite(script.dp_overlap)) {
		system->dp_overlap = script.dp_overlap;
		ppi_run_fill(info, PP_FILL_DDP,
		             "DDP from its launch script: %s, gradient all-reduce overlap %g "
		             "(data/runs/batching.json)",
		             script.ddp_impl, script.dp_overlap);
	}

	char path[96];
	long long mbs = jint(r.jb, "micro_batch_size", &r.bad);
	if (mbs <= 0 && script.mbs > 0) {
		mbs = script.mbs;
		ppi_run_fill(
		    info, PP_FILL_MBS,
		    "micro_batch_size from its launch script: %lld (data/runs/batching.json)", mbs);
	}
	if (mbs <= 0)
		mbs = default_mbs(&r);
	plan->mbs = (int)mbs;

	const char *rs = jstr(r.jp, "activation_recompute");
	int rc = ppi_run_recompute_mode(rs);
	if (rc == -2) {
		snprintf(path, sizeof path, "records[%zu].parallelism.activation_recompute", i);
		return SKIP(path, "unknown recompute setting '%s'", rs);
	}
	/* Not stated: what its recipe ran, where the recipe is known. */
	if (rc < 0 && (st = ppi_run_recipe_recompute(info->id, plan, &rc, info, err)))
		return st;

	/* ---- resolve.  An unknown recompute mode is left to pick_recompute: the
	 * reader only checks that the plan resolves (reading estimates nothing). */
	long long gpus = r.gpus;
	pp_model *m = model;
	*gpus_out = gpus;
	if (rc >= 0) {
		plan->recompute = (pp_recompute)rc;
		return ppi_run_resolve(runs, i, plan, m, system, gpus, job, err);
	}
	*recompute_unknown = true;
	pp_plan probe = *plan;
	return ppi_run_resolve(runs, i, &probe, m, system, gpus, job, err);
}
