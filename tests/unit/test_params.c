/*
 * The parameter registry (include/paraplan/params.h): every entry reaches the
 * struct field it names, its ranges are ordered, the presets lie inside them,
 * names are unique, the JSON readers enforce the registry's ranges, and the
 * fitter fits exactly the registry's fitted parameters within their bounds.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "paraplan/calib.h"
#include "paraplan/paraplan.h"

/* The field a registry name means, written out by hand (not from offsets), so
 * a wrong offsetof in the registry shows.  NULL for an unknown name. */
static double *field(pp_system *s, const char *name)
{
	static const char *const gpu[] = {"efficiency.gemm", "efficiency.gemm_fp8",
	                                  "efficiency.attn", "efficiency.memory",
	                                  "efficiency.kernel_s"};
	double *const gpu_f[] = {&s->gpu.eff.gemm, &s->gpu.eff.gemm_fp8, &s->gpu.eff.attn,
	                         &s->gpu.eff.memory, &s->gpu.eff.kernel_s};
	static const char *const sys[] = {"framework.comm_buffer_bytes",
	                                  "framework.allocator_fraction",
	                                  "framework.allocator_transient_segments",
	                                  "framework.eager_activation_copies",
	                                  "framework.fp8_weight_cache",
	                                  "framework.grads_set_to_none",
	                                  "framework.nvlink_eff",
	                                  "framework.nic_eff",
	                                  "framework.nvls_gain",
	                                  "framework.dp_overlap",
	                                  "framework.param_gather_overlap",
	                                  "framework.iteration_overhead_s",
	                                  "framework.logit_bytes",
	                                  "framework.loss_transient_bytes",
	                                  "framework.zero3_live_params",
	                                  "framework.zero3_bucket_params",
	                                  "framework.zero3_reduce_bytes",
	                                  "framework.zero3_reuse_params",
	                                  "framework.zero3_overlap",
	                                  "framework.tp_overlap_hidden",
	                                  "framework.ep_overlap_pairs",
	                                  "framework.deepep_sms",
	                                  "framework.param_bytes",
	                                  "framework.compute_copy_bytes",
	                                  "framework.reshard_after_forward_pp",
	                                  "framework.selective_op_sac",
	                                  "framework.pp_scatter_gather",
	                                  "framework.pp_p2p_blocking",
	                                  "framework.attn_sm90_fraction",
	                                  "framework.fused_bias_dropout_add",
	                                  "framework.sp_gathered_gemm_inputs",
	                                  "framework.fsdp_grad_passes",
	                                  "framework.fsdp2_copies",
	                                  "framework.moe_host_sync",
	                                  "framework.pipe_engine_reduce",
	                                  "framework.moe_probs_in_expert",
	                                  "framework.eager_elementwise",
	                                  "framework.autocast_weight_cast",
	                                  "framework.unfused_cross_entropy",
	                                  "framework.grad_accum_kernel",
	                                  "framework.measured_kernels",
	                                  "framework.host_queue",
	                                  "framework.host_issue_factor",
	                                  "framework.cuda_graphs"};
	double *const sys_f[] = {&s->comm_buffer_bytes,
	                         &s->allocator_fraction,
	                         &s->allocator_transient_segments,
	                         &s->eager_activation_copies,
	                         &s->fp8_weight_cache,
	                         &s->grads_set_to_none,
	                         &s->nvlink_eff,
	                         &s->nic_eff,
	                         &s->nvls_gain,
	                         &s->dp_overlap,
	                         &s->param_gather_overlap,
	                         &s->iteration_overhead_s,
	                         &s->logit_bytes,
	                         &s->loss_transient_bytes,
	                         &s->zero3_live_params,
	                         &s->zero3_bucket_params,
	                         &s->zero3_reduce_bytes,
	                         &s->zero3_reuse_params,
	                         &s->zero3_overlap,
	                         &s->tp_overlap_hidden,
	                         &s->ep_overlap_pairs,
	                         &s->deepep_sms,
	                         &s->param_bytes,
	                         &s->compute_copy_bytes,
	                         &s->reshard_after_forward_pp,
	                         &s->selective_op_sac,
	                         &s->pp_scatter_gather,
	                         &s->pp_p2p_blocking,
	                         &s->attn_sm90_fraction,
	                         &s->fused_bias_dropout_add,
	                         &s->sp_gathered_gemm_inputs,
	                         &s->fsdp_grad_passes,
	                         &s->fsdp2_copies,
	                         &s->moe_host_sync,
	                         &s->pipe_engine_reduce,
	                         &s->moe_probs_in_expert,
	                         &s->gpu.kern.eager_elementwise,
	                         &s->gpu.kern.autocast_weight_cast,
	                         &s->gpu.kern.unfused_cross_entropy,
	                         &s->gpu.kern.grad_accum_kernel,
	                         &s->gpu.kern.measured_kernels,
	                         &s->gpu.kern.host_queue,
	                         &s->gpu.kern.host_issue_factor,
	                         &s->gpu.kern.cuda_graphs};
	for (size_t i = 0; i < sizeof gpu / sizeof gpu[0]; i++)
		if (strcmp(gpu[i], name) == 0)
			return gpu_f[i];
	for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
		if (strcmp(sys[i], name) == 0)
			return sys_f[i];
	return NULL;
}

