/*
 * Text and JSON renderings of an estimate.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "paraplan/kernel.h"
#include "paraplan/report.h"
#include "paraplan/schedule_type.h"
#include "line.h"
#include "report_int.h"
#include "util/util.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const char *onoff(bool b)
{
	return b ? "on" : "off";
}

/* The plan splits the layers unevenly over the pipeline stages. */
static bool uneven(const pp_plan *p)
{
	return p->first_stage_layers > 0 || p->last_stage_layers > 0 || p->embedding_as_layer ||
	       p->loss_as_layer;
}

/* The compute model: where the kernel rates come from (a GPU whose rates
 * are derived from the reference H100's says so) and the stack's fractions. */
static void text_compute(const pp_estimate *e, FILE *out)
{
	const pp_gpu *g = &e->system.gpu;
	const char *origin = pp_kernel_rates_origin(g);
	if (!origin)
		return;
	if (!strcmp(origin, "measured"))
		fprintf(out, "compute kernel model measured on %s", g->name);
	else if (!strcmp(origin, "profile"))
		fprintf(out, "compute kernel model fitted to the tables of --gpu-profile");
	else
		fprintf(out,
		        "compute kernel model derived: the measured %s tables carried to %s "
		        "(%g SMs, its datasheet peaks)",
		        PP_KERNEL_REFERENCE_GPU, g->name, g->kern.sms);
	fprintf(out,
	        "; stack at gemm %.3g, gemm_fp8 %.3g, attn %.3g, memory %.3g, %.3g us/kernel\n",
	        g->eff.gemm, g->eff.gemm_fp8, g->eff.attn, g->eff.memory, g->eff.kernel_s * 1e6);
}

/* True when the system runs its network at an efficiency of its own, not the
 * registry's neutral nccl-tests value over InfiniBand (framework.nic_eff's
 * fit_start, the stacks' default): a system file that measured it. */
static bool nic_eff_own(const pp_system *s)
{
	const pp_param *p = pp_param_find("framework.nic_eff");
	return p && s->nic_bytes_per_s > 0 && s->nic_eff != p->fit_start;
}

/* The fine-tuning line under the job's (docs/finetune.md); nothing without it. */
static void finetune_text(FILE *out, const pp_estimate *e)
{
	const pp_job *j = &e->job;
	if (!pp_finetune_on(j))
		return;
	const pp_finetune *f = &j->ft;
	char tg[32];
	fputs("tune    ", out);
	if (f->lora_rank > 0)
		fprintf(out, "LoRA rank %d on %s, ", f->lora_rank,
		        pp_finetune_targets_name(pp_finetune_targets(j), tg, sizeof tg));
	fprintf(out, "frozen:%s%s", f->freeze_base || f->lora_rank > 0 ? " base" : "",
	        pp_finetune_embeddings_frozen(j) && !(f->freeze_base || f->lora_rank > 0)
	            ? " embeddings"
	            : "");
	if (f->freeze_layers > 0)
		fprintf(out, " layers 0-%d", f->freeze_layers - 1);
	if (f->nf4)
		fputs(", base weights nf4", out);
	pp_param_count pc;
	pp_model_params(&e->model, &pc);
	double tr = pp_finetune_trainable_params(j, &e->model);
	fprintf(out, "; %.4g %s of %.4g B parameters train\n", tr >= 1e9 ? tr / 1e9 : tr / 1e6,
	        tr >= 1e9 ? "B" : "M", pc.total / 1e9);
}
/* The head of the text report: the model, the plan (with its 2D TP and
 * uneven stages), the job and the links between GPUs, then a blank line. */
