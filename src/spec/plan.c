/*
 * Jobs and plans: defaults, names, and the divisibility rules a plan must meet
 * (those Megatron-LM asserts at start-up, so a plan that passes here would
 * start there).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/schedule_type.h"
#include "spec_int.h"

static const char *const precision_names[] = {"fp32", "fp16", "bf16", "fp8"};
static const char *const recompute_names[] = {"none", "selective", "full"};
/* In pp_fp8_recipe's order. */
static const char *const fp8_recipe_names[PP_FP8_RECIPES] = {"delayed", "current",   "mxfp8",
                                                             "rowwise", "blockwise", "nvfp4"};

const char *pp_precision_name(pp_precision p)
{
	return (unsigned)p < 4 ? precision_names[p] : "?";
}
double pp_activation_bytes(pp_precision p)
{
	const double fp32_bytes = 4, bf16_bytes = 2; /* FP16 elements are as wide */
	return p == PP_PREC_FP32 ? fp32_bytes : bf16_bytes;
}
double pp_offload_fraction(const pp_plan *plan, double layers)
{
	if (!plan->offload_activations || !(layers > 0))
		return 0;
	if (plan->offload_layers <= 0)
		return 1;
	double chunk = layers / (plan->vp > 1 ? plan->vp : 1);
	return plan->offload_layers >= chunk ? 1 : plan->offload_layers / chunk;
}
const char *pp_fp8_recipe_name(pp_fp8_recipe r)
{
	return (unsigned)r < PP_FP8_RECIPES ? fp8_recipe_names[r] : "?";
}
static const char *const dispatcher_names[] = {"alltoall", "deepep", "deepep-fp8"};
const char *pp_moe_dispatcher_name(pp_moe_dispatcher d)
{
	return (unsigned)d < 3 ? dispatcher_names[d] : "?";
}
const char *pp_recompute_name(pp_recompute r)
{
	return (unsigned)r < 3 ? recompute_names[r] : "?";
}
const char *pp_schedule_name(pp_schedule s)
{
	const pp_schedule_type *t = pp_schedule_type_of(s);
	return t ? t->name : "?";
}

static pp_status parse_name(const char *s, const char *field, const char *const *names, int n,
                            int *out, pp_error *err)
{
	for (int i = 0; i < n; i++)
		if (ppi_streq(s, names[i])) {
			*out = i;
			return PP_OK;
		}
	char list[128] = "";
	for (int i = 0; i < n; i++) {
		strncat(list, names[i], sizeof list - strlen(list) - 1);
		if (i + 1 < n)
			strncat(list, i + 2 == n ? " or " : ", ", sizeof list - strlen(list) - 1);
	}
	return ppi_fail(err, "", field, "expected %s, got '%s'", list, s);
}

pp_status pp_precision_parse(const char *s, const char *field, pp_precision *out, pp_error *err)
{
	int v = 0;
	pp_status st = parse_name(s, field, precision_names, 4, &v, err);
	if (!st)
		*out = (pp_precision)v;
	return st;
}
pp_status pp_fp8_recipe_parse(const char *s, const char *field, pp_fp8_recipe *out, pp_error *err)
{
	int v = 0;
	pp_status st = parse_name(s, field, fp8_recipe_names, PP_FP8_RECIPES, &v, err);
	if (!st)
		*out = (pp_fp8_recipe)v;
	return st;
}
pp_status pp_moe_dispatcher_parse(const char *s, const char *field, pp_moe_dispatcher *out,
                                  pp_error *err)
{
	int v = 0;
	pp_status st = parse_name(s, field, dispatcher_names, 3, &v, err);
	if (!st)
		*out = (pp_moe_dispatcher)v;
	return st;
}
pp_status pp_recompute_parse(const char *s, const char *field, pp_recompute *out, pp_error *err)
{
	int v = 0;
	pp_status st = parse_name(s, field, recompute_names, 3, &v, err);
	if (!st)
		*out = (pp_recompute)v;
	return st;
}
/* Megatron-Core's recompute_modules names (transformer_config.py); the ones
 * after mla_up_proj are refused as not modelled. */
static const char *const module_names[] = {"core_attn", "mla_up_proj", "mlp",           "moe_act",
                                           "layernorm", "moe",         "shared_experts"};
enum { MODULES_MODELLED = 2 };

pp_status pp_recompute_modules_parse(const char *s, void *dst, pp_error *err)
{
	unsigned bits = 0;
	const char *p = s;
	while (*p) {
		size_t n = strcspn(p, ",");
		int k = -1;
		for (int i = 0; i < (int)(sizeof module_names / sizeof *module_names); i++)
			if (strlen(module_names[i]) == n && strncmp(p, module_names[i], n) == 0)
				k = i;
		if (k < 0)
			return ppi_fail(
			    err, NULL, NULL,
			    "expected a comma list of core_attn, mla_up_proj, got '%.*s'", (int)n,
			    p);
		if (k >= MODULES_MODELLED)
			return ppi_fail(err, NULL, NULL,
			                "recompute module '%s' is not modelled (core_attn and "
			                "mla_up_proj are)",
			                module_names[k]);
		bits |= 1u << k;
		p += n;
		if (*p == ',' && *++p == '\0')
			return ppi_fail(err, NULL, NULL, "a comma list ends with ',': '%s'", s);
	}
	if (!bits)
		return ppi_fail(err, NULL, NULL, "expected core_attn or mla_up_proj, got ''");
	*(unsigned *)dst = bits;
	return PP_OK;
}

