/*
 * The shard layer under every sweep (include/paraplan/shard.h), in one
 * process (the ranks are tests/mpi_sweep.sh's):
 *  - every point evaluated once, its row in place, progress counted;
 *  - a checkpoint of a run stopped after K points: the rerun evaluates
 *    exactly the N-K others (counted by the evaluator) and leaves the same
 *    rows as one uninterrupted run; a torn last record is dropped;
 *  - a checkpoint of other arguments, a malformed record: PP_EINPUT naming
 *    the file and line;
 *  - the arguments hash leaves out --checkpoint FILE and --quiet only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

#define N 50

typedef struct row {
	long long index;
	double square; /* an exact double: what the checkpoint must carry back */
	char label[24];
} row;

typedef struct evaluator {
	int calls[N];      /* evaluations per point */
	long long fail_at; /* point whose evaluation fails (PP_EINTERNAL), -1 = none */
} evaluator;

static pp_status eval(void *ctx, size_t i, void *rowp, pp_error *err)
{
	evaluator *ev = ctx;
	row *r = rowp;
	ev->calls[i]++;
	if ((long long)i == ev->fail_at) {
		snprintf(err->text, sizeof err->text, "point %zu failed", i);
		return PP_EINTERNAL;
	}
	r->index = (long long)i;
	r->square = (double)i * (double)i / 3.0;
	snprintf(r->label, sizeof r->label, "p%zu", i);
	return PP_OK;
}

static size_t progress_last;
static void progress(void *ctx, size_t done, size_t total)
{
	(void)ctx;
	assert_true(done <= total);
	progress_last = done;
}

static pp_shard shard(row *rows, evaluator *ev, const char *ckpt, uint64_t hash)
{
	memset(rows, 0, sizeof(row) * N);
	memset(ev, 0, sizeof *ev);
	ev->fail_at = -1;
	return (pp_shard){.npoints = N,
	                  .row_bytes = sizeof(row),
	                  .rows = rows,
	                  .eval = eval,
	                  .ctx = ev,
	                  .checkpoint = ckpt,
	                  .args_hash = hash,
	                  .progress = progress};
}

static char path[64];

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof path, "/tmp/pp_test_shard_%d.ckpt", (int)getpid());
	unlink(path);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static long file_lines(void)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	long n = 0;
	int c;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void test_plain_run(void **state)
{
	(void)state;
	row rows[N];
	evaluator ev;
	pp_error err;
	pp_error_clear(&err);
	pp_shard st = shard(rows, &ev, NULL, 0);
	assert_int_equal(pp_shard_run(&st, &err), PP_OK);
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(ev.calls[i], 1);
		assert_int_equal(rows[i].index, (long long)i);
	}
	assert_int_equal(st.evaluated, N);
	assert_int_equal(st.resumed, 0);
	assert_int_equal(progress_last, N);
	assert_true(pp_shard_comm_root(NULL));
	assert_int_equal(pp_shard_comm_size(NULL), 1);
}

/* A run that stops at point K (its evaluation fails, as a kill would leave
 * the file: K records), then a rerun with the same hash. */
static void test_resume_counts(void **state)
{
	(void)state;
	enum { K = 17 };
	row ref[N], rows[N];
	evaluator ev;
	pp_error err;
	pp_error_clear(&err);
	pp_shard st = shard(ref, &ev, NULL, 0);
	assert_int_equal(pp_shard_run(&st, &err), PP_OK);

	st = shard(rows, &ev, path, 0x1234);
	ev.fail_at = K;
	assert_int_equal(pp_shard_run(&st, &err), PP_EINTERNAL);
	assert_int_equal(file_lines(), 1 + K); /* the header and K records */

	st = shard(rows, &ev, path, 0x1234);
	assert_int_equal(pp_shard_run(&st, &err), PP_OK);
	assert_int_equal(st.resumed, K);
	assert_int_equal(st.evaluated, N - K);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(ev.calls[i], i < K ? 0 : 1); /* only the unfinished */
	assert_memory_equal(rows, ref, sizeof rows);
	assert_int_equal(file_lines(), 1 + N);

	/* A third run evaluates nothing. */
	st = shard(rows, &ev, path, 0x1234);
	assert_int_equal(pp_shard_run(&st, &err), PP_OK);
	assert_int_equal(st.evaluated, 0);
	assert_int_equal(st.resumed, N);
	assert_memory_equal(rows, ref, sizeof rows);
}

/* A record cut short by a kill is dropped, the file cut back, the point
 * evaluated again. */
static void test_torn_record(void **state)
{
	(void)state;
	row ref[N], rows[N];
	evaluator ev;
	pp_error err;
	pp_error_clear(&err);
	pp_shard st = shard(ref, &ev, path, 7);
	assert_int_equal(pp_shard_run(&st, &err), PP_OK);
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(path, size - 10), 0); /* the last record, torn */

	st = shard(rows, &ev, path, 7);
	assert_int_equal(pp_shard_run(&st, &err), PP_OK);
	assert_int_equal(st.resumed, N - 1);
	assert_int_equal(st.evaluated, 1);
	assert_int_equal(ev.calls[N - 1], 1);
	assert_memory_equal(rows, ref, sizeof rows);
	assert_int_equal(file_lines(), 1 + N);
}

static void test_refused(void **state)
{
	(void)state;
	row rows[N];
	evaluator ev;
	pp_error err;
	pp_error_clear(&err);
	pp_shard st = shard(rows, &ev, path, 1);
	assert_int_equal(pp_shard_run(&st, &err), PP_OK);

	st = shard(rows, &ev, path, 2); /* other arguments */
	assert_int_equal(pp_shard_run(&st, &err), PP_EINPUT);
	assert_string_equal(err.source, path);
	assert_int_equal(err.line, 1);
	assert_non_null(strstr(err.text, "checkpoint of other arguments"));
	assert_int_equal(ev.calls[0], 0);
	assert_int_equal(file_lines(), 1 + N); /* left as it was */

	FILE *f = fopen(path, "a");
	assert_non_null(f);
	fputs("3 zz\n", f);
	fclose(f);
	pp_error_clear(&err);
	st = shard(rows, &ev, path, 1);
	assert_int_equal(pp_shard_run(&st, &err), PP_EINPUT);
	assert_int_equal(err.line, 2 + N);
	assert_non_null(strstr(err.text, "malformed checkpoint record"));
}

static void test_args_hash(void **state)
{
	(void)state;
	char *a[] = {"sweep", "--over", "dp", "--checkpoint", "x.ckpt", "--quiet"};
	char *b[] = {"sweep", "--over", "dp", "--checkpoint=y.ckpt"};
	char *c[] = {"sweep", "--over", "dp"};
	char *d[] = {"sweep", "--over", "mbs"};
	char *e[] = {"sweep", "--overdp"};
	uint64_t hc = pp_shard_args_hash(3, c, "--checkpoint", "--quiet");
	assert_true(pp_shard_args_hash(6, a, "--checkpoint", "--quiet") == hc);
	assert_true(pp_shard_args_hash(4, b, "--checkpoint", "--quiet") == hc);
	assert_true(pp_shard_args_hash(3, d, "--checkpoint", "--quiet") != hc);
	assert_true(pp_shard_args_hash(2, e, "--checkpoint", "--quiet") != hc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_plain_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resume_counts, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_torn_record, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_args_hash, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
