/*
 * Goodput under failures: checkpoint size and time, Young/Daly's interval and
 * Daly's expected wall-clock time (see include/paraplan/goodput.h).
 */
#include <math.h>
#include <string.h>

#include "paraplan/estimate.h"
#include "util/util.h"

/* Defaults, each with its source (goodput.h). */
#define LLAMA3_INTERRUPTIONS 419.0 /* Llama 3 paper §3.3.4: unexpected, 54 days */
#define LLAMA3_DAYS 54.0
#define LLAMA3_GPUS 16384.0
#define TECTONIC_SUSTAINED_BYTES_PER_S 2e12 /* Llama 3 paper §3.3.1 */
#define RESTART_S 600.0                     /* assumption: 10 minutes */
#define PCIE5_X16_BYTES_PER_S 64e9          /* H100 datasheet: 128 GB/s both ways */

void pp_goodput_params_init(pp_goodput_params *p)
{
	memset(p, 0, sizeof *p);
	p->mtbf_gpu_hours = LLAMA3_DAYS * 24.0 * LLAMA3_GPUS / LLAMA3_INTERRUPTIONS;
	p->ckpt_write_bytes_per_s = TECTONIC_SUSTAINED_BYTES_PER_S;
	p->restart_s = RESTART_S;
	p->async = false;
	p->host_copy_bytes_per_s = PCIE5_X16_BYTES_PER_S;
}

double pp_young_interval(double delta_s, double mtbf_s)
{
	return sqrt(2.0 * delta_s * mtbf_s);
}

double pp_daly_interval(double delta_s, double mtbf_s)
{
	if (delta_s >= 2.0 * mtbf_s)
		return mtbf_s;
	double r = delta_s / (2.0 * mtbf_s);
	return sqrt(2.0 * delta_s * mtbf_s) * (1.0 + sqrt(r) / 3.0 + r / 9.0) - delta_s;
}

double pp_daly_goodput(double tau_s, double delta_s, double restart_s, double mtbf_s)
{
	double m = mtbf_s;
	/* expm1 keeps precision when tau + delta << M. */
	double wall = m * exp(restart_s / m) * expm1((tau_s + delta_s) / m);
	return wall > 0 ? tau_s / wall : 0;
}

/* Bytes per parameter in a checkpoint: the weights as trained plus the
 * optimizer state (as the memory model counts them, workload/memory.c). */
static double ckpt_bytes_per_param(const pp_job *job)
{
	double wb = job->precision == PP_PREC_FP32 ? 4.0 : 2.0;
	double ob;
	if (job->optimizer == PP_OPT_SGD)
		ob = job->precision == PP_PREC_FP32 ? 4.0 : 8.0;
	else
		ob = job->precision == PP_PREC_FP32 ? 8.0 : 12.0;
	return wb + ob;
}

pp_status pp_estimate_goodput(pp_estimate *e, const pp_goodput_params *gp, pp_error *err)
{
	if (!(gp->mtbf_gpu_hours > 0) || !isfinite(gp->mtbf_gpu_hours))
		return ppi_fail(err, "", "goodput.mtbf_gpu_hours", "must be positive, got %g",
		                gp->mtbf_gpu_hours);
	if (!(gp->ckpt_write_bytes_per_s > 0) || !isfinite(gp->ckpt_write_bytes_per_s))
		return ppi_fail(err, "", "goodput.ckpt_write_bytes_per_s",
		                "must be positive, got %g", gp->ckpt_write_bytes_per_s);
	if (!(gp->restart_s >= 0) || !isfinite(gp->restart_s))
		return ppi_fail(err, "", "goodput.restart_s", "must be >= 0, got %g",
		                gp->restart_s);
	if (!(gp->host_copy_bytes_per_s > 0) || !isfinite(gp->host_copy_bytes_per_s))
		return ppi_fail(err, "", "goodput.host_copy_bytes_per_s",
		                "must be positive, got %g", gp->host_copy_bytes_per_s);
	pp_goodput *g = &e->goodput;
	memset(g, 0, sizeof *g);
	g->params = *gp;
	const pp_plan *p = &e->plan;
	double bpp = ckpt_bytes_per_param(&e->job);
	g->ckpt_total_bytes = e->params.total * bpp;
	/* Each data- (and context-) parallel replica writes its share of the
	 * stage's state (Megatron's fully parallel save); under ZeRO the optimizer
	 * state is already split that way, so the share is the same. */
	double replicas = (double)p->dp * p->cp;
	for (int s = 0; s < p->pp; s++) {
		pp_stage_memory mem;
		pp_status st = pp_memory_stage(&e->model, &e->system, &e->job, p, s, &mem, err);
		if (st)
			return st;
		double b = mem.params * bpp / replicas;
		if (b > g->ckpt_rank_bytes) {
			g->ckpt_rank_bytes = b;
			g->ckpt_rank_stage = s;
		}
	}
	g->write_s = g->ckpt_total_bytes / gp->ckpt_write_bytes_per_s;
	g->blocking_s = gp->async ? g->ckpt_rank_bytes / gp->host_copy_bytes_per_s : g->write_s;
	g->restart_s = gp->restart_s;
	double m = gp->mtbf_gpu_hours * 3600.0 / (double)e->gpus;
	g->job_mtbf_s = m;
	g->interruptions_per_day = 86400.0 / m;
	double delta = g->blocking_s;
	/* Asynchronous: the checkpoint is durable only once written, so a failure
	 * loses the write time's work on top. */
	double r = gp->restart_s + (gp->async ? g->write_s : 0);
	g->young_interval_s = pp_young_interval(delta, m);
	g->interval_s = pp_daly_interval(delta, m);
	/* Asynchronous writes cannot overlap: one checkpoint per write time at most. */
	if (gp->async && g->interval_s < g->write_s)
		g->interval_s = g->write_s;
	double it = e->time.iteration_s;
	g->interval_iterations = it > 0 ? g->interval_s / it : 0;
	g->lost_work_s = (g->interval_s + delta) / 2 + (gp->async ? g->write_s : 0);
	g->goodput = pp_daly_goodput(g->interval_s, delta, r, m);
	if (!isfinite(m)) {
		memset(g, 0, sizeof *g);
		return ppi_fail(err, "", "goodput.mtbf_gpu_hours",
		                "too large: the job's time between failures is %g s", m);
	}
	/* A run that cannot finish (a failure sooner than a checkpoint and a
	 * restart, Daly's wall-clock time beyond any double) has no days, no
	 * cost: refused rather than reported as 0. */
	if (!(g->goodput >= PP_GOODPUT_MIN) || !isfinite(g->interval_s) ||
	    (e->train_tokens > 0 && !isfinite(e->train_days / g->goodput))) {
		memset(g, 0, sizeof *g);
		return ppi_fail(err, "", "goodput",
		                "the run never finishes: a failure every %.3g s, a checkpoint "
		                "blocks training %.3g s, a restart takes %.3g s (goodput %.3g, "
		                "under %g)",
		                m, delta, r, g->goodput, PP_GOODPUT_MIN);
	}
	if (e->train_tokens > 0 && g->goodput > 0) {
		g->days = e->train_days;
		g->effective_days = e->train_days / g->goodput;
		g->extra_days = g->effective_days - g->days;
		g->failures = g->effective_days * g->interruptions_per_day;
		g->gpu_hours = e->gpu_hours / g->goodput;
		g->cost_usd = e->cost_usd / g->goodput;
	}
	e->has_goodput = true;
	return PP_OK;
}
