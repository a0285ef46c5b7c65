/*
 * calibrate --cross-validate source rendered (text and JSON): per record the
 * in-sample and held-out errors and how the held-out prediction was made, the
 * fits (parameters at a bound of their physical range flagged), and the mean
 * absolute percentage error per source, GPU, stack, dense/MoE and scale.
 * The computation is calib's (pp_calib_cross_validate).
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "format_int.h"
#include "paraplan/params.h"

static json_t *mape_json(double sum, size_t n)
{
	return n ? json_real(sum / n) : json_null();
}

static void print_mape(FILE *f, double sum, size_t n)
{
	if (n)
		fprintf(f, "%6.1f%% %4zu", 100 * sum / n, n);
	else
		fprintf(f, "%7s %4s", "-", "0");
}

static void print_groups_text(FILE *f, const pp_cv_result *res)
{
	fprintf(f, "\nMAPE (records)          %-50s %12s %18s\n", "", "in-sample",
	        "leave-source-out");
	for (int d = 0; d < PP_CV_DIMS; d++) {
		const pp_cv_group *g = res->groups[d];
		fprintf(f, "by %s:\n", pp_cv_dim_name(d));
		for (size_t k = 0; k < res->ngroups[d]; k++) {
			fprintf(f, "  %-72.72s ", g[k].key);
			print_mape(f, g[k].sum_in, g[k].n_in);
			fprintf(f, "      ");
			print_mape(f, g[k].sum_out, g[k].n_out);
			fputc('\n', f);
		}
	}
	const pp_cv_group *a = &res->all;
	fprintf(f,
	        "\nall: in-sample MAPE %.1f%% over %zu records; leave-one-source-out MAPE "
	        "%.1f%% over %zu records",
	        a->n_in ? 100 * a->sum_in / a->n_in : 0.0, a->n_in,
	        a->n_out ? 100 * a->sum_out / a->n_out : 0.0, a->n_out);
	if (res->not_predicted)
		fprintf(f, "; %zu not predicted out of sample (listed above with the reason)",
		        res->not_predicted);
	fputc('\n', f);
}

static int cv_text(const pp_cv_report *cv, FILE *f)
{
	const char *data = cv->data;
	const pp_cv_result *res = cv->result;
	size_t nrows = res->nrecords, nskips = res->nskips;
	fprintf(f,
	        "paraplan calibrate --cross-validate source: %zu records from %s: %zu fitted, "
	        "%zu skipped\n\n",
	        nrows + nskips, data, nrows, nskips);
	if (nskips) {
		fprintf(f, "skipped:\n");
		for (size_t i = 0; i < nskips; i++)
			fprintf(f, "  %-52s %s\n", res->skips[i].id, res->skips[i].reason);
		fputc('\n', f);
	}
	fprintf(f, "in-sample fit per GPU (bounds are the physical ranges of 'paraplan list "
	           "params'):\n");
	for (int i = 0; i < res->nfits; i++) {
		const pp_cv_fit *c = &res->fits[i];
		fprintf(f, "  %-10s %3zu records  in-sample MAPE %5.1f%%", c->gpu, c->records,
		        100 * c->mape_in_sample);
		if (c->at_bound_n == 0) {
			fprintf(f, "  no fitted parameter at a bound\n");
			continue;
		}
		fprintf(f, "  AT BOUND:");
		for (size_t k = 0; k < c->at_bound_n && k < PP_CV_BOUND_MAX; k++)
			fprintf(f, " %s=%.3g", c->at_bound[k]->key, c->at_bound_v[k]);
		fputc('\n', f);
	}
	fprintf(f, "\n%-52s %-10s %-16s %9s %9s  %s\n", "id", "gpu", "stack", "in-sample",
	        "held-out", "held-out prediction");
	for (size_t i = 0; i < nrows; i++) {
		const pp_cv_record *r = &res->records[i];
		fprintf(f, "%-52s %-10s %-16s ", r->id, r->gpu, r->stack);
		if (isfinite(r->error_in_sample))
			fprintf(f, "%+8.1f%% ", 100 * r->error_in_sample);
		else
			fprintf(f, "%9s ", "-");
		if (isfinite(r->error_held_out))
			fprintf(f, "%+8.1f%% ", 100 * r->error_held_out);
		else
			fprintf(f, "%9s ", "-");
		fprintf(f, " %s\n", r->held_out);
	}
	print_groups_text(f, res);
	return ferror(f) ? -1 : 0;
}

static json_t *fits_json(const pp_cv_result *res)
{
	json_t *jf = json_array();
	for (int i = 0; i < res->nfits; i++) {
		const pp_cv_fit *c = &res->fits[i];
		json_t *o = json_object();
		json_object_set_new(o, "gpu", json_string(c->gpu));
		json_object_set_new(o, "records", json_integer((json_int_t)c->records));
		json_object_set_new(o, "mape_in_sample", json_real(c->mape_in_sample));
		json_t *params = json_object();
		size_t np = c->nshared;
		size_t j = 0;
		for (size_t r = 0; r < pp_param_registry_size() && j < np; r++) {
			const pp_param *p = pp_param_at(r);
			if (!p->fitted)
				continue;
			json_object_set_new(params, p->key, json_real(c->params[j++]));
		}
		json_object_set_new(o, "parameters", params);
		/* the NIC efficiencies fitted per system (pp_fit_networks) */
		json_t *nets = json_object();
		for (size_t k = c->nshared; k < c->nparams && k - c->nshared < PP_FIT_NETS_MAX; k++)
			json_object_set_new(nets, c->nets[k - c->nshared],
			                    json_pack("{s:f}", "nic_eff", c->params[k]));
		json_object_set_new(o, "networks", nets);
		json_t *ab = json_array();
		for (size_t k = 0; k < c->at_bound_n && k < PP_CV_BOUND_MAX; k++)
			json_array_append_new(ab, json_string(c->at_bound[k]->key));
		json_object_set_new(o, "at_bound", ab);
		json_array_append_new(jf, o);
	}
	return jf;
}

