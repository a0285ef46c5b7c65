/*
 * paraplan search: every estimate flag; a plan flag may be a list (--tp 1,2,4),
 * a range (--pp 4:16) or left out (searched).  The searchable plan flags are
 * taken out of argv here, the rest go through the shared option parser.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

enum { OPT_TOP = CLI_OPT_VERB, OPT_THREADS, OPT_HEADROOM, OPT_EXHAUSTIVE };

static const struct option search_opts[] = {{"top", required_argument, 0, OPT_TOP},
                                            {"threads", required_argument, 0, OPT_THREADS},
                                            {"headroom", required_argument, 0, OPT_HEADROOM},
                                            {"exhaustive", no_argument, 0, OPT_EXHAUSTIVE},
                                            {0, 0, 0, 0}};

typedef struct search_ctx {
	pp_search_options opts;
	double headroom;
} search_ctx;

static void search_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: paraplan search --model M --system S --gpus N --gbs B --seq L [options]\n"
	    "\n"
	    "Every 'paraplan estimate' flag.  The plan flags --tp --pp --dp --cp --ep --etp\n"
	    "--vp --mbs --zero take a value (8), a list (1,2,4,8) or a range (4:16); --recompute,\n"
	    "--schedule, --sp and --order take a list of names.  A plan flag left out is\n"
	    "searched.\n"
	    "--first-stage-layers N, --last-stage-layers N, --embedding-as-layer on and\n"
	    "--loss-as-layer on fix the pipeline split; without them a pp that does not\n"
	    "divide the L layers is tried with uneven splits: the middle stages hold\n"
	    "ceil(L/pp) layers (and, when L mod pp <= 2, also floor(L/pp)), the first and\n"
	    "last stage the rest, halved (both ways round when it is odd).\n"
	    "\n"
	    "  --top K          plans to show (default 10)\n"
	    "  --threads N      worker threads (default: all cores)\n"
	    "  --headroom F     keep this fraction of HBM free (default 0)\n"
	    "  --exhaustive     evaluate every plan (no sub-space skipped)\n"
	    "  --json           {\"plans\": [...], \"pareto\": [...], \"stats\": {...}}\n");
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
	}
	return EXIT_BADINPUT;
}

/* "8", "1,2,4" or "4:16" into `d` (a range keeps every integer; the search
 * keeps those the model allows). */
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
		for (long long k = x; k <= y; k++) {
			if (d->count == PP_SEARCH_MAX_VALUES) {
				/* Keep the divisor-friendly values of a wide range. */
				break;
			}
			d->values[d->count++] = (int)k;
		}
		return 0;
	}
	char buf[512];
	if (strlen(v) >= sizeof buf) {
		cli_message("%s: list too long", flag);
		return EXIT_BADINPUT;
	}
	strcpy(buf, v);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long x;
		if (cli_parse_ll(flag + 2, tok, lo, hi, &x))
			return EXIT_BADINPUT;
		if (d->count == PP_SEARCH_MAX_VALUES) {
			cli_message("%s: at most %d values", flag, PP_SEARCH_MAX_VALUES);
			return EXIT_BADINPUT;
		}
		d->values[d->count++] = (int)x;
	}
	if (d->count == 0) {
		cli_message("%s: expected a value, a list or a range, got '%s'", flag, v);
		return EXIT_BADINPUT;
	}
	return 0;
}

/* A list of names into a bit mask (bit i = names[i]). */
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
		int k = -1;
		for (int i = 0; i < n; i++)
			if (strcmp(tok, names[i]) == 0)
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

