/*
 * The csv format: one header line and one line per row, SI units, where the
 * result is one table: a sweep's points, a traffic matrix's cells.
 */
#include <stdio.h>

#include "format_int.h"

static int sweep_csv(const pp_result *r, FILE *f)
{
	return pp_report_sweep_csv(r->sweep, f);
}

static int traffic_csv(const pp_result *r, FILE *f)
{
	return pp_report_traffic_csv(r->traffic, f);
}

const pp_format_type ppi_format_csv = {
    .name = "csv",
    .aliases = NULL,
    .summary = "one table, one header line, SI units (a sweep, a traffic matrix)",
    .render =
        {
            [PP_RESULT_SWEEP] = sweep_csv,
            [PP_RESULT_TRAFFIC] = traffic_csv,
        },
};
