/*
 * nccl-tests logs (read by nccl_parse.c) -> per-tier latency and bandwidth
 * efficiency, fitted with paraplan's own collective model (pp_coll_time),
 * and the fitted system written as JSON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_int.h"
#include "paraplan/cost.h"
#include "paraplan/nccl.h"
#include "paraplan/params.h"
#include "util/util.h"

/* ------------------------------------------------------------ model */

static pp_coll_kind coll_of(pp_nccl_op op)
{
	switch (op) {
	case PP_NCCL_ALL_GATHER: return PP_COLL_ALLGATHER;
	case PP_NCCL_REDUCE_SCATTER: return PP_COLL_REDUCESCATTER;
	case PP_NCCL_ALLTOALL: return PP_COLL_ALLTOALL;
	case PP_NCCL_SENDRECV: return PP_COLL_P2P;
	case PP_NCCL_BROADCAST: return PP_COLL_BROADCAST;
	case PP_NCCL_REDUCE: return PP_COLL_REDUCE;
	case PP_NCCL_ALL_REDUCE:
	case PP_NCCL_UNKNOWN:
	default: return PP_COLL_ALLREDUCE;
	}
}

void pp_nccl_layout(const pp_system *s, const pp_nccl_log *lg, int *size, int *per_domain)
{
	int n = lg->ranks, nd;
	if (s->nvlink_domain > s->gpus_per_node) /* an NVLink domain spanning nodes */
		nd = lg->per_node * (s->nvlink_domain / s->gpus_per_node);
	else
		nd = lg->per_node < s->nvlink_domain ? lg->per_node : s->nvlink_domain;
	*size = n;
	*per_domain = nd > n ? n : nd < 1 ? 1 : nd;
}

bool pp_nccl_intra(const pp_system *s, const pp_nccl_log *lg)
{
	int n, nd;
	pp_nccl_layout(s, lg, &n, &nd);
	return nd >= n;
}

double pp_nccl_model_time(const pp_system *s, const pp_nccl_log *lg, double bytes)
{
	pp_layout l;
	pp_nccl_layout(s, lg, &l.size, &l.per_domain);
	return pp_coll_time(s, &l, coll_of(lg->op), bytes, NULL);
}

void pp_nccl_check_log(const pp_system *s, const pp_nccl_log *lg, pp_nccl_check *out)
{
	memset(out, 0, sizeof *out);
	if (lg->nrows == 0)
		return;
	double f = pp_nccl_busbw_factor(lg->op, lg->ranks), sum = 0;
	const pp_nccl_row *lo = &lg->rows[0], *hi = &lg->rows[0];
	for (size_t i = 0; i < lg->nrows; i++) {
		const pp_nccl_row *r = &lg->rows[i];
		if (r->bytes < lo->bytes)
			lo = r;
		if (r->bytes >= hi->bytes)
			hi = r;
		double e = log(pp_nccl_model_time(s, lg, r->bytes) / r->time_s);
		sum += e * e;
	}
	double th = pp_nccl_model_time(s, lg, hi->bytes);
	out->large_bytes = hi->bytes;
	out->busbw_log = hi->bytes / hi->time_s * f;
	out->busbw_model = th > 0 ? hi->bytes / th * f : 0;
	out->small_bytes = lo->bytes;
	out->small_log_s = lo->time_s;
	out->small_model_s = pp_nccl_model_time(s, lg, lo->bytes);
	out->rms_log_error = sqrt(sum / (double)lg->nrows);
}

/* ------------------------------------------------------------ fit */

typedef struct tier {
	const pp_nccl_log *logs;
	size_t nlogs;
	bool intra; /* which logs count, and which parameters move */
	pp_system s;
	double lat_lo, lat_hi, eff_lo, eff_hi;
	bool *mask; /* rows the latency step fits, all logs' rows in order; NULL = all */
} tier;

