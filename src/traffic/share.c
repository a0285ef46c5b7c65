/*
 * Two jobs sharing links (include/paraplan/share.h; seed 000 §7).
 */
#include <stdlib.h>
#include <string.h>

#include "paraplan/share.h"
#include "util/util.h"

/* Links: node out, node in (per node), leaf up, leaf down (per leaf). */
static pp_status job_loads(const pp_cluster_net *net, const pp_share_job *j, long long leaves,
                           double *load, pp_error *err)
{
	const pp_traffic *t = j->traffic;
	long long N = net->nodes, g = net->gpus_per_node;
	for (size_t i = 0; i < t->n; i++) {
		const pp_traffic_cell *c = &t->cell[i];
		long long s = c->src + j->gpu_offset, d = c->dst + j->gpu_offset;
		long long sn = s / g, dn = d / g;
		if (sn >= N || dn >= N)
			return ppi_fail(
			    err, "", "share.gpu_offset",
			    "the job's GPUs (offset %lld) run past the cluster's %lld nodes",
			    j->gpu_offset, N);
		if (sn == dn)
			continue;
		load[sn] += c->bytes;     /* out of the source node */
		load[N + dn] += c->bytes; /* into the destination node */
		long long sl = sn / net->nodes_per_leaf, dl = dn / net->nodes_per_leaf;
		if (sl != dl) {
			load[2 * N + sl] += c->bytes;          /* leaf uplink */
			load[2 * N + leaves + dl] += c->bytes; /* leaf downlink */
		}
	}
	return PP_OK;
}

pp_status pp_share_two_jobs(const pp_cluster_net *net, const pp_share_job jobs[2],
                            pp_share_result *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	if (net->nodes < 1 || net->gpus_per_node < 1 || net->nodes_per_leaf < 1 ||
	    !(net->node_link_bytes_per_s > 0) || !(net->leaf_uplink_bytes_per_s > 0))
		return ppi_fail(err, "", "share.net",
		                "nodes, sizes and link bandwidths must be positive");
	for (int k = 0; k < 2; k++)
		if (!jobs[k].traffic || !(jobs[k].iteration_s > 0))
			return ppi_fail(err, "", "share.jobs",
			                "job %d: a traffic matrix and a positive "
			                "iteration time are needed",
			                k);
	long long N = net->nodes, leaves = (N + net->nodes_per_leaf - 1) / net->nodes_per_leaf;
	size_t L = (size_t)(2 * N + 2 * leaves);
	double *load[2] = {ppi_calloc(L, sizeof(double)), ppi_calloc(L, sizeof(double))};
	pp_status st = PP_OK;
	if (!load[0] || !load[1])
		st = ppi_fail(err, "", "share", "out of memory");
	for (int k = 0; k < 2 && !st; k++)
		st = job_loads(net, &jobs[k], leaves, load[k], err);
	if (st) {
		free(load[0]);
		free(load[1]);
		return st;
	}
	double T[2] = {jobs[0].iteration_s, jobs[1].iteration_s};
	for (size_t l = 0; l < L; l++)
		if (load[0][l] > 0 && load[1][l] > 0)
			out->shared_links++;
	/* fixed point of T_j = T_j,alone + max_l (b_jl / c_l) min(1, b_kl / (c_l T_k)) */
	for (int it = 0; it < 100; it++) {
		double next[2];
		for (int k = 0; k < 2; k++) {
			int o = 1 - k;
			double extra = 0, worst = 0;
			for (size_t l = 0; l < L; l++) {
				if (load[k][l] <= 0 || load[o][l] <= 0)
					continue;
				double cap = l < (size_t)(2 * N) ? net->node_link_bytes_per_s
				                                 : net->leaf_uplink_bytes_per_s;
				double u = load[o][l] / (cap * T[o]);
				double x = load[k][l] / cap * (u < 1 ? u : 1);
				if (x > extra) {
					extra = x;
					worst = load[k][l];
				}
			}
			next[k] = jobs[k].iteration_s + extra;
			out->worst_link_bytes[k] = worst;
		}
		out->iterations = it + 1;
		bool done = true;
		for (int k = 0; k < 2; k++) {
			if (next[k] - T[k] > 1e-12 * T[k] || T[k] - next[k] > 1e-12 * T[k])
				done = false;
			T[k] = next[k];
		}
		if (done)
			break;
	}
	for (int k = 0; k < 2; k++) {
		out->alone_s[k] = jobs[k].iteration_s;
		out->shared_s[k] = T[k];
		out->slowdown[k] = T[k] / jobs[k].iteration_s;
	}
	free(load[0]);
	free(load[1]);
	return PP_OK;
}

