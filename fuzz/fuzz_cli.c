/*
 * libFuzzer target: the command line of estimate, search, sweep, validate,
 * calibrate, place, kernel and share, parsed only (cli_*_parse_only: no file is
 * read, no plan estimated).
 *
 * The input is split into arguments at NUL bytes when it has any, else at
 * white space (so the seeds are the tests' args files).  A first argument
 * "search", "sweep", "validate", "calibrate", "place", "kernel" or "share" picks that
 * verb's parser, anything else estimate's.
 * Beyond "does not crash": the exit code is 0, 1 or 2; a refusal (2) says
 * exactly one line, and a parse that goes on (0) says nothing; every line is
 * one line (no control character left unescaped).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ARGS = 256 };

static int lines;

static void on_message(const char *line)
{
	if (!line[0] || strncmp(line, "paraplan: ", 10) != 0)
		abort();
	for (const unsigned char *p = (const unsigned char *)line; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			abort(); /* a message must stay one line */
	/* A note (cli_note: flags of a launch script paraplan does not use, what
	 * --emit cannot express) informs; it is neither an answer nor a refusal.
	 * Told by how it was sent, not by its text: an error about a file named
	 * "note: x" starts the same way (found by this target). */
	if (cli_message_is_note) {
		if (strncmp(line + 10, "note: ", 6) != 0)
			abort();
		return;
	}
	lines++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	cli_message_hook = on_message;
	/* --help writes the usage to standard output. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	bool nul = memchr(data, '\0', size) != NULL;
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	argv[argc++] = "paraplan";
	if (nul) {
		for (size_t i = 0; i < size && argc < MAX_ARGS; i += strlen(buf + i) + 1)
			argv[argc++] = buf + i;
	} else {
		char *save = NULL;
		for (char *t = strtok_r(buf, " \t\n\r", &save); t && argc < MAX_ARGS;
		     t = strtok_r(NULL, " \t\n\r", &save))
			argv[argc++] = t;
	}
	argv[argc] = NULL;
	/* argv[1] is the verb, as main() hands it over: the parsers see argv + 1. */
	int (*parse)(int, char **) = cli_estimate_parse_only;
	if (argc > 1 && strcmp(argv[1], "search") == 0)
		parse = cli_search_parse_only;
	else if (argc > 1 && strcmp(argv[1], "sweep") == 0)
		parse = cli_sweep_parse_only;
	else if (argc > 1 && strcmp(argv[1], "validate") == 0)
		parse = cli_validate_parse_only;
	else if (argc > 1 && strcmp(argv[1], "calibrate") == 0)
		parse = cli_calibrate_parse_only;
	else if (argc > 1 && strcmp(argv[1], "place") == 0)
		parse = cli_place_parse_only;
	else if (argc > 1 && strcmp(argv[1], "kernel") == 0)
		parse = cli_kernel_parse_only;
	else if (argc > 1 && strcmp(argv[1], "share") == 0)
		parse = cli_share_parse_only;
	lines = 0;
	int rc = parse(argc - 1, argv + 1);
	if (rc != EXIT_ANSWERED && rc != EXIT_INTERNAL && rc != EXIT_BADINPUT)
		abort();
	if (rc == EXIT_BADINPUT && lines != 1)
		abort(); /* a refusal is one line, exactly */
	if (rc == EXIT_ANSWERED && lines != 0)
		abort(); /* the parse went on (or --help) without a word on stderr */
	free(buf);
	return 0;
}
