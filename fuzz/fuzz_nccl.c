/*
 * libFuzzer target: nccl-tests output (text table or -J JSON) read by
 * pp_nccl_parse.  A failure must be PP_EINPUT (or PP_ENOMEM) with a message; a
 * success must hold a usable log (rows with positive size and time, ranks
 * evenly on hosts), and small logs are fitted and checked on dgx-h100.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "paraplan/nccl.h"
#include "paraplan/paraplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static pp_system sys;
	static int ready;
	pp_error err;
	if (!ready) {
		if (pp_system_preset("dgx-h100", &sys, &err) != PP_OK)
			abort();
		ready = 1;
	}
	pp_nccl_log log;
	pp_error_clear(&err);
	/* The name matters: the collective may come from it. */
	pp_status st = pp_nccl_parse((const char *)data, size, "fuzz_all_reduce.txt", &log, &err);
	if (st != PP_OK) {
		char buf[1024];
		if ((st != PP_EINPUT && st != PP_ENOMEM) || (st == PP_EINPUT && !err.text[0]))
			abort();
		pp_error_format(&err, buf, sizeof buf);
		return 0;
	}
	if (log.nrows == 0 || !log.rows || log.ranks < 1 || log.nodes < 1 ||
	    log.per_node * log.nodes != log.ranks || log.op == PP_NCCL_UNKNOWN)
		abort();
	for (size_t i = 0; i < log.nrows; i++)
		if (!(log.rows[i].bytes > 0) || !(log.rows[i].time_s > 0) ||
		    !isfinite(log.rows[i].time_s))
			abort();
	if (log.nrows <= 4) {
		pp_nccl_fit fit;
		if (pp_nccl_fit_logs(&sys, &log, 1, &fit, &err) == PP_OK) {
			pp_nccl_check c;
			pp_nccl_check_log(&fit.system, &log, &c);
			if (!(fit.system.nvlink_eff > 0) || !(fit.system.nic_eff > 0) ||
			    isnan(c.rms_log_error))
				abort();
		}
	}
	pp_nccl_log_free(&log);
	return 0;
}
