/*
 * Coordinate-descent calibration of one GPU's efficiency parameters (and the
 * network efficiencies of the systems built from it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/calib.h"
#include "util/util.h"

typedef struct fit_case {
	bool excluded; /* held out (cross-validation) */
	pp_model model;
	pp_system system;
	pp_job job;
	pp_plan plan;
	long long gpus;
	pp_run_info info;
} fit_case;

/* A parameter: where it lives in (eff, net), its bounds, and whether it moves
 * on a log scale (positive quantities spanning decades). */
typedef struct fit_param {
	const char *name;
	double lo, hi;
	bool log_scale;
	double start;
} fit_param;

enum { P_GEMM, P_GEMM_FP8, P_HALF, P_ATTN, P_MEM, P_KERNEL, P_NVLINK, P_NIC, NPARAMS };
/* Bounds are what the hardware allows, so a fit cannot buy accuracy with an
 * impossible value: GEMMs between 30% and 90% of peak (cuBLAS/cuBLASLt
 * benchmarks span that), FP8 at most the BF16 fraction's reach, kernels 1-30 us
 * of fixed cost, collectives 50-95% of link rate (nccl-tests bus bandwidth). */
static const fit_param params[NPARAMS] = {
    {"gemm", 0.3, 0.9, false, 0.7},
    {"gemm_fp8", 0.2, 0.8, false, 0.5},
    {"gemm_half_flops", 1e8, 1e12, true, 1e10},
    {"attn", 0.2, 0.8, false, 0.5},
    {"memory", 0.5, 0.95, false, 0.8},
    {"kernel_s", 1e-6, 3e-5, true, 5e-6},
    {"nvlink_eff", 0.5, 0.95, false, 0.8},
    {"nic_eff", 0.5, 0.95, false, 0.8},
};

struct pp_fit {
	fit_case *cases;
	size_t n;
	pp_estimate *scratch;
	double x[NPARAMS];
	bool used[NPARAMS]; /* parameters some record is sensitive to */
	double mape_start, mape, last_gain;
	int iterations;
};

static double *slot(pp_gpu_eff *e, pp_fit_net *net, int k)
{
	switch (k) {
	case P_GEMM: return &e->gemm;
	case P_GEMM_FP8: return &e->gemm_fp8;
	case P_HALF: return &e->gemm_half_flops;
	case P_ATTN: return &e->attn;
	case P_MEM: return &e->memory;
	case P_KERNEL: return &e->kernel_s;
	case P_NVLINK: return &net->nvlink_eff;
	case P_NIC:
	default: return &net->nic_eff;
	}
}

/* Signed error of case i at parameters x (NAN when it cannot be compared). */
static double case_error(pp_fit *f, size_t i, const double *x)
{
	fit_case *c = &f->cases[i];
	pp_system s = c->system;
	pp_fit_net net = {s.nvlink_eff, s.nic_eff};
	for (int j = 0; j < NPARAMS; j++)
		*slot(&s.gpu.eff, &net, j) = x[j];
	s.nvlink_eff = net.nvlink_eff;
	s.nic_eff = net.nic_eff;
	pp_error err;
	if (pp_estimate_run(&c->model, &s, &c->job, &c->plan, c->gpus, f->scratch, &err))
		return NAN;
	pp_comparison sp;
	pp_run_compare(&c->info, f->scratch, &sp, NULL);
	return sp.metric == PP_METRIC_NONE ? NAN : sp.error;
}

static double objective(pp_fit *f, const double *x)
{
	double sum = 0;
	size_t k = 0;
	for (size_t i = 0; i < f->n; i++) {
		if (f->cases[i].excluded)
			continue;
		double e = case_error(f, i, x);
		if (!isfinite(e))
			continue;
		sum += fabs(e);
		k++;
	}
	return k ? sum / k : INFINITY;
}

