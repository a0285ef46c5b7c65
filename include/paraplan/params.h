/*
 * paraplan — the parameter registry: one table of the named model parameters.
 *
 * The GPU efficiencies (a GPU's "efficiency" object), the network and overlap
 * efficiencies and the training-framework behaviour (a system's "framework"
 * object, data/framework/NAME.json) are all listed here once, with where they live
 * in the structs, their unit, the range the JSON readers accept, whether and
 * within which bounds `paraplan calibrate` fits them, and what they mean.  The
 * JSON readers, the fitter (pp_fit_*) and `paraplan list params` read this
 * table; nothing else keeps a list of them.
 *
 * Hardware datasheet values (memory_bytes, *_flops, *_bytes_per_s, latencies)
 * are not parameters in this sense and are not listed there: they have a
 * sibling table of their own below (pp_hw_field), the fields a hardware study
 * (`paraplan sweep --vary`, paraplan/study.h) varies.
 */
#ifndef PARAPLAN_PARAMS_H
#define PARAPLAN_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a parameter lives.  GPU: a double of pp_gpu (JSON: the GPU's
 * "efficiency" object; defaults in data/framework/megatron.json
 * "gpu_efficiency").  SYSTEM and FRAMEWORK: a double of pp_system (JSON: the
 * system's "framework" object and the top level of data/framework/NAME.json);
 * SYSTEM are the network and overlap efficiencies of the machine, FRAMEWORK
 * the software stack's memory overheads and behaviour. */
typedef enum pp_param_kind {
	PP_PARAM_GPU = 0,
	PP_PARAM_SYSTEM = 1,
	PP_PARAM_FRAMEWORK = 2,
} pp_param_kind;

typedef struct pp_param {
	const char *name; /* path in a GPU or system JSON: "efficiency.gemm", "framework.nic_eff" */
	const char *key;  /* the key inside its object, as the readers use it: "gemm", "nic_eff" */
	pp_param_kind kind;
	size_t offset;    /* offsetof the double in pp_gpu (GPU) or pp_system (otherwise) */
	const char *unit; /* "fraction", "FLOP", "s", "bytes", ... */
	double valid_lo;  /* the JSON readers reject values outside [valid_lo, valid_hi] */
	double valid_hi;  /* (what is physically possible at all) */
	bool fitted;      /* fitted by `paraplan calibrate`; the fit_* fields are 0 when not */
	double fit_lo,
	    fit_hi;          /* the fit's bounds: what the hardware allows (docs/calibration.md) */
	bool fit_log;        /* searched on a log scale (positive, spanning decades) */
	double fit_start;    /* the fit's neutral starting point, the same for every GPU */
	const char *meaning; /* one line: what it is and where its value comes from */
} pp_param;

/* Number of registered parameters, and the i-th (NULL when i is out of range).
 * The order is fixed: the readers read, and the fitter sweeps, in this order.
 * (Not pp_param_count: that name is the model's parameter-count struct.) */
size_t pp_param_registry_size(void);
const pp_param *pp_param_at(size_t i);
/* The entry named `name`, either its full name ("efficiency.gemm") or its key
 * ("gemm"); NULL when there is none. */
const pp_param *pp_param_find(const char *name);

/* A parameter's value on a system (GPU parameters are read from s->gpu). */
double pp_param_get(const pp_param *p, const pp_system *s);
void pp_param_set(const pp_param *p, pp_system *s, double v);
/* A GPU parameter's value on a GPU; NAN (get) or false (set) when `p` is not a
 * GPU parameter. */
double pp_param_get_gpu(const pp_param *p, const pp_gpu *g);
bool pp_param_set_gpu(const pp_param *p, pp_gpu *g, double v);

/* "gpu", "system" or "framework". */
const char *pp_param_kind_name(pp_param_kind k);

/*
 * The hardware registry: every numeric datasheet field of a GPU (pp_gpu,
 * JSON: the system's "gpu" object) and of a system (pp_system, its top level)
 * that a hardware study varies, once: its name (the JSON path: "gpu.memory_bytes",
 * "nvlink_domain"), where it lives, its unit (SI, as the JSON readers read it),
 * the range the readers accept and what it is.  `paraplan list params` lists
 * them after the parameters.
 */
typedef struct pp_hw_field {
	const char *name; /* "gpu.memory_bytes", "nic_bytes_per_s" */
	bool gpu;         /* a field of pp_gpu (s->gpu), else of pp_system */
	bool integer;     /* an int field (whole values only), else a double */
	size_t offset;    /* offsetof the field in pp_gpu or pp_system */
	double valid_lo;  /* the JSON readers reject values outside [valid_lo, valid_hi] */
	double valid_hi;
	const char *unit;    /* "bytes", "bytes/s", "FLOP/s", "s", "GPUs", "USD" */
	const char *meaning; /* one line */
} pp_hw_field;

/* Number of hardware fields, the i-th (NULL out of range), and the one named
 * `name` (its full name, or a GPU field without "gpu.": "memory_bytes");
 * NULL when there is none. */
size_t pp_hw_field_count(void);
const pp_hw_field *pp_hw_field_at(size_t i);
const pp_hw_field *pp_hw_field_find(const char *name);
/* The field's value on `s` (GPU fields from s->gpu); set truncates an
 * integer field's value (callers pass whole numbers). */
double pp_hw_field_get(const pp_hw_field *f, const pp_system *s);
void pp_hw_field_set(const pp_hw_field *f, pp_system *s, double v);

#ifdef __cplusplus
}
#endif
#endif
