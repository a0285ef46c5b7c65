/*
 * The run-describing flags shared by estimate, sweep and search: model,
 * system, job, plan, price and output.  Every flag value is checked here for form (a
 * number is a number); the library checks meaning (tp divides heads, ...).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

enum {
	OPT_MODEL = 256,
	OPT_SYSTEM,
	OPT_GPUS,
	OPT_GBS,
	OPT_SEQ,
	OPT_TOKENS,
	OPT_PRECISION,
	OPT_FP8_RECIPE,
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
	OPT_GPU_PROFILE,
	OPT_PRICE,
	OPT_TP2,
	OPT_SUMMA,
	OPT_SUMMA_NB,
	OPT_FSL,     /* --first-stage-layers */
	OPT_LSL,     /* --last-stage-layers */
	OPT_EAL,     /* --embedding-as-layer */
	OPT_LAL,     /* --loss-as-layer */
	OPT_SI,      /* --si: DHelix strand interleaving (schedule wshape) */
	OPT_OVERLAP, /* --overlap: DHelix overlap table */
	OPT_MEG,     /* --from-megatron */
	OPT_TT,      /* --from-torchtitan */
	OPT_FORMAT,  /* --format: an output format of report's table */
	OPT_HELP
};

static const struct option common_opts[] = {{"model", required_argument, 0, OPT_MODEL},
                                            {"system", required_argument, 0, OPT_SYSTEM},
                                            {"gpus", required_argument, 0, OPT_GPUS},
                                            {"gbs", required_argument, 0, OPT_GBS},
                                            {"seq", required_argument, 0, OPT_SEQ},
                                            {"tokens", required_argument, 0, OPT_TOKENS},
                                            {"precision", required_argument, 0, OPT_PRECISION},
                                            {"fp8-recipe", required_argument, 0, OPT_FP8_RECIPE},
                                            {"tp", required_argument, 0, OPT_TP},
                                            {"tp2", required_argument, 0, OPT_TP2},
                                            {"summa", required_argument, 0, OPT_SUMMA},
                                            {"summa-nb", required_argument, 0, OPT_SUMMA_NB},
                                            {"pp", required_argument, 0, OPT_PP},
                                            {"first-stage-layers", required_argument, 0, OPT_FSL},
                                            {"last-stage-layers", required_argument, 0, OPT_LSL},
                                            {"embedding-as-layer", required_argument, 0, OPT_EAL},
                                            {"loss-as-layer", required_argument, 0, OPT_LAL},
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
                                            {"si", required_argument, 0, OPT_SI},
                                            {"overlap", required_argument, 0, OPT_OVERLAP},
                                            {"order", required_argument, 0, OPT_ORDER},
                                            {"grad-dtype", required_argument, 0, OPT_GRAD},
                                            {"optimizer", required_argument, 0, OPT_OPTIMIZER},
                                            {"flash", required_argument, 0, OPT_FLASH},
                                            {"tp-overlap", required_argument, 0, OPT_TP_OVERLAP},
                                            {"ep-overlap", required_argument, 0, OPT_EP_OVERLAP},
                                            {"framework", required_argument, 0, OPT_FRAMEWORK},
                                            {"gpu-profile", required_argument, 0, OPT_GPU_PROFILE},
                                            {"usd-per-gpu-hour", required_argument, 0, OPT_PRICE},
                                            {"from-megatron", required_argument, 0, OPT_MEG},
                                            {"from-torchtitan", required_argument, 0, OPT_TT},
                                            {"output", required_argument, 0, OPT_OUTPUT},
                                            {"json", no_argument, 0, OPT_JSON},
                                            {"format", required_argument, 0, OPT_FORMAT},
                                            {"help", no_argument, 0, OPT_HELP},
                                            {0, 0, 0, 0}};

#define NCOMMON (sizeof common_opts / sizeof common_opts[0] - 1)

const char *cli_opt_name(const cli_verb *verb, int code)
{
	for (const struct option *o = common_opts; o->name; o++)
		if (o->val == code)
			return o->name;
	for (const struct option *o = verb && verb->opts ? verb->opts : common_opts + NCOMMON;
	     o->name; o++)
		if (o->val == code)
			return o->name;
	return "?";
}

