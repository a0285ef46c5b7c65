/*
 * The stage-level entries of a rank: pipeline sends, ZeRO-3's per-layer
 * traffic, the data-parallel collectives, the embedding sync and the
 * optimizer's pass, each timed (through the workspace's memo of collective
 * times) into an entry with its overlap rule.  Also the floors' views of
 * the same code (ppi_stage_pp_send_s, ppi_stage_dp_s), equal to the stage
 * cost's to the bit.  Allocates nothing.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "paraplan/schedule_type.h"
#include "stage_int.h"
#include "util/hash.h"
#include "util/util.h"
#include "workload/workload_int.h"

#define UNIT_MAX (PP_MAX_OPS + PP_MAX_COLLS)

static pp_profile_entry *entry_new(ebuf *b, const char *name, pp_profile_unit unit, double times)
{
	if (b->n >= b->cap) {
		b->overflow = true;
		return NULL;
	}
	pp_profile_entry *e = &b->e[b->n++];
	memset(e, 0, sizeof *e);
	e->name = name;
	e->unit = unit;
	e->count = 1;
	e->times = times;
	e->panels = 1;
	e->overlap = -1;
	return e;
}

static void coll_entry(ebuf *b, pp_work *ws, const char *name, pp_overlap_rule rule, pp_group g,
                       pp_coll_kind kind, const pp_system *s, const pp_layout *l, double bytes,
                       double count, double times)
{
	pp_profile_entry *e = entry_new(b, name, PP_UNIT_STAGE, times);
	if (!e)
		return;
	e->coll = true;
	e->kind = kind;
	e->group = g;
	e->phase = PP_PHASE_BWD_WEIGHT;
	e->rule = rule;
	e->count = count;
	e->bytes = bytes;
	e->wire_bytes = ppi_stage_wire_bytes(kind, bytes, l->size);
	e->seconds = ppi_stage_coll_time(ws, s, l, kind, bytes, &e->algo, &e->proto);
}

/* A memory-bound kernel over a layer's parameters or gradient, once per
 * layer and micro-batch, timed as the stack's element-wise kernels are
 * (pp_op_time); it adds to the compute of its phase (rule ZERO3, not a
 * collective). */
static void pass_entry(ebuf *b, const pp_system *s, const pp_job *job, const char *name,
                       pp_phase phase, double bytes, double elements, double times)
{
	pp_op op;
	memset(&op, 0, sizeof op);
	op.name = name;
	op.kind = PP_OP_ELEM;
	op.phase = phase;
	op.count = 1;
	op.flops = elements;
	op.bytes = bytes;
	pp_profile_entry *e = entry_new(b, name, PP_UNIT_STAGE, times);
	if (!e)
		return;
	e->kind = PP_OP_ELEM;
	e->phase = phase;
	e->rule = PP_RULE_ZERO3;
	e->flops = elements;
	e->bytes = bytes;
	e->seconds = pp_op_time(&s->gpu, job->precision, &op);
}

/*
 * Under full recompute, the share of a layer's parameters DeepSpeed's ZeRO-3
 * gathers a third time.  Its hooks sit on each module (QKV, the output
 * projection, FC1, FC2, in the order the layer runs them), so the recomputed
 * forward gathers each module again; after it, a module is released unless
 * the parameters used before its backward are fewer than the reuse distance
 * (framework.zero3_reuse_params).  Between a module's recompute and its
 * backward run the later modules' recompute and their backward: twice their
 * parameters.  The last module (FC2) is always kept.  Per GPU (DeepSpeed sees
 * Megatron's TP shards); an MoE layer's local experts count as its MLP.
 */
