/*
 * Roofline compute time and alpha-beta collective time.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "paraplan/cost.h"

/* ------------------------------------------------------------ placement */

/* True when the order token at `s` (ending at '-' or the end) is `want`. */
static bool tok_is(const char *s, const char *want)
{
	size_t n = strlen(want);
	return strncmp(s, want, n) == 0 && (s[n] == '-' || s[n] == '\0');
}

/* The next token of the order after `s`, or NULL. */
static const char *tok_next(const char *s)
{
	const char *dash = strchr(s, '-');
	return dash ? dash + 1 : NULL;
}

enum { D_TP, D_TP2, D_CP, D_EP, D_DP, D_PP, ND };

/* The order parsed once: each dimension's rank stride and size, and the
 * dimensions innermost first. */
typedef struct order_info {
	int n;
	int dim[ND];
	long long size[ND], stride[ND];
} order_info;

static void parse_order(const pp_plan *p, order_info *o)
{
	static const char *const names[ND] = {"tp", "tp2", "cp", "ep", "dp", "pp"};
	const long long sizes[ND] = {p->tp,
	                             p->tp2 > 0 ? p->tp2 : 1,
	                             p->cp,
	                             1 /* EP folds into
	                             the dp x cp ranks */
	                             ,
	                             p->dp,
	                             p->pp};
	o->n = 0;
	for (int d = 0; d < ND; d++) {
		o->size[d] = sizes[d];
		o->stride[d] = -1;
	}
	long long stride = 1;
	for (const char *t = p->order; t && *t && o->n < ND; t = tok_next(t))
		for (int d = 0; d < ND; d++)
			if (tok_is(t, names[d]) && o->stride[d] < 0) {
				o->stride[d] = stride;
				o->dim[o->n++] = d;
				stride *= sizes[d];
				break;
			}
	/* A dimension the order leaves out sits outside everything named. */
	for (int d = 0; d < ND; d++)
		if (o->stride[d] < 0)
			o->stride[d] = stride;
}

static pp_layout layout_of(long long stride, long long size, const pp_system *s)
{
	pp_layout l;
	l.size = (int)size;
	long long dom = s->nvlink_bytes_per_s > 0 ? s->nvlink_domain : 1;
	long long in;
	if (stride >= dom)
		in = 1;
	else
		in = dom / stride < size ? dom / stride : size;
	l.per_domain = in < 1 ? 1 : (int)in;
	return l;
}

void pp_plan_layouts(const pp_plan *p, const pp_system *s, pp_layout out[PP_NGROUPS])
{
	order_info o;
	parse_order(p, &o);
	int etp = p->etp > 0 ? p->etp : p->tp;
	long long tp_stride = o.stride[D_TP];
	out[PP_GROUP_TP] = layout_of(tp_stride, p->tp, s);
	out[PP_GROUP_CP] = layout_of(o.stride[D_CP], p->cp, s);
	out[PP_GROUP_PP] = layout_of(o.stride[D_PP], p->pp, s);
	out[PP_GROUP_TP2] = layout_of(o.stride[D_TP2], o.size[D_TP2], s);
	out[PP_GROUP_ETP] = layout_of(tp_stride, etp, s);
	/* Megatron's expert ranks: etp innermost, then ep, then expert-dp, all
	 * inside the tp x cp x dp ranks of one stage. */
	out[PP_GROUP_EP] = layout_of(tp_stride * etp, p->ep, s);
	long long inner = (long long)p->tp * p->cp * p->dp;
	out[PP_GROUP_EDP] = layout_of(tp_stride * etp * p->ep, inner / ((long long)p->ep * etp), s);
	/* Gradients reduce over dp x cp and, with 2D TP's weights replicated over
	 * n_2, x tp2 (seed 003 App. A: "the combined n_d x n_2 GPU group").  When
	 * the member dimensions sit next to each other in the order they form one
	 * contiguous group starting at the innermost; otherwise place it by dp. */
	bool tp2_member = p->tp2 > 1 && !p->summa;
	long long size = (long long)p->cp * p->dp * (tp2_member ? p->tp2 : 1);
	long long start = -1, got = 1;
	bool contiguous = true;
	for (int i = 0; i < o.n && got < size; i++) {
		int d = o.dim[i];
		bool member = d == D_DP || (d == D_CP && p->cp > 1) || (d == D_TP2 && tp2_member);
		if (member) {
			if (start < 0)
				start = o.stride[d];
			got *= o.size[d];
		} else if (start >= 0 && o.size[d] > 1) {
			contiguous = false;
			break;
		}
	}
	if (!contiguous || start < 0)
		start = o.stride[D_DP];
	out[PP_GROUP_DP] = layout_of(start, size, s);
	pp_layout emb = layout_of(o.stride[D_PP] * (p->pp - 1 > 0 ? p->pp - 1 : 1), 2, s);
	if (p->pp < 2)
		emb.size = 1;
	out[PP_GROUP_EMB] = emb;
}

