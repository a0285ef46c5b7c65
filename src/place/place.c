/*
 * Rank orders, the rank -> GPU map and group layouts.
 */
#include <string.h>

#include "paraplan/place.h"

/* The dimension a token of the order names (exactly, case as written), or -1:
 * one pass over its characters, no string calls (the search builds a
 * placement per plan). */
static int tok_dim(const char *t, size_t n)
{
	if (n == 3)
		return t[0] == 't' && t[1] == 'p' && t[2] == '2' ? PP_DIM_TP2 : -1;
	if (n != 2 || t[1] != 'p')
		return -1;
	switch (t[0]) {
	case 't': return PP_DIM_TP;
	case 'c': return PP_DIM_CP;
	case 'e': return PP_DIM_EP;
	case 'd': return PP_DIM_DP;
	case 'p': return PP_DIM_PP;
	default: return -1;
	}
}

/* The radix of a `dim:N` token (t..t+n), 0 without one or when it is not a
 * number. */
static long long tok_radix(const char *t, size_t n, size_t *name)
{
	size_t i = 0;
	while (i < n && t[i] != ':')
		i++;
	*name = i;
	if (i + 1 >= n)
		return 0;
	long long v = 0;
	for (size_t k = i + 1; k < n; k++) {
		if (t[k] < '0' || t[k] > '9' || v > 1000000000LL)
			return 0;
		v = v * 10 + (t[k] - '0');
	}
	return v;
}

/* A split order's GPU numbering: token `part`s, radices and GPU strides,
 * the dimensions it leaves out outside everything. */
static void add_tok(pp_placement *o, pp_dim d, int part, long long radix)
{
	if (o->ntok < PP_PLACE_MAX_TOKENS) {
		o->tok[o->ntok] = d;
		o->tok_part[o->ntok] = part;
		o->tok_radix[o->ntok] = radix;
		o->ntok++;
	}
}

/* Parse the order: each dimension's rank stride, the dimensions innermost
 * first (a split dimension where its first token is), and for a split order
 * the GPU tokens.  The order was validated by pp_plan_resolve; a radix that
 * does not divide its degree counts as none, a dimension it leaves out sits
 * outside everything named. */
static void parse_order(const pp_plan *p, pp_placement *o)
{
	const long long sizes[PP_NDIMS] = {p->tp, p->tp2 > 0 ? p->tp2 : 1,
	                                   p->cp, 1 /* EP folds into the dp x cp ranks */,
	                                   p->dp, p->pp};
	o->norder = 0;
	o->split = false;
	o->ntok = 0;
	for (int d = 0; d < PP_NDIMS; d++) {
		o->size[d] = sizes[d];
		o->stride[d] = -1;
		o->split_n[d] = 0;
	}
	long long stride = 1;
	const char *t = p->order, *end = p->order + sizeof p->order;
	while (t < end && *t && o->ntok < PP_PLACE_MAX_TOKENS) {
		const char *e = t;
		while (e < end && *e && *e != '-')
			e++;
		size_t name;
		long long radix = tok_radix(t, (size_t)(e - t), &name);
		int d = tok_dim(t, name);
		if (d >= 0 && o->stride[d] < 0) {
			o->stride[d] = stride;
			o->order[o->norder++] = (pp_dim)d;
			stride *= sizes[d];
			if (radix > 1 && radix < sizes[d] && sizes[d] % radix == 0) {
				o->split_n[d] = radix;
				o->split = true;
				add_tok(o, (pp_dim)d, 1, radix);
			} else {
				add_tok(o, (pp_dim)d, 0, sizes[d]);
			}
		} else if (d >= 0 && o->split_n[d] > 0 && radix == 0) {
			add_tok(o, (pp_dim)d, 2, sizes[d] / o->split_n[d]);
		}
		if (e >= end || *e != '-')
			break;
		t = e + 1;
	}
	for (int d = 0; d < PP_NDIMS; d++) {
		if (o->stride[d] < 0) {
			o->stride[d] = stride;
			if (sizes[d] > 1)
				add_tok(o, (pp_dim)d, 0, sizes[d]);
		}
	}
	/* a split dimension never named again keeps its rest outside */
	for (int d = 0; d < PP_NDIMS; d++) {
		bool rest = o->split_n[d] == 0;
		for (int k = 0; k < o->ntok && !rest; k++)
			rest = o->tok[k] == (pp_dim)d && o->tok_part[k] == 2;
		if (!rest)
			add_tok(o, (pp_dim)d, 2, sizes[d] / o->split_n[d]);
	}
	long long g = 1;
	for (int k = 0; k < o->ntok; k++) {
		o->tok_stride[k] = g;
		g *= o->tok_radix[k];
	}
	if (!o->split)
		o->ntok = 0;
	o->ranks = 1;
	for (int d = 0; d < PP_NDIMS; d++)
		o->ranks *= sizes[d];
}

