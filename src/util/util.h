/*
 * Private helpers shared by the modules (prefix ppi_): error filling, JSON
 * field readers that reject unknown keys and wrong types with a field path,
 * and "did you mean" suggestions.  Never part of the public API.
 */
#ifndef PPI_UTIL_H
#define PPI_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "paraplan/error.h"

#if defined(__GNUC__)
#define PPI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PPI_PRINTF(a, b)
#endif

/* Return from the calling function when a status is not PP_OK. */
#define PPI_TRY(x)                                                                                 \
	do {                                                                                       \
		pp_status ppi_st_ = (x);                                                           \
		if (ppi_st_ != PP_OK)                                                              \
			return ppi_st_;                                                            \
	} while (0)

/*
 * Every allocation of the library goes through these (src/util/alloc.c), so
 * that a test can fail each one in turn.  Same contracts as malloc, calloc,
 * realloc and strdup; the memory is released with free().
 */
void *ppi_malloc(size_t n);
void *ppi_calloc(size_t n, size_t size);
void *ppi_realloc(void *p, size_t n);
char *ppi_strdup(const char *s);
/*
 * Fault injection, for tests only (tests/oom_main.c): count the allocations
 * from now on and fail the `fail_at`-th (1-based; 0 = none fails), and the
 * later ones too when `sticky`.  Routes jansson's allocations through the
 * counter as well (json_set_alloc_funcs), so a JSON value that cannot be
 * built fails like any other allocation.  Not thread-safe to call while the
 * library runs; the counting itself is atomic.
 */
void ppi_alloc_inject(long long fail_at, bool sticky);
/* Allocations counted since ppi_alloc_inject (or the start), and how many
 * failed (injected or real): a caller that gets a bare failure from code that
 * allocates inside (jansson) tells out-of-memory from bad input by whether
 * ppi_alloc_failed() moved. */
long long ppi_alloc_count(void);
long long ppi_alloc_failed(void);
/* Around jansson's parser: its allocations are counted but never failed on
 * purpose (ppi_alloc_shielded says how many), see alloc.c.  Nests. */
void ppi_alloc_shield(bool on);
long long ppi_alloc_shielded(void);

/* Fill `err` (may be NULL) with "out of memory" and return PP_ENOMEM. */
pp_status ppi_oom(pp_error *err);

/* Fill `err` (may be NULL) and return PP_EINPUT. */
pp_status ppi_fail(pp_error *err, const char *source, const char *field, const char *fmt, ...)
    PPI_PRINTF(4, 5);
pp_status ppi_fail_at(pp_error *err, const char *source, int line, int column, const char *fmt, ...)
    PPI_PRINTF(5, 6);

/*
 * The divisors of n (1 <= n <= PPI_DIVISORS_N_MAX) in increasing order, into
 * out[0..cap); returns how many were written (all of them when cap is at
 * least PPI_DIVISORS_MAX).  Trial division up to sqrt(n): O(sqrt(n)), so a
 * caller that needs the divisors of many divisors of one n filters this list
 * once instead of looping up to each.
 */
#define PPI_DIVISORS_N_MAX 1000000000LL
/* The most divisors of any n <= 1e9: 1344, of 735134400 = 2^6 3^3 5^2 7 11 13 17
 * (the largest highly composite number under 1e9, OEIS A002182). */
#define PPI_DIVISORS_MAX 1344
int ppi_divisors(long long n, int *out, int cap);

/* Offset of the first case-insensitive occurrence of needle in hay, or -1. */
long ppi_find_ci(const char *hay, const char *needle);
/* Case-insensitive substring test; false when `hay` is NULL. */
bool ppi_contains(const char *hay, const char *needle);
/* Case-insensitive equality. */
bool ppi_streq(const char *a, const char *b);
/* Copy with truncation; always NUL-terminates when n > 0. */
void ppi_strlcpy(char *dst, const char *src, size_t n);

/*
 * Suggestions: keep the up-to-3 candidates nearest to `word` by edit distance
 * (case-insensitive), then render them as "'a', 'b' or 'c'" into `out`.
 */
typedef struct ppi_suggest {
	const char *word;
	const char *best[3];
	int dist[3];
} ppi_suggest;
void ppi_suggest_init(ppi_suggest *s, const char *word);
void ppi_suggest_add(ppi_suggest *s, const char *candidate);
/* Returns false when nothing is near enough to be worth suggesting. */
bool ppi_suggest_render(const ppi_suggest *s, char *out, size_t n);

