/* fuzz_kineto.c - libFuzzer target for the Kineto reader: arbitrary bytes
 * through sniffing, a memory byte source, the reader, and the timeline's
 * finish step. Seeds: tests/fuzz/corpus/kineto (replayed by ctest). */
#include "readers/rd_kineto.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *name = "fuzz/rank-3.json"; /* also exercises the file-name rank rule */
    (void)rd_kineto_sniff(name, data, size);
    tl_builder *b = tl_builder_new(name);
    cp_src *s = cp_src_open_mem(data, size, name);
    cp_error err;
    cp_error_clear(&err);
    int rc = rd_kineto_read_src(s, name, b, &err);
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
