/*
 * paraplan estimate: flags -> model, system, job, plan -> pp_estimate_run ->
 * report.  The flags are parsed in options.c (shared with sweep).
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"

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
	        "  --tp2 N          2D tensor parallelism: n_2 GPUs split the sequence, n_t =\n"
	        "                   tp x tp2 (default 1 = 1D TP; seed 003 Table II)\n"
	        "  --summa on|off   SUMMA multiplies on the tp x tp2 grid (default off)\n"
	        "  --summa-nb N     SUMMA panel count n_b (default 1; divides hidden and ffn)\n"
	        "  --first-stage-layers N  transformer layers of the first pipeline stage\n"
	        "  --last-stage-layers N   and of the last; the other stages split the rest\n"
	        "                   evenly (Megatron --decoder-first/last-pipeline-num-layers;\n"
	        "                   default: an even split of the layers over pp x vp)\n"
	        "  --embedding-as-layer on|off  the embedding counts as a layer in an even\n"
	        "                   split, the first stage holds one layer fewer (Megatron\n"
	        "                   --account-for-embedding-in-pipeline-split; default off)\n"
	        "  --loss-as-layer on|off  the same for the LM head and loss on the last stage\n"
	        "  --zero Z         0..3 (1 = Megatron distributed optimizer)\n"
	        "  --recompute R    none (default), selective or full\n"
	        "  --sp on|off      sequence parallelism (default off)\n"
	        "  --flash on|off   fused/flash attention (default on)\n"
	        "  --tp-overlap on|off  TP communication overlapped with GEMMs (default off)\n"
	        "  --ep-overlap on|off  EP all-to-all overlapped with compute (default off)\n"
	        "  --framework F    megatron (default), llm-foundry or deepspeed behaviour\n"
	        "  --usd-per-gpu-hour P  price for the cost (default: the system preset's)\n"
	        "  --schedule S     1f1b (default), gpipe, interleaved or zb\n"
	        "  --order O        rank order, default tp-cp-ep-dp-pp (tp-tp2-cp-ep-dp-pp\n"
	        "                   with --tp2)\n"
	        "  --sim on|off     also simulate the iteration event by event (default off)\n"
	        "                   and report it next to the closed form\n"
	        "  --trace FILE     write the simulated iteration as a Chrome/Perfetto trace\n"
	        "                   (JSON; implies --sim on), atomically\n"
	        "  --json           JSON instead of text\n"
	        "  --output FILE    write there (atomically) instead of standard output\n");
}

enum { OPT_SIM = CLI_OPT_VERB, OPT_TRACE };

static const struct option estimate_opts[] = {{"sim", required_argument, 0, OPT_SIM},
                                              {"trace", required_argument, 0, OPT_TRACE},
                                              {0, 0, 0, 0}};

typedef struct estimate_flags {
	bool sim;
	const char *trace;
} estimate_flags;

static int estimate_flag(int code, const char *value, void *ctx)
{
	estimate_flags *f = ctx;
	if (code == OPT_TRACE) {
		if (!*value) {
			cli_message("estimate: --trace needs a file name");
			return EXIT_BADINPUT;
		}
		f->trace = value;
		f->sim = true;
		return 0;
	}
	if (strcmp(value, "on") == 0)
		f->sim = true;
	else if (strcmp(value, "off") == 0)
		f->sim = f->trace != NULL;
	else {
		cli_message("estimate: --sim expects on or off, got '%s'", value);
		return EXIT_BADINPUT;
	}
	return 0;
}

/* Simulate the iteration of `e`; write the trace when asked.  0 or an exit code. */
static int simulate(pp_estimate *e, const estimate_flags *f, const pp_model *model)
{
	pp_sim *sim = NULL;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_sim_new(&sim, &err);
	if (!st)
		st = pp_estimate_simulate(e, sim, &err);
	if (st) {
		pp_sim_free(sim);
		return cli_plan_fail(st, &err, model);
	}
	int rc = 0;
	if (f->trace) {
		cli_out out;
		if ((rc = cli_out_open(&out, f->trace)) == 0)
			rc = cli_out_close(&out, pp_report_trace(e, sim, out.f) == 0);
	}
	pp_sim_free(sim);
	return rc;
}

/* The options into `o` and `flags`, checked for form: CLI_CONTINUE or an
 * exit code.  Reads no file. */
static int estimate_parse(int argc, char **argv, estimate_flags *flags, cli_opts *o)
{
	*flags = (estimate_flags){false, NULL};
	const cli_verb verb = {"estimate",    estimate_usage, estimate_opts,
	                       estimate_flag, flags,          NULL};
	int rc = cli_opts_parse(argc, argv, &verb, o);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc = cli_opts_require(o, "estimate", true, true)))
		return rc;
	return CLI_CONTINUE;
}

int cli_estimate_parse_only(int argc, char **argv)
{
	estimate_flags flags;
	cli_opts o;
	int rc = estimate_parse(argc, argv, &flags, &o);
	return rc == CLI_CONTINUE ? EXIT_ANSWERED : rc;
}

int cli_estimate(int argc, char **argv)
{
	estimate_flags flags;
	cli_opts o;
	int rc = estimate_parse(argc, argv, &flags, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc = cli_out_check("estimate", "--output", o.output)) ||
	    (rc = cli_out_check("estimate", "--trace", flags.trace)))
		return rc;
	pp_model model;
	pp_system sys;
	if ((rc = cli_opts_inputs(&o, &model, &sys)))
		return rc;
	pp_estimate *e = malloc(sizeof *e);
	if (!e) {
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_estimate_run(&model, &sys, &o.job, &o.plan, o.gpus, e, &err);
	if (st) {
		free(e);
		return cli_plan_fail(st, &err, &model);
	}
	if (flags.sim && (rc = simulate(e, &flags, &model))) {
		free(e);
		return rc;
	}
	cli_out out;
	if ((rc = cli_out_open(&out, o.output))) {
		free(e);
		return rc;
	}
	int wr = o.json ? pp_report_json(e, out.f) : pp_report_text(e, out.f);
	free(e);
	return cli_out_close(&out, wr == 0);
}
