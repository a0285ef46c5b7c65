/*
 * Private to src/launch: shell words.
 */
#ifndef PPI_LAUNCH_INT_H
#define PPI_LAUNCH_INT_H

#include <stddef.h>

#include "paraplan/error.h"

typedef struct ppi_words {
	char **w;
	int n, cap;
} ppi_words;

/*
 * Split `text` into words as a POSIX shell would for a simple command line:
 * blanks, ; | & ( ) separate; '...' and "..." quote; a backslash escapes the
 * next character and joins lines; # starts a comment; NAME=value words set a
 * variable that later $NAME, ${NAME}, ${NAME:-default} expand to (unknown
 * ones stay as written).  PP_EINPUT on an unterminated quote or a NUL byte.
 */
pp_status ppi_shell_words(const char *text, size_t len, const char *source, ppi_words *out,
                          pp_error *err);
void ppi_words_free(ppi_words *w);

#endif
