/*
 * paraplan search: every estimate flag is applied or refused, never dropped.
 * A plan flag may be a list (--tp 1,2,4), a range (--pp 4:16) or left out
 * (searched); the job, system, price and the plan flags that are not searched
 * (--flash, overlaps) apply to every plan.  The shared parser hands each
 * estimate flag to take() first (see flag_rules), so a flag search does not
 * know is refused rather than ignored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "options.h"

enum {
	OPT_TOP = CLI_OPT_VERB,
	OPT_THREADS,
	OPT_HEADROOM,
	OPT_EXHAUSTIVE,
	OPT_SIM,
	OPT_EMIT,
	OPT_MTBF,
	OPT_CKPT_GBPS,
	OPT_RESTART,
	OPT_CKPT_ASYNC,
	OPT_TIME_LIMIT,
	OPT_MAX_PLANS,
	OPT_HTML,
	OPT_SVG,
	OPT_QUIET,
	OPT_DEADLINE,
	OPT_BUDGET,
	OPT_LARGE
};

static const struct option search_opts[] = {
    {"top", required_argument, 0, OPT_TOP},
    {"threads", required_argument, 0, OPT_THREADS},
    {"headroom", required_argument, 0, OPT_HEADROOM},
    {"exhaustive", no_argument, 0, OPT_EXHAUSTIVE},
    {"sim", required_argument, 0, OPT_SIM},
    {"emit", required_argument, 0, OPT_EMIT},
    {"mtbf-gpu-hours", required_argument, 0, OPT_MTBF},
    {"ckpt-write-gbps", required_argument, 0, OPT_CKPT_GBPS},
    {"restart-min", required_argument, 0, OPT_RESTART},
    {"ckpt-async", required_argument, 0, OPT_CKPT_ASYNC},
    {"time-limit", required_argument, 0, OPT_TIME_LIMIT},
    {"max-plans", required_argument, 0, OPT_MAX_PLANS},
    {"html", required_argument, 0, OPT_HTML},
    {"svg", required_argument, 0, OPT_SVG},
    {"quiet", no_argument, 0, OPT_QUIET},
    {"deadline-days", required_argument, 0, OPT_DEADLINE},
    {"budget-usd", required_argument, 0, OPT_BUDGET},
    {"large-output", no_argument, 0, OPT_LARGE},
    {0, 0, 0, 0}};

typedef struct search_ctx {
	pp_search_options opts;
	double headroom;
	bool sim;     /* --sim on: simulate the top K */
	bool emit;    /* --emit F: the winner as launch flags */
	bool goodput; /* a goodput flag: the winner's goodput under failures */
	pp_goodput_params gp;
	pp_launch_format format;
	pp_search_space space;   /* the searched flags go straight here */
	cli_charts charts;       /* --html, --svg */
	bool quiet;              /* --quiet: no progress on a terminal */
	cli_inverse inv;         /* --deadline-days, --budget-usd (goodput: gp above) */
	pp_search_dim gpus_list; /* --gpus as a list or a range (with inv), count 0 if not */
} search_ctx;

