/*
 * paraplan kernel --gpu-profile DIR --system S: fit the kernel model to a GPU
 * profile's measured tables (docs/kernel.md) and print the parameters and how
 * well the model reproduces each table (per-table MAPE).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "paraplan/kernel.h"
#include "paraplan/paraplan.h"

static void usage(FILE *f)
{
	cli_usage(f, "kernel"); /* docs/usage/kernel.txt */
}

enum { OPT_PROFILE = 1, OPT_SYSTEM };

static const struct option kernel_opts[] = {{"gpu-profile", required_argument, 0, OPT_PROFILE},
                                            {"system", required_argument, 0, OPT_SYSTEM},
                                            {0, 0, 0, 0}};

typedef struct kernel_args {
	const char *dir, *sys_ref;
} kernel_args;

static int kernel_flag(const struct option *opt, const char *value, void *ctx)
{
	kernel_args *a = ctx;
	if (!*value) {
		cli_message("kernel: --%s needs a %s", opt->name,
		            opt->val == OPT_PROFILE ? "directory" : "name or file");
		return EXIT_BADINPUT;
	}
	*(opt->val == OPT_PROFILE ? &a->dir : &a->sys_ref) = value;
	return 0;
}

int cli_kernel_parse_only(int argc, char **argv)
{
	kernel_args a = {NULL, NULL};
	const cli_args args = {"kernel", usage, kernel_opts, kernel_flag, NULL, &a};
	int rc = cli_args_parse(argc, argv, &args);
	if (rc != CLI_CONTINUE)
		return rc;
	if (!a.sys_ref) {
		cli_message("kernel: --system is required (see 'paraplan kernel --help')");
		return EXIT_BADINPUT;
	}
	return EXIT_ANSWERED;
}

int cli_kernel(int argc, char **argv)
{
	/* The one option layer (cli/options.c): long options named in full,
	 * "--name VALUE" or "--name=VALUE", -h and --help. */
	kernel_args a = {NULL, NULL};
	const cli_args args = {"kernel", usage, kernel_opts, kernel_flag, NULL, &a};
	int rc = cli_args_parse(argc, argv, &args);
	if (rc != CLI_CONTINUE)
		return rc;
	const char *dir = a.dir, *sys_ref = a.sys_ref;
	if (!sys_ref) {
		cli_message("kernel: --system is required (see 'paraplan kernel --help')");
		return EXIT_BADINPUT;
	}
	pp_error err;
	pp_error_clear(&err);
	pp_system sys;
	pp_status st = pp_system_resolve(sys_ref, &sys, &err);
	if (st) {
		if (!err.source[0])
			snprintf(err.field, sizeof err.field, "--system");
		return cli_fail(st, &err);
	}
	pp_kernel_profile *p = NULL;
	if (!dir) {
		/* No measurements: the reference H100 parameters as fractions of this
		 * GPU's datasheet peaks, with its SM count. */
		double sms = sys.gpu.sm_count;
		if (sms <= 0) {
			cli_message("kernel: no SM count known for GPU '%s': measure it with "
			            "tools/probe/paraplan_probe.py and pass --gpu-profile DIR",
			            sys.gpu.name);
			return EXIT_BADINPUT;
		}
		if ((st = pp_kernel_scale(&sys.gpu, sms, &err)))
			return cli_fail(st, &err);
	} else if ((st = pp_kernel_profile_read(dir, &p, &err)) ||
	           (st = pp_kernel_fit(p, &sys.gpu, &err))) {
		pp_kernel_profile_free(p);
		return cli_fail(st, &err);
	}
	const pp_kernel_params *k = &sys.gpu.kern;
	double mape[PP_KT_COUNT];
	if (p)
		pp_kernel_profile_mape(p, &sys.gpu, mape);
	printf("paraplan kernel: %s (%s peaks: bf16 %.1f, fp8 %.1f TFLOP/s, HBM %.2f TB/s)\n\n",
	       !p             ? "datasheet-scaled reference H100 parameters"
	       : p->device[0] ? p->device
	                      : dir,
	       sys.gpu.name, sys.gpu.bf16_flops / 1e12, sys.gpu.fp8_flops / 1e12,
	       sys.gpu.memory_bw_bytes_per_s / 1e12);
	printf("parameters\n");
	printf("  sms            %8.0f\n", k->sms);
	printf("  gemm_eff       %8.4f   (%.0f TFLOP/s)\n", k->gemm_eff,
	       k->gemm_eff * sys.gpu.bf16_flops / 1e12);
	if (sys.gpu.fp8_flops > 0)
		printf("  gemm_fp8_eff   %8.4f   (%.0f TFLOP/s, %.2fx bf16)\n", k->gemm_fp8_eff,
		       k->gemm_fp8_eff * sys.gpu.fp8_flops / 1e12,
		       k->gemm_fp8_eff * sys.gpu.fp8_flops / (k->gemm_eff * sys.gpu.bf16_flops));
	printf("  gemm_k_half    %8.1f\n", k->gemm_k_half);
	printf("  gemm_fixed_s   %8.2f us\n", k->gemm_fixed_s * 1e6);
	printf("  attn_fwd_eff   %8.4f\n", k->attn_fwd_eff);
	printf("  attn_bwd_eff   %8.4f\n", k->attn_bwd_eff);
	printf("  attn_seq_half  %8.0f\n", k->attn_seq_half);
	printf("  attn_fixed_s   %8.2f us\n", k->attn_fixed_s * 1e6);
	printf("  hbm_eff        %8.4f   (%.2f TB/s)\n", k->hbm_eff,
	       k->hbm_eff * sys.gpu.memory_bw_bytes_per_s / 1e12);
	printf("  mem_fixed_s    %8.2f us\n", k->mem_fixed_s * 1e6);
	if (!p)
		return EXIT_ANSWERED;
	printf("\nmodel vs measured\n");
	for (int t = 0; t < PP_KT_COUNT; t++) {
		if (p->n[t] == 0)
			printf("  %-26s   no records\n", pp_kernel_table_file((pp_kernel_table)t));
		else
			printf("  %-26s %4d records  MAPE %5.2f%%%s\n",
			       pp_kernel_table_file((pp_kernel_table)t), p->n[t], mape[t],
			       t == PP_KT_MOE ? "  (predicted, not fitted)" : "");
	}
	pp_kernel_profile_free(p);
	return EXIT_ANSWERED;
}
