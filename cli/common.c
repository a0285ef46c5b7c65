/*
 * What the verbs share: the one-line reporter, the mapping of library errors
 * to exit codes, and the output sink.  No main() here, so a fuzz target can
 * link the option parsers without the command.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "util/util.h"
#include "paraplan/report.h"

const char *cli_progname = "paraplan";
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

int cli_fail(pp_status st, const pp_error *err)
{
	char buf[1024];
	/* An allocation that failed on the way (ppi_alloc_failed moved) is the
	 * cause, whatever error it surfaced as ("bandwidth: out of memory", a
	 * parse that stopped short). */
	if (st == PP_ENOMEM || ppi_alloc_failed() > 0) {
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	cli_message("%s", pp_error_format(err, buf, sizeof buf));
	return st == PP_EINPUT ? EXIT_BADINPUT : EXIT_INTERNAL;
}

/*
 * The file an output path names: the path itself, or the end of its chain of
 * symbolic links (which need not exist yet).  0 or an errno value.
 */
static int out_target(const char *path, char *out, size_t n)
{
	if (strlen(path) >= n)
		return ENAMETOOLONG;
	snprintf(out, n, "%s", path);
	for (int depth = 0; depth < 40; depth++) {
		struct stat st;
		if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode))
			return 0;
		char link[PATH_MAX];
		ssize_t len = readlink(out, link, sizeof link - 1);
		if (len < 0)
			return errno;
		link[len] = '\0';
		char *slash = strrchr(out, '/');
		size_t dir = link[0] != '/' && slash ? (size_t)(slash - out) + 1 : 0;
		if (dir + (size_t)len >= n)
			return ENAMETOOLONG;
		memcpy(out + dir, link, (size_t)len + 1);
	}
	return ELOOP;
}

/* The directory part of `path` ("." for a bare name). */
static void dir_of(const char *path, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(out, n, ".");
	else if (slash == path)
		snprintf(out, n, "/");
	else
		snprintf(out, n, "%.*s", (int)(slash - path), path);
}

/* Create a new temporary file next to `target` (its name in o->tmp), mode
 * 0666 less the umask.  A file descriptor, or -1 with errno set. */
static int out_temp(cli_out *o)
{
	static unsigned counter;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long r = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 16);
	for (int tries = 0; tries < 100; tries++) {
		r = r * 6364136223846793005UL + 1442695040888963407UL + counter++;
		char suffix[7];
		unsigned long x = r >> 16;
		for (int i = 0; i < 6; i++, x /= 36)
			suffix[i] = "0123456789abcdefghijklmnopqrstuvwxyz"[x % 36];
		suffix[6] = '\0';
		if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s.tmp%s", o->target, suffix) >=
		    sizeof o->tmp) {
			errno = ENAMETOOLONG;
			return -1;
		}
		int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/*
 * Resolve `path` into o->target and decide how it is written: in place (an
 * existing FIFO or character device such as /dev/null), or through a
 * temporary file in the target's directory.  0, or EXIT_BADINPUT after one
 * message.
 */
static int out_resolve(cli_out *o, const char *verb, const char *flag, const char *path)
{
	memset(o, 0, sizeof *o);
	o->path = path;
	if (!path || strcmp(path, "-") == 0) {
		o->path = NULL;
		return 0;
	}
	if (!path[0]) {
		if (verb)
			cli_message("%s: %s needs a file name", verb, flag);
		else
			cli_message("%s needs a file name", flag);
		return EXIT_BADINPUT;
	}
	/* A FIFO or a device, as the kernel resolves the path (/dev/stdout leads
	 * through /proc to a pipe or a terminal): written in place. */
	struct stat st;
	if (stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
		snprintf(o->target, sizeof o->target, "%s", path);
		o->direct = true;
		return 0;
	}
	int e = out_target(path, o->target, sizeof o->target);
	if (e) {
		cli_message("%s: cannot write the output file: %s", path, strerror(e));
		return EXIT_BADINPUT;
	}
	if (stat(o->target, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			cli_message("%s: cannot write the output file: it is a directory", path);
			return EXIT_BADINPUT;
		}
		if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
			o->direct = true;
			return 0;
		}
		if (!S_ISREG(st.st_mode)) {
			cli_message("%s: cannot write the output file: it is not a regular file",
			            path);
			return EXIT_BADINPUT;
		}
		o->keep_mode = true;
		o->mode = st.st_mode & 07777;
	}
	char dir[sizeof o->target];
	dir_of(o->target, dir, sizeof dir);
	if (stat(dir, &st) != 0) {
		cli_message("%s: cannot create the output file: no directory %s", path, dir);
		return EXIT_BADINPUT;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_message("%s: cannot create the output file: %s is not a directory", path, dir);
		return EXIT_BADINPUT;
	}
	return 0;
}

/*
 * The files the command's outputs name, as checked (their directory's real
 * path and their name): two outputs of one command that name one file would
 * leave only the last one written, so the second is refused.
 */
#define CHECKED_MAX 64
static struct checked {
	char file[PATH_MAX + 256];
	const char *flag;
} checked[CHECKED_MAX];
static int nchecked;