static double zero3_regather_share(const pp_scenario *sc, const stage_ctx *c)
{
	const pp_system *s = sc->system;
	const pp_plan *p = &sc->plan;
	const pp_model *m = sc->model;
	if (!(s->zero3_reuse_params > 0) || p->recompute != PP_RECOMPUTE_FULL)
		return 0;
	/* the layer kind the traffic is sized by (layer_params_max) */
	int kind = c->layer_kind_max;
	if (kind < 0)
		return 0;
	pp_layer_params lp;
	pp_model_layer_params(m, sc->kind[kind].index, &lp);
	double h = m->hidden, ws = sc->weight_split;
	int vd = m->mla.v_head_dim > 0 ? m->mla.v_head_dim : m->head_dim;
	double proj_full = (double)m->num_heads * vd * h;
	if (proj_full > lp.attention)
		proj_full = lp.attention;
	double mlp = lp.mlp / ws + lp.experts / ((double)p->ep * sc->etp);
	double fc2 = mlp * (m->gated_mlp ? 1.0 / 3 : 0.5);
	double mod[4] = {(lp.attention - proj_full) / ws, proj_full / ws, mlp - fc2, fc2};
	double total = 0, again = 0, after = 0;
	for (int i = 3; i >= 0; i--) {
		total += mod[i];
		if (2 * after >= s->zero3_reuse_params)
			again += mod[i];
		after += mod[i];
	}
	return total > 0 ? again / total : 0;
}

/*
 * One pipeline transfer of a rank (pp > 1; every rank has the same): the
 * activations forward and their gradients backward, 1/tp of the tensor per
 * GPU.  With SP (or SUMMA) the tensor is already sequence-sharded.  Without
 * SP every TP rank holds the whole tensor and sends it whole (Megatron-Core),
 * or, with framework.pp_scatter_gather, Megatron-LM 2021's scatter/gather
 * (Narayanan et al. SC'21 Sec. 4.1, Megatron-LM scatter_gather_tensors_in_pipeline)
 * sends 1/tp of it from each rank over the inter-stage link and all-gathers
 * it over TP (NVLink) on the receiver before the next stage can start: the
 * gather is on the transfer's critical path, its bytes on the TP group's
 * links.  `link`: the layout of the hop it crosses (pp_link).  Returns its
 * seconds; *act_bytes: the bytes sent; *algo: the algorithm of the send.
 */
enum { PP_SENDS = 2 }; /* per micro-batch: one activation, one gradient */

static double pp_send(const pp_scenario *sc, pp_work *ws, const pp_layout *link, double *act_bytes,
                      const pp_coll_algo **algo)
{
	const pp_model *m = sc->model;
	const pp_system *s = sc->system;
	const pp_plan *p = &sc->plan;
	const pp_layout *lay = sc->place.group;
	double n2 = p->tp2 > 1 ? p->tp2 : 1;
	double full = (double)p->mbs * sc->job->seq_len / p->cp / n2 * m->hidden * sc->mb.ab;
	bool gather = p->tp > 1 && !(p->sp || p->summa) && s->pp_scatter_gather >= 0.5;
	double act = p->tp > 1 && (p->sp || p->summa || gather) ? full / p->tp : full;
	pp_coll_proto proto; /* direct sends: Simple */
	double seconds = ppi_stage_coll_time(ws, s, link, PP_COLL_P2P, act, algo, &proto);
	if (gather) {
		const pp_coll_algo *gather_algo;
		seconds += ppi_stage_coll_time(ws, s, &lay[PP_GROUP_TP], PP_COLL_ALLGATHER, full,
		                               &gather_algo, &proto);
	}
	*act_bytes = act;
	return seconds;
}

/*
 * The link of pipeline rank `stage` (stage_time.h's pp_s; ppi_stage_pp_peer
 * the rank at its other end): to rank stage + 1;
 * the last rank's is the wrap to rank 0 where a linear schedule runs several
 * chunks per rank (interleaved: chunk c + 1 starts on rank 0), else back to
 * rank p - 2, the one it sends its gradients to.  Each hop is in or out of
 * the NVLink domain by where its two GPUs land (pp_place_pp_link), not by
 * the whole pipeline group's layout: in 1F1B the fill and drain cross the
 * p - 1 hops one after another, and in the steady state each rank's sends
 * run on their own link.
 */
int ppi_stage_pp_peer(const pp_scenario *sc, int stage)
{
	const pp_plan *p = &sc->plan;
	if (stage < p->pp - 1)
		return stage + 1;
	return sc->sched->fold == PP_FOLD_LINEAR && sc->sched->chunks(p) > 1 ? 0 : p->pp - 2;
}

static pp_layout pp_link(const pp_scenario *sc, int stage)
{
	return pp_place_pp_link(&sc->place, stage, ppi_stage_pp_peer(sc, stage));
}

