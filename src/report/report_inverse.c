/*
 * The inverse questions as text and JSON (include/paraplan/inverse.h).
 */
#include <jansson.h>
#include <string.h>

#include "paraplan/inverse.h"
#include "report_int.h"
#include "util/util.h"

static const char *verdict(const pp_inverse_query *q, const pp_inverse_candidate *c)
{
	if (!c->ok)
		return "no plan";
	if (!c->fits)
		return "does not fit";
	if (q->deadline_days > 0 && c->days > q->deadline_days)
		return "misses the deadline";
	if (q->budget_usd > 0 && c->usd > q->budget_usd)
		return "over budget";
	return "meets";
}

/* One sentence: why the next better candidate is not the answer. */
static void binds_text(const pp_inverse_query *q, const pp_inverse_candidate *c,
                       const pp_inverse_result *r, const char *axis, FILE *out)
{
	const pp_inverse_candidate *x = r->next >= 0 ? &c[r->next] : NULL;
	char who[96] = "";
	if (x && strcmp(axis, "gpus") != 0)
		snprintf(who, sizeof who, "%s %lld, %lld GPUs", axis, x->value, x->gpus);
	else if (x)
		snprintf(who, sizeof who, "%lld GPUs", x->gpus);
	switch (r->binds) {
	case PP_BIND_DEADLINE:
		fprintf(out, "binds    the deadline: %s: %.2f days > %.4g\n", who, x->days,
		        q->deadline_days);
		break;
	case PP_BIND_BUDGET:
		fprintf(out, "binds    the budget: %s (%.2f days): %.0f USD > %.0f\n", who, x->days,
		        x->usd, q->budget_usd);
		break;
	case PP_BIND_MEMORY:
		fprintf(out, "binds    memory: %s: %s\n", who,
		        x->ok ? "the plan does not fit" : "no plan that fits");
		break;
	case PP_BIND_RANGE:
		fprintf(out, "binds    the range: no candidate with fewer GPUs was given\n");
		break;
	case PP_BIND_NONE:
		fprintf(out, "binds    nothing: the fastest candidate is within the budget\n");
		break;
	}
}

int pp_report_inverse_text(const pp_inverse_query *q, const pp_inverse_candidate *c, size_t n,
                           const pp_inverse_result *r, const char *axis, FILE *out)
{
	fprintf(out, "inverse: ");
	if (q->deadline_days > 0)
		fprintf(out, "the fewest GPUs that train %.4g tokens within %.4g days",
		        q->train_tokens, q->deadline_days);
	else
		fprintf(out, "the fastest plan that trains %.4g tokens", q->train_tokens);
	if (q->budget_usd > 0)
		fprintf(out, "%s %.0f USD", q->deadline_days > 0 ? " and" : " within",
		        q->budget_usd);
	fprintf(out, "%s\n", q->goodput ? " (days and costs under failures: goodput)" : "");
	bool by_gpus = strcmp(axis, "gpus") == 0; /* one column, not two alike */
	if (by_gpus)
		fprintf(out, "  %7s %10s %14s\n", "gpus", "days", "rent USD");
	else
		fprintf(out, "  %8s %7s %10s %14s\n", axis, "gpus", "days", "rent USD");
	for (size_t i = 0; i < n; i++) {
		const pp_inverse_candidate *k = &c[i];
		if (!by_gpus)
			fprintf(out, "  %8lld", k->value);
		if (k->ok && k->fits)
			fprintf(out, "  %7lld %10.2f %14.0f  %s%s\n", k->gpus, k->days, k->usd,
			        verdict(q, k), r->pick == (ptrdiff_t)i ? "  <- answer" : "");
		else
			fprintf(out, "  %7lld %10s %14s  %s\n", k->gpus, "-", "-", verdict(q, k));
	}
	if (r->pick >= 0) {
		const pp_inverse_candidate *p = &c[r->pick];
		const pp_plan *pl = &p->plan;
		fprintf(out, "answer   ");
		if (!by_gpus)
			fprintf(out, "%s %lld, ", axis, p->value);
		fprintf(out,
		        "%lld GPUs, tp %d pp %d dp %d cp %d ep %d mbs %d: %.2f days, %.0f USD\n",
		        p->gpus, pl->tp, pl->pp, pl->dp, pl->cp, pl->ep, pl->mbs, p->days, p->usd);
		binds_text(q, c, r, axis, out);
	} else {
		fprintf(out, "answer   none: ");
		if (r->binds == PP_BIND_MEMORY)
			fprintf(out, "no candidate fits in memory\n");
		else
			fprintf(out,
			        "%s; the fastest takes %.2f days (%.0f USD), the cheapest costs "
			        "%.0f USD (%.2f days)\n",
			        r->binds == PP_BIND_DEADLINE
			            ? "no candidate meets the deadline"
			            : "no candidate within the deadline is "
			              "within the budget",
			        c[r->fastest].days, c[r->fastest].usd, c[r->cheapest].usd,
			        c[r->cheapest].days);
		fprintf(out, "binds    %s\n", pp_inverse_bind_name(r->binds));
	}
	return ferror(out) ? -1 : 0;
}

int pp_report_inverse_json(const pp_inverse_query *q, const pp_inverse_candidate *c, size_t n,
                           const pp_inverse_result *r, const char *axis, FILE *out)
{
	long long mark = ppi_alloc_failed();
	json_t *cands = json_array();
	for (size_t i = 0; i < n; i++) {
		const pp_inverse_candidate *k = &c[i];
		json_t *o = json_pack("{s:I,s:I,s:b,s:b,s:s}", axis, (json_int_t)k->value, "gpus",
		                      (json_int_t)k->gpus, "ok", k->ok, "fits", k->fits, "verdict",
		                      verdict(q, k));
		if (k->ok && k->fits) {
			json_object_set_new(o, "days", json_real(k->days));
			json_object_set_new(o, "rent_usd", json_real(k->usd));
		}
		json_array_append_new(cands, o);
	}
	json_t *answer = json_null();
	if (r->pick >= 0) {
		const pp_inverse_candidate *p = &c[r->pick];
		answer =
		    json_pack("{s:I,s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:f}", axis,
		              (json_int_t)p->value, "gpus", (json_int_t)p->gpus, "tp", p->plan.tp,
		              "pp", p->plan.pp, "dp", p->plan.dp, "cp", p->plan.cp, "ep",
		              p->plan.ep, "mbs", p->plan.mbs, "days", p->days, "rent_usd", p->usd);
	}
	json_t *root = json_pack("{s:f,s:f,s:f,s:b,s:o,s:s,s:o}", "deadline_days", q->deadline_days,
	                         "budget_usd", q->budget_usd, "train_tokens", q->train_tokens,
	                         "goodput", q->goodput, "answer", answer, "binds",
	                         pp_inverse_bind_name(r->binds), "candidates", cands);
	if (r->next >= 0 && root) /* the candidate the binding constraint rules out */
		json_object_set_new(root, "next_gpus", json_integer((json_int_t)c[r->next].gpus));
	return ppi_report_dump(root, mark, out);
}
