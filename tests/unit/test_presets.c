/*
 * Built-in presets (data/): every one loads, model sizes match what the models
 * are known by, the names the interface promises exist, and every number in
 * every data file cites a source.
 */
#include <glob.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <jansson.h>

#include "paraplan/paraplan.h"

/* ------------------------------------------------------------- models */

/*
 * Models whose published size is a rounded label rather than a count: the
 * tolerance is widened for them only, with the reason.  Everything else must
 * be within 1%.
 */
static const struct {
	const char *name;
	double tolerance;
	const char *why;
} loose_labels[] = {
    /* SC'21 Table 1 rounds to 0.1B: its own formula gives 1.65B and 3.56B. */
    {"gpt-1.7b", 0.03, "SC'21 Table 1 rounds 1.65B to 1.7B"},
    {"gpt-3.6b", 0.015, "SC'21 Table 1 rounds 3.56B to 3.6B"},
    {"configtuner-gpt-1.5b", 0.05, "seed 000 labels the 1.56B GPT-2 XL shape 1.5B"},
    {"configtuner-gpt-3b", 0.12, "seed 000 labels a 2.70B shape 3B"},
    /* Seed 002 Tables 3 and 5 label layer-trimmed models by about their
     * transformer layers (24.0B, 38.2B, 65.1B); the 128256-token embedding and
     * head add 2.1B (4.2B at hidden 16384). */
    {"dhelix-llama-25b", 0.05, "seed 002 Table 3 labels 24.0B of layers + 2.1B embeddings 25B"},
    {"dhelix-llama-39b", 0.09, "seed 002 Table 3 labels 38.2B of layers + 4.2B embeddings 39B"},
    {"dhelix-llama-66b", 0.02, "seed 002 Table 3 labels 65.1B of layers + 2.1B embeddings 66B"},
    {"dhelix-phi-31b", 0.02, "seed 002 Table 5 rounds 31.5B to 31B"},
};

static double tolerance_of(const char *name)
{
	for (size_t i = 0; i < sizeof loose_labels / sizeof loose_labels[0]; i++)
		if (strcmp(loose_labels[i].name, name) == 0)
			return loose_labels[i].tolerance;
	return 0.01;
}

static void test_models_load_and_match_published_size(void **state)
{
	(void)state;
	size_t n = pp_preset_count(PP_KIND_MODEL);
	assert_true(n >= 29);
	int bad = 0;
	print_message("%-22s %16s %16s %8s\n", "model", "counted", "published", "error");
	for (size_t i = 0; i < n; i++) {
		const char *name = pp_preset_name(PP_KIND_MODEL, i);
		assert_non_null(name);
		pp_model m;
		pp_error err;
		memset(&err, 0, sizeof err);
		pp_status st = pp_model_preset(name, &m, &err);
		if (st != PP_OK) {
			print_error("model %s does not load: %s: %s: %s\n", name, err.source,
			            err.field, err.text);
			bad++;
			continue;
		}
		assert_string_equal(m.name, name);
		if (!(m.published_params > 0)) {
			print_error("model %s has no published_params\n", name);
			bad++;
			continue;
		}
		/* deepseek-v3's preset is the main model; its published 671B excludes
		 * the 14B MTP module too, so the two compare directly. */
		pp_param_count pc;
		pp_model_params(&m, &pc);
		double rel = pc.total / m.published_params - 1.0;
		double tol = tolerance_of(name);
		print_message("%-22s %16.0f %16.0f %+7.2f%%%s\n", name, pc.total,
		              m.published_params, 100.0 * rel, fabs(rel) > tol ? "  <-- off" : "");
		if (!(fabs(rel) <= tol)) {
			print_error("model %s: counted %.4g parameters, published %.4g (%+.2f%%, "
			            "tolerance %.0f%%)\n",
			            name, pc.total, m.published_params, 100.0 * rel, 100.0 * tol);
			bad++;
		}
		assert_true(pc.active > 0 && pc.active <= pc.total);
	}
	assert_int_equal(bad, 0);
}

/* Active parameters of the MoE presets against their model cards. */
static void test_moe_active_params(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		double active;
	} want[] = {
	    {"mixtral-8x7b", 12.9e9},  /* Mixtral paper: 13B active */
	    {"mixtral-8x22b", 39e9},   /* Mistral: 39B active */
	    {"deepseek-v3", 37e9},     /* DeepSeek-V3 report: 37B activated */
	    {"qwen3-30b-a3b", 3.3e9},  /* Qwen3 card: 3.3B activated */
	    {"qwen3-235b-a22b", 22e9}, /* Qwen3 card: 22B activated */
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		pp_model m;
		pp_error err;
		assert_int_equal(pp_model_preset(want[i].name, &m, &err), PP_OK);
		pp_param_count pc;
		pp_model_params(&m, &pc);
		double rel = pc.active / want[i].active - 1.0;
		if (fabs(rel) > 0.03)
			print_error("%s: %.4g active, card says %.4g\n", want[i].name, pc.active,
			            want[i].active);
		assert_true(fabs(rel) <= 0.03);
	}
}

