#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

void pp_error_clear(pp_error *err)
{
	if (err)
		memset(err, 0, sizeof *err);
}

char *pp_error_format(const pp_error *err, char *buf, size_t n)
{
	size_t off = 0;
	if (!buf || n == 0)
		return buf;
	buf[0] = '\0';
	if (!err)
		return buf;
#define PPI_APPEND(...)                                                                            \
	do {                                                                                       \
		if (off < n) {                                                                     \
			int w_ = snprintf(buf + off, n - off, __VA_ARGS__);                        \
			if (w_ > 0)                                                                \
				off += (size_t)w_;                                                 \
		}                                                                                  \
	} while (0)
	if (err->source[0]) {
		PPI_APPEND("%s", err->source);
		if (err->line > 0)
			PPI_APPEND(":%d:%d", err->line, err->column);
		PPI_APPEND(": ");
	}
	if (err->field[0])
		PPI_APPEND("%s: ", err->field);
	PPI_APPEND("%s", err->text[0] ? err->text : "unknown error");
#undef PPI_APPEND
	return buf;
}

static pp_status vfail(pp_error *err, const char *source, int line, int column, const char *field,
                       const char *fmt, va_list ap) PPI_PRINTF(6, 0);
static pp_status vfail(pp_error *err, const char *source, int line, int column, const char *field,
                       const char *fmt, va_list ap)
{
	if (!err)
		return PP_EINPUT;
	memset(err, 0, sizeof *err);
	ppi_strlcpy(err->source, source ? source : "", sizeof err->source);
	err->line = line;
	err->column = column;
	ppi_strlcpy(err->field, field ? field : "", sizeof err->field);
	vsnprintf(err->text, sizeof err->text, fmt, ap);
	return PP_EINPUT;
}

pp_status ppi_fail(pp_error *err, const char *source, const char *field, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pp_status st = vfail(err, source, 0, 0, field, fmt, ap);
	va_end(ap);
	return st;
}

pp_status ppi_fail_at(pp_error *err, const char *source, int line, int column, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pp_status st = vfail(err, source, line, column, NULL, fmt, ap);
	va_end(ap);
	return st;
}

int ppi_divisors(long long n, int *out, int cap)
{
	/* The divisors up to sqrt(n) ascending in `lo`, their co-divisors n / d
	 * (descending) in `hi`. */
	int lo[PPI_DIVISORS_MAX], hi[PPI_DIVISORS_MAX];
	int nlo = 0, nhi = 0, k = 0;
	if (n < 1 || n > PPI_DIVISORS_N_MAX)
		return 0;
	for (long long d = 1; d * d <= n; d++)
		if (n % d == 0) {
			lo[nlo++] = (int)d;
			if (d * d != n)
				hi[nhi++] = (int)(n / d);
		}
	for (int i = 0; i < nlo && k < cap; i++)
		out[k++] = lo[i];
	for (int i = nhi - 1; i >= 0 && k < cap; i--)
		out[k++] = hi[i];
	return k;
}

long ppi_find_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = hay; *p; p++) {
		size_t i = 0;
		while (i < n && p[i] &&
		       tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return (long)(p - hay);
	}
	return -1;
}

bool ppi_contains(const char *hay, const char *needle)
{
	return hay && ppi_find_ci(hay, needle) >= 0;
}

bool ppi_streq(const char *a, const char *b)
{
	if (!a || !b)
		return false;
	while (*a && *b) {
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
		a++;
		b++;
	}
	return *a == *b;
}

void ppi_strlcpy(char *dst, const char *src, size_t n)
{
	if (n == 0)
		return;
	size_t len = strlen(src);
	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* Levenshtein distance, case-insensitive, on strings up to 63 chars. */
static int edit_distance(const char *a, const char *b)
{
	enum { MAXL = 64 };
	size_t la = strlen(a), lb = strlen(b);
	if (la >= MAXL || lb >= MAXL)
		return 1000;
	int prev[MAXL + 1], cur[MAXL + 1];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			int v = prev[j - 1] + cost;
			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			cur[j] = v;
		}
		memcpy(prev, cur, sizeof(int) * (lb + 1));
	}
	return prev[lb];
}

