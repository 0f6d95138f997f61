/* gpu_dl.h - the dlopen helpers every vendor back-end of src/gpu shares:
 * open the first library of a list of names (only in CHAINPROF_GPU_LIB_DIR
 * when set, so tests load the fakes) and resolve a table of symbols into a
 * struct of function pointers. gpu.c (CUDA runtime, NVML peaks, cuBLASLt,
 * NCCL) and gpu_nvml.c (the monitor's NVML sampler) use the same two. */
#ifndef CP_GPU_GPU_DL_H
#define CP_GPU_GPU_DL_H

#include <stddef.h>

typedef struct gpu_sym {
    const char *name;
    size_t offset; /* of the function pointer in the struct resolved into */
} gpu_sym;

/* dlopen the first of names found; path receives the one opened, or the
 * first name tried when none was. NULL when none loads. */
void *gpu_dl_open(const char *const *names, size_t n, char *path, size_t path_size);
/* Resolve every symbol of tab into obj; returns the first missing name or
 * NULL. */
const char *gpu_dl_resolve(void *h, void *obj, const gpu_sym *tab, size_t n);
/* Resolve what of tab the library has (the others are left as they are,
 * NULL); returns how many were found. For symbols newer drivers add. */
size_t gpu_dl_resolve_optional(void *h, void *obj, const gpu_sym *tab, size_t n);

#endif
