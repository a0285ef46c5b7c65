/*
 * A recipe file into a pp_recipe (include/paraplan/recipe.h): the model and
 * system resolved as --model and --system are, the job's and plan's fields
 * through the field registry (fields.h: the same names and checks as the
 * command line's flags), each phase's tokens, sequence and batch ramp.  Every
 * error names file:line:col of the key it is about (recipe_int.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/fields.h"
#include "paraplan/inputs.h"
#include "paraplan/recipe.h"
#include "recipe/recipe_int.h"
#include "util/util.h"

static const char *const top_keys[] = {"name",   "description",      "model",   "system",
                                       "gpus",   "usd_per_gpu_hour", "job",     "plan",
                                       "phases", "reported",         "sources", NULL};
static const char *const phase_keys[] = {"name", "tokens", "seq",    "gbs",
                                         "plan", "gpus",   "source", NULL};
static const char *const ramp_keys[] = {"start", "end", "step", "over_tokens", NULL};
static const char *const reported_keys[] = {"name", "first", "last", "gpu_hours", "source", NULL};

#define GPUS_MAX 10000000LL
#define GBS_MAX 1000000000LL
#define SEQ_MAX 100000000LL

/* A JSON scalar as the command line would write it, for pp_field_set. */
static bool scalar_text(const json_t *v, char *buf, size_t n)
{
	if (json_is_string(v))
		snprintf(buf, n, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, n, "%.17g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, n, "%s", json_is_true(v) ? "on" : "off");
	else
		return false;
	return true;
}

/*
 * The registry fields of object `obj` (at `prefix`) into `job` or `plan`:
 * plan fields when `in_plan`, else job fields other than gbs, seq and
 * tokens (a phase's own).
 */
static pp_status read_fields(json_t *obj, const char *prefix, bool in_plan, pp_job *job,
                             pp_plan *plan, const char *src, pp_error *err)
{
	const char *key;
	json_t *v;
	json_object_foreach (obj, key, v) {
		const pp_field *f = pp_field_find(key);
		char path[PP_ERROR_FIELD_MAX], text[256];
		snprintf(path, sizeof path, "%s.%s", prefix, key);
		bool phase_own =
		    f && !f->in_plan &&
		    (!strcmp(key, "gbs") || !strcmp(key, "seq") || !strcmp(key, "tokens"));
		if (!f || f->in_plan != in_plan || phase_own) {
			ppi_suggest sg;
			ppi_suggest_init(&sg, key);
			for (size_t i = 0; pp_field_at(i); i++)
				if (pp_field_at(i)->in_plan == in_plan)
					ppi_suggest_add(&sg, pp_field_at(i)->name);
			char near[200];
			if (phase_own)
				return ppi_fail(err, src, path,
				                "unknown key (%s is a phase's own key)", key);
			if (ppi_suggest_render(&sg, near, sizeof near))
				return ppi_fail(err, src, path, "unknown key; did you mean %s?",
				                near);
			return ppi_fail(err, src, path, "unknown key");
		}
		if (!scalar_text(v, text, sizeof text)) {
			char got[80];
			ppi_json_repr(v, got, sizeof got);
			return ppi_fail(err, src, path,
			                "expected a number, word or true/false, got %s", got);
		}
		pp_status st = pp_field_set(job, plan, key, text, err);
		if (st) {
			char why[PP_ERROR_TEXT_MAX];
			ppi_strlcpy(why, err->text, sizeof why);
			return st == PP_EINPUT ? ppi_fail(err, src, path, "%s", why) : st;
		}
	}
	return PP_OK;
}

/* A token count: a number, or a string the command line's --tokens takes ("14.8T"). */
static pp_status read_tokens(const ppi_obj *r, const char *key, bool required, double *out)
{
	json_t *v = json_object_get(r->obj, key);
	char path[PP_ERROR_FIELD_MAX], text[128];
	ppi_obj_path(r, key, path, sizeof path);
	if (!v || json_is_null(v))
		return required ? ppi_fail(r->err, r->source, path, "missing required key") : PP_OK;
	pp_job j;
	pp_plan p;
	pp_job_init(&j);
	pp_plan_init(&p);
	if (!(json_is_number(v) || json_is_string(v)) || !scalar_text(v, text, sizeof text)) {
		char got[80];
		ppi_json_repr(v, got, sizeof got);
		return ppi_fail(r->err, r->source, path, "expected a token count, got %s", got);
	}
	pp_status st = pp_field_set(&j, &p, "tokens", text, r->err);
	if (st) {
		char why[PP_ERROR_TEXT_MAX];
		ppi_strlcpy(why, r->err->text, sizeof why);
		return st == PP_EINPUT ? ppi_fail(r->err, r->source, path, "%s", why) : st;
	}
	if (!(j.train_tokens > 0))
		return ppi_fail(r->err, r->source, path, "a phase needs tokens above 0, got %s",
		                text);
	*out = j.train_tokens;
	return PP_OK;
}

/* The phase's "gbs": a batch, or a ramp {start, end, step, over_tokens}. */
static pp_status read_ramp(const ppi_obj *ph, pp_recipe_phase *p)
{
	char path[PP_ERROR_FIELD_MAX];
	ppi_obj_path(ph, "gbs", path, sizeof path);
	json_t *g = json_object_get(ph->obj, "gbs");
	if (g && json_is_object(g)) {
		ppi_obj r = {g, ph->source, path, ph->err};
		PPI_TRY(ppi_obj_keys(&r, ramp_keys));
		PPI_TRY(ppi_get_int(&r, "start", true, 1, GBS_MAX, &p->gbs.start));
		PPI_TRY(ppi_get_int(&r, "end", true, 1, GBS_MAX, &p->gbs.end));
		PPI_TRY(ppi_get_int(&r, "step", false, 1, GBS_MAX, &p->gbs.step));
		char end_path[PP_ERROR_FIELD_MAX];
		ppi_obj_path(&r, "end", end_path, sizeof end_path);
		if (p->gbs.end < p->gbs.start)
			return ppi_fail(
			    ph->err, ph->source, end_path,
			    "the ramp ends at %d, below its start %d (a batch ramp only "
			    "grows)",
			    p->gbs.end, p->gbs.start);
		PPI_TRY(
		    read_tokens(&r, "over_tokens", p->gbs.end > p->gbs.start, &p->gbs.over_tokens));
		if (p->gbs.over_tokens > p->tokens) {
			ppi_obj_path(&r, "over_tokens", end_path, sizeof end_path);
			return ppi_fail(ph->err, ph->source, end_path,
			                "the ramp's %.4g tokens exceed the phase's %.4g",
			                p->gbs.over_tokens, p->tokens);
		}
		if (p->gbs.step && (p->gbs.end - p->gbs.start) % p->gbs.step) {
			ppi_obj_path(&r, "step", end_path, sizeof end_path);
			return ppi_fail(ph->err, ph->source, end_path,
			                "%d does not divide end - start = %d", p->gbs.step,
			                p->gbs.end - p->gbs.start);
		}
		return PP_OK;
	}
	PPI_TRY(ppi_get_int(ph, "gbs", true, 1, GBS_MAX, &p->gbs.start));
	p->gbs.end = p->gbs.start;
	return PP_OK;
}

static pp_status read_phase(pp_recipe *rc, json_t *o, int i, const pp_plan *base, long long gpus,
                            const char *text, size_t len, pp_error *err)
{
	char prefix[32];
	snprintf(prefix, sizeof prefix, "phases[%d]", i);
	if (!json_is_object(o))
		return ppi_fail(err, rc->path, prefix, "expected an object");
	ppi_obj ph = {o, rc->path, prefix, err};
	pp_recipe_phase *p = &rc->phases[i];
	memset(p, 0, sizeof *p);
	PPI_TRY(ppi_obj_keys(&ph, phase_keys));
	snprintf(p->name, sizeof p->name, "phase %d", i + 1);
	PPI_TRY(ppi_get_str(&ph, "name", false, p->name, sizeof p->name));
	for (int k = 0; k < i; k++)
		if (strcmp(rc->phases[k].name, p->name) == 0) {
			char path[PP_ERROR_FIELD_MAX];
			return ppi_fail(err, rc->path, ppi_obj_path(&ph, "name", path, sizeof path),
			                "'%s' names phase %d already (reported groups name phases)",
			                p->name, k + 1);
		}
	PPI_TRY(ppi_get_str(&ph, "source", false, p->source, sizeof p->source));
	PPI_TRY(read_tokens(&ph, "tokens", true, &p->tokens));
	PPI_TRY(ppi_get_int(&ph, "seq", true, 1, SEQ_MAX, &p->seq));
	PPI_TRY(read_ramp(&ph, p));
	p->gpus = gpus;
	PPI_TRY(ppi_get_ll(&ph, "gpus", gpus == 0, 1, GPUS_MAX, &p->gpus));
	p->plan = *base;
	json_t *pl = json_object_get(o, "plan");
	char path[PP_ERROR_FIELD_MAX];
	snprintf(path, sizeof path, "%s.plan", prefix);
	if (pl && json_is_string(pl) && strcmp(json_string_value(pl), "search") == 0)
		p->search = true;
	else if (pl && json_is_object(pl))
		PPI_TRY(read_fields(pl, path, true, &rc->job, &p->plan, rc->path, err));
	else if (pl && !json_is_null(pl))
		return ppi_fail(err, rc->path, path,
		                "expected an object of plan fields or \"search\"");
	ppi_json_locate(text, len, prefix, &p->line, &p->column);
	return PP_OK;
}

/* The index of the phase named by key `key` of `r` into *out (untouched when absent). */
static pp_status phase_index(const pp_recipe *rc, const ppi_obj *r, const char *key, int *out)
{
	char name[PP_RECIPE_NAME_MAX] = "", path[PP_ERROR_FIELD_MAX];
	PPI_TRY(ppi_get_str(r, key, false, name, sizeof name));
	if (!name[0])
		return PP_OK;
	for (int i = 0; i < rc->nphases; i++)
		if (strcmp(rc->phases[i].name, name) == 0) {
			*out = i;
			return PP_OK;
		}
	return ppi_fail(r->err, rc->path, ppi_obj_path(r, key, path, sizeof path),
	                "'%s' is the name of no phase of the recipe", name);
}

static pp_status read_reported(pp_recipe *rc, json_t *arr, pp_error *err)
{
	if (!json_is_array(arr) || json_array_size(arr) > PP_RECIPE_MAX_REPORTED)
		return ppi_fail(err, rc->path, "reported", "expected an array of at most %d groups",
		                PP_RECIPE_MAX_REPORTED);
	for (size_t i = 0; i < json_array_size(arr); i++) {
		char prefix[32], path[PP_ERROR_FIELD_MAX];
		snprintf(prefix, sizeof prefix, "reported[%zu]", i);
		json_t *o = json_array_get(arr, i);
		if (!json_is_object(o))
			return ppi_fail(err, rc->path, prefix, "expected an object");
		ppi_obj r = {o, rc->path, prefix, err};
		pp_recipe_reported *g = &rc->reported[rc->nreported++];
		PPI_TRY(ppi_obj_keys(&r, reported_keys));
		PPI_TRY(ppi_get_str(&r, "name", true, g->name, sizeof g->name));
		PPI_TRY(ppi_get_str(&r, "source", true, g->source, sizeof g->source));
		PPI_TRY(ppi_get_num(&r, "gpu_hours", true, 0, 1e12, &g->gpu_hours));
		g->first = -1;
		g->last = -1;
		PPI_TRY(phase_index(rc, &r, "first", &g->first));
		PPI_TRY(phase_index(rc, &r, "last", &g->last));
		snprintf(path, sizeof path, "%s.last", prefix);
		if (g->first < 0 && g->last >= 0)
			return ppi_fail(err, rc->path, path, "a last phase needs a first");
		if (g->first >= 0 && g->last < 0)
			g->last = g->first;
		if (g->last < g->first)
			return ppi_fail(err, rc->path, path,
			                "the last phase comes before the first");
		if (g->first < 0) { /* none of the recipe's phases */
			g->first = 0;
			g->last = -1;
		}
	}
	return PP_OK;
}

/* The model and system, resolved as the command line resolves --model and --system. */
static pp_status read_inputs(pp_recipe *rc, const ppi_obj *r, double usd, pp_error *err)
{
	char model[PP_ERROR_SOURCE_MAX], system[PP_ERROR_SOURCE_MAX];
	PPI_TRY(ppi_get_str(r, "model", true, model, sizeof model));
	PPI_TRY(ppi_get_str(r, "system", true, system, sizeof system));
	pp_input_refs refs = {.model_ref = model, .system_ref = system, .usd_per_gpu_hour = usd};
	pp_inputs in;
	pp_inputs_part part;
	pp_job_init(&in.job);
	pp_plan_init(&in.plan);
	in.gpus = 0;
	pp_status st = pp_inputs_resolve(&refs, &in, &part, err);
	if (st == PP_EINPUT && !err->source[0]) {
		char why[PP_ERROR_TEXT_MAX];
		ppi_strlcpy(why, err->text, sizeof why);
		return ppi_fail(err, rc->path, part == PP_INPUTS_MODEL ? "model" : "system", "%s",
		                why);
	}
	if (st)
		return st;
	rc->model = in.model;
	rc->system = in.system;
	return PP_OK;
}

static pp_status read_recipe(json_t *root, pp_recipe *rc, const char *text, size_t len,
                             pp_error *err)
{
	ppi_obj r = {root, rc->path, "", err};
	PPI_TRY(ppi_obj_keys(&r, top_keys));
	PPI_TRY(ppi_get_str(&r, "name", true, rc->name, sizeof rc->name));
	PPI_TRY(ppi_get_str(&r, "description", false, rc->description, sizeof rc->description));
	double usd = -1;
	PPI_TRY(ppi_get_num(&r, "usd_per_gpu_hour", false, 0, 1e6, &usd));
	PPI_TRY(read_inputs(rc, &r, usd, err));
	long long gpus = 0;
	PPI_TRY(ppi_get_ll(&r, "gpus", false, 1, GPUS_MAX, &gpus));
	pp_job_init(&rc->job);
	pp_plan plan;
	pp_plan_init(&plan);
	json_t *o;
	PPI_TRY(ppi_get_obj(&r, "sources", false, &o));
	PPI_TRY(ppi_get_obj(&r, "job", false, &o));
	if (o)
		PPI_TRY(read_fields(o, "job", false, &rc->job, &plan, rc->path, err));
	PPI_TRY(ppi_get_obj(&r, "plan", false, &o));
	if (o)
		PPI_TRY(read_fields(o, "plan", true, &rc->job, &plan, rc->path, err));
	json_t *ph = json_object_get(root, "phases");
	if (!ph || !json_is_array(ph) || json_array_size(ph) == 0 ||
	    json_array_size(ph) > PP_RECIPE_MAX_PHASES)
		return ppi_fail(err, rc->path, "phases", "expected an array of 1 to %d phases",
		                PP_RECIPE_MAX_PHASES);
	for (size_t i = 0; i < json_array_size(ph); i++) {
		PPI_TRY(read_phase(rc, json_array_get(ph, i), (int)i, &plan, gpus, text, len, err));
		rc->nphases = (int)i + 1;
	}
	json_t *rep = json_object_get(root, "reported");
	return rep ? read_reported(rc, rep, err) : PP_OK;
}

pp_status pp_recipe_from_json(const char *text, size_t len, const char *source, pp_recipe *out,
                              pp_error *err)
{
	memset(out, 0, sizeof *out);
	ppi_strlcpy(out->path, source, sizeof out->path);
	pp_goodput_params_init(&out->goodput);
	json_t *root;
	PPI_TRY(ppi_json_parse_object(text, len, out->path, &root, err));
	pp_status st = read_recipe(root, out, text, len, err);
	json_decref(root);
	/* A semantic error of this text names its field: place it. */
	if (st == PP_EINPUT && err && err->line == 0 && err->field[0] &&
	    strcmp(err->source, out->path) == 0)
		ppi_json_locate(text, len, err->field, &err->line, &err->column);
	return st;
}

pp_status pp_recipe_read(const char *path, pp_recipe *out, pp_error *err)
{
	char *text;
	size_t len;
	memset(out, 0, sizeof *out);
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_recipe_from_json(text, len, path, out, err);
	free(text);
	return st;
}
