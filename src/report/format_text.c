/*
 * The text format: tables and labelled lines for people (GiB, ms, %).  Every
 * result kind has one.
 */
#include <stdio.h>

#include "format_int.h"

static int estimate_text(const pp_result *r, FILE *f)
{
	int wr = pp_report_text(r->estimate, f);
	if (!wr && r->traffic)
		wr = pp_report_traffic_text(r->traffic, f);
	if (!wr && r->timeline)
		wr = pp_report_timeline_text(r->timeline, r->timeline_place, 16, f);
	return wr;
}

/* A search's winner with its goodput (search --tokens and goodput flags). */
static int goodput_tail(const pp_result *r, FILE *f)
{
	if (!r->goodput)
		return 0;
	fprintf(f, "\n#1 under failures:");
	return pp_report_goodput_text(r->goodput, f);
}

static int search_text(const pp_result *r, FILE *f)
{
	int wr = pp_report_search_text(r->search, f);
	if (!wr && r->mapping) /* search --bandwidth */
		wr = pp_report_search_mapping_text(r->search, r->mapping, f);
	return wr ? wr : goodput_tail(r, f);
}

static int search_inverse_text(const pp_result *r, FILE *f)
{
	const pp_inverse_report *iv = r->inverse;
	int wr = pp_report_inverse_text(iv->query, iv->candidates, iv->ncandidates, iv->answer,
	                                iv->axis, f);
	if (!wr && r->search) {
		fprintf(f, "\nthe search at %lld GPUs:\n", iv->candidates[iv->answer->pick].gpus);
		wr = pp_report_search_text(r->search, f);
	}
	return wr ? wr : goodput_tail(r, f);
}

static int sweep_text(const pp_result *r, FILE *f)
{
	return pp_report_sweep_text(r->sweep, f);
}

static int sweep_inverse_text(const pp_result *r, FILE *f)
{
	const pp_inverse_report *iv = r->inverse;
	int wr = pp_report_sweep_text(r->sweep, f);
	fputc('\n', f);
	if (!wr)
		wr = pp_report_inverse_text(iv->query, iv->candidates, iv->ncandidates, iv->answer,
		                            iv->axis, f);
	return wr;
}

static int traffic_text(const pp_result *r, FILE *f)
{
	return pp_report_traffic_text(r->traffic, f);
}

const pp_format_type ppi_format_text = {
    .name = "text",
    .aliases = NULL,
    .summary = "tables and labelled lines for people (the default)",
    .render =
        {
            [PP_RESULT_ESTIMATE] = estimate_text,
            [PP_RESULT_SEARCH] = search_text,
            [PP_RESULT_SEARCH_INVERSE] = search_inverse_text,
            [PP_RESULT_SWEEP] = sweep_text,
            [PP_RESULT_SWEEP_INVERSE] = sweep_inverse_text,
            [PP_RESULT_VALIDATE] = ppi_validate_text,
            [PP_RESULT_VALIDATE_MEMORY] = ppi_validate_text,
            [PP_RESULT_MEMORY_FIT] = ppi_memory_fit_text,
            [PP_RESULT_VALIDATE_SEARCH] = ppi_validate_text,
            [PP_RESULT_CROSS_VALIDATION] = ppi_cv_text,
            [PP_RESULT_FIT] = ppi_fit_text,
            [PP_RESULT_PLACE] = ppi_place_text,
            [PP_RESULT_KERNEL] = ppi_kernel_text,
            [PP_RESULT_TRAFFIC] = traffic_text,
            [PP_RESULT_SHARE] = ppi_share_text,
            [PP_RESULT_RECIPE] = ppi_recipe_text,
        },
};
