/*
 * HuggingFace config.json reader (placeholder until the full reader lands).
 */
#include <string.h>

#include "spec_int.h"

bool ppi_is_hf_config(json_t *obj)
{
	return json_object_get(obj, "model_type") || json_object_get(obj, "architectures");
}

pp_status ppi_model_read_hf(json_t *obj, const char *source, pp_model *out, pp_error *err)
{
	(void)obj;
	(void)out;
	return ppi_fail(err, source, NULL, "HuggingFace config.json is not supported yet");
}
