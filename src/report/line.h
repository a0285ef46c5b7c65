/*
 * A text line built in a caller's buffer, piece by piece, and written once:
 * each piece is the bytes of the printf conversion named beside it, for
 * tables of thousands of rows (a `search --top 10000` table spent half its
 * time in snprintf and fprintf).  The line is cut, as snprintf cuts, at
 * cap - 1 characters, and always ends in '\0'.  Private to src/report.
 */
#ifndef PPI_REPORT_LINE_H
#define PPI_REPORT_LINE_H

#include <stddef.h>
#include <string.h>

typedef struct ppi_line {
	char *s;
	size_t n, cap; /* cap >= 1 */
} ppi_line;

/* An empty line in buf[cap]. */
static inline void ppi_line_init(ppi_line *l, char *buf, size_t cap)
{
	l->s = buf;
	l->n = 0;
	l->cap = cap;
	buf[0] = '\0';
}

/* n bytes of s. */
static inline void ppi_line_mem(ppi_line *l, const char *s, size_t n)
{
	if (l->n + n >= l->cap)
		n = l->cap - 1 - l->n;
	memcpy(l->s + l->n, s, n);
	l->n += n;
	l->s[l->n] = '\0';
}

/* "%s" */
static inline void ppi_line_str(ppi_line *l, const char *s)
{
	ppi_line_mem(l, s, strlen(s));
}

/* Spaces from column len to width. */
void ppi_line_pad(ppi_line *l, size_t len, int width);

/* "%-*s": s, then spaces up to width characters */
static inline void ppi_line_str_left(ppi_line *l, const char *s, int width)
{
	size_t len = strlen(s);
	ppi_line_mem(l, s, len);
	if (width > 0 && len < (size_t)width)
		ppi_line_pad(l, len, width);
}

/* "%*lld" */
static inline void ppi_line_int(ppi_line *l, long long v, int width)
{
	char buf[24], *end = buf + sizeof buf, *d = end;
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
	do {
		*--d = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--d = '-';
	if (width > 0 && (size_t)(end - d) < (size_t)width)
		ppi_line_pad(l, (size_t)(end - d), width);
	ppi_line_mem(l, d, (size_t)(end - d));
}
/* "%*.*f" with prec 0..3: digits of its own where the rounding of v * 10^prec
 * is certain, snprintf's where it is not (a near tie, NaN, inf, |v| >= 2^50
 * / 10^prec). */
void ppi_line_fixed(ppi_line *l, double v, int prec, int width);

#endif
