/*
 * validate's results rendered (text and JSON): throughput predicted against
 * measured (PP_RESULT_VALIDATE), peak memory per GPU (PP_RESULT_VALIDATE_MEMORY)
 * and the best plan against the authors' (PP_RESULT_VALIDATE_SEARCH, text
 * only).  The judging is calib's (pp_validate_record, pp_validate_summarise).
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "format_int.h"
#include "report_int.h"
#include "util/util.h"

#define GIB 1073741824.0

typedef pp_validate_row row;
typedef pp_validate_skip skip;

static void fill_keys(unsigned fills, char *buf, size_t n)
{
	buf[0] = '\0';
	for (int k = 0; k < PP_RUN_FILL_KINDS; k++) {
		if (!(fills & (1u << k)))
			continue;
		if (buf[0])
			strncat(buf, ",", n - strlen(buf) - 1);
		strncat(buf, pp_run_fill_name(1u << k), n - strlen(buf) - 1);
	}
	if (!buf[0])
		snprintf(buf, n, "-");
}

static int memory_text(const pp_validate_report *v, FILE *f)
{
	const char *data = v->data;
	const row *rows = v->rows;
	size_t nrows = v->nrows;
	const skip *skips = v->skips;
	size_t nskips = v->nskips;
	const pp_validate_summary *sum = v->summary;
	fprintf(f, "paraplan validate --memory: %zu records from %s\n\n", nrows + nskips, data);
	fprintf(f, "%-52s %-13s %5s %3s %3s %4s %3s %3s %3s %1s %-9s %8s %6s %4s  %s\n", "id",
	        "system", "gpus", "tp", "pp", "dp", "cp", "ep", "mbs", "z", "recompute", "peak GiB",
	        "of HBM", "fits", "filled");
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		const pp_plan *p = &r->est.plan;
		char keys[256];
		fill_keys(r->info.fills, keys, sizeof keys);
		fprintf(
		    f, "%-52s %-13s %5lld %3d %3d %4d %3d %3d %3d %1d %-9s %8.1f %6.3f %4s  %s\n",
		    r->info.id, r->info.system, r->est.gpus, p->tp, p->pp, p->dp, p->cp, p->ep,
		    p->mbs, p->zero, pp_recompute_name(p->recompute),
		    r->est.memory.total_bytes / GIB, r->fraction, r->est.fits ? "yes" : "NO", keys);
		if (!r->est.fits) {
			const pp_stage_memory *sm = &r->est.memory;
			fprintf(
			    f,
			    "    stage %d: weights %.1f, gradients %.1f, optimizer %.1f, "
			    "activations %.1f (layers %.1f, logits %.1f), other %.1f (transient "
			    "%.1f, framework %.1f, allocator reserve %.1f) GiB; HBM %.1f GiB\n",
			    sm->stage, sm->weights_bytes / GIB, sm->gradients_bytes / GIB,
			    sm->optimizer_bytes / GIB, sm->activations_bytes / GIB,
			    sm->act_layers_bytes / GIB, sm->act_logits_bytes / GIB,
			    sm->other_bytes / GIB, sm->transient_bytes / GIB,
			    sm->framework_bytes / GIB, sm->fragmentation_bytes / GIB,
			    r->est.capacity_bytes / GIB);
		}
	}
	if (nskips) {
		fprintf(f, "\nskipped:\n");
		for (size_t i = 0; i < nskips; i++)
			fprintf(f, "  %-52s %s\n", skips[i].id, skips[i].reason);
	}
	fprintf(f, "\nevaluated %zu, skipped %zu", nrows, nskips);
	/* Skip reasons, counted (the first of each kind in order of appearance). */
	for (size_t i = 0; i < nskips; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(skips[j].reason, skips[i].reason) == 0;
		if (seen)
			continue;
		size_t c = 0;
		for (size_t j = i; j < nskips; j++)
			c += strcmp(skips[j].reason, skips[i].reason) == 0;
		fprintf(f, "%s %zu: %s", i == 0 ? " --" : ";", c, skips[i].reason);
	}
	fprintf(f, "\nfit: %zu of %zu evaluated\n", sum->fit, nrows);
	if (nrows)
		fprintf(f, "fraction of HBM: min %.3f, median %.3f, max %.3f\n", sum->fraction_min,
		        sum->fraction_median, sum->fraction_max);
	return ppi_memory_measured_text(v, f);
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static int memory_json(const pp_validate_report *v, FILE *f)
{
	const char *data = v->data;
	const row *rows = v->rows;
	size_t nrows = v->nrows;
	const skip *skips = v->skips;
	size_t nskips = v->nskips;
	const pp_validate_summary *sum = v->summary;
	long long mark = ppi_alloc_failed(); /* a value dropped: out of memory */
	json_t *root = json_object();
	json_object_set_new(root, "data", json_string(data));
	json_t *arr = json_array();
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		const pp_plan *p = &r->est.plan;
		const pp_stage_memory *sm = &r->est.memory;
		json_t *o = json_object();
		json_object_set_new(o, "id", json_string(r->info.id));
		json_object_set_new(o, "gpu_type", json_string(r->info.gpu_type));
		json_object_set_new(o, "system", json_string(r->info.system));
		json_object_set_new(o, "gpus", json_integer(r->est.gpus));
		json_t *jp = json_object();
		json_object_set_new(jp, "tp", json_integer(p->tp));
		json_object_set_new(jp, "pp", json_integer(p->pp));
		json_object_set_new(jp, "dp", json_integer(p->dp));
		json_object_set_new(jp, "cp", json_integer(p->cp));
		json_object_set_new(jp, "ep", json_integer(p->ep));
		json_object_set_new(jp, "etp", json_integer(p->etp));
		json_object_set_new(jp, "vp", json_integer(p->vp));
		json_object_set_new(jp, "mbs", json_integer(p->mbs));
		json_object_set_new(jp, "zero", json_integer(p->zero));
		json_object_set_new(jp, "recompute", json_string(pp_recompute_name(p->recompute)));
		json_object_set_new(jp, "sp", json_boolean(p->sp));
		json_object_set_new(jp, "flash", json_boolean(p->flash));
		json_object_set_new(jp, "schedule", json_string(pp_schedule_name(p->schedule)));
		json_object_set_new(jp, "microbatches", json_integer(p->microbatches));
		json_object_set_new(o, "plan", jp);
		json_object_set_new(o, "precision",
		                    json_string(pp_precision_name(r->est.job.precision)));
		json_object_set_new(o, "peak_stage", json_integer(sm->stage));
		json_object_set_new(o, "peak_bytes", json_real(sm->total_bytes));
		json_object_set_new(o, "hbm_bytes", json_real(r->est.capacity_bytes));
		json_object_set_new(o, "fraction_of_hbm", json_real(r->fraction));
		json_object_set_new(o, "fits", json_boolean(r->est.fits));
		json_t *b = json_object();
		json_object_set_new(b, "weights_bytes", json_real(sm->weights_bytes));
		json_object_set_new(b, "gradients_bytes", json_real(sm->gradients_bytes));
		json_object_set_new(b, "optimizer_bytes", json_real(sm->optimizer_bytes));
		json_object_set_new(b, "activations_bytes", json_real(sm->activations_bytes));
		json_object_set_new(b, "other_bytes", json_real(sm->other_bytes));
		json_object_set_new(o, "breakdown", b);
		json_t *fl = json_array();
		for (int k = 0; k < r->info.nfilled; k++)
			json_array_append_new(fl, json_string(r->info.filled[k]));
		json_object_set_new(o, "filled", fl);
		json_t *ms = json_object();
		json_object_set_new(ms, "tflops_per_gpu", num_or_null(r->info.tflops_per_gpu));
		json_object_set_new(ms, "tflops_definition",
		                    json_string(r->info.tflops_definition));
		json_object_set_new(ms, "mfu", num_or_null(r->info.mfu));
		json_object_set_new(ms, "hfu", num_or_null(r->info.hfu));
		json_object_set_new(ms, "tokens_per_s_per_gpu",
		                    num_or_null(r->info.tokens_per_s_per_gpu));
		json_object_set_new(ms, "iteration_time_s", num_or_null(r->info.iteration_time_s));
		json_object_set_new(ms, "peak_memory_bytes",
		                    num_or_null(r->info.peak_memory_bytes));
		json_object_set_new(o, "measured", ms);
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "records", arr);
	json_t *sk = json_array();
	for (size_t i = 0; i < nskips; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "id", json_string(skips[i].id));
		json_object_set_new(o, "reason", json_string(skips[i].reason));
		json_array_append_new(sk, o);
	}
	json_object_set_new(root, "skipped", sk);
	json_t *js = json_object();
	json_object_set_new(js, "evaluated", json_integer((json_int_t)nrows));
	json_object_set_new(js, "skipped", json_integer((json_int_t)nskips));
	json_object_set_new(js, "fit", json_integer((json_int_t)sum->fit));
	if (nrows) {
		json_object_set_new(js, "fraction_min", json_real(sum->fraction_min));
		json_object_set_new(js, "fraction_median", json_real(sum->fraction_median));
		json_object_set_new(js, "fraction_max", json_real(sum->fraction_max));
	}
	json_object_set_new(root, "summary", js);
	json_object_set_new(root, "measured", ppi_memory_measured_json(v));
	return ppi_report_dump(root, mark, f);
}