unsigned pp_plan_recomputed_modules(const pp_plan *p)
{
	if (p->recompute != PP_RECOMPUTE_SELECTIVE)
		return 0;
	return p->recompute_modules ? p->recompute_modules : PP_RECOMPUTE_MODULE_CORE_ATTN;
}

int pp_plan_layer_gathers(const pp_plan *p, const pp_system *s)
{
	if (p->zero >= 3)
		return 2;
	/* The same reading of the stack as the memory model's (workload/memory.c:
	 * SHARD_GRAD_OP's parameters sharded at rest, its gathered copy held from
	 * forward to backward). */
	return p->zero == 2 && s->compute_copy_bytes > 0 ? 1 : 0;
}

bool pp_plan_pipe_engine_reduce(const pp_plan *p, const pp_system *s)
{
	return s->pipe_engine_reduce >= 0.5 && p->pp > 1;
}

void pp_recompute_modules_name(unsigned bits, char *buf, size_t n)
{
	if (!n)
		return;
	buf[0] = '\0';
	if (!bits)
		bits = PP_RECOMPUTE_MODULE_CORE_ATTN;
	size_t used = 0;
	for (int i = 0; i < MODULES_MODELLED; i++)
		if (bits & (1u << i)) {
			int w = snprintf(buf + used, n - used, "%s%s", used ? "," : "",
			                 module_names[i]);
			if (w < 0 || (size_t)w >= n - used)
				return;
			used += (size_t)w;
		}
}

pp_status pp_schedule_parse(const char *s, const char *field, pp_schedule *out, pp_error *err)
{
	/* The registry's names, then its aliases (which errors do not list). */
	const char *names[PP_SCHED_MAX];
	for (int i = 0; i < pp_schedule_type_n; i++)
		names[i] = pp_schedule_types[i]->name;
	int v = 0;
	for (int i = 0; i < pp_schedule_type_n; i++)
		for (const char *const *a = pp_schedule_types[i]->aliases; a && *a; a++)
			if (ppi_streq(s, *a)) {
				*out = pp_schedule_types[i]->id;
				return PP_OK;
			}
	pp_status st = parse_name(s, field, names, pp_schedule_type_n, &v, err);
	if (!st)
		*out = pp_schedule_types[v]->id;
	return st;
}

void pp_job_init(pp_job *j)
{
	memset(j, 0, sizeof *j);
	j->precision = PP_PREC_BF16;
	/* Megatron-LM keeps fp32 main gradients for bf16 training
	 * (accumulate_allreduce_grads_in_fp32), hence 4 bytes. */
	j->grad_bytes = 4;
	j->optimizer = PP_OPT_ADAM;
}

pp_status pp_plan_overlap_check(const pp_plan *p, bool overlap, const char *verb, pp_error *err)
{
	if (!overlap || p->schedule == PP_SCHED_WSHAPE)
		return PP_OK;
	return ppi_fail(err, NULL, verb,
	                "--overlap applies to --schedule wshape (DHelix) only; the plan's "
	                "schedule is %s",
	                pp_schedule_name(p->schedule));
}

void pp_plan_init(pp_plan *p)
{
	memset(p, 0, sizeof *p);
	p->tp = p->pp = p->cp = p->ep = p->vp = p->mbs = 1;
	p->dp = 0;  /* derived */
	p->etp = 0; /* = tp */
	p->schedule = PP_SCHED_1F1B;
	p->recompute = PP_RECOMPUTE_NONE;
	p->flash = true; /* Megatron-Core uses TransformerEngine fused attention by default */
	p->tp2 = 1;
	p->summa = false;
	p->summa_nb = 1;
	ppi_strlcpy(p->order, "tp-cp-ep-dp-pp", sizeof p->order);
}

/* The energy inputs' ranges (as fields.c reads them), and what needs the
 * PUE: CO2e, the power cost and a cap are of facility energy and power,
 * IT x PUE, and the PUE has no default (docs/energy.md). */
static pp_status energy_check(const pp_energy_inputs *e, pp_error *err)
{
	if (e->pue != 0 && !(e->pue >= 1 && e->pue <= 5))
		return ppi_fail(err, "", "job.energy.pue",
		                "expected a PUE in 1..5 (facility power over IT power), got %g",
		                e->pue);
	if (!(e->gco2_per_kwh >= 0 && e->gco2_per_kwh <= 2000))
		return ppi_fail(err, "", "job.energy.gco2_per_kwh",
		                "expected grams CO2e per kWh in 0..2000, got %g", e->gco2_per_kwh);
	if (!(e->usd_per_kwh >= 0 && e->usd_per_kwh <= 10))
		return ppi_fail(err, "", "job.energy.usd_per_kwh",
		                "expected US dollars per kWh in 0..10, got %g", e->usd_per_kwh);
	if (!(e->power_cap_w >= 0 && e->power_cap_w <= 1e11))
		return ppi_fail(err, "", "job.energy.power_cap_w",
		                "expected megawatts in 1e-06..100000, got %g",
		                e->power_cap_w / 1e6);
	const char *needs = e->gco2_per_kwh > 0  ? "job.energy.gco2_per_kwh"
	                    : e->usd_per_kwh > 0 ? "job.energy.usd_per_kwh"
	                    : e->power_cap_w > 0 ? "job.energy.power_cap_w"
	                                         : NULL;
	if (needs && e->pue == 0)
		return ppi_fail(
		    err, "", needs,
		    "applies to facility power, IT power x PUE: give --pue too (1 for IT "
		    "power alone); the PUE has no default");
	return PP_OK;
}

