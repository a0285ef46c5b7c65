/*
 * Coordinate-descent calibration of one GPU's efficiency parameters (and the
 * network efficiencies of the systems built from it).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/calib.h"
#include "paraplan/dhelix.h"
#include "paraplan/inputs.h"
#include "paraplan/kernel.h"
#include "paraplan/params.h"
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

/* The parameters are the registry's fitted ones (include/paraplan/params.h),
 * in registry order: GPU efficiencies, then the network efficiencies of the
 * systems the records ran on.  Each has its bounds (what the hardware allows),
 * a log scale for positive quantities spanning decades, and a neutral start. */
struct pp_fit {
	fit_case *cases;
	size_t n;
	pp_estimate *scratch;
	size_t np;              /* fitted parameters */
	const pp_param **param; /* [np] their registry entries */
	double *x;              /* [np] current values */
	double *y;              /* [np] scratch for trial points */
	double *w;              /* [3 np] the pattern move's: start, base, direction */
	bool *used;             /* [np] parameters some record is sensitive to */
	double mape_start, mape, last_gain;
	int iterations;
	double gemm_hi;     /* upper bound of gemm, the records' GPUs' least */
	double gemm_fp8_hi; /* the same for gemm_fp8 */
	/* Per-system slots after the registry's parameters: slot_sys[j] is the
	 * index in nets of the one system parameter j applies to, -1 for a
	 * parameter of every record.  nets: the systems no nccl-tests measure
	 * (pp_system.fit_nic_eff), whose nic_eff the fit sets from their own
	 * records alone. */
	int *slot_sys;
	char nets[PP_FIT_NETS_MAX][PP_NAME_MAX];
	size_t nnets;
	size_t nreg_fitted;  /* parameters before the per-system slots */
	const pp_param *nic; /* framework.nic_eff, the slots' parameter */
};

/* Parameter j's fit bounds and neutral start: the registry's (the GPU
 * fractions are the stack's fractions of the kernel model's rates, which no
 * stack exceeds), except that the GEMM's upper bound is the GPU's own
 * measured best where its table is carried rather than measured
 * (pp_kernel_gemm_fit_ceiling: 1.14 on A100), and the FP8 GEMM's the
 * reference's fastest measured FP8 shape (pp_kernel_gemm_fp8_fit_ceiling). */
static void param_range(const pp_fit *f, size_t j, double *lo, double *hi, double *start)
{
	const pp_param *p = f->param[j];
	*lo = p->fit_lo;
	*hi = p->fit_hi;
	*start = p->fit_start;
	if (ppi_streq(p->key, "gemm") && isfinite(f->gemm_hi))
		*hi = f->gemm_hi;
	if (ppi_streq(p->key, "gemm_fp8") && isfinite(f->gemm_fp8_hi))
		*hi = f->gemm_fp8_hi;
}

static double param_start(const pp_fit *f, size_t j)
{
	double lo, hi, start;
	param_range(f, j, &lo, &hi, &start);
	return start;
}

static bool has_slot(const pp_fit *f, const char *system)
{
	for (size_t k = 0; k < f->nnets; k++)
		if (ppi_streq(system, f->nets[k]))
			return true;
	return false;
}

/* Whether fitted parameter j is set on case c.  A per-system slot: on its
 * own system's records only.  A network efficiency the fit leaves alone
 * (fit_react): not at all, so each record keeps its system's own, the
 * nccl-tests' (a cluster's calibrate --nccl-tests value included); except
 * the nic_eff of a network no nccl-tests measure in a fit without its slot
 * (the pooled ones, "*"), which takes the neutral start: its preset value
 * was fitted to these very records by their GPU's fit, and a pooled fit,
 * like a held-out fold, must not see it. */
static bool applies(const pp_fit *f, size_t j, const fit_case *c)
{
	if (f->slot_sys[j] >= 0)
		return ppi_streq(c->system.name, f->nets[f->slot_sys[j]]);
	if (f->used[j] || f->param[j]->kind != PP_PARAM_SYSTEM)
		return true;
	return c->system.fit_nic_eff && f->param[j] == f->nic && !has_slot(f, c->system.name);
}