/* A token's coordinate digit. */
static long long tok_digit(const pp_placement *o, int k, long long c)
{
	long long n = o->split_n[o->tok[k]];
	return o->tok_part[k] == 1 ? c % n : o->tok_part[k] == 2 ? c / n : c;
}

/* Members of a split order's group (the dimensions in `dims`, a bit each)
 * that share one NVLink domain of `dom`: token by token, the coordinates a
 * token spans inside the domain (all of them while its run stays inside,
 * dom / stride where it crosses the edge, one beyond). */
static int split_per_domain(const pp_placement *o, unsigned dims, long long dom)
{
	long long in = 1;
	for (int k = 0; k < o->ntok; k++) {
		if (!(dims & (1u << o->tok[k])) || o->tok_stride[k] >= dom)
			continue;
		long long fit = dom / o->tok_stride[k];
		in *= fit < o->tok_radix[k] ? fit : o->tok_radix[k];
	}
	return in < 1 ? 1 : (int)in;
}

long long pp_place_gpu_of(const pp_placement *pl, const int coords[PP_NDIMS])
{
	if (!pl->split)
		return pp_place_rank(pl, coords);
	long long gpu = 0;
	for (int k = 0; k < pl->ntok; k++)
		gpu += tok_digit(pl, k, coords[pl->tok[k]]) * pl->tok_stride[k];
	return gpu;
}

/* A group of `size` ranks `stride` apart, in rank order on domains of `dom`. */
static pp_layout layout_of(long long stride, long long size, long long dom)
{
	pp_layout l;
	l.size = (int)size;
	long long in;
	if (stride >= dom)
		in = 1;
	else
		in = dom / stride < size ? dom / stride : size;
	l.per_domain = in < 1 ? 1 : (int)in;
	return l;
}

/* A split order's layouts: every group by its dimensions' tokens
 * (split_per_domain).  Expert groups under a split are placed as tp's (etp)
 * and the dp x cp ranks' (expert-dp), which is exact for ep 1 and etp tp,
 * the plans pp_plan_resolve lets a split order have. */