double ppi_stage_pp_link_s(const pp_scenario *sc, pp_work *ws, int stage)
{
	if (sc->plan.pp <= 1)
		return 0;
	double act;
	const pp_coll_algo *algo;
	pp_layout link = pp_link(sc, stage);
	/* as finish sums it: the entry's seconds times its count */
	return pp_send(sc, ws, &link, &act, &algo) * PP_SENDS;
}

double ppi_stage_pp_send_s(const pp_scenario *sc, pp_work *ws)
{
	if (sc->plan.pp <= 1)
		return 0;
	double act;
	const pp_coll_algo *algo;
	const pp_layout *g = &sc->place.group[PP_GROUP_PP];
	/* a pipeline all in or all out of a domain: every hop as the group; a
	 * partial one has hops inside (pp_link), the faster bound */
	pp_layout one = {2, g->per_domain > 1 ? 2 : 1};
	double t = pp_send(sc, ws, &one, &act, &algo) * PP_SENDS;
	if (g->per_domain > 1 && g->per_domain < g->size) {
		pp_layout out = {2, 1};
		double u = pp_send(sc, ws, &out, &act, &algo) * PP_SENDS;
		t = u < t ? u : t;
	}
	return t;
}

/* One data-parallel collective of a rank (PP_RULE_DP, or PP_RULE_DP_GATHER
 * for the parameter all-gather after the step; once per iteration): an
 * entry into b when b is not NULL; returns its seconds as the entry holds
 * them. */
static double dp_coll(ebuf *b, pp_work *ws, const char *name, pp_group g, pp_coll_kind kind,
                      const pp_system *s, const pp_layout *l, double bytes)
{
	if (b)
		coll_entry(b, ws, name, kind == PP_COLL_ALLGATHER ? PP_RULE_DP_GATHER : PP_RULE_DP,
		           g, kind, s, l, bytes, 1, 1);
	const pp_coll_algo *algo;
	pp_coll_proto proto;
	return ppi_stage_coll_time(ws, s, l, kind, bytes, &algo, &proto);
}

/* The data-parallel traffic of rank `c` per iteration, as entries into b
 * when b is not NULL (stage_entries); returns their seconds summed in the
 * order finish sums the entries, so the sum is the stage's dp_s to the bit
 * (ppi_stage_dp_s). */
static double dp_colls(ebuf *b, const pp_scenario *sc, const stage_ctx *c, pp_work *ws)
{
	const pp_system *s = sc->system;
	const pp_job *job = sc->job;
	const pp_plan *p = &sc->plan;
	const pp_layout *lay = sc->place.group;
	double wb = sc->mb.wb, sum = 0;
	/* Data parallelism, per iteration: gradients reduced (all-reduce, or
	 * reduce-scatter with a sharded optimizer), parameters gathered after the
	 * step (ZeRO-1/2).  A plan that gathers per layer (ZeRO-3, FSDP's ZeRO-2)
	 * already moved its traffic per micro-batch. */
	if (pp_plan_layer_gathers(p, s) == 0) {
		const pp_layout *ld = &lay[PP_GROUP_DP], *le = &lay[PP_GROUP_EDP];
		/* DeepSpeed's pipeline engine with bf16 shards the optimizer in
		 * its BF16_Optimizer but all-reduces the whole fp32 gradient
		 * (framework.pipe_engine_reduce), then all-gathers the
		 * updated parameters as ZeRO-1 does. */
		bool scatter = p->zero >= 1 && !(pp_plan_pipe_engine_reduce(p, s) &&
		                                 job->precision == PP_PREC_BF16);
		pp_coll_kind red = scatter ? PP_COLL_REDUCESCATTER : PP_COLL_ALLREDUCE;
		const char *rn = scatter ? "dp-reducescatter" : "dp-allreduce";
		/* only the trainable parameters have gradients and new values
		 * (job.ft; all of them without fine-tuning) */
		double dense = c->train.dense, experts = c->train.experts;
		sum += dp_coll(b, ws, rn, PP_GROUP_DP, red, s, ld, dense * job->grad_bytes);
		sum += dp_coll(b, ws, scatter ? "edp-reducescatter" : "edp-allreduce", PP_GROUP_EDP,
		               red, s, le, experts * job->grad_bytes);
		if (p->zero >= 1) {
			sum += dp_coll(b, ws, "dp-allgather", PP_GROUP_DP, PP_COLL_ALLGATHER, s, ld,
			               dense * wb);
			sum += dp_coll(b, ws, "edp-allgather", PP_GROUP_EDP, PP_COLL_ALLGATHER, s,
			               le, experts * wb);
		}
	}
	/* 2D TP's weight-gradient reduction over n_2 rides in the DP group above
	 * (dp x cp x tp2, seed 003 App. A).  SUMMA's weights are split, not
	 * replicated, except the vocab-parallel embedding/head: all-reduce those
	 * gradients over n_2 with the DP traffic. */
	if (p->summa && p->tp2 > 1 && c->emb_params > 0 && !pp_finetune_embeddings_frozen(job))
		sum += dp_coll(b, ws, "tp2-embedding-allreduce", PP_GROUP_TP2, PP_COLL_ALLREDUCE, s,
		               &lay[PP_GROUP_TP2], c->emb_params * job->grad_bytes);
	return sum;
}