static json_t *records_json(const pp_cv_result *res)
{
	json_t *jr = json_array();
	for (size_t i = 0; i < res->nrecords; i++) {
		const pp_cv_record *r = &res->records[i];
		json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "id", r->id, "source", r->source,
		                      "gpu", r->gpu, "stack", r->stack, "kind",
		                      r->moe ? "moe" : "dense", "gpus", (json_int_t)r->gpus);
		json_object_set_new(o, "error_in_sample",
		                    isfinite(r->error_in_sample) ? json_real(r->error_in_sample)
		                                                 : json_null());
		json_object_set_new(o, "error_held_out",
		                    isfinite(r->error_held_out) ? json_real(r->error_held_out)
		                                                : json_null());
		json_object_set_new(o, "held_out", json_string(r->held_out));
		json_array_append_new(jr, o);
	}
	return jr;
}

static json_t *groups_json(const pp_cv_result *res)
{
	json_t *by = json_object();
	for (int d = 0; d < PP_CV_DIMS; d++) {
		const pp_cv_group *g = res->groups[d];
		json_t *jd = json_object();
		for (size_t k = 0; k < res->ngroups[d]; k++) {
			json_t *o = json_object();
			json_object_set_new(o, "mape_in_sample", mape_json(g[k].sum_in, g[k].n_in));
			json_object_set_new(o, "records_in_sample",
			                    json_integer((json_int_t)g[k].n_in));
			json_object_set_new(o, "mape_held_out",
			                    mape_json(g[k].sum_out, g[k].n_out));
			json_object_set_new(o, "records_held_out",
			                    json_integer((json_int_t)g[k].n_out));
			json_object_set_new(jd, g[k].key, o);
		}
		json_object_set_new(by, pp_cv_dim_name(d), jd);
	}
	return by;
}

static int cv_json(const pp_cv_report *cv, FILE *f)
{
	const char *data = cv->data;
	const pp_cv_result *res = cv->result;
	json_t *root = json_object();
	json_object_set_new(root, "data", json_string(data));
	json_object_set_new(root, "cross_validate", json_string("source"));
	json_t *sk = json_array();
	for (size_t i = 0; i < res->nskips; i++)
		json_array_append_new(sk, json_pack("{s:s,s:s}", "id", res->skips[i].id, "reason",
		                                    res->skips[i].reason));
	json_object_set_new(root, "skipped", sk);
	json_object_set_new(root, "fits", fits_json(res));
	json_object_set_new(root, "records", records_json(res));
	json_object_set_new(root, "by", groups_json(res));
	const pp_cv_group *a = &res->all;
	json_object_set_new(root, "mape_in_sample", mape_json(a->sum_in, a->n_in));
	json_object_set_new(root, "records_in_sample", json_integer((json_int_t)a->n_in));
	json_object_set_new(root, "mape_held_out", mape_json(a->sum_out, a->n_out));
	json_object_set_new(root, "records_held_out", json_integer((json_int_t)a->n_out));
	int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(root);
	return rc;
}

int ppi_cv_text(const pp_result *r, FILE *f)
{
	return cv_text(r->cv, f);
}

int ppi_cv_json(const pp_result *r, FILE *f)
{
	return cv_json(r->cv, f);
}
