/*
 * paraplan estimate: flags -> model, system, job, plan -> pp_estimate_run ->
 * report.  The flags are parsed in options.c (shared with sweep).
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"

static void estimate_usage(FILE *f)
{
	fprintf(
	    f, "usage: paraplan estimate --model M --system S --gpus N --gbs B --seq L [options]\n"
	       "\n"
	       "  --model M        preset name (paraplan list models), a paraplan model JSON,\n"
	       "                   or a HuggingFace config.json\n"
	       "  --system S       preset name (paraplan list systems) or a system JSON\n"
	       "  --gpus N         number of GPUs\n"
	       "  --gbs B          global batch, sequences per iteration\n"
	       "  --seq L          sequence length, tokens\n"
	       "  --tokens T       training budget in tokens (suffix K, M, B or T allowed)\n"
	       "  --precision P    bf16 (default), fp16, fp8 or fp32\n"
	       "  --fp8-recipe R   under fp8: delayed (default), current, rowwise, blockwise\n"
	       "                   or mxfp8 (Blackwell); its quantisation cost\n"
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
	       "  --framework F    megatron (default), torchtitan, llm-foundry, deepspeed or\n"
	       "                   megatron-lm-2021 (SC'21 PTD-P: scatter/gather pipeline sends)\n"
	       "                   behaviour\n"
	       "  --gpu-profile DIR  the GPU's measured kernel tables (tools/probe/\n"
	       "                   paraplan_probe.py; docs/kernel.md): compute and memory-bound\n"
	       "                   ops timed by the kernel model fitted to them\n"
	       "  --usd-per-gpu-hour P  price for the cost (default: the system preset's)\n"
	       "  --schedule S     1f1b (default), gpipe, interleaved, zb or wshape (DHelix:\n"
	       "                   the model folded into a U, the forward of one micro-batch\n"
	       "                   co-executed with the backward of another; seed 002)\n"
	       "  --si on|off      DHelix strand interleaving: on = --schedule wshape, which\n"
	       "                   with --pp 1 is co-execution without a pipeline\n"
	       "  --pairing on|off print the operator pairing plan of a layer (default off)\n"
	       "  --overlap T      the operator overlap table wshape pairs with: a40, a800,\n"
	       "                   h100 or a file like data/overlap/h100.json (default: the\n"
	       "                   one the GPU's file names, overlap_platform); refused\n"
	       "                   with another schedule\n"
	       "  --order O        rank order, default tp-cp-ep-dp-pp (tp-tp2-cp-ep-dp-pp\n"
	       "                   with --tp2)\n"
	       "  --sim on|off     also simulate the iteration event by event (default off)\n"
	       "                   and report it next to the closed form\n"
	       "  --trace FILE     write the simulated iteration as a Chrome/Perfetto trace\n"
	       "                   (JSON; implies --sim on), atomically\n"
	       "  --traffic FILE   write the GPU x GPU traffic of one iteration, per type\n"
	       "                   and link tier (JSON; CSV when FILE ends in .csv) and\n"
	       "                   print its totals with the text report\n"
	       "  --traffic-csv FILE  the same as CSV, one line per GPU pair and type (with\n"
	       "                   --traffic too: both files are written)\n"
	       "  --timeline on|off   print the on/off traffic timeline of the simulated\n"
	       "                   iteration (implies --sim on)\n"
	       "  --schedule-file FILE  simulate these task lists instead of the schedule's\n"
	       "                   (JSON: {\"pp\", \"microbatches\", \"vp\", \"ranks\": [[\"F0\",\n"
	       "                   \"B0\", ...], ...]}; implies --sim on)\n"
	       "  --mtbf-gpu-hours H  GPU-hours between interruptions, for goodput (default\n"
	       "                   50677: Llama 3, 419 in 54 days on 16,384 H100)\n"
	       "  --ckpt-write-gbps G  storage write bandwidth of the job, GB/s (default\n"
	       "                   2000: Llama 3's Tectonic, sustained)\n"
	       "  --restart-min M  minutes from a failure until training runs again (default 10)\n"
	       "  --ckpt-async on|off  asynchronous checkpoints (default off)\n"
	       "                   (goodput is shown with --tokens or any of these four)\n"
	       "  --emit F         print the plan as launch flags instead of the report:\n"
	       "                   megatron (Megatron-LM flags), nemo (NeMo 2.0 recipe\n"
	       "                   overrides) or torchtitan (job TOML); what F cannot\n"
	       "                   express is noted on stderr\n"
	       "  --from-megatron \"FLAGS\"|@FILE  Megatron-LM flags (or a launch script):\n"
	       "                   the model (when no --model), batch, sequence, precision\n"
	       "                   and plan; flags after it still win\n"
	       "  --from-torchtitan FILE  the same from a torchtitan job TOML\n"
	       "  --html FILE      also write a self-contained HTML report there: memory per\n"
	       "                   stage against HBM, the iteration breakdown, the simulated\n"
	       "                   iteration per pipeline rank and the traffic heat map\n"
	       "  --svg DIR        also write the same charts as DIR/memory.svg, ...\n"
	       "  --large-output   write --traffic, --traffic-csv, --html and --svg above\n"
	       "                   65,536 GPUs too (refused there without it: their size\n"
	       "                   grows with the GPUs, 18 MB and 10 s at 262,144)\n"
	       "  --json           JSON instead of text\n"
	       "  --format NAME    an output format ('paraplan list formats'; default text)\n"
	       "  --output FILE    write there (atomically) instead of standard output\n");
}

enum {
	OPT_SIM = CLI_OPT_VERB,
	OPT_TRACE,
	OPT_TRAFFIC,
	OPT_TRAFFIC_CSV,
	OPT_TIMELINE,
	OPT_SCHEDULE_FILE,
	OPT_PAIRING,
	OPT_MTBF,
	OPT_CKPT_GBPS,
	OPT_RESTART,
	OPT_CKPT_ASYNC,
	OPT_EMIT,
	OPT_HTML,
	OPT_SVG,
	OPT_LARGE
};

static const struct option estimate_opts[] = {
    {"sim", required_argument, 0, OPT_SIM},
    {"trace", required_argument, 0, OPT_TRACE},
    {"schedule-file", required_argument, 0, OPT_SCHEDULE_FILE},
    {"traffic", required_argument, 0, OPT_TRAFFIC},
    {"traffic-csv", required_argument, 0, OPT_TRAFFIC_CSV},
    {"timeline", required_argument, 0, OPT_TIMELINE},
    {"pairing", required_argument, 0, OPT_PAIRING},
    {"mtbf-gpu-hours", required_argument, 0, OPT_MTBF},
    {"ckpt-write-gbps", required_argument, 0, OPT_CKPT_GBPS},
    {"restart-min", required_argument, 0, OPT_RESTART},
    {"ckpt-async", required_argument, 0, OPT_CKPT_ASYNC},
    {"emit", required_argument, 0, OPT_EMIT},
    {"html", required_argument, 0, OPT_HTML},
    {"svg", required_argument, 0, OPT_SVG},
    {"large-output", no_argument, 0, OPT_LARGE},
    {0, 0, 0, 0}};

typedef struct estimate_flags {
	bool sim;
	bool sim_off; /* "--sim off" given last: refused with what simulates */
	const char *trace;
	const char *schedule_file;
	cli_traffic_opts traffic;
	bool pairing;
	bool goodput; /* a goodput flag was given */
	bool emit;    /* --emit: the plan as launch flags instead of the report */
	pp_launch_format format;
	pp_goodput_params gp;
	cli_charts charts; /* --html, --svg */
} estimate_flags;

