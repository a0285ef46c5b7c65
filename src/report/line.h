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

typedef struct ppi_line {
	char *s;
	size_t n, cap; /* cap >= 1 */
} ppi_line;

/* An empty line in buf[cap]. */
void ppi_line_init(ppi_line *l, char *buf, size_t cap);
/* "%s" */
void ppi_line_str(ppi_line *l, const char *s);
/* "%-*s": s, then spaces up to width characters */
void ppi_line_str_left(ppi_line *l, const char *s, int width);
/* "%*lld" */
void ppi_line_int(ppi_line *l, long long v, int width);
/* "%*.*f" with prec 0..3: digits of its own where the rounding of v * 10^prec
 * is certain, snprintf's where it is not (a near tie, NaN, inf, |v| >= 2^50
 * / 10^prec). */
void ppi_line_fixed(ppi_line *l, double v, int prec, int width);

#endif
