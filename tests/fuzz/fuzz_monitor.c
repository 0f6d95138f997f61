/* fuzz_monitor.c - the reader of `chainprof monitor` JSON lines (rd_monitor)
 * on arbitrary bytes, then the counters rule family over what it read. */
#include <stddef.h>
#include <stdint.h>

#include "analysis/rulebook.h"
#include "readers/rd_monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    (void)rd_monitor_sniff(s, size);
    ev_set set;
    ev_set_init(&set);
    rd_ev_read_buffer(&set, "fuzz.jsonl", s, size);
    rb_opts o = { 0 };
    rb_ctx *c = rb_run(&set, &o);
    volatile size_t sink = c ? c->n : 0;
    (void)sink;
    if (c)
        rb_free(c);
    ev_set_free(&set);
    return 0;
}
