/*
 * The source JSON of a system reference, for writers that start from it
 * (paraplan calibrate --nccl-tests, --step-times); declared in spec.h.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "spec_int.h"

static pp_status source_text(pp_kind kind, const char *ref, char **text, size_t *len, pp_error *err)
{
	struct stat st;
	if (stat(ref, &st) == 0 || strchr(ref, '/') || strstr(ref, ".json"))
		return ppi_read_file(ref, text, len, err);
	const ppi_preset_file *f;
	PPI_TRY(ppi_preset_find(kind, ref, &f, err));
	size_t n = strlen(f->text);
	char *copy = ppi_malloc(n + 1);
	if (!copy) {
		ppi_fail(err, ref, "", "out of memory");
		return PP_ENOMEM;
	}
	memcpy(copy, f->text, n + 1);
	*text = copy;
	*len = n;
	return PP_OK;
}

pp_status pp_system_source_text(const char *ref, char **text, size_t *len, pp_error *err)
{
	return source_text(PP_KIND_SYSTEM, ref, text, len, err);
}

pp_status pp_gpu_source_text(const char *ref, char **text, size_t *len, pp_error *err)
{
	return source_text(PP_KIND_GPU, ref, text, len, err);
}
