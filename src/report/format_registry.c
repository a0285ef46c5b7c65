/*
 * The output formats' registry (format_list.h) and lookup by name.
 */
#include <string.h>

#include "format_int.h"

static const pp_format_type *const formats[] = {
#define PP_FORMAT(name) &ppi_format_##name,
#include "format_list.h"
#undef PP_FORMAT
};

#define NFORMATS (sizeof formats / sizeof formats[0])

size_t pp_format_count(void)
{
	return NFORMATS;
}

const pp_format_type *pp_format_at(size_t i)
{
	return i < NFORMATS ? formats[i] : NULL;
}

const pp_format_type *pp_format_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < NFORMATS; i++) {
		if (strcmp(formats[i]->name, name) == 0)
			return formats[i];
		for (const char *const *a = formats[i]->aliases; a && *a; a++)
			if (strcmp(*a, name) == 0)
				return formats[i];
	}
	return NULL;
}

bool pp_format_supports(const pp_format_type *f, pp_result_kind k)
{
	return f && (unsigned)k < PP_RESULT_KINDS && f->render[k] != NULL;
}

/* The names of the formats that render kind `k`, or of every format when
 * `all`, ", "-separated into buf. */
static char *names_of(bool all, pp_result_kind k, char *buf, size_t n)
{
	size_t off = 0;
	if (n)
		buf[0] = '\0';
	for (size_t i = 0; i < NFORMATS && off < n; i++)
		if (all || pp_format_supports(formats[i], k))
			off += (size_t)snprintf(buf + off, n - off, "%s%s", off ? ", " : "",
			                        formats[i]->name);
	return buf;
}

char *pp_format_names_for(pp_result_kind k, char *buf, size_t n)
{
	return names_of(false, k, buf, n);
}

char *pp_format_names(char *buf, size_t n)
{
	return names_of(true, PP_RESULT_ESTIMATE, buf, n);
}

int pp_format_render(const pp_format_type *f, const pp_result *r, FILE *out)
{
	if (!r || !pp_format_supports(f, r->kind))
		return PP_REPORT_EUNSUPPORTED;
	return f->render[r->kind](r, out);
}

const char *pp_result_kind_name(pp_result_kind k)
{
	static const char *const names[PP_RESULT_KINDS] = {
	    [PP_RESULT_ESTIMATE] = "estimate",
	    [PP_RESULT_SEARCH] = "search",
	    [PP_RESULT_SEARCH_INVERSE] = "search's answer to --deadline-days or --budget-usd",
	    [PP_RESULT_SWEEP] = "sweep",
	    [PP_RESULT_SWEEP_INVERSE] = "sweep's answer to --deadline-days or --budget-usd",
	    [PP_RESULT_VALIDATE] = "validation of throughput",
	    [PP_RESULT_VALIDATE_MEMORY] = "validation of memory",
	    [PP_RESULT_VALIDATE_SEARCH] = "validation by search",
	    [PP_RESULT_CROSS_VALIDATION] = "cross-validation",
	    [PP_RESULT_FIT] = "fit",
	    [PP_RESULT_PLACE] = "mapping",
	    [PP_RESULT_KERNEL] = "kernel model",
	    [PP_RESULT_TRAFFIC] = "traffic matrix",
	    [PP_RESULT_MEMORY_FIT] = "allocator fit",
	    [PP_RESULT_SHARE] = "shared links",
	    [PP_RESULT_RECIPE] = "recipe",
	};
	return (unsigned)k < PP_RESULT_KINDS ? names[k] : "?";
}
