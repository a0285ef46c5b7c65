/*
 * A hardware study (paraplan/study.h) as a table, CSV, JSON and an HTML page
 * of heat maps (time to train over two dimensions of the grid) and lines
 * (over one), each point labelled with its winning plan.  The rows are
 * written in point order and every number with a fixed format, so the same
 * study gives the same bytes.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "paraplan/report.h"
#include "report_int.h"
#include "util/util.h"

/* A value of a hardware field as people read it: GB, GB/s, TFLOP/s, us. */
static const char *hw_text(char *buf, size_t n, const pp_study_axis *ax, double v)
{
	const char *u = ax->fields[0]->unit;
	if (strcmp(u, "bytes") == 0)
		snprintf(buf, n, "%g GB", v / 1e9);
	else if (strcmp(u, "bytes/s") == 0)
		snprintf(buf, n, "%g GB/s", v / 1e9);
	else if (strcmp(u, "FLOP/s") == 0)
		snprintf(buf, n, "%g TFLOP/s", v / 1e12);
	else if (strcmp(u, "s") == 0)
		snprintf(buf, n, "%g us", v * 1e6);
	else
		snprintf(buf, n, "%g", v);
	return buf;
}

/* The figure of merit: days to train with a token budget, else seconds per
 * iteration. */
static bool by_days(const pp_study_spec *sp)
{
	return sp->job->train_tokens > 0;
}

static double merit(const pp_study_spec *sp, const pp_study_row *r)
{
	return by_days(sp) ? r->train_days : r->iteration_s;
}

int pp_report_study_csv(const pp_study_spec *sp, const pp_study_row *rows, size_t n, FILE *out)
{
	fputs("point,model,gpus", out);
	for (size_t a = 0; a < sp->naxes; a++)
		fprintf(out, ",%s", sp->axes[a].name);
	fputs(",ok,tp,tp2,summa,pp,dp,cp,vp,mbs,zero,recompute,sp,schedule,iteration_s,"
	      "tokens_per_s,mfu,train_days,gpu_hours,cost_usd,peak_bytes,capacity_bytes,"
	      "headroom_bytes,compute_s,tp_s,pp_s,bubble_s,dp_s,binding,unbound_iteration_s,"
	      "plans,reason\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		const pp_study_row *r = &rows[i];
		const pp_plan *p = &r->plan;
		fprintf(out, "%zu,%s,%lld", r->index, sp->models[r->model].name, r->gpus);
		for (size_t a = 0; a < sp->naxes; a++)
			fprintf(out, ",%.9g", r->values[a]);
		if (r->ok)
			fprintf(out, ",1,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%d,%s", p->tp, p->tp2,
			        p->summa, p->pp, p->dp, p->cp, p->vp, p->mbs, p->zero,
			        pp_recompute_name(p->recompute), p->sp,
			        pp_schedule_name(p->schedule));
		else
			fputs(",0,,,,,,,,,,,,", out);
		fprintf(out,
		        ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,"
		        "%.6g,"
		        "%lld,\"",
		        r->iteration_s, r->tokens_per_s, r->mfu, r->train_days, r->gpu_hours,
		        r->cost_usd, r->peak_bytes, r->capacity_bytes, r->headroom_bytes,
		        r->compute_s, r->tp_s, r->pp_s, r->bubble_s, r->dp_s, r->binding,
		        r->unbound_iteration_s, r->plans);
		for (const char *c = r->reason; *c; c++)
			fputs(*c == '"' ? "\"\"" : (char[2]){*c, 0}, out);
		fputs("\"\n", out);
	}
	return ferror(out) ? -1 : 0;
}

