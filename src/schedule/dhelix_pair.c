/*
 * DHelix (seed 002): the time of a pair of operators (Eq. 1) and the pairing
 * of a forward with a backward sequence by dynamic programming (Eq. 2) -- of
 * two given orders (pp_dh_pair_k), and over
 * every candidate order of a layer at once (pp_dh_layer_pair_k: the forward
 * as a DAG, the backward orders as a tree walked depth first, no
 * allocation).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dhelix_int.h"

/* ------------------------------------------------------------- pairing */

_Static_assert(PP_DH_SEG_OPS >= 1 && PP_DH_SEG_OPS <= 4, "segment length: 1..4 operators");

double pp_dh_oef(double ti, double tj, double pij)
{
	double mn = ti < tj ? ti : tj;
	return mn > 0 ? (ti + tj - pij) / mn : 0;
}

double pp_dh_pair_time(const pp_dh_overlap *o, pp_dh_kind ki, double ti, pp_dh_kind kj, double tj)
{
	if (ti <= 0)
		return tj > 0 ? tj : 0;
	if (tj <= 0)
		return ti;
	if (ppi_dh_is_comm(ki) && ppi_dh_is_comm(kj) && ki == kj)
		return INFINITY; /* two collectives on the same link */
	double mn = ti < tj ? ti : tj;
	double p = ti + tj - o->oef[ki][kj] * mn;
	/* Table 7: each paired segment with a collective and a computation
	 * pays the launch interval on the collective's time. */
	if (ppi_dh_is_comm(ki) != ppi_dh_is_comm(kj))
		p += o->launch_interval * (ppi_dh_is_comm(ki) ? ti : tj);
	return p;
}

/*
 * The co-run of two operator chains between barriers (pp_dh_segment_time's
 * model): kinds `ka`, times `ta` of one strand's `na` operators in order, the
 * same for the other's `nb`.  While x and y are both active each advances at
 * rate 1 / sigma, sigma = 2 - OEF(x, y), so the one with less work left ends
 * after sigma x its remaining work; that strand's next operator then starts.
 * For two single operators: sigma min + (max - min) = T_x + T_y - OEF min
 * (Eq. 1), so the 1 x 1 case is pp_dh_pair_time itself (with its same-link
 * rule).  out[a - 1] = P(ka[0..a), kb[0..nb)) for every a = 1..na: the
 * shorter prefixes run the same until their last operator ends, and the
 * other strand's rest then runs alone (one pass for all a).
 */
/* The overlap table as chain_prefixes reads it: sigma = 2 - OEF, and the
 * launch interval a collective pays when co-run with computation. */
typedef struct chain_model {
	double sigma[PP_DH_NKINDS][PP_DH_NKINDS];
	double launch[PP_DH_NKINDS][PP_DH_NKINDS]; /* row: the collective's kind */
	const pp_dh_overlap *o;
} chain_model;

static void chain_model_of(const pp_dh_overlap *o, chain_model *m)
{
	for (int a = 0; a < PP_DH_NKINDS; a++)
		for (int b = 0; b < PP_DH_NKINDS; b++) {
			m->sigma[a][b] = 2 - o->oef[a][b];
			m->launch[a][b] =
			    ppi_dh_is_comm((pp_dh_kind)a) && !ppi_dh_is_comm((pp_dh_kind)b)
			        ? o->launch_interval
			        : 0;
		}
	m->o = o;
}

static void chain_prefixes(const chain_model *m, const pp_dh_kind *ka, const double *ta, int na,
                           const pp_dh_kind *kb, const double *tb, int nb, double *out)
{
	double rest[PP_DH_SEG_OPS + 1]; /* rest[j]: tb[j + 1..nb) */
	rest[nb - 1] = 0;
	for (int j = nb - 2; j >= 0; j--)
		rest[j] = rest[j + 1] + tb[j + 1];
	double t = 0, launch = 0;
	int i = 0, j = 0;
	double ra = ta[0], rb = tb[0];
	bool ca = false, cb = false; /* launch interval charged for the current op */
	while (i < na) {
		if (ra <= 0) { /* prefix i + 1 ends here; the other strand's rest alone */
			out[i] = t + launch + (j < nb ? (rb > 0 ? rb : 0) + rest[j] : 0);
			if (++i < na)
				ra = ta[i], ca = false;
			continue;
		}
		if (j >= nb) { /* the other strand is done: this one alone */
			t += ra;
			ra = 0;
			continue;
		}
		if (rb <= 0) {
			if (++j < nb)
				rb = tb[j], cb = false;
			continue;
		}
		double d = ra < rb ? ra : rb;
		t += m->sigma[ka[i]][kb[j]] * d;
		ra -= d;
		rb -= d;
		/* Table 7: a collective co-run with computation of the other strand
		 * leaves launch_interval of its time visible (paid at the start of
		 * the paired segment, once per collective). */
		double la = m->launch[ka[i]][kb[j]], lb = m->launch[kb[j]][ka[i]];
		if (la > 0 && !ca) {
			launch += la * ta[i];
			ca = true;
		}
		if (lb > 0 && !cb) {
			launch += lb * tb[j];
			cb = true;
		}
	}
	if (nb == 1) /* a single operator with a single operator: Eq. 1 */
		out[0] = pp_dh_pair_time(m->o, ka[0], ta[0], kb[0], tb[0]);
}

