/*
 * The run-describing flags shared by estimate, sweep and search: model,
 * system, price and output here, the job's and plan's fields from their
 * registry (include/paraplan/fields.h, which checks form: a number is a
 * number); the library checks meaning (tp divides heads, ...) later.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "paraplan/fields.h"

/* --json: the json format (kept as a bool for the verbs' own refusals). */
static int json_flag(void *ctx, const char *verb, const char *name, const char *v)
{
	(void)verb, (void)name, (void)v;
	cli_opts *o = ctx;
	o->json = true;
	o->format = pp_format_find("json");
	return 0;
}

static int format_flag(void *ctx, const char *verb, const char *name, const char *v)
{
	(void)verb, (void)name;
	cli_opts *o = ctx;
	int rc = cli_format_flag(v, &o->format);
	if (!rc)
		o->json = o->format == pp_format_find("json");
	return rc;
}

static int launch_flag(void *ctx, const char *verb, const char *name, const char *v);
static int field_flag(void *ctx, const char *verb, const char *name, const char *v);

/* The flags that are not fields of the job or plan (include/paraplan/fields.h). */
#define AT(m) offsetof(cli_opts, m)
static const cli_flag cli_only_flags[] = {
    CLI_ROW("model", CLI_F_STR, AT(model_ref)),
    CLI_ROW("system", CLI_F_STR, AT(system_ref)),
    CLI_ROW("gpus", CLI_F_LL, AT(gpus), .lo = 1, .hi = 10000000),
    CLI_ROW("overlap", CLI_F_STR, AT(overlap)),
    CLI_ROW("framework", CLI_F_STR, AT(framework)),
    CLI_ROW("gpu-profile", CLI_F_STR, AT(gpu_profile)),
    CLI_ROW("usd-per-gpu-hour", CLI_F_PRICE, AT(price), .hi = 1e4),
    CLI_ROW("from-megatron", CLI_F_CALL, 0, .call = launch_flag),
    CLI_ROW("from-torchtitan", CLI_F_CALL, 0, .call = launch_flag),
    CLI_ROW("output", CLI_F_STR, AT(output)),
    CLI_ROW("json", CLI_F_SET, AT(json), .call = json_flag),
    CLI_ROW("format", CLI_F_CALL, 0, .call = format_flag),
    CLI_ROW("help", CLI_F_SET, AT(help)), /* answered before: here for the hints */
    CLI_END};
#undef AT

#define NCLI_ONLY (sizeof cli_only_flags / sizeof cli_only_flags[0] - 1)
/* The registry's fields are fewer (tests/unit checks pp_field_at's count). */
#define NFIELDS_MAX 256

/* The shared flags: the CLI's own, then every field of the registry. */
static const cli_flag *common_flags(void)
{
	static cli_flag tab[NCLI_ONLY + NFIELDS_MAX + 1];
	if (tab[0].name)
		return tab;
	memcpy(tab, cli_only_flags, sizeof cli_only_flags);
	size_t n = NCLI_ONLY;
	for (const pp_field *f; (f = pp_field_at(n - NCLI_ONLY)) && n < NCLI_ONLY + NFIELDS_MAX;
	     n++)
		tab[n] = (cli_flag)CLI_ROW(f->name, CLI_F_CALL, 0, .call = field_flag);
	return tab;
}

/*
 * --from-megatron "FLAGS" or @FILE (a launch script), --from-torchtitan FILE
 * (a job TOML): the framework's view of the job and plan replaces o->job and
 * o->plan (flags given after it still win), its model is kept for when no
 * --model is given; the flags (keys) paraplan does not use are listed on
 * stderr.
 */
static int launch_flag(void *ctx, const char *verb, const char *flag, const char *v)
{
	(void)verb;
	cli_opts *o = ctx;
	pp_launch l;
	pp_error err;
	pp_error_clear(&err);
	char note[2048]; /* cli_message's line */
	pp_status st = pp_launch_apply(flag, v, &o->job, &o->plan, &l, note, sizeof note, &err);
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
	if (note[0])
		cli_note("%s", note);
	return 0;
}

/* A field of the job or plan, by its registry (include/paraplan/fields.h). */
static int field_flag(void *ctx, const char *verb, const char *name, const char *v)
{
	(void)verb;
	cli_opts *o = ctx;
	o->have_gbs |= strcmp(name, "gbs") == 0;
	o->have_seq |= strcmp(name, "seq") == 0;
	o->fp8_recipe_given |= strcmp(name, "fp8-recipe") == 0;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_field_set(&o->job, &o->plan, name, v, &err);
	return st ? cli_fail(st, &err) : 0;
}

