/*
 * DHelix (seed 002): the overlap model (Eq. 1) -- the platforms' tables, their
 * JSON reader, and the table a system uses at its TP degree.  The time of a
 * pair of operators under a table (pp_dh_pair_time) is in dhelix_pair.c,
 * beside the DP that calls it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dhelix_int.h"
#include "util/util.h"

static const char *const kind_names[PP_DH_NKINDS] = {"gemm", "attn", "elem", "comm-intra",
                                                     "comm-cross"};

const char *pp_dh_kind_name(pp_dh_kind k)
{
	return (unsigned)k < PP_DH_NKINDS ? kind_names[k] : "?";
}

/* ------------------------------------------------------- overlap model */

/*
 * The platforms' tables are data: data/overlap/NAME.json (embedded like the
 * presets, PP_KIND_OVERLAP), each value with its source.  Seed 002 §3.1 and
 * Fig. 4 give the ranking of the pairwise OEF, not numbers in its text:
 * computation-computation pairs overlap poorly, FlashAttention with GEMM
 * worst; computation with communication well; intra- with cross-node
 * communication well; a collective with one of its own kind poorly
 * (forbidden on the same link, §4.2).  Table 7 (H100, TP 8, 16, 32) gives
 * the kernel slowdown and launch interval, and the computation-communication
 * OEF is 1 - kernel_slowdown.  A GPU names its table in its own file
 * (data/gpus, "overlap_platform"; pp_dh_platform_of_gpu).
 */

/* Overlap tables parsed per thread, looked up by name before the embedded
 * files are walked (a search over wshape asks per plan and stage). */
#define OVERLAP_CACHE_MAX 16

pp_status pp_dh_overlap_default(const char *platform, pp_dh_overlap *out, pp_error *err)
{
	static _Thread_local pp_dh_overlap filled[OVERLAP_CACHE_MAX];
	static _Thread_local int nfilled;
	for (int i = 0; i < nfilled; i++)
		if (ppi_streq(filled[i].name, platform)) {
			*out = filled[i];
			return PP_OK;
		}
	size_t n = pp_preset_count(PP_KIND_OVERLAP);
	for (size_t i = 0; i < n; i++) {
		const char *name = pp_preset_name(PP_KIND_OVERLAP, i);
		if (!ppi_streq(name, platform))
			continue;
		const char *text, *path;
		PPI_TRY(pp_preset_text(PP_KIND_OVERLAP, name, &text, &path, err));
		pp_status st = pp_dh_overlap_from_json(text, strlen(text), path, out, err);
		if (st) /* out of memory, or the build embedded a table that does not read */
			return st == PP_ENOMEM ? st : PP_EINTERNAL;
		if (nfilled < OVERLAP_CACHE_MAX && ppi_streq(out->name, platform))
			filled[nfilled++] = *out;
		return PP_OK;
	}
	char list[256] = "";
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(list);
		snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
		         pp_preset_name(PP_KIND_OVERLAP, i));
	}
	return ppi_fail(err, "", "overlap", "unknown overlap platform \"%s\" (%s)", platform, list);
}

const char *pp_dh_platform_of_gpu(const pp_gpu *g)
{
	return g->overlap_platform[0] ? g->overlap_platform : NULL;
}

/* "gemm" .. "comm-cross" -> kind, -1 when unknown. */
static int kind_parse(const char *s, size_t n)
{
	for (int k = 0; k < PP_DH_NKINDS; k++)
		if (strlen(kind_names[k]) == n && strncmp(kind_names[k], s, n) == 0)
			return k;
	return -1;
}

/* "by_tp": [{"tp": N, "kernel_slowdown": x, "launch_interval": y}, ...],
 * optional, at most PP_DH_TP_ROWS rows in increasing tp. */
static pp_status tp_rows_from_json(const ppi_obj *r, pp_dh_overlap *out)
{
	json_t *a = json_object_get(r->obj, "by_tp");
	out->ntp = 0;
	if (!a)
		return PP_OK;
	if (!json_is_array(a) || json_array_size(a) > PP_DH_TP_ROWS)
		return ppi_fail(r->err, r->source, "overlap.by_tp",
		                "expected an array of at most %d rows {tp, kernel_slowdown, "
		                "launch_interval}",
		                PP_DH_TP_ROWS);
	size_t i;
	json_t *v;
	json_array_foreach (a, i, v) {
		static const char *const keys[] = {"tp", "kernel_slowdown", "launch_interval",
		                                   NULL};
		char path[64];
		snprintf(path, sizeof path, "overlap.by_tp[%zu]", i);
		if (!json_is_object(v))
			return ppi_fail(r->err, r->source, path, "expected an object");
		ppi_obj o = {v, r->source, path, r->err};
		struct pp_dh_tp_row *row = &out->tp_row[i];
		PPI_TRY(ppi_obj_keys(&o, keys));
		PPI_TRY(ppi_get_int(&o, "tp", true, 2, 1 << 20, &row->tp));
		PPI_TRY(ppi_get_num(&o, "kernel_slowdown", true, 0, 1, &row->kernel_slowdown));
		PPI_TRY(ppi_get_num(&o, "launch_interval", true, 0, 1, &row->launch_interval));
		if (i > 0 && row->tp <= out->tp_row[i - 1].tp)
			return ppi_fail(r->err, r->source, path,
			                "tp must be larger than the previous row's (%d), got %d",
			                out->tp_row[i - 1].tp, row->tp);
		out->ntp = (int)i + 1;
	}
	return PP_OK;
}

