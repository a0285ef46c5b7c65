/*
 * nccl-tests output (text table or -J JSON) -> per-tier latency and bandwidth
 * efficiency, fitted with paraplan's own collective model (pp_coll_time).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/cost.h"
#include "paraplan/nccl.h"
#include "paraplan/params.h"
#include "util/util.h"

/* ------------------------------------------------------------ operations */

static const struct {
	const char *name;
	pp_nccl_op op;
} op_names[] = {
    /* Longer names first: "reduce" is a suffix of two of them. */
    {"all_reduce", PP_NCCL_ALL_REDUCE},
    {"all_gather", PP_NCCL_ALL_GATHER},
    {"reduce_scatter", PP_NCCL_REDUCE_SCATTER},
    {"alltoall", PP_NCCL_ALLTOALL},
    {"sendrecv", PP_NCCL_SENDRECV},
    {"broadcast", PP_NCCL_BROADCAST},
    {"reduce", PP_NCCL_REDUCE},
};
#define NOPS (sizeof op_names / sizeof op_names[0])

const char *pp_nccl_op_name(pp_nccl_op op)
{
	for (size_t i = 0; i < NOPS; i++)
		if (op_names[i].op == op)
			return op_names[i].name;
	return "?";
}

double pp_nccl_busbw_factor(pp_nccl_op op, int n)
{
	if (n < 1)
		return 0;
	switch (op) {
	case PP_NCCL_ALL_REDUCE: return 2.0 * (n - 1) / n;
	case PP_NCCL_ALL_GATHER:
	case PP_NCCL_REDUCE_SCATTER:
	case PP_NCCL_ALLTOALL: return (double)(n - 1) / n;
	case PP_NCCL_SENDRECV:
	case PP_NCCL_BROADCAST:
	case PP_NCCL_REDUCE: return 1;
	case PP_NCCL_UNKNOWN:
	default: return 0;
	}
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The first "<op>_perf" in s (not preceded by an identifier character), by
 * position; PP_NCCL_UNKNOWN when none. */
static pp_nccl_op find_op(const char *s)
{
	const char *best = NULL;
	pp_nccl_op op = PP_NCCL_UNKNOWN;
	for (size_t i = 0; i < NOPS; i++) {
		char pat[32];
		snprintf(pat, sizeof pat, "%s_perf", op_names[i].name);
		for (const char *p = strstr(s, pat); p; p = strstr(p + 1, pat)) {
			if (p > s && ident_char(p[-1]))
				continue;
			if (!best || p < best) {
				best = p;
				op = op_names[i].op;
			}
			break;
		}
	}
	return op;
}

/* An operation's name anywhere in a file name ("t4_all_reduce.txt"), longer
 * names first. */
static pp_nccl_op find_op_name(const char *s)
{
	for (size_t i = 0; i < NOPS; i++)
		if (strstr(s, op_names[i].name))
			return op_names[i].op;
	return PP_NCCL_UNKNOWN;
}

/* ------------------------------------------------------------ text parse */

/* The most ranks a log may name: far above any nccl-tests run, and small
 * enough that counts and products stay in an int. */
#define NCCL_RANKS_MAX (1 << 24)
/* A collective's logged time in microseconds: nothing completes in under a
 * nanosecond, and a time above about 11.6 days is not a benchmark. */
#define NCCL_TIME_MIN_US 1e-3
#define NCCL_TIME_MAX_US 1e12
/* algbw and busbw in GB/s: 0 up to 1 PB/s, far above any link. */
#define NCCL_BW_MAX_GBPS 1e6
/* A message size in bytes: 0 up to 2^60. */
#define NCCL_BYTES_MAX 1152921504606846976.0

typedef struct parse_state {
	const char *source;
	pp_error *err;
	pp_nccl_row *rows;
	size_t nrows, cap;
	int ranks;
	ppi_strmap hosts; /* each "Rank" line's host, with its count of ranks */
	long long nthread, ngpus;
	bool footer; /* the text table's footer ("# Out of bounds", "# Avg bus") was seen */
	char device[PP_NCCL_DEVICE_MAX];
} parse_state;

static pp_status add_row(parse_state *ps, pp_nccl_row r)
{
	if (ps->nrows == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 64;
		pp_nccl_row *nr = ppi_realloc(ps->rows, cap * sizeof *nr);
		if (!nr)
			return ppi_fail(ps->err, ps->source, NULL, "out of memory"), PP_ENOMEM;
		ps->rows = nr;
		ps->cap = cap;
	}
	ps->rows[ps->nrows++] = r;
	return PP_OK;
}

/* One rank on `host`: counted per host in a hash set (linear in the ranks). */
static pp_status add_host(parse_state *ps, const char *host, size_t n)
{
	if (ps->ranks >= NCCL_RANKS_MAX)
		return ppi_fail(ps->err, ps->source, NULL,
		                "more than %d ranks: not an nccl-tests log paraplan reads",
		                NCCL_RANKS_MAX);
	bool added;
	ppi_strmap_entry *e = ppi_strmap_add(&ps->hosts, host, n, &added);
	if (!e)
		return ppi_fail(ps->err, ps->source, NULL, "out of memory"), PP_ENOMEM;
	e->value++;
	ps->ranks++;
	return PP_OK;
}

#define MAX_TOKENS 48

typedef struct tokens {
	int n;
	const char *s[MAX_TOKENS];
	size_t len[MAX_TOKENS];
} tokens;

static void tokenize(const char *line, size_t n, tokens *t)
{
	t->n = 0;
	size_t i = 0;
	while (i < n && t->n < MAX_TOKENS) {
		while (i < n && isspace((unsigned char)line[i]))
			i++;
		if (i >= n)
			break;
		size_t b = i;
		while (i < n && !isspace((unsigned char)line[i]))
			i++;
		t->s[t->n] = line + b;
		t->len[t->n] = i - b;
		t->n++;
	}
}

static bool tok_is(const tokens *t, int i, const char *w)
{
	return i < t->n && t->len[i] == strlen(w) && strncmp(t->s[i], w, t->len[i]) == 0;
}

static bool tok_digits(const tokens *t, int i)
{
	if (i >= t->n || t->len[i] == 0)
		return false;
	for (size_t k = 0; k < t->len[i]; k++)
		if (!isdigit((unsigned char)t->s[i][k]))
			return false;
	return true;
}

/* A number filling the whole token, in [lo, hi]; false otherwise, and `why`
 * says what is wrong (ppi_parse_double). */
static bool tok_num(const tokens *t, int i, double lo, double hi, double *out, char *why,
                    size_t n_why)
{
	if (i >= t->n) {
		snprintf(why, n_why, "missing");
		return false;
	}
	return ppi_parse_double(t->s[i], t->len[i], lo, hi, out, why, n_why);
}

/* Past an mpirun --tag-output prefix such as "[1,0]<stdout>:". */
static const char *strip_prefix(const char *line, const char *end)
{
	if (line < end && *line == '[') {
		const char *q = memchr(line, ']', (size_t)(end - line));
		if (q && q + 1 < end && q[1] == '<') {
			const char *c = memchr(q, ':', (size_t)(end - q));
			if (c)
				return c + 1;
		}
	}
	return line;
}

/* "#  Rank  3 Group  0 Pid 16629 on HOST device  3 [0000:09:00] NAME" (older
 * versions have no Group). */
static pp_status rank_line(parse_state *ps, const tokens *t, bool *matched)
{
	*matched = false;
	if (!(tok_is(t, 0, "#") && tok_is(t, 1, "Rank") && tok_digits(t, 2)))
		return PP_OK;
	int on = -1, dev = -1;
	for (int i = 3; i < t->n; i++) {
		if (on < 0 && tok_is(t, i, "on") && i + 1 < t->n)
			on = i + 1;
		else if (on >= 0 && tok_is(t, i, "device")) {
			dev = i;
			break;
		}
	}
	if (on < 0)
		return PP_OK;
	*matched = true;
	PPI_TRY(add_host(ps, t->s[on], t->len[on]));
	/* Device name: what follows "device N [bus]". */
	if (ps->ranks == 1 && dev > 0 && dev + 3 < t->n) {
		const char *b = t->s[dev + 3];
		const char *e = t->s[t->n - 1] + t->len[t->n - 1];
		size_t n = (size_t)(e - b);
		if (n >= sizeof ps->device)
			n = sizeof ps->device - 1;
		memcpy(ps->device, b, n);
		ps->device[n] = '\0';
	}
	return PP_OK;
}

static pp_status parse_text(const char *text, parse_state *ps, pp_nccl_op *op)
{
	int time_col = -1; /* token index of the out-of-place time, from the header */
	bool done = false; /* past the first table's footer */
	int lineno = 0;
	const char *line = text;
	while (*line) {
		lineno++;
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		const char *s = strip_prefix(line, end);
		tokens t;
		tokenize(s, (size_t)(end - s), &t);
		bool matched = false;
		PPI_TRY(rank_line(ps, &t, &matched));
		int first = tok_is(&t, 0, "#") ? 1 : 0;
		if (matched) {
			/* counted */
		} else if (first && tok_is(&t, 1, "Collective") && tok_is(&t, 2, "test") &&
		           tok_is(&t, 3, "starting:") && t.n > 4 && *op == PP_NCCL_UNKNOWN) {
			char buf[128];
			size_t n = t.len[4] < sizeof buf - 1 ? t.len[4] : sizeof buf - 1;
			memcpy(buf, t.s[4], n);
			buf[n] = '\0';
			*op = find_op(buf);
		} else if (first && tok_is(&t, 1, "nThread") && tok_digits(&t, 2) &&
		           tok_is(&t, 3, "nGpus") && tok_digits(&t, 4)) {
			char why[128];
			long long ranks;
			int bad = 2;
			if (!ppi_parse_ll(t.s[2], t.len[2], 1, NCCL_RANKS_MAX, &ps->nthread, why,
			                  sizeof why) ||
			    (bad = 4, !ppi_parse_ll(t.s[4], t.len[4], 1, NCCL_RANKS_MAX, &ps->ngpus,
			                            why, sizeof why)))
				return ppi_fail_at(ps->err, ps->source, lineno,
				                   (int)(t.s[bad] - line) + 1, "%s: %s",
				                   bad == 2 ? "nThread" : "nGpus", why);
			if (!ppi_mul_ll(ps->nthread, ps->ngpus, &ranks) || ranks > NCCL_RANKS_MAX)
				return ppi_fail_at(ps->err, ps->source, lineno,
				                   (int)(t.s[2] - line) + 1,
				                   "nThread %lld x nGpus %lld: more than %d ranks",
				                   ps->nthread, ps->ngpus, NCCL_RANKS_MAX);
		} else if (first && tok_is(&t, 1, "size") && tok_is(&t, 2, "count")) {
			if (ps->nrows > 0)
				return ppi_fail_at(
				    ps->err, ps->source, lineno, (int)(t.s[0] - line) + 1,
				    "a second nccl-tests table: one test per log (split "
				    "the file, one LOG per test)");
			/* The header: "#  size  count  type [redop root]  time  algbw  busbw ..."
			 * (redop and root are absent in old versions); the data rows have
			 * the same columns without the '#'. */
			for (int i = 1; i < t.n; i++)
				if (tok_is(&t, i, "time") || tok_is(&t, i, "cputime")) {
					time_col = i - 1;
					break;
				}
		} else if (first) {
			if (ps->nrows > 0 && (tok_is(&t, 1, "Out") || tok_is(&t, 1, "Avg")))
				done = ps->footer = true; /* the table's footer */
		} else if (time_col >= 0 && !done && t.n > 0) {
			/* A data row: size and count are integers; allow one leading
			 * token (a timestamp) before them. */
			int o = tok_digits(&t, 0) && tok_digits(&t, 1)   ? 0
			        : tok_digits(&t, 1) && tok_digits(&t, 2) ? 1
			                                                 : -1;
			if (o >= 0 && t.n > o + time_col + 2) {
				double bytes, tm, alg, bus;
				int c = o + time_col, bad = o;
				char why[128];
				const char *col = "size";
				if (!tok_num(&t, o, 0, NCCL_BYTES_MAX, &bytes, why, sizeof why) ||
				    (bad = c, col = "time (us)",
				     !tok_num(&t, c, NCCL_TIME_MIN_US, NCCL_TIME_MAX_US, &tm, why,
				              sizeof why)) ||
				    (bad = c + 1, col = "algbw (GB/s)",
				     !tok_num(&t, c + 1, 0, NCCL_BW_MAX_GBPS, &alg, why,
				              sizeof why)) ||
				    (bad = c + 2, col = "busbw (GB/s)",
				     !tok_num(&t, c + 2, 0, NCCL_BW_MAX_GBPS, &bus, why,
				              sizeof why)))
					return ppi_fail_at(ps->err, ps->source, lineno,
					                   bad < t.n ? (int)(t.s[bad] - line) + 1
					                             : 1,
					                   "%s column: %s", col, why);
				if (bytes > 0 && tm > 0) {
					pp_nccl_row r = {bytes, tm * 1e-6, alg * 1e9, bus * 1e9};
					PPI_TRY(add_row(ps, r));
				}
			}
		}
		line = *end ? end + 1 : end;
	}
	return PP_OK;
}

/* ------------------------------------------------------------ JSON parse */

static double jnum(json_t *v)
{
	if (json_is_number(v))
		return json_number_value(v);
	return NAN;
}

static pp_status parse_json(const char *text, size_t len, parse_state *ps, pp_nccl_op *op)
{
	json_t *root;
	PPI_TRY(ppi_json_parse_object(text, len, ps->source, &root, ps->err));
	pp_status st = PP_OK;
	json_t *args = json_object_get(root, "args");
	if (json_is_array(args) && json_array_size(args) > 0 &&
	    json_is_string(json_array_get(args, 0)))
		*op = find_op(json_string_value(json_array_get(args, 0)));
	json_t *config = json_object_get(root, "config");
	if (json_is_object(config)) {
		json_t *nt = json_object_get(config, "nthreads"),
		       *ng = json_object_get(config, "ngpus");
		if (json_is_integer(nt) && json_is_integer(ng)) {
			long long a = json_integer_value(nt), b = json_integer_value(ng), r;
			if (a < 1 || b < 1 || a > NCCL_RANKS_MAX || b > NCCL_RANKS_MAX ||
			    !ppi_mul_ll(a, b, &r) || r > NCCL_RANKS_MAX) {
				st = ppi_fail(ps->err, ps->source, "config",
				              "nthreads %lld x ngpus %lld: expected 1 to %d ranks",
				              a, b, NCCL_RANKS_MAX);
				goto out;
			}
			ps->nthread = a;
			ps->ngpus = b;
		}
	}
	json_t *devices = json_object_get(root, "devices");
	if (!devices && json_is_object(config))
		devices = json_object_get(config, "devices");
	size_t i;
	json_t *d;
	if (json_is_array(devices)) {
		json_array_foreach (devices, i, d) {
			const char *h = json_string_value(json_object_get(d, "hostname"));
			if (!h)
				h = "";
			if ((st = add_host(ps, h, strlen(h))))
				goto out;
			const char *name = json_string_value(json_object_get(d, "device_info"));
			if (ps->ranks == 1 && name)
				ppi_strlcpy(ps->device, name, sizeof ps->device);
		}
	}
	json_t *results = json_object_get(root, "results");
	if (!json_is_array(results)) {
		st = ppi_fail(ps->err, ps->source, "results",
		              "expected nccl-tests' -J output: an "
		              "object with a \"results\" array");
		goto out;
	}
	json_array_foreach (results, i, d) {
		double bytes = jnum(json_object_get(d, "size"));
		json_t *m = json_object_get(d, "out_of_place");
		if (!json_is_object(m))
			m = json_object_get(d, "in_place");
		if (!json_is_object(m) || !(bytes == bytes)) {
			char field[64];
			snprintf(field, sizeof field, "results[%zu]", i);
			st = ppi_fail(ps->err, ps->source, field,
			              "expected \"size\" and an \"out_of_place\" or \"in_place\" "
			              "object");
			goto out;
		}
		double tm = jnum(json_object_get(m, "time"));
		if (!(tm == tm))
			tm = jnum(json_object_get(m, "cpu_time"));
		double alg = jnum(json_object_get(m, "alg_bw")),
		       bus = jnum(json_object_get(m, "bus_bw"));
		if (!(bytes >= 0 && bytes <= NCCL_BYTES_MAX) ||
		    (tm == tm && !(tm >= NCCL_TIME_MIN_US && tm <= NCCL_TIME_MAX_US)) ||
		    (alg == alg && !(alg >= 0 && alg <= NCCL_BW_MAX_GBPS)) ||
		    (bus == bus && !(bus >= 0 && bus <= NCCL_BW_MAX_GBPS))) {
			char field[64];
			snprintf(field, sizeof field, "results[%zu]", i);
			st = ppi_fail(ps->err, ps->source, field,
			              "size %g B, time %g us, alg_bw %g, bus_bw %g GB/s: expected "
			              "a size up to 2^60 B, a time in [%g, %g] us and bandwidths "
			              "up to %g GB/s",
			              bytes, tm, alg, bus, NCCL_TIME_MIN_US, NCCL_TIME_MAX_US,
			              NCCL_BW_MAX_GBPS);
			goto out;
		}
		if (bytes > 0 && tm > 0) {
			pp_nccl_row r = {bytes, tm * 1e-6, alg == alg ? alg * 1e9 : 0,
			                 bus == bus ? bus * 1e9 : 0};
			if ((st = add_row(ps, r)))
				goto out;
		}
	}
out:
	json_decref(root);
	return st;
}

/* ------------------------------------------------------------ load */

void pp_nccl_log_free(pp_nccl_log *lg)
{
	if (!lg)
		return;
	free(lg->rows);
	lg->rows = NULL;
	lg->nrows = 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

pp_status pp_nccl_parse(const char *text, size_t len, const char *source, pp_nccl_log *out,
                        pp_error *err)
{
	memset(out, 0, sizeof *out);
	if (!source)
		source = "nccl-tests log";
	ppi_strlcpy(out->source, source, sizeof out->source);
	char *copy = ppi_malloc(len + 1);
	if (!copy)
		return ppi_fail(err, source, NULL, "out of memory"), PP_ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	if (memchr(copy, '\0', len)) {
		free(copy);
		return ppi_fail(err, source, NULL,
		                "binary data (a NUL byte), not nccl-tests output");
	}
	parse_state ps = {0};
	ps.source = source;
	ps.err = err;
	pp_nccl_op op = PP_NCCL_UNKNOWN;
	const char *p = copy;
	while (isspace((unsigned char)*p))
		p++;
	out->json = *p == '{';
	pp_status st = out->json ? parse_json(copy, len, &ps, &op) : parse_text(copy, &ps, &op);
	if (!st && op == PP_NCCL_UNKNOWN && !out->json)
		op = find_op(copy);
	if (!st && op == PP_NCCL_UNKNOWN)
		op = find_op_name(base_name(source));
	if (!st && op == PP_NCCL_UNKNOWN)
		st = ppi_fail(err, source, NULL,
		              "cannot tell which collective this is: no '# Collective test "
		              "starting' line, no '<op>_perf' in the text, and the file name "
		              "names none (all_reduce, all_gather, reduce_scatter, alltoall, "
		              "sendrecv, broadcast, reduce)");
	if (!st && ps.nrows == 0)
		st = ppi_fail(err, source, NULL,
		              out->json ? "no results with a positive size and time"
		                        : "no nccl-tests table found (a '#  size  count  type ... "
		                          "time  algbw  busbw' header followed by rows)");
	if (!st && !out->json && !ps.footer)
		st = ppi_fail(err, source, NULL,
		              "the log is cut short: %zu sizes read, up to %.0f B, and no '# Out "
		              "of bounds values' or '# Avg bus bandwidth' line after the table "
		              "(the test did not finish; a "
		              "fit on part of the curve is not trusted)",
		              ps.nrows, ps.rows[ps.nrows - 1].bytes);
	if (!st) {
		int ranks = ps.ranks, nodes = 1;
		if (ranks > 0) {
			/* nccl-tests runs the same number of ranks on every host. */
			nodes = (int)ps.hosts.n;
			const ppi_strmap_entry *a = NULL;
			for (size_t i = 0; i < ps.hosts.cap && !st; i++) {
				const ppi_strmap_entry *e = &ps.hosts.slot[i];
				if (!e->key)
					continue;
				if (!a)
					a = e;
				else if (e->value != a->value)
					st = ppi_fail(
					    err, source, NULL,
					    "%d ranks on %d hosts, not the same number on "
					    "each: %.40s has %lld, %.40s has %lld",
					    ranks, nodes, a->key, a->value, e->key, e->value);
			}
		} else if (ps.nthread > 0 && ps.ngpus > 0) {
			ranks = (int)(ps.nthread * ps.ngpus); /* bounded when read */
		}
		if (st)
			; /* said above */
		else if (ranks < 1)
			st = ppi_fail(err, source, NULL,
			              "cannot tell the number of ranks: no '#  Rank N ... on HOST "
			              "device ...' lines and no '# nThread T nGpus G' line");
		else if (ranks % nodes != 0)
			st = ppi_fail(err, source, NULL,
			              "%d ranks on %d hosts: not the same number on every host",
			              ranks, nodes);
		else {
			out->ranks = ranks;
			out->nodes = nodes;
			out->per_node = ranks / nodes;
		}
	}
	ppi_strmap_free(&ps.hosts);
	free(copy);
	if (st) {
		free(ps.rows);
		return st;
	}
	out->op = op;
	out->rows = ps.rows;
	out->nrows = ps.nrows;
	ppi_strlcpy(out->device, ps.device, sizeof out->device);
	return PP_OK;
}

pp_status pp_nccl_load(const char *path, pp_nccl_log *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	char *text;
	size_t len;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_nccl_parse(text, len, path, out, err);
	free(text);
	return st;
}

/* ------------------------------------------------------------ model */

static pp_coll_kind coll_of(pp_nccl_op op)
{
	switch (op) {
	case PP_NCCL_ALL_GATHER: return PP_COLL_ALLGATHER;
	case PP_NCCL_REDUCE_SCATTER: return PP_COLL_REDUCESCATTER;
	case PP_NCCL_ALLTOALL: return PP_COLL_ALLTOALL;
	case PP_NCCL_SENDRECV: return PP_COLL_P2P;
	case PP_NCCL_BROADCAST: return PP_COLL_BROADCAST;
	case PP_NCCL_REDUCE: return PP_COLL_REDUCE;
	case PP_NCCL_ALL_REDUCE:
	case PP_NCCL_UNKNOWN:
	default: return PP_COLL_ALLREDUCE;
	}
}

void pp_nccl_layout(const pp_system *s, const pp_nccl_log *lg, int *size, int *per_domain)
{
	int n = lg->ranks, nd;
	if (s->nvlink_domain > s->gpus_per_node) /* an NVLink domain spanning nodes */
		nd = lg->per_node * (s->nvlink_domain / s->gpus_per_node);
	else
		nd = lg->per_node < s->nvlink_domain ? lg->per_node : s->nvlink_domain;
	*size = n;
	*per_domain = nd > n ? n : nd < 1 ? 1 : nd;
}

bool pp_nccl_intra(const pp_system *s, const pp_nccl_log *lg)
{
	int n, nd;
	pp_nccl_layout(s, lg, &n, &nd);
	return nd >= n;
}

double pp_nccl_model_time(const pp_system *s, const pp_nccl_log *lg, double bytes)
{
	pp_layout l;
	pp_nccl_layout(s, lg, &l.size, &l.per_domain);
	return pp_coll_time(s, &l, coll_of(lg->op), bytes, NULL);
}

void pp_nccl_check_log(const pp_system *s, const pp_nccl_log *lg, pp_nccl_check *out)
{
	memset(out, 0, sizeof *out);
	if (lg->nrows == 0)
		return;
	double f = pp_nccl_busbw_factor(lg->op, lg->ranks), sum = 0;
	const pp_nccl_row *lo = &lg->rows[0], *hi = &lg->rows[0];
	for (size_t i = 0; i < lg->nrows; i++) {
		const pp_nccl_row *r = &lg->rows[i];
		if (r->bytes < lo->bytes)
			lo = r;
		if (r->bytes >= hi->bytes)
			hi = r;
		double e = log(pp_nccl_model_time(s, lg, r->bytes) / r->time_s);
		sum += e * e;
	}
	double th = pp_nccl_model_time(s, lg, hi->bytes);
	out->large_bytes = hi->bytes;
	out->busbw_log = hi->bytes / hi->time_s * f;
	out->busbw_model = th > 0 ? hi->bytes / th * f : 0;
	out->small_bytes = lo->bytes;
	out->small_log_s = lo->time_s;
	out->small_model_s = pp_nccl_model_time(s, lg, lo->bytes);
	out->rms_log_error = sqrt(sum / (double)lg->nrows);
}

/* ------------------------------------------------------------ fit */

typedef struct tier {
	const pp_nccl_log *logs;
	size_t nlogs;
	bool intra; /* which logs count, and which parameters move */
	pp_system s;
	double lat_lo, lat_hi, eff_lo, eff_hi;
	bool *mask; /* rows the latency step fits, all logs' rows in order; NULL = all */
} tier;

static void tier_set(tier *t, double lat, double eff)
{
	if (t->intra) {
		t->s.nvlink_latency_s = lat;
		t->s.nvlink_eff = eff;
	} else {
		t->s.nic_latency_s = lat;
		t->s.nic_eff = eff;
	}
}

/* Sum of squared ln(model / logged) over the tier's rows. */
static double tier_cost_rows(tier *t, double lat, double eff, const bool *mask)
{
	tier_set(t, lat, eff);
	double sum = 0;
	size_t idx = 0;
	for (size_t k = 0; k < t->nlogs; k++) {
		const pp_nccl_log *lg = &t->logs[k];
		size_t first = idx;
		idx += lg->nrows;
		if (pp_nccl_intra(&t->s, lg) != t->intra)
			continue;
		for (size_t i = 0; i < lg->nrows; i++) {
			if (mask && !mask[first + i])
				continue;
			double m = pp_nccl_model_time(&t->s, lg, lg->rows[i].bytes);
			double e = m > 0 ? log(m / lg->rows[i].time_s) : 50;
			sum += e * e;
		}
	}
	return sum;
}

static double tier_cost(tier *t, double lat, double eff)
{
	return tier_cost_rows(t, lat, eff, NULL);
}

/* The latency-bound rows: those whose logged time is at most twice the
 * log's shortest (the flat start of the curve).  Read from the log, not the
 * model, so the set does not follow the fit. */
static void latency_rows(tier *t)
{
	size_t idx = 0;
	for (size_t k = 0; k < t->nlogs; k++) {
		const pp_nccl_log *lg = &t->logs[k];
		double lo = INFINITY;
		for (size_t i = 0; i < lg->nrows; i++)
			if (lg->rows[i].time_s < lo)
				lo = lg->rows[i].time_s;
		for (size_t i = 0; i < lg->nrows; i++)
			t->mask[idx + i] = lg->rows[i].time_s <= 2 * lo;
		idx += lg->nrows;
	}
}

/* Minimise g over [lo, hi]: a grid of 24 points, then golden-section search
 * in the bracket around the best one.  Returns the argmin; *best its value. */
typedef double (*fn1)(tier *t, double x, double other, double *arg_out);

static double golden(tier *t, fn1 g, double other, double lo, double hi, double *best,
                     double *arg_out)
{
	enum { GRID = 24, STEPS = 48 };
	double bx = lo, bv = INFINITY;
	for (int i = 0; i <= GRID; i++) {
		double x = lo + (hi - lo) * i / GRID;
		double v = g(t, x, other, NULL);
		if (v < bv) {
			bv = v;
			bx = x;
		}
	}
	double step = (hi - lo) / GRID;
	double a = bx - step > lo ? bx - step : lo, b = bx + step < hi ? bx + step : hi;
	const double r = 0.6180339887498949;
	double c = b - r * (b - a), d = a + r * (b - a);
	double fc = g(t, c, other, NULL), fd = g(t, d, other, NULL);
	for (int i = 0; i < STEPS; i++) {
		if (fc < fd) {
			b = d;
			d = c;
			fd = fc;
			c = b - r * (b - a);
			fc = g(t, c, other, NULL);
		} else {
			a = c;
			c = d;
			fc = fd;
			d = a + r * (b - a);
			fd = g(t, d, other, NULL);
		}
	}
	double x = fc < fd ? c : d, v = fc < fd ? fc : fd;
	if (bv < v) {
		x = bx;
		v = bv;
	}
	*best = v;
	if (arg_out)
		g(t, x, other, arg_out);
	return x;
}

/* Sum of squared (model - logged) / (the log's largest time): absolute time,
 * so the bandwidth-bound sizes dominate; each log counts alike. */
static double cost_abs(tier *t, double eff, double lnlat, double *unused)
{
	(void)unused;
	tier_set(t, exp(lnlat), eff);
	double sum = 0;
	for (size_t k = 0; k < t->nlogs; k++) {
		const pp_nccl_log *lg = &t->logs[k];
		if (pp_nccl_intra(&t->s, lg) != t->intra)
			continue;
		double top = 0;
		for (size_t i = 0; i < lg->nrows; i++)
			if (lg->rows[i].time_s > top)
				top = lg->rows[i].time_s;
		for (size_t i = 0; i < lg->nrows; i++) {
			double e = (pp_nccl_model_time(&t->s, lg, lg->rows[i].bytes) -
			            lg->rows[i].time_s) /
			           top;
			sum += e * e;
		}
	}
	return sum;
}

/* Sum of squared ln(model / logged) over the latency-bound rows at a given
 * ln(latency). */
static double cost_ln(tier *t, double lnlat, double eff, double *unused)
{
	(void)unused;
	return tier_cost_rows(t, exp(lnlat), eff, t->mask);
}

static size_t tier_rows(const tier *t)
{
	size_t n = 0;
	for (size_t k = 0; k < t->nlogs; k++)
		if (pp_nccl_intra(&t->s, &t->logs[k]) == t->intra)
			n += t->logs[k].nrows;
	return n;
}

/*
 * Alternating least squares: the efficiency (the bandwidth) minimises the
 * squared error in time, where the large, bandwidth-bound sizes weigh most;
 * the latency minimises the squared error in ln(time) over the latency-bound
 * sizes (latency_rows).  Repeat until neither moves.  (One least-squares
 * objective over every size would trade the two ends against the middle of
 * the curve, where NCCL's protocol changes make any alpha-beta model wrong by
 * tens of percent; the middle would pull the latency up.)
 */
static void fit_tier(tier *t, bool *at_bound, double *rms)
{
	double lat = t->intra ? t->s.nvlink_latency_s : t->s.nic_latency_s;
	double eff = t->intra ? t->s.nvlink_eff : t->s.nic_eff;
	double lnlat = log(lat > t->lat_lo && lat < t->lat_hi ? lat : sqrt(t->lat_lo * t->lat_hi));
	if (!(eff > t->eff_lo && eff < t->eff_hi))
		eff = 0.5 * (t->eff_lo + t->eff_hi);
	double v = 0;
	size_t total = 0;
	for (size_t k = 0; k < t->nlogs; k++)
		total += t->logs[k].nrows;
	t->mask = ppi_calloc(total ? total : 1, sizeof *t->mask); /* NULL: every row */
	if (t->mask)
		latency_rows(t);
	for (int it = 0; it < 60; it++) {
		double e = golden(t, cost_abs, lnlat, t->eff_lo, t->eff_hi, &v, NULL);
		double l = golden(t, cost_ln, e, log(t->lat_lo), log(t->lat_hi), &v, NULL);
		bool settled = fabs(e - eff) < 1e-7 && fabs(l - lnlat) < 1e-7;
		eff = e;
		lnlat = l;
		if (settled)
			break;
	}
	free(t->mask);
	t->mask = NULL;
	tier_set(t, exp(lnlat), eff);
	double lo = log(t->lat_lo), hi = log(t->lat_hi);
	*at_bound = eff < t->eff_lo + 1e-3 || eff > t->eff_hi - 1e-3 || lnlat < lo + 1e-3 ||
	            lnlat > hi - 1e-3;
	size_t n = tier_rows(t);
	*rms = n ? sqrt(tier_cost(t, exp(lnlat), eff) / (double)n) : 0;
}

pp_status pp_nccl_fit_logs(const pp_system *start, const pp_nccl_log *logs, size_t nlogs,
                           pp_nccl_fit *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	out->system = *start;
	if (nlogs == 0)
		return ppi_fail(err, "nccl-tests", NULL, "no logs to fit");
	for (size_t k = 0; k < nlogs; k++) {
		const pp_nccl_log *lg = &logs[k];
		if (lg->ranks < 2)
			return ppi_fail(err, lg->source, NULL,
			                "%d rank: a collective needs at least 2 to measure a link",
			                lg->ranks);
		if (lg->nrows == 0 || lg->op == PP_NCCL_UNKNOWN)
			return ppi_fail(err, lg->source, NULL, "no rows to fit");
		if (lg->per_node > start->gpus_per_node)
			return ppi_fail(
			    err, lg->source, NULL,
			    "%d ranks on one host, but system '%s' has %d GPUs per node",
			    lg->per_node, start->name, start->gpus_per_node);
		if (pp_nccl_intra(start, lg))
			out->intra_logs++;
		else
			out->inter_logs++;
	}
	const pp_param *nv = pp_param_find("framework.nvlink_eff");
	const pp_param *nic = pp_param_find("framework.nic_eff");
	tier t = {logs, nlogs, true, *start, 1e-8, 1e-3, nv->valid_lo, nv->valid_hi, NULL};
	if (out->intra_logs)
		fit_tier(&t, &out->intra_at_bound, &out->intra_rms);
	if (out->inter_logs) {
		t.intra = false;
		t.lat_hi = 1e-2;
		t.eff_lo = nic->valid_lo;
		t.eff_hi = nic->valid_hi;
		fit_tier(&t, &out->inter_at_bound, &out->inter_rms);
	}
	out->system = t.s;
	return PP_OK;
}

/* ------------------------------------------------------------ output */

/* Four significant digits: what a log can support. */
static double round4(double x)
{
	if (!(x > 0))
		return x;
	double p = pow(10, floor(log10(x)) - 3);
	return round(x / p) * p;
}

static void human_bytes(double b, char *buf, size_t n)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, n, "%g %s", b, unit[u]);
}

