/*
 * Shell words out of a string or a launch script (ppi_shell_words,
 * launch_int.h): blanks and operators split, quotes and backslashes as a
 * POSIX shell reads them, NAME=value words remembered and $NAME, ${NAME},
 * ${NAME:-default} expanded within a budget.  What the words mean is
 * megatron.c's.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "launch_int.h"
#include "util/util.h"

typedef struct var {
	char *name, *value;
} var;

/* What variables may expand to, all words together: EXPAND_RATIO times the
 * script plus EXPAND_SLACK_BYTES.  A launch script names each variable a few
 * times; a script of doubling variables (B="$A $A", C="$B $B", ...) would
 * grow without end. */
#define EXPAND_RATIO 16
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* The fuzz build (fuzz/CMakeLists.txt): the same bound, reached 16x sooner,
 * so that inputs that spend it do not dominate the fuzzer's time. */
#define EXPAND_SLACK_BYTES ((size_t)64 << 10)
#else
#define EXPAND_SLACK_BYTES ((size_t)1 << 20)
#endif

typedef struct lexer {
	const char *s, *end;
	ppi_words *out;
	var *vars;
	int nvars, capvars;
	ppi_strmap names; /* variable name -> its last index in vars */
	char *buf;        /* the word being built */
	size_t len, cap;
	size_t produced, budget; /* bytes of words so far, and the most allowed */
	bool in_word;
} lexer;

/* -4: the expansion budget is spent. */
static int push_char(lexer *lx, char c)
{
	if (++lx->produced > lx->budget)
		return -4;
	if (lx->len + 2 > lx->cap) {
		size_t cap = lx->cap ? lx->cap * 2 : 64;
		char *b = ppi_realloc(lx->buf, cap);
		if (!b)
			return -1;
		lx->buf = b;
		lx->cap = cap;
	}
	lx->buf[lx->len++] = c;
	lx->buf[lx->len] = '\0';
	lx->in_word = true;
	return 0;
}

static int push_str(lexer *lx, const char *s, size_t n)
{
	if (n > lx->budget - lx->produced)
		return -4; /* before copying any of it */
	/* In one copy, not push_char by push_char: a variable's value may be a
	 * megabyte (the expansion budget's slack), and a copy per character was
	 * two thirds of fuzz_megatron's time (35 -> 534 executions/s). */
	if (lx->len + n + 2 > lx->cap) {
		size_t cap = lx->cap ? lx->cap : 64;
		while (cap < lx->len + n + 2)
			cap *= 2;
		char *b = ppi_realloc(lx->buf, cap);
		if (!b)
			return -1;
		lx->buf = b;
		lx->cap = cap;
	}
	memcpy(lx->buf + lx->len, s, n);
	lx->len += n;
	lx->buf[lx->len] = '\0';
	lx->produced += n;
	lx->in_word = true;
	return 0;
}

static const char *lookup(const lexer *lx, const char *name, size_t n)
{
	const ppi_strmap_entry *e = ppi_strmap_find(&lx->names, name, n);
	return e ? lx->vars[e->value].value : NULL;
}

static bool name_char(char c, bool first)
{
	return c == '_' || isalpha((unsigned char)c) || (!first && isdigit((unsigned char)c));
}

/* A NAME=value word records a variable (the last assignment wins). */
static int record_assignment(lexer *lx, const char *w)
{
	size_t n = 0;
	while (w[n] && name_char(w[n], n == 0))
		n++;
	if (n == 0 || w[n] != '=')
		return 0;
	if (lx->nvars == lx->capvars) {
		int cap = lx->capvars ? lx->capvars * 2 : 16;
		var *v = ppi_realloc(lx->vars, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		lx->vars = v;
		lx->capvars = cap;
	}
	char *name = ppi_malloc(n + 1), *value = ppi_strdup(w + n + 1);
	if (!name || !value) {
		free(name);
		free(value);
		return -1;
	}
	memcpy(name, w, n);
	name[n] = '\0';
	bool added;
	ppi_strmap_entry *e = ppi_strmap_add(&lx->names, name, n, &added);
	if (!e) {
		free(name);
		free(value);
		return -1;
	}
	e->value = lx->nvars; /* the last assignment wins */
	lx->vars[lx->nvars].name = name;
	lx->vars[lx->nvars].value = value;
	lx->nvars++;
	return 0;
}

static int end_word(lexer *lx)
{
	if (!lx->in_word)
		return 0;
	char *w = ppi_strdup(lx->buf ? lx->buf : "");
	if (!w)
		return -1;
	if (lx->out->n == lx->out->cap) {
		int cap = lx->out->cap ? lx->out->cap * 2 : 64;
		char **v = ppi_realloc(lx->out->w, (size_t)cap * sizeof *v);
		if (!v) {
			free(w);
			return -1;
		}
		lx->out->w = v;
		lx->out->cap = cap;
	}
	lx->out->w[lx->out->n++] = w;
	lx->len = 0;
	if (lx->buf)
		lx->buf[0] = '\0';
	lx->in_word = false;
	return record_assignment(lx, w);
}

/* $NAME, ${NAME}, ${NAME:-default}, ${NAME-default} at p (p[0] == '$'):
 * the value when the variable is known, the default when one is given,
 * the text as it stands otherwise.  Returns the position after it. */
static const char *expand(lexer *lx, const char *p, int *rc)
{
	const char *start = p;
	p++;
	if (p < lx->end && *p == '{') {
		const char *close = memchr(p, '}', (size_t)(lx->end - p));
		if (!close) {
			*rc = push_char(lx, '$');
			return start + 1;
		}
		const char *name = p + 1;
		size_t n = 0;
		while (name + n < close && name_char(name[n], n == 0))
			n++;
		const char *dflt = NULL;
		size_t dn = 0;
		if (name + n < close && name[n] == ':' && name + n + 1 < close &&
		    name[n + 1] == '-') {
			dflt = name + n + 2;
			dn = (size_t)(close - dflt);
		} else if (name + n < close && name[n] == '-') {
			dflt = name + n + 1;
			dn = (size_t)(close - dflt);
		} else if (name + n != close) {
			n = 0; /* ${A[@]}, ${#A}, ...: left as it stands */
		}
		const char *v = n ? lookup(lx, name, n) : NULL;
		if (v && *v)
			*rc = push_str(lx, v, strlen(v));
		else if (v && !dflt)
			lx->in_word = true;
		else if (dflt)
			*rc = push_str(lx, dflt, dn);
		else
			*rc = push_str(lx, start, (size_t)(close + 1 - start));
		return close + 1;
	}
	size_t n = 0;
	while (p + n < lx->end && name_char(p[n], n == 0))
		n++;
	const char *v = n ? lookup(lx, p, n) : NULL;
	if (v) {
		*rc = push_str(lx, v, strlen(v));
		lx->in_word = true;
	} else {
		*rc = push_str(lx, start, (size_t)(p + n - start));
	}
	return p + n;
}

void ppi_words_free(ppi_words *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->w[i]);
	free(w->w);
	memset(w, 0, sizeof *w);
}

