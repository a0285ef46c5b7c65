/*
 * paraplan validate over a whole runs file: every record judged
 * (pp_validate_record), the skipped ones listed and counted, the usable rows
 * summarised (pp_validate_summarise).  The CLI shows progress through the
 * watch and renders the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/calib.h"
#include "util/util.h"

void pp_validate_result_free(pp_validate_result *r)
{
	if (!r)
		return;
	free(r->rows);
	free(r->skips);
	memset(r, 0, sizeof *r);
}

pp_status pp_validate_run(const pp_runs *runs, bool search, bool measured,
                          const pp_validate_watch *watch, pp_validate_result *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	size_t n = pp_runs_count(runs);
	out->rows = calloc(n ? n : 1, sizeof *out->rows);
	out->skips = calloc(n ? n : 1, sizeof *out->skips);
	if (!out->rows || !out->skips) {
		pp_validate_result_free(out);
		return ppi_oom(err);
	}
	for (size_t i = 0; i < n; i++) {
		if (watch && watch->progress)
			watch->progress(watch->ctx, i, n);
		pp_validate_row *r = &out->rows[out->nrows];
		pp_status st = pp_validate_record(runs, i, search, r, err);
		if (st) {
			pp_validate_result_free(out);
			return st;
		}
		if (r->skipped) {
			pp_cv_skip *k = &out->skips[out->nskips++];
			snprintf(k->id, sizeof k->id, "%s", pp_runs_id(runs, i));
			snprintf(k->reason, sizeof k->reason, "%s", r->skip_reason);
			pp_skips_add(&out->why, r->skip_reason);
			continue;
		}
		out->nrows++;
	}
	/* Usable: evaluated, and for throughput, measured. */
	out->usable = measured ? pp_validate_usable(out->rows, out->nrows, &out->why) : out->nrows;
	if (out->usable == 0)
		return PP_OK;
	pp_status st = pp_validate_summarise(out->rows, out->nrows, &out->summary, err);
	if (st)
		pp_validate_result_free(out);
	return st;
}
