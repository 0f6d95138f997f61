/* rd_nsys.h - pieces of the Nsight Systems reader that tests and the fuzz
 * target reach directly: name normalization and NVTX payload decoding. */
#ifndef CP_READERS_RD_NSYS_H
#define CP_READERS_RD_NSYS_H

#include "reader.h"

#include <stddef.h>
#include <stdint.h>

/* The reader's entry points (readers.def lists them; declared here for
 * bench/bench_nsys_read.c and the tests). */
int rd_nsys_sniff(const char *path, const unsigned char *head, size_t n);
int rd_nsys_read(const char *path, tl_builder *b, const rd_opts *o, cp_error *err);

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (in place, returns s). */
char *rd_nsys_normalize_api(char *s);

/* PyTorch emit_nvtx range texts "aten::mm, seq = 3, op_id = 17, sizes = [...]"
 * -> length of the op name ("aten::mm"); 0 when the text is not such a range. */
size_t rd_nsys_torch_op_len(const char *text);

/* One entry of an NVTX payload schema (NVTX_PAYLOAD_SCHEMA_ENTRIES). */
typedef struct rd_nvtx_entry {
    uint64_t type;   /* NVTX_PAYLOAD_ENTRY_TYPE_* */
    uint64_t offset; /* byte offset in the payload blob */
    const char *name;
} rd_nvtx_entry;

typedef struct rd_nvtx_value {
    const char *name;  /* borrowed from the entry */
    int is_float;
    int64_t i;
    double d;
} rd_nvtx_value;

/* Decode the scalar entries of a payload blob with the LP64 sizes of the
 * NVTX payload types. Entries that do not fit inside the blob, and types that
 * are not scalars, are skipped. Returns the number of values written (at most
 * max_out); *skipped counts the entries that could not be decoded. */
size_t rd_nvtx_decode(const rd_nvtx_entry *entries, size_t n_entries, const uint8_t *blob, size_t len,
                      rd_nvtx_value *out, size_t max_out, size_t *skipped);

/* Binary payloads may be exported as raw bytes or as hex text; turn either
 * into bytes. Returns the byte count written to out (at most cap). */
size_t rd_nvtx_blob_bytes(const uint8_t *data, size_t n, int is_text, uint8_t *out, size_t cap);

#endif
