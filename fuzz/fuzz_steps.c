/*
 * libFuzzer target: step-time files (`calibrate --step-times FILE`: CSV
 * "seconds,estimate flags" lines or JSON {"runs": [...]}), read by the CLI's
 * own readers (cli/calibrate_steps.c, included here for its static
 * functions) and the first runs' flags parsed and estimated as the verb
 * does.  A refusal says exactly one line; an accepted run has a finite
 * positive time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate_steps.c"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int lines;

static void on_message(const char *line)
{
	if (strncmp(line, "paraplan: ", 10) != 0)
		abort();
	for (const unsigned char *p = (const unsigned char *)line; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			abort(); /* a message must stay one line */
	if (!cli_message_is_note)
		lines++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	cli_message_hook = on_message;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { RUNS_ESTIMATED = 2 };
	if (memchr(data, '\0', size))
		return 0; /* the verb refuses a NUL before reading */
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	static step_run runs[MAX_RUNS];
	size_t n = 0;
	lines = 0;
	const char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	int rc = *p == '{' ? read_json("fuzz", text, runs, &n) : read_csv("fuzz", text, runs, &n);
	free(text);
	if ((rc == EXIT_BADINPUT) != (lines == 1) || (rc && rc != EXIT_BADINPUT))
		abort();
	for (size_t i = 0; i < n; i++)
		if (!(runs[i].seconds >= STEP_S_MIN && runs[i].seconds <= STEP_S_MAX))
			abort();
	for (size_t i = 0; i < n && i < RUNS_ESTIMATED && !rc; i++) {
		lines = 0;
		memset(&runs[i].o, 0, sizeof runs[i].o);
		rc = parse_run(&runs[i]);
		if (rc == EXIT_BADINPUT && lines != 1)
			abort();
	}
	for (size_t i = 0; i < n; i++)
		free(runs[i].flags);
	return 0;
}