/* pp_dh_segment_time under a table already in chain_prefixes' form. */
static double segment_time(const chain_model *m, const pp_dh_seg *f, int nf, const pp_dh_seg *b,
                           int nb)
{
	pp_dh_kind ka[PP_DH_SEG_OPS], kb[PP_DH_SEG_OPS];
	double ta[PP_DH_SEG_OPS], tb[PP_DH_SEG_OPS];
	double solo = 0;
	if (nf == 0 || nb == 0 || nf > PP_DH_SEG_OPS || nb > PP_DH_SEG_OPS) {
		if (nf && nb)
			return INFINITY; /* longer than a segment may be */
		for (int i = 0; i < nf; i++)
			solo += f[i].seconds;
		for (int i = 0; i < nb; i++)
			solo += b[i].seconds;
		return solo;
	}
	for (int i = 0; i < nf; i++)
		ka[i] = f[i].kind, ta[i] = f[i].seconds;
	for (int i = 0; i < nb; i++)
		kb[i] = b[i].kind, tb[i] = b[i].seconds;
	double out[PP_DH_SEG_OPS];
	chain_prefixes(m, ka, ta, nf, kb, tb, nb, out);
	return out[nf - 1];
}

double pp_dh_segment_time(const pp_dh_overlap *o, const pp_dh_seg *f, int nf, const pp_dh_seg *b,
                          int nb)
{
	chain_model m;
	chain_model_of(o, &m);
	return segment_time(&m, f, nf, b, nb);
}

static int clamp_k(int k)
{
	return k < 1 ? 1 : k > PP_DH_SEG_OPS ? PP_DH_SEG_OPS : k;
}

double pp_dh_pair_k(const pp_dh_overlap *o, const pp_dh_seq *f, const pp_dh_seq *b, int k,
                    pp_dh_plan *plan)
{
	const int nf = f->n, nb = b->n, W = PP_DH_MAX_SEGS + 1, K = clamp_k(k);
	/* T[i][j]: best make-span of the first i forward and j backward operators;
	 * how[i][j]: the last step's segment lengths, forward a and backward c
	 * (a 0: the backward alone, c 0: the forward alone), as 16 a + c. */
	static _Thread_local double T[(PP_DH_MAX_SEGS + 1) * (PP_DH_MAX_SEGS + 1)];
	static _Thread_local unsigned char how[(PP_DH_MAX_SEGS + 1) * (PP_DH_MAX_SEGS + 1)];
	chain_model m;
	chain_model_of(o, &m);
	/* P of forward f[i0..i0 + a) with backward b[j - c..j): one chain pass
	 * from each i0 gives every a (the shorter segments are its prefixes) */
	static _Thread_local double P[PP_DH_SEG_OPS + 1][PP_DH_MAX_SEGS][PP_DH_SEG_OPS];
	T[0] = 0;
	for (int j = 0; j <= nb; j++) {
		for (int c = 1; c <= K && c <= j; c++) {
			pp_dh_kind ka[PP_DH_SEG_OPS], kb[PP_DH_SEG_OPS];
			double ta[PP_DH_SEG_OPS], tb[PP_DH_SEG_OPS];
			for (int q = 0; q < c; q++)
				kb[q] = b->s[j - c + q].kind, tb[q] = b->s[j - c + q].seconds;
			for (int i0 = 0; i0 < nf; i0++) {
				int na = nf - i0 < K ? nf - i0 : K;
				for (int q = 0; q < na; q++)
					ka[q] = f->s[i0 + q].kind, ta[q] = f->s[i0 + q].seconds;
				chain_prefixes(&m, ka, ta, na, kb, tb, c, P[c][i0]);
			}
		}
		for (int i = 0; i <= nf; i++) {
			if (!i && !j)
				continue;
			double best = INFINITY;
			unsigned char h = 0;
			if (i > 0) {
				best = T[(i - 1) * W + j] + f->s[i - 1].seconds;
				h = 16;
			}
			if (j > 0) {
				double t = T[i * W + j - 1] + b->s[j - 1].seconds;
				if (t < best) {
					best = t;
					h = 1;
				}
			}
			for (int c = 1; c <= K && c <= j; c++)
				for (int a = 1; a <= K && a <= i; a++) {
					double t = T[(i - a) * W + j - c] + P[c][i - a][a - 1];
					if (t < best) {
						best = t;
						h = (unsigned char)(16 * a + c);
					}
				}
			T[i * W + j] = best;
			how[i * W + j] = h;
		}
	}
	double t = T[nf * W + nb];
	if (plan) {
		plan->t_opt = t;
		int i = nf, j = nb, n = 0;
		pp_dh_step rev[2 * PP_DH_MAX_SEGS];
		while (i > 0 || j > 0) {
			int a = how[i * W + j] / 16, c = how[i * W + j] % 16;
			pp_dh_step st;
			st.nf = a;
			st.nb = c;
			st.f = a ? i - a : -1;
			st.b = c ? j - c : -1;
			st.seconds = segment_time(&m, &f->s[i - a], a, &b->s[j - c], c);
			i -= a;
			j -= c;
			rev[n++] = st;
		}
		plan->nsteps = n;
		for (int s = 0; s < n; s++)
			plan->step[s] = rev[n - 1 - s];
	}
	return t;
}

