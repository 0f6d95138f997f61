/* smi_query.h - reader of `nvidia-smi -q` (and `-q -d ECC,ROW_REMAPPER,
 * PAGE_RETIREMENT`) text output: per GPU, the ECC error counters, retired
 * pages and row-remapping state.
 *
 * The format is an indented "Key : Value" tree; a GPU starts at an
 * unindented "GPU 00000000:07:00.0" line. The reader keeps the chain of
 * section titles by indentation ("ECC Errors" > "Volatile" > "DRAM
 * Uncorrectable") and adds up the counters it knows in both layouts:
 * Ampere+ ("SRAM Correctable", "DRAM Uncorrectable", ...) and pre-Ampere
 * ("Single Bit" / "Double Bit" > "Total"). "N/A" values stay unknown (-1).
 *
 * Use like the other readers: init, line per line, finish. Plain data owned
 * by the caller; `file` is borrowed; at most RD_SMIQ_MAX_GPUS GPUs.
 */
#ifndef CP_READERS_SMI_QUERY_H
#define CP_READERS_SMI_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#define RD_SMIQ_MAX_GPUS 32
#define RD_SMIQ_TEXT_MAX 160

typedef struct rd_smiq_gpu {
    char bus_id[24];          /* "00000000:07:00.0" */
    char product[64];
    long line;                /* line of the "GPU ..." header */
    long volatile_corr, volatile_uncorr;   /* ECC errors since driver load; -1 unknown */
    long aggregate_corr, aggregate_uncorr; /* lifetime */
    long retired_sbe, retired_dbe;         /* retired pages (pre-Ampere) */
    int retire_pending;                    /* "Pending Page Blacklist/Retirement": 1 yes, 0 no, -1 */
    long remap_corr, remap_uncorr;         /* rows remapped (Ampere+) */
    int remap_pending;                     /* 1 yes, 0 no, -1 unknown */
    int remap_failure;                     /* "Remapping Failure Occurred" */
    long line_ecc, line_retire, line_remap_pending, line_remap_failure; /* evidence */
    char text_ecc[RD_SMIQ_TEXT_MAX], text_remap[RD_SMIQ_TEXT_MAX], text_retire[RD_SMIQ_TEXT_MAX];
} rd_smiq_gpu;

typedef struct rd_smiq_facts {
    const char *file;   /* borrowed */
    long lines;
    bool recognised;    /* saw the NVSMI LOG banner or "Attached GPUs" */
    char driver[32];
    rd_smiq_gpu gpus[RD_SMIQ_MAX_GPUS];
    int n_gpus;
    long gpus_dropped;
    /* private: section titles by indentation level */
    char sect_[6][40];
    int indent_[6];
    int depth_;
} rd_smiq_facts;

void rd_smiq_init(rd_smiq_facts *f, const char *file);
void rd_smiq_line(rd_smiq_facts *f, const char *line, size_t len, long lineno);
void rd_smiq_finish(rd_smiq_facts *f);
void rd_smiq_parse_buf(rd_smiq_facts *f, const char *file, const char *buf, size_t len);

/* Does the start of a file look like nvidia-smi -q output? */
bool rd_smiq_sniff(const char *buf, size_t len);

#endif
