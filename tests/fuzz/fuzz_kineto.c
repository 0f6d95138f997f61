/* fuzz_kineto.c - libFuzzer target for the Kineto reader: arbitrary bytes
 * through sniffing, a memory byte source, the reader, and the timeline's
 * finish step. Seeds: tests/fuzz/corpus/kineto (replayed by ctest). */
#include "fuzz_read.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *name = "fuzz/rank-3.json"; /* also exercises the file-name rank rule */
    (void)rd_kineto_sniff(name, data, size);
    tl_builder *b = fuzz_read_kineto(name, data, size);
    if (!b)
        return 0;
    cp_error err;
    cp_error_clear(&err);
    tl_timeline *tl = NULL;
    if (tl_finish(&b, 1, NULL, &tl, &err) == 0)
        tl_free(tl);
    return 0;
}