static void tier_set(tier *t, double lat, double eff)
{
	if (t->intra) {
		t->s.nvlink_latency_s = lat;
		t->s.nvlink_eff = eff;
	} else {
		t->s.nic_latency_s = lat;
		t->s.nic_eff = eff;
	}
}

/* Sum of squared ln(model / logged) over the tier's rows. */
static double tier_cost_rows(tier *t, double lat, double eff, const bool *mask)
{
	tier_set(t, lat, eff);
	double sum = 0;
	size_t idx = 0;
	for (size_t k = 0; k < t->nlogs; k++) {
		const pp_nccl_log *lg = &t->logs[k];
		size_t first = idx;
		idx += lg->nrows;
		if (pp_nccl_intra(&t->s, lg) != t->intra)
			continue;
		for (size_t i = 0; i < lg->nrows; i++) {
			if (mask && !mask[first + i])
				continue;
			double m = pp_nccl_model_time(&t->s, lg, lg->rows[i].bytes);
			double e = m > 0 ? log(m / lg->rows[i].time_s) : 50;
			sum += e * e;
		}
	}
	return sum;
}

static double tier_cost(tier *t, double lat, double eff)
{
	return tier_cost_rows(t, lat, eff, NULL);
}

/* The latency-bound rows: those whose logged time is at most twice the
 * log's shortest (the flat start of the curve).  Read from the log, not the
 * model, so the set does not follow the fit. */
static void latency_rows(tier *t)
{
	size_t idx = 0;
	for (size_t k = 0; k < t->nlogs; k++) {
		const pp_nccl_log *lg = &t->logs[k];
		double lo = INFINITY;
		for (size_t i = 0; i < lg->nrows; i++)
			if (lg->rows[i].time_s < lo)
				lo = lg->rows[i].time_s;
		for (size_t i = 0; i < lg->nrows; i++)
			t->mask[idx + i] = lg->rows[i].time_s <= 2 * lo;
		idx += lg->nrows;
	}
}

/* Minimise g over [lo, hi]: a grid of 24 points, then golden-section search
 * in the bracket around the best one.  Returns the argmin; *best its value. */
typedef double (*fn1)(tier *t, double x, double other, double *arg_out);

static double golden(tier *t, fn1 g, double other, double lo, double hi, double *best,
                     double *arg_out)
{
	enum { GRID = 24, STEPS = 48 };
	double bx = lo, bv = INFINITY;
	for (int i = 0; i <= GRID; i++) {
		double x = lo + (hi - lo) * i / GRID;
		double v = g(t, x, other, NULL);
		if (v < bv) {
			bv = v;
			bx = x;
		}
	}
	double step = (hi - lo) / GRID;
	double a = bx - step > lo ? bx - step : lo, b = bx + step < hi ? bx + step : hi;
	const double r = 0.6180339887498949;
	double c = b - r * (b - a), d = a + r * (b - a);
	double fc = g(t, c, other, NULL), fd = g(t, d, other, NULL);
	for (int i = 0; i < STEPS; i++) {
		if (fc < fd) {
			b = d;
			d = c;
			fd = fc;
			c = b - r * (b - a);
			fc = g(t, c, other, NULL);
		} else {
			a = c;
			c = d;
			fc = fd;
			d = a + r * (b - a);
			fd = g(t, d, other, NULL);
		}
	}
	double x = fc < fd ? c : d, v = fc < fd ? fc : fd;
	if (bv < v) {
		x = bx;
		v = bv;
	}
	*best = v;
	if (arg_out)
		g(t, x, other, arg_out);
	return x;
}

/* Sum of squared (model - logged) / (the log's largest time): absolute time,
 * so the bandwidth-bound sizes dominate; each log counts alike. */