double pp_dh_pair(const pp_dh_overlap *o, const pp_dh_seq *f, const pp_dh_seq *b, pp_dh_plan *plan)
{
	return pp_dh_pair_k(o, f, b, PP_DH_SEG_OPS, plan);
}

/*
 * Scratch of the pairing over candidate orders (thread-local, reused: no
 * allocation).  A backward segment is a tuple of up to K default-order
 * indices; the candidates share most of them, so P of every forward segment
 * (a path of the forward's DAG, below) with a backward tuple (a column) is
 * computed once per layer and found again by the tuple (open addressing,
 * generation-stamped slots).
 */
#define DH_SLOTS 4096
#define DH_COL_CAP (DH_PATHS * PP_DH_MAX_SEGS * PP_DH_SEG_OPS)
/*
 * The forward as a DAG of states (rows of the DP).  A state is a set of
 * forward operators done that every candidate forward order passes through:
 * a prefix of the default order outside the MoE router's window, and inside
 * it (x, y): the first x of the m fixed segments between the MLP norm and
 * the router and the first y of the router's nb (gate, top-k), each a chain
 * of its own, so (m + 1)(nb + 1) states whose paths from (0, 0) to (m, nb)
 * are exactly the router's placements (pp_dh_fwd_candidate).  A forward
 * segment of a operators is a path of a edges; Eq. 2 over this DAG is the
 * minimum over the candidate forward orders of Eq. 2 over each (every order
 * is a path, every path an order, segments are sub-paths), at the cost of
 * m nb extra rows instead of one DP per order.  A dense layer's DAG is the
 * chain of its forward: the DP as before, step for step.
 */
#define DH_ROWS (PP_DH_MAX_SEGS + 1 + 8)
#define DH_PATHS (DH_ROWS * PP_DH_SEG_OPS + 64)
typedef struct fwd_dag {
	int rows;
	int np[DH_ROWS];      /* predecessors of each state (1 or 2; 0 for state 0) */
	int pred[DH_ROWS][2]; /* and the operator (default index) on each edge */
	int op[DH_ROWS][2];
	/* paths of up to K edges ending at each state: poff[i]..poff[i+1], by
	 * length; start state and the operators in order */
	int poff[DH_ROWS + 1];
	bool lin[DH_ROWS]; /* the paths into it: the chain's, lengths 1..K in order */
	int wa, wb;        /* the rows that are not: [wa, wb), empty for a chain */
	int pstart[DH_PATHS];
	int plen[DH_PATHS];
	int pops[DH_PATHS][PP_DH_SEG_OPS];
} fwd_dag;

static int dag_add(fwd_dag *d, int p0, int o0, int p1, int o1)
{
	int r = d->rows++;
	d->np[r] = p1 < 0 ? 1 : 2;
	d->pred[r][0] = p0;
	d->op[r][0] = o0;
	d->pred[r][1] = p1;
	d->op[r][1] = o1;
	return r;
}

