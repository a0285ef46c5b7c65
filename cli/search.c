/*
 * paraplan search: every estimate flag is applied or refused, never dropped.
 * A plan flag may be a list (--tp 1,2,4), a range (--pp 4:16) or left out
 * (searched); the job, system, price and the plan flags that are not searched
 * (--flash, overlaps) apply to every plan.  The shared parser hands each
 * estimate flag to take() first (pp_search_flag_take), so a flag search does not
 * know is refused rather than ignored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "options.h"
#include "paraplan/search_parse.h"

typedef struct search_ctx {
	pp_search_options opts;
	bool sim;                /* --sim on: simulate the top K */
	cli_emit emit;           /* --emit F: the winner as launch flags */
	pp_search_space space;   /* the searched flags go straight here */
	cli_charts charts;       /* --html, --svg */
	bool quiet;              /* --quiet: no progress on a terminal */
	cli_inverse inv;         /* --deadline-days, --budget-usd, the goodput flags */
	pp_search_dim gpus_list; /* --gpus as a list or a range (with inv), count 0 if not */
	cli_progress pr;         /* the line of the search running */
	const char *bandwidth;   /* --bandwidth FILE: the top K mapped on it */
	const char *objective;   /* --objective time|energy */
} search_ctx;

#define AT(m) offsetof(search_ctx, m)
static const cli_flag search_flags[] = {
    CLI_ROW("top", CLI_F_INT, AT(opts.top_k), .lo = 1, .hi = 10000),
    CLI_ROW("threads", CLI_F_INT, AT(opts.threads), .lo = 1, .hi = 1024),
    CLI_ROW("headroom", CLI_F_REAL, AT(space.headroom_fraction), .lo = 0, .hi = 1, .hi_open = true,
            .what = "a fraction in 0..1 (0.1 keeps 10% free)"),
    CLI_ROW("exhaustive", CLI_F_SET, AT(opts.exhaustive)),
    CLI_ROW("sim", CLI_F_ONOFF, AT(sim)),
    CLI_ROW("emit", CLI_F_EMIT, AT(emit)),
    CLI_ROW("time-limit", CLI_F_REAL, AT(opts.time_limit_s), .lo = 0, .hi = 1e9, .lo_open = true,
            .what = "a number of seconds in (0, 1e9]"),
    CLI_ROW("max-plans", CLI_F_LL, AT(opts.max_plans), .lo = 1, .hi = 1e15),
    CLI_ROW("quiet", CLI_F_SET, AT(quiet)),
    CLI_ROW("bandwidth", CLI_F_FILE, AT(bandwidth)),
    CLI_ROW("objective", CLI_F_STR, AT(objective)),
    CLI_CHARTS_FLAGS(search_ctx, charts),
    CLI_INVERSE_FLAGS(search_ctx, inv),
    CLI_END};
#undef AT

static void search_usage(FILE *f)
{
	cli_usage(f, "search"); /* docs/usage/search.txt */
}

/* A library refusal of a flag's value: the one message, EXIT_BADINPUT. */
static int space_fail(pp_status st, const pp_error *err)
{
	return st ? cli_fail(st, err) : 0;
}

/* An estimate flag: into the space (searched), to the shared parser (every
 * plan), or refused. */
static int take(const char *flag, const char *v, void *vctx)
{
	search_ctx *c = vctx;
	pp_error err;
	pp_error_clear(&err);
	if (strcmp(flag, "gpus") == 0) { /* a list: a search per count */
		c->gpus_list.count = 0;
		if (!strchr(v, ','))
			return CLI_CONTINUE;
		return space_fail(
		    pp_search_dim_parse("--gpus", v, 1, 10000000, &c->gpus_list, &err), &err);
	}
	bool every_plan;
	pp_status st = pp_search_flag_take(&c->space, flag, v, &every_plan, &err);
	return every_plan ? CLI_CONTINUE : space_fail(st, &err);
}

/* The options into `ctx` and `o`, checked for form: CLI_CONTINUE or an exit
 * code.  Reads no file. */