#define NFIELDS 49 /* the two tables above */

static void test_round_trip(void **state)
{
	(void)state;
	size_t n = pp_param_registry_size();
	assert_int_equal(n, NFIELDS);
	assert_null(pp_param_at(n));
	for (size_t i = 0; i < n; i++) {
		const pp_param *p = pp_param_at(i);
		pp_system s;
		memset(&s, 0, sizeof s);
		double *f = field(&s, p->name);
		if (!f)
			fail_msg("registry entry %s names no field this test knows", p->name);
		double v = 1.25 + (double)i;
		pp_param_set(p, &s, v);
		assert_true(*f == v);
		assert_true(pp_param_get(p, &s) == v);
		/* Nothing else moved: no two entries share a field. */
		for (size_t k = 0; k < n; k++)
			if (k != i)
				assert_true(pp_param_get(pp_param_at(k), &s) == 0);
		/* On a bare GPU: GPU parameters only. */
		pp_gpu g;
		memset(&g, 0, sizeof g);
		if (p->kind == PP_PARAM_GPU) {
			assert_true(pp_param_set_gpu(p, &g, v));
			s.gpu = g;
			assert_true(*f == v);
			assert_true(pp_param_get_gpu(p, &g) == v);
		} else {
			assert_false(pp_param_set_gpu(p, &g, v));
			assert_true(isnan(pp_param_get_gpu(p, &g)));
		}
	}
}

static void test_names_unique_and_found(void **state)
{
	(void)state;
	size_t n = pp_param_registry_size();
	for (size_t i = 0; i < n; i++) {
		const pp_param *p = pp_param_at(i);
		/* name = the object the key sits in, a dot, the key */
		const char *obj = p->kind == PP_PARAM_GPU ? "efficiency." : "framework.";
		assert_true(strncmp(p->name, obj, strlen(obj)) == 0);
		assert_string_equal(p->name + strlen(obj), p->key);
		assert_true(p->unit && p->unit[0] && p->meaning && p->meaning[0]);
		assert_string_not_equal(pp_param_kind_name(p->kind), "?");
		for (size_t k = i + 1; k < n; k++) {
			const pp_param *q = pp_param_at(k);
			assert_string_not_equal(p->name, q->name);
			assert_string_not_equal(p->key, q->key);
		}
		assert_ptr_equal(pp_param_find(p->name), p);
		assert_ptr_equal(pp_param_find(p->key), p);
	}
	assert_null(pp_param_find("efficiency.bogus"));
	assert_null(pp_param_find("memory_bytes")); /* datasheet values are not parameters */
	assert_null(pp_param_find(NULL));
}

static void test_bounds_ordered(void **state)
{
	(void)state;
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		print_message("%-32s valid %g..%g", p->name, p->valid_lo, p->valid_hi);
		assert_true(p->valid_lo < p->valid_hi);
		if (!p->fitted) {
			print_message("\n");
			assert_true(p->fit_lo == 0 && p->fit_hi == 0 && p->fit_start == 0 &&
			            !p->fit_log);
			continue;
		}
		print_message("  fit %g..%g from %g%s\n", p->fit_lo, p->fit_hi, p->fit_start,
		              p->fit_log ? " (log)" : "");
		/* The fit searches inside what the readers accept, from inside its bounds. */
		assert_true(p->valid_lo <= p->fit_lo && p->fit_lo < p->fit_hi &&
		            p->fit_hi <= p->valid_hi);
		assert_true(p->fit_lo <= p->fit_start && p->fit_start <= p->fit_hi);
		if (p->fit_log)
			assert_true(p->fit_lo > 0);
	}
}