/* "h100x4.txt (all_reduce_perf, 4 ranks on 1 host, 28 sizes 8 B-1 GiB): busbw
 * at 1 GiB 355.9 GB/s logged, 355.1 modelled; 8 B: 26.1 us logged, 24.0
 * modelled" for each log of the tier, joined by "; ". */
static void tier_note(const pp_system *s, const pp_nccl_log *logs, size_t nlogs, bool intra,
                      const char *what, char *buf, size_t n)
{
	size_t used =
	    (size_t)snprintf(buf, n, "%s fitted by 'paraplan calibrate --nccl-tests' to ", what);
	const char *sep = "";
	for (size_t k = 0; k < nlogs && used < n; k++) {
		const pp_nccl_log *lg = &logs[k];
		if (pp_nccl_intra(s, lg) != intra)
			continue;
		pp_nccl_check c;
		pp_nccl_check_log(s, lg, &c);
		char lo[32], hi[32];
		human_bytes(c.small_bytes, lo, sizeof lo);
		human_bytes(c.large_bytes, hi, sizeof hi);
		used += (size_t)snprintf(
		    buf + used, n - used,
		    "%s%s (%s_perf, %d ranks on %d host%s, %zu sizes %s-%s): busbw at %s %.1f GB/s "
		    "logged, %.1f modelled; %s: %.1f us logged, %.1f modelled",
		    sep, base_name(lg->source), pp_nccl_op_name(lg->op), lg->ranks, lg->nodes,
		    lg->nodes == 1 ? "" : "s", lg->nrows, lo, hi, hi, c.busbw_log / 1e9,
		    c.busbw_model / 1e9, lo, c.small_log_s * 1e6, c.small_model_s * 1e6);
		sep = "; ";
	}
	if (used < n)
		snprintf(buf + used, n - used,
		         " (least squares of ln(model/logged time) over every size, paraplan's "
		         "collective model; docs/calibration.md)");
}