int cli_format_flag(const char *value, const pp_format_type **out)
{
	const pp_format_type *f = pp_format_find(value);
	if (!f) {
		char names[256];
		cli_message("--format: unknown format '%s' (one of %s)", value,
		            pp_format_names(names, sizeof names));
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

/* Flag `fl` of `verb` with `v` (NULL for CLI_F_SET) into the context `ctx`. */
static int flag_apply(const cli_flag *fl, const char *verb, void *ctx, const char *v)
{
	pp_error err;
	pp_error_clear(&err);
	pp_status st = PP_OK;
	switch (fl->kind) {
	case CLI_F_INVERSE:
		return cli_inverse_flag(verb, fl->name, v, (cli_inverse *)((char *)ctx + fl->off));
	case CLI_F_EMIT: {
		cli_emit *em = (cli_emit *)((char *)ctx + fl->off);
		st = pp_launch_format_parse(v, "--emit", &em->format, &err);
		em->on = st == PP_OK;
		break;
	}
	case CLI_F_FORMAT: return cli_format_flag(v, (void *)((char *)ctx + fl->off));
	case CLI_F_CALL: return fl->call(ctx, verb, fl->name, v);
	default: /* a plain kind, then its call when it has one (--json) */
		if ((st = pp_flag_store(fl, verb, ctx, v, &err)) == PP_OK && fl->call)
			return fl->call(ctx, verb, fl->name, v);
	}
	return st ? cli_fail(st, &err) : 0;
}

int cli_emit_write(const cli_emit *em, const pp_estimate *e, FILE *f)
{
	char notes[PP_LAUNCH_NOTES_MAX];
	int wr = pp_launch_emit(e, em->format, f, notes, sizeof notes);
	for (char *line = notes, *nl; *line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		cli_note("--emit: %s", line);
	}
	return wr;
}

/* What the one parsing loop needs: the tables (paraplan/args.h) and where flags go. */
typedef struct parse_spec {
	const char *verb;
	void (*usage)(FILE *f);
	int (*operand)(const char *arg, void *ctx);
	void *operand_ctx;
	const cli_flag *flags[2]; /* the shared flags (or none), the verb's */
	void *flags_ctx[2];       /* where each table's flags go */
	/* sees each shared flag first (cli_verb.take) */
	int (*take)(const char *flag, const char *value, void *ctx);
} parse_spec;

/*
 * The one option loop of every verb, on pp_args' rules.  An argument that is
 * not an option goes to `operand`, or, with none, is refused after every flag
 * was checked.  Returns CLI_CONTINUE or the exit code.
 */
static int parse_args(int argc, char **argv, const parse_spec *ps)
{
	const char *stray = NULL; /* the first argument that is not an option */
	pp_args it;
	pp_args_init(&it, ps->verb, argc, argv, ps->flags[0], ps->flags[1]);
	pp_args_item a;
	pp_error err;
	pp_error_clear(&err);
	pp_status st;
	int rc = 0;
	while (!rc && !(st = pp_args_next(&it, &a, &err)) && a.what != PP_ARG_END) {
		if (a.what == PP_ARG_HELP) {
			ps->usage(stdout);
			return EXIT_ANSWERED;
		}
		if (a.what == PP_ARG_OPERAND) {
			rc = ps->operand ? ps->operand(a.value, ps->operand_ctx) : 0;
			stray = stray ? stray : a.value;
			continue;
		}
		rc = a.table == 0 && ps->take ? ps->take(a.flag->name, a.value, ps->flags_ctx[1])
		                              : CLI_CONTINUE;
		if (rc == CLI_CONTINUE)
			rc = flag_apply(a.flag, ps->verb, ps->flags_ctx[a.table], a.value);
	}
	if (rc || st)
		return rc ? rc : cli_fail(st, &err);
	if (stray && !ps->operand) {
		cli_message("%s: unexpected argument '%s'", ps->verb, stray);
		return EXIT_BADINPUT;
	}
	return CLI_CONTINUE;
}

int cli_args_parse(int argc, char **argv, const cli_args *args)
{
	parse_spec ps = {args->verb,          args->usage,       args->operand, args->ctx,
	                 {NULL, args->flags}, {NULL, args->ctx}, NULL};
	return parse_args(argc, argv, &ps);
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
	parse_spec ps = {verb->name,     verb->usage, NULL, NULL, {common_flags(), verb->flags},
	                 {o, verb->ctx}, verb->take};
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
	pp_error err;
	return cli_fail(pp_plan_overlap_check(&o->plan, o->overlap != NULL, verb, &err), &err);
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
	if (st) /* the reference that failed, named by its flag */
		pp_inputs_error_as_flags(part, &err);
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

int cli_plan_fail(pp_status st, pp_error *err, const pp_model *model)
{
	pp_field_error_as_flags(err, model->name);
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
