/* ev_ncu.h - facts of Nsight Compute (ncu) results: one record per profiled
 * kernel launch with what ncu measured (ev_ncu.def: duration, speed-of-light
 * percentages, bytes per memory level, occupancy and its limits, instruction
 * counters, device attributes), ncu's own rule messages, and how much of the
 * file was not understood. Filled by src/readers/rd_ncu.c from the three
 * forms ncu writes (details CSV, raw CSV, plain-text details) and from
 * .ncu-rep files through `ncu --import`.
 *
 * Nothing here judges: the roofline position and the class of a kernel are
 * the analysis' (src/analysis/an_roofline.c), from these values and the
 * hardware catalog. Units: the base unit of each row's dimension (ns, bytes,
 * Hz, %, bytes/s, plain counts); NaN when the file does not have the value.
 * The struct owns its arrays: ev_ncu_free.
 */
#ifndef CP_MODEL_EV_NCU_H
#define CP_MODEL_EV_NCU_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

#define EV_NCU_MAX_LAUNCHES 100000
#define EV_NCU_NAME_MAX 4096 /* bytes of a kernel name kept (PyTorch's run to kilobytes) */
#define EV_NCU_MAX_RULES 8   /* ncu rule messages kept per launch (the rest counted) */
#define EV_NCU_RULE_TEXT 240
#define EV_NCU_MAX_UNMAPPED 8 /* names of unmapped metrics kept for the report */
#define EV_NCU_MAX_STALLS 24  /* warp-stall reasons kept per launch */

typedef enum ev_ncu_dim {
    EV_NCU_D_TIME = 0, /* ns */
    EV_NCU_D_BYTES,    /* bytes */
    EV_NCU_D_FREQ,     /* Hz */
    EV_NCU_D_PCT,      /* percent */
    EV_NCU_D_RATE,     /* bytes per second */
    EV_NCU_D_COUNT,    /* cycles, instructions, warps, blocks, registers, ... */
} ev_ncu_dim;

typedef enum ev_ncu_metric {
#define X(e, key, dim, title) EV_NCU_##e,
#include "ev_ncu.def"
#undef X
    EV_NCU__COUNT
} ev_ncu_metric;

const char *ev_ncu_metric_key(ev_ncu_metric m);
const char *ev_ncu_metric_title(ev_ncu_metric m);
ev_ncu_dim ev_ncu_metric_dim(ev_ncu_metric m);

typedef enum ev_ncu_form {
    EV_NCU_FORM_DETAILS_CSV = 0, /* ncu --csv (details page: one row per metric) */
    EV_NCU_FORM_RAW_CSV,         /* ncu --csv --page raw (one row per launch) */
    EV_NCU_FORM_TEXT,            /* ncu's default plain-text details */
} ev_ncu_form;

const char *ev_ncu_form_key(ev_ncu_form f); /* "details_csv", "raw_csv", "text" */

/* One of ncu's rule messages (OPT/WRN/INF paragraphs, or a rule row of the
 * details CSV). */
typedef struct ev_ncu_rule {
    char type[8];          /* "OPT", "WRN", "INF", "ERROR", ... */
    char name[48];         /* rule name (CSV only), "" */
    double speedup_pct;    /* "Estimated Speedup", NaN when not given */
    uint32_t line;
    char text[EV_NCU_RULE_TEXT];
} ev_ncu_rule;

/* One warp-stall reason: from the warp-state counters
 * (smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio:
 * cycles per issued instruction), the source counters' samples
 * (smsp__pcsamp_warps_issue_stalled_<reason>), or ncu's CPIStall rule text
 * ("spends 12.2 cycles being stalled waiting for ..."). */
typedef struct ev_ncu_stall {
    char reason[96];       /* "long_scoreboard", or the rule's words */
    double cycles;         /* per issued instruction; NaN unknown */
    double samples;        /* PC samples; NaN unknown */
} ev_ncu_stall;

typedef struct ev_ncu_launch {
    long id;               /* ncu's launch ID ("ID" column); -1 in text (then the order) */
    char *name;            /* the kernel as ncu prints it (demangled), cut at EV_NCU_NAME_MAX */
    int64_t pid;           /* -1 unknown */
    int context, stream, device; /* -1 unknown */
    int cc_major, cc_minor;      /* -1 unknown (2022-era text has no CC) */
    int grid[3], block[3];       /* 0 unknown */
    char device_name[64];        /* device__attribute_display_name, "" */
    double v[EV_NCU__COUNT];     /* NaN unknown */
    int n_rules;
    long rules_dropped;
    ev_ncu_rule rules[EV_NCU_MAX_RULES];
    int n_stalls;
    ev_ncu_stall stalls[EV_NCU_MAX_STALLS];
    uint32_t line;               /* first line of the launch */
} ev_ncu_launch;

typedef struct ev_ncu {
    ev_ncu_form form;
    ev_ncu_launch *launches;
    size_t n, cap;
    long values_read;       /* mapped values stored */
    long values_na;         /* values ncu printed as n/a */
    long metrics_unmapped;  /* distinct metric names no row of ncu_names.def maps */
    int n_unmapped_names;
    char unmapped[EV_NCU_MAX_UNMAPPED][64];
} ev_ncu;

/* The launch's value of m (NaN unknown). */
static inline double ev_ncu_get(const ev_ncu_launch *l, ev_ncu_metric m) { return l->v[m]; }

void ev_ncu_free(ev_ncu *r);
void ev_ncu_report(const ev_ncu *r, rep_report *rp, rep_node *obj);

#endif
