/*
 * Private to src/report: helpers the renderings share.
 */
#ifndef PPI_REPORT_INT_H
#define PPI_REPORT_INT_H

#include <jansson.h>
#include <stdio.h>

/* Write `root` (stolen; NULL allowed) as indented JSON and a newline.  0 or -1. */
/*
 * Write `root` (owned: released here) as the report.  `mark` is
 * ppi_alloc_failed() taken before the document was built: an allocation that
 * failed since (a value that json_object_set_new or json_array_append_new
 * silently dropped) makes it PP_REPORT_ENOMEM, never a document with a hole.
 * 0, -1 (write error) or PP_REPORT_ENOMEM.
 */
int ppi_report_dump(json_t *root, long long mark, FILE *out);

/* The goodput of an estimate (e->has_goodput): text lines, a JSON object
 * (report_goodput.c). */
struct pp_estimate;
struct pp_traffic_timeline;
void ppi_report_goodput_text(const struct pp_estimate *e, FILE *out);
json_t *ppi_report_goodput_json(const struct pp_estimate *e);
/* Power and energy of an estimate (e->energy) when its job asks for them
 * (pp_energy_asked): text lines, a JSON object (report_energy.c). */
void ppi_report_energy_text(const struct pp_estimate *e, FILE *out);
json_t *ppi_report_energy_json(const struct pp_estimate *e);
/* The collectives of the estimate's paced stage, each with the algorithm
 * chosen for it (report_colls.c); NULL when it cannot be built. */
json_t *ppi_report_colls_json(const struct pp_estimate *e);
/* The collectives that take most of the paced stage's iteration, one text
 * line (report_colls.c). */
void ppi_report_colls_text(const struct pp_estimate *e, FILE *out);
/* The dispatch all-to-all under --moe-routing: p50, p99, expected and
 * uniform times (report_moe.c); nothing (NULL) without a routing or at ep 1. */
void ppi_report_moe_text(const struct pp_estimate *e, FILE *out);
json_t *ppi_report_moe_json(const struct pp_estimate *e);
/* A timeline's on seconds and bytes by traffic type, per pipeline rank: the
 * types some rank sends (report_colls.c). */
void ppi_report_timeline_types(const struct pp_traffic_timeline *tl, FILE *out);

/* Charts (report_svg.c): `s` escaped for XML text and attributes; a chart's title. */
void ppi_xml_text(FILE *f, const char *s);
#include "paraplan/report.h"
const char *ppi_chart_title(pp_chart c);
/*
 * Numbers as people write them on a chart or a page (format_html.c), into
 * buf of n bytes; returns buf.  ppi_human: no exponent, thousands grouped
 * with commas, about three significant digits (255,450; 1,218; 13.1; 2.63;
 * 0.204).  ppi_human_s: a duration in the unit that reads best (13.1 s,
 * 1,314 s, 204 ms, 7.59 ms, 850 us).  ppi_nice_step: a round step (1, 2 or 5
 * x 10^k) that cuts `range` into at most `ticks` intervals.
 */
char *ppi_human(char *buf, size_t n, double v);
char *ppi_human_s(char *buf, size_t n, double s);
double ppi_nice_step(double range, int ticks);

/* The plan's words of a search table ("tp 2 pp 4 ... interleaved tp-cp-ep-dp-pp"). */
void ppi_plan_words_split(const pp_model *m, const pp_plan *p, char *buf, size_t n);
/* search --bandwidth (report_mapping.c): one plan's mapping, {"mapped",
 * "simulated", "rank", "closed_form_iteration_s", "identity_iteration_s",
 * "annealed_iteration_s", "kept_identity", "mapped_iteration_s", "gain",
 * "eq3_identity_s", "eq3_annealed_s"}; the ranking, {"bandwidth", "seed",
 * "moves", "order": [search ranks]}. */
json_t *ppi_report_mapping_json(const struct pp_netmap_plan *p);
json_t *ppi_report_ranking_json(const struct pp_netmap_ranking *r);

#endif
