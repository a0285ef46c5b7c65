/*
 * The flags that describe one training run (model, system, job, plan, price,
 * output), shared by the verbs that estimate plans: estimate, sweep and search.
 */
#ifndef PARAPLAN_CLI_OPTIONS_H
#define PARAPLAN_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "paraplan/args.h"

/* cli_opts_parse's "carry on" result; anything else is an exit code. */
#define CLI_CONTINUE (-1)

typedef struct cli_opts {
	const char *model_ref, *system_ref, *output, *framework;
	const char *overlap;     /* --overlap: DHelix overlap table (name or file) */
	const char *gpu_profile; /* --gpu-profile: directory of measured kernel tables */
	double price;            /* --usd-per-gpu-hour; < 0 when not given */
	long long gpus;
	bool json, have_gbs, have_seq; /* json: the format is json (--json, --format json) */
	bool help;                     /* never set: -h and --help are answered first */
	const pp_format_type *format;  /* --format, --json; NULL: text */
	bool fp8_recipe_given;         /* --fp8-recipe given (refused without --precision fp8) */
	pp_job job;
	pp_plan plan;
	/* --from-megatron: the model its flags describe, used when no --model. */
	bool has_flags_model;
	pp_model flags_model;
} cli_opts;

/*
 * A verb's own flag is a row of a table (paraplan/args.h: name, how its value
 * is read, where it goes), so that a new flag is one row (and a line of
 * docs/usage/VERB.txt).  The plain kinds are the library's; the CLI adds its
 * own.  Each refusal is one message and EXIT_BADINPUT.
 */
typedef pp_flag cli_flag;
enum {
	CLI_F_SET = PP_FLAG_SET,
	CLI_F_INT = PP_FLAG_INT,
	CLI_F_LL = PP_FLAG_LL,
	CLI_F_REAL = PP_FLAG_REAL,
	CLI_F_PRICE = PP_FLAG_PRICE,
	CLI_F_ONOFF = PP_FLAG_ONOFF,
	CLI_F_STR = PP_FLAG_STR,
	CLI_F_FILE = PP_FLAG_FILE,
	CLI_F_INVERSE =
	    PP_FLAG_CALLER, /* --deadline-days, --budget-usd, goodput: the cli_inverse */
	CLI_F_EMIT,         /* --emit FRAMEWORK: the cli_emit */
	CLI_F_FORMAT,       /* --format NAME (cli_format_flag): const pp_format_type * */
	CLI_F_CALL          /* call(ctx, verb, name, value) decides */
};
#define CLI_ROW PP_FLAG_ROW
#define CLI_END PP_FLAG_END

/* --emit FRAMEWORK of estimate and search: the plan as launch flags. */
typedef struct cli_emit {
	bool on;
	pp_launch_format format;
} cli_emit;
/* The emitted flags of `e` on `f`, each note of what they cannot express
 * on stderr ("note: --emit: ...").  The report writers' return. */
int cli_emit_write(const cli_emit *em, const pp_estimate *e, FILE *f);

/* The rows of --html and --svg into the cli_charts member `m` of the
 * context type `T`; CLI_CHARTS_FLAGS adds --large-output. */
#define CLI_PAGE_FLAGS(T, m)                                                                       \
	CLI_ROW("html", CLI_F_FILE, offsetof(T, m) + offsetof(cli_charts, html)),                  \
	    CLI_ROW("svg", CLI_F_FILE, offsetof(T, m) + offsetof(cli_charts, svg_dir),             \
	            .what = "a directory")
#define CLI_CHARTS_FLAGS(T, m)                                                                     \
	CLI_PAGE_FLAGS(T, m),                                                                      \
	    CLI_ROW("large-output", CLI_F_SET, offsetof(T, m) + offsetof(cli_charts, large))
/* The goodput flags (cli_goodput_flag) into the cli_inverse member `m`. */
#define CLI_GOODPUT_FLAGS(T, m)                                                                    \
	CLI_ROW("mtbf-gpu-hours", CLI_F_INVERSE, offsetof(T, m)),                                  \
	    CLI_ROW("ckpt-write-gbps", CLI_F_INVERSE, offsetof(T, m)),                             \
	    CLI_ROW("restart-min", CLI_F_INVERSE, offsetof(T, m)),                                 \
	    CLI_ROW("ckpt-async", CLI_F_INVERSE, offsetof(T, m))
/* --deadline-days, --budget-usd and the goodput flags into the cli_inverse `m`. */
#define CLI_INVERSE_FLAGS(T, m)                                                                    \
	CLI_ROW("deadline-days", CLI_F_INVERSE, offsetof(T, m)),                                   \
	    CLI_ROW("budget-usd", CLI_F_INVERSE, offsetof(T, m)), CLI_GOODPUT_FLAGS(T, m)

/*
 * A verb's own flags: `flags`, a cli_flag table into `ctx`.  `take`, when set, sees every shared flag first, by its long
 * name ("tp"): it returns CLI_CONTINUE to leave the flag to the shared parser
 * (into cli_opts), or 0 or an exit code when it took (or refused) the flag
 * itself.
 */
typedef struct cli_verb {
	const char *name;       /* "estimate" */
	void (*usage)(FILE *f); /* --help */
	const cli_flag *flags;
	void *ctx;
	int (*take)(const char *flag, const char *value, void *ctx);
} cli_verb;

/*
 * Parse argv into `o`; CLI_CONTINUE, or the exit code to return (help, bad
 * flag).  Long options only, named in full: an abbreviation ("--recomp") is an
 * unknown option; "-h" is --help.  A flag given twice: the last one wins.
 */
