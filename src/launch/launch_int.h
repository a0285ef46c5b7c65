/*
 * Private to src/launch: shell words.
 */
#ifndef PPI_LAUNCH_INT_H
#define PPI_LAUNCH_INT_H

#include <stdbool.h>
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

/* The TOML subset of toml.c: each key = value as "table.key" and its text. */
#define PPI_TOML_KEY_MAX 128
#define PPI_TOML_VALUE_MAX 256
/* Keys in one file: a torchtitan job has about a hundred; the bound keeps
 * the items (about 400 bytes each) at a few MB whatever the input. */
#define PPI_TOML_ITEMS_MAX 10000

typedef struct ppi_toml_item {
	char key[PPI_TOML_KEY_MAX];     /* "parallelism.tensor_parallel_degree" */
	char value[PPI_TOML_VALUE_MAX]; /* unquoted; an array's elements joined with ',' */
	char kind; /* 's' string, 'i' integer, 'f' float, 'b' bool, 'a' array */
	int line;
	bool used;
} ppi_toml_item;

typedef struct ppi_toml {
	ppi_toml_item *items;
	int n, cap;
} ppi_toml;

pp_status ppi_toml_parse(const char *text, size_t len, const char *source, ppi_toml *out,
                         pp_error *err);
const ppi_toml_item *ppi_toml_get(const ppi_toml *t, const char *key);
void ppi_toml_free(ppi_toml *t);

#endif
