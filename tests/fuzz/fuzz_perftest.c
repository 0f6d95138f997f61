/* fuzz_perftest.c - perftest reader on arbitrary bytes (not NUL-terminated). */
#include <stddef.h>
#include <stdint.h>

#include "readers/rd_perftest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    (void)rd_perftest_sniff(s, size);
    ev_perftest *r = NULL;
    if (rd_ev_parse(EV_PERFTEST, s, size, "fuzz", (void **)&r, NULL, NULL) < 0)
        return 0;
    volatile double sink = 0;
    for (size_t i = 0; i < r->n_runs; i++) {
        const ev_pt_run *run = &r->runs[i];
        const ev_pt_row *best = ev_pt_best_bw(run);
        if (best)
            sink += best->bw_avg_gbit_s;
        if (ev_pt_setting_get(run, "Device"))
            sink += 1;
        for (size_t j = 0; j < run->n_rows; j++)
            sink += run->rows[j].t_typical_us + (double)run->rows[j].bytes;
    }
    (void)sink;
    ev_perftest_free(r);
    return 0;
}
