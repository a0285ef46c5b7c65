/*
 * paraplan — command-line arguments read against tables of long flags.
 *
 * A program's flags are rows of pp_flag tables (name, how the value is read,
 * where it goes); pp_args walks argv as an iterator (init / next, getopt_long
 * style), so the caller decides what each flag does and the rules are the
 * same for every verb:
 *
 * - long options only, named in full: "--tp 8" or "--tp=8"; an abbreviation
 *   is an unknown option (the error names the flag it abbreviates);
 * - "-h" and "--help" are an item of their own; "--" ends the options;
 * - an argument that is not an option is an operand item;
 * - a flag given twice comes back twice (the caller's row decides whether the
 *   last wins or it adds).
 *
 * Refusals come back as PP_EINPUT and a pp_error whose text is the one line
 * to print ("estimate: unknown option '--tpp' (see 'paraplan estimate
 * --help')"); nothing here prints.  The iterator borrows argv and the tables.
 *
 *     pp_args it;
 *     pp_args_init(&it, "estimate", argc, argv, shared, own);
 *     pp_args_item item;
 *     while ((st = pp_args_next(&it, &item, &err)) == PP_OK && item.what != PP_ARG_END)
 *         ... item.flag, item.table, item.value (pp_flag_store for the plain kinds)
 */
#ifndef PARAPLAN_ARGS_H
#define PARAPLAN_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * How a flag's value is read.  The plain kinds (below PP_FLAG_CALLER) are
 * stored by pp_flag_store into the context at pp_flag.off; kinds from
 * PP_FLAG_CALLER on are the caller's own (it reads `call`, `off`).
 */
typedef enum pp_flag_kind {
	PP_FLAG_SET,   /* no value: the bool becomes true */
	PP_FLAG_INT,   /* a whole number in [lo, hi]: int */
	PP_FLAG_LL,    /* the same into a long long */
	PP_FLAG_REAL,  /* a finite number in [lo, hi], an end excluded by lo_open or hi_open:
	                * double; refused as "--NAME: expected WHAT, got 'V'" */
	PP_FLAG_PRICE, /* US dollars in 0..hi: double */
	PP_FLAG_ONOFF, /* on or off: bool */
	PP_FLAG_STR,   /* the value as given: const char * */
	PP_FLAG_FILE,  /* a name that is not empty ("needs WHAT", a file name unless `what` says) */
	PP_FLAG_CALLER /* the first kind the caller defines */
} pp_flag_kind;

/* One flag.  Tables end with a row whose name is NULL. */
typedef struct pp_flag {
	const char *name; /* "top" for --top */
	int kind;         /* a pp_flag_kind, or a caller's kind >= PP_FLAG_CALLER */
	size_t off;       /* offsetof the target in the table's context */
	double lo, hi;    /* INT, LL, REAL; PRICE: hi */
	bool lo_open, hi_open;
	const char *what; /* REAL, FILE: what is expected, for the refusal */
	/* the caller's (never called here) */
	int (*call)(void *ctx, const char *verb, const char *name, const char *value);
} pp_flag;

/* A row: name, kind, offset, then designated fields (.lo, .hi, .what, ...). */
#define PP_FLAG_ROW(n, k, at, ...)                                                                 \
	{                                                                                          \
		.name = (n), .kind = (k), .off = (at), __VA_ARGS__                                 \
	}
#define PP_FLAG_END                                                                                \
	{                                                                                          \
		.name = NULL                                                                       \
	}

typedef enum pp_arg_what {
	PP_ARG_FLAG,    /* item.flag of item.table with item.value (NULL for PP_FLAG_SET) */
	PP_ARG_OPERAND, /* item.value is an argument that is not an option */
	PP_ARG_HELP,    /* -h or --help */
	PP_ARG_END      /* argv is done */
} pp_arg_what;

typedef struct pp_args_item {
	pp_arg_what what;
	const pp_flag *flag;
	int table; /* 0 or 1: which table of pp_args_init `flag` is from */
	const char *value;
} pp_args_item;

/* The iterator's state (caller-allocated; pp_args_init fills it). */
typedef struct pp_args {
	const char *verb; /* names the verb in refusals */
	int argc, i;
	char **argv;
	bool options_end;
	const pp_flag *tables[2]; /* searched in order; either may be NULL */
} pp_args;

void pp_args_init(pp_args *it, const char *verb, int argc, char **argv, const pp_flag *table0,
                  const pp_flag *table1);

/*
 * The next item into *item: PP_OK (item->what says which), or PP_EINPUT for
 * an unknown option, a flag without its value, a value given to a flag that
 * takes none; `err` holds the line.  After PP_ARG_END it keeps returning
 * PP_ARG_END.
 */
pp_status pp_args_next(pp_args *it, pp_args_item *item, pp_error *err);

/*
 * Store `value` into the context `ctx` (at fl->off) for a plain kind of
 * flag; `verb` names the verb in refusals.  PP_OK, PP_EINPUT (one line in
 * err), or PP_EINTERNAL for a caller's kind.
 */
pp_status pp_flag_store(const pp_flag *fl, const char *verb, void *ctx, const char *value,
                        pp_error *err);

/* The readers of pp_flag_store, for callers whose own kinds read such values:
 * a whole number in [lo, hi]; a price in 0..hi US dollars; "on" or "off".
 * PP_OK or PP_EINPUT ("--FLAG: expected ...", "VERB: --FLAG expects on or off"). */
pp_status pp_arg_ll(const char *flag, const char *s, long long lo, long long hi, long long *out,
                    pp_error *err);
pp_status pp_arg_price(const char *flag, const char *s, double hi, double *out, pp_error *err);
pp_status pp_arg_onoff(const char *verb, const char *flag, const char *s, bool *out, pp_error *err);

#ifdef __cplusplus
}
#endif
#endif
