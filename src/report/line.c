/*
 * Lines of text without printf (line.h).
 */
#include "line.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void ppi_line_pad(ppi_line *l, size_t len, int width)
{
	static const char spaces[] = "                                ";
	while (width > 0 && len < (size_t)width) {
		size_t m = (size_t)width - len;
		if (m > sizeof spaces - 1)
			m = sizeof spaces - 1;
		ppi_line_mem(l, spaces, m);
		len += m;
	}
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
			unsigned long long whole = (unsigned long long)y; /* floor: y >= 0 */
			double frac = y - (double)whole;
			if (fabs(frac - 0.5) > y * 0x1p-52) {
				unsigned long long n = whole + (frac > 0.5);
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
				ppi_line_pad(l, (size_t)(end - d), width);
				ppi_line_mem(l, d, (size_t)(end - d));
				return;
			}
		}
	}
	char buf[512];
	int len = snprintf(buf, sizeof buf, "%*.*f", width, prec, v);
	if (len > 0)
		ppi_line_mem(l, buf, (size_t)len < sizeof buf ? (size_t)len : sizeof buf - 1);
}
