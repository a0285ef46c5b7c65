/*
 * Traffic matrix and traffic timeline reports (include/paraplan/traffic.h).
 * Written with fprintf: a 1024-GPU matrix has tens of thousands of cells.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paraplan/traffic.h"
#include "report_int.h"

#define GB 1e9

/* The tier's label as the system names it (never empty, no comma). */
static const char *tier_link(const pp_traffic *t, pp_tier tier)
{
	int k = tier == PP_TIER_NIC;
	return t->tier_label[k][0] ? t->tier_label[k] : k ? "network" : "intra-node link";
}

int pp_report_traffic_text(const pp_traffic *t, FILE *out)
{
	fprintf(out, "\ntraffic per iteration, all %lld GPUs (GB = 1e9 bytes)\n", t->gpus);
	/* The tiers by what they are ("NVLink GB", "PCIe 4.0 GB"; "InfiniBand GB"). */
	char head[PP_NTIERS][40];
	for (int k = 0; k < PP_NTIERS; k++)
		snprintf(head[k], sizeof head[k], "%s GB",
		         tier_link(t, k ? PP_TIER_NIC : PP_TIER_NVLINK));
	/* A column is as wide as its label ("InfiniBand GB" is 13), at least 12. */
	int w[PP_NTIERS];
	for (int k = 0; k < PP_NTIERS; k++) {
		int n = (int)strlen(head[k]);
		w[k] = n > 12 ? n : 12;
	}
	fprintf(out, "  %-10s %*s %*s %12s\n", "type", w[0], head[0], w[1], head[1], "total GB");
	double tier[PP_NTIERS] = {0, 0};
	for (int k = 0; k < PP_TRAFFIC_NTYPES; k++) {
		double a = t->total_bytes[k][PP_TIER_NVLINK], b = t->total_bytes[k][PP_TIER_NIC];
		tier[0] += a;
		tier[1] += b;
		if (a + b <= 0)
			continue;
		fprintf(out, "  %-10s %*.3f %*.3f %12.3f\n",
		        pp_traffic_type_name((pp_traffic_type)k), w[0], a / GB, w[1], b / GB,
		        (a + b) / GB);
	}
	fprintf(out, "  %-10s %*.3f %*.3f %12.3f\n", "total", w[0], tier[0] / GB, w[1],
	        tier[1] / GB, (tier[0] + tier[1]) / GB);
	fprintf(out, "  busiest node sends %.3f GB out of the node; %zu GPU pairs x types talk\n",
	        t->max_nic_egress_bytes / GB, t->n);
	return ferror(out) ? -1 : 0;
}

int pp_report_traffic_csv(const pp_traffic *t, FILE *out)
{
	/* tier: intra_node / inter_node; link: what that tier is ("NVLink",
	 * "PCIe 4.0", "InfiniBand", ...), so a PCIe or Ethernet cluster reads as one. */
	fprintf(out, "src_gpu,dst_gpu,src_node,dst_node,type,tier,link,bytes\n");
	int g = t->gpus_per_node > 0 ? t->gpus_per_node : 1;
	for (size_t i = 0; i < t->n; i++) {
		const pp_traffic_cell *c = &t->cell[i];
		fprintf(out, "%lld,%lld,%lld,%lld,%s,%s,%s,%.17g\n", c->src, c->dst, c->src / g,
		        c->dst / g, pp_traffic_type_name(c->type), pp_tier_name(c->tier),
		        tier_link(t, c->tier), c->bytes);
	}
	return ferror(out) ? -1 : 0;
}