static void split_layouts(const pp_plan *p, pp_placement *o, long long dom, bool tp2_member)
{
	pp_layout *g = o->group;
	const unsigned tp = 1u << PP_DIM_TP, cp = 1u << PP_DIM_CP, dp = 1u << PP_DIM_DP,
	               pp = 1u << PP_DIM_PP, tp2 = 1u << PP_DIM_TP2;
	g[PP_GROUP_TP].per_domain = split_per_domain(o, tp, dom);
	g[PP_GROUP_CP].per_domain = split_per_domain(o, cp, dom);
	g[PP_GROUP_PP].per_domain = split_per_domain(o, pp, dom);
	g[PP_GROUP_TP2].per_domain = split_per_domain(o, tp2, dom);
	g[PP_GROUP_ETP].per_domain = split_per_domain(o, tp, dom);
	g[PP_GROUP_EP] = layout_of(dom, p->ep, dom);
	g[PP_GROUP_EDP].per_domain = split_per_domain(o, cp | dp, dom);
	g[PP_GROUP_DP].per_domain = split_per_domain(o, cp | dp | (tp2_member ? tp2 : 0), dom);
	for (int i = 0; i < PP_NGROUPS; i++)
		if (g[i].per_domain > g[i].size)
			g[i].per_domain = g[i].size > 0 ? g[i].size : 1;
	/* tied embeddings: stage 0 and stage pp - 1, the GPUs apart their
	 * digits put them */
	long long apart = 0;
	for (int k = 0; k < o->ntok; k++)
		if (o->tok[k] == PP_DIM_PP)
			apart += tok_digit(o, k, p->pp - 1) * o->tok_stride[k];
	if (p->pp >= 2)
		g[PP_GROUP_EMB] = layout_of(apart > 0 ? apart : 1, 2, dom);
}

void pp_place_build(const pp_plan *p, const pp_system *s, pp_placement *out)
{
	parse_order(p, out);
	out->gpus_per_node = s->gpus_per_node > 0 ? s->gpus_per_node : 1;
	out->domain = s->nvlink_bytes_per_s > 0 && s->nvlink_domain > 0 ? s->nvlink_domain : 1;
	out->rank_gpu = NULL;
	const pp_placement *o = out;
	long long dom = out->domain;
	pp_layout *g = out->group;
	int etp = p->etp > 0 ? p->etp : p->tp;
	long long tp_stride = o->stride[PP_DIM_TP];
	g[PP_GROUP_TP] = layout_of(tp_stride, p->tp, dom);
	g[PP_GROUP_CP] = layout_of(o->stride[PP_DIM_CP], p->cp, dom);
	g[PP_GROUP_PP] = layout_of(o->stride[PP_DIM_PP], p->pp, dom);
	g[PP_GROUP_TP2] = layout_of(o->stride[PP_DIM_TP2], o->size[PP_DIM_TP2], dom);
	g[PP_GROUP_ETP] = layout_of(tp_stride, etp, dom);
	/* Megatron's expert ranks: etp innermost, then ep, then expert-dp, all
	 * inside the tp x cp x dp ranks of one stage. */
	g[PP_GROUP_EP] = layout_of(tp_stride * etp, p->ep, dom);
	long long inner = (long long)p->tp * p->cp * p->dp;
	g[PP_GROUP_EDP] = layout_of(tp_stride * etp * p->ep, inner / ((long long)p->ep * etp), dom);
	/* Gradients reduce over dp x cp and, with 2D TP's weights replicated over
	 * n_2, x tp2 (seed 003 App. A: "the combined n_d x n_2 GPU group").  When
	 * the member dimensions sit next to each other in the order they form one
	 * contiguous group starting at the innermost; otherwise place it by dp. */
	bool tp2_member = p->tp2 > 1 && !p->summa;
	long long size = (long long)p->cp * p->dp * (tp2_member ? p->tp2 : 1);
	long long start = -1, got = 1;
	bool contiguous = true;
	for (int i = 0; i < o->norder && got < size; i++) {
		pp_dim d = o->order[i];
		bool member = d == PP_DIM_DP || (d == PP_DIM_CP && p->cp > 1) ||
		              (d == PP_DIM_TP2 && tp2_member);
		if (member) {
			if (start < 0)
				start = o->stride[d];
			got *= o->size[d];
		} else if (start >= 0 && o->size[d] > 1) {
			contiguous = false;
			break;
		}
	}
	if (!contiguous || start < 0)
		start = o->stride[PP_DIM_DP];
	g[PP_GROUP_DP] = layout_of(start, size, dom);
	/* Tied embeddings: the first and the last stage, pp - 1 strides apart. */
	pp_layout emb = layout_of(o->stride[PP_DIM_PP] * (p->pp - 1 > 0 ? p->pp - 1 : 1), 2, dom);
	if (p->pp < 2)
		emb.size = 1;
	g[PP_GROUP_EMB] = emb;
	if (out->split)
		split_layouts(p, out, dom, tp2_member);
}

