/*
 * paraplan — share: two jobs on one cluster, sharing network links (seed 000
 * §7: "if two jobs share a link, the effective bandwidth typically becomes
 * half of what it is when the link is used exclusively").
 *
 * Topology: nodes under leaf switches of `nodes_per_leaf` nodes; every node
 * has its NICs to its leaf (node_link_bytes_per_s each way); every leaf has an
 * uplink and a downlink to the spine of leaf_uplink_bytes_per_s each (=
 * nodes_per_leaf x node link / oversubscription).  A job's traffic matrix
 * (traffic.h) on its GPUs, placed from cluster GPU `gpu_offset` on, loads the
 * links its cells cross: the source node's link (out) and the destination
 * node's (in) when the nodes differ, the source leaf's uplink and the
 * destination leaf's downlink when the leaves differ.
 *
 * Effect (first order, all of a job's network traffic taken as exposed, so
 * an upper bound): on a link both jobs use, a job's bytes there take twice
 * as long while the other is sending on it; the other sends on it a fraction
 * u = min(1, its bytes there / (capacity x its iteration time)) of the time.
 * A job's iteration grows by the largest such extra over the links,
 * max_l (bytes_l / cap_l) x u_other,l — links carry traffic in parallel, the
 * slowest paces — and as iterations grow the duty cycles fall: iterated to a
 * fixed point.
 */
#ifndef PARAPLAN_SHARE_H
#define PARAPLAN_SHARE_H

#include "estimate.h"
#include "traffic.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_cluster_net {
	long long nodes;
	int gpus_per_node;
	int nodes_per_leaf;
	double node_link_bytes_per_s;   /* a node's NICs together, each way */
	double leaf_uplink_bytes_per_s; /* a leaf's uplink (and downlink) */
} pp_cluster_net;

typedef struct pp_share_job {
	const pp_traffic *traffic;
	long long gpu_offset; /* its GPU 0 on the cluster */
	double iteration_s;   /* alone */
} pp_share_job;

typedef struct pp_share_result {
	double alone_s[2], shared_s[2]; /* iteration times, alone and sharing */
	double slowdown[2];             /* shared / alone */
	int shared_links;               /* links both jobs use */
	double worst_link_bytes[2];     /* per job: bytes on its worst shared link */
	int iterations;                 /* of the fixed point */
} pp_share_result;

pp_status pp_share_two_jobs(const pp_cluster_net *net, const pp_share_job jobs[2],
                            pp_share_result *out, pp_error *err);

/* The cluster two estimated jobs share (`paraplan share`): leaves of
 * `nodes_per_leaf` nodes whose uplinks are oversubscribed `oversubscription`
 * to 1 (1: a non-blocking fat tree), and each job's first node (job B's < 0:
 * the node after job A's last). */
typedef struct pp_share_topology {
	int nodes_per_leaf;
	double oversubscription;
	long long first_node[2];
} pp_share_topology;

/* pp_share_estimates' answer: the result, the cluster it was on, each job's
 * nodes (first, count) and model (borrowed from the estimates). */
typedef struct pp_share_report {
	pp_share_result r;
	pp_cluster_net net;
	double oversubscription;
	long long first_node[2], nodes[2];
	const char *model[2];
} pp_share_report;

/*
 * Two estimates `e[0]` (job A) and `e[1]` (job B) on one cluster: each
 * job's traffic matrix (pp_traffic_of_estimate) placed from its first node,
 * its iteration time alone the estimate's, pp_share_two_jobs on the cluster
 * of the jobs' nodes.  A node's link is its NICs at the bandwidth
 * collectives sustain (nics_per_node x nic_bytes_per_s x nic_eff, the
 * effective bandwidth C of seed 000 §4), a leaf's uplink nodes_per_leaf of
 * those over the oversubscription.  PP_EINPUT (one error naming the field):
 * nodes_per_leaf < 1, oversubscription < 1, jobs whose nodes overlap, or
 * systems whose nodes differ (GPUs per node, NIC bandwidth).
 */
pp_status pp_share_estimates(const pp_estimate *const e[2], const pp_share_topology *topo,
                             pp_share_report *out, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