/* ------------------------------------------------------ hardware presets */

static void test_gpus_and_systems_load(void **state)
{
	(void)state;
	size_t ng = pp_preset_count(PP_KIND_GPU), ns = pp_preset_count(PP_KIND_SYSTEM);
	assert_true(ng >= 12);
	assert_true(ns >= 12);
	int bad = 0;
	for (size_t i = 0; i < ng; i++) {
		const char *name = pp_preset_name(PP_KIND_GPU, i);
		pp_gpu g;
		pp_error err;
		memset(&err, 0, sizeof err);
		if (pp_gpu_preset(name, &g, &err) != PP_OK || pp_gpu_check(&g, &err) != PP_OK) {
			print_error("GPU %s: %s: %s: %s\n", name, err.source, err.field, err.text);
			bad++;
			continue;
		}
		assert_string_equal(g.name, name);
		/* Dense peaks never exceed what the next narrower type reaches. */
		assert_true(g.bf16_flops <= g.fp16_flops * 1.0001 || g.fp16_flops == 0);
		assert_true(g.fp8_flops == 0 || g.fp8_flops >= g.bf16_flops);
		assert_true(g.cuda_context_bytes < 2.0 * 1073741824.0);
	}
	for (size_t i = 0; i < ns; i++) {
		const char *name = pp_preset_name(PP_KIND_SYSTEM, i);
		pp_system s;
		pp_error err;
		memset(&err, 0, sizeof err);
		if (pp_system_preset(name, &s, &err) != PP_OK ||
		    pp_system_check(&s, &err) != PP_OK) {
			print_error("system %s: %s: %s: %s\n", name, err.source, err.field,
			            err.text);
			bad++;
			continue;
		}
		assert_string_equal(s.name, name);
		assert_true(s.nic_bytes_per_s > 0 && s.nics_per_node > 0);
		assert_true(s.nvlink_latency_s > 0 && s.nic_latency_s > 0);
	}
	assert_int_equal(bad, 0);

	pp_system s;
	pp_error err;
	assert_int_equal(pp_system_preset("gb200-nvl72", &s, &err), PP_OK);
	assert_int_equal(s.nvlink_domain, 72);
	assert_int_equal(s.gpus_per_node, 4);
	assert_int_equal(pp_system_preset("dgx-a100-40g", &s, &err), PP_OK);
	assert_true(s.gpu.memory_bytes < 50e9);
	assert_int_equal(pp_system_preset("dgx-a100-80g", &s, &err), PP_OK);
	assert_true(s.gpu.memory_bytes > 80e9);
	pp_gpu g;
	assert_int_equal(pp_gpu_preset("v100-sxm2-32g", &g, &err), PP_OK);
	assert_true(g.bf16_flops == 0);
}

/* --------------------------------------------------- names promised */

