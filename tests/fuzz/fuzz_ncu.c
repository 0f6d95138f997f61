/* fuzz_ncu.c - Nsight Compute reader (details CSV, raw CSV, text) on
 * arbitrary bytes (not NUL-terminated). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "readers/rd_ncu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    (void)rd_ncu_sniff(s, size);
    ev_ncu *r = NULL;
    if (rd_ev_parse(EV_NCU, s, size, "fuzz", (void **)&r, NULL, NULL) < 0)
        return 0;
    volatile double sink = 0;
    for (size_t i = 0; i < r->n; i++) {
        const ev_ncu_launch *l = &r->launches[i];
        sink += (double)strlen(l->name) + l->grid[0] + l->block[2];
        for (int m = 0; m < EV_NCU__COUNT; m++)
            sink += l->v[m];
        for (int k = 0; k < l->n_rules; k++)
            sink += (double)strlen(l->rules[k].text);
    }
    (void)sink;
    ev_ncu_free(r);
    return 0;
}
