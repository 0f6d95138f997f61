/* catalog.c - the hardware catalog as static tables (see catalog.h).
 *
 * Every row is transcribed by hand from public spec sheets and measurements;
 * the source of each row is in its `source` field (the same sources the
 * project's hardware notes cite). Conventions, so rows stay comparable:
 *   - tensor peaks are DENSE (vendors' 2:4-sparsity figures halved);
 *   - NVLink/xGMI bandwidth is per GPU, one direction, summed over links
 *     (A100 300 = 12 links x 25 GB/s; NVIDIA markets 600 bidirectional);
 *   - mamf_frac is the measured maximum achievable BF16 matmul as a fraction
 *     of the dense peak (stas00/ml-engineering MAMF table); 0 = not measured,
 *     and the model then falls back to its documented default;
 *   - node defaults (GPUs per node, NICs x Gb/s) come from the vendor's
 *     reference node for that part; where no reference node exists the
 *     source says "assumed".
 */
#include "model/catalog.h"

#include "model/vocab.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define MLENG "github:stas00/ml-engineering compute/accelerator/README.md (commit 744d01e)"
#define MLNET "github:stas00/ml-engineering network/README.md (commit 744d01e)"

/* name, vendor, arch, tf32, bf16, fp16, fp8, hbm_bytes, hbm GB/s,
 * scale-up GB/s/dir, scale-up domain, pcie GB/s/dir, tdp W, mamf,
 * gpus/node, nics/node, nic Gb/s, node, source */
