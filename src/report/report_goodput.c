/*
 * The goodput of an estimate under failures and checkpoints, as text and JSON.
 */
#include <jansson.h>
#include <stdio.h>

#include "paraplan/report.h"
#include "report_int.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

void ppi_report_goodput_text(const pp_estimate *e, FILE *out)
{
	const pp_goodput *g = &e->goodput;
	fprintf(out,
	        "\ngoodput     %.1f%% under failures: one interruption every %.2f h (%.1f a day; "
	        "MTBF %.0f GPU-hours over %lld GPUs)\n",
	        100 * g->goodput, g->job_mtbf_s / 3600, g->interruptions_per_day,
	        g->params.mtbf_gpu_hours, e->gpus);
	fprintf(out,
	        "  checkpoint  %.2f GiB per GPU (stage %d), %.2f TiB in all, written in %.1f s at "
	        "%.0f GB/s (%s, training blocked %.1f s)\n",
	        g->ckpt_rank_bytes / GIB, g->ckpt_rank_stage, g->ckpt_total_bytes / (GIB * 1024.0),
	        g->write_s, g->params.ckpt_write_bytes_per_s / 1e9,
	        g->params.async ? "async" : "sync", g->blocking_s);
	fprintf(out,
	        "  interval    every %.1f min = %.0f iterations (Daly; Young %.1f min); per "
	        "failure %.1f min of lost work + %.1f min restart\n",
	        g->interval_s / 60, g->interval_iterations, g->young_interval_s / 60,
	        g->lost_work_s / 60, g->restart_s / 60);
	if (g->effective_days > 0) {
		fprintf(out,
		        "  training    %.1f days with failures (+%.1f days, %.0f interruptions), "
		        "%.0f GPU-hours",
		        g->effective_days, g->extra_days, g->failures, g->gpu_hours);
		if (e->usd_per_gpu_hour > 0)
			fprintf(out, ", %.0f USD", g->cost_usd);
		fputc('\n', out);
	}
}

json_t *ppi_report_goodput_json(const pp_estimate *e)
{
	const pp_goodput *g = &e->goodput;
	json_t *o = json_object();
	json_object_set_new(o, "mtbf_gpu_hours", json_real(g->params.mtbf_gpu_hours));
	json_object_set_new(o, "ckpt_write_bytes_per_s",
	                    json_real(g->params.ckpt_write_bytes_per_s));
	json_object_set_new(o, "async", json_boolean(g->params.async));
	json_object_set_new(o, "host_copy_bytes_per_s", json_real(g->params.host_copy_bytes_per_s));
	json_object_set_new(o, "ckpt_total_bytes", json_real(g->ckpt_total_bytes));
	json_object_set_new(o, "ckpt_rank_bytes", json_real(g->ckpt_rank_bytes));
	json_object_set_new(o, "ckpt_rank_stage", json_integer(g->ckpt_rank_stage));
	json_object_set_new(o, "write_s", json_real(g->write_s));
	json_object_set_new(o, "blocking_s", json_real(g->blocking_s));
	json_object_set_new(o, "job_mtbf_s", json_real(g->job_mtbf_s));
	json_object_set_new(o, "interruptions_per_day", json_real(g->interruptions_per_day));
	json_object_set_new(o, "young_interval_s", json_real(g->young_interval_s));
	json_object_set_new(o, "interval_s", json_real(g->interval_s));
	json_object_set_new(o, "interval_iterations", json_real(g->interval_iterations));
	json_object_set_new(o, "lost_work_s", json_real(g->lost_work_s));
	json_object_set_new(o, "restart_s", json_real(g->restart_s));
	json_object_set_new(o, "goodput", json_real(g->goodput));
	json_object_set_new(o, "failures", json_real(g->failures));
	json_object_set_new(o, "days", json_real(g->days));
	json_object_set_new(o, "effective_days", json_real(g->effective_days));
	json_object_set_new(o, "extra_days", json_real(g->extra_days));
	json_object_set_new(o, "gpu_hours", json_real(g->gpu_hours));
	json_object_set_new(o, "cost_usd", json_real(g->cost_usd));
	return o;
}

int pp_report_goodput_text(const pp_estimate *e, FILE *out)
{
	if (e->has_goodput)
		ppi_report_goodput_text(e, out);
	return ferror(out) ? -1 : 0;
}