static void search_usage(FILE *f)
{
	fprintf(f,
	        "usage: paraplan search --model M --system S --gpus N --gbs B --seq L [options]\n"
	        "\n"
	        "Every 'paraplan estimate' flag, applied or refused (never ignored):\n"
	        "  --tp --tp2 --pp --dp --cp --ep --etp --vp --mbs --zero --summa-nb\n"
	        "                   a value (8), a list (1,2,4,8) or a range (4:16), at most 64\n"
	        "                   values; left out = searched (--tp2: 1 only, 2D TP is opt-in)\n"
	        "  --recompute --schedule --sp --summa --order\n"
	        "                   a list of names (--schedule takes wshape too, DHelix's\n"
	        "                   W shape, searched only when named; --summa on|off: SUMMA or "
	        "shared-weight\n"
	        "                   2D TP for tp2 > 1; --summa on and --summa-nb need --tp2 > 1)\n"
	        "  --flash --tp-overlap --ep-overlap, the job, system, framework and price flags\n"
	        "                   one value, applied to every plan\n"
	        "  --first-stage-layers --last-stage-layers --embedding-as-layer --loss-as-layer\n"
	        "                   one value, the pipeline split of every plan; left out, a pp\n"
	        "                   that does not divide the L layers is tried with uneven\n"
	        "                   splits: middle stages of ceil(L/pp) layers (and floor(L/pp)\n"
	        "                   when L mod pp <= 2), the ends the rest, halved\n"
	        "Options are named in full (no abbreviations); given twice, the last wins.\n"
	        "\n"
	        "  --top K          plans to show (default 10)\n"
	        "  --threads N      worker threads (default: all cores)\n"
	        "  --headroom F     keep this fraction of HBM free (default 0)\n"
	        "  --exhaustive     evaluate every plan (no sub-space skipped)\n"
	        "  --sim on|off     simulate the top K plans event by event and show the\n"
	        "                   simulated iteration next to the closed form (default off)\n"
	        "  --emit F         print the winner as launch flags instead: megatron,\n"
	        "                   nemo or torchtitan (as estimate --emit)\n"
	        "  --from-megatron \"FLAGS\"|@FILE, --from-torchtitan FILE  the model, batch,\n"
	        "                   sequence and precision of a launch; its plan flags that\n"
	        "                   search searches (tp, pp, ...) are searched, the others\n"
	        "                   apply to every plan\n"
	        "  --mtbf-gpu-hours H, --ckpt-write-gbps G, --restart-min M, --ckpt-async on|off\n"
	        "                   with --tokens: the winner's goodput under failures and\n"
	        "                   checkpoints (as estimate; text report only)\n"
	        "  --time-limit S   stop after S seconds (checked between sub-spaces) with\n"
	        "                   the best plans found so far, marked 'stopped early'\n"
	        "  --max-plans N    stop once N plans are evaluated (after the sub-space that\n"
	        "                   reaches N: the same answer with any thread count)\n"
	        "  --html FILE      also write a self-contained HTML report: the Pareto front\n"
	        "                   (time vs memory), the top plans, and the winner's memory,\n"
	        "                   iteration breakdown, simulated iteration and traffic\n"
	        "  --svg DIR        also write the same charts as DIR/pareto.svg, ...\n"
	        "  --large-output   the winner's charts above 65,536 GPUs too (refused\n"
	        "                   there without it: their size grows with the GPUs)\n"
	        "  --deadline-days D  with --tokens: the fewest GPUs whose best plan trains the\n"
	        "                   budget within D days; --gpus may then be a list of counts\n"
	        "                   (8,16,32,64), one search per count\n"
	        "  --budget-usd B   with --tokens and a price: the fastest best plan whose rent\n"
	        "                   is at most B (with --deadline-days: both must hold); the\n"
	        "                   goodput flags make both goodput-aware; says what binds\n"
	        "  --quiet          no progress on stderr (shown only when it is a terminal)\n"
	        "  --json           {\"plans\": [...], \"pareto\": [...], \"stats\": {...}}\n"
	        "  --format NAME    an output format ('paraplan list formats'; default text)\n"
	        "  --output FILE    write there (atomically) instead of standard output\n");
}