pp_layout pp_group_layout(const pp_plan *p, const pp_system *s, pp_group g)
{
	pp_layout all[PP_NGROUPS];
	pp_plan_layouts(p, s, all);
	return (unsigned)g < PP_NGROUPS ? all[g] : (pp_layout){1, 1};
}

/* -------------------------------------------------------------- compute */

static double tensor_peak(const pp_gpu *g, pp_precision prec, bool fp8_op)
{
	switch (prec) {
	case PP_PREC_FP8:
		if (fp8_op && g->fp8_flops > 0)
			return g->fp8_flops;
		return g->bf16_flops > 0 ? g->bf16_flops : g->fp16_flops;
	case PP_PREC_BF16: return g->bf16_flops > 0 ? g->bf16_flops : g->fp16_flops;
	case PP_PREC_FP16: return g->fp16_flops;
	case PP_PREC_FP32:
	default: return g->tf32_flops > 0 ? g->tf32_flops : g->fp32_flops;
	}
}

double pp_op_time(const pp_gpu *g, pp_precision prec, const pp_op *op)
{
	const pp_gpu_eff *e = &g->eff;
	double bw = g->memory_bw_bytes_per_s * e->memory;
	double count = op->count > 0 ? op->count : 1;
	switch (op->kind) {
	case PP_OP_GEMM: {
		/* Efficiency grows with the work of one GEMM: small GEMMs cannot fill
		 * the GPU (waves, tails); F/(F + F_half) saturates at `gemm`. */
		double one = op->flops / count;
		bool fp8 = prec == PP_PREC_FP8 && op->fp8 && g->fp8_flops > 0;
		double top = fp8 && e->gemm_fp8 > 0 ? e->gemm_fp8 : e->gemm;
		double eff = top * one / (one + e->gemm_half_flops);
		double tc = op->flops / (tensor_peak(g, prec, op->fp8) * eff);
		double tm = op->bytes / bw;
		return (tc > tm ? tc : tm) + e->kernel_s;
	}
	case PP_OP_ATTN: {
		double tc = op->flops / (tensor_peak(g, prec, false) * e->attn);
		double tm = op->bytes / bw;
		return (tc > tm ? tc : tm) + e->kernel_s;
	}
	case PP_OP_ELEM:
	default: {
		double tc = op->flops / g->fp32_flops;
		double tm = op->bytes / bw;
		return (tc > tm ? tc : tm) + e->kernel_s;
	}
	}
}

/* ------------------------------------------------------- communication */

double pp_allreduce_ring_s(double bytes, int n, double bw, double alpha)
{
	if (n <= 1)
		return 0;
	return 2.0 * (n - 1) * alpha + 2.0 * (n - 1) / n * bytes / bw;
}

double pp_allreduce_tree_s(double bytes, int n, double bw, double alpha)
{
	if (n <= 1)
		return 0;
	return 2.0 * log2((double)n) * (alpha + bytes / bw);
}

/* Bandwidths one GPU of the group sees: NVLink inside the domain, and its share
 * of the node's NICs across domains. */
static void link_bw(const pp_system *s, double *bw_f, double *bw_s)
{
	*bw_f = s->nvlink_bytes_per_s * s->nvlink_eff;
	double nic_share = s->gpus_per_node > 0 ? (double)s->nics_per_node / s->gpus_per_node : 0;
	*bw_s = s->nic_bytes_per_s * nic_share * s->nic_eff;
	if (*bw_f <= 0) /* no NVLink: PCIe-class peer traffic, modelled as the NIC share */
		*bw_f = *bw_s > 0 ? *bw_s : 1e9;
	if (*bw_s <= 0)
		*bw_s = *bw_f;
}

/*
 * All-gather or reduce-scatter of a `bytes` buffer on n GPUs, nd per domain, as
 * a ring (seed 003 S2): alpha_s (n/nd - 1) + alpha_f (n - n/nd) +
 * (n-1)/n max(V / (nd beta_s), V / beta_f).
 */
static double ring_half(const pp_system *s, int n, int nd, double V)
{
	double bw_f, bw_s;
	link_bw(s, &bw_f, &bw_s);
	if (n <= 1)
		return 0;
	if (nd >= n)
		return s->nvlink_latency_s * (n - 1) + (double)(n - 1) / n * V / bw_f;
	double nodes = (double)n / nd;
	double lat = s->nic_latency_s * (nodes - 1) + s->nvlink_latency_s * (n - nodes);
	double tf = V / bw_f, ts = V / (nd * bw_s);
	return lat + (double)(n - 1) / n * (tf > ts ? tf : ts);
}

