/*
 * SVG charts of an estimate, a search and a sweep (include/paraplan/report.h).
 *
 * Every element of a chart carries data-chart="NAME" and a class naming what
 * it is ("memory-bar", "gantt-task", ...), so a test can count them (the HTML
 * report's self-test does, in a browser).  Written with fprintf: a Gantt chart
 * of thousands of micro-batches has tens of thousands of rectangles.  Reads
 * its inputs; computes only positions and colours.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/report.h"
#include "report_int.h"
#include "util/util.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const char *const chart_names[PP_NCHARTS] = {"memory", "iteration", "gantt", "traffic",
                                                    "pareto", "scaling",   "cost"};
static const char *const chart_titles[PP_NCHARTS] = {"Memory per pipeline stage (GiB) against HBM",
                                                     "Iteration time breakdown (closed form)",
                                                     "Simulated iteration per pipeline rank",
                                                     "Traffic per iteration, GPU x GPU (all types)",
                                                     "Pareto front: iteration time vs peak memory",
                                                     "Scaling: speedup against linear",
                                                     "Cost and days to train"};

const char *pp_chart_name(pp_chart c)
{
	return c >= 0 && c < PP_NCHARTS ? chart_names[c] : "?";
}

const char *ppi_chart_title(pp_chart c)
{
	return c >= 0 && c < PP_NCHARTS ? chart_titles[c] : "?";
}

bool pp_report_chart_available(const pp_report_inputs *in, pp_chart c)
{
	switch (c) {
	case PP_CHART_MEMORY:
	case PP_CHART_ITERATION: return in->estimate != NULL && in->estimate->nstages > 0;
	case PP_CHART_GANTT:
		return in->estimate && in->estimate->simulated && in->sim &&
		       pp_sim_event_count(in->sim) > 0;
	case PP_CHART_TRAFFIC: return in->traffic != NULL && in->traffic->gpus > 0;
	case PP_CHART_PARETO: return in->search != NULL && pp_search_pareto_count(in->search) > 0;
	case PP_CHART_SCALING:
	case PP_CHART_COST: return in->sweep != NULL && in->sweep->baseline >= 0;
	default: return false;
	}
}

/* ------------------------------------------------------------ writer */

typedef struct svg {
	FILE *f;
	const char *chart;
} svg;

void ppi_xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n')
				fputc(*s, f);
		}
	}
}

