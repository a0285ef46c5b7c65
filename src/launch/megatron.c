/*
 * Megatron-LM flags in: shell words out of a string or a launch script, then
 * the flags with Megatron-LM's semantics and defaults (core_v0.15.3,
 * megatron/training/arguments.py, commit 309ffca6a40553362d44fd17efc56b772fa1aa44;
 * line numbers below are that file's).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_int.h"
#include "paraplan/launch.h"
#include "paraplan/schedule_type.h"
#include "util/util.h"

/* ------------------------------------------------------------ shell words */

typedef struct var {
	char *name, *value;
} var;

/* What variables may expand to, all words together: EXPAND_RATIO times the
 * script plus EXPAND_SLACK_BYTES.  A launch script names each variable a few
 * times; a script of doubling variables (B="$A $A", C="$B $B", ...) would
 * grow without end. */
#define EXPAND_RATIO 16
#define EXPAND_SLACK_BYTES ((size_t)1 << 20)

typedef struct lexer {
	const char *s, *end;
	ppi_words *out;
	var *vars;
	int nvars, capvars;
	ppi_strmap names; /* variable name -> its last index in vars */
	char *buf;        /* the word being built */
	size_t len, cap;
	size_t produced, budget; /* bytes of words so far, and the most allowed */
	bool in_word;
} lexer;

/* -4: the expansion budget is spent. */
static int push_char(lexer *lx, char c)
{
	if (++lx->produced > lx->budget)
		return -4;
	if (lx->len + 2 > lx->cap) {
		size_t cap = lx->cap ? lx->cap * 2 : 64;
		char *b = ppi_realloc(lx->buf, cap);
		if (!b)
			return -1;
		lx->buf = b;
		lx->cap = cap;
	}
	lx->buf[lx->len++] = c;
	lx->buf[lx->len] = '\0';
	lx->in_word = true;
	return 0;
}

static int push_str(lexer *lx, const char *s, size_t n)
{
	if (n > lx->budget - lx->produced)
		return -4; /* before copying any of it */
	for (size_t i = 0; i < n; i++) {
		int rc = push_char(lx, s[i]);
		if (rc)
			return rc;
	}
	lx->in_word = true;
	return 0;
}

static const char *lookup(const lexer *lx, const char *name, size_t n)
{
	const ppi_strmap_entry *e = ppi_strmap_find(&lx->names, name, n);
	return e ? lx->vars[e->value].value : NULL;
}

static bool name_char(char c, bool first)
{
	return c == '_' || isalpha((unsigned char)c) || (!first && isdigit((unsigned char)c));
}

/* A NAME=value word records a variable (the last assignment wins). */
static int record_assignment(lexer *lx, const char *w)
{
	size_t n = 0;
	while (w[n] && name_char(w[n], n == 0))
		n++;
	if (n == 0 || w[n] != '=')
		return 0;
	if (lx->nvars == lx->capvars) {
		int cap = lx->capvars ? lx->capvars * 2 : 16;
		var *v = ppi_realloc(lx->vars, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		lx->vars = v;
		lx->capvars = cap;
	}
	char *name = ppi_malloc(n + 1), *value = ppi_strdup(w + n + 1);
	if (!name || !value) {
		free(name);
		free(value);
		return -1;
	}
	memcpy(name, w, n);
	name[n] = '\0';
	bool added;
	ppi_strmap_entry *e = ppi_strmap_add(&lx->names, name, n, &added);
	if (!e) {
		free(name);
		free(value);
		return -1;
	}
	e->value = lx->nvars; /* the last assignment wins */
	lx->vars[lx->nvars].name = name;
	lx->vars[lx->nvars].value = value;
	lx->nvars++;
	return 0;
}

static int end_word(lexer *lx)
{
	if (!lx->in_word)
		return 0;
	char *w = ppi_strdup(lx->buf ? lx->buf : "");
	if (!w)
		return -1;
	if (lx->out->n == lx->out->cap) {
		int cap = lx->out->cap ? lx->out->cap * 2 : 64;
		char **v = ppi_realloc(lx->out->w, (size_t)cap * sizeof *v);
		if (!v) {
			free(w);
			return -1;
		}
		lx->out->w = v;
		lx->out->cap = cap;
	}
	lx->out->w[lx->out->n++] = w;
	lx->len = 0;
	if (lx->buf)
		lx->buf[0] = '\0';
	lx->in_word = false;
	return record_assignment(lx, w);
}

/* $NAME, ${NAME}, ${NAME:-default}, ${NAME-default} at p (p[0] == '$'):
 * the value when the variable is known, the default when one is given,
 * the text as it stands otherwise.  Returns the position after it. */
static const char *expand(lexer *lx, const char *p, int *rc)
{
	const char *start = p;
	p++;
	if (p < lx->end && *p == '{') {
		const char *close = memchr(p, '}', (size_t)(lx->end - p));
		if (!close) {
			*rc = push_char(lx, '$');
			return start + 1;
		}
		const char *name = p + 1;
		size_t n = 0;
		while (name + n < close && name_char(name[n], n == 0))
			n++;
		const char *dflt = NULL;
		size_t dn = 0;
		if (name + n < close && name[n] == ':' && name + n + 1 < close &&
		    name[n + 1] == '-') {
			dflt = name + n + 2;
			dn = (size_t)(close - dflt);
		} else if (name + n < close && name[n] == '-') {
			dflt = name + n + 1;
			dn = (size_t)(close - dflt);
		} else if (name + n != close) {
			n = 0; /* ${A[@]}, ${#A}, ...: left as it stands */
		}
		const char *v = n ? lookup(lx, name, n) : NULL;
		if (v && *v)
			*rc = push_str(lx, v, strlen(v));
		else if (v && !dflt)
			lx->in_word = true;
		else if (dflt)
			*rc = push_str(lx, dflt, dn);
		else
			*rc = push_str(lx, start, (size_t)(close + 1 - start));
		return close + 1;
	}
	size_t n = 0;
	while (p + n < lx->end && name_char(p[n], n == 0))
		n++;
	const char *v = n ? lookup(lx, p, n) : NULL;
	if (v) {
		*rc = push_str(lx, v, strlen(v));
		lx->in_word = true;
	} else {
		*rc = push_str(lx, start, (size_t)(p + n - start));
	}
	return p + n;
}

void ppi_words_free(ppi_words *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->w[i]);
	free(w->w);
	memset(w, 0, sizeof *w);
}

