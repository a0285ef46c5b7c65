/*
 * pp_search_answer_run (include/paraplan/inverse.h): one search run to its
 * end is the search a caller would run by hand; a deadline over GPU counts
 * stops at the fewest that meet it, whose search is the answer's; several
 * counts without a question are refused; the hooks see every step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"

typedef struct inputs {
	pp_model m;
	pp_system s;
	pp_job job;
	pp_search_space space;
	pp_search_options opts;
} inputs;

/* llama3-8b on dgx-h100, 1T tokens, a space cut to tp 2, pp 1, cp 1 so each
 * search is quick. */
static void setup_inputs(inputs *in)
{
	pp_error err;
	assert_int_equal(pp_model_preset("llama3-8b", &in->m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &in->s, &err), PP_OK);
	pp_job_init(&in->job);
	in->job.global_batch = 64;
	in->job.seq_len = 4096;
	in->job.train_tokens = 1e12;
	pp_search_space_init(&in->space);
	in->space.tp = (pp_search_dim){1, {2}};
	in->space.pp = (pp_search_dim){1, {1}};
	in->space.cp = (pp_search_dim){1, {1}};
	pp_search_options_init(&in->opts);
	in->opts.threads = 1;
}

typedef struct counts {
	int starts, steps, lasts, skips;
} counts;

static void on_start(void *ctx, long long gpus, const pp_search *s)
{
	(void)gpus;
	(void)s;
	((counts *)ctx)->starts++;
}

static void on_step(void *ctx, const pp_search *s, bool last)
{
	(void)s;
	((counts *)ctx)->steps++;
	((counts *)ctx)->lasts += last;
}

static void on_skip(void *ctx, long long gpus, const pp_error *why)
{
	(void)gpus;
	(void)why;
	((counts *)ctx)->skips++;
}

static pp_search_request request(const inputs *in, counts *c)
{
	return (pp_search_request){.model = &in->m,
	                           .system = &in->s,
	                           .job = &in->job,
	                           .space = &in->space,
	                           .opts = &in->opts,
	                           .hooks = {c, on_start, on_step, on_skip}};
}

/* No question: the one search, its winner the one pp_search_iterate finds. */
static void one_search(void **state)
{
	(void)state;
	inputs in;
	setup_inputs(&in);
	counts c = {0};
	pp_search_request rq = request(&in, &c);
	rq.gpus = 16;
	pp_search_answer a;
	pp_error err;
	assert_int_equal(pp_search_answer_run(&rq, &a, &err), PP_OK);
	assert_false(a.asked);
	assert_null(a.cands);
	assert_null(a.winner_goodput);
	assert_non_null(a.search);
	assert_true(pp_search_count(a.search) > 0);
	assert_int_equal(c.starts, 1);
	assert_int_equal(c.lasts, 1);
	assert_true(c.steps >= 2);
	pp_search *s;
	assert_int_equal(pp_search_new(&in.m, &in.s, &in.job, 16, &in.space, &in.opts, &s, &err),
	                 PP_OK);
	while (!pp_search_done(s))
		assert_int_equal(pp_search_iterate(s, &err), PP_OK);
	assert_true(pp_search_plan(s, 0)->time.iteration_s ==
	            pp_search_plan(a.search, 0)->time.iteration_s);
	pp_search_free(s);
	pp_search_answer_free(&a);
}

/* A deadline over 64, 8, 16 and 32 GPUs (taken ascending): the series stops
 * at the first count that meets it, the answer; the counts before miss it. */
static void deadline_fewest(void **state)
{
	(void)state;
	inputs in;
	setup_inputs(&in);
	counts c = {0};
	pp_search_request rq = request(&in, &c);
	rq.counts = (pp_search_dim){4, {64, 8, 16, 32}};
	pp_goodput_params gp;
	pp_goodput_params_init(&gp);
	rq.gp = &gp;
	/* The days at 32 GPUs, with a margin, as the deadline. */
	pp_search *s;
	pp_error err;
	assert_int_equal(pp_search_new(&in.m, &in.s, &in.job, 32, &in.space, &in.opts, &s, &err),
	                 PP_OK);
	while (!pp_search_done(s))
		assert_int_equal(pp_search_iterate(s, &err), PP_OK);
	pp_estimate *w;
	assert_int_equal(pp_search_winner_goodput(s, &gp, &w, &err), PP_OK);
	rq.q.deadline_days = w->goodput.effective_days * 1.01;
	free(w);
	pp_search_free(s);

	pp_search_answer a;
	assert_int_equal(pp_search_answer_run(&rq, &a, &err), PP_OK);
	assert_true(a.asked);
	assert_true(a.q.goodput);
	assert_true(a.q.train_tokens == 1e12);
	assert_true(a.res.pick >= 0);
	assert_int_equal((int)a.n, (int)a.res.pick + 1); /* stopped at the answer */
	assert_true(a.cands[a.res.pick].gpus <= 32);
	for (size_t i = 0; i < a.n; i++)
		assert_int_equal(pp_inverse_meets(&a.q, &a.cands[i]), (ptrdiff_t)i == a.res.pick);
	assert_non_null(a.search);
	assert_non_null(a.winner_goodput);
	assert_true(a.winner_goodput->goodput.effective_days == a.cands[a.res.pick].days);
	assert_int_equal(c.starts, (int)a.n);
	assert_int_equal(c.lasts, (int)a.n);
	assert_int_equal(c.skips, 0);
	pp_search_answer_free(&a);
}

/* Several GPU counts need a question; nothing is left to free. */
static void several_need_question(void **state)
{
	(void)state;
	inputs in;
	setup_inputs(&in);
	counts c = {0};
	pp_search_request rq = request(&in, &c);
	rq.counts = (pp_search_dim){2, {8, 16}};
	pp_search_answer a;
	pp_error err;
	pp_error_clear(&err);
	assert_int_equal(pp_search_answer_run(&rq, &a, &err), PP_EINPUT);
	assert_string_equal(err.field, "gpus");
	assert_null(a.search);
	assert_null(a.cands);
	assert_int_equal(c.starts, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(one_search),
	    cmocka_unit_test(deadline_fewest),
	    cmocka_unit_test(several_need_question),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
