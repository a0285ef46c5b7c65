/*
 * Compatibility with the literature's closed forms:
 *
 * - seed 000 (ConfigTuner) §4, Eq. 1-10, on the Table 2 models and the Table 3
 *   platforms, with the per-replica batch sizes of Table 2 and the micro-batch
 *   sizes of §6: every term is recomputed here by hand from the printed
 *   equations and compared with pp_configtuner to 1e-12 relative;
 * - seed 001 (Pipette) §II-B Eq. 1 (AMP's model, as printed) and §V Eq. 3-4
 *   (Pipette's model) against hand computations on the same numbers, and the
 *   relation between the two.
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

#define REL 1e-12

/* |got - want| <= rel * |want| (exact when want is 0) */
/* ------------------------------------------------------------ platforms */

/*
 * Table 3 and §5 of seed 000.  F is Table 2's "FLOP/s" column.  The effective
 * bandwidths are §5's measured values where it prints one:
 *   C_TP — intra-node all-reduce bus bandwidth, Fig. 14a: "approximately
 *          50Gbps" on PCIe, "about 1000Gbps" on NVLink, "1500Gbps" on NVSwitch;
 *   C_PP, C_DP — inter-node: Table 3's NICs (one 100Gb CX5, shared by the
 *          machine on GeForce/Tesla; two on Tesla-NVL; one 400Gb CX7 per GPU
 *          on Hopper).
 * mu (GPU utilisation) is shown only as a figure (Fig. 11b); the values below
 * are plausible readings.  Any value exercises the formulas equally.
 */
typedef struct platform {
	const char *name;
	double F, mu, C_TP, C_PP, C_DP;
} platform;

static const platform GEFORCE = {"GeForce", 71e12, 0.45, 50e9 / 8, 100e9 / 8, 100e9 / 8};
static const platform TESLA = {"Tesla", 112e12, 0.50, 1000e9 / 8, 200e9 / 8, 200e9 / 8};
static const platform HOPPER = {"Hopper", 989e12, 0.55, 1500e9 / 8, 400e9 / 8, 400e9 / 8};

/*
 * Table 2 rows: N, l, heads, h, s, (t, p, d), batch size per replica, and
 * the micro-batch sizes to try: §6.2's optima (3, 2, 3 for 39B (4,4), 76B,
 * 145B), §6.3's (6, 3, 1 for 39B at (8,2), (4,4), (2,8)), and a spread of
 * divisors of the batch for the small models, whose micro-batch the paper
 * does not give.
 *
 * The second 1.5B row prints (0, 2, 2): a tensor-parallel degree of 0, which
 * no formula accepts (Eq. 8 divides by t).  We read it as "no tensor
 * parallelism", t = 1 (then Eq. 2's (t-1) makes T_TP = 0).
 */
typedef struct row {
	double N, l, heads, h, s, t, p, d, batch;
	const platform *plat;
	int mbs[6]; /* 0-terminated */
} row;

static const row TABLE2[] = {
    {1.5e9, 48, 16, 1600, 1024, 2, 4, 2, 256, &GEFORCE, {1, 2, 4, 8, 16, 0}},
    {1.5e9, 48, 16, 1600, 1024, 1, 2, 2, 256, &TESLA, {1, 2, 4, 8, 16, 0}},
    {3e9, 54, 20, 2000, 1024, 2, 4, 2, 256, &GEFORCE, {1, 2, 4, 8, 16, 0}},
    {3e9, 54, 20, 2000, 1024, 2, 2, 2, 256, &TESLA, {1, 2, 4, 8, 16, 0}},
    {39e9, 48, 64, 8192, 2048, 4, 4, 2, 48, &HOPPER, {3, 1, 2, 6, 0}},
    {39e9, 48, 64, 8192, 2048, 8, 2, 2, 48, &HOPPER, {6, 1, 3, 0}},
    {76e9, 60, 80, 10240, 2048, 4, 8, 2, 64, &HOPPER, {2, 1, 4, 0}},
    {145e9, 80, 96, 12288, 2048, 8, 8, 1, 96, &HOPPER, {3, 1, 2, 6, 0}},
};
#define NROWS (sizeof TABLE2 / sizeof TABLE2[0])

