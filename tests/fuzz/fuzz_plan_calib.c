/* fuzz_plan_calib.c - the published-runs CSV reader and row mapping.
 * Any bytes: no crash, no sanitizer report, every row either modelled with
 * a finite error or skipped with a reason. Inputs are capped at 16 KiB so a
 * run stays fast (each row may run a layout search). */
#include "plan/calib.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384) return 0;
    static plan_calib_row rows[64];
    plan_calib_summary s;
    char err[256];
    if (plan_calib_mem((const char *)data, size, "fuzz.csv", NULL, rows, 64, &s, err, sizeof err) == 0) {
        for (int i = 0; i < s.rows && i < 64; i++)
            if (!rows[i].why[0] && !isfinite(rows[i].err)) abort();
        if (s.used + s.skipped != s.rows) abort();
    }
    return 0;
}
