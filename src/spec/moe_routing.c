/*
 * The routing spec of --moe-routing (include/paraplan/spec.h,
 * pp_moe_routing_parse): parsed here, in spec, so the field registry
 * (fields.c) can take it; the routing model itself is the workload's
 * (include/paraplan/moe.h, src/workload/moe.c).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/spec.h"
#include "util/util.h"

/* "NAME:VALUE" at *s (up to ',' or the end) with NAME `name`: the value into
 * *v, *s past the part.  0 when the part is not NAME; -1 on a bad value. */
static int part(const char **s, const char *name, double *v)
{
	size_t n = strlen(name);
	if (strncmp(*s, name, n) != 0 || (*s)[n] != ':')
		return 0;
	char *end;
	*v = strtod(*s + n + 1, &end);
	if (end == *s + n + 1 || (*end != ',' && *end != '\0') || !isfinite(*v))
		return -1;
	*s = *end == ',' ? end + 1 : end;
	return 1;
}

pp_status pp_moe_routing_parse(const char *text, double *skew, double *drift_steps,
                               double *capacity_factor, pp_error *err)
{
	const char *s = text;
	double v;
	*drift_steps = 0;
	*capacity_factor = 0;
	if (part(&s, "zipf", skew) != 1 || *skew < 0 || *skew > 10)
		return ppi_fail(
		    err, "", "moe-routing",
		    "expected zipf:S[,drift:D][,capacity:C] with a skew S in 0..10, got "
		    "'%s'",
		    text);
	bool drift = false, cap = false;
	while (*s) {
		int r;
		if (!drift && (r = part(&s, "drift", &v)) != 0) {
			if (r < 0 || !(v > 0))
				return ppi_fail(err, "", "moe-routing",
				                "drift: expected a number of steps > 0 in '%s'",
				                text);
			*drift_steps = v;
			drift = true;
		} else if (!cap && (r = part(&s, "capacity", &v)) != 0) {
			if (r < 0 || !(v > 0) || v > 64)
				return ppi_fail(err, "", "moe-routing",
				                "capacity: expected a factor in (0, 64] in '%s'",
				                text);
			*capacity_factor = v;
			cap = true;
		} else {
			return ppi_fail(err, "", "moe-routing",
			                "expected drift:D or capacity:C (each once) after zipf:S, "
			                "got '%s'",
			                s);
		}
	}
	return PP_OK;
}
