/*
 * Measured peak memory: validate --memory's comparison with the records that
 * state a peak (peak_memory_GiB) and with measured training steps (--steps),
 * and calibrate --memory's fit of the caching allocator's parameters
 * (PP_RESULT_MEMORY_FIT), in text and JSON.  The numbers are calib's
 * (pp_memory_check_steps, pp_memory_fit_steps).
 */
#include <jansson.h>
#include <math.h>

#include "format_int.h"
#include "report_int.h"
#include "util/util.h"

#define GIB 1073741824.0

/* The steps' table: measured and predicted allocated and reserved peaks. */
static void steps_text(const pp_memory_check *c, FILE *f)
{
	fprintf(f, "%5s %-14s %6s %4s %-4s  %9s %9s %7s  %9s %9s %7s\n", "line", "model", "seq",
	        "mbs", "rc", "alloc GiB", "predicted", "error", "reserved", "predicted", "error");
	for (size_t i = 0; i < c->n; i++) {
		const pp_memory_check_row *r = &c->row[i];
		const pp_train_step *t = r->step;
		fprintf(f, "%5d %-14s %6d %4d %-4s  %9.2f %9.2f %+6.2f%%  %9.2f %9.2f %+6.2f%%\n",
		        t->line, t->model, t->in.job.seq_len, t->in.plan.mbs,
		        pp_recompute_name(t->recompute), t->peak_alloc_bytes / GIB,
		        r->allocated_bytes / GIB, r->allocated_err_pct,
		        t->peak_reserved_bytes / GIB, r->reserved_bytes / GIB, r->reserved_err_pct);
	}
	fprintf(f, "MAPE: allocated %.2f%% (worst %.2f%%), reserved %.2f%% (worst %.2f%%)\n",
	        c->mape_allocated, c->worst_allocated, c->mape_reserved, c->worst_reserved);
}

static json_t *steps_json(const pp_memory_check *c)
{
	json_t *o = json_object();
	json_t *rows = json_array();
	for (size_t i = 0; i < c->n; i++) {
		const pp_memory_check_row *r = &c->row[i];
		const pp_train_step *t = r->step;
		json_array_append_new(
		    rows, json_pack("{s:i,s:s,s:i,s:i,s:s,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "line",
		                    t->line, "model", t->model, "seq", t->in.job.seq_len, "mbs",
		                    t->in.plan.mbs, "recompute", pp_recompute_name(t->recompute),
		                    "measured_allocated_bytes", t->peak_alloc_bytes,
		                    "predicted_allocated_bytes", r->allocated_bytes,
		                    "allocated_error_pct", r->allocated_err_pct,
		                    "measured_reserved_bytes", t->peak_reserved_bytes,
		                    "predicted_reserved_bytes", r->reserved_bytes,
		                    "reserved_error_pct", r->reserved_err_pct,
		                    "largest_transient_bytes", r->largest_transient_bytes));
	}
	json_object_set_new(o, "steps", rows);
	json_object_set_new(o, "mape_allocated_pct", json_real(c->mape_allocated));
	json_object_set_new(o, "mape_reserved_pct", json_real(c->mape_reserved));
	json_object_set_new(o, "worst_allocated_pct", json_real(c->worst_allocated));
	json_object_set_new(o, "worst_reserved_pct", json_real(c->worst_reserved));
	return o;
}

int ppi_memory_measured_text(const pp_validate_report *v, FILE *f)
{
	const pp_validate_group *g = &v->summary->memory;
	fprintf(f, "records stating a peak (peak_memory_GiB): %zu", g->records);
	if (g->records)
		fprintf(f, ", MAPE %.2f%% (predicted total against the stated peak)",
		        100 * g->mape);
	fprintf(f, "\n");
	if (v->steps && v->steps_path) {
		fprintf(f, "\nmeasured training steps: %zu from %s\n", v->steps->n, v->steps_path);
		steps_text(v->steps, f);
	}
	return ferror(f) ? -1 : 0;
}

json_t *ppi_memory_measured_json(const pp_validate_report *v)
{
	const pp_validate_group *g = &v->summary->memory;
	json_t *o = json_object();
	json_object_set_new(o, "records", json_integer((json_int_t)g->records));
	json_object_set_new(o, "mape_pct", g->records ? json_real(100 * g->mape) : json_null());
	if (v->steps && v->steps_path) {
		json_t *s = steps_json(v->steps);
		json_object_set_new(s, "file", json_string(v->steps_path));
		json_object_set_new(o, "training_steps", s);
	}
	return o;
}

int ppi_memory_fit_text(const pp_result *r, FILE *f)
{
	const pp_memory_fit_report *m = r->memory_fit;
	const pp_memory_fit *x = m->fit;
	fprintf(f, "paraplan calibrate --memory: %zu measured steps from %s\n\n", x->n, m->path);
	fprintf(f, "reserve = max(segments x largest transient buffer, fraction x allocated)\n");
	fprintf(f, "  %-30s %8s %8s  %s\n", "parameter", "preset", "fitted", "range");
	fprintf(f, "  %-30s %8.3f %8.3f  %.3f..%.3f%s\n", "allocator_transient_segments",
	        x->preset_segments, x->segments, x->segments_lo, x->segments_hi,
	        x->segments_at_bound ? "  at a bound" : "");
	fprintf(f, "  %-30s %8.3f %8.3f  %.3f..%.3f%s\n", "allocator_fraction", x->preset_fraction,
	        x->fraction, x->fraction_lo, x->fraction_hi,
	        x->fraction_at_bound ? "  at a bound" : "");
	fprintf(f,
	        "reserved peak MAPE: preset %.2f%%, fitted in-sample %.2f%%, leave-one-out %.2f%% "
	        "(worst %.2f%%)\n\nthe steps under the fitted values:\n",
	        x->mape_preset, x->mape_in, x->mape_loo, x->worst_loo);
	steps_text(m->check, f);
	return ferror(f) ? -1 : 0;
}

int ppi_memory_fit_json(const pp_result *r, FILE *f)
{
	const pp_memory_fit_report *m = r->memory_fit;
	const pp_memory_fit *x = m->fit;
	long long mark = ppi_alloc_failed();
	json_t *root = json_object();
	json_object_set_new(root, "file", json_string(m->path));
	json_object_set_new(root, "steps", json_integer((json_int_t)x->n));
	json_object_set_new(root, "allocator_transient_segments",
	                    json_pack("{s:f,s:f,s:f,s:f,s:b}", "preset", x->preset_segments,
	                              "fitted", x->segments, "lo", x->segments_lo, "hi",
	                              x->segments_hi, "at_bound", x->segments_at_bound));
	json_object_set_new(root, "allocator_fraction",
	                    json_pack("{s:f,s:f,s:f,s:f,s:b}", "preset", x->preset_fraction,
	                              "fitted", x->fraction, "lo", x->fraction_lo, "hi",
	                              x->fraction_hi, "at_bound", x->fraction_at_bound));
	json_object_set_new(root, "mape_preset_pct", json_real(x->mape_preset));
	json_object_set_new(root, "mape_in_sample_pct", json_real(x->mape_in));
	json_object_set_new(root, "mape_leave_one_out_pct", json_real(x->mape_loo));
	json_object_set_new(root, "worst_leave_one_out_pct", json_real(x->worst_loo));
	json_object_set_new(root, "fitted", steps_json(m->check));
	return ppi_report_dump(root, mark, f);
}
