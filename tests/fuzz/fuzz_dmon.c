/* fuzz_dmon.c - nvidia-smi dmon / dcgmi dmon reader on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>

#include "readers/rd_dmon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    (void)rd_dmon_sniff(s, size);
    ev_dmon *d = NULL;
    if (rd_ev_parse(EV_DMON, s, size, "fuzz", (void **)&d, NULL, NULL) < 0)
        return 0;
    volatile double sink = 0;
    for (size_t c = 0; c < d->n_cols; c++) {
        sink += ev_dmon_stat_of(d, EV_DMON_ALL, c)->n;
        for (size_t e = 0; e < d->n_entities; e++)
            sink += ev_dmon_stat_of(d, e, c)->n;
        for (size_t i = 0; i < d->n_samples; i++)
            sink += ev_dmon_value(d, i, c);
    }
    (void)sink;
    ev_dmon_free(d);
    return 0;
}
