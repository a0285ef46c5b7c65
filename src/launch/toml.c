/*
 * The TOML subset a torchtitan job file uses: comments, [table] and
 * [table.sub] headers, key = value lines with basic ("...") and literal
 * ('...') strings, integers (with _ separators), floats, booleans and
 * one-line arrays of those.  Debian has no C TOML library (libcpptoml is
 * C++), hence this.  Anything else (inline tables, multi-line strings or
 * arrays, dates) is an error with its line, never a guess.
 */
#include <ctype.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_int.h"
#include "util/util.h"

static const char *skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static bool bare_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* A string at p (quote q); its contents into out (escapes of basic strings
 * decoded).  Returns the position after the closing quote, NULL if none. */
static const char *read_string(const char *p, const char *end, char *out, size_t n)
{
	char q = *p++;
	size_t l = 0;
	while (p < end && *p != q && *p != '\n') {
		char c = *p++;
		if (q == '"' && c == '\\' && p < end) {
			char e = *p++;
			c = e == 'n'    ? '\n'
			    : e == 't'  ? '\t'
			    : e == '"'  ? '"'
			    : e == '\\' ? '\\'
			                : 0;
			if (!c)
				return NULL; /* \uXXXX and friends: not in the subset */
		}
		if (l + 1 < n)
			out[l++] = c;
	}
	out[l] = '\0';
	return p < end && *p == q ? p + 1 : NULL;
}

/* A scalar value: its text into out (strings unquoted), *kind set. */
static const char *read_scalar(const char *p, const char *end, char *out, size_t n, char *kind)
{
	if (*p == '"' || *p == '\'') {
		*kind = 's';
		return read_string(p, end, out, n);
	}
	size_t l = 0;
	const char *s = p;
	while (p < end && (isalnum((unsigned char)*p) || strchr("+-._", *p))) {
		if (*p != '_' && l + 1 < n)
			out[l++] = *p;
		p++;
	}
	out[l] = '\0';
	if (p == s)
		return NULL;
	if (strcmp(out, "true") == 0 || strcmp(out, "false") == 0) {
		*kind = 'b';
		return p;
	}
	/* A number (ppi_parse_double: finite, nothing after it); integers
	 * are read again, exactly, by whoever uses them. */
	double v;
	char why[128];
	if (!ppi_parse_double(out, (size_t)-1, -DBL_MAX, DBL_MAX, &v, why, sizeof why))
		return NULL;
	*kind = strpbrk(out, ".eE") ? 'f' : 'i';
	return p;
}

void ppi_toml_free(ppi_toml *t)
{
	free(t->items);
	memset(t, 0, sizeof *t);
}

/* Keys and tables are checked for a second definition in a hash set (linear
 * in the file); a table header is kept as "[name". */
static pp_status define_once(ppi_strmap *seen, const char *key, bool table, const char *source,
                             int line, pp_error *err)
{
	char k[PPI_TOML_KEY_MAX + 1];
	snprintf(k, sizeof k, "%s%s", table ? "[" : "", key);
	bool added;
	ppi_strmap_entry *e = ppi_strmap_add(seen, k, strlen(k), &added);
	if (!e)
		return ppi_fail(err, source, "", "out of memory"), PP_ENOMEM;
	if (!added)
		return ppi_fail_at(err, source, line, 1,
		                   "%s%s%s is defined twice (first on line %lld)",
		                   table ? "table [" : "", key, table ? "]" : "", e->value);
	e->value = line;
	return PP_OK;
}

/* One line being read: its start (columns count from it), its end (the
 * '\n' or the text's end), its number, and where errors go. */
typedef struct toml_line {
	const char *p, *eol;
	int line;
	const char *source;
	pp_error *err;
} toml_line;

/* PP_EINPUT at column q of the line. */
#define FAIL_AT(l, q, ...)                                                                         \
	ppi_fail_at((l)->err, (l)->source, (l)->line, (int)((q) - (l)->p) + 1, __VA_ARGS__)

/* A table header, q just past its '[': the name into table[n] (a bare or
 * dotted name), defined once (`seen`).  PP_EINPUT for an array of tables, a
 * name too long or malformed, or text after the ']'. */
static pp_status read_header(const toml_line *l, const char *q, char *table, size_t n,
                             ppi_strmap *seen)
{
	if (q < l->eol && *q == '[')
		return FAIL_AT(l, q, "arrays of tables are not in the subset read");
	size_t k = 0;
	q = skip_blank(q, l->eol);
	while (q < l->eol && (bare_char(*q) || *q == '.')) {
		if (k + 1 >= n)
			return FAIL_AT(l, q, "a table name longer than %d characters",
			               PPI_TOML_KEY_MAX - 1);
		table[k++] = *q;
		q++;
	}
	table[k] = '\0';
	q = skip_blank(q, l->eol);
	if (k == 0 || q >= l->eol || *q != ']')
		return FAIL_AT(l, q, "expected a table header such as [parallelism]");
	q = skip_blank(q + 1, l->eol);
	if (q < l->eol && *q != '#' && *q != '\r')
		return FAIL_AT(l, q, "unexpected text after the table header");
	return define_once(seen, table, true, l->source, l->line, l->err);
}

