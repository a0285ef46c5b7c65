/*
 * paraplan estimate: flags -> model, system, job, plan -> pp_estimate_run ->
 * report.  Every flag value is checked here for form (a number is a number);
 * the library checks meaning (tp divides heads, ...).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_MODEL = 256,
	OPT_SYSTEM,
	OPT_GPUS,
	OPT_GBS,
	OPT_SEQ,
	OPT_TOKENS,
	OPT_PRECISION,
	OPT_TP,
	OPT_PP,
	OPT_DP,
	OPT_CP,
	OPT_EP,
	OPT_ETP,
	OPT_VP,
	OPT_MBS,
	OPT_ZERO,
	OPT_RECOMPUTE,
	OPT_SP,
	OPT_SCHEDULE,
	OPT_ORDER,
	OPT_JSON,
	OPT_GRAD,
	OPT_OPTIMIZER,
	OPT_FLASH,
	OPT_OUTPUT,
	OPT_TP_OVERLAP,
	OPT_EP_OVERLAP,
	OPT_FRAMEWORK,
	OPT_PRICE,
	OPT_HELP
};

static const struct option long_opts[] = {{"model", required_argument, 0, OPT_MODEL},
                                          {"system", required_argument, 0, OPT_SYSTEM},
                                          {"gpus", required_argument, 0, OPT_GPUS},
                                          {"gbs", required_argument, 0, OPT_GBS},
                                          {"seq", required_argument, 0, OPT_SEQ},
                                          {"tokens", required_argument, 0, OPT_TOKENS},
                                          {"precision", required_argument, 0, OPT_PRECISION},
                                          {"tp", required_argument, 0, OPT_TP},
                                          {"pp", required_argument, 0, OPT_PP},
                                          {"dp", required_argument, 0, OPT_DP},
                                          {"cp", required_argument, 0, OPT_CP},
                                          {"ep", required_argument, 0, OPT_EP},
                                          {"etp", required_argument, 0, OPT_ETP},
                                          {"vp", required_argument, 0, OPT_VP},
                                          {"mbs", required_argument, 0, OPT_MBS},
                                          {"zero", required_argument, 0, OPT_ZERO},
                                          {"recompute", required_argument, 0, OPT_RECOMPUTE},
                                          {"sp", required_argument, 0, OPT_SP},
                                          {"schedule", required_argument, 0, OPT_SCHEDULE},
                                          {"order", required_argument, 0, OPT_ORDER},
                                          {"grad-dtype", required_argument, 0, OPT_GRAD},
                                          {"optimizer", required_argument, 0, OPT_OPTIMIZER},
                                          {"flash", required_argument, 0, OPT_FLASH},
                                          {"tp-overlap", required_argument, 0, OPT_TP_OVERLAP},
                                          {"ep-overlap", required_argument, 0, OPT_EP_OVERLAP},
                                          {"framework", required_argument, 0, OPT_FRAMEWORK},
                                          {"usd-per-gpu-hour", required_argument, 0, OPT_PRICE},
                                          {"output", required_argument, 0, OPT_OUTPUT},
                                          {"json", no_argument, 0, OPT_JSON},
                                          {"help", no_argument, 0, OPT_HELP},
                                          {0, 0, 0, 0}};

static void estimate_usage(FILE *f)
{
	fprintf(f,
	        "usage: paraplan estimate --model M --system S --gpus N --gbs B --seq L [options]\n"
	        "\n"
	        "  --model M        preset name (paraplan list models), a paraplan model JSON,\n"
	        "                   or a HuggingFace config.json\n"
	        "  --system S       preset name (paraplan list systems) or a system JSON\n"
	        "  --gpus N         number of GPUs\n"
	        "  --gbs B          global batch, sequences per iteration\n"
	        "  --seq L          sequence length, tokens\n"
	        "  --tokens T       training budget in tokens (suffix K, M, B or T allowed)\n"
	        "  --precision P    bf16 (default), fp16, fp8 or fp32\n"
	        "  --grad-dtype D   fp32 (default, Megatron main grads) or bf16\n"
	        "  --optimizer O    adam (default) or sgd\n"
	        "  --tp --pp --cp --ep --etp --vp --mbs N   parallel degrees (default 1;\n"
	        "                   --dp is derived when left out, --etp defaults to --tp)\n"
	        "  --zero Z         0..3 (1 = Megatron distributed optimizer)\n"
	        "  --recompute R    none (default), selective or full\n"
	        "  --sp on|off      sequence parallelism (default off)\n"
	        "  --flash on|off   fused/flash attention (default on)\n"
	        "  --tp-overlap on|off  TP communication overlapped with GEMMs (default off)\n"
	        "  --ep-overlap on|off  EP all-to-all overlapped with compute (default off)\n"
	        "  --framework F    megatron (default), llm-foundry or deepspeed behaviour\n"
	        "  --usd-per-gpu-hour P  price for the cost (default: the system preset's)\n"
	        "  --schedule S     1f1b (default), gpipe, interleaved or zb\n"
	        "  --order O        rank order, default tp-cp-ep-dp-pp\n"
	        "  --json           JSON instead of text\n"
	        "  --output FILE    write there (atomically) instead of standard output\n");
}

static const char *opt_name(int code)
{
	for (const struct option *o = long_opts; o->name; o++)
		if (o->val == code)
			return o->name;
	return "?";
}

/* A whole number in [lo, hi], nothing else on the string. */
static int parse_ll(int code, const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end) {
		cli_message("--%s: expected an integer, got '%s'", opt_name(code), s);
		return EXIT_BADINPUT;
	}
	if (v < lo || v > hi) {
		cli_message("--%s: expected %lld..%lld, got %lld", opt_name(code), lo, hi, v);
		return EXIT_BADINPUT;
	}
	*out = v;
	return 0;
}