static void text_setup(const pp_estimate *e, FILE *out)
{
	const pp_plan *p = &e->plan;
	const pp_param_count *pc = &e->params;
	fprintf(out, "paraplan estimate: %s on %lld x %s (%s)\n\n", e->model.name, e->gpus,
	        e->system.gpu.name, e->system.name);
	fprintf(out, "model   %.2f B parameters", pc->total / 1e9);
	if (e->model.moe.num_experts > 0)
		fprintf(out, " (%.2f B active)", pc->active / 1e9);
	fprintf(out, ", %d layers, hidden %d, %d heads / %d kv\n", e->model.num_layers,
	        e->model.hidden, e->model.num_heads, e->model.num_kv_heads);
	char rc[64];
	snprintf(rc, sizeof rc, "%s", pp_recompute_name(p->recompute));
	if (p->recompute_modules) {
		char mods[48];
		pp_recompute_modules_name(p->recompute_modules, mods, sizeof mods);
		snprintf(rc, sizeof rc, "%s (%s)", pp_recompute_name(p->recompute), mods);
	}
	fprintf(out,
	        "plan    tp %d  pp %d  dp %d  cp %d  ep %d  etp %d  vp %d  mbs %d  "
	        "microbatches %lld\n"
	        "        zero %d  recompute %s  sp %s  flash %s  schedule %s  order %s\n",
	        p->tp, p->pp, p->dp, p->cp, p->ep, p->etp, p->vp, p->mbs, p->microbatches, p->zero,
	        rc, onoff(p->sp), onoff(p->flash), pp_schedule_name(p->schedule), p->order);
	if (p->offload_optimizer || p->offload_params || p->offload_activations) {
		char layers[48] = "";
		if (p->offload_activations && p->offload_layers > 0)
			snprintf(layers, sizeof layers, " (the first %d layers of each chunk)",
			         p->offload_layers);
		fprintf(out, "        offload to host: optimizer %s  params %s  activations %s%s\n",
		        onoff(p->offload_optimizer), onoff(p->offload_params),
		        onoff(p->offload_activations), layers);
	}
	if (p->summa)
		fprintf(out, "        2D TP SUMMA tp x tp2 = %d x %d, %d panel%s\n", p->tp, p->tp2,
		        p->summa_nb, p->summa_nb == 1 ? "" : "s");
	else if (p->tp2 > 1)
		fprintf(out, "        2D TP tp x tp2 = %d x %d\n", p->tp, p->tp2);
	if (uneven(p)) {
		int pp = p->pp;
		fprintf(out, "        stages: first %d layers", pp_stage_layers(&e->model, p, 0));
		if (pp > 2)
			fprintf(out, ", %d x %d", pp - 2, pp_stage_layers(&e->model, p, 1));
		fprintf(out, ", last %d", pp_stage_layers(&e->model, p, pp - 1));
		if (p->embedding_as_layer || p->loss_as_layer)
			fprintf(out, " (%s counted as a layer)",
			        p->embedding_as_layer && p->loss_as_layer ? "embedding and loss"
			        : p->embedding_as_layer                   ? "embedding"
			                                                  : "loss");
		fputc('\n', out);
	}
	bool deepep = e->job.moe_dispatcher != PP_DISPATCH_ALLTOALL;
	fprintf(out, "job     global batch %lld x %d tokens, %s%s%s%s, %s gradients, %s%s%s\n",
	        e->job.global_batch, e->job.seq_len, pp_precision_name(e->job.precision),
	        e->job.precision == PP_PREC_FP8 ? " recipe " : "",
	        e->job.precision == PP_PREC_FP8 ? pp_fp8_recipe_name(e->job.fp8_recipe) : "",
	        e->job.fp8_params ? ", FP8 parameters" : "",
	        e->job.grad_bytes == 4 ? "fp32" : "16-bit",
	        e->job.optimizer == PP_OPT_ADAM ? "adam" : "sgd", deepep ? ", MoE dispatch " : "",
	        deepep ? pp_moe_dispatcher_name(e->job.moe_dispatcher) : "");
	finetune_text(out, e);
	const pp_system *sy = &e->system;
	fprintf(out, "links   %d GPUs per node, %s %.4g GB/s per GPU", sy->gpus_per_node,
	        pp_intra_link_label(sy), sy->nvlink_bytes_per_s / 1e9);
	if (sy->nics_per_node > 0 && sy->nic_bytes_per_s > 0) {
		fprintf(out, "; between nodes %s, %d x %.4g GB/s per node",
		        pp_inter_network_label(sy), sy->nics_per_node, sy->nic_bytes_per_s / 1e9);
		/* a network no nccl-tests measure: its efficiency came from step
		 * times (calibrate), not from a collective benchmark; say so.  A
		 * system file's own measured value (not nccl-tests' 0.8 over
		 * InfiniBand, the stacks' default) is printed too. */
		if (sy->fit_nic_eff)
			fprintf(out,
			        " at %.3g of line rate, fitted to training steps (no nccl-tests)",
			        sy->nic_eff);
		else if (nic_eff_own(sy))
			fprintf(out, " at %.3g of line rate (from the system file)", sy->nic_eff);
		fputc('\n', out);
	} else
		fprintf(out, "; no network between nodes\n");
	text_compute(e, out);
	fputc('\n', out);
}

/* The memory of the peak stage, part by part, and the verdict. */
static void text_memory(const pp_estimate *e, FILE *out)
{
	const pp_plan *p = &e->plan;
	const pp_stage_memory *mem = &e->memory;
	fprintf(out,
	        "memory per GPU, peak stage %d of %d (%d layers, %.4g layer-micro-batches "
	        "in flight)\n",
	        mem->stage, p->pp, mem->layers, mem->inflight_layer_mbs);
	fprintf(out, "  %-13s %9.2f GiB\n", "weights", mem->weights_bytes / GIB);
	fprintf(out, "  %-13s %9.2f GiB\n", "gradients", mem->gradients_bytes / GIB);
	fprintf(out, "  %-13s %9.2f GiB\n", "optimizer", mem->optimizer_bytes / GIB);
	fprintf(out, "  %-13s %9.2f GiB\n", "activations", mem->activations_bytes / GIB);
	fprintf(out,
	        "  %-13s %9.2f GiB   (transient %.2f, framework %.2f, allocator reserve %.2f)\n",
	        "other", mem->other_bytes / GIB, mem->transient_bytes / GIB,
	        mem->framework_bytes / GIB, mem->fragmentation_bytes / GIB);
	fprintf(out, "  %-13s %9.2f GiB   of %.2f GiB %s (%.1f%%)\n", "total",
	        mem->total_bytes / GIB, e->capacity_bytes / GIB, pp_memory_label(&e->system.gpu),
	        100.0 * mem->total_bytes / e->capacity_bytes);
	if (mem->host_bytes > 0)
		fprintf(out, "  %-13s %9.2f GiB   per GPU; %.2f GiB per node of %.2f GiB\n",
		        "host (offload)", mem->host_bytes / GIB, e->host_bytes_per_node / GIB,
		        e->system.host_memory_bytes / GIB);
	if (e->fits)
		fprintf(out, "\nverdict: fits, %.2f GiB headroom\n", e->headroom_bytes / GIB);
	else if (!e->host_fits && e->headroom_bytes >= 0)
		fprintf(out, "\nverdict: does not fit, host memory %.2f GiB over\n",
		        (e->host_bytes_per_node - e->system.host_memory_bytes) / GIB);
	else
		fprintf(out, "\nverdict: does not fit, %.2f GiB over\n", -e->headroom_bytes / GIB);
	if (!e->host_fits)
		fprintf(
		    out,
		    "reason: the offloaded state of the node's GPUs (%.2f GiB) exceeds its host "
		    "memory (%.2f GiB)\n",
		    e->host_bytes_per_node / GIB, e->system.host_memory_bytes / GIB);
	if (!e->fits && pp_memory_reserve_oom(mem, e->capacity_bytes))
		fprintf(out,
		        "reason: the tensors fit (allocated peak %.2f GiB + framework %.2f), the "
		        "caching allocator's reserved peak (%.2f GiB) does not\n",
		        mem->allocated_bytes / GIB, mem->framework_bytes / GIB,
		        mem->reserved_bytes / GIB);
}