/* Paths of exactly `a` edges ending at state `r` (appended), ops[a - 1 - k]
 * the k-th edge back from r; false when the table is full. */
static bool dag_paths(fwd_dag *d, int r, int a, int at, int *ops, int end)
{
	if (at == a) {
		int n = d->poff[end + 1];
		if (n >= DH_PATHS)
			return false;
		d->pstart[n] = r;
		d->plen[n] = a;
		memcpy(d->pops[n], ops, (size_t)a * sizeof *ops);
		d->poff[end + 1]++;
		return true;
	}
	for (int p = 0; p < d->np[r]; p++) {
		ops[a - 1 - at] = d->op[r][p];
		if (!dag_paths(d, d->pred[r][p], a, at + 1, ops, end))
			return false;
	}
	return true;
}

typedef struct pair_scratch {
	unsigned gen;
	unsigned stamp[DH_SLOTS];
	uint32_t key[DH_SLOTS];
	int col[DH_SLOTS];      /* offset of the column in P */
	int used;               /* doubles of P in use */
	int nkeys;              /* slots in use */
	chain_model m;          /* the layer's table */
	fwd_dag d;              /* the layer's forward */
	double tf[DH_ROWS];     /* the time of each state's first in-edge */
	pp_dh_kind kf[DH_ROWS]; /* and its kind */
	double P[DH_COL_CAP];
	double T[DH_ROWS * (PP_DH_MAX_SEGS + 1)];
} pair_scratch;

/* The DAG of `f` (a movable block as pp_dh_fwd_candidate finds it); false
 * when it does not fit (then the caller pairs the default order only). */
static bool dag_build(fwd_dag *d, const pp_dh_seq *f, int K)
{
	int r, nb, m;
	ppi_dh_fwd_block(f, &r, &nb, &m);
	if (r < 0)
		r = f->n, nb = m = 0; /* a chain */
	int g0 = r - m;
	d->rows = 1;
	d->np[0] = 0;
	int last = 0;
	for (int i = 0; i < g0; i++)
		last = dag_add(d, last, i, -1, -1);
	/* the window: state (x, y) at row id[x][y] */
	int id[PP_DH_MAX_SEGS + 1][PP_DH_FWD_MOVABLE + 1];
	if (d->rows + (m + 1) * (nb + 1) + (f->n - r - nb) > DH_ROWS)
		return false;
	id[0][0] = last;
	for (int sum = 1; sum <= m + nb; sum++)
		for (int y = 0; y <= nb; y++) {
			int x = sum - y;
			if (x < 0 || x > m)
				continue;
			int px = x > 0 ? id[x - 1][y] : -1, py = y > 0 ? id[x][y - 1] : -1;
			if (px >= 0 && py >= 0)
				id[x][y] = dag_add(d, px, g0 + x - 1, py, r + y - 1);
			else if (px >= 0)
				id[x][y] = dag_add(d, px, g0 + x - 1, -1, -1);
			else
				id[x][y] = dag_add(d, py, r + y - 1, -1, -1);
		}
	last = id[m][nb];
	for (int i = r + nb; i < f->n; i++)
		last = dag_add(d, last, i, -1, -1);
	/* a chain row (its K rows back single in-edges, in order) takes K path
	 * slots, the paths of lengths 1..K (those longer than the row's depth
	 * are never read), so dp_rows finds them at an affine offset */
	d->lin[0] = true;
	for (int i = 1; i < d->rows; i++) {
		d->lin[i] = true;
		for (int q = 0; q < K && q < i; q++)
			d->lin[i] &= d->np[i - q] == 1 && d->pred[i - q][0] == i - q - 1;
	}
	d->wa = d->wb = d->rows;
	for (int i = 1; i < d->rows; i++)
		if (!d->lin[i]) {
			if (d->wa == d->rows)
				d->wa = i;
			d->wb = i + 1;
		}
	if (d->wa == d->rows)
		d->wa = d->wb = 1;
	for (int i = d->wa; i < d->wb; i++)
		d->lin[i] = false; /* dp_column takes the window's rows as a DAG's */
	d->poff[0] = d->poff[1] = 0;
	for (int i = 1; i < d->rows; i++) {
		d->poff[i + 1] = d->poff[i];
		int ops[PP_DH_SEG_OPS];
		for (int a = 1; a <= K; a++) {
			if (d->lin[i] && a > i) { /* a slot never read */
				int n = d->poff[i + 1]++;
				if (n >= DH_PATHS)
					return false;
				d->pstart[n] = 0;
				d->plen[n] = a;
				continue;
			}
			if (!dag_paths(d, i, a, 0, ops, i))
				return false;
		}
	}
	return true;
}

