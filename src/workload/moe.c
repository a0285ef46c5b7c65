/*
 * The semi-predictable MoE all-to-all (include/paraplan/moe.h; seed 000 §3.2).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/moe.h"
#include "paraplan/place.h"
#include "util/hash.h"
#include "util/util.h"

/* Expert popularity at skew s (or the histogram), normalised. */
static void popularity(const pp_moe_routing *r, double s, double *p)
{
	double sum = 0;
	for (int e = 0; e < r->experts; e++) {
		p[e] = r->histogram ? r->histogram[e] : pow(e + 1.0, -s);
		sum += p[e];
	}
	for (int e = 0; e < r->experts; e++)
		p[e] = sum > 0 ? p[e] / sum : 1.0 / r->experts;
}

/* The busiest GPU's max(sent, received) over the link: the all-to-all time. */
static double a2a_time(const double *m, int n, double bw)
{
	double worst = 0;
	for (int i = 0; i < n; i++) {
		double out = 0, in = 0;
		for (int j = 0; j < n; j++)
			if (j != i) {
				out += m[i * n + j];
				in += m[j * n + i];
			}
		double b = out > in ? out : in;
		if (b > worst)
			worst = b;
	}
	return worst / bw;
}

/* Slots from each source to each expert -> bytes i -> j after capacity. */
static double to_matrix(const pp_moe_routing *r, const double *slots, double *m)
{
	int n = r->ep, E = r->experts, per = E / n;
	double cap =
	    r->capacity_factor > 0 ? r->capacity_factor * n * r->tokens * r->top_k / E : HUGE_VAL;
	double dropped = 0, total = 0;
	memset(m, 0, (size_t)n * n * sizeof *m);
	for (int e = 0; e < E; e++) {
		double load = 0;
		for (int i = 0; i < n; i++)
			load += slots[(size_t)i * E + e];
		double keep = load > cap ? cap / load : 1;
		total += load;
		dropped += load * (1 - keep);
		int j = e / per;
		for (int i = 0; i < n; i++)
			if (i != j)
				m[i * n + j] += slots[(size_t)i * E + e] * keep * r->token_bytes;
	}
	return total > 0 ? dropped / total : 0;
}