/*
 * Read a whole file into a malloc'ed buffer the caller frees.  The file must be
 * a regular file (a directory, FIFO or device is refused without blocking) of
 * at most PPI_FILE_MAX bytes, or "-" for standard input (the same limit).
 */
#define PPI_FILE_MAX_MIB 64
#define PPI_FILE_MAX ((size_t)PPI_FILE_MAX_MIB << 20)
pp_status ppi_read_file(const char *path, char **text, size_t *len, pp_error *err);

/* ---- JSON object reader -------------------------------------------------
 * A reader walks one JSON object: it checks keys against an allowed list and
 * reads typed fields, naming "prefix.key" in every message.
 */
typedef struct ppi_obj {
	json_t *obj;
	const char *source;
	const char *prefix; /* "model", "plan", ... (may be "") */
	pp_error *err;
} ppi_obj;

/* Parse `text` into a JSON object; syntax errors carry line and column. */
pp_status ppi_json_parse_object(const char *text, size_t len, const char *source, json_t **root,
                                pp_error *err);
/* Reject the first key of r->obj that is not in the NULL-terminated `allowed`. */
pp_status ppi_obj_keys(const ppi_obj *r, const char *const *allowed);
/* Render "prefix.key" into buf. */
const char *ppi_obj_path(const ppi_obj *r, const char *key, char *buf, size_t n);

/*
 * Typed getters.  With `required` false a missing (or null) key leaves *out
 * untouched and succeeds.  Numbers must lie in [min, max].
 */
pp_status ppi_get_int(const ppi_obj *r, const char *key, bool required, long long min,
                      long long max, int *out);
pp_status ppi_get_ll(const ppi_obj *r, const char *key, bool required, long long min, long long max,
                     long long *out);
pp_status ppi_get_num(const ppi_obj *r, const char *key, bool required, double min, double max,
                      double *out);
pp_status ppi_get_bool(const ppi_obj *r, const char *key, bool required, bool *out);
pp_status ppi_get_str(const ppi_obj *r, const char *key, bool required, char *out, size_t n);
/* A nested object, or NULL when absent and not required. */
pp_status ppi_get_obj(const ppi_obj *r, const char *key, bool required, json_t **out);

/* Value of a number the way a user wrote it, for messages. */
void ppi_json_repr(const json_t *v, char *buf, size_t n);

/* ---- Numbers in text --------------------------------------------------
 * The one reader of numbers written in text (nccl-tests logs, mpiGraph,
 * CSV and step-time files, Megatron flags, TOML): the whole of s[0..n)
 * (n == (size_t)-1: up to the NUL) must be the number, with no blank before
 * or characters after it ("9.07abc" is refused), finite, not subnormal
 * (1e-320), within [lo, hi].  On failure false, and `why` (n_why bytes)
 * says what is wrong, for the caller to put its place in front:
 * "expected a number, got '9.07abc'", "1e999 is not a finite number",
 * "expected a number in [0, 1], got 2".  Pass the parameter registry's
 * valid range (pp_param valid_lo, valid_hi) where the value is one.
 */
bool ppi_parse_double(const char *s, size_t n, double lo, double hi, double *out, char *why,
                      size_t n_why);
/* The same for a decimal integer (an optional sign, digits only). */
bool ppi_parse_ll(const char *s, size_t n, long long lo, long long hi, long long *out, char *why,
                  size_t n_why);
/* a * b into *out; false (and *out untouched) when it overflows. */
bool ppi_mul_ll(long long a, long long b, long long *out);

/* ---- A set of strings -------------------------------------------------
 * Open addressing (FNV-1a), amortised O(1) per key, so that duplicate checks
 * and de-duplication stay linear in their input.  Keys are copied; each
 * carries a caller's value (a count, an index).
 */
typedef struct ppi_strmap_entry {
	char *key; /* NULL: an empty slot */
	size_t len;
	unsigned long long hash;
	long long value;
} ppi_strmap_entry;

typedef struct ppi_strmap {
	ppi_strmap_entry *slot;
	size_t cap, n;
} ppi_strmap;

/* The entry of key[0..len), or NULL. */
ppi_strmap_entry *ppi_strmap_find(const ppi_strmap *m, const char *key, size_t len);
/* The entry of key[0..len), added (value 0, *added true) when absent; NULL
 * when out of memory.  An entry pointer is valid until the next add. */
ppi_strmap_entry *ppi_strmap_add(ppi_strmap *m, const char *key, size_t len, bool *added);
void ppi_strmap_free(ppi_strmap *m);

#endif