static void scratch_reset(pair_scratch *x)
{
	if (++x->gen == 0) { /* wrapped: stamps of old generations could match */
		memset(x->stamp, 0, sizeof x->stamp);
		x->gen = 1;
	}
	x->used = 0;
	x->nkeys = 0;
}

/* The column of backward tuple perm[j-c..j): P(path, tuple) for every path
 * of the forward's DAG, at the path's index. */
static const double *pair_column(pair_scratch *x, const pp_dh_layer *l, int K, const int *perm,
                                 int j, int c)
{
	uint32_t key = (uint32_t)c;
	for (int q = 0; q < c; q++)
		key |= (uint32_t)perm[j - c + q] << (3 + 7 * q);
	uint32_t h = (key * 2654435761u) >> 20; /* 12 bits: DH_SLOTS */
	for (;; h = (h + 1) & (DH_SLOTS - 1)) {
		if (x->stamp[h] != x->gen)
			break;
		if (x->key[h] == key)
			return x->P + x->col[h];
	}
	const fwd_dag *d = &x->d;
	const int np = d->poff[d->rows];
	double *col = x->P + x->used;
	x->stamp[h] = x->gen;
	x->key[h] = key;
	x->col[h] = x->used;
	x->used += np;
	x->nkeys++;
	pp_dh_kind kb[PP_DH_SEG_OPS], ka[PP_DH_SEG_OPS];
	double tb[PP_DH_SEG_OPS], ta[PP_DH_SEG_OPS], out[PP_DH_SEG_OPS];
	for (int q = 0; q < c; q++) {
		kb[q] = l->bwd.s[perm[j - c + q]].kind;
		tb[q] = l->bwd.s[perm[j - c + q]].seconds;
	}
	/* along the chain, one pass from each start gives the paths of all
	 * lengths from it (the shorter ones are its prefixes) */
	if (d->wa == d->wb) { /* all of it a chain: row i is operator i - 1 */
		for (int i0 = 0; i0 < d->rows - 1; i0++) {
			int na = d->rows - 1 - i0 < K ? d->rows - 1 - i0 : K;
			chain_prefixes(&x->m, x->kf + i0 + 1, x->tf + i0 + 1, na, kb, tb, c, out);
			for (int a = 1; a <= na; a++)
				col[(i0 + a - 1) * K + a - 1] = out[a - 1];
		}
		return col;
	}
	for (int i0 = 0; i0 < d->rows - 1; i0++) {
		int na = 0;
		while (na < K && i0 + na + 1 < d->rows && d->np[i0 + na + 1] == 1 &&
		       d->pred[i0 + na + 1][0] == i0 + na) {
			ka[na] = l->fwd.s[d->op[i0 + na + 1][0]].kind;
			ta[na] = l->fwd.s[d->op[i0 + na + 1][0]].seconds;
			na++;
		}
		if (!na)
			continue;
		chain_prefixes(&x->m, ka, ta, na, kb, tb, c, out);
		for (int a = 1; a <= na; a++)
			if (d->lin[i0 + a])
				col[d->poff[i0 + a] + a - 1] = out[a - 1];
	}
	/* the router's window: one pass per path */
	for (int e = 1; e < d->rows; e++) {
		if (d->lin[e])
			continue;
		for (int t = d->poff[e]; t < d->poff[e + 1]; t++) {
			int a = d->plen[t];
			for (int q = 0; q < a; q++) {
				ka[q] = l->fwd.s[d->pops[t][q]].kind;
				ta[q] = l->fwd.s[d->pops[t][q]].seconds;
			}
			chain_prefixes(&x->m, ka, ta, a, kb, tb, c, out);
			col[t] = out[a - 1];
		}
	}
	return col;
}

/*
 * The candidate orders share their prefixes: each movable weight gradient is
 * either placed where it is or deferred to the end, so the orders form a
 * binary tree over the default order, and the DP's columns (j: backward
 * operators done, every forward state) of a common prefix are the same.  A
 * depth-first walk of that tree computes each prefix's columns once and
 * only the branches' own columns after it (for a dense layer about half of
 * the candidates x N_b columns); the leaves are the candidates of
 * pp_dh_candidate, numbered by the same bits.
 */
