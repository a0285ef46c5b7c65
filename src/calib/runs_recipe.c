/*
 * What a public-runs record ran with where its recipe or launch script states
 * it and the record does not, read into the run's plan in place of the fill
 * rules: the activation recompute, CPU offloading and the MoE all-to-all
 * overlap (data/runs/recompute.json), the micro-batch and virtual pipeline sizes and
 * the DDP implementation (data/runs/batching.json); each entry with its
 * source.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runs_int.h"

/* One entry applied to `plan`: its recompute mode, or -1 when malformed. */
static int apply(json_t *e, pp_plan *plan)
{
	int rc = ppi_run_recompute_mode(json_string_value(json_object_get(e, "recompute")));
	json_t *n = json_object_get(e, "offload_layers");
	json_t *mods = json_object_get(e, "recompute_modules");
	json_t *ep = json_object_get(e, "ep_overlap");
	pp_error err;
	if (rc < 0 || !json_is_integer(n) || json_integer_value(n) < 0 ||
	    json_integer_value(n) > 100000 || (ep && !json_is_boolean(ep)))
		return -1;
	/* Megatron-Bridge's moe_a2a_overlap (overlap_moe_expert_parallel_comm):
	 * the plan's --ep-overlap */
	if (ep)
		plan->ep_overlap = json_is_true(ep);
	plan->recompute_modules = 0;
	if (mods &&
	    (!json_is_string(mods) || rc != PP_RECOMPUTE_SELECTIVE ||
	     pp_recompute_modules_parse(json_string_value(mods), &plan->recompute_modules, &err)))
		return -1;
	plan->offload_activations = json_integer_value(n) > 0;
	plan->offload_layers = (int)json_integer_value(n);
	return rc;
}

pp_status ppi_run_recipe_recompute(const char *id, pp_plan *plan, int *mode, pp_run_info *info,
                                   pp_error *err)
{
	json_t *root, *e;
	const char *path;
	*mode = -1;
	PPI_TRY(ppi_run_table_entry("recompute", id, &root, &e, &path, err));
	pp_status st = PP_OK;
	bool ep_before = plan->ep_overlap;
	if (e && (*mode = apply(e, plan)) < 0)
		st = ppi_fail(err, path, "entries",
		              "expected recompute none|selective|full, offload_layers >= 0, "
		              "recompute_modules only with selective and ep_overlap a boolean");
	else if (e && plan->offload_layers > 0)
		ppi_run_fill(
		    info, PP_FILL_RECOMPUTE,
		    "activation_recompute from its recipe: %s, the saved activations of the "
		    "first %d layers offloaded to the host (data/runs/recompute.json)",
		    pp_recompute_name((pp_recompute)*mode), plan->offload_layers);
	else if (e && plan->recompute_modules) {
		char mods[48];
		pp_recompute_modules_name(plan->recompute_modules, mods, sizeof mods);
		ppi_run_fill(info, PP_FILL_RECOMPUTE,
		             "activation_recompute from its recipe: %s of %s "
		             "(data/runs/recompute.json)",
		             pp_recompute_name((pp_recompute)*mode), mods);
	} else if (e)
		ppi_run_fill(info, PP_FILL_RECOMPUTE,
		             "activation_recompute from its recipe: %s (data/runs/recompute.json)",
		             pp_recompute_name((pp_recompute)*mode));
	if (e && *mode >= 0 && plan->ep_overlap && !ep_before)
		ppi_run_fill(info, PP_FILL_RECOMPUTE,
		             "ep_overlap from its recipe: on, the expert all-to-all under another "
		             "micro-batch's compute (moe_a2a_overlap; data/runs/recompute.json)");
	json_decref(root);
	/* The embedded table is part of the build: a malformed one is a bug. */
	return st == PP_OK ? st : PP_EINTERNAL;
}

/* The gradient all-reduce overlap of the entry's DDP implementation
 * (the table's ddp_overlap), or -1 when its ddp_impl is malformed; NAN when
 * the entry names none. */
static double ddp_overlap(json_t *root, json_t *e)
{
	json_t *impl = json_object_get(e, "ddp_impl");
	if (!impl)
		return NAN;
	json_t *v = json_object_get(json_object_get(root, "ddp_overlap"), json_string_value(impl));
	if (!json_is_string(impl) || !json_is_number(v) || json_number_value(v) < 0 ||
	    json_number_value(v) > 1)
		return -1;
	return json_number_value(v);
}

pp_status ppi_run_recipe_batching(const char *id, ppi_script *out, pp_error *err)
{
	json_t *root, *e;
	const char *path;
	out->mbs = out->vp = 0;
	out->dp_overlap = NAN;
	out->ddp_impl[0] = '\0';
	out->split_emb_loss = false;
	PPI_TRY(ppi_run_table_entry("batching", id, &root, &e, &path, err));
	pp_status st = PP_OK;
	if (e) {
		json_t *m = json_object_get(e, "micro_batch_size");
		json_t *v = json_object_get(e, "virtual_pipeline_size");
		json_t *split = json_object_get(e, "embedding_loss_as_layers");
		double ov = ddp_overlap(root, e);
		if (!json_is_integer(m) || json_integer_value(m) < 1 ||
		    json_integer_value(m) > 100000 ||
		    (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
		           json_integer_value(v) > 1024)) ||
		    ov < 0 || (split && !json_is_boolean(split)))
			st = ppi_fail(
			    err, path, "entries",
			    "expected micro_batch_size >= 1, virtual_pipeline_size >= 1, "
			    "a ddp_impl named in ddp_overlap and embedding_loss_as_layers a "
			    "boolean");
		else {
			out->mbs = json_integer_value(m);
			out->vp = v ? json_integer_value(v) : 0;
			out->dp_overlap = ov;
			out->split_emb_loss = json_is_true(split);
			if (isfinite(ov))
				ppi_strlcpy(out->ddp_impl,
				            json_string_value(json_object_get(e, "ddp_impl")),
				            sizeof out->ddp_impl);
		}
	}
	json_decref(root);
	/* The embedded table is part of the build: a malformed one is a bug. */
	return st == PP_OK ? st : PP_EINTERNAL;
}