/* A whole number in [lo, hi], nothing else on the string. */
int cli_parse_ll(const char *flag, const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end) {
		cli_message("--%s: expected an integer, got '%s'", flag, s);
		return EXIT_BADINPUT;
	}
	if (v < lo || v > hi) {
		cli_message("--%s: expected %lld..%lld, got %lld", flag, lo, hi, v);
		return EXIT_BADINPUT;
	}
	*out = v;
	return 0;
}

static int parse_int(const char *flag, const char *s, long long lo, long long hi, int *out)
{
	long long v;
	int rc = cli_parse_ll(flag, s, lo, hi, &v);
	if (!rc)
		*out = (int)v;
	return rc;
}

/* A count with an optional K/M/B/T suffix ("15T"), or a plain number ("1.5e13"). */
static int parse_count(const char *flag, const char *s, double *out)
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
		            flag, s);
		return EXIT_BADINPUT;
	}
	*out = v;
	return 0;
}

static int parse_onoff(const char *flag, const char *s, bool *out)
{
	if (strcmp(s, "on") == 0 || strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
		*out = true;
	else if (strcmp(s, "off") == 0 || strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
		*out = false;
	else {
		cli_message("--%s: expected on or off, got '%s'", flag, s);
		return EXIT_BADINPUT;
	}
	return 0;
}

/* A price in 0..hi (US dollars). */
int cli_parse_price(const char *flag, const char *s, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0 || signbit(v) || v > hi) {
		/* signbit: "-0" is no price either */
		cli_message("--%s: expected a price in 0..%.10g, got '%s'", flag, hi, s);
		return EXIT_BADINPUT;
	}
	*out = v;
	return 0;
}

/* Library parse errors name a field; on the command line the flag is the field. */
static int flag_fail(const char *flag, pp_status st, pp_error *err)
{
	char f[PP_ERROR_FIELD_MAX];
	snprintf(f, sizeof f, "--%s", flag);
	memcpy(err->field, f, sizeof f);
	err->source[0] = '\0';
	return cli_fail(st, err);
}

/*
 * --from-megatron "FLAGS" or @FILE (a launch script), --from-torchtitan FILE
 * (a job TOML): the framework's view of the job and plan replaces o->job and
 * o->plan (flags given after it still win), its model is kept for when no
 * --model is given; the flags (keys) paraplan does not use are listed on
 * stderr.
 */
static int from_launch(const char *flag, const char *v, cli_opts *o)
{
	pp_launch l;
	pp_error err;
	pp_error_clear(&err);
	pp_status st;
	if (strcmp(flag, "from-torchtitan") == 0)
		st = pp_launch_load_torchtitan(v, &o->job, &o->plan, &l, &err);
	else if (v[0] == '@')
		st = pp_launch_load_megatron(v + 1, &o->job, &o->plan, &l, &err);
	else
		st = pp_launch_from_megatron(v, strlen(v), "--from-megatron", &o->job, &o->plan, &l,
		                             &err);
	if (st)
		return cli_fail(st, &err);
	o->have_gbs |= l.has_gbs;
	o->have_seq |= l.has_seq;
	if (l.gpus > 0)
		o->gpus = l.gpus;
	/* A torchtitan job runs torchtitan's stack unless --framework says otherwise. */
	if (strcmp(flag, "from-torchtitan") == 0 && !o->framework)
		o->framework = "torchtitan";
	if (l.has_model) {
		o->has_flags_model = true;
		o->flags_model = l.model;
	}
	if (l.unused)
		cli_note("--%s: %d %s%s not used: %s", flag, l.unused,
		         flag[5] == 'm' ? "flag" : "key", l.unused == 1 ? "" : "s", l.unused_flags);
	return 0;
}

/* One flag of the shared set. */
static int common_flag(int c, const char *v, cli_opts *o, pp_error *err, pp_status *st)
{
	const char *n = cli_opt_name(NULL, c);
	pp_job *job = &o->job;
	pp_plan *plan = &o->plan;
	switch (c) {
	case OPT_MODEL: o->model_ref = v; return 0;
	case OPT_SYSTEM: o->system_ref = v; return 0;
	case OPT_GPUS: return cli_parse_ll(n, v, 1, 10000000, &o->gpus);
	case OPT_GBS:
		o->have_gbs = true;
		return cli_parse_ll(n, v, 1, 1000000000, &job->global_batch);
	case OPT_SEQ: o->have_seq = true; return parse_int(n, v, 1, 100000000, &job->seq_len);
	case OPT_TOKENS: return parse_count(n, v, &job->train_tokens);
	case OPT_PRECISION: *st = pp_precision_parse(v, "", &job->precision, err); return 0;
	case OPT_FP8_RECIPE:
		o->fp8_recipe_given = true;
		*st = pp_fp8_recipe_parse(v, "", &job->fp8_recipe, err);
		return 0;
	case OPT_GRAD:
		if (strcmp(v, "fp32") == 0)
			job->grad_bytes = 4;
		else if (strcmp(v, "bf16") == 0 || strcmp(v, "fp16") == 0)
			job->grad_bytes = 2;
		else {
			cli_message("--grad-dtype: expected fp32, bf16 or fp16, got '%s'", v);
			return EXIT_BADINPUT;
		}
		return 0;
	case OPT_OPTIMIZER:
		if (strcmp(v, "adam") == 0 || strcmp(v, "adamw") == 0)
			job->optimizer = PP_OPT_ADAM;
		else if (strcmp(v, "sgd") == 0)
			job->optimizer = PP_OPT_SGD;
		else {
			cli_message("--optimizer: expected adam or sgd, got '%s'", v);
			return EXIT_BADINPUT;
		}
		return 0;
	case OPT_TP: return parse_int(n, v, 1, 1 << 20, &plan->tp);
	case OPT_TP2: return parse_int(n, v, 1, 1 << 20, &plan->tp2);
	case OPT_SUMMA: return parse_onoff(n, v, &plan->summa);
	case OPT_SUMMA_NB: return parse_int(n, v, 1, 1 << 20, &plan->summa_nb);
	case OPT_PP: return parse_int(n, v, 1, 1 << 20, &plan->pp);
	case OPT_FSL: return parse_int(n, v, 0, 1 << 20, &plan->first_stage_layers);
	case OPT_LSL: return parse_int(n, v, 0, 1 << 20, &plan->last_stage_layers);
	case OPT_EAL: return parse_onoff(n, v, &plan->embedding_as_layer);
	case OPT_LAL: return parse_onoff(n, v, &plan->loss_as_layer);
	case OPT_DP: return parse_int(n, v, 1, 10000000, &plan->dp);
	case OPT_CP: return parse_int(n, v, 1, 1 << 20, &plan->cp);
	case OPT_EP: return parse_int(n, v, 1, 1 << 20, &plan->ep);
	case OPT_ETP: return parse_int(n, v, 1, 1 << 20, &plan->etp);
	case OPT_VP: return parse_int(n, v, 1, 1 << 20, &plan->vp);
	case OPT_MBS: return parse_int(n, v, 1, 1 << 20, &plan->mbs);
	case OPT_ZERO: return parse_int(n, v, 0, 3, &plan->zero);
	case OPT_RECOMPUTE: *st = pp_recompute_parse(v, "", &plan->recompute, err); return 0;
	case OPT_SP: return parse_onoff(n, v, &plan->sp);
	case OPT_FLASH: return parse_onoff(n, v, &plan->flash);
	case OPT_TP_OVERLAP: return parse_onoff(n, v, &plan->tp_overlap);
	case OPT_EP_OVERLAP: return parse_onoff(n, v, &plan->ep_overlap);
	case OPT_FRAMEWORK: o->framework = v; return 0;
	case OPT_GPU_PROFILE: o->gpu_profile = v; return 0;
	case OPT_OVERLAP: o->overlap = v; return 0;
	case OPT_PRICE: return cli_parse_price(n, v, 1e4, &o->price);
	case OPT_SCHEDULE: *st = pp_schedule_parse(v, "", &plan->schedule, err); return 0;
	case OPT_SI: { /* on: co-execute two micro-batches (without PP too): wshape */
		bool on;
		int rc = parse_onoff(n, v, &on);
		if (!rc && on)
			plan->schedule = PP_SCHED_WSHAPE;
		else if (!rc && pp_schedule_type_of(plan->schedule) &&
		         pp_schedule_type_of(plan->schedule)->si)
			plan->schedule = PP_SCHED_1F1B;
		return rc;
	}
	case OPT_ORDER:
		if (strlen(v) >= sizeof plan->order) {
			cli_message("--order: too long: '%s'", v);
			return EXIT_BADINPUT;
		}
		snprintf(plan->order, sizeof plan->order, "%s", v);
		return 0;
	case OPT_JSON:
		o->json = true;
		o->format = pp_format_find("json");
		return 0;
	case OPT_FORMAT: {
		int rc = cli_format_flag(v, &o->format);
		if (!rc)
			o->json = o->format == pp_format_find("json");
		return rc;
	}
	case OPT_OUTPUT: o->output = v; return 0;
	case OPT_MEG:
	case OPT_TT: return from_launch(n, v, o);
	default: return EXIT_INTERNAL;
	}
}

int cli_format_flag(const char *value, const pp_format_type **out)
{
	const pp_format_type *f = pp_format_find(value);
	if (!f) {
		char names[256] = "";
		size_t off = 0;
		for (size_t i = 0; i < pp_format_count() && off < sizeof names; i++)
			off += (size_t)snprintf(names + off, sizeof names - off, "%s%s",
			                        i ? ", " : "", pp_format_at(i)->name);
		cli_message("--format: unknown format '%s' (one of %s)", value, names);
		return EXIT_BADINPUT;
	}
	*out = f;
	return 0;
}

int cli_format_check(const char *verb, const pp_format_type *f, pp_result_kind kind)
{
	if (!f || pp_format_supports(f, kind))
		return 0;
	char names[256];
	cli_message("%s: --format %s cannot render a %s (formats for it: %s)", verb, f->name,
	            pp_result_kind_name(kind), pp_format_names_for(kind, names, sizeof names));
	return EXIT_BADINPUT;
}

int cli_render(const pp_format_type *f, const pp_result *r, FILE *out)
{
	return pp_format_render(f ? f : pp_format_find("text"), r, out);
}

int cli_render_to(const char *path, const pp_format_type *f, const pp_result *r)
{
	cli_out out;
	int rc = cli_out_open(&out, path);
	if (rc)
		return rc;
	return cli_out_close(&out, cli_report_ok(cli_render(f, r, out.f), out.f));
}

bool cli_format_is_text(const pp_format_type *f)
{
	return !f || f == pp_format_find("text");
}

/* The option named by `name` (`len` characters): exactly, never a prefix. */
static const struct option *find_opt(const struct option *tab, const char *name, size_t len)
{
	for (const struct option *p = tab; p && p->name; p++)
		if (strlen(p->name) == len && strncmp(p->name, name, len) == 0)
			return p;
	return NULL;
}

/* The one option of `tabs` that `name` abbreviates, or NULL (none, or more than one). */
static const char *abbreviated(const struct option *const tabs[2], const char *name, size_t len)
{
	const char *hit = NULL;
	int n = 0;
	for (size_t t = 0; t < 2; t++)
		for (const struct option *p = tabs[t]; p && p->name; p++)
			if (len > 0 && strlen(p->name) > len && strncmp(p->name, name, len) == 0) {
				hit = p->name;
				n++;
			}
	return n == 1 ? hit : NULL;
}

/* What the one parsing loop needs: the tables, searched in order, and where flags go. */
typedef struct parse_spec {
	const char *verb;
	void (*usage)(FILE *f);
	const struct option *tabs[2];
	int (*flag)(const struct option *opt, const char *value, void *ctx);
	int (*operand)(const char *arg, void *ctx);
	void *ctx;
} parse_spec;

/*
 * The one option loop of every verb.  Long options only, each named in full
 * ("--tp 8" or "--tp=8"): an abbreviation is an unknown option (with a hint).
 * "-h" and "--help" print the usage.  "--" ends the options.  An argument
 * that is not an option goes to `operand`, or, with none, is refused after
 * every flag was checked.  Returns CLI_CONTINUE or the exit code.
 */
static int parse_args(int argc, char **argv, const parse_spec *ps)
{
	const char *stray = NULL; /* the first argument that is not an option */
	bool options_end = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (options_end || a[0] != '-' || a[1] == '\0') {
			if (ps->operand) {
				int rc = ps->operand(a, ps->ctx);
				if (rc)
					return rc;
			} else if (!stray)
				stray = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			options_end = true;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			ps->usage(stdout);
			return EXIT_ANSWERED;
		}
		const char *name = a[1] == '-' ? a + 2 : a + 1;
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct option *opt = NULL;
		for (size_t t = 0; t < 2 && !opt && a[1] == '-'; t++)
			opt = find_opt(ps->tabs[t], name, len);
		if (!opt) {
			const char *full = a[1] == '-' ? abbreviated(ps->tabs, name, len) : NULL;
			if (full)
				cli_message(
				    "%s: unknown option '%.*s' (did you mean '--%s'? options are "
				    "not abbreviated)",
				    ps->verb, (int)(len + 2), a, full);
			else
				cli_message("%s: unknown option '%.*s' (see 'paraplan %s --help')",
				            ps->verb, (int)(name - a) + (int)len, a, ps->verb);
			return EXIT_BADINPUT;
		}
		const char *v = NULL;
		if (opt->has_arg == required_argument) {
			if (eq)
				v = eq + 1;
			else if (i + 1 < argc)
				v = argv[++i];
			else {
				cli_message("%s: missing value", a);
				return EXIT_BADINPUT;
			}
		} else if (eq) {
			cli_message("%s: --%s takes no value, got '%s'", ps->verb, opt->name, a);
			return EXIT_BADINPUT;
		}
		int rc = ps->flag(opt, v, ps->ctx);
		if (rc)
			return rc;
	}
	if (stray) {
		cli_message("%s: unexpected argument '%s'", ps->verb, stray);
		return EXIT_BADINPUT;
	}
	return CLI_CONTINUE;
}

