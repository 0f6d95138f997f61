/* fuzz_logs.c - fuzz target for the failure-log readers and the diagnose
 * engine: the same bytes go through the NCCL, PyTorch, kernel and
 * nvidia-smi -q readers, then through a whole diagnosis (events, ordering,
 * rules). Any crash, overflow or sanitizer report is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    rd_nccl_facts *nf = malloc(sizeof *nf);
    rd_torch_facts *tf = malloc(sizeof *tf);
    rd_dmesg_facts *df = malloc(sizeof *df);
    rd_smiq_facts *sf = malloc(sizeof *sf);
    if (nf && tf && df && sf) {
        rd_nccl_parse_buf(nf, "fuzz", buf, size);
        rd_torch_parse_buf(tf, "fuzz", buf, size);
        rd_dmesg_parse_buf(df, "fuzz", buf, size);
        rd_smiq_parse_buf(sf, "fuzz", buf, size);
    }
    free(nf);
    free(tf);
    free(df);
    free(sf);
    /* twice, as two ranks, so cross-input rules and ordering run too */
    dg_ctx *c = dg_new();
    dg_add_buffer(c, "rank0.log", buf, size, NULL);
    dg_add_buffer(c, "rank1.log", buf, size / 2, NULL);
    dg_run(c);
    char tmp[64];
    for (int i = 0; i < c->n_events; i++) rd_time_format(c->events[i].ts, tmp, sizeof tmp);
    dg_free(c);
    return 0;
}