/* A bare key at *q, prefixed with "table." into it->key, then its '=';
 * *q moves to the value (blanks skipped).  PP_EINPUT for a key too long or
 * no '='. */
static pp_status read_key(const toml_line *l, const char **q, const char *table, ppi_toml_item *it)
{
	snprintf(it->key, sizeof it->key, "%s%s", table, table[0] ? "." : "");
	size_t k = strlen(it->key); /* a long table name is cut, never overrun */
	const char *c = *q, *k0 = *q;
	while (c < l->eol && bare_char(*c)) {
		if (k + 1 >= sizeof it->key)
			return FAIL_AT(l, c, "a key longer than %d characters (with its table)",
			               PPI_TOML_KEY_MAX - 1);
		it->key[k++] = *c;
		c++;
	}
	it->key[k] = '\0';
	c = skip_blank(c, l->eol);
	if (c == k0 || c >= l->eol || *c != '=')
		return FAIL_AT(l, c, "expected key = value (bare keys only)");
	*q = skip_blank(c + 1, l->eol);
	return PP_OK;
}

/* The value at q into it->value and it->kind: a scalar, or a one-line array
 * (its elements joined with ','; a long array is cut), then nothing but a
 * comment.  PP_EINPUT otherwise. */
static pp_status read_value(const toml_line *l, const char *q, ppi_toml_item *it)
{
	const char *eol = l->eol;
	if (q < eol && *q == '[') {
		it->kind = 'a';
		q = skip_blank(q + 1, eol);
		size_t vl = 0;
		while (q < eol && *q != ']') {
			char v[PPI_TOML_VALUE_MAX], kind;
			const char *r = read_scalar(q, eol, v, sizeof v, &kind);
			if (!r)
				return FAIL_AT(l, q, "expected a value in the array");
			/* append ",v"; a long array is cut */
			if (vl > 0 && vl + 1 < sizeof it->value)
				it->value[vl++] = ',';
			for (const char *c = v; *c && vl + 1 < sizeof it->value; c++)
				it->value[vl++] = *c;
			it->value[vl] = '\0';
			q = skip_blank(r, eol);
			if (q < eol && *q == ',')
				q = skip_blank(q + 1, eol);
		}
		if (q >= eol)
			return FAIL_AT(l, q, "arrays must close on their line");
		q++;
	} else {
		const char *r =
		    q < eol ? read_scalar(q, eol, it->value, sizeof it->value, &it->kind) : NULL;
		if (!r)
			return FAIL_AT(l, q,
			               "expected a string, number, boolean or one-line array");
		q = r;
	}
	q = skip_blank(q, eol);
	if (q < eol && *q != '#' && *q != '\r')
		return FAIL_AT(l, q, "unexpected text after the value");
	return PP_OK;
}

/* *it appended to out (at most PPI_TOML_ITEMS_MAX items). */
static pp_status add_item(ppi_toml *out, const ppi_toml_item *it, const toml_line *l)
{
	if (out->n == PPI_TOML_ITEMS_MAX)
		return ppi_fail_at(l->err, l->source, l->line, 1,
		                   "more than %d keys: not a job file paraplan reads",
		                   PPI_TOML_ITEMS_MAX);
	if (out->n == out->cap) {
		int cap = out->cap ? out->cap * 2 : 32;
		ppi_toml_item *v = ppi_realloc(out->items, (size_t)cap * sizeof *v);
		if (!v)
			return ppi_fail(l->err, l->source, "", "out of memory");
		out->items = v;
		out->cap = cap;
	}
	out->items[out->n++] = *it;
	return PP_OK;
}

pp_status ppi_toml_parse(const char *text, size_t len, const char *source, ppi_toml *out,
                         pp_error *err)
{
	memset(out, 0, sizeof *out);
	const char *p = text, *end = text + len;
	char table[PPI_TOML_KEY_MAX] = "";
	int line = 0;
	pp_status st = PP_OK;
	ppi_strmap seen = {0};
	while (p < end && !st) {
		line++;
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		toml_line l = {p, eol, line, source, err};
		p = eol + (eol < end);
		if (memchr(l.p, '\0', (size_t)(eol - l.p))) {
			st = ppi_fail_at(err, source, line, 0, "a NUL byte");
			break;
		}
		const char *q = skip_blank(l.p, eol);
		if (q < eol && *q == '\r' && q + 1 == eol)
			q = eol;
		if (q == eol || *q == '#')
			continue;
		if (*q == '[') {
			st = read_header(&l, q + 1, table, sizeof table, &seen);
			continue;
		}
		ppi_toml_item it;
		memset(&it, 0, sizeof it);
		if ((st = read_key(&l, &q, table, &it)) || (st = read_value(&l, q, &it)) ||
		    (st = define_once(&seen, it.key, false, source, line, err)))
			break;
		it.line = line;
		st = add_item(out, &it, &l);
	}
	ppi_strmap_free(&seen);
	if (st)
		ppi_toml_free(out);
	return st;
}

const ppi_toml_item *ppi_toml_get(const ppi_toml *t, const char *key)
{
	for (int i = 0; i < t->n; i++)
		if (strcmp(t->items[i].key, key) == 0)
			return &t->items[i];
	return NULL;
}
