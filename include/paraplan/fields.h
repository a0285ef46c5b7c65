/*
 * The job's and plan's fields by name (the words of the command line: "tp",
 * "gbs", "fp8-recipe"), like params.h for the system's parameters: one table
 * that says each field's kind, range and place in pp_job or pp_plan, and one
 * setter that checks a value's form and range.  The library checks meaning
 * (tp divides the heads, ...) later, in pp_estimate_run.
 */
#ifndef PARAPLAN_FIELDS_H
#define PARAPLAN_FIELDS_H

#include <stddef.h>

#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pp_field_kind {
	PP_FIELD_INT,   /* a whole number in [lo, hi] */
	PP_FIELD_ONOFF, /* on/off, true/false, 1/0 */
	PP_FIELD_COUNT, /* a count, "15T" or "1.5e13" */
	PP_FIELD_WORD   /* a word of a set (an enum, a rank order): `parse` */
} pp_field_kind;

typedef struct pp_field {
	const char *name;   /* "tp" */
	const char *member; /* "plan.tp": the field library errors name */
	bool in_plan;       /* in pp_plan, else in pp_job */
	size_t offset;      /* of the member in pp_plan or pp_job */
	size_t width;       /* sizeof the member (PP_FIELD_INT: int or long long) */
	pp_field_kind kind;
	long long lo, hi;
	/* PP_FIELD_WORD: `text` into the member at `dst`; PP_EINPUT with
	 * err->text set (the field is set by pp_field_set). */
	pp_status (*parse)(const char *text, void *dst, pp_error *err);
} pp_field;

/* The i-th field (0, 1, ... in the table's order), NULL past the last.  The
 * table is static: the caller owns nothing. */
const pp_field *pp_field_at(size_t i);

/* The field named `name` exactly, or NULL. */
const pp_field *pp_field_find(const char *name);

/*
 * Set the field `name` of `job` or `plan` from `text`: PP_OK, or PP_EINPUT
 * (an unknown name, a malformed or out-of-range value) with err->field
 * "--name", no source, and the text the command line prints ("expected an
 * integer, got 'x'").  On an error nothing is written.
 */
pp_status pp_field_set(pp_job *job, pp_plan *plan, const char *name, const char *text,
                       pp_error *err);

/*
 * The command-line word of the job or plan member `member` as library errors
 * name it ("plan.tp" -> "tp", "goodput.restart_s" -> "restart-min", "gpus" ->
 * "gpus"), or NULL when no flag sets it.  Static text: the caller owns nothing.
 */
const char *pp_field_flag_name(const char *member);

/*
 * Rewrites an error of pp_estimate_run (or any run on a job and plan the
 * command line gave) as the command line says it: a field that names a member
 * with a flag becomes "--flag", and a source that is empty or `model_name`
 * (the model, not a file) is dropped.  `model_name` may be NULL.
 */
void pp_field_error_as_flags(pp_error *err, const char *model_name);

#ifdef __cplusplus
}
#endif
#endif
