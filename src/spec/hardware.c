/*
 * GPUs and systems: paraplan's JSON for them, range checks, framework defaults.
 */
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_int.h"

/* Bounds wide enough for any accelerator in sight, narrow enough to catch a
 * value given in the wrong unit (GB instead of bytes, TFLOP/s instead of FLOP/s). */
#define MIN_MEMORY 1e9
#define MAX_MEMORY 1e13
#define MIN_FLOPS 1e12
#define MAX_FLOPS 1e17
#define MIN_BW 1e9
#define MAX_BW 1e14

static const char *const gpu_keys[] = {"name",
                                       "aliases",
                                       "source",
                                       "sources",
                                       "notes",
                                       "memory_bytes",
                                       "memory_bw_bytes_per_s",
                                       "fp32_flops",
                                       "tf32_flops",
                                       "fp16_flops",
                                       "bf16_flops",
                                       "fp8_flops",
                                       "fp4_flops",
                                       "nvlink_bytes_per_s",
                                       "cuda_context_bytes",
                                       "memory_type",
                                       "sm_count",
                                       "compute_capability",
                                       "architecture",
                                       "overlap_platform",
                                       "overlap_assumed",
                                       "same_silicon_as",
                                       "tdp_w",
                                       "idle_w",
                                       "efficiency",
                                       NULL};
/*
 * The keys an object may hold: `head`, then the registry's parameters that live
 * in it (GPU ones, or system and framework ones), then `tail`, NULL-terminated
 * into `out` (room for KEYS_MAX).  The order is the suggestion order of "did you
 * mean" messages.  False when they do not fit (a registry grown past KEYS_MAX).
 */
#define KEYS_MAX 64
static void put_key(const char **out, size_t *n, bool *ok, const char *key)
{
	if (*n < KEYS_MAX - 1)
		out[(*n)++] = key;
	else
		*ok = false;
}

static bool param_keys(const char *const *head, bool gpu, const char *const *tail, const char **out)
{
	size_t n = 0;
	bool ok = true;
	for (; head && *head; head++)
		put_key(out, &n, &ok, *head);
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		if ((p->kind == PP_PARAM_GPU) == gpu)
			put_key(out, &n, &ok, p->key);
	}
	for (; tail && *tail; tail++)
		put_key(out, &n, &ok, *tail);
	out[n] = NULL;
	return ok;
}

/* Every parameter of one kind (GPU, or system and framework) that `r` holds,
 * in registry order, within its valid range. */
static pp_status read_params(const ppi_obj *r, bool gpu, pp_system *s, pp_gpu *g)
{
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		if ((p->kind == PP_PARAM_GPU) != gpu)
			continue;
		double *slot = gpu ? ppi_param_gpu_slot(p, g) : ppi_param_slot(p, s);
		PPI_TRY(ppi_get_num(r, p->key, false, p->valid_lo, p->valid_hi, slot));
	}
	return PP_OK;
}

/* Read an "efficiency" object over the values already in `g`. */
static pp_status read_eff(json_t *obj, const char *source, const char *prefix, pp_gpu *g,
                          pp_error *err)
{
	static const char *const tail[] = {"source", "notes", NULL};
	const char *keys[KEYS_MAX];
	if (!param_keys(NULL, true, tail, keys)) {
		ppi_fail(err, source, prefix, "more keys than KEYS_MAX (%d)", KEYS_MAX);
		return PP_EINTERNAL;
	}
	ppi_obj r = {obj, source, prefix, err};
	PPI_TRY(ppi_obj_keys(&r, keys));
	return read_params(&r, true, NULL, g);
}

/*
 * Framework files as parsed, kept for the life of the process (as presets are,
 * preset.c): every system read applies the default framework, and validate
 * applies a record's framework once per record; parsing the same embedded
 * text again was two thirds of validate's instructions.  The cached objects
 * are only read (jansson's reference counts are atomic), under a lock while
 * the table is filled.
 */
static json_t *framework_cache[PPI_PRESET_CACHE_MAX];
static pthread_mutex_t framework_mu = PTHREAD_MUTEX_INITIALIZER;

/* A framework file (default: "default"), parsed; the caller json_decref's *root
 * and must not change it. */
