/*
 * Published training runs: loading.  The file is parsed here and its shape
 * checked (an object with a "records" array: anything else is an error of the
 * whole file).  Every field a record may have is type-checked here too, one
 * record at a time, when the record is read (ppi_run_check_record): a record
 * with a value of the wrong type is skipped alone, naming the field, and
 * runs.c then reads it without checking types again.  The pp_runs owns the
 * jansson tree; the records are borrowed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs_int.h"
#include "util/util.h"

/* ------------------------------------------------------------- loading */

/*
 * The type of every field this file reads.  A field may be absent or null
 * (unknown: a fill rule or a skip says what happens), but a value of another
 * type makes the record malformed: it is skipped with the field's path and
 * what was expected, never silently.  Parents come before their fields.
 */
typedef enum field_type {
	F_OBJECT,
	F_STRING,
	F_BOOL,
	F_COUNT,    /* a whole number >= 1 (1e3 written as a real is whole) */
	F_COUNT0,   /* a whole number >= 0 */
	F_POSITIVE, /* a number > 0 */
} field_type;

static const struct record_field {
	const char *parent; /* "" for the record itself */
	const char *key;
	field_type type;
	long long max; /* counts: largest value (NO_MAX: none) */
} record_fields[] = {
    {"", "id", F_STRING, NO_MAX},
    {"", "source", F_OBJECT, NO_MAX},
    {"", "hardware", F_OBJECT, NO_MAX},
    {"", "model", F_OBJECT, NO_MAX},
    {"", "batch", F_OBJECT, NO_MAX},
    {"", "parallelism", F_OBJECT, NO_MAX},
    {"", "measured", F_OBJECT, NO_MAX},
    {"", "precision", F_STRING, NO_MAX},
    {"source", "title", F_STRING, NO_MAX},
    {"hardware", "gpu_type", F_STRING, NO_MAX},
    {"hardware", "num_gpus", F_COUNT, GPUS_MAX},
    {"hardware", "inter_node_network", F_STRING, NO_MAX},
    {"hardware", "system", F_STRING, NO_MAX},
    {"model", "name", F_STRING, NO_MAX},
    {"model", "num_layers", F_COUNT, 10000},
    {"model", "hidden_size", F_COUNT, 1048576},
    {"model", "num_attention_heads", F_COUNT, 65536},
    {"model", "num_kv_heads", F_COUNT, 65536},
    {"model", "ffn_hidden_size", F_COUNT, 16777216},
    {"model", "vocab_size", F_COUNT, 100000000},
    {"model", "seq_length", F_COUNT, SEQ_MAX},
    {"model", "total_params_B", F_POSITIVE, NO_MAX},
    {"model", "arch_notes", F_STRING, NO_MAX},
    {"model", "moe", F_OBJECT, NO_MAX},
    {"model.moe", "num_experts", F_COUNT, INT_COUNT},
    {"model.moe", "top_k", F_COUNT, INT_COUNT},
    {"model.moe", "expert_ffn_hidden_size", F_COUNT, 16777216},
    {"model.moe", "num_shared_experts", F_COUNT0, INT_COUNT},
    {"model.moe", "dense_layers", F_COUNT0, 10000},
    {"batch", "global_batch_size", F_COUNT, GBS_MAX},
    {"batch", "global_batch_tokens", F_COUNT, NO_MAX},
    {"batch", "micro_batch_size", F_COUNT, DEGREE_MAX},
    {"batch", "grad_accum_steps", F_COUNT, GBS_MAX},
    {"batch", "local_batch_size", F_COUNT, GBS_MAX},
    {"parallelism", "tp", F_COUNT, DEGREE_MAX},
    {"parallelism", "pp", F_COUNT, DEGREE_MAX},
    {"parallelism", "dp", F_COUNT, GPUS_MAX},
    {"parallelism", "cp", F_COUNT, DEGREE_MAX},
    {"parallelism", "ep", F_COUNT, DEGREE_MAX},
    {"parallelism", "virtual_pipeline_size", F_COUNT, DEGREE_MAX},
    {"parallelism", "model_parallel_size", F_COUNT, GPUS_MAX},
    {"parallelism", "pipeline_schedule", F_STRING, NO_MAX},
    {"parallelism", "other", F_STRING, NO_MAX},
    {"parallelism", "zero_or_dist_optimizer", F_STRING, NO_MAX},
    {"parallelism", "activation_recompute", F_STRING, NO_MAX},
    {"parallelism", "sequence_parallel", F_BOOL, NO_MAX},
    {"measured", "tflops_per_gpu", F_POSITIVE, NO_MAX},
    {"measured", "tflops_definition", F_STRING, NO_MAX},
    {"measured", "mfu", F_POSITIVE, NO_MAX},
    {"measured", "hfu", F_POSITIVE, NO_MAX},
    {"measured", "tokens_per_s_per_gpu", F_POSITIVE, NO_MAX},
    {"measured", "iteration_time_s", F_POSITIVE, NO_MAX},
    {"measured", "peak_memory_GiB", F_POSITIVE, NO_MAX},
};

