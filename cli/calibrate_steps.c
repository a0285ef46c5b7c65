/*
 * paraplan calibrate --step-times FILE [--output FILE]: fit the GPU's kernel
 * efficiencies (and the network efficiencies) to the user's own measured
 * seconds per iteration, one run per line of a small CSV ("seconds,estimate
 * flags") or JSON file ({"runs": [{"flags": "...", "iteration_s": s}]}), with
 * the fitter of `paraplan calibrate` (pp_fit_new_cases), and write the
 * calibrated system (its GPU inline) for `--system FILE`.
 */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "paraplan/calib.h"
#include "paraplan/nccl.h"
#include "paraplan/params.h"
#include "util/util.h"

int cli_calibrate_steps(const char *path, const char *output);

#define MAX_RUNS 256
#define MAX_ARGS 96
/* A measured iteration, in seconds: a microsecond to about 116 days. */
#define STEP_S_MIN 1e-6
#define STEP_S_MAX 1e7

typedef struct step_run {
	char id[64];
	char *flags; /* owned */
	double seconds;
	pp_model model;
	pp_system system;
	cli_opts o;
} step_run;

static void steps_usage(FILE *f)
{
	fprintf(f, "usage: paraplan calibrate --step-times FILE [--output FILE]\n");
}

/* The runs of a CSV file: "seconds,flags" per line; '#' comments, blank lines
 * and a header line ("iteration_s,flags") skipped. */
static int read_csv(const char *path, char *text, step_run *runs, size_t *n)
{
	int lineno = 0;
	char *next = text;
	while (next && *next) {
		char *line = next, *nl = strchr(next, '\n');
		if (nl)
			*nl = '\0';
		next = nl ? nl + 1 : NULL;
		lineno++;
		while (isspace((unsigned char)*line))
			line++;
		if (!*line || *line == '#' || strncmp(line, "iteration_s", 11) == 0)
			continue;
		char *comma = strchr(line, ',');
		if (!comma) {
			cli_message("%s:%d: expected 'seconds per iteration,estimate flags'", path,
			            lineno);
			return EXIT_BADINPUT;
		}
		size_t k = (size_t)(comma - line);
		while (k > 0 && isspace((unsigned char)line[k - 1]))
			k--;
		double s = 0;
		char why[160];
		if (!ppi_parse_double(line, k, STEP_S_MIN, STEP_S_MAX, &s, why, sizeof why)) {
			cli_message("%s:%d: seconds per iteration: %s", path, lineno, why);
			return EXIT_BADINPUT;
		}
		if (*n == MAX_RUNS) {
			cli_message("%s: at most %d runs", path, MAX_RUNS);
			return EXIT_BADINPUT;
		}
		step_run *r = &runs[(*n)++];
		snprintf(r->id, sizeof r->id, "line %d", lineno);
		r->seconds = s;
		r->flags = strdup(comma + 1);
		if (!r->flags)
			return EXIT_INTERNAL;
	}
	return 0;
}

static int read_json(const char *path, const char *text, step_run *runs, size_t *n)
{
	json_error_t je;
	json_t *root = json_loads(text, 0, &je);
	json_t *arr = root ? json_object_get(root, "runs") : NULL;
	if (!root) {
		cli_message("%s:%d:%d: invalid JSON: %s", path, je.line, je.column, je.text);
		return EXIT_BADINPUT;
	}
	if (!json_is_array(arr)) {
		cli_message("%s: runs: expected an array of {\"flags\", \"iteration_s\"}", path);
		json_decref(root);
		return EXIT_BADINPUT;
	}
	size_t i;
	json_t *v;
	json_array_foreach (arr, i, v) {
		const char *flags = json_string_value(json_object_get(v, "flags"));
		json_t *sv = json_object_get(v, "iteration_s");
		const char *id = json_string_value(json_object_get(v, "id"));
		if (!flags || !json_is_number(sv) || !(json_number_value(sv) >= STEP_S_MIN) ||
		    !(json_number_value(sv) <= STEP_S_MAX)) {
			cli_message("%s: runs[%zu]: expected \"flags\" (a string) and "
			            "\"iteration_s\" (%g to %g seconds)",
			            path, i, STEP_S_MIN, STEP_S_MAX);
			json_decref(root);
			return EXIT_BADINPUT;
		}
		if (*n == MAX_RUNS) {
			cli_message("%s: at most %d runs", path, MAX_RUNS);
			json_decref(root);
			return EXIT_BADINPUT;
		}
		step_run *r = &runs[(*n)++];
		if (id)
			snprintf(r->id, sizeof r->id, "%s", id);
		else
			snprintf(r->id, sizeof r->id, "runs[%zu]", i);
		r->seconds = json_number_value(sv);
		r->flags = strdup(flags);
		if (!r->flags) {
			json_decref(root);
			return EXIT_INTERNAL;
		}
	}
	json_decref(root);
	return 0;
}