/* Parameters of the optimizer's shard on this GPU. */
static double shard_params(const pp_scenario *sc, const stage_ctx *c)
{
	const pp_plan *p = &sc->plan;
	double shard_d = p->zero >= 1 ? sc->shard_dense : 1;
	double shard_e = p->zero >= 1 ? sc->shard_expert : 1;
	return c->train.dense / shard_d + c->train.experts / shard_e;
}

/* Seconds of `bytes` over this GPU's host link (PCIe, NVLink-C2C). */
static double host_link_s(const pp_system *s, double bytes)
{
	return s->host_link_bytes_per_s > 0 ? bytes / s->host_link_bytes_per_s : 0;
}

/* CPU offload of the optimizer (ZeRO-Offload, Ren et al. USENIX ATC'21 §4;
 * DeepSpeed offload_optimizer): the reduced 16-bit gradients of this GPU's
 * shard go to the host during backward (offload_grad_s: with the gradient
 * reduction, under the same overlap), the CPU runs the step over the shard
 * (DeepSpeed's CPU Adam, memory-bound on the host's DRAM, which the node's
 * GPUs' processes share), and the updated 16-bit parameters come back
 * before the next forward: 2M + 2M bytes per iteration, the paper's
 * minimum.  The step and the return are on the critical path (the paper's
 * one-step delayed update is not DeepSpeed's default).  Returns the step's
 * seconds and the return's; *bytes: the host bytes the step moves. */
static double offload_step_s(const pp_scenario *sc, const stage_ctx *c, double per_param,
                             double *bytes)
{
	const pp_system *s = sc->system;
	double local = shard_params(sc, c);
	double node_gpus = (double)(sc->gpus < s->gpus_per_node ? sc->gpus : s->gpus_per_node);
	double host_bw = s->host_memory_bw_bytes_per_s / (node_gpus > 0 ? node_gpus : 1);
	*bytes = local * per_param;
	return (host_bw > 0 ? *bytes / host_bw : 0) + host_link_s(s, local * sc->mb.wb);
}

/* The 16-bit gradients of the shard to the host (optimizer offload), s. */
static double offload_grad_s(const pp_scenario *sc, const stage_ctx *c)
{
	if (!sc->plan.offload_optimizer)
		return 0;
	return host_link_s(sc->system, shard_params(sc, c) * sc->job->grad_bytes);
}

/* Optimizer: memory-bound pass over this GPU's shard.  Adam reads the
 * gradient, master weight, m and v and writes the last three and the
 * low-precision weight.  Returns its seconds; *bytes: the bytes moved.
 * On the host with optimizer offload: offload_step_s, the gradient read in
 * fp32 (the host's fp32 partition). */
static double optimizer_pass(const pp_scenario *sc, const stage_ctx *c, double *bytes)
{
	const pp_system *s = sc->system;
	const pp_job *job = sc->job;
	double local = shard_params(sc, c);
	double state = job->optimizer == PP_OPT_ADAM ? 3 : 2; /* fp32 master (+ m) + v */
	if (sc->plan.offload_optimizer)
		return offload_step_s(sc, c, 4 + 2 * 4 * state + sc->mb.wb, bytes);
	double per_param = job->grad_bytes + 2 * 4 * state + sc->mb.wb;
	*bytes = local * per_param;
	/* On the kernel path a memory-bound op like any other (pp_op_time:
	 * the measured bandwidth, or the stack's fraction of it). */
	if (s->gpu.kern.valid) {
		pp_op o = {.name = "optimizer", .kind = PP_OP_ELEM, .count = 1, .bytes = *bytes};
		return pp_op_time(&s->gpu, job->precision, &o);
	}
	return local * per_param / (s->gpu.memory_bw_bytes_per_s * s->gpu.eff.memory);
}

