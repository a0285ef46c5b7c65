/*
 * A user's measured step times (calibrate --step-times): the file's reader
 * (one run per line of a small CSV, "seconds,estimate flags", or a JSON
 * {"runs": [{"flags": "...", "iteration_s": s}]}) and the writer of the
 * calibrated system (its GPU inline, so its efficiencies travel with it).
 * The runs' flags are the caller's to read (the command line's own parser).
 */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/calib.h"
#include "paraplan/params.h"
#include "util/util.h"

static pp_status add_run(pp_steps *out, const char *source, const char *id, double seconds,
                         const char *flags, pp_error *err)
{
	if (out->n == PP_STEPS_MAX)
		return ppi_fail(err, source, NULL, "at most %d runs", PP_STEPS_MAX);
	pp_step_run *r = &out->run[out->n];
	snprintf(r->id, sizeof r->id, "%s", id);
	r->iteration_s = seconds;
	if (!(r->flags = ppi_strdup(flags)))
		return ppi_oom(err);
	out->n++;
	return PP_OK;
}

/* "seconds,flags" per line; '#' comments, blank lines and a header line
 * ("iteration_s,flags") skipped. */
static pp_status read_csv(const char *source, char *text, pp_steps *out, pp_error *err)
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
		char where[PP_ERROR_SOURCE_MAX], id[32];
		snprintf(where, sizeof where, "%s:%d", source, lineno);
		char *comma = strchr(line, ',');
		if (!comma)
			return ppi_fail(err, where, NULL,
			                "expected 'seconds per iteration,estimate flags'");
		size_t k = (size_t)(comma - line);
		while (k > 0 && isspace((unsigned char)line[k - 1]))
			k--;
		double s = 0;
		char why[160];
		if (!ppi_parse_double(line, k, PP_STEP_S_MIN, PP_STEP_S_MAX, &s, why, sizeof why))
			return ppi_fail(err, where, "seconds per iteration", "%s", why);
		snprintf(id, sizeof id, "line %d", lineno);
		pp_status st = add_run(out, source, id, s, comma + 1, err);
		if (st)
			return st;
	}
	return PP_OK;
}

static pp_status read_json(const char *source, const char *text, pp_steps *out, pp_error *err)
{
	/* ppi_json_parse_object: an allocation jansson's lexer could not make
	 * is out of memory, not a document with a character dropped. */
	json_t *root;
	pp_status st = ppi_json_parse_object(text, strlen(text), source, &root, err);
	if (st)
		return st;
	json_t *arr = json_object_get(root, "runs");
	if (!json_is_array(arr))
		st = ppi_fail(err, source, "runs",
		              "expected an array of {\"flags\", \"iteration_s\"}");
	size_t i;
	json_t *v;
	json_array_foreach (arr, i, v) {
		if (st)
			break;
		const char *flags = json_string_value(json_object_get(v, "flags"));
		json_t *sv = json_object_get(v, "iteration_s");
		const char *id = json_string_value(json_object_get(v, "id"));
		char name[PP_STEP_ID_MAX];
		snprintf(name, sizeof name, "runs[%zu]", i);
		if (!flags || !json_is_number(sv) || !(json_number_value(sv) >= PP_STEP_S_MIN) ||
		    !(json_number_value(sv) <= PP_STEP_S_MAX))
			st = ppi_fail(err, source, name,
			              "expected \"flags\" (a string) and \"iteration_s\" (%g to %g "
			              "seconds)",
			              PP_STEP_S_MIN, PP_STEP_S_MAX);
		else
			st =
			    add_run(out, source, id ? id : name, json_number_value(sv), flags, err);
	}
	json_decref(root);
	return st;
}

pp_status pp_steps_parse(char *text, const char *source, pp_steps *out, pp_error *err)
{
	const char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	return *p == '{' ? read_json(source, text, out, err) : read_csv(source, text, out, err);
}

