/*
 * paraplan kernel --gpu-profile DIR --system S: fit the kernel model to a GPU
 * profile's measured tables (docs/kernel.md) and print the parameters and how
 * well the model reproduces each table (per-table MAPE; rendered by report,
 * PP_RESULT_KERNEL).
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

typedef struct kernel_args {
	const char *dir, *sys_ref;
	const pp_format_type *format; /* --format; NULL: text */
} kernel_args;

static const cli_flag kernel_flags[] = {
    CLI_ROW("gpu-profile", CLI_F_FILE, offsetof(kernel_args, dir), .what = "a directory"),
    CLI_ROW("system", CLI_F_FILE, offsetof(kernel_args, sys_ref), .what = "a name or file"),
    CLI_ROW("format", CLI_F_FORMAT, offsetof(kernel_args, format)), CLI_END};

/* The options into `a`, --system required: CLI_CONTINUE or an exit code.
 * Reads no file. */
static int kernel_parse(int argc, char **argv, kernel_args *a)
{
	/* The one option layer (cli/options.c): long options named in full,
	 * "--name VALUE" or "--name=VALUE", -h and --help. */
	*a = (kernel_args){NULL, NULL, NULL};
	const cli_args args = {"kernel", usage, kernel_flags, a, NULL};
	int rc = cli_args_parse(argc, argv, &args);
	if (rc != CLI_CONTINUE || (rc = cli_format_check("kernel", a->format, PP_RESULT_KERNEL)))
		return rc;
	if (!a->sys_ref) {
		cli_message("kernel: --system is required (see 'paraplan kernel --help')");
		return EXIT_BADINPUT;
	}
	return CLI_CONTINUE;
}

int cli_kernel_parse_only(int argc, char **argv)
{
	kernel_args a;
	int rc = kernel_parse(argc, argv, &a);
	return rc == CLI_CONTINUE ? EXIT_ANSWERED : rc;
}

int cli_kernel(int argc, char **argv)
{
	kernel_args a;
	int rc = kernel_parse(argc, argv, &a);
	if (rc != CLI_CONTINUE)
		return rc;
	pp_error err;
	pp_error_clear(&err);
	pp_system sys;
	pp_status st = pp_system_resolve(a.sys_ref, &sys, &err);
	if (st) {
		if (!err.source[0])
			snprintf(err.field, sizeof err.field, "--system");
		return cli_fail(st, &err);
	}
	pp_kernel_profile *p;
	if ((st = pp_kernel_model_of(&sys.gpu, a.dir, &p, &err)))
		return cli_fail(st, &err);
	double mape[PP_KT_COUNT];
	if (p)
		pp_kernel_profile_mape(p, &sys.gpu, mape);
	pp_kernel_report kr = {&sys.gpu, p, a.dir, mape};
	pp_result r = {.kind = PP_RESULT_KERNEL, .kernel = &kr};
	cli_render(a.format, &r, stdout); /* a write error: cli_finish's, on stdout */
	pp_kernel_profile_free(p);
	return EXIT_ANSWERED;
}
