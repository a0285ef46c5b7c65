/*
 * paraplan place: map a plan's workers to GPUs on a measured (or synthetic)
 * bandwidth matrix by simulated annealing over Pipette's latency model
 * (seed 001 §IV-V), print the mapping and its gain over the identity, and
 * write it as an Open MPI rankfile (rendered by report: PP_RESULT_PLACE in the
 * text and rankfile formats).
 */
#include <stdlib.h>
#include <string.h>

#include "options.h"

static void place_usage(FILE *f)
{
	cli_usage(f, "place"); /* docs/usage/place.txt */
}

typedef struct place_flags {
	const char *bandwidth, *rankfile, *traffic;
	long long synthetic, seed, moves;
	bool large; /* --large-output */
} place_flags;

#define AT(m) offsetof(place_flags, m)
static const cli_flag place_flag_rows[] = {
    CLI_ROW("bandwidth", CLI_F_FILE, AT(bandwidth)),
    CLI_ROW("synthetic", CLI_F_LL, AT(synthetic), .lo = 0, .hi = 1LL << 62),
    CLI_ROW("seed", CLI_F_LL, AT(seed), .lo = 0, .hi = 1LL << 62),
    CLI_ROW("moves", CLI_F_LL, AT(moves), .lo = 1, .hi = 1000000000LL),
    CLI_ROW("rankfile", CLI_F_FILE, AT(rankfile)),
    CLI_ROW("traffic", CLI_F_FILE, AT(traffic)),
    CLI_ROW("large-output", CLI_F_SET, AT(large)),
    CLI_END};
#undef AT

/*
 * The shared flags that would change nothing in a mapping: refused, one line
 * each (every other shared flag shapes the plan the mapping is of).
 */
static int place_take(const char *flag, const char *value, void *ctx)
{
	(void)value;
	(void)ctx;
	static const struct {
		const char *flag, *why;
	} none[] = {
	    {"json", "the mapping report is text only"},
	    {"order", "workers are ranked tp-dp-pp (Megatron's default), the mapping places them"},
	    {"tokens", "the mapping is of one iteration; it has no training time"},
	    {"usd-per-gpu-hour", "the mapping has no cost"},
	};
	for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
		if (strcmp(flag, none[i].flag) == 0) {
			cli_message("place: --%s does not apply: %s", flag, none[i].why);
			return EXIT_BADINPUT;
		}
	return CLI_CONTINUE;
}

/* The traffic of the mapped placement (pp_traffic_of_estimate_mapped) into
 * `path`, the csv or json format by its name.  0 or an exit code. */
static int mapped_traffic(const pp_estimate *e, const long long *f, const char *path,
                          const pp_model *model, pp_traffic **out)
{
	pp_error err;
	pp_error_clear(&err);
	pp_status st = pp_traffic_of_estimate_mapped(e, f, out, &err);
	if (st)
		return cli_plan_fail(st, &err, model);
	size_t n = strlen(path);
	bool csv = n >= 4 && strcmp(path + n - 4, ".csv") == 0;
	return cli_render_to(path, pp_format_find(csv ? "csv" : "json"),
	                     &(pp_result){.kind = PP_RESULT_TRAFFIC, .traffic = *out});
}

/* The options into `o` and `fl`, checked for form and consistency, no file
 * read: CLI_CONTINUE or an exit code. */
static int place_parse(int argc, char **argv, place_flags *fl, cli_opts *o)
{
	*fl = (place_flags){NULL, NULL, NULL, -1, 1, 100000, false};
	const cli_verb verb = {"place", place_usage, place_flag_rows, fl, place_take};
	int rc = cli_opts_parse(argc, argv, &verb, o);
	if (rc != CLI_CONTINUE || (rc = cli_opts_require(o, "place", true, true)))
		return rc;
	if (!fl->bandwidth == (fl->synthetic < 0)) {
		cli_message("place: give one of --bandwidth FILE and --synthetic SEED");
		return EXIT_BADINPUT;
	}
	if ((rc = cli_overlap_check("place", o)) ||
	    (rc = cli_format_check("place", o->format, PP_RESULT_PLACE)) ||
	    (fl->traffic &&
	     (rc = cli_large_output_check("place", "--traffic", o->gpus, fl->large))))
		return rc;
	return CLI_CONTINUE;
}

int cli_place_parse_only(int argc, char **argv)
{
	place_flags fl;
	cli_opts o;
	int rc = place_parse(argc, argv, &fl, &o);
	return rc == CLI_CONTINUE ? EXIT_ANSWERED : rc;
}

int cli_place(int argc, char **argv)
{
	place_flags fl;
	cli_opts o;
	int rc = place_parse(argc, argv, &fl, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	/* every output before any work */
	if ((rc = cli_out_check("place", "--output", o.output)) ||
	    (rc = cli_out_check("place", "--rankfile", fl.rankfile)) ||
	    (rc = cli_out_check("place", "--traffic", fl.traffic)))
		return rc;
	pp_model model;
	pp_system sys;
	pp_estimate *e;
	if ((rc = cli_estimate_inputs(&o, &model, &sys, &e)))
		return rc;
	pp_error err;
	pp_error_clear(&err);
	pp_bandwidth *bw = NULL;
	pp_netmap *run = NULL;
	pp_status st =
	    pp_netmap_bandwidth(e, fl.bandwidth, (unsigned long long)fl.synthetic, &bw, &err);
	if (st || (st = pp_netmap_run(e, bw, (unsigned long long)fl.seed, fl.moves, &run, &err))) {
		pp_bandwidth_free(bw);
		free(e);
		return cli_plan_fail(st, &err, &model);
	}
	pp_traffic *tr = NULL;
	pp_place_report pr = pp_place_report_of(run, fl.seed, fl.bandwidth, fl.synthetic, NULL);
	pp_result res = {.kind = PP_RESULT_PLACE, .place = &pr};
	if (fl.rankfile)
		rc = cli_render_to(fl.rankfile, pp_format_find("rankfile"), &res);
	if (!rc && fl.traffic)
		rc = mapped_traffic(e, run->best, fl.traffic, &model, &tr);
	free(e);
	pr.traffic = tr;
	if (!rc)
		rc = cli_render_to(o.output, o.format, &res);
	pp_traffic_free(tr);
	pp_netmap_free(run);
	pp_bandwidth_free(bw);
	return rc;
}
