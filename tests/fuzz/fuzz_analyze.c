/* fuzz_analyze.c - the whole analyze pipeline on arbitrary bytes.
 *
 * The per-reader targets stop at the timeline; most arithmetic on
 * input-controlled values (durations, sizes, ranks, element counts) lives
 * in the analyzers and the writers. This target reads the input as a
 * Kineto trace twice, as two ranks (whole and a prefix, so truncation and
 * a rank pair both occur), finishes the timeline, runs every analyzer and
 * renders every format into memory. Seeds: tests/fuzz/corpus/analyze. */
#include <stdint.h>

#include "analysis/analysis.h"
#include "fuzz_read.h"
#include "render/render.h"

static void render_all(const rep_report *rep)
{
    static const char *const formats[] = { "json", "csv", "text", "html" };
    render_opts ro = { .color = false, .width = 0 };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        const render_format *f = render_find(formats[i]);
        if (!f)
            continue;
        cp_buf out = CP_BUF_INIT;
        cp_error err;
        cp_error_clear(&err);
        (void)f->fn(rep, &out, &ro, &err);
        cp_buf_free(&out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tl_builder *bs[2];
    size_t n = 0;
    if ((bs[n] = fuzz_read_kineto("fuzz/rank0.json", data, size)))
        n++;
    if ((bs[n] = fuzz_read_kineto("fuzz/rank1.json", data, size - size / 4)))
        n++;
    if (n == 0)
        return 0;
    cp_error err;
    cp_error_clear(&err);
    tl_finish_opts fo = { .nthreads = 1 };
    tl_timeline *tl = NULL;
    if (tl_finish(bs, n, &fo, &tl, &err) < 0)
        return 0;
    rep_report *rep = rep_new("chainprof.analyze/1", 0, NULL);
    rep_diagnostics(rep, &tl->diag);
    an_opts ao = { .nthreads = 1 };
    an_ctx an = { 0 };
    if (an_run_all(&an, tl, rep, &ao, &err) == 0)
        render_all(rep);
    an_ctx_free(&an);
    rep_free(rep);
    tl_free(tl);
    return 0;
}
