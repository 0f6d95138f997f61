/* ev_smiq.h - facts of `nvidia-smi -q` (and `-q -d ECC,ROW_REMAPPER,
 * PAGE_RETIREMENT`): per GPU, the ECC error counters, retired pages and the
 * row-remapping state. Filled by src/readers/smi_query.c. "N/A" values stay
 * unknown (-1). Plain data (ev_smiq_free).
 */
#ifndef CP_MODEL_EV_SMIQ_H
#define CP_MODEL_EV_SMIQ_H

#include <stdbool.h>

#include "ev_base.h"
#include "report.h"

#define EV_SMIQ_MAX_GPUS 32
#define EV_SMIQ_TEXT_MAX 160

typedef struct ev_smiq_gpu {
    char bus_id[24];          /* "00000000:07:00.0"; "" for an excerpt without the GPU line */
    char product[64];
    long line;                /* line of the "GPU ..." header (first fact for an excerpt) */
    long volatile_corr, volatile_uncorr;   /* ECC errors since driver load; -1 unknown */
    long aggregate_corr, aggregate_uncorr; /* lifetime */
    long retired_sbe, retired_dbe;         /* retired pages (pre-Ampere) */
    int retire_pending;                    /* "Pending Page Blacklist/Retirement": 1 yes, 0 no, -1 */
    long remap_corr, remap_uncorr;         /* rows remapped (Ampere+) */
    int remap_pending;                     /* 1 yes, 0 no, -1 unknown */
    int remap_failure;                     /* "Remapping Failure Occurred" */
    long line_ecc, line_retire, line_remap_pending, line_remap_failure, line_remap_uncorr; /* evidence */
    char text_ecc[EV_SMIQ_TEXT_MAX], text_remap[EV_SMIQ_TEXT_MAX], text_retire[EV_SMIQ_TEXT_MAX];
} ev_smiq_gpu;

typedef struct ev_smiq {
    long lines;
    bool recognised;    /* saw the NVSMI LOG banner, "Attached GPUs" or an ECC/remap section */
    char driver[32];
    int n_gpus;
    long gpus_dropped;
    ev_smiq_gpu gpus[EV_SMIQ_MAX_GPUS];
} ev_smiq;

void ev_smiq_free(ev_smiq *f);
void ev_smiq_report(const ev_smiq *f, rep_report *r, rep_node *obj);

#endif