pp_status pp_job_check(const pp_job *j, pp_error *err)
{
	if (j->global_batch < 1 || j->global_batch > 1000000000LL)
		return ppi_fail(err, "", "job.global_batch",
		                "expected 1..1000000000 sequences, got %lld", j->global_batch);
	if (j->seq_len < 1 || j->seq_len > 100000000)
		return ppi_fail(err, "", "job.seq_len", "expected 1..100000000 tokens, got %d",
		                j->seq_len);
	if (!(j->train_tokens >= 0 && j->train_tokens <= 1e17))
		return ppi_fail(err, "", "job.train_tokens", "expected 0..1e17 tokens, got %g",
		                j->train_tokens);
	if (j->grad_bytes != 2 && j->grad_bytes != 4)
		return ppi_fail(err, "", "job.grad_bytes", "expected 2 or 4, got %d",
		                j->grad_bytes);
	if (j->reduce_bytes != 0 && j->reduce_bytes != 2 && j->reduce_bytes != 4)
		return ppi_fail(err, "", "job.reduce_bytes",
		                "expected 0 (= grad_bytes), 2 or 4, got %d", j->reduce_bytes);
	if ((unsigned)j->precision > PP_PREC_FP8)
		return ppi_fail(err, "", "job.precision", "unknown precision %d",
		                (int)j->precision);
	if ((unsigned)j->fp8_recipe >= PP_FP8_RECIPES)
		return ppi_fail(err, "", "job.fp8_recipe", "unknown FP8 recipe %d",
		                (int)j->fp8_recipe);
	if (j->fp8_params && j->precision != PP_PREC_FP8)
		return ppi_fail(err, "", "job.fp8_params",
		                "FP8 parameters need precision fp8, got %s",
		                pp_precision_name(j->precision));
	/* A recipe scales FP8 operands: it means nothing without them. */
	if (j->fp8_recipe != PP_FP8_DELAYED && j->precision != PP_PREC_FP8)
		return ppi_fail(err, "", "job.fp8_recipe",
		                "the FP8 recipe %s applies under precision fp8 only, got %s",
		                pp_fp8_recipe_name(j->fp8_recipe), pp_precision_name(j->precision));
	return energy_check(&j->energy, err);
}

/* A token's dimension name and, after ':', its radix (0: none; -1: not a
 * number above 1). */
static int order_tok(char *tok, long long *radix)
{
	static const char *const dims[] = {"tp", "cp", "ep", "dp", "pp", "tp2"};
	char *colon = strchr(tok, ':');
	*radix = 0;
	if (colon) {
		*colon = '\0';
		char *end = NULL;
		long long v =
		    colon[1] >= '0' && colon[1] <= '9' ? strtoll(colon + 1, &end, 10) : -1;
		*radix = v > 1 && v <= (1 << 20) && end && *end == '\0' ? v : -1;
	}
	for (int i = 0; i < 6; i++)
		if (ppi_streq(tok, dims[i]))
			return i;
	return -1;
}

/* Validate the rank order: tp, cp, dp, pp once each, ep and tp2 at most
 * once; or twice for a split (seed 003 S3.2), first `dim:N`, then bare. */
static pp_status check_order(const char *order, pp_error *err)
{
	int seen[6] = {0};
	long long split[6] = {0};
	char buf[PP_ORDER_MAX];
	ppi_strlcpy(buf, order, sizeof buf);
	char *save = NULL;
	for (char *tok = strtok_r(buf, "-", &save); tok; tok = strtok_r(NULL, "-", &save)) {
		char near[PP_ORDER_MAX];
		ppi_strlcpy(near, tok, sizeof near);
		long long radix;
		int k = order_tok(tok, &radix);
		if (k >= 0 && radix < 0)
			return ppi_fail(err, "", "plan.order",
			                "'%s': a split names a whole number of coordinates above 1 "
			                "after ':'",
			                near);
		if (k == 2 && radix)
			return ppi_fail(err, "", "plan.order",
			                "'%s': ep folds into the dp x cp ranks and cannot be split",
			                near);
		bool rest = k >= 0 && !radix && seen[k] == 1 && split[k];
		if (k < 0 || (seen[k] && !rest))
			return ppi_fail(err, "", "plan.order",
			                "expected a '-'-separated order of tp, tp2, cp, ep, dp, pp "
			                "(each once, or split: first dim:N, then dim), near '%s'",
			                near);
		seen[k]++;
		if (radix)
			split[k] = radix;
	}
	for (int k = 0; k < 6; k++)
		if (split[k] && seen[k] != 2)
			return ppi_fail(
			    err, "", "plan.order",
			    "'%s' splits a dimension with ':' but never names the rest of it "
			    "(dim:N ... dim)",
			    order);
	if (!seen[0] || !seen[1] || !seen[3] || !seen[4])
		return ppi_fail(err, "", "plan.order",
		                "'%s' must name each of tp, cp, dp and pp (ep and tp2 optional)",
		                order);
	return PP_OK;
}

