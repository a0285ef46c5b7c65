/*
 * The html format: one self-contained page (inline SVG and CSS) of the charts
 * of an estimate, a search or a sweep (pp_report_html), from the result's
 * charts inputs; what --html FILE writes.
 */
#include <stdio.h>

#include "format_int.h"

static int charts_html(const pp_result *r, FILE *f)
{
	return r->charts ? pp_report_html(r->charts, f) : PP_REPORT_EUNSUPPORTED;
}

const pp_format_type ppi_format_html = {
    .name = "html",
    .aliases = NULL,
    .summary = "one self-contained HTML page of the charts (what --html FILE writes)",
    .render =
        {
            [PP_RESULT_ESTIMATE] = charts_html,
            [PP_RESULT_SEARCH] = charts_html,
            [PP_RESULT_SWEEP] = charts_html,
        },
};