static pp_ct_input input_of(const row *r, double b)
{
	pp_ct_input in;
	memset(&in, 0, sizeof in);
	in.N = r->N;
	in.l = r->l;
	in.h = r->h;
	in.s = r->s;
	in.b = b;
	in.m = r->batch / b;
	in.t = r->t;
	in.p = r->p;
	in.d = r->d;
	in.mu = r->plat->mu;
	in.F = r->plat->F;
	in.C_TP = r->plat->C_TP;
	in.C_PP = r->plat->C_PP;
	in.C_DP = r->plat->C_DP;
	return in;
}

/* The printed equations, term by term (per iteration unless _mb). */
typedef struct hand {
	double flops_mb, T_comp, T_TP, T_PP, T_DP, T_bubble, T_iter, R_bubble;
	double comp_mb, tp_mb, pp_mb;
} hand;

static void by_hand(const pp_ct_input *x, hand *o)
{
	double N = x->N, l = x->l, h = x->h, s = x->s, b = x->b, m = x->m;
	double t = x->t, p = x->p, d = x->d;
	/* Eq. 8: FLOPs^mb = 8 x N/(p x t) x b x s */
	o->flops_mb = 8 * (N / (p * t)) * b * s;
	/* Eq. 9, right-hand form: 8 m N b s / (p t mu F) */
	o->T_comp = 8 * m * N * b * s / (p * t * x->mu * x->F);
	o->comp_mb = o->flops_mb / (x->mu * x->F);
	/* Eq. 2: T_TP = m x l/p x 6 x 2bsh x 2(t-1) / (t x C_TP) */
	o->tp_mb = (l / p) * (6 * (2 * b * s * h) * 2 * (t - 1)) / (t * x->C_TP);
	o->T_TP = m * o->tp_mb;
	/* Eq. 3: T_PP = m x 2 x 2bsh / C_PP */
	o->pp_mb = 2 * (2 * b * s * h) / x->C_PP;
	o->T_PP = m * o->pp_mb;
	/* Eq. 4: T_DP = 2N/(p t) x 2(d-1)/(d C_DP) */
	o->T_DP = (2 * N / (p * t)) * (2 * (d - 1)) / (d * x->C_DP);
	/* Eq. 5 */
	o->T_bubble = (p - 1) * (o->comp_mb + o->pp_mb + o->tp_mb);
	/* Eq. 1 */
	o->T_iter = o->T_comp + o->T_TP + o->T_PP + o->T_DP + o->T_bubble;
	/* Eq. 7 */
	o->R_bubble = (p - 1) / (p - 1 + m);
}

/* Eq. 1-9 on every Table 2 row and micro-batch size. */
static void test_configtuner_table2(void **state)
{
	(void)state;
	int checked = 0;
	for (size_t i = 0; i < NROWS; i++) {
		const row *r = &TABLE2[i];
		for (const int *b = r->mbs; *b; b++) {
			assert_true(fmod(r->batch, *b) == 0);
			pp_ct_input in = input_of(r, *b);
			pp_ct_result got;
			hand want;
			pp_configtuner(&in, &got);
			by_hand(&in, &want);
			assert_rel(got.flops_mb, want.flops_mb, REL);
			assert_rel(got.T_comp, want.T_comp, REL);
			assert_rel(got.T_TP, want.T_TP, REL);
			assert_rel(got.T_PP, want.T_PP, REL);
			assert_rel(got.T_DP, want.T_DP, REL);
			assert_rel(got.T_bubble, want.T_bubble, REL);
			assert_rel(got.T_iter, want.T_iter, REL);
			assert_rel(got.R_bubble, want.R_bubble, REL);
			assert_true(got.T_ATA == 0); /* dense: no e, no C_ATA */
			/* Eq. 6 equals Eq. 1:
			 * m (T_comp^mb + T_PP^mb + T_TP^mb) + T_bubble + T_DP. */
			double eq6 = in.m * (want.comp_mb + want.pp_mb + want.tp_mb) +
			             got.T_bubble + got.T_DP;
			assert_rel(eq6, got.T_iter, REL);
			/* Eq. 7's approximation drops T_DP: exactly,
			 * T_bubble / (T_iter - T_DP) = (p-1)/(p-1+m), so
			 * T_bubble / T_iter = R (1 - T_DP / T_iter) <= R. */
			assert_rel(got.T_bubble / (got.T_iter - got.T_DP), got.R_bubble, REL);
			assert_rel(got.T_bubble / got.T_iter,
			           got.R_bubble * (1 - got.T_DP / got.T_iter), REL);
			assert_true(got.T_bubble / got.T_iter <= got.R_bubble * (1 + REL));
			if (r->d == 1) /* 145B: no DP, the approximation is exact */
				assert_rel(got.T_bubble / got.T_iter, got.R_bubble, REL);
			checked++;
		}
	}
	assert_int_equal(checked, 34);
}

