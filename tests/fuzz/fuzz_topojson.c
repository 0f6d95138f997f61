/* fuzz_topojson.c - the topology JSON loader on arbitrary bytes: it must
 * reject damage with an error, never crash, and what it accepts must save. */
#include <stddef.h>
#include <stdint.h>

#include "model/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo *t = NULL;
    cp_error err;
    if (topo_from_json((const char *)data, size, "fuzz", &t, &err) != 0)
        return 0;
    cp_buf b = CP_BUF_INIT;
    topo_to_json(t, &b);
    cp_buf_free(&b);
    topo_free(t);
    return 0;
}
