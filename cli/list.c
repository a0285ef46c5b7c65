/* paraplan list models|gpus|systems|params|formats */
#include <string.h>

#include "cli.h"

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
		pp_report_params_text(stdout); /* a write error: cli_finish's */
		return EXIT_ANSWERED;
	}
	if (strcmp(argv[1], "formats") == 0) {
		pp_report_formats_text(stdout);
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
