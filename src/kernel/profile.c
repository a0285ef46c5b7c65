/*
 * A GPU profile directory: the measured kernel tables (JSONL, one record a
 * line, the field names of ../shared/measurements/h100-sxm) and device.json.
 */
#include <jansson.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/kernel.h"
#include "util/util.h"

static const char *const table_files[PP_KT_COUNT] = {
    "gemm_bf16.jsonl", "gemm_fp8_tensorwise.jsonl", "attention_bf16.jsonl",
    "grouped_gemm_bf16.jsonl", "memory_bandwidth.jsonl"};

const char *pp_kernel_table_file(pp_kernel_table t)
{
	return t >= 0 && t < PP_KT_COUNT ? table_files[t] : "";
}

void pp_kernel_profile_free(pp_kernel_profile *p)
{
	if (!p)
		return;
	free(p->gemm);
	free(p->fp8);
	free(p->attn);
	free(p->moe);
	free(p->mem);
	free(p);
}

/* A positive finite number under `key` of one record. */
static pp_status num(json_t *o, const char *key, const char *path, int line, double *out,
                     pp_error *err)
{
	json_t *v = json_object_get(o, key);
	if (!v || !json_is_number(v))
		return ppi_fail_at(err, path, line, 1, "field '%s' missing or not a number", key);
	double x = json_number_value(v);
	/* Positive and normal: a subnormal time (1e-320 s) would make an
	 * infinite throughput. */
	if (!(x >= DBL_MIN) || x > 1e18)
		return ppi_fail_at(err, path, line, 1,
		                   "field '%s' must be positive (%g to 1e18), got %g", key, DBL_MIN,
		                   x);
	*out = x;
	return PP_OK;
}

/* Append room for one record to a growing array. */
static void *grow(void *arr, int n, int *cap, size_t size)
{
	if (n < *cap)
		return arr;
	int c = *cap ? *cap * 2 : 64;
	void *a = ppi_realloc(arr, (size_t)c * size);
	if (a)
		*cap = c;
	return a;
}

/* Records in one table: the measured tables hold up to a few hundred (288
 * GEMM shapes on the H100), and the fit (pp_kernel_fit) evaluates every
 * record some ten thousand times, so a table is bounded to keep it seconds. */
#define PROFILE_RECORDS_MAX 2048

static pp_status read_record(pp_kernel_profile *p, pp_kernel_table t, json_t *o, const char *path,
                             int line, int *cap, pp_error *err)
{
	int n = p->n[t];
	if (n >= PROFILE_RECORDS_MAX)
		return ppi_fail_at(err, path, line, 1,
		                   "more than %d records in one table: a profile holds hundreds "
		                   "(thin the sweep)",
		                   PROFILE_RECORDS_MAX);
	switch (t) {
	case PP_KT_GEMM_BF16:
	case PP_KT_GEMM_FP8: {
		pp_kernel_gemm_rec **arr = t == PP_KT_GEMM_BF16 ? &p->gemm : &p->fp8;
		pp_kernel_gemm_rec *a = grow(*arr, n, cap, sizeof *a);
		if (!a)
			return PP_ENOMEM;
		*arr = a;
		pp_kernel_gemm_rec *r = &a[n];
		PPI_TRY(num(o, "m", path, line, &r->m, err));
		PPI_TRY(num(o, "k", path, line, &r->k, err));
		PPI_TRY(num(o, "n", path, line, &r->n, err));
		PPI_TRY(num(o, "s", path, line, &r->s, err));
		break;
	}
	case PP_KT_ATTN: {
		pp_kernel_attn_rec *a = grow(p->attn, n, cap, sizeof *a);
		if (!a)
			return PP_ENOMEM;
		p->attn = a;
		pp_kernel_attn_rec *r = &a[n];
		PPI_TRY(num(o, "b", path, line, &r->b, err));
		PPI_TRY(num(o, "hq", path, line, &r->hq, err));
		PPI_TRY(num(o, "hkv", path, line, &r->hkv, err));
		PPI_TRY(num(o, "seq", path, line, &r->seq, err));
		PPI_TRY(num(o, "d", path, line, &r->d, err));
		PPI_TRY(num(o, "fwd_s", path, line, &r->fwd_s, err));
		PPI_TRY(num(o, "bwd_s", path, line, &r->bwd_s, err));
		break;
	}
	case PP_KT_MOE: {
		pp_kernel_moe_rec *a = grow(p->moe, n, cap, sizeof *a);
		if (!a)
			return PP_ENOMEM;
		p->moe = a;
		pp_kernel_moe_rec *r = &a[n];
		PPI_TRY(num(o, "experts", path, line, &r->experts, err));
		PPI_TRY(num(o, "tokens_per_expert", path, line, &r->tokens_per_expert, err));
		PPI_TRY(num(o, "k", path, line, &r->k, err));
		PPI_TRY(num(o, "n", path, line, &r->n, err));
		PPI_TRY(num(o, "grouped_s", path, line, &r->grouped_s, err));
		r->loop_s = 0;
		if (json_object_get(o, "loop_s"))
			PPI_TRY(num(o, "loop_s", path, line, &r->loop_s, err));
		break;
	}
	case PP_KT_MEM:
	default: {
		pp_kernel_mem_rec *a = grow(p->mem, n, cap, sizeof *a);
		if (!a)
			return PP_ENOMEM;
		p->mem = a;
		pp_kernel_mem_rec *r = &a[n];
		const char *kind = json_string_value(json_object_get(o, "kind"));
		if (!kind || (strcmp(kind, "copy") != 0 && strcmp(kind, "add") != 0))
			return ppi_fail_at(err, path, line, 1,
			                   "field 'kind' must be \"copy\" or \"add\"");
		r->add = strcmp(kind, "add") == 0;
		PPI_TRY(num(o, "bytes", path, line, &r->bytes, err));
		PPI_TRY(num(o, "s", path, line, &r->s, err));
		break;
	}
	}
	p->n[t] = n + 1;
	return PP_OK;
}

