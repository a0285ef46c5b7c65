/*
 * Built-in presets: lookup by name or alias in the table embedded from data/.
 */
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "spec_int.h"

static const char *const kind_names[] = {"model", "GPU", "system", "framework", "overlap table"};
static const char *const kind_lists[] = {"models", "gpus", "systems", "frameworks", "overlaps"};

size_t pp_preset_count(pp_kind kind)
{
	size_t n = 0;
	for (size_t i = 0; i < ppi_preset_nfiles; i++)
		n += ppi_preset_files[i].kind == kind;
	return n;
}

const char *pp_preset_name(pp_kind kind, size_t i)
{
	for (size_t k = 0; k < ppi_preset_nfiles; k++)
		if (ppi_preset_files[k].kind == kind && i-- == 0)
			return ppi_preset_files[k].name;
	return NULL;
}

/* Does the '\n'-joined alias list contain `name`? */
static bool has_alias(const char *aliases, const char *name)
{
	size_t ln = strlen(name);
	for (const char *p = aliases; *p;) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == ln && strncasecmp(p, name, l) == 0)
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

pp_status ppi_preset_find(pp_kind kind, const char *name, const ppi_preset_file **out,
                          pp_error *err)
{
	for (size_t i = 0; i < ppi_preset_nfiles; i++) {
		const ppi_preset_file *f = &ppi_preset_files[i];
		if (f->kind == kind && (ppi_streq(f->name, name) || has_alias(f->aliases, name))) {
			*out = f;
			return PP_OK;
		}
	}
	ppi_suggest sg;
	ppi_suggest_init(&sg, name);
	for (size_t i = 0; i < ppi_preset_nfiles; i++)
		if (ppi_preset_files[i].kind == kind)
			ppi_suggest_add(&sg, ppi_preset_files[i].name);
	char near[200];
	const char *k = kind_names[kind];
	if (ppi_suggest_render(&sg, near, sizeof near))
		return ppi_fail(err, "", NULL,
		                "unknown %s '%s'; did you mean %s? (paraplan list %s)", k, name,
		                near, kind_lists[kind]);
	return ppi_fail(err, "", NULL, "unknown %s '%s' (paraplan list %s)", k, name,
	                kind_lists[kind]);
}

pp_status pp_preset_text(pp_kind kind, const char *name, const char **text, const char **path,
                         pp_error *err)
{
	const ppi_preset_file *f;
	PPI_TRY(ppi_preset_find(kind, name, &f, err));
	*text = f->text;
	*path = f->path;
	return PP_OK;
}

/*
 * Presets as parsed, kept for the life of the process.  An embedded preset is
 * a constant, so its struct is too; validate and the run-records reader ask
 * for the same system preset once per record, and parsing it again (with the
 * GPU and framework files a system reads) was half of fuzz_runs' time under
 * perf.  Static storage, filled under a lock: nothing is allocated, so there
 * is nothing to fail or free, and a preset read fails or succeeds as before.
 */
typedef union preset_value {
	pp_model model;
	pp_gpu gpu;
	pp_system system;
} preset_value;
static struct {
	bool done;
	preset_value v;
} preset_cache[PPI_PRESET_CACHE_MAX];
static pthread_mutex_t preset_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t preset_size(pp_kind kind)
{
	return kind == PP_KIND_MODEL ? sizeof(pp_model)
	       : kind == PP_KIND_GPU ? sizeof(pp_gpu)
	                             : sizeof(pp_system);
}

/* Parse the preset `name` of `kind` into the struct `out` points to. */
static pp_status preset_read(pp_kind kind, const char *name, void *out, pp_error *err)
{
	const ppi_preset_file *f;
	pp_status st = ppi_preset_find(kind, name, &f, err);
	if (st)
		return st;
	size_t slot = (size_t)(f - ppi_preset_files);
	bool cached = false;
	if (slot < PPI_PRESET_CACHE_MAX && kind != PP_KIND_FRAMEWORK) {
		pthread_mutex_lock(&preset_mu);
		if (preset_cache[slot].done) {
			memcpy(out, &preset_cache[slot].v, preset_size(kind));
			cached = true;
		}
		pthread_mutex_unlock(&preset_mu);
	}
	if (cached)
		return PP_OK;
	json_t *root;
	st = ppi_json_parse_object(f->text, strlen(f->text), f->path, &root, err);
	if (st) /* out of memory, or the build embedded a file that does not parse */
		return st == PP_ENOMEM ? st : PP_EINTERNAL;
	switch (kind) {
	case PP_KIND_MODEL: st = ppi_model_read(root, f->path, "", out, err); break;
	case PP_KIND_GPU: st = ppi_gpu_read(root, f->path, "", out, err); break;
	case PP_KIND_SYSTEM: st = ppi_system_read(root, f->path, "", out, err); break;
	default: st = PP_EINTERNAL; break;
	}
	json_decref(root);
	if (st == PP_OK && slot < PPI_PRESET_CACHE_MAX) {
		pthread_mutex_lock(&preset_mu);
		memcpy(&preset_cache[slot].v, out, preset_size(kind));
		preset_cache[slot].done = true;
		pthread_mutex_unlock(&preset_mu);
	}
	/* Presets are checked by the tests; a bad one is our bug, not the user's. */
	return st == PP_OK || st == PP_ENOMEM ? st : PP_EINTERNAL;
}

pp_status pp_model_preset(const char *name, pp_model *out, pp_error *err)
{
	return preset_read(PP_KIND_MODEL, name, out, err);
}

pp_status pp_gpu_preset(const char *name, pp_gpu *out, pp_error *err)
{
	return preset_read(PP_KIND_GPU, name, out, err);
}

pp_status pp_system_preset(const char *name, pp_system *out, pp_error *err)
{
	return preset_read(PP_KIND_SYSTEM, name, out, err);
}

static bool is_file(const char *ref)
{
	struct stat st;
	return stat(ref, &st) == 0;
}

pp_status pp_model_resolve(const char *ref, pp_model *out, pp_error *err)
{
	if (strcmp(ref, "-") == 0 || is_file(ref) || strchr(ref, '/') || strstr(ref, ".json"))
		return pp_model_load(ref, out, err);
	return pp_model_preset(ref, out, err);
}

pp_status pp_system_resolve(const char *ref, pp_system *out, pp_error *err)
{
	if (strcmp(ref, "-") == 0 || is_file(ref) || strchr(ref, '/') || strstr(ref, ".json"))
		return pp_system_load(ref, out, err);
	return pp_system_preset(ref, out, err);
}
