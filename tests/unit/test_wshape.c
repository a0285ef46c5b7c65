/*
 * DHelix's W-shaped schedule (seed 002 §4.1): the closed form against the
 * event simulator on a grid of (p, m, s), the bubble ratio
 * (p - 1)/(m - 1 + p s) against 1F1B's, the folded (U) layout of the task
 * lists, and the memory of two strands.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

/* The closed form over p alike stages of forward f and backward b. */
static double closed(int p, long long m, double f, double b, double s, pp_iteration *it)
{
	pp_plan pl;
	pp_plan_init(&pl);
	pl.pp = p;
	pl.microbatches = m;
	pl.schedule = PP_SCHED_WSHAPE;
	pp_system sys;
	memset(&sys, 0, sizeof sys);
	pp_stage_time st[16];
	memset(st, 0, sizeof st);
	for (int r = 0; r < p; r++) {
		st[r].fwd_compute_s = st[r].fwd_s = f;
		st[r].bwd_compute_s = st[r].bwd_s = b;
		st[r].si_speedup = s;
	}
	pp_schedule_iteration(&pl, &sys, st, it);
	return it->iteration_s;
}

static double simulate(pp_sim *sim, int p, long long m, double f, double b, double s,
                       pp_sim_result *r)
{
	pp_error err;
	if (pp_sim_orders(sim, PP_SCHED_WSHAPE, p, m, 1, &err) != PP_OK)
		fail_msg("%s", err.text);
	pp_sim_stage st[16];
	memset(st, 0, sizeof st);
	for (int k = 0; k < p; k++) {
		st[k].fwd_s = f;
		st[k].bwd_s = b;
		st[k].si_speedup = s;
	}
	if (pp_sim_run(sim, st, 0, r, &err) != PP_OK)
		fail_msg("%s", err.text);
	return r->iteration_s;
}

static void test_closed_form_equals_simulator(void **state)
{
	(void)state;
	pp_sim *sim;
	assert_int_equal(pp_sim_new(&sim, NULL), PP_OK);
	const double fb[][2] = {{1, 2}, {1, 1.5}, {1, 1}, {0.7, 2.1}};
	int n = 0;
	double worst = 0;
	for (size_t x = 0; x < sizeof fb / sizeof fb[0]; x++) {
		double f = fb[x][0], b = fb[x][1], smax = (f + b) / (f > b ? f : b);
		const double ss[] = {1, 1.1, 1.2, 1.25, 1.4, smax};
		for (int p = 1; p <= 8; p++)
			for (long long m = 1; m <= 24; m++)
				for (size_t k = 0; k < sizeof ss / sizeof ss[0]; k++) {
					double s = ss[k] > smax ? smax : ss[k];
					pp_iteration it;
					pp_sim_result r;
					double c = closed(p, m, f, b, s, &it);
					double t = simulate(sim, p, m, f, b, s, &r);
					double e = fabs(c - t) / t;
					if (e > worst)
						worst = e;
					if (e > 1e-9)
						fail_msg("p %d m %lld f %g b %g s %g: closed %.12g "
						         "sim %.12g",
						         p, m, f, b, s, c, t);
					if (m > p) {
						/* the paper's bubble ratio, and its T = ((m-1)/s + p)(f+b) */
						assert_rel(t, ((m - 1) / s + p) * (f + b), 1e-9);
						if (p > 1)
							assert_rel(
							    r.bubble_s / t,
							    pp_wshape_bubble_fraction(p, m, s),
							    1e-9);
					}
					n++;
				}
	}
	print_message("W shape: closed form = simulator on %d (p, m, s, f, b), worst rel %.2g\n", n,
	              worst);
	/* at s = 1 the bubble ratio is 1F1B's; above, lower */
	assert_rel(pp_wshape_bubble_fraction(4, 12, 1), pp_bubble_fraction(PP_SCHED_1F1B, 4, 12, 1),
	           1e-15);
	assert_true(pp_wshape_bubble_fraction(4, 12, 1.3) <
	            pp_bubble_fraction(PP_SCHED_1F1B, 4, 12, 1));
	pp_sim_free(sim);
}

/* Fig. 8: p = 4, m = 12: rank 0 starts with the forwards of micro-batches
 * 0..3 (chunk 0), runs SI blocks in the steady phase and ends on backwards;
 * each micro-batch's forward passes every rank twice (the U), so the sends
 * double. */
