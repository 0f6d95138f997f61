/* col_cupti_abi.h - the collector's own declarations of the CUPTI activity
 * API it loads with dlopen: the entry points, the kinds and the leading
 * fields of the records it reads.
 *
 * CUPTI delivers each record in the layout of the newest record version of
 * the library at hand (CUpti_ActivityKernel9 in CUDA 12.x, Kernel10 in 13.x); the fields
 * read here are the leading ones, which every version since CUDA 11 keeps
 * at the same offsets. tests/vendor/check_collect_decls.c checks each
 * offset against cupti_activity.h when the build machine has it.
 */
#ifndef CP_COLLECT_COL_CUPTI_ABI_H
#define CP_COLLECT_COL_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

enum {
    CU_ACT_MEMCPY = 1, CU_ACT_MEMSET = 2, CU_ACT_KERNEL = 3, CU_ACT_CONCURRENT_KERNEL = 10,
    CU_ACT_EXTERNAL_CORRELATION = 39,
};
enum { CU_EXT_CUSTOM0 = 3 };          /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 */
enum { CU_FLUSH_FORCED = 1 };         /* CUPTI_ACTIVITY_FLAG_FLUSH_FORCED */
enum { CU_MAX_LIMIT_REACHED = 12 };   /* CUPTI_ERROR_MAX_LIMIT_REACHED: no more records */
/* CUpti_ActivityMemcpyKind / CUpti_ActivityMemoryKind values used */
enum { CU_MK_HTOD = 1, CU_MK_DTOH = 2, CU_MK_DTOD = 8, CU_MK_HTOH = 9, CU_MK_PTOP = 10 };
enum { CU_MEM_PAGEABLE = 1 };

/* CUpti_ActivityKernel9 (and its predecessors) up to the name */
typedef struct cu_kernel {
    uint32_t kind;
    uint8_t cache_config, shared_memory_config;
    uint16_t registers_per_thread;
    uint32_t partitioned_requested, partitioned_executed;
    uint64_t start, end, completed;
    uint32_t device_id, context_id, stream_id;
    int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
    int32_t static_shared_memory, dynamic_shared_memory;
    uint32_t local_memory_per_thread, local_memory_total;
    uint32_t correlation_id;
    int64_t grid_id;
    const char *name;
} cu_kernel;

/* CUpti_ActivityMemcpy5 up to the correlation id */
typedef struct cu_memcpy {
    uint32_t kind;
    uint8_t copy_kind, src_kind, dst_kind, flags;
    uint64_t bytes, start, end;
    uint32_t device_id, context_id, stream_id, correlation_id;
} cu_memcpy;

/* CUpti_ActivityMemset4 up to the correlation id */
typedef struct cu_memset {
    uint32_t kind;
    uint32_t value;
    uint64_t bytes, start, end;
    uint32_t device_id, context_id, stream_id, correlation_id;
} cu_memset;

/* CUpti_ActivityExternalCorrelation */
typedef struct cu_ext_corr {
    uint32_t kind;
    uint32_t external_kind;
    uint64_t external_id;
    uint32_t correlation_id;
    uint32_t reserved;
} cu_ext_corr;

typedef void (*cu_buffer_request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*cu_buffer_complete_fn)(void *context, uint32_t stream_id, uint8_t *buffer, size_t size,
                                      size_t valid_size);

typedef int (*cu_register_callbacks_fn)(cu_buffer_request_fn, cu_buffer_complete_fn);
typedef int (*cu_enable_fn)(int kind);
typedef int (*cu_flush_all_fn)(uint32_t flag);
typedef int (*cu_next_record_fn)(uint8_t *buffer, size_t valid_size, void **record);
typedef int (*cu_push_ext_fn)(int kind, uint64_t id);
typedef int (*cu_pop_ext_fn)(int kind, uint64_t *last);
typedef int (*cu_timestamp_fn)(uint64_t *ts);
typedef int (*cu_dropped_fn)(void *context, uint32_t stream_id, size_t *dropped);

#endif
