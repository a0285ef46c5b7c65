/*
 * Command-line arguments against tables of long flags (include/paraplan/args.h).
 * The rules live here once so that every verb, the fuzz target of the command
 * line and an embedding program refuse the same input with the same line.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/args.h"
#include "util.h"

void pp_args_init(pp_args *it, const char *verb, int argc, char **argv, const pp_flag *table0,
                  const pp_flag *table1)
{
	*it = (pp_args){.verb = verb, .argc = argc, .i = 1, .argv = argv};
	it->tables[0] = table0;
	it->tables[1] = table1;
}

/* The flag named by `name` (`len` characters): exactly, never a prefix. */
static const pp_flag *find_flag(const pp_flag *tab, const char *name, size_t len)
{
	for (const pp_flag *p = tab; p && p->name; p++)
		if (strlen(p->name) == len && strncmp(p->name, name, len) == 0)
			return p;
	return NULL;
}

/* The one flag of the tables that `name` (`len` characters) abbreviates, or
 * NULL (none, or more than one): for the hint, since abbreviations are refused. */
static const char *abbreviated(const pp_args *it, const char *name, size_t len)
{
	const char *hit = NULL;
	int n = 0;
	for (size_t t = 0; t < 2; t++)
		for (const pp_flag *p = it->tables[t]; p && p->name; p++)
			if (len > 0 && strlen(p->name) > len && strncmp(p->name, name, len) == 0) {
				hit = p->name;
				n++;
			}
	return n == 1 ? hit : NULL;
}

pp_status pp_args_next(pp_args *it, pp_args_item *item, pp_error *err)
{
	*item = (pp_args_item){.what = PP_ARG_END};
	if (it->i >= it->argc)
		return PP_OK;
	const char *a = it->argv[it->i++];
	if (it->options_end || a[0] != '-' || a[1] == '\0') {
		item->what = PP_ARG_OPERAND;
		item->value = a;
		return PP_OK;
	}
	if (strcmp(a, "--") == 0) {
		it->options_end = true;
		return pp_args_next(it, item, err);
	}
	if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
		item->what = PP_ARG_HELP;
		return PP_OK;
	}
	const char *name = a[1] == '-' ? a + 2 : a + 1;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const pp_flag *fl = NULL;
	int t = 0;
	if (a[1] == '-' && !(fl = find_flag(it->tables[t], name, len)))
		fl = find_flag(it->tables[++t], name, len);
	if (!fl) {
		const char *full = a[1] == '-' ? abbreviated(it, name, len) : NULL;
		if (full)
			return ppi_fail(
			    err, NULL, NULL,
			    "%s: unknown option '%.*s' (did you mean '--%s'? options are "
			    "not abbreviated)",
			    it->verb, (int)(len + 2), a, full);
		return ppi_fail(err, NULL, NULL,
		                "%s: unknown option '%.*s' (see 'paraplan %s --help')", it->verb,
		                (int)(name - a) + (int)len, a, it->verb);
	}
	const char *v = NULL;
	if (fl->kind != PP_FLAG_SET) {
		if (eq)
			v = eq + 1;
		else if (it->i < it->argc)
			v = it->argv[it->i++];
		else
			return ppi_fail(err, NULL, NULL, "%s: missing value", a);
	} else if (eq)
		return ppi_fail(err, NULL, NULL, "%s: --%s takes no value, got '%s'", it->verb,
		                fl->name, a);
	*item = (pp_args_item){.what = PP_ARG_FLAG, .flag = fl, .table = t, .value = v};
	return PP_OK;
}

pp_status pp_arg_ll(const char *flag, const char *s, long long lo, long long hi, long long *out,
                    pp_error *err)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return ppi_fail(err, NULL, NULL, "--%s: expected an integer, got '%s'", flag, s);
	if (v < lo || v > hi)
		return ppi_fail(err, NULL, NULL, "--%s: expected %lld..%lld, got %lld", flag, lo,
		                hi, v);
	*out = v;
	return PP_OK;
}

pp_status pp_arg_price(const char *flag, const char *s, double hi, double *out, pp_error *err)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	/* signbit: "-0" is no price either */
	if (errno || end == s || *end || !isfinite(v) || v < 0 || signbit(v) || v > hi)
		return ppi_fail(err, NULL, NULL, "--%s: expected a price in 0..%.10g, got '%s'",
		                flag, hi, s);
	*out = v;
	return PP_OK;
}

pp_status pp_arg_onoff(const char *verb, const char *flag, const char *s, bool *out, pp_error *err)
{
	if (strcmp(s, "on") != 0 && strcmp(s, "off") != 0)
		return ppi_fail(err, NULL, NULL, "%s: --%s expects on or off, got '%s'", verb, flag,
		                s);
	*out = strcmp(s, "on") == 0;
	return PP_OK;
}

/* A finite number in the flag's interval, nothing else on the string. */
static pp_status arg_real(const pp_flag *fl, const char *v, double *out, pp_error *err)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(x) || x < fl->lo || x > fl->hi ||
	    (fl->lo_open && x == fl->lo) || (fl->hi_open && x == fl->hi))
		return ppi_fail(err, NULL, NULL, "--%s: expected %s, got '%s'", fl->name, fl->what,
		                v);
	*out = x;
	return PP_OK;
}

pp_status pp_flag_store(const pp_flag *fl, const char *verb, void *ctx, const char *v,
                        pp_error *err)
{
	void *to = (char *)ctx + fl->off;
	long long x;
	pp_status st;
	switch (fl->kind) {
	case PP_FLAG_SET: *(bool *)to = true; return PP_OK;
	case PP_FLAG_INT:
		if ((st = pp_arg_ll(fl->name, v, (long long)fl->lo, (long long)fl->hi, &x, err)))
			return st;
		*(int *)to = (int)x;
		return PP_OK;
	case PP_FLAG_LL:
		return pp_arg_ll(fl->name, v, (long long)fl->lo, (long long)fl->hi, to, err);
	case PP_FLAG_REAL: return arg_real(fl, v, to, err);
	case PP_FLAG_PRICE: return pp_arg_price(fl->name, v, fl->hi, to, err);
	case PP_FLAG_ONOFF: return pp_arg_onoff(verb, fl->name, v, to, err);
	case PP_FLAG_FILE:
		if (!*v)
			return ppi_fail(err, NULL, NULL, "%s: --%s needs %s", verb, fl->name,
			                fl->what ? fl->what : "a file name");
		/* fall through */
	case PP_FLAG_STR: *(const char **)to = v; return PP_OK;
	default:
		ppi_fail(err, NULL, NULL, "--%s: not a plain flag (kind %d)", fl->name, fl->kind);
		return PP_EINTERNAL;
	}
}
