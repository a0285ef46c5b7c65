/*
 * Bandwidth matrices (Pipette JSON, mpiGraph) and a synthetic heterogeneous
 * cluster (include/paraplan/bandwidth.h).  Pipette's latency model over a
 * mapping and the annealer read them downstream of the estimate (src/map/,
 * netmap.h; seed 001 §V Eq. 3-6).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/bandwidth.h"
#include "util/util.h"

pp_status pp_bandwidth_new(int n, int gpus_per_endpoint, double bytes_per_s, pp_bandwidth **out,
                           pp_error *err)
{
	*out = NULL;
	if (n < 1 || n > 65536)
		return ppi_fail(err, "", "bandwidth", "expected 1..65536 endpoints, got %d", n);
	pp_bandwidth *b = ppi_calloc(1, sizeof *b);
	if (b)
		b->bytes_per_s = ppi_malloc((size_t)n * n * sizeof *b->bytes_per_s);
	if (!b || !b->bytes_per_s) {
		free(b);
		return ppi_fail(err, "", "bandwidth", "out of memory");
	}
	b->n = n;
	b->gpus_per_endpoint = gpus_per_endpoint > 0 ? gpus_per_endpoint : 1;
	for (size_t i = 0; i < (size_t)n * n; i++)
		b->bytes_per_s[i] = bytes_per_s;
	*out = b;
	return PP_OK;
}

void pp_bandwidth_free(pp_bandwidth *bw)
{
	if (!bw)
		return;
	free(bw->bytes_per_s);
	free(bw);
}

/* SplitMix64 (Steele, Lea, Flood 2014): a seeded, portable stream. */
static unsigned long long splitmix(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unit(unsigned long long *s)
{
	return (double)(splitmix(s) >> 11) * 0x1.0p-53;
}

pp_status pp_bandwidth_synthetic(int nodes, int gpus_per_node, double nominal, double spread,
                                 double asym, unsigned long long seed, pp_bandwidth **out,
                                 pp_error *err)
{
	if (!(nominal > 0) || !(spread >= 0 && spread < 1) || !(asym >= 0 && asym < 1))
		return ppi_fail(err, "", "bandwidth",
		                "synthetic: need nominal > 0, 0 <= spread < 1, 0 <= asym < 1");
	pp_status st = pp_bandwidth_new(nodes, gpus_per_node, nominal, out, err);
	if (st)
		return st;
	double *b = (*out)->bytes_per_s;
	unsigned long long s = seed;
	for (int i = 0; i < nodes; i++)
		for (int j = i + 1; j < nodes; j++) {
			double u = unit(&s);
			double pair = nominal * (1 - spread * u * u);
			b[(size_t)i * nodes + j] = pair * (1 + asym * (2 * unit(&s) - 1));
			b[(size_t)j * nodes + i] = pair * (1 + asym * (2 * unit(&s) - 1));
		}
	return PP_OK;
}

/* ------------------------------------------------------------ readers */

/* A link's bandwidth between two endpoints, in bytes/s: 1 kB/s (anything
 * slower is a dead link, not a measurement) to 10^14 (the GPU presets'
 * bound, src/spec/hardware.c MAX_BW).  The diagonal may be 0. */
#define LINK_MIN_BYTES_PER_S 1e3
#define LINK_MAX_BYTES_PER_S 1e14
/* mpiGraph's MB: 2^20 bytes. */
#define MPIGRAPH_MB 1048576.0

static pp_status read_pipette(const char *path, const char *text, size_t len, int gpn,
                              pp_bandwidth **out, pp_error *err)
{
	json_t *root;
	pp_status st = ppi_json_parse_object(text, len, path, &root, err);
	if (st)
		return st;
	const char *allowed[] = {"gpus", "bandwidth", "unit", "gpus_per_endpoint", NULL};
	ppi_obj r = {root, path, "", err};
	if ((st = ppi_obj_keys(&r, allowed)))
		goto done;
	char unitname[16] = "GB/s";
	if ((st = ppi_get_str(&r, "unit", false, unitname, sizeof unitname)))
		goto done;
	double scale;
	if (strcmp(unitname, "B/s") == 0)
		scale = 1;
	else if (strcmp(unitname, "MB/s") == 0)
		scale = 1e6;
	else if (strcmp(unitname, "GB/s") == 0)
		scale = 1e9;
	else if (strcmp(unitname, "Gb/s") == 0)
		scale = 1e9 / 8;
	else {
		st = ppi_fail(err, path, "unit", "expected B/s, MB/s, GB/s or Gb/s, got '%s'",
		              unitname);
		goto done;
	}
	int per = 1;
	if ((st = ppi_get_int(&r, "gpus_per_endpoint", false, 1, 1024, &per)))
		goto done;
	/* One GPU an endpoint, or one node (the system's GPUs per node): the
	 * two mappings pp_pipette_bw reads; any other grouping would be read
	 * as one of them, so it is refused. */
	if (per != 1 && per != gpn) {
		st = ppi_fail(err, path, "gpus_per_endpoint",
		              "%d: expected 1 (a matrix per GPU) or %d (per node, the system's "
		              "GPUs per node)",
		              per, gpn);
		goto done;
	}
	json_t *gpus = json_object_get(root, "gpus");
	json_t *m = json_object_get(root, "bandwidth");
	if (!json_is_array(m) || json_array_size(m) == 0) {
		st = ppi_fail(err, path, "bandwidth", "expected a non-empty array of rows");
		goto done;
	}
	size_t n = json_array_size(m);
	if (gpus && (!json_is_array(gpus) || json_array_size(gpus) != n)) {
		st = ppi_fail(err, path, "gpus", "expected an array of %zu names, one per row", n);
		goto done;
	}
	/* Every row's size before the n x n matrix is allocated: the numbers
	 * are then in the file, and the matrix a small multiple of it. */
	for (size_t i = 0; i < n; i++) {
		json_t *row = json_array_get(m, i);
		if (!json_is_array(row) || json_array_size(row) != n) {
			st =
			    ppi_fail(err, path, "bandwidth", "row %zu: expected %zu numbers", i, n);
			goto done;
		}
	}
	if ((st = pp_bandwidth_new((int)n, per, 0, out, err)))
		goto done;
	for (size_t i = 0; i < n && !st; i++) {
		json_t *row = json_array_get(m, i);
		if (!json_is_array(row) || json_array_size(row) != n) {
			st =
			    ppi_fail(err, path, "bandwidth", "row %zu: expected %zu numbers", i, n);
			break;
		}
		for (size_t j = 0; j < n; j++) {
			json_t *v = json_array_get(row, j);
			double x = json_is_number(v) ? json_number_value(v) * scale : -1;
			if (!(i == j && x == 0) &&
			    !(x >= LINK_MIN_BYTES_PER_S && x <= LINK_MAX_BYTES_PER_S)) {
				st = ppi_fail(
				    err, path, "bandwidth",
				    "[%zu][%zu]: expected a bandwidth of %g to %g B/s (0 on "
				    "the diagonal), got %g %s",
				    i, j, LINK_MIN_BYTES_PER_S, LINK_MAX_BYTES_PER_S,
				    json_is_number(v) ? json_number_value(v) : -1.0, unitname);
				break;
			}
			(*out)->bytes_per_s[i * n + j] = x;
		}
	}
	if (st) {
		pp_bandwidth_free(*out);
		*out = NULL;
	}
done:
	json_decref(root);
	return st;
}

/* mpiGraph: the "Send" table after its header line "Send\thost:0\t...". */
static pp_status read_mpigraph(const char *path, const char *text, int gpn, pp_bandwidth **out,
                               pp_error *err)
{
	const char *p = text;
	while (p && !(strncmp(p, "Send\t", 5) == 0))
		p = (p = strchr(p, '\n')) ? p + 1 : NULL;
	if (!p)
		return ppi_fail(err, path, "mpiGraph", "no 'Send' bandwidth table");
	/* columns: the tab-separated names after "Send" */
	int n = 0;
	const char *eol = strchr(p, '\n');
	for (const char *q = p + 4; *q && *q != '\n'; q++)
		if (*q == '\t' && q[1] != '\t' && q[1] != '\n' && q[1] != '\r' && q[1] != '\0')
			n++;
	if (n < 1)
		return ppi_fail(err, path, "mpiGraph", "the 'Send' table names no ranks");
	/* The header's n x n before allocating them: each of the n rows holds n
	 * tab-separated numbers, at least two bytes each, so the rest of the file
	 * must hold 2 n^2 bytes. */
	size_t rest = eol ? strlen(eol) : 0;
	if ((double)n * n * 2 > (double)rest)
		return ppi_fail(err, path, "mpiGraph",
		                "the 'Send' header names %d ranks, but the %zu bytes after it "
		                "cannot hold %d rows of %d numbers",
		                n, rest, n, n);
	pp_status st = pp_bandwidth_new(n, gpn, 0, out, err);
	if (st)
		return st;
	p = eol ? eol + 1 : NULL;
	for (int i = 0; i < n && !st; i++) {
		const char *to = p ? strstr(p, " to\t") : NULL;
		const char *nl = p ? strchr(p, '\n') : NULL;
		if (!p || !to || (nl && to > nl)) {
			st = ppi_fail(err, path, "mpiGraph",
			              "Send table row %d: expected 'host:%d to'", i, i);
			break;
		}
		const char *q = to + 4;
		for (int j = 0; j < n; j++) {
			size_t k = strcspn(q, "\t\r\n");
			double v = 0;
			char why[160];
			bool ok = ppi_parse_double(q, k, 0, LINK_MAX_BYTES_PER_S / MPIGRAPH_MB, &v,
			                           why, sizeof why);
			if (ok && !(i == j && v == 0) && v * MPIGRAPH_MB < LINK_MIN_BYTES_PER_S) {
				ok = false;
				snprintf(why, sizeof why, "%g MB/s is below %g B/s", v,
				         LINK_MIN_BYTES_PER_S);
			}
			if (!ok) {
				st = ppi_fail(err, path, "mpiGraph",
				              "Send table row %d column %d: %s (MB/s)", i, j, why);
				break;
			}
			(*out)->bytes_per_s[(size_t)i * n + j] = v * MPIGRAPH_MB;
			q += k;
			if (*q == '\t')
				q++;
		}
		p = nl ? nl + 1 : NULL;
	}
	if (st) {
		pp_bandwidth_free(*out);
		*out = NULL;
	}
	return st;
}

pp_status pp_bandwidth_parse(const char *text, size_t len, const char *source, int gpus_per_node,
                             pp_bandwidth **out, pp_error *err)
{
	*out = NULL;
	/* The text readers stop at a NUL: one inside is refused, and the copy
	 * is terminated. */
	if (memchr(text, '\0', len))
		return ppi_fail(err, source, "bandwidth", "binary data (a NUL byte)");
	char *copy = ppi_malloc(len + 1);
	if (!copy)
		return ppi_oom(err);
	memcpy(copy, text, len);
	copy[len] = '\0';
	pp_status st;
	const char *p = copy;
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p == '{')
		st = read_pipette(source, copy, len, gpus_per_node, out, err);
	else if (strstr(copy, "START mpiGraph"))
		st = read_mpigraph(source, copy, gpus_per_node, out, err);
	else
		st = ppi_fail(err, source, "bandwidth",
		              "neither a Pipette JSON object nor mpiGraph output");
	free(copy);
	return st;
}

pp_status pp_bandwidth_read(const char *path, int gpus_per_node, pp_bandwidth **out, pp_error *err)
{
	*out = NULL;
	char *text;
	size_t len;
	pp_status st = ppi_read_file(path, &text, &len, err);
	if (st)
		return st;
	st = pp_bandwidth_parse(text, len, path, gpus_per_node, out, err);
	free(text);
	return st;
}
