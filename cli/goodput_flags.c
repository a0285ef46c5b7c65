/*
 * The goodput flags of estimate and search: --mtbf-gpu-hours,
 * --ckpt-write-gbps, --restart-min, --ckpt-async (defaults and their sources
 * in include/paraplan/goodput.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

/* A positive number (zero too when `zero_ok`), nothing else on the string. */
static int parse_positive(const char *verb, const char *flag, const char *s, bool zero_ok,
                          double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0 || (v == 0 && !zero_ok)) {
		cli_message("%s: --%s expects a %s number, got '%s'", verb, flag,
		            zero_ok ? "non-negative" : "positive", s);
		return EXIT_BADINPUT;
	}
	*out = v;
	return 0;
}

int cli_goodput_flag(const char *verb, const char *flag, const char *value, pp_goodput_params *gp)
{
	double x;
	if (strcmp(flag, "mtbf-gpu-hours") == 0)
		return parse_positive(verb, flag, value, false, &gp->mtbf_gpu_hours);
	if (strcmp(flag, "ckpt-write-gbps") == 0) {
		if (parse_positive(verb, flag, value, false, &x))
			return EXIT_BADINPUT;
		gp->ckpt_write_bytes_per_s = x * 1e9;
		return 0;
	}
	if (strcmp(flag, "restart-min") == 0) {
		if (parse_positive(verb, flag, value, true, &x))
			return EXIT_BADINPUT;
		gp->restart_s = x * 60;
		return 0;
	}
	if (strcmp(flag, "ckpt-async") == 0)
		return cli_parse_onoff(verb, flag, value, &gp->async);
	return CLI_CONTINUE;
}