int cli_args_parse(int argc, char **argv, const cli_args *args)
{
	parse_spec ps = {args->verb, args->usage,   {args->opts, NULL},
	                 args->flag, args->operand, args->ctx};
	return parse_args(argc, argv, &ps);
}

/* cli_opts_parse's flags: the shared set into cli_opts, the verb's to its handler. */
typedef struct opts_ctx {
	const cli_verb *verb;
	cli_opts *o;
} opts_ctx;

static int opts_flag(const struct option *opt, const char *v, void *ctx)
{
	const opts_ctx *oc = ctx;
	const cli_verb *verb = oc->verb;
	int c = opt->val;
	if (c == OPT_HELP) {
		verb->usage(stdout);
		return EXIT_ANSWERED;
	}
	if (c >= CLI_OPT_VERB)
		return verb->handle ? verb->handle(c, v, verb->ctx) : EXIT_INTERNAL;
	int rc = verb->take ? verb->take(opt->name, v, verb->ctx) : CLI_CONTINUE;
	if (rc != CLI_CONTINUE)
		return rc;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = PP_OK;
	rc = common_flag(c, v, oc->o, &err, &st);
	if (st)
		return flag_fail(opt->name, st, &err);
	return rc;
}

/*
 * A flag given twice: the last one wins (each value is still checked), as
 * "[common flags] --gpus 48" relies on.
 */