/* The iteration time, part by part as the closed form adds it, the SI note
 * of a DHelix schedule and the simulator's figures when it ran. */
static void text_time(const pp_estimate *e, FILE *out)
{
	const pp_iteration *t = &e->time;
	double it = t->iteration_s > 0 ? t->iteration_s : 1;
	fprintf(out, "\niteration time, paced by stage %d\n", t->bottleneck_stage);
	/* CPU offload's per-layer host transfers show with ZeRO-3's (cost.h);
	 * an FSDP stack's ZeRO-2 (SHARD_GRAD_OP) moves its traffic per layer
	 * under the same rule (pp_plan_layer_gathers), named as it runs. */
	bool host = e->plan.offload_params || e->plan.offload_activations;
	const char *per_layer = host ? "zero-3 + host" : "zero-3";
	if (e->plan.zero < 3)
		per_layer = pp_plan_layer_gathers(&e->plan, &e->system) > 0
		                ? (host ? "zero-2 + host" : "zero-2 (fsdp)")
		                : "host offload";
	const struct {
		const char *name;
		double s;
	} rows[] = {{"compute", t->compute_s},     {"tp exposed", t->tp_s},
	            {"cp exposed", t->cp_s},       {"ep exposed", t->ep_s},
	            {per_layer, t->zero3_s},       {"pp send/recv", t->pp_s},
	            {"bubble", t->bubble_s},       {"dp exposed", t->dp_s},
	            {"optimizer", t->optimizer_s}, {"other", t->other_s}};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (rows[i].s > 0 || i == 0)
			fprintf(out, "  %-13s %10.2f ms  %5.1f%%\n", rows[i].name, rows[i].s * 1e3,
			        100 * rows[i].s / it);
	fprintf(out, "  %-13s %10.2f ms\n", "iteration", t->iteration_s * 1e3);
	ppi_report_colls_text(e, out);
	ppi_report_moe_text(e, out);
	if (e->plan.offload_optimizer)
		fprintf(out,
		        "  offload: the optimizer line is the host's step and the parameters' way "
		        "back; the gradients' way out is in dp (docs/memory.md)\n");
	if (pp_schedule_type_of(e->plan.schedule)->si)
		fprintf(out,
		        "  %s: the paced stage's SI blocks run %.3fx faster than its forward + "
		        "backward (seed 002's s)\n",
		        pp_schedule_name(e->plan.schedule),
		        e->bottleneck.si_speedup > 0 ? e->bottleneck.si_speedup : 1.0);
	if (pp_schedule_type_of(e->plan.schedule)->si && !e->system.dh_overlap_set &&
	    e->system.gpu.overlap_assumed)
		fprintf(
		    out,
		    "  note: DHelix's overlap table for %s is assumed like %s (none measured on "
		    "it; --overlap gives one)\n",
		    e->system.gpu.name, e->system.gpu.overlap_platform);
	if (e->simulated) {
		const pp_sim_result *r = &e->sim;
		fprintf(out,
		        "\nsimulated iteration %.2f ms (%+.2f%% vs the closed form): pipeline %.2f "
		        "ms, busiest stage %.2f ms, bubble %.2f ms, dp exposed %.2f ms, last "
		        "compute on stage %d, %lld tasks\n",
		        r->iteration_s * 1e3, 100 * (r->iteration_s - t->iteration_s) / it,
		        r->pipeline_s * 1e3, r->busy_s * 1e3, r->bubble_s * 1e3,
		        r->dp_exposed_s * 1e3, r->critical_rank, r->tasks);
	}
}

/* Throughput, the training run's days and cost, and the goodput section. */
static void text_throughput(const pp_estimate *e, FILE *out)
{
	fprintf(out,
	        "\nthroughput  %.0f tokens/s, %.1f model TFLOP/s per GPU (MFU %.1f%%), "
	        "%.1f hardware TFLOP/s (HFU %.1f%%)\n",
	        e->tokens_per_s, e->model_tflops_per_gpu, 100 * e->mfu, e->hardware_tflops_per_gpu,
	        100 * e->hfu);
	if (e->train_tokens > 0) {
		fprintf(out, "training    %.3g tokens in %.1f days, %.0f GPU-hours",
		        e->train_tokens, e->train_days, e->gpu_hours);
		if (e->usd_per_gpu_hour > 0)
			fprintf(out, ", %.0f USD at %.2f USD/GPU-hour", e->cost_usd,
			        e->usd_per_gpu_hour);
		fputc('\n', out);
	}
	if (pp_energy_asked(&e->job.energy))
		ppi_report_energy_text(e, out);
	if (e->has_goodput)
		ppi_report_goodput_text(e, out);
}

int pp_report_text(const pp_estimate *e, FILE *out)
{
	text_setup(e, out);
	text_memory(e, out);
	text_time(e, out);
	text_throughput(e, out);
	return ferror(out) ? -1 : 0;
}

