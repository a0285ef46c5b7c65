/*
 * The one reader of numbers written in text, and a string set for linear
 * duplicate checks (util.h).
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Longest number text read: longer is not a number anyone wrote. */
#define NUM_TEXT_MAX 64

/* The token as a NUL-terminated copy in buf; false when empty or too long. */
static bool copy_token(const char *s, size_t n, char *buf, size_t *len)
{
	if (n == (size_t)-1)
		n = strlen(s);
	*len = n;
	if (n == 0 || n >= NUM_TEXT_MAX)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return memchr(buf, '\0', n) == NULL;
}

/* The token for a message: at most 32 characters, control characters as '?'. */
static void shown(const char *s, size_t n, char *out, size_t n_out)
{
	if (n == (size_t)-1)
		n = strlen(s);
	size_t k = 0;
	for (size_t i = 0; i < n && k + 4 < n_out && i < 32; i++)
		out[k++] = isprint((unsigned char)s[i]) ? s[i] : '?';
	if (n > 32 && k + 4 < n_out) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

bool ppi_parse_double(const char *s, size_t n, double lo, double hi, double *out, char *why,
                      size_t n_why)
{
	char buf[NUM_TEXT_MAX], show[48];
	size_t len;
	bool ok = copy_token(s, n, buf, &len);
	shown(s, len, show, sizeof show);
	/* strtod would skip a leading blank and read hexadecimal, "inf" and
	 * "nan": none of them is a number a log or a file writes. */
	if (ok && !(isdigit((unsigned char)buf[0]) ||
	            ((buf[0] == '-' || buf[0] == '+' || buf[0] == '.') &&
	             (isdigit((unsigned char)buf[1]) || buf[1] == '.'))))
		ok = false;
	if (ok && strpbrk(buf, "xXnN"))
		ok = false;
	char *end = buf;
	errno = 0;
	double v = ok ? strtod(buf, &end) : 0;
	if (!ok || end == buf || *end) {
		snprintf(why, n_why, "expected a number, got '%s'", show);
		return false;
	}
	if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1)) {
		snprintf(why, n_why, "%s is not a finite number", show);
		return false;
	}
	if ((v != 0 && fabs(v) < DBL_MIN) ||
	    (errno == ERANGE && v == 0 && strpbrk(buf, "123456789"))) {
		snprintf(why, n_why, "%s is too close to 0 to be a measurement", show);
		return false;
	}
	if (!(v >= lo && v <= hi)) {
		snprintf(why, n_why, "expected a number in [%g, %g], got %s", lo, hi, show);
		return false;
	}
	*out = v;
	return true;
}

bool ppi_parse_ll(const char *s, size_t n, long long lo, long long hi, long long *out, char *why,
                  size_t n_why)
{
	char buf[NUM_TEXT_MAX], show[48];
	size_t len;
	bool ok = copy_token(s, n, buf, &len);
	shown(s, len, show, sizeof show);
	const char *d = ok && (buf[0] == '-' || buf[0] == '+') ? buf + 1 : buf;
	if (ok && !isdigit((unsigned char)*d))
		ok = false;
	char *end = buf;
	errno = 0;
	long long v = ok ? strtoll(buf, &end, 10) : 0;
	if (!ok || *end) {
		snprintf(why, n_why, "expected an integer, got '%s'", show);
		return false;
	}
	if (errno == ERANGE || v < lo || v > hi) {
		snprintf(why, n_why, "expected an integer in %lld..%lld, got %s", lo, hi, show);
		return false;
	}
	*out = v;
	return true;
}

bool ppi_mul_ll(long long a, long long b, long long *out)
{
	long long r;
	if (__builtin_mul_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}

/* ------------------------------------------------------------ string set */

static unsigned long long fnv1a(const char *s, size_t n)
{
	unsigned long long h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static ppi_strmap_entry *probe(const ppi_strmap *m, const char *key, size_t len,
                               unsigned long long h)
{
	size_t mask = m->cap - 1;
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		ppi_strmap_entry *e = &m->slot[i];
		if (!e->key || (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0))
			return e;
	}
}

ppi_strmap_entry *ppi_strmap_find(const ppi_strmap *m, const char *key, size_t len)
{
	if (m->cap == 0)
		return NULL;
	ppi_strmap_entry *e = probe(m, key, len, fnv1a(key, len));
	return e->key ? e : NULL;
}

ppi_strmap_entry *ppi_strmap_add(ppi_strmap *m, const char *key, size_t len, bool *added)
{
	*added = false;
	if (2 * (m->n + 1) > m->cap) { /* at most half full: short probes */
		size_t cap = m->cap ? 2 * m->cap : 64;
		ppi_strmap_entry *s = ppi_calloc(cap, sizeof *s);
		if (!s)
			return NULL;
		ppi_strmap old = *m;
		m->slot = s;
		m->cap = cap;
		for (size_t i = 0; i < old.cap; i++)
			if (old.slot[i].key)
				*probe(m, old.slot[i].key, old.slot[i].len, old.slot[i].hash) =
				    old.slot[i];
		free(old.slot);
	}
	unsigned long long h = fnv1a(key, len);
	ppi_strmap_entry *e = probe(m, key, len, h);
	if (e->key)
		return e;
	char *k = ppi_malloc(len + 1);
	if (!k)
		return NULL;
	memcpy(k, key, len);
	k[len] = '\0';
	e->key = k;
	e->len = len;
	e->hash = h;
	e->value = 0;
	m->n++;
	*added = true;
	return e;
}

void ppi_strmap_free(ppi_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slot[i].key);
	free(m->slot);
	memset(m, 0, sizeof *m);
}