int cli_opts_parse(int argc, char **argv, const cli_verb *verb, cli_opts *o)
{
	memset(o, 0, sizeof *o);
	o->price = -1;
	pp_job_init(&o->job);
	pp_plan_init(&o->plan);
	opts_ctx oc = {verb, o};
	parse_spec ps = {verb->name, verb->usage, {common_opts, verb->opts}, opts_flag, NULL, &oc};
	int rc = parse_args(argc, argv, &ps);
	/* A recipe scales FP8 operands: given without them it is a mistake,
	 * whichever flag (--precision, --from-megatron) set the precision. */
	/* A launch's recipe (--from-megatron --fp8-recipe, a torchtitan
	 * [float8]) goes with its FP8: --precision bf16 after it drops both. */
	if (rc == CLI_CONTINUE && !o->fp8_recipe_given && o->job.precision != PP_PREC_FP8)
		o->job.fp8_recipe = PP_FP8_DELAYED;
	if (rc == CLI_CONTINUE && o->fp8_recipe_given && o->job.precision != PP_PREC_FP8) {
		cli_message(
		    "%s: --fp8-recipe %s applies under --precision fp8 only (precision is %s)",
		    verb->name, pp_fp8_recipe_name(o->job.fp8_recipe),
		    pp_precision_name(o->job.precision));
		return EXIT_BADINPUT;
	}
	return rc;
}

