/*
 * The GPU x GPU traffic matrix of one iteration, from the stage profiles and
 * the placement (include/paraplan/traffic.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/cost.h"
#include "paraplan/moe.h"
#include "paraplan/scenario.h"
#include "paraplan/schedule_type.h"
#include "paraplan/traffic.h"
#include "util/util.h"

static const char *const type_names[PP_TRAFFIC_NTYPES] = {"tp",     "cp", "ep",       "pp-fwd",
                                                          "pp-bwd", "dp", "emb-sync", "zero3"};

const char *pp_traffic_type_name(pp_traffic_type type)
{
	return (unsigned)type < PP_TRAFFIC_NTYPES ? type_names[type] : "?";
}

const char *pp_tier_name(pp_tier tier)
{
	return tier == PP_TIER_NVLINK ? "intra_node" : tier == PP_TIER_NIC ? "inter_node" : "?";
}

/* Ring order of every rank in every group: ranks sorted by (key, pos). */
typedef struct ring {
	long long *key, *pos; /* per rank */
	long long *order;     /* ranks sorted by (key, pos) */
	long long *at;        /* rank -> index in order */
} ring;

typedef struct build {
	const pp_placement *pl;
	const pp_plan *p;
	long long R;
	ring g[PP_NGROUPS];
	pp_traffic_cell *c;
	size_t n, cap;
	bool oom;
	/* --moe-routing: ep x ep weights of the EP all-to-all's pairs, the
	 * skewed routing's expected bytes over the uniform one's (NULL: uniform). */
	double *moe_w;
	int moe_n;
	/* --moe-dispatcher deepep: the model's MoE, whose EP all-to-alls go
	 * once per node over the network and on over NVLink (NULL: all-to-all). */
	const pp_moe *dedup;
} build;

static const ring *sort_ring; /* qsort has no context argument */

