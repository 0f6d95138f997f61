/* fuzz_iperf.c - iperf3 reader on arbitrary bytes (not NUL-terminated). */
#include <stddef.h>
#include <stdint.h>

#include "readers/rd_iperf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    (void)rd_iperf_sniff(s, size);
    ev_iperf *r = NULL;
    if (rd_ev_parse(EV_IPERF, s, size, "fuzz", (void **)&r, NULL, NULL) < 0)
        return 0;
    volatile double sink = 0;
    const ev_iperf_row *b = ev_iperf_best(r);
    if (b)
        sink += b->bits_per_s;
    for (size_t i = 0; i < r->n_rows; i++)
        sink += r->sections[r->rows[i].section].port;
    (void)sink;
    ev_iperf_free(r);
    return 0;
}