static int search_parse(int argc, char **argv, search_ctx *ctx, cli_opts *o)
{
	memset(ctx, 0, sizeof *ctx);
	pp_search_options_init(&ctx->opts);
	pp_goodput_params_init(&ctx->inv.gp);
	pp_search_space_init(&ctx->space);
	const cli_verb verb = {"search", search_usage, search_flags, ctx, take};
	int rc = cli_opts_parse(argc, argv, &verb, o);
	if (rc != CLI_CONTINUE)
		return rc;
	if (ctx->gpus_list.count > 0)
		o->gpus = ctx->gpus_list.values[0];
	rc = cli_opts_require(o, "search", true, true);
	return rc ? rc : CLI_CONTINUE;
}

int cli_search_parse_only(int argc, char **argv)
{
	search_ctx *ctx = malloc(sizeof *ctx);
	if (!ctx)
		return EXIT_INTERNAL;
	cli_opts o;
	int rc = search_parse(argc, argv, ctx, &o);
	free(ctx);
	return rc == CLI_CONTINUE ? EXIT_ANSWERED : rc;
}

/* The searches' progress (pp_search_hooks, on the search_ctx): a first line
 * per GPU count, the line redrawn after each step, a note for a count
 * without a plan. */
static void show_start(void *vctx, long long gpus, const pp_search *s)
{
	search_ctx *c = vctx;
	pp_search_stats st0;
	pp_search_get_stats(s, &st0);
	cli_progress_start(&c->pr, "search", c->quiet,
	                   "%lld GPUs: %lld sub-spaces (tp, tp2, pp, cp, pipeline split) to search "
	                   "on %d threads",
	                   gpus, st0.subspaces, c->opts.threads);
}

/* The line redrawn: sub-spaces, plans evaluated and their rate, the best so
 * far (cli_progress adds the time and the ETA); erased when `last`. */
static void show_step(void *vctx, const pp_search *s, bool last)
{
	search_ctx *c = vctx;
	if (c->pr.on) {
		pp_search_stats st;
		pp_search_get_stats(s, &st);
		char best[48] = "none fits yet";
		if (st.best_s > 0)
			snprintf(best, sizeof best, "best %.3f s", st.best_s);
		double t = cli_progress_elapsed(&c->pr);
		cli_progress_show(&c->pr, pp_search_progress(s), last,
		                  "%lld of %lld sub-spaces, %lld plans evaluated (%.0f/s), %s",
		                  st.subspaces_done, st.subspaces, st.evaluated,
		                  t > 0 ? (double)st.evaluated / t : 0.0, best);
	}
	if (last)
		cli_progress_end(&c->pr);
}

static void show_skip(void *vctx, long long gpus, const pp_error *why)
{
	(void)vctx;
	char buf[1024];
	cli_note("search: %lld GPUs: %s", gpus, pp_error_format(why, buf, sizeof buf));
}

/* The report of the answer `a` on `f`, in the format of --format or as the
 * winner's launch flags (--emit): 0, -1 or PP_REPORT_ENOMEM as the report
 * writers return. */
static int write_report(FILE *f, const search_ctx *ctx, const cli_opts *o,
                        const pp_search_answer *a)
{
	const pp_search *s = a->search;
	if (ctx->emit.on && s && pp_search_count(s) > 0) /* the winner, re-ranked if mapped */
		return cli_emit_write(&ctx->emit,
		                      pp_search_plan(s, a->mapping.n ? a->mapping.order[0] : 0), f);
	if (ctx->emit.on && a->asked) {
		cli_message("search: --emit: no GPU count answers the question; nothing to emit");
		return 0;
	}
	pp_inverse_report iv = {&a->q, a->cands, a->n, &a->res, "gpus"};
	bool text = cli_format_is_text(o->format) && !ctx->emit.on;
	pp_result r = {.kind = a->asked ? PP_RESULT_SEARCH_INVERSE : PP_RESULT_SEARCH,
	               .search = s,
	               .mapping = a->mapping.n ? &a->mapping : NULL,
	               .inverse = a->asked ? &iv : NULL,
	               .goodput = text ? a->winner_goodput : NULL};
	return cli_render(o->format, &r, f);
}