int cli_overlap_check(const char *verb, const cli_opts *o)
{
	if (!o->overlap || o->plan.schedule == PP_SCHED_WSHAPE)
		return 0;
	cli_message("%s: --overlap applies to --schedule wshape (DHelix) only; the plan's "
	            "schedule is %s",
	            verb, pp_schedule_name(o->plan.schedule));
	return EXIT_BADINPUT;
}

int cli_opts_require(const cli_opts *o, const char *verb, bool need_gpus, bool need_gbs)
{
	const char *missing = !o->model_ref && !o->has_flags_model ? "--model"
	                      : !o->system_ref                     ? "--system"
	                      : need_gpus && !o->gpus              ? "--gpus"
	                      : need_gbs && !o->have_gbs           ? "--gbs"
	                      : !o->have_seq                       ? "--seq"
	                                                           : NULL;
	if (missing) {
		cli_message("%s: %s is required (see 'paraplan %s --help')", verb, missing, verb);
		return EXIT_BADINPUT;
	}
	return 0;
}

int cli_inputs(const cli_opts *o, pp_inputs *in)
{
	if (o->model_ref && o->system_ref && strcmp(o->model_ref, "-") == 0 &&
	    strcmp(o->system_ref, "-") == 0) {
		cli_message("--model - and --system - cannot both read standard input");
		return EXIT_BADINPUT;
	}
	const pp_input_refs refs = {o->model_ref,   o->system_ref, &o->flags_model, o->framework,
	                            o->gpu_profile, o->overlap,    o->price};
	pp_inputs_part part;
	pp_error err;
	pp_error_clear(&err);
	in->job = o->job;
	in->plan = o->plan;
	in->gpus = o->gpus;
	pp_status st = pp_inputs_resolve(&refs, in, &part, &err);
	/* The reference that failed, named by its flag where the reader named no file. */
	static const char *const flag[] = {
	    "", "--model", "--system", "--framework", "--gpu-profile", "--overlap"};
	if (st && (part == PP_INPUTS_FRAMEWORK ||
	           (!err.source[0] && (part != PP_INPUTS_GPU_PROFILE || !err.field[0]))))
		snprintf(err.field, sizeof err.field, "%s", flag[part]);
	return st ? cli_fail(st, &err) : 0;
}

