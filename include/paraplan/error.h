/*
 * paraplan — status codes and the caller-allocated error record.
 *
 * Every library function that can fail on input returns a pp_status and, on
 * failure, fills a pp_error the caller owns (like jansson's json_error_t).  The
 * library never prints, exits or aborts on bad input.
 */
#ifndef PARAPLAN_ERROR_H
#define PARAPLAN_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pp_status {
	PP_OK = 0,
	PP_EINPUT = 1,    /* bad input: file, JSON, value, or an inconsistent plan */
	PP_ENOMEM = 2,    /* allocation failed */
	PP_EINTERNAL = 3, /* a bug: an invariant of the library did not hold */
} pp_status;

#define PP_ERROR_SOURCE_MAX 256
#define PP_ERROR_FIELD_MAX 128
#define PP_ERROR_TEXT_MAX 320

/*
 * Where and what went wrong.  `source` is a file name, "preset", or
 * "command line"; `line`/`column` are 1-based and 0 when not known (semantic
 * errors found after parsing name the `field` instead, as a dotted path such as
 * "model.hidden_size" or "plan.tp").
 */
typedef struct pp_error {
	char source[PP_ERROR_SOURCE_MAX];
	int line;
	int column;
	char field[PP_ERROR_FIELD_MAX];
	char text[PP_ERROR_TEXT_MAX];
} pp_error;

/* Empties `err` (safe on NULL). */
void pp_error_clear(pp_error *err);

/*
 * Renders `err` as one line, "source:line:col: field: text", leaving out the
 * parts that are unknown.  Writes at most `n` bytes including the NUL into
 * `buf` (caller-owned) and returns `buf`.
 */
char *pp_error_format(const pp_error *err, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