static json_t *memory_json(const pp_estimate *e)
{
	const pp_stage_memory *m = &e->memory;
	json_t *detail = json_pack(
	    "{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "params", m->params, "act_layers_bytes",
	    m->act_layers_bytes, "act_embedding_bytes", m->act_embedding_bytes, "act_logits_bytes",
	    m->act_logits_bytes, "act_per_layer_microbatch_bytes", m->act_per_layer_mb_bytes,
	    "transient_bytes", m->transient_bytes, "framework_bytes", m->framework_bytes,
	    "fragmentation_bytes", m->fragmentation_bytes);
	json_object_set_new(detail, "allocated_bytes", json_real(m->allocated_bytes));
	json_object_set_new(detail, "reserved_bytes", json_real(m->reserved_bytes));
	json_object_set_new(detail, "largest_transient_bytes",
	                    json_real(m->largest_transient_bytes));
	json_t *stages = json_array();
	for (int i = 0; i < e->nstages; i++)
		json_array_append_new(stages, json_real(e->stage_total_bytes[i]));
	json_t *r = json_pack(
	    "{s:i,s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:f,s:o,s:o}", "stage", m->stage,
	    "layers", m->layers, "inflight_layer_microbatches", m->inflight_layer_mbs,
	    "weights_bytes", m->weights_bytes, "gradients_bytes", m->gradients_bytes,
	    "optimizer_bytes", m->optimizer_bytes, "activations_bytes", m->activations_bytes,
	    "other_bytes", m->other_bytes, "total_bytes", m->total_bytes, "capacity_bytes",
	    e->capacity_bytes, "fits", e->fits, "headroom_bytes", e->headroom_bytes, "detail",
	    detail, "stage_total_bytes", stages);
	/* Why it does not fit: by allocation, or only by the allocator's reserve. */
	const char *why = e->fits ? "fits"
	                  : pp_memory_reserve_oom(m, e->capacity_bytes)
	                      ? "reserved peak over capacity, allocated peak fits"
	                      : "allocated peak over capacity";
	if (r && m->host_bytes > 0) {
		json_object_set_new(r, "host_bytes", json_real(m->host_bytes));
		json_object_set_new(r, "host_bytes_per_node", json_real(e->host_bytes_per_node));
		json_object_set_new(r, "host_fits", json_boolean(e->host_fits));
		if (!e->host_fits)
			why = "host memory of the node over its capacity (CPU offload)";
	}
	if (r)
		json_object_set_new(r, "fit_reason", json_string(why));
	return r;
}

/* A plan as JSON (estimate.plan). */
static json_t *plan_json(const pp_plan *p)
{
	json_t *plan =
	    json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:I,s:i,s:s,s:b,s:b,s:s,s:s}", "tp", p->tp,
	              "pp", p->pp, "dp", p->dp, "cp", p->cp, "ep", p->ep, "etp", p->etp, "vp",
	              p->vp, "mbs", p->mbs, "microbatches", (json_int_t)p->microbatches, "zero",
	              p->zero, "recompute", pp_recompute_name(p->recompute), "sp", p->sp, "flash",
	              p->flash, "schedule", pp_schedule_name(p->schedule), "order", p->order);
	if (p->recompute_modules) {
		char mods[48];
		pp_recompute_modules_name(p->recompute_modules, mods, sizeof mods);
		json_object_set_new(plan, "recompute_modules", json_string(mods));
	}
	if (p->offload_optimizer || p->offload_params || p->offload_activations) {
		json_object_set_new(plan, "offload_optimizer", json_boolean(p->offload_optimizer));
		json_object_set_new(plan, "offload_params", json_boolean(p->offload_params));
		json_object_set_new(plan, "offload_activations",
		                    json_boolean(p->offload_activations));
		json_object_set_new(plan, "offload_layers", json_integer(p->offload_layers));
	}
	json_object_set_new(plan, "tp2", json_integer(p->tp2));
	json_object_set_new(plan, "summa", json_boolean(p->summa));
	json_object_set_new(plan, "summa_nb", json_integer(p->summa_nb));
	json_object_set_new(plan, "first_stage_layers", json_integer(p->first_stage_layers));
	json_object_set_new(plan, "last_stage_layers", json_integer(p->last_stage_layers));
	json_object_set_new(plan, "embedding_as_layer", json_boolean(p->embedding_as_layer));
	json_object_set_new(plan, "loss_as_layer", json_boolean(p->loss_as_layer));
	return plan;
}

/*
 * The training stack's terms in the bottleneck rank's compute over one
 * iteration (pp_stage_stack_terms; on the kernel path only), with what the
 * stack runs: its framework, torch.compile, CUDA graphs.  Seconds, each the
 * compute with the term less the compute without it.
 */
static json_t *stack_terms_json(const pp_estimate *e)
{
	pp_stack_terms t;
	pp_error err;
	pp_error_clear(&err);
	const pp_kernel_params *k = &e->system.gpu.kern;
	json_t *o =
	    json_pack("{s:s,s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:i}", "framework", e->system.framework,
	              "eager_elementwise", k->eager_elementwise >= 0.5, "compile", e->job.compile,
	              "autocast_weight_cast", k->autocast_weight_cast >= 0.5, "grad_accum_kernel",
	              k->grad_accum_kernel >= 0.5, "unfused_cross_entropy",
	              k->unfused_cross_entropy >= 0.5, "cuda_graphs", k->cuda_graphs >= 0.5,
	              "fsdp_grad_passes", e->system.fsdp_grad_passes >= 0.5, "fsdp2_copies",
	              e->system.fsdp2_copies >= 0.5, "moe_host_sync", (int)e->system.moe_host_sync);
	if (pp_stage_stack_terms(&e->model, &e->system, &e->job, &e->plan, e->time.bottleneck_stage,
	                         &t, &err) == PP_OK) {
		json_object_set_new(o, "launch_s", json_real(t.launch_s));
		json_object_set_new(o, "eager_elementwise_s", json_real(t.eager_s));
		json_object_set_new(o, "autocast_cast_s", json_real(t.autocast_s));
		json_object_set_new(o, "grad_accum_s", json_real(t.grad_accum_s));
		json_object_set_new(o, "unfused_cross_entropy_s", json_real(t.unfused_ce_s));
		json_object_set_new(o, "fsdp_grad_s", json_real(t.fsdp_grad_s));
		json_object_set_new(o, "moe_sync_s", json_real(t.moe_sync_s));
	}
	return o;
}

