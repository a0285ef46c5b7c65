/*
 * paraplan calibrate: fit each GPU's efficiency parameters (and its systems'
 * network efficiencies) to the published runs measured on it (pp_fit), and
 * print them for the presets.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "paraplan/calib.h"
#include "paraplan/params.h"

enum { OPT_DATA = 256, OPT_GPU, OPT_CV, OPT_JSON, OPT_HELP, OPT_QUIET };

static const struct option calibrate_opts[] = {{"data", required_argument, 0, OPT_DATA},
                                               {"gpu", required_argument, 0, OPT_GPU},
                                               {"cross-validate", required_argument, 0, OPT_CV},
                                               {"json", no_argument, 0, OPT_JSON},
                                               {"help", no_argument, 0, OPT_HELP},
                                               {"quiet", no_argument, 0, OPT_QUIET},
                                               {0, 0, 0, 0}};

/* Progress of the fits on a terminal (cli_progress), and the GPU being fitted. */
static cli_progress fit_progress;
static const char *fit_gpu;

/* The record states a throughput, something to fit to (pp_run_compare). */
static bool measured(const pp_run_info *i)
{
	const double v[] = {i->iteration_time_s, i->tokens_per_s_per_gpu, i->tflops_per_gpu, i->mfu,
	                    i->hfu};
	for (size_t k = 0; k < sizeof v / sizeof *v; k++)
		if (isfinite(v[k]) && v[k] > 0)
			return true;
	return false;
}

static void run_fit(pp_fit *f)
{
	do {
		pp_fit_iterate(f);
		cli_progress_show(&fit_progress, 0, false, "%s: %zu records, sweep %d, MAPE %.1f%%",
		                  fit_gpu, pp_fit_records(f), pp_fit_iterations(f),
		                  100 * pp_fit_mape(f));
	} while (!pp_fit_test(f, 1e-4) && pp_fit_iterations(f) < 30);
}

/* Leave-one-out: refit without each record and predict it. */
static void cross_validate(pp_fit *f, double *sum, size_t *count)
{
	size_t n = pp_fit_records(f);
	for (size_t k = 0; k < n; k++) {
		cli_progress_show(&fit_progress, (double)k / (double)n, false,
		                  "%s: leave-one-out, record %zu of %zu", fit_gpu, k + 1, n);
		pp_fit_hold_out(f, k);
		run_fit(f);
		double e = pp_fit_error(f, k);
		if (e == e) {
			*sum += e < 0 ? -e : e;
			(*count)++;
		}
	}
}

/* The fitted parameters of the GPU's "efficiency" (gpu) or of the system's
 * "framework" object, as JSON to copy into the presets: fractions with three
 * decimals, log-scale quantities with three significant digits. */
static void print_fitted(const pp_system *s, bool gpu)
{
	printf(gpu ? "  gpu \"efficiency\": {" : "  system \"framework\": {");
	const char *sep = "";
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		if (!p->fitted || (p->kind == PP_PARAM_GPU) != gpu)
			continue;
		printf(p->fit_log ? "%s\"%s\": %.3g" : "%s\"%s\": %.3f", sep, p->key,
		       pp_param_get(p, s));
		sep = ", ";
	}
	printf("}\n");
}

static int fit_one(const pp_runs *runs, const char *gpu, bool cv, double *cv_sum, size_t *cv_n)
{
	pp_fit *f;
	pp_error err;
	pp_status st = pp_fit_new(runs, gpu, &f, &err);
	if (st)
		return cli_fail(st, &err);
	fit_gpu = gpu;
	run_fit(f);
	cli_progress_end(&fit_progress);
	if (!isfinite(pp_fit_mape_start(f))) {
		/* Nothing to fit to: never print "MAPE inf%". */
		cli_message("calibrate: no record measured on GPU '%s' has a throughput "
		            "measurement",
		            gpu);
		pp_fit_free(f);
		return EXIT_BADINPUT;
	}
	pp_system fitted;
	pp_fit_result_system(f, &fitted);
	const char *sys[16];
	size_t ns = pp_fit_systems(f, sys, 16);
	printf("%-14s %3zu records  MAPE %5.1f%% -> %5.1f%% after %d sweeps  systems:", gpu,
	       pp_fit_records(f), 100 * pp_fit_mape_start(f), 100 * pp_fit_mape(f),
	       pp_fit_iterations(f));
	for (size_t k = 0; k < ns; k++)
		printf(" %s", sys[k]);
	putchar('\n');
	print_fitted(&fitted, true);
	print_fitted(&fitted, false);
	const pp_param *bound[16];
	double bound_v[16];
	size_t nb = pp_fit_at_bounds(f, bound, bound_v, 16);
	if (nb) {
		printf("  AT BOUND (the fit wants a value outside the physical range):");
		for (size_t k = 0; k < nb && k < 16; k++)
			printf(" %s=%.3g", bound[k]->key, bound_v[k]);
		putchar('\n');
	}
	if (cv) {
		double sum = 0;
		size_t n = 0;
		cross_validate(f, &sum, &n);
		cli_progress_end(&fit_progress);
		if (n)
			printf("  leave-one-out MAPE %.1f%% over %zu records\n", 100 * sum / n, n);
		else
			printf("  leave-one-out: no record could be predicted\n");
		*cv_sum += sum;
		*cv_n += n;
	}
	pp_fit_free(f);
	return EXIT_ANSWERED;
}

