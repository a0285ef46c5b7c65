/*
 * torchtitan job files in: the TOML sections [model], [training],
 * [parallelism], [activation_checkpoint], [compile] enable (and [float8]
 * recipe_name through model.converters), with torchtitan's defaults (torchtitan/config/
 * job_config.py, commit 000204a4a8bf3d0f31adc44fc29855fbb6ea13d8).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_int.h"
#include "paraplan/launch.h"
#include "paraplan/schedule_type.h"
#include "util/util.h"

/* The largest parallel degree read (the get_int bounds below). */
#define TT_DEGREE_MAX (1 << 20)

/* torchtitan's model flavors that are paraplan presets. */
static const struct {
	const char *name, *flavor, *preset;
} flavors[] = {{"llama3", "8B", "llama3.1-8b"},
               {"llama3", "70B", "llama3.1-70b"},
               {"llama3", "405B", "llama3.1-405b"},
               {"deepseek_v3", "671B", "deepseek-v3"}};

static ppi_toml_item *take(ppi_toml *t, const char *key)
{
	for (int i = 0; i < t->n; i++)
		if (strcmp(t->items[i].key, key) == 0) {
			t->items[i].used = true;
			return &t->items[i];
		}
	return NULL;
}

static pp_status get_ll(ppi_toml *t, const char *key, long long lo, long long hi,
                        const char *source, bool *given, long long *out, pp_error *err)
{
	ppi_toml_item *it = take(t, key);
	if (given)
		*given = it != NULL;
	if (!it)
		return PP_OK;
	long long v;
	char why[160];
	if (it->kind != 'i')
		return ppi_fail_at(err, source, it->line, 0, "%s: expected an integer, got %s", key,
		                   it->value);
	if (!ppi_parse_ll(it->value, (size_t)-1, lo, hi, &v, why, sizeof why))
		return ppi_fail_at(err, source, it->line, 0, "%s: %s", key, why);
	*out = v;
	return PP_OK;
}

static pp_status get_int(ppi_toml *t, const char *key, int lo, int hi, const char *source, int *out,
                         pp_error *err)
{
	long long v = *out;
	PPI_TRY(get_ll(t, key, lo, hi, source, NULL, &v, err));
	*out = (int)v;
	return PP_OK;
}

/* A string among `choices`; its index in *out (unchanged when absent). */
static pp_status get_choice(ppi_toml *t, const char *key, const char *const *choices,
                            const char *source, int *out, pp_error *err)
{
	ppi_toml_item *it = take(t, key);
	if (!it)
		return PP_OK;
	for (int i = 0; choices[i]; i++)
		if (it->kind == 's' && strcmp(it->value, choices[i]) == 0) {
			*out = i;
			return PP_OK;
		}
	char list[256] = "";
	for (int i = 0; choices[i]; i++) {
		size_t l = strlen(list);
		snprintf(list + l, sizeof list - l, "%s\"%s\"", i ? ", " : "", choices[i]);
	}
	return ppi_fail_at(err, source, it->line, 0, "%s: expected one of %s, got %s", key, list,
	                   it->value);
}

/* What the job file says before it becomes paraplan's job and plan, with
 * job_config.py's defaults. */
typedef struct tt_job {
	long long local, global, steps, seq; /* [training] */
	bool have_global, have_steps;        /* global_batch_size and steps given */
	long long rep, shard;                /* data_parallel_{replicate,shard}_degree */
	pp_schedule schedule;                /* pipeline_parallel_schedule's type */
	long long per_stage;                 /* pipeline_parallel_layers_per_stage */
	bool have_per_stage;
} tt_job;

/* [model]: a flavor paraplan knows gives out->model; model.converters
 * "float8" (with [float8] recipe_name) makes the GEMMs FP8; torchtitan's
 * precision, gradient and optimizer defaults into *j.  PP_EINPUT for a
 * converter paraplan does not model or a recipe it does not know. */
