/*
 * Seed 002 (DHelix) §6.5: the maximum model size of Megatron-LM's 1F1B
 * (single strand), of DHelix's W (strand interleaving) and of the
 * bi-directional double strand with replicated model states, next to the
 * paper's 40B / 39B / 32B.
 *
 * Stated by the paper: the layer of Llama-25B (Table 3: Llama3.1-70B's
 * layer, hidden 8192, FFN 28672), DP 4, TP 8, PP 2, micro-batch 1, the A40
 * cluster of §6.1 (48 GB), Megatron-LM as the single strand, layers added
 * until the model no longer fits.  Not stated, each taken from a named
 * source (docs/dhelix.md, "§6.5 maximum model size"):
 *   - sequence 8192: §6.2.1's default length for the dense models, and Fig.
 *     5's Llama-25B memory profile;
 *   - no recompute: Megatron-LM's default (--recompute-granularity None);
 *   - sequence parallelism and flash attention: the authors' launch script
 *     (github.com/DHeLlam-502/dhellam script/run.sh: --sequence-parallel
 *     --use-flash-attn --transformer-impl transformer_engine);
 *   - the optimizer layout, the precision, the vocabulary, tied embeddings
 *     and dropout vary by row (below), each with its source.
 * Each row prints the largest layer count that fits for 1F1B, wshape and the
 * bi-directional strand (1F1B's memory plus the stage's model states once
 * more), the parameters at that count, the paper's three sizes as layer
 * counts of that row's vocabulary, and what the paper's Megatron count
 * implies: the bytes by which paraplan's peak at the paper's count + 1 (the
 * first count the paper's Megatron could not fit) stays under the capacity.
 * Then Fig. 5's run (Llama-25B, 28 layers, DP 8, TP 8, micro-batch 1, "bumped
 * up ... stopping right before the system runs out of memory", §3.2): the
 * peak at micro-batch 1 and 2 per row.
 *
 * The last two rows build the model DHelix's artifact builds (MHA,
 * LayerNorm, learned positions, 32000 tokens tied) and keep its layers'
 * tensors as TransformerEngine does (the stock GPTModel that Megatron runs
 * without --dhellam) and as DHelix's own block does (dhellam/core/dstb.py:
 * the all-gathered norm outputs for the QKV and FC1 weight gradients,
 * data/framework/dhelix.json).
 *
 * Build and run: cmake --build build --target bench_dhelix_s65 &&
 * ./build/bench/bench_dhelix_s65 (also run by bench/dhelix_s6.sh).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/paraplan.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct row {
	const char *name;
	int vocab;    /* padded, as Megatron pads: a multiple of 128 x TP */
	bool tied;    /* Megatron: tied unless --untie-embeddings-and-output-weights */
	bool dropout; /* Megatron: --hidden-dropout 0.1 by default */
	pp_precision prec;
	int grad_bytes; /* bf16: fp32 main grads (forced); fp16: fp16 grads */
	int zero;       /* 1 = --use-distributed-optimizer */
	bool sp;        /* --sequence-parallel (Megatron's default: off) */
	/* The model DHelix's artifact builds (below) instead of the preset's
	 * Llama3.1 layer: MHA, LayerNorm, learned positions. */
	bool artifact_shape;
	const char *framework; /* the block's saved tensors: "megatron" or "dhelix" */
} row;

static const row ROWS[] = {
    /* the preset as paraplan's other §6 scenarios use it: Llama3.1-70B's
     * vocabulary, untied, no dropout, bf16 */
    {"preset: 128256 untied, bf16, dist-opt", 128256, false, false, PP_PREC_BF16, 4, 1, true, false,
     "megatron"},
    {"preset, no dist-opt (ZeRO-0)", 128256, false, false, PP_PREC_BF16, 4, 0, true, false,
     "megatron"},
    /* the authors' artifact (script/run.sh) on Megatron-Core v0.5.0's
     * defaults: --vocab-size 32000 (Llama2Tokenizer) padded to 32768, tied,
     * hidden dropout 0.1, --fp16 (fp16 grads), --use-distributed-optimizer;
     * the preset's layer (GQA, RMSNorm, RoPE) */
    {"artifact: 32768 tied, fp16, dist-opt", 32768, true, true, PP_PREC_FP16, 2, 1, true, false,
     "megatron"},
    {"artifact, bf16 (fp32 grads)", 32768, true, true, PP_PREC_BF16, 4, 1, true, false, "megatron"},
    {"artifact, fp16, no dist-opt", 32768, true, true, PP_PREC_FP16, 2, 0, true, false, "megatron"},
    {"artifact, bf16, no dist-opt", 32768, true, true, PP_PREC_BF16, 4, 0, true, false, "megatron"},
    /* Megatron's default without --sequence-parallel (the paper does not
     * say SP for §6.5; the artifact's script turns it on) */
    {"artifact, fp16, dist-opt, no SP", 32768, true, true, PP_PREC_FP16, 2, 1, false, false,
     "megatron"},
    {"artifact, bf16, dist-opt, no SP", 32768, true, true, PP_PREC_BF16, 4, 1, false, false,
     "megatron"},
    /* The model the artifact actually builds (artifact_model below: MHA,
     * LayerNorm, learned positions, 32000 tokens tied) with the run.sh
     * flags, its layers kept as Megatron-Core/TE keep them (the stock
     * GPTModel, pretrain_gpt.py without --dhellam) and as DHelix's own
     * block keeps them (dstb.py: data/framework/dhelix.json). */
    {"MHA model, stock Megatron block", 32000, true, true, PP_PREC_FP16, 2, 1, true, true,
     "megatron"},
    {"MHA model, DHelix block (dstb.py)", 32000, true, true, PP_PREC_FP16, 2, 1, true, true,
     "dhelix"},
};

