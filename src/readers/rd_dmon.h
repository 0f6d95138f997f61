/* rd_dmon.h - reader for `nvidia-smi dmon` and `dcgmi dmon` output.
 *
 * Both print a '#'-prefixed header naming the columns and then one row per
 * entity per sampling interval; the header is repeated every so often and
 * may differ between blocks (another -s selection or -e field list pasted
 * below). Nothing is positional: columns are whatever the headers name.
 *   - nvidia-smi dmon: "# gpu pwr gtemp mtemp sm mem enc dec ..." (older
 *     drivers: "temp" and no gtemp/mtemp), an optional unit line
 *     "# Idx W C C % % ...", optional leading "Date"/"Time" columns (-o DT);
 *     "-" marks a value the GPU does not report.
 *   - dcgmi dmon: "#Entity" or "# EntityId" then DCGM field short names
 *     (GPUTL, SMACT, SMOCC, TENSO, DRAMA, PCITX, ...); the entity spans two
 *     words ("GPU 2", "GPU-I 1"); newer versions print an "ID" line under the
 *     header; "N/A" marks a missing value.
 * The column set of the file is the union of all headers (first-seen order),
 * so every sample has a slot for every column (NaN where its block had none).
 *
 * Result: samples (entity, sequence number within the entity, line, values)
 * and per column, per entity, summary statistics (n, min, max, mean).
 *
 * Ownership: rd_dmon_parse's result owns everything; free with rd_dmon_free.
 */
#ifndef CP_READERS_RD_DMON_H
#define CP_READERS_RD_DMON_H

#include <stddef.h>
#include <stdint.h>

#include "../model/report.h"
#include "rd_text.h"

#define RD_DMON_MAX_COLS 96
#define RD_DMON_MAX_ENTITIES 4096
#define RD_DMON_MAX_SAMPLES 2000000

typedef enum rd_dmon_flavor {
    RD_DMON_NVIDIA_SMI = 0,
    RD_DMON_DCGMI,
} rd_dmon_flavor;

typedef struct rd_dmon_col {
    char name[24];   /* as printed: "sm", "pwr", "SMACT" */
    char unit[16];   /* from the nvidia-smi unit line ("%", "W", "MHz"); "" */
    uint32_t line;   /* header line where first seen */
} rd_dmon_col;

typedef struct rd_dmon_entity {
    char name[32];   /* "0" (nvidia-smi gpu index) or "GPU 2" (dcgmi) */
    int gpu;         /* GPU index when the entity is a GPU; -1 otherwise */
    uint32_t n_samples;
} rd_dmon_entity;

typedef struct rd_dmon_sample {
    uint32_t entity;
    uint32_t seq;    /* 0-based sample number within its entity */
    uint32_t line;
    char time[24];   /* "Date Time" text with -o DT; "" otherwise */
} rd_dmon_sample;

typedef struct rd_dmon_stat {
    uint32_t n;      /* samples with a value */
    double min, max, mean; /* NaN when n == 0 */
} rd_dmon_stat;

typedef struct rd_dmon {
    char *name;
    rd_dmon_flavor flavor;
    rd_dmon_col cols[RD_DMON_MAX_COLS];
    size_t n_cols;
    rd_dmon_entity *entities;
    size_t n_entities, cap_entities;
    rd_dmon_sample *samples;
    double *values;              /* n_samples * n_cols, row-major; NaN = none */
    size_t n_samples, cap_samples;
    rd_dmon_stat *stats;         /* n_entities * n_cols: stats[e * n_cols + c] */
    rd_dmon_stat *col_stats;     /* n_cols: over all entities */
    uint32_t first_header_line;
    diag_set diag;   /* counted damage, "file:line" of the first of each code */
} rd_dmon;

int rd_dmon_sniff(const char *buf, size_t len);

/* Fails (CP_ERR_FORMAT) when no dmon header is found. */
int rd_dmon_parse(const char *data, size_t len, const char *name, rd_dmon **out, cp_error *err);

void rd_dmon_free(rd_dmon *d);

/* The facts analyze reports for this file (evidence[] entry), each with its
 * line, added to obj (evidence_report.c). */
void rd_dmon_report(const rd_dmon *facts, rep_report *r, rep_node *obj);

/* Column index by name (case-insensitive), or -1. */
int rd_dmon_col_find(const rd_dmon *d, const char *name);

/* Value of column c in sample s (NaN when absent). */
double rd_dmon_value(const rd_dmon *d, size_t s, size_t c);

/* Stats of column c for entity e, or over all entities when e is
 * RD_DMON_ALL; NULL when out of range. */
#define RD_DMON_ALL ((size_t)-1)
const rd_dmon_stat *rd_dmon_stat_of(const rd_dmon *d, size_t e, size_t c);

#endif
