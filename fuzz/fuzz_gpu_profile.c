/*
 * libFuzzer target: GPU-profile directories (--gpu-profile DIR) read by
 * pp_kernel_profile_read.  The input is the directory's files in one: parts
 * separated by a line "====" are, in order, device.json, gemm_bf16.jsonl,
 * memory_bandwidth.jsonl, gemm_fp8_tensorwise.jsonl, attention_bf16.jsonl
 * and grouped_gemm_bf16.jsonl (missing parts: no file).  They are written to
 * a private temporary directory (under /dev/shm when it exists) and read from
 * there.  A failure must be
 * PP_EINPUT (or PP_ENOMEM) with a message; an accepted profile has positive,
 * finite records, and a small one is fitted on an H100 (pp_kernel_fit) to
 * efficiencies that are finite.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paraplan/kernel.h"
#include "paraplan/paraplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[] = {"device.json",
                                    "gemm_bf16.jsonl",
                                    "memory_bandwidth.jsonl",
                                    "gemm_fp8_tensorwise.jsonl",
                                    "attention_bf16.jsonl",
                                    "grouped_gemm_bf16.jsonl"};
enum { NFILES = sizeof files / sizeof files[0], FIT_RECORDS_MAX = 4 };

static char dir[64];

static void write_part(int k, const uint8_t *p, size_t n)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, files[k]);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (n && fwrite(p, 1, n, f) != n)
		abort();
	fclose(f);
}

/* The directory goes when the process ends normally. */
static void remove_dir(void)
{
	for (int k = 0; k < NFILES; k++) {
		char path[128];
		snprintf(path, sizeof path, "%s/%s", dir, files[k]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		/* In memory where there is /dev/shm: on disk every run waits on
		 * six file creations. */
		snprintf(dir, sizeof dir, "%s/fuzz_gpu_profile.XXXXXX",
		         access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
	}
	for (int k = 0; k < NFILES; k++) {
		char path[128];
		snprintf(path, sizeof path, "%s/%s", dir, files[k]);
		unlink(path);
	}
	static const char sep[] = "\n====\n";
	const uint8_t *p = data, *end = data + size;
	for (int k = 0; k < NFILES && p <= end; k++) {
		const uint8_t *q = p;
		while (q + sizeof sep - 1 <= end && memcmp(q, sep, sizeof sep - 1) != 0)
			q++;
		if (q + sizeof sep - 1 > end)
			q = end;
		write_part(k, p, (size_t)(q - p));
		if (q == end)
			break;
		p = q + sizeof sep - 1;
	}
	pp_kernel_profile *prof = NULL;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_kernel_profile_read(dir, &prof, &err);
	if (st != PP_OK) {
		if ((st != PP_EINPUT && st != PP_ENOMEM) || (st == PP_EINPUT && !err.text[0]) ||
		    prof)
			abort();
		return 0;
	}
	int total = 0;
	for (int t = 0; t < PP_KT_COUNT; t++)
		total += prof->n[t];
	for (int i = 0; i < prof->n[PP_KT_GEMM_BF16]; i++)
		if (!(prof->gemm[i].s > 0) || !isfinite(prof->gemm[i].s))
			abort();
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
