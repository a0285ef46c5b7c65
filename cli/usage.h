/*
 * The verbs' help texts: docs/usage/VERB.txt ("paraplan.txt" is the
 * command's own), embedded at build time by cmake/embed.cmake into the
 * paraplan_usage library (usage_data.c).  tools/usage_check.py checks each
 * text against the options its verb accepts.
 */
#ifndef PARAPLAN_CLI_USAGE_H
#define PARAPLAN_CLI_USAGE_H

#include <stddef.h>
#include <stdio.h>

typedef struct cli_usage_text {
	const char *verb; /* "estimate": the file's name without .txt */
	const char *text; /* the file's bytes, NUL-terminated; static */
} cli_usage_text;
extern const cli_usage_text cli_usage_texts[];
extern const size_t cli_usage_ntexts;

/* Write the help text of `verb` to `f`, byte for byte as its file holds it. */
void cli_usage(FILE *f, const char *verb);

#endif