static pp_status framework_named(const char *name, json_t **root, const char **path, pp_error *err)
{
	const ppi_preset_file *f;
	PPI_TRY(ppi_preset_find(PP_KIND_FRAMEWORK, name, &f, err));
	*path = f->path;
	size_t slot = (size_t)(f - ppi_preset_files);
	if (slot < PPI_PRESET_CACHE_MAX) {
		pthread_mutex_lock(&framework_mu);
		*root = json_incref(framework_cache[slot]);
		pthread_mutex_unlock(&framework_mu);
		if (*root)
			return PP_OK;
	}
	PPI_TRY(ppi_json_parse_object(f->text, strlen(f->text), f->path, root, err));
	if (slot < PPI_PRESET_CACHE_MAX) {
		pthread_mutex_lock(&framework_mu);
		if (!framework_cache[slot])
			framework_cache[slot] = json_incref(*root);
		pthread_mutex_unlock(&framework_mu);
	}
	return PP_OK;
}

static pp_status framework_json(json_t **root, const char **path, pp_error *err)
{
	return framework_named("default", root, path, err);
}

/* The kinds a GPU file's memory_type and a system's tiers may name, with the
 * label output prints; the JSON value is the key, matched exactly. */
typedef struct kind_label {
	const char *key, *label;
} kind_label;

static const kind_label memory_kinds[] = {
    {"HBM", "HBM"},         {"HBM2", "HBM2"},   {"HBM2e", "HBM2e"},   {"HBM3", "HBM3"},
    {"HBM3e", "HBM3e"},     {"GDDR6", "GDDR6"}, {"GDDR6X", "GDDR6X"}, {"GDDR7", "GDDR7"},
    {"LPDDR5X", "LPDDR5X"}, {NULL, NULL}};
static const kind_label intra_kinds[] = {{"nvlink", "NVLink"},        {"pcie", "PCIe"},
                                         {"pcie3", "PCIe 3.0"},       {"pcie4", "PCIe 4.0"},
                                         {"pcie5", "PCIe 5.0"},       {"pcie6", "PCIe 6.0"},
                                         {"xgmi", "Infinity Fabric"}, {NULL, NULL}};
static const kind_label inter_kinds[] = {{"infiniband", "InfiniBand"},
                                         {"roce", "RoCE"},
                                         {"ethernet", "Ethernet"},
                                         {"efa", "EFA"},
                                         {"omni-path", "Omni-Path"},
                                         {"rdma", "RDMA NIC"},
                                         {NULL, NULL}};

static const char *kind_find(const kind_label *k, const char *key)
{
	for (; k->key; k++)
		if (strcmp(k->key, key) == 0)
			return k->label;
	return NULL;
}

/* An optional string key that must be one of `kinds`; "" when absent. */
static pp_status get_kind(const ppi_obj *r, const char *key, const kind_label *kinds, char *out,
                          size_t n)
{
	out[0] = '\0';
	PPI_TRY(ppi_get_str(r, key, false, out, n));
	if (!out[0] && !json_object_get(r->obj, key))
		return PP_OK;
	if (kind_find(kinds, out))
		return PP_OK;
	char list[256] = "", path[PP_ERROR_FIELD_MAX];
	for (const kind_label *k = kinds; k->key; k++) {
		size_t len = strlen(list);
		snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", k->key);
	}
	return ppi_fail(r->err, r->source, ppi_obj_path(r, key, path, sizeof path),
	                "expected one of %s, got '%s'", list, out);
}

/* A number a system may give under either of two names (intra_node_bytes_per_s
 * or nvlink_bytes_per_s): both is an error naming the second, neither (when
 * required) an error naming the first. */
static pp_status get_num_either(const ppi_obj *r, const char *a, const char *b, bool required,
                                double lo, double hi, double *out)
{
	bool has_a = json_object_get(r->obj, a) != NULL, has_b = json_object_get(r->obj, b) != NULL;
	if (has_a && has_b) {
		char path[PP_ERROR_FIELD_MAX];
		return ppi_fail(r->err, r->source, ppi_obj_path(r, b, path, sizeof path),
		                "give %s or %s, not both", a, b);
	}
	if (required && !has_a && !has_b) {
		char path[PP_ERROR_FIELD_MAX];
		return ppi_fail(r->err, r->source, ppi_obj_path(r, a, path, sizeof path),
		                "missing required key (or %s)", b);
	}
	return ppi_get_num(r, has_b ? b : a, false, lo, hi, out);
}