pp_status ppi_shell_words(const char *text, size_t len, const char *source, ppi_words *out,
                          pp_error *err)
{
	memset(out, 0, sizeof *out);
	lexer lx = {text, text + len, out, NULL, 0, 0, {0}, NULL, 0, 0, 0, 0, false};
	lx.budget = len <= (SIZE_MAX - EXPAND_SLACK_BYTES) / EXPAND_RATIO
	                ? EXPAND_RATIO * len + EXPAND_SLACK_BYTES
	                : SIZE_MAX;
	const char *p = text;
	int rc = 0;
	int line = 1;
	while (p < lx.end && !rc) {
		char c = *p;
		if (c == '\0') {
			rc = -2;
			break;
		}
		if (c == '\n')
			line++;
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '|' ||
		    c == '&' || c == '(' || c == ')') {
			rc = end_word(&lx);
			p++;
		} else if (c == '#' && !lx.in_word) {
			while (p < lx.end && *p != '\n')
				p++;
		} else if (c == '\\') {
			if (p + 1 < lx.end && p[1] == '\n') {
				line++;
				p += 2;
			} else if (p + 2 < lx.end && p[1] == '\r' && p[2] == '\n') {
				line++;
				p += 3;
			} else if (p + 1 < lx.end) {
				rc = push_char(&lx, p[1]);
				p += 2;
			} else {
				p++;
			}
		} else if (c == '\'') {
			const char *close = memchr(p + 1, '\'', (size_t)(lx.end - p - 1));
			if (!close) {
				rc = -3;
				break;
			}
			rc = push_str(&lx, p + 1, (size_t)(close - p - 1));
			lx.in_word = true;
			p = close + 1;
		} else if (c == '"') {
			p++;
			lx.in_word = true;
			while (p < lx.end && *p != '"' && !rc) {
				if (*p == '\\' && p + 1 < lx.end && strchr("\"\\$`\n", p[1])) {
					if (p[1] != '\n')
						rc = push_char(&lx, p[1]);
					p += 2;
				} else if (*p == '$') {
					p = expand(&lx, p, &rc);
				} else {
					if (*p == '\n')
						line++;
					rc = push_char(&lx, *p++);
				}
			}
			if (p >= lx.end) {
				rc = -3;
				break;
			}
			p++;
		} else if (c == '$') {
			p = expand(&lx, p, &rc);
		} else {
			rc = push_char(&lx, c);
			p++;
		}
	}
	if (!rc)
		rc = end_word(&lx);
	free(lx.buf);
	for (int i = 0; i < lx.nvars; i++) {
		free(lx.vars[i].name);
		free(lx.vars[i].value);
	}
	free(lx.vars);
	ppi_strmap_free(&lx.names);
	if (rc) {
		ppi_words_free(out);
		if (rc == -4)
			return ppi_fail_at(
			    err, source, line, 0,
			    "shell variables expand to more than %d times the script's "
			    "size (%zu bytes): not a launch script paraplan reads",
			    EXPAND_RATIO, len);
		if (rc == -2)
			return ppi_fail_at(err, source, line, 0, "a NUL byte in the flags");
		if (rc == -3)
			return ppi_fail_at(err, source, line, 0, "an unterminated quote");
		return ppi_fail(err, source, "", "out of memory");
	}
	return PP_OK;
}

/* ---------------------------------------------------------------- flags */

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
	F_GRAD_BF16,
	F_OPTIMIZER,
	F_EXPERTS,
	F_TOPK,
	F_MOE_FFN,
	F_MOE_SHARED,
	F_MOE_FREQ,
	F_MOE_BIAS,
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

typedef struct flag_def {
	const char *name;
	bool value; /* takes a value (else store_true) */
} flag_def;

