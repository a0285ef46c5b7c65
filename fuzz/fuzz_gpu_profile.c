/*
 * libFuzzer target: GPU-profile directories (--gpu-profile DIR), parsed in
 * memory by the readers pp_kernel_profile_read runs on each file
 * (pp_kernel_profile_parse_device, pp_kernel_profile_parse_table).  The input
 * is the directory's files in one: parts separated by a line "====" are, in
 * order, device.json, gemm_bf16.jsonl, memory_bandwidth.jsonl,
 * gemm_fp8_tensorwise.jsonl, attention_bf16.jsonl and grouped_gemm_bf16.jsonl
 * (missing parts: no file; device.json, gemm_bf16 and memory_bandwidth are
 * required, as by the directory reader).  No file is written: the directory
 * reader only opens the files and hands their text to these.  A failure must
 * be PP_EINPUT (or PP_ENOMEM) with a message and leave the table empty; an
 * accepted profile has positive, finite records, and a small one is fitted on
 * an H100 (pp_kernel_fit) to efficiencies that are finite.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/kernel.h"
#include "paraplan/paraplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The parts in input order: -1 is device.json, else the table. */
static const int parts[] = {-1, PP_KT_GEMM_BF16, PP_KT_MEM, PP_KT_GEMM_FP8, PP_KT_ATTN, PP_KT_MOE};
enum { NPARTS = sizeof parts / sizeof parts[0], REQUIRED_PARTS = 3, FIT_RECORDS_MAX = 4 };

/* A measured value: positive and finite (loop_s may be 0: not measured). */
static void pos(double x, bool zero_ok)
{
	if (!isfinite(x) || !(x > 0 || (zero_ok && x == 0)))
		abort();
}

static void check_profile(const pp_kernel_profile *prof)
{
	for (int i = 0; i < prof->n[PP_KT_GEMM_BF16] + prof->n[PP_KT_GEMM_FP8]; i++) {
		const pp_kernel_gemm_rec *r = i < prof->n[PP_KT_GEMM_BF16]
		                                  ? &prof->gemm[i]
		                                  : &prof->fp8[i - prof->n[PP_KT_GEMM_BF16]];
		pos(r->m, false), pos(r->k, false), pos(r->n, false), pos(r->s, false);
	}
	for (int i = 0; i < prof->n[PP_KT_ATTN]; i++) {
		const pp_kernel_attn_rec *r = &prof->attn[i];
		pos(r->b, false), pos(r->hq, false), pos(r->hkv, false), pos(r->seq, false);
		pos(r->d, false), pos(r->fwd_s, false), pos(r->bwd_s, false);
	}
	for (int i = 0; i < prof->n[PP_KT_MOE]; i++) {
		const pp_kernel_moe_rec *r = &prof->moe[i];
		pos(r->experts, false), pos(r->tokens_per_expert, false), pos(r->k, false);
		pos(r->n, false), pos(r->grouped_s, false), pos(r->loop_s, true);
	}
	for (int i = 0; i < prof->n[PP_KT_MEM]; i++)
		pos(prof->mem[i].bytes, false), pos(prof->mem[i].s, false);
}

/* A refusal: EINPUT with a message (or ENOMEM), the table left empty. */
static void check_refusal(pp_status st, const pp_error *err, const pp_kernel_profile *prof, int t)
{
	if ((st != PP_EINPUT && st != PP_ENOMEM) || (st == PP_EINPUT && !err->text[0]) ||
	    (t >= 0 && prof->n[t] != 0))
		abort();
}

/* The next separator at or after p, else end: newline by newline (memchr),
 * not a memcmp at every byte (libFuzzer hooks each memcmp: half the time). */
static const char *next_sep(const char *p, const char *end, const char *sep, size_t n)
{
	for (const char *q = p; q < end; q++) {
		q = memchr(q, '\n', (size_t)(end - q));
		if (!q || (size_t)(end - q) < n)
			return end;
		size_t k = 1;
		while (k < n && q[k] == sep[k])
			k++;
		if (k == n)
			return q;
	}
	return end;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pp_kernel_profile *prof = pp_kernel_profile_new();
	if (!prof)
		abort();
	pp_error err;
	pp_error_clear(&err);
	static const char sep[] = "\n====\n";
	const char *p = (const char *)data, *end = p + size;
	pp_status st = PP_OK;
	int k = 0;
	for (; k < NPARTS && st == PP_OK; k++) {
		const char *q = p;
		q = next_sep(q, end, sep, sizeof sep - 1);
		int t = parts[k];
		st = t < 0 ? pp_kernel_profile_parse_device(prof, p, (size_t)(q - p), "device.json",
		                                            &err)
		           : pp_kernel_profile_parse_table(prof, (pp_kernel_table)t, p,
		                                           (size_t)(q - p), "table.jsonl", &err);
		if (st)
			check_refusal(st, &err, prof, t);
		if (q == end) {
			k++;
			break;
		}
		p = q + sizeof sep - 1;
	}
	/* The directory reader's refusals: a required file missing or empty. */
	if (st || k < REQUIRED_PARTS || prof->n[PP_KT_GEMM_BF16] == 0 || prof->n[PP_KT_MEM] == 0) {
		pp_kernel_profile_free(prof);
		return 0;
	}
	check_profile(prof);
	int total = 0;
	for (int t = 0; t < PP_KT_COUNT; t++)
		total += prof->n[t];
	if (total <= FIT_RECORDS_MAX) {
		pp_gpu g;
		if (pp_gpu_preset("h100-sxm", &g, &err) != PP_OK)
			abort();
		if (pp_kernel_fit(prof, &g, &err) == PP_OK &&
		    (!isfinite(g.kern.gemm_eff) || !isfinite(g.kern.hbm_eff)))
			abort();
	}
	pp_kernel_profile_free(prof);
	return 0;
}