/* The study's inputs as JSON. */
static json_t *spec_json(const pp_study_spec *sp, size_t n)
{
	json_t *o = json_object(), *models = json_array(), *axes = json_array(),
	       *gpus = json_array();
	for (size_t m = 0; m < sp->nmodels; m++)
		json_array_append_new(models, json_string(sp->models[m].name));
	for (size_t a = 0; a < sp->naxes; a++) {
		const pp_study_axis *ax = &sp->axes[a];
		json_t *x = json_object(), *f = json_array(), *v = json_array();
		for (size_t k = 0; k < ax->nfields; k++)
			json_array_append_new(f, json_string(ax->fields[k]->name));
		for (size_t k = 0; k < ax->n; k++)
			json_array_append_new(v, json_real(ax->values[k]));
		json_object_set_new(x, "name", json_string(ax->name));
		json_object_set_new(x, "fields", f);
		json_object_set_new(x, "unit", json_string(ax->fields[0]->unit));
		json_object_set_new(x, "values", v);
		json_array_append_new(axes, x);
	}
	for (size_t g = 0; g < sp->ngpus; g++)
		json_array_append_new(gpus, json_integer(sp->gpus[g]));
	json_object_set_new(o, "system", json_string(sp->system->name));
	json_object_set_new(o, "models", models);
	json_object_set_new(o, "axes", axes);
	json_object_set_new(o, "gpus", gpus);
	json_object_set_new(o, "search", json_boolean(sp->search));
	json_object_set_new(o, "points", json_integer((json_int_t)n));
	json_object_set_new(o, "train_tokens", json_real(sp->job->train_tokens));
	return o;
}

static json_t *row_json(const pp_study_spec *sp, const pp_study_row *r)
{
	json_t *o = json_object(), *v = json_object();
	char plan[160];
	json_object_set_new(o, "point", json_integer((json_int_t)r->index));
	json_object_set_new(o, "model", json_string(sp->models[r->model].name));
	json_object_set_new(o, "gpus", json_integer(r->gpus));
	for (size_t a = 0; a < sp->naxes; a++)
		json_object_set_new(v, sp->axes[a].name, json_real(r->values[a]));
	json_object_set_new(o, "hardware", v);
	json_object_set_new(o, "ok", json_boolean(r->ok));
	if (r->ok)
		json_object_set_new(o, "plan",
		                    json_string(pp_study_plan_text(&r->plan, plan, sizeof plan)));
	else
		json_object_set_new(o, "reason", json_string(r->reason));
	const char *k[] = {"iteration_s", "tokens_per_s",   "mfu",
	                   "train_days",  "gpu_hours",      "cost_usd",
	                   "peak_bytes",  "capacity_bytes", "headroom_bytes",
	                   "compute_s",   "tp_s",           "pp_s",
	                   "bubble_s",    "dp_s",           "unbound_iteration_s"};
	double x[] = {r->iteration_s, r->tokens_per_s,   r->mfu,
	              r->train_days,  r->gpu_hours,      r->cost_usd,
	              r->peak_bytes,  r->capacity_bytes, r->headroom_bytes,
	              r->compute_s,   r->tp_s,           r->pp_s,
	              r->bubble_s,    r->dp_s,           r->unbound_iteration_s};
	for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
		json_object_set_new(o, k[i], json_real(x[i]));
	json_object_set_new(o, "binding", json_string(r->binding));
	json_object_set_new(o, "plans", json_integer(r->plans));
	return o;
}

int pp_report_study_json(const pp_study_spec *sp, const pp_study_row *rows, size_t n, FILE *out)
{
	long long mark = ppi_alloc_failed();
	json_t *root = json_object(), *arr = json_array();
	json_object_set_new(root, "study", spec_json(sp, n));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, row_json(sp, &rows[i]));
	json_object_set_new(root, "rows", arr);
	return ppi_report_dump(root, mark, out);
}

