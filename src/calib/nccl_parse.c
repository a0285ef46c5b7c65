/*
 * nccl-tests output in: the text table or the -J JSON file read into a
 * pp_nccl_log (the operation, the ranks and hosts, the device, one row per
 * size), every number bounded.  The fit is nccl.c's.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_int.h"
#include "paraplan/nccl.h"
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

const char *ppi_nccl_base_name(const char *path)
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
		op = find_op_name(ppi_nccl_base_name(source));
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
