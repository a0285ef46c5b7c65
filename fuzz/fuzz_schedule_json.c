/*
 * libFuzzer target: the schedule-as-data reader (pp_sim_orders_from_json)
 * and the simulator on what it accepts.  The shape is taken from the input's
 * own "pp", "microbatches" and "vp" when they are small, so accepted lists
 * reach pp_sim_run: any crash, sanitizer report, or a run that succeeds with
 * a non-finite or negative iteration time is a bug.  A deadlock or an
 * incomplete list must come back as PP_EINPUT.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "paraplan/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static pp_sim *sim;
	if (!sim && pp_sim_new(&sim, NULL))
		abort();
	int p = 2, v = 1;
	long long m = 2;
	json_t *root = json_loadb((const char *)data, size, 0, NULL);
	if (root) {
		json_t *x = json_object_get(root, "pp"), *y = json_object_get(root, "microbatches"),
		       *z = json_object_get(root, "vp");
		if (json_is_integer(x) && json_integer_value(x) >= 1 && json_integer_value(x) <= 16)
			p = (int)json_integer_value(x);
		if (json_is_integer(y) && json_integer_value(y) >= 1 && json_integer_value(y) <= 64)
			m = json_integer_value(y);
		if (json_is_integer(z) && json_integer_value(z) >= 1 && json_integer_value(z) <= 4)
			v = (int)json_integer_value(z);
		json_decref(root);
	}
	pp_error err;
	if (pp_sim_orders_from_json(sim, (const char *)data, size, "fuzz.json", p, m, v, &err))
		return 0;
	pp_sim_stage st[16];
	memset(st, 0, sizeof st);
	for (int i = 0; i < p; i++) {
		st[i].fwd_s = 1 + 0.1 * i;
		st[i].bwd_s = 2;
		st[i].wgrad_s = 0.5;
		st[i].send_fwd_s = st[i].send_bwd_s = 0.01;
	}
	pp_sim_result r;
	pp_status rc = pp_sim_run(sim, st, 0, &r, &err);
	if (rc == PP_OK && (!isfinite(r.iteration_s) || r.iteration_s < 0))
		abort();
	if (rc != PP_OK && rc != PP_EINPUT)
		abort();
	return 0;
}
