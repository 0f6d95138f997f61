/* fuzz_fio.c - fio reader on arbitrary bytes (not NUL-terminated). */
#include <stddef.h>
#include <stdint.h>

#include "readers/rd_fio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    (void)rd_fio_sniff(s, size);
    ev_fio *f = NULL;
    if (rd_ev_parse(EV_FIO, s, size, "fuzz", (void **)&f, NULL, NULL) < 0)
        return 0;
    volatile double sink = 0;
    for (size_t i = 0; i < f->n_jobs; i++)
        for (int d = 0; d < EV_FIO__DIRS; d++)
            for (int k = 0; k < f->jobs[i].io[d].n_pct; k++)
                sink += f->jobs[i].io[d].pct_us[k];
    (void)sink;
    ev_fio_free(f);
    return 0;
}
