/*
 * paraplan — shard: the execution layer under a sweep or a study.  The points
 * of a run are numbered 0..N-1 and each is evaluated on its own ("evaluate point
 * i -> row", a fixed-size block of bytes); pp_shard_run evaluates them, in
 * one process or split across the ranks of an Open MPI job, optionally
 * recording each finished point in a checkpoint file, and leaves every row in
 * point order on the root rank, so what the caller renders from them is the
 * same bytes however many ranks ran.
 *
 *     pp_shard_comm *comm;                     // NULL: a plain process
 *     pp_shard_comm_open(&comm, &err);         // MPI_Init only under mpirun
 *     pp_shard st = {.npoints = n, .row_bytes = sizeof(row), .rows = rows,
 *                    .eval = my_eval, .ctx = my_ctx, .comm = comm};
 *     pp_shard_run(&st, &err);
 *     if (pp_shard_comm_root(comm)) render(rows);
 *     pp_shard_comm_close(comm);              // MPI_Finalize
 *
 * Sharding: static and shuffled over the points still to do (those not in
 * the checkpoint): in a fixed pseudo-random order, dealt to the ranks in
 * turn, so each gets the same count and the same mix of costs.  Workers send each
 * finished row to rank 0 at once; rank 0 evaluates its own share, receives
 * the others' between its points, writes the checkpoint and reports
 * progress.  docs/hwsweep.md ("Scaling out on Open MPI") gives the
 * measurement behind the choice.
 *
 * Checkpoint file: a header line
 *     paraplan-checkpoint 1 args=<16 hex> points=<N> row=<bytes>
 * then one line per finished point, "<index> <row as hex>", appended and
 * flushed as each point finishes.  A torn last line (the process was killed
 * while writing it) is dropped and the file cut back to the last whole line.
 * A header whose arguments hash, point count or row size differ from this
 * run's is refused (PP_EINPUT naming the file).
 */
#ifndef PARAPLAN_SHARD_H
#define PARAPLAN_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ranks of an MPI job (opaque); NULL stands for one plain process. */
typedef struct pp_shard_comm pp_shard_comm;

/*
 * *out: the MPI job this process was launched in (MPI_Init called), or NULL
 * when no launcher's environment is present (OMPI_COMM_WORLD_SIZE, PMI_SIZE,
 * PMIX_RANK): a plain process never initialises MPI.  Built without MPI, a
 * launcher's environment with more than one rank is PP_EINPUT ("built without
 * MPI: install libopenmpi-dev and rebuild"); with one rank, *out = NULL.
 * PP_EINTERNAL when MPI_Init fails.
 */
pp_status pp_shard_comm_open(pp_shard_comm **out, pp_error *err);
/* MPI_Finalize and free; NULL is a no-op. */
void pp_shard_comm_close(pp_shard_comm *c);
/* This process's rank and the job's size (0 and 1 for NULL). */
int pp_shard_comm_rank(const pp_shard_comm *c);
int pp_shard_comm_size(const pp_shard_comm *c);
/* Rank 0 (or NULL): the rank that holds the merged rows and writes outputs. */
bool pp_shard_comm_root(const pp_shard_comm *c);
/* True when this build has MPI compiled in (PARAPLAN_HAVE_MPI). */
bool pp_shard_have_mpi(void);

/*
 * A 64-bit FNV-1a hash of the arguments argv[0..argc-1] (each with its
 * terminating NUL), leaving out `skip` and its value ("--checkpoint FILE" or
 * "--checkpoint=FILE") and `quiet` (a flag without a value that changes no
 * row).  The checkpoint header's args=.
 */
uint64_t pp_shard_args_hash(int argc, char *const *argv, const char *skip, const char *quiet);

/* The i-th point evaluated into `row` (row_bytes, zeroed by the caller of
 * eval).  PP_OK, or a status that stops the run (a point that is merely
 * invalid should be a row saying so, not a failure). */
typedef pp_status (*pp_shard_eval_fn)(void *ctx, size_t i, void *row, pp_error *err);

typedef struct pp_shard {
	size_t npoints;
	size_t row_bytes;
	void *rows; /* npoints x row_bytes, caller-owned; complete on the root rank */
	pp_shard_eval_fn eval;
	void *ctx;
	const char *checkpoint; /* file of finished points, NULL = none */
	uint64_t args_hash;     /* pp_shard_args_hash of the command (checkpoint header) */
	const pp_shard_comm *comm;
	/* On the root rank, after each finished point: the points finished by
	 * this run (all ranks) and how many this run has to evaluate (the
	 * checkpoint's excluded).  NULL = none. */
	void (*progress)(void *ctx, size_t done, size_t total);
	void *progress_ctx;
	/* Filled in by pp_shard_run (on the root rank). */
	size_t resumed;   /* points read back from the checkpoint */
	size_t evaluated; /* points evaluated by this run, all ranks together */
} pp_shard;

/*
 * Evaluate every point of `st` that the checkpoint does not hold, split across
 * the ranks of st->comm.  On the root rank st->rows then holds every row in
 * point order; on the others only their own.  PP_EINPUT for a checkpoint that
 * cannot be read or written or belongs to other arguments (naming the file),
 * else the first failing eval's status (every rank returns it; the root's
 * `err` names the rank).  Every rank of the job must call it.
 */
pp_status pp_shard_run(pp_shard *st, pp_error *err);

/* Test hook: the root rank raises SIGKILL on itself right after the K-th
 * checkpoint record of this run is flushed when the environment sets
 * PARAPLAN_TEST_KILL_AFTER=K (a kill halfway, for the resume test). */
#define PP_SHARD_KILL_ENV "PARAPLAN_TEST_KILL_AFTER"

#ifdef __cplusplus
}
#endif
#endif