static int estimate_flag(int code, const char *value, void *ctx)
{
	estimate_flags *f = ctx;
	switch (code) {
	case OPT_HTML:
	case OPT_SVG: return cli_charts_flag(&f->charts, "estimate", code == OPT_SVG, value);
	case OPT_LARGE: f->charts.large = true; return 0;
	case OPT_EMIT: {
		pp_error err;
		pp_error_clear(&err);
		pp_status st = pp_launch_format_parse(value, "--emit", &f->format, &err);
		if (st)
			return cli_fail(st, &err);
		f->emit = true;
		return 0;
	}
	case OPT_MTBF:
	case OPT_CKPT_GBPS:
	case OPT_RESTART:
	case OPT_CKPT_ASYNC:
		f->goodput = true;
		return cli_goodput_flag("estimate", estimate_opts[code - CLI_OPT_VERB].name, value,
		                        &f->gp);
	}
	if (code == OPT_PAIRING) {
		if (strcmp(value, "on") == 0 || strcmp(value, "off") == 0) {
			f->pairing = strcmp(value, "on") == 0;
			return 0;
		}
		cli_message("estimate: --pairing expects on or off, got '%s'", value);
		return EXIT_BADINPUT;
	}
	if (code == OPT_SCHEDULE_FILE) {
		if (!*value) {
			cli_message("estimate: --schedule-file needs a file name");
			return EXIT_BADINPUT;
		}
		f->schedule_file = value;
		f->sim = true;
		return 0;
	}
	if (code == OPT_TRAFFIC || code == OPT_TRAFFIC_CSV || code == OPT_TIMELINE) {
		int rc = cli_traffic_flag(&f->traffic, code - OPT_TRAFFIC, value);
		if (!rc && f->traffic.timeline)
			f->sim = true;
		return rc;
	}
	if (code == OPT_TRACE) {
		if (!*value) {
			cli_message("estimate: --trace needs a file name");
			return EXIT_BADINPUT;
		}
		f->trace = value;
		f->sim = true;
		return 0;
	}
	f->sim_off = false;
	if (strcmp(value, "on") == 0)
		f->sim = true;
	else if (strcmp(value, "off") == 0) {
		f->sim = f->trace != NULL || f->schedule_file != NULL || f->traffic.timeline;
		f->sim_off = true;
	} else {
		cli_message("estimate: --sim expects on or off, got '%s'", value);
		return EXIT_BADINPUT;
	}
	return 0;
}

