/*
 * Private to src/spec: the embedded preset table and shared readers.
 */
#ifndef PPI_SPEC_INT_H
#define PPI_SPEC_INT_H

#include "paraplan/params.h"
#include "paraplan/spec.h"
#include "util/util.h"

/* One embedded data file (generated at build time from data/). */
typedef struct ppi_preset_file {
	pp_kind kind;
	const char *path;    /* e.g. "data/models/llama3-70b.json" */
	const char *name;    /* the file's "name" */
	const char *aliases; /* its "aliases", joined by '\n' ("" if none) */
	const char *text;    /* NUL-terminated JSON */
} ppi_preset_file;

extern const ppi_preset_file ppi_preset_files[];
extern const size_t ppi_preset_nfiles;
/* Presets and framework files parsed once per process are kept in tables of
 * this many entries (preset.c, hardware.c); a file past it is parsed each time. */
#define PPI_PRESET_CACHE_MAX 128

/* Find the embedded file of `kind` whose name or an alias is `name`
 * (case-insensitive); on a miss, fill `err` with the nearest names. */
pp_status ppi_preset_find(pp_kind kind, const char *name, const ppi_preset_file **out,
                          pp_error *err);

/* pp_plan_resolve without the checks of the model, system and job and of the
 * rank order, for a caller that made them once (the search, per plan). */
pp_status ppi_plan_resolve_trusted(pp_plan *p, const pp_model *m, const pp_system *s,
                                   long long gpus, const pp_job *job, pp_error *err);

/* Readers of paraplan's JSON objects (top level or nested), prefix for messages. */
pp_status ppi_model_read(json_t *obj, const char *source, const char *prefix, pp_model *out,
                         pp_error *err);
pp_status ppi_gpu_read(json_t *obj, const char *source, const char *prefix, pp_gpu *out,
                       pp_error *err);
pp_status ppi_system_read(json_t *obj, const char *source, const char *prefix, pp_system *out,
                          pp_error *err);

/* True when a parsed model object looks like a HuggingFace config.json. */
bool ppi_is_hf_config(json_t *obj);
pp_status ppi_model_read_hf(json_t *obj, const char *source, pp_model *out, pp_error *err);

/* Framework defaults (data/framework/megatron.json) applied to a system. */
pp_status ppi_framework_defaults(pp_system *s, pp_error *err);

/* Where registry entry `p` lives in `g` (NULL unless a GPU parameter) or in `s`
 * (GPU parameters in s->gpu). */
double *ppi_param_gpu_slot(const pp_param *p, pp_gpu *g);
double *ppi_param_slot(const pp_param *p, pp_system *s);

/* The fine-tuning flags' words (finetune.c), as fields.c's parsers: into
 * job.ft (--freeze), job.ft.lora_targets, job.ft.nf4 (--base-weights). */
pp_status pp_finetune_freeze_parse(const char *s, void *dst, pp_error *err);
pp_status pp_finetune_targets_parse(const char *s, void *dst, pp_error *err);
pp_status pp_finetune_base_parse(const char *s, void *dst, pp_error *err);

#endif
