/*
 * libFuzzer target: the run-records reader (shared/validation/public-runs.json
 * format), pp_runs_from_json, and what validate does with each record:
 * pp_run_inputs, pp_estimate_run, pp_run_compare.
 *
 * Beyond "does not crash": a refusal is PP_EINPUT (or PP_ENOMEM) with a
 * message; a record turned into inputs gives a model, system and plan that
 * estimate, and a comparison with a measured value is a finite number.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/calib.h"
#include "paraplan/paraplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(pp_status st, const pp_error *err)
{
	if (st != PP_EINPUT && st != PP_ENOMEM)
		abort(); /* bad input must never look like an internal failure */
	if (st == PP_EINPUT && !err->text[0])
		abort(); /* every rejection says why */
}

/* Keep the work per input small: huge shapes and clusters are legal but slow. */
static bool small(const pp_model *m, long long gpus)
{
	return m->num_layers <= 512 && gpus <= 65536;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pp_runs *runs = NULL;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_runs_from_json((const char *)data, size, "fuzz.json", &runs, &err);
	if (st) {
		check_error(st, &err);
		if (runs)
			abort();
		return 0;
	}
	size_t n = pp_runs_count(runs);
	pp_estimate *e = malloc(sizeof *e);
	pp_model *m = malloc(sizeof *m);
	pp_system *s = malloc(sizeof *s);
	if (!e || !m || !s)
		goto out;
	/* The same text again, to look at a record before it is read. */
	json_t *root = json_loadb((const char *)data, size, 0, NULL);
	json_t *records = json_object_get(root, "records");
	for (size_t i = 0; i < n && i < 8; i++) {
		/* Shapes too big to estimate quickly are left out before the
		 * record is read (pp_run_inputs may estimate to pick recompute). */
		json_t *rec = json_array_get(records, i);
		json_t *layers = json_object_get(json_object_get(rec, "model"), "num_layers");
		json_t *gpus_j = json_object_get(json_object_get(rec, "hardware"), "num_gpus");
		if ((json_is_number(layers) && json_number_value(layers) > 512) ||
		    (json_is_number(gpus_j) && json_number_value(gpus_j) > 65536))
			continue;
		pp_job job;
		pp_plan plan;
		long long gpus = 0;
		pp_run_info info;
		st = pp_run_inputs(runs, i, m, s, &job, &plan, &gpus, &info, &err);
		if (st) {
			check_error(st, &err);
			continue;
		}
		if (!small(m, gpus))
			continue;
		st = pp_estimate_run(m, s, &job, &plan, gpus, e, &err);
		if (st) {
			check_error(st, &err);
			continue;
		}
		pp_comparison speed, mem;
		pp_run_compare(&info, e, &speed, &mem);
		if (speed.metric != PP_METRIC_NONE &&
		    (!isfinite(speed.measured) || !isfinite(speed.predicted)))
			abort();
		if (mem.metric != PP_METRIC_NONE && !isfinite(mem.predicted))
			abort();
	}
	json_decref(root);
out:
	free(e);
	free(m);
	free(s);
	pp_runs_free(runs);
	return 0;
}
