/*
 * DualPipe and DualPipeV (DeepSeek-V3 §3.2.1, Table 2; deepseek-ai/DualPipe):
 * the simulator's task lists of their schedule types.  The types themselves
 * (validate, task orders, closed form, residency, parameter copies, sends)
 * are src/spec/sched_dualpipe.c and sched_dualpipev.c, declared in
 * src/spec/sched_int.h (docs/dualpipe.md).
 *
 * DualPipe: p ranks (even), each holding stage r of the "down" copy of the
 * model and stage p - 1 - r of the "up" copy (2x parameters); half the m
 * micro-batches enter at rank 0, half at rank p - 1.  DualPipeV ("cut in
 * half"): the model in 2p chunks, rank r holding chunks r and 2p - 1 - r (one
 * copy), every micro-batch entering at rank 0 and turning at rank p - 1.  In
 * both, the forward of one micro-batch runs overlapped with the backward of
 * another (an F&B pair) so that one's communication hides under the other's
 * compute.
 */
#ifndef PARAPLAN_SCHEDULE_DUALPIPE_H
#define PARAPLAN_SCHEDULE_DUALPIPE_H

#include "paraplan/sim.h"

#include "spec/sched_int.h" /* the pure members: validate, closed form, residency, sends */

/*
 * The task lists of every rank (the repository's eight steps, dualpipe.c),
 * with their placement.  DualPipe: pp_sim_reset(sim, pp, m / 2, 2), chunk 0
 * of rank r the down direction's stage r, chunk 1 the up direction's stage
 * pp - 1 - r, two lines (pp_sim_set_placement), micro-batch i of chunk 0 the
 * i-th of the down direction and of chunk 1 the i-th of the up one.
 * DualPipeV: pp_sim_reset(sim, pp, m, 2), rank r's chunks virtual stages r
 * and 2 pp - 1 - r of one line.  F&B pairs are PP_TASK_FB followed by
 * PP_TASK_B.  The stages given to pp_sim_run carry, as the simulator's v = 2
 * chunks do, twice one chunk's forward, backward and W in fwd_s, bwd_s and
 * wgrad_s, and the overlap factor (F + B) / F&B in si_speedup.
 */
pp_status pp_dualpipe_sim_orders(pp_sim *sim, int pp, long long m, pp_error *err);
pp_status pp_dualpipev_sim_orders(pp_sim *sim, int pp, long long m, pp_error *err);

#endif
