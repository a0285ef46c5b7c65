/*
 * libFuzzer target: the model readers on arbitrary bytes.
 *
 * Feeds the input to the HuggingFace config.json reader and to the generic
 * model reader (which dispatches HF-looking files to the same reader and the
 * rest to paraplan's own format).  Any crash, sanitizer report or an accepted
 * model whose parameter count is not a finite positive number is a bug.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "paraplan/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_model(const pp_model *m)
{
	pp_error err;
	if (pp_model_check(m, &err) != PP_OK)
		abort(); /* a reader accepted a model its own check rejects */
	pp_param_count c;
	pp_model_params(m, &c);
	if (!isfinite(c.total) || !(c.total > 0) || !isfinite(c.active) ||
	    c.active > c.total * (1 + 1e-9))
		abort();
	pp_layer_params lp;
	pp_model_layer_params(m, m->num_layers - 1, &lp);
	if (!isfinite(lp.attention) || !isfinite(lp.mlp) || !isfinite(lp.experts))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pp_model m;
	pp_error err;
	const char *text = (const char *)data;
	if (pp_model_from_hf_json(text, size, "fuzz.json", &m, &err) == PP_OK)
		check_model(&m);
	if (pp_model_from_json(text, size, "fuzz.json", &m, &err) == PP_OK)
		check_model(&m);
	return 0;
}
