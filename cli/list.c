/* paraplan list models|gpus|systems|params|formats */
#include <string.h>

#include "cli.h"

/* "lo..hi" of a range, as %g prints the bounds. */
static const char *range(char *buf, size_t n, double lo, double hi)
{
	snprintf(buf, n, "%g..%g", lo, hi);
	return buf;
}

/* The parameter registry (include/paraplan/params.h), one line each. */
static void list_params(void)
{
	printf("%-32s %-9s %-13s %-10s %-18s %-7s %s\n", "name", "kind", "unit", "valid", "fitted",
	       "start", "meaning");
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
		printf("%-32s %-9s %-13s %-10s %-18s %-7s %s\n", p->name,
		       pp_param_kind_name(p->kind), p->unit, valid, fit, start, p->meaning);
	}
}

/* The output formats of --format (include/paraplan/format.h), one line each:
 * the name, what it is for and the results it renders. */
static void list_formats(void)
{
	for (size_t i = 0; i < pp_format_count(); i++) {
		const pp_format_type *f = pp_format_at(i);
		printf("%-9s %s; renders:", f->name, f->summary);
		const char *sep = " ";
		for (int k = 0; k < PP_RESULT_KINDS; k++)
			if (pp_format_supports(f, (pp_result_kind)k)) {
				printf("%s%s", sep, pp_result_kind_name((pp_result_kind)k));
				sep = ", ";
			}
		putchar('\n');
	}
}

int cli_list(int argc, char **argv)
{
	static const struct {
		const char *word;
		pp_kind kind;
	} kinds[] = {{"models", PP_KIND_MODEL}, {"gpus", PP_KIND_GPU}, {"systems", PP_KIND_SYSTEM}};
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		cli_usage(stdout, "list"); /* docs/usage/list.txt */
		return EXIT_ANSWERED;
	}
	if (argc != 2) {
		cli_message("list: expected one argument, models, gpus, systems, params or formats "
		            "(usage: paraplan list models|gpus|systems|params|formats)");
		return EXIT_BADINPUT;
	}
	if (strcmp(argv[1], "params") == 0) {
		list_params();
		return EXIT_ANSWERED;
	}
	if (strcmp(argv[1], "formats") == 0) {
		list_formats();
		return EXIT_ANSWERED;
	}
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		if (strcmp(argv[1], kinds[k].word) != 0)
			continue;
		size_t n = pp_preset_count(kinds[k].kind);
		for (size_t i = 0; i < n; i++)
			printf("%s\n", pp_preset_name(kinds[k].kind, i));
		return EXIT_ANSWERED;
	}
	cli_message("list: expected models, gpus, systems, params or formats, got '%s'", argv[1]);
	return EXIT_BADINPUT;
}
