/*
 * --deadline-days D and --budget-usd B of search and sweep (the inverse
 * questions, include/paraplan/inverse.h): the flags, their consistency, and
 * goodput-aware days when a goodput flag is given.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

int cli_inverse_flag(const char *verb, const char *flag, const char *value, cli_inverse *inv)
{
	bool deadline = strcmp(flag, "deadline-days") == 0;
	if (!deadline && strcmp(flag, "budget-usd") != 0) {
		int rc = cli_goodput_flag(verb, flag, value, &inv->gp);
		if (rc == 0)
			inv->goodput = true;
		return rc;
	}
	char *end;
	errno = 0;
	double v = strtod(value, &end);
	if (errno || end == value || *end || !isfinite(v) || !(v > 0)) {
		cli_message("%s: --%s expects a positive number%s, got '%s'", verb, flag,
		            deadline ? " of days" : " of US dollars", value);
		return EXIT_BADINPUT;
	}
	if (deadline)
		inv->q.deadline_days = v;
	else
		inv->q.budget_usd = v;
	return 0;
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
