/*
 * Fault injection over the paraplan command line (built only for the tests,
 * with the CLI's main renamed paraplan_main).
 *
 *   paraplan_oom VERB ARGS...
 *
 * Runs the command once counting the library's allocations (ppi_alloc_inject,
 * jansson's included), then once per allocation with that one failed, each
 * in a forked child (fresh state; under the ASan build LeakSanitizer checks
 * the child at its exit).  Every run with a failed allocation must exit 1
 * (the documented exit code of "out of memory") having printed exactly one
 * line, "paraplan: out of memory"; a child that crashes, leaks (LSan exits
 * 23) or answers anything else fails the test.  Standard output goes to
 * /dev/null.  Prints "VERB: N allocation points, each failed once: ok".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "util/util.h"

#undef main
int paraplan_main(int argc, char **argv);

static int lines, oom_lines;
static char first[512];

static void on_message(const char *line)
{
	if (lines++ == 0)
		snprintf(first, sizeof first, "%s", line);
	oom_lines += strcmp(line, "paraplan: out of memory") == 0;
}

/* One run in a child; its exit status (or 128 + signal). `fail_at` 0 counts
 * and writes the count to `fd`. */
static int run(long long fail_at, int argc, char **argv, int fd)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(99);
		cli_message_hook = on_message;
		ppi_alloc_inject(fail_at, false);
		int rc = paraplan_main(argc, argv);
		long long failed = ppi_alloc_failed();
		long long both[2] = {ppi_alloc_count(), ppi_alloc_shielded()};
		if (fail_at == 0) {
			if (write(fd, both, sizeof both) != (ssize_t)sizeof both)
				_exit(98);
		} else if (failed == 1 && (rc != EXIT_INTERNAL || lines != 1 || oom_lines != 1)) {
			fprintf(stderr,
			        "allocation %lld failed: exit %d, %d line(s), first: '%s' "
			        "(want exit 1 and one line 'paraplan: out of memory')\n",
			        fail_at, rc, lines, first);
			exit(97);
		} else if (failed == 0 && rc != EXIT_ANSWERED) {
			fprintf(stderr, "allocation %lld was not reached, yet exit %d: '%s'\n",
			        fail_at, rc, first);
			exit(96);
		}
		exit(rc); /* exit(), not _exit(): LeakSanitizer runs at exit */
	}
	int status;
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		exit(1);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: paraplan_oom VERB ARGS...\n");
		return 2;
	}
	/* paraplan_main sees "paraplan VERB ARGS...". */
	argv[0] = "paraplan";
	if (getenv("OOM_ONLY")) { /* debugging: that one allocation failed, in-process */
		ppi_alloc_inject(atoll(getenv("OOM_ONLY")), false);
		int rc = paraplan_main(argc, argv);
		fprintf(stderr, "allocations %lld (%lld in the parser), failed %lld\n",
		        ppi_alloc_count(), ppi_alloc_shielded(), ppi_alloc_failed());
		return rc;
	}
	int fds[2];
	if (pipe(fds)) {
		perror("pipe");
		return 1;
	}
	int rc = run(0, argc, argv, fds[1]);
	long long both[2] = {0, 0}, n;
	if (rc != EXIT_ANSWERED || read(fds[0], both, sizeof both) != (ssize_t)sizeof both ||
	    (n = both[0]) <= 0) {
		fprintf(stderr, "%s: the run without a failure exited %d (%lld allocations)\n",
		        argv[1], rc, both[0]);
		return 1;
	}
	int bad = 0;
	for (long long k = 1; k <= n; k++) {
		rc = run(k, argc, argv, -1);
		if (rc != EXIT_INTERNAL && rc != EXIT_ANSWERED) {
			fprintf(stderr, "%s: allocation %lld of %lld: child exit %d\n", argv[1], k,
			        n, rc);
			if (++bad == (getenv("OOM_ALL") ? 1000000 : 10))
				break;
		}
	}
	printf("%s: %lld allocations, each failed once in turn (%lld inside jansson's parser "
	       "counted, not failed): %s\n",
	       argv[1], n, both[1], bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}