int pp_report_study_text(const pp_study_spec *sp, const pp_study_row *rows, size_t n, FILE *out)
{
	fprintf(out, "paraplan sweep: a study of %zu points on %s (%s)%s\n\n", n, sp->system->name,
	        sp->system->gpu.name, sp->search ? ", the best plan at each" : "");
	fprintf(out, "%6s  %-12s %7s", "point", "model", "gpus");
	for (size_t a = 0; a < sp->naxes; a++)
		fprintf(out, "  %14.14s", sp->axes[a].name);
	fprintf(out, "  %10s  %10s  %-12s  %s\n", "iter s", by_days(sp) ? "days" : "-", "binding",
	        "plan");
	for (size_t i = 0; i < n; i++) {
		const pp_study_row *r = &rows[i];
		char v[48], plan[160];
		fprintf(out, "%6zu  %-12.12s %7lld", r->index, sp->models[r->model].name, r->gpus);
		for (size_t a = 0; a < sp->naxes; a++)
			fprintf(out, "  %14s", hw_text(v, sizeof v, &sp->axes[a], r->values[a]));
		if (r->ok)
			fprintf(out, "  %10.4f  %10.2f  %-12s  %s\n", r->iteration_s, r->train_days,
			        r->binding, pp_study_plan_text(&r->plan, plan, sizeof plan));
		else
			fprintf(out, "  %10s  %10s  %-12s  %s\n", "-", "-", r->binding, r->reason);
	}
	return ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------ HTML */

/* The dimensions of the grid that vary: the axes with more than one value,
 * then the GPU counts (index naxes) when there are several. */
typedef struct dims {
	size_t d[PP_STUDY_MAX_AXES + 1];
	size_t n;
} dims;

static size_t dim_size(const pp_study_spec *sp, size_t d)
{
	return d == sp->naxes ? sp->ngpus : sp->axes[d].n;
}

static const char *dim_label(const pp_study_spec *sp, size_t d, size_t k, char *buf, size_t n)
{
	if (d == sp->naxes)
		snprintf(buf, n, "%lld", sp->gpus[k]);
	else
		hw_text(buf, n, &sp->axes[d], sp->axes[d].values[k]);
	return buf;
}

static const char *dim_name(const pp_study_spec *sp, size_t d)
{
	return d == sp->naxes ? "GPUs" : sp->axes[d].name;
}

/* The index of a row's value along dimension d. */
static size_t coord(const pp_study_spec *sp, size_t index, size_t d)
{
	size_t rest = index / sp->ngpus;
	if (d == sp->naxes)
		return index % sp->ngpus;
	for (size_t a = sp->naxes; a-- > d + 1;)
		rest /= sp->axes[a].n;
	return rest % sp->axes[d].n;
}

/* Colour of a value between lo and hi (log scale): green fast, red slow. */
static void colour(char *buf, size_t n, double v, double lo, double hi)
{
	double t = hi > lo ? log(v / lo) / log(hi / lo) : 0;
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	snprintf(buf, n, "rgb(%d,%d,%d)", (int)(60 + 190 * t), (int)(180 - 120 * t), 90);
}

/* The short plan of a cell: "t4 p8 d256". */
static const char *plan_short(const pp_plan *p, char *buf, size_t n)
{
	if (p->tp2 > 1)
		snprintf(buf, n, "t%dx%d p%d d%d", p->tp, p->tp2, p->pp, p->dp);
	else
		snprintf(buf, n, "t%d p%d d%d", p->tp, p->pp, p->dp);
	return buf;
}

/* Rows of model m that agree with `fixed` (index per dimension, SIZE_MAX =
 * free) on every dimension but x and y: one chart's cells. */
static bool in_chart(const pp_study_spec *sp, const pp_study_row *r, size_t m, const dims *ds,
                     const size_t *fixed)
{
	if (r->model != m)
		return false;
	for (size_t k = 0; k < ds->n; k++)
		if (fixed[k] != SIZE_MAX && coord(sp, r->index, ds->d[k]) != fixed[k])
			return false;
	return true;
}

static void heat_map(const pp_study_spec *sp, const pp_study_row *rows, size_t n, size_t m,
                     const dims *ds, const size_t *fixed, double lo, double hi, FILE *f)
{
	size_t dx = ds->d[0], dy = ds->d[1], nx = dim_size(sp, dx), ny = dim_size(sp, dy);
	double cw = 96, ch = 34, left = 130, top = 30, w = left + cw * (double)nx + 20,
	       h = top + ch * (double)ny + 50;
	char b1[64], b2[64], b3[160];
	fprintf(f,
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pp-chart\" data-chart=\"heat\" "
	        "width=\"%.0f\" height=\"%.0f\">\n",
	        w, h);
	for (size_t i = 0; i < n; i++) {
		const pp_study_row *r = &rows[i];
		if (!in_chart(sp, r, m, ds, fixed))
			continue;
		double x = left + cw * (double)coord(sp, r->index, dx),
		       y = top + ch * (double)(ny - 1 - coord(sp, r->index, dy));
		if (r->ok)
			colour(b1, sizeof b1, merit(sp, r), lo, hi);
		fprintf(f,
		        "<rect class=\"cell\" data-chart=\"heat\" x=\"%.1f\" y=\"%.1f\" "
		        "width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#fff\"><title "
		        "data-chart=\"heat\">",
		        x, y, cw, ch, r->ok ? b1 : "#ccc");
		ppi_xml_text(f, r->ok ? pp_study_plan_text(&r->plan, b3, sizeof b3) : r->reason);
		fprintf(f, " (%s)</title></rect>\n", r->binding);
		fprintf(f,
		        "<text class=\"cell-label\" data-chart=\"heat\" x=\"%.1f\" y=\"%.1f\" "
		        "text-anchor=\"middle\" font-size=\"10\">",
		        x + cw / 2, y + 14);
		if (r->ok)
			fprintf(f, "%.3g %s</text>\n", merit(sp, r), by_days(sp) ? "d" : "s");
		else
			fputs("none</text>\n", f);
		fprintf(f,
		        "<text class=\"cell-plan\" data-chart=\"heat\" x=\"%.1f\" y=\"%.1f\" "
		        "text-anchor=\"middle\" font-size=\"9\">%s</text>\n",
		        x + cw / 2, y + 27,
		        r->ok ? plan_short(&r->plan, b2, sizeof b2) : r->binding);
	}
	for (size_t k = 0; k < nx; k++)
		fprintf(f,
		        "<text class=\"x-tick\" data-chart=\"heat\" x=\"%.1f\" y=\"%.1f\" "
		        "text-anchor=\"middle\" font-size=\"10\">%s</text>\n",
		        left + cw * ((double)k + 0.5), top + ch * (double)ny + 14,
		        dim_label(sp, dx, k, b1, sizeof b1));
	for (size_t k = 0; k < ny; k++)
		fprintf(f,
		        "<text class=\"y-tick\" data-chart=\"heat\" x=\"%.1f\" y=\"%.1f\" "
		        "text-anchor=\"end\" font-size=\"10\">%s</text>\n",
		        left - 6, top + ch * ((double)(ny - 1 - k) + 0.6),
		        dim_label(sp, dy, k, b1, sizeof b1));
	fprintf(f,
	        "<text class=\"x-label\" data-chart=\"heat\" x=\"%.1f\" y=\"%.1f\" "
	        "text-anchor=\"middle\" font-size=\"11\">",
	        left + cw * (double)nx / 2, top + ch * (double)ny + 34);
	ppi_xml_text(f, dim_name(sp, dx));
	fprintf(f, "</text>\n<text class=\"y-label\" data-chart=\"heat\" x=\"4\" y=\"18\" "
	           "font-size=\"11\">");
	ppi_xml_text(f, dim_name(sp, dy));
	fputs("</text>\n</svg>\n", f);
}

/* Lines over dimension ds->d[0] (the innermost varying), one per value of
 * ds->d[1] (when there is one): time on a log scale. */
static void lines(const pp_study_spec *sp, const pp_study_row *rows, size_t n, size_t m,
                  const dims *ds, const size_t *fixed, double lo, double hi, FILE *f)
{
	static const char *pal[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
	                            "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
	size_t dx = ds->d[0], nx = dim_size(sp, dx);
	size_t ns = ds->n > 1 ? dim_size(sp, ds->d[1]) : 1;
	double left = 70, top = 20, pw = 520, ph = 260, w = left + pw + 200, h = top + ph + 50;
	double llo = floor(log10(lo)), lhi = ceil(log10(hi));
	if (lhi <= llo)
		lhi = llo + 1;
	char b[64];
	fprintf(f,
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pp-chart\" data-chart=\"lines\" "
	        "width=\"%.0f\" height=\"%.0f\">\n",
	        w, h);
	for (double e = llo; e <= lhi; e++) {
		double y = top + ph * (1 - (e - llo) / (lhi - llo));
		fprintf(f,
		        "<line class=\"grid\" data-chart=\"lines\" x1=\"%.1f\" y1=\"%.1f\" "
		        "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n<text class=\"y-tick\" "
		        "data-chart=\"lines\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
		        "font-size=\"10\">%g</text>\n",
		        left, y, left + pw, y, left - 4, y + 3, pow(10, e));
	}
	for (size_t k = 0; k < nx; k++)
		fprintf(f,
		        "<text class=\"x-tick\" data-chart=\"lines\" x=\"%.1f\" y=\"%.1f\" "
		        "text-anchor=\"middle\" font-size=\"10\">%s</text>\n",
		        left + pw * ((double)k + 0.5) / (double)nx, top + ph + 14,
		        dim_label(sp, dx, k, b, sizeof b));
	fprintf(f,
	        "<text class=\"x-label\" data-chart=\"lines\" x=\"%.1f\" y=\"%.1f\" "
	        "text-anchor=\"middle\" font-size=\"11\">",
	        left + pw / 2, top + ph + 34);
	ppi_xml_text(f, dim_name(sp, dx));
	fprintf(f,
	        "</text>\n<text class=\"y-label\" data-chart=\"lines\" x=\"4\" y=\"12\" "
	        "font-size=\"11\">%s (log)</text>\n",
	        by_days(sp) ? "days to train" : "iteration s");
	size_t sfix[PP_STUDY_MAX_AXES + 1];
	memcpy(sfix, fixed, sizeof sfix);
	for (size_t s = 0; s < ns; s++) {
		if (ds->n > 1)
			sfix[1] = s;
		const char *c = pal[s % 8];
		fprintf(f,
		        "<polyline class=\"series\" data-chart=\"lines\" fill=\"none\" "
		        "stroke=\"%s\" stroke-width=\"2\" points=\"",
		        c);
		for (size_t i = 0; i < n; i++)
			if (rows[i].ok && in_chart(sp, &rows[i], m, ds, sfix))
				fprintf(f, "%.1f,%.1f ",
				        left + pw * ((double)coord(sp, rows[i].index, dx) + 0.5) /
				                   (double)nx,
				        top + ph * (1 - (log10(merit(sp, &rows[i])) - llo) /
				                            (lhi - llo)));
		fputs("\"/>\n", f);
		for (size_t i = 0; i < n; i++) {
			const pp_study_row *r = &rows[i];
			if (!r->ok || !in_chart(sp, r, m, ds, sfix))
				continue;
			char p[160];
			fprintf(
			    f,
			    "<circle class=\"point\" data-chart=\"lines\" cx=\"%.1f\" cy=\"%.1f\" "
			    "r=\"3\" fill=\"%s\"><title data-chart=\"lines\">%.4g: ",
			    left + pw * ((double)coord(sp, r->index, dx) + 0.5) / (double)nx,
			    top + ph * (1 - (log10(merit(sp, r)) - llo) / (lhi - llo)), c,
			    merit(sp, r));
			ppi_xml_text(f, pp_study_plan_text(&r->plan, p, sizeof p));
			fputs("</title></circle>\n", f);
		}
		fprintf(f,
		        "<text class=\"legend\" data-chart=\"lines\" x=\"%.1f\" y=\"%.1f\" "
		        "font-size=\"10\" fill=\"%s\">",
		        left + pw + 10, top + 14 * (double)(s + 1), c);
		if (ds->n > 1) {
			ppi_xml_text(f, dim_name(sp, ds->d[1]));
			fprintf(f, " %s", dim_label(sp, ds->d[1], s, b, sizeof b));
		}
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}

/* The charts of model m: for each value of the dimensions beyond the first
 * two (at most 24 charts), a heat map over the first two and lines over the
 * first, one line per value of the second. */
static void model_charts(const pp_study_spec *sp, const pp_study_row *rows, size_t n, size_t m,
                         const dims *ds, FILE *f)
{
	double lo = INFINITY, hi = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].model == m && rows[i].ok && merit(sp, &rows[i]) > 0) {
			lo = fmin(lo, merit(sp, &rows[i]));
			hi = fmax(hi, merit(sp, &rows[i]));
		}
	fprintf(f, "<h2>%s</h2>\n", sp->models[m].name);
	if (!(hi > 0)) {
		fputs("<p>No point has a plan that fits.</p>\n", f);
		return;
	}
	size_t fixed[PP_STUDY_MAX_AXES + 1], charts = 1;
	for (size_t k = 2; k < ds->n; k++)
		charts *= dim_size(sp, ds->d[k]);
	for (size_t c = 0; c < charts && c < 24; c++) {
		size_t rest = c;
		fixed[0] = fixed[1] = SIZE_MAX;
		fputs("<section class=\"chart\"><p>", f);
		for (size_t k = ds->n; k-- > 2;) {
			char b[64];
			fixed[k] = rest % dim_size(sp, ds->d[k]);
			rest /= dim_size(sp, ds->d[k]);
			ppi_xml_text(f, dim_name(sp, ds->d[k]));
			fprintf(f, " = %s; ", dim_label(sp, ds->d[k], fixed[k], b, sizeof b));
		}
		fputs("</p>\n", f);
		if (ds->n >= 2)
			heat_map(sp, rows, n, m, ds, fixed, lo, hi, f);
		if (ds->n >= 1)
			lines(sp, rows, n, m, ds, fixed, lo, hi, f);
		fputs("</section>\n", f);
	}
}

int pp_report_study_html(const pp_study_spec *sp, const pp_study_row *rows, size_t n, FILE *f)
{
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>paraplan hardware "
	      "study</title><style>body{font-family:sans-serif;margin:24px;color:#222}"
	      "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid "
	      "#ccc;padding:2px 6px}section.chart svg{border:1px solid #ddd;margin:4px}"
	      "</style></head><body>\n<h1>Hardware study: ",
	      f);
	ppi_xml_text(f, sp->system->name);
	fprintf(f, ", %zu points%s</h1>\n<p>%s; cells: the winning plan (tp, pp, dp) and %s.</p>\n",
	        n, sp->search ? ", the best plan at each" : "",
	        by_days(sp) ? "Days to train the job's token budget" : "Seconds per iteration",
	        by_days(sp) ? "its days" : "its iteration time");
	dims ds = {.n = 0};
	if (sp->ngpus > 1)
		ds.d[ds.n++] = sp->naxes;
	for (size_t a = sp->naxes; a-- > 0;)
		if (sp->axes[a].n > 1)
			ds.d[ds.n++] = a;
	for (size_t m = 0; m < sp->nmodels; m++)
		model_charts(sp, rows, n, m, &ds, f);
	fputs("<h2>Points</h2>\n<table><tr><th>point</th><th>model</th><th>GPUs</th>", f);
	for (size_t a = 0; a < sp->naxes; a++) {
		fputs("<th>", f);
		ppi_xml_text(f, sp->axes[a].name);
		fputs("</th>", f);
	}
	fputs("<th>plan</th><th>iter s</th><th>days</th><th>headroom GiB</th><th>binding</th>"
	      "</tr>\n",
	      f);
	for (size_t i = 0; i < n && i < 5000; i++) {
		const pp_study_row *r = &rows[i];
		char b[160];
		fprintf(f, "<tr><td>%zu</td><td>%s</td><td>%lld</td>", r->index,
		        sp->models[r->model].name, r->gpus);
		for (size_t a = 0; a < sp->naxes; a++)
			fprintf(f, "<td>%s</td>", hw_text(b, sizeof b, &sp->axes[a], r->values[a]));
		fputs("<td>", f);
		ppi_xml_text(f, r->ok ? pp_study_plan_text(&r->plan, b, sizeof b) : r->reason);
		fprintf(f, "</td><td>%.4f</td><td>%.2f</td><td>%.2f</td><td>%s</td></tr>\n",
		        r->iteration_s, r->train_days, r->headroom_bytes / 1073741824.0,
		        r->binding);
	}
	fputs("</table>\n</body></html>\n", f);
	return ferror(f) ? -1 : 0;
}

int pp_report_study(const pp_study_spec *sp, const pp_study_row *rows, size_t n, const char *format,
                    FILE *out)
{
	if (format && strcmp(format, "csv") == 0)
		return pp_report_study_csv(sp, rows, n, out);
	if (format && strcmp(format, "json") == 0)
		return pp_report_study_json(sp, rows, n, out);
	if (format && strcmp(format, "html") == 0)
		return pp_report_study_html(sp, rows, n, out);
	return pp_report_study_text(sp, rows, n, out);
}