static int speed_text(const pp_validate_report *v, FILE *f)
{
	const char *data = v->data;
	const row *rows = v->rows;
	size_t nrows = v->nrows;
	const skip *skips = v->skips;
	size_t nskips = v->nskips;
	const pp_validate_summary *sum = v->summary;
	fprintf(f, "paraplan validate: %zu records from %s\n\n", nrows + nskips, data);
	fprintf(f, "%-52s %-20s %6s %12s %12s %8s\n", "id", "metric", "gpus", "measured",
	        "predicted", "error");
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		if (r->speed.metric == PP_METRIC_NONE)
			continue;
		fprintf(f, "%-52s %-20s %6lld %12.4g %12.4g %+7.1f%%\n", r->info.id,
		        pp_metric_name(r->speed.metric), r->est.gpus, r->speed.measured,
		        r->speed.predicted, 100 * r->speed.error);
	}
	if (nskips) {
		fprintf(f, "\nskipped:\n");
		for (size_t i = 0; i < nskips; i++)
			fprintf(f, "  %-52s %s\n", skips[i].id, skips[i].reason);
	}
	fprintf(f, "\nevaluated %zu, skipped %zu", sum->all.records, nskips + sum->unmeasured);
	if (sum->unmeasured)
		fprintf(f, " (%zu without a throughput measurement)", sum->unmeasured);
	fprintf(f, "\nMAPE %.1f%% over %zu records\n", 100 * sum->all.mape, sum->all.records);
	fprintf(f, "\nby source:\n");
	for (size_t k = 0; k < sum->nsources; k++) {
		const pp_validate_group *g = &sum->by_source[k];
		if (g->records)
			fprintf(f, "  %-60.60s %4zu records  MAPE %5.1f%%\n", g->name, g->records,
			        100 * g->mape);
	}
	fprintf(f, "\nby scale:\n");
	for (int b = 0; b < PP_VALIDATE_SCALES; b++) {
		const pp_validate_group *g = &sum->by_scale[b];
		if (g->records)
			fprintf(f, "  %-16s %4zu records  MAPE %5.1f%%\n", g->name, g->records,
			        100 * g->mape);
	}
	if (sum->memory.records)
		fprintf(f, "\nmemory MAPE %.1f%% over %zu records with a measured peak\n",
		        100 * sum->memory.mape, sum->memory.records);
	else
		fprintf(f, "\nmemory: no record reports a measured peak (memory_mape null)\n");
	return ferror(f) ? -1 : 0;
}