void pp_dh_overlap_at_tp(const pp_dh_overlap *o, int tp, pp_dh_overlap *out)
{
	if (out != o)
		*out = *o;
	int k = -1;
	for (int i = 0; i < o->ntp; i++)
		if (o->tp_row[i].tp <= tp)
			k = i;
	if (k >= 0) {
		out->kernel_slowdown = o->tp_row[k].kernel_slowdown;
		out->launch_interval = o->tp_row[k].launch_interval;
		for (int a = 0; a < PP_DH_NKINDS; a++)
			for (int b = 0; b < PP_DH_NKINDS; b++)
				if (ppi_dh_is_comm((pp_dh_kind)a) != ppi_dh_is_comm((pp_dh_kind)b))
					out->oef[a][b] = 1 - out->kernel_slowdown;
	}
	/* §5: one stream for both strands' computation, so a pair of
	 * computation operators runs one after the other, OEF 0 */
	if (out->compute_streams < 2)
		for (int a = 0; a < PP_DH_NKINDS; a++)
			for (int b = 0; b < PP_DH_NKINDS; b++)
				if (!ppi_dh_is_comm((pp_dh_kind)a) &&
				    !ppi_dh_is_comm((pp_dh_kind)b))
					out->oef[a][b] = 0;
	out->ntp = 0;
}

pp_status pp_dh_overlap_from_json(const char *text, size_t len, const char *source,
                                  pp_dh_overlap *out, pp_error *err)
{
	json_t *root;
	PPI_TRY(ppi_json_parse_object(text, len, source, &root, err));
	memset(out, 0, sizeof *out);
	/* NAN: not given yet (a measured OEF may be negative) */
	for (int i = 0; i < PP_DH_NKINDS; i++)
		for (int j = 0; j < PP_DH_NKINDS; j++)
			out->oef[i][j] = NAN;
	ppi_obj r = {root, source, "overlap", err};
	static const char *const keys[] = {"name",   "kernel_slowdown", "launch_interval",
	                                   "oef",    "by_tp",           "compute_streams",
	                                   "source", "sources",         NULL};
	pp_status st = ppi_obj_keys(&r, keys);
	if (!st)
		st = ppi_get_str(&r, "name", true, out->name, sizeof out->name);
	if (!st)
		st = ppi_get_num(&r, "kernel_slowdown", true, 0, 1, &out->kernel_slowdown);
	if (!st)
		st = ppi_get_num(&r, "launch_interval", true, 0, 1, &out->launch_interval);
	json_t *oef = NULL;
	if (!st)
		st = ppi_get_obj(&r, "oef", true, &oef);
	if (!st) {
		const char *key;
		json_t *v;
		json_object_foreach (oef, key, v) {
			/* "KIND-KIND": kinds contain '-' ("comm-intra"), so try each split */
			int a = -1, b = -1;
			size_t n = strlen(key);
			for (size_t c = 1; c + 1 < n && (a < 0 || b < 0); c++) {
				if (key[c] != '-')
					continue;
				a = kind_parse(key, c);
				b = kind_parse(key + c + 1, n - c - 1);
			}
			if (a < 0 || b < 0) {
				st = ppi_fail(
				    err, source, "overlap.oef",
				    "unknown pair \"%s\": expected KIND-KIND with kinds gemm, "
				    "attn, elem, comm-intra, comm-cross",
				    key);
				break;
			}
			/* Eq. 1 measured may be negative: the two co-run slower
			 * than one after the other (an H100's GEMM with flash
			 * attention, data/overlap/h100.json); -1 is P = T_i + T_j
			 * + min(T_i, T_j), the shorter run twice over. */
			if (!json_is_number(v) || !(json_number_value(v) >= -1) ||
			    json_number_value(v) > 1) {
				st = ppi_fail(err, source, "overlap.oef",
				              "oef.%s must be a number in [-1, 1]", key);
				break;
			}
			/* One pair, one value: "gemm-attn" and "attn-gemm" name the
			 * same pair, and two values would leave the result to the
			 * order of the keys. */
			if (!isnan(out->oef[a][b]) && out->oef[a][b] != json_number_value(v)) {
				st = ppi_fail(err, source, "overlap.oef",
				              "oef.%s is %g, but oef.%s-%s gave the same pair %g",
				              key, json_number_value(v), kind_names[b],
				              kind_names[a], out->oef[a][b]);
				break;
			}
			out->oef[a][b] = out->oef[b][a] = json_number_value(v);
		}
	}
	if (!st)
		st = tp_rows_from_json(&r, out);
	out->compute_streams = 1; /* seed 002 §5 */
	if (!st)
		st = ppi_get_int(&r, "compute_streams", false, 1, 2, &out->compute_streams);
	for (int i = 0; i < PP_DH_NKINDS && !st; i++)
		for (int j = 0; j < PP_DH_NKINDS && !st; j++)
			if (isnan(out->oef[i][j]))
				st = ppi_fail(err, source, "overlap.oef", "oef.%s-%s is missing",
				              kind_names[i], kind_names[j]);
	if (!st)
		snprintf(out->source, sizeof out->source, "%s", source);
	json_decref(root);
	return st;
}

