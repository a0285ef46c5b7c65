/*
 * Text table, CSV and JSON renderings of a sweep.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "paraplan/report.h"
#include "report_int.h"
#include "util/util.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const char *best_mark(const pp_sweep *sw, size_t i)
{
	bool t = sw->best_time == (ptrdiff_t)i, r = sw->best_rent == (ptrdiff_t)i;
	return t && r ? "time,rent" : t ? "time" : r ? "rent" : "";
}

static void header(const pp_sweep *sw, FILE *out)
{
	const pp_plan *b = &sw->base;
	fprintf(out, "paraplan sweep: %s on %s (%s), over %s\n", sw->model.name, sw->system.name,
	        sw->system.gpu.name, pp_sweep_axis_name(sw->axis));
	fprintf(out, "base    tp %d  pp %d  cp %d", b->tp, b->pp, b->cp);
	if (sw->axis != PP_SWEEP_GPUS && sw->axis != PP_SWEEP_DP && b->dp > 0)
		fprintf(out, "  dp %d", b->dp);
	if (sw->axis != PP_SWEEP_MBS)
		fprintf(out, "  mbs %d", b->mbs);
	fprintf(out, "  zero %d  recompute %s  schedule %s", b->zero,
	        pp_recompute_name(b->recompute), pp_schedule_name(b->schedule));
	if (b->pp > 1 && (b->first_stage_layers > 0 || b->last_stage_layers > 0 ||
	                  b->embedding_as_layer || b->loss_as_layer)) {
		fprintf(out, "  stages %d+", pp_stage_layers(&sw->model, b, 0));
		if (b->pp > 2)
			fprintf(out, "%dx%d+", b->pp - 2, pp_stage_layers(&sw->model, b, 1));
		fprintf(out, "%d", pp_stage_layers(&sw->model, b, b->pp - 1));
	}
	fputc('\n', out);
	if (sw->replica_batch > 0)
		fprintf(out, "job     %lld sequences per replica x %d tokens, %s%s%s\n",
		        sw->replica_batch, sw->job.seq_len, pp_precision_name(sw->job.precision),
		        sw->job.precision == PP_PREC_FP8 ? " recipe " : "",
		        sw->job.precision == PP_PREC_FP8 ? pp_fp8_recipe_name(sw->job.fp8_recipe)
		                                         : "");
	else
		fprintf(out, "job     global batch %lld x %d tokens, %s%s%s\n",
		        sw->job.global_batch, sw->job.seq_len, pp_precision_name(sw->job.precision),
		        sw->job.precision == PP_PREC_FP8 ? " recipe " : "",
		        sw->job.precision == PP_PREC_FP8 ? pp_fp8_recipe_name(sw->job.fp8_recipe)
		                                         : "");
	if (sw->job.train_tokens > 0) {
		fprintf(out, "train   %.4g tokens", sw->job.train_tokens);
		if (sw->usd_per_gpu_hour > 0)
			fprintf(out, ", rent %.2f USD/GPU-hour", sw->usd_per_gpu_hour);
		if (sw->usd_per_gpu > 0)
			fprintf(out, ", buy %.0f USD/GPU", sw->usd_per_gpu);
		fputc('\n', out);
	}
	if (sw->life_years > 0)
		fprintf(
		    out,
		    "tco     purchase amortised over %.3g years of life + power at %.3f USD/kWh "
		    "(PUE %.2f) + hosting %s\n",
		    sw->life_years, sw->job.energy.usd_per_kwh, sw->job.energy.pue,
		    sw->hosting_usd_per_kw_month > 0 ? "(per kW of IT power per month)"
		                                     : "not given: left out");
	if (sw->hosting_usd_per_kw_month > 0)
		fprintf(out, "        hosting %.2f USD per kW of IT power per month\n",
		        sw->hosting_usd_per_kw_month);
	fputc('\n', out);
}

/* The energy columns' heads and a row's cells (docs/energy.md), when the
 * job asks: facility power (IT without a PUE), with a budget its MWh, and
 * the TCO when the sweep has one. */
static void energy_head(const pp_sweep *sw, bool train, FILE *out)
{
	fprintf(out, " %8s", sw->job.energy.pue > 0 ? "fac MW" : "IT MW");
	if (train)
		fprintf(out, " %8s", "MWh");
	if (train && sw->job.energy.gco2_per_kwh > 0)
		fprintf(out, " %8s", "t CO2e");
	if (train && sw->job.energy.usd_per_kwh > 0)
		fprintf(out, " %10s", "power USD");
	if (sw->life_years > 0)
		fprintf(out, " %12s", "TCO USD");
}

static void energy_cells(const pp_sweep *sw, const pp_sweep_row *r, bool train, FILE *out)
{
	fprintf(out, " %8.4f", r->facility_w / 1e6);
	if (train)
		fprintf(out, " %8.1f", r->train_mwh);
	if (train && sw->job.energy.gco2_per_kwh > 0)
		fprintf(out, " %8.1f", r->co2e_kg / 1e3);
	if (train && sw->job.energy.usd_per_kwh > 0)
		fprintf(out, " %10.0f", r->power_usd);
	if (sw->life_years > 0)
		fprintf(out, " %12.0f", r->tco_usd);
}

