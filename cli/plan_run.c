/*
 * paraplan plan-run RECIPE.json: a whole training run, phase by phase
 * (include/paraplan/recipe.h, docs/recipes.md); rendered by report
 * (PP_RESULT_RECIPE).
 */
#include <stdlib.h>

#include "options.h"

static void usage(FILE *f)
{
	cli_usage(f, "plan-run"); /* docs/usage/plan-run.txt */
}

typedef struct plan_run_args {
	const char *recipe, *output;
	const pp_format_type *format; /* --format; NULL: text */
} plan_run_args;

/* The recipe file: 0, or EXIT_BADINPUT on a second one. */
static int operand(const char *arg, void *ctx)
{
	plan_run_args *a = ctx;
	if (a->recipe) {
		cli_message("plan-run: one recipe file, got '%s' and '%s'", a->recipe, arg);
		return EXIT_BADINPUT;
	}
	a->recipe = arg;
	return 0;
}

static const cli_flag plan_run_flags[] = {
    CLI_ROW("format", CLI_F_FORMAT, offsetof(plan_run_args, format)),
    CLI_ROW("output", CLI_F_FILE, offsetof(plan_run_args, output)), CLI_END};

int cli_plan_run(int argc, char **argv)
{
	plan_run_args a = {NULL, NULL, NULL};
	const cli_args args = {"plan-run", usage, plan_run_flags, &a, operand};
	int rc = cli_args_parse(argc, argv, &args);
	if (rc != CLI_CONTINUE || (rc = cli_format_check("plan-run", a.format, PP_RESULT_RECIPE)) ||
	    (rc = cli_out_check("plan-run", "--output", a.output)))
		return rc;
	if (!a.recipe) {
		cli_message("plan-run: expected a recipe file (see 'paraplan plan-run --help')");
		return EXIT_BADINPUT;
	}
	pp_recipe *r = malloc(sizeof *r);
	pp_recipe_result *res = malloc(sizeof *res);
	pp_error err;
	pp_error_clear(&err);
	pp_status st = !r || !res ? PP_ENOMEM : pp_recipe_read(a.recipe, r, &err);
	if (!st)
		st = pp_recipe_run(r, res, &err);
	pp_result out = {.kind = PP_RESULT_RECIPE, .recipe = res};
	rc = st ? cli_fail(st, &err) : cli_render_to(a.output, a.format, &out);
	free(r);
	free(res);
	return rc;
}
