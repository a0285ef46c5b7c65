/*
 * paraplan — plans large-model training runs: memory, time, cost, placement.
 * Umbrella header; each module has its own.
 */
#ifndef PARAPLAN_H
#define PARAPLAN_H

#define PARAPLAN_VERSION "0.1.0"

#include "error.h"
#include "output.h"
#include "estimate.h"
#include "params.h"
#include "fields.h"
#include "report.h"
#include "search.h"
#include "search_parse.h"
#include "shard.h"
#include "spec.h"
#include "sweep.h"

#include "workload.h"
#include "place.h"
#include "scenario.h"
#include "schedule_type.h"
#include "sim.h"
#include "traffic.h"
#include "bandwidth.h"
#include "netmap.h"
#include "moe.h"
#include "share.h"
#include "dhelix.h"
#include "goodput.h"
#include "inputs.h"
#include "launch.h"
#include "inverse.h"
#include "format.h"
#include "recipe.h"

#endif
