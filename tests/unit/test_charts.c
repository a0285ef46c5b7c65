/*
 * report: the charts' inputs gathered (pp_report_charts_gather): the title,
 * each stage's memory, the iteration simulated on a copy (the estimate
 * given stays as it was) and the traffic built, each chart then available;
 * the directory of --svg checked before any work (pp_report_svg_dir_check).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

static void test_gather_estimate(void **state)
{
	(void)state;
	pp_estimate *e = pp_test_gpt39(8, 4, 32, true);
	pp_error err;
	assert_true(e->fits);
	assert_false(e->simulated);
	pp_report_charts c;
	assert_int_equal(pp_report_charts_gather(&c, "estimate", e, NULL, NULL, NULL, NULL, &err),
	                 PP_OK);
	assert_false(e->simulated); /* the copy was simulated */
	assert_string_equal(c.gantt_refused, "");
	assert_true(strncmp(c.title, "paraplan estimate: ", 19) == 0);
	assert_ptr_equal(c.in.title, c.title);
	assert_ptr_equal(c.in.estimate, c.copy);
	assert_ptr_equal(c.in.sim, c.sim);
	assert_ptr_equal(c.in.traffic, c.traffic);
	assert_ptr_equal(c.in.stages, c.stages);
	assert_non_null(c.stages);
	assert_true(c.traffic->n > 0);
	for (int k = PP_CHART_MEMORY; k <= PP_CHART_TRAFFIC; k++)
		assert_true(pp_report_chart_available(&c.in, (pp_chart)k));
	assert_false(pp_report_chart_available(&c.in, PP_CHART_PARETO));
	pp_report_charts_release(&c);
	assert_null(c.copy);
	/* no estimate: the title only */
	assert_int_equal(pp_report_charts_gather(&c, "search", NULL, NULL, NULL, NULL, NULL, &err),
	                 PP_OK);
	assert_string_equal(c.title, "paraplan search");
	assert_null(c.in.estimate);
	pp_report_charts_release(&c);
	free(e);
}

/* DIR/NAME.svg; a directory that is missing, a file, or holds a directory
 * where a chart's file goes is refused, naming the verb and the flag; a
 * directory whose files can all be written passes, each file remembered. */
static void test_svg_dir_check(void **state)
{
	(void)state;
	pp_error err;
	char path[32];
	assert_int_equal(
	    pp_report_svg_path("v", "--svg", "d", PP_CHART_GANTT, path, sizeof path, &err), PP_OK);
	assert_string_equal(path, "d/gantt.svg");
	assert_int_equal(pp_report_svg_path("v", "--svg", "d", PP_CHART_GANTT, path, 8, &err),
	                 PP_EINPUT);
	char buf[256];
	assert_string_equal(pp_error_format(&err, buf, sizeof buf), "v: --svg d: path too long");
	char dir[] = "/tmp/pp_svg_XXXXXX";
	assert_non_null(mkdtemp(dir));
	static pp_output_set set; /* large: static */
	memset(&set, 0, sizeof set);
	assert_int_equal(pp_report_svg_dir_check(&set, "v", "--svg", dir, &err), PP_OK);
	assert_int_equal(set.nchecked, PP_NCHARTS);
	/* A directory that does not exist is made, with the missing one above. */
	char sub[64], missing[64], above[64];
	snprintf(above, sizeof above, "%s/none", dir);
	snprintf(missing, sizeof missing, "%s/none/deeper", dir);
	memset(&set, 0, sizeof set);
	assert_int_equal(pp_report_svg_dir_check(&set, "v", "--svg", missing, &err), PP_OK);
	struct stat st;
	assert_int_equal(stat(missing, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(rmdir(missing), 0);
	assert_int_equal(rmdir(above), 0);
	char got[256];
	snprintf(sub, sizeof sub, "%s/memory.svg", dir); /* a directory where a chart goes */
	assert_int_equal(mkdir(sub, 0700), 0);
	memset(&set, 0, sizeof set);
	assert_int_equal(pp_report_svg_dir_check(&set, "v", "--svg", dir, &err), PP_EINPUT);
	assert_int_equal(pp_report_svg_dir_check(&set, "v", "--svg", "/dev/null", &err), PP_EINPUT);
	assert_string_equal(pp_error_format(&err, got, sizeof got),
	                    "v: --svg /dev/null: not a directory");
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_gather_estimate),
	                                   cmocka_unit_test(test_svg_dir_check)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
