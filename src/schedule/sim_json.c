/*
 * A pipeline schedule given as data: each rank's task list in a JSON file.
 *
 *     {"pp": 2, "microbatches": 2, "vp": 1,
 *      "ranks": [["F0", "F1", "B0", "B1"], ["F0", "B0", "F1", "B1"]]}
 *
 * A task is its kind — F (forward), B (backward), BI (input gradients only)
 * or W (weight gradients) — then the micro-batch, and ".c" plus the chunk
 * when vp > 1 ("F3.c1").
 */
#include <stdlib.h>
#include <string.h>

#include "paraplan/sim.h"
#include "util/util.h"

/* Parse one task token; false when it is not one. */
static bool parse_task(const char *s, pp_task *t)
{
	size_t k;
	if (strncmp(s, "BI", 2) == 0) {
		t->kind = PP_TASK_BI;
		k = 2;
	} else if (s[0] == 'F' || s[0] == 'B' || s[0] == 'W') {
		t->kind = s[0] == 'F' ? PP_TASK_F : s[0] == 'B' ? PP_TASK_B : PP_TASK_W;
		k = 1;
	} else {
		return false;
	}
	char *end;
	if (s[k] < '0' || s[k] > '9')
		return false;
	long mb = strtol(s + k, &end, 10);
	if (mb < 0 || mb > 1L << 24)
		return false;
	t->mb = (int)mb;
	t->chunk = 0;
	if (*end == '.' && end[1] == 'c' && end[2] >= '0' && end[2] <= '9') {
		long c = strtol(end + 2, &end, 10);
		if (c < 0 || c > 1 << 10)
			return false;
		t->chunk = (int)c;
	}
	return *end == '\0';
}

pp_status pp_sim_orders_from_json(pp_sim *sim, const char *text, size_t len, const char *source,
                                  int p, long long m, int v, pp_error *err)
{
	json_t *root = NULL;
	PPI_TRY(ppi_json_parse_object(text, len, source, &root, err));
	ppi_obj r = {root, source, "schedule", err};
	static const char *const keys[] = {"pp", "microbatches", "vp", "ranks", "source", NULL};
	int fp = 0, fv = 1;
	long long fm = 0;
	pp_status st = ppi_obj_keys(&r, keys);
	if (!st)
		st = ppi_get_int(&r, "pp", true, 1, 1 << 20, &fp);
	if (!st)
		st = ppi_get_ll(&r, "microbatches", true, 1, 1LL << 24, &fm);
	if (!st)
		st = ppi_get_int(&r, "vp", false, 1, 1 << 10, &fv);
	if (!st && (fp != p || fm != m || fv != v))
		st = ppi_fail(err, source, "schedule",
		              "written for pp %d, %lld micro-batches, vp %d; the plan has pp %d, "
		              "%lld micro-batches, vp %d",
		              fp, fm, fv, p, m, v);
	json_t *ranks = st ? NULL : json_object_get(root, "ranks");
	if (!st && (!json_is_array(ranks) || json_array_size(ranks) != (size_t)p))
		st = ppi_fail(err, source, "schedule.ranks", "expected an array of %d task lists",
		              p);
	if (!st)
		st = pp_sim_reset(sim, p, m, v, err);
	pp_task *tasks = NULL;
	for (size_t i = 0; !st && i < (size_t)p; i++) {
		json_t *list = json_array_get(ranks, i);
		char field[64];
		snprintf(field, sizeof field, "schedule.ranks[%zu]", i);
		if (!json_is_array(list)) {
			st = ppi_fail(err, source, field, "expected an array of tasks");
			break;
		}
		size_t n = json_array_size(list);
		pp_task *t = ppi_realloc(tasks, (n ? n : 1) * sizeof *t);
		if (!t) {
			st = ppi_fail(err, source, field, "out of memory");
			st = PP_ENOMEM;
			break;
		}
		tasks = t;
		for (size_t j = 0; j < n; j++) {
			const char *s = json_string_value(json_array_get(list, j));
			if (!s || !parse_task(s, &tasks[j])) {
				snprintf(field, sizeof field, "schedule.ranks[%zu][%zu]", i, j);
				st = ppi_fail(
				    err, source, field,
				    "expected a task such as \"F3\", \"B3\", \"BI3\", \"W3\" or "
				    "\"F3.c1\", got %s",
				    s ? s : "a non-string");
				break;
			}
		}
		if (!st)
			st = pp_sim_set_order(sim, (int)i, tasks, n, err);
	}
	free(tasks);
	json_decref(root);
	return st;
}

pp_status pp_sim_orders_load(pp_sim *sim, const char *path, int p, long long m, int v,
                             pp_error *err)
{
	char *text = NULL;
	size_t len = 0;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_sim_orders_from_json(sim, text, len, path, p, m, v, err);
	free(text);
	return st;
}
