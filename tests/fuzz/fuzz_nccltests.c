/* fuzz_nccltests.c - nccl-tests reader on arbitrary bytes: parse, then walk
 * every fact the analyzers read, so a bad index or a wild pointer shows up
 * under ASan. The buffer is not NUL-terminated on purpose. */
#include <stddef.h>
#include <stdint.h>

#include "readers/rd_nccltests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    (void)rd_nccltests_sniff(s, size);
    ev_nccltests *r = NULL;
    if (rd_ev_parse(EV_NCCL_TESTS, s, size, "fuzz", (void **)&r, NULL, NULL) < 0)
        return 0;
    volatile double sink = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        const ev_nt_run *run = &r->runs[i];
        double best;
        if (ev_nt_max_busbw(run, &best))
            sink += best;
        for (size_t j = 0; j < run->n_rows; j++)
            sink += ev_nt_row_busbw(&run->rows[j]) + (double)run->rows[j].line;
        for (size_t j = 0; j < run->n_devices; j++)
            sink += run->devices[j].rank + run->devices[j].host[0];
    }
    (void)sink;
    ev_nccltests_free(r);
    return 0;
}