double ppi_stage_dp_s(const pp_scenario *sc, int stage, pp_work *ws, double *optimizer_s)
{
	stage_ctx c;
	ppi_stage_layers(sc, stage, &c);
	double bytes;
	*optimizer_s = optimizer_pass(sc, &c, &bytes);
	return dp_colls(NULL, sc, &c, ws) + offload_grad_s(sc, &c);
}

/* A host transfer (CPU offload) as an entry: no wire bytes (it is not
 * GPU-to-GPU traffic), `count` per unit, `times` units. */
static void host_entry(ebuf *b, const char *name, pp_overlap_rule rule, double seconds,
                       double bytes, double count, double times)
{
	pp_profile_entry *e = entry_new(b, name, PP_UNIT_STAGE, times);
	if (!e)
		return;
	e->kind = PP_OP_ELEM;
	e->phase = PP_PHASE_BWD_WEIGHT;
	e->rule = rule;
	e->count = count;
	e->bytes = bytes;
	e->seconds = seconds;
}

/* CPU offload's per-layer host transfers of rank `stage`, per micro-batch:
 * ZeRO-Infinity's parameter shard fetched for the forward and again for the
 * backward (offload_param), and each layer's saved activations sent out in
 * the forward and fetched back for the backward (cpu_checkpointing,
 * Megatron-Core --cpu-offloading), one layer at a time (PP_RULE_HOST). */
static void host_layer_entries(ebuf *b, const pp_scenario *sc, int stage, const stage_ctx *c)
{
	const pp_plan *p = &sc->plan;
	const pp_system *s = sc->system;
	if (c->k.layers <= 0)
		return;
	if (p->offload_params && p->zero >= 3) {
		double bytes = c->layer_params_max / sc->shard_dense * sc->mb.wb;
		host_entry(b, "offload-param-h2d", PP_RULE_HOST, host_link_s(s, bytes), bytes, 2,
		           c->k.layers);
	}
	if (p->offload_activations) {
		pp_stage_memory m;
		pp_error err;
		double n = c->k.layers * pp_offload_fraction(p, c->k.layers);
		if (ppi_memory_stage(sc, stage, &m, &err) == PP_OK && m.act_per_layer_mb_bytes > 0)
			host_entry(b, "offload-activations", PP_RULE_HOST,
			           host_link_s(s, m.act_per_layer_mb_bytes),
			           m.act_per_layer_mb_bytes, 2, n);
	}
}

/* The stage's own transfers, ZeRO-3 traffic, data-parallel traffic,
 * embedding sync and optimizer, as entries. */
