/*
 * The training stacks in time (issue 22 item 2, docs/kernel.md "Training
 * stacks"): the twelve eager H100 training steps of
 * ../shared/measurements/h100-sxm/train_steps_eager.jsonl under the eager
 * PyTorch stack (--framework torchtitan, alias pytorch, --compile off), timed
 * by the kernel model fitted to the same GPU's measured tables.  Prints every
 * step: measured, predicted, error.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

/* Each step within 10% of its measured time (the bar): the stack's
 * host queue (framework.host_queue: the host issues ahead, each kernel pays
 * its GPU-side gap in a busy stream) and attention's rate by head dimension
 * (Llama-3.2-1B's 64 against the tables' 128; pp_kernel_attn_head_factor). */
#define STEP_TOLERANCE 0.10

static const char *shared_dir(void)
{
	const char *shared = getenv("PARAPLAN_SHARED_DIR");
	return shared ? shared : "../shared";
}

static void fail_err(const pp_error *err)
{
	char buf[1024];
	fail_msg("%s", pp_error_format(err, buf, sizeof buf));
}

/* The shared steps and the same GPU's measured kernel tables (caller frees). */
static void load(pp_train_steps *st, pp_kernel_profile **prof)
{
	char path[512];
	pp_error err;
	pp_error_clear(&err);
	snprintf(path, sizeof path, "%s/measurements/h100-sxm/train_steps_eager.jsonl",
	         shared_dir());
	if (pp_train_steps_read(path, st, &err))
		fail_err(&err);
	snprintf(path, sizeof path, "%s/measurements/h100-sxm", shared_dir());
	if (pp_kernel_profile_read(path, prof, &err))
		fail_err(&err);
}

static void test_eager_steps(void **state)
{
	(void)state;
	pp_error err;
	pp_error_clear(&err);
	pp_train_steps st;
	pp_kernel_profile *prof = NULL;
	load(&st, &prof);
	assert_int_equal(st.n, 12);
	double sum = 0, worst = 0;
	int within = 0;
	printf("%-13s %5s %3s %-4s %10s %10s %7s\n", "model", "seq", "mbs", "rc", "measured",
	       "predicted", "error");
	for (size_t i = 0; i < st.n; i++) {
		pp_train_step *s = &st.step[i];
		assert_false(s->compiled);
		s->in.job.compile = false;
		if (pp_kernel_fit(prof, &s->in.system.gpu, &err))
			fail_err(&err);
		assert_string_equal(s->in.system.framework, "pytorch");
		pp_estimate e;
		if (pp_inputs_estimate(&s->in, &e, &err))
			fail_err(&err);
		double got = e.time.iteration_s, want = s->step_s;
		double rel = (got - want) / want;
		printf("%-13s %5d %3d %-4s %9.4fs %9.4fs %+6.1f%%\n", s->model, s->in.job.seq_len,
		       s->in.plan.mbs, pp_recompute_name(s->recompute), want, got, 100 * rel);
		sum += fabs(rel);
		worst = fmax(worst, fabs(rel));
		within += fabs(rel) <= STEP_TOLERANCE;
		assert_true(fabs(rel) <= STEP_TOLERANCE);
	}
	printf("MAPE %.1f%%, worst %.1f%%, %d of %zu within %.0f%%\n", 100 * sum / st.n,
	       100 * worst, within, st.n, 100 * STEP_TOLERANCE);
	assert_int_equal(within, (int)st.n);
	pp_kernel_profile_free(prof);
	pp_train_steps_free(&st);
}

/* The eager terms are what moves the steps: without them (a fused stack on
 * the same loop) every step comes out faster. */
static void test_eager_terms_slow_the_step(void **state)
{
	(void)state;
	pp_error err;
	pp_error_clear(&err);
	pp_train_steps st;
	pp_kernel_profile *prof = NULL;
	load(&st, &prof);
	pp_train_step *s = &st.step[6]; /* llama3-8b-l8, 4096 x 1 */
	if (pp_kernel_fit(prof, &s->in.system.gpu, &err))
		fail_err(&err);
	pp_estimate eager, compiled, fused;
	if (pp_inputs_estimate(&s->in, &eager, &err))
		fail_err(&err);
	s->in.job.compile = true;
	if (pp_inputs_estimate(&s->in, &compiled, &err))
		fail_err(&err);
	s->in.system.gpu.kern.autocast_weight_cast = 0;
	s->in.system.gpu.kern.grad_accum_kernel = 0;
	if (pp_inputs_estimate(&s->in, &fused, &err))
		fail_err(&err);
	assert_true(eager.time.iteration_s > compiled.time.iteration_s);
	assert_true(compiled.time.iteration_s > fused.time.iteration_s);
	pp_stack_terms t;
	if (pp_stage_stack_terms(&eager.model, &eager.system, &eager.job, &eager.plan, 0, &t, &err))
		fail_err(&err);
	assert_true(t.eager_s > 0 && t.autocast_s > 0 && t.grad_accum_s > 0 && t.launch_s > 0);
	pp_kernel_profile_free(prof);
	pp_train_steps_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_eager_steps),
	    cmocka_unit_test(test_eager_terms_slow_the_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