pp_status pp_order_check(const char *order, pp_error *err)
{
	return check_order(order, err);
}

bool pp_order_split_fits(const pp_plan *p, pp_error *err)
{
	if (!strchr(p->order, ':'))
		return true;
	const int degree[6] = {p->tp, p->cp, p->ep, p->dp, p->pp, p->tp2};
	static const char *const names[] = {"tp", "cp", "ep", "dp", "pp", "tp2"};
	char buf[PP_ORDER_MAX];
	ppi_strlcpy(buf, p->order, sizeof buf);
	char *save = NULL;
	for (char *tok = strtok_r(buf, "-", &save); tok; tok = strtok_r(NULL, "-", &save)) {
		long long radix;
		int k = order_tok(tok, &radix);
		if (k < 0 || radix <= 0)
			continue;
		if (degree[k] % radix != 0) {
			ppi_fail(
			    err, "", "plan.order",
			    "%s:%lld does not divide %s's degree %d (a split takes a factor of it)",
			    names[k], radix, names[k], degree[k]);
			return false;
		}
		int etp = p->etp > 0 ? p->etp : p->tp;
		if (p->ep > 1 || etp != p->tp) {
			ppi_fail(
			    err, "", "plan.order",
			    "a split order ('%s') places expert groups only for ep 1 and etp = tp, "
			    "got ep %d, etp %d",
			    p->order, p->ep, etp);
			return false;
		}
	}
	return true;
}

/* True when the order names `dim` as one of its tokens. */
static bool order_has(const char *order, const char *dim)
{
	size_t n = strlen(dim);
	for (const char *s = order; s && *s;) {
		if (strncmp(s, dim, n) == 0 && (s[n] == '-' || s[n] == '\0'))
			return true;
		s = strchr(s, '-');
		if (s)
			s++;
	}
	return false;
}

#define REQUIRE(cond, field, ...)                                                                  \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return ppi_fail(err, "", field, __VA_ARGS__);                              \
	} while (0)

pp_status pp_plan_check_split(const pp_plan *p, const pp_model *m, pp_error *err)
{
	const int lim = 1 << 20;
	int L = m->num_layers, P = p->pp, V = p->vp;
	int f = p->first_stage_layers, l = p->last_stage_layers;
	bool emb = p->embedding_as_layer, loss = p->loss_as_layer;
	REQUIRE(P >= 1 && P <= lim, "plan.pp", "expected a positive degree, got %d", P);
	REQUIRE(V >= 1 && V <= lim, "plan.vp", "expected a positive count, got %d", V);
	REQUIRE(f >= 0 && f <= lim, "plan.first_stage_layers",
	        "expected a layer count (0 = an even share), got %d", f);
	REQUIRE(l >= 0 && l <= lim, "plan.last_stage_layers",
	        "expected a layer count (0 = an even share), got %d", l);
	if (P == 1) {
		REQUIRE(f == 0, "plan.first_stage_layers",
		        "a first pipeline stage of %d layers needs pp >= 2, got pp = 1", f);
		REQUIRE(l == 0, "plan.last_stage_layers",
		        "a last pipeline stage of %d layers needs pp >= 2, got pp = 1", l);
		REQUIRE(!emb, "plan.embedding_as_layer",
		        "counting the embedding as a pipeline layer needs pp >= 2, got pp = 1");
		REQUIRE(!loss, "plan.loss_as_layer",
		        "counting the loss as a pipeline layer needs pp >= 2, got pp = 1");
	}
	if (f > 0 || l > 0) {
		/* Megatron-LM (TransformerConfig.__post_init__, get_num_layers_to_build):
		 * the given end stages take their counts, the other stages split the
		 * rest evenly; with vp > 1 every stage's count divides into vp chunks. */
		REQUIRE(!emb, "plan.embedding_as_layer",
		        "counting the embedding as a layer cannot be combined with a first or last "
		        "stage layer count (Megatron-LM refuses the combination)");
		REQUIRE(
		    !loss, "plan.loss_as_layer",
		    "counting the loss as a layer cannot be combined with a first or last stage "
		    "layer count (Megatron-LM refuses the combination)");
		const char *field = f > 0 ? "plan.first_stage_layers" : "plan.last_stage_layers";
		int others = P - (f > 0) - (l > 0);
		long long rest = (long long)L - f - l;
		if (others == 0)
			REQUIRE(rest == 0, field,
			        "first + last stage = %d + %d = %lld layers, but %s has %d (pp = 2 "
			        "leaves no other stage)",
			        f, l, (long long)f + l, m->name, L);
		REQUIRE(others == 0 || rest >= others, field,
		        "%d layers of %s - %d (first stage) - %d (last stage) = %lld for %d other "
		        "stages; each needs at least one layer",
		        L, m->name, f, l, rest, others);
		REQUIRE(others == 0 || rest % others == 0, field,
		        "%d layers of %s - %d (first stage) - %d (last stage) = %lld do not split "
		        "evenly over the %d other stages",
		        L, m->name, f, l, rest, others);
		if (V > 1) {
			REQUIRE(
			    f % V == 0, "plan.first_stage_layers",
			    "the first stage's %d layers do not divide into vp = %d model chunks",
			    f, V);
			REQUIRE(
			    l % V == 0, "plan.last_stage_layers",
			    "the last stage's %d layers do not divide into vp = %d model chunks", l,
			    V);
			REQUIRE(
			    others == 0 || (rest / others) % V == 0, "plan.vp",
			    "the %lld layers of each other pipeline stage do not divide into vp = "
			    "%d model chunks",
			    others ? rest / others : 0, V);
		}
		return PP_OK;
	}
	if (emb || loss) {
		/* Megatron-LM: an even split of layers + 1 (+ 1); the first (last) rank
		 * builds one transformer layer fewer. */
		const char *field = emb ? "plan.embedding_as_layer" : "plan.loss_as_layer";
		const char *what = emb && loss ? " + 1 (embedding) + 1 (loss)"
		                   : emb       ? " + 1 (embedding)"
		                               : " + 1 (loss)";
		int n = L + emb + loss;
		if (V == 1)
			REQUIRE(n % P == 0, field,
			        "%d layers of %s%s = %d do not divide over pp = %d stages", L,
			        m->name, what, n, P);
		/* With interleaving (Megatron-Core get_num_layers_to_build) every model
		 * chunk takes an even share, the first chunk's one layer fewer for the
		 * embedding, the last chunk's for the loss; at one a chunk those two
		 * hold no transformer layer (Llama 3's plan, arXiv 2407.21783 §3.3.2:
		 * "the first model chunk on the first stage has only the embedding"). */
		REQUIRE(n % (P * V) == 0, field,
		        "%d layers of %s%s = %d do not divide over pp x vp = %d x %d model "
		        "chunks",
		        L, m->name, what, n, P, V);
		return PP_OK;
	}
	REQUIRE(L % (P * V) == 0, "plan.pp", "pp*vp = %d*%d does not divide the %d layers of %s", P,
	        V, L, m->name);
	return PP_OK;
}

