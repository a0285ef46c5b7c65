/*
 * NCCL's protocols as data: the latency and bandwidth factors of NCCL's own
 * tuning model, per (algorithm, protocol).  Every number below is NCCL's, from
 * src/graph/tuning.cc (github.com/NVIDIA/nccl, master at 5067397c; the
 * latencies are those of 2.23.4-1, which added PAT; ring LL's 0.5 dates from
 * 2.21 (2.19: 1/4 or 1/3), and ring LL128's 0.92 holds at every ppn on
 * master (2.21-2.23: 0.7 at one GPU per node)):
 *   - ncclTunerConstantsDefaults.baseLatencies, .hwLatencies: microseconds;
 *   - ncclTopoTuneModel: the per-step latency sums, the ring/tree protocol
 *     bandwidth factors ("Various model refinements"), the LL128 enable rule;
 *   - ncclPatEnable: PAT at one GPU per node only.
 * paraplan keeps its own alpha-beta formulas (src/cost/coll_*.c) as Simple's,
 * since the system's alpha and efficiency are fitted to nccl-tests logs, and
 * scales them to LL128 and LL by NCCL's ratios (src/cost/coll.c,
 * docs/collectives.md).  Not taken: the caps that need NCCL's channel count
 * (llMaxBws, perChMaxRingLL128Bws, perChMaxTree*Bws), the graph's own
 * network latency (latencyInter, 0 here) and the tree's size correction.
 */
#include <stddef.h>

#include "coll_int.h"

/* NCCL's hardware classes (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET). */
enum { HW_NVLINK = 0, HW_PCI = 1, HW_NET = 2, NHW = 3 };

/* NCCL's protocol order in its tables is LL, LL128, Simple; paraplan's is
 * Simple, LL128, LL (Simple = 0): this maps paraplan's to NCCL's column. */
static const int nccl_col[PP_NPROTOS] = {2, 1, 0};

/* baseLatencies (us), columns LL, LL128, Simple; rows by pp_coll_nccl_table
 * (NONE has none).  NVLS's base is 0 and its latency is hwLatencies alone
 * (ncclTopoTuneModel assigns, not adds, for NVLS). */
static const double base_us[PP_NCCL_PAT + 1][PP_NPROTOS] = {
    [PP_NCCL_RING] = {6.6, 14.0, 8.4},
    [PP_NCCL_TREE] = {6.8, 14.0, 8.4},
    [PP_NCCL_NVLS] = {0, 0, 0},
    [PP_NCCL_PAT] = {8.0, 8.0, 8.0},
};

/* hwLatencies (us) per step, [hardware][table][LL, LL128, Simple]. */
static const double hw_us[NHW][PP_NCCL_PAT + 1][PP_NPROTOS] =
    {
        [HW_NVLINK] =
            {
                [PP_NCCL_TREE] = {0.6, 1.25, 4.0},
                [PP_NCCL_RING] = {0.6, 1.9, 3.4},
                [PP_NCCL_NVLS] = {0, 0, 25},
                [PP_NCCL_PAT] = {0, 0, 4.0},
            },
        [HW_PCI] =
            {
                [PP_NCCL_TREE] = {1.0, 1.9, 4.0},
                [PP_NCCL_RING] = {1.0, 2.5, 5.7},
                [PP_NCCL_NVLS] = {0, 0, 0},
                [PP_NCCL_PAT] = {0, 0, 4.0},
            },
        [HW_NET] =
            {
                [PP_NCCL_TREE] = {5.0, 8.5, 14},
                [PP_NCCL_RING] = {2.7, 4.0, 14.0},
                [PP_NCCL_NVLS] = {0, 0, 18},
                [PP_NCCL_PAT] = {0, 0, 14},
            },
};

/* getNetOverhead: 1 us per network post on x86 Intel hosts (2 on AMD; the
 * shipped systems are Intel), three times that for Simple. */
#define NET_OVERHEAD_US 1.0
#define NET_OVERHEAD_SIMPLE 3.0

/* ncclTopoTuneModel's protocol bandwidth factors on the bus bandwidth. */
#define RING_LL_BW 0.5                    /* busBw * .5 */
#define RING_LL128_BW 0.92                /* busBw * 0.92, "120.0/128.0" */
#define TREE_LL_BW (1.0 / 3.8)            /* busBw * 1.0/3.8 */
#define TREE_LL128_BW_NODE (7.0 / 9.0)    /* nNodes == 1 */
#define TREE_LL128_BW_NET (120.0 / 128.0) /* nNodes > 1 */

/* PAT's latency: base + log2i(nNodes) * interLat / 3.5 + nRanks * 2.8 us. */
#define PAT_LOG_DIV 3.5
#define PAT_RANK_US 2.8

static const char *const proto_names[PP_NPROTOS] = {"simple", "LL128", "LL"};

const char *pp_coll_proto_name(pp_coll_proto p)
{
	return (unsigned)p < PP_NPROTOS ? proto_names[p] : "?";
}

/* NCCL's log2i: floor(log2 n), 0 for n <= 1. */
static int log2i(int n)
{
	int k = 0;
	while (n > 1) {
		n >>= 1;
		k++;
	}
	return k;
}

static double hw(int h, pp_coll_nccl_table t, pp_coll_proto p)
{
	return hw_us[h][t][nccl_col[p]];
}