static int by_key_pos(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	const ring *g = sort_ring;
	if (g->key[x] != g->key[y])
		return g->key[x] < g->key[y] ? -1 : 1;
	if (g->pos[x] != g->pos[y])
		return g->pos[x] < g->pos[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Index of a rank among the ranks of its pipeline stage, in rank order:
 * its coordinates other than pp, in mixed radix by increasing stride. */
static long long stage_local(const pp_placement *pl, const int c[PP_NDIMS])
{
	long long li = 0, mul = 1;
	int dims[PP_NDIMS], n = 0;
	for (int d = 0; d < PP_NDIMS; d++)
		if (d != PP_DIM_PP && pl->size[d] > 1)
			dims[n++] = d;
	for (int i = 1; i < n; i++) /* insertion sort by stride */
		for (int j = i; j > 0 && pl->stride[dims[j]] < pl->stride[dims[j - 1]]; j--) {
			int x = dims[j];
			dims[j] = dims[j - 1];
			dims[j - 1] = x;
		}
	for (int i = 0; i < n; i++) {
		li += c[dims[i]] * mul;
		mul *= pl->size[dims[i]];
	}
	return li;
}

static pp_status ring_build(build *b, pp_group grp)
{
	ring *g = &b->g[grp];
	long long R = b->R;
	g->key = ppi_malloc((size_t)R * sizeof *g->key);
	g->pos = ppi_malloc((size_t)R * sizeof *g->pos);
	g->order = ppi_malloc((size_t)R * sizeof *g->order);
	g->at = ppi_malloc((size_t)R * sizeof *g->at);
	if (!g->key || !g->pos || !g->order || !g->at)
		return PP_ENOMEM;
	const pp_placement *pl = b->pl;
	const pp_plan *p = b->p;
	long long L = R / (p->pp > 0 ? p->pp : 1);
	long long etp = p->etp > 0 ? p->etp : p->tp, ep = p->ep > 0 ? p->ep : 1;
	bool tp2_member = p->tp2 > 1 && !p->summa;
	for (long long r = 0; r < R; r++) {
		int c[PP_NDIMS];
		pp_place_coords(pl, r, c);
		long long pos = 0, li = 0, stage = c[PP_DIM_PP];
		switch (grp) {
		case PP_GROUP_TP: pos = c[PP_DIM_TP] * pl->stride[PP_DIM_TP]; break;
		case PP_GROUP_CP: pos = c[PP_DIM_CP] * pl->stride[PP_DIM_CP]; break;
		case PP_GROUP_TP2: pos = c[PP_DIM_TP2] * pl->stride[PP_DIM_TP2]; break;
		case PP_GROUP_PP: pos = c[PP_DIM_PP] * pl->stride[PP_DIM_PP]; break;
		case PP_GROUP_EMB:
			/* first and last stage of one pipeline */
			pos = c[PP_DIM_PP] * pl->stride[PP_DIM_PP];
			break;
		case PP_GROUP_DP:
			pos = c[PP_DIM_DP] * pl->stride[PP_DIM_DP] +
			      c[PP_DIM_CP] * pl->stride[PP_DIM_CP] +
			      (tp2_member ? c[PP_DIM_TP2] * pl->stride[PP_DIM_TP2] : 0);
			break;
		default: li = stage_local(pl, c); break;
		}
		switch (grp) {
		case PP_GROUP_ETP:
			g->key[r] = stage * L + li / etp * etp;
			g->pos[r] = li % etp;
			break;
		case PP_GROUP_EP:
			g->key[r] = stage * L + li / (etp * ep) * (etp * ep) + li % etp;
			g->pos[r] = li / etp % ep;
			break;
		case PP_GROUP_EDP:
			g->key[r] = stage * L + li % (etp * ep);
			g->pos[r] = li / (etp * ep);
			break;
		default:
			g->key[r] = r - pos;
			g->pos[r] = pos;
			break;
		}
		g->order[r] = r;
	}
	sort_ring = g;
	qsort(g->order, (size_t)R, sizeof *g->order, by_key_pos);
	sort_ring = NULL;
	for (long long i = 0; i < R; i++)
		g->at[g->order[i]] = i;
	return PP_OK;
}

/* First index in order of rank r's group, and the group's size. */
static void ring_span(const ring *g, long long R, long long r, long long *first, long long *n)
{
	long long i = g->at[r], k = g->key[r];
	long long a = i, z = i;
	while (a > 0 && g->key[g->order[a - 1]] == k)
		a--;
	while (z + 1 < R && g->key[g->order[z + 1]] == k)
		z++;
	*first = a;
	*n = z - a + 1;
}

/* The next member of r's group in ring order (wrapping). */
static long long ring_next(const ring *g, long long R, long long r)
{
	long long i = g->at[r];
	if (i + 1 < R && g->key[g->order[i + 1]] == g->key[r])
		return g->order[i + 1];
	long long first, n;
	ring_span(g, R, r, &first, &n);
	return g->order[first];
}

static void add(build *b, pp_traffic_type type, long long src_rank, long long dst_rank,
                double bytes)
{
	if (bytes <= 0 || src_rank == dst_rank)
		return;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4096;
		pp_traffic_cell *c = ppi_realloc(b->c, cap * sizeof *c);
		if (!c) {
			b->oom = true;
			return;
		}
		b->c = c;
		b->cap = cap;
	}
	pp_gpu_loc s, d;
	pp_place_locate(b->pl, src_rank, &s);
	pp_place_locate(b->pl, dst_rank, &d);
	pp_traffic_cell *x = &b->c[b->n++];
	x->src = s.gpu;
	x->dst = d.gpu;
	x->type = type;
	x->tier = s.domain == d.domain && b->pl->domain > 1 ? PP_TIER_NVLINK : PP_TIER_NIC;
	x->bytes = bytes;
}

static pp_traffic_type type_of(const pp_profile_entry *e)
{
	switch (e->rule) {
	case PP_RULE_ZERO3: return PP_TRAFFIC_ZERO3;
	case PP_RULE_DP:
	case PP_RULE_DP_GATHER: return PP_TRAFFIC_DP;
	case PP_RULE_EMB_SYNC: return PP_TRAFFIC_EMB;
	default: break;
	}
	switch (e->group) {
	case PP_GROUP_CP: return PP_TRAFFIC_CP;
	case PP_GROUP_EP:
	case PP_GROUP_ETP: return PP_TRAFFIC_EP;
	case PP_GROUP_DP:
	case PP_GROUP_EDP: return PP_TRAFFIC_DP;
	default: return PP_TRAFFIC_TP;
	}
}

/*
 * DeepEP's dispatch or combine of rank r, `vol` bytes sent in all
 * (pp_moe_dispatch_copies): the network copies to the members of r's EP
 * group on other nodes that hold r's place among their node's members,
 * the NVLink copies to the members on r's own node, each evenly.
 */
static void dedup_traffic(build *b, pp_traffic_type type, long long r, double vol)
{
	const ring *g = &b->g[PP_GROUP_EP];
	long long first, n;
	ring_span(g, b->R, r, &first, &n);
	pp_gpu_loc self, x;
	pp_place_locate(b->pl, r, &self);
	/* r's place among its node's members, and how many share its node */
	long long place = 0, nd = 0;
	for (long long i = 0; i < n; i++) {
		pp_place_locate(b->pl, g->order[first + i], &x);
		if (x.domain == self.domain) {
			if (g->order[first + i] == r)
				place = nd;
			nd++;
		}
	}
	double nic, nvl;
	pp_moe_dispatch_copies(b->dedup->num_experts, b->dedup->top_k, b->dedup->num_groups,
	                       b->dedup->group_topk, (int)n, (int)nd, &nic, &nvl);
	if (!(nic + nvl > 0))
		return;
	long long nodes = nd > 0 ? n / nd : 1;
	double to_node = nodes > 1 ? vol * nic / (nic + nvl) / (double)(nodes - 1) : 0;
	double to_peer = nd > 1 ? vol * nvl / (nic + nvl) / (double)(nd - 1) : 0;
	long long *dom = ppi_malloc((size_t)n * sizeof *dom);
	if (!dom) {
		b->oom = true;
		return;
	}
	for (long long i = 0; i < n; i++) {
		long long q = g->order[first + i], at = 0;
		pp_place_locate(b->pl, q, &x);
		dom[i] = x.domain;
		for (long long j = 0; j < i; j++) /* q's place among its node's members */
			at += dom[j] == x.domain;
		if (x.domain == self.domain)
			add(b, type, r, q, to_peer);
		else if (at == place)
			add(b, type, r, q, to_node);
	}
	free(dom);
}

/* The traffic of rank r's share of profile entry e. */
static void entry_traffic(build *b, const pp_profile_entry *e, long long r, int stage, double m)
{
	const pp_plan *p = b->p;
	long long R = b->R;
	if (e->rule == PP_RULE_PP) {
		/* The schedule's links (schedule_type.h): this rank's activations
		 * along its own links, its gradients back along the links of the
		 * ranks that send to it. */
		const pp_schedule_type *sched = pp_schedule_type_of(p->schedule);
		int c[PP_NDIMS];
		pp_place_coords(b->pl, r, c);
		double act = e->wire_bytes;
		pp_sched_link l[PP_SCHED_MAX_LINKS];
		int n = sched->links(p, stage, l);
		for (int i = 0; i < n; i++) {
			c[PP_DIM_PP] = l[i].peer;
			add(b, PP_TRAFFIC_PP_FWD, r, pp_place_rank(b->pl, c), act * l[i].count * m);
		}
		for (int q = 0; q < p->pp; q++) {
			n = sched->links(p, q, l);
			for (int i = 0; i < n; i++)
				if (l[i].peer == stage && q != stage) {
					c[PP_DIM_PP] = q;
					add(b, PP_TRAFFIC_PP_BWD, r, pp_place_rank(b->pl, c),
					    act * l[i].count * m);
				}
		}
		return;
	}
	double per =
	    e->rule == PP_RULE_DP || e->rule == PP_RULE_DP_GATHER || e->rule == PP_RULE_EMB_SYNC
	        ? 1
	        : m;
	double vol = e->wire_bytes * e->count * e->times * per;
	if (vol <= 0)
		return;
	pp_traffic_type type = type_of(e);
	const ring *g = &b->g[e->group];
	if (e->group == PP_GROUP_EMB) {
		int c[PP_NDIMS];
		pp_place_coords(b->pl, r, c);
		c[PP_DIM_PP] = stage == 0 ? p->pp - 1 : 0;
		add(b, type, r, pp_place_rank(b->pl, c), vol);
		return;
	}
	if (e->kind == PP_COLL_ALLTOALL && b->dedup && e->group == PP_GROUP_EP) {
		dedup_traffic(b, type, r, vol);
		return;
	}
	if (e->kind == PP_COLL_ALLTOALL) {
		long long first, n;
		ring_span(g, R, r, &first, &n);
		/* Skewed routing: pair (a, i) as the routing model's expected matrix;
		 * a combine runs the dispatch's transpose (pp_moe_layer_alltoalls). */
		bool skew = b->moe_w && e->group == PP_GROUP_EP && n == b->moe_n;
		bool combine = strstr(e->name, "combine") != NULL;
		long long a = g->at[r] - first;
		for (long long i = 0; n > 1 && i < n; i++) {
			double w = !skew ? 1 : combine ? b->moe_w[i * n + a] : b->moe_w[a * n + i];
			add(b, type, r, g->order[first + i], vol / (double)(n - 1) * w);
		}
		return;
	}
	add(b, type, r, ring_next(g, R, r), vol);
}

static int by_cell(const void *a, const void *b)
{
	const pp_traffic_cell *x = a, *y = b;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* b->moe_w of the scenario's --moe-routing (job.moe_routing): the expected
 * dispatch matrix of pp_moe_alltoall_run (no samples; with drift the mean
 * over the run's steps) over the same routing's at skew 0, pair by pair.  Left NULL without a routing, at ep 1, or when the
 * model cannot be evaluated (the traffic is then the uniform one). */
static void moe_weights(build *b, const pp_scenario *sc)
{
	const pp_job *job = pp_scenario_job(sc);
	pp_moe_routing r;
	if (!job->moe_routing.set ||
	    pp_moe_routing_of_plan(pp_scenario_model(sc), pp_scenario_system(sc), job, b->p, &r,
	                           NULL))
		return;
	r.capacity_factor = job->moe_routing.capacity_factor;
	r.drift_steps = job->moe_routing.drift_steps;
	pp_moe_result uni, sk;
	if (pp_moe_alltoall(&r, 0, 0, 1, 0, &uni, NULL))
		return;
	r.skew = job->moe_routing.skew;
	if (pp_moe_alltoall_run(&r, pp_moe_run_steps(job), 0, 1, 0, &sk, NULL)) {
		pp_moe_result_free(&uni);
		return;
	}
	int n = r.ep;
	b->moe_w = ppi_malloc((size_t)n * n * sizeof *b->moe_w);
	for (int i = 0; b->moe_w && i < n * n; i++)
		b->moe_w[i] = uni.expected[i] > 0 ? sk.expected[i] / uni.expected[i] : 1;
	b->moe_n = b->moe_w ? n : 0;
	pp_moe_result_free(&uni);
	pp_moe_result_free(&sk);
}

static void build_free(build *b)
{
	free(b->moe_w);
	for (int i = 0; i < PP_NGROUPS; i++) {
		free(b->g[i].key);
		free(b->g[i].pos);
		free(b->g[i].order);
		free(b->g[i].at);
	}
	free(b->c);
}

pp_status pp_traffic_build(const pp_scenario *sc, pp_traffic **out, pp_error *err)
{
	return pp_traffic_build_map(sc, pp_scenario_placement(sc)->rank_gpu, out, err);
}

pp_status pp_traffic_build_map(const pp_scenario *sc, const long long *rank_gpu, pp_traffic **out,
                               pp_error *err)
{
	*out = NULL;
	build b;
	memset(&b, 0, sizeof b);
	pp_placement pl = *pp_scenario_placement(sc);
	pl.rank_gpu = rank_gpu;
	for (long long r = 0; rank_gpu && r < pl.ranks; r++)
		if (rank_gpu[r] < 0 || rank_gpu[r] >= pl.ranks)
			return ppi_fail(err, "", "rank_gpu",
			                "rank %lld on GPU %lld, outside 0..%lld", r, rank_gpu[r],
			                pl.ranks - 1);
	b.pl = &pl;
	b.p = pp_scenario_plan(sc);
	b.R = b.pl->ranks;
	pp_status st = PP_OK;
	for (int g = 0; g < PP_NGROUPS && !st; g++)
		st = ring_build(&b, (pp_group)g);
	if (!st)
		moe_weights(&b, sc);
	if (pp_scenario_job(sc)->moe_dispatcher != PP_DISPATCH_ALLTOALL)
		b.dedup = &pp_scenario_model(sc)->moe;
	pp_stage_profile *prof = ppi_malloc(sizeof *prof);
	pp_work *ws = ppi_malloc(sizeof *ws);
	pp_traffic *t = ppi_calloc(1, sizeof *t);
	if (st || !prof || !ws || !t) {
		free(prof);
		free(ws);
		free(t);
		build_free(&b);
		return ppi_fail(err, "", "traffic", "out of memory");
	}
	pp_work_init(ws);
	double m = (double)b.p->microbatches;
	for (int s = 0; s < b.p->pp && !st; s++) {
		st = pp_scenario_profile(sc, s, ws, prof, err);
		for (long long r = 0; r < b.R && !st; r++) {
			int c[PP_NDIMS];
			pp_place_coords(b.pl, r, c);
			if (c[PP_DIM_PP] != s)
				continue;
			for (int i = 0; i < prof->n; i++)
				if (prof->e[i].coll)
					entry_traffic(&b, &prof->e[i], r, s, m);
		}
	}
	free(prof);
	free(ws);
	if (!st && b.oom)
		st = ppi_fail(err, "", "traffic", "out of memory");
	if (st) {
		free(t);
		build_free(&b);
		return st;
	}
	/* Merge the contributions into cells. */
	qsort(b.c, b.n, sizeof *b.c, by_cell);
	size_t k = 0;
	for (size_t i = 0; i < b.n; i++) {
		if (k > 0 && by_cell(&b.c[k - 1], &b.c[i]) == 0)
			b.c[k - 1].bytes += b.c[i].bytes;
		else
			b.c[k++] = b.c[i];
	}
	t->gpus = b.R;
	t->gpus_per_node = b.pl->gpus_per_node;
	t->domain = b.pl->domain;
	const pp_system *sys = pp_scenario_system(sc);
	snprintf(t->tier_label[PP_TIER_NVLINK], sizeof t->tier_label[0], "%s",
	         pp_intra_link_label(sys));
	snprintf(t->tier_label[PP_TIER_NIC], sizeof t->tier_label[0], "%s",
	         pp_inter_network_label(sys));
	t->microbatches = b.p->microbatches;
	t->n = k;
	t->cell = b.c;
	b.c = NULL;
	long long nodes = (b.R + t->gpus_per_node - 1) / t->gpus_per_node;
	t->nodes = nodes;
	t->node_out_bytes = ppi_calloc((size_t)(nodes > 0 ? nodes : 1), sizeof *t->node_out_bytes);
	t->node_in_bytes = ppi_calloc((size_t)(nodes > 0 ? nodes : 1), sizeof *t->node_in_bytes);
	build_free(&b);
	if (!t->node_out_bytes || !t->node_in_bytes) {
		pp_traffic_free(t);
		return ppi_fail(err, "", "traffic", "out of memory");
	}
	for (size_t i = 0; i < k; i++) {
		const pp_traffic_cell *x = &t->cell[i];
		t->total_bytes[x->type][x->tier] += x->bytes;
		long long sn = x->src / t->gpus_per_node, dn = x->dst / t->gpus_per_node;
		if (sn != dn && sn < nodes && dn < nodes) {
			t->node_out_bytes[sn] += x->bytes;
			t->node_in_bytes[dn] += x->bytes;
		}
	}
	for (long long i = 0; i < nodes; i++)
		if (t->node_out_bytes[i] > t->max_nic_egress_bytes)
			t->max_nic_egress_bytes = t->node_out_bytes[i];
	*out = t;
	return PP_OK;
}

pp_status pp_traffic_of_estimate(const pp_estimate *e, pp_traffic **out, pp_error *err)
{
	*out = NULL;
	pp_scenario *sc = NULL;
	pp_status st = pp_scenario_new(&e->model, &e->system, &e->job, &e->plan, e->gpus, &sc, err);
	if (!st)
		st = pp_traffic_build(sc, out, err);
	pp_scenario_free(sc);
	return st;
}

pp_status pp_traffic_of_estimate_mapped(const pp_estimate *e, const long long *worker_gpu,
                                        pp_traffic **out, pp_error *err)
{
	*out = NULL;
	if (e->plan.cp > 1 || e->plan.tp2 > 1)
		return ppi_fail(err, "", "plan",
		                "a worker mapping covers pp x tp x dp ranks; cp and tp2 must be 1");
	pp_scenario *sc = NULL;
	pp_status st = pp_scenario_new(&e->model, &e->system, &e->job, &e->plan, e->gpus, &sc, err);
	if (st)
		return st;
	const pp_placement *pl = pp_scenario_placement(sc);
	long long *rank_gpu = ppi_malloc((size_t)pl->ranks * sizeof *rank_gpu);
	if (!rank_gpu) {
		pp_scenario_free(sc);
		return ppi_fail(err, "", "traffic", "out of memory");
	}
	/* worker (x, y, z) is the rank with pp, tp, dp coordinates x, y, z
	 * under the plan's order */
	int tp = e->plan.tp, dp = (int)(pl->ranks / ((long long)tp * e->plan.pp));
	for (long long w = 0; w < pl->ranks; w++) {
		int c[PP_NDIMS] = {0};
		c[PP_DIM_TP] = (int)(w % tp);
		c[PP_DIM_DP] = (int)(w / tp % dp);
		c[PP_DIM_PP] = (int)(w / ((long long)tp * dp));
		rank_gpu[pp_place_rank(pl, c)] = worker_gpu[w];
	}
	st = pp_traffic_build_map(sc, rank_gpu, out, err);
	free(rank_gpu);
	pp_scenario_free(sc);
	return st;
}

void pp_traffic_free(pp_traffic *t)
{
	if (!t)
		return;
	free(t->cell);
	free(t->node_out_bytes);
	free(t->node_in_bytes);
	free(t);
}

double pp_traffic_bytes(const pp_traffic *t, pp_traffic_type type, long long src, long long dst)
{
	pp_traffic_cell key = {src, dst, type, PP_TIER_NVLINK, 0};
	const pp_traffic_cell *x = bsearch(&key, t->cell, t->n, sizeof *t->cell, by_cell);
	return x ? x->bytes : 0;
}

double pp_traffic_sent(const pp_traffic *t, pp_traffic_type type, long long gpu)
{
	double s = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->cell[i].type == type && t->cell[i].src == gpu)
			s += t->cell[i].bytes;
	return s;
}

double pp_traffic_received(const pp_traffic *t, pp_traffic_type type, long long gpu)
{
	double s = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->cell[i].type == type && t->cell[i].dst == gpu)
			s += t->cell[i].bytes;
	return s;
}