pp_status pp_job_check_gpu(const pp_job *job, const pp_system *s, pp_error *err)
{
	/* The energy model starts from the board power (docs/energy.md). */
	if (pp_energy_asked(&job->energy))
		REQUIRE(s->gpu.tdp_w > 0, "gpu.tdp_w",
		        "%s states no tdp_w (board power) in its GPU file: no energy model",
		        s->gpu.name);
	if (job->precision == PP_PREC_FP8)
		REQUIRE(s->gpu.fp8_flops > 0, "job.precision", "%s has no FP8 tensor cores",
		        s->gpu.name);
	/* MXFP8's block-scaled MMA (tcgen05.mma with E8M0 scales) exists from
	 * Blackwell, compute capability 10.0, on (NVIDIA PTX ISA, "Block scaling
	 * for tcgen05.mma"; TE's MXFP8BlockScaling needs it); a GPU whose
	 * architecture paraplan does not know is not assumed to have it. */
	if (job->precision == PP_PREC_FP8 && job->fp8_recipe == PP_FP8_MX) {
		int arch = pp_gpu_datasheet_arch(s->gpu.name);
		REQUIRE(
		    arch == 0 || arch >= 100, "job.fp8_recipe",
		    "mxfp8 needs a Blackwell GPU (compute capability 10.0 or newer); %s has %d.%d",
		    s->gpu.name, arch / 10, arch % 10);
		REQUIRE(arch > 0, "job.fp8_recipe",
		        "mxfp8 needs a Blackwell GPU (compute capability 10.0 or newer); the "
		        "architecture of %s is not known",
		        s->gpu.name);
	}
	/* NVFP4's block-scaled FP4 MMA is Blackwell's too (PTX ISA, tcgen05.mma
	 * kind::mxf4nvf4); the GPU file states its FP4 peak (fp4_flops). */
	if (job->precision == PP_PREC_FP8 && job->fp8_recipe == PP_FP8_NVFP4)
		REQUIRE(s->gpu.fp4_flops > 0, "job.fp8_recipe",
		        "nvfp4 needs FP4 tensor cores (a Blackwell GPU whose file states "
		        "fp4_flops); %s has none",
		        s->gpu.name);
	if (job->precision == PP_PREC_BF16)
		REQUIRE(s->gpu.bf16_flops > 0, "job.precision", "%s has no BF16 tensor cores",
		        s->gpu.name);
	/* FP8 parameters take the place of BF16 ones beside an fp32 master in
	 * the optimizer (Megatron-Core, NeMo); a stack whose fp32 parameters are
	 * their own master (framework.param_bytes 4: FSDP's shards) has no such
	 * copy to replace. */
	if (job->fp8_params)
		REQUIRE(s->param_bytes < 4, "job.fp8_params",
		        "the %s stack keeps fp32 parameters as their own master "
		        "(framework.param_bytes %g): FP8 parameters need a master copy in the "
		        "optimizer (megatron, nemo)",
		        s->framework, s->param_bytes);
	return PP_OK;
}

/* The plan's degrees and counts in range, and the GPU count (before any
 * rule between them). */
