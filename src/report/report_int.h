/*
 * Private to src/report: helpers the renderings share.
 */
#ifndef PPI_REPORT_INT_H
#define PPI_REPORT_INT_H

#include <jansson.h>
#include <stdio.h>

/* Write `root` (stolen; NULL allowed) as indented JSON and a newline.  0 or -1. */
int ppi_report_dump(json_t *root, FILE *out);

#endif