/* A tooltip (<title>) formatted, escaped. */
static void tip(svg *g, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void tip(svg *g, const char *fmt, va_list ap)
{
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	fprintf(g->f, "<title data-chart=\"%s\">", g->chart);
	ppi_xml_text(g->f, buf);
	fputs("</title>", g->f);
}

static void rect(svg *g, const char *cls, double x, double y, double w, double h, const char *fill,
                 const char *extra, const char *fmt, ...) __attribute__((format(printf, 9, 10)));
static void rect(svg *g, const char *cls, double x, double y, double w, double h, const char *fill,
                 const char *extra, const char *fmt, ...)
{
	fprintf(g->f,
	        "<rect class=\"%s\" data-chart=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
	        "height=\"%.2f\" fill=\"%s\"%s%s",
	        cls, g->chart, x, y, w > 0 ? w : 0, h > 0 ? h : 0, fill, extra ? " " : "",
	        extra ? extra : "");
	if (fmt) {
		fputs(">", g->f);
		va_list ap;
		va_start(ap, fmt);
		tip(g, fmt, ap);
		va_end(ap);
		fputs("</rect>\n", g->f);
	} else {
		fputs("/>\n", g->f);
	}
}

static void text(svg *g, const char *cls, double x, double y, const char *anchor, const char *fmt,
                 ...) __attribute__((format(printf, 6, 7)));
static void text(svg *g, const char *cls, double x, double y, const char *anchor, const char *fmt,
                 ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(g->f,
	        "<text class=\"%s\" data-chart=\"%s\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" "
	        "font-size=\"11\" font-family=\"sans-serif\" fill=\"#222\">",
	        cls, g->chart, x, y, anchor);
	ppi_xml_text(g->f, buf);
	fputs("</text>\n", g->f);
}

static void line(svg *g, const char *cls, double x1, double y1, double x2, double y2,
                 const char *stroke, const char *extra)
{
	fprintf(g->f,
	        "<line class=\"%s\" data-chart=\"%s\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
	        "y2=\"%.2f\" stroke=\"%s\"%s%s/>\n",
	        cls, g->chart, x1, y1, x2, y2, stroke, extra ? " " : "", extra ? extra : "");
}

static void circle(svg *g, const char *cls, double x, double y, double r, const char *fill,
                   const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void circle(svg *g, const char *cls, double x, double y, double r, const char *fill,
                   const char *fmt, ...)
{
	fprintf(g->f,
	        "<circle class=\"%s\" data-chart=\"%s\" cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" "
	        "fill=\"%s\" stroke=\"#333\">",
	        cls, g->chart, x, y, r, fill);
	va_list ap;
	va_start(ap, fmt);
	tip(g, fmt, ap);
	va_end(ap);
	fputs("</circle>\n", g->f);
}

static void open_svg(svg *g, FILE *f, pp_chart c, double w, double h)
{
	g->f = f;
	g->chart = chart_names[c];
	fprintf(f,
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pp-chart\" data-chart=\"%s\" "
	        "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
	        g->chart, w, h, w, h);
	fprintf(f, "<title data-chart=\"%s\">%s</title>\n", g->chart, chart_titles[c]);
	rect(g, "chart-bg", 0, 0, w, h, "#fff", NULL, NULL);
}

static int close_svg(svg *g)
{
	fputs("</svg>\n", g->f);
	return ferror(g->f) ? -1 : 0;
}

/* A "nice" upper bound for an axis from 0 to `v`. */
static double nice_max(double v)
{
	if (!(v > 0) || !isfinite(v))
		return 1;
	double e = pow(10, floor(log10(v)));
	double m = v / e;
	double n = m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10;
	return n * e;
}

/* Plot area: left, top, width, height. */
typedef struct area {
	double x, y, w, h;
} area;

/* Tick value v on an axis of round step `step`: the decimals the step has,
 * thousands grouped (0.5, 20, 1,500). */
static const char *tick_label(char *buf, size_t n, double v, double step)
{
	if (fabs(v) < step * 1e-6)
		v = 0;
	if (step >= 1)
		return ppi_human(buf, n, round(v));
	snprintf(buf, n, "%.*f", (int)ceil(-log10(step) - 1e-9), v);
	return buf;
}

/* A y axis from 0 to ymax (nice_max) with ticks at a round step and a label;
 * an x axis line.  `right`: the ticks on the right edge, no grid. */
static void y_ticks(svg *g, const area *a, double ymax, bool right)
{
	double step = ppi_nice_step(ymax, 5);
	char buf[48];
	for (int k = 0; k * step <= ymax * (1 + 1e-9); k++) {
		double v = k * step, y = a->y + a->h - a->h * v / ymax;
		if (!right)
			line(g, "grid", a->x, y, a->x + a->w, y, "#ddd", NULL);
		text(g, "tick", right ? a->x + a->w + 4 : a->x - 4, y + 4, right ? "start" : "end",
		     "%s", tick_label(buf, sizeof buf, v, step));
	}
}

static void y_axis(svg *g, const area *a, double ymax, const char *label)
{
	line(g, "axis", a->x, a->y, a->x, a->y + a->h, "#333", NULL);
	line(g, "axis", a->x, a->y + a->h, a->x + a->w, a->y + a->h, "#333", NULL);
	y_ticks(g, a, ymax, false);
	text(g, "axis-label", a->x, a->y - 8, "start", "%s", label);
}

/* ------------------------------------------------------------ memory */

static const char *const mem_parts[] = {"weights", "gradients", "optimizer", "activations",
                                        "other"};
static const char *const mem_colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#bab0ac"};

static int chart_memory(const pp_report_inputs *in, FILE *f)
{
	const pp_estimate *e = in->estimate;
	int p = e->nstages;
	double W = 720, H = 340;
	area a = {70, 40, W - 190, H - 90};
	double top = e->capacity_bytes;
	for (int s = 0; s < p; s++) {
		double t = in->stages ? in->stages[s].total_bytes : e->stage_total_bytes[s];
		top = t > top ? t : top;
	}
	double ymax = nice_max(top * 1.05 / GIB);
	svg g;
	open_svg(&g, f, PP_CHART_MEMORY, W, H);
	y_axis(&g, &a, ymax, "GiB per GPU");
	double slot = a.w / p, bw = slot * 0.7;
	for (int s = 0; s < p; s++) {
		double x = a.x + s * slot + (slot - bw) / 2;
		double part[5];
		const pp_stage_memory *m = in->stages ? &in->stages[s] : NULL;
		if (m) {
			part[0] = m->weights_bytes;
			part[1] = m->gradients_bytes;
			part[2] = m->optimizer_bytes;
			part[3] = m->activations_bytes;
			part[4] = m->other_bytes;
		} else { /* the total only */
			memset(part, 0, sizeof part);
			part[4] = e->stage_total_bytes[s];
		}
		/* A search's winner keeps the peak stages' totals only (its
		 * estimate is evaluated for the peak): the stage model's total. */
		double total = m ? m->total_bytes : e->stage_total_bytes[s];
		char extra[64];
		snprintf(extra, sizeof extra, "data-stage=\"%d\"", s);
		rect(&g, "memory-bar", x, a.y + a.h - total / GIB / ymax * a.h, bw,
		     total / GIB / ymax * a.h, "none", extra, "stage %d: %.2f GiB of %.2f GiB HBM",
		     s, total / GIB, e->capacity_bytes / GIB);
		double y = a.y + a.h;
		for (int k = 0; k < 5; k++) {
			if (part[k] <= 0)
				continue;
			double h = part[k] / GIB / ymax * a.h;
			y -= h;
			snprintf(extra, sizeof extra, "data-stage=\"%d\" data-part=\"%s\"", s,
			         mem_parts[k]);
			rect(&g, "memory-seg", x, y, bw, h, mem_colors[k], extra,
			     "stage %d %s: %.3f GiB", s, mem_parts[k], part[k] / GIB);
		}
		if (p <= 32 || s % (p / 16) == 0)
			text(&g, "tick", x + bw / 2, a.y + a.h + 14, "middle", "%d", s);
	}
	double hy = a.y + a.h - e->capacity_bytes / GIB / ymax * a.h;
	line(&g, "memory-hbm", a.x, hy, a.x + a.w, hy, "#c00", "stroke-dasharray=\"6 3\"");
	text(&g, "memory-hbm-label", a.x + a.w, hy - 4, "end", "HBM %.1f GiB",
	     e->capacity_bytes / GIB);
	text(&g, "axis-label", a.x + a.w / 2, H - 14, "middle", "pipeline stage");
	for (int k = 0; k < 5; k++) {
		rect(&g, "legend", W - 110, 50 + k * 18, 12, 12, mem_colors[k], NULL, NULL);
		text(&g, "legend", W - 92, 60 + k * 18, "start", "%s", mem_parts[k]);
	}
	return close_svg(&g);
}

/* ------------------------------------------------------------ iteration */

static int chart_iteration(const pp_report_inputs *in, FILE *f)
{
	const pp_estimate *e = in->estimate;
	const pp_iteration *t = &e->time;
	const struct {
		const char *name;
		double s;
		const char *color;
	} terms[] = {{"compute", t->compute_s, "#4e79a7"},
	             {"tp", t->tp_s, "#f28e2b"},
	             {"cp", t->cp_s, "#edc948"},
	             {"ep", t->ep_s, "#b07aa1"},
	             {"zero3", t->zero3_s, "#ff9da7"},
	             {"pp", t->pp_s, "#9c755f"},
	             {"bubble", t->bubble_s, "#bab0ac"},
	             {"dp", t->dp_s, "#59a14f"},
	             {"optimizer", t->optimizer_s, "#e15759"},
	             {"other", t->other_s, "#76b7b2"}};
	size_t n = sizeof terms / sizeof *terms;
	double W = 720, H = 170;
	area a = {20, 50, W - 40, 36};
	double sum = 0;
	for (size_t k = 0; k < n; k++)
		sum += terms[k].s > 0 ? terms[k].s : 0;
	double xmax = sum > 0 ? sum : 1;
	svg g;
	open_svg(&g, f, PP_CHART_ITERATION, W, H);
	char hs[48];
	text(&g, "axis-label", a.x, a.y - 10, "start", "iteration %s (closed form)",
	     ppi_human_s(hs, sizeof hs, t->iteration_s));
	if (e->simulated)
		text(&g, "axis-label", a.x + a.w, a.y - 10, "end", "simulated %s",
		     ppi_human_s(hs, sizeof hs, e->sim.iteration_s));
	double x = a.x;
	for (size_t k = 0; k < n; k++) {
		if (!(terms[k].s > 0))
			continue;
		double w = terms[k].s / xmax * a.w;
		char extra[64];
		snprintf(extra, sizeof extra, "data-term=\"%s\"", terms[k].name);
		rect(&g, "iter-seg", x, a.y, w, a.h, terms[k].color, extra, "%s: %s (%.1f%%)",
		     terms[k].name, ppi_human_s(hs, sizeof hs, terms[k].s),
		     100 * terms[k].s / xmax);
		x += w;
	}
	int row = 0;
	for (size_t k = 0; k < n; k++) {
		if (!(terms[k].s > 0))
			continue;
		double lx = a.x + (row % 3) * 230, ly = a.y + a.h + 24 + (row / 3) * 18;
		rect(&g, "legend", lx, ly - 10, 12, 12, terms[k].color, NULL, NULL);
		text(&g, "legend", lx + 18, ly, "start", "%s %s (%.1f%%)", terms[k].name,
		     ppi_human_s(hs, sizeof hs, terms[k].s), 100 * terms[k].s / xmax);
		row++;
	}
	return close_svg(&g);
}

/* ------------------------------------------------------------ gantt */

static const char *task_color(pp_event_kind k)
{
	switch (k) {
	case PP_EV_F: return "#4e79a7";
	case PP_EV_B: return "#f28e2b";
	case PP_EV_BI: return "#f28e2b";
	case PP_EV_W: return "#edc948";
	case PP_EV_SI: return "#b07aa1";
	case PP_EV_SEND: return "#9c755f";
	case PP_EV_DP: return "#59a14f";
	case PP_EV_OPTIMIZER: return "#e15759";
	default: return "#bab0ac";
	}
}

static int chart_gantt(const pp_report_inputs *in, FILE *f)
{
	const pp_estimate *e = in->estimate;
	int p = e->plan.pp;
	double rowh = p <= 16 ? 26 : p <= 64 ? 10 : 4;
	double W = 900, H = 70 + p * rowh + 40;
	area a = {80, 40, W - 100, p * rowh};
	double T = e->sim.iteration_s > 0 ? e->sim.iteration_s : 1;
	svg g;
	open_svg(&g, f, PP_CHART_GANTT, W, H);
	char hs[48], he[48];
	text(&g, "axis-label", a.x, a.y - 10, "start",
	     "simulated iteration %s, %s, %d ranks, %lld micro-batches",
	     ppi_human_s(hs, sizeof hs, T), pp_schedule_name(e->plan.schedule), p,
	     e->plan.microbatches);
	for (int r = 0; r < p; r++) {
		char extra[32];
		snprintf(extra, sizeof extra, "data-rank=\"%d\"", r);
		rect(&g, "gantt-row", a.x, a.y + r * rowh, a.w, rowh - 1,
		     r % 2 ? "#f4f4f4" : "#eaeaea", extra, "pipeline rank %d", r);
		if (p <= 32 || r % (p / 16) == 0)
			text(&g, "tick", a.x - 6, a.y + r * rowh + rowh * 0.7, "end", "rank %d", r);
	}
	size_t n = pp_sim_event_count(in->sim);
	for (size_t i = 0; i < n; i++) {
		const pp_sim_event *ev = pp_sim_event_at(in->sim, i);
		if (ev->rank < 0 || ev->rank >= p)
			continue;
		bool task = ev->kind == PP_EV_F || ev->kind == PP_EV_B || ev->kind == PP_EV_BI ||
		            ev->kind == PP_EV_W || ev->kind == PP_EV_SI;
		double x = a.x + ev->start_s / T * a.w, w = (ev->end_s - ev->start_s) / T * a.w;
		double y = a.y + ev->rank * rowh, h = rowh - 1;
		if (ev->stream !=
		    PP_STREAM_COMPUTE) { /* sends and DP: a thin strip at the bottom */
			y += h * 0.75;
			h *= 0.25;
		}
		char extra[96];
		snprintf(extra, sizeof extra,
		         "data-rank=\"%d\" data-kind=\"%s\" data-stream=\"%s\"", ev->rank,
		         pp_event_kind_name(ev->kind), pp_stream_name(ev->stream));
		rect(&g, task ? "gantt-task" : "gantt-other", x, y, w, h, task_color(ev->kind),
		     extra, "rank %d %s mb %d chunk %d: %s to %s", ev->rank,
		     pp_event_kind_name(ev->kind), ev->mb, ev->chunk,
		     ppi_human_s(hs, sizeof hs, ev->start_s),
		     ppi_human_s(he, sizeof he, ev->end_s));
	}
	/* Ticks at a round step of time, labelled in the unit of the step. */
	double step = ppi_nice_step(T, 6);
	double unit = step >= 1 ? 1 : step >= 1e-3 ? 1e-3 : 1e-6;
	const char *uname = unit == 1 ? "s" : unit == 1e-3 ? "ms" : "us";
	for (int k = 0; k * step <= T * (1 + 1e-9); k++) {
		double x = a.x + a.w * (k * step) / T;
		line(&g, "grid", x, a.y, x, a.y + a.h, "#bbb", NULL);
		text(&g, "tick", x, a.y + a.h + 14, k == 0 ? "start" : "middle", "%s %s",
		     tick_label(hs, sizeof hs, k * step / unit, step / unit), uname);
	}
	const pp_event_kind legend[] = {PP_EV_F,    PP_EV_B,  PP_EV_W,
	                                PP_EV_SEND, PP_EV_DP, PP_EV_OPTIMIZER};
	for (size_t k = 0; k < sizeof legend / sizeof *legend; k++) {
		double lx = a.x + k * 110, ly = H - 14;
		rect(&g, "legend", lx, ly - 10, 12, 12, task_color(legend[k]), NULL, NULL);
		text(&g, "legend", lx + 16, ly, "start", "%s", pp_event_kind_name(legend[k]));
	}
	return close_svg(&g);
}

/* ------------------------------------------------------------ traffic */

#define HEAT_MAX_BINS 64

/* Each type's colour, as seed 000 Fig. 3 draws them: TP red, DP purple, PP
 * (activations and gradients alike) dark blue, the embedding sync light
 * blue; the types it does not draw in their own hues. */
static const char *const type_rgb[PP_TRAFFIC_NTYPES] = {
    [PP_TRAFFIC_TP] = "d62728",     [PP_TRAFFIC_CP] = "f28e2b",     [PP_TRAFFIC_EP] = "59a14f",
    [PP_TRAFFIC_PP_FWD] = "1f3b8c", [PP_TRAFFIC_PP_BWD] = "1f3b8c", [PP_TRAFFIC_DP] = "8e44ad",
    [PP_TRAFFIC_EMB] = "6baed6",    [PP_TRAFFIC_ZERO3] = "9c755f"};

/* The colour of a cell of type `type` at `x` (0..1) of the busiest: the
 * type's hue mixed with white, lighter for less traffic. */
static void type_fill(char *buf, size_t n, int type, double x)
{
	unsigned rgb = (unsigned)strtoul(type_rgb[type], NULL, 16);
	double f = 0.25 + 0.75 * x;
	int c[3] = {(int)(rgb >> 16) & 255, (int)(rgb >> 8) & 255, (int)rgb & 255};
	for (int i = 0; i < 3; i++)
		c[i] = (int)(255 - (255 - c[i]) * f + 0.5);
	snprintf(buf, n, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static int chart_traffic(const pp_report_inputs *in, FILE *f)
{
	const pp_traffic *t = in->traffic;
	long long bins = t->gpus < HEAT_MAX_BINS ? t->gpus : HEAT_MAX_BINS;
	long long per = (t->gpus + bins - 1) / bins; /* GPUs per bin */
	bins = (t->gpus + per - 1) / per;
	/* Per bin pair: the bytes of each type (a cell is coloured by the type
	 * that sends most in it) and their sum. */
	double *m = ppi_calloc((size_t)(bins * bins) * (PP_TRAFFIC_NTYPES + 1), sizeof *m);
	if (!m)
		return -1;
	double top = 0;
	bool seen[PP_TRAFFIC_NTYPES] = {false};
	for (size_t i = 0; i < t->n; i++) {
		const pp_traffic_cell *c = &t->cell[i];
		double *v = &m[((c->src / per) * bins + c->dst / per) * (PP_TRAFFIC_NTYPES + 1)];
		v[PP_TRAFFIC_NTYPES] += c->bytes;
		if (c->type >= 0 && c->type < PP_TRAFFIC_NTYPES)
			v[c->type] += c->bytes;
	}
	for (long long k = 0; k < bins * bins; k++)
		if (m[k * (PP_TRAFFIC_NTYPES + 1) + PP_TRAFFIC_NTYPES] > top)
			top = m[k * (PP_TRAFFIC_NTYPES + 1) + PP_TRAFFIC_NTYPES];
	double side = 448, cell = side / bins;
	double W = 640, H = side + 100;
	area a = {70, 40, side, side};
	svg g;
	open_svg(&g, f, PP_CHART_TRAFFIC, W, H);
	text(&g, "axis-label", a.x, a.y - 10, "start",
	     "bytes per iteration from GPU (row) to GPU (column)%s; colour: the type that sends "
	     "most",
	     per > 1 ? ", binned" : "");
	rect(&g, "traffic-frame", a.x, a.y, a.w, a.h, "#ffffff", "stroke=\"#333\"", NULL);
	long long cells = 0;
	for (long long s = 0; s < bins; s++)
		for (long long d = 0; d < bins; d++) {
			const double *cv = &m[(s * bins + d) * (PP_TRAFFIC_NTYPES + 1)];
			double v = cv[PP_TRAFFIC_NTYPES];
			if (!(v > 0))
				continue;
			int type = 0;
			for (int k = 1; k < PP_TRAFFIC_NTYPES; k++)
				if (cv[k] > cv[type])
					type = k;
			seen[type] = true;
			/* log scale over 4 decades below the busiest pair */
			double x = top > 0 ? (log10(v / top) + 4) / 4 : 0;
			x = x < 0.05 ? 0.05 : x > 1 ? 1 : x;
			char fill[16], extra[96], gb[48];
			type_fill(fill, sizeof fill, type, x);
			snprintf(extra, sizeof extra,
			         "data-src=\"%lld\" data-dst=\"%lld\" data-type=\"%s\"", s * per,
			         d * per, pp_traffic_type_name((pp_traffic_type)type));
			ppi_human(gb, sizeof gb, v / 1e9);
			if (per > 1)
				rect(&g, "traffic-cell", a.x + d * cell, a.y + s * cell, cell, cell,
				     fill, extra, "GPUs %lld-%lld -> %lld-%lld: %s GB, mostly %s",
				     s * per, s * per + per - 1, d * per, d * per + per - 1, gb,
				     pp_traffic_type_name((pp_traffic_type)type));
			else
				rect(&g, "traffic-cell", a.x + d * cell, a.y + s * cell, cell, cell,
				     fill, extra, "GPU %lld -> GPU %lld: %s GB, mostly %s", s, d,
				     gb, pp_traffic_type_name((pp_traffic_type)type));
			cells++;
		}
	free(m);
	/* The legend: the types drawn (PP's two directions share a colour). */
	double ly = a.y + 96;
	for (int k = 0; k < PP_TRAFFIC_NTYPES; k++) {
		bool pp_pair = k == PP_TRAFFIC_PP_FWD && seen[PP_TRAFFIC_PP_BWD];
		if (!seen[k] || (k == PP_TRAFFIC_PP_BWD && seen[PP_TRAFFIC_PP_FWD]))
			continue;
		char fill[16];
		type_fill(fill, sizeof fill, k, 1);
		rect(&g, "legend", a.x + a.w + 10, ly - 10, 12, 12, fill, NULL, NULL);
		text(&g, "legend", a.x + a.w + 28, ly, "start", "%s",
		     pp_pair ? "pp (both ways)" : pp_traffic_type_name((pp_traffic_type)k));
		ly += 18;
	}
	int step = bins <= 16 ? 1 : (int)(bins / 8);
	for (long long k = 0; k < bins; k += step) {
		text(&g, "tick", a.x - 4, a.y + k * cell + cell / 2 + 4, "end", "%lld", k * per);
		text(&g, "tick", a.x + k * cell + cell / 2, a.y + a.h + 14, "middle", "%lld",
		     k * per);
	}
	/* Node boundaries, binned as the cells are: a node smaller than a bin
	 * gets no line of its own, a dash every `nodes` nodes (at most one a
	 * bin, so at most HEAT_MAX_BINS a side however many GPUs). */
	long long gpn = t->gpus_per_node, nodes = 1;
	if (gpn > 0 && gpn < per)
		nodes = (per + gpn - 1) / gpn;
	if (gpn > 0 && gpn < t->gpus)
		for (long long n = gpn * nodes; n < t->gpus; n += gpn * nodes) {
			double pos = (double)n / per * cell;
			line(&g, "traffic-node", a.x + pos, a.y, a.x + pos, a.y + a.h, "#888",
			     "stroke-dasharray=\"2 2\"");
			line(&g, "traffic-node", a.x, a.y + pos, a.x + a.w, a.y + pos, "#888",
			     "stroke-dasharray=\"2 2\"");
		}
	text(&g, "axis-label", a.x + a.w + 10, a.y + 14, "start", "busiest pair");
	char gb[48];
	text(&g, "axis-label", a.x + a.w + 10, a.y + 30, "start", "%s GB",
	     ppi_human(gb, sizeof gb, top / 1e9));
	text(&g, "axis-label", a.x + a.w + 10, a.y + 50, "start", "%lld pairs", cells);
	if (nodes > 1)
		text(&g, "axis-label", a.x + a.w + 10, a.y + 66, "start",
		     "dashes: every %lld nodes", nodes);
	else
		text(&g, "axis-label", a.x + a.w + 10, a.y + 66, "start", "dashes: nodes");
	return close_svg(&g);
}

/* ------------------------------------------------------------ pareto */

static void plan_label(const pp_estimate *e, char *buf, size_t n)
{
	const pp_plan *p = &e->plan;
	snprintf(buf, n, "tp%d pp%d dp%d cp%d ep%d vp%d mbs%d zero%d %s %s", p->tp, p->pp, p->dp,
	         p->cp, p->ep, p->vp, p->mbs, p->zero, pp_recompute_name(p->recompute),
	         pp_schedule_name(p->schedule));
}

static int chart_pareto(const pp_report_inputs *in, FILE *f)
{
	const pp_search *s = in->search;
	size_t np = pp_search_pareto_count(s), nt = pp_search_count(s);
	double tmax = 0, mmax = 0, tmin = INFINITY, mmin = INFINITY;
	pp_estimate e_buf; /* one estimate, refilled per top plan */
	pp_error err;
	for (size_t k = 0; k < np + nt; k++) {
		if (k >= np && pp_search_plan_get(s, k - np, &e_buf, &err))
			return -1;
		const pp_estimate *e = k < np ? pp_search_pareto(s, k) : &e_buf;
		double t = e->time.iteration_s, mb = e->memory.total_bytes / GIB;
		tmax = t > tmax ? t : tmax;
		tmin = t < tmin ? t : tmin;
		mmax = mb > mmax ? mb : mmax;
		mmin = mb < mmin ? mb : mmin;
	}
	double cap = np ? pp_search_pareto(s, 0)->capacity_bytes / GIB : 0;
	mmax = cap > mmax ? cap : mmax;
	/* x: iteration time, from a bit below the fastest; y: memory from 0 */
	double x0 = tmin * 0.95, x1 = tmax * 1.05;
	if (!(x1 > x0))
		x1 = x0 + (x0 > 0 ? x0 * 0.1 : 1);
	double ymax = nice_max(mmax * 1.05);
	double W = 720, H = 380;
	area a = {70, 40, W - 110, H - 90};
	svg g;
	open_svg(&g, f, PP_CHART_PARETO, W, H);
	y_axis(&g, &a, ymax, "peak GiB per GPU");
	double xs = ppi_nice_step(x1 - x0, 5);
	char tb[48], hs[48];
	for (double v = ceil(x0 / xs) * xs; v <= x1; v += xs)
		text(&g, "tick", a.x + a.w * (v - x0) / (x1 - x0), a.y + a.h + 14, "middle", "%s",
		     tick_label(tb, sizeof tb, v, xs));
	text(&g, "axis-label", a.x + a.w / 2, H - 14, "middle", "iteration time, s");
	double hy = a.y + a.h - cap / ymax * a.h;
	line(&g, "pareto-hbm", a.x, hy, a.x + a.w, hy, "#c00", "stroke-dasharray=\"6 3\"");
	text(&g, "pareto-hbm-label", a.x + a.w, hy - 4, "end", "HBM %.1f GiB", cap);
	/* the front as a step line, then its points, then the top plans */
	fprintf(f, "<polyline class=\"pareto-front\" data-chart=\"pareto\" fill=\"none\" "
	           "stroke=\"#4e79a7\" points=\"");
	for (size_t k = 0; k < np; k++) {
		const pp_estimate *e = pp_search_pareto(s, k);
		fprintf(f, "%s%.2f,%.2f", k ? " " : "",
		        a.x + (e->time.iteration_s - x0) / (x1 - x0) * a.w,
		        a.y + a.h - e->memory.total_bytes / GIB / ymax * a.h);
	}
	fputs("\"/>\n", f);
	char label[160];
	for (size_t k = 0; k < nt; k++) {
		if (pp_search_plan_get(s, k, &e_buf, &err))
			return -1;
		const pp_estimate *e = &e_buf;
		plan_label(e, label, sizeof label);
		circle(&g, "pareto-top", a.x + (e->time.iteration_s - x0) / (x1 - x0) * a.w,
		       a.y + a.h - e->memory.total_bytes / GIB / ymax * a.h, 7, "none",
		       "#%zu: %s, %s, %.2f GiB", k + 1, label,
		       ppi_human_s(hs, sizeof hs, e->time.iteration_s),
		       e->memory.total_bytes / GIB);
	}
	for (size_t k = 0; k < np; k++) {
		const pp_estimate *e = pp_search_pareto(s, k);
		plan_label(e, label, sizeof label);
		circle(&g, "pareto-point", a.x + (e->time.iteration_s - x0) / (x1 - x0) * a.w,
		       a.y + a.h - e->memory.total_bytes / GIB / ymax * a.h, 4, "#4e79a7",
		       "front: %s, %s, %.2f GiB", label,
		       ppi_human_s(hs, sizeof hs, e->time.iteration_s),
		       e->memory.total_bytes / GIB);
	}
	circle(&g, "legend", a.x + a.w - 150, a.y + 10, 4, "#4e79a7", "Pareto front");
	text(&g, "legend", a.x + a.w - 140, a.y + 14, "start", "Pareto front (%zu)", np);
	circle(&g, "legend", a.x + a.w - 150, a.y + 28, 7, "none", "top plans");
	text(&g, "legend", a.x + a.w - 140, a.y + 32, "start", "top plans (%zu)", nt);
	return close_svg(&g);
}

/* ------------------------------------------------------------ sweep */

/* x positions of a sweep's rows: the axis values, on a log scale when they
 * span more than a factor of 8. */
typedef struct xscale {
	double lo, hi;
	bool log;
} xscale;

static xscale sweep_x(const pp_sweep *sw)
{
	xscale x = {INFINITY, -INFINITY, false};
	for (size_t i = 0; i < sw->nrows; i++) {
		if (!sw->rows[i].ok)
			continue;
		double v = (double)sw->rows[i].value;
		x.lo = v < x.lo ? v : x.lo;
		x.hi = v > x.hi ? v : x.hi;
	}
	x.log = x.lo > 0 && x.hi / x.lo > 8;
	if (!(x.hi > x.lo)) {
		x.lo -= 1;
		x.hi += 1;
	}
	return x;
}

static double xpos(const xscale *x, const area *a, double v)
{
	double f = x->log ? log(v / x->lo) / log(x->hi / x->lo) : (v - x->lo) / (x->hi - x->lo);
	return a->x + 10 + f * (a->w - 20);
}

static void x_ticks(svg *g, const pp_sweep *sw, const xscale *x, const area *a)
{
	size_t shown = 0, ok = 0;
	for (size_t i = 0; i < sw->nrows; i++)
		ok += sw->rows[i].ok;
	size_t every = ok > 12 ? ok / 12 + 1 : 1;
	for (size_t i = 0; i < sw->nrows; i++) {
		if (!sw->rows[i].ok)
			continue;
		if (shown++ % every == 0)
			text(g, "tick", xpos(x, a, (double)sw->rows[i].value), a->y + a->h + 14,
			     "middle", "%lld", sw->rows[i].value);
	}
	text(g, "axis-label", a->x + a->w / 2, a->y + a->h + 32, "middle", "%s%s",
	     pp_sweep_axis_name(sw->axis), x->log ? " (log scale)" : "");
}

static void polyline_rows(svg *g, const char *cls, const char *stroke, const pp_sweep *sw,
                          const xscale *x, const area *a, double ymax, int which)
{
	fprintf(g->f,
	        "<polyline class=\"%s\" data-chart=\"%s\" fill=\"none\" stroke=\"%s\" "
	        "points=\"",
	        cls, g->chart, stroke);
	bool first = true;
	for (size_t i = 0; i < sw->nrows; i++) {
		const pp_sweep_row *r = &sw->rows[i];
		if (!r->ok)
			continue;
		double v = which == 0   ? r->speedup
		           : which == 1 ? r->ideal_speedup
		           : which == 2 ? r->rent_usd
		                        : r->train_days;
		fprintf(g->f, "%s%.2f,%.2f", first ? "" : " ", xpos(x, a, (double)r->value),
		        a->y + a->h - v / ymax * a->h);
		first = false;
	}
	fputs("\"/>\n", g->f);
}

static int chart_scaling(const pp_report_inputs *in, FILE *f)
{
	const pp_sweep *sw = in->sweep;
	double ymax = 0;
	for (size_t i = 0; i < sw->nrows; i++)
		if (sw->rows[i].ok) {
			ymax = sw->rows[i].speedup > ymax ? sw->rows[i].speedup : ymax;
			ymax = sw->rows[i].ideal_speedup > ymax ? sw->rows[i].ideal_speedup : ymax;
		}
	ymax = nice_max(ymax * 1.05);
	double W = 720, H = 360;
	area a = {70, 40, W - 110, H - 100};
	xscale x = sweep_x(sw);
	svg g;
	open_svg(&g, f, PP_CHART_SCALING, W, H);
	y_axis(&g, &a, ymax, "speedup over the first point (tokens/s)");
	x_ticks(&g, sw, &x, &a);
	polyline_rows(&g, "scaling-ideal", "#999", sw, &x, &a, ymax, 1);
	polyline_rows(&g, "scaling-line", "#4e79a7", sw, &x, &a, ymax, 0);
	for (size_t i = 0; i < sw->nrows; i++) {
		const pp_sweep_row *r = &sw->rows[i];
		if (!r->ok)
			continue;
		circle(&g, "scaling-point", xpos(&x, &a, (double)r->value),
		       a.y + a.h - r->speedup / ymax * a.h, 4, r->fits ? "#4e79a7" : "#fff",
		       "%s %lld: %lld GPUs, speedup %.3f of %.3f (efficiency %.1f%%)%s",
		       pp_sweep_axis_name(sw->axis), r->value, r->gpus, r->speedup,
		       r->ideal_speedup, 100 * r->scaling_eff, r->fits ? "" : ", does not fit");
	}
	line(&g, "legend", a.x + 10, a.y + 10, a.x + 30, a.y + 10, "#999", NULL);
	text(&g, "legend", a.x + 36, a.y + 14, "start", "linear");
	line(&g, "legend", a.x + 10, a.y + 28, a.x + 30, a.y + 28, "#4e79a7", NULL);
	text(&g, "legend", a.x + 36, a.y + 32, "start", "estimated (hollow: does not fit)");
	return close_svg(&g);
}

static int chart_cost(const pp_report_inputs *in, FILE *f)
{
	const pp_sweep *sw = in->sweep;
	bool train = sw->job.train_tokens > 0, rent = train && sw->usd_per_gpu_hour > 0;
	double W = 720, H = 360;
	area a = {70, 40, W - 150, H - 100};
	xscale x = sweep_x(sw);
	svg g;
	open_svg(&g, f, PP_CHART_COST, W, H);
	if (!train) {
		text(&g, "axis-label", a.x, a.y + 20, "start",
		     "no token budget: give --tokens for days and cost");
		return close_svg(&g);
	}
	double dmax = 0, umax = 0;
	for (size_t i = 0; i < sw->nrows; i++)
		if (sw->rows[i].ok) {
			dmax = sw->rows[i].train_days > dmax ? sw->rows[i].train_days : dmax;
			umax = sw->rows[i].rent_usd > umax ? sw->rows[i].rent_usd : umax;
		}
	dmax = nice_max(dmax * 1.05);
	umax = nice_max(umax * 1.05);
	y_axis(&g, &a, dmax, "days to train (left, circles)");
	x_ticks(&g, sw, &x, &a);
	polyline_rows(&g, "cost-days-line", "#59a14f", sw, &x, &a, dmax, 3);
	if (rent) {
		line(&g, "axis", a.x + a.w, a.y, a.x + a.w, a.y + a.h, "#333", NULL);
		y_ticks(&g, &a, umax, true);
		text(&g, "axis-label", a.x + a.w, a.y - 8, "end", "rent USD (right, squares)");
		polyline_rows(&g, "cost-usd-line", "#e15759", sw, &x, &a, umax, 2);
	}
	for (size_t i = 0; i < sw->nrows; i++) {
		const pp_sweep_row *r = &sw->rows[i];
		if (!r->ok)
			continue;
		double px = xpos(&x, &a, (double)r->value);
		circle(
		    &g, "cost-point", px, a.y + a.h - r->train_days / dmax * a.h, 4,
		    r->fits ? "#59a14f" : "#fff", "%s %lld: %lld GPUs, %.2f days, %.0f GPU-hours",
		    pp_sweep_axis_name(sw->axis), r->value, r->gpus, r->train_days, r->gpu_hours);
		if (rent)
			rect(&g, "cost-usd-point", px - 4, a.y + a.h - r->rent_usd / umax * a.h - 4,
			     8, 8, r->fits ? "#e15759" : "#fff", "stroke=\"#333\"",
			     "%s %lld: %.0f USD", pp_sweep_axis_name(sw->axis), r->value,
			     r->rent_usd);
	}
	return close_svg(&g);
}

int pp_report_svg(const pp_report_inputs *in, pp_chart c, FILE *out)
{
	if (!pp_report_chart_available(in, c))
		return -1;
	switch (c) {
	case PP_CHART_MEMORY: return chart_memory(in, out);
	case PP_CHART_ITERATION: return chart_iteration(in, out);
	case PP_CHART_GANTT: return chart_gantt(in, out);
	case PP_CHART_TRAFFIC: return chart_traffic(in, out);
	case PP_CHART_PARETO: return chart_pareto(in, out);
	case PP_CHART_SCALING: return chart_scaling(in, out);
	case PP_CHART_COST: return chart_cost(in, out);
	default: return -1;
	}
}
