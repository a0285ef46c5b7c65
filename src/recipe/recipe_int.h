/*
 * recipe's private helpers (prefix ppi_).
 */
#ifndef PPI_RECIPE_INT_H
#define PPI_RECIPE_INT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The place of field `path` ("phases[1].gbs.end", "plan.tp"; array elements
 * 0-based) in the JSON text[0..len): the line and column (1-based, columns in
 * characters) of its key, or of the element's first character; of the
 * longest prefix of `path` found when the whole is not (a field that is
 * missing: its object).  False when not even the first part is found.
 */
bool ppi_json_locate(const char *text, size_t len, const char *path, int *line, int *column);

#endif