/* Every parameter of `s` within its valid range, fitted ones within their fit
 * bounds; returns how many values were out. */
/* The fit's upper bound of `p` on `gpu`: the registry's, except the GEMM
 * fractions' where the part's own best is known (pp_kernel_gemm_fit_ceiling,
 * pp_kernel_gemm_fp8_fit_ceiling, as the fitter has them). */
static double fit_hi(const pp_param *p, const char *gpu)
{
	if (strcmp(p->key, "gemm") == 0)
		return fmax(p->fit_hi, pp_kernel_gemm_fit_ceiling(gpu));
	if (strcmp(p->key, "gemm_fp8") == 0)
		return fmax(p->fit_hi, pp_kernel_gemm_fp8_fit_ceiling(gpu));
	return p->fit_hi;
}

static int check_system(const char *what, const pp_system *s)
{
	int bad = 0;
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		double v = pp_param_get(p, s);
		double lo = p->fitted ? p->fit_lo : p->valid_lo;
		double hi = p->fitted ? fit_hi(p, s->gpu.name) : p->valid_hi;
		if (!(v >= lo && v <= hi)) {
			print_message("%s: %s = %g outside %g..%g\n", what, p->name, v, lo, hi);
			bad++;
		}
	}
	return bad;
}

static void test_presets_inside_bounds(void **state)
{
	(void)state;
	static const char *const frameworks[] = {"megatron", "llm-foundry", "deepspeed",
	                                         "torchtitan", "megatron-lm-2021"};
	pp_error err;
	int bad = 0;
	for (size_t i = 0; i < pp_preset_count(PP_KIND_GPU); i++) {
		const char *name = pp_preset_name(PP_KIND_GPU, i);
		pp_system s;
		memset(&s, 0, sizeof s);
		assert_int_equal(pp_gpu_preset(name, &s.gpu, &err), PP_OK);
		for (size_t k = 0; k < pp_param_registry_size(); k++) {
			const pp_param *p = pp_param_at(k);
			if (p->kind != PP_PARAM_GPU)
				continue;
			double v = pp_param_get_gpu(p, &s.gpu);
			double lo = p->fitted ? p->fit_lo : p->valid_lo;
			double hi = p->fitted ? fit_hi(p, name) : p->valid_hi;
			if (!(v >= lo && v <= hi)) {
				print_message("gpu %s: %s = %g outside %g..%g\n", name, p->name, v,
				              lo, hi);
				bad++;
			}
		}
	}
	for (size_t i = 0; i < pp_preset_count(PP_KIND_SYSTEM); i++) {
		const char *name = pp_preset_name(PP_KIND_SYSTEM, i);
		pp_system s;
		assert_int_equal(pp_system_preset(name, &s, &err), PP_OK);
		bad += check_system(name, &s);
		for (size_t k = 0; k < sizeof frameworks / sizeof frameworks[0]; k++) {
			pp_system t = s;
			assert_int_equal(pp_system_set_framework(&t, frameworks[k], &err), PP_OK);
			char what[128];
			snprintf(what, sizeof what, "%s with %s", name, frameworks[k]);
			bad += check_system(what, &t);
		}
	}
	assert_int_equal(bad, 0);
}

/* A system JSON whose "framework" object (or GPU "efficiency" object) sets
 * one parameter to `v`. */
static pp_status system_with(const pp_param *p, double v, pp_system *out, pp_error *err)
{
	char text[2048];
	char set[160];
	snprintf(set, sizeof set, "{\"%s\": %.17g}", p->key, v);
	snprintf(
	    text, sizeof text,
	    "{\"name\": \"t\", \"gpu\": {\"name\": \"g\", \"memory_bytes\": 8e10, "
	    "\"memory_bw_bytes_per_s\": 3e12, \"fp32_flops\": 6e13, \"fp16_flops\": 9e14, "
	    "\"cuda_context_bytes\": 6e8%s%s}, \"gpus_per_node\": 8, "
	    "\"nvlink_latency_s\": 3e-6, \"nics_per_node\": 8, \"nic_bytes_per_s\": 5e10, "
	    "\"nic_latency_s\": 5e-6%s%s}",
	    p->kind == PP_PARAM_GPU ? ", \"efficiency\": " : "", p->kind == PP_PARAM_GPU ? set : "",
	    p->kind == PP_PARAM_GPU ? "" : ", \"framework\": ", p->kind == PP_PARAM_GPU ? "" : set);
	return pp_system_from_json(text, strlen(text), "t.json", out, err);
}

