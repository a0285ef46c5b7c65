/*
 * A search space from the command line's text (include/paraplan/search_parse.h):
 * dimensions, name lists and rank orders, then the checks against the model.
 */
#include "paraplan/search_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/schedule_type.h"
#include "util/util.h"

/* A whole number in [lo, hi], nothing else on the string; the messages of
 * the command line's integer flags. */
static pp_status parse_ll(const char *flag, const char *s, long long lo, long long hi,
                          long long *out, pp_error *err)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return ppi_fail(err, NULL, flag, "expected an integer, got '%s'", s);
	if (v < lo || v > hi)
		return ppi_fail(err, NULL, flag, "expected %lld..%lld, got %lld", lo, hi, v);
	*out = v;
	return PP_OK;
}

static pp_status parse_range(const char *flag, const char *v, const char *colon, long long lo,
                             long long hi, pp_search_dim *d, pp_error *err)
{
	char a[32], b[32];
	size_t la = (size_t)(colon - v);
	if (la == 0 || la >= sizeof a || strlen(colon + 1) >= sizeof b)
		return ppi_fail(err, NULL, flag, "expected a range such as 4:16, got '%s'", v);
	memcpy(a, v, la);
	a[la] = '\0';
	strcpy(b, colon + 1);
	long long x, y;
	pp_status st;
	if ((st = parse_ll(flag, a, lo, hi, &x, err)) || (st = parse_ll(flag, b, lo, hi, &y, err)))
		return st;
	if (x > y)
		return ppi_fail(err, NULL, flag, "empty range '%s'", v);
	if (y - x + 1 > PP_SEARCH_MAX_VALUES)
		return ppi_fail(err, NULL, NULL,
		                "search: %s %s has %lld values; at most %d (give a list or a "
		                "shorter range)",
		                flag, v, y - x + 1, PP_SEARCH_MAX_VALUES);
	for (long long k = x; k <= y; k++)
		d->values[d->count++] = (int)k;
	return PP_OK;
}

pp_status pp_search_dim_parse(const char *flag, const char *v, long long lo, long long hi,
                              pp_search_dim *d, pp_error *err)
{
	d->count = 0;
	const char *colon = strchr(v, ':');
	if (colon && !strchr(v, ','))
		return parse_range(flag, v, colon, lo, hi, d, err);
	char buf[1024];
	if (strlen(v) >= sizeof buf)
		return ppi_fail(err, NULL, NULL, "search: %s: list too long (at most %d values)",
		                flag, PP_SEARCH_MAX_VALUES);
	strcpy(buf, v);
	int listed = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long x;
		pp_status st = parse_ll(flag, tok, lo, hi, &x, err);
		if (st)
			return st;
		bool dup = false;
		for (int i = 0; i < d->count && i < PP_SEARCH_MAX_VALUES; i++)
			dup |= d->values[i] == x;
		if (dup)
			continue;
		if (listed < PP_SEARCH_MAX_VALUES)
			d->values[d->count++] = (int)x;
		listed++;
	}
	if (listed > PP_SEARCH_MAX_VALUES)
		return ppi_fail(err, NULL, NULL,
		                "search: %s: the list has %d different values; at most %d", flag,
		                listed, PP_SEARCH_MAX_VALUES);
	if (d->count == 0)
		return ppi_fail(err, NULL, flag, "expected a value, a list or a range, got '%s'",
		                v);
	return PP_OK;
}

