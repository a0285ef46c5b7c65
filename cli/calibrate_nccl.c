/*
 * paraplan calibrate --nccl-tests LOG... --system S [--output FILE]: fit the
 * latency and bandwidth efficiency of each network tier to nccl-tests logs
 * (pp_nccl_*) and write the calibrated system JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "paraplan/nccl.h"

#define MAX_LOGS CLI_NCCL_MAX_LOGS

static void summary(FILE *f, const pp_system *s, const pp_nccl_log *logs, size_t n,
                    const pp_nccl_fit *fit)
{
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
}

int cli_calibrate_nccl(const char *const *paths, size_t np, const char *system, const char *output)
{
	if (!system) {
		cli_message("calibrate: --nccl-tests needs --system S (the system to start from)");
		return EXIT_BADINPUT;
	}
	int rc0 = cli_out_check("calibrate", "--output", output);
	if (rc0)
		return rc0;
	pp_error err;
	pp_system start;
	pp_status st = pp_system_resolve(system, &start, &err);
	if (st)
		return cli_fail(st, &err);
	static pp_nccl_log logs[MAX_LOGS];
	size_t nl = 0;
	int rc = EXIT_ANSWERED;
	for (size_t k = 0; k < np && rc == EXIT_ANSWERED; k++) {
		if ((st = pp_nccl_load(paths[k], &logs[k], &err)))
			rc = cli_fail(st, &err);
		else
			nl++;
	}
	pp_nccl_fit fit;
	char *json = NULL;
	if (rc == EXIT_ANSWERED && (st = pp_nccl_fit_logs(&start, logs, nl, &fit, &err)))
		rc = cli_fail(st, &err);
	if (rc == EXIT_ANSWERED && (st = pp_nccl_system_json(system, &fit, logs, nl, &json, &err)))
		rc = cli_fail(st, &err);
	if (rc == EXIT_ANSWERED) {
		cli_out out;
		bool to_stdout = !output || strcmp(output, "-") == 0;
		summary(to_stdout ? stderr : stdout, &fit.system, logs, nl, &fit);
		if ((rc = cli_out_open(&out, output)) == 0) {
			bool ok = fputs(json, out.f) >= 0;
			rc = cli_out_close(&out, ok);
		}
		if (rc == EXIT_ANSWERED && !to_stdout)
			printf("wrote %s\n", output);
	}
	free(json);
	for (size_t k = 0; k < nl; k++)
		pp_nccl_log_free(&logs[k]);
	return rc;
}
