/*
 * The HTML report (include/paraplan/report.h): one self-contained page, the
 * charts of report_svg.c inline, tables of the numbers written as people
 * write them (255,450 tokens/s; 13.1 s), and one inline script that counts
 * each chart's elements into a hidden <pre id="selftest"> for a browser test
 * (not shown on the page).  Nothing is fetched: no external script, style sheet or font.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "paraplan/report.h"
#include "report_int.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const char style[] = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1000px}"
                            "h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
                            "table{border-collapse:collapse;font-size:12px}"
                            "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}"
                            "th{background:#f0f0f0}td.l,th.l{text-align:left}"
                            "pre#selftest{display:none}"
                            "section.chart svg{border:1px solid #ddd}";

/* The self-test: per chart, the number of elements of each class, the number
 * of elements without data-chart, and the drawn size of the chart. */
static const char selftest[] =
    "(function(){var out=[];"
    "document.querySelectorAll('svg.pp-chart').forEach(function(s){"
    "var c=s.getAttribute('data-chart'),n={},un=0;"
    "s.querySelectorAll('*').forEach(function(el){"
    "if(el.getAttribute('data-chart')!==c)un++;"
    "var k=el.getAttribute('class');if(k)n[k]=(n[k]||0)+1;});"
    "var b=s.getBBox();"
    "out.push(c+' elements '+s.querySelectorAll('*').length);"
    "out.push(c+' unlabelled '+un);"
    "out.push(c+' drawn '+(b.width>0&&b.height>0?1:0));"
    "Object.keys(n).sort().forEach(function(k){out.push(c+' '+k+' '+n[k]);});});"
    "out.push('charts '+document.querySelectorAll('svg.pp-chart').length);"
    "document.getElementById('selftest').textContent=out.join('\\n');})();";

static void esc(FILE *f, const char *s)
{
	ppi_xml_text(f, s);
}