/* Reduce-scatter plus all-gather of V inside a domain of nd GPUs (ring). */
static double intra_pair(const pp_system *s, int nd, double V, double bw_f)
{
	if (nd <= 1)
		return 0;
	return 2 * (s->nvlink_latency_s * (nd - 1) + (double)(nd - 1) / nd * V / bw_f);
}

/* Two-tier: reduce-scatter inside the domain, all-reduce of 1/nd of the data
 * across domains on nd NICs in parallel, all-gather inside. */
static double hier_allreduce(const pp_system *s, int n, int nd, double V)
{
	double bw_f, bw_s;
	link_bw(s, &bw_f, &bw_s);
	int nodes = n / nd;
	double inner = intra_pair(s, nd, V, bw_f);
	double outer =
	    2.0 * (nodes - 1) * s->nic_latency_s + 2.0 * (nodes - 1) / nodes * (V / nd) / bw_s;
	return inner + outer;
}

/* NCCL's double binary tree across domains (log latency, full-bandwidth pipe). */
static double tree_allreduce(const pp_system *s, int n, int nd, double V)
{
	double bw_f, bw_s;
	link_bw(s, &bw_f, &bw_s);
	int nodes = n / nd;
	return intra_pair(s, nd, V, bw_f) + 2.0 * log2((double)nodes) * s->nic_latency_s +
	       2.0 * V / (nd * bw_s);
}

double pp_coll_time(const pp_system *s, const pp_layout *l, pp_coll_kind kind, double V,
                    pp_algo *algo_out)
{
	int n = l->size, nd = l->per_domain < 1 ? 1 : l->per_domain;
	if (nd > n)
		nd = n;
	pp_algo algo = PP_ALGO_RING;
	double t = 0;
	if (n <= 1 || V <= 0) {
		if (algo_out)
			*algo_out = algo;
		return 0;
	}
	double bw_f, bw_s;
	link_bw(s, &bw_f, &bw_s);
	switch (kind) {
	case PP_COLL_ALLGATHER:
	case PP_COLL_REDUCESCATTER: t = ring_half(s, n, nd, V); break;
	case PP_COLL_ALLREDUCE: {
		t = 2 * ring_half(s, n, nd, V);
		if (nd < n && n % nd == 0) {
			double h = hier_allreduce(s, n, nd, V);
			if (h < t) {
				t = h;
				algo = PP_ALGO_HIER;
			}
			double tr = tree_allreduce(s, n, nd, V);
			if (tr < t) {
				t = tr;
				algo = PP_ALGO_TREE;
			}
		}
		if (s->nvls && s->nvls_gain > 0 && nd == n && n > 2) {
			double nv =
			    2 * s->nvlink_latency_s + 2.0 * (n - 1) / n * V / (bw_f * s->nvls_gain);
			if (nv < t) {
				t = nv;
				algo = PP_ALGO_NVLS;
			}
		}
		break;
	}
	case PP_COLL_ALLTOALL: {
		/* Each GPU keeps 1/n, sends (nd-1)/n over NVLink and (n-nd)/n over its NIC share. */
		double tf = V * (nd - 1) / n / bw_f, ts = V * (n - nd) / n / bw_s;
		/* Sends are posted at once; latency grows with the peers' fan-out. */
		double alpha = nd < n ? s->nic_latency_s : s->nvlink_latency_s;
		t = alpha * log2((double)n) + (tf > ts ? tf : ts);
		break;
	}
	case PP_COLL_BROADCAST:
	case PP_COLL_REDUCE: {
		/* Pipelined ring (NCCL's broadcast/reduce): every GPU receives (or
		 * contributes) the whole buffer once; the ring's hops pay latency, its
		 * inter-domain hops run on nd NICs in parallel as for ring_half. */
		double lat;
		if (nd >= n) {
			lat = s->nvlink_latency_s * (n - 1);
			t = lat + V / bw_f;
		} else {
			double nodes = (double)n / nd;
			lat = s->nic_latency_s * (nodes - 1) + s->nvlink_latency_s * (n - nodes);
			double tf = V / bw_f, ts = V / (nd * bw_s);
			t = lat + (tf > ts ? tf : ts);
		}
		break;
	}
	case PP_COLL_P2P:
		/* Neighbours in a ring or pipeline: the slowest hop sets the pace, and
		 * some hop leaves the domain unless the whole group is inside it. */
		if (nd >= n)
			t = s->nvlink_latency_s + V / bw_f;
		else
			t = s->nic_latency_s + V / bw_s;
		break;
	}
	if (algo_out)
		*algo_out = algo;
	return t;
}
