/* The verbs' help texts, embedded from docs/usage/ (usage.h). */
#include <string.h>

#include "cli.h"

void cli_usage(FILE *f, const char *verb)
{
	for (size_t i = 0; i < cli_usage_ntexts; i++)
		if (strcmp(cli_usage_texts[i].verb, verb) == 0) {
			fputs(cli_usage_texts[i].text, f);
			return;
		}
	/* A build without docs/usage/VERB.txt: the CLI goldens of --help fail. */
	cli_message("no help text for '%s' (docs/usage/%s.txt was not embedded)", verb, verb);
}