pp_status pp_dh_overlap_load(const char *path, pp_dh_overlap *out, pp_error *err)
{
	char *text;
	size_t len;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_dh_overlap_from_json(text, len, path, out, err);
	free(text);
	return st;
}

pp_status pp_dh_overlap_resolve(const char *ref, pp_dh_overlap *out, pp_error *err)
{
	if (strchr(ref, '/') || strstr(ref, ".json"))
		return pp_dh_overlap_load(ref, out, err);
	return pp_dh_overlap_default(ref, out, err);
}

pp_status pp_dh_overlap_of_system(const pp_system *s, int tp, pp_dh_overlap *out, pp_error *err)
{
	if (!s->dh_overlap_set) {
		const char *platform = pp_dh_platform_of_gpu(&s->gpu);
		if (!platform)
			return ppi_fail(
			    err, s->gpu.name, "gpu.overlap_platform",
			    "DHelix's overlap table for GPU '%s' is not known: name the "
			    "table that holds for it in its GPU file (\"overlap_platform\", "
			    "with \"overlap_assumed\": true when it was not measured there) "
			    "or give one (--overlap)",
			    s->gpu.name);
		PPI_TRY(pp_dh_overlap_default(platform, out, err));
		pp_dh_overlap_at_tp(out, tp, out);
		return PP_OK;
	}
	memset(out, 0, sizeof *out);
	memcpy(out->name, s->dh_overlap_name, sizeof out->name);
	_Static_assert(sizeof out->oef == sizeof s->dh_oef, "overlap table shape");
	memcpy(out->oef, s->dh_oef, sizeof out->oef);
	out->kernel_slowdown = s->dh_kernel_slowdown;
	out->launch_interval = s->dh_launch_interval;
	out->compute_streams = s->dh_compute_streams;
	_Static_assert(PP_DH_TP_ROWS == sizeof s->dh_tp_row / sizeof s->dh_tp_row[0],
	               "overlap TP rows");
	out->ntp = s->dh_ntp;
	for (int i = 0; i < s->dh_ntp; i++) {
		out->tp_row[i].tp = (int)s->dh_tp_row[i][0];
		out->tp_row[i].kernel_slowdown = s->dh_tp_row[i][1];
		out->tp_row[i].launch_interval = s->dh_tp_row[i][2];
	}
	pp_dh_overlap_at_tp(out, tp, out);
	return PP_OK;
}

void pp_dh_system_set_overlap(pp_system *s, const pp_dh_overlap *o)
{
	s->dh_overlap_set = true;
	s->gpu.kern.stack_fractions = false; /* zero3_visible follows the table */
	memcpy(s->dh_overlap_name, o->name, sizeof s->dh_overlap_name);
	memcpy(s->dh_oef, o->oef, sizeof s->dh_oef);
	s->dh_kernel_slowdown = o->kernel_slowdown;
	s->dh_launch_interval = o->launch_interval;
	s->dh_compute_streams = o->compute_streams;
	s->dh_ntp = o->ntp;
	for (int i = 0; i < o->ntp; i++) {
		s->dh_tp_row[i][0] = o->tp_row[i].tp;
		s->dh_tp_row[i][1] = o->tp_row[i].kernel_slowdown;
		s->dh_tp_row[i][2] = o->tp_row[i].launch_interval;
	}
}
