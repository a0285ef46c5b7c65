/*
 * paraplan calibrate's two modes that write a calibrated system file (for
 * `--system FILE`), with the fit's summary (report's) beside it:
 *
 * --step-times FILE [--output FILE]: the GPU's kernel efficiencies (and the
 * network efficiencies) fitted to the user's own measured seconds per
 * iteration (the file read by pp_steps_load, the fit pp_steps_fit_run).
 * What is here is the flags: each run's are read as `paraplan estimate`
 * reads them.
 *
 * --nccl-tests LOG... --system S [--output FILE]: the latency and bandwidth
 * efficiency of each network tier fitted to nccl-tests logs
 * (pp_nccl_calibrate).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "paraplan/calib.h"
#include "paraplan/format.h"
#include "paraplan/nccl.h"

#define MAX_ARGS 96

/* -h among a step file's run or a `share` job's flags: said by cli_step_inputs. */
static void steps_usage(FILE *f)
{
	(void)f;
}

/* Cut the flags into words (pp_step_words) and read them as `paraplan
 * estimate` does. */
int cli_step_inputs(const char *vname, const char *id, char *flags, cli_opts *o, pp_inputs *in,
                    pp_estimate **keep)
{
	const cli_verb verb = {vname, steps_usage, NULL, NULL, NULL};
	char *argv[MAX_ARGS] = {(char *)vname};
	size_t argc = 1 + pp_step_words(flags, argv + 1, MAX_ARGS - 1);
	if (argc > MAX_ARGS) {
		cli_message("%s: more than %d flags", id, MAX_ARGS);
		return EXIT_BADINPUT;
	}
	int rc = cli_opts_parse((int)argc, argv, &verb, o);
	if (rc == 0) /* help: the caller would go on with no estimate */
		cli_message("%s: --help and --version are not a run's flags (they are estimate's: "
		            "'paraplan estimate --help')",
		            id);
	if (rc != CLI_CONTINUE)
		return rc ? rc : EXIT_BADINPUT;
	if ((rc = cli_opts_require(o, vname, true, true)) || !in || (rc = cli_inputs(o, in)))
		return rc;
	pp_estimate *e = malloc(sizeof *e);
	if (!e)
		return EXIT_INTERNAL;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_inputs_estimate(in, e, &err);
	if (st || !keep)
		free(e);
	else
		*keep = e;
	return st ? cli_plan_fail(st, &err, &in->model) : 0;
}

/* Where the fit's summary goes: standard error when the system goes to
 * standard output. */
static FILE *summary_out(const char *output)
{
	return !output || strcmp(output, "-") == 0 ? stderr : stdout;
}

/* The system's `text` into `output` (NULL or "-": standard output), then
 * "wrote FILE".  0 or an exit code. */
static int write_system(const char *output, const char *text)
{
	cli_out o;
	int rc = cli_out_open(&o, output);
	if (rc == 0)
		rc = cli_out_close(&o, fputs(text, o.f) >= 0);
	if (rc == 0 && summary_out(output) == stdout)
		printf("wrote %s\n", output);
	return rc;
}

/* The runs of the step-times file `path` read, fitted, and the system
 * written.  0 or an exit code. */
static int steps_fit(const char *path, pp_steps *steps, const char *output)
{
	static cli_opts opts[PP_STEPS_MAX];
	static pp_inputs inputs[PP_STEPS_MAX];
	static pp_fit_input in[PP_STEPS_MAX];
	for (size_t i = 0; i < steps->n; i++) {
		pp_step_run *r = &steps->run[i];
		int rc = cli_step_inputs("calibrate", r->id, r->flags, &opts[i], &inputs[i], NULL);
		if (rc)
			return rc;
		if (strcmp(opts[i].system_ref, opts[0].system_ref) != 0) {
			cli_message("%s: %s: --system %s, but %s has --system %s: one system per "
			            "calibration",
			            path, r->id, opts[i].system_ref, steps->run[0].id,
			            opts[0].system_ref);
			return EXIT_BADINPUT;
		}
		pp_inputs *x = &inputs[i];
		in[i] = (pp_fit_input){&x->model, &x->system,     &x->job, &x->plan,
		                       x->gpus,   r->iteration_s, r->id};
	}
	pp_error err;
	static pp_steps_fit r; /* 4 KiB of errors: not on the stack */
	char *text = NULL;
	pp_status st = pp_steps_fit_run(in, steps->n, &r, &err);
	if (!st)
		pp_report_steps_fit_text(steps, &r, summary_out(output));
	if (!st)
		st = pp_steps_system_json(path, &r, opts[0].system_ref, &text, &err);
	int rc = st ? cli_fail(st, &err) : write_system(output, text);
	free(text);
	return rc;
}

int cli_calibrate_steps(const char *path, const char *memory, const char *output)
{
	int rc = cli_out_check("calibrate", "--output", output); /* before any work */
	if (rc)
		return rc;
	static pp_steps steps;
	pp_error err;
	pp_memory_steps ms = {0}; /* --memory: the allocator's fit (pp_memory_steps_load) */
	pp_result res = {.kind = PP_RESULT_MEMORY_FIT, .memory_fit = &ms.report};
	pp_status st = memory ? pp_memory_steps_load(memory, true, &ms, &err)
	                      : pp_steps_load(path, &steps, &err);
	rc = st ? cli_fail(st, &err)
	        : (memory ? cli_render_to(output, NULL, &res) : steps_fit(path, &steps, output));
	pp_memory_steps_free(&ms);
	pp_steps_clear(&steps);
	return rc;
}

int cli_calibrate_nccl(const char *const *paths, size_t np, const char *system, const char *output)
{
	if (!system) {
		cli_message("calibrate: --nccl-tests needs --system S (the system to start from)");
		return EXIT_BADINPUT;
	}
	int rc = cli_out_check("calibrate", "--output", output);
	if (rc)
		return rc;
	pp_error err;
	pp_nccl_calibration c;
	pp_status st = pp_nccl_calibrate(system, paths, np, &c, &err);
	if (st)
		return cli_fail(st, &err);
	pp_report_nccl_text(&c.fit, c.logs, c.nlogs, summary_out(output));
	rc = write_system(output, c.json);
	pp_nccl_calibration_free(&c);
	return rc;
}