static const hw_gpu k_gpus[] = {
    {"V100-SXM2-32GB", "NVIDIA", "Volta", 0, 125, 125, 0, 32e9, 900, 150, 8, 15.75, 300, 0,
     8, 4, 100, "DGX-1 class, 4x EDR 100 Gb/s (assumed)",
     "NVIDIA V100 SXM2 datasheet via github:cli99/llm-analysis gpu_configs/v100-sxm-32gb.json; "
     "NVLink 2 6x25 GB/s; BF16 unsupported, 125 = FP16 tensor (dense); node assumed"},
    {"A100-SXM4-40GB", "NVIDIA", "Ampere", 156, 312, 312, 0, 40e9, 1555, 300, 8, 31.5, 400, 0.869,
     8, 8, 200, "Azure ND96asr_v4 (8x HDR 200 Gb/s)",
     "NVIDIA A100 datasheet (dense = sparse/2) via glennklockwood.com/garden/processors/A100; "
     "MAMF " MLENG "; node github:Azure/azurehpc-health-checks conf/nd96asr_v4.conf"},
    {"A100-SXM4-80GB", "NVIDIA", "Ampere", 156, 312, 312, 0, 80e9, 2039, 300, 8, 31.5, 400, 0.869,
     8, 8, 200, "NVIDIA DGX A100 (8x ConnectX-6 HDR 200 Gb/s)",
     "NVIDIA A100 datasheet (dense) via glennklockwood.com/garden/processors/A100; MAMF " MLENG
     "; DGX A100 node " MLNET},
    {"A100-PCIE-80GB", "NVIDIA", "Ampere", 156, 312, 312, 0, 80e9, 1935, 300, 2, 31.5, 300, 0.869,
     8, 4, 200, "PCIe server, NVLink bridge pairs, 4x 200 Gb/s (assumed)",
     "NVIDIA A100 80GB PCIe product brief PB-10577-001; NVLink only to the bridged partner; "
     "MAMF taken from A100 SXM (same die); node assumed"},
    {"A800-SXM4-80GB", "NVIDIA", "Ampere", 156, 312, 312, 0, 80e9, 2039, 200, 8, 31.5, 400, 0.869,
     8, 8, 200, "DGX A100 class (assumed)",
     "export variant of A100 SXM4 80GB: compute/memory unchanged, NVLink 400 GB/s bidir "
     "(tweakers.net 203182; aiwiki.ai nvidia_a800); node assumed as DGX A100"},
    {"H100-SXM5-80GB", "NVIDIA", "Hopper", 494.7, 989.4, 989.4, 1978.9, 80e9, 3350, 450, 8, 63.0, 700,
     0.803, 8, 8, 400, "NVIDIA DGX H100 (8x ConnectX-7 400 Gb/s)",
     "H100 whitepaper dense peaks via glennklockwood.com/garden/processors/h100; "
     "github:pytorch/torchtitan torchtitan/tools/utils.py get_peak_flops; MAMF " MLENG
     "; node docs.nvidia.com dgx-basepod core-components"},
    {"H100-PCIE-80GB", "NVIDIA", "Hopper", 378, 756, 756, 1513, 80e9, 2000, 300, 2, 63.0, 350, 0.803,
     8, 4, 400, "PCIe server, NVLink bridge pairs, 4x 400 Gb/s (assumed)",
     "NVIDIA H100 PCIe product brief PB-11133-001 (dense = sparse/2); torchtitan get_peak_flops 756; "
     "MAMF taken from H100 SXM; node assumed"},
    {"H100-NVL-94GB", "NVIDIA", "Hopper", 417.5, 835.5, 835.5, 1670.5, 94e9, 3900, 300, 2, 63.0, 400,
     0.803, 8, 4, 400, "PCIe server, NVL bridge pairs, 4x 400 Gb/s (assumed)",
     "nvidia.com/en-us/data-center/h100 (H100 NVL column, dense = sparse/2); torchtitan "
     "get_peak_flops 835; MAMF taken from H100 SXM; node assumed"},
    {"H800-SXM5-80GB", "NVIDIA", "Hopper", 494.7, 989, 989, 1979, 80e9, 3350, 200, 8, 63.0, 700, 0.803,
     8, 8, 400, "DeepSeek H800 node (8x CX7 400 Gb/s IB)",
     "github:deepseek-ai/FlashMLA docs/20250422-new-kernel-deep-dive.md; github:deepseek-ai/DeepEP "
     "docs/legacy.md (NVLink 200 GB/s/dir, 400G RDMA); github:cli99/llm-analysis h800-sxm-80gb.json; "
     "TF32 assumed as H100 SXM"},
    {"H20-96GB", "NVIDIA", "Hopper", 74, 148, 148, 296, 96e9, 4000, 450, 8, 63.0, 400, 0.803,
     8, 8, 400, "HGX 8-GPU, 8x 400 Gb/s (assumed)",
     "huggingface.co/hardware/h20; willitrunai.com h20-96gb (secondary sources, no NVIDIA "
     "datasheet); MAMF taken from H100 SXM; node assumed"},
    {"H200-SXM-141GB", "NVIDIA", "Hopper", 494.7, 989.4, 989.4, 1978.9, 141e9, 4800, 450, 8, 63.0, 700,
     0.803, 8, 8, 400, "NVIDIA DGX H200 (8x ConnectX-7 400 Gb/s)",
     MLENG "; mlcommons inference_results_v4.1 H200-SXM-141GBx8 system json; same GH100 compute "
     "as H100 SXM; DGX H200 node docs.nvidia.com dgx-basepod core-components"},
    {"B200-SXM-180GB", "NVIDIA", "Blackwell", 1125, 2250, 2250, 4500, 180e9, 8000, 900, 8, 63.0, 1000,
     0.776, 8, 8, 400, "NVIDIA DGX B200 (8x ConnectX-7 400 Gb/s)",
     MLENG "; glennklockwood.com/garden/processors/B200; torchtitan get_peak_flops; DGX B200 "
     "node docs.nvidia.com dgx-superpod b200 components"},
    {"GB200-NVL72", "NVIDIA", "Blackwell", 1250, 2500, 2500, 5000, 186e9, 8000, 900, 72, 0, 1200, 0.729,
     4, 4, 400, "GB200 NVL72 compute tray (4 GPUs, 4x CX7 400 Gb/s; 72-GPU NVLink domain)",
     MLENG "; " MLNET "; mlcommons inference_results_v6.1 Crusoe GB200-NVL72 system json "
     "(186 GB per GPU)"},
    {"B300-SXM-288GB", "NVIDIA", "Blackwell Ultra", 1125, 2250, 2250, 4500, 288e9, 8000, 900, 8, 0, 1000,
     0.776, 8, 8, 800, "NVIDIA DGX B300 (8x ConnectX-8 800 Gb/s)",
     "glennklockwood.com/garden/processors/B300; " MLENG " (provisional figures); MAMF taken "
     "from B200; DGX B300 node docs.nvidia.com dgx-superpod b300 components"},
    {"GB300-NVL72", "NVIDIA", "Blackwell Ultra", 1250, 2500, 2500, 5000, 288e9, 8000, 900, 72, 0, 1400,
     0.729, 4, 4, 800, "GB300 NVL72 compute tray (4 GPUs, ConnectX-8 800 Gb/s per GPU)",
     MLENG "; verda.com/blog/gb300-nvl72-architecture; glennklockwood.com/garden/processors/B300; "
     "MAMF taken from GB200"},
    {"L40S", "NVIDIA", "Ada Lovelace", 183, 362.05, 362.05, 733, 48e9, 864, 31.5, 1, 31.5, 350, 0,
     8, 2, 200, "PCIe server, no NVLink, 2x 200 Gb/s (assumed)",
     "NVIDIA L40/L40S datasheet table (dense = sparse/2) via mullet.se; " MLENG "; node assumed"},
    {"L4", "NVIDIA", "Ada Lovelace", 60, 121, 121, 242.5, 24e9, 300, 31.5, 1, 31.5, 72, 0,
     8, 2, 100, "PCIe server, no NVLink, 2x 100 Gb/s (assumed)",
     "NVIDIA L4 datasheet (dense = sparse/2) via store.sourcecode.com; node assumed"},
    {"RTX-4090", "NVIDIA", "Ada Lovelace", 82.6, 165.2, 165.2, 330.3, 24e9, 1008, 31.5, 1, 31.5, 450, 0,
     8, 1, 100, "workstation/PCIe server, 1x 100 Gb/s (assumed)",
     "NVIDIA Ada GPU architecture whitepaper v2.02 Appendix A (FP32-accumulate tensor rates); "
     "node assumed"},
    {"MI250X-OAM", "AMD", "CDNA2", 0, 383, 383, 0, 128e9, 3276.8, 350, 4, 31.5, 500, 0,
     4, 4, 200, "4-OAM node, 4x 200 Gb/s (assumed)",
     "github:ROCm/rocm-docs docs/reference/gpu-specs.rst; " MLENG "; whole OAM package "
     "(2 GCDs); node assumed"},
    {"MI300X", "AMD", "CDNA3", 653.7, 1307.4, 1307.4, 2614.9, 192e9, 5300, 448, 8, 63.0, 750, 0.514,
     8, 8, 400, "Azure ND96isr_MI300X_v5 (8x NDR 400 Gb/s)",
     "github:ROCm/rocm-docs docs/reference/gpu-specs.rst; " MLENG " (MAMF 51.4%); xGMI 7x64 GB/s "
     MLNET "; node github:Azure/azurehpc-health-checks conf/nd96isr_mi300x_v5.conf"},
    {"MI325X", "AMD", "CDNA3", 653.7, 1307.4, 1307.4, 2614.9, 256e9, 6000, 448, 8, 63.0, 1000, 0.604,
     8, 8, 400, "8-GPU MI300-class platform, 8x 400 Gb/s (assumed)",
     "github:ROCm/rocm-docs docs/reference/gpu-specs.rst; " MLENG " (MAMF 60.4%); node assumed"},
    {"MI355X", "AMD", "CDNA4", 0, 2500, 2500, 5000, 288e9, 8000, 535.5, 8, 63.0, 1400, 0.63,
     8, 8, 400, "8-GPU platform, 8x 400 Gb/s (assumed)",
     "github:ROCm/rocm-docs docs/reference/gpu-specs.rst; " MLENG " (MAMF 68% of 2300 = ~63% "
     "of 2500, derived); xGMI 7x76.5 GB/s " MLNET "; node assumed"},
    {"Gaudi2", "Intel", "Gaudi2", 0, 432, 0, 865, 96e9, 2460, 262.5, 8, 31.5, 600, 0.969,
     8, 24, 100, "Intel Gaudi2 HLS (3x 100GbE scale-out ports per card)",
     "Intel Hot Chips 2024 Gaudi slides (sgpjbg.com/baogao/465025); " MLENG " (MAMF 96.9%); " MLNET},
    {"Gaudi3", "Intel", "Gaudi3", 459, 1835, 459, 1835, 128e9, 3670, 525, 8, 63.0, 900, 0.677,
     8, 24, 200, "Intel Gaudi3 HLS-3 (3x 200GbE scale-out ports per card)",
     "Intel Hot Chips 2024 Gaudi 3 slides; docs.habana.ai network configuration; " MLENG
     " (MAMF 74.1% of 1677 shipping clock = 67.7% of 1835, derived)"},
    {"TPU-v4", "Google", "TPU v4", 0, 275, 0, 0, 34.36e9, 1200, 0, 4, 0, 0, 0,
     4, 1, 100, "TPU v4 host (4 chips; ICI rate unpublished; DCN assumed 100 Gb/s)",
     "docs.cloud.google.com/tpu/docs/v4 (32 GiB HBM2, 1200 GBps); node DCN assumed"},
    {"TPU-v5p", "Google", "TPU v5p", 0, 459, 0, 459, 95e9, 2765, 600, 8960, 0, 0, 0,
     4, 4, 50, "TPU v5p host (4 chips; ICI 3D torus; DCN 50 Gb/s per chip)",
     "cloud.google.com/tpu/docs/v5p-training; " MLENG},
};