void ppi_suggest_init(ppi_suggest *s, const char *word)
{
	memset(s, 0, sizeof *s);
	s->word = word;
	for (int i = 0; i < 3; i++)
		s->dist[i] = 1 << 20;
}

void ppi_suggest_add(ppi_suggest *s, const char *candidate)
{
	int d = edit_distance(s->word, candidate);
	/* A candidate that contains the word (or vice versa) is a near miss too:
	 * "llama3" should suggest "llama3-8b". */
	size_t lw = strlen(s->word), lc = strlen(candidate);
	if (lw >= 3 && lc > lw && strncasecmp(candidate, s->word, lw) == 0)
		d = d < 2 ? d : 2;
	for (int i = 0; i < 3; i++) {
		if (s->best[i] && ppi_streq(s->best[i], candidate))
			return;
	}
	for (int i = 0; i < 3; i++) {
		if (d < s->dist[i]) {
			for (int k = 2; k > i; k--) {
				s->dist[k] = s->dist[k - 1];
				s->best[k] = s->best[k - 1];
			}
			s->dist[i] = d;
			s->best[i] = candidate;
			return;
		}
	}
}

bool ppi_suggest_render(const ppi_suggest *s, char *out, size_t n)
{
	size_t lw = strlen(s->word);
	int limit = (int)(lw / 2 > 2 ? lw / 2 : 2);
	int k = 0;
	const char *pick[3];
	/* Only the nearest: "hiden_size" suggests 'hidden_size', not every
	 * other *_size key that happens to lie within the limit. */
	for (int i = 0; i < 3; i++)
		if (s->best[i] && s->dist[i] <= limit && s->dist[i] <= s->dist[0])
			pick[k++] = s->best[i];
	if (k == 0) {
		if (n)
			out[0] = '\0';
		return false;
	}
	if (k == 1)
		snprintf(out, n, "'%s'", pick[0]);
	else if (k == 2)
		snprintf(out, n, "'%s' or '%s'", pick[0], pick[1]);
	else
		snprintf(out, n, "'%s', '%s' or '%s'", pick[0], pick[1], pick[2]);
	return true;
}

/* What a file that is not a regular file is, for the message. */
static const char *file_kind(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
	                     : "not a regular file";
}