static void test_readers_use_registry(void **state)
{
	(void)state;
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		pp_system s;
		pp_error err;
		/* The ends of the valid range are read into the field... */
		assert_int_equal(system_with(p, p->valid_hi, &s, &err), PP_OK);
		assert_true(pp_param_get(p, &s) == p->valid_hi);
		assert_int_equal(system_with(p, p->valid_lo, &s, &err), PP_OK);
		assert_true(pp_param_get(p, &s) == p->valid_lo);
		/* ...and a value past either end is rejected, naming the key and range. */
		double past[2] = {p->valid_hi * 2 + 1, p->valid_lo - 1 - fabs(p->valid_lo)};
		for (int k = 0; k < 2; k++) {
			assert_int_equal(system_with(p, past[k], &s, &err), PP_EINPUT);
			char want_field[128], want_text[128];
			snprintf(want_field, sizeof want_field, "%s%s",
			         p->kind == PP_PARAM_GPU ? "gpu." : "", p->name);
			snprintf(want_text, sizeof want_text, "expected a number in %g..%g",
			         p->valid_lo, p->valid_hi);
			assert_string_equal(err.field, want_field);
			assert_non_null(strstr(err.text, want_text));
		}
	}
}

static pp_runs *load_public(void)
{
	const char *dir = getenv("PARAPLAN_SHARED_DIR");
	if (!dir)
		fail_msg("PARAPLAN_SHARED_DIR is not set");
	char path[4096];
	snprintf(path, sizeof path, "%s/validation/public-runs.json", dir);
	pp_runs *runs = NULL;
	pp_error err;
	if (pp_runs_load(path, &runs, &err))
		fail_msg("%s: %s", path, err.text);
	return runs;
}

/* The fitter moves exactly the registry's fitted parameters, within their fit
 * bounds; every other parameter keeps the record's value; and what
 * pp_fit_result reports (pp_gpu_eff, pp_fit_net) is all fitted parameters. */
static void test_fitter_fits_the_registry(void **state)
{
	(void)state;
	static const char *const reported[] = {"gemm",   "gemm_fp8",   "attn",
	                                       "memory", "nvlink_eff", "nic_eff"};
	size_t nfit = 0;
	for (size_t i = 0; i < pp_param_registry_size(); i++)
		nfit += pp_param_at(i)->fitted;
	assert_int_equal(nfit, sizeof reported / sizeof reported[0]);
	for (size_t i = 0; i < nfit; i++) {
		const pp_param *p = pp_param_find(reported[i]);
		assert_non_null(p);
		assert_true(p->fitted);
	}

	pp_runs *runs = load_public();
	pp_fit *f;
	pp_error err;
	assert_int_equal(pp_fit_new(runs, "a100-40g", &f, &err), PP_OK);
	pp_fit_iterate(f);
	pp_system fitted, preset;
	pp_fit_result_system(f, &fitted);
	/* The fit's first record's system, as pp_run_inputs builds it (the record's
	 * framework applied); the fit holds the records of the GPU on the same
	 * silicon too (pp_fit_sibling), in the file's order. */
	bool found = false;
	for (size_t i = 0; i < pp_runs_count(runs) && !found; i++) {
		pp_model m;
		pp_job j;
		pp_plan pl;
		long long g;
		pp_run_info info;
		found = !pp_run_inputs(runs, i, &m, &preset, &j, &pl, &g, &info, &err) &&
		        (strcmp(preset.gpu.name, "a100-40g") == 0 ||
		         strcmp(preset.gpu.name, pp_fit_sibling("a100-40g", NULL)) == 0);
	}
	assert_true(found);
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		double v = pp_param_get(p, &fitted);
		if (p->fitted)
			assert_true(v >= p->fit_lo && v <= p->fit_hi);
		else if (v != pp_param_get(p, &preset))
			fail_msg("%s moved: %g, record's system %g", p->name, v,
			         pp_param_get(p, &preset));
	}
	pp_gpu_eff eff;
	pp_fit_net net;
	pp_fit_result(f, &eff, &net);
	assert_memory_equal(&eff, &fitted.gpu.eff, sizeof eff);
	assert_true(net.nvlink_eff == fitted.nvlink_eff && net.nic_eff == fitted.nic_eff);
	pp_fit_free(f);
	pp_runs_free(runs);
}

