/*
 * One iteration model (issue 22 item 3): on every published run of
 * shared/validation/public-runs.json, read as `validate` reads it
 * (pp_run_read, pp_inputs_estimate: the calls of pp_validate_record), the
 * closed form's iteration time (what validate, search and a plain estimate
 * report) is within 1% of the event simulator's (pp_estimate_simulate,
 * `estimate --sim on`).  Prints the largest gap of each schedule type and
 * of all, with the record and both times.
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

#include "paraplan/calib.h"
#include "paraplan/paraplan.h"

/* The largest |simulated / closed form - 1| allowed. */
#define MAX_GAP 0.01

typedef struct worst {
	double gap, closed_s, sim_s;
	char id[128];
	int records;
} worst;

static void note(worst *w, double gap, double closed_s, double sim_s, const char *id)
{
	w->records++;
	if (fabs(gap) >= fabs(w->gap)) {
		w->gap = gap;
		w->closed_s = closed_s;
		w->sim_s = sim_s;
		snprintf(w->id, sizeof w->id, "%s", id);
	}
}

static void test_public_records(void **state)
{
	(void)state;
	const char *dir = getenv("PARAPLAN_SHARED_DIR");
	if (!dir)
		fail_msg("PARAPLAN_SHARED_DIR is not set");
	char path[4096];
	snprintf(path, sizeof path, "%s/validation/public-runs.json", dir);
	pp_runs *runs = NULL;
	pp_error err;
	char buf[1024];
	if (pp_runs_load(path, &runs, &err))
		fail_msg("%s", pp_error_format(&err, buf, sizeof buf));
	pp_sim *sim = NULL;
	assert_int_equal(pp_sim_new(&sim, &err), PP_OK);
	worst all = {0}, by[PP_SCHED_MAX];
	memset(by, 0, sizeof by);
	int unread = 0, unsimulated = 0, over = 0;
	for (size_t i = 0; i < pp_runs_count(runs); i++) {
		pp_inputs in;
		pp_run_info info;
		pp_estimate e;
		pp_error_clear(&err);
		if (pp_run_read(runs, i, &in, &info, &err) || pp_inputs_estimate(&in, &e, &err)) {
			unread++; /* validate skips it too, with this reason */
			continue;
		}
		if (pp_estimate_simulate(&e, sim, &err)) {
			print_message("not simulated: %s: %s\n", pp_runs_id(runs, i), err.text);
			unsimulated++;
			continue;
		}
		double closed = e.time.iteration_s, simulated = e.sim.iteration_s;
		double gap = simulated / closed - 1;
		const char *id = pp_runs_id(runs, i);
		note(&all, gap, closed, simulated, id);
		note(&by[e.plan.schedule], gap, closed, simulated, id);
		if (fabs(gap) > MAX_GAP) {
			print_message("over 1%%: %s (%s, pp %d, vp %d, %lld micro-batches): closed "
			              "form %.4f s, simulated %.4f s (%+.2f%%)\n",
			              id, pp_schedule_name(e.plan.schedule), e.plan.pp, e.plan.vp,
			              e.plan.microbatches, closed, simulated, 100 * gap);
			over++;
		}
	}
	for (int s = 0; s < PP_SCHED_MAX; s++)
		if (by[s].records)
			print_message("%-12s %3d records, largest gap %+.3f%%: %s, closed form "
			              "%.4f s, simulated %.4f s\n",
			              pp_schedule_name((pp_schedule)s), by[s].records,
			              100 * by[s].gap, by[s].id, by[s].closed_s, by[s].sim_s);
	print_message("all          %3d records (%d not read, %d not simulated), largest gap "
	              "%+.3f%%: %s, closed form %.4f s, simulated %.4f s\n",
	              all.records, unread, unsimulated, 100 * all.gap, all.id, all.closed_s,
	              all.sim_s);
	pp_sim_free(sim);
	pp_runs_free(runs);
	/* validate evaluates >= 98% of the records; all of them are compared */
	assert_true(all.records >= 120);
	assert_int_equal(unsimulated, 0);
	assert_int_equal(over, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_public_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
