/*
 * What the verbs share: the one-line reporter, the mapping of library errors
 * to exit codes, and the output sink.  No main() here, so a fuzz target can
 * link the option parsers without the command.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "util/util.h"
#include "paraplan/output.h"
#include "paraplan/report.h"

static const char *cli_progname = "paraplan";
void (*cli_message_hook)(const char *line);

bool cli_message_is_note;

/* Format, escape and emit one line (cli_message and cli_note). */
__attribute__((format(printf, 2, 0))) static void message_emit(bool note, const char *fmt,
                                                               va_list ap)
{
	/* Always exactly one line: control characters that came from the input
	 * (a newline inside a JSON key, a tab in an argument) are escaped. */
	char buf[2048], line[4 * sizeof buf + 64];
	vsnprintf(buf, sizeof buf, fmt, ap);
	size_t n =
	    (size_t)snprintf(line, sizeof line, "%s: %s", cli_progname, note ? "note: " : "");
	for (const unsigned char *p = (const unsigned char *)buf; *p && n + 5 < sizeof line; p++) {
		if (*p == '\n')
			n += (size_t)snprintf(line + n, sizeof line - n, "\\n");
		else if (*p < 0x20 || *p == 0x7f)
			n += (size_t)snprintf(line + n, sizeof line - n, "\\x%02x", *p);
		else
			line[n++] = (char)*p;
	}
	line[n] = '\0';
	if (cli_message_hook) {
		cli_message_is_note = note;
		cli_message_hook(line);
		cli_message_is_note = false;
		return;
	}
	fputs(line, stderr);
	fputc('\n', stderr);
}

void cli_message(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	message_emit(false, fmt, ap);
	va_end(ap);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	message_emit(true, fmt, ap);
	va_end(ap);
}

/* The outputs of the command (include/paraplan/output.h). */
static pp_output_set outputs;

/* A failure of the library (`st` not PP_OK): its one message, and the exit
 * code; 0 for PP_OK. */
static int out_fail(pp_status st, const pp_error *err)
{
	if (!st)
		return 0;
	char buf[1024];
	cli_message("%s", pp_error_format(err, buf, sizeof buf));
	return st == PP_EINPUT ? EXIT_BADINPUT : EXIT_INTERNAL;
}

int cli_fail(pp_status st, const pp_error *err)
{
	/* An allocation that failed on the way (ppi_alloc_failed moved) is the
	 * cause, whatever error it surfaced as ("bandwidth: out of memory", a
	 * parse that stopped short). */
	if (st == PP_ENOMEM || ppi_alloc_failed() > 0) {
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	return out_fail(st, err);
}

int cli_out_check(const char *verb, const char *flag, const char *path)
{
	pp_error err;
	return out_fail(pp_output_check(&outputs, verb, flag, path, &err), &err);
}

int cli_out_open(cli_out *o, const char *path)
{
	pp_error err;
	return out_fail(pp_output_open(o, "--output", path, &err), &err);
}

int cli_charts_check(const char *verb, const cli_charts *c)
{
	pp_error err;
	int rc = c->html ? cli_out_check(verb, "--html", c->html) : 0;
	if (!rc && c->svg_dir) /* the directory, and each file it may receive */
		rc = out_fail(pp_report_svg_dir_check(&outputs, verb, "--svg", c->svg_dir, &err),
		              &err);
	return rc;
}

/* cli_out_close's `ok` for an output that could not be built (a report out of
 * memory): the temporary is removed and "out of memory" is the one message. */
#define CLI_OUT_ENOMEM (-2)

int cli_report_ok(int wr, FILE *f)
{
	return wr == PP_REPORT_ENOMEM ? CLI_OUT_ENOMEM : wr == 0 && !ferror(f);
}

int cli_finish(int rc)
{
	/* Standard output that could not be written (a full disk, /dev/full):
	 * the answer did not arrive, whatever the verb wrote there. */
	if ((fflush(stdout) != 0 || ferror(stdout)) && rc == EXIT_ANSWERED) {
		cli_message("cannot write the output");
		rc = EXIT_INTERNAL;
	}
	/* An answer built while an allocation failed (a step skipped, a
	 * fallback taken) is no answer: out of memory, and no file written. */
	if (rc == EXIT_ANSWERED && ppi_alloc_failed() > 0) {
		cli_message("out of memory");
		rc = EXIT_INTERNAL;
	}
	pp_error err;
	pp_status st = pp_output_commit(&outputs, rc == EXIT_ANSWERED, &err);
	return st ? out_fail(st, &err) : rc;
}

int cli_out_close(cli_out *o, int ok)
{
	if (ok == CLI_OUT_ENOMEM) {
		pp_output_abandon(o);
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	if (!o->path) {
		if (fflush(stdout) != 0) {
			cli_message("cannot write the output");
			return EXIT_INTERNAL;
		}
		return ok ? EXIT_ANSWERED : EXIT_INTERNAL;
	}
	pp_error err;
	return out_fail(pp_output_close(&outputs, o, ok != 0, &err), &err);
}

/* ------------------------------------------------------------- progress */

/* The work has run this long before the progress line is first drawn. */
#define CLI_PROGRESS_DELAY_S 0.5

static double progress_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p, const char *verb, bool quiet, const char *fmt, ...)
{
	memset(p, 0, sizeof *p);
	p->on = !quiet && isatty(STDERR_FILENO);
	p->start = p->last = progress_now();
	snprintf(p->verb, sizeof p->verb, "%s", verb);
	if (!p->on || !fmt)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s: %s\n", cli_progname, p->verb, buf);
	fflush(stderr);
}

double cli_progress_elapsed(const cli_progress *p)
{
	return progress_now() - p->start;
}

void cli_progress_show(cli_progress *p, double fraction, bool force, const char *fmt, ...)
{
	if (!p->on)
		return;
	double now = progress_now(), t = now - p->start;
	if (!force && (t < CLI_PROGRESS_DELAY_S || now - p->last < 0.25))
		return;
	p->last = now;
	char buf[512], eta[48] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (fraction > 0 && fraction < 1)
		snprintf(eta, sizeof eta, ", ETA %.0f s", t * (1 - fraction) / fraction);
	fprintf(stderr, "\r%s: %s: %s, %.1f s%s \033[K", cli_progname, p->verb, buf, t, eta);
	fflush(stderr);
	p->shown = true;
}

void cli_progress_end(cli_progress *p)
{
	if (p->on && p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	p->shown = false;
}
