/*
 * The job's and plan's fields by name (include/paraplan/fields.h): the table
 * the command line's flags are built from, and the one setter that checks a
 * value's form and range.  Changing a range here changes what every verb
 * accepts.
 */
#include <errno.h>
#include <math.h>
#include <stdalign.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "paraplan/fields.h"
#include "paraplan/schedule_type.h"
#include "spec_int.h"
#include "util/util.h"

/*
 * Form checks, not meaning: wide enough for any run in sight, narrow enough
 * that a value fits its int and a typo of several digits is caught.  A
 * parallel degree or a micro-batch beyond 2^20 is no machine's; dp reaches
 * the GPU count's bound (10M GPUs); a batch of 1e9 sequences and a sequence
 * of 1e8 tokens are three orders beyond today's largest runs.
 */
#define DEGREE_MAX (1LL << 20)
#define DP_MAX 10000000LL
#define GBS_MAX 1000000000LL
#define SEQ_MAX 100000000LL
#define ZERO_MAX 3 /* ZeRO stages 0..3 */

static pp_status onoff(const char *s, bool *out, pp_error *err)
{
	if (strcmp(s, "on") == 0 || strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
		*out = true;
	else if (strcmp(s, "off") == 0 || strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
		*out = false;
	else
		return ppi_fail(err, NULL, NULL, "expected on or off, got '%s'", s);
	return PP_OK;
}

static pp_status precision(const char *s, void *dst, pp_error *err)
{
	return pp_precision_parse(s, "", dst, err);
}

static pp_status fp8_recipe(const char *s, void *dst, pp_error *err)
{
	return pp_fp8_recipe_parse(s, "", dst, err);
}

static pp_status recompute(const char *s, void *dst, pp_error *err)
{
	return pp_recompute_parse(s, "", dst, err);
}

static pp_status schedule(const char *s, void *dst, pp_error *err)
{
	return pp_schedule_parse(s, "", dst, err);
}

/* --si on: co-execute two micro-batches (without PP too): wshape; off leaves a
 * schedule that is not strand-interleaved as it is. */
static pp_status strands(const char *s, void *dst, pp_error *err)
{
	pp_schedule *sched = dst;
	bool on;
	if (onoff(s, &on, err))
		return PP_EINPUT;
	const pp_schedule_type *t = pp_schedule_type_of(*sched);
	if (on)
		*sched = PP_SCHED_WSHAPE;
	else if (t && t->si)
		*sched = PP_SCHED_1F1B;
	return PP_OK;
}

/* Bytes per gradient element. */
static pp_status grad_dtype(const char *s, void *dst, pp_error *err)
{
	int *bytes = dst;
	if (strcmp(s, "fp32") == 0)
		*bytes = 4;
	else if (strcmp(s, "bf16") == 0 || strcmp(s, "fp16") == 0)
		*bytes = 2;
	else
		return ppi_fail(err, NULL, NULL, "expected fp32, bf16 or fp16, got '%s'", s);
	return PP_OK;
}

static pp_status optimizer(const char *s, void *dst, pp_error *err)
{
	pp_optimizer *o = dst;
	if (strcmp(s, "adam") == 0 || strcmp(s, "adamw") == 0)
		*o = PP_OPT_ADAM;
	else if (strcmp(s, "sgd") == 0)
		*o = PP_OPT_SGD;
	else
		return ppi_fail(err, NULL, NULL, "expected adam or sgd, got '%s'", s);
	return PP_OK;
}

/* The rank order's letters are checked with the plan (pp_plan_validate). */
static pp_status order(const char *s, void *dst, pp_error *err)
{
	if (strlen(s) >= PP_ORDER_MAX)
		return ppi_fail(err, NULL, NULL, "too long: '%s'", s);
	snprintf(dst, PP_ORDER_MAX, "%s", s);
	return PP_OK;
}

static pp_status moe_dispatcher(const char *s, void *dst, pp_error *err)
{
	return pp_moe_dispatcher_parse(s, "", dst, err);
}

/* --moe-routing zipf:S[,drift:D][,capacity:C] (pp_moe_routing_parse). */
static pp_status moe_routing(const char *s, void *dst, pp_error *err)
{
	pp_moe_spec *r = dst;
	if (pp_moe_routing_parse(s, &r->skew, &r->drift_steps, &r->capacity_factor, err))
		return PP_EINPUT;
	r->set = true;
	return PP_OK;
}

/*
 * The energy inputs (docs/energy.md), each a real number in a range wide
 * enough for any site: a PUE of 1 (no overhead) to 5 (beyond the worst
 * surveyed), up to 2000 gCO2e/kWh (coal-fired generation is about 1000), up
 * to 10 USD/kWh, and a power cap of up to 100,000 MW.
 */
static pp_status real_in(const char *s, double lo, double hi, const char *what, double *out,
                         pp_error *err)
{
	char why[160];
	if (!ppi_parse_double(s, (size_t)-1, lo, hi, out, why, sizeof why))
		return ppi_fail(err, NULL, NULL, "expected %s, got '%s'", what, s);
	return PP_OK;
}

static pp_status pue(const char *s, void *dst, pp_error *err)
{
	return real_in(s, 1, 5, "a PUE in 1..5 (facility power over IT power)", dst, err);
}

static pp_status gco2_per_kwh(const char *s, void *dst, pp_error *err)
{
	return real_in(s, 0, 2000, "grams CO2e per kWh in 0..2000", dst, err);
}

static pp_status usd_per_kwh(const char *s, void *dst, pp_error *err)
{
	return real_in(s, 0, 10, "US dollars per kWh in 0..10", dst, err);
}

/* --power-cap-mw, kept in watts. */
static pp_status power_cap_mw(const char *s, void *dst, pp_error *err)
{
	double mw;
	if (real_in(s, 1e-6, 1e5, "megawatts in 1e-06..100000", &mw, err))
		return PP_EINPUT;
	*(double *)dst = mw * 1e6;
	return PP_OK;
}

#define PLAN(m) "plan." #m, true, offsetof(pp_plan, m), sizeof(((pp_plan *)0)->m)
#define JOB(m) "job." #m, false, offsetof(pp_job, m), sizeof(((pp_job *)0)->m)
#define PLAN_INT(n, m, lo, hi)                                                                     \
	{                                                                                          \
		n, PLAN(m), PP_FIELD_INT, lo, hi, NULL                                             \
	}
#define PLAN_ONOFF(n, m)                                                                           \
	{                                                                                          \
		n, PLAN(m), PP_FIELD_ONOFF, 0, 0, NULL                                             \
	}
#define PLAN_WORD(n, m, f)                                                                         \
	{                                                                                          \
		n, PLAN(m), PP_FIELD_WORD, 0, 0, f                                                 \
	}
#define JOB_INT(n, m, lo, hi)                                                                      \
	{                                                                                          \
		n, JOB(m), PP_FIELD_INT, lo, hi, NULL                                              \
	}
#define JOB_COUNT(n, m)                                                                            \
	{                                                                                          \
		n, JOB(m), PP_FIELD_COUNT, 0, 0, NULL                                              \
	}
#define JOB_ONOFF(n, m)                                                                            \
	{                                                                                          \
		n, JOB(m), PP_FIELD_ONOFF, 0, 0, NULL                                              \
	}
#define JOB_WORD(n, m, f)                                                                          \
	{                                                                                          \
		n, JOB(m), PP_FIELD_WORD, 0, 0, f                                                  \
	}

/* In the order `paraplan estimate --help` lists them. */
static const pp_field fields[] = {
    JOB_INT("gbs", global_batch, 1, GBS_MAX),
    JOB_INT("seq", seq_len, 1, SEQ_MAX),
    JOB_COUNT("tokens", train_tokens),
    JOB_WORD("precision", precision, precision),
    JOB_WORD("fp8-recipe", fp8_recipe, fp8_recipe),
    JOB_ONOFF("fp8-params", fp8_params),
    PLAN_INT("tp", tp, 1, DEGREE_MAX),
    PLAN_INT("tp2", tp2, 1, DEGREE_MAX),
    PLAN_ONOFF("summa", summa),
    PLAN_INT("summa-nb", summa_nb, 1, DEGREE_MAX),
    PLAN_INT("pp", pp, 1, DEGREE_MAX),
    PLAN_INT("first-stage-layers", first_stage_layers, 0, DEGREE_MAX),
    PLAN_INT("last-stage-layers", last_stage_layers, 0, DEGREE_MAX),
    PLAN_ONOFF("embedding-as-layer", embedding_as_layer),
    PLAN_ONOFF("loss-as-layer", loss_as_layer),
    PLAN_INT("dp", dp, 1, DP_MAX),
    PLAN_INT("cp", cp, 1, DEGREE_MAX),
    PLAN_INT("ep", ep, 1, DEGREE_MAX),
    PLAN_INT("etp", etp, 1, DEGREE_MAX),
    PLAN_INT("vp", vp, 1, DEGREE_MAX),
    PLAN_INT("mbs", mbs, 1, DEGREE_MAX),
    PLAN_INT("zero", zero, 0, ZERO_MAX),
    PLAN_WORD("recompute", recompute, recompute),
    PLAN_WORD("recompute-modules", recompute_modules, pp_recompute_modules_parse),
    PLAN_ONOFF("sp", sp),
    PLAN_WORD("schedule", schedule, schedule),
    PLAN_WORD("si", schedule, strands),
    PLAN_WORD("order", order, order),
    JOB_WORD("grad-dtype", grad_bytes, grad_dtype),
    JOB_WORD("grad-reduce-dtype", reduce_bytes, grad_dtype),
    JOB_WORD("optimizer", optimizer, optimizer),
    PLAN_ONOFF("flash", flash),
    PLAN_ONOFF("tp-overlap", tp_overlap),
    PLAN_ONOFF("ep-overlap", ep_overlap),
    JOB_ONOFF("compile", compile),
    PLAN_ONOFF("offload-optimizer", offload_optimizer),
    PLAN_ONOFF("offload-params", offload_params),
    PLAN_ONOFF("offload-activations", offload_activations),
    PLAN_INT("offload-layers", offload_layers, 0, DEGREE_MAX),
    JOB_WORD("moe-routing", moe_routing, moe_routing),
    JOB_WORD("moe-dispatcher", moe_dispatcher, moe_dispatcher),
    JOB_WORD("freeze", ft, pp_finetune_freeze_parse),
    JOB_INT("lora-rank", ft.lora_rank, 1, DEGREE_MAX),
    JOB_WORD("lora-targets", ft.lora_targets, pp_finetune_targets_parse),
    JOB_WORD("base-weights", ft.nf4, pp_finetune_base_parse),
    JOB_ONOFF("energy", energy.on),
    JOB_WORD("pue", energy.pue, pue),
    JOB_WORD("grid-gco2-per-kwh", energy.gco2_per_kwh, gco2_per_kwh),
    JOB_WORD("usd-per-kwh", energy.usd_per_kwh, usd_per_kwh),
    JOB_WORD("power-cap-mw", energy.power_cap_w, power_cap_mw),
};

#define NFIELDS (sizeof fields / sizeof fields[0])

const pp_field *pp_field_at(size_t i)
{
	return i < NFIELDS ? &fields[i] : NULL;
}

const pp_field *pp_field_find(const char *name)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (strcmp(fields[i].name, name) == 0)
			return &fields[i];
	return NULL;
}

/* A whole number in [lo, hi], nothing else on the string. */
static pp_status whole(const char *s, long long lo, long long hi, long long *out, pp_error *err)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return ppi_fail(err, NULL, NULL, "expected an integer, got '%s'", s);
	if (v < lo || v > hi)
		return ppi_fail(err, NULL, NULL, "expected %lld..%lld, got %lld", lo, hi, v);
	*out = v;
	return PP_OK;
}

