/*
 * Output files written whole or not at all (include/paraplan/output.h): a
 * temporary next to the target, renamed over it when the command is done.
 */
#include "paraplan/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

/* An I/O failure: the reason in `err`, PP_EINTERNAL. */
static pp_status io_fail(pp_error *err, const char *source, const char *text, int e)
{
	if (e)
		ppi_fail(err, source, NULL, "%s: %s", text, strerror(e));
	else
		ppi_fail(err, source, NULL, "%s", text);
	return PP_EINTERNAL;
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
static int out_temp(pp_output *o)
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

/* An existing target: written in place (a FIFO or a device), or replaced
 * keeping its mode (a regular file); anything else is refused. */
static pp_status out_existing(pp_output *o, const struct stat *st, const char *path, pp_error *err)
{
	if (S_ISDIR(st->st_mode))
		return ppi_fail(err, path, NULL, "cannot write the output file: it is a directory");
	if (S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode)) {
		o->direct = true;
		return PP_OK;
	}
	if (!S_ISREG(st->st_mode))
		return ppi_fail(err, path, NULL,
		                "cannot write the output file: it is not a regular file");
	o->keep_mode = true;
	o->mode = st->st_mode & 07777;
	return PP_OK;
}

/*
 * Resolve `path` into o->target and decide how it is written: in place (an
 * existing FIFO or character device such as /dev/null), or through a
 * temporary file in the target's directory.
 */
static pp_status out_resolve(pp_output *o, const char *verb, const char *flag, const char *path,
                             pp_error *err)
{
	memset(o, 0, sizeof *o);
	o->path = path;
	if (!path || strcmp(path, "-") == 0) {
		o->path = NULL;
		return PP_OK;
	}
	if (!path[0])
		return ppi_fail(err, verb, NULL, "%s needs a file name", flag);
	/* A FIFO or a device, as the kernel resolves the path (/dev/stdout leads
	 * through /proc to a pipe or a terminal): written in place. */
	struct stat st;
	if (stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
		snprintf(o->target, sizeof o->target, "%s", path);
		o->direct = true;
		return PP_OK;
	}
	int e = out_target(path, o->target, sizeof o->target);
	if (e)
		return ppi_fail(err, path, NULL, "cannot write the output file: %s", strerror(e));
	pp_status s = PP_OK;
	if (stat(o->target, &st) == 0 && ((s = out_existing(o, &st, path, err)) || o->direct))
		return s;
	char dir[sizeof o->target];
	dir_of(o->target, dir, sizeof dir);
	if (stat(dir, &st) != 0)
		return ppi_fail(err, path, NULL, "cannot create the output file: no directory %s",
		                dir);
	if (!S_ISDIR(st.st_mode))
		return ppi_fail(err, path, NULL,
		                "cannot create the output file: %s is not a directory", dir);
	return PP_OK;
}

/* The canonical name of `target` (an output's resolved file) into `out`;
 * false when its directory has no real path. */
static bool canonical_file(const char *target, char *out, size_t n)
{
	char dir[PP_OUTPUT_PATH_MAX], real[PATH_MAX];
	dir_of(target, dir, sizeof dir);
	const char *slash = strrchr(target, '/');
	if (!realpath(dir, real))
		return false;
	return (size_t)snprintf(out, n, "%s/%s", real, slash ? slash + 1 : target) < n;
}

pp_status pp_output_check(pp_output_set *set, const char *verb, const char *flag, const char *path,
                          pp_error *err)
{
	pp_output o;
	pp_status st = out_resolve(&o, verb, flag, path, err);
	if (st || !o.path || o.direct)
		return st;
	/* The one sure test that the file can be made: make it, and remove it. */
	int fd = out_temp(&o);
	if (fd < 0)
		return ppi_fail(err, path, NULL, "cannot create the output file: %s",
		                strerror(errno));
	close(fd);
	unlink(o.tmp);
	char file[sizeof set->checked[0].file];
	if (!canonical_file(o.target, file, sizeof file))
		return PP_OK;
	for (int i = 0; i < set->nchecked; i++)
		if (strcmp(set->checked[i].file, file) == 0)
			return ppi_fail(err, verb, NULL, "%s %s: %s writes that file too", flag,
			                path, set->checked[i].flag);
	if (set->nchecked < PP_OUTPUT_MAX) {
		snprintf(set->checked[set->nchecked].file, sizeof set->checked[0].file, "%s", file);
		set->checked[set->nchecked++].flag = flag;
	}
	return PP_OK;
}

pp_status pp_output_open(pp_output *o, const char *flag, const char *path, pp_error *err)
{
	pp_status st = out_resolve(o, NULL, flag, path, err);
	if (st)
		return st;
	if (!o->path) {
		o->f = stdout;
		return PP_OK;
	}
	if (o->direct) {
		if (!(o->f = fopen(o->target, "w")))
			return ppi_fail(err, path, NULL, "cannot open the output: %s",
			                strerror(errno));
		return PP_OK;
	}
	int fd = out_temp(o);
	if (fd >= 0 && o->keep_mode)
		(void)fchmod(fd, o->mode); /* a file rewritten keeps its mode */
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		return ppi_fail(err, path, NULL, "cannot create the output file: %s", strerror(e));
	}
	return PP_OK;
}

/* Keep a closed temporary for pp_output_commit.  0, or -1 with errno set. */
static int pending_add(pp_output_set *set, const pp_output *o)
{
	if (set->npending == PP_OUTPUT_MAX) {
		errno = EMFILE;
		return -1;
	}
	int k = set->npending++;
	snprintf(set->pending[k].tmp, sizeof set->pending[k].tmp, "%s", o->tmp);
	snprintf(set->pending[k].target, sizeof set->pending[k].target, "%s", o->target);
	snprintf(set->pending[k].path, sizeof set->pending[k].path, "%s", o->path);
	return 0;
}

pp_status pp_output_close(pp_output_set *set, pp_output *o, bool ok, pp_error *err)
{
	errno = 0;
	int bad = fclose(o->f) != 0;
	int e = errno;
	if (o->direct) {
		if (!bad && ok)
			return PP_OK;
	} else {
		if (!bad && ok && pending_add(set, o) == 0)
			return PP_OK;
		if (!bad && ok)
			e = errno;
		unlink(o->tmp);
	}
	return io_fail(err, o->path, "cannot write the output file", e);
}

void pp_output_abandon(pp_output *o)
{
	if (!o->path)
		return;
	fclose(o->f);
	if (!o->direct)
		unlink(o->tmp);
}

pp_status pp_output_commit(pp_output_set *set, bool keep, pp_error *err)
{
	pp_status st = PP_OK;
	for (int i = 0; i < set->npending; i++) {
		if (keep && !st && rename(set->pending[i].tmp, set->pending[i].target) != 0)
			st = io_fail(err, set->pending[i].path, "cannot write the output file",
			             errno);
		if (!keep || st)
			unlink(set->pending[i].tmp);
	}
	set->npending = 0;
	return st;
}
