/*
 * kernel's result rendered as text: the kernel model's parameters of a GPU
 * and, when they were fitted to a measured profile, the model's MAPE on each
 * table.  The fitting is kernel's (pp_kernel_fit, pp_kernel_scale).
 */
#include <stdio.h>

#include "format_int.h"

int ppi_kernel_text(const pp_result *r, FILE *f)
{
	const pp_kernel_report *kr = r->kernel;
	const pp_gpu *gpu = kr->gpu;
	const pp_kernel_profile *p = kr->profile;
	const pp_kernel_params *k = &gpu->kern;
	fprintf(f, "paraplan kernel: %s (%s peaks: bf16 %.1f, fp8 %.1f TFLOP/s, HBM %.2f TB/s)\n\n",
	        !p             ? "datasheet-scaled reference H100 parameters"
	        : p->device[0] ? p->device
	                       : kr->dir,
	        gpu->name, gpu->bf16_flops / 1e12, gpu->fp8_flops / 1e12,
	        gpu->memory_bw_bytes_per_s / 1e12);
	fprintf(f, "parameters\n");
	fprintf(f, "  sms            %8.0f\n", k->sms);
	fprintf(f, "  gemm_eff       %8.4f   (%.0f TFLOP/s)\n", k->gemm_eff,
	        k->gemm_eff * gpu->bf16_flops / 1e12);
	if (gpu->fp8_flops > 0)
		fprintf(f, "  gemm_fp8_eff   %8.4f   (%.0f TFLOP/s, %.2fx bf16)\n", k->gemm_fp8_eff,
		        k->gemm_fp8_eff * gpu->fp8_flops / 1e12,
		        k->gemm_fp8_eff * gpu->fp8_flops / (k->gemm_eff * gpu->bf16_flops));
	fprintf(f, "  gemm_k_half    %8.1f\n", k->gemm_k_half);
	fprintf(f, "  gemm_fixed_s   %8.2f us\n", k->gemm_fixed_s * 1e6);
	fprintf(f, "  attn_fwd_eff   %8.4f\n", k->attn_fwd_eff);
	fprintf(f, "  attn_bwd_eff   %8.4f\n", k->attn_bwd_eff);
	fprintf(f, "  attn_seq_half  %8.0f\n", k->attn_seq_half);
	fprintf(f, "  attn_fixed_s   %8.2f us\n", k->attn_fixed_s * 1e6);
	fprintf(f, "  hbm_eff        %8.4f   (%.2f TB/s)\n", k->hbm_eff,
	        k->hbm_eff * gpu->memory_bw_bytes_per_s / 1e12);
	fprintf(f, "  mem_fixed_s    %8.2f us\n", k->mem_fixed_s * 1e6);
	if (!p)
		return ferror(f) ? -1 : 0;
	fprintf(f, "\nmodel vs measured\n");
	for (int t = 0; t < PP_KT_COUNT; t++) {
		if (p->n[t] == 0)
			fprintf(f, "  %-26s   no records\n",
			        pp_kernel_table_file((pp_kernel_table)t));
		else
			fprintf(f, "  %-26s %4d records  MAPE %5.2f%%%s\n",
			        pp_kernel_table_file((pp_kernel_table)t), p->n[t], kr->mape[t],
			        t == PP_KT_MOE ? "  (predicted, not fitted)" : "");
	}
	return ferror(f) ? -1 : 0;
}