pp_status ppi_read_file(const char *path, char **text, size_t *len, pp_error *err)
{
	*text = NULL;
	*len = 0;
	bool in = strcmp(path, "-") == 0;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below. */
	int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return ppi_fail(err, path, NULL, "cannot open: %s", strerror(errno));
	struct stat sb;
	if (!in) {
		if (fstat(fd, &sb) != 0) {
			int e = errno;
			close(fd);
			return ppi_fail(err, path, NULL, "cannot read: %s", strerror(e));
		}
		if (S_ISDIR(sb.st_mode)) {
			close(fd);
			return ppi_fail(err, path, NULL, "is a directory, not a JSON file");
		}
		if (!S_ISREG(sb.st_mode)) {
			close(fd);
			return ppi_fail(err, path, NULL,
			                "is %s, not a regular file (give a file, or - for standard "
			                "input)",
			                file_kind(sb.st_mode));
		}
		if (sb.st_size > (off_t)PPI_FILE_MAX) {
			close(fd);
			return ppi_fail(err, path, NULL, "file is larger than %d MiB",
			                PPI_FILE_MAX_MIB);
		}
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	/* Read at most PPI_FILE_MAX bytes, and one more to tell that there are more. */
	size_t cap = 1 << 16, n = 0;
	char *buf = ppi_malloc(cap + 1);
	pp_status st = PP_OK;
	while (buf) {
		if (n == cap) {
			if (n > PPI_FILE_MAX) {
				st = ppi_fail(err, path, NULL, "file is larger than %d MiB",
				              PPI_FILE_MAX_MIB);
				break;
			}
			size_t ncap = cap * 2 > PPI_FILE_MAX ? PPI_FILE_MAX + 1 : cap * 2;
			char *nb = ppi_realloc(buf, ncap + 1);
			if (!nb) {
				st = PP_ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			st = ppi_fail(err, path, NULL, "cannot read: %s", strerror(errno));
			break;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if (!in)
		close(fd);
	if (!buf)
		return PP_ENOMEM;
	if (st) {
		free(buf);
		return st;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return PP_OK;
}

pp_status ppi_json_parse_object(const char *text, size_t len, const char *source, json_t **root,
                                pp_error *err)
{
	json_error_t je;
	long long failed = ppi_alloc_failed();
	ppi_alloc_shield(true);
	*root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	ppi_alloc_shield(false);
	if (ppi_alloc_failed() != failed) {
		/* jansson's lexer drops a character it cannot buffer and goes on:
		 * any failed allocation makes the document untrustworthy. */
		json_decref(*root);
		*root = NULL;
		return ppi_oom(err);
	}
	if (!*root) {
		/* jansson counts columns in characters from 1; a message about end of
		 * input after a complete value is reported at the offending token. */
		return ppi_fail_at(err, source, je.line > 0 ? je.line : 1,
		                   je.column > 0 ? je.column : 1, "invalid JSON: %s", je.text);
	}
	if (!json_is_object(*root)) {
		json_decref(*root);
		*root = NULL;
		return ppi_fail_at(err, source, 1, 1, "expected a JSON object at the top level");
	}
	return PP_OK;
}

const char *ppi_obj_path(const ppi_obj *r, const char *key, char *buf, size_t n)
{
	if (r->prefix && r->prefix[0])
		snprintf(buf, n, "%s.%s", r->prefix, key);
	else
		snprintf(buf, n, "%s", key);
	return buf;
}

pp_status ppi_obj_keys(const ppi_obj *r, const char *const *allowed)
{
	const char *key;
	json_t *val;
	json_object_foreach (r->obj, key, val) {
		bool ok = false;
		for (const char *const *a = allowed; *a; a++)
			if (strcmp(*a, key) == 0) {
				ok = true;
				break;
			}
		if (ok)
			continue;
		ppi_suggest sg;
		ppi_suggest_init(&sg, key);
		for (const char *const *a = allowed; *a; a++)
			ppi_suggest_add(&sg, *a);
		char near[200], path[PP_ERROR_FIELD_MAX];
		ppi_obj_path(r, key, path, sizeof path);
		if (ppi_suggest_render(&sg, near, sizeof near))
			return ppi_fail(r->err, r->source, path, "unknown key; did you mean %s?",
			                near);
		return ppi_fail(r->err, r->source, path, "unknown key");
	}
	return PP_OK;
}

void ppi_json_repr(const json_t *v, char *buf, size_t n)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: snprintf(buf, n, "an object"); break;
	case JSON_ARRAY: snprintf(buf, n, "an array"); break;
	case JSON_STRING: snprintf(buf, n, "the string \"%.40s\"", json_string_value(v)); break;
	case JSON_INTEGER: snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
	case JSON_REAL: snprintf(buf, n, "%.17g", json_real_value(v)); break;
	case JSON_TRUE: snprintf(buf, n, "true"); break;
	case JSON_FALSE: snprintf(buf, n, "false"); break;
	case JSON_NULL: snprintf(buf, n, "null"); break;
	}
}

static json_t *lookup(const ppi_obj *r, const char *key, bool required, pp_status *st)
{
	json_t *v = json_object_get(r->obj, key);
	*st = PP_OK;
	if (!v || json_is_null(v)) {
		if (required) {
			char path[PP_ERROR_FIELD_MAX];
			*st = ppi_fail(r->err, r->source, ppi_obj_path(r, key, path, sizeof path),
			               "missing required key");
		}
		return NULL;
	}
	return v;
}

pp_status ppi_get_ll(const ppi_obj *r, const char *key, bool required, long long min, long long max,
                     long long *out)
{
	pp_status st;
	json_t *v = lookup(r, key, required, &st);
	if (!v)
		return st;
	char path[PP_ERROR_FIELD_MAX], got[80];
	ppi_obj_path(r, key, path, sizeof path);
	long long x;
	if (json_is_integer(v)) {
		x = (long long)json_integer_value(v);
	} else if (json_is_real(v) && isfinite(json_real_value(v)) &&
	           json_real_value(v) == floor(json_real_value(v)) &&
	           fabs(json_real_value(v)) < 9.0e15) {
		x = (long long)json_real_value(v); /* 1e6 written as a real is still whole */
	} else {
		ppi_json_repr(v, got, sizeof got);
		return ppi_fail(r->err, r->source, path, "expected an integer, got %s", got);
	}
	if (x < min || x > max)
		return ppi_fail(r->err, r->source, path,
		                "expected an integer in %lld..%lld, got %lld", min, max, x);
	*out = x;
	return PP_OK;
}

pp_status ppi_get_int(const ppi_obj *r, const char *key, bool required, long long min,
                      long long max, int *out)
{
	long long x = *out;
	pp_status st = ppi_get_ll(r, key, required, min, max, &x);
	if (st == PP_OK)
		*out = (int)x;
	return st;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

pp_status ppi_get_num(const ppi_obj *r, const char *key, bool required, double min, double max,
                      double *out)
{
	pp_status st;
	json_t *v = lookup(r, key, required, &st);
	if (!v)
		return st;
	char path[PP_ERROR_FIELD_MAX], got[80];
	ppi_obj_path(r, key, path, sizeof path);
	if (!json_is_number(v)) {
		ppi_json_repr(v, got, sizeof got);
		return ppi_fail(r->err, r->source, path, "expected a number, got %s", got);
	}
	double x = json_number_value(v);
	if (!isfinite(x) || x < min || x > max) {
		/* A value that fits once scaled by 1e9 or 1e12 was most likely given in
		 * GB or TFLOP/s; the key's suffix names the unit it wants. */
		const char *hint = "";
		if (x > 0 && x < min) {
			if (has_suffix(key, "_bytes") && x * 1e9 >= min && x * 1e9 <= max)
				hint = " (the unit is bytes: was this GB?)";
			else if (has_suffix(key, "_bytes_per_s") && x * 1e9 >= min &&
			         x * 1e9 <= max)
				hint = " (the unit is bytes/s: was this GB/s?)";
			else if (has_suffix(key, "_flops") && x * 1e12 >= min && x * 1e12 <= max)
				hint = " (the unit is FLOP/s: was this TFLOP/s?)";
		}
		return ppi_fail(r->err, r->source, path, "expected a number in %g..%g, got %g%s",
		                min, max, x, hint);
	}
	/* A subnormal (1e-320) is no measurement and no setting: dividing by it
	 * gives infinity (the same rule as ppi_parse_double). */
	if (x != 0 && fabs(x) < DBL_MIN) {
		ppi_json_repr(v, got, sizeof got);
		return ppi_fail(r->err, r->source, path, "%s is too close to 0 to be a number read",
		                got);
	}
	*out = x;
	return PP_OK;
}

pp_status ppi_get_bool(const ppi_obj *r, const char *key, bool required, bool *out)
{
	pp_status st;
	json_t *v = lookup(r, key, required, &st);
	if (!v)
		return st;
	if (!json_is_boolean(v)) {
		char path[PP_ERROR_FIELD_MAX], got[80];
		ppi_json_repr(v, got, sizeof got);
		return ppi_fail(r->err, r->source, ppi_obj_path(r, key, path, sizeof path),
		                "expected true or false, got %s", got);
	}
	*out = json_is_true(v);
	return PP_OK;
}

pp_status ppi_get_str(const ppi_obj *r, const char *key, bool required, char *out, size_t n)
{
	pp_status st;
	json_t *v = lookup(r, key, required, &st);
	if (!v)
		return st;
	char path[PP_ERROR_FIELD_MAX];
	ppi_obj_path(r, key, path, sizeof path);
	if (!json_is_string(v)) {
		char got[80];
		ppi_json_repr(v, got, sizeof got);
		return ppi_fail(r->err, r->source, path, "expected a string, got %s", got);
	}
	if (json_string_length(v) >= n)
		return ppi_fail(r->err, r->source, path, "string longer than %zu characters",
		                n - 1);
	ppi_strlcpy(out, json_string_value(v), n);
	return PP_OK;
}

pp_status ppi_get_obj(const ppi_obj *r, const char *key, bool required, json_t **out)
{
	pp_status st;
	*out = NULL;
	json_t *v = lookup(r, key, required, &st);
	if (!v)
		return st;
	if (!json_is_object(v)) {
		char path[PP_ERROR_FIELD_MAX], got[80];
		ppi_json_repr(v, got, sizeof got);
		return ppi_fail(r->err, r->source, ppi_obj_path(r, key, path, sizeof path),
		                "expected an object, got %s", got);
	}
	*out = v;
	return PP_OK;
}
