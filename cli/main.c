/*
 * paraplan — thin CLI: parse the verb, hand over, map results to exit codes:
 * 0 answered, 1 internal failure, 2 bad input or usage.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* The verbs, each given the arguments from its name on. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} verbs[] = {{"estimate", cli_estimate}, {"list", cli_list},           {"validate", cli_validate},
             {"search", cli_search},     {"calibrate", cli_calibrate}, {"kernel", cli_kernel},
             {"sweep", cli_sweep},       {"place", cli_place},         {"share", cli_share},
             {"plan-run", cli_plan_run}};

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		cli_message("missing command (try 'paraplan help' for the list)");
		return EXIT_BADINPUT;
	}
	const char *verb = argv[1];
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (strcmp(verb, verbs[i].name) == 0)
			return verbs[i].run(argc - 1, argv + 1);
	if (strcmp(verb, "help") == 0 || strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
		cli_usage(stdout, "paraplan"); /* docs/usage/paraplan.txt */
		return EXIT_ANSWERED;
	}
	if (strcmp(verb, "version") == 0 || strcmp(verb, "--version") == 0) {
		printf("paraplan %s\n", PARAPLAN_VERSION);
		return EXIT_ANSWERED;
	}
	cli_message("unknown command '%s' (try 'paraplan help')", verb);
	return EXIT_BADINPUT;
}

int main(int argc, char **argv)
{
	return cli_finish(dispatch(argc, argv));
}