static pp_model model_of(const row *r, int layers)
{
	pp_model m;
	pp_error err;
	if (pp_model_preset("dhelix-llama-25b", &m, &err) != PP_OK) {
		fprintf(stderr, "bench_dhelix_s65: %s\n", err.text);
		exit(1);
	}
	m.num_layers = layers;
	m.vocab = r->vocab;
	m.tied_embeddings = r->tied;
	m.dropout = r->dropout;
	if (r->artifact_shape) {
		/* What DHelix's artifact builds from script/run.sh's flags, each
		 * absent flag Megatron-Core v0.5.0's default:
		 *   - MHA: no --group-query-attention; DHelix's block splits its QKV
		 *     into 3 x hidden/heads per head and holds 3h/tp x h QKV weights
		 *     (dhellam/core/dstb.py:109-122, 1374);
		 *   - LayerNorm with a bias: no --normalization; dstb.py holds
		 *     ln_*_weight and ln_*_bias (1373-1380);
		 *   - learned absolute positions, max 8192: no
		 *     --position-embedding-type; --max-position-embeddings 8192;
		 *     dshb.py:254;
		 *   - 32000 tokens, tied: run.sh --vocab-size 32000, the patch
		 *     passes args.vocab_size unpadded (megatron.patch, pretrain_gpt.py
		 *     model_provider), dshb.py:268 logits_weight = the word
		 *     embedding's weight. */
		m.num_kv_heads = m.num_heads;
		m.norm = PP_NORM_LAYERNORM;
		m.position = PP_POS_LEARNED;
		m.max_position = 8192;
	}
	return m;
}

static double params_at(const row *r, int layers)
{
	pp_model m = model_of(r, layers);
	pp_param_count pc;
	pp_model_params(&m, &pc);
	return pc.total;
}

/* Peak bytes of `layers` layers under `kind` (0 1F1B, 1 wshape, 2
 * bi-directional), the better of the two splits of an odd count; *cap_out the
 * capacity, *lmb_out the layer-micro-batch sets of the peak stage. */
static double peak(const row *r, int kind, int layers, int dp, int pp, int mbs, double *cap_out,
                   double *lmb_out)
{
	pp_system s;
	pp_error err;
	if (pp_system_preset("dhelix-a40", &s, &err) != PP_OK ||
	    pp_system_set_framework(&s, r->framework, &err) != PP_OK) {
		fprintf(stderr, "bench_dhelix_s65: %s\n", err.text);
		exit(1);
	}
	pp_model m = model_of(r, layers);
	static pp_estimate e;
	double best = INFINITY;
	for (int first = layers / 2; first <= (layers + 1) / 2; first++) {
		pp_job j;
		pp_job_init(&j);
		j.seq_len = 8192;
		j.precision = r->prec;
		j.grad_bytes = r->grad_bytes;
		pp_plan p;
		pp_plan_init(&p);
		p.tp = 8;
		p.pp = pp;
		p.dp = dp;
		p.mbs = mbs;
		j.global_batch = 1024;
		p.sp = r->sp;
		p.zero = r->zero;
		p.schedule = kind == 1 ? PP_SCHED_WSHAPE : PP_SCHED_1F1B;
		if (pp > 1 && first != layers - first) {
			p.first_stage_layers = first;
			p.last_stage_layers = layers - first;
		}
		if (pp_estimate_eval(&m, &s, &j, &p, 8LL * dp * pp, PP_EVAL_MEMORY_ONLY, NULL, &e,
		                     &err) != PP_OK)
			continue;
		double tot = e.memory.total_bytes, lmb = e.memory.inflight_layer_mbs;
		if (kind == 2) {
			/* the peak stage's model states once more */
			tot = 0;
			for (int st = 0; st < pp; st++) {
				pp_stage_memory sm;
				if (pp_memory_stage(&m, &s, &j, &e.plan, st, &sm, &err) != PP_OK)
					exit(1);
				double x = sm.total_bytes + sm.weights_bytes + sm.gradients_bytes +
				           sm.optimizer_bytes;
				if (x > tot) {
					tot = x;
					lmb = sm.inflight_layer_mbs;
				}
			}
		}
		*cap_out = e.capacity_bytes;
		if (tot < best) {
			best = tot;
			*lmb_out = lmb;
		}
		if (pp == 1)
			break;
	}
	return best;
}