static void test_fig8_order(void **state)
{
	(void)state;
	pp_sim *sim;
	pp_error err;
	assert_int_equal(pp_sim_new(&sim, NULL), PP_OK);
	assert_int_equal(pp_sim_orders(sim, PP_SCHED_WSHAPE, 4, 12, 1, &err), PP_OK);
	size_t n;
	const pp_task *t = pp_sim_order(sim, 0, &n);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(t[i].kind, PP_TASK_F);
		assert_int_equal(t[i].mb, i);
		assert_int_equal(t[i].chunk, 0);
	}
	/* then micro-batch 0 comes back up to rank 0 (chunk 1), alone */
	assert_int_equal(t[4].kind, PP_TASK_F);
	assert_int_equal(t[4].mb, 0);
	assert_int_equal(t[4].chunk, 1);
	/* the first SI block: forward of micro-batch 4 with the backward of 0 */
	assert_int_equal(t[5].kind, PP_TASK_SI);
	assert_int_equal(t[5].mb, 4);
	assert_int_equal(t[6].kind, PP_TASK_B);
	assert_int_equal(t[6].mb, 0);
	assert_int_equal(t[6].chunk, 1);
	assert_int_equal(t[n - 1].kind, PP_TASK_B);
	assert_int_equal(t[n - 1].mb, 11);
	assert_int_equal(t[n - 1].chunk, 0);
	/* sends: 1F1B moves each micro-batch over p - 1 links each way, the U 2(p - 1) */
	pp_sim_stage st[4];
	memset(st, 0, sizeof st);
	for (int r = 0; r < 4; r++) {
		st[r].fwd_s = 1;
		st[r].bwd_s = 2;
		st[r].send_fwd_s = st[r].send_bwd_s = 0.01;
		st[r].si_speedup = 1.3;
	}
	pp_sim_result res;
	assert_int_equal(pp_sim_run(sim, st, 0, &res, &err), PP_OK);
	size_t sends = 0;
	for (size_t i = 0; i < pp_sim_event_count(sim); i++)
		sends += pp_sim_event_at(sim, i)->kind == PP_EV_SEND;
	assert_int_equal(sends, 12 * 2 * 2 * 3);
	/* the trace's SI block names both strands: rank 0's first fuses the
	 * forward of micro-batch 4 (chunk 0) with the backward of 0 (chunk 1) */
	const pp_sim_event *si = NULL;
	for (size_t i = 0; i < pp_sim_event_count(sim) && !si; i++) {
		const pp_sim_event *ev = pp_sim_event_at(sim, i);
		if (ev->rank == 0 && ev->kind == PP_EV_SI)
			si = ev;
	}
	assert_non_null(si);
	assert_int_equal(si->mb, 4);
	assert_int_equal(si->chunk, 0);
	assert_int_equal(si->mb2, 0);
	assert_int_equal(si->chunk2, 1);
	assert_string_equal(pp_event_kind_name(PP_EV_SI), "SI");
	/* an SI block must be followed by the backward it fuses with */
	const pp_task bad[] = {{PP_TASK_SI, 0, 0}, {PP_TASK_F, 1, 0}};
	assert_int_equal(pp_sim_reset(sim, 1, 2, 1, &err), PP_OK);
	assert_int_equal(pp_sim_set_order(sim, 0, bad, 2, &err), PP_EINPUT);
	pp_sim_free(sim);
}