static void test_required_names(void **state)
{
	(void)state;
	static const char *const models[] = {
	    "gpt3-175b", "gpt3-1t", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b",
	    "llama3.1-405b", "mixtral-8x7b", "deepseek-v3",
	    /* the rest of the preset list */
	    "gpt-1.7b", "gpt-3.6b", "gpt-7.5b", "gpt-18.4b", "gpt-39.1b", "gpt-76.1b", "gpt-145.6b",
	    "gpt-310.1b", "gpt-529.6b", "gpt-1t", "vit-lbnl", "bloom-176b", "llama2-7b",
	    "llama3.1-8b", "llama3.1-70b", "mixtral-8x22b", "qwen3-30b-a3b", "qwen3-235b-a22b",
	    /* aliases: HF ids and public-runs.json names */
	    "meta-llama/Meta-Llama-3-70B", "Llama 3.1 405B", "GPT-3 175B (174.6B)", "gpt-39b",
	    "gpt-145b", "deepseek-ai/DeepSeek-V3"};
	static const char *const systems[] = {"dgx-a100-40g", "dgx-a100-80g",      "dgx-h100",
	                                      "dgx-h200",     "dgx-b200",          "gb200-nvl72",
	                                      "hgx-h800",     "lbnl-a100",         "lbnl-h200",
	                                      "lbnl-b200",    "configtuner-hopper"};
	static const char *const gpus[] = {
	    "v100-sxm2-32g", "a100-40g",  "a100-80g",       "a800-80g",      "a40",
	    "h100-sxm",      "h100-pcie", "h800",           "h200",          "b200",
	    "gb200",         "mi300x",    "A100-SXM4-80GB", "H100-SXM5-80GB"};
	pp_error err;
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		pp_model m;
		if (pp_model_preset(models[i], &m, &err) != PP_OK)
			print_error("model %s: %s\n", models[i], err.text);
		assert_int_equal(pp_model_preset(models[i], &m, &err), PP_OK);
	}
	for (size_t i = 0; i < sizeof systems / sizeof systems[0]; i++) {
		pp_system s;
		if (pp_system_preset(systems[i], &s, &err) != PP_OK)
			print_error("system %s: %s\n", systems[i], err.text);
		assert_int_equal(pp_system_preset(systems[i], &s, &err), PP_OK);
	}
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
		pp_gpu g;
		if (pp_gpu_preset(gpus[i], &g, &err) != PP_OK)
			print_error("GPU %s: %s\n", gpus[i], err.text);
		assert_int_equal(pp_gpu_preset(gpus[i], &g, &err), PP_OK);
	}
	/* llama3.1-70b is its own file now, not an alias of llama3-70b. */
	pp_model m;
	assert_int_equal(pp_model_preset("llama3.1-70b", &m, &err), PP_OK);
	assert_string_equal(m.name, "llama3.1-70b");
}

/* ------------------------------------------------ every number is sourced */

static int problems;

static void problem(const char *path, const char *fmt, ...)
{
	va_list ap;
	char msg[512];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	print_error("%s: %s\n", path, msg);
	problems++;
}

static int has_text(json_t *obj, const char *key)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;
	return v && json_is_string(v) && json_string_length(v) > 0;
}

/* Is `key` of the object at `prefix` ("" or "moe.") cited by `root`? */
static int cited(json_t *root, const char *prefix, const char *key)
{
	if (has_text(root, "source"))
		return 1;
	json_t *sources = json_object_get(root, "sources");
	if (!json_is_object(sources))
		return 0;
	char full[128];
	snprintf(full, sizeof full, "%s%s", prefix, key);
	if (has_text(sources, full))
		return 1;
	if (prefix[0]) { /* "moe" covers every field of moe */
		char whole[64];
		snprintf(whole, sizeof whole, "%.*s", (int)strlen(prefix) - 1, prefix);
		if (has_text(sources, whole))
			return 1;
	}
	return 0;
}

static int is_value(json_t *v)
{
	return json_is_number(v) || json_is_boolean(v);
}

/* Check the fields of `obj`, a nested object at `prefix` of `root`. */
static void check_object(const char *path, json_t *root, json_t *obj, const char *prefix)
{
	const char *key;
	json_t *v;
	json_object_foreach (obj, key, v) {
		if (is_value(v)) {
			/* A nested object may carry its own citations (an inline GPU). */
			if (!cited(root, prefix, key) && !(prefix[0] && cited(obj, "", key))) {
				char val[32];
				if (json_is_boolean(v))
					snprintf(val, sizeof val, "%s",
					         json_is_true(v) ? "true" : "false");
				else
					snprintf(val, sizeof val, "%g", json_number_value(v));
				problem(path, "%s%s = %s has no source", prefix, key, val);
			}
		} else if (json_is_object(v) && strcmp(key, "sources") != 0 && !prefix[0]) {
			char sub[64];
			snprintf(sub, sizeof sub, "%s.", key);
			check_object(path, root, v, sub);
		} else if (json_is_array(v) && strcmp(key, "aliases") != 0 && !prefix[0] &&
		           json_array_size(v) > 0 && json_is_object(json_array_get(v, 0))) {
			/* rows of objects (an overlap table's by_tp): each row's
			 * numbers cited as fields of the array's name */
			char sub[64];
			snprintf(sub, sizeof sub, "%s.", key);
			size_t i;
			json_t *row;
			json_array_foreach (v, i, row) {
				if (!json_is_object(row))
					problem(path, "%s[%zu] is not an object", key, i);
				else
					check_object(path, root, row, sub);
			}
		} else if (json_is_array(v) && strcmp(key, "aliases") != 0) {
			problem(path, "unexpected array %s%s", prefix, key);
		}
	}
}