/* Per vendor: the collective library its parts run and its scale-up
 * fabric (NCCL/NVLink; RCCL over xGMI, AMD Instinct docs; HCCL over the
 * Gaudi's on-chip RoCE ports, docs.habana.ai; TPU ICI, no CCL). */
static const hw_vendor k_vendors[] = {
    {"NVIDIA", "NCCL", "NVLink"},
    {"AMD", "RCCL", "xGMI"},
    {"Intel", "HCCL", "RoCE (on-chip NICs)"},
    {"Google", NULL, "ICI"},
};

const hw_vendor *hw_vendor_find(const char *vendor)
{
    for (size_t i = 0; vendor && i < sizeof k_vendors / sizeof k_vendors[0]; i++)
        if (strcasecmp(vendor, k_vendors[i].vendor) == 0) return &k_vendors[i];
    return NULL;
}

/* Short names users type. Each maps to a canonical row name. */
static const struct {
    const char *alias;
    const char *name;
} k_aliases[] = {
    {"v100", "V100-SXM2-32GB"},       {"a100-40gb", "A100-SXM4-40GB"},
    {"a100-80gb", "A100-SXM4-80GB"},  {"a100", "A100-SXM4-80GB"},
    {"a100-pcie", "A100-PCIE-80GB"},  {"a800", "A800-SXM4-80GB"},
    {"h100-sxm", "H100-SXM5-80GB"},   {"h100", "H100-SXM5-80GB"},
    {"h100-pcie", "H100-PCIE-80GB"},  {"h100-nvl", "H100-NVL-94GB"},
    {"h800", "H800-SXM5-80GB"},       {"h20", "H20-96GB"},
    {"h200", "H200-SXM-141GB"},       {"b200", "B200-SXM-180GB"},
    {"gb200", "GB200-NVL72"},         {"b300", "B300-SXM-288GB"},
    {"gb300", "GB300-NVL72"},         {"mi250x", "MI250X-OAM"},
    {"rtx4090", "RTX-4090"},          {"4090", "RTX-4090"},
    {"tpuv4", "TPU-v4"},              {"tpuv5p", "TPU-v5p"},
};

