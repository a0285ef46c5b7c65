/*
 * libFuzzer target: the recipe reader (pp_recipe_from_json, plan-run's input)
 * and the field locator it places its errors with.  A failure must be
 * PP_EINPUT (or PP_ENOMEM) with a message; a success must hold 1 to
 * PP_RECIPE_MAX_PHASES phases, each with tokens above 0 and a ramp that does
 * not go down.  The phases are not run (each is an estimate per batch size).
 */
#include <stdint.h>
#include <stdlib.h>

#include "paraplan/paraplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static pp_recipe r;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_recipe_from_json((const char *)data, size, "fuzz-recipe.json", &r, &err);
	if (st != PP_OK) {
		char buf[1024];
		if ((st != PP_EINPUT && st != PP_ENOMEM) || (st == PP_EINPUT && !err.text[0]))
			abort();
		pp_error_format(&err, buf, sizeof buf);
		return 0;
	}
	if (r.nphases < 1 || r.nphases > PP_RECIPE_MAX_PHASES)
		abort();
	for (int i = 0; i < r.nphases; i++)
		if (!(r.phases[i].tokens > 0) || r.phases[i].gbs.end < r.phases[i].gbs.start)
			abort();
	return 0;
}
