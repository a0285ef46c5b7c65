/*
 * DHelix's pairing plan of a layer as a text table (estimate --pairing on):
 * the first layer of each kind on stage 0, paired again (seed 002, Eq. 2)
 * under the overlap table of the estimate's system.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "paraplan/dhelix.h"
#include "paraplan/report.h"
#include "util/util.h"

/* Row `q` of a plan step's segment of `n` operators from `first` of `q`:
 * "name (kind ms)", "-" on the first row of a strand with no segment, ""
 * past the segment's end. */
static void pairing_cell(char *buf, size_t size, const pp_dh_seq *seq, int first, int n, int q)
{
	if (q < n)
		snprintf(buf, size, "%s (%s %.3f)", seq->s[first + q].name,
		         pp_dh_kind_name(seq->s[first + q].kind), seq->s[first + q].seconds * 1e3);
	else
		snprintf(buf, size, "%s", q == 0 ? "-" : "");
}

/* The pairing of layer `i` (kind `k`: 1 MoE, 0 dense) under table `o`: its
 * header and one line per operator of each step. */
static void pairing_table(const pp_dh_overlap *o, const pp_dh_layer *l, const pp_dh_result *r,
                          int i, int k, FILE *f)
{
	char router[64] = "";
	if (r->fwd_candidates > 1)
		snprintf(router, sizeof router, ", x %d placements of the router",
		         r->fwd_candidates);
	fprintf(f,
	        "\nDHelix pairing, layer %d (%s), overlap table %s:\n"
	        "  forward %d operators %.3f ms, backward %d operators %.3f ms (best of %d "
	        "orders of the weight gradients%s)\n"
	        "  segments of up to %d operators each, a barrier after each step\n"
	        "  SI block %.3f ms: s = (T_f + T_b) / T_SI = %.3f\n",
	        i, k ? "MoE" : "dense", o->name, l->fwd.n, r->t_f * 1e3, l->bwd.n, r->t_b * 1e3,
	        r->candidates, router, PP_DH_SEG_OPS, r->t_si * 1e3, r->speedup);
	fprintf(f, "  %-4s %-31s %-31s %9s\n", "step", "forward", "backward", "ms");
	/* a segment of several operators: one line per operator, the step's
	 * number and time on its first */
	for (int k2 = 0; k2 < r->plan.nsteps; k2++) {
		const pp_dh_step *p = &r->plan.step[k2];
		int rows = p->nf > p->nb ? p->nf : p->nb;
		for (int q = 0; q < rows; q++) {
			char a[64], b[64], n[16] = "", t[16] = "";
			pairing_cell(a, sizeof a, &r->fwd, p->f, p->nf, q);
			pairing_cell(b, sizeof b, &r->bwd, p->b, p->nb, q);
			if (q == 0) {
				snprintf(n, sizeof n, "%d", k2 + 1);
				snprintf(t, sizeof t, "%9.3f", p->seconds * 1e3);
			}
			char line[160];
			int len = snprintf(line, sizeof line, "  %-4s %-31s %-31s %9s", n, a, b, t);
			while (len > 0 && line[len - 1] == ' ')
				line[--len] = '\0';
			fprintf(f, "%s\n", line);
		}
	}
}

pp_status pp_report_pairing_text(const pp_estimate *e, FILE *out, pp_error *err)
{
	pp_dh_overlap o;
	pp_status st = pp_dh_overlap_of_system(&e->system, e->plan.tp, &o, err);
	pp_work *ws = ppi_malloc(sizeof *ws);
	pp_dh_layer *l = ppi_malloc(sizeof *l);
	pp_dh_result *r = ppi_malloc(sizeof *r);
	if (!ws || !l || !r) {
		free(ws);
		free(l);
		free(r);
		return ppi_oom(err);
	}
	pp_work_init(ws);
	bool done[2] = {false, false};
	for (int i = 0; !st && i < e->model.num_layers; i++) {
		int k = pp_model_layer_is_moe(&e->model, i) ? 1 : 0;
		if (done[k])
			continue;
		done[k] = true;
		st = pp_dh_layer_build(&e->model, &e->system, &e->job, &e->plan, i, ws, l, err);
		if (st)
			break;
		pp_dh_layer_pair(&o, l, r);
		pairing_table(&o, l, r, i, k, out);
	}
	free(ws);
	free(l);
	free(r);
	return st;
}