static pp_status check_ranges(const pp_plan *p, long long gpus, pp_error *err)
{
	REQUIRE(gpus >= 1 && gpus <= 10000000, "gpus", "expected 1..10000000 GPUs, got %lld", gpus);
	const int lim = 1 << 20;
	REQUIRE(p->tp >= 1 && p->tp <= lim, "plan.tp", "expected a positive degree, got %d", p->tp);
	REQUIRE(p->pp >= 1 && p->pp <= lim, "plan.pp", "expected a positive degree, got %d", p->pp);
	REQUIRE(p->cp >= 1 && p->cp <= lim, "plan.cp", "expected a positive degree, got %d", p->cp);
	REQUIRE(p->ep >= 1 && p->ep <= lim, "plan.ep", "expected a positive degree, got %d", p->ep);
	REQUIRE(p->etp >= 0 && p->etp <= lim, "plan.etp", "expected a positive degree, got %d",
	        p->etp);
	REQUIRE(p->vp >= 1 && p->vp <= lim, "plan.vp", "expected a positive count, got %d", p->vp);
	REQUIRE(p->mbs >= 1 && p->mbs <= lim, "plan.mbs", "expected a positive size, got %d",
	        p->mbs);
	REQUIRE(p->dp >= 0 && p->dp <= 10000000, "plan.dp", "expected a positive degree, got %d",
	        p->dp);
	REQUIRE(p->zero >= 0 && p->zero <= 3, "plan.zero", "expected a ZeRO stage 0..3, got %d",
	        p->zero);
	REQUIRE((unsigned)p->recompute <= PP_RECOMPUTE_FULL, "plan.recompute",
	        "unknown recompute mode %d", (int)p->recompute);
	REQUIRE(pp_schedule_type_of(p->schedule) != NULL, "plan.schedule", "unknown schedule %d",
	        (int)p->schedule);
	REQUIRE(p->tp2 >= 1 && p->tp2 <= lim, "plan.tp2", "expected a positive degree, got %d",
	        p->tp2);
	REQUIRE(p->summa_nb >= 1 && p->summa_nb <= lim, "plan.summa_nb",
	        "expected a positive panel count, got %d", p->summa_nb);
	return PP_OK;
}

/* 2D TP: n_2 sits right outside tp unless the order places it (p->order
 * rewritten). */
static pp_status place_tp2(pp_plan *p, pp_error *err)
{
	if (p->tp2 <= 1 || order_has(p->order, "tp2"))
		return PP_OK;
	size_t n = strlen(p->order);
	REQUIRE(n + 4 < PP_ORDER_MAX, "plan.order", "'%s' leaves no room for tp2", p->order);
	char o[PP_ORDER_MAX];
	if (strncmp(p->order, "tp-", 3) == 0) { /* tp-tp2-rest */
		memcpy(o, "tp-tp2-", 7);
		memcpy(o + 7, p->order + 3, n - 3 + 1);
	} else { /* tp2-order */
		memcpy(o, "tp2-", 4);
		memcpy(o + 4, p->order, n + 1);
	}
	memcpy(p->order, o, sizeof o);
	return PP_OK;
}

/* Tensor parallelism's splits of the model: heads, key/value groups, the
 * MLP; 2D TP's of the sequence, SUMMA's of the GEMMs. */
static pp_status check_tensor(const pp_plan *p, const pp_model *m, const pp_job *job, pp_error *err)
{
	REQUIRE(m->num_heads % p->tp == 0, "plan.tp",
	        "%d does not divide the %d attention heads of %s", p->tp, m->num_heads, m->name);
	if (m->mla.kv_lora_rank == 0)
		REQUIRE(m->num_kv_heads % p->tp == 0, "plan.tp",
		        "%d does not divide the %d key/value heads of %s (Megatron needs "
		        "num_query_groups %% tp == 0)",
		        p->tp, m->num_kv_heads, m->name);
	if (m->ffn_hidden > 0)
		REQUIRE(m->ffn_hidden % p->tp == 0, "plan.tp",
		        "%d does not divide ffn_hidden_size %d of %s", p->tp, m->ffn_hidden,
		        m->name);

	/* 2D TP (seed 003 Table II / A2): n_2 = tp2 splits the sequence l; SUMMA
	 * further splits the GEMM weights (e/n_2 x e/n_1, f/n_2 x e/n_1) and cuts
	 * the inner dimensions e and f into summa_nb panels. */
	if (p->tp2 > 1) {
		REQUIRE(job->seq_len % p->tp2 == 0, "plan.tp2",
		        "%d does not divide the sequence length %d (2D TP splits it)", p->tp2,
		        job->seq_len);
		REQUIRE(p->cp == 1, "plan.tp2",
		        "2D tensor parallelism (tp2 = %d) with context parallelism (cp = %d) is "
		        "not modelled",
		        p->tp2, p->cp);
		REQUIRE(m->moe.num_experts == 0, "plan.tp2",
		        "2D tensor parallelism (tp2 = %d) is modelled for dense models; %s has "
		        "experts",
		        p->tp2, m->name);
	}
	REQUIRE(!job->moe_routing.set || m->moe.num_experts > 0, "job.moe_routing",
	        "needs an MoE model; %s is dense", m->name);
	REQUIRE(job->moe_dispatcher == PP_DISPATCH_ALLTOALL || m->moe.num_experts > 0,
	        "job.moe_dispatcher", "needs an MoE model; %s is dense", m->name);
	REQUIRE(job->moe_dispatcher != PP_DISPATCH_DEEPEP_FP8 || job->precision == PP_PREC_FP8,
	        "job.moe_dispatcher",
	        "deepep-fp8 dispatches the quantised inputs of FP8 expert GEMMs: needs "
	        "--precision fp8, got %s",
	        pp_precision_name(job->precision));
	REQUIRE(!(job->moe_routing.drift_steps > 0) || job->train_tokens > 0, "job.moe_routing",
	        "drift:%g acts over the run's steps: give --tokens (steps = tokens / (gbs x seq))",
	        job->moe_routing.drift_steps);
	if (p->summa) {
		REQUIRE(p->cp == 1, "plan.summa", "SUMMA with context parallelism is not modelled");
		REQUIRE(m->moe.num_experts == 0, "plan.summa",
		        "SUMMA is modelled for dense models; %s has experts", m->name);
		REQUIRE(m->mla.kv_lora_rank == 0, "plan.summa",
		        "SUMMA is not modelled with multi-head latent attention (%s)", m->name);
		REQUIRE(m->hidden % p->tp2 == 0 && m->ffn_hidden % p->tp2 == 0, "plan.tp2",
		        "SUMMA needs tp2 = %d to divide hidden %d and ffn_hidden_size %d of %s",
		        p->tp2, m->hidden, m->ffn_hidden, m->name);
		REQUIRE(m->hidden % p->summa_nb == 0 && m->ffn_hidden % p->summa_nb == 0,
		        "plan.summa_nb",
		        "%d panels do not divide the inner dimensions of the SUMMA multiplies "
		        "(hidden %d, ffn_hidden_size %d of %s)",
		        p->summa_nb, m->hidden, m->ffn_hidden, m->name);
	} else {
		REQUIRE(p->summa_nb == 1, "plan.summa_nb",
		        "a panel count (%d) needs SUMMA on (plan.summa)", p->summa_nb);
	}
	return PP_OK;
}

