/*
 * The shard layer's transport between ranks (src/sweep/shard_mpi.c): MPI when the
 * build has it (PARAPLAN_HAVE_MPI), otherwise stubs that are never reached
 * (pp_shard_comm_open never makes a comm without MPI).  Used only by
 * src/sweep/shard.c.
 */
#ifndef PARAPLAN_SHARD_INT_H
#define PARAPLAN_SHARD_INT_H

#include "paraplan/shard.h"

struct pp_shard_comm {
	int rank, size;
};

/* Rows travel in batches of at most this many records (a record: the point's
 * index as 8 bytes, then its row padded to 8 bytes; 512 sweep rows are
 * 459 KB), one message per batch: each message costs both ranks a hand-off,
 * and on a busy machine a hand-off waits for a scheduler slice.  Measured,
 * 4,096 points at -n 2 (bench/mpi_sweep.sh): 4 rows a batch 0.21-0.26 s, 64
 * rows 0.15 s, 512 rows 0.08 s, one process 0.05-0.08 s. */
#define PPI_SHARD_BATCH 512
/* ... or rows finished this long ago, so the root's checkpoint and progress
 * keep up with slow points. */
#define PPI_SHARD_BATCH_S 0.25

/* What the root rank received (ppi_shard_recv). */
typedef enum ppi_shard_msg {
	PPI_SHARD_NONE = 0, /* nothing waiting (non-blocking receive) */
	PPI_SHARD_ROWS = 1, /* finished points: *nbytes of records in `buf` */
	PPI_SHARD_DONE = 2, /* a worker is done: *st its status, *err its error */
} ppi_shard_msg;

/* `bytes` of `buf` from the root rank to every rank (collective). */
pp_status ppi_shard_bcast(const pp_shard_comm *c, void *buf, size_t bytes);
/* A send in flight (an MPI_Request inside). */
typedef struct ppi_shard_req {
	bool active;
	union {
		unsigned char bytes[64];
		void *align;
	} mpi;
} ppi_shard_req;

/* Worker -> root: `nbytes` of records, started (MPI_Isend): `buf` must stay
 * as it is until ppi_shard_wait(req).  The worker fills its other batch
 * meanwhile, so it waits on the root only when the root is a batch behind. */
pp_status ppi_shard_isend_rows(const pp_shard_comm *c, const unsigned char *buf, size_t nbytes,
                               ppi_shard_req *req);
/* The send of `req` finished (a no-op when none is active). */
pp_status ppi_shard_wait(const pp_shard_comm *c, ppi_shard_req *req);
/* Worker -> root: this rank has sent all its rows; its status and error. */
pp_status ppi_shard_send_done(const pp_shard_comm *c, pp_status st, const pp_error *err);
/*
 * Root: one message from any worker (waiting for one when `block`): records
 * into `buf` (room for `cap` bytes) and their size into *nbytes, or *st /
 * *err; the sender in *from.  PPI_SHARD_NONE when !block and none is waiting.
 */
ppi_shard_msg ppi_shard_recv(const pp_shard_comm *c, bool block, unsigned char *buf, size_t cap,
                             size_t *nbytes, pp_status *st, pp_error *err, int *from);

#endif
