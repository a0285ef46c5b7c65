/*
 * paraplan — thin CLI: parse the verb, hand over, map results to exit codes:
 * 0 answered, 1 internal failure, 2 bad input or usage.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
	cli_usage(f, "paraplan"); /* docs/usage/paraplan.txt */
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		cli_message("missing command (try 'paraplan help' for the list)");
		return EXIT_BADINPUT;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "estimate") == 0)
		return cli_estimate(argc - 1, argv + 1);
	if (strcmp(verb, "list") == 0)
		return cli_list(argc - 1, argv + 1);
	if (strcmp(verb, "validate") == 0)
		return cli_validate(argc - 1, argv + 1);
	if (strcmp(verb, "search") == 0)
		return cli_search(argc - 1, argv + 1);
	if (strcmp(verb, "calibrate") == 0)
		return cli_calibrate(argc - 1, argv + 1);
	if (strcmp(verb, "kernel") == 0)
		return cli_kernel(argc - 1, argv + 1);
	if (strcmp(verb, "sweep") == 0)
		return cli_sweep(argc - 1, argv + 1);
	if (strcmp(verb, "place") == 0)
		return cli_place(argc - 1, argv + 1);
	if (strcmp(verb, "help") == 0 || strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
		usage(stdout);
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