static const flag_def FLAGS[F_COUNT] = {
    [F_NUM_LAYERS] = {"num-layers", true},
    [F_HIDDEN] = {"hidden-size", true},
    [F_FFN] = {"ffn-hidden-size", true},
    [F_HEADS] = {"num-attention-heads", true},
    [F_GQA] = {"group-query-attention", false},
    [F_GROUPS] = {"num-query-groups", true},
    [F_KV_CHANNELS] = {"kv-channels", true},
    [F_SEQ] = {"seq-length", true},
    [F_MAX_POS] = {"max-position-embeddings", true},
    [F_GBS] = {"global-batch-size", true},
    [F_MBS] = {"micro-batch-size", true},
    [F_TP] = {"tensor-model-parallel-size", true},
    [F_PP] = {"pipeline-model-parallel-size", true},
    [F_VP_LAYERS] = {"num-layers-per-virtual-pipeline-stage", true},
    [F_VP_STAGES] = {"num-virtual-stages-per-pipeline-rank", true},
    [F_CP] = {"context-parallel-size", true},
    [F_EP] = {"expert-model-parallel-size", true},
    [F_ETP] = {"expert-tensor-parallel-size", true},
    [F_SP] = {"sequence-parallel", false},
    [F_RECOMP_GRAN] = {"recompute-granularity", true},
    [F_RECOMP_METHOD] = {"recompute-method", true},
    [F_RECOMP_NUM] = {"recompute-num-layers", true},
    [F_DIST_OPT] = {"use-distributed-optimizer", false},
    [F_MEGATRON_FSDP] = {"use-megatron-fsdp", false},
    [F_TORCH_FSDP2] = {"use-torch-fsdp2", false},
    [F_SHARDING] = {"data-parallel-sharding-strategy", true},
    [F_BF16] = {"bf16", false},
    [F_FP16] = {"fp16", false},
    [F_FP8] = {"fp8-format", true},
    [F_FP8_RECIPE] = {"fp8-recipe", true},
    [F_GRAD_BF16] = {"grad-reduce-in-bf16", false},
    [F_OPTIMIZER] = {"optimizer", true},
    [F_EXPERTS] = {"num-experts", true},
    [F_TOPK] = {"moe-router-topk", true},
    [F_MOE_FFN] = {"moe-ffn-hidden-size", true},
    [F_MOE_SHARED] = {"moe-shared-expert-intermediate-size", true},
    [F_MOE_FREQ] = {"moe-layer-freq", true},
    [F_MOE_BIAS] = {"moe-router-enable-expert-bias", false},
    [F_FIRST] = {"decoder-first-pipeline-num-layers", true},
    [F_LAST] = {"decoder-last-pipeline-num-layers", true},
    [F_EMB_SPLIT] = {"account-for-embedding-in-pipeline-split", false},
    [F_LOSS_SPLIT] = {"account-for-loss-in-pipeline-split", false},
    [F_SWIGLU] = {"swiglu", false},
    [F_UNTIE] = {"untie-embeddings-and-output-weights", false},
    [F_VOCAB] = {"vocab-size", true},
    [F_PADDED_VOCAB] = {"padded-vocab-size", true},
    [F_DIVISIBLE] = {"make-vocab-size-divisible-by", true},
    [F_NORM] = {"normalization", true},
    [F_POSITION] = {"position-embedding-type", true},
    [F_NO_BIAS] = {"disable-bias-linear", false},
    [F_QKV_BIAS] = {"add-qkv-bias", false},
    [F_QK_NORM] = {"qk-layernorm", false},
    [F_ATTN_DROPOUT] = {"attention-dropout", true},
    [F_HIDDEN_DROPOUT] = {"hidden-dropout", true},
    [F_MLA] = {"multi-latent-attention", false},
    [F_Q_LORA] = {"q-lora-rank", true},
    [F_KV_LORA] = {"kv-lora-rank", true},
    [F_QK_HEAD] = {"qk-head-dim", true},
    [F_QK_POS] = {"qk-pos-emb-head-dim", true},
    [F_V_HEAD] = {"v-head-dim", true},
    [F_TP_OVERLAP] = {"tp-comm-overlap", false},
    [F_EP_OVERLAP] = {"overlap-moe-expert-parallel-comm", false},
    [F_ATTN_BACKEND] = {"attention-backend", true},
    [F_TP_PP_DP] = {"use-tp-pp-dp-mapping", false},
    [F_TRAIN_ITERS] = {"train-iters", true},
    [F_TRAIN_SAMPLES] = {"train-samples", true},
    [F_NPROC] = {"nproc_per_node", true},
    [F_NPROC2] = {"nproc-per-node", true},
    [F_NNODES] = {"nnodes", true},
};

typedef struct seen {
	bool set[F_COUNT];
	const char *val[F_COUNT]; /* the last value given */
} seen;

static pp_status bad(pp_error *err, const char *source, int f, const char *fmt, ...)
    PPI_PRINTF(4, 5);