int pp_report_sweep_text(const pp_sweep *sw, FILE *out)
{
	bool train = sw->job.train_tokens > 0;
	bool rent = train && sw->usd_per_gpu_hour > 0, buy = sw->usd_per_gpu > 0;
	header(sw, out);
	fprintf(out, "%7s %4s %4s %6s %4s %6s %4s %8s %9s %10s %6s %7s %7s %5s", "gpus", "tp", "pp",
	        "dp", "mbs", "m", "fits", "peak GiB", "iter s", "tokens/s", "MFU", "speedup",
	        "linear", "eff");
	if (train)
		fprintf(out, " %8s %11s", "days", "GPU-hours");
	if (rent)
		fprintf(out, " %12s", "rent USD");
	if (buy)
		fprintf(out, " %13s", "buy USD");
	bool energy = pp_energy_asked(&sw->job.energy);
	if (energy)
		energy_head(sw, train, out);
	fprintf(out, "  best\n");
	for (size_t i = 0; i < sw->nrows; i++) {
		const pp_sweep_row *r = &sw->rows[i];
		const pp_plan *p = &r->plan;
		if (!r->ok) {
			fprintf(out, "%7lld %4d %4d ", r->gpus, p->tp, p->pp);
			if (p->dp > 0)
				fprintf(out, "%6d", p->dp);
			else
				fprintf(out, "%6s", "-");
			fprintf(out, " %4d  skipped: %s\n", p->mbs, r->reason);
			continue;
		}
		fprintf(out,
		        "%7lld %4d %4d %6d %4d %6lld %4s %8.2f %9.3f %10.0f %5.1f%% %7.2f %7.2f "
		        "%4.0f%%",
		        r->gpus, p->tp, p->pp, p->dp, p->mbs, p->microbatches,
		        r->fits ? "yes" : "no", r->peak_bytes / GIB, r->iteration_s,
		        r->tokens_per_s, 100 * r->mfu, r->speedup, r->ideal_speedup,
		        100 * r->scaling_eff);
		if (train)
			fprintf(out, " %8.2f %11.0f", r->train_days, r->gpu_hours);
		if (rent)
			fprintf(out, " %12.0f", r->rent_usd);
		if (buy)
			fprintf(out, " %13.0f", r->buy_usd);
		if (energy)
			energy_cells(sw, r, train, out);
		const char *m = best_mark(sw, i);
		fprintf(out, "%s%s\n", *m ? "  " : "", m);
	}
	fputc('\n', out);
	if (sw->best_time >= 0) {
		const pp_sweep_row *b = &sw->rows[sw->best_time];
		fprintf(out, "fastest            %s %lld: %.0f tokens/s, %.3f s per iteration",
		        pp_sweep_axis_name(sw->axis), b->value, b->tokens_per_s, b->iteration_s);
		if (train)
			fprintf(out, ", %.2f days", b->train_days);
		fputc('\n', out);
	}
	if (sw->best_rent >= 0) {
		const pp_sweep_row *b = &sw->rows[sw->best_rent];
		fprintf(out, "cheapest to rent   %s %lld: %.4g GPU-seconds per token",
		        pp_sweep_axis_name(sw->axis), b->value, (double)b->gpus / b->tokens_per_s);
		if (rent)
			fprintf(out, ", %.0f USD", b->rent_usd);
		fputc('\n', out);
	}
	if (sw->best_time < 0)
		fprintf(out, "no point fits in GPU memory\n");
	return ferror(out) ? -1 : 0;
}

