/* fuzz_topo.c - nvidia-smi topo -m reader on arbitrary bytes, then the fill
 * into the topology model and a JSON save/load round trip, which must give
 * the same JSON back for whatever the reader accepted. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "readers/rd_topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    (void)rd_topo_sniff(s, size);
    ev_topo *m = NULL;
    if (rd_ev_parse(EV_TOPO, s, size, "fuzz", (void **)&m, NULL, NULL) < 0)
        return 0;
    for (size_t i = 0; i < m->n_devs; i++)
        (void)ev_topo_nearest_nic(m, i, NULL);
    topo *t = topo_new();
    if (rd_topo_fill(m, "fuzz", t, "fuzz-host", NULL) == 0) {
        cp_buf a = CP_BUF_INIT, b = CP_BUF_INIT;
        topo_to_json(t, &a);
        topo *back = NULL;
        if (topo_from_json(a.data, a.len, "rt", &back, NULL) != 0)
            abort(); /* what we write we must read */
        topo_to_json(back, &b);
        if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
            abort();
        topo_free(back);
        cp_buf_free(&a);
        cp_buf_free(&b);
    }
    topo_free(t);
    ev_topo_free(m);
    return 0;
}