/* The public records with BLOOM-176B's naming a system of their own
 * (hardware.system): tests/data/systems/omni-path-unmeasured.json, Jean
 * Zay's nodes with the network unmeasured (fit_nic_eff). */
static pp_runs *load_public_unmeasured_network(void)
{
	const char *shared = getenv("PARAPLAN_SHARED_DIR"), *src = getenv("PARAPLAN_SOURCE_DIR");
	if (!shared || !src)
		fail_msg("PARAPLAN_SHARED_DIR or PARAPLAN_SOURCE_DIR is not set");
	char path[4096], sys[4096];
	snprintf(path, sizeof path, "%s/validation/public-runs.json", shared);
	snprintf(sys, sizeof sys, "%s/tests/data/systems/omni-path-unmeasured.json", src);
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);
	if (!root)
		fail_msg("%s: %s", path, jerr.text);
	size_t i, named = 0;
	json_t *rec;
	json_array_foreach (json_object_get(root, "records"), i, rec) {
		const char *id = json_string_value(json_object_get(rec, "id"));
		if (id && strncmp(id, "bloom176b_", 10) == 0) {
			json_object_set_new(json_object_get(rec, "hardware"), "system",
			                    json_string(sys));
			named++;
		}
	}
	assert_int_equal(named, 3);
	char *text = json_dumps(root, 0);
	json_decref(root);
	assert_non_null(text);
	pp_runs *runs = NULL;
	pp_error err;
	if (pp_runs_from_json(text, strlen(text), path, &runs, &err))
		fail_msg("%s: %s", path, err.text);
	free(text);
	return runs;
}

/* A network no benchmark measures (pp_system.fit_nic_eff) gets its own
 * nic_eff in its GPU's fit, set from its own records alone: the records of
 * the other systems keep their measured value, the one set over every GPU
 * fits none, and with the system's records held out the slot is not pinned
 * and stays at its neutral start.  No preset is such a system (Jean Zay's
 * Omni-Path is measured): the records name the test's own (hardware.system). */
static void test_fit_network_per_system(void **state)
{
	(void)state;
	pp_runs *runs = load_public_unmeasured_network();
	pp_error err;
	const pp_param *nic = pp_param_find("framework.nic_eff");
	assert_non_null(nic);

	pp_fit *all;
	assert_int_equal(pp_fit_new(runs, "*", &all, &err), PP_OK);
	const char *names[PP_FIT_NETS_MAX];
	double v[PP_FIT_NETS_MAX];
	bool pinned[PP_FIT_NETS_MAX];
	assert_int_equal(pp_fit_networks(all, names, v, pinned, PP_FIT_NETS_MAX), 0);
	assert_int_equal(pp_fit_param_count(all), pp_fit_shared_count(all));
	pp_fit_free(all);

	pp_fit *f;
	assert_int_equal(pp_fit_new(runs, "a100-80g", &f, &err), PP_OK);
	assert_int_equal(pp_fit_networks(f, names, v, pinned, PP_FIT_NETS_MAX), 1);
	assert_string_equal(names[0], "omni-path-unmeasured");
	assert_int_equal(pp_fit_param_count(f), pp_fit_shared_count(f) + 1);
	assert_true(pinned[0]);
	pp_fit_converge(f, NULL);
	assert_int_equal(pp_fit_networks(f, names, v, pinned, PP_FIT_NETS_MAX), 1);
	assert_true(pinned[0]);
	assert_true(v[0] > nic->fit_lo && v[0] < nic->fit_hi);
	/* every other record runs at its own system's value, the nccl-tests' */
	size_t bloom = 0;
	bool *out = calloc(pp_fit_records(f), sizeof *out);
	assert_non_null(out);
	for (size_t k = 0; k < pp_fit_records(f); k++) {
		const pp_run_info *info;
		const pp_system *sys;
		pp_fit_case(f, k, &info, &sys, NULL, NULL);
		out[k] = strcmp(sys->name, "omni-path-unmeasured") == 0;
		bloom += out[k];
		if (!out[k])
			assert_true(sys->nic_eff == nic->fit_start);
	}
	assert_int_equal(bloom, 3);
	pp_system first;
	pp_fit_result_system(f, &first);
	assert_string_not_equal(first.name, "omni-path-unmeasured");
	assert_true(first.nic_eff == nic->fit_start);
	/* without the system's records: not pinned, the neutral start */
	pp_fit_exclude(f, out);
	pp_fit_converge(f, NULL);
	assert_int_equal(pp_fit_networks(f, names, v, pinned, PP_FIT_NETS_MAX), 1);
	assert_false(pinned[0]);
	assert_true(v[0] == nic->fit_start);
	free(out);
	pp_fit_free(f);
	pp_runs_free(runs);
}