static int speed_json(const pp_validate_report *v, FILE *f)
{
	const char *data = v->data;
	const row *rows = v->rows;
	size_t nrows = v->nrows;
	const skip *skips = v->skips;
	size_t nskips = v->nskips;
	const pp_validate_summary *sum = v->summary;
	long long mark = ppi_alloc_failed(); /* a value dropped: out of memory */
	json_t *root = json_object();
	json_object_set_new(root, "data", json_string(data));
	json_t *arr = json_array();
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		if (r->speed.metric == PP_METRIC_NONE)
			continue;
		char src[PP_RUN_SOURCE_NAME_MAX];
		pp_run_source_name(r->info.title, src, sizeof src);
		json_t *o =
		    json_pack("{s:s,s:s,s:f,s:f,s:f,s:s,s:I,s:s}", "id", r->info.id, "metric",
		              pp_metric_name(r->speed.metric), "measured", r->speed.measured,
		              "predicted", r->speed.predicted, "error", r->speed.error, "source",
		              src, "gpus", (json_int_t)r->est.gpus, "system", r->info.system);
		json_object_set_new(o, "stack", json_string(r->est.system.framework));
		if (r->mem.metric != PP_METRIC_NONE)
			json_object_set_new(o, "memory_error", json_real(r->mem.error));
		json_t *fl = json_array();
		for (int k = 0; k < r->info.nfilled; k++)
			json_array_append_new(fl, json_string(r->info.filled[k]));
		json_object_set_new(o, "filled", fl);
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "records", arr);
	json_object_set_new(root, "evaluated", json_integer((json_int_t)sum->all.records));
	json_object_set_new(root, "skipped", json_integer((json_int_t)(nskips + sum->unmeasured)));
	json_object_set_new(root, "mape", num_or_null(sum->all.mape));
	json_t *bys = json_object();
	for (size_t k = 0; k < sum->nsources; k++)
		if (sum->by_source[k].records)
			json_object_set_new(bys, sum->by_source[k].name,
			                    json_real(sum->by_source[k].mape));
	json_object_set_new(root, "mape_by_source", bys);
	json_t *byg = json_object();
	for (int b = 0; b < PP_VALIDATE_SCALES; b++)
		if (sum->by_scale[b].records)
			json_object_set_new(byg, sum->by_scale[b].name,
			                    json_real(sum->by_scale[b].mape));
	json_object_set_new(root, "mape_by_scale", byg);
	json_object_set_new(root, "memory_mape", num_or_null(sum->memory.mape));
	json_t *sk = json_array();
	for (size_t i = 0; i < nskips; i++)
		json_array_append_new(
		    sk, json_pack("{s:s,s:s}", "id", skips[i].id, "reason", skips[i].reason));
	json_object_set_new(root, "skipped_records", sk);
	return ppi_report_dump(root, mark, f);
}

