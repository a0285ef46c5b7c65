/*
 * paraplan calibrate --nccl-tests LOG... --system S [--output FILE]: fit the
 * latency and bandwidth efficiency of each network tier to nccl-tests logs
 * (pp_nccl_*) and write the calibrated system JSON; the fit's summary is
 * the report's (pp_report_nccl_text).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "paraplan/format.h"
#include "paraplan/nccl.h"

#define MAX_LOGS CLI_NCCL_MAX_LOGS

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
		pp_report_nccl_text(&fit, logs, nl, to_stdout ? stderr : stdout);
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
