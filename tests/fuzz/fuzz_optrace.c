/* fuzz_optrace.c - libFuzzer target for the op-timeline reader (OSDI'25
 * artifact format) and the pipeline what-if built on what it reads:
 * arbitrary bytes through sniffing, a memory byte source, the reader, the
 * timeline's finish step and an_whatif_pp's graph, replays and report.
 * Seeds: tests/fuzz/corpus/optrace (synth --pp output, the artifact's
 * layout, cut and damaged files; replayed by ctest). */
#include "analysis/an_whatif.h"
#include "readers/rd_optrace.h"

#include <stdint.h>

static void whatif(const tl_timeline *tl)
{
    int r = an_whatif_pp_rank(tl);
    if (r < 0)
        return;
    rep_report *rep = rep_new("chainprof.analyze/1", 0, NULL);
    an_opts opts = { .nthreads = 1 };
    an_ctx ctx = { .tl = tl, .rep = rep, .opts = &opts };
    rep_node *top = rep_obj(rep, rep->root, "whatif", NULL);
    an_whatif_pp_run(&ctx, top, (size_t)r);
    rep_free(rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *name = "fuzz/optrace.json";
    (void)rd_optrace_sniff(name, data, size);
    tl_builder *b = tl_builder_new(name);
    cp_src *s = cp_src_open_mem(data, size, name);
    cp_error err;
    cp_error_clear(&err);
    int rc = rd_optrace_read_src(s, name, b, &err);
    cp_src_close(s);
    if (rc < 0) {
        tl_builder_free(b);
        return 0;
    }
    tl_timeline *tl = NULL;
    if (tl_finish(&b, 1, NULL, &tl, &err) == 0) {
        whatif(tl);
        tl_free(tl);
    }
    return 0;
}
