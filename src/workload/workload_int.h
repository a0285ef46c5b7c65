/*
 * Private to the library: memory read from a resolved scenario.
 */
#ifndef PPI_WORKLOAD_INT_H
#define PPI_WORKLOAD_INT_H

#include <string.h>

#include "paraplan/workload.h"
#include "scenario/scenario_int.h"

/* An EP all-to-all of model MoE `e` (activations of `ab` bytes an
 * element): the busiest GPU's share (`skewed`, --moe-routing) and, under
 * DeepEP, the routing it deduplicates (pp_coll.dedup_*,
 * pp_moe_dispatch_copies). */
static inline void ppi_coll_ep_mark(pp_coll *x, double skewed, const pp_job *job, const pp_moe *e,
                                    double ab)
{
	x->busiest = skewed;
	if (job->moe_dispatcher == PP_DISPATCH_ALLTOALL)
		return;
	/* deepep-fp8: what goes to the experts (the forward dispatch, the
	 * combine's gradient) as FP8 with a 4-byte scale per 128 elements */
	bool to_experts = (x->phase == PP_PHASE_FWD) == (strstr(x->name, "dispatch") != NULL);
	if (job->moe_dispatcher == PP_DISPATCH_DEEPEP_FP8 && to_experts && ab > 0)
		x->bytes *= (1 + 4.0 / 128) / ab;
	x->dedup_experts = e->num_experts;
	x->dedup_k = e->top_k;
	x->dedup_groups = e->num_groups;
	x->dedup_group_topk = e->group_topk;
}

/* pp_memory_stage on a scenario (the public one builds a scenario and calls
 * this).  Allocates nothing. */
pp_status ppi_memory_stage(const pp_scenario *sc, int stage, pp_stage_memory *out, pp_error *err);

/*
 * The key of every memo of one layer's work (the cost model's unit memo,
 * DHelix's pairing memo): all that pp_layer_work and the costing of its
 * operations and collectives read besides the layer's index.  The model and
 * system by address (a workspace's memo is emptied when they change, see
 * pp_work), the job's and the plan's fields by value, and the layouts of the
 * groups a layer's own collectives use.  Built by ppi_layer_key_set only, and
 * hashed and compared as bytes (util/hash.h).
 */
enum { PPI_LAYER_KEY_GROUPS = 5 }; /* TP, TP2, CP, EP, ETP */
typedef struct ppi_layer_key {
	const void *model, *system;
	int seq, precision, fp8_recipe, tp, tp2, summa, summa_nb, cp, ep, etp, mbs, sp, recompute,
	    flash;
	int tp_overlap, ep_overlap, dispatcher;
	int compile, zero3; /* the eager ops (job.compile), the autocast casts (ZeRO-3) */
	/* fine-tuning (job.ft): rank, targets, NF4, frozen base, embeddings
	 * frozen, and the unit's layer: 0 trains, 1 frozen below the first
	 * layer backward reaches, 2 frozen above it (ppi_layer_key_ft) */
	int ft_rank, ft_targets, ft_nf4, ft_base, ft_emb, ft_layer;
	pp_layout lay[PPI_LAYER_KEY_GROUPS];
} ppi_layer_key;

/* Fill *k (zeroed first, padding included) from the inputs and the plan's
 * group layouts `lay` (PP_NGROUPS of them, as pp_plan_layouts or the
 * placement gives them).  Inline: the layer memo builds a key per unit it
 * asks for (the search's hot path), and a call across files cost 4% of a
 * search's instructions. */
static inline void ppi_layer_key_set(ppi_layer_key *k, const pp_model *m, const pp_system *s,
                                     const pp_job *job, const pp_plan *p, const pp_layout *lay)
{
	memset(k, 0, sizeof *k);
	k->model = m;
	k->system = s;
	k->seq = job->seq_len;
	k->precision = (int)job->precision;
	k->fp8_recipe = (int)job->fp8_recipe;
	k->tp = p->tp;
	k->tp2 = p->tp2;
	k->summa = p->summa;
	k->summa_nb = p->summa_nb;
	k->cp = p->cp;
	k->ep = p->ep;
	k->etp = p->etp;
	k->mbs = p->mbs;
	k->sp = p->sp;
	k->recompute = (int)p->recompute;
	k->flash = p->flash;
	k->tp_overlap = p->tp_overlap;
	k->ep_overlap = p->ep_overlap;
	k->dispatcher = (int)job->moe_dispatcher;
	/* The op list records the eager decomposition unless compiled, and the
	 * autocast casts and separate gradient accumulation outside ZeRO-3, but
	 * only a stack with those kernels reads them (pp_op_time): for any other
	 * the two lists cost the same, and keying them apart would halve the
	 * memo's hits in a search over ZeRO stages. */
	const pp_kernel_params *kp = &s->gpu.kern;
	k->compile = job->compile && kp->eager_elementwise >= 0.5;
	k->zero3 =
	    p->zero >= 3 && (kp->autocast_weight_cast >= 0.5 || kp->grad_accum_kernel >= 0.5);
	/* Only the groups a layer's own collectives use shape its cost. */
	const pp_group used[PPI_LAYER_KEY_GROUPS] = {PP_GROUP_TP, PP_GROUP_TP2, PP_GROUP_CP,
	                                             PP_GROUP_EP, PP_GROUP_ETP};
	for (int i = 0; i < PPI_LAYER_KEY_GROUPS; i++)
		k->lay[i] = lay[used[i]];
	k->ft_rank = job->ft.lora_rank;
	k->ft_targets = (int)pp_finetune_targets(job);
	k->ft_nf4 = job->ft.nf4;
	k->ft_base = job->ft.freeze_base;
	k->ft_emb = pp_finetune_embeddings_frozen(job);
}

/* The key's ft_layer for layer `layer` (a layer below --freeze layers:N
 * works otherwise than one above it). */
static inline void ppi_layer_key_ft(ppi_layer_key *k, const pp_job *job, int layer)
{
	k->ft_layer = layer >= 0 && layer < job->ft.freeze_layers
	                  ? (layer < pp_finetune_backward_from(job) ? 1 : 2)
	                  : 0;
}

#endif
