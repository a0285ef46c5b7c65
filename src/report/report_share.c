/*
 * share's result (pp_share_estimates, seed 000 §7) rendered: the cluster,
 * each job's iteration alone and sharing, its slowdown and the bytes of its
 * worst shared link, the links both use.  Text and json.
 */
#include <stdio.h>

#include "format_int.h"

int ppi_share_text(const pp_result *r, FILE *f)
{
	const pp_share_report *s = r->share;
	const pp_cluster_net *n = &s->net;
	fprintf(f,
	        "paraplan share: two jobs on %lld nodes of %d GPUs, leaves of %d nodes (seed 000 "
	        "§7)\n",
	        n->nodes, n->gpus_per_node, n->nodes_per_leaf);
	fprintf(f,
	        "  node link %.1f GB/s each way (its NICs at nic_eff), leaf uplink %.1f GB/s "
	        "(%g:1 oversubscribed)\n",
	        n->node_link_bytes_per_s / 1e9, n->leaf_uplink_bytes_per_s / 1e9,
	        s->oversubscription);
	for (int k = 0; k < 2; k++)
		fprintf(
		    f,
		    "  job %c  %-16s nodes %lld-%lld  alone %.3f s  shared %.3f s  slowdown %.3f  "
		    "worst shared link %.3f GB\n",
		    'A' + k, s->model[k] ? s->model[k] : "?", s->first_node[k],
		    s->first_node[k] + s->nodes[k] - 1, s->r.alone_s[k], s->r.shared_s[k],
		    s->r.slowdown[k], s->r.worst_link_bytes[k] / 1e9);
	fprintf(f,
	        "  links shared: %d (node links and leaf up/downlinks; fixed point in %d "
	        "round%s; all network traffic taken as exposed: an upper bound)\n",
	        s->r.shared_links, s->r.iterations, s->r.iterations == 1 ? "" : "s");
	return ferror(f) ? -1 : 0;
}

int ppi_share_json(const pp_result *r, FILE *f)
{
	const pp_share_report *s = r->share;
	const pp_cluster_net *n = &s->net;
	json_t *root = json_object(), *jobs = json_array();
	if (!root || !jobs) {
		json_decref(root);
		json_decref(jobs);
		return PP_REPORT_ENOMEM;
	}
	json_object_set_new(root, "nodes", json_integer(n->nodes));
	json_object_set_new(root, "gpus_per_node", json_integer(n->gpus_per_node));
	json_object_set_new(root, "nodes_per_leaf", json_integer(n->nodes_per_leaf));
	json_object_set_new(root, "oversubscription", json_real(s->oversubscription));
	json_object_set_new(root, "node_link_bytes_per_s", json_real(n->node_link_bytes_per_s));
	json_object_set_new(root, "leaf_uplink_bytes_per_s", json_real(n->leaf_uplink_bytes_per_s));
	json_object_set_new(root, "shared_links", json_integer(s->r.shared_links));
	json_object_set_new(root, "fixed_point_iterations", json_integer(s->r.iterations));
	for (int k = 0; k < 2; k++) {
		json_t *j = json_object();
		json_object_set_new(j, "model", json_string(s->model[k] ? s->model[k] : ""));
		json_object_set_new(j, "first_node", json_integer(s->first_node[k]));
		json_object_set_new(j, "nodes", json_integer(s->nodes[k]));
		json_object_set_new(j, "alone_iteration_s", json_real(s->r.alone_s[k]));
		json_object_set_new(j, "shared_iteration_s", json_real(s->r.shared_s[k]));
		json_object_set_new(j, "slowdown", json_real(s->r.slowdown[k]));
		json_object_set_new(j, "worst_link_bytes", json_real(s->r.worst_link_bytes[k]));
		json_array_append_new(jobs, j);
	}
	json_object_set_new(root, "jobs", jobs);
	int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(root);
	return rc || ferror(f) ? -1 : 0;
}