typedef struct order_walk {
	pair_scratch *x;
	const pp_dh_layer *l;
	int K;
	int ord[PP_DH_MAX_SEGS]; /* ordinal of each movable weight gradient */
	int perm[PP_DH_MAX_SEGS];
	double best;
	int best_idx;
} order_walk;

/* Rows [i0, i1) of column Tj on the chain (each row's paths: lengths 1..K
 * from i - a, in order), as the DP over one forward order. */
static inline void dp_rows(const pair_scratch *x, double *Tj, const double *Tp, double tb,
                           const double *const *col, int i0, int i1, int jn, const int K)
{
	const int H = x->d.rows, off = x->d.poff[i0] - (i0 - 1) * K;
	if (K == 2 && jn >= 2) {
		/* The common case written out (segments of up to 2 and both
		 * columns there; the same sums and minima as the loop below): a
		 * row's pairs read only the earlier columns, and the serial part
		 * is the forward alone, Tj[i - 1] + tf[i]. */
		for (; i0 < i1 && i0 < 2; i0++) {
			const int i = i0;
			double fa = Tj[i - 1] + x->tf[i], b = Tp[i] + tb, m = fa < b ? fa : b;
			for (int c = 1; c <= 2; c++) {
				double v = Tj[i - 1 - c * H] + col[c][off + (i - 1) * 2];
				m = v < m ? v : m;
			}
			Tj[i] = m;
		}
		const double *T2 = Tj - 2 * H, *p1 = col[1] + off, *p2 = col[2] + off;
		const double *tf = x->tf;
		double prev = i0 > 0 ? Tj[i0 - 1] : 0;
		for (int i = i0; i < i1; i++) {
			const double *q1 = p1 + (i - 1) * 2, *q2 = p2 + (i - 1) * 2;
			double a = Tp[i] + tb;
			double v0 = Tp[i - 1] + q1[0], v1 = Tp[i - 2] + q1[1];
			double v2 = T2[i - 1] + q2[0], v3 = T2[i - 2] + q2[1];
			/* the pairs first: only the last step waits for Tj[i - 1] */
			double m = v0 < a ? v0 : a;
			m = v1 < m ? v1 : m;
			m = v2 < m ? v2 : m;
			m = v3 < m ? v3 : m;
			double fa = prev + tf[i];
			Tj[i] = prev = fa < m ? fa : m;
		}
		return;
	}
	for (int i = i0; i < i1; i++) {
		double fa = Tj[i - 1] + x->tf[i], b = Tp[i] + tb;
		double m = fa < b ? fa : b;
		const int na = i < K ? i : K;
		for (int c = 1; c <= K && c <= jn; c++) {
			const double *Tq = Tj - c * H, *p = col[c] + off + (i - 1) * K;
			if (na == K) /* all K lengths: the loop unrolls */
				for (int a = 1; a <= K; a++) {
					double v = Tq[i - a] + p[a - 1];
					m = v < m ? v : m;
				}
			else
				for (int a = 1; a <= na; a++) {
					double v = Tq[i - a] + p[a - 1];
					m = v < m ? v : m;
				}
		}
		Tj[i] = m;
	}
}

/* Column jn of T (column-major, one row per forward state): Eq. 2 over
 * segments of up to K operators, the backward's last operator
 * perm[jn - 1], from the K columns before it.  K is a constant at each call
 * (so the loops unroll). */
static inline void dp_column(order_walk *w, int jn, const int K)
{
	pair_scratch *x = w->x;
	const fwd_dag *d = &x->d;
	const int H = d->rows, np = d->poff[H];
	/* this column's lookups must fit: start the cache afresh when not */
	if (x->used + K * np > DH_COL_CAP || x->nkeys + K > DH_SLOTS / 2)
		scratch_reset(x);
	const double *col[PP_DH_SEG_OPS + 1] = {NULL};
	for (int c = 1; c <= K && c <= jn; c++)
		col[c] = pair_column(x, w->l, K, w->perm, jn, c);
	double *Tj = x->T + jn * H;
	const double *Tp = Tj - H;
	const double tb = w->l->bwd.s[w->perm[jn - 1]].seconds;
	const pp_dh_seg *f = w->l->fwd.s;
	Tj[0] = Tp[0] + tb;
	dp_rows(x, Tj, Tp, tb, col, 1, d->wa, jn, K);
	/* the router's window: every in-edge and every path */
	for (int i = d->wa; i < d->wb; i++) {
		double m = Tp[i] + tb;
		for (int e = 0; e < d->np[i]; e++) {
			double v = Tj[d->pred[i][e]] + f[d->op[i][e]].seconds;
			m = v < m ? v : m;
		}
		for (int c = 1; c <= K && c <= jn; c++) {
			const double *Tq = Tj - c * H;
			for (int t = d->poff[i]; t < d->poff[i + 1]; t++) {
				double v = Tq[d->pstart[t]] + col[c][t];
				m = v < m ? v : m;
			}
		}
		Tj[i] = m;
	}
	dp_rows(x, Tj, Tp, tb, col, d->wb, H, jn, K);
}

