/*
 * The registries as lists (paraplan list params, paraplan list formats): the
 * parameters of params.h and the output formats of format.h, one line each.
 */
#include <stdio.h>
#include <string.h>

#include "paraplan/format.h"
#include "paraplan/params.h"
#include "paraplan/report.h"

/* "lo..hi" of a range, as %g prints the bounds. */
static const char *range(char *buf, size_t n, double lo, double hi)
{
	snprintf(buf, n, "%g..%g", lo, hi);
	return buf;
}

int pp_report_params_text(FILE *out)
{
	fprintf(out, "%-32s %-9s %-13s %-10s %-18s %-7s %s\n", "name", "kind", "unit", "valid",
	        "fitted", "start", "meaning");
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		char valid[48], fit[48], start[24];
		range(valid, sizeof valid, p->valid_lo, p->valid_hi);
		if (p->fitted) {
			range(fit, sizeof fit, p->fit_lo, p->fit_hi);
			if (p->fit_log)
				strncat(fit, " log", sizeof fit - strlen(fit) - 1);
			snprintf(start, sizeof start, "%g", p->fit_start);
		} else {
			snprintf(fit, sizeof fit, "no");
			snprintf(start, sizeof start, "-");
		}
		fprintf(out, "%-32s %-9s %-13s %-10s %-18s %-7s %s\n", p->name,
		        pp_param_kind_name(p->kind), p->unit, valid, fit, start, p->meaning);
	}
	/* The hardware fields a study varies (sweep --vary): datasheet values,
	 * never fitted. */
	for (size_t i = 0; i < pp_hw_field_count(); i++) {
		const pp_hw_field *h = pp_hw_field_at(i);
		char valid[48];
		range(valid, sizeof valid, h->valid_lo, h->valid_hi);
		fprintf(out, "%-32s %-9s %-13s %-10s %-18s %-7s %s (sweep --vary)\n", h->name,
		        "hardware", h->unit, valid, "no", "-", h->meaning);
	}
	return ferror(out) ? -1 : 0;
}

int pp_report_formats_text(FILE *out)
{
	for (size_t i = 0; i < pp_format_count(); i++) {
		const pp_format_type *f = pp_format_at(i);
		fprintf(out, "%-9s %s; renders:", f->name, f->summary);
		const char *sep = " ";
		for (int k = 0; k < PP_RESULT_KINDS; k++)
			if (pp_format_supports(f, (pp_result_kind)k)) {
				fprintf(out, "%s%s", sep, pp_result_kind_name((pp_result_kind)k));
				sep = ", ";
			}
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}