const char *pp_memory_label(const pp_gpu *g)
{
	const char *l = kind_find(memory_kinds, g->memory_type);
	return l ? l : "memory";
}

const char *pp_intra_link_label(const pp_system *s)
{
	const char *l = kind_find(intra_kinds, s->intra_node_link);
	return l ? l : s->gpu.nvlink_bytes_per_s > 0 ? "NVLink" : "PCIe";
}

const char *pp_inter_network_label(const pp_system *s)
{
	if (s->nics_per_node <= 0 || s->nic_bytes_per_s <= 0)
		return "none";
	const char *l = kind_find(inter_kinds, s->inter_node_network);
	return l ? l : "network";
}

/* A price: finite, 0..hi, and not -0 (a sign is never a price). */
static pp_status get_price(const ppi_obj *r, const char *key, double hi, double *out)
{
	PPI_TRY(ppi_get_num(r, key, false, 0, hi, out));
	if (signbit(*out)) {
		char path[PP_ERROR_FIELD_MAX];
		return ppi_fail(r->err, r->source, ppi_obj_path(r, key, path, sizeof path),
		                "expected a price of 0 or more, got -0");
	}
	return PP_OK;
}

/* The most SMs / compute units of any GPU in sight is in the hundreds (MI300X
 * 304); 4096 catches a count given as CUDA cores. */
#define MAX_SM_COUNT 4096

/* The silicon's facts (pp_gpu.sm_count .. overlap_assumed), all optional:
 * "compute_capability" as NVIDIA writes it ("9.0", "10.0"). */
static pp_status read_facts(const ppi_obj *r, pp_gpu *g)
{
	char path[PP_ERROR_FIELD_MAX];
	int sms = 0;
	PPI_TRY(ppi_get_int(r, "sm_count", false, 1, MAX_SM_COUNT, &sms));
	g->sm_count = sms;
	char cc[16] = "";
	PPI_TRY(ppi_get_str(r, "compute_capability", false, cc, sizeof cc));
	if (cc[0]) {
		int major = 0, minor = 0, n = 0;
		if (sscanf(cc, "%d.%d%n", &major, &minor, &n) != 2 || cc[n] != '\0' || major < 1 ||
		    major > 99 || minor < 0 || minor > 9)
			return ppi_fail(
			    r->err, r->source,
			    ppi_obj_path(r, "compute_capability", path, sizeof path),
			    "expected MAJOR.MINOR as NVIDIA writes it (\"9.0\"), got '%s'", cc);
		g->compute_capability_x10 = 10 * major + minor;
	}
	PPI_TRY(ppi_get_str(r, "architecture", false, g->architecture, sizeof g->architecture));
	PPI_TRY(ppi_get_str(r, "overlap_platform", false, g->overlap_platform,
	                    sizeof g->overlap_platform));
	if (g->overlap_platform[0]) {
		const ppi_preset_file *f;
		pp_error e;
		if (ppi_preset_find(PP_KIND_OVERLAP, g->overlap_platform, &f, &e) != PP_OK) {
			char list[256] = "";
			for (size_t i = 0; i < pp_preset_count(PP_KIND_OVERLAP); i++) {
				size_t len = strlen(list);
				snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
				         pp_preset_name(PP_KIND_OVERLAP, i));
			}
			return ppi_fail(r->err, r->source,
			                ppi_obj_path(r, "overlap_platform", path, sizeof path),
			                "expected one of the overlap tables of data/overlap (%s), "
			                "got '%s'",
			                list, g->overlap_platform);
		}
	}
	PPI_TRY(ppi_get_bool(r, "overlap_assumed", false, &g->overlap_assumed));
	/* read where it is used (pp_fit_sibling); here only its type */
	char sibling[PP_NAME_MAX];
	PPI_TRY(ppi_get_str(r, "same_silicon_as", false, sibling, sizeof sibling));
	if (g->overlap_assumed && !g->overlap_platform[0])
		return ppi_fail(r->err, r->source,
		                ppi_obj_path(r, "overlap_assumed", path, sizeof path),
		                "overlap_assumed without the overlap_platform it assumes");
	return PP_OK;
}

