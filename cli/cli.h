/*
 * paraplan command-line tool: shared between the verbs.
 */
#ifndef PARAPLAN_CLI_H
#define PARAPLAN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "paraplan/paraplan.h"

/* Documented exit codes. */
enum { EXIT_ANSWERED = 0, EXIT_INTERNAL = 1, EXIT_BADINPUT = 2 };

extern const char *cli_progname;

/* The one reporter: "paraplan: message" on stderr. */
void cli_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Report a library error and map its status to an exit code. */
int cli_fail(pp_status st, const pp_error *err);

/*
 * Output sink: stdout, or a temporary file next to `path` renamed over it on
 * success so a failure never leaves half a file.
 */
typedef struct cli_out {
	FILE *f;
	const char *path;
	char tmp[4096];
} cli_out;
int cli_out_open(cli_out *o, const char *path);
/* Finish: rename into place (ok) or remove the temporary (!ok). Returns exit code. */
int cli_out_close(cli_out *o, int ok);

int cli_estimate(int argc, char **argv);
int cli_place(int argc, char **argv);

/* estimate's traffic flags (cli/traffic.c): --traffic FILE, --traffic-csv
 * FILE, --timeline on|off; `which` 0, 1, 2 in that order. */
typedef struct cli_traffic_opts {
	const char *json, *csv;
	bool timeline;
} cli_traffic_opts;
int cli_traffic_flag(cli_traffic_opts *o, int which, const char *value);
typedef struct cli_traffic_result {
	struct pp_traffic *traffic;
	struct pp_traffic_timeline *timeline;
	pp_placement place; /* for the timeline's nodes */
	bool have_place;
} cli_traffic_result;
/* Build what the flags ask for and write the files.  0 or an exit code. */
int cli_traffic_run(const cli_traffic_opts *o, const pp_estimate *e, const pp_sim *sim,
                    const pp_model *model, cli_traffic_result *out);
/* Append the totals / timeline to a text report.  0 or -1. */
int cli_traffic_text(const cli_traffic_result *r, FILE *f);
void cli_traffic_done(cli_traffic_result *r);
int cli_list(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_search(int argc, char **argv);
/* The default run-records file (public-runs.json) into `out`; false if none. */
bool cli_default_data(char *out, size_t n);

#endif
