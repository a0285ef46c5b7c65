/*
 * Collective algorithms as a type table: the registry (coll_list.h), the
 * group's network as the algorithms see it, and the choice among them.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "coll_int.h"

#define PPI_COLL_ALGO(id) extern const pp_coll_algo ppi_coll_##id;
#include "coll_list.h"
#undef PPI_COLL_ALGO

const pp_coll_algo *const pp_coll_algos[] = {
#define PPI_COLL_ALGO(id) &ppi_coll_##id,
#include "coll_list.h"
#undef PPI_COLL_ALGO
};

const int pp_coll_nalgos = (int)(sizeof pp_coll_algos / sizeof pp_coll_algos[0]);

/* The candidates of each kind, in registry order, NULL-terminated: [0] the
 * default set, [1] with the opt-in algorithms (pp_system.coll_recursive).
 * Built once from the registry (candidates_init), so that pp_coll_time, on
 * the search's hot path, visits only the algorithms that implement the kind. */
#define PPI_COLL_KINDS (PP_COLL_REDUCE + 1)
enum {
#define PPI_COLL_ALGO(id) PPI_COLL_SLOT_##id,
#include "coll_list.h"
#undef PPI_COLL_ALGO
	PPI_COLL_NALGOS
};
static const pp_coll_algo *candidates[PPI_COLL_KINDS][2][PPI_COLL_NALGOS + 1];
static pthread_once_t candidates_once = PTHREAD_ONCE_INIT;
static atomic_bool candidates_ready;

static void candidates_init(void)
{
	for (int k = 0; k < PPI_COLL_KINDS; k++)
		for (int opt = 0; opt < 2; opt++) {
			int n = 0;
			for (int i = 0; i < pp_coll_nalgos; i++) {
				const pp_coll_algo *a = pp_coll_algos[i];
				if ((a->kinds & PPI_COLL_KIND(k)) && (opt || !a->opt_in))
					candidates[k][opt][n++] = a;
			}
			candidates[k][opt][n] = NULL;
		}
	atomic_store_explicit(&candidates_ready, true, memory_order_release);
}

const pp_coll_algo *pp_coll_algo_find(const char *name)
{
	for (int i = 0; i < pp_coll_nalgos; i++)
		if (strcmp(pp_coll_algos[i]->name, name) == 0)
			return pp_coll_algos[i];
	return NULL;
}

/* Bandwidths one GPU of the group sees: NVLink inside the domain, and its share
 * of the node's NICs across domains. */
void pp_coll_net_init(pp_coll_net *net, const pp_system *s, const pp_layout *l)
{
	int n = l->size, nd = l->per_domain < 1 ? 1 : l->per_domain;
	if (nd > n)
		nd = n;
	net->system = s;
	net->n = n;
	net->nd = nd;
	double bw_f = s->nvlink_bytes_per_s * s->nvlink_eff;
	double nic_share = s->gpus_per_node > 0 ? (double)s->nics_per_node / s->gpus_per_node : 0;
	double bw_s = s->nic_bytes_per_s * nic_share * s->nic_eff;
	/* No NVLink: peer traffic at the NIC share (pp_plan_resolve refuses a
	 * plan whose GPUs have neither). */
	if (bw_f <= 0)
		bw_f = bw_s;
	if (bw_s <= 0)
		bw_s = bw_f;
	net->bw_f_bytes_per_s = bw_f;
	net->bw_s_bytes_per_s = bw_s;
}

bool pp_coll_algo_candidate(const pp_coll_algo *a, pp_coll_kind kind, const pp_coll_net *net)
{
	if (!(a->kinds & PPI_COLL_KIND(kind)))
		return false;
	if (a->opt_in && !net->system->coll_recursive)
		return false;
	return !a->applies || a->applies(kind, net);
}

/*
 * Seconds of algorithm `a` under protocol `p`, from its Simple seconds t_s
 * and its latency part lat_s (its time of nothing): the latency scaled by
 * NCCL's ratio of p's modelled latency to Simple's for this call, the
 * bandwidth part divided by NCCL's bandwidth factor of p.
 */