/* The object at a dotted path of `rec` ("model.moe"), NULL when absent. */
static json_t *at_path(json_t *rec, const char *path)
{
	char buf[64];
	ppi_strlcpy(buf, path, sizeof buf);
	json_t *v = rec;
	char *save = NULL;
	for (char *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
		v = json_is_object(v) ? json_object_get(v, k) : NULL;
	return json_is_object(v) ? v : NULL;
}

static bool whole(const json_t *v, double min, long long max)
{
	double d = json_number_value(v), hi = max ? (double)max : 9e15;
	if (json_is_integer(v))
		return (double)json_integer_value(v) >= min && (double)json_integer_value(v) <= hi;
	return json_is_real(v) && d == floor(d) && fabs(d) < 9e15 && d >= min && d <= hi;
}

static bool type_ok(const json_t *v, field_type t, long long max)
{
	switch (t) {
	case F_OBJECT: return json_is_object(v);
	case F_STRING: return json_is_string(v);
	case F_BOOL: return json_is_boolean(v);
	case F_COUNT: return whole(v, 1, max);
	case F_COUNT0: return whole(v, 0, max);
	case F_POSITIVE: return json_is_number(v) && json_number_value(v) > 0;
	}
	return false;
}

static const char *const type_words[] = {"an object",           "a string",
                                         "true, false",         "a whole number >= 1",
                                         "a whole number >= 0", "a number > 0"};

/* Record i an object, every field it has of its type (or null): else
 * PP_EINPUT naming the first field that is not ("malformed field
 * records[3].parallelism.tp: expected ..."), the field's path in err->field. */
pp_status ppi_run_check_record(const pp_runs *runs, size_t i, pp_error *err)
{
	json_t *rec = json_array_get(runs->records, i);
	char path[128], got[80];
	if (!json_is_object(rec)) {
		snprintf(path, sizeof path, "records[%zu]", i);
		ppi_json_repr(rec, got, sizeof got);
		return ppi_fail(err, runs->source, path,
		                "malformed record %s: expected a record (an object), got %s", path,
		                got);
	}
	for (size_t k = 0; k < sizeof record_fields / sizeof *record_fields; k++) {
		const struct record_field *f = &record_fields[k];
		json_t *parent = f->parent[0] ? at_path(rec, f->parent) : rec;
		json_t *v = parent ? json_object_get(parent, f->key) : NULL;
		if (!v || json_is_null(v) || type_ok(v, f->type, f->max))
			continue;
		snprintf(path, sizeof path, "records[%zu].%s%s%s", i, f->parent,
		         f->parent[0] ? "." : "", f->key);
		ppi_json_repr(v, got, sizeof got);
		if (f->max && (f->type == F_COUNT || f->type == F_COUNT0) &&
		    type_ok(v, f->type, NO_MAX))
			return ppi_fail(err, runs->source, path,
			                "malformed field %s: expected a whole number %d..%lld or "
			                "null, got %s",
			                path, f->type == F_COUNT, f->max, got);
		return ppi_fail(err, runs->source, path,
		                "malformed field %s: expected %s or null, got %s", path,
		                type_words[f->type], got);
	}
	return PP_OK;
}

pp_status pp_runs_from_json(const char *text, size_t len, const char *source, pp_runs **runs,
                            pp_error *err)
{
	*runs = NULL;
	json_t *root = NULL;
	pp_status st = ppi_json_parse_object(text, len, source, &root, err);
	if (st)
		return st;
	json_t *records = json_object_get(root, "records");
	if (!json_is_array(records)) {
		json_decref(root);
		return ppi_fail(err, source, "records", "expected an array of run records");
	}
	pp_runs *r = ppi_calloc(1, sizeof *r);
	if (!r) {
		json_decref(root);
		return PP_ENOMEM;
	}
	r->root = root;
	r->records = records;
	ppi_strlcpy(r->source, source ? source : "", sizeof r->source);
	*runs = r;
	return PP_OK;
}

pp_status pp_runs_load(const char *path, pp_runs **runs, pp_error *err)
{
	char *text = NULL;
	size_t len = 0;
	*runs = NULL;
	pp_status st = ppi_read_file(path, &text, &len, err);
	if (st)
		return st;
	st = pp_runs_from_json(text, len, path, runs, err);
	free(text);
	return st;
}

void pp_runs_free(pp_runs *runs)
{
	if (!runs)
		return;
	json_decref(runs->root);
	free(runs);
}

size_t pp_runs_count(const pp_runs *runs)
{
	return runs ? json_array_size(runs->records) : 0;
}

const char *pp_runs_id(const pp_runs *runs, size_t i)
{
	json_t *rec = runs ? json_array_get(runs->records, i) : NULL;
	const char *id = json_string_value(json_object_get(rec, "id"));
	return id ? id : "";
}

pp_status pp_runs_path(const char *data, const char *verb, char *path, size_t n, const char **file,
                       pp_error *err)
{
	*file = data ? data : path;
	if (data || pp_runs_default_path(path, n))
		return PP_OK;
	return ppi_fail(err, NULL, verb,
	                "no run records found: set PARAPLAN_SHARED_DIR or pass --data FILE");
}
