/*
 * libFuzzer target: D-Helix overlap tables (--overlap FILE, the format of
 * data/overlap/NAME.json) read by pp_dh_overlap_from_json.  A failure must be
 * PP_EINPUT (or PP_ENOMEM) with a message; an accepted table must be
 * symmetric with every OEF in [-1, 1] (measured compute pairs can overlap
 * worse than back to back: the negative values of data/overlap/h100.json,
 * docs/dhelix.md; two keys of one pair that disagree are refused), and its
 * by-TP rows in increasing tp.
 */
#include <stdint.h>
#include <stdlib.h>

#include "paraplan/dhelix.h"
#include "paraplan/paraplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pp_dh_overlap o;
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_dh_overlap_from_json((const char *)data, size, "fuzz.json", &o, &err);
	if (st != PP_OK) {
		if ((st != PP_EINPUT && st != PP_ENOMEM) || (st == PP_EINPUT && !err.text[0]))
			abort();
		return 0;
	}
	for (int a = 0; a < PP_DH_NKINDS; a++)
		for (int b = 0; b < PP_DH_NKINDS; b++)
			if (!(o.oef[a][b] >= -1 && o.oef[a][b] <= 1) || o.oef[a][b] != o.oef[b][a])
				abort();
	if (o.ntp < 0 || o.ntp > PP_DH_TP_ROWS)
		abort();
	for (int i = 1; i < o.ntp; i++)
		if (o.tp_row[i].tp <= o.tp_row[i - 1].tp)
			abort();
	return 0;
}
