/*
 * paraplan — launch flags in and out: a plan read from, and written as, the
 * flags of the training frameworks people launch with.
 *
 * In: Megatron-LM's command-line flags (a string, or a launch script from
 * which the flags are picked: shell words, quotes, line continuations,
 * comments and simple NAME=value variables are understood), with Megatron's
 * semantics and defaults as of Megatron-LM core_v0.15.3
 * (megatron/training/arguments.py, commit 309ffca6a40553362d44fd17efc56b772fa1aa44):
 * the model's shape, the batch, the sequence, the precision and the parallel
 * plan.  A flag paraplan does not use is listed, not refused.
 *
 * Out: an estimate's model, job and plan as Megatron-LM flags, NeMo 2.0
 * recipe overrides (nemo llm pretrain ... key=value) or a torchtitan TOML
 * job file's sections.  What a framework cannot express (a zero-bubble
 * schedule in Megatron, 2D TP anywhere) is said in `notes`, never dropped
 * silently.  Emitting Megatron flags and reading them back gives the same
 * model, job and plan (tests/unit/test_launch.c).
 */
#ifndef PARAPLAN_LAUNCH_H
#define PARAPLAN_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "estimate.h"
#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PP_LAUNCH_NOTES_MAX 2048

typedef struct pp_launch {
	pp_model model; /* from the shape flags, Megatron's defaults for the rest */
	bool has_model; /* --num-layers, --hidden-size, --num-attention-heads were given */
	bool has_gbs;   /* --global-batch-size */
	bool has_seq;   /* --seq-length */
	long long gpus; /* torchrun --nnodes x --nproc-per-node in a script; 0 = not given */
	int unused;     /* flags paraplan does not use */
	char unused_flags[PP_LAUNCH_NOTES_MAX]; /* their names, space-separated */
} pp_launch;

/*
 * Read Megatron-LM flags from `text` (`len` bytes; `source` names it in
 * errors).  `job` and `plan` are overwritten with Megatron's view of the run:
 * what the flags say, Megatron's defaults for what they leave out (fp32 when
 * neither --bf16 nor --fp16, 1F1B unless virtual stages, no distributed
 * optimizer, ...); job->train_tokens is kept unless --train-samples or
 * --train-iters is given.  PP_EINPUT with the flag as the field on a value
 * that is not a number, a choice Megatron does not offer, or a model missing
 * one of its required sizes.
 */
pp_status pp_launch_from_megatron(const char *text, size_t len, const char *source, pp_job *job,
                                  pp_plan *plan, pp_launch *out, pp_error *err);

/* Read the file at `path` (a launch script, or a file of flags) as above. */
pp_status pp_launch_load_megatron(const char *path, pp_job *job, pp_plan *plan, pp_launch *out,
                                  pp_error *err);

/*
 * Read a torchtitan job TOML (`len` bytes of `text`): [model] (a flavor that
 * is a paraplan preset gives the model: llama3 8B/70B/405B = llama3.1-*,
 * deepseek_v3 671B; model.converters "float8" = FP8), [training]
 * (local/global batch, seq_len, mixed precision, steps), [parallelism]
 * (replicate x shard = dp, FSDP2 sharding = ZeRO-3, tp (with sp), pp,
 * cp, ep, etp, schedule, micro-batch, layers per stage) and
 * [activation_checkpoint], with torchtitan's defaults (selective
 * recompute, bf16, FSDP) as of job_config.py at commit 000204a4.  Keys
 * paraplan does not use are listed in out->unused_flags.  The TOML subset:
 * tables, bare keys, strings, numbers, booleans, one-line arrays.
 */
pp_status pp_launch_from_torchtitan(const char *text, size_t len, const char *source, pp_job *job,
                                    pp_plan *plan, pp_launch *out, pp_error *err);
pp_status pp_launch_load_torchtitan(const char *path, pp_job *job, pp_plan *plan, pp_launch *out,
                                    pp_error *err);

/*
 * The command line's launch flags: `flag` "from-torchtitan" reads the job
 * TOML `value` (pp_launch_load_torchtitan); "from-megatron" reads a launch
 * script when `value` is "@FILE", else Megatron flags (source
 * "--from-megatron").  `job`, `plan` and *out as those functions leave them;
 * `note` (caller-owned, `n` bytes) gets the one line naming the flags (keys)
 * paraplan does not use, "--from-megatron: 2 flags not used: ...", or "" when
 * none.  PP_OK or their error.
 */
pp_status pp_launch_apply(const char *flag, const char *value, pp_job *job, pp_plan *plan,
                          pp_launch *out, char *note, size_t n, pp_error *err);

/* Output formats of pp_launch_emit. */
typedef enum pp_launch_format {
	PP_LAUNCH_MEGATRON = 0,   /* Megatron-LM command-line flags */
	PP_LAUNCH_NEMO = 1,       /* NeMo 2.0 recipe overrides */
	PP_LAUNCH_TORCHTITAN = 2, /* torchtitan job TOML sections */
} pp_launch_format;

/* "megatron", "nemo", "torchtitan" into `out`; PP_EINPUT naming `field` otherwise. */
pp_status pp_launch_format_parse(const char *s, const char *field, pp_launch_format *out,
                                 pp_error *err);

/*
 * Write the model, job and plan of `e` (resolved) in `format` to `out`.
 * What the format cannot express goes to `notes` (one sentence each, '\n'
 * separated; empty when nothing was lost).  0, or -1 on a write error.
 */
int pp_launch_emit(const pp_estimate *e, pp_launch_format format, FILE *out, char *notes,
                   size_t notes_len);

#ifdef __cplusplus
}
#endif
#endif