pp_status pp_fit_new(const pp_runs *runs, const char *gpu, pp_fit **out, pp_error *err)
{
	*out = NULL;
	pp_fit *f = calloc(1, sizeof *f);
	size_t total = pp_runs_count(runs);
	if (!f || !(f->cases = calloc(total ? total : 1, sizeof *f->cases)) ||
	    !(f->scratch = malloc(sizeof *f->scratch))) {
		pp_fit_free(f);
		return PP_ENOMEM;
	}
	for (size_t i = 0; i < total; i++) {
		fit_case *c = &f->cases[f->n];
		pp_error e;
		if (pp_run_inputs(runs, i, &c->model, &c->system, &c->job, &c->plan, &c->gpus,
		                  &c->info, &e))
			continue;
		if (!ppi_streq(c->system.gpu.name, gpu))
			continue;
		f->n++;
	}
	if (f->n == 0) {
		pp_fit_free(f);
		return ppi_fail(err, "", "gpu", "no record was measured on GPU '%s'", gpu);
	}
	/* Start from the same neutral point whatever the presets say, so a fit is
	 * reproducible and does not depend on an earlier one. */
	for (int j = 0; j < NPARAMS; j++)
		f->x[j] = params[j].start;
	/* A parameter no record reacts to stays at its preset value. */
	f->mape_start = f->mape = objective(f, f->x);
	for (int j = 0; j < NPARAMS; j++) {
		double y[NPARAMS];
		memcpy(y, f->x, sizeof y);
		y[j] = params[j].log_scale ? y[j] * 2 : y[j] * 0.9;
		f->used[j] = fabs(objective(f, y) - f->mape) > 1e-9;
	}
	f->last_gain = INFINITY;
	*out = f;
	return PP_OK;
}

/* Golden-section search of parameter j over its bounds (unimodal assumption),
 * keeping the best point seen, the current one included. */
static void line_search(pp_fit *f, int j)
{
	const double g = 0.6180339887498949;
	const fit_param *pr = &params[j];
	double lo = pr->log_scale ? log(pr->lo) : pr->lo;
	double hi = pr->log_scale ? log(pr->hi) : pr->hi;
	double y[NPARAMS];
	memcpy(y, f->x, sizeof y);
#define AT(v) (y[j] = pr->log_scale ? exp(v) : (v), objective(f, y))
	double a = lo, b = hi;
	double c = b - g * (b - a), d = a + g * (b - a);
	double fc = AT(c), fd = AT(d);
	double best = f->mape, bestv = f->x[j];
	for (int it = 0; it < 18; it++) {
		if (fc < fd) {
			b = d;
			d = c;
			fd = fc;
			c = b - g * (b - a);
			fc = AT(c);
		} else {
			a = c;
			c = d;
			fc = fd;
			d = a + g * (b - a);
			fd = AT(d);
		}
		double v = fc < fd ? c : d, fv = fc < fd ? fc : fd;
		if (fv < best) {
			best = fv;
			bestv = pr->log_scale ? exp(v) : v;
		}
	}
#undef AT
	f->x[j] = bestv;
	f->mape = best;
}

void pp_fit_iterate(pp_fit *f)
{
	double before = f->mape;
	for (int j = 0; j < NPARAMS; j++)
		if (f->used[j])
			line_search(f, j);
	f->last_gain = before - f->mape;
	f->iterations++;
}

bool pp_fit_test(const pp_fit *f, double tol)
{
	return f->last_gain < tol;
}

int pp_fit_iterations(const pp_fit *f)
{
	return f->iterations;
}

size_t pp_fit_records(const pp_fit *f)
{
	return f->n;
}

double pp_fit_mape_start(const pp_fit *f)
{
	return f->mape_start;
}

double pp_fit_mape(const pp_fit *f)
{
	return f->mape;
}

void pp_fit_result(const pp_fit *f, pp_gpu_eff *eff, pp_fit_net *net)
{
	*eff = f->cases[0].system.gpu.eff;
	net->nvlink_eff = f->cases[0].system.nvlink_eff;
	net->nic_eff = f->cases[0].system.nic_eff;
	for (int j = 0; j < NPARAMS; j++)
		*slot(eff, net, j) = f->x[j];
}

void pp_fit_free(pp_fit *f)
{
	if (!f)
		return;
	free(f->cases);
	free(f->scratch);
	free(f);
}

size_t pp_fit_systems(const pp_fit *f, const char **names, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++) {
		size_t k = 0;
		while (k < n && strcmp(names[k], f->cases[i].system.name) != 0)
			k++;
		if (k == n && n < max)
			names[n++] = f->cases[i].system.name;
	}
	return n;
}

void pp_fit_hold_out(pp_fit *f, size_t k)
{
	for (size_t i = 0; i < f->n; i++)
		f->cases[i].excluded = i == k;
	for (int j = 0; j < NPARAMS; j++)
		f->x[j] = params[j].start;
	f->mape = objective(f, f->x);
	f->last_gain = INFINITY;
	f->iterations = 0;
}

double pp_fit_error(pp_fit *f, size_t k)
{
	return k < f->n ? case_error(f, k, f->x) : NAN;
}
