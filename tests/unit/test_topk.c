/*
 * The search's top K in a bounded heap keeps exactly what the sorted array it
 * replaced kept (the K first of every result offered, by compare(), the
 * first offered first among equals), in the same order; and a whole search
 * keeps the same plans for K = 1, 10, 1000 as the first plans of K = 10000,
 * with any thread count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "search/topk.h"

/* The list the search kept before: a sorted array, insertion by shifting. */
typedef struct old_list {
	pp_estimate *v;
	size_t n, cap;
} old_list;

static void old_insert(old_list *t, const pp_estimate *e)
{
	if (t->cap == 0)
		return;
	if (t->n == t->cap && ppi_search_compare(e, &t->v[t->n - 1]) >= 0)
		return;
	size_t i = t->n < t->cap ? t->n : t->cap - 1;
	while (i > 0 && ppi_search_compare(e, &t->v[i - 1]) < 0) {
		t->v[i] = t->v[i - 1];
		i--;
	}
	t->v[i] = *e;
	if (t->n < t->cap)
		t->n++;
}

static unsigned long long rng = 88172645463325252ULL;
static unsigned next_rand(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* A result with few distinct values, so that ties on time, on memory and on
 * every compared field (exact duplicates) are common.  plan.dp, which
 * compare() does not look at, numbers it. */
static void random_result(pp_estimate *e, int id)
{
	memset(e, 0, sizeof *e);
	pp_plan_init(&e->plan);
	e->time.iteration_s = 1.0 + 0.25 * next_rand(40);
	e->memory.total_bytes = 1e9 * (1 + next_rand(4));
	e->plan.tp = 1 << next_rand(3);
	e->plan.pp = 1 + next_rand(2);
	e->plan.mbs = 1 + next_rand(2);
	e->plan.zero = (int)next_rand(2);
	e->plan.recompute = (pp_recompute)next_rand(3);
	strcpy(e->plan.order, next_rand(2) ? "tp-cp-ep-dp-pp" : "tp-pp-cp-ep-dp");
	e->plan.dp = id;
}

static void check_same(size_t k, size_t offers)
{
	old_list old = {calloc(k, sizeof(pp_estimate)), 0, k};
	ppi_topk heap;
	ppi_topk_init(&heap, k);
	assert_non_null(old.v);
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(e);
	for (size_t i = 0; i < offers; i++) {
		random_result(e, (int)i);
		old_insert(&old, e);
		ppi_topk_key key = {0, i};
		if (ppi_topk_wants(&heap, e, key)) {
			ppi_topk_entry x;
			ppi_topk_entry_set(&x, e, key, false);
			ppi_topk_insert(&heap, &x);
		}
	}
	ppi_topk_sort(&heap);
	assert_false(heap.oom);
	assert_int_equal(heap.n, old.n);
	for (size_t i = 0; i < old.n; i++)
		assert_int_equal(heap.v[i].ranked.dp, old.v[i].plan.dp);
	free(e);
	free(old.v);
	ppi_topk_free(&heap);
}

static void test_heap_keeps_what_the_array_kept(void **state)
{
	(void)state;
	const size_t ks[] = {1, 10, 1000};
	for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
		check_same(ks[i], 20000);
		check_same(ks[i], ks[i] / 2 + 1); /* never full */
	}
}