static int handle(int code, const char *v, void *vctx)
{
	search_ctx *c = vctx;
	long long x;
	switch (code) {
	case OPT_TOP:
		if (cli_parse_ll("top", v, 1, 10000, &x))
			return EXIT_BADINPUT;
		c->opts.top_k = (int)x;
		return 0;
	case OPT_THREADS:
		if (cli_parse_ll("threads", v, 1, 1024, &x))
			return EXIT_BADINPUT;
		c->opts.threads = (int)x;
		return 0;
	case OPT_HEADROOM: {
		char *end;
		errno = 0;
		double h = strtod(v, &end);
		if (errno || end == v || *end || !(h >= 0 && h < 1)) {
			cli_message(
			    "--headroom: expected a fraction in 0..1 (0.1 keeps 10%% free), got "
			    "'%s'",
			    v);
			return EXIT_BADINPUT;
		}
		c->headroom = h;
		return 0;
	}
	case OPT_EXHAUSTIVE: c->opts.exhaustive = true; return 0;
	case OPT_QUIET: c->quiet = true; return 0;
	case OPT_DEADLINE:
	case OPT_BUDGET:
		return cli_inverse_flag("search", search_opts[code - CLI_OPT_VERB].name, v,
		                        &c->inv);
	case OPT_HTML:
	case OPT_SVG: return cli_charts_flag(&c->charts, "search", code == OPT_SVG, v);
	case OPT_LARGE: c->charts.large = true; return 0;
	case OPT_MTBF:
	case OPT_CKPT_GBPS:
	case OPT_RESTART:
	case OPT_CKPT_ASYNC:
		c->goodput = true;
		return cli_goodput_flag("search", search_opts[code - CLI_OPT_VERB].name, v, &c->gp);
	case OPT_EMIT: {
		pp_error err;
		pp_error_clear(&err);
		pp_status st = pp_launch_format_parse(v, "--emit", &c->format, &err);
		if (st)
			return cli_fail(st, &err);
		c->emit = true;
		return 0;
	}
	case OPT_TIME_LIMIT: {
		char *end;
		errno = 0;
		double t = strtod(v, &end);
		if (errno || end == v || *end || !(t > 0 && t <= 1e9)) {
			cli_message(
			    "--time-limit: expected a number of seconds in (0, 1e9], got '%s'", v);
			return EXIT_BADINPUT;
		}
		c->opts.time_limit_s = t;
		return 0;
	}
	case OPT_MAX_PLANS:
		if (cli_parse_ll("max-plans", v, 1, 1000000000000000LL, &x))
			return EXIT_BADINPUT;
		c->opts.max_plans = x;
		return 0;
	case OPT_SIM:
		if (strcmp(v, "on") == 0 || strcmp(v, "off") == 0) {
			c->sim = strcmp(v, "on") == 0;
			return 0;
		}
		cli_message("search: --sim expects on or off, got '%s'", v);
		return EXIT_BADINPUT;
	}
	return EXIT_BADINPUT;
}

/* "8", "1,2,4" or "4:16" into `d`, each value once (a range keeps every
 * integer; the search keeps those the model allows).  More values than the
 * space holds are refused, never cut. */
static int parse_dim(const char *flag, const char *v, long long lo, long long hi, pp_search_dim *d)
{
	d->count = 0;
	const char *colon = strchr(v, ':');
	if (colon && !strchr(v, ',')) {
		char a[32], b[32];
		size_t la = (size_t)(colon - v);
		if (la == 0 || la >= sizeof a || strlen(colon + 1) >= sizeof b) {
			cli_message("%s: expected a range such as 4:16, got '%s'", flag, v);
			return EXIT_BADINPUT;
		}
		memcpy(a, v, la);
		a[la] = '\0';
		strcpy(b, colon + 1);
		long long x, y;
		if (cli_parse_ll(flag + 2, a, lo, hi, &x) || cli_parse_ll(flag + 2, b, lo, hi, &y))
			return EXIT_BADINPUT;
		if (x > y) {
			cli_message("%s: empty range '%s'", flag, v);
			return EXIT_BADINPUT;
		}
		if (y - x + 1 > PP_SEARCH_MAX_VALUES) {
			cli_message("search: %s %s has %lld values; at most %d (give a list or a "
			            "shorter range)",
			            flag, v, y - x + 1, PP_SEARCH_MAX_VALUES);
			return EXIT_BADINPUT;
		}
		for (long long k = x; k <= y; k++)
			d->values[d->count++] = (int)k;
		return 0;
	}
	char buf[1024];
	if (strlen(v) >= sizeof buf) {
		cli_message("search: %s: list too long (at most %d values)", flag,
		            PP_SEARCH_MAX_VALUES);
		return EXIT_BADINPUT;
	}
	strcpy(buf, v);
	int listed = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long x;
		if (cli_parse_ll(flag + 2, tok, lo, hi, &x))
			return EXIT_BADINPUT;
		bool dup = false;
		for (int i = 0; i < d->count && i < PP_SEARCH_MAX_VALUES; i++)
			dup |= d->values[i] == x;
		if (dup)
			continue;
		if (listed < PP_SEARCH_MAX_VALUES)
			d->values[d->count++] = (int)x;
		listed++;
	}
	if (listed > PP_SEARCH_MAX_VALUES) {
		cli_message("search: %s: the list has %d different values; at most %d", flag,
		            listed, PP_SEARCH_MAX_VALUES);
		return EXIT_BADINPUT;
	}
	if (d->count == 0) {
		cli_message("%s: expected a value, a list or a range, got '%s'", flag, v);
		return EXIT_BADINPUT;
	}
	return 0;
}

static const char *const onoff_names[] = {"off", "on"};

