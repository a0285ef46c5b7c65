/*
 * libFuzzer target: paraplan's system JSON and GPU JSON.  The same input is
 * fed to both readers (a system embeds a GPU object, so each corpus helps the
 * other).  A failure must be PP_EINPUT with a message; a success must pass the
 * matching range check.
 */
#include <stdint.h>
#include <stdlib.h>

#include "paraplan/paraplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(pp_status st, const pp_error *err)
{
	char buf[1024];
	if (st != PP_EINPUT && st != PP_ENOMEM)
		abort();
	if (st == PP_EINPUT && !err->text[0])
		abort();
	pp_error_format(err, buf, sizeof buf);
	if (!buf[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pp_error err;
	pp_system s;
	pp_error_clear(&err);
	pp_status st = pp_system_from_json((const char *)data, size, "fuzz-system.json", &s, &err);
	if (st != PP_OK)
		check_error(st, &err);
	else if (pp_system_check(&s, &err) != PP_OK)
		abort();

	pp_gpu g;
	pp_error_clear(&err);
	st = pp_gpu_from_json((const char *)data, size, "fuzz-gpu.json", &g, &err);
	if (st != PP_OK)
		check_error(st, &err);
	else if (pp_gpu_check(&g, &err) != PP_OK)
		abort();
	return 0;
}
