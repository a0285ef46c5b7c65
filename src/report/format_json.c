/*
 * The json format: one JSON document for programs, every quantity with its
 * unit in its name.  Not for a fit, a mapping, the kernel model or validate
 * --search (text only).
 */
#include <stdio.h>

#include "format_int.h"

static int estimate_json(const pp_result *r, FILE *f)
{
	return pp_report_json(r->estimate, f);
}

static int search_json(const pp_result *r, FILE *f)
{
	return pp_report_search_json(r->search, r->mapping, f);
}

/* {"inverse": ..., "search": ... or null} */
static int search_inverse_json(const pp_result *r, FILE *f)
{
	const pp_inverse_report *iv = r->inverse;
	fputs("{\"inverse\": ", f);
	int wr = pp_report_inverse_json(iv->query, iv->candidates, iv->ncandidates, iv->answer,
	                                iv->axis, f);
	fputs(",\"search\": ", f);
	if (!wr && r->search)
		wr = pp_report_search_json(r->search, NULL, f);
	else if (!wr)
		fputs("null\n", f);
	fputs("}\n", f);
	return wr;
}

static int sweep_json(const pp_result *r, FILE *f)
{
	return pp_report_sweep_json(r->sweep, f);
}

/* {"sweep": ..., "inverse": ...} */
static int sweep_inverse_json(const pp_result *r, FILE *f)
{
	const pp_inverse_report *iv = r->inverse;
	fputs("{\"sweep\": ", f);
	int wr = pp_report_sweep_json(r->sweep, f);
	fputs(",\"inverse\": ", f);
	if (!wr)
		wr = pp_report_inverse_json(iv->query, iv->candidates, iv->ncandidates, iv->answer,
		                            iv->axis, f);
	fputs("}\n", f);
	return wr;
}

static int traffic_json(const pp_result *r, FILE *f)
{
	return pp_report_traffic_json(r->traffic, f);
}

const pp_format_type ppi_format_json = {
    .name = "json",
    .aliases = NULL,
    .summary = "one JSON document for programs (units in the names)",
    .render =
        {
            [PP_RESULT_ESTIMATE] = estimate_json,
            [PP_RESULT_SEARCH] = search_json,
            [PP_RESULT_SEARCH_INVERSE] = search_inverse_json,
            [PP_RESULT_SWEEP] = sweep_json,
            [PP_RESULT_SWEEP_INVERSE] = sweep_inverse_json,
            [PP_RESULT_VALIDATE] = ppi_validate_json,
            [PP_RESULT_VALIDATE_MEMORY] = ppi_validate_json,
            [PP_RESULT_MEMORY_FIT] = ppi_memory_fit_json,
            [PP_RESULT_CROSS_VALIDATION] = ppi_cv_json,
            [PP_RESULT_TRAFFIC] = traffic_json,
            [PP_RESULT_SHARE] = ppi_share_json,
            [PP_RESULT_RECIPE] = ppi_recipe_json,
        },
};