/* The table's records: its array and count, emptied. */
static void clear_table(pp_kernel_profile *p, pp_kernel_table t)
{
	void **arr = t == PP_KT_GEMM_BF16  ? (void **)&p->gemm
	             : t == PP_KT_GEMM_FP8 ? (void **)&p->fp8
	             : t == PP_KT_ATTN     ? (void **)&p->attn
	             : t == PP_KT_MOE      ? (void **)&p->moe
	                                   : (void **)&p->mem;
	free(*arr);
	*arr = NULL;
	p->n[t] = 0;
}

/* One line's JSON record into table t (a blank line is none). */
static pp_status parse_line(pp_kernel_profile *p, pp_kernel_table t, const char *s, size_t n,
                            const char *source, int line, int *cap, pp_error *err)
{
	size_t lead = 0;
	while (lead < n && (s[lead] == ' ' || s[lead] == '\t' || s[lead] == '\r'))
		lead++;
	if (lead == n)
		return PP_OK;
	/* A NUL byte is no JSON: as text up to it the rest of the file would
	 * be lost without a word. */
	const char *nul = memchr(s, '\0', n);
	if (nul)
		return ppi_fail_at(err, source, line, (int)(nul - s) + 1,
		                   "a NUL byte: a table is JSON text, one record a line");
	json_error_t je;
	long long failed = ppi_alloc_failed();
	ppi_alloc_shield(true); /* as ppi_json_parse_object: the parser is not failed */
	json_t *o = json_loadb(s + lead, n - lead, JSON_REJECT_DUPLICATES, &je);
	ppi_alloc_shield(false);
	if (ppi_alloc_failed() != failed) {
		json_decref(o);
		return ppi_oom(err);
	}
	if (!o)
		return ppi_fail_at(err, source, line, je.column + (int)lead, "%s", je.text);
	pp_status st = json_is_object(o) ? read_record(p, t, o, source, line, cap, err)
	                                 : ppi_fail_at(err, source, line, (int)lead + 1,
	                                               "a record must be a JSON object");
	json_decref(o);
	return st;
}

pp_status pp_kernel_profile_parse_table(pp_kernel_profile *p, pp_kernel_table t, const char *text,
                                        size_t len, const char *source, pp_error *err)
{
	if (t < 0 || t >= PP_KT_COUNT)
		return ppi_fail(err, source, "gpu-profile", "no table %d", (int)t);
	clear_table(p, t);
	int cap = 0, line = 0;
	pp_status st = PP_OK;
	for (size_t at = 0; st == PP_OK && at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
		line++;
		st = parse_line(p, t, text + at, n, source, line, &cap, err);
		at += n + 1;
	}
	if (st)
		clear_table(p, t);
	return st;
}

