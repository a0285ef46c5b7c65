/*
 * Shard layer: points 0..N-1 evaluated one by one, split across MPI ranks, with a
 * checkpoint of finished points (include/paraplan/shard.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "shard_int.h"
#include "util/util.h"

int pp_shard_comm_rank(const pp_shard_comm *c)
{
	return c ? c->rank : 0;
}

int pp_shard_comm_size(const pp_shard_comm *c)
{
	return c ? c->size : 1;
}

bool pp_shard_comm_root(const pp_shard_comm *c)
{
	return pp_shard_comm_rank(c) == 0;
}

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

uint64_t pp_shard_args_hash(int argc, char *const *argv, const char *skip, const char *quiet)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t ns = skip ? strlen(skip) : 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (skip && strcmp(a, skip) == 0) {
			i++; /* and its value */
			continue;
		}
		if ((skip && strncmp(a, skip, ns) == 0 && a[ns] == '=') ||
		    (quiet && strcmp(a, quiet) == 0))
			continue;
		h = fnv(h, a, strlen(a) + 1);
	}
	return h;
}

/* ------------------------------------------------------------ checkpoint */

#define CKPT_MAGIC "paraplan-checkpoint 1"

typedef struct ckpt {
	FILE *f; /* NULL: no checkpoint */
	const char *path;
	char *line; /* one record: index, space, 2 x row_bytes hex, newline, NUL */
	size_t line_cap;
	long long kill_after; /* PP_SHARD_KILL_ENV, 0 = none */
	long long written;
} ckpt;

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One record line (without its newline) into rows[index]: false when it is
 * malformed. */