static double expected_at(const pp_moe_routing *r, double s, double *p, double *slots, double *m,
                          double *dropped)
{
	popularity(r, s, p);
	for (int i = 0; i < r->ep; i++)
		for (int e = 0; e < r->experts; e++)
			slots[(size_t)i * r->experts + e] = r->tokens * r->top_k * p[e];
	double d = to_matrix(r, slots, m);
	if (dropped)
		*dropped = d;
	return a2a_time(m, r->ep, r->link_bytes_per_s);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double pick(double *v, int n, double pct)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	int k = (int)ceil(pct * n) - 1;
	return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

void pp_moe_result_free(pp_moe_result *out)
{
	free(out->expected);
	free(out->percentile);
	out->expected = out->percentile = NULL;
}

/* Midpoints of the drift integral (run_mean); test_moe checks it against a
 * step-by-step mean to 1e-4. */
#define RUN_POINTS 64

/*
 * The means over a run of `steps` steps, the skew S exp(-t / D) at step t
 * and t taken as continuous, of the expected matrix (into em; acc is
 * scratch), its time (returned) and dropped fraction (*dropped):
 *   (1/n) int_0^n f(S e^{-t/D}) dt = f(0) + (D/n) int_a^1 (f(S x) - f(0)) / x dx,
 * a = e^{-n/D} (x = e^{-t/D}); the integrand is bounded, so the midpoint
 * rule in x.
 */
static double run_mean(const pp_moe_routing *r, double steps, double *p, double *slots, double *m,
                       double *em, double *acc, double *dropped)
{
	size_t nn = (size_t)r->ep * r->ep;
	double d0, t0 = expected_at(r, 0, p, slots, em, &d0);
	double a = exp(-steps / r->drift_steps), h = (1 - a) / RUN_POINTS;
	double w = r->drift_steps / steps * h, t = t0, d = d0, inv = 0, dk;
	memset(acc, 0, nn * sizeof *acc);
	for (int k = 0; k < RUN_POINTS; k++) {
		double x = a + (k + 0.5) * h;
		double tk = expected_at(r, r->skew * x, p, slots, m, &dk);
		t += w * (tk - t0) / x;
		d += w * (dk - d0) / x;
		inv += w / x;
		for (size_t c = 0; c < nn; c++)
			acc[c] += w * m[c] / x;
	}
	for (size_t c = 0; c < nn; c++)
		em[c] = em[c] * (1 - inv) + acc[c];
	*dropped = d;
	return t;
}

/* The cumulative popularity at skew s into cdf; its total. */
static double cumulative(const pp_moe_routing *r, double s, double *p, double *cdf)
{
	popularity(r, s, p);
	double acc = 0;
	for (int e = 0; e < r->experts; e++)
		cdf[e] = (acc += p[e]);
	return acc;
}

/* pp_moe_alltoall (steps 0: at `step`) and pp_moe_alltoall_run (steps > 0). */
static pp_status alltoall(const pp_moe_routing *r, double step, double steps, int samples,
                          double pct, unsigned long long seed, pp_moe_result *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	if (r->experts < 1 || r->ep < 1 || r->experts % r->ep != 0)
		return ppi_fail(err, "", "moe.ep", "experts (%d) must be a multiple of ep (%d)",
		                r->experts, r->ep);
	if (r->top_k < 1 || r->top_k > r->experts)
		return ppi_fail(err, "", "moe.top_k", "expected 1..%d, got %d", r->experts,
		                r->top_k);
	if (!(r->tokens > 0) || !(r->token_bytes > 0) || !(r->link_bytes_per_s > 0))
		return ppi_fail(err, "", "moe.tokens",
		                "tokens, token bytes and link bandwidth must be positive");
	if (!(r->skew >= 0) || !(r->capacity_factor >= 0) || !(r->drift_steps >= 0) ||
	    samples < 0 || !(pct > 0 && pct <= 1) || !(steps >= 0 && steps < HUGE_VAL))
		return ppi_fail(
		    err, "", "moe.skew",
		    "skew, capacity factor, drift, steps >= 0; samples >= 0; 0 < pct <= 1");
	bool run = steps > 0 && r->drift_steps > 0 && !r->histogram;
	int n = r->ep, E = r->experts;
	size_t nn = (size_t)n * n;
	out->ep = n;
	out->expected = ppi_calloc(nn, sizeof *out->expected);
	out->percentile = ppi_calloc(nn, sizeof *out->percentile);
	double *p = ppi_malloc((size_t)E * sizeof *p), *cdf = ppi_malloc((size_t)E * sizeof *cdf);
	double *slots = ppi_malloc((size_t)n * E * sizeof *slots), *m = ppi_malloc(nn * sizeof *m);
	int ns = samples > 0 ? samples : 1;
	double *cells = ppi_malloc(((size_t)ns + 1) * nn * sizeof *cells),
	       *times = ppi_malloc(ns * sizeof *times);
	if (!out->expected || !out->percentile || !p || !cdf || !slots || !m || !cells || !times) {
		free(p), free(cdf), free(slots), free(m), free(cells), free(times);
		pp_moe_result_free(out);
		return ppi_fail(err, "", "moe", "out of memory");
	}
	double D = r->drift_steps;
	double s = D > 0 ? r->skew * exp(-(run ? 0 : step) / D) : r->skew;
	out->skew_now = run ? r->skew * exp(-steps / D) : s;
	if (run) /* cells' first matrix: run_mean's scratch, before the samples use them */
		out->expected_s = run_mean(r, steps, p, slots, m, out->expected,
		                           cells + (size_t)ns * nn, &out->dropped_fraction);
	else
		out->expected_s =
		    expected_at(r, s, p, slots, out->expected, &out->dropped_fraction);
	out->uniform_s = expected_at(r, 0, p, slots, m, NULL);
	/* sensitivity: central difference in the skew (one-sided at 0), at step 0 of a run */
	double h = 1e-4;
	double at = run ? expected_at(r, s, p, slots, m, NULL) : out->expected_s;
	double up = expected_at(r, s + h, p, slots, m, NULL);
	double dn = s >= h ? expected_at(r, s - h, p, slots, m, NULL) : at;
	out->dtime_dskew = r->histogram ? 0 : (up - dn) / (s >= h ? 2 * h : h);
	/* sampled routings: multinomial picks of T k slots per source; over a run,
	 * sample k at step (k + 0.5) steps / samples */
	double acc = cumulative(r, s, p, cdf);
	uint64_t rng = seed; /* SplitMix64 (util/hash.h) */
	long long picks = (long long)llround(r->tokens * r->top_k);
	for (int k = 0; k < samples; k++) {
		if (run)
			acc =
			    cumulative(r, r->skew * exp(-(k + 0.5) * steps / samples / D), p, cdf);
		memset(slots, 0, (size_t)n * E * sizeof *slots);
		for (int i = 0; i < n; i++)
			for (long long t = 0; t < picks; t++) {
				double u = ppi_splitmix64_unit(&rng) * acc;
				int lo = 0, hi = E - 1;
				while (lo < hi) {
					int mid = (lo + hi) / 2;
					if (cdf[mid] > u)
						hi = mid;
					else
						lo = mid + 1;
				}
				slots[(size_t)i * E + lo] += 1;
			}
		to_matrix(r, slots, m);
		memcpy(cells + (size_t)k * nn, m, nn * sizeof *m);
		times[k] = a2a_time(m, n, r->link_bytes_per_s);
	}
	if (samples > 0) {
		double *col = ppi_malloc((size_t)samples * sizeof *col);
		if (!col) {
			free(p), free(cdf), free(slots), free(m), free(cells), free(times);
			pp_moe_result_free(out);
			return ppi_fail(err, "", "moe", "out of memory");
		}
		for (size_t c = 0; c < nn; c++) {
			for (int k = 0; k < samples; k++)
				col[k] = cells[(size_t)k * nn + c];
			out->percentile[c] = pick(col, samples, pct);
		}
		free(col);
		out->percentile_s = pick(times, samples, pct);
	} else {
		memcpy(out->percentile, out->expected, nn * sizeof *m);
		out->percentile_s = out->expected_s;
	}
	free(p), free(cdf), free(slots), free(m), free(cells), free(times);
	return PP_OK;
}

pp_status pp_moe_alltoall(const pp_moe_routing *r, double step, int samples, double pct,
                          unsigned long long seed, pp_moe_result *out, pp_error *err)
{
	return alltoall(r, step, 0, samples, pct, seed, out, err);
}

pp_status pp_moe_alltoall_run(const pp_moe_routing *r, double steps, int samples, double pct,
                              unsigned long long seed, pp_moe_result *out, pp_error *err)
{
	return alltoall(r, 0, steps, samples, pct, seed, out, err);
}

double pp_moe_run_steps(const pp_job *job)
{
	return job->moe_routing.drift_steps > 0 && job->train_tokens > 0 && job->global_batch > 0 &&
	               job->seq_len > 0
	           ? job->train_tokens / ((double)job->global_batch * job->seq_len)
	           : 0;
}

void pp_moe_layer_alltoalls(const double *m, int n, double *f1, double *f2, double *b1, double *b2)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double x = m[i * n + j], t = m[j * n + i];
			f1[i * n + j] = x;
			f2[i * n + j] = t;
			b1[i * n + j] = x;
			b2[i * n + j] = t;
		}
}

