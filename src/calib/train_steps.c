/*
 * Measured training steps on one GPU (a JSONL file in the format of
 * ../shared/measurements/h100-sxm/train_steps_eager.jsonl, README there):
 * one JSON object per line with the model's shape, the micro-batch, the
 * recompute mode and what was measured (step time, static and peak
 * allocated / reserved bytes).  Each line becomes a pp_train_step holding
 * the measurement and the inputs of an estimate that describes the same
 * loop: the Llama-shaped model, one h100-sxm of dgx-h100, BF16 autocast over
 * fp32 parameters and gradients with fused AdamW (--framework torchtitan,
 * whose alias is `pytorch`).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "paraplan/calib.h"
#include "paraplan/inputs.h"
#include "util/util.h"

/* The model every line's shape overrides (Llama: RMSNorm, SwiGLU, RoPE, no
 * bias), the system and the stack of the loop the README describes. */
#define STEPS_BASE_MODEL "llama3-8b"
#define STEPS_SYSTEM "dgx-h100"
#define STEPS_FRAMEWORK "pytorch"
#define STEPS_GPUS 1
#define STEPS_SHAPE_MAX 10000000 /* bound of one shape field (layers, widths, vocab) */
#define STEPS_BYTES_MAX 1e15     /* bound of a measured byte count */
#define STEPS_SECONDS_MAX 1e6    /* bound of a measured time */

static const char *const step_keys[] = {"kind",
                                        "model",
                                        "layers",
                                        "hidden",
                                        "heads",
                                        "kv_heads",
                                        "ffn",
                                        "vocab",
                                        "tied",
                                        "params",
                                        "seq",
                                        "mbs",
                                        "microbatches",
                                        "recompute",
                                        "compiled",
                                        "precision",
                                        "warmup_s",
                                        "step_s",
                                        "steps_s",
                                        "static_bytes",
                                        "peak_alloc_bytes",
                                        "peak_reserved_bytes",
                                        "opt_s",
                                        "model_tflops",
                                        NULL};

/* The measured fields of one line into *t. */
static pp_status read_measured(const ppi_obj *r, pp_train_step *t)
{
	pp_status st;
	char kind[32] = "train", prec[PP_TRAIN_STEP_TEXT_MAX] = "", rc[32] = "none";
	if ((st = ppi_get_str(r, "kind", false, kind, sizeof kind)))
		return st;
	if (strcmp(kind, "train") != 0)
		return ppi_fail(r->err, r->source, "kind", "expected \"train\", got \"%s\"", kind);
	if ((st = ppi_get_str(r, "model", false, t->model, sizeof t->model)) ||
	    (st = ppi_get_num(r, "step_s", true, 1e-9, STEPS_SECONDS_MAX, &t->step_s)) ||
	    (st = ppi_get_num(r, "opt_s", false, 0, STEPS_SECONDS_MAX, &t->opt_s)) ||
	    (st = ppi_get_num(r, "static_bytes", true, 0, STEPS_BYTES_MAX, &t->static_bytes)) ||
	    (st = ppi_get_num(r, "peak_alloc_bytes", true, 1, STEPS_BYTES_MAX,
	                      &t->peak_alloc_bytes)) ||
	    (st = ppi_get_num(r, "peak_reserved_bytes", true, 1, STEPS_BYTES_MAX,
	                      &t->peak_reserved_bytes)) ||
	    (st = ppi_get_num(r, "params", false, 0, 1e15, &t->params)) ||
	    (st = ppi_get_bool(r, "compiled", false, &t->compiled)) ||
	    (st = ppi_get_str(r, "precision", false, prec, sizeof prec)) ||
	    (st = ppi_get_str(r, "recompute", true, rc, sizeof rc)))
		return st;
	if (t->peak_reserved_bytes < t->peak_alloc_bytes)
		return ppi_fail(r->err, r->source, "peak_reserved_bytes",
		                "%.0f is below peak_alloc_bytes %.0f: the allocator reserves what "
		                "it allocates",
		                t->peak_reserved_bytes, t->peak_alloc_bytes);
	/* The loop the stack describes: BF16 autocast over fp32 parameters. */
	if (prec[0] && !strstr(prec, "bf16"))
		return ppi_fail(r->err, r->source, "precision",
		                "only BF16 autocast steps are modelled, got \"%s\"", prec);
	ppi_strlcpy(t->precision, prec, sizeof t->precision);
	return pp_recompute_parse(rc, "recompute", &t->recompute, r->err);
}

