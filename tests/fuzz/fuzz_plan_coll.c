/* fuzz_plan_coll.c - the nccl-tests facts CSV reader and the collective
 * cost model behind it. Any bytes: no crash, no sanitizer report, every row
 * either modelled with a finite, non-negative busbw or skipped with a
 * reason. */
#include "plan/coll_check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    static plan_coll_check_row rows[256];
    plan_coll_check_summary s;
    char err[256];
    if (plan_coll_check_mem((const char *)data, size, "fuzz.csv", rows, 256, &s, err, sizeof err) == 0) {
        for (int i = 0; i < s.rows && i < 256; i++)
            if (!rows[i].why[0] && !(isfinite(rows[i].predicted_gbps) && rows[i].predicted_gbps >= 0)) abort();
        if (s.used + s.skipped != s.rows) abort();
    }
    return 0;
}
