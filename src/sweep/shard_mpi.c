/*
 * The shard layer's ranks: Open MPI when the build found it (PARAPLAN_HAVE_MPI,
 * CMake's find_package(MPI)), else only the launcher check.  A plain process
 * (no launcher's environment) never calls MPI_Init.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shard_int.h"
#include "util/util.h"

#ifdef PARAPLAN_HAVE_MPI
#include <mpi.h>
#endif

/* The ranks a launcher's environment announces: 0 when there is none. */
static long launcher_size(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return atol(v) > 0 ? atol(v) : 1;
	}
	return getenv("PMIX_RANK") ? 1 : 0;
}

bool pp_shard_have_mpi(void)
{
#ifdef PARAPLAN_HAVE_MPI
	return true;
#else
	return false;
#endif
}

#ifndef PARAPLAN_HAVE_MPI

pp_status pp_shard_comm_open(pp_shard_comm **out, pp_error *err)
{
	long n = launcher_size();
	*out = NULL;
	if (n > 1)
		return ppi_fail(err, "", "",
		                "launched by mpirun with %ld ranks, but this paraplan was built "
		                "without MPI: install Open MPI (apt-get install openmpi-bin "
		                "libopenmpi-dev) and rebuild (cmake finds it)",
		                n);
	return PP_OK;
}

void pp_shard_comm_close(pp_shard_comm *c)
{
	free(c);
}

pp_status ppi_shard_bcast(const pp_shard_comm *c, void *buf, size_t bytes)
{
	return PP_EINTERNAL;
}

pp_status ppi_shard_isend_rows(const pp_shard_comm *c, const unsigned char *buf, size_t nbytes,
                               ppi_shard_req *req)
{
	return PP_EINTERNAL;
}

pp_status ppi_shard_wait(const pp_shard_comm *c, ppi_shard_req *req)
{
	return PP_EINTERNAL;
}

pp_status ppi_shard_send_done(const pp_shard_comm *c, pp_status st, const pp_error *err)
{
	return PP_EINTERNAL;
}

ppi_shard_msg ppi_shard_recv(const pp_shard_comm *c, bool block, unsigned char *buf, size_t cap,
                             size_t *nbytes, pp_status *st, pp_error *err, int *from)
{
	*st = PP_EINTERNAL;
	*from = 0;
	return PPI_SHARD_DONE;
}

#else

enum { TAG_ROW = 1, TAG_DONE = 2 };

/* A worker's last message: its status and error. */
typedef struct done_msg {
	int status;
	pp_error err;
} done_msg;

pp_status pp_shard_comm_open(pp_shard_comm **out, pp_error *err)
{
	*out = NULL;
	if (launcher_size() == 0)
		return PP_OK;
	int inited = 0;
	MPI_Initialized(&inited);
	if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
		return ppi_fail(err, "", "", "MPI_Init failed under the MPI launcher");
	pp_shard_comm *c = ppi_calloc(1, sizeof *c);
	if (!c) {
		MPI_Finalize();
		return ppi_oom(err);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c->size);
	*out = c;
	return PP_OK;
}

void pp_shard_comm_close(pp_shard_comm *c)
{
	if (!c)
		return;
	free(c);
	MPI_Finalize();
}

pp_status ppi_shard_bcast(const pp_shard_comm *c, void *buf, size_t bytes)
{
	return MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS
	           ? PP_OK
	           : PP_EINTERNAL;
}

_Static_assert(sizeof(MPI_Request) <= sizeof(((ppi_shard_req *)0)->mpi.bytes),
               "an MPI_Request fits ppi_shard_req");

pp_status ppi_shard_isend_rows(const pp_shard_comm *c, const unsigned char *buf, size_t nbytes,
                               ppi_shard_req *req)
{
	MPI_Request r;
	if (MPI_Isend(buf, (int)nbytes, MPI_BYTE, 0, TAG_ROW, MPI_COMM_WORLD, &r) != MPI_SUCCESS)
		return PP_EINTERNAL;
	memcpy(req->mpi.bytes, &r, sizeof r);
	req->active = true;
	return PP_OK;
}

pp_status ppi_shard_wait(const pp_shard_comm *c, ppi_shard_req *req)
{
	if (!req->active)
		return PP_OK;
	MPI_Request r;
	memcpy(&r, req->mpi.bytes, sizeof r);
	req->active = false;
	return MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS ? PP_OK : PP_EINTERNAL;
}

pp_status ppi_shard_send_done(const pp_shard_comm *c, pp_status st, const pp_error *err)
{
	done_msg d;
	memset(&d, 0, sizeof d);
	d.status = (int)st;
	if (st && err)
		d.err = *err;
	return MPI_Send(&d, (int)sizeof d, MPI_BYTE, 0, TAG_DONE, MPI_COMM_WORLD) == MPI_SUCCESS
	           ? PP_OK
	           : PP_EINTERNAL;
}

ppi_shard_msg ppi_shard_recv(const pp_shard_comm *c, bool block, unsigned char *buf, size_t cap,
                             size_t *nbytes, pp_status *st, pp_error *err, int *from)
{
	MPI_Status ms;
	int flag = 1;
	/* Waiting, the root sleeps 50 us between probes rather than spin in
	 * MPI_Probe: where ranks outnumber free cores a spinning root takes the
	 * core a worker needs.  A point costs 20 us and more: the added latency is
	 * noise. */
	for (;;) {
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms);
		if (flag || !block)
			break;
		nanosleep(&(struct timespec){0, 50000}, NULL);
	}
	if (!flag)
		return PPI_SHARD_NONE;
	*from = ms.MPI_SOURCE;
	if (ms.MPI_TAG == TAG_DONE) {
		done_msg d;
		MPI_Recv(&d, (int)sizeof d, MPI_BYTE, ms.MPI_SOURCE, TAG_DONE, MPI_COMM_WORLD,
		         MPI_STATUS_IGNORE);
		*st = (pp_status)d.status;
		if (err)
			*err = d.err;
		return PPI_SHARD_DONE;
	}
	int count = 0;
	MPI_Get_count(&ms, MPI_BYTE, &count);
	if (count < 0 || (size_t)count > cap)
		count = 0; /* not a batch of this run: dropped below */
	MPI_Recv(buf, (int)cap, MPI_BYTE, ms.MPI_SOURCE, TAG_ROW, MPI_COMM_WORLD,
	         MPI_STATUS_IGNORE);
	*nbytes = (size_t)count;
	return PPI_SHARD_ROWS;
}

#endif