/* The GPUs split over tp x tp2 x pp x cp x dp; dp derived (p->dp) when 0. */
static pp_status split_gpus(pp_plan *p, long long gpus, pp_error *err)
{
	long long mp = (long long)p->tp * p->tp2 * p->pp * p->cp;
	if (p->dp == 0 && p->tp2 == 1) {
		REQUIRE(gpus % mp == 0, "gpus",
		        "%lld GPUs are not divisible by tp*pp*cp = %d*%d*%d = %lld", gpus, p->tp,
		        p->pp, p->cp, mp);
	} else if (p->dp == 0) {
		REQUIRE(gpus % mp == 0, "gpus",
		        "%lld GPUs are not divisible by tp*tp2*pp*cp = %d*%d*%d*%d = %lld", gpus,
		        p->tp, p->tp2, p->pp, p->cp, mp);
	} else if (p->tp2 == 1) {
		REQUIRE(mp * p->dp == gpus, "plan.dp",
		        "tp*pp*cp*dp = %d*%d*%d*%d = %lld, but there are %lld GPUs", p->tp, p->pp,
		        p->cp, p->dp, mp * p->dp, gpus);
	} else {
		REQUIRE(mp * p->dp == gpus, "plan.dp",
		        "tp*tp2*pp*cp*dp = %d*%d*%d*%d*%d = %lld, but there are %lld GPUs", p->tp,
		        p->tp2, p->pp, p->cp, p->dp, mp * p->dp, gpus);
	}
	if (p->dp == 0)
		p->dp = (int)(gpus / mp);
	return PP_OK;
}

/* Every link tier the plan uses must exist: no bandwidth is assumed. */
static pp_status check_links(const pp_system *s, long long gpus, pp_error *err)
{
	long long per_node = s->gpus_per_node > 0 ? s->gpus_per_node : 1;
	long long nodes = (gpus + per_node - 1) / per_node;
	REQUIRE(nodes == 1 || (s->nics_per_node > 0 && s->nic_bytes_per_s > 0),
	        "system.nic_bytes_per_s",
	        "%lld GPUs span %lld nodes of %lld, but %s has no network between nodes "
	        "(nics_per_node %d, nic_bytes_per_s %g)",
	        gpus, nodes, per_node, s->name, s->nics_per_node, s->nic_bytes_per_s);
	REQUIRE(gpus == 1 || s->nvlink_bytes_per_s > 0 ||
	            (s->nics_per_node > 0 && s->nic_bytes_per_s > 0),
	        "system.nvlink_bytes_per_s",
	        "%s has neither NVLink nor a network between its GPUs, so %lld GPUs cannot "
	        "communicate",
	        s->name, gpus);
	return PP_OK;
}

/* The sequence's splits: context parallelism's 2 x cp chunks, sequence
 * parallelism's tp shares. */
static pp_status check_sequence(const pp_plan *p, const pp_job *job, pp_error *err)
{
	/* Context parallelism: Megatron splits each sequence into 2*cp chunks. */
	if (p->cp > 1)
		REQUIRE(job->seq_len % (2 * p->cp) == 0, "plan.cp",
		        "sequence length %d is not divisible by 2*cp = %d", job->seq_len,
		        2 * p->cp);
	if (p->sp && p->tp > 1 && p->tp2 == 1)
		REQUIRE((job->seq_len / p->cp) % p->tp == 0, "plan.sp",
		        "sequence parallelism needs seq_len/cp = %d divisible by tp = %d",
		        job->seq_len / p->cp, p->tp);
	if (p->sp && p->tp > 1 && p->tp2 > 1)
		REQUIRE((job->seq_len / p->tp2) % p->tp == 0, "plan.sp",
		        "sequence parallelism needs seq_len/tp2 = %d divisible by tp = %d",
		        job->seq_len / p->tp2, p->tp);
	return PP_OK;
}