static int set_real(json_t *obj, const char *key, double v)
{
	return json_object_set_new(obj, key, json_real(round4(v)));
}

pp_status pp_nccl_system_json(const char *start_ref, const pp_nccl_fit *fit,
                              const pp_nccl_log *logs, size_t nlogs, char **json, pp_error *err)
{
	*json = NULL;
	char *text;
	size_t len;
	PPI_TRY(pp_system_source_text(start_ref, &text, &len, err));
	json_t *root;
	pp_status st = ppi_json_parse_object(text, len, start_ref, &root, err);
	free(text);
	if (st)
		return st;
	const pp_system *s = &fit->system;
	char name[PP_NAME_MAX + 8];
	snprintf(name, sizeof name, "%s-nccl", s->name);
	json_object_set_new(root, "name", json_string(name));
	json_object_del(root, "aliases");
	json_t *fw = json_object_get(root, "framework");
	if (!json_is_object(fw)) {
		fw = json_object();
		json_object_set_new(root, "framework", fw);
	}
	json_t *src = json_object_get(root, "sources");
	if (!json_is_object(src)) {
		src = json_object();
		json_object_set_new(root, "sources", src);
	}
	char note[4096];
	if (fit->intra_logs) {
		set_real(root, "nvlink_latency_s", s->nvlink_latency_s);
		set_real(fw, "nvlink_eff", s->nvlink_eff);
		tier_note(s, logs, nlogs, true, "NVLink tier", note, sizeof note);
		json_object_set_new(src, "nvlink_latency_s", json_string(note));
		json_object_set_new(src, "framework.nvlink_eff", json_string(note));
	}
	if (fit->inter_logs) {
		set_real(root, "nic_latency_s", s->nic_latency_s);
		set_real(fw, "nic_eff", s->nic_eff);
		tier_note(s, logs, nlogs, false, "NIC tier", note, sizeof note);
		json_object_set_new(src, "nic_latency_s", json_string(note));
		json_object_set_new(src, "framework.nic_eff", json_string(note));
	}
	char *out =
	    json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (!out)
		return ppi_fail(err, start_ref, NULL, "out of memory"), PP_ENOMEM;
	/* What was written must read back as a system. */
	pp_system back;
	st = pp_system_from_json(out, strlen(out), name, &back, err);
	if (st) {
		free(out);
		return st;
	}
	size_t n = strlen(out);
	char *nl = ppi_realloc(out, n + 2);
	if (!nl) {
		free(out);
		return ppi_fail(err, start_ref, NULL, "out of memory"), PP_ENOMEM;
	}
	nl[n] = '\n';
	nl[n + 1] = '\0';
	*json = nl;
	return PP_OK;
}
