/* col_class.c - the storage class of a file from its path (checkpoint,
 * dataset or other), the rule docs/METRICS.md ("storage classes") states:
 *   1. CHAINPROF_CKPT_DIRS / CHAINPROF_DATA_DIRS prefixes (--ckpt-dir,
 *      --data-dir);
 *   2. code is other: anything under an installed Python tree
 *      (site-packages, dist-packages, lib/python*) and .py, .pyc, .so files;
 *   3. a path component naming checkpoints ("checkpoint", "ckpt", any
 *      case) makes a checkpoint, else one naming data ("dataset" in it, or
 *      exactly "data") a dataset;
 *   4. the extension: .pt .pth .ckpt .safetensors .distcp are checkpoints;
 *      .npy .npz .arrow .parquet .tfrecord(s) .jsonl .idx .mds .lance .tar
 *      .rec are datasets;
 *   5. anything else is other.
 * A region around the call (the framework layer) overrides this (col_io.c).
 */
#include "col.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static bool prefix_list(const char *list, const char *path)
{
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        while (n > 1 && p[n - 1] == '/')
            n--;
        if (n && strncmp(path, p, n) == 0 && (path[n] == '/' || path[n] == 0))
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n >= k && strncasecmp(s + n - k, suf, k) == 0;
}

/* Class from one path component (dirs and the file name). */
static int component_class(const char *c, size_t n)
{
    char low[64];
    size_t k = n < sizeof low - 1 ? n : sizeof low - 1;
    for (size_t i = 0; i < k; i++)
        low[i] = (char)tolower((unsigned char)c[i]);
    low[k] = 0;
    if (strstr(low, "checkpoint") || strstr(low, "ckpt"))
        return CPT_IOC_CHECKPOINT;
    if (strstr(low, "dataset") || !strcmp(low, "data"))
        return CPT_IOC_DATASET;
    return CPT_IOC_OTHER;
}

int col_io_class_of_path(const char *path)
{
    if (prefix_list(col_p.ckpt_dirs, path))
        return CPT_IOC_CHECKPOINT;
    if (prefix_list(col_p.data_dirs, path))
        return CPT_IOC_DATASET;
    /* installed code is neither (Python's site .pth files are not PyTorch
     * checkpoints) */
    size_t n0 = strlen(path);
    if (strstr(path, "/site-packages/") || strstr(path, "/dist-packages/") || strstr(path, "/lib/python") ||
        ends_with(path, n0, ".py") || ends_with(path, n0, ".pyc") || ends_with(path, n0, ".so"))
        return CPT_IOC_OTHER;
    int cls = CPT_IOC_OTHER;
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int c = component_class(p, n);
        if (c == CPT_IOC_CHECKPOINT)
            return c; /* a checkpoint directory wins over a data one above it */
        if (c != CPT_IOC_OTHER)
            cls = c;
        p += n;
    }
    if (cls != CPT_IOC_OTHER)
        return cls;
    size_t n = strlen(path);
    static const char *const ckpt_ext[] = { ".pt", ".pth", ".ckpt", ".safetensors", ".distcp" };
    static const char *const data_ext[] = { ".npy", ".npz", ".arrow", ".parquet", ".tfrecord", ".tfrecords",
                                            ".jsonl", ".idx", ".mds", ".lance", ".tar", ".rec" };
    for (size_t i = 0; i < sizeof ckpt_ext / sizeof *ckpt_ext; i++)
        if (ends_with(path, n, ckpt_ext[i]))
            return CPT_IOC_CHECKPOINT;
    for (size_t i = 0; i < sizeof data_ext / sizeof *data_ext; i++)
        if (ends_with(path, n, data_ext[i]))
            return CPT_IOC_DATASET;
    return CPT_IOC_OTHER;
}