void pp_place_coords(const pp_placement *pl, long long rank, int coords[PP_NDIMS])
{
	for (int d = 0; d < PP_NDIMS; d++)
		coords[d] = (int)((rank / pl->stride[d]) % pl->size[d]);
}

long long pp_place_rank(const pp_placement *pl, const int coords[PP_NDIMS])
{
	long long r = 0;
	for (int d = 0; d < PP_NDIMS; d++)
		r += (long long)coords[d] * pl->stride[d];
	return r;
}

void pp_place_locate(const pp_placement *pl, long long rank, pp_gpu_loc *out)
{
	long long gpu = rank;
	if (pl->rank_gpu) {
		gpu = pl->rank_gpu[rank];
	} else if (pl->split) {
		int c[PP_NDIMS];
		pp_place_coords(pl, rank, c);
		gpu = pp_place_gpu_of(pl, c);
	}
	out->gpu = gpu;
	out->node = gpu / pl->gpus_per_node;
	out->local = (int)(gpu % pl->gpus_per_node);
	out->domain = gpu / pl->domain;
}

pp_layout pp_place_layout_walk(const pp_placement *pl, pp_dim dim, long long rank)
{
	int c[PP_NDIMS];
	pp_place_coords(pl, rank, c);
	pp_gpu_loc self, other;
	pp_place_locate(pl, rank, &self);
	pp_layout l = {(int)pl->size[dim], 0};
	for (long long k = 0; k < pl->size[dim]; k++) {
		c[dim] = (int)k;
		pp_place_locate(pl, pp_place_rank(pl, c), &other);
		if (other.domain == self.domain)
			l.per_domain++;
	}
	return l;
}

pp_layout pp_place_pp_link(const pp_placement *pl, int a, int b)
{
	int c[PP_NDIMS] = {0};
	pp_gpu_loc la, lb;
	c[PP_DIM_PP] = a;
	pp_place_locate(pl, pp_place_rank(pl, c), &la);
	c[PP_DIM_PP] = b;
	pp_place_locate(pl, pp_place_rank(pl, c), &lb);
	return (pp_layout){2, la.domain == lb.domain ? 2 : 1};
}

void pp_plan_layouts(const pp_plan *p, const pp_system *s, pp_layout out[PP_NGROUPS])
{
	pp_placement pl;
	pp_place_build(p, s, &pl);
	memcpy(out, pl.group, sizeof pl.group);
}

pp_layout pp_group_layout(const pp_plan *p, const pp_system *s, pp_group g)
{
	pp_layout all[PP_NGROUPS];
	pp_plan_layouts(p, s, all);
	return (unsigned)g < PP_NGROUPS ? all[g] : (pp_layout){1, 1};
}

/* pp_place_build reads the system's node and NVLink sizes, these degrees and
 * the rank order: the same ones place the ranks the same. */
void pp_place_build_memo(const pp_plan *p, const pp_system *s, pp_place_memo *memo,
                         pp_placement *out)
{
	size_t n = strnlen(p->order, sizeof p->order);
	int dims[9] = {p->tp, p->tp2, p->cp, p->dp, p->pp, p->ep, p->etp, p->summa, (int)n};
	if (memo->valid && memo->system == s && memcmp(memo->dims, dims, sizeof dims) == 0 &&
	    memcmp(memo->order, p->order, n) == 0) {
		*out = memo->place;
		return;
	}
	pp_place_build(p, s, out);
	memo->place = *out;
	memo->system = s;
	memcpy(memo->dims, dims, sizeof dims);
	memcpy(memo->order, p->order, n);
	memo->valid = true;
}
