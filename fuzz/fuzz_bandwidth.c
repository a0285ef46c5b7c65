/*
 * libFuzzer target: bandwidth matrices (Pipette JSON and mpiGraph output)
 * read by pp_bandwidth_parse, as `place --bandwidth` reads them on a system
 * of 8 GPUs a node.  A failure must be PP_EINPUT (or PP_ENOMEM) with a
 * message; an accepted matrix must be square with every link finite and in
 * 1 kB/s..1e14 B/s (0 allowed on the diagonal), its endpoints 1 GPU or the
 * node; and the reader allocates no more than the input can hold (libFuzzer's
 * -rss_limit_mb and -malloc_limit_mb catch a matrix sized by a header).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "paraplan/netmap.h"
#include "paraplan/paraplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { GPUS_PER_NODE = 8 };
	pp_bandwidth *bw = NULL;
	pp_error err;
	pp_error_clear(&err);
	pp_status st =
	    pp_bandwidth_parse((const char *)data, size, "fuzz.bw", GPUS_PER_NODE, &bw, &err);
	if (st != PP_OK) {
		if ((st != PP_EINPUT && st != PP_ENOMEM) || (st == PP_EINPUT && !err.text[0]) || bw)
			abort();
		return 0;
	}
	if (!bw || bw->n < 1 || !bw->bytes_per_s ||
	    (bw->gpus_per_endpoint != 1 && bw->gpus_per_endpoint != GPUS_PER_NODE))
		abort();
	/* Each of the n^2 numbers took at least two bytes of the input. */
	if ((double)bw->n * bw->n > (double)size)
		abort();
	for (int i = 0; i < bw->n; i++)
		for (int j = 0; j < bw->n; j++) {
			double v = bw->bytes_per_s[(size_t)i * bw->n + j];
			if (!isfinite(v) || v < 0 || v > 1e14 || (i != j && v < 1e3))
				abort();
		}
	pp_bandwidth_free(bw);
	return 0;
}