/* docs/calibration.md names every fitted parameter. */
static void test_doc_names_fitted(void **state)
{
	(void)state;
	const char *dir = getenv("PARAPLAN_SOURCE_DIR");
	if (!dir)
		fail_msg("PARAPLAN_SOURCE_DIR is not set");
	char path[4096];
	snprintf(path, sizeof path, "%s/docs/calibration.md", dir);
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	static char doc[1 << 16];
	size_t len = fread(doc, 1, sizeof doc - 1, fp);
	fclose(fp);
	doc[len] = '\0';
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		char quoted[80];
		snprintf(quoted, sizeof quoted, "`%s`", p->key);
		if (p->fitted && !strstr(doc, quoted))
			fail_msg("docs/calibration.md does not name fitted parameter %s", quoted);
	}
}

/* One fit per die: a plain GPU's fit holds the records of the GPU on the same
 * silicon (same_silicon_as), "GPU:STACK" only its own GPU's, and the default
 * list of GPUs to fit (pp_runs_gpus) names each silicon once. */
static void test_fit_takes_the_silicon(void **state)
{
	(void)state;
	pp_runs *runs = load_public();
	pp_error err;
	static const char *const pairs[][2] = {{"b200", "gb200"}, {"a100-40g", "a100-80g"}};
	for (size_t p = 0; p < 2; p++) {
		assert_string_equal(pp_fit_sibling(pairs[p][0], NULL), pairs[p][1]);
		size_t own[2] = {0, 0};
		for (size_t i = 0; i < pp_runs_count(runs); i++) {
			pp_inputs in;
			pp_run_info info;
			if (pp_run_read(runs, i, &in, &info, &err))
				continue;
			for (int k = 0; k < 2; k++)
				own[k] += strcmp(in.system.gpu.name, pairs[p][k]) == 0;
		}
		assert_true(own[0] > 0 && own[1] > 0);
		for (int k = 0; k < 2; k++) {
			pp_fit *f;
			assert_int_equal(pp_fit_new(runs, pairs[p][k], &f, &err), PP_OK);
			assert_int_equal(pp_fit_records(f), own[0] + own[1]);
			pp_fit_free(f);
		}
	}
	/* GPU:STACK stays with its own GPU: the A100 40GB's records are all
	 * llm-foundry's, the 80GB's include llm-foundry's too. */
	pp_fit *f;
	assert_int_equal(pp_fit_new(runs, "a100-40g:llm-foundry", &f, &err), PP_OK);
	for (size_t k = 0; k < pp_fit_records(f); k++) {
		const pp_run_info *info;
		const pp_system *sys;
		const pp_model *m;
		long long g;
		pp_fit_case(f, k, &info, &sys, &m, &g);
		assert_string_equal(sys->gpu.name, "a100-40g");
	}
	pp_fit_free(f);
	char names[16][PP_NAME_MAX];
	size_t n;
	pp_skips why;
	memset(&why, 0, sizeof why);
	assert_int_equal(pp_runs_gpus(runs, names, 16, &n, &why, &err), PP_OK);
	assert_true(n > 0);
	for (size_t a = 0; a < n; a++)
		for (size_t b = 0; b < n; b++) {
			const char *sib = pp_fit_sibling(names[a], NULL);
			assert_false(a != b && sib && strcmp(sib, names[b]) == 0);
		}
	pp_runs_free(runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_names_unique_and_found),
	    cmocka_unit_test(test_bounds_ordered),
	    cmocka_unit_test(test_presets_inside_bounds),
	    cmocka_unit_test(test_readers_use_registry),
	    cmocka_unit_test(test_fitter_fits_the_registry),
	    cmocka_unit_test(test_fit_takes_the_silicon),
	    cmocka_unit_test(test_fit_network_per_system),
	    cmocka_unit_test(test_doc_names_fitted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
