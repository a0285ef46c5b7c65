/*
 * place: rank order parsing, the rank -> GPU map and group layouts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "paraplan/place.h"
#include "paraplan/spec.h"

static void plan_of(pp_plan *p, int tp, int cp, int dp, int pp, const char *order)
{
	pp_plan_init(p);
	p->tp = tp;
	p->cp = cp;
	p->dp = dp;
	p->pp = pp;
	p->etp = tp;
	snprintf(p->order, sizeof p->order, "%s", order);
}

/* Megatron's default order: tp innermost, then cp, dp, pp. */
static void test_strides_default_order(void **state)
{
	(void)state;
	pp_system s;
	assert_int_equal(pp_system_preset("dgx-h100", &s, NULL), PP_OK);
	pp_plan p;
	plan_of(&p, 8, 2, 4, 16, "tp-cp-ep-dp-pp");
	pp_placement pl;
	pp_place_build(&p, &s, &pl);
	assert_int_equal(pl.ranks, 8 * 2 * 4 * 16);
	assert_int_equal(pl.stride[PP_DIM_TP], 1);
	assert_int_equal(pl.stride[PP_DIM_CP], 8);
	assert_int_equal(pl.stride[PP_DIM_DP], 16);
	assert_int_equal(pl.stride[PP_DIM_PP], 64);
	assert_int_equal(pl.group[PP_GROUP_TP].per_domain, 8);
	assert_int_equal(pl.group[PP_GROUP_CP].per_domain, 1);
	assert_int_equal(pl.group[PP_GROUP_DP].size, 8); /* dp x cp */
	assert_int_equal(pl.group[PP_GROUP_PP].per_domain, 1);
	pp_gpu_loc loc;
	pp_place_locate(&pl, 77, &loc);
	assert_int_equal(loc.node, 77 / 8);
	assert_int_equal(loc.local, 77 % 8);
}

/* coords and rank are inverses over every rank. */
static void test_coords_roundtrip(void **state)
{
	(void)state;
	pp_system s;
	assert_int_equal(pp_system_preset("dgx-a100-80g", &s, NULL), PP_OK);
	const char *orders[] = {"tp-cp-ep-dp-pp", "tp-pp-cp-ep-dp", "dp-tp-pp-cp", "pp-dp-cp-tp"};
	for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
		pp_plan p;
		plan_of(&p, 4, 2, 3, 5, orders[o]);
		pp_placement pl;
		pp_place_build(&p, &s, &pl);
		for (long long r = 0; r < pl.ranks; r++) {
			int c[PP_NDIMS];
			pp_place_coords(&pl, r, c);
			assert_int_equal(pp_place_rank(&pl, c), r);
		}
	}
}

/* Walking a group's members on the default map gives the closed-form layout
 * for power-of-two degrees and domains, from every rank. */
static void test_walk_equals_closed_form(void **state)
{
	(void)state;
	const int domains[] = {4, 8, 72};
	const char *orders[] = {"tp-cp-ep-dp-pp", "tp-pp-cp-ep-dp", "dp-tp-pp-cp", "cp-dp-pp-tp"};
	const int degs[] = {1, 2, 4, 8};
	long long checked = 0;
	for (size_t di = 0; di < 3; di++) {
		pp_system s;
		assert_int_equal(pp_system_preset("dgx-h100", &s, NULL), PP_OK);
		s.nvlink_domain = domains[di];
		for (size_t o = 0; o < 4; o++)
			for (int a = 0; a < 4; a++)
				for (int b = 0; b < 4; b++) {
					pp_plan p;
					plan_of(&p, degs[a], 1, degs[b], degs[3 - a], orders[o]);
					pp_placement pl;
					pp_place_build(&p, &s, &pl);
					const struct {
						pp_dim d;
						pp_group g;
					} pairs[] = {{PP_DIM_TP, PP_GROUP_TP},
					             {PP_DIM_PP, PP_GROUP_PP}};
					for (size_t k = 0; k < 2; k++) {
						/* A domain of 72 is not a multiple of the
						 * strides: ranks near its edge see fewer
						 * peers; check rank 0 there. */
						long long last = domains[di] == 72 ? 1 : pl.ranks;
						for (long long r = 0; r < last; r++) {
							pp_layout w = pp_place_layout_walk(
							    &pl, pairs[k].d, r);
							assert_int_equal(w.size,
							                 pl.group[pairs[k].g].size);
							assert_int_equal(
							    w.per_domain,
							    pl.group[pairs[k].g].per_domain);
							checked++;
						}
					}
				}
	}
	assert_true(checked > 1000);
}

/* A permutation moves a group across domains and the walk sees it. */
static void test_permutation(void **state)
{
	(void)state;
	pp_system s;
	assert_int_equal(pp_system_preset("dgx-h100", &s, NULL), PP_OK);
	pp_plan p;
	plan_of(&p, 8, 1, 2, 1, "tp-cp-ep-dp-pp");
	pp_placement pl;
	pp_place_build(&p, &s, &pl);
	/* Interleave the two TP groups over the two nodes: rank r on GPU
	 * (r % 2) * 8 + r / 2. */
	long long map[16];
	for (int r = 0; r < 16; r++)
		map[r] = (r % 2) * 8 + r / 2;
	pl.rank_gpu = map;
	pp_layout w = pp_place_layout_walk(&pl, PP_DIM_TP, 0);
	assert_int_equal(w.size, 8);
	assert_int_equal(w.per_domain, 4);
	/* ... and its DP partner, rank 8, lands on GPU 4: the same domain. */
	w = pp_place_layout_walk(&pl, PP_DIM_DP, 0);
	assert_int_equal(w.per_domain, 2);
}

