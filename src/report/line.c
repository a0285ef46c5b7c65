/*
 * Lines of text without printf (line.h).
 */
#include "line.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void ppi_line_init(ppi_line *l, char *buf, size_t cap)
{
	l->s = buf;
	l->n = 0;
	l->cap = cap;
	buf[0] = '\0';
}

static void put_mem(ppi_line *l, const char *s, size_t n)
{
	if (l->n + n >= l->cap)
		n = l->cap - 1 - l->n;
	memcpy(l->s + l->n, s, n);
	l->n += n;
	l->s[l->n] = '\0';
}

void ppi_line_str(ppi_line *l, const char *s)
{
	put_mem(l, s, strlen(s));
}

/* Spaces from column len to width. */
static void pad(ppi_line *l, size_t len, int width)
{
	static const char spaces[] = "                                ";
	while (width > 0 && len < (size_t)width) {
		size_t m = (size_t)width - len;
		if (m > sizeof spaces - 1)
			m = sizeof spaces - 1;
		put_mem(l, spaces, m);
		len += m;
	}
}

void ppi_line_str_left(ppi_line *l, const char *s, int width)
{
	size_t len = strlen(s);
	put_mem(l, s, len);
	pad(l, len, width);
}

/* The decimal digits of u, ending just before `end`; returns the first. */
static char *digits(unsigned long long u, char *end)
{
	do {
		*--end = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	return end;
}

void ppi_line_int(ppi_line *l, long long v, int width)
{
	char buf[24], *end = buf + sizeof buf;
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
	char *d = digits(u, end);
	if (v < 0)
		*--d = '-';
	pad(l, (size_t)(end - d), width);
	put_mem(l, d, (size_t)(end - d));
}

/*
 * The product y = |v| * 10^prec (10^prec exact) is the exact x within half an
 * ulp, |x - y| <= y * 2^-53.  Round to nearest moves only at half-integers:
 * when y is farther than y * 2^-52 from the nearest one, x rounds to the same
 * integer as y, which is then printed with prec digits after the point.  A
 * near tie (glibc rounds the exact value, ties to even) is left to snprintf.
 * Below 2^50 the fraction y - floor(y) and its distance to 1/2 are exact.
 */
void ppi_line_fixed(ppi_line *l, double v, int prec, int width)
{
	static const double scale[] = {1, 10, 100, 1000};
	static const unsigned long long iscale[] = {1, 10, 100, 1000};
	if (prec >= 0 && prec <= 3) {
		bool neg = signbit(v);
		double y = (neg ? -v : v) * scale[prec];
		if (y < 0x1p50) { /* false for NaN and inf */
			double f = floor(y), frac = y - f;
			if (fabs(frac - 0.5) > y * 0x1p-52) {
				unsigned long long n = (unsigned long long)f + (frac > 0.5);
				char buf[32], *end = buf + 24;
				char *d = digits(n / iscale[prec], end);
				if (neg)
					*--d = '-';
				if (prec > 0) {
					*end++ = '.';
					unsigned long long r = n % iscale[prec];
					for (int k = prec - 1; k >= 0; k--) {
						end[k] = (char)('0' + r % 10);
						r /= 10;
					}
					end += prec;
				}
				pad(l, (size_t)(end - d), width);
				put_mem(l, d, (size_t)(end - d));
				return;
			}
		}
	}
	char buf[512];
	int len = snprintf(buf, sizeof buf, "%*.*f", width, prec, v);
	if (len > 0)
		put_mem(l, buf, (size_t)len < sizeof buf ? (size_t)len : sizeof buf - 1);
}
