/*
 * paraplan share: two jobs, each given as estimate's flags, on one cluster
 * sharing links (pp_share_estimates, seed 000 §7); report renders it.
 */
#include <stdlib.h>

#include "options.h"

typedef struct share_flags {
	const char *job[2], *output;
	bool json;
	pp_share_topology topo;
} share_flags;

static void share_usage(FILE *f)
{
	cli_usage(f, "share"); /* docs/usage/share.txt */
}

#define AT(m) offsetof(share_flags, m)
static const cli_flag share_table[] = {
    CLI_ROW("job-a", CLI_F_STR, AT(job[0])),
    CLI_ROW("job-b", CLI_F_STR, AT(job[1])),
    CLI_ROW("nodes-per-leaf", CLI_F_INT, AT(topo.nodes_per_leaf), .lo = 1, .hi = 1 << 20),
    CLI_ROW("oversubscription", CLI_F_REAL, AT(topo.oversubscription), .lo = 1, .hi = 1024),
    CLI_ROW("node-a", CLI_F_LL, AT(topo.first_node[0]), .lo = 0, .hi = 1LL << 40),
    CLI_ROW("node-b", CLI_F_LL, AT(topo.first_node[1]), .lo = 0, .hi = 1LL << 40),
    CLI_ROW("json", CLI_F_SET, AT(json)),
    CLI_ROW("output", CLI_F_FILE, AT(output)),
    CLI_END};
#undef AT

/* share's flags and the jobs' (as estimate's), then, unless `parse_only`,
 * the two estimates and the report. */
static int share_run(int argc, char **argv, bool parse_only)
{
	share_flags f = {.topo = {0, 1, {0, -1}}};
	const cli_args args = {"share", share_usage, share_table, &f, NULL};
	int rc = cli_args_parse(argc, argv, &args);
	if (rc != CLI_CONTINUE)
		return rc;
	if (!f.job[0] || !f.job[1] || f.topo.nodes_per_leaf < 1) {
		cli_message("share: give --job-a 'FLAGS', --job-b 'FLAGS' and --nodes-per-leaf N");
		return EXIT_BADINPUT;
	}
	static cli_opts o[2];
	static pp_inputs in[2];
	pp_estimate *e[2] = {NULL, NULL};
	rc = cli_out_check("share", "--output", f.output);
	for (int k = 0; k < 2 && !rc; k++)
		rc = cli_step_inputs("share", k ? "--job-b" : "--job-a", (char *)f.job[k], &o[k],
		                     parse_only ? NULL : &in[k], &e[k]); /* argv's words, cut */
	if (parse_only)
		return rc ? rc : EXIT_ANSWERED;
	pp_share_report rep;
	pp_error err;
	pp_status st =
	    rc ? PP_OK : pp_share_estimates((const pp_estimate *const *)e, &f.topo, &rep, &err);
	if (!rc)
		rc = st ? cli_fail(st, &err)
		        : cli_render_to(f.output, pp_format_find(f.json ? "json" : "text"),
		                        &(pp_result){.kind = PP_RESULT_SHARE, .share = &rep});
	free(e[0]);
	free(e[1]);
	return rc;
}

int cli_share(int argc, char **argv)
{
	return share_run(argc, argv, false);
}

int cli_share_parse_only(int argc, char **argv)
{
	return share_run(argc, argv, true);
}