static pp_status read_model(ppi_toml *t, const char *source, pp_job *j, pp_launch *out,
                            pp_error *err)
{
	ppi_toml_item *name = take(t, "model.name"), *flavor = take(t, "model.flavor");
	if (name && flavor)
		for (size_t i = 0; i < sizeof flavors / sizeof flavors[0]; i++)
			if (strcmp(name->value, flavors[i].name) == 0 &&
			    strcmp(flavor->value, flavors[i].flavor) == 0) {
				PPI_TRY(pp_model_preset(flavors[i].preset, &out->model, err));
				out->has_model = true;
			}
	j->precision = PP_PREC_BF16; /* training.mixed_precision_param = "bfloat16" */
	j->grad_bytes = 4;           /* training.mixed_precision_reduce = "float32" */
	j->optimizer = PP_OPT_ADAM;  /* AdamW */
	ppi_toml_item *conv = take(t, "model.converters");
	/* torchtitan's converters: "float8" (torchao Float8Linear) is modelled;
	 * "mx" (MX formats) and any other would change the GEMMs paraplan
	 * times as BF16, so they are refused rather than ignored. */
	if (conv && conv->value[0]) {
		for (const char *c = conv->value; *c;) {
			size_t n = strcspn(c, ",");
			if (!(n == 6 && strncmp(c, "float8", 6) == 0))
				return ppi_fail_at(
				    err, source, conv->line, 0,
				    "model.converters: \"%.*s\" is not modelled (only "
				    "\"float8\" is; give --precision and --fp8-recipe "
				    "instead, e.g. --fp8-recipe mxfp8)",
				    (int)(n < 64 ? n : 64), c);
			c += n + (c[n] == ',');
		}
	}
	if (conv && strstr(conv->value, "float8")) {
		j->precision = PP_PREC_FP8;
		/* torchao's Float8Linear scales dynamically, per tensor by default
		 * (float8.recipe_name unset or "tensorwise": the tensor's own amax,
		 * current scaling) or per row ("rowwise"); rowwise_with_gw_hp keeps
		 * the weight gradient in BF16, which paraplan does not model. */
		static const char *const recipes[] = {"tensorwise", "rowwise", NULL};
		int r = 0;
		PPI_TRY(get_choice(t, "float8.recipe_name", recipes, source, &r, err));
		j->fp8_recipe = r == 1 ? PP_FP8_ROWWISE : PP_FP8_CURRENT;
	}
	return PP_OK;
}

/* [training]: the precision of parameters and of the reduction, and the
 * batch, sequence and step counts into *tj. */
static pp_status read_training(ppi_toml *t, const char *source, pp_job *j, tt_job *tj,
                               pp_error *err)
{
	int prec = 0;
	static const char *const precs[] = {"bfloat16", "float32", NULL};
	PPI_TRY(get_choice(t, "training.mixed_precision_param", precs, source, &prec, err));
	if (prec == 1)
		j->precision = PP_PREC_FP32;
	static const char *const reduce[] = {"float32", NULL};
	int red = 0;
	PPI_TRY(get_choice(t, "training.mixed_precision_reduce", reduce, source, &red, err));
	PPI_TRY(
	    get_ll(t, "training.local_batch_size", 1, 1000000000, source, NULL, &tj->local, err));
	PPI_TRY(get_ll(t, "training.global_batch_size", -1, 1000000000, source, &tj->have_global,
	               &tj->global, err));
	PPI_TRY(get_ll(t, "training.seq_len", 1, 100000000, source, NULL, &tj->seq, err));
	PPI_TRY(get_ll(t, "training.steps", 0, LLONG_MAX / 4, source, &tj->have_steps, &tj->steps,
	               err));
	return PP_OK;
}

/* [parallelism]: the data-parallel degrees into *tj, the other degrees and
 * the micro-batch into *p, the schedule's name (torchtitan's, from the
 * schedule types) and the layers per stage into *tj. */