/* Simulate the iteration of `e`; write the trace when asked; keep the
 * simulator for the traffic timeline (*keep, when not NULL).  0 or an exit code. */
static int simulate(pp_estimate *e, const estimate_flags *f, const pp_model *model, pp_sim **keep)
{
	pp_sim *sim = NULL;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_sim_new(&sim, &err);
	if (!st && f->schedule_file) {
		const pp_plan *p = &e->plan;
		int v = pp_schedule_type_of(p->schedule)->uses_vp ? p->vp : 1;
		st = pp_sim_orders_load(sim, f->schedule_file, p->pp, p->microbatches, v, &err);
	}
	if (!st)
		st = pp_estimate_simulate(e, sim, &err);
	if (st) {
		pp_sim_free(sim);
		/* the task lists of the file are what failed (a deadlock): name it */
		if (f->schedule_file && !err.source[0])
			snprintf(err.source, sizeof err.source, "%s", f->schedule_file);
		return cli_plan_fail(st, &err, model);
	}
	int rc = 0;
	if (f->trace) {
		cli_out out;
		if ((rc = cli_out_open(&out, f->trace)) == 0)
			rc = cli_out_close(&out,
			                   cli_report_ok(pp_report_trace(e, sim, out.f), out.f));
	}
	if (keep && !rc)
		*keep = sim;
	else
		pp_sim_free(sim);
	return rc;
}

/* Row `q` of a plan step's segment of `n` operators from `first` of `q`:
 * "name (kind ms)", "-" on the first row of a strand with no segment, ""
 * past the segment's end. */
static void pairing_cell(char *buf, size_t size, const pp_dh_seq *seq, int first, int n, int q)
{
	if (q < n)
		snprintf(buf, size, "%s (%s %.3f)", seq->s[first + q].name,
		         pp_dh_kind_name(seq->s[first + q].kind), seq->s[first + q].seconds * 1e3);
	else
		snprintf(buf, size, "%s", q == 0 ? "-" : "");
}