/* A list of names into a bit mask (bit i = names[i]); an on/off list also
 * takes estimate's spellings true/false and 1/0. */
static int parse_names(const char *flag, const char *v, const char *const *names, int n,
                       unsigned *mask)
{
	char buf[256];
	if (strlen(v) >= sizeof buf) {
		cli_message("%s: list too long", flag);
		return EXIT_BADINPUT;
	}
	strcpy(buf, v);
	*mask = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const char *t = tok;
		if (names == onoff_names)
			t = strcmp(t, "true") == 0 || strcmp(t, "1") == 0    ? "on"
			    : strcmp(t, "false") == 0 || strcmp(t, "0") == 0 ? "off"
			                                                     : t;
		int k = -1;
		for (int i = 0; i < n; i++)
			if (strcmp(t, names[i]) == 0)
				k = i;
		if (k < 0) {
			char list[128] = "";
			for (int i = 0; i < n; i++) {
				strncat(list, names[i], sizeof list - strlen(list) - 1);
				if (i + 1 < n)
					strncat(list, ", ", sizeof list - strlen(list) - 1);
			}
			cli_message("%s: expected a list of %s, got '%s'", flag, list, tok);
			return EXIT_BADINPUT;
		}
		*mask |= 1u << k;
	}
	if (!*mask) {
		cli_message("%s: expected at least one value", flag);
		return EXIT_BADINPUT;
	}
	return 0;
}

static int parse_orders(const char *v, pp_search_space *sp)
{
	char buf[PP_SEARCH_MAX_ORDERS * PP_ORDER_MAX];
	if (strlen(v) >= sizeof buf) {
		cli_message("--order: list too long (at most %d orders)", PP_SEARCH_MAX_ORDERS);
		return EXIT_BADINPUT;
	}
	strcpy(buf, v);
	char *save = NULL;
	sp->norders = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (sp->norders == PP_SEARCH_MAX_ORDERS || strlen(t) >= PP_ORDER_MAX) {
			cli_message("--order: at most %d orders of at most %d characters",
			            PP_SEARCH_MAX_ORDERS, PP_ORDER_MAX - 1);
			return EXIT_BADINPUT;
		}
		strcpy(sp->orders[sp->norders++], t);
	}
	if (sp->norders == 0) {
		cli_message("--order: expected at least one order");
		return EXIT_BADINPUT;
	}
	return 0;
}

/*
 * What search does with each estimate flag.  A shared flag missing here is
 * refused: a flag added to the estimate set is never silently ignored by
 * search (tests/search_flags.sh checks every one).
 */
enum rule {
	SEARCHED_DIM,   /* a value, a list or a range of one searched dimension */
	SEARCHED_NAMES, /* a list of names (a mask of the space) */
	EVERY_PLAN      /* the job, system, price, unsearched plan flags, output */
};

static const struct flag_rule {
	const char *flag;
	enum rule rule;
} flag_rules[] = {{"tp", SEARCHED_DIM},
                  {"tp2", SEARCHED_DIM},
                  {"pp", SEARCHED_DIM},
                  {"dp", SEARCHED_DIM},
                  {"cp", SEARCHED_DIM},
                  {"ep", SEARCHED_DIM},
                  {"etp", SEARCHED_DIM},
                  {"vp", SEARCHED_DIM},
                  {"mbs", SEARCHED_DIM},
                  {"zero", SEARCHED_DIM},
                  {"summa-nb", SEARCHED_DIM},
                  {"sp", SEARCHED_NAMES},
                  {"summa", SEARCHED_NAMES},
                  {"recompute", SEARCHED_NAMES},
                  {"schedule", SEARCHED_NAMES},
                  {"order", SEARCHED_NAMES},
                  {"model", EVERY_PLAN},
                  {"system", EVERY_PLAN},
                  {"framework", EVERY_PLAN},
                  {"gpu-profile", EVERY_PLAN},
                  {"usd-per-gpu-hour", EVERY_PLAN},
                  {"gpus", EVERY_PLAN},
                  {"gbs", EVERY_PLAN},
                  {"seq", EVERY_PLAN},
                  {"tokens", EVERY_PLAN},
                  {"precision", EVERY_PLAN},
                  {"fp8-recipe", EVERY_PLAN},
                  {"grad-dtype", EVERY_PLAN},
                  {"optimizer", EVERY_PLAN},
                  {"flash", EVERY_PLAN},
                  {"tp-overlap", EVERY_PLAN},
                  {"ep-overlap", EVERY_PLAN},
                  {"overlap", EVERY_PLAN},
                  {"json", EVERY_PLAN},
                  {"format", EVERY_PLAN},
                  {"output", EVERY_PLAN},
                  {"first-stage-layers", EVERY_PLAN},
                  {"last-stage-layers", EVERY_PLAN},
                  {"embedding-as-layer", EVERY_PLAN},
                  {"loss-as-layer", EVERY_PLAN},
                  {"from-megatron", EVERY_PLAN},
                  {"from-torchtitan", EVERY_PLAN}};