static pp_status read_table(pp_kernel_profile *p, const char *dir, pp_kernel_table t, bool required,
                            pp_error *err)
{
	char path[PP_ERROR_SOURCE_MAX];
	if (snprintf(path, sizeof path, "%s/%s", dir, table_files[t]) >= (int)sizeof path)
		return ppi_fail(err, "", "gpu-profile",
		                "the directory's path with '/%s' is longer than %d characters",
		                table_files[t], (int)sizeof path - 1);
	FILE *f = fopen(path, "r");
	if (!f) {
		if (!required)
			return PP_OK;
		return ppi_fail(err, path, "gpu-profile", "cannot open the table (required)");
	}
	fclose(f);
	char *text = NULL;
	size_t len = 0;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_kernel_profile_parse_table(p, t, text, len, path, err);
	free(text);
	if (st == PP_OK && required && p->n[t] == 0)
		return ppi_fail(err, path, "gpu-profile", "the table has no records");
	return st;
}

pp_status pp_kernel_profile_parse_device(pp_kernel_profile *p, const char *text, size_t len,
                                         const char *source, pp_error *err)
{
	json_t *root = NULL;
	PPI_TRY(ppi_json_parse_object(text, len, source, &root, err));
	const char *name = json_string_value(json_object_get(root, "name"));
	ppi_strlcpy(p->device, name ? name : "", sizeof p->device);
	p->sms = 0;
	json_t *sms = json_object_get(root, "sms");
	if (sms) {
		double v = json_is_number(sms) ? json_number_value(sms) : -1;
		if (!(v >= 1 && v <= 4096)) {
			json_decref(root);
			return ppi_fail(err, source, "sms", "must be an SM count from 1 to 4096");
		}
		p->sms = v;
	}
	json_decref(root);
	return PP_OK;
}

static pp_status read_device(pp_kernel_profile *p, const char *dir, pp_error *err)
{
	char path[PP_ERROR_SOURCE_MAX];
	if (snprintf(path, sizeof path, "%s/device.json", dir) >= (int)sizeof path)
		return ppi_fail(err, "", "gpu-profile",
		                "the directory's path with '/device.json' is longer than %d "
		                "characters",
		                (int)sizeof path - 1);
	char *text = NULL;
	size_t len = 0;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_kernel_profile_parse_device(p, text, len, path, err);
	free(text);
	return st;
}

pp_kernel_profile *pp_kernel_profile_new(void)
{
	return ppi_calloc(1, sizeof(pp_kernel_profile));
}

pp_status pp_kernel_profile_read(const char *dir, pp_kernel_profile **out, pp_error *err)
{
	*out = NULL;
	if (!dir || !*dir)
		return ppi_fail(err, "command line", "gpu-profile", "no directory given");
	pp_kernel_profile *p = pp_kernel_profile_new();
	if (!p)
		return PP_ENOMEM;
	pp_status st = read_device(p, dir, err);
	for (int t = 0; st == PP_OK && t < PP_KT_COUNT; t++)
		st = read_table(p, dir, (pp_kernel_table)t, t == PP_KT_GEMM_BF16 || t == PP_KT_MEM,
		                err);
	if (st) {
		pp_kernel_profile_free(p);
		return st;
	}
	*out = p;
	return PP_OK;
}

pp_status pp_kernel_model_of(pp_gpu *g, const char *dir, pp_kernel_profile **profile, pp_error *err)
{
	*profile = NULL;
	if (!dir && !(g->sm_count > 0))
		return ppi_fail(err, "", "gpu.sm_count",
		                "no SM count known for GPU '%s': measure its kernel tables "
		                "(tools/probe/paraplan_probe.py) to fit the model to them",
		                g->name);
	if (!dir)
		return pp_kernel_scale(g, g->sm_count, err);
	pp_status st = pp_kernel_profile_read(dir, profile, err);
	if (!st)
		st = pp_kernel_fit(*profile, g, err);
	if (st) {
		pp_kernel_profile_free(*profile);
		*profile = NULL;
	}
	return st;
}
