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

/* Fill `err` (may be NULL) and return PP_EINPUT. */
pp_status ppi_fail(pp_error *err, const char *source, const char *field, const char *fmt, ...)
    PPI_PRINTF(4, 5);
pp_status ppi_fail_at(pp_error *err, const char *source, int line, int column, const char *fmt, ...)
    PPI_PRINTF(5, 6);

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

#endif