/* An estimate flag: into the space (searched), to the shared parser (every
 * plan), or refused. */
static int take(const char *flag, const char *v, void *vctx)
{
	search_ctx *c = vctx;
	pp_search_space *sp = &c->space;
	const struct flag_rule *r = NULL;
	for (size_t i = 0; i < sizeof flag_rules / sizeof *flag_rules; i++)
		if (strcmp(flag, flag_rules[i].flag) == 0)
			r = &flag_rules[i];
	if (!r) {
		cli_message("search: --%s is not applied by search; leave it out (see 'paraplan "
		            "search --help')",
		            flag);
		return EXIT_BADINPUT;
	}
	if (strcmp(flag, "gpus") == 0) { /* a list: a search per count */
		c->gpus_list.count = 0;
		if (!strchr(v, ','))
			return CLI_CONTINUE;
		return parse_dim("--gpus", v, 1, 10000000, &c->gpus_list);
	}
	if (r->rule == EVERY_PLAN)
		return CLI_CONTINUE;
	char f[64];
	snprintf(f, sizeof f, "--%s", flag);
	const struct {
		const char *flag;
		pp_search_dim *d;
		long long lo, hi;
	} dims[] = {{"tp", &sp->tp, 1, 1 << 20},
	            {"tp2", &sp->tp2, 1, 64}, /* the search's bound on n_2 */
	            {"pp", &sp->pp, 1, 1 << 20},
	            {"dp", &sp->dp, 1, 10000000},
	            {"cp", &sp->cp, 1, 1 << 20},
	            {"ep", &sp->ep, 1, 1 << 20},
	            {"etp", &sp->etp, 1, 1 << 20},
	            {"vp", &sp->vp, 1, 1 << 20},
	            {"mbs", &sp->mbs, 1, 1 << 20},
	            {"zero", &sp->zero, 0, 3},
	            {"summa-nb", &sp->summa_nb, 1, 1 << 20}};
	for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
		if (strcmp(flag, dims[i].flag) == 0)
			return parse_dim(f, v, dims[i].lo, dims[i].hi, dims[i].d);
	static const char *const rc_names[] = {"none", "selective", "full"};
	if (strcmp(flag, "sp") == 0)
		return parse_names(f, v, onoff_names, 2, &sp->sp_mask);
	if (strcmp(flag, "summa") == 0) /* bit 0: 2D TP with shared weights, bit 1: SUMMA */
		return parse_names(f, v, onoff_names, 2, &sp->summa_mask);
	if (strcmp(flag, "recompute") == 0)
		return parse_names(f, v, rc_names, 3, &sp->recompute_mask);
	if (strcmp(flag, "schedule") == 0) {
		const char *sched_names[PP_SCHED_MAX]; /* the registry's, by id */
		for (int i = 0; i < pp_schedule_type_n; i++)
			sched_names[i] = pp_schedule_types[i]->name;
		return parse_names(f, v, sched_names, pp_schedule_type_n, &sp->schedule_mask);
	}
	if (strcmp(flag, "order") == 0)
		return parse_orders(v, sp);
	return EXIT_INTERNAL; /* a SEARCHED rule above with no parser here */
}

static bool dim_has(const pp_search_dim *d, int v)
{
	for (int i = 0; i < d->count; i++)
		if (d->values[i] == v)
			return true;
	return false;
}

