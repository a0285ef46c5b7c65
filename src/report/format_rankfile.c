/*
 * The rankfile format: a mapping as an Open MPI rankfile, one line per
 * worker, "rank R=nodeN slot=S" (hosts node0, node1, ...; slot: the GPU on
 * its node).
 */
#include <stdio.h>

#include "format_int.h"

static int place_rankfile(const pp_result *r, FILE *f)
{
	const pp_place_report *pr = r->place;
	long long n = (long long)pr->m->pp * pr->m->tp * pr->m->dp;
	long long g = pr->m->gpus_per_node;
	for (long long w = 0; w < n; w++)
		fprintf(f, "rank %lld=node%lld slot=%lld\n", w, pr->f[w] / g, pr->f[w] % g);
	return ferror(f) ? -1 : 0;
}

const pp_format_type ppi_format_rankfile = {
    .name = "rankfile",
    .aliases = NULL,
    .summary = "a mapping as an Open MPI rankfile ('rank R=HOST slot=GPU')",
    .render = {[PP_RESULT_PLACE] = place_rankfile},
};