static json_t *estimate_json(const pp_estimate *e)
{
	const pp_plan *p = &e->plan;
	const pp_model *md = &e->model;
	json_t *model =
	    json_pack("{s:s,s:f,s:f,s:i,s:i,s:i,s:i,s:i,s:i}", "name", md->name, "params",
	              e->params.total, "active_params", e->params.active, "layers", md->num_layers,
	              "hidden", md->hidden, "heads", md->num_heads, "kv_heads", md->num_kv_heads,
	              "vocab", md->vocab, "experts", md->moe.num_experts);
	json_t *system = json_pack(
	    "{s:s,s:s,s:I,s:i,s:i,s:s,s:s,s:s}", "name", e->system.name, "gpu", e->system.gpu.name,
	    "gpus", (json_int_t)e->gpus, "gpus_per_node", e->system.gpus_per_node, "nvlink_domain",
	    e->system.nvlink_domain, "intra_node_link", pp_intra_link_label(&e->system),
	    "inter_node_network", pp_inter_network_label(&e->system), "memory_type",
	    pp_memory_label(&e->system.gpu));
	const pp_gpu *g = &e->system.gpu;
	const char *origin = pp_kernel_rates_origin(g);
	if (origin)
		json_object_set_new(system, "compute_model",
		                    json_pack("{s:s,s:s,s:f,s:{s:f,s:f,s:f,s:f,s:f}}", "model",
		                              "kernel", "rates", origin, "sms", g->kern.sms,
		                              "stack", "gemm", g->eff.gemm, "gemm_fp8",
		                              g->eff.gemm_fp8, "attn", g->eff.attn, "memory",
		                              g->eff.memory, "kernel_s", g->eff.kernel_s));
	/* a network no nccl-tests measure, or one its system file measures:
	 * the NIC efficiency it runs at and where that came from (the text's
	 * links line says the same) */
	if (e->system.fit_nic_eff || nic_eff_own(&e->system))
		json_object_set_new(
		    system, "network",
		    json_pack("{s:f,s:s}", "nic_eff", e->system.nic_eff, "nic_eff_from",
		              e->system.fit_nic_eff ? "training steps (calibrate; no nccl-tests)"
		                                    : "the system file"));
	json_t *job =
	    json_pack("{s:I,s:i,s:f,s:s,s:i,s:s}", "global_batch", (json_int_t)e->job.global_batch,
	              "seq_len", e->job.seq_len, "train_tokens", e->job.train_tokens, "precision",
	              pp_precision_name(e->job.precision), "grad_bytes", e->job.grad_bytes,
	              "optimizer", e->job.optimizer == PP_OPT_ADAM ? "adam" : "sgd");
	if (e->job.precision == PP_PREC_FP8)
		json_object_set_new(job, "fp8_recipe",
		                    json_string(pp_fp8_recipe_name(e->job.fp8_recipe)));
	if (e->job.fp8_params)
		json_object_set_new(job, "fp8_params", json_true());
	if (e->job.moe_dispatcher != PP_DISPATCH_ALLTOALL)
		json_object_set_new(job, "moe_dispatcher",
		                    json_string(pp_moe_dispatcher_name(e->job.moe_dispatcher)));
	if (pp_finetune_on(&e->job)) {
		const pp_finetune *f = &e->job.ft;
		char tg[32];
		json_object_set_new(
		    job, "finetune",
		    json_pack("{s:i,s:s,s:b,s:i,s:b,s:s,s:f}", "lora_rank", f->lora_rank,
		              "lora_targets",
		              pp_finetune_targets_name(pp_finetune_targets(&e->job), tg, sizeof tg),
		              "embeddings_frozen", pp_finetune_embeddings_frozen(&e->job),
		              "frozen_layers", f->freeze_layers, "base_frozen",
		              f->freeze_base || f->lora_rank > 0, "base_weights",
		              f->nf4 ? "nf4" : "train", "trainable_params",
		              pp_finetune_trainable_params(&e->job, &e->model)));
	}
	json_t *plan = plan_json(p);
	const pp_iteration *t = &e->time;
	json_t *time = json_pack(
	    "{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:i}", "iteration_s", t->iteration_s,
	    "compute_s", t->compute_s, "tp_s", t->tp_s, "cp_s", t->cp_s, "ep_s", t->ep_s, "pp_s",
	    t->pp_s, "dp_s", t->dp_s, "bubble_s", t->bubble_s, "optimizer_s", t->optimizer_s,
	    "zero3_s", t->zero3_s, "other_s", t->other_s, "bottleneck_stage", t->bottleneck_stage);
	if (pp_schedule_type_of(p->schedule)->si) /* DHelix: the bottleneck's SI block speedup s */
		json_object_set_new(time, "si_speedup", json_real(e->bottleneck.si_speedup));
	json_t *thr = json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "tokens_per_s", e->tokens_per_s,
	                        "tokens_per_iteration", e->tokens_per_iteration,
	                        "model_tflops_per_gpu", e->model_tflops_per_gpu,
	                        "hardware_tflops_per_gpu", e->hardware_tflops_per_gpu, "mfu",
	                        e->mfu, "hfu", e->hfu, "peak_flops_per_gpu", e->peak_flops);
	json_t *train = json_pack("{s:f,s:f,s:f,s:f,s:f}", "tokens", e->train_tokens, "days",
	                          e->train_days, "gpu_hours", e->gpu_hours, "usd_per_gpu_hour",
	                          e->usd_per_gpu_hour, "cost_usd", e->cost_usd);
	json_t *traffic =
	    json_pack("{s:f,s:f,s:f,s:f,s:f}", "tp_bytes", e->tp_bytes, "cp_bytes", e->cp_bytes,
	              "ep_bytes", e->ep_bytes, "pp_bytes", e->pp_bytes, "dp_bytes", e->dp_bytes);
	json_t *root = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "model", model, "system",
	                         system, "job", job, "plan", plan, "memory", memory_json(e), "time",
	                         time, "throughput", thr, "training", train,
	                         "traffic_per_gpu_per_iteration", traffic);
	if (pp_energy_asked(&e->job.energy))
		json_object_set_new(root, "energy", ppi_report_energy_json(e));
	if (e->has_goodput)
		json_object_set_new(root, "goodput", ppi_report_goodput_json(e));
	if (e->system.gpu.kern.valid)
		json_object_set_new(root, "stack_terms", stack_terms_json(e));
	if (e->simulated) {
		const pp_sim_result *r = &e->sim;
		json_object_set_new(
		    root, "sim",
		    json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:i,s:I}", "iteration_s",
		              r->iteration_s, "closed_form_iteration_s", t->iteration_s,
		              "difference", (r->iteration_s - t->iteration_s) / t->iteration_s,
		              "pipeline_s", r->pipeline_s, "busy_s", r->busy_s, "bubble_s",
		              r->bubble_s, "dp_exposed_s", r->dp_exposed_s, "optimizer_s",
		              r->optimizer_s, "critical_stage", r->critical_rank, "tasks",
		              (json_int_t)r->tasks));
	}
	return root;
}

