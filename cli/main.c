/*
 * paraplan — thin CLI: parse the verb, hand over, map results to exit codes:
 * 0 answered, 1 internal failure, 2 bad input or usage.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char *cli_progname = "paraplan";

void cli_message(const char *fmt, ...)
{
	/* Always exactly one line: control characters that came from the input
	 * (a newline inside a JSON key, a tab in an argument) are escaped. */
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: ", cli_progname);
	for (const unsigned char *p = (const unsigned char *)buf; *p; p++) {
		if (*p == '\n')
			fputs("\\n", stderr);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	}
	fputc('\n', stderr);
}

int cli_fail(pp_status st, const pp_error *err)
{
	char buf[1024];
	if (st == PP_ENOMEM) {
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	cli_message("%s", pp_error_format(err, buf, sizeof buf));
	return st == PP_EINPUT ? EXIT_BADINPUT : EXIT_INTERNAL;
}

int cli_out_open(cli_out *o, const char *path)
{
	memset(o, 0, sizeof o->tmp);
	o->path = path;
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		o->path = NULL;
		return 0;
	}
	snprintf(o->tmp, sizeof o->tmp, "%s.tmpXXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		cli_message("%s: cannot create the output file", path);
		if (fd >= 0)
			close(fd);
		return EXIT_BADINPUT;
	}
	return 0;
}

int cli_out_close(cli_out *o, int ok)
{
	if (!o->path) {
		if (fflush(stdout) != 0) {
			cli_message("cannot write the output");
			return EXIT_INTERNAL;
		}
		return ok ? EXIT_ANSWERED : EXIT_INTERNAL;
	}
	int bad = fclose(o->f) != 0 || !ok;
	if (!bad && rename(o->tmp, o->path) == 0)
		return EXIT_ANSWERED;
	remove(o->tmp);
	cli_message("%s: cannot write the output file", o->path);
	return EXIT_INTERNAL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: paraplan <command> [options]\n"
	           "\n"
	           "commands:\n"
	           "  estimate   memory of one plan, per GPU, and whether it fits\n"
	           "  list       built-in presets and parameters: paraplan list "
	           "models|gpus|systems|params\n"
	           "  search     the fastest plans that fit, over every dimension and placement\n"
	           "  validate   predictions vs. published, measured runs (throughput; --memory)\n"
	           "  calibrate  fit a system's efficiency parameters to the published runs\n"
	           "  sweep      one plan over GPUs, dp or micro-batch: time, scaling, cost\n"
	           "  place      map workers to GPUs on a bandwidth matrix (annealing)\n"
	           "  help       this text; 'paraplan estimate --help' for the options\n"
	           "  version    print the version\n"
	           "\n"
	           "exit codes: 0 answered (a plan that does not fit is an answer), 1 internal "
	           "failure, 2 bad input or usage\n");
}

int main(int argc, char **argv)
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