static int max_layers(const row *r, int kind)
{
	int best = 0;
	for (int l = 4; l <= 160; l++) {
		double cap = 0, lmb = 0;
		if (peak(r, kind, l, 4, 2, 1, &cap, &lmb) <= cap)
			best = l;
	}
	return best;
}

/* The layer count whose parameters are nearest `target`. */
static int layers_of(const row *r, double target)
{
	int best = 1;
	for (int l = 1; l <= 160; l++)
		if (fabs(params_at(r, l) - target) < fabs(params_at(r, best) - target))
			best = l;
	return best;
}

int main(void)
{
	const int nrows = (int)(sizeof ROWS / sizeof ROWS[0]);
	printf("§6.5 maximum model size: Llama-25B's layer, A40 48 GB, DP 4 TP 8 PP 2, mbs 1, "
	       "8K, flash, no recompute\n");
	printf("%-37s %-12s %-12s %-12s %-9s %s\n", "row", "1F1B", "wshape", "bi-dir", "paper L",
	       "1F1B headroom at the paper's 40B = per layer-mb x layer-mbs");
	for (int i = 0; i < nrows; i++) {
		const row *r = &ROWS[i];
		int l0 = max_layers(r, 0), l1 = max_layers(r, 1), l2 = max_layers(r, 2);
		int p40 = layers_of(r, 40e9), p39 = layers_of(r, 39e9), p32 = layers_of(r, 32e9);
		double cap = 0, lmb = 0;
		double at = peak(r, 0, p40, 4, 2, 1, &cap, &lmb);
		char a[48], b[48], c[48], d[48];
		snprintf(a, sizeof a, "%d (%.1fB)", l0, params_at(r, l0) / 1e9);
		snprintf(b, sizeof b, "%d (%.1fB)", l1, params_at(r, l1) / 1e9);
		snprintf(c, sizeof c, "%d (%.1fB)", l2, params_at(r, l2) / 1e9);
		snprintf(d, sizeof d, "%d/%d/%d", p40, p39, p32);
		printf("%-37s %-12s %-12s %-12s %-9s %+5.1f GiB = %+.3f GiB x %.0f\n", r->name, a,
		       b, c, d, (cap - at) / GIB, (cap - at) / GIB / lmb, lmb);
	}
	printf("paper: 40B / 39B / 32B (Megatron-LM / DHelix / bi-directional); 'paper L' = "
	       "those sizes in layers of the row's model\n");
	for (int i = 0; i < nrows; i++) {
		const row *r = &ROWS[i];
		if (strcmp(r->framework, "dhelix") != 0)
			continue;
		/* DSLLM builds n / (2p) two-layer blocks per stage and asserts
		 * n % 2p == 0 (dhellam/core/dsllm.py:49) */
		int l1 = max_layers(r, 1) / 4 * 4;
		printf(
		    "%s: the W as DHelix can build it (a multiple of 2p = 4 layers, dsllm.py:49): "
		    "%d (%.1fB)\n",
		    r->name, l1, params_at(r, l1) / 1e9);
	}
	printf("\n");
	printf("Fig. 5 (§3.2): Llama-25B (28 layers), DP 8 TP 8 PP 1, 8K: mbs 1 fits, mbs 2 "
	       "should not\n");
	printf("%-37s %12s %12s %10s\n", "row", "mbs 1 GiB", "mbs 2 GiB", "of GiB");
	for (int i = 0; i < nrows; i++) {
		double cap = 0, lmb = 0;
		double m1 = peak(&ROWS[i], 0, 28, 8, 1, 1, &cap, &lmb);
		double m2 = peak(&ROWS[i], 0, 28, 8, 1, 2, &cap, &lmb);
		printf("%-37s %12.1f %12.1f %10.1f\n", ROWS[i].name, m1 / GIB, m2 / GIB, cap / GIB);
	}
	return 0;
}
