/*
 * The registry of pipeline schedules (schedule_type.h): one line per
 * schedule, at the index of its pp_schedule id.
 */
#include <string.h>

#include "paraplan/schedule_type.h"

extern const pp_schedule_type pp_sched_1f1b, pp_sched_gpipe, pp_sched_interleaved, pp_sched_zb,
    pp_sched_wshape, pp_sched_dualpipe, pp_sched_dualpipev;

const pp_schedule_type *const pp_schedule_types[] = {
    [PP_SCHED_1F1B] = &pp_sched_1f1b,
    [PP_SCHED_GPIPE] = &pp_sched_gpipe,
    [PP_SCHED_INTERLEAVED] = &pp_sched_interleaved,
    [PP_SCHED_ZB] = &pp_sched_zb,
    [PP_SCHED_WSHAPE] = &pp_sched_wshape,
    [PP_SCHED_DUALPIPE] = &pp_sched_dualpipe,
    [PP_SCHED_DUALPIPEV] = &pp_sched_dualpipev,
};

const int pp_schedule_type_n = (int)(sizeof pp_schedule_types / sizeof *pp_schedule_types);

_Static_assert(sizeof pp_schedule_types / sizeof *pp_schedule_types <= PP_SCHED_MAX,
               "more schedules than PP_SCHED_MAX");

const pp_schedule_type *pp_schedule_type_find(const char *name)
{
	for (int i = 0; i < pp_schedule_type_n; i++) {
		const pp_schedule_type *t = pp_schedule_types[i];
		if (strcmp(name, t->name) == 0)
			return t;
		for (const char *const *a = t->aliases; a && *a; a++)
			if (strcmp(name, *a) == 0)
				return t;
	}
	return NULL;
}

const pp_schedule_type *pp_schedule_type_torchtitan(const char *name)
{
	for (int i = 0; i < pp_schedule_type_n; i++)
		for (const char *const *a = pp_schedule_types[i]->torchtitan; a && *a; a++)
			if (strcmp(name, *a) == 0)
				return pp_schedule_types[i];
	return NULL;
}

pp_schedule pp_schedule_for_vp(pp_schedule s, int vp)
{
	const pp_schedule_type *t = pp_schedule_type_of(s);
	if (!t)
		return s;
	return vp > 1 ? t->virtual_form : t->flat_form;
}

unsigned pp_schedule_search_default_mask(void)
{
	unsigned mask = 0;
	for (int i = 0; i < pp_schedule_type_n; i++)
		if (pp_schedule_types[i]->search_default)
			mask |= 1u << i;
	return mask;
}