double pp_coll_nccl_lat_us(pp_coll_nccl_table table, pp_coll_proto p, pp_coll_kind kind, int n,
                           int nd, bool nvlink)
{
	if (table == PP_NCCL_NONE || table > PP_NCCL_PAT || (unsigned)p >= PP_NPROTOS || n < 2)
		return 0;
	if (nd < 1)
		nd = 1;
	if (nd > n)
		nd = n;
	int nodes = (n + nd - 1) / nd, ppn = n / nodes;
	int intra_hw = nvlink ? HW_NVLINK : HW_PCI;
	double base = base_us[table][nccl_col[p]];
	double intra = hw(intra_hw, table, p);
	/* "With ppn=1 latencies are fully exposed, use the Tree network latency" */
	double inter = ppn == 1 ? hw(HW_NET, PP_NCCL_TREE, p) : hw(HW_NET, table, p);
	switch (table) {
	case PP_NCCL_RING: {
		if (kind == PP_COLL_BROADCAST || kind == PP_COLL_REDUCE) {
			/* the pipelined ring, channels not shared: nsteps = nRanks steps
			 * of the ring's latency, Simple's at the tree's ("chunk
			 * latency") */
			int h = nodes == 1 ? intra_hw : HW_NET;
			double lat =
			    p == PP_PROTO_SIMPLE ? hw(h, PP_NCCL_TREE, p) : hw(h, table, p);
			return base + n * lat;
		}
		int nsteps = kind == PP_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
		int ninter = nodes == 1                  ? 0
		             : kind == PP_COLL_ALLREDUCE ? 2 * (nodes - 1)
		                                         : nodes - 1;
		if (nodes > 1) {
			double ov = p == PP_PROTO_SIMPLE ? NET_OVERHEAD_US * NET_OVERHEAD_SIMPLE
			                                 : NET_OVERHEAD_US;
			if (intra < ov)
				intra = ov;
		}
		return base + (nsteps - ninter) * intra + ninter * inter;
	}
	case PP_NCCL_TREE: return base + 2 * ((ppn - 1) * intra + log2i(nodes) * inter);
	case PP_NCCL_NVLS:
		if (p != PP_PROTO_SIMPLE)
			return 0;
		return intra + (nodes > 1 ? inter : 0);
	case PP_NCCL_PAT:
		if (p != PP_PROTO_SIMPLE)
			return 0;
		return base + log2i(nodes) * (inter / PAT_LOG_DIV) + n * PAT_RANK_US;
	case PP_NCCL_NONE:
	default: return 0;
	}
}

/*
 * llMaxBws (GB/s of bus bandwidth), LL's ceiling: in one node by GPU
 * generation (Volta, Ampere, Hopper, Blackwell: 39.0, 87.7, 141.0, 282.0),
 * across nodes by host CPU and node count (Intel: 39.0 on two nodes, 20.4 on
 * more; AMD: 22.5, 19.0).  The shipped system files do not name the host CPU:
 * Intel's row is taken (DGX H100/H200 are Intel; DGX A100 is AMD, whose
 * ceiling is 7% lower on more than two nodes).  0: no ceiling known (a GPU
 * without an NVIDIA compute capability).
 */
static double ll_max_bw(const pp_system *s, int n, int nd)
{
	static const double node_gbs[4] = {39.0, 87.7, 141.0, 2 * 141.0};
	static const double intel_gbs[2] = {39.0, 20.4};
	int cc = s->gpu.compute_capability_x10;
	int nodes = nd >= n ? 1 : (n + nd - 1) / nd;
	if (nodes > 1)
		return intel_gbs[nodes > 2] * 1e9;
	if (cc <= 0)
		return 0;
	int idx = cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
	return node_gbs[idx] * 1e9;
}

double pp_coll_nccl_bw_factor(pp_coll_nccl_table table, pp_coll_proto p, int n, int nd,
                              const pp_system *s, double bus_bw)
{
	if (p == PP_PROTO_SIMPLE)
		return 1;
	double f;
	if (table == PP_NCCL_RING)
		f = p == PP_PROTO_LL ? RING_LL_BW : RING_LL128_BW;
	else if (table == PP_NCCL_TREE)
		f = p == PP_PROTO_LL ? TREE_LL_BW
		    : nd >= n        ? TREE_LL128_BW_NODE
		                     : TREE_LL128_BW_NET;
	else
		return 0; /* NVLS, PAT and the non-NCCL algorithms: Simple only */
	double cap = p == PP_PROTO_LL ? ll_max_bw(s, n, nd) : 0;
	if (cap > 0 && bus_bw > 0 && f * bus_bw > cap)
		f = cap / bus_bw;
	return f;
}

bool pp_coll_proto_enabled(pp_coll_nccl_table table, pp_coll_proto p, const pp_system *s)
{
	if (p == PP_PROTO_SIMPLE)
		return true;
	if (table != PP_NCCL_RING && table != PP_NCCL_TREE)
		return false;
	if (p == PP_PROTO_LL128)
		/* "Enable LL128 by default only on ... NVLink": typeIntra <=
		 * PATH_NVB, and not below compute capability 7.0 */
		return s->nvlink_bytes_per_s > 0 && s->gpu.compute_capability_x10 >= 70;
	return true;
}