static double proto_time(const pp_coll_algo *a, pp_coll_proto p, pp_coll_kind kind,
                         const pp_coll_net *net, double t_s, double lat_s)
{
	pp_coll_nccl_table tab = (pp_coll_nccl_table)a->nccl_table;
	bool nvlink = net->system->nvlink_bytes_per_s > 0;
	double ls = pp_coll_nccl_lat_us(tab, PP_PROTO_SIMPLE, kind, net->n, net->nd, nvlink);
	double lp = pp_coll_nccl_lat_us(tab, p, kind, net->n, net->nd, nvlink);
	/* the bus bandwidth the bandwidth term runs at: NVLink in one domain,
	 * else the slower of NVLink and the domain's NICs */
	double bus = net->bw_f_bytes_per_s;
	if (net->nd < net->n && net->nd * net->bw_s_bytes_per_s < bus)
		bus = net->nd * net->bw_s_bytes_per_s;
	double f = pp_coll_nccl_bw_factor(tab, p, net->n, net->nd, net->system, bus);
	return lat_s * (lp / ls) + (t_s - lat_s) / f;
}

double pp_coll_time_proto(const pp_system *s, const pp_layout *l, pp_coll_kind kind, double V,
                          const pp_coll_algo **algo_out, pp_coll_proto *proto_out)
{
	const pp_coll_algo *best = NULL;
	pp_coll_proto best_p = PP_PROTO_SIMPLE;
	double t = 0;
	if (l->size > 1 && V > 0 && (unsigned)kind < PPI_COLL_KINDS) {
		if (!atomic_load_explicit(&candidates_ready, memory_order_acquire))
			pthread_once(&candidates_once, candidates_init);
		pp_coll_net net;
		pp_coll_net_init(&net, s, l);
		/* pp_coll_algo_candidate, the kind and the opt-in already sorted */
		for (const pp_coll_algo *const *c = candidates[kind][s->coll_recursive]; *c; c++) {
			const pp_coll_algo *a = *c;
			if (a->applies && !a->applies(kind, &net))
				continue;
			double ta = a->time(kind, V, &net);
			if (!best || ta < t) {
				best = a;
				best_p = PP_PROTO_SIMPLE;
				t = ta;
			}
			/* NCCL's protocols: not on an MPI system (coll_recursive) */
			if (s->coll_recursive ||
			    (a->nccl_table != PP_NCCL_RING && a->nccl_table != PP_NCCL_TREE))
				continue;
			/* the formulas are affine in the bytes: the time of nothing is
			 * the latency part */
			double lat = a->time(kind, 0, &net);
			for (int p = PP_PROTO_LL128; p < PP_NPROTOS; p++) {
				if (!pp_coll_proto_enabled((pp_coll_nccl_table)a->nccl_table,
				                           (pp_coll_proto)p, s))
					continue;
				double tp = proto_time(a, (pp_coll_proto)p, kind, &net, ta, lat);
				if (tp < t) {
					best = a;
					best_p = (pp_coll_proto)p;
					t = tp;
				}
			}
		}
	}
	if (algo_out)
		*algo_out = best;
	if (proto_out)
		*proto_out = best_p;
	return t;
}

double pp_coll_time(const pp_system *s, const pp_layout *l, pp_coll_kind kind, double V,
                    const pp_coll_algo **algo_out)
{
	return pp_coll_time_proto(s, l, kind, V, algo_out, NULL);
}

double ppi_coll_intra_pair(const pp_coll_net *net, double V)
{
	int nd = net->nd;
	if (nd <= 1)
		return 0;
	return 2 * (net->system->nvlink_latency_s * (nd - 1) +
	            (double)(nd - 1) / nd * V / net->bw_f_bytes_per_s);
}

int ppi_coll_log2_exact(int n)
{
	if (n < 1 || (n & (n - 1)) != 0)
		return -1;
	int k = 0;
	while (n > 1) {
		n >>= 1;
		k++;
	}
	return k;
}