/* Flags that would have no effect on this space: refused, with the reason. */
static int check_space(const pp_search_space *sp, const pp_model *m)
{
	bool tp2d = false; /* some tp2 > 1 in the space (2D TP is opt-in) */
	for (int i = 0; i < sp->tp2.count; i++)
		tp2d |= sp->tp2.values[i] > 1;
	if (sp->summa_mask == 2u && !tp2d) {
		cli_message("search: --summa on needs --tp2 values above 1 (SUMMA runs on the tp "
		            "x tp2 grid; 2D TP is searched only with --tp2)");
		return EXIT_BADINPUT;
	}
	if (sp->summa_nb.count > 0 && (!tp2d || sp->summa_mask == 1u)) {
		cli_message("search: --summa-nb sets the panels of SUMMA plans: it needs --tp2 "
		            "values above 1 and not --summa off");
		return EXIT_BADINPUT;
	}
	if (m->moe.num_experts == 0) {
		if (sp->ep.count > 0 && !dim_has(&sp->ep, 1)) {
			cli_message("search: --ep: %s is dense; ep must be 1", m->name);
			return EXIT_BADINPUT;
		}
		if (sp->etp.count > 0) {
			cli_message("search: --etp: %s is dense (etp is tp); leave --etp out",
			            m->name);
			return EXIT_BADINPUT;
		}
	}
	return 0;
}

/* The search's line of progress: sub-spaces, plans evaluated and their rate,
 * the best so far (cli_progress adds the time and the ETA). */
static void progress_show(cli_progress *p, const pp_search *s, bool force)
{
	if (!p->on)
		return;
	pp_search_stats st;
	pp_search_get_stats(s, &st);
	char best[48] = "none fits yet";
	if (st.best_s > 0)
		snprintf(best, sizeof best, "best %.3f s", st.best_s);
	double t = cli_progress_elapsed(p);
	cli_progress_show(p, pp_search_progress(s), force,
	                  "%lld of %lld sub-spaces, %lld plans evaluated (%.0f/s), %s",
	                  st.subspaces_done, st.subspaces, st.evaluated,
	                  t > 0 ? (double)st.evaluated / t : 0.0, best);
}

/* The options into `ctx` and `o`, checked for form: CLI_CONTINUE or an exit
 * code.  Reads no file. */
