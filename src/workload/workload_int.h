/*
 * Private to the library: memory read from a resolved scenario.
 */
#ifndef PPI_WORKLOAD_INT_H
#define PPI_WORKLOAD_INT_H

#include "paraplan/workload.h"
#include "scenario/scenario_int.h"

/* pp_memory_stage on a scenario (the public one builds a scenario and calls
 * this).  Allocates nothing. */
pp_status ppi_memory_stage(const pp_scenario *sc, int stage, pp_stage_memory *out, pp_error *err);

#endif