/* The flags checked together, before any file is read.  0 or an exit code. */
static int search_check(search_ctx *ctx, const cli_opts *o)
{
	int rc;
	if ((rc = cli_charts_format(&ctx->charts, "search", o)) ||
	    (rc = cli_out_check("search", "--output", ctx->charts.as_report ? NULL : o->output)) ||
	    (rc = cli_charts_check("search", &ctx->charts)))
		return rc;
	if (ctx->gpus_list.count == 0 &&
	    (rc = cli_charts_large_check("search", &ctx->charts, o->gpus)))
		return rc;
	if (ctx->emit.on && !cli_format_is_text(o->format)) {
		cli_message("search: --emit and --%s: give one of them",
		            o->json ? "json" : "format");
		return EXIT_BADINPUT;
	}
	bool inverse = cli_inverse_asked(&ctx->inv);
	if ((rc = cli_format_check("search", o->format,
	                           inverse ? PP_RESULT_SEARCH_INVERSE : PP_RESULT_SEARCH)))
		return rc;
	if (ctx->gpus_list.count > 0 && !inverse) {
		cli_message("search: --gpus takes a list only with --deadline-days or --budget-usd "
		            "(a search per GPU count)");
		return EXIT_BADINPUT;
	}
	if (inverse && (rc = cli_inverse_check("search", &ctx->inv, o->job.train_tokens)))
		return rc;
	if (ctx->inv.goodput && !inverse &&
	    (!cli_format_is_text(o->format) || ctx->emit.on || o->job.train_tokens <= 0)) {
		cli_message(
		    "search: the goodput flags show the winner's goodput in the text report: "
		    "they need --tokens, and not --json or --emit");
		return EXIT_BADINPUT;
	}
	return 0;
}

int cli_search(int argc, char **argv)
{
	search_ctx ctx;
	cli_opts o;
	int rc = search_parse(argc, argv, &ctx, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	pp_model model;
	pp_system sys;
	pp_error err;
	pp_error_clear(&err);
	if ((rc = search_check(&ctx, &o)) ||
	    (ctx.objective &&
	     (rc = space_fail(pp_search_objective_parse(ctx.objective, &ctx.opts.objective, &err),
	                      &err))) ||
	    (rc = cli_opts_inputs(&o, &model, &sys)) ||
	    (rc = space_fail(pp_search_space_check(&ctx.space, &model, &err), &err)) ||
	    (rc = cli_inverse_price("search", &ctx.inv, &sys)))
		return rc;
	ctx.space.base = o.plan; /* flash, overlaps: the plan flags that are not searched */
	const pp_goodput_params *gp = ctx.inv.goodput ? &ctx.inv.gp : NULL;
	pp_search_hooks hooks = {&ctx, show_start, show_step, show_skip};
	pp_search_request rq = {&model,    &sys,    &o.job, &ctx.space,
	                        &ctx.opts, ctx.sim, o.gpus, ctx.gpus_list,
	                        ctx.inv.q, gp,      hooks,  ctx.bandwidth};
	pp_search_answer a;
	pp_status st = pp_search_answer_run(&rq, &a, &err);
	if (st)
		return cli_plan_fail(st, &err, &model);
	const pp_estimate *best =
	    a.search && pp_search_count(a.search) ? pp_search_plan(a.search, 0) : NULL;
	if (a.search)
		rc = cli_charts_emit(&ctx.charts, "search", best, NULL, NULL, a.search, NULL,
		                     &model);
	/* Before a word is written: a winner --emit cannot express. */
	if (!rc && ctx.emit.on && best && best->plan.schedule == PP_SCHED_WSHAPE) {
		cli_message("search: --emit cannot express the winner's --schedule wshape (DHelix "
		            "co-execution has no launch flag in any framework)");
		rc = EXIT_BADINPUT;
	}
	cli_out out;
	if (!rc && !ctx.charts.as_report && !(rc = cli_out_open(&out, o.output)))
		rc = cli_out_close(&out, cli_report_ok(write_report(out.f, &ctx, &o, &a), out.f));
	pp_search_answer_free(&a);
	return rc;
}
