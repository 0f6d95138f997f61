/* fuzz_memtl.c - libFuzzer target for the raw memory timeline reader:
 * arbitrary bytes through sniffing, a memory byte source, the reader and
 * the timeline's finish step. Seeds: tests/fuzz/corpus/memtl. */
#include "readers/rd_memtl.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *name = "fuzz/memory_timeline.raw";
    (void)rd_memtl_sniff(name, data, size);
    tl_builder *b = tl_builder_new(name);
    cp_src *s = cp_src_open_mem(data, size, name);
    cp_error err;
    cp_error_clear(&err);
    int rc = rd_memtl_read_src(s, name, b, &err);
    cp_src_close(s);
    if (rc < 0) {
        tl_builder_free(b);
        return 0;
    }
    tl_timeline *tl = NULL;
    if (tl_finish(&b, 1, NULL, &tl, &err) == 0)
        tl_free(tl);
    return 0;
}