static void column(order_walk *w, int jn)
{
	switch (w->K) {
	case 1: dp_column(w, jn, 1); break;
	case 2: dp_column(w, jn, 2); break;
	case 3: dp_column(w, jn, 3); break;
	default: dp_column(w, jn, PP_DH_SEG_OPS); break;
	}
}

/* Orders whose first j backward operators are perm[0..j) and whose
 * remaining default operators from d on are still to place; `mask`: the
 * weight gradients deferred so far (bit = ordinal). */
static void walk(order_walk *w, int d, int j, unsigned mask)
{
	const pp_dh_seq *b = &w->l->bwd;
	for (; d < b->n; d++) {
		if (b->s[d].movable) /* deferred: the other branch */
			walk(w, d + 1, j, mask | 1u << w->ord[d]);
		w->perm[j++] = d;
		column(w, j);
	}
	for (int e = 0; e < b->n; e++)
		if (b->s[e].movable && (mask >> w->ord[e] & 1)) {
			w->perm[j++] = e;
			column(w, j);
		}
	const int H = w->x->d.rows;
	double t = w->x->T[j * H + H - 1];
	if (t < w->best || (t == w->best && (int)mask < w->best_idx)) {
		w->best = t;
		w->best_idx = (int)mask;
	}
}

/* The forward order of the best pairing: the DP's columns again for the
 * winning backward order, then back from the last state along a step that
 * gives its value exactly (the same sums as the DP's).  ops[k]: the
 * default index of the k-th forward operator.  False when no step matches
 * (not expected; the caller then tries the orders one by one). */
static bool fwd_backtrack(order_walk *w, int *ops)
{
	pair_scratch *x = w->x;
	const pp_dh_layer *l = w->l;
	const fwd_dag *d = &x->d;
	const pp_dh_seq *b = &l->bwd;
	const int H = d->rows, K = w->K;
	int j = 0;
	for (int e = 0; e < b->n; e++)
		if (!b->s[e].movable || !(w->best_idx >> w->ord[e] & 1))
			w->perm[j++] = e;
	for (int e = 0; e < b->n; e++)
		if (b->s[e].movable && (w->best_idx >> w->ord[e] & 1))
			w->perm[j++] = e;
	for (int c = 1; c <= j; c++)
		column(w, c);
	int i = H - 1, n = l->fwd.n;
	while (i > 0 || j > 0) {
		const double v = x->T[j * H + i];
		if (j > 0 && x->T[(j - 1) * H + i] + l->bwd.s[w->perm[j - 1]].seconds == v) {
			j--;
			continue;
		}
		bool found = false;
		for (int e = 0; e < d->np[i] && !found; e++)
			if (x->T[j * H + d->pred[i][e]] + l->fwd.s[d->op[i][e]].seconds == v ||
			    (e == 0 && d->lin[i] && x->T[j * H + i - 1] + x->tf[i] == v)) {
				ops[--n] = d->op[i][e];
				i = d->pred[i][e];
				found = true;
			}
		for (int c = 1; c <= K && c <= j && !found; c++) {
			const double *col = pair_column(x, l, K, w->perm, j, c);
			for (int t = d->poff[i]; t < d->poff[i + 1] && !found; t++) {
				if (d->lin[i] && d->plen[t] > i)
					continue; /* a slot never filled */
				if (x->T[(j - c) * H + d->pstart[t]] + col[t] == v) {
					for (int q = d->plen[t] - 1; q >= 0; q--)
						ops[--n] = d->pops[t][q];
					i = d->pstart[t];
					j -= c;
					found = true;
				}
			}
		}
		if (!found || n < 0)
			return false;
	}
	return n == 0;
}

/* The best SI block time over the candidate orders (every forward order of
 * the router's placements with every backward order), and the backward
 * candidate.  A forward DAG that does not fit the scratch is paired in its
 * default order only. */