pp_status ppi_gpu_read(json_t *obj, const char *source, const char *prefix, pp_gpu *out,
                       pp_error *err)
{
	pp_gpu g;
	memset(&g, 0, sizeof g);
	ppi_obj r = {obj, source, prefix, err};
	PPI_TRY(ppi_obj_keys(&r, gpu_keys));
	PPI_TRY(ppi_get_str(&r, "name", true, g.name, sizeof g.name));
	PPI_TRY(ppi_get_str(&r, "source", false, g.source, sizeof g.source));
	PPI_TRY(ppi_get_num(&r, "memory_bytes", true, MIN_MEMORY, MAX_MEMORY, &g.memory_bytes));
	PPI_TRY(ppi_get_num(&r, "memory_bw_bytes_per_s", true, MIN_BW, MAX_BW,
	                    &g.memory_bw_bytes_per_s));
	PPI_TRY(ppi_get_num(&r, "fp32_flops", true, 1e11, MAX_FLOPS, &g.fp32_flops));
	PPI_TRY(ppi_get_num(&r, "tf32_flops", false, 0, MAX_FLOPS, &g.tf32_flops));
	PPI_TRY(ppi_get_num(&r, "fp16_flops", true, MIN_FLOPS, MAX_FLOPS, &g.fp16_flops));
	PPI_TRY(ppi_get_num(&r, "bf16_flops", false, 0, MAX_FLOPS, &g.bf16_flops));
	PPI_TRY(ppi_get_num(&r, "fp8_flops", false, 0, MAX_FLOPS, &g.fp8_flops));
	PPI_TRY(ppi_get_num(&r, "fp4_flops", false, 0, MAX_FLOPS, &g.fp4_flops));
	PPI_TRY(ppi_get_num(&r, "nvlink_bytes_per_s", false, 0, MAX_BW, &g.nvlink_bytes_per_s));
	PPI_TRY(ppi_get_num(&r, "cuda_context_bytes", true, 0, 1e11, &g.cuda_context_bytes));
	PPI_TRY(get_kind(&r, "memory_type", memory_kinds, g.memory_type, sizeof g.memory_type));
	PPI_TRY(read_facts(&r, &g));
	/* Board power (docs/energy.md): no GPU draws 5 kW; idle below the TDP. */
	PPI_TRY(ppi_get_num(&r, "tdp_w", false, 0, 5000, &g.tdp_w));
	PPI_TRY(ppi_get_num(&r, "idle_w", false, 0, g.tdp_w > 0 ? g.tdp_w : 5000, &g.idle_w));
	/* Efficiencies: the defaults of data/framework/megatron.json, then the GPU's own. */
	json_t *fw;
	const char *fw_path;
	PPI_TRY(framework_json(&fw, &fw_path, err));
	json_t *def = json_object_get(fw, "gpu_efficiency");
	pp_status st = def ? read_eff(def, fw_path, "gpu_efficiency", &g, err) : PP_OK;
	json_decref(fw);
	if (st)
		return PP_EINTERNAL;
	json_t *own = NULL;
	PPI_TRY(ppi_get_obj(&r, "efficiency", false, &own));
	if (own) {
		char sub[PP_ERROR_FIELD_MAX];
		PPI_TRY(read_eff(own, source, ppi_obj_path(&r, "efficiency", sub, sizeof sub), &g,
		                 err));
	}
	*out = g;
	return PP_OK;
}

pp_status pp_gpu_check(const pp_gpu *g, pp_error *err)
{
	const char *src = g->name[0] ? g->name : "gpu";
	if (!(g->memory_bytes >= MIN_MEMORY && g->memory_bytes <= MAX_MEMORY))
		return ppi_fail(err, src, "gpu.memory_bytes", "expected %g..%g bytes, got %g",
		                MIN_MEMORY, MAX_MEMORY, g->memory_bytes);
	if (!(g->fp16_flops >= MIN_FLOPS && g->fp16_flops <= MAX_FLOPS))
		return ppi_fail(err, src, "gpu.fp16_flops", "expected %g..%g FLOP/s, got %g",
		                MIN_FLOPS, MAX_FLOPS, g->fp16_flops);
	if (!(g->memory_bw_bytes_per_s >= MIN_BW && g->memory_bw_bytes_per_s <= MAX_BW))
		return ppi_fail(err, src, "gpu.memory_bw_bytes_per_s",
		                "expected %g..%g bytes/s, got %g", MIN_BW, MAX_BW,
		                g->memory_bw_bytes_per_s);
	return PP_OK;
}

