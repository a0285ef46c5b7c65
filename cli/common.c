/*
 * What the verbs share: the one-line reporter, the mapping of library errors
 * to exit codes, and the output sink.  No main() here, so a fuzz target can
 * link the option parsers without the command.
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