/* calibrate --nccl-tests / --step-times: cli/calibrate_nccl.c */
int cli_calibrate_nccl(int argc, char **argv);

int cli_calibrate(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "--nccl-tests", 12) == 0 ||
		    strncmp(argv[i], "--step-times", 12) == 0)
			return cli_calibrate_nccl(argc, argv);
	const char *data = NULL;
	const char *systems[16];
	int nsys = 0, c;
	bool cv = false, cv_source = false, json = false, quiet = false;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", calibrate_opts, NULL)) != -1) {
		switch (c) {
		case OPT_DATA: data = optarg; break;
		case OPT_GPU:
			if (nsys == 16) {
				cli_message("calibrate: at most 16 --gpu options");
				return EXIT_BADINPUT;
			}
			systems[nsys++] = optarg;
			break;
		case OPT_CV:
			if (strcmp(optarg, "record") == 0) {
				cv = true;
			} else if (strcmp(optarg, "source") == 0) {
				cv_source = true;
			} else {
				cli_message(
				    "calibrate: --cross-validate takes record or source, not "
				    "'%s'",
				    optarg);
				return EXIT_BADINPUT;
			}
			break;
		case OPT_JSON: json = true; break;
		case OPT_QUIET: quiet = true; break;
		case OPT_HELP:
			printf(
			    "usage: paraplan calibrate [--data FILE] [--gpu G]... "
			    "[--cross-validate record|source] [--json] [--quiet]\n"
			    "       paraplan calibrate --nccl-tests LOG [LOG...] --system S "
			    "[--output FILE]\n"
			    "Fits each GPU's efficiencies (and its systems' network efficiencies)\n"
			    "to the runs measured on it (default: every GPU the records use).\n"
			    "  --gpu G:STACK            fit only G's records of one training\n"
			    "                           stack (megatron, llm-foundry, ...)\n"
			    "  --cross-validate record  refit without each record, predict it\n"
			    "  --cross-validate source  refit without each source, predict its\n"
			    "                           records; MAPE per source, GPU, stack,\n"
			    "                           dense/MoE and scale (--json: as JSON)\n"
			    "  --quiet                  no progress on a terminal\n");
			return EXIT_ANSWERED;
		case ':':
			cli_message("calibrate: option '%s' needs a value", argv[optind - 1]);
			return EXIT_BADINPUT;
		default:
			cli_message("calibrate: unknown option '%s'", argv[optind - 1]);
			return EXIT_BADINPUT;
		}
	}
	if (optind < argc) {
		cli_message("calibrate: unexpected argument '%s'", argv[optind]);
		return EXIT_BADINPUT;
	}
	char path[PATH_MAX + 64];
	if (!data) {
		if (!cli_default_data(path, sizeof path)) {
			cli_message(
			    "calibrate: no run records found: set PARAPLAN_SHARED_DIR or pass "
			    "--data FILE");
			return EXIT_BADINPUT;
		}
		data = path;
	}
	pp_runs *runs;
	pp_error err;
	pp_status st = pp_runs_load(data, &runs, &err);
	if (st)
		return cli_fail(st, &err);
	if (nsys == 0) {
		/* Every GPU some record ran on, in order of appearance. */
		static char names[16][PP_NAME_MAX];
		cli_skips why = {0};
		for (size_t i = 0; i < pp_runs_count(runs) && nsys < 16; i++) {
			pp_model m;
			pp_system s;
			pp_job j;
			pp_plan p;
			long long g;
			pp_run_info info;
			st = pp_run_inputs(runs, i, &m, &s, &j, &p, &g, &info, &err);
			if (st == PP_EINPUT) {
				cli_skips_add(&why, err.text);
				continue;
			}
			if (st) {
				pp_runs_free(runs);
				return cli_fail(st, &err);
			}
			if (!measured(&info)) {
				cli_skips_add(&why, "without a throughput measurement");
				continue;
			}
			int k = 0;
			while (k < nsys && strcmp(names[k], s.gpu.name) != 0)
				k++;
			if (k == nsys) {
				snprintf(names[nsys], sizeof names[0], "%s", s.gpu.name);
				systems[nsys] = names[nsys];
				nsys++;
			}
		}
		if (nsys == 0) {
			char text[1024];
			cli_skips_format(&why, text, sizeof text);
			cli_message("calibrate: no usable record in %s: %s", data, text);
			pp_runs_free(runs);
			return EXIT_BADINPUT;
		}
	}
	if (json && !cv_source) {
		cli_message("calibrate: --json needs --cross-validate source");
		pp_runs_free(runs);
		return EXIT_BADINPUT;
	}
	if (cv_source) {
		int r = cli_calibrate_cv_source(runs, data, systems, nsys, json);
		pp_runs_free(runs);
		return r;
	}
	int rc = EXIT_ANSWERED;
	double cv_sum = 0;
	size_t cv_n = 0;
	cli_progress_start(&fit_progress, "calibrate", quiet, "fitting %d GPU%s%s", nsys,
	                   nsys == 1 ? "" : "s", cv ? ", leave-one-out" : "");
	for (int k = 0; k < nsys && rc == EXIT_ANSWERED; k++)
		rc = fit_one(runs, systems[k], cv, &cv_sum, &cv_n);
	cli_progress_end(&fit_progress);
	if (cv && cv_n)
		printf("\nleave-one-out MAPE over all GPUs: %.1f%% (%zu records)\n",
		       100 * cv_sum / cv_n, cv_n);
	pp_runs_free(runs);
	return rc;
}
