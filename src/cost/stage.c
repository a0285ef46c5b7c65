/*
 * Per-stage cost: sum the seconds of a stage's operations and collectives,
 * deciding what communication is exposed.
 */
#include <string.h>

#include "paraplan/cost.h"
#include "util/util.h"

/* Bytes one GPU puts on the wire for a collective of a `bytes` buffer on n GPUs. */
static double wire_bytes(pp_coll_kind kind, double bytes, int n)
{
	if (n <= 1)
		return 0;
	switch (kind) {
	case PP_COLL_ALLREDUCE: return 2.0 * (n - 1) / n * bytes;
	case PP_COLL_ALLGATHER:
	case PP_COLL_REDUCESCATTER: return (double)(n - 1) / n * bytes;
	case PP_COLL_ALLTOALL: return (double)(n - 1) / n * bytes;
	case PP_COLL_BROADCAST:
	case PP_COLL_REDUCE: return (double)(n - 1) / n * bytes; /* all but one forward it */
	case PP_COLL_P2P:
	default: return bytes;
	}
}

typedef struct acc {
	double compute[4]; /* by phase */
	double attn[4];    /* attention-core compute by phase (hides CP traffic) */
	double exposed[PP_NGROUPS];
	double hidden_cp[4]; /* overlappable CP traffic by phase */
	double bytes[PP_NGROUPS];
	double summa; /* exposed SUMMA broadcast/reduce time */
	double model_flops, hw_flops;
	double flops[4]; /* executed FLOPs by phase */
	bool overflow;
} acc;

/* Everything a layer's cost depends on besides its kind. */
typedef struct layer_key {
	const void *model, *system;
	int seq, precision, tp, tp2, summa, summa_nb, cp, ep, etp, mbs, sp, recompute, flash;
	int tp_overlap, ep_overlap;
	pp_layout lay[PP_NGROUPS];
} layer_key;

/* a += n * b */
static void acc_add(acc *a, const acc *b, double n)
{
	for (int i = 0; i < 4; i++) {
		a->compute[i] += n * b->compute[i];
		a->attn[i] += n * b->attn[i];
		a->hidden_cp[i] += n * b->hidden_cp[i];
		a->flops[i] += n * b->flops[i];
	}
	for (int g = 0; g < PP_NGROUPS; g++) {
		a->exposed[g] += n * b->exposed[g];
		a->bytes[g] += n * b->bytes[g];
	}
	a->summa += n * b->summa;
	a->model_flops += n * b->model_flops;
	a->hw_flops += n * b->hw_flops;
	a->overflow |= b->overflow;
}

static void add_work(acc *a, const pp_work *w, const pp_system *s, const pp_job *job,
                     const pp_plan *p, const pp_layout *lay, double times);

/* One layer of kind `moe` (its index `layer`), from the workspace's memo when
 * nothing that shapes it changed. */
static void layer_cost(acc *one, const pp_model *m, const pp_system *s, const pp_job *job,
                       const pp_plan *p, const pp_layout *lay, int layer, int moe, pp_work *ws)
{
	layer_key k;
	memset(&k, 0, sizeof k);
	k.model = m;
	k.system = s;
	k.seq = job->seq_len;
	k.precision = job->precision;
	k.tp = p->tp;
	k.tp2 = p->tp2;
	k.summa = p->summa;
	k.summa_nb = p->summa_nb;
	k.cp = p->cp;
	k.ep = p->ep;
	k.etp = p->etp;
	k.mbs = p->mbs;
	k.sp = p->sp;
	k.recompute = p->recompute;
	k.flash = p->flash;
	k.tp_overlap = p->tp_overlap;
	k.ep_overlap = p->ep_overlap;
	/* Only the groups a layer's own collectives use shape its cost. */
	const pp_group used[] = {PP_GROUP_TP, PP_GROUP_TP2, PP_GROUP_CP, PP_GROUP_EP, PP_GROUP_ETP};
	for (size_t i = 0; i < sizeof used / sizeof used[0]; i++)
		k.lay[used[i]] = lay[used[i]];
	_Static_assert(sizeof k <= sizeof ws->cache_key[0], "memo key does not fit");
	_Static_assert(sizeof *one <= sizeof ws->cache[0], "memo value does not fit");
	if (ws->cache_valid[moe] && memcmp(ws->cache_key[moe], &k, sizeof k) == 0) {
		memcpy(one, ws->cache[moe], sizeof *one);
		return;
	}
	memset(one, 0, sizeof *one);
	pp_layer_work(m, job, p, layer, ws);
	add_work(one, ws, s, job, p, lay, 1);
	memcpy(ws->cache_key[moe], &k, sizeof k);
	memcpy(ws->cache[moe], one, sizeof *one);
	ws->cache_valid[moe] = true;
}

