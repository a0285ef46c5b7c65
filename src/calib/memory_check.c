/*
 * Predicted against measured peak memory (validate --memory --steps) and the
 * allocator's parameters fitted to measured reserved peaks (calibrate
 * --memory): docs/memory.md, "The caching allocator".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/calib.h"
#include "paraplan/params.h"
#include "paraplan/estimate.h"
#include "util/util.h"

/* The fit's physical ranges: at least nothing and at most two buffers' worth
 * of cached segments; a flat share up to the 10% PyTorch users report for
 * steady-state training (data/framework/megatron.json, allocator_fraction). */
#define SEGMENTS_LO 0.0
#define SEGMENTS_HI 2.0
#define FRACTION_LO 0.0
#define FRACTION_HI 0.10
#define GRID_STEPS 40    /* grid points per parameter before refining */
#define REFINE_ROUNDS 30 /* halvings of the step around the best point */

pp_status pp_memory_check_steps(const pp_train_steps *steps, const pp_system *allocator,
                                pp_memory_check *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	if (!steps->n)
		return ppi_fail(err, "", "steps", "no training steps");
	out->row = ppi_calloc(steps->n, sizeof *out->row);
	pp_estimate *e = ppi_malloc(sizeof *e);
	if (!out->row || !e) {
		free(e);
		pp_memory_check_free(out);
		return ppi_oom(err);
	}
	for (size_t i = 0; i < steps->n; i++) {
		const pp_train_step *t = &steps->step[i];
		pp_system sys = t->in.system;
		if (allocator) {
			sys.allocator_transient_segments = allocator->allocator_transient_segments;
			sys.allocator_fraction = allocator->allocator_fraction;
		}
		pp_status st = pp_estimate_eval(&t->in.model, &sys, &t->in.job, &t->in.plan,
		                                t->in.gpus, PP_EVAL_MEMORY_ONLY, NULL, e, err);
		if (st) {
			err->line = t->line;
			free(e);
			pp_memory_check_free(out);
			return st;
		}
		const pp_stage_memory m = e->memory; /* the peak stage */
		pp_memory_check_row *r = &out->row[i];
		r->step = t;
		r->allocated_bytes = m.allocated_bytes;
		r->reserved_bytes = m.reserved_bytes;
		r->largest_transient_bytes = m.largest_transient_bytes;
		r->allocated_err_pct = 100 * (m.allocated_bytes / t->peak_alloc_bytes - 1);
		r->reserved_err_pct = 100 * (m.reserved_bytes / t->peak_reserved_bytes - 1);
		out->mape_allocated += fabs(r->allocated_err_pct) / (double)steps->n;
		out->mape_reserved += fabs(r->reserved_err_pct) / (double)steps->n;
		out->worst_allocated = fmax(out->worst_allocated, fabs(r->allocated_err_pct));
		out->worst_reserved = fmax(out->worst_reserved, fabs(r->reserved_err_pct));
	}
	out->n = steps->n;
	free(e);
	return PP_OK;
}

void pp_memory_check_free(pp_memory_check *c)
{
	if (!c)
		return;
	free(c->row);
	memset(c, 0, sizeof *c);
}

/* Percent error of step i's reserved peak under (k, f). */
static double reserved_err(const pp_memory_check *c, size_t i, double k, double f)
{
	const pp_memory_check_row *r = &c->row[i];
	double a = r->allocated_bytes;
	double pred = a + fmax(k * r->largest_transient_bytes, f * a);
	return 100 * (pred / r->step->peak_reserved_bytes - 1);
}

/* MAPE over the steps but `skip` (n: none). */
static double mape(const pp_memory_check *c, size_t skip, double k, double f)
{
	double sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (i != skip) {
			sum += fabs(reserved_err(c, i, k, f));
			n++;
		}
	return n ? sum / (double)n : 0;
}

/* The (k, f) of least MAPE over the steps but `skip`: a grid over the
 * ranges, then the step halved around the best point. */