static void run_plan(pp_schedule sch, int pp, pp_estimate *e)
{
	pp_model m;
	pp_system s;
	pp_job job;
	pp_plan p;
	pp_error err;
	assert_int_equal(pp_model_preset("llama3-70b", &m, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
	pp_job_init(&job);
	job.global_batch = 512;
	job.seq_len = 8192;
	pp_plan_init(&p);
	p.tp = 8;
	p.pp = pp;
	p.sp = true;
	p.recompute = PP_RECOMPUTE_FULL;
	p.schedule = sch;
	if (pp_estimate_run(&m, &s, &job, &p, 64, e, &err) != PP_OK)
		fail_msg("%s: %s", err.field, err.text);
}

/* The estimate under wshape: every stage holds 1F1B's stage-0 in-flight count
 * plus one layer (§6.5), the SI speedup shortens the iteration, the sends
 * double, and the simulator agrees with the closed form as it does for 1F1B. */
static void test_estimate_wshape(void **state)
{
	(void)state;
	static pp_estimate a, w;
	run_plan(PP_SCHED_1F1B, 4, &a);
	run_plan(PP_SCHED_WSHAPE, 4, &w);
	pp_sim *sim;
	pp_error err;
	assert_int_equal(pp_sim_new(&sim, NULL), PP_OK);
	assert_int_equal(pp_estimate_simulate(&a, sim, &err), PP_OK);
	assert_int_equal(pp_estimate_simulate(&w, sim, &err), PP_OK);
	pp_sim_free(sim);
	pp_stage_memory m0, w0;
	memset(&m0, 0, sizeof m0);
	memset(&w0, 0, sizeof w0);
	assert_int_equal(pp_memory_stage(&a.model, &a.system, &a.job, &a.plan, 0, &m0, &err),
	                 PP_OK);
	assert_int_equal(pp_memory_stage(&w.model, &w.system, &w.job, &w.plan, 2, &w0, &err),
	                 PP_OK);
	assert_rel(w0.inflight_layer_mbs, m0.inflight_layer_mbs + 1, 1e-12);
	double s = w.bottleneck.si_speedup;
	print_message("llama3-70b tp 8 pp 4 on dgx-h100: s %.3f, 1F1B %.1f ms, wshape %.1f ms "
	              "(gain %.1f%%); simulated %.1f / %.1f ms\n",
	              s, a.time.iteration_s * 1e3, w.time.iteration_s * 1e3,
	              (a.time.iteration_s / w.time.iteration_s - 1) * 100, a.sim.iteration_s * 1e3,
	              w.sim.iteration_s * 1e3);
	assert_true(s > 1);
	assert_true(w.time.iteration_s < a.time.iteration_s);
	assert_rel(w.pp_bytes, 2 * a.pp_bytes, 1e-12);
	assert_rel(w.sim.iteration_s, w.time.iteration_s, 0.05);
}

/* Layer x micro-batch activation sets rank r holds, walking its W task list
 * (sim.c's order): a forward adds its chunk's layers, a backward frees them,
 * an SI block does both; counted after each task or block.  Chunk 0 holds
 * n / 2 layers, chunk 1 the rest (memory.c's placement).  *turn: the most
 * after a forward of chunk 1 (rank 0 then runs the head). */
static double walk_held(const pp_sim *sim, int r, int n, double *turn)
{
	size_t len;
	const pp_task *t = pp_sim_order(sim, r, &len);
	double size[2] = {n / 2, n - n / 2};
	double alive = 0, any = 0;
	*turn = 0;
	for (size_t i = 0; i < len; i++) {
		bool fwd_c1 = t[i].kind != PP_TASK_B && t[i].chunk == 1;
		if (t[i].kind == PP_TASK_F) {
			alive += size[t[i].chunk];
		} else if (t[i].kind == PP_TASK_SI) {
			assert_true(i + 1 < len && t[i + 1].kind == PP_TASK_B);
			alive += size[t[i].chunk] - size[t[i + 1].chunk];
			i++;
		} else {
			alive -= size[t[i].chunk];
		}
		assert_true(alive >= 0);
		if (alive > any)
			any = alive;
		if (fwd_c1 && alive > *turn)
			*turn = alive;
	}
	assert_true(alive == 0);
	return any;
}

/* memory.c's in-flight count under wshape equals a walk over the
 * simulator's task lists, for every rank, on a grid of (p, m, layers per
 * rank): the block ends' most plus the SI layer where blocks pair two
 * strands (m > p); on rank 0 the turn of the U (with the logits) when that
 * moment is the larger. */
static void test_inflight_walks_the_order(void **state)
{
	(void)state;
	pp_model m0;
	pp_system s;
	pp_error err;
	assert_int_equal(pp_model_preset("llama3-8b", &m0, &err), PP_OK);
	assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
	pp_sim *sim;
	assert_int_equal(pp_sim_new(&sim, NULL), PP_OK);
	static pp_estimate e;
	const int ps[] = {1, 2, 3, 4, 6};
	const int ns[] = {2, 3, 5, 6};
	int points = 0, turns = 0;
	for (size_t a = 0; a < sizeof ps / sizeof ps[0]; a++) {
		int P = ps[a];
		for (int mb = 1; mb <= 3 * P + 2; mb++) {
			assert_int_equal(pp_sim_orders(sim, PP_SCHED_WSHAPE, P, mb, 1, &err),
			                 PP_OK);
			for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
				int n = ns[b];
				pp_model m = m0;
				m.num_layers = n * P;
				pp_job j;
				pp_job_init(&j);
				j.global_batch = mb;
				j.seq_len = 4096;
				pp_plan p;
				pp_plan_init(&p);
				p.pp = P;
				p.schedule = PP_SCHED_WSHAPE;
				if (pp_estimate_eval(&m, &s, &j, &p, P, PP_EVAL_MEMORY_ONLY, NULL,
				                     &e, &err) != PP_OK)
					fail_msg("p %d m %d n %d: %s: %s", P, mb, n, err.field,
					         err.text);
				assert_int_equal(e.plan.microbatches, mb);
				for (int r = 0; r < P; r++) {
					double turn, any = walk_held(sim, r, n, &turn);
					double si = mb > P ? 1 : 0;
					pp_stage_memory sm;
					assert_int_equal(
					    pp_memory_stage(&m, &s, &j, &e.plan, r, &sm, &err),
					    PP_OK);
					assert_int_equal(sm.layers, n);
					double want = any + si;
					if (r == 0 && sm.act_logits_bytes > 0) {
						want = turn; /* the turn of the U was the peak */
						turns++;
					}
					if (fabs(sm.inflight_layer_mbs - want) > 1e-9)
						fail_msg("p %d m %d n %d rank %d: memory.c %.3f, "
						         "walk %.3f",
						         P, mb, n, r, sm.inflight_layer_mbs, want);
					points++;
				}
			}
		}
	}
	print_message("wshape in-flight counts = task-list walks at %d (p, m, n, rank) points "
	              "(%d with the turn of the U as rank 0's peak)\n",
	              points, turns);
	assert_true(turns > 0);
	pp_sim_free(sim);
}

/* Largest layer count of `m0`'s layer that fits, §6.5's setup (A40, DP 4,
 * TP 8, PP 2, micro-batch 1, 8K) on framework `fw` in precision `prec` with
 * `grad_bytes` gradients: `kind` 0 = 1F1B, 1 = wshape, 2 = bi-directional
 * with replicated model states (1F1B's memory plus a second copy of
 * weights, gradients and optimizer states).  Counts go up in `step`s (1, or
 * 2p for DHelix's artifact, dsllm.py:49); odd counts split unevenly,
 * whichever way fits. */
static int max_layers_on(const pp_model *m0, const char *fw, pp_precision prec, int grad_bytes,
                         int kind, int zero, pp_recompute rc, int step, double *params)
{
	pp_system s;
	pp_error err;
	assert_int_equal(pp_system_preset("dhelix-a40", &s, &err), PP_OK);
	assert_int_equal(pp_system_set_framework(&s, fw, &err), PP_OK);
	static pp_estimate e;
	int best = 0;
	for (int L = 8; L <= 160; L += step) {
		pp_model m = *m0;
		m.num_layers = L;
		bool fits = false;
		for (int first = L / 2; first <= (L + 1) / 2 && !fits; first++) {
			pp_job j;
			pp_job_init(&j);
			j.global_batch = 1024;
			j.seq_len = 8192;
			j.precision = prec;
			j.grad_bytes = grad_bytes;
			pp_plan p;
			pp_plan_init(&p);
			p.tp = 8;
			p.pp = 2;
			p.sp = true;
			p.zero = zero;
			p.recompute = rc;
			p.schedule = kind == 1 ? PP_SCHED_WSHAPE : PP_SCHED_1F1B;
			if (first != L - first) {
				p.first_stage_layers = first;
				p.last_stage_layers = L - first;
			}
			if (pp_estimate_eval(&m, &s, &j, &p, 64, PP_EVAL_MEMORY_ONLY, NULL, &e,
			                     &err) != PP_OK)
				continue;
			double tot = e.memory.total_bytes;
			if (kind == 2) {
				/* the peak stage's model states once more */
				double extra = 0;
				for (int st = 0; st < 2; st++) {
					pp_stage_memory sm;
					assert_int_equal(
					    pp_memory_stage(&m, &s, &j, &e.plan, st, &sm, &err),
					    PP_OK);
					double x = sm.total_bytes + sm.weights_bytes +
					           sm.gradients_bytes + sm.optimizer_bytes;
					if (x > extra)
						extra = x;
				}
				tot = extra;
			}
			fits = tot <= e.capacity_bytes;
		}
		if (fits) {
			best = L;
			pp_param_count pc;
			pp_model_params(&m, &pc);
			*params = pc.total;
		}
	}
	return best;
}

/* The preset's Llama-25B layer on paraplan's default (Megatron) stack, bf16. */
static int max_layers(int kind, int zero, pp_recompute rc, double *params)
{
	pp_model m0;
	pp_error err;
	assert_int_equal(pp_model_preset("dhelix-llama-25b", &m0, &err), PP_OK);
	return max_layers_on(&m0, "megatron", PP_PREC_BF16, 4, kind, zero, rc, 1, params);
}

/* §6.5: DHelix's maximum model size 39B against Megatron-LM's 40B (one layer
 * of 0.86B less), the bi-directional double strand 32B. */
/* Parameters of the Llama-25B layer stack at L layers (embedding and head
 * included, as the paper's model sizes are). */
static double params_at(int L)
{
	pp_model m;
	pp_error err;
	assert_int_equal(pp_model_preset("dhelix-llama-25b", &m, &err), PP_OK);
	m.num_layers = L;
	pp_param_count pc;
	pp_model_params(&m, &pc);
	return pc.total;
}

/* Seed 002 §6.5: Llama-25B's layer, DP 4, TP 8, PP 2, micro-batch 1, layers
 * added until the model no longer fits: Megatron (single strand) 40B, DHelix
 * 39B, the bi-directional double strand 32B.  The paper's configuration is
 * not given beyond that; ZeRO-1 (Megatron's distributed optimizer) without
 * recompute is the one whose bi-directional figure lands on 32B, and there
 * SI must cost what the paper's costs (40B - 39B: one layer of 0.86B) within
 * one layer.  The absolute 1F1B size is not reproduced: the paper's 44 layers
 * lie between ZeRO-0's and ZeRO-1's maxima (bench/bench_dhelix_s65.c prints
 * every setup).  The other configurations are printed for reference. */
static void test_max_model_size(void **state)
{
	(void)state;
	const struct {
		int zero;
		pp_recompute rc;
	} cfg[] = {{1, PP_RECOMPUTE_NONE},
	           {0, PP_RECOMPUTE_NONE},
	           {0, PP_RECOMPUTE_FULL},
	           {1, PP_RECOMPUTE_FULL}};
	int l0_dist = 0, l0_nodist = 0;
	for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
		double p0 = 0, p1 = 0, p2 = 0;
		int l0 = max_layers(0, cfg[i].zero, cfg[i].rc, &p0);
		int l1 = max_layers(1, cfg[i].zero, cfg[i].rc, &p1);
		int l2 = max_layers(2, cfg[i].zero, cfg[i].rc, &p2);
		print_message("§6.5 zero %d recompute %s: 1F1B %d layers (%.1fB), wshape %d "
		              "(%.1fB, %.1f%% of 1F1B), bi-directional %d (%.1fB); paper 40B / 39B "
		              "(97.5%%) / 32B\n",
		              cfg[i].zero, pp_recompute_name(cfg[i].rc), l0, p0 / 1e9, l1, p1 / 1e9,
		              100 * p1 / p0, l2, p2 / 1e9);
		assert_true(l1 <= l0);
		assert_true(l2 < l1);
		if (i == 0)
			l0_dist = l0;
		if (i == 1)
			l0_nodist = l0;
		if (i == 0) {
			/* the paper's SI cost: 40B and 39B are 44 and 43 of these layers */
			int paper_cost = 44 - 43;
			assert_true(params_at(44) > 39.5e9 && params_at(44) < 40.5e9);
			assert_true(params_at(43) > 38.5e9 && params_at(43) < 39.5e9);
			assert_true(abs((l0 - l1) - paper_cost) <= 1);
			/* 32B lies within one layer of the bi-directional maximum */
			assert_true(params_at(l2 - 1) <= 32e9 && params_at(l2 + 1) >= 32e9);
		}
	}
	/* The paper's Megatron (44 layers) lies strictly between the maxima
	 * without and with the distributed optimizer, more than one layer from
	 * each (docs/dhelix.md, "§6.5 maximum model size": the gap). */
	assert_true(l0_nodist + 1 < 44 && 44 < l0_dist - 1);
}

