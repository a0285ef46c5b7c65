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

/* What the root rank received (ppi_study_recv). */
typedef enum ppi_study_msg {
	PPI_STUDY_NONE = 0, /* nothing waiting (non-blocking receive) */
	PPI_STUDY_ROW = 1,  /* a finished point: *index, its row in `row` */
	PPI_STUDY_DONE = 2, /* a worker is done: *st its status, *err its error */
} ppi_study_msg;

/* `bytes` of `buf` from the root rank to every rank (collective). */
pp_status ppi_study_bcast(const pp_study_comm *c, void *buf, size_t bytes);
/* Worker -> root: point `index` and its row (`msg`: scratch of 8 + bytes). */
pp_status ppi_study_send_row(const pp_study_comm *c, size_t index, const void *row, size_t bytes,
                             unsigned char *msg);
/* Worker -> root: this rank has sent all its rows; its status and error. */
pp_status ppi_study_send_done(const pp_study_comm *c, pp_status st, const pp_error *err);
/*
 * Root: one message from any worker (waiting for one when `block`) into
 * *index and `row` (bytes) or *st / *err, with the sender in *from.  `msg`
 * is scratch of 8 + bytes.  PPI_STUDY_NONE when !block and none is waiting.
 */
ppi_study_msg ppi_study_recv(const pp_study_comm *c, bool block, size_t *index, void *row,
                             size_t bytes, unsigned char *msg, pp_status *st, pp_error *err,
                             int *from);

#endif