/* Signed error of case i at parameters x (NAN when it cannot be compared). */
static double case_error(pp_fit *f, size_t i, const double *x)
{
	fit_case *c = &f->cases[i];
	pp_system s = c->system;
	for (size_t j = 0; j < f->np; j++)
		if (applies(f, j, c))
			pp_param_set(f->param[j], &s, x[j]);
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

static void fit_start(pp_fit *f);
static void fit_react(pp_fit *f);

/* A fit of `ncases` records with the registry's fitted parameters and room
 * for the per-system slots (add_net_slots); NULL when out of memory. */
static pp_fit *fit_alloc(size_t ncases)
{
	pp_fit *f = ppi_calloc(1, sizeof *f);
	size_t nreg = pp_param_registry_size(), np = nreg + PP_FIT_NETS_MAX;
	if (!f || !(f->cases = ppi_calloc(ncases ? ncases : 1, sizeof *f->cases)) ||
	    !(f->scratch = ppi_malloc(sizeof *f->scratch)) ||
	    !(f->param = ppi_calloc(np, sizeof *f->param)) ||
	    !(f->x = ppi_calloc(np, sizeof *f->x)) || !(f->y = ppi_calloc(np, sizeof *f->y)) ||
	    !(f->w = ppi_calloc(3 * np, sizeof *f->w)) ||
	    !(f->used = ppi_calloc(np, sizeof *f->used)) ||
	    !(f->slot_sys = ppi_calloc(np, sizeof *f->slot_sys))) {
		pp_fit_free(f);
		return NULL;
	}
	for (size_t i = 0; i < nreg; i++)
		if (pp_param_at(i)->fitted) {
			f->slot_sys[f->np] = -1;
			f->param[f->np++] = pp_param_at(i);
		}
	f->nreg_fitted = f->np;
	f->nic = pp_param_find("framework.nic_eff");
	return f;
}

/* One nic_eff slot per system of the records that no nccl-tests measure
 * (pp_system.fit_nic_eff), in the order the records name them. */
static void add_net_slots(pp_fit *f)
{
	for (size_t i = 0; f->nic && i < f->n; i++) {
		const pp_system *s = &f->cases[i].system;
		if (!s->fit_nic_eff || has_slot(f, s->name) || f->nnets == PP_FIT_NETS_MAX)
			continue;
		ppi_strlcpy(f->nets[f->nnets], s->name, sizeof f->nets[0]);
		f->slot_sys[f->np] = (int)f->nnets++;
		f->param[f->np++] = f->nic;
	}
}

pp_status pp_fit_new(const pp_runs *runs, const char *gpu, pp_fit **out, pp_error *err)
{
	*out = NULL;
	size_t total = pp_runs_count(runs);
	pp_fit *f = fit_alloc(total);
	if (!f)
		return PP_ENOMEM;
	/* "GPU" or "GPU:STACK" (the records' data/framework preset).  A plain
	 * GPU takes its silicon's records: its own and its sibling's. */
	char gname[PP_NAME_MAX];
	ppi_strlcpy(gname, gpu, sizeof gname);
	char *stack = strchr(gname, ':');
	if (stack)
		*stack++ = 0;
	const char *sib = stack ? NULL : pp_fit_sibling(gname, NULL);
	for (size_t i = 0; i < total; i++) {
		fit_case *c = &f->cases[f->n];
		pp_error e;
		if (pp_run_inputs(runs, i, &c->model, &c->system, &c->job, &c->plan, &c->gpus,
		                  &c->info, &e))
			continue;
		if (!ppi_streq(gname, "*") && !ppi_streq(c->system.gpu.name, gname) &&
		    !(sib && ppi_streq(c->system.gpu.name, sib)))
			continue;
		if (stack && !ppi_streq(c->system.framework, stack))
			continue;
		f->n++;
	}
	if (f->n == 0) {
		pp_fit_free(f);
		return ppi_fail(err, "", "gpu", "no record was measured on GPU '%s'%s%s", gname,
		                stack ? " with stack " : "", stack ? stack : "");
	}
	/* A pooled fit ("*", "*:STACK") fits GPU fractions alone: it does not
	 * calibrate a network (fitted there, Jean Zay's traded against the one
	 * set's GEMM fraction along a flat valley and left it at its bound), and
	 * such a network's records run at the neutral start (applies). */
	if (!ppi_streq(gname, "*"))
		add_net_slots(f);
	fit_start(f);
	*out = f;
	return PP_OK;
}

/* Start from the same neutral point whatever the presets say, so a fit is
 * reproducible and does not depend on an earlier one. */
static void fit_start(pp_fit *f)
{
	/* The GEMM fraction's upper bound: the least of the cases' GPUs' (1, or
	 * a part's own measured best over its carried rate). */
	f->gemm_hi = f->gemm_fp8_hi = INFINITY;
	for (size_t i = 0; i < f->n; i++) {
		const char *g = f->cases[i].system.gpu.name;
		f->gemm_hi = fmin(f->gemm_hi, pp_kernel_gemm_fit_ceiling(g));
		f->gemm_fp8_hi = fmin(f->gemm_fp8_hi, pp_kernel_gemm_fp8_fit_ceiling(g));
	}
	for (size_t j = 0; j < f->np; j++)
		f->x[j] = param_start(f, j);
	f->mape_start = f->mape = objective(f, f->x);
	fit_react(f);
	f->last_gain = INFINITY;
}

/* Which parameters the records in the objective pin, at the neutral start
 * (f->x): moved alone to either end of its fit range, the parameter changes
 * their MAPE by more than the fit resolves (PP_FIT_TOL, a sweep's least
 * gain).  One they do not pin stays at its neutral value and says nothing
 * about the hardware (pp_fit_pinned): a value the fit could set anywhere in
 * its range at no cost is the data's silence, not a measurement. */
static void fit_react(pp_fit *f)
{
	for (size_t j = 0; j < f->np; j++) {
		double *y = f->y, lo, hi, start, moved = 0;
		param_range(f, j, &lo, &hi, &start);
		memcpy(y, f->x, f->np * sizeof *y);
		for (int end = 0; end < 2; end++) {
			y[j] = end ? hi : lo;
			double d = fabs(objective(f, y) - f->mape);
			if (d > moved)
				moved = d;
		}
		f->used[j] = moved > PP_FIT_TOL;
		/* The network efficiencies are nccl-tests' (their neutral start,
		 * data/framework/megatron.json; calibrate --nccl-tests for a
		 * cluster's own), not traded against the stack's kernel fractions
		 * on step times: fitted there they sat at 0.5 or 0.95. */
		if (f->param[j]->kind == PP_PARAM_SYSTEM && f->slot_sys[j] < 0)
			f->used[j] = false;
	}
}

/* The objective at point v of a line: `at` sets up the trial point in f->y. */
typedef double (*line_at)(pp_fit *f, const void *ctx, double v);

/* Golden-section search of a line's objective over [a, b] (unimodal
 * assumption), 18 steps, keeping the best point seen: *best on entry is the
 * current point's value, *bestv its argument; both are lowered where a trial
 * point does better. */
static void golden(pp_fit *f, line_at at, const void *ctx, double a, double b, double *best,
                   double *bestv)
{
	const double g = 0.6180339887498949;
	double c = b - g * (b - a), d = a + g * (b - a);
	double fc = at(f, ctx, c), fd = at(f, ctx, d);
	for (int it = 0; it < 18; it++) {
		if (fc < fd) {
			b = d;
			d = c;
			fd = fc;
			c = b - g * (b - a);
			fc = at(f, ctx, c);
		} else {
			a = c;
			c = d;
			fc = fd;
			d = a + g * (b - a);
			fd = at(f, ctx, d);
		}
		double v = fc < fd ? c : d, fv = fc < fd ? fc : fd;
		if (fv < *best) {
			*best = fv;
			*bestv = v;
		}
	}
}

/* Parameter j's coordinate in the space the line searches work in (log for
 * a log-scale parameter), and back. */
static double to_u(const pp_fit *f, size_t j, double v)
{
	return f->param[j]->fit_log ? log(v) : v;
}

static double from_u(const pp_fit *f, size_t j, double u)
{
	return f->param[j]->fit_log ? exp(u) : u;
}

/* Coordinate j at u, the others as f->x (f->y holds them). */
static double coord_at(pp_fit *f, const void *ctx, double u)
{
	size_t j = *(const size_t *)ctx;
	f->y[j] = from_u(f, j, u);
	return objective(f, f->y);
}

/* Golden-section search of parameter j over its bounds, keeping the best
 * point seen, the current one included. */
static void line_search(pp_fit *f, size_t j)
{
	double plo, phi, pstart;
	param_range(f, j, &plo, &phi, &pstart);
	memcpy(f->y, f->x, f->np * sizeof *f->y);
	double best = f->mape, bestu = NAN;
	golden(f, coord_at, &j, to_u(f, j, plo), to_u(f, j, phi), &best, &bestu);
	if (best < f->mape) {
		f->x[j] = from_u(f, j, bestu);
		f->mape = best;
	}
}

/* The line of a pattern move: its base and direction (coordinates u). */
typedef struct pattern_line {
	const double *u0, *d;
} pattern_line;

/* The point u0 + t d, clipped to the bounds, into f->y. */
static double along(pp_fit *f, const void *ctx, double t)
{
	const pattern_line *l = ctx;
	for (size_t j = 0; j < f->np; j++) {
		double lo, hi, start;
		param_range(f, j, &lo, &hi, &start);
		double v = from_u(f, j, l->u0[j] + t * l->d[j]);
		f->y[j] = v < lo ? lo : v > hi ? hi : v;
	}
	return objective(f, f->y);
}

/*
 * Hooke and Jeeves's pattern move (J. ACM 8(2), 1961): after a sweep of
 * coordinate searches, search along the sweep's own displacement.  Where
 * two parameters trade against each other (a record set that wants the
 * GEMMs and the memory-bound kernels slower or faster together), the
 * coordinate searches zig-zag down the valley in steps the tolerance ends;
 * the move follows it.  Golden-section over t in [0, 4] (four sweeps' worth
 * ahead), keeping the best point seen.
 */
static void pattern_move(pp_fit *f, const double *before)
{
	double *u0 = f->w + f->np, *d = f->w + 2 * f->np;
	bool moved = false;
	for (size_t j = 0; j < f->np; j++) {
		u0[j] = to_u(f, j, f->x[j]);
		d[j] = u0[j] - to_u(f, j, before[j]);
		moved |= d[j] != 0;
	}
	if (!moved)
		return;
	pattern_line l = {u0, d};
	double best = f->mape, bestt = 0;
	golden(f, along, &l, 0, 4, &best, &bestt);
	if (bestt > 0) {
		along(f, &l, bestt);
		memcpy(f->x, f->y, f->np * sizeof *f->x);
		f->mape = best;
	}
}

void pp_fit_iterate(pp_fit *f)
{
	double before = f->mape;
	memcpy(f->w, f->x, f->np * sizeof *f->w);
	for (size_t j = 0; j < f->np; j++)
		if (f->used[j])
			line_search(f, j);
	pattern_move(f, f->w);
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

void pp_fit_result_system(const pp_fit *f, pp_system *out)
{
	*out = f->cases[0].system;
	/* f->y is the fit's scratch point, free between sweeps */
	memcpy(f->y, f->x, f->np * sizeof *f->y);
	pp_fit_fill_unpinned(f, f->y, NULL);
	for (size_t j = 0; j < f->np; j++)
		if (applies(f, j, &f->cases[0]))
			pp_param_set(f->param[j], out, f->y[j]);
}

size_t pp_fit_shared_count(const pp_fit *f)
{
	return f->nreg_fitted;
}

size_t pp_fit_networks(const pp_fit *f, const char **systems, double *nic_eff, bool *pinned,
                       size_t max)
{
	size_t k = 0;
	for (size_t j = f->nreg_fitted; j < f->np && k < max; j++, k++) {
		systems[k] = f->nets[f->slot_sys[j]];
		nic_eff[k] = f->x[j];
		if (pinned)
			pinned[k] = f->used[j];
	}
	return k;
}

void pp_fit_result(const pp_fit *f, pp_gpu_eff *eff, pp_fit_net *net)
{
	pp_system s;
	pp_fit_result_system(f, &s);
	*eff = s.gpu.eff;
	net->nvlink_eff = s.nvlink_eff;
	net->nic_eff = s.nic_eff;
}

void pp_fit_free(pp_fit *f)
{
	if (!f)
		return;
	free(f->cases);
	free(f->scratch);
	free(f->param);
	free(f->x);
	free(f->y);
	free(f->w);
	free(f->used);
	free(f->slot_sys);
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
	for (size_t j = 0; j < f->np; j++)
		f->x[j] = param_start(f, j);
	f->mape = objective(f, f->x);
	fit_react(f);
	f->last_gain = INFINITY;
	f->iterations = 0;
}

double pp_fit_error(pp_fit *f, size_t k)
{
	return k < f->n ? case_error(f, k, f->x) : NAN;
}

pp_status pp_fit_new_cases(const pp_fit_input *in, size_t n, pp_fit **out, pp_error *err)
{
	*out = NULL;
	if (n == 0)
		return ppi_fail(err, "", NULL, "no measured runs to fit");
	pp_fit *f = fit_alloc(n);
	if (!f)
		return PP_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		fit_case *c = &f->cases[i];
		if (!ppi_streq(in[i].system->gpu.name, in[0].system->gpu.name) ||
		    !(in[i].iteration_s > 0)) {
			pp_fit_free(f);
			return ppi_fail(err, in[i].id ? in[i].id : "", NULL,
			                in[i].iteration_s > 0
			                    ? "runs on GPU '%s' and '%s': one fit per GPU"
			                    : "a measured iteration time must be positive",
			                in[i].system->gpu.name, in[0].system->gpu.name);
		}
		c->model = *in[i].model;
		c->system = *in[i].system;
		c->job = *in[i].job;
		c->plan = *in[i].plan;
		c->gpus = in[i].gpus;
		pp_status st = pp_system_compute_model(&c->system, err);
		if (st) {
			pp_fit_free(f);
			return st;
		}
		c->info.tflops_per_gpu = c->info.mfu = c->info.hfu = NAN;
		c->info.tokens_per_s_per_gpu = c->info.peak_memory_bytes = NAN;
		c->info.iteration_time_s = in[i].iteration_s;
		ppi_strlcpy(c->info.id, in[i].id ? in[i].id : "", sizeof c->info.id);
		ppi_strlcpy(c->info.gpu_type, c->system.gpu.name, sizeof c->info.gpu_type);
		ppi_strlcpy(c->info.system, c->system.name, sizeof c->info.system);
	}
	f->n = n;
	add_net_slots(f);
	fit_start(f);
	*out = f;
	return PP_OK;
}

size_t pp_fit_used(const pp_fit *f, const pp_param **out, size_t max)
{
	size_t k = 0;
	for (size_t j = 0; j < f->np; j++)
		if (f->used[j] && k < max)
			out[k++] = f->param[j];
	return k;
}

/* ------------------------------------------------- cross-validation by group */

void pp_fit_case(const pp_fit *f, size_t k, const pp_run_info **info, const pp_system **system,
                 const pp_model **model, long long *gpus)
{
	const fit_case *c = k < f->n ? &f->cases[k] : NULL;
	if (info)
		*info = c ? &c->info : NULL;
	if (system)
		*system = c ? &c->system : NULL;
	if (model)
		*model = c ? &c->model : NULL;
	if (gpus)
		*gpus = c ? c->gpus : 0;
}

void pp_fit_exclude(pp_fit *f, const bool *excluded)
{
	for (size_t i = 0; i < f->n; i++)
		f->cases[i].excluded = excluded && excluded[i];
	for (size_t j = 0; j < f->np; j++)
		f->x[j] = param_start(f, j);
	f->mape = objective(f, f->x);
	fit_react(f);
	f->last_gain = INFINITY;
	f->iterations = 0;
}

bool pp_fit_pinned(const pp_fit *f, size_t j)
{
	return j < f->np && f->used[j];
}

size_t pp_fit_param_count(const pp_fit *f)
{
	return f->np;
}

/* The fitted parameter named `key` ("gemm"), or -1. */
static long param_index(const pp_fit *f, const char *key)
{
	for (size_t j = 0; j < f->np; j++)
		if (strcmp(f->param[j]->key, key) == 0)
			return (long)j;
	return -1;
}

/*
 * An unpinned GEMM fraction from its pinned sibling: the kernel model holds
 * the BF16 / FP8 ratio of the die's tensor cores (measured on H100, its
 * datasheet's elsewhere), so the stack's fraction of it is the die's GEMM
 * kernels' and the precision's the same; where both are pinned they agree
 * within 4% (H100 1.037 / 1.029, B200 0.770 / 0.800: docs/calibration.md
 * "Fitted values").  A value no record reacts to says nothing by itself;
 * this one is the die's nearest measured kin, not the pooled GPUs'.
 */
void pp_fit_fill_unpinned(const pp_fit *f, double *x, const double *pool)
{
	long g = param_index(f, "gemm"), g8 = param_index(f, "gemm_fp8");
	bool pin_g = g >= 0 && f->used[g], pin_g8 = g8 >= 0 && f->used[g8];
	for (size_t j = 0; j < f->np; j++) {
		if (f->used[j])
			continue;
		if ((long)j == g && pin_g8)
			x[j] = x[g8];
		else if ((long)j == g8 && pin_g)
			x[j] = x[g];
		else if (pool && j < f->nreg_fitted)
			x[j] = pool[j]; /* a per-system slot's pool index may be another system's */
	}
}

void pp_fit_get_params(const pp_fit *f, double *x)
{
	memcpy(x, f->x, f->np * sizeof *x);
}

void pp_fit_get_start(const pp_fit *f, double *x)
{
	for (size_t j = 0; j < f->np; j++)
		x[j] = param_start(f, j);
}

void pp_fit_set_params(pp_fit *f, const double *x)
{
	memcpy(f->x, x, f->np * sizeof *x);
	f->mape = objective(f, f->x);
}

size_t pp_fit_at_bounds(const pp_fit *f, const pp_param **out, double *values, size_t max)
{
	size_t k = 0;
	for (size_t j = 0; j < f->np; j++) {
		const pp_param *p = f->param[j];
		if (!f->used[j])
			continue;
		double v = f->x[j], lo, hi, start;
		param_range(f, j, &lo, &hi, &start);
		double span = p->fit_log ? log(hi / lo) : hi - lo;
		double dlo = p->fit_log ? log(v / lo) : v - lo;
		double dhi = p->fit_log ? log(hi / v) : hi - v;
		/* Within 0.5% of the range of a bound: the golden-section search's
		 * resolution after its 18 steps is finer than that. */
		if (dlo <= 5e-3 * span || dhi <= 5e-3 * span) {
			if (k < max) {
				out[k] = p;
				if (values)
					values[k] = v;
			}
			k++;
		}
	}
	return k;
}

/*
 * GPUs built on the same silicon, whose efficiencies (fractions of each
 * part's own datasheet peaks) carry over when one of them has no record to
 * fit, are data: a GPU file's "same_silicon_as" names the other preset, and
 * its "sources" say why (data/gpus: the A100 40GB and 80GB, GA100 at the same
 * clocks; the B200 and the GB200's Blackwell GPU, the same die).  Read once
 * per process from the embedded files, into static storage.
 */
#define SIBLINGS_MAX 32
static struct {
	char gpu[PP_NAME_MAX], other[PP_NAME_MAX], why[PP_SOURCE_MAX];
} siblings[SIBLINGS_MAX];
static size_t nsiblings;
static pthread_once_t siblings_once = PTHREAD_ONCE_INIT;

static void siblings_read(void)
{
	for (size_t i = 0; i < pp_preset_count(PP_KIND_GPU) && nsiblings < SIBLINGS_MAX; i++) {
		const char *name = pp_preset_name(PP_KIND_GPU, i), *text, *path;
		pp_error err;
		json_t *root;
		if (pp_preset_text(PP_KIND_GPU, name, &text, &path, &err) != PP_OK)
			continue;
		/* read once for the process: not failed on purpose (util.h) */
		ppi_alloc_shield(true);
		pp_status st = ppi_json_parse_object(text, strlen(text), path, &root, &err);
		ppi_alloc_shield(false);
		if (st != PP_OK)
			continue; /* the presets are checked by the tests */
		const char *other = json_string_value(json_object_get(root, "same_silicon_as"));
		const char *why = json_string_value(
		    json_object_get(json_object_get(root, "sources"), "same_silicon_as"));
		if (other) {
			ppi_strlcpy(siblings[nsiblings].gpu, name, sizeof siblings[0].gpu);
			ppi_strlcpy(siblings[nsiblings].other, other, sizeof siblings[0].other);
			ppi_strlcpy(siblings[nsiblings].why, why ? why : "",
			            sizeof siblings[0].why);
			nsiblings++;
		}
		json_decref(root);
	}
}

const char *pp_fit_sibling(const char *gpu, const char **why)
{
	pthread_once(&siblings_once, siblings_read);
	for (size_t i = 0; gpu && i < nsiblings; i++)
		if (ppi_streq(gpu, siblings[i].gpu)) {
			if (why)
				*why = siblings[i].why;
			return siblings[i].other;
		}
	return NULL;
}

void pp_fit_converge(pp_fit *f, const pp_fit_watch *w)
{
	do {
		pp_fit_iterate(f);
		if (w && w->sweep)
			w->sweep(f, w->ctx);
	} while (!pp_fit_test(f, PP_FIT_TOL) && pp_fit_iterations(f) < PP_FIT_SWEEPS_MAX);
}

void pp_fit_leave_one_out(pp_fit *f, const pp_fit_watch *w, double *sum_abs, size_t *count)
{
	size_t n = pp_fit_records(f);
	for (size_t k = 0; k < n; k++) {
		if (w && w->held_out)
			w->held_out(f, k, n, w->ctx);
		pp_fit_hold_out(f, k);
		pp_fit_converge(f, w);
		double e = pp_fit_error(f, k);
		if (e == e) {
			*sum_abs += e < 0 ? -e : e;
			(*count)++;
		}
	}
}