int cli_opts_parse(int argc, char **argv, const cli_verb *verb, cli_opts *o);

/*
 * A verb with its own flags only (validate, calibrate): the same rules as
 * cli_opts_parse — exact long names, "--name value" or "--name=value", "-h" and
 * "--help" print `usage`, "--" ends the options.  `flags` is its table
 * into `ctx` (a row decides whether a repeated flag replaces or adds).
 * `operand`, when set, gets each argument that is not an option; when NULL,
 * such an argument is refused.  CLI_CONTINUE, or the exit code to return.
 */
typedef struct cli_args {
	const char *verb;       /* "validate" */
	void (*usage)(FILE *f); /* -h, --help */
	const cli_flag *flags;
	void *ctx;
	int (*operand)(const char *arg, void *ctx);
} cli_args;
int cli_args_parse(int argc, char **argv, const cli_args *args);

/*
 * --format NAME (every verb that renders a result): the format of report's
 * table (paraplan/format.h) into *out, or EXIT_BADINPUT after one message
 * naming the formats.  cli_format_check: `f` (NULL: text) renders results of
 * `kind`, else EXIT_BADINPUT after one message naming the formats that do.
 * cli_render: `r` rendered in `f` (NULL: text), the renderer's return.
 */
int cli_format_flag(const char *value, const pp_format_type **out);
int cli_format_check(const char *verb, const pp_format_type *f, pp_result_kind kind);
int cli_render(const pp_format_type *f, const pp_result *r, FILE *out);
/* The same into `path` (NULL or "-": standard output), atomically (cli_out).
 * 0 or an exit code. */
int cli_render_to(const char *path, const pp_format_type *f, const pp_result *r);
/* --format html (estimate, search, sweep): the page of the charts is the
 * report, written to --output (or standard output) as --html would; refused
 * with --html.  0 or EXIT_BADINPUT. */
int cli_charts_format(cli_charts *c, const char *verb, const cli_opts *o);
/* `f` is the text format (NULL included). */
bool cli_format_is_text(const pp_format_type *f);

/*
 * "verb: --model is required ...", checking --model, --system, --gpus (when
 * `need_gpus`), --gbs (when `need_gbs`) and --seq.  0 or EXIT_BADINPUT.
 */
int cli_opts_require(const cli_opts *o, const char *verb, bool need_gpus, bool need_gbs);

/* --overlap with a plan whose schedule is not wshape (it would change
 * nothing): refused for a verb of one plan (estimate, sweep, place).  0 or
 * EXIT_BADINPUT. */
int cli_overlap_check(const char *verb, const cli_opts *o);

/* The inputs bundle of the flags: --model, --system, --framework,
 * --gpu-profile, --overlap and the price resolved (pp_inputs_resolve), the
 * job, plan and GPU count copied.  0 or an exit code (after one message). */
int cli_inputs(const cli_opts *o, pp_inputs *in);
/* One run of a step-times file (cli/calibrate_system.c) or a job of share: its
 * `flags` (cut into words in place: whitespace, "double quotes" group) read as
 * `paraplan estimate` reads them (verb `vname`) into *o, resolved into *in and
 * estimated once, kept in *keep (the caller frees it) unless `keep` is NULL.
 * `id` names the run in messages; `in` NULL: the flags parsed only (no file
 * read, nothing estimated).  0 or an exit code (after one message). */
int cli_step_inputs(const char *vname, const char *id, char *flags, cli_opts *o, pp_inputs *in,
                    pp_estimate **keep);
/* cli_inputs' model and system only.  0 or an exit code. */
int cli_opts_inputs(const cli_opts *o, pp_model *model, pp_system *sys);

/*
 * A goodput flag (mtbf-gpu-hours, ckpt-write-gbps, restart-min, ckpt-async;
 * cli/inverse.c) into `gp`: 0, EXIT_BADINPUT (after one message), or
 * CLI_CONTINUE when `flag` is not one of them.
 */
int cli_goodput_flag(const char *verb, const char *flag, const char *value, pp_goodput_params *gp);

/*
 * The inverse questions of search and sweep (cli/inverse.c): --deadline-days,
 * --budget-usd, and the goodput flags that make their days goodput-aware.
 */
typedef struct cli_inverse {
	pp_inverse_query q;
	bool goodput; /* a goodput flag was given */
	pp_goodput_params gp;
} cli_inverse;
static inline bool cli_inverse_asked(const cli_inverse *inv)
{
	return inv->q.deadline_days > 0 || inv->q.budget_usd > 0;
}
/* "deadline-days", "budget-usd" or a goodput flag into `inv`: 0, EXIT_BADINPUT
 * (one message), or CLI_CONTINUE when `flag` is none of them. */
int cli_inverse_flag(const char *verb, const char *flag, const char *value, cli_inverse *inv);
/* Consistent with the job: a deadline or budget needs --tokens.  0,
 * EXIT_BADINPUT, or CLI_CONTINUE for goodput flags without either. */
int cli_inverse_check(const char *verb, const cli_inverse *inv, double train_tokens);
/* A budget needs a price per GPU-hour.  0 or EXIT_BADINPUT. */
int cli_inverse_price(const char *verb, const cli_inverse *inv, const pp_system *sys);

/* Resolve the inputs (cli_opts_inputs) and estimate the plan: *out (freed by
 * the caller) on 0, else the exit code after one message. */
int cli_estimate_inputs(const cli_opts *o, pp_model *model, pp_system *sys, pp_estimate **out);

/* Report an error of the plan or the job in command-line terms (--tp, not plan.tp). */
int cli_plan_fail(pp_status st, pp_error *err, const pp_model *model);

#endif
