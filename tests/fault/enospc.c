/*
 * LD_PRELOAD shim for the tests (tests/fault/write_fail.sh): the disk is full.
 * Writes to files other than standard output and error fail with ENOSPC:
 * write(2) returns -1, and fflush/fclose of such a stream (where stdio writes
 * what it buffered, through glibc's internal write that a shim cannot catch)
 * return EOF — fclose still closes the stream.  Built only with the tests.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t n);
int fflush(FILE *f);
int fclose(FILE *f);

ssize_t write(int fd, const void *buf, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	if (fd > 2) {
		errno = ENOSPC;
		return -1;
	}
	if (!real)
		real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	return real(fd, buf, n);
}

int fflush(FILE *f)
{
	static int (*real)(FILE *);
	if (!real)
		real = (int (*)(FILE *))dlsym(RTLD_NEXT, "fflush");
	if (f && fileno(f) > 2) {
		real(f);
		errno = ENOSPC;
		return EOF;
	}
	return real(f);
}

int fclose(FILE *f)
{
	static int (*real)(FILE *);
	if (!real)
		real = (int (*)(FILE *))dlsym(RTLD_NEXT, "fclose");
	int fd = f ? fileno(f) : -1;
	int rc = real(f);
	if (fd > 2) {
		errno = ENOSPC;
		return EOF;
	}
	return rc;
}