/* One CSV field: quoted when it holds a comma, quote or newline. */
static void csv_str(FILE *out, const char *s)
{
	if (!s[strcspn(s, ",\"\n\r")]) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

int pp_report_sweep_csv(const pp_sweep *sw, FILE *out)
{
	fputs("axis,value,gpus,tp,pp,dp,cp,mbs,microbatches,global_batch,ok,fits,peak_bytes,"
	      "capacity_bytes,iteration_s,compute_s,tp_s,pp_s,bubble_s,dp_s,tokens_per_s,mfu,"
	      "speedup,ideal_speedup,scaling_eff,train_days,gpu_hours,rent_usd,buy_usd,best_time,"
	      "best_rent,reason\n",
	      out);
	for (size_t i = 0; i < sw->nrows; i++) {
		const pp_sweep_row *r = &sw->rows[i];
		const pp_plan *p = &r->plan;
		const pp_iteration *t = &r->time;
		fprintf(out, "%s,%lld,%lld,%d,%d,%d,%d,%d,%lld,%lld,%d,%d,",
		        pp_sweep_axis_name(sw->axis), r->value, r->gpus, p->tp, p->pp, p->dp, p->cp,
		        p->mbs, p->microbatches, r->global_batch, r->ok, r->fits);
		fprintf(out, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,",
		        r->peak_bytes, r->capacity_bytes, r->iteration_s, t->compute_s, t->tp_s,
		        t->pp_s, t->bubble_s, t->dp_s, r->tokens_per_s, r->mfu);
		fprintf(out, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%d,", r->speedup,
		        r->ideal_speedup, r->scaling_eff, r->train_days, r->gpu_hours, r->rent_usd,
		        r->buy_usd, sw->best_time == (ptrdiff_t)i, sw->best_rent == (ptrdiff_t)i);
		csv_str(out, r->reason);
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}

static json_t *row_json(const pp_sweep *sw, size_t i)
{
	const pp_sweep_row *r = &sw->rows[i];
	const pp_plan *p = &r->plan;
	const pp_iteration *t = &r->time;
	json_t *plan = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:I}", "tp", p->tp, "pp", p->pp,
	                         "dp", p->dp, "cp", p->cp, "ep", p->ep, "vp", p->vp, "mbs", p->mbs,
	                         "microbatches", (json_int_t)p->microbatches);
	json_t *o = json_pack("{s:I,s:I,s:I,s:b,s:o}", "value", (json_int_t)r->value, "gpus",
	                      (json_int_t)r->gpus, "global_batch", (json_int_t)r->global_batch,
	                      "ok", r->ok, "plan", plan);
	if (!o)
		return NULL;
	if (!r->ok) {
		json_object_set_new(o, "reason", json_string(r->reason));
		return o;
	}
	json_t *time =
	    json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "iteration_s",
	              t->iteration_s, "compute_s", t->compute_s, "tp_s", t->tp_s, "cp_s", t->cp_s,
	              "ep_s", t->ep_s, "pp_s", t->pp_s, "bubble_s", t->bubble_s, "dp_s", t->dp_s,
	              "optimizer_s", t->optimizer_s, "zero3_s", t->zero3_s, "other_s", t->other_s);
	json_t *rest = json_pack(
	    "{s:b,s:f,s:f,s:o,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:b}", "fits", r->fits,
	    "peak_bytes", r->peak_bytes, "capacity_bytes", r->capacity_bytes, "time", time,
	    "tokens_per_s", r->tokens_per_s, "mfu", r->mfu, "speedup", r->speedup, "ideal_speedup",
	    r->ideal_speedup, "scaling_eff", r->scaling_eff, "train_days", r->train_days,
	    "gpu_hours", r->gpu_hours, "rent_usd", r->rent_usd, "buy_usd", r->buy_usd, "best_time",
	    sw->best_time == (ptrdiff_t)i, "best_rent", sw->best_rent == (ptrdiff_t)i);
	if (rest && pp_energy_asked(&sw->job.energy)) /* docs/energy.md */
		json_object_set_new(
		    rest, "energy",
		    json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "facility_w", r->facility_w,
		              "it_w", r->it_w, "train_mwh", r->train_mwh, "co2e_kg", r->co2e_kg,
		              "power_usd", r->power_usd, "amortised_usd", r->amortised_usd,
		              "hosting_usd", r->hosting_usd, "tco_usd", r->tco_usd));
	if (!rest || json_object_update(o, rest)) {
		json_decref(rest);
		json_decref(o);
		return NULL;
	}
	json_decref(rest);
	return o;
}

int pp_report_sweep_json(const pp_sweep *sw, FILE *out)
{
	long long mark = ppi_alloc_failed();
	const pp_plan *b = &sw->base;
	json_t *rows = json_array();
	for (size_t i = 0; i < sw->nrows; i++)
		json_array_append_new(rows, row_json(sw, i));
	json_t *base = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:b,s:s}", "tp", b->tp, "pp", b->pp,
	                         "cp", b->cp, "dp", b->dp, "mbs", b->mbs, "zero", b->zero,
	                         "recompute", pp_recompute_name(b->recompute), "sp", b->sp,
	                         "schedule", pp_schedule_name(b->schedule));
	json_t *root = json_pack(
	    "{s:s,s:s,s:s,s:s,s:I,s:I,s:i,s:f,s:f,s:f,s:o,s:I,s:I,s:o}", "axis",
	    pp_sweep_axis_name(sw->axis), "model", sw->model.name, "system", sw->system.name, "gpu",
	    sw->system.gpu.name, "global_batch", (json_int_t)sw->job.global_batch, "replica_batch",
	    (json_int_t)sw->replica_batch, "seq_len", sw->job.seq_len, "train_tokens",
	    sw->job.train_tokens, "usd_per_gpu_hour", sw->usd_per_gpu_hour, "usd_per_gpu",
	    sw->usd_per_gpu, "base_plan", base, "best_time_row", (json_int_t)sw->best_time,
	    "best_rent_row", (json_int_t)sw->best_rent, "rows", rows);
	return ppi_report_dump(root, mark, out);
}