/* Hand numbers for one row, spelled out: 145B on Hopper, (8, 8, 1), batch 96,
 * b = 3 (§6.2's optimum), m = 32. */
static void test_configtuner_145b_digits(void **state)
{
	(void)state;
	pp_ct_input in = input_of(&TABLE2[7], 3);
	assert_true(in.m == 32);
	pp_ct_result o;
	pp_configtuner(&in, &o);
	/* 8 x 145e9/64 x 3 x 2048 = 1.11360e14 FLOPs per micro-batch */
	assert_rel(o.flops_mb, 111360e9, REL);
	/* x 32 / (0.55 x 989e12) */
	assert_rel(o.T_comp, 32 * 111360e9 / (0.55 * 989e12), REL);
	/* 80/8 x 6 x (2 x 3 x 2048 x 12288 = 150994944 bytes) x 2 x 7 / (8 x 187.5e9) */
	double tp_mb = 10.0 * 6 * 150994944.0 * 14 / (8 * 187.5e9);
	assert_rel(o.T_TP, 32 * tp_mb, REL);
	assert_rel(o.T_PP, 32 * 2 * 150994944.0 / 50e9, REL);
	assert_true(o.T_DP == 0); /* d = 1 */
	assert_rel(o.R_bubble, 7.0 / 39, REL);
	/* TP dominates the traffic (§3.1): per micro-batch, one GPU of a stage
	 * sends 10 layers x 6 all-reduces x 1.75 x 2bsh on TP against the 2 x 2bsh
	 * of its PP send and receive, 52.5 times as much. */
	double tp_bytes = 10.0 * 6 * 1.75 * 150994944.0, pp_bytes = 2 * 150994944.0;
	assert_rel(tp_bytes / pp_bytes, 52.5, REL);
	assert_rel(o.T_TP, o.T_PP / 2 * 50e9 / 187.5e9 * 1.75 * 60, REL);
}

/* Eq. 10: T_ATA = l/2 x 6 x 2 x 2gsh / (e C_ATA), MoE on every other layer. */
static void test_configtuner_alltoall(void **state)
{
	(void)state;
	/* An MoE-1.3B-like shape: 24 layers, h = 2048, s = 2048, global batch
	 * g = 256 (Table 1: g is the global batch size), e = 8, Hopper's NICs. */
	pp_ct_input in;
	memset(&in, 0, sizeof in);
	in.N = 1.3e9;
	in.l = 24;
	in.h = 2048;
	in.s = 2048;
	in.b = 4;
	in.m = 8;
	in.t = 1;
	in.p = 1;
	in.d = 8;
	in.mu = HOPPER.mu;
	in.F = HOPPER.F;
	in.C_TP = HOPPER.C_TP;
	in.C_PP = HOPPER.C_PP;
	in.C_DP = HOPPER.C_DP;
	in.g = 256;
	in.e = 8;
	in.C_ATA = 400e9 / 8;
	pp_ct_result o;
	pp_configtuner(&in, &o);
	double want = (24.0 / 2) * (6 * 2 * (2 * 256.0 * 2048 * 2048)) / (8 * 50e9);
	assert_rel(o.T_ATA, want, REL);
	/* Doubling experts halves the per-pair volume. */
	in.e = 16;
	pp_ct_result o2;
	pp_configtuner(&in, &o2);
	assert_rel(o2.T_ATA, want / 2, REL);
	/* A single stage: no bubble, R = 0. */
	assert_true(o.T_bubble == 0 && o.R_bubble == 0);
}

/* ------------------------------------------------------------- seed 001 */

/* Eq. 1 as printed: (n_mb-1)(C+T_TP) + pp(C+T_TP) + (pp-1) T_DP + T_DP. */
static double amp_by_hand(double C, double Ttp, double Tpp, double Tdp, double n, double pp)
{
	(void)Tpp;
	return (n - 1) * (C + Ttp) + pp * (C + Ttp) + (pp - 1) * Tdp + Tdp;
}

/* Eq. 3-4: T_bubble (n_mb/pp) + T_straggler + T_DP with
 * T_bubble = pp(C+T_TP) + (pp-1)T_PP, T_straggler = (pp-1)(C+T_TP). */
