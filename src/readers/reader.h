/* reader.h - trace readers: formats that fill the timeline.
 *
 * A trace reader reads one input file into one tl_builder (its own thread;
 * never touch shared state). It sniffs content, not names: analyze asks
 * every reader for a confidence on the first bytes of each input and gives
 * the file to the most confident one.
 *
 * Checklist for a new trace reader (one file + one table row):
 *   1. src/readers/rd_<fmt>.c with rd_<fmt>_sniff and rd_<fmt>_read;
 *   2. X(<fmt>, "description") in readers.def;
 *   3. fill the builder: tl_builder_meta (rank, clock base, device info),
 *      tracks via tl_builder_track, events via tl_builder_add with the
 *      category that matches Kineto's meaning (tl_cat.def), correlation ids
 *      for launch<->GPU links, args via tl_builder_arg_*;
 *   4. count every skipped/clamped item in tl_builder_diag (diag.def codes),
 *      never abort on a bad record; return CP_ERR_FORMAT with the file and
 *      offset only when the file is not this format at all;
 *   5. fixtures in tests/fixtures/<fmt>/, unit tests, a fuzz target
 *      tests/fuzz/fuzz_<fmt>.c with a seed corpus;
 *   6. the format in docs/FORMATS.md.
 */
#ifndef CP_READERS_READER_H
#define CP_READERS_READER_H

#include "../base/error.h"
#include "../model/timeline.h"

#include <stddef.h>

typedef struct rd_opts {
    /* A file that holds several ranks (an nsys report of several processes)
     * asks for one more builder per extra rank; the caller owns them and
     * passes them all to tl_finish. NULL when the caller cannot take more
     * (the reader then merges into the given builder and says so). */
    tl_builder *(*more)(void *ctx, const char *source);
    void *more_ctx;
    /* --rank-map "PID=RANK[,PID=RANK...]": ranks of processes in formats
     * that have no rank of their own (nsys); NULL when not given. */
    const char *rank_map;
    /* Threads this reader may use for this one input (<= 1: the calling
     * thread only). A reader that splits an input must give the same
     * result for every value. */
    int threads;
    /* Rows per part when a reader splits an input (0: the reader's own
     * default); tests set it small to split small inputs. */
    size_t split_rows;
} rd_opts;

typedef struct rd_trace_reader {
    const char *name;
    const char *description;
    /* Confidence 0..100 that `head` (the first n decompressed bytes of
     * path) starts a file of this format. */
    int (*sniff)(const char *path, const unsigned char *head, size_t n);
    int (*read)(const char *path, tl_builder *b, const rd_opts *o, cp_error *err);
} rd_trace_reader;

/* The table, NULL-name terminated. */
const rd_trace_reader *rd_trace_readers(void);

/* Bytes of each input handed to sniffers. */
#define RD_SNIFF_BYTES 65536

/* Best trace reader for a file whose head was read, or NULL when no reader
 * is at least 50 confident. */
const rd_trace_reader *rd_detect(const char *path, const unsigned char *head, size_t n);

#endif
