/* ev_dmon.h - facts of `nvidia-smi dmon` and `dcgmi dmon` samples: the
 * columns (union of every header, first-seen order), the entities (GPUs and
 * MIG instances: "GPU 2", "GPU-I 1", "GPU-CI 3"), one value per column per
 * sample, and summary statistics per entity and column. Filled by
 * src/readers/rd_dmon.c. The struct owns its arrays: free with ev_dmon_free.
 */
#ifndef CP_MODEL_EV_DMON_H
#define CP_MODEL_EV_DMON_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

#define EV_DMON_MAX_COLS 96
#define EV_DMON_MAX_ENTITIES 4096
#define EV_DMON_MAX_SAMPLES 2000000

typedef enum ev_dmon_flavor {
    EV_DMON_NVIDIA_SMI = 0,
    EV_DMON_DCGMI,
} ev_dmon_flavor;

typedef struct ev_dmon_col {
    char name[24];   /* as printed: "sm", "pwr", "SMACT" */
    char unit[16];   /* from the nvidia-smi unit line ("%", "W", "MHz"); "" */
    uint32_t line;   /* header line where first seen */
} ev_dmon_col;

enum { EV_DMON_GPU = 0, EV_DMON_GPU_I, EV_DMON_GPU_CI };

typedef struct ev_dmon_entity {
    char name[32];   /* "0" (nvidia-smi gpu index) or "GPU 2" (dcgmi) */
    int gpu;         /* GPU index when the entity is a GPU; -1 otherwise */
    int mig;         /* EV_DMON_GPU, or a MIG entity: EV_DMON_GPU_I ("GPU-I n", a
                      * GPU instance), EV_DMON_GPU_CI ("GPU-CI n", a compute instance) */
    uint32_t n_samples;
} ev_dmon_entity;

typedef struct ev_dmon_sample {
    uint32_t entity;
    uint32_t seq;    /* 0-based sample number within its entity */
    uint32_t line;
    char time[24];   /* "Date Time" text with -o DT; "" otherwise */
} ev_dmon_sample;

typedef struct ev_dmon_stat {
    uint32_t n;      /* samples with a value */
    double min, max, mean; /* NaN when n == 0 */
} ev_dmon_stat;

typedef struct ev_dmon {
    ev_dmon_flavor flavor;
    ev_dmon_col cols[EV_DMON_MAX_COLS];
    size_t n_cols;
    ev_dmon_entity *entities;
    size_t n_entities, cap_entities;
    ev_dmon_sample *samples;
    double *values;              /* n_samples * n_cols, row-major; NaN = none */
    size_t n_samples, cap_samples;
    ev_dmon_stat *stats;         /* n_entities * n_cols: stats[e * n_cols + c] */
    ev_dmon_stat *col_stats;     /* n_cols: over all entities */
    uint32_t first_header_line;
} ev_dmon;

/* Column index by name (case-insensitive), or -1. */
int ev_dmon_col_find(const ev_dmon *d, const char *name);
/* Value of column c in sample s (NaN when absent). */
double ev_dmon_value(const ev_dmon *d, size_t s, size_t c);
/* Stats of column c for entity e, or over all entities when e is
 * EV_DMON_ALL; NULL when out of range. */
#define EV_DMON_ALL ((size_t)-1)
const ev_dmon_stat *ev_dmon_stat_of(const ev_dmon *d, size_t e, size_t c);

/* Fill stats and col_stats from the samples (replacing none: call once,
 * when every sample is in). The dmon reader and the monitor's GPU window
 * (src/monitor/mon_evidence.c) both end with it. */
void ev_dmon_compute_stats(ev_dmon *d);

void ev_dmon_free(ev_dmon *d);
void ev_dmon_report(const ev_dmon *d, rep_report *rp, rep_node *obj);

#endif