/* Take the searchable plan flags out of argv (both "--tp 8" and "--tp=8"). */
static int take_plan_flags(int *argc, char **argv, pp_search_space *sp)
{
	static const char *const rc_names[] = {"none", "selective", "full"};
	static const char *const sched_names[] = {"1f1b", "gpipe", "interleaved", "zb"};
	static const char *const sp_names[] = {"off", "on"};
	int out = 1;
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		static const char *const flags[] = {
		    "--tp",  "--pp",   "--dp", "--cp",        "--ep",       "--etp",  "--vp",
		    "--mbs", "--zero", "--sp", "--recompute", "--schedule", "--order"};
		int f = -1;
		const char *val = NULL;
		for (int k = 0; k < (int)(sizeof flags / sizeof *flags); k++) {
			size_t l = strlen(flags[k]);
			if (strncmp(a, flags[k], l) == 0 && (a[l] == '\0' || a[l] == '=')) {
				f = k;
				val = a[l] == '=' ? a + l + 1 : NULL;
			}
		}
		if (f < 0) {
			argv[out++] = argv[i];
			continue;
		}
		if (!val) {
			if (i + 1 >= *argc) {
				cli_message("%s: missing value", a);
				return EXIT_BADINPUT;
			}
			val = argv[++i];
		}
		int rc = 0;
		pp_search_dim *dims[] = {&sp->tp,  &sp->pp, &sp->dp,  &sp->cp,  &sp->ep,
		                         &sp->etp, &sp->vp, &sp->mbs, &sp->zero};
		if (f <= 8)
			rc =
			    parse_dim(flags[f], val, f == 8 ? 0 : 1, f == 8 ? 3 : 1 << 20, dims[f]);
		else if (f == 9)
			rc = parse_names("--sp", val, sp_names, 2, &sp->sp_mask);
		else if (f == 10)
			rc = parse_names("--recompute", val, rc_names, 3, &sp->recompute_mask);
		else if (f == 11)
			rc = parse_names("--schedule", val, sched_names, 4, &sp->schedule_mask);
		else {
			char buf[PP_SEARCH_MAX_ORDERS * PP_ORDER_MAX];
			if (strlen(val) >= sizeof buf) {
				cli_message("--order: list too long");
				return EXIT_BADINPUT;
			}
			strcpy(buf, val);
			char *save = NULL;
			sp->norders = 0;
			for (char *t = strtok_r(buf, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				if (sp->norders == PP_SEARCH_MAX_ORDERS ||
				    strlen(t) >= PP_ORDER_MAX) {
					cli_message(
					    "--order: at most %d orders of at most %d characters",
					    PP_SEARCH_MAX_ORDERS, PP_ORDER_MAX - 1);
					return EXIT_BADINPUT;
				}
				strcpy(sp->orders[sp->norders++], t);
			}
		}
		if (rc)
			return rc;
	}
	*argc = out;
	argv[out] = NULL;
	return 0;
}

int cli_search(int argc, char **argv)
{
	search_ctx ctx;
	pp_search_options_init(&ctx.opts);
	ctx.headroom = 0;
	pp_search_space space;
	pp_search_space_init(&space);
	char **args = malloc(sizeof *args * (size_t)(argc + 1));
	if (!args) {
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	memcpy(args, argv, sizeof *args * (size_t)argc);
	args[argc] = NULL;
	int n = argc;
	int rc = take_plan_flags(&n, args, &space);
	const cli_verb verb = {"search", search_usage, search_opts, handle, &ctx};
	cli_opts o;
	if (!rc)
		rc = cli_opts_parse(n, args, &verb, &o);
	free(args);
	if (rc == EXIT_BADINPUT || rc == EXIT_INTERNAL || rc == EXIT_ANSWERED)
		return rc;
	if ((rc = cli_opts_require(&o, "search", true, true)))
		return rc;
	pp_model model;
	pp_system sys;
	if ((rc = cli_opts_inputs(&o, &model, &sys)))
		return rc;
	space.base = o.plan; /* flash, overlaps: the flags that are not searched */
	space.headroom_fraction = ctx.headroom;
	pp_search *s;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_search_new(&model, &sys, &o.job, o.gpus, &space, &ctx.opts, &s, &err);
	if (st)
		return cli_plan_fail(st, &err, &model);
	while (!pp_search_done(s) && !st)
		st = pp_search_iterate(s, &err);
	if (st) {
		pp_search_free(s);
		return cli_fail(st, &err);
	}
	cli_out out;
	if ((rc = cli_out_open(&out, o.output))) {
		pp_search_free(s);
		return rc;
	}
	int wr = o.json ? pp_report_search_json(s, out.f) : pp_report_search_text(s, out.f);
	pp_search_free(s);
	return cli_out_close(&out, wr == 0);
}
