/* readers.c - the trace reader table and content sniffing. */
#include "reader.h"

#include <stddef.h>

#define X(name, desc)                                                                \
    int rd_##name##_sniff(const char *path, const unsigned char *head, size_t n);   \
    int rd_##name##_read(const char *path, tl_builder *b, const rd_opts *o, cp_error *err);
#include "readers.def"
#undef X

static const rd_trace_reader table[] = {
#define X(name, desc) { #name, desc, rd_##name##_sniff, rd_##name##_read },
#include "readers.def"
#undef X
    { NULL, NULL, NULL, NULL },
};

const rd_trace_reader *rd_trace_readers(void) { return table; }

const rd_trace_reader *rd_detect(const char *path, const unsigned char *head, size_t n)
{
    const rd_trace_reader *best = NULL;
    int best_score = 49;
    for (const rd_trace_reader *r = table; r->name; r++) {
        int s = r->sniff(path, head, n);
        if (s > best_score) {
            best_score = s;
            best = r;
        }
    }
    return best;
}
