/* fuzz_cptrace.c - libFuzzer target for the `chainprof run` trace reader:
 * arbitrary bytes through sniffing, the reader (both passes and the NCCL
 * assembly) and the timeline's finish step. Seeds: tests/fuzz/corpus/cptrace
 * (traces the collector wrote, whole and cut; replayed by ctest). */
#include "readers/rd_cptrace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the reader expects the file's own alignment (a mapping): copy into
     * 8-aligned memory as mmap would give it */
    void *copy = NULL;
    if (posix_memalign(&copy, 64, size ? size : 1) != 0)
        return 0;
    if (size)
        memcpy(copy, data, size);
    (void)rd_cptrace_sniff("fuzz.cptrace", copy, size);
    tl_builder *b = tl_builder_new("fuzz.cptrace");
    cp_error err;
    cp_error_clear(&err);
    int rc = rd_cptrace_read_mem(copy, size, "fuzz.cptrace", b, &err);
    if (rc < 0) {
        tl_builder_free(b);
    } else {
        tl_timeline *tl = NULL;
        if (tl_finish(&b, 1, NULL, &tl, &err) == 0)
            tl_free(tl);
    }
    free(copy);
    return 0;
}
