/*
 * paraplan calibrate --step-times FILE [--output FILE]: fit the GPU's kernel
 * efficiencies (and the network efficiencies) to the user's own measured
 * seconds per iteration (the file read by pp_steps_load), with the fitter of
 * `paraplan calibrate` (pp_fit_new_cases), and write the calibrated system
 * (pp_fit_system_json) for `--system FILE`.  What is here is the flags: each
 * run's are read as `paraplan estimate` reads them.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "paraplan/calib.h"

#define MAX_ARGS 96

static void steps_usage(FILE *f)
{
	fprintf(f, "usage: paraplan calibrate --step-times FILE [--output FILE]\n");
}

/* Split the flags (whitespace; "double quotes" group) and read them as
 * `paraplan estimate` does. */
int cli_step_inputs(const char *id, char *flags, cli_opts *o, pp_inputs *in)
{
	static const struct option none[] = {{0, 0, 0, 0}};
	const cli_verb verb = {"calibrate", steps_usage, none, NULL, NULL, NULL, NULL};
	char *argv[MAX_ARGS];
	int argc = 0;
	argv[argc++] = "calibrate";
	char *p = flags;
	while (*p) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (argc == MAX_ARGS) {
			cli_message("%s: more than %d flags", id, MAX_ARGS);
			return EXIT_BADINPUT;
		}
		if (*p == '"') {
			argv[argc++] = ++p;
			while (*p && *p != '"')
				p++;
		} else {
			argv[argc++] = p;
			while (*p && !isspace((unsigned char)*p))
				p++;
		}
		if (*p)
			*p++ = '\0';
	}
	int rc = cli_opts_parse(argc, argv, &verb, o);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc = cli_opts_require(o, "calibrate", true, true)) || (rc = cli_inputs(o, in)))
		return rc;
	pp_estimate *e = malloc(sizeof *e);
	if (!e)
		return EXIT_INTERNAL;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_inputs_estimate(in, e, &err);
	free(e);
	return st ? cli_plan_fail(st, &err, &in->model) : 0;
}

/* Fit the runs and write the system.  0 or an exit code. */
static int fit_and_write(const char *path, const pp_steps *steps, const pp_fit_input *in,
                         const char *system_ref, const char *output)
{
	pp_error err;
	static pp_steps_fit r; /* 4 KiB of errors: not on the stack */
	pp_status st = pp_steps_fit_run(in, steps->n, &r, &err);
	if (st)
		return cli_fail(st, &err);
	bool to_stdout = !output || strcmp(output, "-") == 0;
	pp_report_steps_fit_text(steps, &r, to_stdout ? stderr : stdout);
	char note[512], *text = NULL;
	const char *b = strrchr(path, '/');
	snprintf(note, sizeof note,
	         "fitted by 'paraplan calibrate --step-times %s': %zu measured runs, MAPE "
	         "%.1f%% at the neutral start, %.1f%% fitted (docs/calibration.md)",
	         b ? b + 1 : path, r.n, 100 * r.mape_start, 100 * r.mape);
	if ((st = pp_fit_system_json(system_ref, &r.fitted, r.used, r.nused, note, &text, &err)))
		return cli_fail(st, &err);
	cli_out o;
	int rc = cli_out_open(&o, output);
	if (rc == 0)
		rc = cli_out_close(&o, fprintf(o.f, "%s\n", text) >= 0);
	free(text);
	if (!rc && !to_stdout)
		printf("wrote %s\n", output);
	return rc;
}

int cli_calibrate_steps(const char *path, const char *output)
{
	int rc = cli_out_check("calibrate", "--output", output); /* before any work */
	if (rc)
		return rc;
	static pp_steps steps;
	static cli_opts opts[PP_STEPS_MAX];
	static pp_inputs inputs[PP_STEPS_MAX];
	static pp_fit_input in[PP_STEPS_MAX];
	pp_error err;
	pp_status st = pp_steps_load(path, &steps, &err);
	if (st)
		rc = cli_fail(st, &err);
	for (size_t i = 0; i < steps.n && !rc; i++) {
		pp_step_run *r = &steps.run[i];
		rc = cli_step_inputs(r->id, r->flags, &opts[i], &inputs[i]);
		if (!rc && strcmp(opts[i].system_ref, opts[0].system_ref) != 0) {
			cli_message("%s: %s: --system %s, but %s has --system %s: one system per "
			            "calibration",
			            path, r->id, opts[i].system_ref, steps.run[0].id,
			            opts[0].system_ref);
			rc = EXIT_BADINPUT;
		}
		pp_inputs *x = &inputs[i];
		in[i] = (pp_fit_input){&x->model, &x->system,     &x->job, &x->plan,
		                       x->gpus,   r->iteration_s, r->id};
	}
	if (!rc)
		rc = fit_and_write(path, &steps, in, opts[0].system_ref, output);
	pp_steps_clear(&steps);
	return rc;
}