static void add_work(acc *a, const pp_work *w, const pp_system *s, const pp_job *job,
                     const pp_plan *p, const pp_layout *lay, double times)
{
	if (w->overflow)
		a->overflow = true;
	for (int i = 0; i < w->nops; i++) {
		const pp_op *o = &w->ops[i];
		double t = pp_op_time(&s->gpu, job->precision, o) * times;
		a->compute[o->phase] += t;
		if (o->kind == PP_OP_ATTN)
			a->attn[o->phase] += t;
		if (o->kind != PP_OP_ELEM) {
			a->hw_flops += o->flops * times;
			a->flops[o->phase] += o->flops * times;
			if (o->phase != PP_PHASE_RECOMPUTE)
				a->model_flops += o->flops * times;
		}
	}
	/* SUMMA: per GEMM op, the time of one panel's collectives. */
	double panel_s[PP_MAX_OPS], panels[PP_MAX_OPS];
	bool any_panel = false;
	for (int i = 0; i < w->ncolls; i++) {
		const pp_coll *c = &w->colls[i];
		const pp_layout *l = &lay[c->group];
		a->bytes[c->group] += wire_bytes(c->kind, c->bytes, l->size) * c->count * times;
		if (c->overlap_op >= 0 && c->overlap_op < w->nops) {
			double n = c->panels >= 1 ? c->panels : 1;
			if (!any_panel) {
				memset(panel_s, 0, sizeof panel_s);
				memset(panels, 0, sizeof panels);
				any_panel = true;
			}
			panel_s[c->overlap_op] +=
			    pp_coll_time(s, l, c->kind, c->bytes / n, NULL) * c->count;
			panels[c->overlap_op] = n;
			continue;
		}
		double t = pp_coll_time(s, l, c->kind, c->bytes, NULL) * c->count * times;
		if (c->group == PP_GROUP_CP && c->overlapped)
			a->hidden_cp[c->phase] += t;
		else if (c->overlapped)
			continue; /* e.g. SP's re-gather for wgrad, hidden under the dgrad GEMM */
		else
			a->exposed[c->group == PP_GROUP_ETP ? PP_GROUP_EP : c->group] += t;
	}
	/* Seed 003 App. A: t_comm = t_prologue + n_b t_exposed.  The first panel's
	 * broadcasts are the prologue; each later panel's run under the previous
	 * panel's GEMM and show only what exceeds it (n_b - 1 of them). */
	for (int i = 0; any_panel && i < w->nops; i++) {
		if (panel_s[i] <= 0)
			continue;
		double n = panels[i] >= 1 ? panels[i] : 1;
		double per = pp_op_time(&s->gpu, job->precision, &w->ops[i]) / n;
		double over = panel_s[i] - per;
		a->summa += (panel_s[i] + (n - 1) * (over > 0 ? over : 0)) * times;
	}
	(void)p;
}

