/*
 * paraplan — output files written whole or not at all.
 *
 * An output is written to a temporary file (mode 0666 less the umask; a file
 * rewritten keeps its mode) in the directory of the file its path names, and
 * renamed over that file only when everything a command writes is done
 * (pp_output_commit), so a failure never leaves half a file and a command
 * that fails leaves every old file as it was.  A symbolic link is followed:
 * its target is written, the link stays.  An existing FIFO or character
 * device (/dev/null) is written in place.  Paths are checked before any work
 * (pp_output_check): an empty name, a directory, a missing or unwritable
 * directory, and two outputs of one command naming one file are refused.
 *
 * Failures come back as a status and a pp_error whose text reads as one
 * message ("FILE: cannot write the output file: No space left on device");
 * the library never prints.  Not thread-safe: one set per command.
 */
#ifndef PARAPLAN_OUTPUT_H
#define PARAPLAN_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_OUTPUT_PATH_MAX 4096 /* bytes of a resolved output path */
#define PP_OUTPUT_MAX 64        /* outputs one set checks, and holds pending */

/* One output being written (caller-owned; pp_output_open fills it). */
typedef struct pp_output {
	FILE *f;                           /* write here */
	const char *path;                  /* as given (borrowed); NULL for stdout */
	char target[PP_OUTPUT_PATH_MAX];   /* the file written: `path`, or where its links lead */
	char tmp[PP_OUTPUT_PATH_MAX + 16]; /* the temporary written instead */
	bool direct;                       /* written in place (a FIFO, a device) */
	bool keep_mode;                    /* a file rewritten: its mode is kept */
	unsigned mode;                     /* of the file replaced */
} pp_output;

/*
 * The outputs of one command (caller-owned, zero-initialised is empty; large:
 * keep it static): the files checked, and the temporaries closed and waiting
 * for pp_output_commit.
 */
typedef struct pp_output_set {
	int nchecked;
	struct {
		char file[PP_OUTPUT_PATH_MAX + 256]; /* the canonical name */
		const char *flag;                    /* borrowed: must outlive the set */
	} checked[PP_OUTPUT_MAX];
	int npending;
	struct {
		char tmp[PP_OUTPUT_PATH_MAX + 16];
		char target[PP_OUTPUT_PATH_MAX];
		char path[PP_OUTPUT_PATH_MAX]; /* as given, for messages */
	} pending[PP_OUTPUT_MAX];
} pp_output_set;

/*
 * Before any work: can `path` ("-" or NULL: standard output, always) given to
 * `flag` (of `verb`, which may be NULL) be written?  The file is made and
 * removed, and remembered in `set` so a second output naming it is refused.
 * PP_OK or PP_EINPUT.
 */
pp_status pp_output_check(pp_output_set *set, const char *verb, const char *flag, const char *path,
                          pp_error *err);

/* Open `path` (given to `flag`; "-" or NULL: standard output) into *o: its
 * temporary created, or the FIFO or device opened.  PP_OK or PP_EINPUT. */
pp_status pp_output_open(pp_output *o, const char *flag, const char *path, pp_error *err);

/*
 * Close the file output *o (o->path set) opened by pp_output_open.  With
 * `ok` (everything was written) its temporary waits in `set` for
 * pp_output_commit; else, or when closing fails, it is removed and the call
 * fails.  PP_OK, or PP_EINTERNAL with the reason (an I/O error).
 */
pp_status pp_output_close(pp_output_set *set, pp_output *o, bool ok, pp_error *err);

/* Close *o and remove its temporary without a word (standard output is left
 * open): the output could not be built. */
void pp_output_abandon(pp_output *o);

/*
 * The end of a command: with `keep`, every pending temporary of `set` is
 * renamed over its file; without, or after the first rename that fails,
 * the rest are removed.  `set` has nothing pending after.  PP_OK, or
 * PP_EINTERNAL naming the file that could not be renamed.
 */
pp_status pp_output_commit(pp_output_set *set, bool keep, pp_error *err);

#ifdef __cplusplus
}
#endif

#endif