pp_status pp_search_names_parse(const char *flag, const char *v, const char *const *names, int n,
                                bool onoff, unsigned *mask, pp_error *err)
{
	char buf[256];
	if (strlen(v) >= sizeof buf)
		return ppi_fail(err, NULL, flag, "list too long");
	strcpy(buf, v);
	*mask = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const char *t = tok;
		if (onoff)
			t = strcmp(t, "true") == 0 || strcmp(t, "1") == 0    ? "on"
			    : strcmp(t, "false") == 0 || strcmp(t, "0") == 0 ? "off"
			                                                     : t;
		int k = -1;
		for (int i = 0; i < n; i++)
			if (strcmp(t, names[i]) == 0)
				k = i;
		if (k < 0) {
			char list[128] = "";
			for (int i = 0; i < n; i++) {
				strncat(list, names[i], sizeof list - strlen(list) - 1);
				if (i + 1 < n)
					strncat(list, ", ", sizeof list - strlen(list) - 1);
			}
			return ppi_fail(err, NULL, flag, "expected a list of %s, got '%s'", list,
			                tok);
		}
		*mask |= 1u << k;
	}
	if (!*mask)
		return ppi_fail(err, NULL, flag, "expected at least one value");
	return PP_OK;
}

pp_status pp_search_orders_parse(const char *v, pp_search_space *sp, pp_error *err)
{
	char buf[PP_SEARCH_MAX_ORDERS * PP_ORDER_MAX];
	if (strlen(v) >= sizeof buf)
		return ppi_fail(err, NULL, "--order", "list too long (at most %d orders)",
		                PP_SEARCH_MAX_ORDERS);
	strcpy(buf, v);
	char *save = NULL;
	sp->norders = 0;
	sp->nvs_split = false;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "nvs") == 0) { /* the NVLink domain's factorisations */
			sp->nvs_split = true;
			continue;
		}
		if (sp->norders == PP_SEARCH_MAX_ORDERS || strlen(t) >= PP_ORDER_MAX)
			return ppi_fail(err, NULL, "--order",
			                "at most %d orders of at most %d characters",
			                PP_SEARCH_MAX_ORDERS, PP_ORDER_MAX - 1);
		strcpy(sp->orders[sp->norders++], t);
	}
	if (sp->norders == 0 && !sp->nvs_split)
		return ppi_fail(err, NULL, "--order", "expected at least one order");
	return PP_OK;
}

/* A searched choice of `name`: its names and mask in *sp; false for none. */
static bool name_list(pp_search_space *sp, const char *name, const char *const **names, int *n,
                      bool *onoff, unsigned **mask)
{
	static const char *const onoff_names[] = {"off", "on"};
	static const char *const rc_names[] = {"none", "selective", "full"};
	static const char *sched_names[PP_SCHED_MAX]; /* the registry's, by id */
	*onoff = strcmp(name, "sp") == 0 || strcmp(name, "summa") == 0 ||
	         strcmp(name, "offload-optimizer") == 0;
	if (*onoff) { /* summa: bit 0 2D TP with shared weights, bit 1 SUMMA */
		*names = onoff_names;
		*n = 2;
		*mask = name[0] == 'o'   ? &sp->offload_mask
		        : name[1] == 'p' ? &sp->sp_mask
		                         : &sp->summa_mask;
	} else if (strcmp(name, "recompute") == 0) {
		*names = rc_names;
		*n = 3;
		*mask = &sp->recompute_mask;
	} else if (strcmp(name, "schedule") == 0) {
		for (int i = 0; i < pp_schedule_type_n; i++)
			sched_names[i] = pp_schedule_types[i]->name;
		*names = sched_names;
		*n = pp_schedule_type_n;
		*mask = &sp->schedule_mask;
	} else
		return false;
	return true;
}