pp_status pp_stage_cost(const pp_model *m, const pp_system *s, const pp_job *job, const pp_plan *p,
                        int stage, pp_work *ws, pp_stage_time *out, pp_error *err)
{
	if (stage < 0 || stage >= p->pp)
		return ppi_fail(err, "", "stage", "stage %d is outside 0..%d", stage, p->pp - 1);
	memset(out, 0, sizeof *out);
	out->stage = stage;
	pp_layout lay[PP_NGROUPS];
	pp_plan_layouts(p, s, lay);

	acc a;
	memset(&a, 0, sizeof a);
	int layers = pp_stage_layers(m, p, stage);
	/* Dense and MoE layers differ; count each kind and cost it once. */
	int n_moe = 0, n_dense = 0, moe_idx = -1, dense_idx = -1;
	for (int i = 0; i < layers; i++) {
		int l = pp_stage_layer_index(m, p, stage, i);
		if (pp_model_layer_is_moe(m, l)) {
			n_moe++;
			moe_idx = l;
		} else {
			n_dense++;
			dense_idx = l;
		}
	}
	double layer_params_max = 0;
	double dense_params = 0, expert_params = 0;
	/* Layer weights split over n_1 (1D and 2D TP, replicated over n_2) or over
	 * n_1 x n_2 (SUMMA: no replicated weights, seed 003 Table A2). */
	double wsplit = p->summa ? (double)p->tp * p->tp2 : p->tp;
	int etp = p->etp > 0 ? p->etp : p->tp;
	/* Each layer kind once, scaled by its count (a dense layer has no experts). */
	const int counts[2] = {n_dense, n_moe}, index[2] = {dense_idx, moe_idx};
	for (int k = 0; k < 2; k++) {
		if (!counts[k])
			continue;
		acc one;
		layer_cost(&one, m, s, job, p, lay, index[k], k, ws);
		acc_add(&a, &one, counts[k]);
		pp_layer_params lp;
		pp_model_layer_params(m, index[k], &lp);
		double mine = (lp.attention + lp.mlp - lp.replicated) / wsplit + lp.replicated;
		double mine_e = lp.experts / ((double)p->ep * etp);
		dense_params += mine * counts[k];
		expert_params += mine_e * counts[k];
		if (mine + mine_e > layer_params_max)
			layer_params_max = mine + mine_e;
	}
	double emb = (double)m->vocab * m->hidden / p->tp;
	double emb_params = 0; /* vocab-parallel over n_1, replicated over n_2 */
	if (stage == 0) {
		pp_embedding_work(m, job, p, ws);
		add_work(&a, ws, s, job, p, lay, 1);
		emb_params += emb;
	}
	if (stage == p->pp - 1) {
		pp_head_work(m, job, p, ws);
		add_work(&a, ws, s, job, p, lay, 1);
		if (!m->tied_embeddings || p->pp > 1)
			emb_params += emb;
	}
	dense_params += emb_params;

	if (a.overflow) {
		ppi_fail(err, "", "workload",
		         "internal: a layer has more operations than PP_MAX_OPS/PP_MAX_COLLS hold");
		return PP_EINTERNAL;
	}
	out->fwd_compute_s = a.compute[PP_PHASE_FWD];
	out->recompute_s = a.compute[PP_PHASE_RECOMPUTE];
	out->wgrad_compute_s = a.compute[PP_PHASE_BWD_WEIGHT];
	out->bwd_compute_s = a.compute[PP_PHASE_BWD_INPUT] + a.compute[PP_PHASE_BWD_WEIGHT] +
	                     a.compute[PP_PHASE_RECOMPUTE];
	/* CP's ring traffic hides under the attention compute of its phase. */
	for (int ph = 0; ph < 4; ph++) {
		double over = a.hidden_cp[ph] - a.attn[ph];
		if (over > 0)
			a.exposed[PP_GROUP_CP] += over;
	}
	/* tp_overlap (Megatron's userbuffers) hides n_1 traffic; 2D TP's n_2
	 * gathers and SUMMA's panels (already overlapped) are added as they are. */
	out->tp_s = a.exposed[PP_GROUP_TP] * (p->tp_overlap ? 1 - s->tp_overlap_hidden : 1) +
	            a.exposed[PP_GROUP_TP2] + a.summa;
	out->cp_s = a.exposed[PP_GROUP_CP];
	out->ep_s = a.exposed[PP_GROUP_EP] * (p->ep_overlap ? 1 - s->ep_overlap_hidden : 1);
	out->model_flops = a.model_flops;
	out->hw_flops = a.hw_flops;
	out->fwd_flops = a.flops[PP_PHASE_FWD];
	out->wgrad_flops = a.flops[PP_PHASE_BWD_WEIGHT];
	out->bwd_flops = a.flops[PP_PHASE_BWD_INPUT] + a.flops[PP_PHASE_BWD_WEIGHT] +
	                 a.flops[PP_PHASE_RECOMPUTE];
	out->tp_bytes = a.bytes[PP_GROUP_TP] + a.bytes[PP_GROUP_TP2];
	out->cp_bytes = a.bytes[PP_GROUP_CP];
	out->ep_bytes = a.bytes[PP_GROUP_EP] + a.bytes[PP_GROUP_ETP];

	/* Pipeline: activations forward and their gradients backward; with SP the
	 * sequence-sharded tensor travels (Megatron's scatter/gather). */
	if (p->pp > 1) {
		double sd = ((p->sp || p->summa) && p->tp > 1) ? p->tp : 1;
		double n2 = p->tp2 > 1 ? p->tp2 : 1;
		double act = (double)p->mbs * job->seq_len / p->cp / n2 * m->hidden * 2.0 / sd;
		double one = pp_coll_time(s, &lay[PP_GROUP_PP], PP_COLL_P2P, act, NULL);
		out->pp_s = 2 * one;
		out->pp_bytes = 2 * act;
	}

	/* ZeRO-3: each layer's parameters gathered for forward and again for
	 * backward, gradients reduce-scattered, every micro-batch; prefetch hides
	 * them under the layers' compute (FSDP's backward/forward prefetch). */
	double wb = job->precision == PP_PREC_FP32 ? 4.0 : 2.0;
	if (p->zero >= 3 && lay[PP_GROUP_DP].size > 1) {
		const pp_layout *l = &lay[PP_GROUP_DP];
		/* DeepSpeed moves a layer in buckets (prefetch/reduce bucket of
		 * zero3_bucket_params), each paying a collective's latency; FSDP moves
		 * the whole layer unit at once. */
		double chunk = layer_params_max, chunks = 1;
		if (s->zero3_bucket_params > 0 && s->zero3_bucket_params < layer_params_max) {
			chunk = s->zero3_bucket_params;
			chunks = layer_params_max / chunk;
		}
		double ag = chunks * pp_coll_time(s, l, PP_COLL_ALLGATHER, chunk * wb, NULL);
		double rs = chunks * pp_coll_time(s, l, PP_COLL_REDUCESCATTER,
		                                  chunk * job->grad_bytes, NULL);
		double per_layer_comm = 2 * ag + rs;
		double per_layer_comp =
		    layers ? (out->fwd_compute_s + out->bwd_compute_s) / layers : 0;
		double over = per_layer_comm - s->zero3_overlap * per_layer_comp;
		out->zero3_s = over > 0 ? over * layers : 0;
		out->dp_bytes += (2 * layer_params_max * wb + layer_params_max * job->grad_bytes) *
		                 layers * (double)(l->size - 1) / l->size;
	}
	/* Exposed communication splits over phases in proportion to compute. */
	double comm = out->tp_s + out->cp_s + out->ep_s + out->zero3_s;
	double comp = out->fwd_compute_s + out->bwd_compute_s;
	double fwd_share = comp > 0 ? out->fwd_compute_s / comp : 0.5;
	out->fwd_s = out->fwd_compute_s + comm * fwd_share;
	out->bwd_s = out->bwd_compute_s + comm * (1 - fwd_share);

	/* Data parallelism, per iteration: gradients reduced (all-reduce, or
	 * reduce-scatter with a sharded optimizer), parameters gathered after the
	 * step (ZeRO-1/2).  ZeRO-3 already moved its traffic per micro-batch. */
	if (p->zero < 3) {
		const pp_layout *ld = &lay[PP_GROUP_DP], *le = &lay[PP_GROUP_EDP];
		pp_coll_kind red = p->zero >= 1 ? PP_COLL_REDUCESCATTER : PP_COLL_ALLREDUCE;
		double gd = dense_params * job->grad_bytes, ge = expert_params * job->grad_bytes;
		double t = pp_coll_time(s, ld, red, gd, NULL) + pp_coll_time(s, le, red, ge, NULL);
		double bytes = wire_bytes(red, gd, ld->size) + wire_bytes(red, ge, le->size);
		if (p->zero >= 1) {
			t += pp_coll_time(s, ld, PP_COLL_ALLGATHER, dense_params * wb, NULL) +
			     pp_coll_time(s, le, PP_COLL_ALLGATHER, expert_params * wb, NULL);
			bytes += wire_bytes(PP_COLL_ALLGATHER, dense_params * wb, ld->size) +
			         wire_bytes(PP_COLL_ALLGATHER, expert_params * wb, le->size);
		}
		out->dp_s = t;
		out->dp_bytes += bytes;
	}
	/* 2D TP's weight-gradient reduction over n_2 rides in the DP group above
	 * (dp x cp x tp2, seed 003 App. A).  SUMMA's weights are split, not
	 * replicated, except the vocab-parallel embedding/head: all-reduce those
	 * gradients over n_2 with the DP traffic. */
	if (p->summa && p->tp2 > 1 && emb_params > 0) {
		const pp_layout *l2 = &lay[PP_GROUP_TP2];
		double g2 = emb_params * job->grad_bytes;
		out->dp_s += pp_coll_time(s, l2, PP_COLL_ALLREDUCE, g2, NULL);
		out->dp_bytes += wire_bytes(PP_COLL_ALLREDUCE, g2, l2->size);
	}
	if (m->tied_embeddings && p->pp > 1 && (stage == 0 || stage == p->pp - 1))
		out->emb_sync_s = pp_coll_time(s, &lay[PP_GROUP_EMB], PP_COLL_ALLREDUCE,
		                               emb * job->grad_bytes, NULL);

	/* Optimizer: memory-bound pass over this GPU's shard.  Adam reads the
	 * gradient, master weight, m and v and writes the last three and the
	 * low-precision weight. */
	double shard_d = p->zero >= 1 ? (double)p->dp * p->cp * (p->summa ? 1 : p->tp2) : 1;
	double shard_e = p->zero >= 1 ? (double)p->tp * p->cp * p->dp / ((double)p->ep * etp) : 1;
	double local = dense_params / shard_d + expert_params / shard_e;
	double state = job->optimizer == PP_OPT_ADAM ? 3 : 2; /* fp32 master (+ m) + v */
	double per_param = job->grad_bytes + 2 * 4 * state + wb;
	out->optimizer_s = local * per_param / (s->gpu.memory_bw_bytes_per_s * s->gpu.eff.memory);
	return PP_OK;
}
