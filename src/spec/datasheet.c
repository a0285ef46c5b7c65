/*
 * GPU facts from the vendors' documents that the models read by GPU name: the
 * SM count and the compute capability of each preset GPU (spec.h,
 * pp_gpu_datasheet_sms and pp_gpu_datasheet_arch).  Here, in spec, because the
 * plan checks read them (pp_job_check_gpu: MXFP8 needs compute capability
 * 10.0) as well as the kernel model, the cost model and the fitter.
 */
#include "spec_int.h"

/* Streaming multiprocessors (AMD: compute units) of the preset GPUs, from
 * their vendors' architecture documents. */
static const struct {
	const char *gpu;
	double sms;
	int arch; /* NVIDIA compute capability x 10 (sm_80 = 80); 0: not NVIDIA */
} datasheet_sms[] = {
    {"v100-sxm2-32g", 80, 70}, /* NVIDIA Tesla V100 whitepaper: 80 SMs */
    {"v100-pcie-32g", 80, 70}, /* idem */
    {"a100-40g", 108, 80},     /* NVIDIA A100 Tensor Core GPU architecture: 108 SMs */
    {"a100-80g", 108, 80},     /* idem */
    {"a800-80g", 108, 80},     /* A100 silicon with NVLink cut to 400 GB/s */
    {"a40", 84, 86},           /* NVIDIA A40 datasheet: 10752 CUDA cores = 84 GA102 SMs */
    {"rtx-3090", 82, 86},      /* GeForce RTX 3090: 10496 CUDA cores = 82 SMs */
    {"h100-sxm", 132, 90},     /* NVIDIA H100 whitepaper (SXM5); device.json of the measurements */
    {"h800", 132, 90},         /* H100 SXM5 silicon with NVLink cut to 400 GB/s */
    {"h200", 132, 90},         /* H100 silicon with 141 GB HBM3e */
    {"h100-pcie", 114, 90},    /* NVIDIA H100 whitepaper (PCIe): 114 SMs */
    {"b200", 148, 100},        /* Blackwell B200: 2 dies x 74 SMs (CUDA deviceQuery) */
    {"gb200", 148, 100},       /* the same B200 GPU in a Grace Blackwell superchip */
    {"mi300x", 304, 0},        /* AMD CDNA 3 white paper: 304 compute units */
};

int pp_gpu_datasheet_arch(const char *gpu)
{
	for (size_t i = 0; gpu && i < sizeof datasheet_sms / sizeof datasheet_sms[0]; i++)
		if (ppi_streq(gpu, datasheet_sms[i].gpu))
			return datasheet_sms[i].arch;
	return 0;
}

double pp_gpu_datasheet_sms(const char *gpu)
{
	for (size_t i = 0; gpu && i < sizeof datasheet_sms / sizeof datasheet_sms[0]; i++)
		if (ppi_streq(gpu, datasheet_sms[i].gpu))
			return datasheet_sms[i].sms;
	return 0;
}