static void row(FILE *f, const char *k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void row(FILE *f, const char *k, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(f, "<tr><th class=\"l\">%s</th><td class=\"l\">", k);
	esc(f, buf);
	fputs("</td></tr>\n", f);
}

static void plan_text(const pp_plan *p, char *buf, size_t n)
{
	snprintf(buf, n,
	         "tp %d, pp %d, dp %d, cp %d, ep %d, etp %d, vp %d, mbs %d, zero %d, recompute %s, "
	         "sp %s, schedule %s, order %s",
	         p->tp, p->pp, p->dp, p->cp, p->ep, p->etp, p->vp, p->mbs, p->zero,
	         pp_recompute_name(p->recompute), p->sp ? "on" : "off",
	         pp_schedule_name(p->schedule), p->order);
}

static void summary(const pp_estimate *e, FILE *f)
{
	char plan[512];
	plan_text(&e->plan, plan, sizeof plan);
	fputs("<table class=\"summary\">\n", f);
	row(f, "model", "%s", e->model.name);
	row(f, "system", "%s (%s), %lld GPUs", e->system.name, e->system.gpu.name, e->gpus);
	row(f, "job", "global batch %lld x %d tokens, %s, %lld micro-batches", e->job.global_batch,
	    e->job.seq_len, pp_precision_name(e->job.precision), e->plan.microbatches);
	row(f, "plan", "%s", plan);
	row(f, "memory", "peak %.2f GiB of %.2f GiB HBM (stage %d): %s",
	    e->memory.total_bytes / GIB, e->capacity_bytes / GIB, e->memory.stage,
	    e->fits ? "fits" : "DOES NOT FIT");
	if (e->fits) {
		char a[48], b[48], c[48];
		row(f, "iteration", "%s (closed form)",
		    ppi_human_s(a, sizeof a, e->time.iteration_s));
		if (e->simulated)
			row(f, "simulated", "%s", ppi_human_s(a, sizeof a, e->sim.iteration_s));
		row(f, "throughput", "%s tokens/s, MFU %.1f%%, HFU %.1f%%",
		    ppi_human(a, sizeof a, e->tokens_per_s), 100 * e->mfu, 100 * e->hfu);
		if (e->train_tokens > 0)
			row(f, "training", "%s tokens: %.2f days, %s GPU-hours, %s USD",
			    ppi_human(a, sizeof a, e->train_tokens), e->train_days,
			    ppi_human(b, sizeof b, e->gpu_hours),
			    ppi_human(c, sizeof c, e->cost_usd));
		if (e->has_goodput)
			row(f, "goodput", "%.1f%% under failures: %.2f days",
			    100 * e->goodput.goodput, e->goodput.effective_days);
	}
	fputs("</table>\n", f);
}

static void chart(const pp_report_inputs *in, pp_chart c, FILE *f)
{
	if (!pp_report_chart_available(in, c))
		return;
	fprintf(f, "<section class=\"chart\" id=\"chart-%s\">\n<h2>%s</h2>\n", pp_chart_name(c),
	        ppi_chart_title(c));
	pp_report_svg(in, c, f);
	fputs("</section>\n", f);
}

static void search_tables(const pp_search *s, FILE *f)
{
	pp_search_stats st;
	pp_search_get_stats(s, &st);
	char n[4][48];
	fprintf(f,
	        "<p>%s plans in the space, %s evaluated, %s pruned, %s do not fit, %.3f s.</p>\n",
	        ppi_human(n[0], sizeof n[0], st.space),
	        ppi_human(n[1], sizeof n[1], (double)st.evaluated),
	        ppi_human(n[2], sizeof n[2], (double)st.pruned),
	        ppi_human(n[3], sizeof n[3], (double)st.infeasible), st.wall_s);
	fputs("<h2>Top plans</h2>\n<table class=\"top-plans\">\n<tr><th>#</th><th>tp</th>"
	      "<th>pp</th><th>dp</th><th>cp</th><th>ep</th><th>vp</th><th>mbs</th><th>zero</th>"
	      "<th class=\"l\">recompute</th><th class=\"l\">schedule</th><th>iter s</th>"
	      "<th>peak GiB</th><th>MFU</th></tr>\n",
	      f);
	pp_estimate e_buf; /* one estimate, refilled per plan */
	pp_error err;
	for (size_t i = 0; i < pp_search_count(s); i++) {
		if (pp_search_plan_get(s, i, &e_buf, &err))
			break; /* internal: the plan does not evaluate as ranked */
		const pp_estimate *e = &e_buf;
		const pp_plan *p = &e->plan;
		fprintf(
		    f,
		    "<tr class=\"top-plan\"><td>%zu</td><td>%d</td><td>%d</td><td>%d</td>"
		    "<td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td class=\"l\">%s"
		    "</td><td class=\"l\">%s</td><td>%.3f</td><td>%.2f</td><td>%.1f%%</td></tr>\n",
		    i + 1, p->tp, p->pp, p->dp, p->cp, p->ep, p->vp, p->mbs, p->zero,
		    pp_recompute_name(p->recompute), pp_schedule_name(p->schedule),
		    e->time.iteration_s, e->memory.total_bytes / GIB, 100 * e->mfu);
	}
	fputs("</table>\n", f);
}

static void sweep_table(const pp_sweep *sw, FILE *f)
{
	bool train = sw->job.train_tokens > 0;
	fputs("<h2>Points</h2>\n<table class=\"sweep-rows\">\n<tr><th>value</th><th>gpus</th>"
	      "<th>fits</th><th>peak GiB</th><th>iteration</th><th>tokens/s</th><th>MFU</th>"
	      "<th>speedup</th><th>efficiency</th>",
	      f);
	if (train)
		fputs("<th>days</th><th>GPU-hours</th><th>rent USD</th>", f);
	fputs("</tr>\n", f);
	for (size_t i = 0; i < sw->nrows; i++) {
		const pp_sweep_row *r = &sw->rows[i];
		if (!r->ok) {
			fprintf(f, "<tr class=\"sweep-row\"><td>%lld</td><td>%lld</td>", r->value,
			        r->gpus);
			fprintf(f, "<td class=\"l\" colspan=\"%d\">skipped: ", train ? 10 : 7);
			esc(f, r->reason);
			fputs("</td></tr>\n", f);
			continue;
		}
		char it[48], tps[48], gh[48], usd[48];
		fprintf(f,
		        "<tr class=\"sweep-row\"><td>%lld</td><td>%lld</td><td>%s</td><td>%.2f</td>"
		        "<td>%s</td><td>%s</td><td>%.1f%%</td><td>%.3f</td><td>%.1f%%</td>",
		        r->value, r->gpus, r->fits ? "yes" : "no", r->peak_bytes / GIB,
		        ppi_human_s(it, sizeof it, r->iteration_s),
		        ppi_human(tps, sizeof tps, r->tokens_per_s), 100 * r->mfu, r->speedup,
		        100 * r->scaling_eff);
		if (train)
			fprintf(f, "<td>%.2f</td><td>%s</td><td>%s</td>", r->train_days,
			        ppi_human(gh, sizeof gh, r->gpu_hours),
			        ppi_human(usd, sizeof usd, r->rent_usd));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

int pp_report_html(const pp_report_inputs *in, FILE *f)
{
	const char *title = in->title ? in->title : "paraplan report";
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
	esc(f, title);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", style);
	esc(f, title);
	fputs("</h1>\n", f);
	const pp_estimate *e = in->estimate;
	if (in->search) {
		size_t n = pp_search_count(in->search);
		if (n == 0)
			fputs("<p>No plan fits.</p>\n", f);
		if (e)
			fputs("<h2>The winner</h2>\n", f);
	}
	if (e)
		summary(e, f);
	if (in->sweep) {
		const pp_sweep *sw = in->sweep;
		char plan[512];
		plan_text(&sw->base, plan, sizeof plan);
		fputs("<table class=\"summary\">\n", f);
		row(f, "model", "%s", sw->model.name);
		row(f, "system", "%s (%s)", sw->system.name, sw->system.gpu.name);
		row(f, "sweep", "over %s, %zu points", pp_sweep_axis_name(sw->axis), sw->nrows);
		row(f, "base plan", "%s", plan);
		fputs("</table>\n", f);
	}
	for (int c = 0; c < PP_NCHARTS; c++)
		if (c != PP_CHART_PARETO)
			chart(in, (pp_chart)c, f);
	if (in->search) {
		chart(in, PP_CHART_PARETO, f);
		search_tables(in->search, f);
	}
	if (in->sweep)
		sweep_table(in->sweep, f);
	fprintf(f,
	        "<pre id=\"selftest\">(the page's script did not run)</pre>\n"
	        "<script>%s</script>\n</body>\n</html>\n",
	        selftest);
	return ferror(f) ? -1 : 0;
}