/* The model DHelix's artifact builds (github.com/DHeLlam-502/dhellam,
 * script/run.sh on Megatron-Core v0.5.0's defaults): Llama-25B's layer with
 * MHA (no --group-query-attention; dstb.py:109-122 splits QKV into 3 x
 * hidden/heads per head), LayerNorm with a bias (dstb.py:1373-1380), learned
 * positions up to 8192 (dshb.py:254), 32000 tokens tied (run.sh --vocab-size,
 * dshb.py:268), dropout 0.1 (bda.py:5, flash attention's p 0.1). */
static pp_model artifact_model(int L)
{
	pp_model m;
	pp_error err;
	assert_int_equal(pp_model_preset("dhelix-llama-25b", &m, &err), PP_OK);
	m.num_layers = L;
	m.num_kv_heads = m.num_heads;
	m.norm = PP_NORM_LAYERNORM;
	m.position = PP_POS_LEARNED;
	m.max_position = 8192;
	m.vocab = 32000;
	m.tied_embeddings = true;
	m.dropout = true;
	return m;
}

static int artifact_max(const char *fw, int kind, int step, double *params)
{
	pp_model m = artifact_model(28);
	return max_layers_on(&m, fw, PP_PREC_FP16, 2, kind, 1, PP_RECOMPUTE_NONE, step, params);
}

