/*
 * The study's transport between ranks (src/sweep/study_mpi.c): MPI when the
 * build has it (PARAPLAN_HAVE_MPI), otherwise stubs that are never reached
 * (pp_study_comm_open never makes a comm without MPI).  Used only by
 * src/sweep/study.c.
 */
#ifndef PARAPLAN_STUDY_INT_H
#define PARAPLAN_STUDY_INT_H

#include "paraplan/study.h"

struct pp_study_comm {
	int rank, size;
};

/* Rows travel in batches of at most this many records (a record: the point's
 * index as 8 bytes, then its row padded to 8 bytes; 512 sweep rows are
 * 459 KB), one message per batch: each message costs both ranks a hand-off,
 * and on a busy machine a hand-off waits for a scheduler slice.  Measured,
 * 4,096 points at -n 2 (bench/mpi_sweep.sh): 4 rows a batch 0.21-0.26 s, 64
 * rows 0.15 s, 512 rows 0.08 s, one process 0.05-0.08 s. */
#define PPI_STUDY_BATCH 512
/* ... or rows finished this long ago, so the root's checkpoint and progress
 * keep up with slow points. */
#define PPI_STUDY_BATCH_S 0.25

/* What the root rank received (ppi_study_recv). */
typedef enum ppi_study_msg {
	PPI_STUDY_NONE = 0, /* nothing waiting (non-blocking receive) */
	PPI_STUDY_ROWS = 1, /* finished points: *nbytes of records in `buf` */
	PPI_STUDY_DONE = 2, /* a worker is done: *st its status, *err its error */
} ppi_study_msg;

/* `bytes` of `buf` from the root rank to every rank (collective). */
pp_status ppi_study_bcast(const pp_study_comm *c, void *buf, size_t bytes);
/* A send in flight (an MPI_Request inside). */
typedef struct ppi_study_req {
	bool active;
	union {
		unsigned char bytes[64];
		void *align;
	} mpi;
} ppi_study_req;

/* Worker -> root: `nbytes` of records, started (MPI_Isend): `buf` must stay
 * as it is until ppi_study_wait(req).  The worker fills its other batch
 * meanwhile, so it waits on the root only when the root is a batch behind. */
pp_status ppi_study_isend_rows(const pp_study_comm *c, const unsigned char *buf, size_t nbytes,
                               ppi_study_req *req);
/* The send of `req` finished (a no-op when none is active). */
pp_status ppi_study_wait(const pp_study_comm *c, ppi_study_req *req);
/* Worker -> root: this rank has sent all its rows; its status and error. */
pp_status ppi_study_send_done(const pp_study_comm *c, pp_status st, const pp_error *err);
/*
 * Root: one message from any worker (waiting for one when `block`): records
 * into `buf` (room for `cap` bytes) and their size into *nbytes, or *st /
 * *err; the sender in *from.  PPI_STUDY_NONE when !block and none is waiting.
 */
ppi_study_msg ppi_study_recv(const pp_study_comm *c, bool block, unsigned char *buf, size_t cap,
                             size_t *nbytes, pp_status *st, pp_error *err, int *from);

#endif
