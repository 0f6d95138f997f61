/* an_expert.h - results of the expert rules (Nsight Systems' rules, applied
 * to any timeline), for the findings engine. */
#ifndef CP_ANALYSIS_AN_EXPERT_H
#define CP_ANALYSIS_AN_EXPERT_H

#include <stddef.h>
#include <stdint.h>

typedef enum an_expert_rule {
    AN_EXPERT_GPU_GAPS = 0,      /* nsys gpu_gaps */
    AN_EXPERT_GPU_TIME_UTIL,     /* nsys gpu_time_util */
    AN_EXPERT_MEMCPY_SYNC,       /* nsys cuda_memcpy_sync */
    AN_EXPERT_MEMSET_SYNC,       /* nsys cuda_memset_sync */
    AN_EXPERT_MEMCPY_PAGEABLE,   /* nsys cuda_memcpy_async (pageable memory) */
    AN_EXPERT_API_SYNC,          /* nsys cuda_api_sync */
    AN_EXPERT__COUNT
} an_expert_rule;

typedef struct an_expert_hits {
    uint64_t count;
    int64_t total_ns;  /* time the flagged items take (gap, chunk idle, call) */
} an_expert_hits;

typedef struct an_expert_results {
    void (*free)(void *self);
    size_t n_ranks;
    an_expert_hits *hits; /* [rank_index * AN_EXPERT__COUNT + rule] */
} an_expert_results;

/* Defaults, as Nsight Systems documents them for its rules. */
#define AN_EXPERT_GAP_MIN_NS (500 * 1000000LL) /* gpu_gaps: gap >= 500 ms */
#define AN_EXPERT_UTIL_CHUNKS 30               /* gpu_time_util: equal chunks */
#define AN_EXPERT_UTIL_THRESHOLD_PCT 50.0      /* gpu_time_util: flag below 50 % */

const char *an_expert_rule_key(an_expert_rule r);

#endif