static pp_status read_parallelism(ppi_toml *t, const char *source, pp_plan *p, tt_job *tj,
                                  pp_error *err)
{
	PPI_TRY(get_ll(t, "parallelism.data_parallel_replicate_degree", 1, 10000000, source, NULL,
	               &tj->rep, err));
	PPI_TRY(get_ll(t, "parallelism.data_parallel_shard_degree", -1, 10000000, source, NULL,
	               &tj->shard, err));
	if (tj->shard == 0)
		return ppi_fail(err, source, "parallelism.data_parallel_shard_degree",
		                "0 is not a degree: -1 (the GPUs left over) or 1 and up");
	const struct {
		const char *key;
		int *dst;
	} degrees[] = {{"parallelism.tensor_parallel_degree", &p->tp},
	               {"parallelism.pipeline_parallel_degree", &p->pp},
	               {"parallelism.context_parallel_degree", &p->cp},
	               {"parallelism.expert_parallel_degree", &p->ep},
	               {"parallelism.expert_tensor_parallel_degree", &p->etp},
	               {"parallelism.pipeline_parallel_microbatch_size", &p->mbs}};
	for (size_t i = 0; i < sizeof degrees / sizeof degrees[0]; i++)
		PPI_TRY(get_int(t, degrees[i].key, 1, TT_DEGREE_MAX, source, degrees[i].dst, err));
	const char *scheds[4 * PP_SCHED_MAX + 1];
	pp_schedule sched_of[4 * PP_SCHED_MAX];
	int nsched = 0;
	for (int i = 0; i < pp_schedule_type_n; i++)
		for (const char *const *a = pp_schedule_types[i]->torchtitan;
		     a && *a && nsched < 4 * PP_SCHED_MAX; a++) {
			sched_of[nsched] = pp_schedule_types[i]->id;
			scheds[nsched++] = *a;
		}
	scheds[nsched] = NULL;
	int sched = 0;
	PPI_TRY(
	    get_choice(t, "parallelism.pipeline_parallel_schedule", scheds, source, &sched, err));
	tj->schedule = sched_of[sched];
	PPI_TRY(get_ll(t, "parallelism.pipeline_parallel_layers_per_stage", 1, TT_DEGREE_MAX,
	               source, &tj->have_per_stage, &tj->per_stage, err));
	return PP_OK;
}

/* [activation_checkpoint]: "selective" with option "2" by default; "op" is
 * per-operation selective; an integer n: every n-th layer whole (n = 1: all
 * of them, paraplan's full; otherwise selective, the nearest paraplan
 * models). */
static pp_status read_checkpoint(ppi_toml *t, const char *source, pp_plan *p, pp_error *err)
{
	static const char *const modes[] = {"selective", "full", "none", NULL};
	int mode = 0;
	PPI_TRY(get_choice(t, "activation_checkpoint.mode", modes, source, &mode, err));
	ppi_toml_item *opt = take(t, "activation_checkpoint.selective_ac_option");
	p->recompute = mode == 1                             ? PP_RECOMPUTE_FULL
	               : mode == 2                           ? PP_RECOMPUTE_NONE
	               : opt && strcmp(opt->value, "1") == 0 ? PP_RECOMPUTE_FULL
	                                                     : PP_RECOMPUTE_SELECTIVE;
	return PP_OK;
}

/* torch.compile: [compile] enable (torchtitan/config/job_config.py Compile,
 * default false), or training.compile in the job files of older torchtitan
 * (job_config.py of 2024, --training.compile). */
static pp_status read_compile(ppi_toml *t, const char *source, pp_job *j, pp_error *err)
{
	const char *const keys[] = {"compile.enable", "training.compile"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		ppi_toml_item *it = take(t, keys[i]);
		if (!it)
			continue;
		if (it->kind != 'b')
			return ppi_fail_at(err, source, it->line, 0,
			                   "%s: expected true or false, got %s", keys[i],
			                   it->value);
		j->compile = strcmp(it->value, "true") == 0;
	}
	return PP_OK;
}

/* The expert all-to-all's backend ([parallelism] expert_parallel_comm_backend,
 * "standard" by default): DeepEP, and HybridEP (its NVL72 form), send a token
 * once per node and GPU (paraplan's deepep dispatcher). */
static pp_status read_ep_backend(ppi_toml *t, const char *source, pp_job *j, pp_error *err)
{
	static const char *const be[] = {"standard", "deepep", "hybridep", NULL};
	int k = 0;
	PPI_TRY(get_choice(t, "parallelism.expert_parallel_comm_backend", be, source, &k, err));
	j->moe_dispatcher = k ? PP_DISPATCH_DEEPEP : PP_DISPATCH_ALLTOALL;
	return PP_OK;
}

/* What the file means for paraplan's plan: sequence parallelism with tp,
 * FSDP2's ZeRO-3, dp = replicate x shard, the schedule and the virtual stages
 * from the layers per stage (which need out->model).  *batch: the global
 * batch replicate x shard x local, when the shard degree is given. */