pp_status pp_moe_routing_of_plan(const pp_model *m, const pp_system *s, const pp_job *job,
                                 const pp_plan *p, pp_moe_routing *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	if (p->dp < 1 || p->tp < 1 || p->cp < 1)
		return ppi_fail(err, "", "moe-routing", "the plan is not resolved (dp %d)", p->dp);
	if (m->moe.num_experts <= 0 || p->ep <= 1)
		return ppi_fail(err, "", "moe-routing",
		                "the routing model needs an MoE model and ep > 1 (%s, ep %d)",
		                m->name, p->ep);
	out->experts = m->moe.num_experts;
	out->top_k = m->moe.top_k;
	out->ep = p->ep;
	out->tokens = (double)p->mbs * job->seq_len / p->cp;
	out->token_bytes = 2.0 * m->hidden; /* bf16 dispatch */
	pp_layout l = pp_group_layout(p, s, PP_GROUP_EP);
	if (l.per_domain >= l.size && s->nvlink_bytes_per_s > 0)
		out->link_bytes_per_s = s->nvlink_bytes_per_s;
	else
		out->link_bytes_per_s = s->nic_bytes_per_s * s->nics_per_node /
		                        (s->gpus_per_node > 0 ? s->gpus_per_node : 1);
	return PP_OK;
}

/* log C(a, b): the hypergeometric odds below without overflow. */
static double log_choose(double a, double b)
{
	return lgamma(a + 1) - lgamma(b + 1) - lgamma(a - b + 1);
}

/* Expected boxes of `per` balls each (of `total`) hit by `draws` drawn
 * without replacement: boxes x (1 - C(total - per, draws) / C(total, draws)). */
static double boxes_hit(double boxes, double per, double total, double draws)
{
	if (draws >= total - per + 1)
		return boxes;
	return boxes * (1 - exp(log_choose(total - per, draws) - log_choose(total, draws)));
}

void pp_moe_dispatch_copies(int experts, int k, int num_groups, int group_topk, int n, int nd,
                            double *nic_copies, double *nvl_copies)
{
	*nic_copies = *nvl_copies = 0;
	if (n <= 1 || k <= 0 || experts <= 0)
		return;
	if (nd < 1)
		nd = 1;
	if (nd > n)
		nd = n;
	double N = (double)n / nd, D = 1;
	if (N > 1) {
		bool node_groups = num_groups > 0 && group_topk < num_groups &&
		                   num_groups % (n / nd) == 0 && k >= group_topk;
		D = node_groups ? boxes_hit(N, num_groups / N, num_groups, group_topk)
		                : boxes_hit(N, experts / N, experts, k);
	}
	/* GPUs a reached node's k / D experts land on: with whole groups a GPU,
	 * the GPUs group_topk groups fall on; else drawn with replacement. */
	double g;
	if (num_groups > 0 && group_topk < num_groups && num_groups % n == 0 && k >= group_topk)
		g = boxes_hit(n, (double)num_groups / n, num_groups, group_topk) / D;
	else
		g = nd * (1 - pow(1 - 1.0 / nd, k / D));
	*nic_copies = D * (N - 1) / N;
	*nvl_copies = D * g * (nd - 1) / nd;
}
