/*
 * Seed 004 ("Distributed Training: Mathematics and Engineering") §15, the
 * time-model exercises, reproduced to the digits the text prints:
 *   Exercise 1 — ring vs tree all-reduce of 14 GB on 8 GPUs at 600 GB/s;
 *   Exercise 3 — micro-batches for a pipeline bubble <= 5% at P = 8;
 *   Exercise 4 — tensor-parallel bytes per block per step at h = 8192,
 *                B = 4, S = 8192, t = 8, from paraplan's own op list.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "paraplan/paraplan.h"
#include "pp_test.h"

#define MiB 1048576.0

/* |got - want| <= rel * |want| */
/* ------------------------------------------------------------ Exercise 1 */

/* "2·7/8 · 14 = 24.5 GB per rank. At 600 GB/s: 24.5 / 600 = 40.8 ms."
 * "tree: 2 log2(8) · M = 6 · 14 = 84 GB per rank -> 140 ms." */
static void test_exercise1(void **state)
{
	(void)state;
	double ring = pp_allreduce_ring_s(14e9, 8, 600e9, 0);
	double tree = pp_allreduce_tree_s(14e9, 8, 600e9, 0);
	assert_rel(ring, 24.5e9 / 600e9, 1e-15);
	assert_rel(tree, 84e9 / 600e9, 1e-15);
	assert_true(round_to(ring * 1e3, 1) == 40.8);
	assert_true(round_to(tree * 1e3, 0) == 140);
	/* "Big difference; this is why NCCL picks ring on intra-node." */
	assert_true(ring < tree);
	/* With latency: ring pays 2(n-1) alpha, tree 2 log2(n) alpha. */
	double a = 5e-6;
	assert_rel(pp_allreduce_ring_s(14e9, 8, 600e9, a) - ring, 14 * a, 1e-9);
	assert_rel(pp_allreduce_tree_s(14e9, 8, 600e9, a) - tree, 6 * a, 1e-9);
	/* A group of one communicates nothing. */
	assert_true(pp_allreduce_ring_s(14e9, 1, 600e9, a) == 0);
	assert_true(pp_allreduce_tree_s(14e9, 1, 600e9, a) == 0);
}

/* ------------------------------------------------------------ Exercise 3 */

static long long smallest_m(pp_schedule sched, int p, int v, double limit)
{
	for (long long m = 1; m < 100000; m++)
		if (pp_bubble_fraction(sched, p, m, v) <= limit)
			return m;
	return -1;
}

/* "Bubble = (P-1)/(M+P-1) <= 0.05 ... M >= 133."  "With 1F1B, same bubble."
 * "With interleaved 1F1B (v=4): 7/(4M+7) <= 0.05 -> M >= 33." */
