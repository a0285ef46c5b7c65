/*
 * paraplan command-line tool: shared between the verbs.
 */
#ifndef PARAPLAN_CLI_H
#define PARAPLAN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "paraplan/calib.h"
#include "paraplan/output.h"
#include "paraplan/paraplan.h"
#include "usage.h" /* cli_usage: the verbs' help texts, docs/usage/ */

/* Documented exit codes. */
enum { EXIT_ANSWERED = 0, EXIT_INTERNAL = 1, EXIT_BADINPUT = 2 };

/* The one reporter: "paraplan: message" on stderr, one line (control
 * characters escaped); to cli_message_hook instead when it is set (the fuzz
 * target counts and checks the lines). */
void cli_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same reporter for a line that informs and is neither the answer nor a
 * refusal ("paraplan: note: ..."): a launch script's unused flags, what --emit
 * cannot express.  While the hook runs for it, cli_message_is_note is true, so
 * the fuzz target tells a note from an error whose text merely starts with
 * "note: " (a file of that name). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern void (*cli_message_hook)(const char *line);
extern bool cli_message_is_note;
/* Report a library error and map its status to an exit code. */
int cli_fail(pp_status st, const pp_error *err);

/*
 * Output sink (pp_output, include/paraplan/output.h): stdout ("-" or no
 * path), or a temporary file renamed over the file `path` names when the
 * command answers (cli_finish), so a failure never leaves half a file.
 */
typedef pp_output cli_out;
/*
 * Before any work: can `path` (given to `flag` of `verb`) be written?  An
 * empty name, a directory, a missing or unwritable directory are refused.
 * 0, or EXIT_BADINPUT after one message.
 */
int cli_out_check(const char *verb, const char *flag, const char *path);
int cli_out_open(cli_out *o, const char *path);
/* Finish: close the temporary and keep it for cli_finish (ok) or remove it
 * (!ok). Returns exit code.  `ok` as cli_report_ok gives it: a report out of
 * memory removes the temporary, and "out of memory" is the one message. */
int cli_out_close(cli_out *o, int ok);
/*
 * The end of every command (main): standard output flushed and checked (a
 * write error there is exit 1 and one message, whatever the verb), then
 * every output the command closed renamed into place together when it
 * answers (`rc` 0), or removed when it failed: all of a command's files or
 * none.  The exit code.
 */
int cli_finish(int rc);
/* cli_out_close's `ok` for a report's return (0, -1, PP_REPORT_ENOMEM) on `f`. */
int cli_report_ok(int wr, FILE *f);

/*
 * A verb's option parsing only, no file read and no work: the exit code the
 * verb would return after its options (0 when it would go on).  For the fuzz
 * target of the command line (fuzz/fuzz_cli.c).
 */
int cli_estimate_parse_only(int argc, char **argv);
int cli_search_parse_only(int argc, char **argv);
int cli_sweep_parse_only(int argc, char **argv);
int cli_validate_parse_only(int argc, char **argv);
int cli_calibrate_parse_only(int argc, char **argv);
int cli_kernel_parse_only(int argc, char **argv);
int cli_place_parse_only(int argc, char **argv);
int cli_share_parse_only(int argc, char **argv);

int cli_estimate(int argc, char **argv);
int cli_place(int argc, char **argv);

/*
 * Progress on long work (search, sweep, validate, calibrate), on stderr and
 * only when it is a terminal and --quiet was not given: a first line saying
 * what will be done (cli_progress_start), then one line redrawn in place at
 * most 4 times a second once the work has run half a second
 * (cli_progress_show: what the caller says, the elapsed time and, from the
 * fraction done, the ETA), erased by cli_progress_end.  Never on stdout.
 */
typedef struct cli_progress {
	bool on, shown;
	double start, last;
	char verb[32];
} cli_progress;
void cli_progress_start(cli_progress *p, const char *verb, bool quiet, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* `force`: draw now (the last state before cli_progress_end). */
void cli_progress_show(cli_progress *p, double fraction, bool force, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
double cli_progress_elapsed(const cli_progress *p);
void cli_progress_end(cli_progress *p);

/* --html FILE and --svg DIR (cli/charts.c; cli_charts_check in cli/common.c, beside the outputs). */
typedef struct cli_charts {
	const char *html;    /* the page, or NULL */
	const char *svg_dir; /* a directory for one SVG per chart, or NULL */
	bool large;          /* --large-output: above CLI_LARGE_OUTPUT_GPUS too */
	bool as_report;      /* --format html: the page is the verb's report */
} cli_charts;
/*
 * The outputs whose size grows with the GPUs (the traffic matrix of --traffic
 * and --traffic-csv) are refused above this many GPUs unless --large-output is
 * given: measured on llama3-8b, tp 8, 262,144 GPUs wrote an 18 MB traffic JSON
 * in 9.8 s (206 MB peak), 4M GPUs take 3 GB; at 65,536 GPUs it is 4.3 MB in
 * 3.1 s.
 */
#define CLI_LARGE_OUTPUT_GPUS 65536
/* `flag` (an output of that kind) at `gpus`: 0, or EXIT_BADINPUT after one
 * message when `gpus` is above the limit and `large` (--large-output) is not set. */
int cli_large_output_check(const char *verb, const char *flag, long long gpus, bool large);
/*
 * --html and --svg are bounded in size (the heat map bins GPU pairs and node
 * lines into at most 64 a side: 74 KB at 1M GPUs), but the traffic they bin is
 * built pair by pair: on llama3-8b, tp 8, 1,048,576 GPUs take 4.0 s and 815 MB
 * (about 800 bytes a GPU), 131,072 GPUs 0.44 s and 105 MB.  Above this many
 * GPUs they are refused unless --large-output is given.
 */
#define CLI_LARGE_CHARTS_GPUS 1048576
/* The charts `c` asks for at `gpus`: 0, or EXIT_BADINPUT after one message
 * above CLI_LARGE_CHARTS_GPUS without --large-output (c->large). */
int cli_charts_large_check(const char *verb, const cli_charts *c, long long gpus);
static inline bool cli_charts_wanted(const cli_charts *c)
{
	return c->html || c->svg_dir;
}
/* Before any work: the page can be written, the directory exists and every
 * file it may receive (DIR/memory.svg, ...) can be written.  0 or EXIT_BADINPUT. */
int cli_charts_check(const char *verb, const cli_charts *c);
/*
 * The charts of what a verb has: an estimate `e` (a search's winner; NULL
 * for none) with its simulator `sim` and `traffic` when the verb has them
 * (else a copy of `e` is simulated here, best effort, and the traffic built),
 * a finished search, a sweep.  0 or an exit code (after one message).
 */
int cli_charts_emit(const cli_charts *c, const char *verb, const pp_estimate *e, const pp_sim *sim,
                    const pp_traffic *traffic, const pp_search *search, const pp_sweep *sweep,
                    const pp_model *model);
int cli_list(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
int cli_kernel(int argc, char **argv);
/* calibrate's modes after its flags (cli/calibrate.c): --nccl-tests
 * (cli/calibrate_system.c, at most CLI_NCCL_MAX_LOGS logs) and --step-times
 * (the same file).  Exit codes. */
#define CLI_NCCL_MAX_LOGS 64
int cli_calibrate_nccl(const char *const *paths, size_t np, const char *system, const char *output);
int cli_calibrate_steps(const char *path, const char *memory, const char *output);
int cli_sweep(int argc, char **argv);
int cli_search(int argc, char **argv);
int cli_share(int argc, char **argv);
int cli_plan_run(int argc, char **argv);

#endif