/* A count with an optional K/M/B/T suffix ("15T"), or a plain number ("1.5e13"). */
static pp_status count(const char *s, double *out, pp_error *err)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end != s && *end) {
		static const char suf[] = "KMBT";
		const char *p = strchr(suf, end[0] & ~0x20);
		if (p && !end[1]) {
			v *= pow(1e3, (double)(p - suf + 1));
			end++;
		}
	}
	if (errno || end == s || *end || !isfinite(v) || v < 0)
		return ppi_fail(err, NULL, NULL,
		                "expected a non-negative count such as 15T or 1.5e13, got '%s'", s);
	*out = v;
	return PP_OK;
}

/* Parse into `val` (holding the member's current value); PP_OK or PP_EINPUT. */
static pp_status field_parse(const pp_field *f, const char *text, void *val, pp_error *err)
{
	long long v = 0;
	switch (f->kind) {
	case PP_FIELD_INT:
		if (whole(text, f->lo, f->hi, &v, err))
			return PP_EINPUT;
		if (f->width == sizeof(int))
			*(int *)val = (int)v;
		else
			*(long long *)val = v;
		return PP_OK;
	case PP_FIELD_ONOFF: return onoff(text, val, err);
	case PP_FIELD_COUNT: return count(text, val, err);
	case PP_FIELD_WORD: return f->parse(text, val, err);
	}
	return ppi_fail(err, NULL, NULL, "unknown kind of field");
}