static const char *const system_keys[] = {"name",
                                          "aliases",
                                          "source",
                                          "sources",
                                          "notes",
                                          "gpu",
                                          "gpus_per_node",
                                          "nvlink_domain",
                                          "nvlink_bytes_per_s",
                                          "nvlink_latency_s",
                                          "nics_per_node",
                                          "nic_bytes_per_s",
                                          "nic_latency_s",
                                          "intra_node_link",
                                          "intra_node_bytes_per_s",
                                          "intra_node_latency_s",
                                          "inter_node_network",
                                          "nvls",
                                          "coll_recursive",
                                          "fit_nic_eff",
                                          "usd_per_gpu_hour",
                                          "host_link_bytes_per_s",
                                          "host_memory_bytes",
                                          "host_memory_bw_bytes_per_s",
                                          "host_w",
                                          "framework",
                                          NULL};
static pp_status read_framework(json_t *obj, const char *source, const char *prefix, pp_system *s,
                                pp_error *err)
{
	/* The keys besides the parameters (a data/framework file's name, aliases and
	 * GPU efficiency defaults; a system's "framework" object may carry them too). */
	static const char *const head[] = {"name", "source",         "sources", "notes",
	                                   "base", "gpu_efficiency", "aliases", NULL};
	const char *keys[KEYS_MAX];
	if (!param_keys(head, false, NULL, keys)) {
		ppi_fail(err, source, prefix, "more keys than KEYS_MAX (%d)", KEYS_MAX);
		return PP_EINTERNAL;
	}
	ppi_obj r = {obj, source, prefix, err};
	PPI_TRY(ppi_obj_keys(&r, keys));
	return read_params(&r, false, s, NULL);
}

pp_status ppi_framework_defaults(pp_system *s, pp_error *err)
{
	json_t *root;
	const char *path;
	PPI_TRY(framework_json(&root, &path, err));
	pp_status st = read_framework(root, path, "", s, err);
	if (!st)
		ppi_strlcpy(s->framework, json_string_value(json_object_get(root, "name")),
		            sizeof s->framework);
	json_decref(root);
	return st;
}

pp_status pp_system_set_framework(pp_system *s, const char *name, pp_error *err)
{
	json_t *root;
	const char *path;
	pp_status st = framework_named(name, &root, &path, err);
	if (st) {
		ppi_strlcpy(err->field, "framework", sizeof err->field);
		return st;
	}
	/* The system's own link parameters (kind PP_PARAM_SYSTEM: NVLink and NIC
	 * efficiencies, NVLS gain, fitted per system) are the hardware's and NCCL's,
	 * not the stack's: they survive the change of framework. */
	pp_system keep = *s;
	/* Start from the defaults so a framework file states only what differs,
	 * and from its "base" framework's values when it names one (one level:
	 * a base names none). */
	st = ppi_framework_defaults(s, err);
	json_t *base = json_object_get(root, "base");
	if (!st && base) {
		json_t *broot;
		const char *bpath;
		if (!json_is_string(base))
			st = ppi_fail(err, path, "base", "expected the name of a framework");
		else if (!(st = framework_named(json_string_value(base), &broot, &bpath, err))) {
			if (json_object_get(broot, "base"))
				st = ppi_fail(err, path, "base",
				              "framework '%s' names a base itself: one level only",
				              json_string_value(base));
			else
				st = read_framework(broot, bpath, "", s, err);
			json_decref(broot);
		}
	}
	if (!st)
		st = read_framework(root, path, "", s, err);
	if (!st)
		ppi_strlcpy(s->framework, json_string_value(json_object_get(root, "name")),
		            sizeof s->framework);
	for (size_t i = 0; i < pp_param_registry_size(); i++) {
		const pp_param *p = pp_param_at(i);
		if (p->kind == PP_PARAM_SYSTEM)
			pp_param_set(p, s, pp_param_get(p, &keep));
	}
	/* The stack's terms of the compute model follow the framework: derived
	 * again by pp_system_compute_model (inputs.h). */
	s->gpu.kern.stack_fractions = false;
	json_decref(root);
	return st;
}

