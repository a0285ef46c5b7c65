/*
 * The md format: GitHub-flavoured Markdown tables of an estimate, a search, a
 * sweep and validate's three views, for pasting into a pull request or an
 * issue.  Numbers as in the text format (GiB, seconds, percent); a '|' inside
 * a cell is escaped.
 */
#include <math.h>
#include <stdio.h>

#include "format_int.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* `s` as the text of one cell: '|' escaped, line breaks as spaces. */
static void cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else
			fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
	}
}

/* "tp 2 pp 4 dp 8 cp 1 ep 1 vp 1 mbs 1 z1 selective sp 1f1b". */
static void plan_words(FILE *f, const pp_plan *p)
{
	fprintf(f, "tp %d pp %d dp %d cp %d ep %d vp %d mbs %d z%d %s%s %s", p->tp, p->pp, p->dp,
	        p->cp, p->ep, p->vp, p->mbs, p->zero, pp_recompute_name(p->recompute),
	        p->sp ? " sp" : "", pp_schedule_name(p->schedule));
}

static int done(FILE *f)
{
	return ferror(f) ? -1 : 0;
}

static int estimate_md(const pp_result *r, FILE *f)
{
	const pp_estimate *e = r->estimate;
	fprintf(f, "### paraplan estimate: %s on %lld x %s (%s)\n\n", e->model.name, e->gpus,
	        e->system.gpu.name, e->system.name);
	fprintf(f, "| quantity | value |\n|---|---:|\n");
	fprintf(f, "| plan | ");
	plan_words(f, &e->plan);
	fprintf(f, ", %lld micro-batches |\n", e->plan.microbatches);
	fprintf(f, "| global batch | %lld x %d tokens, %s |\n", e->job.global_batch, e->job.seq_len,
	        pp_precision_name(e->job.precision));
	fprintf(f, "| peak memory per GPU | %.2f GiB of %.2f GiB (%s) |\n",
	        e->memory.total_bytes / GIB, e->capacity_bytes / GIB,
	        e->fits ? "fits" : "does not fit");
	fprintf(f, "| iteration | %.3f s |\n", e->time.iteration_s);
	fprintf(f, "| tokens/s | %.0f |\n", e->tokens_per_s);
	fprintf(f, "| MFU | %.1f%% |\n", 100 * e->mfu);
	fprintf(f, "| pipeline bubble | %.3f s |\n", e->time.bubble_s);
	fprintf(f, "| exposed dp | %.3f s |\n", e->time.dp_s);
	if (e->simulated)
		fprintf(f, "| simulated iteration | %.3f s |\n", e->sim.iteration_s);
	if (e->train_tokens > 0) {
		fprintf(f, "| training %.4g tokens | %.2f days, %.0f GPU-hours |\n",
		        e->train_tokens, e->train_days, e->gpu_hours);
		if (e->cost_usd > 0)
			fprintf(f, "| rent | %.0f USD |\n", e->cost_usd);
	}
	return done(f);
}

static int search_md(const pp_result *r, FILE *f)
{
	const pp_search *s = r->search;
	size_t n = pp_search_count(s);
	const pp_estimate *w = n ? pp_search_plan(s, 0) : NULL;
	if (w)
		fprintf(f, "### paraplan search: %s on %lld x %s (%s)\n\n", w->model.name, w->gpus,
		        w->system.gpu.name, w->system.name);
	else
		fprintf(f, "### paraplan search\n\nno plan fits\n");
	if (n)
		fprintf(f, "| # | plan | iteration s | tokens/s | MFU | peak GiB |\n"
		           "|---:|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) {
		const pp_estimate *e = pp_search_plan(s, i);
		if (!e)
			continue;
		fprintf(f, "| %zu | ", i + 1);
		plan_words(f, &e->plan);
		fprintf(f, " | %.3f | %.0f | %.1f%% | %.2f |\n", e->time.iteration_s,
		        e->tokens_per_s, 100 * e->mfu, e->memory.total_bytes / GIB);
	}
	pp_search_stats st;
	pp_search_get_stats(s, &st);
	fprintf(f, "\n%.0f plans in the space, %lld evaluated\n", st.space, st.evaluated);
	return done(f);
}

static int sweep_md(const pp_result *r, FILE *f)
{
	const pp_sweep *sw = r->sweep;
	fprintf(f, "### paraplan sweep: %s on %s (%s), over %s\n\n", sw->model.name,
	        sw->system.name, sw->system.gpu.name, pp_sweep_axis_name(sw->axis));
	fprintf(f, "| gpus | tp | pp | dp | mbs | fits | peak GiB | iteration s | tokens/s | MFU | "
	           "speedup | efficiency | best |\n"
	           "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < sw->nrows; i++) {
		const pp_sweep_row *w = &sw->rows[i];
		const pp_plan *p = &w->plan;
		fprintf(f, "| %lld | %d | %d | ", w->gpus, p->tp, p->pp);
		if (p->dp > 0)
			fprintf(f, "%d | %d | ", p->dp, p->mbs);
		else
			fprintf(f, "- | %d | ", p->mbs);
		if (!w->ok) {
			fprintf(f, "skipped: ");
			cell(f, w->reason);
			fprintf(f, " | | | | | | | |\n");
			continue;
		}
		bool t = sw->best_time == (ptrdiff_t)i, c = sw->best_rent == (ptrdiff_t)i;
		fprintf(f, "%s | %.2f | %.3f | %.0f | %.1f%% | %.2f | %.0f%% | %s |\n",
		        w->fits ? "yes" : "no", w->peak_bytes / GIB, w->iteration_s,
		        w->tokens_per_s, 100 * w->mfu, w->speedup, 100 * w->scaling_eff,
		        t && c ? "time, rent"
		        : t    ? "time"
		        : c    ? "rent"
		               : "");
	}
	return done(f);
}

