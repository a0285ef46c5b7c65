/*
 * The inverse questions of search and sweep, --deadline-days D and
 * --budget-usd B (include/paraplan/inverse.h), and the goodput flags of
 * estimate, search and sweep that make their days goodput-aware:
 * --mtbf-gpu-hours, --ckpt-write-gbps, --restart-min, --ckpt-async
 * (defaults and their sources in include/paraplan/goodput.h).  The flags and
 * their consistency.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

/* A positive number (zero too when `zero_ok`) of `unit` (" of days"; "" for
 * none), nothing else on the string, times `scale` into *out. */
static int parse_positive(const char *verb, const char *flag, const char *s, bool zero_ok,
                          const char *unit, double scale, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0 || (v == 0 && !zero_ok)) {
		cli_message("%s: --%s expects a %s number%s, got '%s'", verb, flag,
		            zero_ok ? "non-negative" : "positive", unit, s);
		return EXIT_BADINPUT;
	}
	*out = v * scale;
	return 0;
}

int cli_goodput_flag(const char *verb, const char *flag, const char *value, pp_goodput_params *gp)
{
	if (strcmp(flag, "mtbf-gpu-hours") == 0)
		return parse_positive(verb, flag, value, false, "", 1, &gp->mtbf_gpu_hours);
	if (strcmp(flag, "ckpt-write-gbps") == 0) /* bytes per GB */
		return parse_positive(verb, flag, value, false, "", 1e9,
		                      &gp->ckpt_write_bytes_per_s);
	if (strcmp(flag, "restart-min") == 0) /* seconds per minute */
		return parse_positive(verb, flag, value, true, "", 60, &gp->restart_s);
	if (strcmp(flag, "ckpt-async") == 0) {
		pp_error err;
		pp_status st = pp_arg_onoff(verb, flag, value, &gp->async, &err);
		return st ? cli_fail(st, &err) : 0;
	}
	return CLI_CONTINUE;
}

int cli_inverse_flag(const char *verb, const char *flag, const char *value, cli_inverse *inv)
{
	bool deadline = strcmp(flag, "deadline-days") == 0;
	if (deadline || strcmp(flag, "budget-usd") == 0)
		return parse_positive(verb, flag, value, false,
		                      deadline ? " of days" : " of US dollars", 1,
		                      deadline ? &inv->q.deadline_days : &inv->q.budget_usd);
	int rc = cli_goodput_flag(verb, flag, value, &inv->gp);
	if (rc == 0)
		inv->goodput = true;
	return rc;
}

int cli_inverse_check(const char *verb, const cli_inverse *inv, double train_tokens)
{
	bool asked = cli_inverse_asked(inv);
	if (inv->goodput && !asked)
		return CLI_CONTINUE; /* the verb decides what its goodput flags do alone */
	if (!asked)
		return 0;
	if (train_tokens <= 0) {
		cli_message("%s: --%s needs --tokens: the token budget to train", verb,
		            inv->q.deadline_days > 0 ? "deadline-days" : "budget-usd");
		return EXIT_BADINPUT;
	}
	return 0;
}

int cli_inverse_price(const char *verb, const cli_inverse *inv, const pp_system *sys)
{
	if (inv->q.budget_usd > 0 && !(sys->usd_per_gpu_hour > 0)) {
		cli_message(
		    "%s: --budget-usd needs a price per GPU-hour above 0 (system '%s' has none): "
		    "give --usd-per-gpu-hour",
		    verb, sys->name);
		return EXIT_BADINPUT;
	}
	return 0;
}