static double pipette_by_hand(double C, double Ttp, double Tpp, double Tdp, double n, double pp)
{
	double bubble = pp * (C + Ttp) + (pp - 1) * Tpp;
	double straggler = (pp - 1) * (C + Ttp);
	return bubble * (n / pp) + straggler + Tdp;
}

/* Both models on the Table 2 rows, with C from Eq. 8-9 (per micro-batch),
 * T_TP, T_PP per micro-batch from Eq. 2-3 and T_DP from Eq. 4. */
static void test_amp_pipette_table2(void **state)
{
	(void)state;
	int pipette_higher = 0, amp_higher = 0;
	for (size_t i = 0; i < NROWS; i++) {
		const row *r = &TABLE2[i];
		for (const int *b = r->mbs; *b; b++) {
			pp_ct_input in = input_of(r, *b);
			hand x;
			by_hand(&in, &x);
			double C = x.flops_mb / (in.mu * in.F);
			assert_rel(C, x.comp_mb, REL);
			double n = in.m, pp = in.p;
			double amp = pp_amp_latency(C, x.tp_mb, x.pp_mb, x.T_DP, n, pp);
			double pip = pp_pipette_latency(C, x.tp_mb, x.pp_mb, x.T_DP, n, pp);
			assert_rel(amp, amp_by_hand(C, x.tp_mb, x.pp_mb, x.T_DP, n, pp), REL);
			assert_rel(pip, pipette_by_hand(C, x.tp_mb, x.pp_mb, x.T_DP, n, pp), REL);
			/* The difference, from the two equations:
			 * Pipette - AMP = (pp-1) (n_mb/pp T_PP - T_DP). */
			double diff = (pp - 1) * (n / pp * x.pp_mb - x.T_DP);
			assert_true(fabs((pip - amp) - diff) <= 1e-9 * amp);
			/* As printed, the sign is that of n_mb T_PP - pp T_DP. */
			if (n * x.pp_mb > pp * x.T_DP) {
				assert_true(pip > amp);
				pipette_higher++;
			} else {
				assert_true(pip < amp);
				amp_higher++;
			}
			if (r->d == 1)
				assert_true(pip > amp);
			/* AMP read as its prose says, (pp-1) T_PP for the bubble's
			 * communication: Pipette is higher by (pp-1)(n_mb/pp - 1) T_PP,
			 * positive on every row since n_mb > pp on all of them. */
			double amp_prose = (n - 1) * (C + x.tp_mb) + pp * (C + x.tp_mb) +
			                   (pp - 1) * x.pp_mb + x.T_DP;
			assert_true(n > pp);
			assert_true(fabs((pip - amp_prose) - (pp - 1) * (n / pp - 1) * x.pp_mb) <=
			            1e-9 * amp_prose);
			assert_true(pip > amp_prose);
			/* AMP with no DP is ConfigTuner's Eq. 1 without the PP sends:
			 * T_iter = AMP(T_DP=0) + (m+p-1) T_PP^mb + T_DP. */
			pp_ct_result ct;
			pp_configtuner(&in, &ct);
			double amp0 = pp_amp_latency(C, x.tp_mb, x.pp_mb, 0, n, pp);
			assert_rel(ct.T_iter, amp0 + (n + pp - 1) * x.pp_mb + x.T_DP, REL);
		}
	}
	/* As printed, AMP charges T_DP pp times, which outweighs the hidden
	 * paths' n_mb/pp (pp-1) T_PP on the rows with d = 2 except the 1.5B on
	 * GeForce (n_mb T_PP = 0.134 s > pp T_DP = 0.12 s); on the 145B row
	 * (d = 1) Pipette is the larger.  n_mb T_PP does not depend on b (m b is
	 * the batch), so each row is one way for all its micro-batch sizes. */
	assert_int_equal(pipette_higher, 9);
	assert_int_equal(amp_higher, 25);
}

/*
 * Seed 001 Eq. 1 as printed has (pp-1) T_DP as its third term although the
 * prose calls it "the pipeline bubble ... communication time"; paraplan
 * reproduces the equation as printed: T_PP does not enter AMP's latency and
 * T_DP enters pp times.
 */