static void test_exercise3(void **state)
{
	(void)state;
	assert_int_equal(smallest_m(PP_SCHED_GPIPE, 8, 1, 0.05), 133);
	assert_int_equal(smallest_m(PP_SCHED_1F1B, 8, 1, 0.05), 133);
	assert_true(pp_bubble_fraction(PP_SCHED_GPIPE, 8, 133, 1) == 7.0 / 140);
	assert_true(pp_bubble_fraction(PP_SCHED_GPIPE, 8, 132, 1) > 0.05);

	/*
	 * Interleaved, v = 4.  The text's bound is 4M >= 133, i.e. M >= 33.25,
	 * which it prints as "M >= 33".  The smallest integer M that meets it is
	 * 34: at M = 33 the bubble is 7/139 = 5.04% (> 5%).  The exact search
	 * therefore finds 34; 33 is the text's bound rounded down.  We assert
	 * both facts rather than bend either.
	 */
	double bound = (7.0 / 0.05 - 7.0) / 4.0; /* 33.25 */
	assert_rel(bound, 33.25, 1e-12);
	assert_true(floor(bound) == 33); /* what the text prints */
	assert_rel(pp_bubble_fraction(PP_SCHED_INTERLEAVED, 8, 33, 4), 7.0 / 139, 1e-15);
	assert_true(round_to(100 * pp_bubble_fraction(PP_SCHED_INTERLEAVED, 8, 33, 4), 2) == 5.04);
	assert_int_equal(smallest_m(PP_SCHED_INTERLEAVED, 8, 4, 0.05), 34);
	/* The text's 33 does satisfy the bound to its printed precision (5.0%). */
	assert_true(round_to(100 * pp_bubble_fraction(PP_SCHED_INTERLEAVED, 8, 33, 4), 0) == 5);

	/* Exercise 5's bubbles, same closed forms: 7/135 = 5.2%, 7/519 = 1.3%. */
	assert_true(round_to(100 * pp_bubble_fraction(PP_SCHED_1F1B, 8, 128, 1), 1) == 5.2);
	assert_true(round_to(100 * pp_bubble_fraction(PP_SCHED_INTERLEAVED, 8, 128, 4), 1) == 1.3);
	/* Zero bubble and a single stage. */
	assert_true(pp_bubble_fraction(PP_SCHED_ZB, 8, 16, 1) == 0);
	assert_true(pp_bubble_fraction(PP_SCHED_1F1B, 1, 16, 1) == 0);
}

/* ------------------------------------------------------------ Exercise 4 */

/* A Llama-2-70B-shaped model (h = 8192, 80 layers). */
static void llama70_shape(pp_model *m)
{
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "ex4-70b");
	m->num_layers = 80;
	m->hidden = 8192;
	m->num_heads = 64;
	m->num_kv_heads = 8;
	m->head_dim = 128;
	m->ffn_hidden = 28672;
	m->vocab = 32000;
	m->gated_mlp = true;
}

/* Bytes one GPU sends for a collective of a `bytes` buffer on n GPUs (ring). */
static double sent_bytes(pp_coll_kind kind, double bytes, int n)
{
	switch (kind) {
	case PP_COLL_ALLREDUCE: return 2.0 * (n - 1) / n * bytes;
	case PP_COLL_ALLGATHER:
	case PP_COLL_REDUCESCATTER:
	case PP_COLL_ALLTOALL: return (double)(n - 1) / n * bytes;
	case PP_COLL_P2P:
	default: return bytes;
	}
}

/* Sum over the TP-group collectives of `w`; counts all-reduces and their buffers. */
static double tp_sent(const pp_work *w, int t, int *n_allreduce, double *buf)
{
	double sum = 0;
	for (int i = 0; i < w->ncolls; i++) {
		const pp_coll *c = &w->colls[i];
		if (c->group != PP_GROUP_TP)
			continue;
		sum += sent_bytes(c->kind, c->bytes, t) * c->count;
		if (n_allreduce && c->kind == PP_COLL_ALLREDUCE) {
			*n_allreduce += (int)c->count;
			*buf = c->bytes;
		}
	}
	return sum;
}

/* "4 all-reduces per block x 2(t-1)/t · 2BSh bytes per all-reduce.
 *  2BSh = 2 · 4 · 8192 · 8192 = 512 MB.  Per all-reduce: 1.75 · 512 = 896 MB.
 *  Times 4: 3.58 GB per block per step.  With L=80 blocks: ~287 GB per step of
 *  TP comm.  On 600 GB/s NVLink: ~480 ms."  (MB = 2^20 bytes in the text.) */