static void skipped_md(const pp_validate_report *v, FILE *f)
{
	if (!v->nskips)
		return;
	fprintf(f, "\n| skipped | why |\n|---|---|\n");
	for (size_t i = 0; i < v->nskips; i++) {
		fprintf(f, "| ");
		cell(f, v->skips[i].id);
		fprintf(f, " | ");
		cell(f, v->skips[i].reason);
		fprintf(f, " |\n");
	}
}

static int validate_md(const pp_result *r, FILE *f)
{
	const pp_validate_report *v = r->validate;
	const pp_validate_summary *sum = v->summary;
	fprintf(f, "### paraplan validate: %zu records from ", v->nrows + v->nskips);
	cell(f, v->data);
	fprintf(f, "\n\n| id | metric | gpus | measured | predicted | error |\n"
	           "|---|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < v->nrows; i++) {
		const pp_validate_row *w = &v->rows[i];
		if (w->speed.metric == PP_METRIC_NONE)
			continue;
		fprintf(f, "| ");
		cell(f, w->info.id);
		fprintf(f, " | %s | %lld | %.4g | %.4g | %+.1f%% |\n",
		        pp_metric_name(w->speed.metric), w->est.gpus, w->speed.measured,
		        w->speed.predicted, 100 * w->speed.error);
	}
	skipped_md(v, f);
	fprintf(f, "\nMAPE %.1f%% over %zu records\n", 100 * sum->all.mape, sum->all.records);
	return done(f);
}

static int validate_memory_md(const pp_result *r, FILE *f)
{
	const pp_validate_report *v = r->validate;
	const pp_validate_summary *sum = v->summary;
	fprintf(f, "### paraplan validate --memory: %zu records from ", v->nrows + v->nskips);
	cell(f, v->data);
	fprintf(f, "\n\n| id | system | gpus | plan | peak GiB | of HBM | fits |\n"
	           "|---|---|---:|---|---:|---:|---|\n");
	for (size_t i = 0; i < v->nrows; i++) {
		const pp_validate_row *w = &v->rows[i];
		fprintf(f, "| ");
		cell(f, w->info.id);
		fprintf(f, " | ");
		cell(f, w->info.system);
		fprintf(f, " | %lld | ", w->est.gpus);
		plan_words(f, &w->est.plan);
		fprintf(f, " | %.1f | %.3f | %s |\n", w->est.memory.total_bytes / GIB, w->fraction,
		        w->est.fits ? "yes" : "NO");
	}
	skipped_md(v, f);
	fprintf(f, "\nfit: %zu of %zu evaluated\n", sum->fit, v->nrows);
	return done(f);
}

static int validate_search_md(const pp_result *r, FILE *f)
{
	const pp_validate_report *v = r->validate;
	const pp_validate_summary *sum = v->summary;
	fprintf(f, "| id | gpus | theirs s | best s | speedup | best plan |\n"
	           "|---|---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < v->nrows; i++) {
		const pp_validate_row *w = &v->rows[i];
		if (!w->searched)
			continue;
		double their = w->est.time.iteration_s;
		fprintf(f, "| ");
		cell(f, w->info.id);
		fprintf(f, " | %lld | %.4g | %.4g | %.2fx | ", w->est.gpus, their, w->best_s,
		        their / w->best_s);
		plan_words(f, &w->best);
		fprintf(f, " |\n");
	}
	fprintf(f,
	        "\n%zu records searched; the best plan is at least as fast as the authors' in "
	        "%zu; mean predicted speedup %.2fx\n",
	        sum->searched, sum->search_as_fast, sum->search_mean_speedup);
	return done(f);
}

const pp_format_type ppi_format_md = {
    .name = "md",
    .aliases = (const char *const[]){"markdown", NULL},
    .summary = "Markdown tables, for a pull request or an issue",
    .render =
        {
            [PP_RESULT_ESTIMATE] = estimate_md,
            [PP_RESULT_SEARCH] = search_md,
            [PP_RESULT_SWEEP] = sweep_md,
            [PP_RESULT_VALIDATE] = validate_md,
            [PP_RESULT_VALIDATE_MEMORY] = validate_memory_md,
            [PP_RESULT_VALIDATE_SEARCH] = validate_search_md,
        },
};
