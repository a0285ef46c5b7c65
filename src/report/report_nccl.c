/*
 * calibrate --nccl-tests rendered as text: each log against the fitted
 * system, then the fitted tiers.  The fitting is calib's (pp_nccl_fit_logs).
 */
#include <stdio.h>
#include <string.h>

#include "paraplan/format.h"

int pp_report_nccl_text(const pp_nccl_fit *fit, const pp_nccl_log *logs, size_t n, FILE *f)
{
	const pp_system *s = &fit->system;
	/* Tiers by what they are (pp_intra_link_label): "NVLink", "PCIe 4.0";
	 * "InfiniBand", "RoCE"; the parameters keep their system-file names. */
	const char *intra = pp_intra_link_label(s), *inter = pp_inter_network_label(s);
	fprintf(f, "%-28s %-14s %5s %5s %-10s  %21s  %21s  %6s\n", "log", "collective", "ranks",
	        "nodes", "tier", "busbw GB/s log/model", "small us log/model", "rms");
	for (size_t k = 0; k < n; k++) {
		pp_nccl_check c;
		pp_nccl_check_log(s, &logs[k], &c);
		const char *b = strrchr(logs[k].source, '/');
		fprintf(f, "%-28s %-14s %5d %5d %-10s  %9.1f / %9.1f  %9.2f / %9.2f  %5.1f%%\n",
		        b ? b + 1 : logs[k].source, pp_nccl_op_name(logs[k].op), logs[k].ranks,
		        logs[k].nodes, pp_nccl_intra(s, &logs[k]) ? intra : inter,
		        c.busbw_log / 1e9, c.busbw_model / 1e9, c.small_log_s * 1e6,
		        c.small_model_s * 1e6, 100 * c.rms_log_error);
	}
	if (fit->intra_logs)
		fprintf(
		    f, "intra-node (%s): latency %.3g s, nvlink_eff %.3f (%.0f GB/s of %.0f)%s\n",
		    intra, s->nvlink_latency_s, s->nvlink_eff,
		    s->nvlink_bytes_per_s * s->nvlink_eff / 1e9, s->nvlink_bytes_per_s / 1e9,
		    fit->intra_at_bound ? "  [at its bound: the model cannot reach the log]" : "");
	if (fit->inter_logs)
		fprintf(
		    f,
		    "inter-node (%s): latency %.3g s, nic_eff %.3f (%.1f GB/s per NIC of %.1f)%s\n",
		    inter, s->nic_latency_s, s->nic_eff, s->nic_bytes_per_s * s->nic_eff / 1e9,
		    s->nic_bytes_per_s / 1e9,
		    fit->inter_at_bound ? "  [at its bound: the model cannot reach the log]" : "");
	return ferror(f) ? -1 : 0;
}