/* The A40 cluster of §6.1 under framework `fw`, and §6.5's job: 8K
 * sequences in fp16 with fp16 gradients (the artifact's run.sh). */
static void artifact_setup(const char *fw, pp_system *s, pp_job *j)
{
	pp_error err;
	assert_int_equal(pp_system_preset("dhelix-a40", s, &err), PP_OK);
	assert_int_equal(pp_system_set_framework(s, fw, &err), PP_OK);
	pp_job_init(j);
	j->global_batch = 1024;
	j->seq_len = 8192;
	j->precision = PP_PREC_FP16;
	j->grad_bytes = 2;
}

/* Peak bytes of Fig. 5's run (§3.2: Llama-25B's 28 layers, DP 8, TP 8, 8K) at
 * micro-batch `mbs` on framework `fw`, and the capacity. */
static double fig5_peak(const char *fw, int mbs, double *cap)
{
	pp_model m = artifact_model(28);
	pp_system s;
	pp_job j;
	artifact_setup(fw, &s, &j);
	pp_error err;
	pp_plan p;
	pp_plan_init(&p);
	p.tp = 8;
	p.sp = true;
	p.zero = 1;
	p.mbs = mbs;
	static pp_estimate e;
	assert_int_equal(pp_estimate_eval(&m, &s, &j, &p, 64, PP_EVAL_MEMORY_ONLY, NULL, &e, &err),
	                 PP_OK);
	*cap = e.capacity_bytes;
	return e.memory.total_bytes;
}