static double cost_abs(tier *t, double eff, double lnlat, double *unused)
{
	(void)unused;
	tier_set(t, exp(lnlat), eff);
	double sum = 0;
	for (size_t k = 0; k < t->nlogs; k++) {
		const pp_nccl_log *lg = &t->logs[k];
		if (pp_nccl_intra(&t->s, lg) != t->intra)
			continue;
		double top = 0;
		for (size_t i = 0; i < lg->nrows; i++)
			if (lg->rows[i].time_s > top)
				top = lg->rows[i].time_s;
		for (size_t i = 0; i < lg->nrows; i++) {
			double e = (pp_nccl_model_time(&t->s, lg, lg->rows[i].bytes) -
			            lg->rows[i].time_s) /
			           top;
			sum += e * e;
		}
	}
	return sum;
}

/* Sum of squared ln(model / logged) over the latency-bound rows at a given
 * ln(latency). */
static double cost_ln(tier *t, double lnlat, double eff, double *unused)
{
	(void)unused;
	return tier_cost_rows(t, exp(lnlat), eff, t->mask);
}

static size_t tier_rows(const tier *t)
{
	size_t n = 0;
	for (size_t k = 0; k < t->nlogs; k++)
		if (pp_nccl_intra(&t->s, &t->logs[k]) == t->intra)
			n += t->logs[k].nrows;
	return n;
}

/*
 * Alternating least squares: the efficiency (the bandwidth) minimises the
 * squared error in time, where the large, bandwidth-bound sizes weigh most;
 * the latency minimises the squared error in ln(time) over the latency-bound
 * sizes (latency_rows).  Repeat until neither moves.  (One least-squares
 * objective over every size would trade the two ends against the middle of
 * the curve, where NCCL's protocol changes make any alpha-beta model wrong by
 * tens of percent; the middle would pull the latency up.)
 */
static bool fit_tier(tier *t, bool *at_bound, double *rms)
{
	double lat = t->intra ? t->s.nvlink_latency_s : t->s.nic_latency_s;
	double eff = t->intra ? t->s.nvlink_eff : t->s.nic_eff;
	double lnlat = log(lat > t->lat_lo && lat < t->lat_hi ? lat : sqrt(t->lat_lo * t->lat_hi));
	if (!(eff > t->eff_lo && eff < t->eff_hi))
		eff = 0.5 * (t->eff_lo + t->eff_hi);
	double v = 0;
	size_t total = 0;
	for (size_t k = 0; k < t->nlogs; k++)
		total += t->logs[k].nrows;
	t->mask = ppi_calloc(total ? total : 1, sizeof *t->mask);
	if (!t->mask)
		return false; /* out of memory: no fit on every row in its place */
	latency_rows(t);
	for (int it = 0; it < 60; it++) {
		double e = golden(t, cost_abs, lnlat, t->eff_lo, t->eff_hi, &v, NULL);
		double l = golden(t, cost_ln, e, log(t->lat_lo), log(t->lat_hi), &v, NULL);
		bool settled = fabs(e - eff) < 1e-7 && fabs(l - lnlat) < 1e-7;
		eff = e;
		lnlat = l;
		if (settled)
			break;
	}
	free(t->mask);
	t->mask = NULL;
	tier_set(t, exp(lnlat), eff);
	double lo = log(t->lat_lo), hi = log(t->lat_hi);
	*at_bound = eff < t->eff_lo + 1e-3 || eff > t->eff_hi - 1e-3 || lnlat < lo + 1e-3 ||
	            lnlat > hi - 1e-3;
	size_t n = tier_rows(t);
	*rms = n ? sqrt(tier_cost(t, exp(lnlat), eff) / (double)n) : 0;
	return true;
}