static int search_parse(int argc, char **argv, search_ctx *ctx, cli_opts *o)
{
	pp_search_options_init(&ctx->opts);
	ctx->headroom = 0;
	ctx->sim = false;
	ctx->emit = false;
	ctx->goodput = false;
	pp_goodput_params_init(&ctx->gp);
	ctx->format = PP_LAUNCH_MEGATRON;
	memset(&ctx->charts, 0, sizeof ctx->charts);
	ctx->quiet = false;
	memset(&ctx->inv, 0, sizeof ctx->inv);
	memset(&ctx->gpus_list, 0, sizeof ctx->gpus_list);
	pp_search_space_init(&ctx->space);
	const cli_verb verb = {"search", search_usage, search_opts, handle, ctx, take};
	int rc = cli_opts_parse(argc, argv, &verb, o);
	if (rc != CLI_CONTINUE)
		return rc;
	if (ctx->gpus_list.count > 0)
		o->gpus = ctx->gpus_list.values[0];
	if ((rc = cli_opts_require(o, "search", true, true)))
		return rc;
	return CLI_CONTINUE;
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

/* One search at `gpus` GPUs, run to the end with progress: *out, or an exit
 * code after one message.  With `soft`, a GPU count that has no plan space
 * (PP_EINPUT) is a note and *out NULL: a candidate without a plan. */
static int run_one(const search_ctx *ctx, const cli_opts *o, const pp_model *model,
                   const pp_system *sys, long long gpus, bool soft, pp_search **out)
{
	*out = NULL;
	pp_search_space space = ctx->space;
	space.base = o->plan; /* flash, overlaps: the plan flags that are not searched */
	space.headroom_fraction = ctx->headroom;
	pp_search *s;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_search_new(model, sys, &o->job, gpus, &space, &ctx->opts, &s, &err);
	if (st == PP_EINPUT && soft) {
		char buf[1024];
		cli_note("search: %lld GPUs: %s", gpus, pp_error_format(&err, buf, sizeof buf));
		return 0;
	}
	if (st)
		return cli_plan_fail(st, &err, model);
	cli_progress pr;
	pp_search_stats st0;
	pp_search_get_stats(s, &st0);
	cli_progress_start(&pr, "search", ctx->quiet,
	                   "%lld GPUs: %lld sub-spaces (tp, tp2, pp, cp, pipeline split) to search "
	                   "on %d threads",
	                   gpus, st0.subspaces, ctx->opts.threads);
	while (!pp_search_done(s) && !st) {
		st = pp_search_iterate(s, &err);
		progress_show(&pr, s, false);
	}
	progress_show(&pr, s, true);
	cli_progress_end(&pr);
	if (!st && ctx->sim)
		st = pp_search_simulate(s, &err);
	if (st) {
		pp_search_free(s);
		return cli_fail(st, &err);
	}
	*out = s;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/*
 * --deadline-days / --budget-usd: a search per GPU count (ascending; with a
 * deadline it stops at the first count whose winner meets every constraint:
 * the fewest GPUs), each winner a candidate (goodput-aware days with a
 * goodput flag).  *picked: the answer's search (or NULL), the others freed.
 * 0 or an exit code.
 */
static int inverse_run(search_ctx *ctx, const cli_opts *o, const pp_model *model,
                       const pp_system *sys, pp_inverse_candidate *c, size_t *n,
                       pp_inverse_query *q, pp_inverse_result *res, pp_search **picked)
{
	pp_search_dim counts = ctx->gpus_list;
	if (counts.count == 0) {
		counts.count = 1;
		counts.values[0] = (int)o->gpus;
	}
	qsort(counts.values, (size_t)counts.count, sizeof counts.values[0], cmp_int);
	pp_search *all[PP_SEARCH_MAX_VALUES] = {0};
	*q = ctx->inv.q;
	q->train_tokens = o->job.train_tokens;
	q->goodput = ctx->goodput;
	*n = 0;
	*picked = NULL;
	int rc = 0;
	for (int k = 0; k < counts.count && !rc; k++) {
		pp_search *s;
		if ((rc = run_one(ctx, o, model, sys, counts.values[k], counts.count > 1, &s)))
			break;
		pp_inverse_candidate *x = &c[(*n)++];
		memset(x, 0, sizeof *x);
		x->value = x->gpus = counts.values[k];
		all[k] = s;
		if (!s || pp_search_count(s) == 0)
			continue;
		pp_estimate *w = malloc(sizeof *w);
		if (!w) {
			cli_message("out of memory");
			rc = EXIT_INTERNAL;
			break;
		}
		*w = *pp_search_plan(s, 0);
		pp_error err;
		pp_error_clear(&err);
		x->ok = x->fits = true;
		x->plan = w->plan;
		x->days = w->train_days;
		x->usd = w->cost_usd;
		if (ctx->goodput) {
			pp_status st = pp_estimate_goodput(w, &ctx->gp, &err);
			if (st) {
				free(w);
				rc = cli_fail(st, &err);
				break;
			}
			x->days = w->goodput.effective_days;
			x->usd = w->goodput.cost_usd;
		}
		free(w);
		if (q->deadline_days > 0 && pp_inverse_meets(q, x))
			break; /* ascending: the fewest GPUs that meet it */
	}
	if (!rc) {
		pp_inverse_pick(q, c, *n, res);
		if (res->pick >= 0) {
			*picked = all[res->pick];
			all[res->pick] = NULL;
		}
	}
	for (int k = 0; k < counts.count; k++)
		pp_search_free(all[k]);
	return rc;
}

int cli_search(int argc, char **argv)
{
	search_ctx ctx;
	cli_opts o;
	int rc = search_parse(argc, argv, &ctx, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc = cli_charts_format(&ctx.charts, "search", &o)) ||
	    (rc = cli_out_check("search", "--output", ctx.charts.as_report ? NULL : o.output)) ||
	    (rc = cli_charts_check("search", &ctx.charts)))
		return rc;
	if (cli_charts_wanted(&ctx.charts) && ctx.gpus_list.count == 0 &&
	    (rc = cli_large_output_check("search", ctx.charts.html ? "--html" : "--svg", o.gpus,
	                                 ctx.charts.large)))
		return rc;
	if (ctx.emit && !cli_format_is_text(o.format)) {
		cli_message("search: --emit and --%s: give one of them",
		            o.json ? "json" : "format");
		return EXIT_BADINPUT;
	}
	bool inverse = cli_inverse_asked(&ctx.inv);
	if ((rc = cli_format_check("search", o.format,
	                           inverse ? PP_RESULT_SEARCH_INVERSE : PP_RESULT_SEARCH)))
		return rc;
	if (ctx.gpus_list.count > 0 && !inverse) {
		cli_message("search: --gpus takes a list only with --deadline-days or --budget-usd "
		            "(a search per GPU count)");
		return EXIT_BADINPUT;
	}
	if (inverse && (rc = cli_inverse_check("search", &ctx.inv, o.job.train_tokens)))
		return rc;
	if (ctx.goodput && !inverse &&
	    (!cli_format_is_text(o.format) || ctx.emit || o.job.train_tokens <= 0)) {
		cli_message(
		    "search: the goodput flags show the winner's goodput in the text report: "
		    "they need --tokens, and not --json or --emit");
		return EXIT_BADINPUT;
	}
	pp_model model;
	pp_system sys;
	if ((rc = cli_opts_inputs(&o, &model, &sys)) || (rc = check_space(&ctx.space, &model)) ||
	    (rc = cli_inverse_price("search", &ctx.inv, &sys)))
		return rc;
	pp_search *s = NULL;
	pp_inverse_candidate *cands = NULL;
	size_t ncands = 0;
	pp_inverse_query q;
	pp_inverse_result res;
	if (inverse) {
		cands = calloc(PP_SEARCH_MAX_VALUES, sizeof *cands);
		if (!cands) {
			cli_message("out of memory");
			return EXIT_INTERNAL;
		}
		rc = inverse_run(&ctx, &o, &model, &sys, cands, &ncands, &q, &res, &s);
	} else {
		rc = run_one(&ctx, &o, &model, &sys, o.gpus, false, &s);
	}
	if (rc) {
		free(cands);
		pp_search_free(s);
		return rc;
	}
	if (s && (rc = cli_charts_emit(&ctx.charts, "search",
	                               pp_search_count(s) ? pp_search_plan(s, 0) : NULL, NULL, NULL,
	                               s, NULL, &model))) {
		free(cands);
		pp_search_free(s);
		return rc;
	}
	/* Before a word is written: the winner's goodput (refused when the run
	 * never finishes), and a winner --emit cannot express. */
	bool want_w =
	    ctx.goodput && cli_format_is_text(o.format) && !ctx.emit && s && pp_search_count(s) > 0;
	pp_estimate *w = want_w ? malloc(sizeof *w) : NULL;
	if (want_w && !w) {
		cli_message("out of memory");
		rc = EXIT_INTERNAL;
	} else if (w) { /* on a copy (the search's plans are read-only) */
		pp_error err;
		pp_error_clear(&err);
		*w = *pp_search_plan(s, 0);
		pp_status st = pp_estimate_goodput(w, &ctx.gp, &err);
		if (st)
			rc = cli_plan_fail(st, &err, &w->model);
	}
	if (!rc && ctx.emit && s && pp_search_count(s) > 0 &&
	    pp_search_plan(s, 0)->plan.schedule == PP_SCHED_WSHAPE) {
		cli_message("search: --emit cannot express the winner's --schedule wshape (DHelix "
		            "co-execution has no launch flag in any framework)");
		rc = EXIT_BADINPUT;
	}
	cli_out out;
	if (rc || ctx.charts.as_report || (rc = cli_out_open(&out, o.output))) {
		free(w);
		free(cands);
		pp_search_free(s);
		return rc;
	}
	int wr = 0;
	pp_inverse_report iv = {&q, cands, ncands, &res, "gpus"};
	pp_result r = {.kind = inverse ? PP_RESULT_SEARCH_INVERSE : PP_RESULT_SEARCH,
	               .search = s,
	               .inverse = inverse ? &iv : NULL,
	               .goodput = w};
	if (ctx.emit && s && pp_search_count(s) > 0) {
		char notes[PP_LAUNCH_NOTES_MAX];
		wr = pp_launch_emit(pp_search_plan(s, 0), ctx.format, out.f, notes, sizeof notes);
		for (char *line = notes, *nl; *line && (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			cli_note("--emit: %s", line);
		}
	} else if (ctx.emit && inverse) {
		cli_message("search: --emit: no GPU count answers the question; nothing to emit");
	} else {
		wr = cli_render(o.format, &r, out.f);
	}
	free(w);
	free(cands);
	pp_search_free(s);
	return cli_out_close(&out, cli_report_ok(wr, out.f));
}