/* The model of one line: the base Llama with the line's shape. */
static pp_status read_model(const ppi_obj *r, pp_train_step *t, pp_error *err)
{
	pp_model *m = &t->in.model;
	pp_status st = pp_model_preset(STEPS_BASE_MODEL, m, err);
	if (st)
		return st;
	bool tied = false;
	if ((st = ppi_get_int(r, "layers", true, 1, STEPS_SHAPE_MAX, &m->num_layers)) ||
	    (st = ppi_get_int(r, "hidden", true, 1, STEPS_SHAPE_MAX, &m->hidden)) ||
	    (st = ppi_get_int(r, "heads", true, 1, STEPS_SHAPE_MAX, &m->num_heads)) ||
	    (st = ppi_get_int(r, "kv_heads", true, 1, STEPS_SHAPE_MAX, &m->num_kv_heads)) ||
	    (st = ppi_get_int(r, "ffn", true, 1, STEPS_SHAPE_MAX, &m->ffn_hidden)) ||
	    (st = ppi_get_int(r, "vocab", true, 1, STEPS_SHAPE_MAX, &m->vocab)) ||
	    (st = ppi_get_bool(r, "tied", true, &tied)))
		return st;
	if (m->hidden % m->num_heads)
		return ppi_fail(err, r->source, "heads", "hidden %d is not a multiple of %d heads",
		                m->hidden, m->num_heads);
	if (m->num_heads % m->num_kv_heads)
		return ppi_fail(err, r->source, "kv_heads",
		                "%d heads are not a multiple of %d kv_heads", m->num_heads,
		                m->num_kv_heads);
	m->head_dim = m->hidden / m->num_heads;
	m->tied_embeddings = tied;
	m->published_params = t->params;
	snprintf(m->name, sizeof m->name, "%s", t->model[0] ? t->model : "train-step");
	snprintf(m->source, sizeof m->source, "%s", r->source);
	return pp_model_check(m, err);
}

/* The job, plan and system of one line (the model read). */
static pp_status read_run(const ppi_obj *r, pp_train_step *t, pp_error *err)
{
	pp_inputs *in = &t->in;
	pp_status st;
	pp_job_init(&in->job);
	pp_plan_init(&in->plan);
	int mbs = 0, seq = 0;
	long long mb = 0;
	if ((st = ppi_get_int(r, "seq", true, 1, 100000000, &seq)) ||
	    (st = ppi_get_int(r, "mbs", true, 1, 1000000, &mbs)) ||
	    (st = ppi_get_ll(r, "microbatches", true, 1, 1000000, &mb)))
		return st;
	t->microbatches = mb;
	in->job.seq_len = seq;
	in->job.global_batch = (long long)mbs * mb;
	in->job.precision = PP_PREC_BF16;
	in->job.grad_bytes = 4; /* fp32 gradients of fp32 parameters under autocast */
	in->job.optimizer = PP_OPT_ADAM;
	in->plan.mbs = mbs;
	in->plan.recompute = t->recompute;
	in->gpus = STEPS_GPUS;
	if ((st = pp_system_preset(STEPS_SYSTEM, &in->system, err)) ||
	    (st = pp_system_set_framework(&in->system, STEPS_FRAMEWORK, err)))
		return st;
	/* An eager loop keeps the element-wise ops' own copies (docs/memory.md)
	 * and runs them as separate kernels; a compiled one fuses them. */
	in->system.eager_activation_copies = t->compiled ? 0 : 1;
	in->job.compile = t->compiled;
	if ((st = pp_system_compute_model(&in->system, err)))
		return st;
	return pp_plan_resolve(&in->plan, &in->model, &in->system, in->gpus, &in->job, err);
}

/* One line (a JSON object) into *t; errors name the field. */
static pp_status read_line(const char *text, size_t len, const char *source, pp_train_step *t,
                           pp_error *err)
{
	json_t *root = NULL;
	pp_status st = ppi_json_parse_object(text, len, source, &root, err);
	if (st)
		return st;
	ppi_obj r = {root, source, "", err};
	if (!(st = ppi_obj_keys(&r, step_keys)) && !(st = read_measured(&r, t)) &&
	    !(st = read_model(&r, t, err)))
		st = read_run(&r, t, err);
	json_decref(root);
	return st;
}

pp_status pp_train_steps_parse(const char *text, size_t len, const char *source,
                               pp_train_steps *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	size_t cap = 0;
	int lineno = 0;
	for (size_t at = 0; at < len;) {
		const char *line = text + at;
		const char *nl = memchr(line, '\n', len - at);
		size_t n = nl ? (size_t)(nl - line) : len - at;
		at += n + 1;
		lineno++;
		size_t k = 0;
		while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
			k++;
		if (k == n)
			continue; /* a blank line */
		if (out->n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			pp_train_step *g = ppi_realloc(out->step, ncap * sizeof *g);
			if (!g) {
				pp_train_steps_free(out);
				return ppi_oom(err);
			}
			out->step = g;
			cap = ncap;
		}
		pp_train_step *t = &out->step[out->n];
		memset(t, 0, sizeof *t);
		t->line = lineno;
		pp_status st = read_line(line, n, source, t, err);
		if (st) {
			/* The line of the file; a syntax error keeps jansson's column. */
			if (err && st == PP_EINPUT) {
				snprintf(err->source, sizeof err->source, "%s", source);
				err->line = lineno;
				if (err->column < 1)
					err->column = 1; /* a field's error: the line's start */
			}
			pp_train_steps_free(out);
			return st;
		}
		out->n++;
	}
	if (out->n == 0)
		return ppi_fail(err, source, NULL, "no training steps (one JSON object a line)");
	return PP_OK;
}

pp_status pp_train_steps_read(const char *path, pp_train_steps *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	char *text = NULL;
	size_t len = 0;
	pp_status st = ppi_read_file(path, &text, &len, err);
	if (st)
		return st;
	st = pp_train_steps_parse(text, len, path, out, err);
	free(text);
	return st;
}

void pp_train_steps_free(pp_train_steps *steps)
{
	if (!steps)
		return;
	free(steps->step);
	steps->step = NULL;
	steps->n = 0;
}