int pp_report_traffic_json(const pp_traffic *t, FILE *out)
{
	fprintf(out,
	        "{\n  \"gpus\": %lld,\n  \"gpus_per_node\": %d,\n  \"nvlink_domain_gpus\": %d,\n"
	        "  \"intra_node_link\": \"%s\",\n  \"inter_node_network\": \"%s\",\n"
	        "  \"microbatches\": %lld,\n  \"max_node_egress_bytes\": %.17g,\n  \"totals\": {",
	        t->gpus, t->gpus_per_node, t->domain, tier_link(t, PP_TIER_NVLINK),
	        tier_link(t, PP_TIER_NIC), t->microbatches, t->max_nic_egress_bytes);
	for (int k = 0; k < PP_TRAFFIC_NTYPES; k++) {
		double a = t->total_bytes[k][PP_TIER_NVLINK], b = t->total_bytes[k][PP_TIER_NIC];
		fprintf(
		    out,
		    "%s\n    \"%s\": {\"intra_node_bytes\": %.17g, \"inter_node_bytes\": %.17g, "
		    "\"total_bytes\": %.17g}",
		    k ? "," : "", pp_traffic_type_name((pp_traffic_type)k), a, b, a + b);
	}
	fprintf(out, "\n  },\n  \"types\": [");
	size_t i = 0;
	bool dense = t->gpus <= PP_TRAFFIC_DENSE_MAX;
	for (int k = 0; k < PP_TRAFFIC_NTYPES; k++) {
		fprintf(out, "%s\n    {\"type\": \"%s\",\n     \"cells\": [", k ? "," : "",
		        pp_traffic_type_name((pp_traffic_type)k));
		size_t first = i;
		for (; i < t->n && t->cell[i].type == (pp_traffic_type)k; i++)
			fprintf(out, "%s[%lld, %lld, %.17g]", i > first ? ", " : "", t->cell[i].src,
			        t->cell[i].dst, t->cell[i].bytes);
		fprintf(out, "]");
		if (dense) {
			fprintf(out, ",\n     \"matrix_bytes\": [");
			size_t j = first;
			for (long long s = 0; s < t->gpus; s++) {
				fprintf(out, "%s[", s ? ",\n       " : "");
				for (long long d = 0; d < t->gpus; d++) {
					double v = 0;
					if (j < i && t->cell[j].src == s && t->cell[j].dst == d)
						v = t->cell[j++].bytes;
					fprintf(out, "%s%.17g", d ? ", " : "", v);
				}
				fprintf(out, "]");
			}
			fprintf(out, "]");
		}
		fprintf(out, "}");
	}
	fprintf(out, "\n  ],\n  \"nodes\": [");
	for (long long nd = 0; nd < t->nodes; nd++)
		fprintf(out, "%s\n    {\"node\": %lld, \"out_bytes\": %.17g, \"in_bytes\": %.17g}",
		        nd ? "," : "", nd, t->node_out_bytes[nd], t->node_in_bytes[nd]);
	fprintf(out, "\n  ]\n}\n");
	return ferror(out) ? -1 : 0;
}

int pp_report_timeline_text(const pp_traffic_timeline *tl, const pp_placement *pl,
                            long long max_nodes, FILE *out)
{
	fprintf(out, "\ntraffic timeline (%s; one GPU of each pipeline rank)\n",
	        tl->in_task ? "TP, CP and EP inside the compute tasks, pipeline sends and DP"
	                    : "pipeline sends and DP");
	fprintf(out, "  %-5s %8s %10s %10s %10s  %s\n", "rank", "on", "on ms", "off ms", "MB sent",
	        "on periods [start ms, end ms]");
	for (int r = 0; r < tl->ranks; r++) {
		fprintf(out, "  %-5d %8zu %10.3f %10.3f %10.3f ", r, tl->non[r], tl->on_s[r] * 1e3,
		        tl->off_s[r] * 1e3, tl->bytes[r] / 1e6);
		for (size_t i = 0; i < tl->non[r] && i < 4; i++)
			fprintf(out, " [%.3f, %.3f]", tl->on[r][i].start_s * 1e3,
			        tl->on[r][i].end_s * 1e3);
		if (tl->non[r] > 4)
			fprintf(out, " ...");
		fprintf(out, "\n");
	}
	ppi_report_timeline_types(tl, out);
	if (!pl)
		return ferror(out) ? -1 : 0;
	long long g = pl->gpus_per_node > 0 ? pl->gpus_per_node : 1;
	long long nodes = (pl->ranks + g - 1) / g;
	fprintf(out, "  %-5s %8s %10s %10s %10s  %s\n", "node", "on", "on ms", "off ms", "MB sent",
	        "pipeline ranks (GPUs)");
	for (long long nd = 0; nd < nodes && nd < max_nodes; nd++) {
		pp_node_timeline nt;
		pp_error err;
		if (pp_traffic_timeline_node(tl, pl, nd, &nt, &err))
			return -1;
		fprintf(out, "  %-5lld %8zu %10.3f %10.3f %10.3f  ", nd, nt.non, nt.on_s * 1e3,
		        nt.off_s * 1e3, nt.bytes / 1e6);
		for (int r = 0; r < tl->ranks && r < 64; r++)
			if (nt.mask & (1ULL << r))
				fprintf(out, " %d", r);
		fprintf(out, " (%d)\n", nt.gpus);
		free(nt.on);
	}
	if (nodes > max_nodes)
		fprintf(out, "  ... %lld more nodes\n", nodes - max_nodes);
	return ferror(out) ? -1 : 0;
}