/* §6.5 on the artifact's own stack: what DHelix's block (dstb.py) keeps per
 * layer and micro-batch, summed tensor by tensor from the code, is what
 * paraplan counts under data/framework/dhelix.json; with it the W's largest
 * count that DHelix can build (a multiple of 2p, dsllm.py:49) is the paper's
 * 39B within one layer, SI costs the paper's one layer within one, and Fig.
 * 5's micro-batch 2 no longer fits (it does under TransformerEngine's
 * layers).  Megatron's 40B and the bi-directional 32B are not reproduced
 * (docs/dhelix.md, "§6.5 maximum model size"): the gaps are pinned below. */
static void test_max_model_size_dhelix_block(void **state)
{
	(void)state;
	/* What the block keeps, one layer and micro-batch, s = 8192, h = 8192,
	 * FFN 28672, 64 heads, TP 8 with SP, fp16 (bytes, dstb.py line): */
	const double s = 8192, h = 8192, f = 28672, t = 8, heads = 64;
	double kept = 0;
	kept += s / t * h * 2 + 2 * s / t * 4; /* 436: layer input, LN mu, rsigma (fp32) */
	kept += s * h * 2;                     /* 449: gathered LN output (QKV wgrad) */
	kept += 3 * s * h / t * 2;             /* 464: q, k, v (MHA) */
	kept += s * h / t * 2;                 /* 464/453: attention out = proj input */
	kept += heads / t * s * 4;             /* 464: fp32 log-sum-exp */
	kept += s / t * h * 1;                 /* 512: int8 dropout mask */
	kept += s / t * h * 2 + 2 * s / t * 4; /* 444: LN2 input, mu, rsigma */
	kept += s * h * 2;                     /* 456: gathered LN2 output (FC1 wgrad) */
	kept += s * 2 * f / t * 2;             /* 523: SwiGLU input */
	kept += s * f / t * 2;                 /* 460: FC2 input */
	kept += s / t * h * 1;                 /* 508: int8 dropout mask */
	pp_model m = artifact_model(40);
	pp_system sys;
	pp_job j;
	artifact_setup("dhelix", &sys, &j);
	pp_error err;
	pp_plan p;
	pp_plan_init(&p);
	p.tp = 8;
	p.pp = 2;
	p.dp = 4;
	p.sp = true;
	p.zero = 1;
	static pp_estimate e;
	assert_int_equal(
	    pp_estimate_eval(&m, &sys, &j, &p, 64, PP_EVAL_MEMORY_ONLY, NULL, &e, &err), PP_OK);
	pp_stage_memory sm;
	assert_int_equal(pp_memory_stage(&m, &sys, &j, &e.plan, 0, &sm, &err), PP_OK);
	print_message("DHelix block: %.1f MiB kept per layer and micro-batch (dstb.py), paraplan "
	              "%.1f MiB\n",
	              kept / 1048576, sm.act_per_layer_mb_bytes / 1048576);
	assert_true(fabs(sm.act_per_layer_mb_bytes - kept) <= 1e-9 * kept);

	/* Layer counts, and the paper's sizes in this model's layers (MHA:
	 * 0.973B a layer, 0.33B of embeddings). */
	double p0 = 0, p1 = 0, p2 = 0, p1w = 0, ps = 0;
	int l0 = artifact_max("dhelix", 0, 1, &p0);
	int l1 = artifact_max("dhelix", 1, 1, &p1);
	int l2 = artifact_max("dhelix", 2, 1, &p2);
	int l1w = artifact_max("dhelix", 1, 4, &p1w); /* DSLLM: a multiple of 2p */
	int ls = artifact_max("megatron", 0, 1, &ps);
	int paper[3] = {0, 0, 0};
	const double sizes[3] = {40e9, 39e9, 32e9};
	for (int k = 0; k < 3; k++) {
		double best = INFINITY;
		for (int L = 1; L <= 160; L++) {
			pp_model x = artifact_model(L);
			pp_param_count pc;
			pp_model_params(&x, &pc);
			if (fabs(pc.total - sizes[k]) < best) {
				best = fabs(pc.total - sizes[k]);
				paper[k] = L;
			}
		}
	}
	print_message(
	    "§6.5 artifact model, DHelix block: 1F1B %d layers (%.1fB), wshape %d (%.1fB; "
	    "%d = %.1fB as a multiple of 4), bi-directional %d (%.1fB); stock Megatron "
	    "block 1F1B %d (%.1fB); paper 40B / 39B / 32B = %d / %d / %d layers\n",
	    l0, p0 / 1e9, l1, p1 / 1e9, l1w, p1w / 1e9, l2, p2 / 1e9, ls, ps / 1e9, paper[0],
	    paper[1], paper[2]);
	assert_int_equal(paper[0], 41);
	assert_int_equal(paper[1], 40);
	assert_int_equal(paper[2], 33);
	/* Holds: DHelix's buildable maximum is 39B within one layer, SI's cost
	 * (1F1B - wshape) the paper's one layer within one. */
	assert_true(abs(l1w - paper[1]) <= 1);
	assert_true(abs((l0 - l1) - (paper[0] - paper[1])) <= 1);
	assert_true(l2 < l1 && l1 <= l0);
	/* The stock block (TransformerEngine keeps the local norm output) is
	 * far from 40B: the paper's figures need DHelix's block. */
	assert_true(ls > paper[0] + 10);
	/* Not reproduced (pinned, docs/dhelix.md): Megatron's 40B lies more than
	 * one layer below this 1F1B count; 32B more than one layer above the
	 * bi-directional count. */
	assert_true(l0 > paper[0] + 1);
	assert_true(l2 < paper[2] - 1);

	/* Fig. 5 (§3.2): micro-batch 1 fits and 2 does not, "stopping right
	 * before the system runs out of memory", with DHelix's block; under
	 * TransformerEngine's layers micro-batch 2 would fit. */
	double cap = 0;
	double d1 = fig5_peak("dhelix", 1, &cap), d2 = fig5_peak("dhelix", 2, &cap);
	double s2 = fig5_peak("megatron", 2, &cap);
	print_message("Fig. 5: DHelix block mbs 1 %.1f GiB, mbs 2 %.1f GiB; stock mbs 2 %.1f GiB; "
	              "of %.1f GiB\n",
	              d1 / 1073741824.0, d2 / 1073741824.0, s2 / 1073741824.0, cap / 1073741824.0);
	assert_true(d1 <= cap && d2 > cap);
	assert_true(s2 <= cap);
}