/* Token rules for device-reported names, most specific first: a rule
 * matches when every non-NULL token occurs as a whole token. */
static const struct {
    const char *tok[3];
    const char *name;
} k_rules[] = {
    {{"gb200", NULL, NULL}, "GB200-NVL72"},
    {{"gb300", NULL, NULL}, "GB300-NVL72"},
    {{"b200", NULL, NULL}, "B200-SXM-180GB"},
    {{"b300", NULL, NULL}, "B300-SXM-288GB"},
    {{"h100", "pcie", NULL}, "H100-PCIE-80GB"},
    {{"h100", "nvl", NULL}, "H100-NVL-94GB"},
    {{"h100", NULL, NULL}, "H100-SXM5-80GB"},
    {{"h200", NULL, NULL}, "H200-SXM-141GB"},
    {{"h800", NULL, NULL}, "H800-SXM5-80GB"},
    {{"h20", NULL, NULL}, "H20-96GB"},
    {{"a100", "pcie", NULL}, "A100-PCIE-80GB"},
    {{"a100", "40gb", NULL}, "A100-SXM4-40GB"},
    {{"a100", NULL, NULL}, "A100-SXM4-80GB"},
    {{"a800", NULL, NULL}, "A800-SXM4-80GB"},
    {{"v100", NULL, NULL}, "V100-SXM2-32GB"},
    {{"l40s", NULL, NULL}, "L40S"},
    {{"l4", NULL, NULL}, "L4"},
    {{"4090", NULL, NULL}, "RTX-4090"},
    {{"mi250x", NULL, NULL}, "MI250X-OAM"},
    {{"mi300x", NULL, NULL}, "MI300X"},
    {{"mi325x", NULL, NULL}, "MI325X"},
    {{"mi355x", NULL, NULL}, "MI355X"},
    {{"gaudi2", NULL, NULL}, "Gaudi2"},
    {{"gaudi", "2", NULL}, "Gaudi2"},
    {{"hl-225h", NULL, NULL}, "Gaudi2"},
    {{"gaudi3", NULL, NULL}, "Gaudi3"},
    {{"gaudi", "3", NULL}, "Gaudi3"},
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

size_t hw_gpu_count(void) { return COUNT_OF(k_gpus); }

const hw_gpu *hw_gpu_at(size_t i) { return i < COUNT_OF(k_gpus) ? &k_gpus[i] : NULL; }

/* Row whose canonical name equals the already-normalized `norm`. */
static const hw_gpu *find_canonical(const char *norm)
{
    for (size_t i = 0; i < COUNT_OF(k_gpus); i++) {
        const char *a = k_gpus[i].name, *b = norm;
        while (*a && *b && tolower((unsigned char)*a) == *b) a++, b++;
        if (!*a && !*b) return &k_gpus[i];
    }
    return NULL;
}

/* Row by exact canonical name (table-internal names, always present). */
static const hw_gpu *by_name(const char *name)
{
    for (size_t i = 0; i < COUNT_OF(k_gpus); i++)
        if (strcmp(k_gpus[i].name, name) == 0) return &k_gpus[i];
    return NULL;
}

/* Lower-case, map ' ' and '_' to '-', squeeze repeats, drop vendor words. */
static void normalize(const char *in, char *out, size_t size)
{
    static const char *const drop[] = {"nvidia-", "amd-", "tesla-", "instinct-", "intel-",
                                       "habana-", "google-", "geforce-"};
    size_t n = 0;
    for (; *in && n + 1 < size; in++) {
        char c = (char)tolower((unsigned char)*in);
        if (c == ' ' || c == '_') c = '-';
        if (c == '-' && (n == 0 || out[n - 1] == '-')) continue;
        out[n++] = c;
    }
    while (n > 0 && out[n - 1] == '-') n--;
    out[n] = '\0';
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < COUNT_OF(drop); i++) {
            size_t len = strlen(drop[i]);
            if (strncmp(out, drop[i], len) == 0) {
                memmove(out, out + len, strlen(out + len) + 1);
                again = 1;
            }
        }
    }
}

