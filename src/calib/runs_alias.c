/*
 * Published training runs: the words of the sources.  A record states its
 * model, hardware, sharding, recompute and precision in free text; these
 * fixed tables map those words onto paraplan's (architecture families by
 * model name, system presets by GPU name, ZeRO stages and recompute modes by
 * phrase, FP8 recipes, the training framework).  The GPU-name table is data
 * (data/runs/gpu-aliases.json, compiled in: runs_int.h); the others are
 * here.  Documented in docs/validation.md; keep the two in step.
 */
#include <ctype.h>
#include <limits.h>
#include <string.h>
#include <strings.h>

#include "runs_int.h"
#include "util/util.h"

/* ------------------------------------------------------------- tables */
/*
 * Architecture families, matched in order against model.name
 * (case-insensitive substring; the first match wins).
 */
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

const family *ppi_run_family_of(const char *name)
{
	for (size_t k = 0; k < sizeof families / sizeof families[0]; k++)
		if (has(name, families[k].match))
			return &families[k];
	return NULL;
}

/*
 * Names in no family, read from their shape: a hint by name, else a
 * Llama-style decoder (gated SwiGLU MLP, RMSNorm, RoPE, no biases, untied
 * embeddings, fused attention), the layout of most decoders published since
 * 2023.  Each value arch_notes does not state is listed as a fill.
 */
static const struct arch_hint {
	const char *match;
	family f;
	const char *why;
} arch_hints[] = {
    /* Nemotron-4 15B / 340B (arXiv:2402.16819 sec. 2, arXiv:2406.11704 sec.
     * 2.2): squared-ReLU MLP, RoPE, no biases, no dropout, untied
     * embeddings; LayerNorm (NeMo NemotronConfig: layernorm1p). */
    {"nemotron",
     {"nemotron", false, false, false, false, false, false, false, false, true, PP_POS_ROPE, 0,
      false, false},
     "Nemotron-4, arXiv:2402.16819"},
};
static const family shape_default = {
    "a name in no family", true, true,  false, false, false, false, false, false, true,
    PP_POS_ROPE,           0,    false, false};

bool ppi_run_hybrid(const char *name, const char *notes)
{
	const char *const words[] = {"nemotron-h", "nemotron h", "mamba", "jamba", "hybrid ssm"};
	for (size_t k = 0; k < sizeof words / sizeof *words; k++)
		if (has(name, words[k]) || (notes && has(notes, words[k])))
			return true;
	return false;
}

/* 1 or 0 when arch_notes say which of two (the first word list wins), -1
 * when they say neither. */
static int notes_say(const char *notes, const char *const *yes, const char *const *no)
{
	for (size_t k = 0; notes && no[k]; k++)
		if (has(notes, no[k]))
			return 0;
	for (size_t k = 0; notes && yes[k]; k++)
		if (has(notes, yes[k]))
			return 1;
	return -1;
}

const family *ppi_run_family_by_shape(const char *name, const char *notes, family *out,
                                      pp_run_info *info)
{
	*out = shape_default;
	const char *why = "the Llama-style default of a name in no family";
	for (size_t k = 0; k < sizeof arch_hints / sizeof *arch_hints; k++)
		if (has(name, arch_hints[k].match)) {
			*out = arch_hints[k].f;
			why = arch_hints[k].why;
			break;
		}
	static const char *const gated[] = {"swiglu", "geglu", "gated", NULL};
	static const char *const plain[] = {"squared relu", "squared-relu", "relu2", "relu^2",
	                                    "gelu",         "non-gated",    NULL};
	int v = notes_say(notes, gated, plain);
	if (v >= 0)
		out->gated_mlp = v;
	else
		ppi_run_fill(
		    info, PP_FILL_ARCH, "MLP unknown: %s (%s)",
		    out->gated_mlp ? "gated SwiGLU, 3 matrices" : "squared-ReLU, 2 matrices", why);
	static const char *const rms[] = {"rmsnorm", "rms norm", NULL};
	static const char *const ln[] = {"layernorm", "layer norm", NULL};
	if ((v = notes_say(notes, rms, ln)) >= 0)
		out->rmsnorm = v;
	else
		ppi_run_fill(info, PP_FILL_ARCH, "norm unknown: %s (%s)",
		             out->rmsnorm ? "RMSNorm" : "LayerNorm", why);
	if (notes && (has(notes, "rope") || has(notes, "rotary"))) {
		out->position = PP_POS_ROPE;
	} else if (notes && has(notes, "alibi")) {
		out->position = PP_POS_ALIBI;
	} else if (notes && (has(notes, "learned") || has(notes, "absolute pos"))) {
		out->position = PP_POS_LEARNED;
	} else {
		ppi_run_fill(info, PP_FILL_ARCH, "positions unknown: RoPE (%s)", why);
	}
	static const char *const tied[] = {"tied", NULL};
	static const char *const untied[] = {"untied", "not tied", NULL};
	if ((v = notes_say(notes, tied, untied)) >= 0)
		out->tied = v;
	else
		ppi_run_fill(info, PP_FILL_ARCH,
		             "biases and embeddings unknown: no biases, %s embeddings (%s)",
		             out->tied ? "tied" : "untied", why);
	return out;
}

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