pp_status ppi_system_read(json_t *obj, const char *source, const char *prefix, pp_system *out,
                          pp_error *err)
{
	pp_system s;
	memset(&s, 0, sizeof s);
	ppi_obj r = {obj, source, prefix, err};
	PPI_TRY(ppi_obj_keys(&r, system_keys));
	PPI_TRY(ppi_get_str(&r, "name", true, s.name, sizeof s.name));
	PPI_TRY(ppi_get_str(&r, "source", false, s.source, sizeof s.source));
	json_t *gv = json_object_get(obj, "gpu");
	char path[PP_ERROR_FIELD_MAX];
	ppi_obj_path(&r, "gpu", path, sizeof path);
	if (gv && json_is_string(gv)) {
		pp_status st = pp_gpu_preset(json_string_value(gv), &s.gpu, err);
		if (st) {
			ppi_strlcpy(err->source, source, sizeof err->source);
			ppi_strlcpy(err->field, path, sizeof err->field);
			return st;
		}
	} else if (gv && json_is_object(gv)) {
		PPI_TRY(ppi_gpu_read(gv, source, path, &s.gpu, err));
	} else {
		return ppi_fail(err, source, path,
		                gv ? "expected a GPU preset name or a GPU object"
		                   : "missing required key");
	}
	PPI_TRY(ppi_get_int(&r, "gpus_per_node", true, 1, 4096, &s.gpus_per_node));
	s.nvlink_domain = s.gpus_per_node;
	PPI_TRY(ppi_get_int(&r, "nvlink_domain", false, 1, 65536, &s.nvlink_domain));
	PPI_TRY(get_kind(&r, "intra_node_link", intra_kinds, s.intra_node_link,
	                 sizeof s.intra_node_link));
	/* A PCIe (or other non-NVLink) tier has no bandwidth of the GPU's to fall
	 * back on: the system states it. */
	bool own_link = s.intra_node_link[0] && strcmp(s.intra_node_link, "nvlink") != 0;
	s.nvlink_bytes_per_s = own_link ? 0 : s.gpu.nvlink_bytes_per_s;
	PPI_TRY(get_num_either(&r, "intra_node_bytes_per_s", "nvlink_bytes_per_s",
	                       own_link && s.gpus_per_node > 1, 0, MAX_BW, &s.nvlink_bytes_per_s));
	PPI_TRY(get_num_either(&r, "nvlink_latency_s", "intra_node_latency_s", true, 0, 1e-3,
	                       &s.nvlink_latency_s));
	PPI_TRY(get_kind(&r, "inter_node_network", inter_kinds, s.inter_node_network,
	                 sizeof s.inter_node_network));
	PPI_TRY(ppi_get_int(&r, "nics_per_node", true, 0, 4096, &s.nics_per_node));
	PPI_TRY(ppi_get_num(&r, "nic_bytes_per_s", true, 0, MAX_BW, &s.nic_bytes_per_s));
	PPI_TRY(ppi_get_num(&r, "nic_latency_s", true, 0, 1e-2, &s.nic_latency_s));
	PPI_TRY(ppi_get_bool(&r, "nvls", false, &s.nvls));
	PPI_TRY(ppi_get_bool(&r, "coll_recursive", false, &s.coll_recursive));
	PPI_TRY(ppi_get_bool(&r, "fit_nic_eff", false, &s.fit_nic_eff));
	PPI_TRY(get_price(&r, "usd_per_gpu_hour", 1e4, &s.usd_per_gpu_hour));
	/* The host side (CPU offload); not stated = 0, refused by an offload plan. */
	PPI_TRY(
	    ppi_get_num(&r, "host_link_bytes_per_s", false, 0, MAX_BW, &s.host_link_bytes_per_s));
	PPI_TRY(ppi_get_num(&r, "host_memory_bytes", false, 0, 1e15, &s.host_memory_bytes));
	PPI_TRY(ppi_get_num(&r, "host_memory_bw_bytes_per_s", false, 0, MAX_BW,
	                    &s.host_memory_bw_bytes_per_s));
	/* Node power besides the GPUs (docs/energy.md); 0 = not stated. */
	PPI_TRY(ppi_get_num(&r, "host_w", false, 0, 1e6, &s.host_w));
	PPI_TRY(ppi_framework_defaults(&s, err));
	json_t *fw = NULL;
	PPI_TRY(ppi_get_obj(&r, "framework", false, &fw));
	if (fw) {
		char sub[PP_ERROR_FIELD_MAX];
		PPI_TRY(read_framework(fw, source, ppi_obj_path(&r, "framework", sub, sizeof sub),
		                       &s, err));
	}
	pp_status st = pp_system_check(&s, err);
	if (st) {
		ppi_strlcpy(err->source, source, sizeof err->source);
		return st;
	}
	*out = s;
	return PP_OK;
}

