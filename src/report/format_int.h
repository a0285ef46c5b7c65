/*
 * Private to src/report: the renderers the formats share (one per result
 * kind and format, in report_<kind>.c) and the registry's list.
 */
#ifndef PPI_FORMAT_INT_H
#define PPI_FORMAT_INT_H

#include <jansson.h>
#include <stdio.h>

#include "paraplan/format.h"

/* Renderers of pp_render_fn's contract (0, -1, PP_REPORT_ENOMEM), each for
 * the result kinds its name says. */
int ppi_validate_text(const pp_result *r, FILE *f); /* VALIDATE, _MEMORY, _SEARCH */
int ppi_validate_json(const pp_result *r, FILE *f); /* VALIDATE, VALIDATE_MEMORY */
int ppi_cv_text(const pp_result *r, FILE *f);
int ppi_cv_json(const pp_result *r, FILE *f);
int ppi_fit_text(const pp_result *r, FILE *f);
int ppi_place_text(const pp_result *r, FILE *f);
int ppi_kernel_text(const pp_result *r, FILE *f);
int ppi_share_text(const pp_result *r, FILE *f); /* SHARE */
int ppi_share_json(const pp_result *r, FILE *f);
int ppi_memory_fit_text(const pp_result *r, FILE *f); /* MEMORY_FIT */
int ppi_memory_fit_json(const pp_result *r, FILE *f);
int ppi_recipe_text(const pp_result *r, FILE *f); /* RECIPE */
int ppi_recipe_json(const pp_result *r, FILE *f);
/* validate --memory's measured peaks: the records' and the steps' (text, JSON). */
int ppi_memory_measured_text(const pp_validate_report *v, FILE *f);
json_t *ppi_memory_measured_json(const pp_validate_report *v);

/* The formats of format_list.h: ppi_format_<name>, each in format_<name>.c. */
#define PP_FORMAT(name) extern const pp_format_type ppi_format_##name;
#include "format_list.h"
#undef PP_FORMAT

#endif
