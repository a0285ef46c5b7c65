/*
 * The winner of a search under failures and checkpoints
 * (include/paraplan/search.h, pp_search_winner_goodput).
 */
#include <stdlib.h>

#include "paraplan/search.h"
#include "util/util.h"

pp_status pp_search_winner_goodput(const pp_search *s, const pp_goodput_params *gp,
                                   pp_estimate **out, pp_error *err)
{
	*out = NULL;
	const pp_estimate *winner = pp_search_count(s) ? pp_search_plan(s, 0) : NULL;
	if (!winner)
		return ppi_fail(err, "", "search", "no winner to estimate the goodput of");
	pp_estimate *w = malloc(sizeof *w); /* a copy: the search's plans are read-only */
	if (!w)
		return ppi_oom(err);
	*w = *winner;
	pp_status st = pp_estimate_goodput(w, gp, err);
	if (st) {
		free(w);
		return st;
	}
	*out = w;
	return PP_OK;
}
