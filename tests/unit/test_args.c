/*
 * args: the command line against flag tables (include/paraplan/args.h): the
 * items in order, each refusal one line, the plain kinds stored.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "paraplan/args.h"

typedef struct opts {
	int top;
	long long n;
	double frac, usd;
	bool quiet, on;
	const char *name, *file;
} opts;

#define AT(m) offsetof(opts, m)
static const pp_flag shared[] = {PP_FLAG_ROW("quiet", PP_FLAG_SET, AT(quiet)),
                                 PP_FLAG_ROW("name", PP_FLAG_STR, AT(name)), PP_FLAG_END};
static const pp_flag own[] = {PP_FLAG_ROW("top", PP_FLAG_INT, AT(top), .lo = 1, .hi = 10),
                              PP_FLAG_ROW("n", PP_FLAG_LL, AT(n), .lo = 0, .hi = 1e12),
                              PP_FLAG_ROW("frac", PP_FLAG_REAL, AT(frac), .lo = 0, .hi = 1,
                                          .hi_open = true, .what = "a fraction in [0, 1)"),
                              PP_FLAG_ROW("usd", PP_FLAG_PRICE, AT(usd), .hi = 100),
                              PP_FLAG_ROW("on", PP_FLAG_ONOFF, AT(on)),
                              PP_FLAG_ROW("file", PP_FLAG_FILE, AT(file)),
                              PP_FLAG_ROW("nameplate", PP_FLAG_STR, AT(name)),
                              PP_FLAG_ROW("custom", PP_FLAG_CALLER, 0),
                              PP_FLAG_END};
#undef AT

/* Every item of `argv` stored into *o; the first refusal's text into `text`. */
static pp_status run(int argc, char **argv, opts *o, char *text, int *operands)
{
	pp_args it;
	pp_args_init(&it, "verb", argc, argv, shared, own);
	pp_args_item a;
	pp_error err;
	pp_error_clear(&err);
	pp_status st;
	memset(o, 0, sizeof *o);
	*operands = 0;
	text[0] = '\0';
	while ((st = pp_args_next(&it, &a, &err)) == PP_OK && a.what != PP_ARG_END) {
		if (a.what == PP_ARG_OPERAND)
			++*operands;
		else if (a.what == PP_ARG_FLAG &&
		         (st = pp_flag_store(a.flag, "verb", o, a.value, &err)))
			break;
	}
	if (st)
		strcpy(text, err.text);
	return st;
}

static void test_items_stored(void **state)
{
	(void)state;
	char *argv[] = {
	    "prog", "--top", "3",  "--n=1000000000000", "--frac", "0.25", "op1", "--usd",
	    "0",    "--on",  "on", "--quiet",           "--name", "x",    "--",  "--top"};
	opts o;
	char text[320];
	int nops;
	assert_int_equal(run(16, argv, &o, text, &nops), PP_OK);
	assert_int_equal(o.top, 3);
	assert_true(o.n == 1000000000000LL);
	assert_true(o.frac == 0.25 && o.usd == 0 && o.on && o.quiet);
	assert_string_equal(o.name, "x");
	assert_int_equal(nops, 2); /* "op1" and the "--top" after "--" */
}

/* Each refusal: the input, the one line it gives. */
static void test_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *a, *b, *line;
	} cases[] = {
	    {"--nam", NULL, "verb: unknown option '--nam' (see 'paraplan verb --help')"},
	    {"--namepl", NULL,
	     "verb: unknown option '--namepl' (did you mean '--nameplate'? options are not "
	     "abbreviated)"},
	    {"--top", NULL, "--top: missing value"},
	    {"--top", "11", "--top: expected 1..10, got 11"},
	    {"--top", "2x", "--top: expected an integer, got '2x'"},
	    {"--quiet=1", NULL, "verb: --quiet takes no value, got '--quiet=1'"},
	    {"--frac", "1", "--frac: expected a fraction in [0, 1), got '1'"},
	    {"--usd", "-0", "--usd: expected a price in 0..100, got '-0'"},
	    {"--on", "yes", "verb: --on expects on or off, got 'yes'"},
	    {"--file", "", "verb: --file needs a file name"},
	    {"-x", NULL, "verb: unknown option '-x' (see 'paraplan verb --help')"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *argv[] = {"prog", (char *)cases[i].a, (char *)cases[i].b};
		opts o;
		char text[320];
		int nops;
		assert_int_equal(run(cases[i].b ? 3 : 2, argv, &o, text, &nops), PP_EINPUT);
		assert_string_equal(text, cases[i].line);
	}
}

static void test_help_and_caller_kind(void **state)
{
	(void)state;
	char *argv[] = {"prog", "--custom", "v", "-h"};
	pp_args it;
	pp_args_init(&it, "verb", 4, argv, NULL, own);
	pp_args_item a;
	pp_error err;
	assert_int_equal(pp_args_next(&it, &a, &err), PP_OK);
	assert_int_equal(a.what, PP_ARG_FLAG);
	assert_int_equal(a.table, 1);
	assert_string_equal(a.value, "v");
	opts o;
	/* a caller's kind is the caller's: storing it is a bug, not bad input */
	assert_int_equal(pp_flag_store(a.flag, "verb", &o, a.value, &err), PP_EINTERNAL);
	assert_int_equal(pp_args_next(&it, &a, &err), PP_OK);
	assert_int_equal(a.what, PP_ARG_HELP);
	assert_int_equal(pp_args_next(&it, &a, &err), PP_OK);
	assert_int_equal(a.what, PP_ARG_END);
	assert_int_equal(pp_args_next(&it, &a, &err), PP_OK);
	assert_int_equal(a.what, PP_ARG_END);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_items_stored),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_help_and_caller_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