static void test_amp_as_printed(void **state)
{
	(void)state;
	double C = 0.12, Ttp = 0.03, Tdp = 0.5, n = 16, pp = 4;
	double a = pp_amp_latency(C, Ttp, 0.0, Tdp, n, pp);
	assert_true(pp_amp_latency(C, Ttp, 7.0, Tdp, n, pp) == a); /* T_PP ignored */
	assert_true(pp_amp_latency(C, Ttp, 1e9, Tdp, n, pp) == a);
	assert_rel(pp_amp_latency(C, Ttp, 0.0, Tdp + 1, n, pp) - a, pp, 1e-12); /* pp x T_DP */
	assert_rel(a, 15 * 0.15 + 4 * 0.15 + 3 * 0.5 + 0.5, REL);
	/* The prose reading, (pp-1) T_PP as the third term, is not what it computes
	 * unless T_PP == T_DP. */
	double Tpp = 0.2;
	double prose = (n - 1) * (C + Ttp) + pp * (C + Ttp) + (pp - 1) * Tpp + Tdp;
	assert_true(fabs(pp_amp_latency(C, Ttp, Tpp, Tdp, n, pp) - prose) > 0.1);
	assert_rel(pp_amp_latency(C, Ttp, Tpp, Tpp, n, pp),
	           (n - 1) * (C + Ttp) + pp * (C + Ttp) + (pp - 1) * Tpp + Tpp, REL);
}

/*
 * The paper's claim: the 1F1B schedule has a hidden critical path that occurs
 * (n_mb/pp - 1) times, which AMP's model misses.  What holds, from the
 * equations: Pipette - AMP = (pp-1) (n_mb/pp T_PP - T_DP).
 *  - With AMP read as its prose says (third term (pp-1) T_PP), equivalently
 *    with T_PP == T_DP in the printed form, the difference is
 *    (pp-1)(n_mb/pp - 1) T_PP: Pipette exceeds AMP exactly when n_mb > pp,
 *    equals it at n_mb == pp, and is below it when n_mb < pp.
 *  - As printed, Pipette exceeds AMP iff n_mb T_PP > pp T_DP (and pp > 1): with
 *    T_DP = 0 that is any n_mb >= 1, not only n_mb > pp.
 */
static void test_hidden_critical_path(void **state)
{
	(void)state;
	const double C = 0.08, Ttp = 0.02;
	const int pps[] = {2, 3, 4, 8, 16};
	for (size_t k = 0; k < sizeof pps / sizeof pps[0]; k++) {
		double pp = pps[k];
		for (double n = 1; n <= 64; n++) {
			for (double Tpp = 0.001; Tpp < 1; Tpp *= 7) {
				double amp = pp_amp_latency(C, Ttp, Tpp, Tpp, n, pp);
				double pip = pp_pipette_latency(C, Ttp, Tpp, Tpp, n, pp);
				double want = (pp - 1) * (n / pp - 1) * Tpp;
				assert_true(fabs((pip - amp) - want) <= 1e-12 * amp);
				if (n > pp)
					assert_true(pip > amp);
				else if (n < pp)
					assert_true(pip < amp);
				/* n == pp: equal up to rounding (checked by `want` above) */

				/* As printed, with T_DP = 0: Pipette > AMP for every n_mb. */
				double amp0 = pp_amp_latency(C, Ttp, Tpp, 0, n, pp);
				double pip0 = pp_pipette_latency(C, Ttp, Tpp, 0, n, pp);
				assert_true(pip0 > amp0);
				/* ... and with a large T_DP, AMP's pp x T_DP exceeds it. */
				double Tdp = 2 * n / pp * Tpp;
				assert_true(pp_pipette_latency(C, Ttp, Tpp, Tdp, n, pp) <
				            pp_amp_latency(C, Ttp, Tpp, Tdp, n, pp));
			}
		}
	}
	/* One stage: no bubble, no hidden path; both are n_mb (C+T_TP) + T_DP. */
	assert_rel(pp_amp_latency(C, Ttp, 0.3, 0.4, 10, 1), 10 * (C + Ttp) + 0.4, REL);
	assert_rel(pp_pipette_latency(C, Ttp, 0.3, 0.4, 10, 1), 10 * (C + Ttp) + 0.4, REL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_configtuner_table2),
	    cmocka_unit_test(test_configtuner_145b_digits),
	    cmocka_unit_test(test_configtuner_alltoall),
	    cmocka_unit_test(test_amp_pipette_table2),
	    cmocka_unit_test(test_amp_as_printed),
	    cmocka_unit_test(test_hidden_critical_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