/* Seed 002 §6's scenarios (bench/dhelix_s6.sh, docs/dhelix.md): the W's
 * closed form (sched_wshape.c) and the event simulator agree within 1% of
 * the iteration on each; the table and the largest gap are printed. */
static void test_s6_closed_equals_simulator(void **state)
{
	(void)state;
	static const struct {
		const char *name, *model, *system;
		long long gpus, gbs;
		int seq, tp, pp, cp, ep;
		bool full;
	} sc[] = {
	    {"Fig.11 Llama-8B A40 8K", "llama3.1-8b", "dhelix-a40", 64, 1024, 8192, 8, 1, 1, 1,
	     false},
	    {"Fig.11 Llama-25B A40 8K", "dhelix-llama-25b", "dhelix-a40", 64, 1024, 8192, 8, 2, 1,
	     1, false},
	    {"Fig.11 Llama-39B A40 8K", "dhelix-llama-39b", "dhelix-a40", 64, 1024, 8192, 8, 4, 1,
	     1, false},
	    {"Fig.12 Llama-25B A40 16K cp2", "dhelix-llama-25b", "dhelix-a40", 64, 512, 16384, 8, 2,
	     2, 1, false},
	    {"Tab.6 Phi-31B A40 ep8", "dhelix-phi-31b", "dhelix-a40", 64, 1600, 3072, 1, 4, 1, 8,
	     false},
	    {"Fig.13a Llama-66B A800 16K cp2", "dhelix-llama-66b", "dhelix-a800", 64, 512, 16384, 8,
	     4, 2, 1, false},
	    {"Fig.13a Llama-66B A800 32K cp4", "dhelix-llama-66b", "dhelix-a800", 64, 256, 32768, 8,
	     2, 4, 1, true},
	    {"Fig.14 L8 H100 tp8", "dhelix-llama405-l8", "dgx-h100", 32, 1024, 8192, 8, 1, 1, 1,
	     false},
	    {"Fig.14 L16 H100 tp16", "dhelix-llama405-l16", "dgx-h100", 32, 1024, 8192, 16, 1, 1, 1,
	     false},
	    {"Fig.14 L32 H100 tp32", "dhelix-llama405-l32", "dgx-h100", 32, 1024, 8192, 32, 1, 1, 1,
	     false},
	};
	static pp_estimate e;
	pp_sim *sim;
	pp_error err;
	assert_int_equal(pp_sim_new(&sim, NULL), PP_OK);
	double worst = 0;
	const char *at = "";
	print_message("%-32s %12s %12s %8s %6s\n", "§6 scenario, wshape", "closed ms", "sim ms",
	              "gap", "s");
	for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
		pp_model m;
		pp_system s;
		pp_job job;
		pp_plan p;
		assert_int_equal(pp_model_preset(sc[i].model, &m, &err), PP_OK);
		assert_int_equal(pp_system_preset(sc[i].system, &s, &err), PP_OK);
		pp_job_init(&job);
		job.global_batch = sc[i].gbs;
		job.seq_len = sc[i].seq;
		pp_plan_init(&p);
		p.tp = sc[i].tp;
		p.pp = sc[i].pp;
		p.cp = sc[i].cp;
		p.ep = sc[i].ep;
		p.sp = sc[i].tp > 1;
		if (sc[i].full)
			p.recompute = PP_RECOMPUTE_FULL;
		p.schedule = PP_SCHED_WSHAPE;
		if (pp_estimate_run(&m, &s, &job, &p, sc[i].gpus, &e, &err) != PP_OK ||
		    pp_estimate_simulate(&e, sim, &err) != PP_OK)
			fail_msg("%s: %s: %s", sc[i].name, err.field, err.text);
		double gap = e.sim.iteration_s / e.time.iteration_s - 1;
		print_message("%-32s %12.1f %12.1f %+7.2f%% %6.3f\n", sc[i].name,
		              e.time.iteration_s * 1e3, e.sim.iteration_s * 1e3, gap * 100,
		              e.bottleneck.si_speedup);
		if (fabs(gap) > fabs(worst)) {
			worst = gap;
			at = sc[i].name;
		}
	}
	pp_sim_free(sim);
	print_message("largest gap: %+.2f%% (%s)\n", worst * 100, at);
	assert_true(fabs(worst) <= 0.01);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_closed_form_equals_simulator),
	    cmocka_unit_test(test_fig8_order),
	    cmocka_unit_test(test_estimate_wshape),
	    cmocka_unit_test(test_inflight_walks_the_order),
	    cmocka_unit_test(test_max_model_size),
	    cmocka_unit_test(test_max_model_size_dhelix_block),
	    cmocka_unit_test(test_s6_closed_equals_simulator),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