const char *pp_field_flag_name(const char *member)
{
	/* Members set by flags that are not fields of the registry. */
	static const struct {
		const char *member, *flag;
	} other[] = {{"gpus", "gpus"},
	             {"goodput.mtbf_gpu_hours", "mtbf-gpu-hours"},
	             {"goodput.ckpt_write_bytes_per_s", "ckpt-write-gbps"},
	             {"goodput.restart_s", "restart-min"},
	             {"sweep.life_years", "life-years"},
	             {"sweep.hosting_usd_per_kw_month", "hosting-usd-per-kw-month"}};
	for (size_t i = 0; i < NFIELDS; i++)
		if (strcmp(member, fields[i].member) == 0)
			return fields[i].name;
	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
		if (strcmp(member, other[i].member) == 0)
			return other[i].flag;
	return NULL;
}

void pp_field_error_as_flags(pp_error *err, const char *model_name)
{
	if (!err->source[0] || (model_name && strcmp(err->source, model_name) == 0))
		err->source[0] = '\0';
	const char *flag = pp_field_flag_name(err->field);
	if (flag)
		snprintf(err->field, sizeof err->field, "--%s", flag);
}

pp_status pp_field_set(pp_job *job, pp_plan *plan, const char *name, const char *text,
                       pp_error *err)
{
	const pp_field *f = pp_field_find(name);
	pp_status st;
	if (!f)
		st = ppi_fail(err, NULL, NULL, "not a field of the job or plan");
	else {
		/* Parsed into a copy: on an error the member is left as it was. */
		unsigned char *dst = (unsigned char *)(f->in_plan ? (void *)plan : (void *)job);
		alignas(max_align_t) unsigned char val[PP_ORDER_MAX];
		memcpy(val, dst + f->offset, f->width);
		st = field_parse(f, text, val, err);
		if (!st)
			memcpy(dst + f->offset, val, f->width);
	}
	if (st && err) {
		snprintf(err->field, sizeof err->field, "--%s", name);
		err->source[0] = '\0';
	}
	return st;
}