static int has_token(const char *norm, const char *tok)
{
    size_t len = strlen(tok);
    for (const char *p = norm; (p = strstr(p, tok)) != NULL; p++) {
        int start = p == norm || p[-1] == '-';
        int end = p[len] == '\0' || p[len] == '-';
        if (start && end) return 1;
    }
    return 0;
}

const hw_gpu *hw_gpu_find(const char *name)
{
    char norm[128];
    if (!name) return NULL;
    normalize(name, norm, sizeof norm);
    if (!norm[0]) return NULL;
    const hw_gpu *g = find_canonical(norm);
    if (g) return g;
    for (size_t i = 0; i < COUNT_OF(k_aliases); i++)
        if (strcmp(norm, k_aliases[i].alias) == 0) return by_name(k_aliases[i].name);
    for (size_t i = 0; i < COUNT_OF(k_rules); i++) {
        int ok = 1;
        for (int t = 0; t < 3 && k_rules[i].tok[t]; t++)
            if (!has_token(norm, k_rules[i].tok[t])) ok = 0;
        if (ok) return by_name(k_rules[i].name);
    }
    return NULL;
}

double hw_gpu_peak_tflops(const hw_gpu *gpu, const char *dtype)
{
    if (!gpu || !dtype) return 0;
    if (strcmp(dtype, "bf16") == 0) return gpu->bf16_tflops;
    if (strcmp(dtype, "fp16") == 0) return gpu->fp16_tflops;
    if (strcmp(dtype, "fp8") == 0) return gpu->fp8_tflops;
    if (strcmp(dtype, "tf32") == 0) return gpu->tf32_tflops;
    return 0;
}