void ppi_stage_entries(ebuf *b, const pp_scenario *sc, int stage, const stage_ctx *c, pp_work *ws)
{
	const pp_model *m = sc->model;
	const pp_system *s = sc->system;
	const pp_job *job = sc->job;
	const pp_plan *p = &sc->plan;
	const pp_layout *lay = sc->place.group;
	/* Pipeline: activations forward and their gradients backward (pp_send). */
	if (p->pp > 1) {
		const pp_coll_algo *algo;
		pp_layout link = pp_link(sc, stage);
		double act, seconds = pp_send(sc, ws, &link, &act, &algo);
		pp_profile_entry *e = entry_new(b, "pp-sendrecv", PP_UNIT_STAGE, 1);
		if (e) {
			e->coll = true;
			e->kind = PP_COLL_P2P;
			e->group = PP_GROUP_PP;
			e->phase = PP_PHASE_FWD;
			e->rule = PP_RULE_PP;
			e->count = PP_SENDS; /* one activation, one gradient */
			e->bytes = e->wire_bytes = act;
			e->seconds = seconds;
			e->algo = algo;
			e->proto = PP_PROTO_SIMPLE; /* direct sends have no protocol choice */
		}
	}
	/* ZeRO-3: each layer's parameters gathered for forward and again for
	 * backward, gradients reduce-scattered, every micro-batch; prefetch hides
	 * them under the layers' compute (FSDP's backward/forward prefetch).
	 * FSDP's ZeRO-2 (SHARD_GRAD_OP) the same with one gather, kept from the
	 * layer's forward to its backward (pp_plan_layer_gathers). */
	double wb = sc->mb.wb;
	int gathers = pp_plan_layer_gathers(p, s);
	if (gathers > 0 && lay[PP_GROUP_DP].size > 1) {
		const pp_layout *l = &lay[PP_GROUP_DP];
		/* DeepSpeed moves a layer in buckets (prefetch/reduce bucket of
		 * zero3_bucket_params), each paying a collective's latency; FSDP moves
		 * the whole layer unit at once. */
		double chunk = c->layer_params_max, chunks = 1;
		if (s->zero3_bucket_params > 0 && s->zero3_bucket_params < c->layer_params_max) {
			chunk = s->zero3_bucket_params;
			chunks = c->layer_params_max / chunk;
		}
		/* ZeRO-3's third gather of what a recomputed layer releases */
		double again = gathers > 1 ? zero3_regather_share(sc, c) : 0;
		coll_entry(b, ws, "zero3-allgather", PP_RULE_ZERO3, PP_GROUP_DP, PP_COLL_ALLGATHER,
		           s, l, chunk * wb, (gathers + again) * chunks, c->k.layers);
		/* fine-tuning: a layer's trainable gradients only */
		double g = pp_finetune_on(job) ? fmin(chunk, c->train.layer_train_max) : chunk;
		double rb = ppi_zero3_reduce_bytes(s, job);
		if (g > 0)
			coll_entry(b, ws, "zero3-reducescatter", PP_RULE_ZERO3, PP_GROUP_DP,
			           PP_COLL_REDUCESCATTER, s, l, g * rb, chunks, c->k.layers);
		if (g > 0 && s->fsdp_grad_passes >= 0.5) {
			/* FSDP1's passes over the unsharded gradient before it: the
			 * cast to the reduce dtype where it differs, the pre-divide. */
			if (rb != wb)
				pass_entry(b, s, job, "fsdp-grad-cast", PP_PHASE_BWD_WEIGHT,
				           g * chunks * (wb + rb), g * chunks, c->k.layers);
			pass_entry(b, s, job, "fsdp-grad-predivide", PP_PHASE_BWD_WEIGHT,
			           g * chunks * 2 * rb, g * chunks, c->k.layers);
		}
		if (s->fsdp2_copies >= 0.5) {
			/* FSDP2's copies: each gather out of its buffer (forward; and
			 * backward when resharded after forward), the gradient into
			 * the reduce-scatter buffer in the reduce dtype. */
			double n = chunk * chunks;
			pass_entry(b, s, job, "fsdp2-gather-copy-out", PP_PHASE_FWD, n * 2 * wb, n,
			           c->k.layers);
			if (gathers > 1)
				pass_entry(b, s, job, "fsdp2-gather-copy-out", PP_PHASE_BWD_INPUT,
				           n * 2 * wb, n, c->k.layers);
			if (g > 0)
				pass_entry(b, s, job, "fsdp2-reduce-copy-in", PP_PHASE_BWD_WEIGHT,
				           g * chunks * (wb + rb), g * chunks, c->k.layers);
		}
	}
	dp_colls(b, sc, c, ws);
	if (p->offload_optimizer) {
		double g = shard_params(sc, c) * job->grad_bytes;
		host_entry(b, "offload-grad-d2h", PP_RULE_DP, host_link_s(s, g), g, 1, 1);
	}
	host_layer_entries(b, sc, stage, c);
	if (m->tied_embeddings && ppi_stage_head(sc) != 0 && (stage == 0 || stage == p->pp - 1) &&
	    !pp_finetune_embeddings_frozen(job))
		coll_entry(b, ws, "embedding-sync", PP_RULE_EMB_SYNC, PP_GROUP_EMB,
		           PP_COLL_ALLREDUCE, s, &lay[PP_GROUP_EMB], c->emb * job->grad_bytes, 1,
		           1);

	double bytes, seconds = optimizer_pass(sc, c, &bytes);
	pp_profile_entry *e = entry_new(b, "optimizer", PP_UNIT_STAGE, 1);
	if (e) {
		e->kind = PP_OP_ELEM;
		e->phase = PP_PHASE_BWD_WEIGHT;
		e->rule = PP_RULE_OPTIMIZER;
		e->bytes = bytes;
		e->seconds = seconds;
	}
}