int cli_opts_inputs(const cli_opts *o, pp_model *model, pp_system *sys)
{
	pp_inputs in;
	int rc = cli_inputs(o, &in);
	if (!rc) {
		*model = in.model;
		*sys = in.system;
	}
	return rc;
}

/* Plan and job errors come back as "plan.tp"; say "--tp" instead. */
static void command_line_source(pp_error *err)
{
	static const struct {
		const char *field, *flag;
	} map[] = {{"plan.tp", "--tp"},
	           {"plan.tp2", "--tp2"},
	           {"plan.summa", "--summa"},
	           {"plan.summa_nb", "--summa-nb"},
	           {"plan.pp", "--pp"},
	           {"plan.first_stage_layers", "--first-stage-layers"},
	           {"plan.last_stage_layers", "--last-stage-layers"},
	           {"plan.embedding_as_layer", "--embedding-as-layer"},
	           {"plan.loss_as_layer", "--loss-as-layer"},
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
	           {"job.fp8_recipe", "--fp8-recipe"},
	           {"job.train_tokens", "--tokens"},
	           {"gpus", "--gpus"},
	           {"goodput.mtbf_gpu_hours", "--mtbf-gpu-hours"},
	           {"goodput.ckpt_write_bytes_per_s", "--ckpt-write-gbps"},
	           {"goodput.restart_s", "--restart-min"}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(err->field, map[i].field) == 0) {
			snprintf(err->field, sizeof err->field, "%s", map[i].flag);
			break;
		}
}

int cli_plan_fail(pp_status st, pp_error *err, const pp_model *model)
{
	if (!err->source[0] || strcmp(err->source, model->name) == 0)
		err->source[0] = '\0';
	command_line_source(err);
	return cli_fail(st, err);
}

int cli_estimate_inputs(const cli_opts *o, pp_model *model, pp_system *sys, pp_estimate **out)
{
	*out = NULL;
	int rc = cli_opts_inputs(o, model, sys);
	if (rc)
		return rc;
	pp_estimate *e = malloc(sizeof *e);
	if (!e) {
		cli_message("out of memory");
		return EXIT_INTERNAL;
	}
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_estimate_run(model, sys, &o->job, &o->plan, o->gpus, e, &err);
	if (st) {
		free(e);
		return cli_plan_fail(st, &err, model);
	}
	*out = e;
	return 0;
}