double hw_gpu_nic_gbps_per_gpu(const hw_gpu *gpu)
{
    if (!gpu || gpu->gpus_per_node <= 0) return 0;
    return cp_gbit_s_to_gbps(gpu->nics_per_node * gpu->nic_gbit_s) / gpu->gpus_per_node;
}

double hw_gpu_expected_busbw_gbps(const hw_gpu *gpu, int per_node, int spans_nodes)
{
    if (!gpu) return 0;
    if (!spans_nodes) return gpu->scaleup_gbps * HW_SCALEUP_BUSBW_FRAC;
    int g = per_node < 1 ? 1 : (per_node > gpu->gpus_per_node ? gpu->gpus_per_node : per_node);
    return g * hw_gpu_nic_gbps_per_gpu(gpu) * HW_NET_BUSBW_FRAC;
}

/* FP32 and FP64 results per clock per SM by compute capability (add,
 * multiply, multiply-add): the CUDA C++ Programming Guide, "Arithmetic
 * Instructions" throughput table (6.0: 64/32, 6.1-6.2: 128/4, 7.x: 64/32
 * (7.5: 64/2), 8.0: 64/32, 8.6-8.9: 128/2, 9.0: 128/64, 10.x: 128/64,
 * 12.x: 128/2). The CUDA-core ceilings of the roofline when a catalog row
 * has none. */
static const struct { int major, minor; int fp32, fp64; } k_cc_lanes[] = {
    {6, 0, 64, 32},   {6, 1, 128, 4},  {6, 2, 128, 4},  {7, 0, 64, 32}, {7, 2, 64, 32},
    {7, 5, 64, 2},    {8, 0, 64, 32},  {8, 6, 128, 2},  {8, 7, 128, 2}, {8, 9, 128, 2},
    {9, 0, 128, 64},  {10, 0, 128, 64}, {10, 3, 128, 64}, {12, 0, 128, 2}, {12, 1, 128, 2},
};

int hw_cc_lanes_per_sm(int major, int minor, int *fp64)
{
    for (size_t i = 0; i < COUNT_OF(k_cc_lanes); i++)
        if (k_cc_lanes[i].major == major && k_cc_lanes[i].minor == minor) {
            if (fp64)
                *fp64 = k_cc_lanes[i].fp64;
            return k_cc_lanes[i].fp32;
        }
    if (fp64)
        *fp64 = 0;
    return 0;
}