int ppi_report_dump(json_t *root, long long mark, FILE *out)
{
	if (!root || ppi_alloc_failed() != mark) { /* a value could not be built */
		json_decref(root);
		return PP_REPORT_ENOMEM;
	}
	long long failed = mark;
	int rc =
	    json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(root);
	if (rc != 0 && ppi_alloc_failed() != failed)
		return PP_REPORT_ENOMEM;
	fputc('\n', out);
	return rc == 0 && !ferror(out) ? 0 : -1;
}

int pp_report_json(const pp_estimate *e, FILE *out)
{
	long long mark = ppi_alloc_failed();
	json_t *root = estimate_json(e);
	if (root) /* the collectives of the paced stage, each with its algorithm */
		json_object_set_new(root, "collectives", ppi_report_colls_json(e));
	json_t *moe = root ? ppi_report_moe_json(e) : NULL;
	if (moe)
		json_object_set_new(root, "moe_routing", moe);
	return ppi_report_dump(root, mark, out);
}

/* ------------------------------------------------------------ search */

/* "tp %d pp %d dp %d cp %d ep %d etp %d vp %d mbs %d z%d %s%s %s %s", and
 * the layers per stage when the split is uneven (" stages %d+%dx%d+%d" or
 * " stages %d+%d"). */
void ppi_plan_words_split(const pp_model *m, const pp_plan *p, char *buf, size_t n)
{
	ppi_line l;
	ppi_line_init(&l, buf, n);
	const struct {
		const char *name;
		int v;
	} dims[] = {{"tp ", p->tp},  {" pp ", p->pp},   {" dp ", p->dp},
	            {" cp ", p->cp}, {" ep ", p->ep},   {" etp ", p->etp},
	            {" vp ", p->vp}, {" mbs ", p->mbs}, {" z", p->zero}};
	for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
		ppi_line_str(&l, dims[i].name);
		ppi_line_int(&l, dims[i].v, 0);
		if (i == 0 && (p->tp2 > 1 || p->summa)) { /* 2D TP: n_2, SUMMA's panels */
			ppi_line_str(&l, " tp2 ");
			ppi_line_int(&l, p->tp2, 0);
			if (p->summa) {
				ppi_line_str(&l, " summa nb ");
				ppi_line_int(&l, p->summa_nb, 0);
			}
		}
	}
	ppi_line_str(&l, " ");
	ppi_line_str(&l, pp_recompute_name(p->recompute));
	if (p->sp)
		ppi_line_str(&l, " sp");
	if (p->offload_optimizer)
		ppi_line_str(&l, " offload-opt");
	if (p->offload_params)
		ppi_line_str(&l, " offload-params");
	if (p->offload_activations)
		ppi_line_str(&l, " offload-act");
	ppi_line_str(&l, " ");
	ppi_line_str(&l, pp_schedule_name(p->schedule));
	ppi_line_str(&l, " ");
	ppi_line_str(&l, p->order);
	if (!uneven(p))
		return;
	ppi_line_str(&l, " stages ");
	ppi_line_int(&l, pp_stage_layers(m, p, 0), 0);
	ppi_line_str(&l, "+");
	if (p->pp > 2) {
		ppi_line_int(&l, p->pp - 2, 0);
		ppi_line_str(&l, "x");
		ppi_line_int(&l, pp_stage_layers(m, p, 1), 0);
		ppi_line_str(&l, "+");
	}
	ppi_line_int(&l, pp_stage_layers(m, p, p->pp - 1), 0);
}

/* A search row's energy columns (docs/energy.md), when the job asks: the
 * facility power (IT without a PUE) and, with a token budget, its energy,
 * CO2e and power cost where their inputs are given. */
static void energy_head(const pp_energy_inputs *in, bool budget, FILE *out)
{
	fprintf(out, " %8s", in->pue > 0 ? "fac MW" : "IT MW");
	if (budget)
		fprintf(out, " %8s", "MWh");
	if (budget && in->gco2_per_kwh > 0)
		fprintf(out, " %8s", "t CO2e");
	if (budget && in->usd_per_kwh > 0)
		fprintf(out, " %10s", "power USD");
}

static void energy_cols(ppi_line *l, const pp_search_row *r, const pp_energy_inputs *in,
                        bool budget)
{
	/* " %8.4f %8.1f %8.1f %10.0f" */
	ppi_line_str(l, " ");
	ppi_line_fixed(l, r->facility_w / 1e6, 4, 8);
	if (budget) {
		ppi_line_str(l, " ");
		ppi_line_fixed(l, r->train_mwh, 1, 8);
	}
	if (budget && in->gco2_per_kwh > 0) { /* MWh x g/kWh = kg; / 1000 = t */
		ppi_line_str(l, " ");
		ppi_line_fixed(l, r->train_mwh * in->gco2_per_kwh / 1e3, 1, 8);
	}
	if (budget && in->usd_per_kwh > 0) {
		ppi_line_str(l, " ");
		ppi_line_fixed(l, r->train_mwh * 1e3 * in->usd_per_kwh, 0, 10);
	}
}

