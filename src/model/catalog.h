/* catalog.h - built-in hardware catalog: accelerators and their default node.
 *
 * The performance model (plan_model), the analyzer (expected bus bandwidth
 * from a trace's deviceProperties name) and the probe (GEMM peaks) need the same few spec-sheet
 * numbers per accelerator: dense tensor peaks by dtype, HBM size and
 * bandwidth, the scale-up fabric (NVLink or the vendor's equivalent) and the
 * node it usually ships in (GPUs per node, scale-out NICs and their rate).
 * Those numbers are transcribed by hand into static C tables in catalog.c,
 * one row per SKU, each with the public source it came from; nothing is read
 * at run time, so the binary answers with no data files around.
 *
 * Lookup is forgiving on purpose: hw_gpu_find("A100") and
 * hw_gpu_find("NVIDIA A100-SXM4-80GB") and the CUDA device name
 * "NVIDIA H100 80GB HBM3" all resolve. See hw_gpu_find for the rules.
 *
 * How to add an accelerator: append one row to the gpu table in catalog.c
 * with its source, add its short aliases to the alias table and, if devices
 * report it under a longer name, one token rule; then extend
 * tests/unit/test_catalog.c. A new vendor also needs its row in the vendor
 * table (collective library and fabric name).
 *
 * Lives in the model (the vocabulary, DESIGN.md section 3) because the
 * planner, the analyzer and the probe all read it; none of them owns it.
 *
 * Units are in the field names (model/vocab.h): *_tflops are 1e12 FLOP/s
 * dense (no 2:4 sparsity), *_bytes are bytes, *_gbps are GB/s (1e9 bytes/s)
 * in one direction, *_gbit_s are Gbit/s (1e9 bits/s). 0 means "not
 * supported / unknown".
 */
#ifndef CP_MODEL_CATALOG_H
#define CP_MODEL_CATALOG_H

#include <stddef.h>

typedef struct hw_gpu {
    const char *name;        /* canonical catalog name, e.g. "A100-SXM4-80GB" */
    const char *vendor;      /* "NVIDIA", "AMD", "Intel", "Google" (hw_vendor_find) */
    const char *arch;        /* "Ampere", "Hopper", ... */
    double tf32_tflops;      /* dense TF32 tensor peak, 0 when NA */
    double bf16_tflops;      /* dense BF16 tensor peak (FP16 when no BF16) */
    double fp16_tflops;      /* dense FP16 tensor peak */
    double fp8_tflops;       /* dense FP8 tensor peak, 0 when NA */
    double hbm_bytes;        /* device memory on the label (1e9 units) */
    double hbm_gbps;         /* device memory bandwidth, GB/s */
    double scaleup_gbps;     /* scale-up fabric (hw_vendor.scaleup) per GPU per direction, GB/s */
    int scaleup_domain;      /* GPUs reachable over that fabric at full rate */
    double pcie_gbps;        /* host link per direction, GB/s; 0 when not PCIe */
    double tdp_w;            /* board power, 0 when unpublished */
    double mamf_frac;        /* measured max achievable BF16 matmul / peak */
    int gpus_per_node;       /* default node design */
    int nics_per_node;       /* scale-out NICs per node */
    double nic_gbit_s;       /* line rate per NIC, Gbit/s */
    const char *node_name;   /* the node design the defaults come from */
    const char *source;      /* where the numbers come from */
} hw_gpu;

/* What a vendor's parts share: the collective library and the name of the
 * scale-up fabric, so a finding about an AMD part speaks of RCCL over xGMI
 * and never gives NVLink advice. */
typedef struct hw_vendor {
    const char *vendor;      /* as in hw_gpu.vendor */
    const char *ccl;         /* collective library: "NCCL", "RCCL", "HCCL", NULL none */
    const char *scaleup;     /* scale-up fabric: "NVLink", "xGMI", "RoCE (on-chip NICs)", "ICI" */
} hw_vendor;

/* Vendor entry by name, case-insensitive ("NVIDIA", "amd"); NULL unknown. */
const hw_vendor *hw_vendor_find(const char *vendor);

/* Find an accelerator by name, alias or device-reported name; returns a
 * pointer into the static table (never freed) or NULL when nothing matches.
 * Matching is case-insensitive; "NVIDIA"/"AMD"/"Tesla"/"Instinct" prefixes,
 * spaces and underscores are ignored. Exact canonical names and aliases are
 * tried first, then token rules (for example tokens {"h100","pcie"} pick
 * H100 PCIe, {"h100"} alone picks H100 SXM, {"a100","40gb"} the 40 GB part). */
const hw_gpu *hw_gpu_find(const char *name);

/* Number of catalog rows and row i (0 <= i < count), for listings. */
size_t hw_gpu_count(void);
const hw_gpu *hw_gpu_at(size_t i);

/* Peak dense tensor TFLOP/s of gpu for dtype "bf16", "fp16", "fp8" or
 * "tf32"; 0 when the dtype is unsupported or unknown. */
double hw_gpu_peak_tflops(const hw_gpu *gpu, const char *dtype);

/* FP32 results per clock per SM of an NVIDIA compute capability (the CUDA
 * cores: an FFMA counts one result, two FLOPs), *fp64 (may be NULL) the FP64
 * ones; 0 when the capability is not in the table. */
int hw_cc_lanes_per_sm(int major, int minor, int *fp64);

/* Scale-out bandwidth per GPU in GB/s per direction under the catalog's
 * default node (nics_per_node x nic_gbit_s in GB/s / gpus_per_node). */
double hw_gpu_nic_gbps_per_gpu(const hw_gpu *gpu);

/* Achieved fractions of the link rate for large NCCL collectives, shared by
 * the model and the analyzer so both expect the same thing:
 * NVLink: 8xA100 all-reduce busbw 234.9 GB/s of 300, 8xH200 367.6 of 450
 * (stas00/ml-engineering network/README.md); network: ~24 GB/s per 200 Gb/s
 * HDR NIC (NCCL maintainer, nccl-tests issue 119) minus protocol overhead. */
#define HW_SCALEUP_BUSBW_FRAC 0.80
#define HW_NET_BUSBW_FRAC 0.80

/* Expected bus bandwidth (GB/s, nccl-tests convention) of a large all-reduce
 * over a group with `per_node` ranks on each node: inside one scale-up
 * domain (spans_nodes == 0) the NVLink rate x HW_SCALEUP_BUSBW_FRAC; across
 * nodes NCCL spreads the ring over the per_node ranks' NICs, so the per-GPU
 * NIC share x per_node x HW_NET_BUSBW_FRAC. 0 when unknown. */
double hw_gpu_expected_busbw_gbps(const hw_gpu *gpu, int per_node, int spans_nodes);

#endif