static pp_status plan_from(const tt_job *tj, const pp_launch *out, const char *source, pp_plan *p,
                           long long *batch, pp_error *err)
{
	p->sp = p->tp > 1;                /* torchtitan's TP splits the sequence (and the loss) */
	p->zero = tj->shard == 1 ? 0 : 3; /* FSDP2 shards everything */
	long long dp = 0;
	*batch = 0;
	if (tj->shard > 0 && !(ppi_mul_ll(tj->rep, tj->shard, &dp) && dp <= TT_DEGREE_MAX &&
	                       ppi_mul_ll(tj->local, dp, batch) && *batch <= 1000000000))
		return ppi_fail(err, source, "parallelism.data_parallel_shard_degree",
		                "replicate %lld x shard %lld x local batch %lld: more than %d "
		                "data-parallel ranks or 10^9 sequences a step",
		                tj->rep, tj->shard, tj->local, TT_DEGREE_MAX);
	if (tj->shard > 0)
		p->dp = (int)dp;
	p->schedule = tj->schedule;
	if (tj->have_per_stage && p->pp > 1) {
		if (!out->has_model)
			return ppi_fail(
			    err, source, "parallelism.pipeline_parallel_layers_per_stage",
			    "needs the model's layers: a [model] flavor paraplan knows, "
			    "or give --model and leave it out");
		int layers = out->model.num_layers;
		if (layers % (p->pp * tj->per_stage))
			return ppi_fail(
			    err, source, "parallelism.pipeline_parallel_layers_per_stage",
			    "%lld layers per stage do not split %d layers over %d ranks",
			    tj->per_stage, layers, p->pp);
		p->vp = (int)(layers / (p->pp * tj->per_stage));
		if (p->vp > 1)
			p->schedule = pp_schedule_for_vp(p->schedule, p->vp);
	}
	if (p->vp <= 1)
		p->schedule = pp_schedule_for_vp(p->schedule, 1);
	return PP_OK;
}

/* Every key of `t` no reader took, into out->unused_flags (counted in
 * out->unused; the list is cut when full). */
static void list_unused(const ppi_toml *t, pp_launch *out)
{
	for (int i = 0; i < t->n; i++)
		if (!t->items[i].used) {
			size_t l = strlen(out->unused_flags);
			out->unused++;
			if (l + strlen(t->items[i].key) + 2 < sizeof out->unused_flags)
				snprintf(out->unused_flags + l, sizeof out->unused_flags - l,
				         "%s%s", l ? " " : "", t->items[i].key);
		}
}

/* The sections in the order they are checked: the first error is the one
 * reported. */
static pp_status read_job(ppi_toml *t, const char *source, pp_job *j, pp_plan *p, pp_launch *out,
                          pp_error *err)
{
	tt_job tj = {.local = 8, .global = -1, .seq = 2048, .rep = 1, .shard = -1};
	PPI_TRY(read_model(t, source, j, out, err));
	PPI_TRY(read_training(t, source, j, &tj, err));
	PPI_TRY(read_parallelism(t, source, p, &tj, err));
	PPI_TRY(read_checkpoint(t, source, p, err));
	PPI_TRY(read_compile(t, source, j, err));
	PPI_TRY(read_ep_backend(t, source, j, err));
	long long batch = 0;
	PPI_TRY(plan_from(&tj, out, source, p, &batch, err));
	j->seq_len = (int)tj.seq;
	out->has_seq = true;
	if (tj.have_global && tj.global > 0) {
		j->global_batch = tj.global;
		out->has_gbs = true;
	} else if (tj.shard > 0) {
		j->global_batch = batch;
		out->has_gbs = true;
	}
	if (tj.have_steps && out->has_gbs)
		j->train_tokens = (double)tj.steps * (double)j->global_batch * (double)j->seq_len;
	list_unused(t, out);
	return PP_OK;
}

pp_status pp_launch_from_torchtitan(const char *text, size_t len, const char *source, pp_job *job,
                                    pp_plan *plan, pp_launch *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	ppi_toml t;
	PPI_TRY(ppi_toml_parse(text, len, source, &t, err));
	pp_job j = *job;
	pp_plan p;
	pp_plan_init(&p);
	pp_status st = read_job(&t, source, &j, &p, out, err);
	ppi_toml_free(&t);
	if (st)
		return st;
	*job = j;
	*plan = p;
	return PP_OK;
}

pp_status pp_launch_load_torchtitan(const char *path, pp_job *job, pp_plan *plan, pp_launch *out,
                                    pp_error *err)
{
	char *text;
	size_t len;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_launch_from_torchtitan(text, len, path, job, plan, out, err);
	free(text);
	return st;
}
