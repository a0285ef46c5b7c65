/*
 * Launch flags out: an estimate's model, job and plan as Megatron-LM flags,
 * NeMo 2.0 recipe overrides or a torchtitan job TOML.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/launch.h"
#include "paraplan/schedule_type.h"
#include "util/util.h"

pp_status pp_launch_format_parse(const char *s, const char *field, pp_launch_format *out,
                                 pp_error *err)
{
	if (strcmp(s, "megatron") == 0)
		*out = PP_LAUNCH_MEGATRON;
	else if (strcmp(s, "nemo") == 0)
		*out = PP_LAUNCH_NEMO;
	else if (strcmp(s, "torchtitan") == 0)
		*out = PP_LAUNCH_TORCHTITAN;
	else
		return ppi_fail(err, "", field, "expected megatron, nemo or torchtitan, got '%s'",
		                s);
	return PP_OK;
}

static void note(char *notes, size_t n, const char *fmt, ...) PPI_PRINTF(3, 4);
static void note(char *notes, size_t n, const char *fmt, ...)
{
	if (!notes || n == 0)
		return;
	size_t l = strlen(notes);
	if (l + 2 >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(notes + l, n - l, fmt, ap);
	va_end(ap);
	l = strlen(notes);
	if (l + 1 < n) {
		notes[l] = '\n';
		notes[l + 1] = '\0';
	}
}

/* What no framework here expresses. */
static void common_notes(const pp_estimate *e, const char *fw, char *notes, size_t n)
{
	const pp_model *m = &e->model;
	const pp_plan *p = &e->plan;
	if (p->tp2 > 1 || p->summa)
		note(notes, n, "%s has no 2D tensor parallelism: --tp2 %d%s is not expressed", fw,
		     p->tp2, p->summa ? " with SUMMA" : "");
	if (m->parallel_block)
		note(notes, n, "%s: the parallel attention/MLP block is not expressed", fw);
	if (m->embedding_norm)
		note(notes, n, "%s: the norm after the embedding is not expressed", fw);
	if (m->position == PP_POS_ALIBI)
		note(notes, n, "%s: ALiBi positions are not expressed (no parameters either way)",
		     fw);
	if (m->moe.shared_expert_gate)
		note(notes, n, "%s: the shared expert's gate is not expressed", fw);
	if (e->job.moe_dispatcher == PP_DISPATCH_DEEPEP_FP8)
		note(notes, n,
		     "%s: no switch for DeepEP's FP8 dispatch (deepep-fp8); DeepEP is written, "
		     "its dispatch precision is the framework's",
		     fw);
}

/* The MoE layer pattern as Megatron's --moe-layer-freq list expression. */
static void moe_pattern(const pp_model *m, char *buf, size_t n)
{
	buf[0] = '\0';
	int run = 0, last = -1;
	size_t l = 0;
	for (int i = 0; i <= m->num_layers; i++) {
		int v = i < m->num_layers ? pp_model_layer_is_moe(m, i) : -1;
		if (v == last) {
			run++;
			continue;
		}
		if (last >= 0 && l < n)
			l +=
			    (size_t)snprintf(buf + l, n - l, "%s[%d]*%d", l ? "+" : "(", last, run);
		last = v;
		run = 1;
	}
	if (l < n)
		snprintf(buf + l, n - l, ")");
}

/* The model's Megatron-LM flags (sizes, attention, vocabulary, norm,
 * positions, biases, dropout, MLA, then a line of experts). */
