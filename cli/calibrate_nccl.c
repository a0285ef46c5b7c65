/*
 * paraplan calibrate --nccl-tests LOG... --system S [--output FILE]: fit the
 * latency and bandwidth efficiency of each network tier to nccl-tests logs
 * (pp_nccl_*) and write the calibrated system JSON.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "paraplan/nccl.h"

int cli_calibrate_nccl(int argc, char **argv);
int cli_calibrate_steps(const char *path, const char *output); /* calibrate_steps.c */

enum { OPT_NCCL = 256, OPT_SYSTEM, OPT_OUTPUT, OPT_STEPS, OPT_HELP, OPT_QUIET };

static const struct option nccl_opts[] = {{"nccl-tests", required_argument, 0, OPT_NCCL},
                                          {"system", required_argument, 0, OPT_SYSTEM},
                                          {"output", required_argument, 0, OPT_OUTPUT},
                                          {"step-times", required_argument, 0, OPT_STEPS},
                                          {"help", no_argument, 0, OPT_HELP},
                                          {"quiet", no_argument, 0, OPT_QUIET},
                                          {0, 0, 0, 0}};

#define MAX_LOGS 64

static void summary(FILE *f, const pp_system *s, const pp_nccl_log *logs, size_t n,
                    const pp_nccl_fit *fit)
{
	fprintf(f, "%-28s %-14s %5s %5s %6s  %21s  %21s  %6s\n", "log", "collective", "ranks",
	        "nodes", "tier", "busbw GB/s log/model", "small us log/model", "rms");
	for (size_t k = 0; k < n; k++) {
		pp_nccl_check c;
		pp_nccl_check_log(s, &logs[k], &c);
		const char *b = strrchr(logs[k].source, '/');
		fprintf(f, "%-28s %-14s %5d %5d %6s  %9.1f / %9.1f  %9.2f / %9.2f  %5.1f%%\n",
		        b ? b + 1 : logs[k].source, pp_nccl_op_name(logs[k].op), logs[k].ranks,
		        logs[k].nodes, pp_nccl_intra(s, &logs[k]) ? "nvlink" : "nic",
		        c.busbw_log / 1e9, c.busbw_model / 1e9, c.small_log_s * 1e6,
		        c.small_model_s * 1e6, 100 * c.rms_log_error);
	}
	if (fit->intra_logs)
		fprintf(f, "nvlink: latency %.3g s, nvlink_eff %.3f (%.0f GB/s of %.0f)%s\n",
		        s->nvlink_latency_s, s->nvlink_eff,
		        s->nvlink_bytes_per_s * s->nvlink_eff / 1e9, s->nvlink_bytes_per_s / 1e9,
		        fit->intra_at_bound ? "  [at its bound: the model cannot reach the log]"
		                            : "");
	if (fit->inter_logs)
		fprintf(f, "nic:    latency %.3g s, nic_eff %.3f (%.1f GB/s per NIC of %.1f)%s\n",
		        s->nic_latency_s, s->nic_eff, s->nic_bytes_per_s * s->nic_eff / 1e9,
		        s->nic_bytes_per_s / 1e9,
		        fit->inter_at_bound ? "  [at its bound: the model cannot reach the log]"
		                            : "");
}

int cli_calibrate_nccl(int argc, char **argv)
{
	const char *paths[MAX_LOGS];
	size_t np = 0;
	const char *system = NULL, *output = NULL, *steps = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", nccl_opts, NULL)) != -1) {
		switch (c) {
		case OPT_NCCL:
			if (np == MAX_LOGS) {
				cli_message("calibrate: at most %d nccl-tests logs", MAX_LOGS);
				return EXIT_BADINPUT;
			}
			paths[np++] = optarg;
			break;
		case OPT_SYSTEM: system = optarg; break;
		case OPT_OUTPUT: output = optarg; break;
		case OPT_STEPS: steps = optarg; break;
		case OPT_QUIET: break; /* these fits are instant: no progress to turn off */
		case OPT_HELP:
			printf("usage: paraplan calibrate --nccl-tests LOG [LOG...] --system S "
			       "[--output FILE]\n"
			       "       paraplan calibrate --step-times FILE [--output FILE]\n"
			       "Fits the NVLink tier (single-domain logs) and the NIC tier (logs "
			       "across nodes)\nof system S to nccl-tests output (text or -J JSON) "
			       "and writes the calibrated\nsystem JSON to FILE (default: stdout; "
			       "the fit's summary then goes to stderr).\n");
			return EXIT_ANSWERED;
		case ':':
			cli_message("calibrate: option '%s' needs a value", argv[optind - 1]);
			return EXIT_BADINPUT;
		default:
			cli_message("calibrate: unknown option '%s' with --nccl-tests",
			            argv[optind - 1]);
			return EXIT_BADINPUT;
		}
	}
	/* "--nccl-tests A B C": the operands are logs too. */
	for (; optind < argc; optind++) {
		if (np == MAX_LOGS) {
			cli_message("calibrate: at most %d nccl-tests logs", MAX_LOGS);
			return EXIT_BADINPUT;
		}
		paths[np++] = argv[optind];
	}
	if (steps) {
		if (np || system) {
			cli_message(
			    "calibrate: --step-times takes its systems from each run's flags; "
			    "no --nccl-tests or --system with it");
			return EXIT_BADINPUT;
		}
		return cli_calibrate_steps(steps, output);
	}
	if (!system) {
		cli_message("calibrate: --nccl-tests needs --system S (the system to start from)");
		return EXIT_BADINPUT;
	}
	pp_error err;
	pp_system start;
	pp_status st = pp_system_resolve(system, &start, &err);
	if (st)
		return cli_fail(st, &err);
	static pp_nccl_log logs[MAX_LOGS];
	size_t nl = 0;
	int rc = EXIT_ANSWERED;
	for (size_t k = 0; k < np && rc == EXIT_ANSWERED; k++) {
		if ((st = pp_nccl_load(paths[k], &logs[k], &err)))
			rc = cli_fail(st, &err);
		else
			nl++;
	}
	pp_nccl_fit fit;
	char *json = NULL;
	if (rc == EXIT_ANSWERED && (st = pp_nccl_fit_logs(&start, logs, nl, &fit, &err)))
		rc = cli_fail(st, &err);
	if (rc == EXIT_ANSWERED && (st = pp_nccl_system_json(system, &fit, logs, nl, &json, &err)))
		rc = cli_fail(st, &err);
	if (rc == EXIT_ANSWERED) {
		cli_out out;
		bool to_stdout = !output || strcmp(output, "-") == 0;
		summary(to_stdout ? stderr : stdout, &fit.system, logs, nl, &fit);
		if ((rc = cli_out_open(&out, output)) == 0) {
			bool ok = fputs(json, out.f) >= 0;
			rc = cli_out_close(&out, ok);
		}
		if (rc == EXIT_ANSWERED && !to_stdout)
			printf("wrote %s\n", output);
	}
	free(json);
	for (size_t k = 0; k < nl; k++)
		pp_nccl_log_free(&logs[k]);
	return rc;
}