pp_status pp_system_check(const pp_system *s, pp_error *err)
{
	const char *src = s->name[0] ? s->name : "system";
	PPI_TRY(pp_gpu_check(&s->gpu, err));
	if (s->gpus_per_node < 1 || s->gpus_per_node > 4096)
		return ppi_fail(err, src, "system.gpus_per_node", "expected 1..4096, got %d",
		                s->gpus_per_node);
	if (s->nvlink_domain < 1 || s->nvlink_domain > 65536)
		return ppi_fail(err, src, "system.nvlink_domain", "expected 1..65536, got %d",
		                s->nvlink_domain);
	if (s->nvlink_domain < s->gpus_per_node && s->nvlink_bytes_per_s > 0 &&
	    s->gpus_per_node % s->nvlink_domain != 0)
		return ppi_fail(err, src, "system.nvlink_domain",
		                "%d GPUs per node are not a multiple of the NVLink domain of %d",
		                s->gpus_per_node, s->nvlink_domain);
	if (s->nvlink_domain > s->gpus_per_node && s->nvlink_domain % s->gpus_per_node != 0)
		return ppi_fail(
		    err, src, "system.nvlink_domain",
		    "an NVLink domain of %d spanning nodes must be a multiple of %d GPUs "
		    "per node",
		    s->nvlink_domain, s->gpus_per_node);
	const pp_param *af = pp_param_find("framework.allocator_fraction");
	if (s->allocator_fraction < af->valid_lo || s->allocator_fraction > af->valid_hi)
		return ppi_fail(err, src, "system.framework.allocator_fraction",
		                "expected %g..%g, got %g", af->valid_lo, af->valid_hi,
		                s->allocator_fraction);
	/* a count of transfers: the closed form and the search's floor take
	 * the blocked time as whole transfers (sched_1f1b.c, estimate.c) */
	double k = s->pp_p2p_blocking;
	if (k != 0 && k != 1 && k != 2)
		return ppi_fail(err, src, "system.framework.pp_p2p_blocking",
		                "expected 0, 1 or 2 transfers per exchange, got %g", k);
	return PP_OK;
}

static pp_status load_file(const char *path, json_t **root, pp_error *err)
{
	char *text;
	size_t len;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = ppi_json_parse_object(text, len, path, root, err);
	free(text);
	return st;
}

pp_status pp_gpu_from_json(const char *text, size_t len, const char *source, pp_gpu *out,
                           pp_error *err)
{
	json_t *root;
	PPI_TRY(ppi_json_parse_object(text, len, source, &root, err));
	pp_status st = ppi_gpu_read(root, source, "", out, err);
	json_decref(root);
	return st;
}

pp_status pp_system_from_json(const char *text, size_t len, const char *source, pp_system *out,
                              pp_error *err)
{
	json_t *root;
	PPI_TRY(ppi_json_parse_object(text, len, source, &root, err));
	pp_status st = ppi_system_read(root, source, "", out, err);
	json_decref(root);
	return st;
}

pp_status pp_gpu_load(const char *path, pp_gpu *out, pp_error *err)
{
	json_t *root;
	PPI_TRY(load_file(path, &root, err));
	pp_status st = ppi_gpu_read(root, path, "", out, err);
	json_decref(root);
	return st;
}

pp_status pp_system_load(const char *path, pp_system *out, pp_error *err)
{
	json_t *root;
	PPI_TRY(load_file(path, &root, err));
	pp_status st = ppi_system_read(root, path, "", out, err);
	json_decref(root);
	return st;
}
