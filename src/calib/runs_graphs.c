/*
 * The CUDA graphs a public-runs record ran under: data/runs/cuda-graphs.json
 * (each entry with its source: the recipe's cuda_graph_impl and
 * cuda_graph_scope), read into the run's kernel parameters.
 */
#include <stdio.h>
#include <string.h>

#include "runs_int.h"

/* Megatron-Core's cuda_graph_scope names to PP_GRAPH_* bits; 0 for
 * "full_iteration" (the whole step: kern.cuda_graphs), -1 when unknown. */
static long scope_bits(const char *s)
{
	static const struct {
		const char *name;
		long bits;
	} names[] = {{"full_iteration", 0},
	             {"attn", PP_GRAPH_ATTN},
	             {"mlp", PP_GRAPH_MLP},
	             {"moe", PP_GRAPH_MOE},
	             {"moe_router", PP_GRAPH_MOE_ROUTER},
	             {"moe_preprocess", PP_GRAPH_MOE_PREPROCESS}};
	for (size_t i = 0; s && i < sizeof names / sizeof *names; i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].bits;
	return -1;
}

/* One entry of the table applied to `g`. */
static pp_status apply(json_t *e, const char *path, pp_gpu *g, pp_run_info *info, pp_error *err)
{
	json_t *impl = json_object_get(e, "impl");
	json_t *scope = json_object_get(e, "scope");
	if (json_is_null(impl)) {
		ppi_run_fill(info, PP_FILL_GRAPHS,
		             "CUDA graphs unknown: none (the recipe that states them ran another "
		             "plan; data/runs/cuda-graphs.json)");
		return PP_OK;
	}
	if (!json_is_string(impl) || !json_is_string(scope))
		return ppi_fail(err, path, "impl",
		                "expected impl a string or null and scope a string");
	if (strcmp(json_string_value(impl), "none") == 0)
		return PP_OK;
	/* the scopes, comma-separated as the recipes' --cuda_graph_scope */
	const char *p = json_string_value(scope);
	while (*p) {
		size_t n = strcspn(p, ",");
		char word[32];
		snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1),
		         p);
		long bits = scope_bits(word);
		if (bits < 0)
			return ppi_fail(err, path, "scope", "unknown CUDA graph scope '%s'", word);
		if (bits == 0)
			g->kern.cuda_graphs = 1;
		g->kern.graph_parts |= (unsigned)bits;
		p += n + (p[n] == ',');
	}
	return PP_OK;
}

pp_status ppi_run_table_entry(const char *table, const char *id, json_t **root, json_t **entry,
                              const char **path, pp_error *err)
{
	const char *text;
	*root = *entry = NULL;
	PPI_TRY(pp_preset_text(PP_KIND_RUNS, table, &text, path, err));
	PPI_TRY(ppi_json_parse_object(text, strlen(text), *path, root, err));
	json_t *entries = json_object_get(*root, "entries");
	if (!json_is_array(entries)) {
		json_decref(*root);
		*root = NULL;
		ppi_fail(err, *path, "entries", "expected an array of entries");
		return PP_EINTERNAL; /* the embedded table is part of the build */
	}
	size_t i;
	json_t *e;
	json_array_foreach (entries, i, e) {
		const char *eid = json_string_value(json_object_get(e, "id"));
		if (eid && strcmp(eid, id) == 0) {
			*entry = e;
			break;
		}
	}
	return PP_OK;
}

pp_status ppi_run_graphs(const char *id, pp_gpu *g, pp_run_info *info, pp_error *err)
{
	json_t *root, *e;
	const char *path;
	PPI_TRY(ppi_run_table_entry("cuda-graphs", id, &root, &e, &path, err));
	pp_status st = e ? apply(e, path, g, info, err) : PP_OK;
	json_decref(root);
	/* The embedded table is part of the build: a malformed one is a bug. */
	return st == PP_OK || st == PP_ENOMEM ? st : PP_EINTERNAL;
}