/* Split the flags (whitespace; "double quotes" group) and read them as
 * `paraplan estimate` does. */
static int parse_run(step_run *r)
{
	static const struct option none[] = {{0, 0, 0, 0}};
	const cli_verb verb = {"calibrate", steps_usage, none, NULL, NULL, NULL};
	char *argv[MAX_ARGS];
	int argc = 0;
	argv[argc++] = "calibrate";
	char *p = r->flags;
	while (*p) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (argc == MAX_ARGS) {
			cli_message("%s: more than %d flags", r->id, MAX_ARGS);
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
	int rc = cli_opts_parse(argc, argv, &verb, &r->o);
	if (rc != CLI_CONTINUE)
		return rc;
	if ((rc = cli_opts_require(&r->o, "calibrate", true, true)))
		return rc;
	if ((rc = cli_opts_inputs(&r->o, &r->model, &r->system)))
		return rc;
	pp_estimate *e = malloc(sizeof *e);
	if (!e)
		return EXIT_INTERNAL;
	pp_error err;
	pp_error_clear(&err);
	pp_status st =
	    pp_estimate_run(&r->model, &r->system, &r->o.job, &r->o.plan, r->o.gpus, e, &err);
	free(e);
	return st ? cli_plan_fail(st, &err, &r->model) : 0;
}

static double round4(double x)
{
	if (!(x > 0))
		return x;
	double p = pow(10, floor(log10(x)) - 3);
	return round(x / p) * p;
}

/* The system of the runs with the fitted parameters the runs react to; the
 * GPU written inline so its efficiencies travel with it. */
static int write_system(const char *system_ref, const pp_system *fitted, const pp_param **used,
                        size_t nused, const char *note, const char *output)
{
	char *text;
	size_t len;
	pp_error err;
	pp_status st = pp_system_source_text(system_ref, &text, &len, &err);
	if (st)
		return cli_fail(st, &err);
	json_t *root = json_loadb(text, len, 0, NULL);
	free(text);
	if (!json_is_object(root)) {
		json_decref(root);
		cli_message("%s: cannot read the system's JSON", system_ref);
		return EXIT_BADINPUT;
	}
	json_t *gpu = json_object_get(root, "gpu");
	if (json_is_string(gpu)) {
		if ((st = pp_gpu_source_text(json_string_value(gpu), &text, &len, &err))) {
			json_decref(root);
			return cli_fail(st, &err);
		}
		gpu = json_loadb(text, len, 0, NULL);
		free(text);
		json_object_del(gpu, "aliases");
		json_object_set_new(root, "gpu", gpu);
	}
	json_t *eff = json_object_get(gpu, "efficiency");
	if (!json_is_object(eff)) {
		eff = json_object();
		json_object_set_new(gpu, "efficiency", eff);
	}
	json_t *fw = json_object_get(root, "framework");
	if (!json_is_object(fw)) {
		fw = json_object();
		json_object_set_new(root, "framework", fw);
	}
	json_t *src = json_object_get(root, "sources");
	if (!json_is_object(src)) {
		src = json_object();
		json_object_set_new(root, "sources", src);
	}
	json_t *gsrc = json_object_get(gpu, "sources");
	if (!json_is_object(gsrc)) {
		gsrc = json_object();
		json_object_set_new(gpu, "sources", gsrc);
	}
	for (size_t k = 0; k < nused; k++) {
		const pp_param *p = used[k];
		bool g = p->kind == PP_PARAM_GPU;
		json_object_set_new(g ? eff : fw, p->key,
		                    json_real(round4(pp_param_get(p, fitted))));
		json_object_set_new(g ? gsrc : src, p->name, json_string(note));
		if (g && json_object_get(eff, "source"))
			json_object_set_new(eff, "source", json_string(note));
	}
	char name[PP_NAME_MAX + 8];
	snprintf(name, sizeof name, "%s-steps", fitted->name);
	json_object_set_new(root, "name", json_string(name));
	json_object_del(root, "aliases");
	char *out =
	    json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (!out)
		return EXIT_INTERNAL;
	pp_system back;
	if ((st = pp_system_from_json(out, strlen(out), name, &back, &err))) {
		free(out);
		return cli_fail(st, &err);
	}
	cli_out o;
	int rc = cli_out_open(&o, output);
	if (rc == 0)
		rc = cli_out_close(&o, fprintf(o.f, "%s\n", out) >= 0);
	free(out);
	return rc;
}

int cli_calibrate_steps(const char *path, const char *output)
{
	pp_error err;
	pp_status st;
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		cli_message("%s: cannot open", path);
		return EXIT_BADINPUT;
	}
	size_t cap = 1 << 20;
	char *text = malloc(cap + 1);
	size_t len = text ? fread(text, 1, cap, fp) : 0;
	fclose(fp);
	if (!text)
		return EXIT_INTERNAL;
	text[len] = '\0';
	if (len == cap || strlen(text) != len) {
		free(text);
		cli_message("%s: not a small text file (at most 1 MiB, no NUL bytes)", path);
		return EXIT_BADINPUT;
	}
	static step_run runs[MAX_RUNS];
	size_t n = 0;
	const char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	int rc = *p == '{' ? read_json(path, text, runs, &n) : read_csv(path, text, runs, &n);
	free(text);
	if (!rc && n == 0) {
		cli_message("%s: no runs", path);
		rc = EXIT_BADINPUT;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		rc = parse_run(&runs[i]);
		if (!rc && strcmp(runs[i].o.system_ref, runs[0].o.system_ref) != 0) {
			cli_message("%s: %s: --system %s, but %s has --system %s: one system per "
			            "calibration",
			            path, runs[i].id, runs[i].o.system_ref, runs[0].id,
			            runs[0].o.system_ref);
			rc = EXIT_BADINPUT;
		}
	}
	pp_fit *f = NULL;
	static pp_fit_input in[MAX_RUNS];
	for (size_t i = 0; i < n && !rc; i++)
		in[i] =
		    (pp_fit_input){&runs[i].model, &runs[i].system, &runs[i].o.job, &runs[i].o.plan,
		                   runs[i].o.gpus, runs[i].seconds, runs[i].id};
	if (!rc && (st = pp_fit_new_cases(in, n, &f, &err)))
		rc = cli_fail(st, &err);
	if (!rc) {
		bool to_stdout = !output || strcmp(output, "-") == 0;
		FILE *rep = to_stdout ? stderr : stdout;
		double before[MAX_RUNS];
		for (size_t i = 0; i < n; i++)
			before[i] = pp_fit_error(f, i);
		do
			pp_fit_iterate(f);
		while (!pp_fit_test(f, 1e-4) && pp_fit_iterations(f) < 30);
		fprintf(rep, "%-16s %12s %14s %14s %8s\n", "run", "measured s", "neutral s",
		        "fitted s", "residual");
		for (size_t i = 0; i < n; i++) {
			double e = pp_fit_error(f, i);
			fprintf(rep, "%-16s %12.4g %14.4g %14.4g %+7.1f%%\n", runs[i].id,
			        runs[i].seconds, runs[i].seconds * (1 + before[i]),
			        runs[i].seconds * (1 + e), 100 * e);
		}
		fprintf(rep,
		        "MAPE %.1f%% at the neutral start -> %.1f%% fitted, %d sweeps, %zu runs\n",
		        100 * pp_fit_mape_start(f), 100 * pp_fit_mape(f), pp_fit_iterations(f), n);
		const pp_param *used[64];
		size_t nu = pp_fit_used(f, used, 64);
		pp_system fitted;
		pp_fit_result_system(f, &fitted);
		fprintf(rep, "fitted (the parameters the runs react to):");
		for (size_t k = 0; k < nu; k++)
			fprintf(rep, " %s %.3g", used[k]->key, pp_param_get(used[k], &fitted));
		fputc('\n', rep);
		if (n < nu)
			fprintf(rep,
			        "note: %zu runs for %zu parameters: many values fit them equally; "
			        "runs of other shapes (sizes, plans, GPU counts) pin them down\n",
			        n, nu);
		char note[512];
		const char *b = strrchr(path, '/');
		snprintf(note, sizeof note,
		         "fitted by 'paraplan calibrate --step-times %s': %zu measured runs, MAPE "
		         "%.1f%% at the neutral start, %.1f%% fitted (docs/calibration.md)",
		         b ? b + 1 : path, n, 100 * pp_fit_mape_start(f), 100 * pp_fit_mape(f));
		rc = write_system(runs[0].o.system_ref, &fitted, used, nu, note, output);
		if (!rc && !to_stdout)
			printf("wrote %s\n", output);
	}
	pp_fit_free(f);
	for (size_t i = 0; i < n; i++)
		free(runs[i].flags);
	return rc;
}