pp_status pp_search_space_set(pp_search_space *sp, const char *name, const char *flag,
                              const char *text, bool *known, pp_error *err)
{
	const struct {
		const char *name;
		pp_search_dim *d;
		long long lo, hi;
	} dims[] = {{"tp", &sp->tp, 1, 1 << 20},
	            {"tp2", &sp->tp2, 1, 64}, /* the search's bound on n_2 */
	            {"pp", &sp->pp, 1, 1 << 20},
	            {"dp", &sp->dp, 1, 10000000},
	            {"cp", &sp->cp, 1, 1 << 20},
	            {"ep", &sp->ep, 1, 1 << 20},
	            {"etp", &sp->etp, 1, 1 << 20},
	            {"vp", &sp->vp, 1, 1 << 20},
	            {"mbs", &sp->mbs, 1, 1 << 20},
	            {"zero", &sp->zero, 0, 3},
	            {"summa-nb", &sp->summa_nb, 1, 1 << 20}};
	if (known)
		*known = true;
	for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
		if (strcmp(name, dims[i].name) == 0)
			return pp_search_dim_parse(flag, text, dims[i].lo, dims[i].hi, dims[i].d,
			                           err);
	const char *const *names;
	int n;
	bool onoff;
	unsigned *mask;
	if (name_list(sp, name, &names, &n, &onoff, &mask))
		return pp_search_names_parse(flag, text, names, n, onoff, mask, err);
	if (strcmp(name, "order") == 0)
		return pp_search_orders_parse(text, sp, err);
	if (known)
		*known = false;
	return PP_OK;
}

static bool dim_has(const pp_search_dim *d, int v)
{
	for (int i = 0; i < d->count; i++)
		if (d->values[i] == v)
			return true;
	return false;
}

pp_status pp_search_space_check(const pp_search_space *sp, const pp_model *m, pp_error *err)
{
	bool tp2d = false; /* some tp2 > 1 in the space (2D TP is opt-in) */
	for (int i = 0; i < sp->tp2.count; i++)
		tp2d |= sp->tp2.values[i] > 1;
	/* --summa on alone searches SUMMA on the tp x 1 grid too (seed 003's
	 * SUMMA space includes n_2 = 1; docs/summa.md) */
	bool summa = (sp->summa_mask & 2u) || (sp->summa_mask == 0 && tp2d);
	if (sp->summa_nb.count > 0 && !summa)
		return ppi_fail(err, NULL, NULL,
		                "search: --summa-nb sets the panels of SUMMA plans: it needs --tp2 "
		                "values above 1 or --summa on, and not --summa off");
	if (m->moe.num_experts == 0) {
		if (sp->ep.count > 0 && !dim_has(&sp->ep, 1))
			return ppi_fail(err, NULL, NULL, "search: --ep: %s is dense; ep must be 1",
			                m->name);
		if (sp->etp.count > 0)
			return ppi_fail(err, NULL, NULL,
			                "search: --etp: %s is dense (etp is tp); leave --etp out",
			                m->name);
	}
	return PP_OK;
}

/* The estimate flags search applies to every plan, each between spaces. */
static const char every_plan_flags[] =
    " model system framework gpu-profile usd-per-gpu-hour gpus gbs seq tokens "
    "precision fp8-recipe fp8-params grad-dtype grad-reduce-dtype optimizer flash tp-overlap "
    "ep-overlap "
    "overlap json format output first-stage-layers last-stage-layers "
    "embedding-as-layer loss-as-layer from-megatron from-torchtitan compile "
    "offload-params offload-activations offload-layers moe-routing moe-dispatcher freeze "
    "lora-rank lora-targets "
    "base-weights "
    "energy pue grid-gco2-per-kwh usd-per-kwh power-cap-mw ";

pp_status pp_search_flag_take(pp_search_space *sp, const char *name, const char *text,
                              bool *every_plan, pp_error *err)
{
	*every_plan = false;
	char flag[64];
	snprintf(flag, sizeof flag, "--%s", name);
	bool known;
	pp_status st = pp_search_space_set(sp, name, flag, text, &known, err);
	if (known)
		return st;
	char word[64];
	snprintf(word, sizeof word, " %s ", name);
	if ((*every_plan = strstr(every_plan_flags, word) != NULL))
		return PP_OK;
	return ppi_fail(err, NULL, "search",
	                "%s is not applied by search; leave it out (see 'paraplan search --help')",
	                flag);
}
