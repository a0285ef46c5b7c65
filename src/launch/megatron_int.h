/*
 * Private to src/launch/megatron*.c: Megatron-LM's flags as paraplan reads
 * them (core_v0.15.3, megatron/training/arguments.py).
 *
 *   megatron_shell.c  the words of a command line or launch script
 *                     (ppi_shell_words, launch_int.h)
 *   megatron.c        the flag table, the words read into it, the getters,
 *                     the job and the plan (pp_launch_from_megatron)
 *   megatron_model.c  the model the flags describe, with the MoE layer
 *                     pattern (ppi_megatron_model)
 *
 * A ppi_mseen borrows its values from the ppi_words it was read from.
 */
#ifndef PPI_LAUNCH_MEGATRON_INT_H
#define PPI_LAUNCH_MEGATRON_INT_H

#include <stdbool.h>

#include "paraplan/launch.h"
#include "util/util.h"

/* The flags paraplan reads, as Megatron-LM names them. */
enum {
	F_NUM_LAYERS,
	F_HIDDEN,
	F_FFN,
	F_HEADS,
	F_GQA,
	F_GROUPS,
	F_KV_CHANNELS,
	F_SEQ,
	F_MAX_POS,
	F_GBS,
	F_MBS,
	F_TP,
	F_PP,
	F_VP_LAYERS,
	F_VP_STAGES,
	F_CP,
	F_EP,
	F_ETP,
	F_SP,
	F_RECOMP_GRAN,
	F_RECOMP_METHOD,
	F_RECOMP_NUM,
	F_DIST_OPT,
	F_MEGATRON_FSDP,
	F_TORCH_FSDP2,
	F_SHARDING,
	F_BF16,
	F_FP16,
	F_FP8,
	F_FP8_RECIPE,
	F_FP8_PARAM_GATHER,
	F_GRAD_BF16,
	F_OPTIMIZER,
	F_EXPERTS,
	F_TOPK,
	F_MOE_FFN,
	F_MOE_SHARED,
	F_MOE_FREQ,
	F_MOE_BIAS,
	F_ROUTER_GROUPS,
	F_ROUTER_GROUP_TOPK,
	F_DISPATCHER,
	F_DEEPEP,
	F_FIRST,
	F_LAST,
	F_EMB_SPLIT,
	F_LOSS_SPLIT,
	F_SWIGLU,
	F_UNTIE,
	F_VOCAB,
	F_PADDED_VOCAB,
	F_DIVISIBLE,
	F_NORM,
	F_POSITION,
	F_NO_BIAS,
	F_QKV_BIAS,
	F_QK_NORM,
	F_ATTN_DROPOUT,
	F_HIDDEN_DROPOUT,
	F_MLA,
	F_Q_LORA,
	F_KV_LORA,
	F_QK_HEAD,
	F_QK_POS,
	F_V_HEAD,
	F_TP_OVERLAP,
	F_EP_OVERLAP,
	F_ATTN_BACKEND,
	F_TP_PP_DP,
	F_TRAIN_ITERS,
	F_TRAIN_SAMPLES,
	F_NPROC, /* torchrun */
	F_NPROC2,
	F_NNODES,
	F_COUNT
};

typedef struct ppi_mflag {
	const char *name;
	bool value; /* takes a value (else store_true) */
} ppi_mflag;

/* Each flag's name (without "--") and whether it takes a value, by F_*. */
extern const ppi_mflag ppi_mflags[F_COUNT];

/* The flags given: set[f] when flag f appeared, val[f] its last value
 * (borrowed from the words; NULL for a store_true flag). */
typedef struct ppi_mseen {
	bool set[F_COUNT];
	const char *val[F_COUNT];
} ppi_mseen;

/* PP_EINPUT with field "--<flag f>" and the formatted message. */
pp_status ppi_mflag_bad(pp_error *err, const char *source, int f, const char *fmt, ...)
    PPI_PRINTF(4, 5);
/* Flag f's value (set[f] must hold) as a whole number in [lo, hi], a
 * probability in [0, 1], or the index of one of `choices` (NULL-terminated,
 * spelled as Megatron-LM spells them); PP_EINPUT naming the flag otherwise
 * (err may be NULL).  *out is written only on success. */
pp_status ppi_mflag_ll(const ppi_mseen *s, int f, long long lo, long long hi, const char *source,
                       long long *out, pp_error *err);
pp_status ppi_mflag_int(const ppi_mseen *s, int f, int lo, int hi, const char *source, int *out,
                        pp_error *err);
pp_status ppi_mflag_double(const ppi_mseen *s, int f, const char *source, double *out,
                           pp_error *err);
pp_status ppi_mflag_choice(const ppi_mseen *s, int f, const char *const *choices,
                           const char *source, int *out, pp_error *err);

/*
 * The model the flags describe (--num-layers, --hidden-size and
 * --num-attention-heads required) into *m, with Megatron-LM's defaults;
 * `plan` gives tp (the vocabulary's padding) and `seq` the default of
 * --max-position-embeddings.  PP_EINPUT when a flag is malformed or the model
 * fails pp_model_check (err->source = source).
 */
pp_status ppi_megatron_model(const ppi_mseen *s, const char *source, const pp_plan *plan, int seq,
                             pp_model *m, pp_error *err);

#endif
