/* ev_frdump.h - facts of one rank's PyTorch Flight Recorder dump
 * (TORCH_NCCL_TRACE_BUFFER_SIZE + TORCH_NCCL_DUMP_ON_TIMEOUT: the rank's last
 * collectives and point-to-point operations, one file per rank, as a pickle
 * or as JSON).
 *
 * Kept: what the cross-rank matcher (src/analysis/an_rules_fr.c) needs and
 * what the verdict shows, per entry in a fixed-size record (strings are ids
 * of one interning table per dump, so repeated op names, shapes and stacks
 * cost once): the process group, collective_seq_id / p2p_seq_id, record_id
 * (ring buffers that dropped old entries differ by rank), the op, its state,
 * input/output shapes as a signature and as text, dtypes, the peers of a
 * send/recv (group ranks, from "nccl:send 0->1"), and the innermost frames.
 * Process groups come from the dump's pg_config: name, desc and member
 * ranks (global ranks).
 *
 * Filled by src/readers/rd_frdump.c. Plain data (ev_frdump_free).
 */
#ifndef CP_MODEL_EV_FRDUMP_H
#define CP_MODEL_EV_FRDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/intern.h"
#include "report.h"

#define EV_FR_MAX_ENTRIES 1000000 /* per dump; more are counted in dropped */
#define EV_FR_MAX_PGS 65535
#define EV_FR_MAX_PG_RANKS (1 << 20)

typedef enum ev_fr_state {
    EV_FR_SCHEDULED = 0, /* enqueued; its start event not yet seen */
    EV_FR_STARTED,       /* the kernel started, not finished */
    EV_FR_COMPLETED,
    EV_FR_STATE_UNKNOWN,
} ev_fr_state;
const char *ev_fr_state_name(int state); /* "scheduled", ... */

typedef struct ev_fr_pg {
    uint32_t name;       /* intern id: pg_config key ("0", a hash) */
    uint32_t desc;       /* "default_pg", "undefined", user text */
    uint32_t first_rank; /* index into ev_frdump.ranks */
    uint32_t n_ranks;    /* members (global ranks, ascending); 0 when unknown */
    uint64_t ranks_hash; /* of the sorted members: one group's identity across ranks */
} ev_fr_pg;

typedef struct ev_fr_entry {
    int64_t record_id;   /* ring-buffer id (per rank, increasing) */
    int64_t coll_seq;    /* collective_seq_id; -1 missing */
    int64_t p2p_seq;     /* p2p_seq_id; -1 missing */
    int64_t created_ns;  /* time_created_ns; 0 missing */
    uint64_t in_sig, out_sig; /* hashes of the input/output shapes */
    uint32_t op;         /* intern id: "all_reduce", "send", "coalesced" (profiling_name without "nccl:") */
    uint32_t sizes;      /* intern id: "in [[1024]] out [[1024]]" */
    uint32_t in_dtypes, out_dtypes; /* intern ids: "Float,Float" */
    uint32_t frames;     /* intern id: innermost frames "fn (file:line) < ..."; 0 = "" */
    uint16_t pg;         /* index into ev_frdump.pgs */
    int16_t src, dst;    /* send/recv: group ranks (-1 other ops) */
    uint8_t state;       /* ev_fr_state */
    bool is_p2p;
    bool has_in, has_out; /* a non-empty first input / output shape */
} ev_fr_entry;

typedef struct ev_frdump {
    int rank;            /* the dump's rank: its own field, else the file name's suffix; -1 */
    bool rank_from_name;
    char version[16];    /* "2.5" ... ; "" missing */
    char format[8];      /* "pickle" or "json" */
    bool damaged;        /* could not be decoded to its end (truncated or corrupt) */
    char error[200];     /* why, with the byte offset; "" */
    cp_intern strs;      /* every string of the entries and groups */
    ev_fr_pg *pgs;
    size_t n_pgs;
    int32_t *ranks;      /* pg members, concatenated */
    size_t n_ranks;
    ev_fr_entry *entries; /* in record_id order */
    size_t n_entries;
    long dropped;        /* entries past EV_FR_MAX_ENTRIES */
    long bad_entries;    /* entries without the keys matching needs (skipped) */
    long missing_keys;   /* optional keys absent (read without them) */
} ev_frdump;

static inline const char *ev_fr_str(const ev_frdump *d, uint32_t id) { return cp_intern_str(&d->strs, id); }
/* The members of a group (global ranks), count in *n; NULL when none. */
const int32_t *ev_fr_pg_ranks(const ev_frdump *d, const ev_fr_pg *pg, uint32_t *n);

void ev_frdump_free(ev_frdump *d);
void ev_frdump_report(const ev_frdump *d, rep_report *r, rep_node *obj);

#endif