pp_status pp_steps_load(const char *path, pp_steps *out, pp_error *err)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return ppi_fail(err, path, NULL, "cannot open");
	size_t cap = PP_STEPS_FILE_MAX;
	char *text = ppi_malloc(cap + 1);
	size_t len = text ? fread(text, 1, cap, fp) : 0;
	fclose(fp);
	if (!text)
		return ppi_oom(err);
	text[len] = '\0';
	if (len == cap || strlen(text) != len) {
		free(text);
		return ppi_fail(err, path, NULL,
		                "not a small text file (at most 1 MiB, no NUL bytes)");
	}
	pp_status st = pp_steps_parse(text, path, out, err);
	free(text);
	if (!st && out->n == 0)
		st = ppi_fail(err, path, NULL, "no runs");
	return st;
}

void pp_steps_clear(pp_steps *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->run[i].flags);
	s->n = 0;
}

/* Four significant digits: what a fit pins down, without the noise. */
static double round4(double x)
{
	if (!(x > 0))
		return x;
	double p = pow(10, floor(log10(x)) - 3);
	return round(x / p) * p;
}

/* The object `key` of `parent`, made (empty) when it is not one. */
static json_t *object_at(json_t *parent, const char *key)
{
	json_t *o = json_object_get(parent, key);
	if (!json_is_object(o)) {
		o = json_object();
		json_object_set_new(parent, key, o);
	}
	return o;
}

/* The system preset or file `system_ref` as JSON, its GPU inline. */
static pp_status system_inline(const char *system_ref, json_t **out, pp_error *err)
{
	char *text;
	size_t len;
	pp_status st = pp_system_source_text(system_ref, &text, &len, err);
	if (st)
		return st;
	/* read as every JSON input is (ppi_json_parse_object): jansson's lexer
	 * out of memory is out of memory, never a parsed document */
	json_t *root, *gpu;
	st = ppi_json_parse_object(text, len, system_ref, &root, err);
	free(text);
	if (st)
		return st;
	gpu = json_object_get(root, "gpu");
	if (json_is_string(gpu)) {
		const char *name = json_string_value(gpu);
		if (!(st = pp_gpu_source_text(name, &text, &len, err))) {
			st = ppi_json_parse_object(text, len, name, &gpu, err);
			free(text);
		}
		if (!st && (json_object_del(gpu, "aliases"), json_object_set_new(root, "gpu", gpu)))
			st = ppi_oom(err); /* set_new took gpu, freed on failure */
		if (st) {
			json_decref(root);
			return st;
		}
	}
	*out = root;
	return PP_OK;
}

pp_status pp_fit_system_json(const char *system_ref, const pp_system *fitted,
                             const pp_param *const *used, size_t nused, const char *note,
                             char **out, pp_error *err)
{
	*out = NULL;
	json_t *root;
	pp_status st = system_inline(system_ref, &root, err);
	if (st)
		return st;
	json_t *gpu = json_object_get(root, "gpu");
	json_t *eff = object_at(gpu, "efficiency");
	json_t *fw = object_at(root, "framework");
	json_t *src = object_at(root, "sources");
	json_t *gsrc = object_at(gpu, "sources");
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
	char *text =
	    json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (!text)
		return ppi_oom(err);
	pp_system back; /* what it says must read back as a system */
	if ((st = pp_system_from_json(text, strlen(text), name, &back, err))) {
		free(text);
		return st;
	}
	*out = text;
	return PP_OK;
}

size_t pp_step_words(char *flags, char **words, size_t max)
{
	size_t n = 0;
	char *p = flags;
	while (*p) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		bool quoted = *p == '"';
		char *w = quoted ? ++p : p;
		while (*p && (quoted ? *p != '"' : !isspace((unsigned char)*p)))
			p++;
		if (*p)
			*p++ = '\0';
		if (n < max)
			words[n] = w;
		n++;
	}
	return n;
}