static int parse_int(int code, const char *s, long long lo, long long hi, int *out)
{
	long long v;
	int rc = parse_ll(code, s, lo, hi, &v);
	if (!rc)
		*out = (int)v;
	return rc;
}

/* A count with an optional K/M/B/T suffix ("15T"), or a plain number ("1.5e13"). */
static int parse_count(int code, const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end != s && *end) {
		static const char suf[] = "KMBT";
		const char *p = strchr(suf, end[0] & ~0x20);
		if (p && !end[1]) {
			v *= pow(1e3, (double)(p - suf + 1));
			end++;
		}
	}
	if (errno || end == s || *end || !isfinite(v) || v < 0) {
		cli_message("--%s: expected a non-negative count such as 15T or 1.5e13, got '%s'",
		            opt_name(code), s);
		return EXIT_BADINPUT;
	}
	*out = v;
	return 0;
}

static int parse_onoff(int code, const char *s, bool *out)
{
	if (strcmp(s, "on") == 0 || strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
		*out = true;
	else if (strcmp(s, "off") == 0 || strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
		*out = false;
	else {
		cli_message("--%s: expected on or off, got '%s'", opt_name(code), s);
		return EXIT_BADINPUT;
	}
	return 0;
}

/* Library parse errors name a field; on the command line the flag is the field. */
static int flag_fail(int code, pp_status st, pp_error *err)
{
	char f[PP_ERROR_FIELD_MAX];
	snprintf(f, sizeof f, "--%s", opt_name(code));
	memcpy(err->field, f, sizeof f);
	err->source[0] = '\0';
	return cli_fail(st, err);
}

/* Which of the plan's flags the user gave, to tell their fields apart in messages. */
static void command_line_source(pp_error *err)
{
	/* Plan and job errors come back as "plan.tp"; say "--tp" instead. */
	static const struct {
		const char *field, *flag;
	} map[] = {{"plan.tp", "--tp"},
	           {"plan.pp", "--pp"},
	           {"plan.dp", "--dp"},
	           {"plan.cp", "--cp"},
	           {"plan.ep", "--ep"},
	           {"plan.etp", "--etp"},
	           {"plan.vp", "--vp"},
	           {"plan.mbs", "--mbs"},
	           {"plan.zero", "--zero"},
	           {"plan.sp", "--sp"},
	           {"plan.order", "--order"},
	           {"plan.schedule", "--schedule"},
	           {"job.global_batch", "--gbs"},
	           {"job.seq_len", "--seq"},
	           {"job.precision", "--precision"},
	           {"job.train_tokens", "--tokens"},
	           {"gpus", "--gpus"}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(err->field, map[i].field) == 0) {
			snprintf(err->field, sizeof err->field, "%s", map[i].flag);
			break;
		}
}

int cli_estimate(int argc, char **argv)
{
	const char *model_ref = NULL, *system_ref = NULL, *output = NULL, *framework = NULL;
	double price = -1;
	long long gpus = 0;
	bool json = false, have_gbs = false, have_seq = false;
	pp_job job;
	pp_plan plan;
	pp_error err;
	pp_job_init(&job);
	pp_plan_init(&plan);
	pp_error_clear(&err);
	int rc = 0, c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", long_opts, NULL)) != -1) {
		const char *v = optarg;
		pp_status st = PP_OK;
		switch (c) {
		case OPT_MODEL: model_ref = v; break;
		case OPT_SYSTEM: system_ref = v; break;
		case OPT_GPUS: rc = parse_ll(c, v, 1, 10000000, &gpus); break;
		case OPT_GBS:
			rc = parse_ll(c, v, 1, 1000000000, &job.global_batch);
			have_gbs = true;
			break;
		case OPT_SEQ:
			rc = parse_int(c, v, 1, 100000000, &job.seq_len);
			have_seq = true;
			break;
		case OPT_TOKENS: rc = parse_count(c, v, &job.train_tokens); break;
		case OPT_PRECISION: st = pp_precision_parse(v, "", &job.precision, &err); break;
		case OPT_GRAD:
			if (strcmp(v, "fp32") == 0)
				job.grad_bytes = 4;
			else if (strcmp(v, "bf16") == 0 || strcmp(v, "fp16") == 0)
				job.grad_bytes = 2;
			else {
				cli_message("--grad-dtype: expected fp32, bf16 or fp16, got '%s'",
				            v);
				rc = EXIT_BADINPUT;
			}
			break;
		case OPT_OPTIMIZER:
			if (strcmp(v, "adam") == 0 || strcmp(v, "adamw") == 0)
				job.optimizer = PP_OPT_ADAM;
			else if (strcmp(v, "sgd") == 0)
				job.optimizer = PP_OPT_SGD;
			else {
				cli_message("--optimizer: expected adam or sgd, got '%s'", v);
				rc = EXIT_BADINPUT;
			}
			break;
		case OPT_TP: rc = parse_int(c, v, 1, 1 << 20, &plan.tp); break;
		case OPT_PP: rc = parse_int(c, v, 1, 1 << 20, &plan.pp); break;
		case OPT_DP: rc = parse_int(c, v, 1, 10000000, &plan.dp); break;
		case OPT_CP: rc = parse_int(c, v, 1, 1 << 20, &plan.cp); break;
		case OPT_EP: rc = parse_int(c, v, 1, 1 << 20, &plan.ep); break;
		case OPT_ETP: rc = parse_int(c, v, 1, 1 << 20, &plan.etp); break;
		case OPT_VP: rc = parse_int(c, v, 1, 1 << 20, &plan.vp); break;
		case OPT_MBS: rc = parse_int(c, v, 1, 1 << 20, &plan.mbs); break;
		case OPT_ZERO: rc = parse_int(c, v, 0, 3, &plan.zero); break;
		case OPT_RECOMPUTE: st = pp_recompute_parse(v, "", &plan.recompute, &err); break;
		case OPT_SP: rc = parse_onoff(c, v, &plan.sp); break;
		case OPT_FLASH: rc = parse_onoff(c, v, &plan.flash); break;
		case OPT_TP_OVERLAP: rc = parse_onoff(c, v, &plan.tp_overlap); break;
		case OPT_EP_OVERLAP: rc = parse_onoff(c, v, &plan.ep_overlap); break;
		case OPT_FRAMEWORK: framework = v; break;
		case OPT_PRICE: {
			char *end;
			errno = 0;
			price = strtod(v, &end);
			if (errno || end == v || *end || !isfinite(price) || price < 0 ||
			    price > 1e4) {
				cli_message(
				    "--usd-per-gpu-hour: expected a price in 0..10000, got '%s'",
				    v);
				rc = EXIT_BADINPUT;
			}
			break;
		}
		case OPT_SCHEDULE: st = pp_schedule_parse(v, "", &plan.schedule, &err); break;
		case OPT_ORDER:
			if (strlen(v) >= sizeof plan.order) {
				cli_message("--order: too long: '%s'", v);
				rc = EXIT_BADINPUT;
			} else
				snprintf(plan.order, sizeof plan.order, "%s", v);
			break;
		case OPT_JSON: json = true; break;
		case OPT_OUTPUT: output = v; break;
		case OPT_HELP: estimate_usage(stdout); return EXIT_ANSWERED;
		case ':': cli_message("%s: missing value", argv[optind - 1]); return EXIT_BADINPUT;
		default: {
			const char *bad = argv[optind - 1];
			cli_message(
			    "estimate: unknown option '%s' (see 'paraplan estimate --help')", bad);
			return EXIT_BADINPUT;
		}
		}
		if (st)
			return flag_fail(c, st, &err);
		if (rc)
			return rc;
	}
	if (optind < argc) {
		cli_message("estimate: unexpected argument '%s'", argv[optind]);
		return EXIT_BADINPUT;
	}
	const char *missing = !model_ref    ? "--model"
	                      : !system_ref ? "--system"
	                      : !gpus       ? "--gpus"
	                      : !have_gbs   ? "--gbs"
	                      : !have_seq   ? "--seq"
	                                    : NULL;
	if (missing) {
		cli_message("estimate: %s is required (see 'paraplan estimate --help')", missing);
		return EXIT_BADINPUT;
	}

	pp_model model;
	pp_system sys;
	pp_status st = pp_model_resolve(model_ref, &model, &err);
	if (st) {
		if (!err.source[0])
			snprintf(err.field, sizeof err.field, "--model");
		return cli_fail(st, &err);
	}
	st = pp_system_resolve(system_ref, &sys, &err);
	if (st) {
		if (!err.source[0])
			snprintf(err.field, sizeof err.field, "--system");
		return cli_fail(st, &err);
	}
	if (framework && (st = pp_system_set_framework(&sys, framework, &err))) {
		snprintf(err.field, sizeof err.field, "--framework");
		return cli_fail(st, &err);
	}
	if (price >= 0)
		sys.usd_per_gpu_hour = price;
	pp_estimate *e = malloc(sizeof *e);
	if (!e) {
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	st = pp_estimate_run(&model, &sys, &job, &plan, gpus, e, &err);
	if (st) {
		free(e);
		if (!err.source[0] || strcmp(err.source, model.name) == 0)
			err.source[0] = '\0';
		command_line_source(&err);
		return cli_fail(st, &err);
	}
	cli_out out;
	if ((rc = cli_out_open(&out, output))) {
		free(e);
		return rc;
	}
	int wr = json ? pp_report_json(e, out.f) : pp_report_text(e, out.f);
	free(e);
	return cli_out_close(&out, wr == 0);
}