pp_status ppi_shell_words(const char *text, size_t len, const char *source, ppi_words *out,
                          pp_error *err)
{
	memset(out, 0, sizeof *out);
	lexer lx = {text, text + len, out, NULL, 0, 0, {0}, NULL, 0, 0, 0, 0, false};
	lx.budget = len <= (SIZE_MAX - EXPAND_SLACK_BYTES) / EXPAND_RATIO
	                ? EXPAND_RATIO * len + EXPAND_SLACK_BYTES
	                : SIZE_MAX;
	const char *p = text;
	int rc = 0;
	int line = 1;
	while (p < lx.end && !rc) {
		char c = *p;
		if (c == '\0') {
			rc = -2;
			break;
		}
		if (c == '\n')
			line++;
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '|' ||
		    c == '&' || c == '(' || c == ')') {
			rc = end_word(&lx);
			p++;
		} else if (c == '#' && !lx.in_word) {
			while (p < lx.end && *p != '\n')
				p++;
		} else if (c == '\\') {
			if (p + 1 < lx.end && p[1] == '\n') {
				line++;
				p += 2;
			} else if (p + 2 < lx.end && p[1] == '\r' && p[2] == '\n') {
				line++;
				p += 3;
			} else if (p + 1 < lx.end) {
				rc = push_char(&lx, p[1]);
				p += 2;
			} else {
				p++;
			}
		} else if (c == '\'') {
			const char *close = memchr(p + 1, '\'', (size_t)(lx.end - p - 1));
			if (!close) {
				rc = -3;
				break;
			}
			rc = push_str(&lx, p + 1, (size_t)(close - p - 1));
			lx.in_word = true;
			p = close + 1;
		} else if (c == '"') {
			p++;
			lx.in_word = true;
			while (p < lx.end && *p != '"' && !rc) {
				if (*p == '\\' && p + 1 < lx.end && strchr("\"\\$`\n", p[1])) {
					if (p[1] != '\n')
						rc = push_char(&lx, p[1]);
					p += 2;
				} else if (*p == '$') {
					p = expand(&lx, p, &rc);
				} else {
					if (*p == '\n')
						line++;
					rc = push_char(&lx, *p++);
				}
			}
			if (p >= lx.end) {
				rc = -3;
				break;
			}
			p++;
		} else if (c == '$') {
			p = expand(&lx, p, &rc);
		} else {
			rc = push_char(&lx, c);
			p++;
		}
	}
	if (!rc)
		rc = end_word(&lx);
	free(lx.buf);
	for (int i = 0; i < lx.nvars; i++) {
		free(lx.vars[i].name);
		free(lx.vars[i].value);
	}
	free(lx.vars);
	ppi_strmap_free(&lx.names);
	if (rc) {
		ppi_words_free(out);
		if (rc == -4)
			return ppi_fail_at(
			    err, source, line, 0,
			    "shell variables expand to more than %d times the script's "
			    "size (%zu bytes): not a launch script paraplan reads",
			    EXPAND_RATIO, len);
		if (rc == -2)
			return ppi_fail_at(err, source, line, 0, "a NUL byte in the flags");
		if (rc == -3)
			return ppi_fail_at(err, source, line, 0, "an unterminated quote");
		return ppi_fail(err, source, "", "out of memory");
	}
	return PP_OK;
}