/* Offered in any order, merged from several lists: the same K. */
static void test_heap_merge_order(void **state)
{
	(void)state;
	enum { N = 5000, K = 100, PARTS = 7 };
	pp_estimate *all = calloc(N, sizeof *all);
	assert_non_null(all);
	for (int i = 0; i < N; i++)
		random_result(&all[i], i);
	ppi_topk direct, merged, part[PARTS];
	ppi_topk_init(&direct, K);
	ppi_topk_init(&merged, K);
	for (int p = 0; p < PARTS; p++)
		ppi_topk_init(&part[p], K);
	for (int i = 0; i < N; i++) {
		ppi_topk_entry x;
		ppi_topk_entry_set(&x, &all[i], (ppi_topk_key){0, (unsigned)i}, false);
		ppi_topk_insert(&direct, &x);
		ppi_topk_insert(&part[next_rand(PARTS)], &x);
	}
	for (int p = PARTS - 1; p >= 0; p--) /* backwards, to be sure */
		for (size_t k = 0; k < part[p].n; k++)
			ppi_topk_insert(&merged, &part[p].v[k]);
	ppi_topk_sort(&direct);
	ppi_topk_sort(&merged);
	assert_int_equal(direct.n, K);
	assert_int_equal(merged.n, K);
	for (size_t k = 0; k < K; k++)
		assert_int_equal(direct.v[k].ranked.dp, merged.v[k].ranked.dp);
	ppi_topk_free(&direct);
	ppi_topk_free(&merged);
	for (int p = 0; p < PARTS; p++)
		ppi_topk_free(&part[p]);
	free(all);
}

