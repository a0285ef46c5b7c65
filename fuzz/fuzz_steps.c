/*
 * libFuzzer target: step-time files (`calibrate --step-times FILE`: CSV
 * "seconds,estimate flags" lines or JSON {"runs": [...]}), read by the
 * library's reader (pp_steps_parse) and the first runs' flags parsed and
 * estimated as the verb does (cli_step_inputs).  A refusal says exactly one line; an accepted run has a finite
 * positive time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "paraplan/calib.h"

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
	static pp_steps steps;
	static cli_opts opts;
	static pp_inputs in;
	lines = 0;
	pp_error err;
	pp_status st = pp_steps_parse(text, "fuzz", &steps, &err);
	int rc = st ? cli_fail(st, &err) : 0;
	free(text);
	if ((rc == EXIT_BADINPUT) != (lines == 1) || (rc && rc != EXIT_BADINPUT))
		abort();
	for (size_t i = 0; i < steps.n; i++)
		if (!(steps.run[i].iteration_s >= PP_STEP_S_MIN &&
		      steps.run[i].iteration_s <= PP_STEP_S_MAX))
			abort();
	for (size_t i = 0; i < steps.n && i < RUNS_ESTIMATED && !rc; i++) {
		lines = 0;
		rc = cli_step_inputs("calibrate", steps.run[i].id, steps.run[i].flags, &opts, &in,
		                     NULL);
		if (rc == EXIT_BADINPUT && lines != 1)
			abort();
	}
	pp_steps_clear(&steps);
	return 0;
}