/* Every key of "sources" names a field that exists (no stale citations). */
static void check_sources_keys(const char *path, json_t *root)
{
	json_t *sources = json_object_get(root, "sources");
	if (!sources)
		return;
	if (!json_is_object(sources)) {
		problem(path, "\"sources\" must be an object");
		return;
	}
	const char *key;
	json_t *v;
	json_object_foreach (sources, key, v) {
		if (!json_is_string(v) || json_string_length(v) < 8)
			problem(path, "sources.%s is not a citation", key);
		const char *dot = strchr(key, '.');
		if (!dot) {
			if (!json_object_get(root, key))
				problem(path, "sources.%s cites a field the file does not have",
				        key);
		} else {
			char head[64];
			snprintf(head, sizeof head, "%.*s", (int)(dot - key), key);
			json_t *sub = json_object_get(root, head);
			if (!json_is_object(sub) || !json_object_get(sub, dot + 1))
				problem(path, "sources.%s cites a field the file does not have",
				        key);
		}
	}
}

#define MAX_NAMES 512

static void test_every_number_cites_a_source(void **state)
{
	(void)state;
	const char *dir = getenv("PARAPLAN_SOURCE_DIR");
	assert_non_null(dir);
	char pattern[1024];
	snprintf(pattern, sizeof pattern, "%s/data/*/*.json", dir);
	glob_t g;
	assert_int_equal(glob(pattern, 0, NULL, &g), 0);
	size_t nfiles = g.gl_pathc;
	assert_true(nfiles >= 55);

	/* Names and aliases, per directory, must not collide (case-insensitive). */
	static char names[MAX_NAMES][PP_NAME_MAX + 32];
	static char dirs[MAX_NAMES][32];
	size_t nnames = 0;
	problems = 0;

	for (size_t i = 0; i < nfiles; i++) {
		const char *path = g.gl_pathv[i];
		json_error_t jerr;
		json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
		if (!root || !json_is_object(root)) {
			problem(path, "does not parse: %d:%d: %s", jerr.line, jerr.column,
			        jerr.text);
			json_decref(root);
			continue;
		}
		/* data/<dir>/<name>.json */
		const char *base = strrchr(path, '/') + 1;
		const char *d0 = base - 2;
		while (d0 > path && *d0 != '/')
			d0--;
		char sub[32];
		snprintf(sub, sizeof sub, "%.*s", (int)(base - d0 - 2), d0 + 1);
		const char *name = json_string_value(json_object_get(root, "name"));
		if (!name) {
			problem(path, "no \"name\"");
		} else {
			char want[PP_NAME_MAX + 8];
			snprintf(want, sizeof want, "%s.json", name);
			if (strcmp(want, base) != 0)
				problem(path, "file name does not match name \"%s\"", name);
		}
		if (!has_text(root, "source") && !json_is_object(json_object_get(root, "sources")))
			problem(path, "neither \"source\" nor \"sources\"");

		check_object(path, root, root, "");
		check_sources_keys(path, root);
		json_t *gpu = json_object_get(root, "gpu");
		if (json_is_object(gpu))
			check_sources_keys(path, gpu);

		json_t *aliases = json_object_get(root, "aliases");
		size_t k;
		json_t *a;
		const char *all[64];
		size_t nall = 0;
		if (name)
			all[nall++] = name;
		json_array_foreach (aliases, k, a) {
			if (json_is_string(a) && nall < 64)
				all[nall++] = json_string_value(a);
		}
		for (size_t j = 0; j < nall; j++) {
			for (size_t q = 0; q < nnames; q++)
				if (strcmp(dirs[q], sub) == 0 && strcasecmp(names[q], all[j]) == 0)
					problem(path,
					        "name or alias \"%s\" is already taken in data/%s",
					        all[j], sub);
			if (nnames < MAX_NAMES) {
				snprintf(names[nnames], sizeof names[nnames], "%s", all[j]);
				snprintf(dirs[nnames], sizeof dirs[nnames], "%s", sub);
				nnames++;
			}
		}
		json_decref(root);
	}
	globfree(&g);
	assert_int_equal(problems, 0);

	/* The checker itself: an uncited number is caught. */
	json_t *t = json_pack("{s:s, s:i, s:{s:i}, s:{s:s}}", "name", "x", "num_layers", 2, "moe",
	                      "top_k", 2, "sources", "num_layers", "a citation here");
	problems = 0;
	check_object("self-test", t, t, "");
	assert_int_equal(problems, 1); /* moe.top_k */
	json_object_set_new(json_object_get(t, "sources"), "moe", json_string("a citation here"));
	problems = 0;
	check_object("self-test", t, t, "");
	assert_int_equal(problems, 0);
	json_decref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_models_load_and_match_published_size),
	    cmocka_unit_test(test_moe_active_params),
	    cmocka_unit_test(test_gpus_and_systems_load),
	    cmocka_unit_test(test_required_names),
	    cmocka_unit_test(test_every_number_cites_a_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