static pp_search *search(int top_k, int threads)
{
	pp_model m;
	pp_system s;
	pp_job job;
	pp_error err;
	assert_int_equal(pp_model_preset("llama3-8b", &m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
	pp_job_init(&job);
	job.global_batch = 128;
	job.seq_len = 8192;
	pp_search_space space;
	pp_search_space_init(&space);
	pp_search_options o;
	pp_search_options_init(&o);
	o.top_k = top_k;
	o.threads = threads;
	pp_search *srch;
	assert_int_equal(pp_search_new(&m, &s, &job, 64, &space, &o, &srch, &err), PP_OK);
	while (!pp_search_done(srch))
		assert_int_equal(pp_search_iterate(srch, &err), PP_OK);
	return srch;
}

static void assert_same_plan(const pp_estimate *a, const pp_estimate *b)
{
	assert_int_equal(ppi_search_compare(a, b), 0);
	assert_true(a->time.iteration_s == b->time.iteration_s);
	assert_true(a->plan.dp == b->plan.dp && a->plan.tp2 == b->plan.tp2);
}

/* A search's K = 1, 10, 1000 are the first plans of its K = 10000, sorted,
 * with 1 or 3 threads. */
static void test_search_top_k_prefixes(void **state)
{
	(void)state;
	pp_search *all = search(10000, 2);
	size_t n = pp_search_count(all);
	print_message("llama3-8b on 64 GPUs: %zu plans fit\n", n);
	assert_true(n > 1000);
	for (size_t i = 1; i < n; i++)
		assert_true(ppi_search_compare(pp_search_plan(all, i - 1), pp_search_plan(all, i)) <
		            0);
	const int ks[] = {1, 10, 1000};
	for (size_t c = 0; c < sizeof ks / sizeof *ks; c++)
		for (int threads = 1; threads <= 3; threads += 2) {
			pp_search *s = search(ks[c], threads);
			assert_int_equal(pp_search_count(s), (size_t)ks[c]);
			for (size_t i = 0; i < (size_t)ks[c]; i++)
				assert_same_plan(pp_search_plan(s, i), pp_search_plan(all, i));
			pp_search_free(s);
		}
	pp_search_free(all);
}

/* ppi_topk_group on a made list: equivalents (within 1e-9 relative of a
 * row's first, in time and in memory) join that row in rank order; a result
 * 2e-9 away starts its own; rows past rows_max are dropped. */
static void test_group_equivalents(void **state)
{
	(void)state;
	const double t[][2] = {{10, 5e9},
	                       {10, 5e9},
	                       {10 * (1 + 5e-10), 5e9},
	                       {10, 6e9},
	                       {10 * (1 + 2e-9), 5e9},
	                       {11, 5e9},
	                       {11, 5e9 * (1 + 4e-10)},
	                       {12, 1e9}};
	enum { N = sizeof t / sizeof t[0] };
	ppi_topk l;
	ppi_topk_init(&l, N);
	for (int i = 0; i < N; i++) {
		pp_estimate e;
		memset(&e, 0, sizeof e);
		e.time.iteration_s = t[i][0];
		e.memory.total_bytes = t[i][1];
		e.plan.dp = i; /* ranks equals by insertion */
		ppi_topk_entry x;
		ppi_topk_entry_set(&x, &e, (ppi_topk_key){0, (unsigned)i}, false);
		ppi_topk_insert(&l, &x);
	}
	ppi_topk_sort(&l);
	size_t row_of[N], row_at[N], eq_off[N + 1], eq_idx[N];
	size_t rows = ppi_topk_group(&l, 4, row_of, row_at, eq_off, eq_idx);
	assert_int_equal(rows, 4);
	/* Sorted by (time, memory, then the order offered): 0 1 3 2 4 5 6 7. */
	assert_int_equal(l.v[row_at[0]].ranked.dp, 0);
	assert_int_equal(eq_off[1] - eq_off[0], 2); /* 1 and 2 */
	assert_int_equal(l.v[eq_idx[eq_off[0]]].ranked.dp, 1);
	assert_int_equal(l.v[eq_idx[eq_off[0] + 1]].ranked.dp, 2);
	assert_int_equal(l.v[row_at[1]].ranked.dp, 3); /* 6e9: other memory */
	assert_int_equal(eq_off[2] - eq_off[1], 0);
	assert_int_equal(l.v[row_at[2]].ranked.dp, 4); /* 2e-9 away: not equivalent */
	assert_int_equal(l.v[row_at[3]].ranked.dp, 5);
	assert_int_equal(eq_off[4] - eq_off[3], 1); /* 6: memory 4e-10 away */
	/* 7 starts a fifth row: dropped. */
	ppi_topk_free(&l);
}

/* A whole search: no two rows of its top K are equivalent, and every plan a
 * row lists evaluates, on its own, to the row's time and memory (relative
 * 1e-9). */
static void test_search_rows_distinct(void **state)
{
	(void)state;
	pp_search *s = search(50, 2);
	size_t n = pp_search_count(s), listed = 0;
	assert_int_equal(n, 50);
	pp_model m;
	pp_system sys;
	pp_error err;
	assert_int_equal(pp_model_preset("llama3-8b", &m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &sys, &err), PP_OK);
	pp_work *ws = malloc(sizeof *ws);
	pp_estimate *e = malloc(sizeof *e);
	assert_non_null(ws);
	assert_non_null(e);
	pp_work_init(ws);
	for (size_t i = 0; i < n; i++) {
		const pp_estimate *a = pp_search_plan(s, i);
		assert_non_null(a);
		for (size_t j = 0; j < i; j++) {
			const pp_estimate *b = pp_search_plan(s, j);
			assert_false(
			    ppi_search_equivalent(a->time.iteration_s, a->memory.total_bytes,
			                          b->time.iteration_s, b->memory.total_bytes));
		}
		for (size_t k = 0; k < pp_search_equivalent_count(s, i); k++, listed++) {
			pp_plan p = *pp_search_equivalent(s, i, k);
			assert_int_equal(
			    pp_estimate_eval(&m, &sys, &a->job, &p, a->gpus, 0, ws, e, &err),
			    PP_OK);
			assert_true(
			    ppi_search_equivalent(a->time.iteration_s, a->memory.total_bytes,
			                          e->time.iteration_s, e->memory.total_bytes));
			assert_true(ppi_search_compare(a, e) < 0); /* the row's first ranks first */
		}
	}
	print_message("llama3-8b on 64 GPUs: 50 rows list %zu equivalent plans\n", listed);
	assert_true(listed > 0); /* the case has some (rank orders placed alike) */
	free(ws);
	free(e);
	pp_search_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_heap_keeps_what_the_array_kept),
	    cmocka_unit_test(test_heap_merge_order),
	    cmocka_unit_test(test_search_top_k_prefixes),
	    cmocka_unit_test(test_group_equivalents),
	    cmocka_unit_test(test_search_rows_distinct),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