static double best_order(const pp_dh_overlap *o, const pp_dh_layer *l, int K, int *best,
                         int *fwd_ops)
{
	static _Thread_local pair_scratch x;
	static _Thread_local order_walk w;
	scratch_reset(&x);
	w.x = &x;
	w.l = l;
	w.K = K;
	w.best = INFINITY;
	w.best_idx = 0;
	for (int i = 0, k = 0; i < l->bwd.n; i++)
		w.ord[i] = l->bwd.s[i].movable ? k++ : -1;
	if (!dag_build(&x.d, &l->fwd, K)) {
		static _Thread_local pp_dh_seq chain;
		chain = l->fwd;
		for (int i = 0; i < chain.n; i++)
			chain.s[i].movable = false;
		dag_build(&x.d, &chain, K); /* a chain always fits */
	}
	chain_model_of(o, &x.m);
	for (int i = 1; i < x.d.rows; i++) {
		x.tf[i] = l->fwd.s[x.d.op[i][0]].seconds;
		x.kf[i] = l->fwd.s[x.d.op[i][0]].kind;
	}
	/* column 0: the forward alone (every path to a state has the same sum
	 * but for rounding; the least, as the other columns take) */
	x.T[0] = 0;
	for (int i = 1; i < x.d.rows; i++) {
		x.T[i] = x.T[x.d.pred[i][0]] + l->fwd.s[x.d.op[i][0]].seconds;
		if (x.d.np[i] > 1)
			x.T[i] = fmin(x.T[i], x.T[x.d.pred[i][1]] + l->fwd.s[x.d.op[i][1]].seconds);
	}
	walk(&w, 0, 0, 0);
	*best = w.best_idx;
	if (fwd_ops && x.d.wa == x.d.wb) /* a chain: the default order */
		for (int i = 0; i < l->fwd.n; i++)
			fwd_ops[i] = i;
	else if (fwd_ops && !fwd_backtrack(&w, fwd_ops))
		fwd_ops[0] = -1;
	return w.best;
}

double ppi_dh_best_order(const pp_dh_overlap *o, const pp_dh_layer *l, int K, int *best,
                         int *fwd_ops)
{
	return best_order(o, l, clamp_k(K), best, fwd_ops);
}

void pp_dh_layer_pair_k(const pp_dh_overlap *o, const pp_dh_layer *l, int k, pp_dh_result *out)
{
	out->t_f = l->fwd_s;
	out->t_b = l->bwd_s;
	out->candidates = pp_dh_candidate_count(l);
	out->fwd_candidates = pp_dh_fwd_candidate_count(l);
	int ops[PP_DH_MAX_SEGS];
	out->t_si = best_order(o, l, clamp_k(k), &out->best, ops);
	pp_dh_candidate(l, out->best, &out->bwd);
	/* which forward order: the one the DP's best path takes (or, should the
	 * path not be found, the first whose pairing reaches T_SI) */
	out->fwd_best = -1;
	for (int c = 0; c < out->fwd_candidates && out->fwd_best < 0 && ops[0] >= 0; c++) {
		pp_dh_fwd_candidate(l, c, &out->fwd);
		bool same = true;
		for (int i = 0; i < l->fwd.n && same; i++)
			same = out->fwd.s[i].name == l->fwd.s[ops[i]].name;
		if (same)
			out->fwd_best = c;
	}
	if (out->fwd_best >= 0) {
		pp_dh_pair_k(o, &out->fwd, &out->bwd, clamp_k(k), &out->plan);
	} else {
		double t_best = INFINITY;
		int last = 0;
		out->fwd_best = 0;
		for (int c = 0; c < out->fwd_candidates; c++) {
			last = c;
			pp_dh_fwd_candidate(l, c, &out->fwd);
			double t = pp_dh_pair_k(o, &out->fwd, &out->bwd, clamp_k(k), &out->plan);
			if (t < t_best) {
				t_best = t;
				out->fwd_best = c;
			}
			if (t <= out->t_si * (1 + 1e-12))
				break;
		}
		if (last != out->fwd_best) { /* out->fwd and the plan: the last one tried */
			pp_dh_fwd_candidate(l, out->fwd_best, &out->fwd);
			pp_dh_pair_k(o, &out->fwd, &out->bwd, clamp_k(k), &out->plan);
		}
	}
	out->speedup = out->t_si > 0 ? (out->t_f + out->t_b) / out->t_si : 1;
}

void pp_dh_layer_pair(const pp_dh_overlap *o, const pp_dh_layer *l, pp_dh_result *out)
{
	pp_dh_layer_pair_k(o, l, PP_DH_SEG_OPS, out);
}