const gpu_alias *ppi_run_gpu_alias_of(const char *gpu_type)
{
	for (size_t i = 0; i < ppi_run_gpu_aliases_n; i++) {
		const gpu_alias *a = &ppi_run_gpu_aliases[i];
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
	const gpu_alias *a = ppi_run_gpu_alias_of(gpu_type);
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
	/* NeMo / Megatron-Bridge tables' "FSDP = 0": no FSDP (DDP). */
	if (has(s, "FSDP=0") || has(s, "FSDP = 0"))
		return has(s, "distributed optimizer") ? 1 : 0;
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
int ppi_run_recompute_mode(const char *s)
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

/* The year of a "'21"-style conference marker ("SC'21") or an arXiv id
 * ("arXiv:2104.04473": 2021) in `s`, 0 when none. */
static int stated_year(const char *s)
{
	for (const char *p = s; p && *p; p++) {
		if (strncasecmp(p, "arxiv:", 6) == 0 && isdigit((unsigned char)p[6]) &&
		    isdigit((unsigned char)p[7]) && isdigit((unsigned char)p[8]) &&
		    isdigit((unsigned char)p[9]) && p[10] == '.')
			return 2000 + (p[6] - '0') * 10 + (p[7] - '0');
		if ((*p == '\'' || *p == '`') && p > s && isalpha((unsigned char)p[-1]) &&
		    isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2]) &&
		    !isdigit((unsigned char)p[3]))
			return 2000 + (p[1] - '0') * 10 + (p[2] - '0');
	}
	return 0;
}

/*
 * The record's Megatron generation, from what its source says: Megatron-LM
 * before Megatron-Core split every pipeline send across the TP ranks when
 * sequence parallelism was off (scatter_gather_tensors_in_pipeline, on by
 * default in Megatron-LM 2021 (v2) and 2022 (v3, the SP of Korthikanti et
 * al., arXiv:2205.05198, applies it only without SP)); Megatron-Core (2023
 * on) sends the tensor whole.  Pre-Core: the source names Megatron and a
 * year up to 2022 (an arXiv id or a 'YY marker), and names neither
 * Megatron-Core, NeMo nor Megatron-Bridge.
 */
enum { PP_MEGATRON_CORE_YEAR = 2023 };
static bool megatron_pre_core(const char *const *said, size_t n)
{
	bool megatron = false;
	int year = 0;
	for (size_t k = 0; k < n; k++) {
		if (!said[k])
			continue;
		if (has(said[k], "Megatron-Core") || has(said[k], "Megatron Core") ||
		    has(said[k], "mcore") || has(said[k], "NeMo") ||
		    has(said[k], "Megatron-Bridge"))
			return false;
		megatron |= has(said[k], "Megatron");
		int y = stated_year(said[k]);
		if (y && (!year || y < year))
			year = y;
	}
	return megatron && year && year < PP_MEGATRON_CORE_YEAR;
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
	/* The flag that turned it off (Megatron-LM arguments.py of 2021-22). */
	for (size_t k = 0; k < sizeof said / sizeof *said; k++)
		if (said[k] && has(said[k], "no-scatter-gather-tensors-in-pipeline"))
			return "megatron";
	return megatron_pre_core(said, sizeof said / sizeof *said) ? "megatron-lm-2021"
	                                                           : "megatron";
}