static int search_text(const pp_validate_report *v, FILE *f)
{
	const row *rows = v->rows;
	size_t nrows = v->nrows;
	const pp_validate_summary *sum = v->summary;
	fprintf(f, "%-52s %6s %10s %10s %7s  %s\n", "id", "gpus", "theirs s", "best s", "speedup",
	        "best plan");
	for (size_t i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		if (!r->searched)
			continue;
		const pp_plan *p = &r->best;
		double their = r->est.time.iteration_s;
		fprintf(
		    f,
		    "%-52s %6lld %10.4g %10.4g %6.2fx  tp %d pp %d dp %d cp %d ep %d vp %d mbs %d "
		    "z%d %s%s %s %s",
		    r->info.id, r->est.gpus, their, r->best_s, their / r->best_s, p->tp, p->pp,
		    p->dp, p->cp, p->ep, p->vp, p->mbs, p->zero, pp_recompute_name(p->recompute),
		    p->sp ? " sp" : "", pp_schedule_name(p->schedule), p->order);
		if (p->first_stage_layers > 0 || p->last_stage_layers > 0)
			fprintf(f, " first %d last %d", p->first_stage_layers,
			        p->last_stage_layers);
		fputc('\n', f);
	}
	fprintf(f,
	        "\n%zu records searched; the best plan is at least as fast as the authors' in %zu; "
	        "mean predicted speedup %.2fx\n",
	        sum->searched, sum->search_as_fast, sum->search_mean_speedup);
	return ferror(f) ? -1 : 0;
}
int ppi_validate_text(const pp_result *r, FILE *f)
{
	return r->kind == PP_RESULT_VALIDATE_MEMORY   ? memory_text(r->validate, f)
	       : r->kind == PP_RESULT_VALIDATE_SEARCH ? search_text(r->validate, f)
	                                              : speed_text(r->validate, f);
}

int ppi_validate_json(const pp_result *r, FILE *f)
{
	return r->kind == PP_RESULT_VALIDATE_MEMORY ? memory_json(r->validate, f)
	                                            : speed_json(r->validate, f);
}