/* DHelix's pairing plan of the first layer of each kind on stage 0 (text). */
static int print_pairing(const pp_estimate *e, FILE *f)
{
	pp_dh_overlap o;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_dh_overlap_of_system(&e->system, e->plan.tp, &o, &err);
	pp_work *ws = malloc(sizeof *ws);
	pp_dh_layer *l = malloc(sizeof *l);
	pp_dh_result *r = malloc(sizeof *r);
	if (!ws || !l || !r) {
		free(ws);
		free(l);
		free(r);
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	pp_work_init(ws);
	bool done[2] = {false, false};
	for (int i = 0; !st && i < e->model.num_layers; i++) {
		int k = pp_model_layer_is_moe(&e->model, i) ? 1 : 0;
		if (done[k])
			continue;
		done[k] = true;
		st = pp_dh_layer_build(&e->model, &e->system, &e->job, &e->plan, i, ws, l, &err);
		if (st)
			break;
		pp_dh_layer_pair(&o, l, r);
		char router[64] = "";
		if (r->fwd_candidates > 1)
			snprintf(router, sizeof router, ", x %d placements of the router",
			         r->fwd_candidates);
		fprintf(f,
		        "\nDHelix pairing, layer %d (%s), overlap table %s:\n"
		        "  forward %d operators %.3f ms, backward %d operators %.3f ms (best of %d "
		        "orders of the weight gradients%s)\n"
		        "  segments of up to %d operators each, a barrier after each step\n"
		        "  SI block %.3f ms: s = (T_f + T_b) / T_SI = %.3f\n",
		        i, k ? "MoE" : "dense", o.name, l->fwd.n, r->t_f * 1e3, l->bwd.n,
		        r->t_b * 1e3, r->candidates, router, PP_DH_SEG_OPS, r->t_si * 1e3,
		        r->speedup);
		fprintf(f, "  %-4s %-31s %-31s %9s\n", "step", "forward", "backward", "ms");
		/* a segment of several operators: one line per operator, the
		 * step's number and time on its first */
		for (int k2 = 0; k2 < r->plan.nsteps; k2++) {
			const pp_dh_step *p = &r->plan.step[k2];
			int rows = p->nf > p->nb ? p->nf : p->nb;
			for (int q = 0; q < rows; q++) {
				char a[64], b[64], n[16] = "", t[16] = "";
				pairing_cell(a, sizeof a, &r->fwd, p->f, p->nf, q);
				pairing_cell(b, sizeof b, &r->bwd, p->b, p->nb, q);
				if (q == 0) {
					snprintf(n, sizeof n, "%d", k2 + 1);
					snprintf(t, sizeof t, "%9.3f", p->seconds * 1e3);
				}
				char line[160];
				int len = snprintf(line, sizeof line, "  %-4s %-31s %-31s %9s", n,
				                   a, b, t);
				while (len > 0 && line[len - 1] == ' ')
					line[--len] = '\0';
				fprintf(f, "%s\n", line);
			}
		}
	}
	free(ws);
	free(l);
	free(r);
	if (st) {
		cli_message("estimate: --pairing: %s", err.text);
		return EXIT_BADINPUT;
	}
	return 0;
}

/* Flags that contradict each other or have nothing to act on: refused, one
 * line.  CLI_CONTINUE or EXIT_BADINPUT. */
static int estimate_consistent(const estimate_flags *f, const cli_opts *o)
{
	const char *sim_by = f->schedule_file      ? "--schedule-file"
	                     : f->trace            ? "--trace"
	                     : f->traffic.timeline ? "--timeline on"
	                                           : NULL;
	if (f->sim_off && sim_by) {
		cli_message("estimate: --sim off contradicts %s, which simulates the iteration",
		            sim_by);
		return EXIT_BADINPUT;
	}
	bool wshape = o->plan.schedule == PP_SCHED_WSHAPE;
	if (cli_overlap_check("estimate", o))
		return EXIT_BADINPUT;
	if (f->emit && wshape) {
		cli_message("estimate: --emit cannot express --schedule wshape (DHelix "
		            "co-execution has no launch flag in any framework)");
		return EXIT_BADINPUT;
	}
	if (f->emit && f->pairing) {
		cli_message("estimate: --emit and --pairing on: give one of them (the pairing "
		            "table is no launch flag)");
		return EXIT_BADINPUT;
	}
	const char *big = f->traffic.file ? "--traffic" : f->traffic.csv ? "--traffic-csv" : NULL;
	int rc;
	if (big && (rc = cli_large_output_check("estimate", big, o->gpus, f->charts.large)))
		return rc;
	if (cli_charts_wanted(&f->charts) &&
	    (rc = cli_large_output_check("estimate", f->charts.html ? "--html" : "--svg", o->gpus,
	                                 f->charts.large)))
		return rc;
	return CLI_CONTINUE;
}

/* The options into `o` and `flags`, checked for form: CLI_CONTINUE or an
 * exit code.  Reads no file. */
static int estimate_parse(int argc, char **argv, estimate_flags *flags, cli_opts *o)
{
	memset(flags, 0, sizeof *flags);
	flags->format = PP_LAUNCH_MEGATRON;
	pp_goodput_params_init(&flags->gp);
	const cli_verb verb = {"estimate",    estimate_usage, estimate_opts,
	                       estimate_flag, flags,          NULL};
	int rc = cli_opts_parse(argc, argv, &verb, o);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc = cli_opts_require(o, "estimate", true, true)))
		return rc;
	if (flags->emit && !cli_format_is_text(o->format)) {
		cli_message("estimate: --emit and --%s: give one of them",
		            o->json ? "json" : "format");
		return EXIT_BADINPUT;
	}
	if ((rc = cli_format_check("estimate", o->format, PP_RESULT_ESTIMATE)) ||
	    (rc = cli_charts_format(&flags->charts, "estimate", o)))
		return rc;
	return estimate_consistent(flags, o);
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
	if ((rc =
	         cli_out_check("estimate", "--output", flags.charts.as_report ? NULL : o.output)) ||
	    (rc = cli_out_check("estimate", "--trace", flags.trace)) ||
	    (rc = cli_out_check("estimate", "--traffic", flags.traffic.file)) ||
	    (rc = cli_out_check("estimate", "--traffic-csv", flags.traffic.csv)) ||
	    (rc = cli_charts_check("estimate", &flags.charts)))
		return rc;
	pp_model model;
	pp_system sys;
	pp_estimate *e;
	if ((rc = cli_estimate_inputs(&o, &model, &sys, &e)))
		return rc;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = PP_OK;
	if ((flags.goodput || o.job.train_tokens > 0) &&
	    (st = pp_estimate_goodput(e, &flags.gp, &err))) {
		free(e);
		return cli_plan_fail(st, &err, &model);
	}
	pp_sim *sim = NULL;
	if (flags.sim && (rc = simulate(e, &flags, &model, &sim))) {
		free(e);
		return rc;
	}
	cli_traffic_result tr;
	memset(&tr, 0, sizeof tr);
	if ((rc = cli_traffic_run(&flags.traffic, e, sim, &model, &tr)) ||
	    (rc = cli_charts_emit(&flags.charts, "estimate", e, sim, tr.traffic, NULL, NULL,
	                          &model))) {
		cli_traffic_done(&tr);
		pp_sim_free(sim);
		free(e);
		return rc;
	}
	pp_sim_free(sim);
	cli_out out;
	if (flags.charts.as_report || (rc = cli_out_open(&out, o.output))) {
		cli_traffic_done(&tr);
		free(e);
		return rc;
	}
	int wr;
	if (flags.emit) {
		char notes[PP_LAUNCH_NOTES_MAX];
		wr = pp_launch_emit(e, flags.format, out.f, notes, sizeof notes);
		for (char *line = notes, *nl; *line && (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			cli_note("--emit: %s", line);
		}
	} else {
		pp_result r = {.kind = PP_RESULT_ESTIMATE,
		               .estimate = e,
		               .traffic = tr.traffic,
		               .timeline = tr.timeline,
		               .timeline_place = tr.have_place ? &tr.place : NULL};
		wr = cli_render(o.format, &r, out.f);
	}
	cli_traffic_done(&tr);
	if (flags.pairing && cli_format_is_text(o.format) && wr == 0 &&
	    (rc = print_pairing(e, out.f))) {
		free(e);
		cli_out_close(&out, false);
		return rc;
	}
	free(e);
	return cli_out_close(&out, cli_report_ok(wr, out.f));
}