/*
 * The FP8 recipe a record's precision names.  The recipe named first is the
 * one measured ("FP8-CS (FP8-MX)": the alternative's figures are in
 * measured.other).  NeMo/Megatron-Bridge write FP8-CS (current scaling),
 * FP8-MX (MXFP8) and FP8-DS (delayed); "tensorwise" is current scaling in
 * Megatron-LM's --fp8-recipe and torchao's recipe names alike; block-wise
 * (DeepSeek-V3, TE Float8BlockScaling) and row-wise (torchao) by name;
 * "NVFP4" (Megatron-Bridge's precision column) or a bare "FP4" is NVFP4.  A
 * bare "FP8" is Transformer Engine's default, delayed scaling.
 */
pp_fp8_recipe ppi_run_fp8_recipe(const char *prec)
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
	    {"nvfp4", PP_FP8_NVFP4},
	    {"fp4", PP_FP8_NVFP4},
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

/*
 * NVIDIA's performance recipes, as of the container a record names:
 * - NeMo 24.03 (NeMo-Framework-Launcher, tag 24.03.01): Apex's distributed
 *   Adam (conf/training/llama/llama2_7b.yaml, optim distributed_fused_adam)
 *   with bf16 gradient buffers in the FP8 runs
 *   (examples/training/llama/h100/llama2_7b_fp8.sh,
 *   +training.model.optim.grad_sync_dtype=bf16); no FP8 parameters (the
 *   llama configs never set fp8_params; only gpt3/mlperf.yaml does).
 * - NeMo 2 (25.x containers) and Megatron-Bridge: bf16 gradients
 *   (NeMo v2.3.0 scripts/performance/utils.py and Megatron-Bridge v0.2.0
 *   scripts/performance/configs: grad_reduce_in_fp32 = False) and, under
 *   delayed, current and MXFP8 scaling, FP8 parameters (bf16_with_fp8_mixed,
 *   bf16_with_fp8_current_scaling_mixed, bf16_with_mxfp8_mixed:
 *   fp8_param_gather = True; MXFP8 all-gathers BF16 through the gradient
 *   buffer, reuse_grad_buf_for_mxfp8_param_ag = True, and Megatron-Core
 *   casts it into the MXFP8 parameters: no resident BF16 copy); block-wise
 *   and NVFP4 set fp8_param_gather = False.
 */
/* A NeMo 2 (25.x containers) or Megatron-Bridge source. */
static bool nemo2_source(const char *title, const char *location)
{
	return title && (has(title, "Megatron-Bridge") ||
	                 (has(title, "NeMo") && location && has(location, "NeMo25")));
}

void ppi_run_state_dtypes(const char *title, const char *location, pp_job *job, pp_run_info *info)
{
	bool nemo24 = title && location && has(title, "NeMo") && has(location, "NeMo24");
	bool nemo2 = nemo2_source(title, location);
	bool fp8 = job->precision == PP_PREC_FP8;
	if (nemo24 && fp8) {
		job->grad_bytes = 2;
		ppi_run_fill(info, PP_FILL_STATE_DTYPES,
		             "gradient dtype unknown: bf16 (NeMo 24.03 FP8 recipes: distributed "
		             "Adam's grad_sync_dtype=bf16); FP8 parameters off (fp8_params unset)");
	} else if (nemo2) {
		job->grad_bytes = 2;
		bool fp8p =
		    fp8 && (job->fp8_recipe == PP_FP8_DELAYED ||
		            job->fp8_recipe == PP_FP8_CURRENT || job->fp8_recipe == PP_FP8_MX);
		job->fp8_params = fp8p;
		ppi_run_fill(info, PP_FILL_STATE_DTYPES,
		             "gradient dtype unknown: bf16 (NeMo 2 / Megatron-Bridge performance "
		             "recipes: grad_reduce_in_fp32 False)%s",
		             fp8p ? "; FP8 parameters on (fp8_param_gather)" : "");
	}
}

/*
 * NeMo 2 and Megatron-Bridge build their models with the fused cross
 * entropy on (Megatron-Bridge v0.2.2 models/gpt_provider.py
 * GPTModelProvider.cross_entropy_loss_fusion = True; NeMo 2's llm GPTConfig
 * the same), where Megatron-Core's own default is off
 * (data/framework/megatron.json).  NeMo 24.03 (NeMo 1, Megatron-Core 0.5-0.6)
 * had no fused version: its runs keep Megatron's.
 */
void ppi_run_loss_fusion(const char *title, const char *location, pp_gpu *g)
{
	if (nemo2_source(title, location))
		g->kern.unfused_cross_entropy = 0;
}
