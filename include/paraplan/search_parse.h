/*
 * paraplan — a search space from text, as the command line gives it: a value,
 * a list or a range per searched dimension ("8", "1,2,4", "4:16"), a list of
 * names per searched choice ("none,selective", "on,off"), a list of rank
 * orders; then the space checked against the model for values that would
 * have no effect.  Errors name the flag they were given to (`flag`, such as
 * "--tp"), so they read as the command line's own.
 *
 * The library never prints.
 */
#ifndef PARAPLAN_SEARCH_PARSE_H
#define PARAPLAN_SEARCH_PARSE_H

#include <stdbool.h>

#include "error.h"
#include "search.h"
#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * "8", "1,2,4" or "4:16" into *d (caller-owned), each value once and in
 * [lo, hi] (a range keeps every integer; the search keeps those the model
 * allows).  More than PP_SEARCH_MAX_VALUES values are refused, never cut.
 * PP_OK or PP_EINPUT.
 */
pp_status pp_search_dim_parse(const char *flag, const char *text, long long lo, long long hi,
                              pp_search_dim *d, pp_error *err);

/*
 * A comma-separated list of `n` names (bit i = names[i]) into *mask, at least
 * one; with `onoff` the names are {"off", "on"} and estimate's spellings
 * true/false and 1/0 are taken too.  PP_OK or PP_EINPUT.
 */
pp_status pp_search_names_parse(const char *flag, const char *text, const char *const *names, int n,
                                bool onoff, unsigned *mask, pp_error *err);

/* A comma-separated list of rank orders ("tp-cp-ep-dp-pp,...") into
 * sp->orders: at least one, at most PP_SEARCH_MAX_ORDERS; the keyword nvs
 * sets sp->nvs_split instead (alone: the default orders plus the NVLink
 * domain's factorisations, docs/placement.md).  PP_OK or PP_EINPUT. */
pp_status pp_search_orders_parse(const char *text, pp_search_space *sp, pp_error *err);

/*
 * The searched field `name` of *sp ("tp", "tp2", "pp", "dp", "cp", "ep",
 * "etp", "vp", "mbs", "zero", "summa-nb": dimensions; "sp", "summa",
 * "recompute", "schedule" (the registry's names), "order": lists) from
 * `text`, as pp_search_*_parse read it; `flag` names it in errors.
 * *known (may be NULL) is false, and nothing is set, for a name that is no
 * searched field.  PP_OK or PP_EINPUT.
 */
pp_status pp_search_space_set(pp_search_space *sp, const char *name, const char *flag,
                              const char *text, bool *known, pp_error *err);

/*
 * An estimate flag `name` (without "--") given to search with `text`: a
 * searched field goes into *sp (pp_search_space_set, PP_OK or its
 * PP_EINPUT); a flag search applies to every plan (the job, system, price,
 * unsearched plan flags, output) sets *every_plan and returns PP_OK; any
 * other is refused, PP_EINPUT: a flag added to the estimate set is never
 * silently ignored by search (tests/search_flags.sh checks every one).
 */
pp_status pp_search_flag_take(pp_search_space *sp, const char *name, const char *text,
                              bool *every_plan, pp_error *err);

/*
 * Values of `sp` that would have no effect for model `m`: --summa on or
 * --summa-nb without tp2 values above 1, --ep other than 1 or any --etp on a
 * dense model.  PP_OK, or PP_EINPUT with the reason.
 */
pp_status pp_search_space_check(const pp_search_space *sp, const pp_model *m, pp_error *err);

#ifdef __cplusplus
}
#endif

#endif