static void fit(const pp_memory_check *c, size_t skip, double *k_out, double *f_out)
{
	double bk = SEGMENTS_LO, bf = FRACTION_LO, best = INFINITY;
	for (int i = 0; i <= GRID_STEPS; i++)
		for (int j = 0; j <= GRID_STEPS; j++) {
			double k = SEGMENTS_LO + (SEGMENTS_HI - SEGMENTS_LO) * i / GRID_STEPS;
			double f = FRACTION_LO + (FRACTION_HI - FRACTION_LO) * j / GRID_STEPS;
			double e = mape(c, skip, k, f);
			if (e < best) {
				best = e;
				bk = k;
				bf = f;
			}
		}
	double dk = (SEGMENTS_HI - SEGMENTS_LO) / GRID_STEPS;
	double df = (FRACTION_HI - FRACTION_LO) / GRID_STEPS;
	for (int r = 0; r < REFINE_ROUNDS; r++) {
		for (int i = -1; i <= 1; i++)
			for (int j = -1; j <= 1; j++) {
				double k = fmin(SEGMENTS_HI, fmax(SEGMENTS_LO, bk + i * dk));
				double f = fmin(FRACTION_HI, fmax(FRACTION_LO, bf + j * df));
				double e = mape(c, skip, k, f);
				if (e < best) {
					best = e;
					bk = k;
					bf = f;
				}
			}
		dk /= 2;
		df /= 2;
	}
	*k_out = bk;
	*f_out = bf;
}

pp_status pp_memory_fit_steps(const pp_train_steps *steps, pp_memory_fit *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	if (steps->n < 2)
		return ppi_fail(err, "", "steps", "a fit needs at least 2 steps, got %zu",
		                steps->n);
	pp_memory_check c;
	pp_status st = pp_memory_check_steps(steps, NULL, &c, err);
	if (st)
		return st;
	out->n = c.n;
	out->segments_lo = SEGMENTS_LO;
	out->segments_hi = SEGMENTS_HI;
	out->fraction_lo = FRACTION_LO;
	out->fraction_hi = FRACTION_HI;
	out->preset_segments = steps->step[0].in.system.allocator_transient_segments;
	out->preset_fraction = steps->step[0].in.system.allocator_fraction;
	out->mape_preset = c.mape_reserved;
	fit(&c, c.n, &out->segments, &out->fraction);
	out->mape_in = mape(&c, c.n, out->segments, out->fraction);
	out->segments_at_bound = out->segments <= SEGMENTS_LO || out->segments >= SEGMENTS_HI;
	out->fraction_at_bound = out->fraction <= FRACTION_LO || out->fraction >= FRACTION_HI;
	for (size_t i = 0; i < c.n; i++) {
		double k, f;
		fit(&c, i, &k, &f);
		double e = fabs(reserved_err(&c, i, k, f));
		out->mape_loo += e / (double)c.n;
		out->worst_loo = fmax(out->worst_loo, e);
	}
	pp_memory_check_free(&c);
	return PP_OK;
}

pp_status pp_memory_steps_load(const char *path, bool fit, pp_memory_steps *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	pp_status st = pp_train_steps_read(path, &out->steps, err);
	if (!st && fit)
		st = pp_memory_fit_steps(&out->steps, &out->fit, err);
	pp_system alloc = {0};
	alloc.allocator_transient_segments = out->fit.segments;
	alloc.allocator_fraction = out->fit.fraction;
	if (!st)
		st = pp_memory_check_steps(&out->steps, fit ? &alloc : NULL, &out->check, err);
	if (st && err && err->source[0] == '\0')
		ppi_strlcpy(err->source, path, sizeof err->source);
	out->fitted = fit && !st;
	out->report.path = path;
	out->report.fit = &out->fit;
	out->report.check = &out->check;
	if (st)
		pp_memory_steps_free(out);
	return st;
}

void pp_memory_steps_free(pp_memory_steps *m)
{
	if (!m)
		return;
	pp_memory_check_free(&m->check);
	pp_train_steps_free(&m->steps);
	memset(m, 0, sizeof *m);
}