/* Experts: ep x etp ranks hold disjoint experts inside the tp*cp*dp ranks of
 * a stage (etp derived = tp when 0). */
static pp_status check_experts(pp_plan *p, const pp_model *m, pp_error *err)
{
	if (p->etp == 0)
		p->etp = p->tp;
	if (m->moe.num_experts == 0) {
		REQUIRE(p->ep == 1, "plan.ep", "%s is dense; ep must be 1, got %d", m->name, p->ep);
		REQUIRE(p->etp == p->tp, "plan.etp", "%s is dense; etp must equal tp", m->name);
	} else {
		REQUIRE(m->moe.num_experts % p->ep == 0, "plan.ep",
		        "%d does not divide the %d experts of %s", p->ep, m->moe.num_experts,
		        m->name);
		REQUIRE(m->moe.expert_ffn_hidden % p->etp == 0, "plan.etp",
		        "%d does not divide the expert ffn size %d of %s", p->etp,
		        m->moe.expert_ffn_hidden, m->name);
		long long inner = (long long)p->tp * p->cp * p->dp;
		REQUIRE(inner % ((long long)p->ep * p->etp) == 0, "plan.ep",
		        "ep*etp = %d*%d does not divide tp*cp*dp = %lld", p->ep, p->etp, inner);
		if (p->ep > 1 && p->tp > 1)
			REQUIRE(p->sp, "plan.sp",
			        "expert parallelism with tp > 1 needs sequence parallelism on "
			        "(Megatron asserts it)");
	}
	return PP_OK;
}

/* pp_plan_resolve; `trusted`: the caller has checked the model, system and
 * job and the plan's rank order (ppi_plan_resolve_trusted).  The checks run
 * in this order; the first that fails is the error. */
static pp_status resolve(pp_plan *p, const pp_model *m, const pp_system *s, long long gpus,
                         const pp_job *job, bool trusted, pp_error *err)
{
	pp_status st;
	if (!trusted && ((st = pp_model_check(m, err)) || (st = pp_system_check(s, err)) ||
	                 (st = pp_job_check(job, err)) || (st = pp_finetune_check(job, m, err))))
		return st;
	PPI_TRY(check_ranges(p, gpus, err));
	if (!trusted && (st = check_order(p->order, err)))
		return st;
	PPI_TRY(place_tp2(p, err));
	PPI_TRY(check_tensor(p, m, job, err));
	PPI_TRY(split_gpus(p, gpus, err));
	if (!trusted && !pp_order_split_fits(p, err))
		return PP_EINPUT;
	PPI_TRY(check_links(s, gpus, err));

	/* Pipeline: Megatron's split of layers over pp x vp model chunks (even, or
	 * uneven end stages). */
	int counted = p->first_stage_layers == 0 && p->last_stage_layers == 0
	                  ? p->embedding_as_layer + p->loss_as_layer
	                  : 0; /* embedding and loss counted as layers */
	REQUIRE(p->pp <= m->num_layers + counted, "plan.pp", "%d stages for only %d layers of %s",
	        p->pp, m->num_layers + counted, m->name);
	/* Megatron: vp > 1 means interleaved 1F1B (the schedule's virtual form). */
	if (p->vp > 1)
		p->schedule = pp_schedule_type_of(p->schedule)->virtual_form;
	p->microbatches = 0; /* known below: the first validate checks the degrees */
	if ((st = pp_schedule_type_of(p->schedule)->validate(p, err)))
		return st;
	if ((st = pp_plan_check_split(p, m, err)))
		return st;

	PPI_TRY(check_sequence(p, job, err));
	PPI_TRY(check_experts(p, m, err));

	/* Batch: dp replicas each run `microbatches` micro-batches of mbs. */
	long long per = (long long)p->dp * p->mbs;
	REQUIRE(job->global_batch % per == 0, "plan.mbs",
	        "dp*mbs = %d*%d = %lld does not divide the global batch of %lld", p->dp, p->mbs,
	        per, job->global_batch);
	p->microbatches = job->global_batch / per;
	/* the schedule's rules on the micro-batch count (DualPipe's m >= 2 pp) */
	if ((st = pp_schedule_type_of(p->schedule)->validate(p, err)))
		return st;

	/* Precision the GPU cannot run. */
	PPI_TRY(pp_job_check_gpu(job, s, err));
	return PP_OK;
}

pp_status pp_plan_resolve(pp_plan *p, const pp_model *m, const pp_system *s, long long gpus,
                          const pp_job *job, pp_error *err)
{
	return resolve(p, m, s, gpus, job, false, err);
}

pp_status ppi_plan_resolve_trusted(pp_plan *p, const pp_model *m, const pp_system *s,
                                   long long gpus, const pp_job *job, pp_error *err)
{
	return resolve(p, m, s, gpus, job, true, err);
}