static bool ckpt_parse(const char *s, size_t len, const pp_shard *st, size_t *index)
{
	char *end;
	if (len < 2 || s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	unsigned long long i = strtoull(s, &end, 10);
	if (errno || *end != ' ' || i >= st->npoints ||
	    (size_t)(s + len - (end + 1)) != 2 * st->row_bytes)
		return false;
	unsigned char *row = (unsigned char *)st->rows + i * st->row_bytes;
	const char *h = end + 1;
	for (size_t k = 0; k < st->row_bytes; k++) {
		int hi = hexval(h[2 * k]), lo = hexval(h[2 * k + 1]);
		if (hi < 0 || lo < 0)
			return false;
		row[k] = (unsigned char)(hi << 4 | lo);
	}
	*index = (size_t)i;
	return true;
}

/* The header of this run. */
static int ckpt_header(const pp_shard *st, char *buf, size_t n)
{
	return snprintf(buf, n, CKPT_MAGIC " args=%016" PRIx64 " points=%zu row=%zu\n",
	                st->args_hash, st->npoints, st->row_bytes);
}

/*
 * Read what the file holds into st->rows and done[], cut a torn last line,
 * and leave the file open for appending (writing the header when it is new).
 */
static pp_status ckpt_read(ckpt *ck, pp_shard *st, unsigned char *done, pp_error *err)
{
	char header[160], *line = NULL;
	size_t cap = 0, lineno = 0;
	off_t good = 0;
	ssize_t len;
	ckpt_header(st, header, sizeof header);
	while ((len = getline(&line, &cap, ck->f)) > 0) {
		lineno++;
		if (line[len - 1] != '\n')
			break; /* torn: the last write was cut short */
		if (lineno == 1) {
			if (strcmp(line, header) != 0) {
				free(line);
				return ppi_fail_at(
				    err, ck->path, 1, 1,
				    "checkpoint of other arguments (or another paraplan build): "
				    "expected '%.*s'; rerun with the same arguments or another "
				    "file",
				    (int)strlen(header) - 1, header);
			}
		} else {
			size_t i;
			if (!ckpt_parse(line, (size_t)len - 1, st, &i)) {
				free(line);
				return ppi_fail_at(err, ck->path, (int)lineno, 1,
				                   "malformed checkpoint record (expected "
				                   "'INDEX HEX' of %zu bytes, INDEX below %zu)",
				                   st->row_bytes, st->npoints);
			}
			if (!done[i])
				st->resumed++;
			done[i] = 1;
		}
		good += len;
	}
	free(line);
	if (ftruncate(fileno(ck->f), good) != 0 || fseeko(ck->f, good, SEEK_SET) != 0 ||
	    (good == 0 && fputs(header, ck->f) < 0) || fflush(ck->f) != 0)
		return ppi_fail(err, ck->path, "", "cannot write the checkpoint: %s",
		                strerror(errno));
	return PP_OK;
}

static pp_status ckpt_open(ckpt *ck, pp_shard *st, unsigned char *done, pp_error *err)
{
	memset(ck, 0, sizeof *ck);
	if (!st->checkpoint)
		return PP_OK;
	ck->path = st->checkpoint;
	const char *k = getenv(PP_SHARD_KILL_ENV);
	ck->kill_after = k ? atoll(k) : 0;
	ck->line_cap = 2 * st->row_bytes + 32;
	if (!(ck->line = ppi_malloc(ck->line_cap)))
		return ppi_oom(err);
	int fd = open(st->checkpoint, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || !(ck->f = fdopen(fd, "r+"))) {
		if (fd >= 0)
			close(fd);
		return ppi_fail(err, st->checkpoint, "", "cannot open the checkpoint: %s",
		                strerror(errno));
	}
	return ckpt_read(ck, st, done, err);
}

static void ckpt_close(ckpt *ck)
{
	if (ck->f)
		fclose(ck->f);
	free(ck->line);
	ck->f = NULL;
	ck->line = NULL;
}

/* Append point i's row and flush it (the kill test hook fires after). */
static pp_status ckpt_write(ckpt *ck, const pp_shard *st, size_t i, pp_error *err)
{
	static const char digits[] = "0123456789abcdef";
	if (!ck->f)
		return PP_OK;
	const unsigned char *row = (const unsigned char *)st->rows + i * st->row_bytes;
	int n = snprintf(ck->line, ck->line_cap, "%zu ", i);
	char *p = ck->line + n;
	for (size_t k = 0; k < st->row_bytes; k++) {
		*p++ = digits[row[k] >> 4];
		*p++ = digits[row[k] & 15];
	}
	*p++ = '\n';
	if (fwrite(ck->line, 1, (size_t)(p - ck->line), ck->f) != (size_t)(p - ck->line) ||
	    fflush(ck->f) != 0)
		return ppi_fail(err, ck->path, "", "cannot write the checkpoint: %s",
		                strerror(errno));
	if (ck->kill_after > 0 && ++ck->written == ck->kill_after)
		raise(SIGKILL); /* test hook: a kill halfway */
	return PP_OK;
}

/* --------------------------------------------------------------- runner */

/* splitmix64's finaliser: a bijection of 64-bit words that scatters
 * neighbouring inputs (Steele, Lea and Flood, OOPSLA 2014). */
static uint64_t mix64(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* deal[k]: the rank that evaluates the k-th of `ntodo` points still to do.
 * Shuffled dealing: the points in a fixed pseudo-random order (Fisher-Yates
 * driven by mix64, the same on every rank), then dealt in turn, so each rank
 * gets ntodo / nranks points (one more for some) and the same mix of costs
 * whatever the grid's structure.  Plain dealing in turn (k mod n) gave rank 0
 * every point of one value of an axis whose length n divides (the GPU counts
 * of the bench's study: 4,096 to rank 0, 16,384 to rank 1), 1.39-1.76x at
 * -n 2.  Contiguous blocks when `blocks` (PARAPLAN_SHARD_ORDER=block, the
 * bench's comparison).  Returns NULL when out of memory; the caller frees. */
static int *deal_new(size_t ntodo, int nranks, bool blocks)
{
	int *deal = ppi_calloc(ntodo ? ntodo : 1, sizeof *deal);
	size_t *perm = blocks ? NULL : ppi_calloc(ntodo ? ntodo : 1, sizeof *perm);
	if (!deal || (!blocks && !perm)) {
		free(deal);
		free(perm);
		return NULL;
	}
	if (blocks) {
		for (size_t k = 0; k < ntodo; k++)
			deal[k] = (int)(k * (size_t)nranks / ntodo);
		return deal;
	}
	for (size_t k = 0; k < ntodo; k++)
		perm[k] = k;
	for (size_t k = ntodo; k > 1; k--) {
		size_t j = (size_t)(mix64(k) % k), t = perm[k - 1];
		perm[k - 1] = perm[j];
		perm[j] = t;
	}
	for (size_t k = 0; k < ntodo; k++)
		deal[perm[k]] = (int)(k % (size_t)nranks);
	free(perm);
	return deal;
}

typedef struct runner {
	pp_shard *st;
	ckpt ck;
	unsigned char *done; /* npoints flags: read from the checkpoint (fixed during
	                        the run: the shard of a point depends on them) */
	size_t ntodo, finished;
	int *deal;          /* deal_new: the rank of each point still to do */
	size_t rec;         /* bytes of a record: 8 (index) + row_bytes rounded up to 8 */
	unsigned char *buf; /* 2 x PPI_SHARD_BATCH records: a worker's two batches, the
	                       root's inbox (the first) */
	pp_status st_first; /* the first failure (root) */
	pp_error err_first;
} runner;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Root: point i is finished (its row in place): record, count, report. */
static void root_finished(runner *r, size_t i)
{
	pp_shard *st = r->st;
	pp_error e;
	pp_error_clear(&e);
	r->finished++;
	pp_status s = ckpt_write(&r->ck, st, i, &e);
	if (s && !r->st_first) {
		r->st_first = s;
		r->err_first = e;
	}
	if (st->progress)
		st->progress(st->progress_ctx, r->finished, r->ntodo);
}

/* Root: take one message from a worker (waiting when `block`); false when
 * none was waiting.  Counts the workers that are done in *ndone. */
static bool root_receive(runner *r, bool block, int *ndone)
{
	pp_shard *st = r->st;
	size_t nbytes = 0;
	pp_status s = PP_OK;
	pp_error e;
	int from = 0;
	pp_error_clear(&e);
	ppi_shard_msg m = ppi_shard_recv(st->comm, block, r->buf, PPI_SHARD_BATCH * r->rec, &nbytes,
	                                 &s, &e, &from);
	for (size_t off = 0; m == PPI_SHARD_ROWS && off + r->rec <= nbytes; off += r->rec) {
		uint64_t i;
		memcpy(&i, r->buf + off, 8);
		if (i >= st->npoints)
			continue;
		memcpy((unsigned char *)st->rows + i * st->row_bytes, r->buf + off + 8,
		       st->row_bytes);
		root_finished(r, (size_t)i);
	}
	if (m == PPI_SHARD_DONE) {
		(*ndone)++;
		if (s && !r->st_first) {
			char buf[sizeof e.text];
			snprintf(buf, sizeof buf, "%s", e.text);
			r->st_first = s;
			r->err_first = e;
			snprintf(r->err_first.text, sizeof r->err_first.text, "rank %d: %.290s",
			         from, buf);
		}
	}
	return m != PPI_SHARD_NONE;
}

/* A worker's share: rows evaluated into one of two batches, each sent
 * (without waiting) when it is full or PPI_SHARD_BATCH_S old while the other
 * fills, then the last message (its status). */
static pp_status worker_points(runner *r, int rank, pp_error *err)
{
	pp_shard *st = r->st;
	pp_status s = PP_OK;
	size_t k = 0, n = 0;
	int cur = 0;
	ppi_shard_req req[2] = {{0}, {0}};
	unsigned char *batch[2] = {r->buf, r->buf + PPI_SHARD_BATCH * r->rec};
	double sent = now_s();
	for (size_t i = 0; i < st->npoints && !s; i++) {
		if (r->done[i] || r->deal[k++] != rank)
			continue;
		unsigned char *slot = batch[cur] + n * r->rec;
		uint64_t i64 = i;
		memcpy(slot, &i64, 8);
		memset(slot + 8, 0, st->row_bytes);
		if ((s = st->eval(st->ctx, i, slot + 8, err)))
			break;
		if (++n == PPI_SHARD_BATCH || now_s() - sent > PPI_SHARD_BATCH_S) {
			s = ppi_shard_isend_rows(st->comm, batch[cur], n * r->rec, &req[cur]);
			cur ^= 1;
			if (!s)
				s = ppi_shard_wait(st->comm, &req[cur]); /* before refilling it */
			n = 0;
			sent = now_s();
		}
	}
	if (n && !s)
		s = ppi_shard_isend_rows(st->comm, batch[cur], n * r->rec, &req[cur]);
	pp_status s2 = ppi_shard_wait(st->comm, &req[0]), s3 = ppi_shard_wait(st->comm, &req[1]);
	pp_status s4 = ppi_shard_send_done(st->comm, s, err);
	return s ? s : s2 ? s2 : s3 ? s3 : s4;
}

/* This rank's share of the points still to do; the root also merges. */
static pp_status run_points(runner *r, pp_error *err)
{
	pp_shard *st = r->st;
	int rank = pp_shard_comm_rank(st->comm), size = pp_shard_comm_size(st->comm);
	const char *shard = getenv("PARAPLAN_SHARD_ORDER");
	r->deal = deal_new(r->ntodo, size, shard && strcmp(shard, "block") == 0);
	if (!r->deal) {
		pp_status s = ppi_oom(err);
		if (rank != 0) /* the root waits for every worker's last message */
			ppi_shard_send_done(st->comm, s, err);
		return s;
	}
	if (rank != 0)
		return worker_points(r, rank, err);
	pp_status s = PP_OK;
	int ndone = 0;
	size_t k = 0;
	for (size_t i = 0; i < st->npoints && !s && !r->st_first; i++) {
		if (r->done[i] || r->deal[k++] != 0)
			continue;
		void *row = (unsigned char *)st->rows + i * st->row_bytes;
		memset(row, 0, st->row_bytes);
		if ((s = st->eval(st->ctx, i, row, err)))
			break;
		root_finished(r, i);
		while (size > 1 && root_receive(r, false, &ndone))
			;
	}
	if (s && !r->st_first) {
		r->st_first = s;
		r->err_first = *err;
	}
	while (ndone < size - 1)
		root_receive(r, true, &ndone);
	st->evaluated = r->finished;
	if (r->st_first && err)
		*err = r->err_first;
	return r->st_first;
}

pp_status pp_shard_run(pp_shard *st, pp_error *err)
{
	if (!st->npoints || !st->row_bytes || !st->rows || !st->eval)
		return ppi_fail(err, "", "shard", "no points, rows or evaluator");
	runner r;
	memset(&r, 0, sizeof r);
	r.st = st;
	st->resumed = st->evaluated = 0;
	bool root = pp_shard_comm_root(st->comm), multi = pp_shard_comm_size(st->comm) > 1;
	r.done = ppi_calloc(st->npoints, 1);
	r.rec = 8 + (st->row_bytes + 7) / 8 * 8;
	r.buf = multi ? ppi_malloc(2 * PPI_SHARD_BATCH * r.rec) : NULL; /* two batches */
	if (!r.done || (multi && !r.buf)) {
		free(r.done);
		free(r.buf);
		return ppi_oom(err);
	}
	/* The root reads the checkpoint; every rank learns its outcome (the
	 * status, then the error) and which points are done. */
	pp_error e;
	pp_error_clear(&e);
	int status = root ? (int)ckpt_open(&r.ck, st, r.done, &e) : 0;
	pp_status s = PP_OK;
	if (multi && ((s = ppi_shard_bcast(st->comm, &status, sizeof status)) ||
	              (status && (s = ppi_shard_bcast(st->comm, &e, sizeof e)))))
		status = (int)s;
	if (!status && multi)
		status = (int)ppi_shard_bcast(st->comm, r.done, st->npoints);
	if (status) {
		if (err)
			*err = e;
	} else {
		for (size_t i = 0; i < st->npoints; i++)
			r.ntodo += !r.done[i];
		status = (int)run_points(&r, err);
	}
	ckpt_close(&r.ck);
	free(r.deal);
	free(r.done);
	free(r.buf);
	return (pp_status)status;
}