pp_status pp_nccl_fit_logs(const pp_system *start, const pp_nccl_log *logs, size_t nlogs,
                           pp_nccl_fit *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	out->system = *start;
	if (nlogs == 0)
		return ppi_fail(err, "nccl-tests", NULL, "no logs to fit");
	for (size_t k = 0; k < nlogs; k++) {
		const pp_nccl_log *lg = &logs[k];
		if (lg->ranks < 2)
			return ppi_fail(err, lg->source, NULL,
			                "%d rank: a collective needs at least 2 to measure a link",
			                lg->ranks);
		if (lg->nrows == 0 || lg->op == PP_NCCL_UNKNOWN)
			return ppi_fail(err, lg->source, NULL, "no rows to fit");
		if (lg->per_node > start->gpus_per_node)
			return ppi_fail(
			    err, lg->source, NULL,
			    "%d ranks on one host, but system '%s' has %d GPUs per node",
			    lg->per_node, start->name, start->gpus_per_node);
		if (pp_nccl_intra(start, lg))
			out->intra_logs++;
		else
			out->inter_logs++;
	}
	const pp_param *nv = pp_param_find("framework.nvlink_eff");
	const pp_param *nic = pp_param_find("framework.nic_eff");
	tier t = {logs, nlogs, true, *start, 1e-8, 1e-3, nv->valid_lo, nv->valid_hi, NULL};
	if (out->intra_logs && !fit_tier(&t, &out->intra_at_bound, &out->intra_rms))
		return ppi_oom(err);
	if (out->inter_logs) {
		t.intra = false;
		t.lat_hi = 1e-2;
		t.eff_lo = nic->valid_lo;
		t.eff_hi = nic->valid_hi;
		if (!fit_tier(&t, &out->inter_at_bound, &out->inter_rms))
			return ppi_oom(err);
	}
	out->system = t.s;
	return PP_OK;
}

/* ------------------------------------------------------------ output */

/* Four significant digits: what a log can support. */
static double round4(double x)
{
	if (!(x > 0))
		return x;
	double p = pow(10, floor(log10(x)) - 3);
	return round(x / p) * p;
}

static void human_bytes(double b, char *buf, size_t n)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, n, "%g %s", b, unit[u]);
}

/* "h100x4.txt (all_reduce_perf, 4 ranks on 1 host, 28 sizes 8 B-1 GiB): busbw
 * at 1 GiB 355.9 GB/s logged, 355.1 modelled; 8 B: 26.1 us logged, 24.0
 * modelled" for each log of the tier, joined by "; ". */
static void tier_note(const pp_system *s, const pp_nccl_log *logs, size_t nlogs, bool intra,
                      const char *what, char *buf, size_t n)
{
	size_t used =
	    (size_t)snprintf(buf, n, "%s fitted by 'paraplan calibrate --nccl-tests' to ", what);
	const char *sep = "";
	for (size_t k = 0; k < nlogs && used < n; k++) {
		const pp_nccl_log *lg = &logs[k];
		if (pp_nccl_intra(s, lg) != intra)
			continue;
		pp_nccl_check c;
		pp_nccl_check_log(s, lg, &c);
		char lo[32], hi[32];
		human_bytes(c.small_bytes, lo, sizeof lo);
		human_bytes(c.large_bytes, hi, sizeof hi);
		used += (size_t)snprintf(
		    buf + used, n - used,
		    "%s%s (%s_perf, %d ranks on %d host%s, %zu sizes %s-%s): busbw at %s %.1f GB/s "
		    "logged, %.1f modelled; %s: %.1f us logged, %.1f modelled",
		    sep, ppi_nccl_base_name(lg->source), pp_nccl_op_name(lg->op), lg->ranks,
		    lg->nodes, lg->nodes == 1 ? "" : "s", lg->nrows, lo, hi, hi, c.busbw_log / 1e9,
		    c.busbw_model / 1e9, lo, c.small_log_s * 1e6, c.small_model_s * 1e6);
		sep = "; ";
	}
	if (used < n)
		snprintf(buf + used, n - used,
		         " (least squares of ln(model/logged time) over every size, paraplan's "
		         "collective model; docs/calibration.md)");
}

static int set_real(json_t *obj, const char *key, double v)
{
	return json_object_set_new(obj, key, json_real(round4(v)));
}