/* The canonical name of `target` (an output's resolved file) into `out`;
 * false when its directory has no real path. */
static bool canonical_file(const char *target, char *out, size_t n)
{
	char dir[4096], real[PATH_MAX];
	dir_of(target, dir, sizeof dir);
	const char *slash = strrchr(target, '/');
	if (!realpath(dir, real))
		return false;
	return (size_t)snprintf(out, n, "%s/%s", real, slash ? slash + 1 : target) < n;
}

int cli_out_check(const char *verb, const char *flag, const char *path)
{
	cli_out o;
	int rc = out_resolve(&o, verb, flag, path);
	if (rc || !o.path || o.direct)
		return rc;
	/* The one sure test that the file can be made: make it, and remove it. */
	int fd = out_temp(&o);
	if (fd < 0) {
		cli_message("%s: cannot create the output file: %s", path, strerror(errno));
		return EXIT_BADINPUT;
	}
	close(fd);
	unlink(o.tmp);
	char file[sizeof checked[0].file];
	if (!canonical_file(o.target, file, sizeof file))
		return 0;
	for (int i = 0; i < nchecked; i++)
		if (strcmp(checked[i].file, file) == 0) {
			cli_message("%s: %s %s: %s writes that file too", verb, flag, path,
			            checked[i].flag);
			return EXIT_BADINPUT;
		}
	if (nchecked < CHECKED_MAX) {
		snprintf(checked[nchecked].file, sizeof checked[nchecked].file, "%s", file);
		checked[nchecked++].flag = flag;
	}
	return 0;
}

int cli_out_open(cli_out *o, const char *path)
{
	int rc = out_resolve(o, NULL, "--output", path);
	if (rc)
		return rc;
	if (!o->path) {
		o->f = stdout;
		return 0;
	}
	if (o->direct) {
		if (!(o->f = fopen(o->target, "w"))) {
			cli_message("%s: cannot open the output: %s", path, strerror(errno));
			return EXIT_BADINPUT;
		}
		return 0;
	}
	int fd = out_temp(o);
	if (fd >= 0 && o->keep_mode)
		(void)fchmod(fd, o->mode); /* a file rewritten keeps its mode */
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		cli_message("%s: cannot create the output file: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		return EXIT_BADINPUT;
	}
	return 0;
}

int cli_json_dump(json_t *root, long long mark, FILE *f)
{
	if (!root || ppi_alloc_failed() != mark) {
		json_decref(root);
		return PP_REPORT_ENOMEM;
	}
	int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (rc && ppi_alloc_failed() != mark)
		return PP_REPORT_ENOMEM;
	fputc('\n', f);
	return rc ? -1 : 0;
}

int cli_report_ok(int wr, FILE *f)
{
	return wr == PP_REPORT_ENOMEM ? CLI_OUT_ENOMEM : wr == 0 && !ferror(f);
}

/*
 * The outputs of the command, written and closed, waiting in their temporary
 * files: renamed into place together once the verb has answered
 * (cli_finish), removed if it fails, so a command that fails leaves every
 * old file as it was and no new one.
 */
#define PENDING_MAX 64
static struct pending {
	char tmp[sizeof((cli_out *)0)->tmp];
	char target[sizeof((cli_out *)0)->target];
	char path[4096]; /* as given, for messages */
} pending[PENDING_MAX];
static int npending;

/* Keep a closed temporary for cli_finish.  0, or -1 with errno set. */
static int pending_add(const cli_out *o)
{
	if (npending == PENDING_MAX) {
		errno = EMFILE;
		return -1;
	}
	struct pending *p = &pending[npending++];
	snprintf(p->tmp, sizeof p->tmp, "%s", o->tmp);
	snprintf(p->target, sizeof p->target, "%s", o->target);
	snprintf(p->path, sizeof p->path, "%s", o->path);
	return 0;
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
	for (int i = 0; i < npending; i++) {
		struct pending *p = &pending[i];
		if (rc == EXIT_ANSWERED && rename(p->tmp, p->target) != 0) {
			cli_message("%s: cannot write the output file: %s", p->path,
			            strerror(errno));
			rc = EXIT_INTERNAL;
		}
		if (rc != EXIT_ANSWERED)
			unlink(p->tmp);
	}
	npending = 0;
	return rc;
}

int cli_out_close(cli_out *o, int ok)
{
	if (ok == CLI_OUT_ENOMEM) {
		if (o->path) {
			fclose(o->f);
			if (!o->direct)
				unlink(o->tmp);
		}
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
	errno = 0;
	int bad = fclose(o->f) != 0;
	int e = errno;
	if (o->direct) {
		if (!bad && ok)
			return EXIT_ANSWERED;
	} else {
		if (!bad && ok && pending_add(o) == 0)
			return EXIT_ANSWERED;
		if (!bad && ok)
			e = errno;
		unlink(o->tmp);
	}
	if (e)
		cli_message("%s: cannot write the output file: %s", o->path, strerror(e));
	else
		cli_message("%s: cannot write the output file", o->path);
	return EXIT_INTERNAL;
}

/* ------------------------------------------------------------- progress */

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