static void test_exercise4(void **state)
{
	(void)state;
	pp_model m;
	pp_system s;
	pp_job job;
	pp_plan plan;
	pp_error err;
	llama70_shape(&m);
	assert_int_equal(pp_system_preset("dgx-h100", &s, &err), PP_OK);
	pp_job_init(&job);
	job.global_batch = 4;
	job.seq_len = 8192;
	pp_plan_init(&plan);
	plan.tp = 8;
	plan.mbs = 4;
	plan.sp = false;
	plan.recompute = PP_RECOMPUTE_NONE;
	assert_int_equal(pp_plan_resolve(&plan, &m, &s, 8, &job, &err), PP_OK);
	assert_int_equal(plan.dp, 1);
	assert_int_equal(plan.microbatches, 1);

	double bsh2 = 2.0 * 4 * 8192 * 8192;
	assert_true(bsh2 == 536870912.0);
	assert_true(bsh2 / MiB == 512);

	pp_work w;
	pp_work_init(&w);
	double per_block = 0;
	for (int l = 0; l < m.num_layers; l++) {
		pp_layer_work(&m, &job, &plan, l, &w);
		int nar = 0;
		double buf = 0;
		double b = tp_sent(&w, plan.tp, &nar, &buf);
		assert_int_equal(nar, 4); /* 2 forward + 2 backward */
		assert_true(buf == bsh2); /* each on a 2BSh buffer */
		if (l == 0)
			per_block = b;
		assert_true(b == per_block); /* every block alike */
	}
	assert_true(per_block / 4 == 1.75 * bsh2);
	assert_true(per_block / 4 / MiB == 896);
	assert_true(per_block / MiB == 3584);
	assert_true(round_to(per_block / MiB / 1000, 2) == 3.58);
	double total = per_block * m.num_layers;
	assert_true(total / MiB == 286720);
	assert_true(round_to(total / MiB / 1000, 0) == 287);
	/* "On 600 GB/s NVLink: ~480 ms" (the text's MB over decimal GB/s). */
	assert_true(round(total / MiB / 600e3 * 1e3 / 10) * 10 == 480);

	/* The same bytes through the forward/backward split: half each way. */
	double fwd = 0, bwd = 0;
	pp_layer_work(&m, &job, &plan, 0, &w);
	for (int i = 0; i < w.ncolls; i++) {
		const pp_coll *c = &w.colls[i];
		if (c->group != PP_GROUP_TP)
			continue;
		double b = sent_bytes(c->kind, c->bytes, plan.tp) * c->count;
		if (c->phase == PP_PHASE_FWD)
			fwd += b;
		else
			bwd += b;
	}
	assert_true(fwd == bwd && fwd + bwd == per_block);

	/* Sequence parallelism keeps the volume (all-gather + reduce-scatter pairs)
	 * on the critical path: same 3584 MiB per block outside the overlapped
	 * weight-gradient re-gathers. */
	pp_plan sp = plan;
	sp.sp = true;
	pp_layer_work(&m, &job, &sp, 0, &w);
	double exposed = 0;
	for (int i = 0; i < w.ncolls; i++) {
		const pp_coll *c = &w.colls[i];
		if (c->group == PP_GROUP_TP && !c->overlapped)
			exposed += sent_bytes(c->kind, c->bytes, sp.tp) * c->count;
	}
	assert_rel(exposed, per_block, 1e-15);

	/* Full recompute repeats the forward pair: 6 all-reduces (seed 000 Eq. 2). */
	pp_plan rc = plan;
	rc.recompute = PP_RECOMPUTE_FULL;
	pp_layer_work(&m, &job, &rc, 0, &w);
	int nar = 0;
	double buf = 0;
	assert_rel(tp_sent(&w, rc.tp, &nar, &buf), 1.5 * per_block, 1e-15);
	assert_int_equal(nar, 6);

	/* The stage's traffic is the layers' plus the embedding's and the head's. */
	pp_stage_time st;
	assert_int_equal(pp_stage_cost(&m, &s, &job, &plan, 0, &w, &st, &err), PP_OK);
	pp_embedding_work(&m, &job, &plan, &w);
	double emb = tp_sent(&w, plan.tp, NULL, NULL);
	pp_head_work(&m, &job, &plan, &w);
	double head = tp_sent(&w, plan.tp, NULL, NULL);
	assert_rel(st.tp_bytes, total + emb + head, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exercise1),
	    cmocka_unit_test(test_exercise3),
	    cmocka_unit_test(test_exercise4),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
