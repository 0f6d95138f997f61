/* fuzz_read.h - the Kineto read the fuzz targets share: arbitrary bytes
 * through a memory byte source and the reader into a new builder (NULL when
 * the reader rejects them). */
#ifndef CP_FUZZ_READ_H
#define CP_FUZZ_READ_H

#include "readers/rd_kineto.h"

#include <stdint.h>

static inline tl_builder *fuzz_read_kineto(const char *name, const uint8_t *data, size_t size)
{
    tl_builder *b = tl_builder_new(name);
    cp_src *s = cp_src_open_mem(data, size, name);
    cp_error err;
    cp_error_clear(&err);
    int rc = rd_kineto_read_src(s, name, b, &err);
    cp_src_close(s);
    if (rc < 0) {
        tl_builder_free(b);
        return NULL;
    }
    return b;
}

#endif