/* The search's counts under its report: what was evaluated, pruned, cut by
 * time or over the power cap, and why it stopped early (`stop`, "" if not). */
static void search_stats_text(const pp_search_stats *st, const char *stop, FILE *out)
{
	fprintf(out,
	        "\nsearch: %.0f plans in the %s, %lld evaluated, %lld pruned (proven not to "
	        "fit), %lld evaluated that do not fit, %lld rejected by the plan rules, %.3f s\n"
	        "pruned by time: %lld of the %lld that fit (%.1f%%) not timed, a floor under "
	        "their time proves they enter neither the top K nor the front\n",
	        st->space, stop[0] ? "sub-spaces searched" : "space", st->evaluated, st->pruned,
	        st->infeasible, st->rejected, st->wall_s, st->pruned_time,
	        st->evaluated - st->infeasible,
	        st->evaluated > st->infeasible
	            ? 100.0 * (double)st->pruned_time / (double)(st->evaluated - st->infeasible)
	            : 0.0);
	if (st->over_cap > 0)
		fprintf(out,
		        "power cap: %lld timed plans that fit draw more than the cap, the least "
		        "%.6g MW (docs/energy.md)\n",
		        st->over_cap, st->min_over_cap_w / 1e6);
	if (stop[0])
		fprintf(out, "stopped early: %s\n", stop);
}

int pp_report_search_text(const pp_search *s, FILE *out)
{
	size_t n = pp_search_count(s);
	pp_search_stats st;
	pp_search_get_stats(s, &st);
	char stop[256];
	pp_search_stop_reason(s, stop, sizeof stop);
	if (stop[0])
		fprintf(out, "stopped early: %s; the plans below are the best found so far\n\n",
		        stop);
	if (n == 0 && stop[0]) {
		fprintf(out, "no plan that fits was found before the search stopped\n");
	} else if (n == 0) {
		fprintf(out, "no plan in the space fits\n");
	} else {
		/* One estimate, refilled per plan: the search keeps its plans compact. */
		pp_estimate e_buf;
		pp_error err;
		if (pp_search_plan_get(s, 0, &e_buf, &err))
			return -1;
		const pp_estimate *w = &e_buf;
		const bool simulated = w->simulated, budget = w->train_tokens > 0;
		fprintf(out,
		        "paraplan search: %s on %lld x %s (%s), global batch %lld x %d tokens\n\n",
		        w->model.name, w->gpus, w->system.gpu.name, w->system.name,
		        w->job.global_batch, w->job.seq_len);
		fprintf(out, "%3s  %-78s %8s %7s %9s %6s %6s %7s %6s %6s %10s", "#", "plan",
		        "mem GiB", "free", "iter s", "comp%", "tp%", "pp+bub%", "dp%", "MFU",
		        "tokens/s");
		if (budget)
			fprintf(out, " %8s %12s", "days", "cost USD");
		const bool energy = pp_energy_asked(&w->job.energy);
		if (energy)
			energy_head(&w->job.energy, budget, out);
		if (simulated)
			fprintf(out, " %9s %6s", "sim s", "diff%");
		fputc('\n', out);
		/* The rows the search kept: nothing is evaluated again. */
		char text[512];
		for (size_t i = 0; i < n; i++) {
			pp_search_row r;
			if (pp_search_row_get(s, i, &r, &err))
				return -1;
			char words[160];
			ppi_plan_words_split(&w->model, &r.plan, words, sizeof words);
			double it = r.iteration_s;
			/* "%3zu  %-78s %8.2f %7.2f %9.3f %6.1f %6.1f %7.1f %6.1f %5.1f%% %10.0f" */
			ppi_line l;
			ppi_line_init(&l, text, sizeof text);
			ppi_line_int(&l, (long long)(i + 1), 3);
			ppi_line_str(&l, "  ");
			ppi_line_str_left(&l, words, 78);
			const struct {
				double v;
				int prec, width;
			} cols[] = {{r.total_bytes / GIB, 2, 8},
			            {r.headroom_bytes / GIB, 2, 7},
			            {it, 3, 9},
			            {100 * r.compute_s / it, 1, 6},
			            {100 * r.tp_s / it, 1, 6},
			            {100 * (r.pp_s + r.bubble_s) / it, 1, 7},
			            {100 * r.dp_s / it, 1, 6},
			            {100 * r.mfu, 1, 5}};
			for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
				ppi_line_str(&l, " ");
				ppi_line_fixed(&l, cols[c].v, cols[c].prec, cols[c].width);
			}
			ppi_line_str(&l, "% ");
			ppi_line_fixed(&l, r.tokens_per_s, 0, 10);
			if (budget) { /* " %8.1f %12.0f" */
				ppi_line_str(&l, " ");
				ppi_line_fixed(&l, r.train_days, 1, 8);
				ppi_line_str(&l, " ");
				ppi_line_fixed(&l, r.cost_usd, 0, 12);
			}
			if (energy)
				energy_cols(&l, &r, &w->job.energy, budget);
			fwrite(text, 1, l.n, out);
			if (simulated && r.simulated)
				fprintf(out, " %9.3f %+6.2f", r.sim_iteration_s,
				        100 * (r.sim_iteration_s - it) / it);
			else if (simulated)
				fprintf(out, " %9s %6s", "-", "-");
			fputc('\n', out);
			size_t neq = pp_search_equivalent_count(s, i);
			if (neq)
				fprintf(out,
				        "     = %zu more plan%s of the same time and memory "
				        "(--json lists "
				        "them)\n",
				        neq, neq > 1 ? "s" : "");
		}
		double margin;
		size_t ru;
		const char *why = pp_search_explain(s, &margin, &ru);
		if (why)
			fprintf(
			    out,
			    "\n#1 beats the next slower plan, #%zu, mainly on %s (%.3f s less per "
			    "iteration)\n",
			    ru + 1, why, margin);
		fprintf(out, "\nPareto front, iteration time vs memory (%zu plans):\n",
		        pp_search_pareto_count(s));
		for (size_t i = 0; i < pp_search_pareto_count(s); i++) {
			const pp_estimate *e = pp_search_pareto(s, i);
			char words[160];
			ppi_plan_words_split(&e->model, &e->plan, words, sizeof words);
			fprintf(out, "  %10.3f s %9.2f GiB  %s\n", e->time.iteration_s,
			        e->memory.total_bytes / GIB, words);
		}
	}
	search_stats_text(&st, stop, out);
	return ferror(out) ? -1 : 0;
}

