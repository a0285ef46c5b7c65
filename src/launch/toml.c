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
		if (memchr(p, '\0', (size_t)(eol - p))) {
			st = ppi_fail_at(err, source, line, 0, "a NUL byte");
			break;
		}
		const char *q = skip_blank(p, eol);
		if (q < eol && *q == '\r' && q + 1 == eol)
			q = eol;
		if (q == eol || *q == '#') {
			p = eol + (eol < end);
			continue;
		}
		if (*q == '[') {
			q++;
			if (q < eol && *q == '[') {
				st = ppi_fail_at(err, source, line, (int)(q - p) + 1,
				                 "arrays of tables are not in the subset read");
				break;
			}
			size_t l = 0;
			q = skip_blank(q, eol);
			while (q < eol && (bare_char(*q) || *q == '.')) {
				if (l + 1 >= sizeof table) {
					st = ppi_fail_at(err, source, line, (int)(q - p) + 1,
					                 "a table name longer than %d characters",
					                 PPI_TOML_KEY_MAX - 1);
					break;
				}
				table[l++] = *q;
				q++;
			}
			if (st)
				break;
			table[l] = '\0';
			q = skip_blank(q, eol);
			if (l == 0 || q >= eol || *q != ']') {
				st = ppi_fail_at(err, source, line, (int)(q - p) + 1,
				                 "expected a table header such as [parallelism]");
				break;
			}
			q = skip_blank(q + 1, eol);
			if (q < eol && *q != '#' && *q != '\r') {
				st = ppi_fail_at(err, source, line, (int)(q - p) + 1,
				                 "unexpected text after the table header");
				break;
			}
			if ((st = define_once(&seen, table, true, source, line, err)))
				break;
			p = eol + (eol < end);
			continue;
		}
		ppi_toml_item it;
		memset(&it, 0, sizeof it);
		snprintf(it.key, sizeof it.key, "%s%s", table, table[0] ? "." : "");
		size_t l = strlen(it.key); /* a long table name is cut, never overrun */
		const char *k0 = q;
		while (q < eol && bare_char(*q)) {
			if (l + 1 >= sizeof it.key) {
				st = ppi_fail_at(err, source, line, (int)(q - p) + 1,
				                 "a key longer than %d characters (with its table)",
				                 PPI_TOML_KEY_MAX - 1);
				break;
			}
			it.key[l++] = *q;
			q++;
		}
		if (st)
			break;
		it.key[l] = '\0';
		q = skip_blank(q, eol);
		if (q == k0 || q >= eol || *q != '=') {
			st = ppi_fail_at(err, source, line, (int)(q - p) + 1,
			                 "expected key = value (bare keys only)");
			break;
		}
		q = skip_blank(q + 1, eol);
		if (q < eol && *q == '[') {
			/* A one-line array: its elements joined with ',' into value. */
			it.kind = 'a';
			q = skip_blank(q + 1, eol);
			size_t vl = 0;
			while (q < eol && *q != ']') {
				char v[PPI_TOML_VALUE_MAX], kind;
				const char *r = read_scalar(q, eol, v, sizeof v, &kind);
				if (!r) {
					st = ppi_fail_at(err, source, line, (int)(q - p) + 1,
					                 "expected a value in the array");
					break;
				}
				/* append ",v"; a long array is cut */
				if (vl > 0 && vl + 1 < sizeof it.value)
					it.value[vl++] = ',';
				for (const char *c = v; *c && vl + 1 < sizeof it.value; c++)
					it.value[vl++] = *c;
				it.value[vl] = '\0';
				q = skip_blank(r, eol);
				if (q < eol && *q == ',')
					q = skip_blank(q + 1, eol);
			}
			if (st)
				break;
			if (q >= eol) {
				st = ppi_fail_at(err, source, line, (int)(q - p) + 1,
				                 "arrays must close on their line");
				break;
			}
			q++;
		} else {
			const char *r =
			    q < eol ? read_scalar(q, eol, it.value, sizeof it.value, &it.kind)
			            : NULL;
			if (!r) {
				st = ppi_fail_at(
				    err, source, line, (int)(q - p) + 1,
				    "expected a string, number, boolean or one-line array");
				break;
			}
			q = r;
		}
		q = skip_blank(q, eol);
		if (q < eol && *q != '#' && *q != '\r') {
			st = ppi_fail_at(err, source, line, (int)(q - p) + 1,
			                 "unexpected text after the value");
			break;
		}
		if ((st = define_once(&seen, it.key, false, source, line, err)))
			break;
		if (out->n == PPI_TOML_ITEMS_MAX) {
			st = ppi_fail_at(err, source, line, 1,
			                 "more than %d keys: not a job file paraplan reads",
			                 PPI_TOML_ITEMS_MAX);
			break;
		}
		if (out->n == out->cap) {
			int cap = out->cap ? out->cap * 2 : 32;
			ppi_toml_item *v = ppi_realloc(out->items, (size_t)cap * sizeof *v);
			if (!v) {
				st = ppi_fail(err, source, "", "out of memory");
				break;
			}
			out->items = v;
			out->cap = cap;
		}
		it.line = line;
		out->items[out->n++] = it;
		p = eol + (eol < end);
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