static void megatron_model(const pp_model *m, const pp_job *j, FILE *out)
{
	/* model; an all-MoE model has no dense MLP (ffn 0): Megatron's ffn width is
	 * then only the experts' default */
	fprintf(out,
	        "--num-layers %d --hidden-size %d --ffn-hidden-size %d --num-attention-heads %d",
	        m->num_layers, m->hidden,
	        m->ffn_hidden > 0 ? m->ffn_hidden : m->moe.expert_ffn_hidden, m->num_heads);
	if (m->num_kv_heads != m->num_heads)
		fprintf(out, " --group-query-attention --num-query-groups %d", m->num_kv_heads);
	fprintf(out, " --kv-channels %d", m->head_dim);
	fprintf(out, " --padded-vocab-size %d", m->vocab);
	fprintf(out, " --normalization %s", m->norm == PP_NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
	fprintf(out, " --position-embedding-type %s",
	        m->position == PP_POS_LEARNED ? "learned_absolute" : "rope");
	fprintf(out, " --max-position-embeddings %d",
	        m->position == PP_POS_LEARNED && m->max_position > 0 ? m->max_position
	                                                             : j->seq_len);
	if (m->gated_mlp)
		fprintf(out, " --swiglu");
	if (!m->tied_embeddings)
		fprintf(out, " --untie-embeddings-and-output-weights");
	if (!m->linear_bias)
		fprintf(out, " --disable-bias-linear");
	if (m->qkv_bias)
		fprintf(out, " --add-qkv-bias");
	if (m->qk_norm)
		fprintf(out, " --qk-layernorm");
	if (!m->dropout)
		fprintf(out, " --attention-dropout 0.0 --hidden-dropout 0.0");
	if (m->mla.kv_lora_rank > 0)
		fprintf(
		    out,
		    " --multi-latent-attention --q-lora-rank %d --kv-lora-rank %d --qk-head-dim "
		    "%d --qk-pos-emb-head-dim %d --v-head-dim %d",
		    m->mla.q_lora_rank, m->mla.kv_lora_rank, m->mla.qk_nope_head_dim,
		    m->mla.qk_rope_head_dim, m->mla.v_head_dim);
	if (m->moe.num_experts > 0) {
		const pp_moe *x = &m->moe;
		fprintf(out, " \\\n--num-experts %d --moe-router-topk %d --moe-ffn-hidden-size %d",
		        x->num_experts, x->top_k, x->expert_ffn_hidden);
		if (x->shared_ffn_hidden > 0)
			fprintf(out, " --moe-shared-expert-intermediate-size %d",
			        x->shared_ffn_hidden);
		if (x->first_k_dense > 0 || x->layer_freq > 1) {
			char pat[512];
			moe_pattern(m, pat, sizeof pat);
			fprintf(out, " --moe-layer-freq '%s'", pat);
		}
		if (x->router_bias)
			fprintf(out, " --moe-router-enable-expert-bias");
		if (x->num_groups > 0)
			fprintf(out, " --moe-router-num-groups %d --moe-router-group-topk %d",
			        x->num_groups, x->group_topk);
	}
}

/* The job's Megatron-LM flags on a line of their own: sequence, batch,
 * samples, precision and FP8 recipe, gradient width, optimizer; what they
 * cannot say goes to `notes`. */
static void megatron_job(const pp_job *j, const pp_plan *p, FILE *out, char *notes, size_t nn)
{
	/* job */
	fprintf(out, " \\\n--seq-length %d --global-batch-size %lld --micro-batch-size %d",
	        j->seq_len, j->global_batch, p->mbs);
	if (j->train_tokens > 0) {
		double samples = j->train_tokens / j->seq_len;
		if (samples == floor(samples))
			fprintf(out, " --train-samples %.0f", samples);
		else
			note(notes, nn,
			     "Megatron-LM: %.6g tokens are not whole sequences of %d; "
			     "--train-samples "
			     "is left out",
			     j->train_tokens, j->seq_len);
	}
	switch (j->precision) {
	case PP_PREC_BF16: fprintf(out, " --bf16"); break;
	case PP_PREC_FP16: fprintf(out, " --fp16"); break;
	case PP_PREC_FP8:
		/* NVFP4: Megatron-LM's --fp4-format e2m1 (--fp4-recipe nvfp4, its
		 * default and only choice), in place of --fp8-format. */
		fprintf(out, j->fp8_recipe == PP_FP8_NVFP4 ? " --bf16 --fp4-format e2m1"
		                                           : " --bf16 --fp8-format hybrid");
		break;
	case PP_PREC_FP32: break;
	}
	/* Megatron-LM's --fp8-recipe (arguments.py): tensorwise is current
	 * scaling; delayed is its default; it has no row-wise recipe. */
	if (j->precision == PP_PREC_FP8) {
		switch (j->fp8_recipe) {
		case PP_FP8_CURRENT: fprintf(out, " --fp8-recipe tensorwise"); break;
		case PP_FP8_MX: fprintf(out, " --fp8-recipe mxfp8"); break;
		case PP_FP8_BLOCKWISE: fprintf(out, " --fp8-recipe blockwise"); break;
		case PP_FP8_ROWWISE:
			note(notes, nn,
			     "Megatron-LM: no row-wise FP8 recipe (--fp8-recipe tensorwise, "
			     "delayed, "
			     "mxfp8 or blockwise); left at its default, delayed");
			break;
		case PP_FP8_DELAYED:
		default: break;
		}
	}
	if (j->precision == PP_PREC_FP8 && j->fp8_params)
		fprintf(out, " --fp8-param-gather");
	if (j->grad_bytes == 2)
		fprintf(out, " --grad-reduce-in-bf16");
	fprintf(out, " --optimizer %s", j->optimizer == PP_OPT_SGD ? "sgd" : "adam");
	if (j->moe_dispatcher != PP_DISPATCH_ALLTOALL)
		fprintf(out, " --moe-token-dispatcher-type flex --moe-enable-deepep");
}

/* The parallelism (a line) and memory (a line) flags: degrees, virtual
 * stages, uneven stages, rank order, recomputation, ZeRO, overlap, attention
 * backend; what they cannot say goes to `notes`. */
static void megatron_plan(const pp_plan *p, FILE *out, char *notes, size_t nn)
{
	/* parallelism */
	fprintf(out,
	        " \\\n--tensor-model-parallel-size %d --pipeline-model-parallel-size %d "
	        "--context-parallel-size %d --expert-model-parallel-size %d "
	        "--expert-tensor-parallel-size %d",
	        p->tp, p->pp, p->cp, p->ep, p->etp);
	pp_sched_megatron how = pp_schedule_type_of(p->schedule)->megatron;
	if (how == PP_MEGATRON_VIRTUAL && p->vp > 1)
		fprintf(out, " --num-virtual-stages-per-pipeline-rank %d", p->vp);
	else if (how == PP_MEGATRON_NONE)
		note(notes, nn, "Megatron-LM runs 1F1B, not %s: the schedule is not expressed",
		     pp_schedule_name(p->schedule));
	if (p->first_stage_layers > 0)
		fprintf(out, " --decoder-first-pipeline-num-layers %d", p->first_stage_layers);
	if (p->last_stage_layers > 0)
		fprintf(out, " --decoder-last-pipeline-num-layers %d", p->last_stage_layers);
	if (p->embedding_as_layer)
		fprintf(out, " --account-for-embedding-in-pipeline-split");
	if (p->loss_as_layer)
		fprintf(out, " --account-for-loss-in-pipeline-split");
	if (p->sp)
		fprintf(out, " --sequence-parallel");
	if (strcmp(p->order, "tp-cp-ep-pp-dp") == 0)
		fprintf(out, " --use-tp-pp-dp-mapping");
	else if (strcmp(p->order, "tp-cp-ep-dp-pp") != 0)
		note(notes, nn,
		     "Megatron-LM orders ranks tp-cp-ep-dp-pp (or tp-cp-ep-pp-dp): the order %s is "
		     "not expressed",
		     p->order);
	/* memory */
	if (p->recompute == PP_RECOMPUTE_FULL)
		fprintf(out, " \\\n--recompute-granularity full --recompute-method uniform "
		             "--recompute-num-layers 1");
	else if (p->recompute == PP_RECOMPUTE_SELECTIVE)
		fprintf(out, " \\\n--recompute-granularity selective");
	if (p->zero == 1)
		fprintf(out, " --use-distributed-optimizer");
	else if (p->zero >= 2)
		fprintf(out, " --use-megatron-fsdp --data-parallel-sharding-strategy %s",
		        p->zero == 2 ? "optim_grads" : "optim_grads_params");
	if (p->tp_overlap)
		fprintf(out, " --tp-comm-overlap");
	if (p->ep_overlap)
		fprintf(out, " --overlap-moe-expert-parallel-comm");
	if (!p->flash)
		fprintf(out, " --attention-backend unfused");
}

/* Megatron-LM flags, core_v0.15.3 names (see launch.h); a line per group. */
static void emit_megatron(const pp_estimate *e, FILE *out, char *notes, size_t nn)
{
	const pp_model *m = &e->model;
	common_notes(e, "Megatron-LM", notes, nn);
	fprintf(out,
	        "# Megatron-LM flags (core_v0.15.3) for %s on %lld GPUs: paraplan estimate "
	        "--from-megatron \"...\" --system %s --gpus %lld\n",
	        m->name, e->gpus, e->system.name, e->gpus);
	megatron_model(m, &e->job, out);
	megatron_job(&e->job, &e->plan, out, notes, nn);
	megatron_plan(&e->plan, out, notes, nn);
	fputc('\n', out);
}

/* NeMo 2.0 (nemo llm pretrain) recipe overrides: MegatronStrategy, the data
 * module, the model config and the optimizer config. */
static void emit_nemo(const pp_estimate *e, FILE *out, char *notes, size_t nn)
{
	const pp_model *m = &e->model;
	const pp_plan *p = &e->plan;
	const pp_job *j = &e->job;
	common_notes(e, "NeMo", notes, nn);
	int per_node = e->system.gpus_per_node > 0 ? e->system.gpus_per_node : 8;
	long long nodes = (e->gpus + per_node - 1) / per_node;
	fprintf(out,
	        "# NeMo 2.0 recipe overrides for %s on %lld GPUs (nemo llm pretrain --factory "
	        "RECIPE ...)\n",
	        m->name, e->gpus);
	fprintf(out, "trainer.num_nodes=%lld trainer.devices=%d \\\n", nodes,
	        e->gpus < per_node ? (int)e->gpus : per_node);
	char vp[16] = "None";
	pp_sched_megatron how = pp_schedule_type_of(p->schedule)->megatron;
	if (how == PP_MEGATRON_VIRTUAL && p->vp > 1)
		snprintf(vp, sizeof vp, "%d", p->vp);
	fprintf(out,
	        "trainer.strategy.tensor_model_parallel_size=%d "
	        "trainer.strategy.pipeline_model_parallel_size=%d "
	        "trainer.strategy.virtual_pipeline_model_parallel_size=%s "
	        "trainer.strategy.context_parallel_size=%d "
	        "trainer.strategy.expert_model_parallel_size=%d "
	        "trainer.strategy.expert_tensor_parallel_size=%d "
	        "trainer.strategy.sequence_parallel=%s",
	        p->tp, p->pp, vp, p->cp, p->ep, p->etp, p->sp ? "True" : "False");
	if (how == PP_MEGATRON_NONE)
		note(notes, nn, "NeMo runs Megatron's 1F1B, not %s: the schedule is not expressed",
		     pp_schedule_name(p->schedule));
	if (p->first_stage_layers > 0)
		fprintf(out, " trainer.strategy.num_layers_in_first_pipeline_stage=%d",
		        p->first_stage_layers);
	if (p->last_stage_layers > 0)
		fprintf(out, " trainer.strategy.num_layers_in_last_pipeline_stage=%d",
		        p->last_stage_layers);
	if (p->embedding_as_layer)
		fprintf(out, " trainer.strategy.account_for_embedding_in_pipeline_split=True");
	if (p->loss_as_layer)
		fprintf(out, " trainer.strategy.account_for_loss_in_pipeline_split=True");
	fprintf(out, " \\\ndata.seq_length=%d data.global_batch_size=%lld data.micro_batch_size=%d",
	        j->seq_len, j->global_batch, p->mbs);
	if (j->train_tokens > 0)
		fprintf(out, " trainer.max_steps=%.0f",
		        ceil(j->train_tokens / ((double)j->global_batch * j->seq_len)));
	fprintf(out,
	        " \\\nmodel.config.num_layers=%d model.config.hidden_size=%d "
	        "model.config.ffn_hidden_size=%d model.config.num_attention_heads=%d "
	        "model.config.num_query_groups=%d model.config.kv_channels=%d "
	        "model.config.seq_length=%d",
	        m->num_layers, m->hidden, m->ffn_hidden, m->num_heads, m->num_kv_heads, m->head_dim,
	        j->seq_len);
	if (m->moe.num_experts > 0)
		fprintf(out,
		        " model.config.num_moe_experts=%d model.config.moe_router_topk=%d "
		        "model.config.moe_ffn_hidden_size=%d",
		        m->moe.num_experts, m->moe.top_k, m->moe.expert_ffn_hidden);
	if (m->moe.num_groups > 0)
		fprintf(
		    out,
		    " model.config.moe_router_num_groups=%d model.config.moe_router_group_topk=%d",
		    m->moe.num_groups, m->moe.group_topk);
	if (j->moe_dispatcher != PP_DISPATCH_ALLTOALL)
		fprintf(out, " model.config.moe_token_dispatcher_type=flex "
		             "model.config.moe_enable_deepep=True");
	fprintf(out, " \\\n");
	if (p->recompute == PP_RECOMPUTE_FULL)
		fprintf(
		    out,
		    "model.config.recompute_granularity=full "
		    "model.config.recompute_method=uniform model.config.recompute_num_layers=1 ");
	else if (p->recompute == PP_RECOMPUTE_SELECTIVE)
		fprintf(out, "model.config.recompute_granularity=selective ");
	if (p->tp_overlap)
		note(notes, nn,
		     "NeMo: TP overlap is a callback, MegatronCommOverlapCallback(tp_comm_overlap="
		     "True): add it to the recipe's trainer.callbacks");
	fprintf(out, "optim.config.use_distributed_optimizer=%s", p->zero >= 1 ? "True" : "False");
	if (p->zero >= 2)
		note(notes, nn,
		     "NeMo: ZeRO-%d is Megatron FSDP (trainer.strategy.fsdp=megatron); "
		     "the distributed optimizer is ZeRO-1",
		     p->zero);
	fprintf(out, " optim.config.optimizer=%s", j->optimizer == PP_OPT_SGD ? "sgd" : "adam");
	switch (j->precision) {
	case PP_PREC_BF16: fprintf(out, " trainer.plugins=bf16_mixed"); break;
	case PP_PREC_FP16: fprintf(out, " trainer.plugins=fp16_mixed"); break;
	case PP_PREC_FP8: fprintf(out, " trainer.plugins=bf16_with_fp8_mixed"); break;
	case PP_PREC_FP32: fprintf(out, " trainer.plugins=None"); break;
	}
	fputc('\n', out);
}

/* torchtitan job TOML ([model], [training], [parallelism],
 * [activation_checkpoint]); torchtitan shards parameters with FSDP2. */
static void emit_torchtitan(const pp_estimate *e, FILE *out, char *notes, size_t nn)
{
	const pp_model *m = &e->model;
	const pp_plan *p = &e->plan;
	const pp_job *j = &e->job;
	common_notes(e, "torchtitan", notes, nn);
	fprintf(out, "# torchtitan job config for %s on %lld GPUs\n", m->name, e->gpus);
	fprintf(out, "# model: %d layers, hidden %d, ffn %d, %d heads / %d kv, vocab %d%s\n",
	        m->num_layers, m->hidden, m->ffn_hidden, m->num_heads, m->num_kv_heads, m->vocab,
	        m->moe.num_experts > 0 ? ", MoE" : "");
	fprintf(out, "[model]\nname = \"%s\"\n", m->moe.num_experts > 0 ? "deepseek_v3" : "llama3");
	note(
	    notes, nn,
	    "torchtitan: the model is one of its registered flavors; set [model] flavor to the one "
	    "of this shape");
	if (j->precision == PP_PREC_FP8)
		fprintf(out, "converters = [\"float8\"]\n");
	long long dp = p->dp;
	fprintf(out,
	        "\n[training]\nlocal_batch_size = %lld\nglobal_batch_size = %lld\nseq_len = %d\n",
	        j->global_batch / (dp > 0 ? dp : 1), j->global_batch, j->seq_len);
	fprintf(out, "mixed_precision_param = \"%s\"\n",
	        j->precision == PP_PREC_FP32 ? "float32" : "bfloat16");
	if (j->precision == PP_PREC_FP16)
		note(notes, nn,
		     "torchtitan trains in bfloat16 or float32, not fp16: bfloat16 given");
	fprintf(out, "mixed_precision_reduce = \"float32\"\n");
	if (j->grad_bytes == 2)
		note(notes, nn,
		     "torchtitan reduces gradients in float32 only: bf16 gradients are not "
		     "expressed");
	if (j->train_tokens > 0)
		fprintf(out, "steps = %.0f\n",
		        ceil(j->train_tokens / ((double)j->global_batch * j->seq_len)));
	fprintf(out, "\n[parallelism]\n");
	if (p->zero == 0) {
		fprintf(out,
		        "data_parallel_replicate_degree = %lld\ndata_parallel_shard_degree = 1\n",
		        dp);
		note(notes, nn, "torchtitan: no ZeRO means pure replication (DDP)");
	} else {
		fprintf(out,
		        "data_parallel_replicate_degree = 1\ndata_parallel_shard_degree = %lld\n",
		        dp);
		if (p->zero < 3)
			note(notes, nn,
			     "torchtitan shards with FSDP2 (ZeRO-3); ZeRO-%d is not "
			     "expressed: it runs as ZeRO-3",
			     p->zero);
	}
	fprintf(out, "tensor_parallel_degree = %d\n", p->tp);
	if (p->tp > 1 && !p->sp)
		note(notes, nn,
		     "torchtitan's tensor parallelism always splits the sequence (sp on)");
	fprintf(out, "context_parallel_degree = %d\nexpert_parallel_degree = %d\n", p->cp, p->ep);
	/* torchtitan's DeepEP backend (distributed/deepep; newer than 000204a4) */
	if (j->moe_dispatcher != PP_DISPATCH_ALLTOALL)
		fprintf(out, "expert_parallel_comm_backend = \"deepep\"\n");
	if (m->moe.num_experts > 0 && p->etp != 1)
		note(notes, nn,
		     "torchtitan (job_config.py at 000204a4) has no expert tensor parallelism: etp "
		     "%d "
		     "is not expressed",
		     p->etp);
	fprintf(out, "pipeline_parallel_degree = %d\n", p->pp);
	if (p->pp > 1) {
		/* the type's torchtitan name; torchtitan's 1F1B for one it has not */
		const pp_schedule_type *st = pp_schedule_type_of(p->schedule);
		if (!st->torchtitan) {
			note(notes, nn, "torchtitan has no %s schedule: its 1F1B is written",
			     st->name);
			st = pp_schedule_type_of(PP_SCHED_1F1B);
		}
		const char *sched = st->torchtitan[0];
		fprintf(out, "pipeline_parallel_schedule = \"%s\"\n", sched);
		fprintf(out, "pipeline_parallel_microbatch_size = %d\n", p->mbs);
		if (p->first_stage_layers || p->last_stage_layers || p->embedding_as_layer ||
		    p->loss_as_layer || p->vp > 1)
			fprintf(out, "pipeline_parallel_layers_per_stage = %d\n",
			        pp_stage_layers(m, p, p->pp > 2 ? 1 : 0) / (p->vp > 0 ? p->vp : 1));
		if (p->first_stage_layers || p->last_stage_layers)
			note(notes, nn,
			     "torchtitan: stages of %d (first) and %d (last) layers are not "
			     "expressed "
			     "exactly (layers_per_stage is one number)",
			     pp_stage_layers(m, p, 0), pp_stage_layers(m, p, p->pp - 1));
	}
	fprintf(out, "\n[activation_checkpoint]\nmode = \"%s\"\n",
	        p->recompute == PP_RECOMPUTE_FULL        ? "full"
	        : p->recompute == PP_RECOMPUTE_SELECTIVE ? "selective"
	                                                 : "none");
	if (p->recompute == PP_RECOMPUTE_SELECTIVE)
		fprintf(out, "selective_ac_option = \"op\"\n");
	/* torchao's recipes: tensorwise (dynamic, i.e. current scaling) and
	 * rowwise; no delayed, MXFP8 or block-wise one in [float8]. */
	if (j->precision == PP_PREC_FP8) {
		fprintf(out, "\n[float8]\nrecipe_name = \"%s\"\n",
		        j->fp8_recipe == PP_FP8_ROWWISE ? "rowwise" : "tensorwise");
		if (j->fp8_recipe == PP_FP8_MX || j->fp8_recipe == PP_FP8_BLOCKWISE ||
		    j->fp8_recipe == PP_FP8_NVFP4)
			note(notes, nn,
			     "torchtitan: [float8] has no %s recipe (tensorwise or rowwise); "
			     "tensorwise written",
			     pp_fp8_recipe_name(j->fp8_recipe));
	}
}

int pp_launch_emit(const pp_estimate *e, pp_launch_format format, FILE *out, char *notes,
                   size_t notes_len)
{
	if (notes && notes_len)
		notes[0] = '\0';
	switch (format) {
	case PP_LAUNCH_MEGATRON: emit_megatron(e, out, notes, notes_len); break;
	case PP_LAUNCH_NEMO: emit_nemo(e, out, notes, notes_len); break;
	case PP_LAUNCH_TORCHTITAN: emit_torchtitan(e, out, notes, notes_len); break;
	}
	return ferror(out) ? -1 : 0;
}