static pp_status bad(pp_error *err, const char *source, int f, const char *fmt, ...)
{
	char field[PP_ERROR_FIELD_MAX], msg[512];
	snprintf(field, sizeof field, "--%s", FLAGS[f].name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ppi_fail(err, source, field, "%s", msg);
}

static pp_status get_ll(const seen *s, int f, long long lo, long long hi, const char *source,
                        long long *out, pp_error *err)
{
	const char *v = s->val[f];
	long long x = 0;
	char why[160];
	if (!ppi_parse_ll(v, (size_t)-1, lo, hi, &x, why, sizeof why))
		return bad(err, source, f, "%s", why);
	*out = x;
	return PP_OK;
}

static pp_status get_int(const seen *s, int f, int lo, int hi, const char *source, int *out,
                         pp_error *err)
{
	long long x = 0;
	PPI_TRY(get_ll(s, f, lo, hi, source, &x, err));
	*out = (int)x;
	return PP_OK;
}

static pp_status get_double(const seen *s, int f, const char *source, double *out, pp_error *err)
{
	const char *v = s->val[f];
	double x;
	char why[160];
	if (!ppi_parse_double(v, (size_t)-1, 0, 1, &x, why, sizeof why)) /* a probability */
		return bad(err, source, f, "%s", why);
	*out = x;
	return PP_OK;
}

/* One of `choices` (NULL-terminated), exactly as Megatron spells it; its index. */
static pp_status get_choice(const seen *s, int f, const char *const *choices, const char *source,
                            int *out, pp_error *err)
{
	for (int i = 0; choices[i]; i++)
		if (strcmp(s->val[f], choices[i]) == 0) {
			*out = i;
			return PP_OK;
		}
	char msg[256] = "";
	for (int i = 0; choices[i]; i++) {
		size_t l = strlen(msg);
		snprintf(msg + l, sizeof msg - l, "%s%s", i ? (choices[i + 1] ? ", " : " or ") : "",
		         choices[i]);
	}
	return bad(err, source, f, "expected %s, got '%s'", msg, s->val[f]);
}

/* Each unused flag once (`listed`: the names so far, a hash set); -1 when
 * out of memory. */
static int add_unused(pp_launch *out, ppi_strmap *listed, const char *name, size_t n)
{
	char flag[128];
	snprintf(flag, sizeof flag, "--%.*s", (int)(n < 100 ? n : 100), name);
	size_t fl = strlen(flag);
	bool added;
	if (!ppi_strmap_add(listed, flag, fl, &added))
		return -1;
	if (!added)
		return 0; /* listed once */
	out->unused++;
	size_t l = strlen(out->unused_flags);
	if (l + fl + 2 < sizeof out->unused_flags)
		snprintf(out->unused_flags + l, sizeof out->unused_flags - l, "%s%s", l ? " " : "",
		         flag);
	return 0;
}

/* "([0]*3+[1]*58)" (Megatron's moe_freq_type, arguments.py:310): a sum of
 * lists, each optionally repeated, parentheses allowed.  Writes up to `max`
 * entries to `out`; returns the count, or -1 when malformed or too long. */
typedef struct pat {
	const char *p;
	int max;
	int depth; /* parentheses open now, at most PAT_DEPTH_MAX */
} pat;

/* Nesting of parentheses in a pattern: Megatron's own are one deep. */
#define PAT_DEPTH_MAX 32

static void skip_ws(pat *q)
{
	while (*q->p == ' ')
		q->p++;
}

static int pat_expr(pat *q, int *out, int max);

static int pat_repeat(pat *q, int *out, int n, int max)
{
	skip_ws(q);
	while (*q->p == '*') {
		q->p++;
		skip_ws(q);
		char *end;
		long k = strtol(q->p, &end, 10);
		if (end == q->p || k < 0 || k > max || (long)n * k > max)
			return -1;
		q->p = end;
		for (long r = 1; r < k; r++)
			memmove(out + r * n, out, (size_t)n * sizeof *out);
		n = (int)(n * k);
		skip_ws(q);
	}
	return n;
}

static int pat_term(pat *q, int *out, int max)
{
	skip_ws(q);
	int n = 0;
	if (*q->p == '(') {
		if (++q->depth > PAT_DEPTH_MAX)
			return -1;
		q->p++;
		n = pat_expr(q, out, max);
		skip_ws(q);
		if (n < 0 || *q->p != ')')
			return -1;
		q->p++;
		q->depth--;
	} else if (*q->p == '[') {
		q->p++;
		for (;;) {
			skip_ws(q);
			if (*q->p == ']')
				break;
			char *end;
			long v = strtol(q->p, &end, 10);
			if (end == q->p || (v != 0 && v != 1) || n >= max)
				return -1;
			out[n++] = (int)v;
			q->p = end;
			skip_ws(q);
			if (*q->p == ',')
				q->p++;
			else if (*q->p != ']')
				return -1;
		}
		q->p++;
	} else {
		return -1;
	}
	return pat_repeat(q, out, n, max);
}

static int pat_expr(pat *q, int *out, int max)
{
	int n = pat_term(q, out, max);
	if (n < 0)
		return -1;
	skip_ws(q);
	while (*q->p == '+') {
		q->p++;
		int k = pat_term(q, out + n, max - n);
		if (k < 0)
			return -1;
		n += k;
		skip_ws(q);
	}
	return n;
}

/* The MoE layer pattern in paraplan's form (first_k_dense, layer_freq:
 * pp_model_layer_is_moe); false when it has no such form. */
static bool pattern_to_moe(const int *is_moe, int layers, pp_moe *moe)
{
	int first = -1, second = -1;
	for (int i = 0; i < layers; i++)
		if (is_moe[i]) {
			if (first < 0)
				first = i;
			else if (second < 0) {
				second = i;
				break;
			}
		}
	if (first < 0)
		return false;
	int freq = second > 0 ? second - first : layers - first;
	int k = first - freq + 1;
	if (k < 0)
		return false;
	pp_moe m = *moe;
	m.first_k_dense = k;
	m.layer_freq = freq;
	for (int i = 0; i < layers; i++) {
		pp_model tmp;
		memset(&tmp, 0, sizeof tmp);
		tmp.moe = m;
		tmp.moe.num_experts = 1;
		if (pp_model_layer_is_moe(&tmp, i) != (is_moe[i] != 0))
			return false;
	}
	*moe = m;
	return true;
}

static pp_status read_moe_freq(const seen *s, const char *source, int layers, pp_moe *moe,
                               pp_error *err)
{
	const char *v = s->val[F_MOE_FREQ];
	if (!strchr(v, '[')) {
		int n;
		PPI_TRY(get_int(s, F_MOE_FREQ, 1, 1 << 20, source, &n, err));
		/* Megatron: layer i is MoE when i % n == 0 (arguments.py moe_freq_type). */
		int *pat_ = ppi_calloc((size_t)layers, sizeof *pat_);
		if (!pat_)
			return ppi_fail(err, source, "", "out of memory");
		for (int i = 0; i < layers; i++)
			pat_[i] = i % n == 0;
		bool ok = pattern_to_moe(pat_, layers, moe);
		free(pat_);
		if (!ok)
			return bad(err, source, F_MOE_FREQ,
			           "'%s': paraplan models MoE layers as a dense prefix, then every "
			           "n-th layer; Megatron's integer form puts one on layer 0",
			           v);
		return PP_OK;
	}
	int *p = ppi_calloc((size_t)layers + 1, sizeof *p);
	if (!p)
		return ppi_fail(err, source, "", "out of memory");
	pat q = {v, layers + 1, 0};
	int n = pat_expr(&q, p, layers + 1);
	skip_ws(&q);
	pp_status st = PP_OK;
	if (q.depth > PAT_DEPTH_MAX)
		st = bad(err, source, F_MOE_FREQ, "parentheses nested more than %d deep",
		         PAT_DEPTH_MAX);
	else if (n < 0 || *q.p)
		st = bad(err, source, F_MOE_FREQ,
		         "expected an integer or a pattern such as ([0]*3+[1]*58), got '%.64s'", v);
	else if (n != layers)
		st = bad(err, source, F_MOE_FREQ,
		         "the pattern '%s' has %d entries, the model %d layers", v, n, layers);
	else if (!pattern_to_moe(p, layers, moe))
		st = bad(
		    err, source, F_MOE_FREQ,
		    "'%s': paraplan models MoE layers as a dense prefix, then every n-th layer", v);
	free(p);
	return st;
}

/* The model the flags describe (arguments.py: validate_args, lines 828-845,
 * 1028; core_transformer_config_from_args, 1276). */
static pp_status build_model(const seen *s, const char *source, const pp_plan *plan, int seq,
                             pp_model *m, pp_error *err)
{
	memset(m, 0, sizeof *m);
	ppi_strlcpy(m->name, "megatron", sizeof m->name);
	ppi_strlcpy(m->source, "Megatron-LM flags", sizeof m->source);
	static const int req[] = {F_NUM_LAYERS, F_HIDDEN, F_HEADS};
	for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
		if (!s->set[req[i]])
			return ppi_fail(err, source, "", "--%s is required to describe the model",
			                FLAGS[req[i]].name);
	PPI_TRY(get_int(s, F_NUM_LAYERS, 1, 10000, source, &m->num_layers, err));
	PPI_TRY(get_int(s, F_HIDDEN, 1, 1048576, source, &m->hidden, err));
	PPI_TRY(get_int(s, F_HEADS, 1, 65536, source, &m->num_heads, err));
	m->gated_mlp = s->set[F_SWIGLU];
	if (s->set[F_FFN])
		PPI_TRY(get_int(s, F_FFN, 0, 16777216, source, &m->ffn_hidden, err));
	else if (m->gated_mlp)
		m->ffn_hidden = (int)((4.0 * m->hidden * 2 / 3) / 64) * 64;
	else
		m->ffn_hidden = 4 * m->hidden;
	m->num_kv_heads = m->num_heads;
	if (s->set[F_GQA]) {
		m->num_kv_heads = 1; /* --num-query-groups defaults to 1 (line 1570) */
		if (s->set[F_GROUPS])
			PPI_TRY(get_int(s, F_GROUPS, 1, 65536, source, &m->num_kv_heads, err));
	}
	if (s->set[F_KV_CHANNELS])
		PPI_TRY(get_int(s, F_KV_CHANNELS, 1, 65536, source, &m->head_dim, err));
	else {
		if (m->hidden % m->num_heads)
			return ppi_fail(
			    err, source, "--num-attention-heads",
			    "%d heads do not divide hidden size %d (give --kv-channels)",
			    m->num_heads, m->hidden);
		m->head_dim = m->hidden / m->num_heads;
	}
	/* The vocabulary: --padded-vocab-size, or --vocab-size padded to a multiple
	 * of --make-vocab-size-divisible-by (128) x tp (tokenizer.py
	 * _vocab_size_with_padding). */
	if (s->set[F_PADDED_VOCAB])
		PPI_TRY(get_int(s, F_PADDED_VOCAB, 1, 100000000, source, &m->vocab, err));
	else if (s->set[F_VOCAB]) {
		int v, div = 128;
		PPI_TRY(get_int(s, F_VOCAB, 1, 100000000, source, &v, err));
		if (s->set[F_DIVISIBLE])
			PPI_TRY(get_int(s, F_DIVISIBLE, 1, 1 << 20, source, &div, err));
		long long mult = (long long)div * plan->tp;
		m->vocab = (int)((v + mult - 1) / mult * mult);
	} else
		return ppi_fail(err, source, "",
		                "--vocab-size or --padded-vocab-size is required to describe the "
		                "model (Megatron-LM takes it from the tokenizer)");
	m->tied_embeddings = !s->set[F_UNTIE];
	m->linear_bias = !s->set[F_NO_BIAS];
	m->qkv_bias = s->set[F_QKV_BIAS];
	m->qk_norm = s->set[F_QK_NORM];
	double ad = 0.1, hd = 0.1; /* lines 1876-1878 */
	if (s->set[F_ATTN_DROPOUT])
		PPI_TRY(get_double(s, F_ATTN_DROPOUT, source, &ad, err));
	if (s->set[F_HIDDEN_DROPOUT])
		PPI_TRY(get_double(s, F_HIDDEN_DROPOUT, source, &hd, err));
	m->dropout = ad > 0 || hd > 0;
	m->norm = PP_NORM_LAYERNORM;
	if (s->set[F_NORM]) {
		static const char *const norms[] = {"LayerNorm", "RMSNorm", NULL};
		int k = 0;
		PPI_TRY(get_choice(s, F_NORM, norms, source, &k, err));
		m->norm = k == 1 ? PP_NORM_RMSNORM : PP_NORM_LAYERNORM;
	}
	m->position = PP_POS_LEARNED;
	if (s->set[F_POSITION]) {
		static const char *const pos[] = {"learned_absolute", "rope", "mrope",
		                                  "relative",         "none", NULL};
		int k = 0;
		PPI_TRY(get_choice(s, F_POSITION, pos, source, &k, err));
		m->position = k == 0 ? PP_POS_LEARNED : PP_POS_ROPE; /* no parameters */
	}
	m->max_position = seq;
	if (s->set[F_MAX_POS])
		PPI_TRY(get_int(s, F_MAX_POS, 1, 100000000, source, &m->max_position, err));
	if (s->set[F_MLA]) {
		/* Defaults: lines 3167-3176. */
		m->mla.q_lora_rank = 0;
		m->mla.kv_lora_rank = 32;
		m->mla.qk_nope_head_dim = 128;
		m->mla.qk_rope_head_dim = 64;
		m->mla.v_head_dim = 128;
		if (s->set[F_Q_LORA])
			PPI_TRY(get_int(s, F_Q_LORA, 0, 1 << 20, source, &m->mla.q_lora_rank, err));
		if (s->set[F_KV_LORA])
			PPI_TRY(
			    get_int(s, F_KV_LORA, 1, 1 << 20, source, &m->mla.kv_lora_rank, err));
		if (s->set[F_QK_HEAD])
			PPI_TRY(get_int(s, F_QK_HEAD, 1, 1 << 20, source, &m->mla.qk_nope_head_dim,
			                err));
		if (s->set[F_QK_POS])
			PPI_TRY(get_int(s, F_QK_POS, 0, 1 << 20, source, &m->mla.qk_rope_head_dim,
			                err));
		if (s->set[F_V_HEAD])
			PPI_TRY(get_int(s, F_V_HEAD, 1, 1 << 20, source, &m->mla.v_head_dim, err));
	}
	if (s->set[F_EXPERTS]) {
		pp_moe *e = &m->moe;
		PPI_TRY(get_int(s, F_EXPERTS, 1, 65536, source, &e->num_experts, err));
		e->top_k = 2; /* line 3094 */
		if (s->set[F_TOPK])
			PPI_TRY(get_int(s, F_TOPK, 1, 65536, source, &e->top_k, err));
		e->expert_ffn_hidden = m->ffn_hidden; /* line 1028 */
		if (s->set[F_MOE_FFN])
			PPI_TRY(
			    get_int(s, F_MOE_FFN, 1, 16777216, source, &e->expert_ffn_hidden, err));
		if (s->set[F_MOE_SHARED]) {
			PPI_TRY(get_int(s, F_MOE_SHARED, 0, 16777216, source, &e->shared_ffn_hidden,
			                err));
			e->num_shared_experts = e->shared_ffn_hidden > 0;
		}
		e->router_bias = s->set[F_MOE_BIAS];
		e->layer_freq = 1;
		if (s->set[F_MOE_FREQ])
			PPI_TRY(read_moe_freq(s, source, m->num_layers, e, err));
	}
	pp_status st = pp_model_check(m, err);
	if (st)
		ppi_strlcpy(err->source, source, sizeof err->source);
	return st;
}

pp_status pp_launch_from_megatron(const char *text, size_t len, const char *source, pp_job *job,
                                  pp_plan *plan, pp_launch *out, pp_error *err)
{
	memset(out, 0, sizeof *out);
	ppi_words w;
	PPI_TRY(ppi_shell_words(text, len, source, &w, err));
	seen s;
	memset(&s, 0, sizeof s);
	pp_status st = PP_OK;
	ppi_strmap listed = {0};
	for (int i = 0; i < w.n && !st; i++) {
		const char *a = w.w[i];
		if (a[0] == '-' && a[1] != '-' && a[1]) {
			/* One dash: Megatron's argparse reads "-num-layers" as nothing
			 * it knows and stops; a flag paraplan reads is refused rather
			 * than dropped.  Other one-dash words (python -m, -u) are the
			 * launcher's. */
			const char *name = a + 1, *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			for (int k = 0; k < F_COUNT; k++)
				if (strlen(FLAGS[k].name) == n &&
				    strncmp(FLAGS[k].name, name, n) == 0)
					st = ppi_fail(
					    err, source, "",
					    "'-%s' has one dash: Megatron-LM's flag is --%s",
					    FLAGS[k].name, FLAGS[k].name);
			continue;
		}
		if (a[0] != '-' || a[1] != '-' || !a[2])
			continue;
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t n = eq ? (size_t)(eq - name) : strlen(name);
		int f = -1;
		for (int k = 0; k < F_COUNT; k++)
			if (strlen(FLAGS[k].name) == n && strncmp(FLAGS[k].name, name, n) == 0) {
				f = k;
				break;
			}
		if (f < 0) {
			if (add_unused(out, &listed, name, n))
				st = (ppi_fail(err, source, "", "out of memory"), PP_ENOMEM);
			continue;
		}
		s.set[f] = true;
		if (!FLAGS[f].value)
			continue;
		if (eq)
			s.val[f] = eq + 1;
		else if (i + 1 < w.n)
			s.val[f] = w.w[++i];
		else
			st = ppi_fail(err, source, "", "--%s needs a value", FLAGS[f].name);
	}
	if (st) {
		ppi_strmap_free(&listed);
		ppi_words_free(&w);
		return st;
	}

	/* The plan: Megatron's defaults, then the flags. */
	pp_plan p;
	pp_plan_init(&p);
	pp_job j = *job;
	const char *src = source;
#define INT(F, LO, HI, DST)                                                                        \
	do {                                                                                       \
		if (!st && s.set[F])                                                               \
			st = get_int(&s, F, LO, HI, src, DST, err);                                \
	} while (0)
	INT(F_TP, 1, 1 << 20, &p.tp);
	INT(F_PP, 1, 1 << 20, &p.pp);
	INT(F_CP, 1, 1 << 20, &p.cp);
	INT(F_EP, 1, 1 << 20, &p.ep);
	INT(F_ETP, 1, 1 << 20, &p.etp);
	INT(F_MBS, 1, 1 << 20, &p.mbs);
	INT(F_FIRST, 1, 1 << 20, &p.first_stage_layers);
	INT(F_LAST, 1, 1 << 20, &p.last_stage_layers);
	INT(F_SEQ, 1, 100000000, &j.seq_len);
	p.embedding_as_layer = s.set[F_EMB_SPLIT];
	p.loss_as_layer = s.set[F_LOSS_SPLIT];
	p.sp = s.set[F_SP];
	p.tp_overlap = s.set[F_TP_OVERLAP];
	p.ep_overlap = s.set[F_EP_OVERLAP];
	if (s.set[F_TP_PP_DP])
		ppi_strlcpy(p.order, "tp-cp-ep-pp-dp", sizeof p.order);
	if (!st && s.set[F_GBS]) {
		st = get_ll(&s, F_GBS, 1, 1000000000, src, &j.global_batch, err);
		out->has_gbs = true;
	}
	out->has_seq = s.set[F_SEQ];
	if (!st && s.set[F_ATTN_BACKEND]) {
		static const char *const be[] = {"flash", "fused", "unfused",
		                                 "local", "auto",  NULL};
		int k = 0;
		st = get_choice(&s, F_ATTN_BACKEND, be, src, &k, err);
		p.flash = k != 2 && k != 3;
	}
	/* Virtual stages (arguments.py lines 531-585). */
	if (!st && s.set[F_VP_STAGES] && s.set[F_VP_LAYERS])
		st = ppi_fail(err, src, "--num-virtual-stages-per-pipeline-rank",
		              "not with --num-layers-per-virtual-pipeline-stage (Megatron-LM takes "
		              "one of them)");
	INT(F_VP_STAGES, 1, 1 << 20, &p.vp);
	if (!st && s.set[F_VP_LAYERS]) {
		int per, layers;
		st = get_int(&s, F_VP_LAYERS, 1, 1 << 20, src, &per, err);
		if (!st && !s.set[F_NUM_LAYERS])
			st = ppi_fail(err, src, "--num-layers-per-virtual-pipeline-stage",
			              "needs --num-layers");
		if (!st)
			st = get_int(&s, F_NUM_LAYERS, 1, 10000, src, &layers, err);
		if (!st && (s.set[F_FIRST] || s.set[F_LAST]))
			st = ppi_fail(
			    err, src, "--num-layers-per-virtual-pipeline-stage",
			    "not with uneven stages; give "
			    "--num-virtual-stages-per-pipeline-rank (as Megatron-LM asks)");
		if (!st) {
			layers += p.embedding_as_layer + p.loss_as_layer;
			if (layers % p.pp || (layers / p.pp) % per)
				st = ppi_fail(
				    err, src, "--num-layers-per-virtual-pipeline-stage",
				    "%d layers over %d pipeline stages do not split into chunks "
				    "of %d",
				    layers, p.pp, per);
			else
				p.vp = layers / p.pp / per;
		}
	}
	p.schedule = pp_schedule_for_vp(PP_SCHED_1F1B, p.vp); /* Megatron: vp > 1 interleaves */
	/* Recomputation: full recomputes layers (uniform, 1 layer a chunk = every
	 * layer); selective the core attention. */
	if (!st && s.set[F_RECOMP_GRAN]) {
		static const char *const g[] = {"full", "selective", NULL};
		int k = 0;
		st = get_choice(&s, F_RECOMP_GRAN, g, src, &k, err);
		p.recompute = k == 0 ? PP_RECOMPUTE_FULL : PP_RECOMPUTE_SELECTIVE;
	}
	if (!st && (s.set[F_RECOMP_METHOD] || s.set[F_RECOMP_NUM])) {
		static const char *const g[] = {"uniform", "block", NULL};
		int k = 0, num = 1;
		if (s.set[F_RECOMP_METHOD])
			st = get_choice(&s, F_RECOMP_METHOD, g, src, &k, err);
		if (!st && s.set[F_RECOMP_NUM])
			st = get_int(&s, F_RECOMP_NUM, 1, 10000, src, &num, err);
		/* Full recompute of every layer is uniform with 1 layer a chunk;
		 * block (the first N layers of each stage) and larger chunks are
		 * not what paraplan models: listed, and modelled as every layer.
		 * Without full granularity Megatron-LM takes neither flag: listed. */
		if (!st && (p.recompute != PP_RECOMPUTE_FULL || k == 1 || num != 1)) {
			if ((s.set[F_RECOMP_METHOD] &&
			     add_unused(out, &listed, FLAGS[F_RECOMP_METHOD].name,
			                strlen(FLAGS[F_RECOMP_METHOD].name))) ||
			    (s.set[F_RECOMP_NUM] &&
			     add_unused(out, &listed, FLAGS[F_RECOMP_NUM].name,
			                strlen(FLAGS[F_RECOMP_NUM].name))))
				st = (ppi_fail(err, src, "", "out of memory"), PP_ENOMEM);
		}
	}
	/* ZeRO: the distributed optimizer is ZeRO-1; Megatron FSDP's strategies. */
	if (s.set[F_DIST_OPT])
		p.zero = 1;
	if (!st && s.set[F_SHARDING]) {
		static const char *const g[] = {"no_shard", "optim", "optim_grads",
		                                "optim_grads_params", NULL};
		int k = 0;
		st = get_choice(&s, F_SHARDING, g, src, &k, err);
		if (!st && (s.set[F_MEGATRON_FSDP] || s.set[F_TORCH_FSDP2]))
			p.zero = k;
	}
	if (!st && s.set[F_TORCH_FSDP2] && !s.set[F_SHARDING])
		p.zero = 3;
	/* Precision (bf16/fp16 flags; FP8 GEMMs with --fp8-format). */
	if (!st && s.set[F_BF16] && s.set[F_FP16])
		st = ppi_fail(err, src, "--fp16",
		              "not with --bf16 (Megatron-LM asserts: cannot have both fp16 and "
		              "bf16 enabled)");
	j.precision = s.set[F_BF16] ? PP_PREC_BF16 : s.set[F_FP16] ? PP_PREC_FP16 : PP_PREC_FP32;
	if (!st && s.set[F_FP8]) {
		static const char *const g[] = {"e4m3", "hybrid", NULL};
		int k = 0;
		st = get_choice(&s, F_FP8, g, src, &k, err);
		j.precision = PP_PREC_FP8;
	}
	/* --fp8-recipe (arguments.py, default delayed): "tensorwise" is
	 * Transformer Engine's Float8CurrentScaling; it applies only with
	 * --fp8-format (Megatron ignores it otherwise, and so does paraplan). */
	if (!st && s.set[F_FP8_RECIPE] && s.set[F_FP8]) {
		static const char *const g[] = {"delayed", "tensorwise", "mxfp8", "blockwise",
		                                NULL};
		static const pp_fp8_recipe r[] = {PP_FP8_DELAYED, PP_FP8_CURRENT, PP_FP8_MX,
		                                  PP_FP8_BLOCKWISE};
		int k = 0;
		st = get_choice(&s, F_FP8_RECIPE, g, src, &k, err);
		j.fp8_recipe = r[k];
	}
	j.grad_bytes = s.set[F_GRAD_BF16] ? 2 : 4;
	j.optimizer = PP_OPT_ADAM;
	if (!st && s.set[F_OPTIMIZER]) {
		static const char *const g[] = {"adam", "sgd", NULL};
		int k = 0;
		st = get_choice(&s, F_OPTIMIZER, g, src, &k, err);
		j.optimizer = k == 1 ? PP_OPT_SGD : PP_OPT_ADAM;
	}
	/* The tokens come from these flags alone, so that the order of the
	 * command line (--gbs before or after --from-megatron) cannot change
	 * them: iterations need the batch and the sequence among the flags. */
	if (!st && (s.set[F_TRAIN_SAMPLES] || s.set[F_TRAIN_ITERS]) && !s.set[F_SEQ])
		st =
		    ppi_fail(err, src, s.set[F_TRAIN_SAMPLES] ? "--train-samples" : "--train-iters",
		             "needs --seq-length among the same flags (tokens = %s x sequence)",
		             s.set[F_TRAIN_SAMPLES] ? "samples" : "iterations x batch");
	else if (!st && s.set[F_TRAIN_SAMPLES]) {
		long long n = 0;
		st = get_ll(&s, F_TRAIN_SAMPLES, 0, LLONG_MAX / 2, src, &n, err);
		j.train_tokens = (double)n * j.seq_len;
	} else if (!st && s.set[F_TRAIN_ITERS] && !s.set[F_GBS])
		st = ppi_fail(err, src, "--train-iters",
		              "needs --global-batch-size among the same flags (tokens = iterations "
		              "x batch x sequence)");
	else if (!st && s.set[F_TRAIN_ITERS]) {
		long long n = 0;
		st = get_ll(&s, F_TRAIN_ITERS, 0, LLONG_MAX / 2, src, &n, err);
		j.train_tokens = (double)n * (double)j.global_batch * j.seq_len;
	}
	/* torchrun's world size, when a script gives both. */
	int nproc_f = s.set[F_NPROC2] ? F_NPROC2 : F_NPROC;
	if (!st && s.set[nproc_f] && s.set[F_NNODES]) {
		long long a = 0, b = 0;
		if (get_ll(&s, nproc_f, 1, 1 << 20, src, &a, NULL) == PP_OK &&
		    get_ll(&s, F_NNODES, 1, 1 << 20, src, &b, NULL) == PP_OK)
			out->gpus = a * b;
	}
	out->has_model = s.set[F_NUM_LAYERS] || s.set[F_HIDDEN] || s.set[F_HEADS];
	if (!st && out->has_model)
		st = build_model(&s, src, &p, j.seq_len, &out->model, err);
#undef INT
	ppi_strmap_free(&listed);
	ppi_words_free(&w);
	if (st)
		return st;
	*plan = p;
	*job = j;
	return PP_OK;
}

pp_status pp_launch_load_megatron(const char *path, pp_job *job, pp_plan *plan, pp_launch *out,
                                  pp_error *err)
{
	char *text;
	size_t len;
	PPI_TRY(ppi_read_file(path, &text, &len, err));
	pp_status st = pp_launch_from_megatron(text, len, path, job, plan, out, err);
	free(text);
	return st;
}