/* Flags of every JSON report (ppi_report_dump). */
#define REPORT_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

/* Write `v` (consumed) as jansson would inside a tree dumped with
 * REPORT_JSON_FLAGS, at `depth`: every line after the first indented 2 x
 * depth spaces more.  0, -1 (write) or PP_REPORT_ENOMEM. */
static int dump_at_depth(json_t *v, int depth, long long mark, FILE *out)
{
	if (!v || ppi_alloc_failed() != mark) {
		json_decref(v);
		return PP_REPORT_ENOMEM;
	}
	char *text = json_dumps(v, REPORT_JSON_FLAGS | JSON_ENCODE_ANY);
	json_decref(v);
	if (!text) /* a value built whole fails to print only for want of memory */
		return PP_REPORT_ENOMEM;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
		fwrite(p, 1, len, out);
		if (nl)
			fprintf(out, "%*s", 2 * depth, "");
		p += len;
	}
	free(text);
	return ferror(out) ? -1 : 0;
}

/*
 * The plans are written one at a time (each evaluated into one estimate,
 * made a JSON object, printed and freed): a tree of 10000 estimate objects
 * was 1.4 s of malloc and page faults for `--top 10000`.  The bytes are those
 * of the whole tree dumped with REPORT_JSON_FLAGS.
 */
int pp_report_search_json(const pp_search *s, const pp_netmap_ranking *mapping, FILE *out)
{
	long long mark = ppi_alloc_failed();
	pp_estimate e_buf; /* one estimate, refilled per plan */
	pp_error err;
	size_t n = pp_search_count(s);
	fputs("{\n  \"plans\": [", out);
	for (size_t i = 0; i < n; i++) {
		if (pp_search_plan_get(s, i, &e_buf, &err))
			return -1; /* internal: the plan does not evaluate as ranked */
		fprintf(out, "%s\n    ", i ? "," : "");
		json_t *o = estimate_json(&e_buf);
		size_t neq = pp_search_equivalent_count(s, i);
		if (o && neq) { /* the plans this row stands for besides its own */
			json_t *eq = json_array();
			for (size_t k = 0; k < neq; k++)
				json_array_append_new(eq, plan_json(pp_search_equivalent(s, i, k)));
			json_object_set_new(o, "equivalent_plans", eq);
		}
		if (o && mapping && i < mapping->n) /* search --bandwidth */
			json_object_set_new(o, "mapping",
			                    ppi_report_mapping_json(&mapping->plans[i]));
		int rc = dump_at_depth(o, 2, mark, out);
		if (rc)
			return rc;
	}
	fputs(n ? "\n  ]" : "]", out);
	json_t *pareto = json_array();
	for (size_t i = 0; i < pp_search_pareto_count(s); i++)
		json_array_append_new(pareto, estimate_json(pp_search_pareto(s, i)));
	pp_search_stats st;
	pp_search_get_stats(s, &st);
	json_t *stats = json_pack("{s:f,s:I,s:I,s:I,s:I,s:f}", "space", st.space, "evaluated",
	                          (json_int_t)st.evaluated, "pruned", (json_int_t)st.pruned,
	                          "infeasible", (json_int_t)st.infeasible, "rejected",
	                          (json_int_t)st.rejected, "wall_s", st.wall_s);
	char stop[256];
	pp_search_stop_reason(s, stop, sizeof stop);
	json_object_set_new(stats, "pruned_time", json_integer((json_int_t)st.pruned_time));
	json_object_set_new(
	    stats, "pruned_time_fraction",
	    json_real(st.evaluated > st.infeasible
	                  ? (double)st.pruned_time / (double)(st.evaluated - st.infeasible)
	                  : 0.0));
	json_object_set_new(stats, "subspaces", json_integer((json_int_t)st.subspaces));
	json_object_set_new(stats, "subspaces_done", json_integer((json_int_t)st.subspaces_done));
	json_object_set_new(stats, "stopped_early", json_boolean(stop[0] != '\0'));
	json_object_set_new(stats, "reason", stop[0] ? json_string(stop) : json_null());
	json_object_set_new(stats, "stop",
	                    st.stop == PP_SEARCH_TIME_LIMIT  ? json_string("time_limit")
	                    : st.stop == PP_SEARCH_MAX_PLANS ? json_string("max_plans")
	                                                     : json_null());
	double margin = 0;
	size_t ru = 0;
	const char *why = pp_search_explain(s, &margin, &ru);
	json_t *explain = why ? json_pack("{s:s,s:f,s:I}", "term", why, "margin_s", margin,
	                                  "runner_up", (json_int_t)(ru + 1))
	                      : json_null();
	/* The rest as members of the same object, at depth 1. */
	const char *keys[] = {"pareto", "stats", "explanation", "mapping"};
	json_t *vals[] = {pareto, stats, explain,
	                  mapping && mapping->n ? ppi_report_ranking_json(mapping) : NULL};
	int rc = 0;
	for (size_t k = 0; k < 4 && (k < 3 || vals[k]); k++) {
		if (!rc) {
			fprintf(out, ",\n  \"%s\": ", keys[k]);
			rc = dump_at_depth(vals[k], 1, mark, out);
		} else {
			json_decref(vals[k]);
		}
	}
	if (rc)
		return rc;
	fputs("\n}\n", out);
	return ferror(out) ? -1 : 0;
}