pp_status pp_nccl_system_json(const char *start_ref, const pp_nccl_fit *fit,
                              const pp_nccl_log *logs, size_t nlogs, char **json, pp_error *err)
{
	*json = NULL;
	char *text;
	size_t len;
	long long mark = ppi_alloc_failed(); /* a value dropped out of memory: PP_ENOMEM */
	PPI_TRY(pp_system_source_text(start_ref, &text, &len, err));
	json_t *root;
	pp_status st = ppi_json_parse_object(text, len, start_ref, &root, err);
	free(text);
	if (st)
		return st;
	const pp_system *s = &fit->system;
	char name[PP_NAME_MAX + 8];
	snprintf(name, sizeof name, "%s-nccl", s->name);
	json_object_set_new(root, "name", json_string(name));
	json_object_del(root, "aliases");
	json_t *fw = json_object_get(root, "framework");
	if (!json_is_object(fw)) {
		fw = json_object();
		json_object_set_new(root, "framework", fw);
	}
	json_t *src = json_object_get(root, "sources");
	if (!json_is_object(src)) {
		src = json_object();
		json_object_set_new(root, "sources", src);
	}
	char note[4096];
	if (fit->intra_logs) {
		set_real(root, "nvlink_latency_s", s->nvlink_latency_s);
		set_real(fw, "nvlink_eff", s->nvlink_eff);
		tier_note(s, logs, nlogs, true, "NVLink tier", note, sizeof note);
		json_object_set_new(src, "nvlink_latency_s", json_string(note));
		json_object_set_new(src, "framework.nvlink_eff", json_string(note));
	}
	if (fit->inter_logs) {
		set_real(root, "nic_latency_s", s->nic_latency_s);
		set_real(fw, "nic_eff", s->nic_eff);
		tier_note(s, logs, nlogs, false, "NIC tier", note, sizeof note);
		json_object_set_new(src, "nic_latency_s", json_string(note));
		json_object_set_new(src, "framework.nic_eff", json_string(note));
		/* its network is measured now: calibrate must not refit it on
		 * training steps (pp_system.fit_nic_eff) */
		json_object_del(root, "fit_nic_eff");
		json_object_del(src, "fit_nic_eff");
	}
	char *out =
	    json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (!out || ppi_alloc_failed() != mark) {
		free(out);
		return ppi_fail(err, start_ref, NULL, "out of memory"), PP_ENOMEM;
	}
	/* What was written must read back as a system. */
	pp_system back;
	st = pp_system_from_json(out, strlen(out), name, &back, err);
	if (st) {
		free(out);
		return st;
	}
	size_t n = strlen(out);
	char *nl = ppi_realloc(out, n + 2);
	if (!nl) {
		free(out);
		return ppi_fail(err, start_ref, NULL, "out of memory"), PP_ENOMEM;
	}
	nl[n] = '\n';
	nl[n + 1] = '\0';
	*json = nl;
	return PP_OK;
}

void pp_nccl_calibration_free(pp_nccl_calibration *c)
{
	for (size_t k = 0; k < c->nlogs; k++)
		pp_nccl_log_free(&c->logs[k]);
	free(c->logs);
	free(c->json);
	memset(c, 0, sizeof *c);
}

pp_status pp_nccl_calibrate(const char *start_ref, const char *const *paths, size_t n,
                            pp_nccl_calibration *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	pp_system start;
	pp_status st = pp_system_resolve(start_ref, &start, err);
	if (st)
		return st;
	if (!(out->logs = ppi_calloc(n ? n : 1, sizeof *out->logs)))
		return ppi_oom(err);
	for (size_t k = 0; k < n && !st; k++)
		if (!(st = pp_nccl_load(paths[k], &out->logs[k], err)))
			out->nlogs++;
	if (!st)
		st = pp_nccl_fit_logs(&start, out->logs, out->nlogs, &out->fit, err);
	if (!st)
		st = pp_nccl_system_json(start_ref, &out->fit, out->logs, out->nlogs, &out->json,
		                         err);
	if (st)
		pp_nccl_calibration_free(out);
	return st;
}