/* Seed 003 S3.2's (2,2,2) factorisation of an 8-GPU NVLink domain over TP x
 * DP x PP, written as a split order: two of each group's GPUs share a
 * domain, the GPU map is a permutation, the walk agrees. */
static void test_split_222(void **state)
{
	(void)state;
	pp_system s;
	assert_int_equal(pp_system_preset("lbnl-a100", &s, NULL), PP_OK);
	assert_int_equal(s.nvlink_domain, 8);
	pp_plan p;
	plan_of(&p, 2, 1, 64, 8, "tp-dp:2-pp:2-cp-dp-pp");
	pp_placement pl;
	pp_place_build(&p, &s, &pl);
	assert_true(pl.split);
	assert_int_equal(pl.group[PP_GROUP_TP].per_domain, 2);
	assert_int_equal(pl.group[PP_GROUP_DP].per_domain, 2);
	assert_int_equal(pl.group[PP_GROUP_DP].size, 64);
	assert_int_equal(pl.group[PP_GROUP_PP].per_domain, 2);
	assert_int_equal(pl.group[PP_GROUP_PP].size, 8);
	/* ranks keep the plain order tp-dp-pp ... */
	assert_int_equal(pl.stride[PP_DIM_DP], 2);
	assert_int_equal(pl.stride[PP_DIM_PP], 128);
	/* ... and run on the GPUs the tokens number: stage 1 of replica 0 sits
	 * next to its tp pair and dp partner, on GPU 4 */
	pp_gpu_loc loc;
	pp_place_locate(&pl, 128, &loc);
	assert_int_equal(loc.gpu, 4);
	pp_place_locate(&pl, 2, &loc); /* dp 1 */
	assert_int_equal(loc.gpu, 2);
	pp_place_locate(&pl, 4, &loc); /* dp 2: the rest of dp, past pp's 2 */
	assert_int_equal(loc.gpu, 8);
	/* the plain order fills the domain with tp and dp */
	plan_of(&p, 2, 1, 64, 8, "tp-cp-dp-pp");
	pp_placement plain;
	pp_place_build(&p, &s, &plain);
	assert_false(plain.split);
	assert_int_equal(plain.group[PP_GROUP_DP].per_domain, 4);
	assert_int_equal(plain.group[PP_GROUP_PP].per_domain, 1);
}

/* Split orders: coordinates and ranks stay inverses, the GPU map is a
 * permutation, and every single-dimension group's walked layout equals the
 * closed form, from every rank. */
static void test_split_walk_equals_closed_form(void **state)
{
	(void)state;
	const char *orders[] = {"tp-dp:2-pp:2-cp-dp-pp", "tp:2-cp-dp:4-tp-pp-dp",
	                        "pp:2-tp-cp:2-dp-cp-pp", "cp-dp:2-tp:2-pp:4-dp-tp-pp"};
	const int domains[] = {4, 8, 16};
	long long checked = 0;
	for (size_t di = 0; di < 3; di++) {
		pp_system s;
		assert_int_equal(pp_system_preset("dgx-h100", &s, NULL), PP_OK);
		s.nvlink_domain = domains[di];
		for (size_t o = 0; o < 4; o++) {
			pp_plan p;
			plan_of(&p, 4, 2, 8, 8, orders[o]);
			pp_placement pl;
			pp_place_build(&p, &s, &pl);
			assert_true(pl.split);
			static char used[4 * 2 * 8 * 8];
			memset(used, 0, sizeof used);
			const struct {
				pp_dim d;
				pp_group g;
			} pairs[] = {{PP_DIM_TP, PP_GROUP_TP},
			             {PP_DIM_CP, PP_GROUP_CP},
			             {PP_DIM_PP, PP_GROUP_PP}};
			for (long long r = 0; r < pl.ranks; r++) {
				int c[PP_NDIMS];
				pp_place_coords(&pl, r, c);
				assert_int_equal(pp_place_rank(&pl, c), r);
				pp_gpu_loc loc;
				pp_place_locate(&pl, r, &loc);
				assert_in_range(loc.gpu, 0, pl.ranks - 1);
				assert_int_equal(used[loc.gpu], 0);
				used[loc.gpu] = 1;
				for (size_t k = 0; k < 3; k++) {
					pp_layout w = pp_place_layout_walk(&pl, pairs[k].d, r);
					assert_int_equal(w.size, pl.group[pairs[k].g].size);
					assert_int_equal(w.per_domain,
					                 pl.group[pairs[k].g].per_domain);
					checked++;
				}
			}
		}
	}
	assert_true(checked > 5000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strides_default_order),
	    cmocka_unit_test(test_coords_roundtrip),
	    cmocka_unit_test(test_walk_equals_closed_form),
	    cmocka_unit_test(test_permutation),
	    cmocka_unit_test(test_split_222),
	    cmocka_unit_test(test_split_walk_equals_closed_form),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
