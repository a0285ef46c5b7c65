/*
 * The html format: one self-contained page (inline SVG and CSS) of the charts
 * of an estimate, a search or a sweep (pp_report_html), from the result's
 * charts inputs; what --html FILE writes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "format_int.h"
#include "report_int.h"

char *ppi_human(char *buf, size_t n, double v)
{
	if (n == 0)
		return buf;
	if (!isfinite(v)) {
		snprintf(buf, n, "%s", isnan(v) ? "-" : v > 0 ? "inf" : "-inf");
		return buf;
	}
	double a = fabs(v);
	if (v == 0 || (a < 99.95 && v == floor(v))) {
		snprintf(buf, n, "%.0f", v);
		return buf;
	}
	if (a < 99.95) { /* three significant digits, at most three decimals */
		int dec = a >= 9.995 ? 1 : a >= 0.9995 ? 2 : 3;
		snprintf(buf, n, "%.*f", dec, v);
		return buf;
	}
	/* A whole number, grouped by thousands. */
	char digits[32];
	snprintf(digits, sizeof digits, "%.0f", a);
	size_t len = strlen(digits), o = 0;
	char out[48];
	if (v < 0)
		out[o++] = '-';
	for (size_t i = 0; i < len && o + 2 < sizeof out; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
	snprintf(buf, n, "%s", out);
	return buf;
}

char *ppi_human_s(char *buf, size_t n, double s)
{
	char num[48];
	double a = fabs(s);
	const char *unit = a >= 0.9995 || a == 0 ? "s" : a >= 0.9995e-3 ? "ms" : "us";
	double scale = unit[0] == 's' ? 1 : unit[0] == 'm' ? 1e3 : 1e6;
	snprintf(buf, n, "%s %s", ppi_human(num, sizeof num, s * scale), unit);
	return buf;
}

double ppi_nice_step(double range, int ticks)
{
	if (!(range > 0) || !isfinite(range) || ticks < 1)
		return 1;
	double raw = range / ticks, e = pow(10, floor(log10(raw))), m = raw / e;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * e;
}

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