/* The nodes of an estimate's GPUs: whole nodes of its system. */
static long long nodes_of(const pp_estimate *e)
{
	long long g = e->system.gpus_per_node;
	return (e->gpus + g - 1) / g;
}

pp_status pp_share_estimates(const pp_estimate *const e[2], const pp_share_topology *topo,
                             pp_share_report *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	const pp_system *a = &e[0]->system, *b = &e[1]->system;
	if (topo->nodes_per_leaf < 1)
		return ppi_fail(err, "", "share.nodes_per_leaf",
		                "expected a whole number >= 1, got %d", topo->nodes_per_leaf);
	if (!(topo->oversubscription >= 1))
		return ppi_fail(err, "", "share.oversubscription", "expected a ratio >= 1, got %g",
		                topo->oversubscription);
	double link[2];
	for (int k = 0; k < 2; k++)
		link[k] = e[k]->system.nics_per_node * e[k]->system.nic_bytes_per_s *
		          e[k]->system.nic_eff;
	if (a->gpus_per_node != b->gpus_per_node || link[0] != link[1] || !(link[0] > 0))
		return ppi_fail(err, "", "share.system",
		                "the jobs' nodes differ: %d GPUs and %.1f GB/s of NICs (job A, %s) "
		                "against %d and %.1f GB/s (job B, %s); one cluster has one kind of "
		                "node with NICs",
		                a->gpus_per_node, link[0] / 1e9, a->name, b->gpus_per_node,
		                link[1] / 1e9, b->name);
	for (int k = 0; k < 2; k++) {
		out->nodes[k] = nodes_of(e[k]);
		out->model[k] = e[k]->model.name;
	}
	out->first_node[0] = topo->first_node[0] > 0 ? topo->first_node[0] : 0;
	out->first_node[1] =
	    topo->first_node[1] >= 0 ? topo->first_node[1] : out->first_node[0] + out->nodes[0];
	long long a0 = out->first_node[0], a1 = a0 + out->nodes[0];
	long long b0 = out->first_node[1], b1 = b0 + out->nodes[1];
	if (a0 < b1 && b0 < a1)
		return ppi_fail(err, "", "share.first_node",
		                "job A's nodes %lld-%lld and job B's %lld-%lld overlap", a0, a1 - 1,
		                b0, b1 - 1);
	out->oversubscription = topo->oversubscription;
	out->net =
	    (pp_cluster_net){a1 > b1 ? a1 : b1, a->gpus_per_node, topo->nodes_per_leaf, link[0],
	                     topo->nodes_per_leaf * link[0] / topo->oversubscription};
	pp_traffic *t[2] = {NULL, NULL};
	pp_status st = PP_OK;
	for (int k = 0; k < 2 && !st; k++)
		st = pp_traffic_of_estimate(e[k], &t[k], err);
	if (!st) {
		pp_share_job jobs[2] = {{t[0], a0 * a->gpus_per_node, e[0]->time.iteration_s},
		                        {t[1], b0 * a->gpus_per_node, e[1]->time.iteration_s}};
		st = pp_share_two_jobs(&out->net, jobs, &out->r, err);
	}
	pp_traffic_free(t[0]);
	pp_traffic_free(t[1]);
	return st;
}
