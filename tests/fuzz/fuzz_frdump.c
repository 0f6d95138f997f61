/* fuzz_frdump.c - the Flight Recorder path on arbitrary bytes: both tree
 * decoders (pickle, JSON), the dump reader, and the cross-rank matcher over
 * two "ranks" made of the same input (the rule book's fr family). */
#include <stddef.h>
#include <stdint.h>

#include "analysis/rulebook.h"
#include "readers/evidence.h"
#include "readers/rd_pyval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    rd_py_doc doc;
    cp_error err;
    bool trunc;
    (void)rd_py_pickle(s, size, "fuzz", &doc, &trunc, &err);
    rd_py_doc_free(&doc);
    (void)rd_py_json(s, size, "fuzz", &doc, &trunc, &err);
    rd_py_doc_free(&doc);
    const rd_ev_reader *r = rd_ev_reader_of(EV_FRDUMP);
    (void)r->sniff(s, size);
    void *facts = NULL;
    if (rd_ev_parse(EV_FRDUMP, s, size, "fuzz_rank_0", &facts, NULL, NULL) < 0)
        return 0;
    ev_facts_free(EV_FRDUMP, facts);
    ev_set set;
    ev_set_init(&set);
    uint32_t a = ev_set_add_input(&set, "fuzz_rank_0"), b = ev_set_add_input(&set, "fuzz_rank_1");
    void *f0 = r->file("fuzz_rank_0", s, size, NULL), *f1 = r->file("fuzz_rank_1", s, size, NULL);
    if (f0) ev_set_add_file(&set, a, EV_FRDUMP, f0, NULL);
    if (f1) ev_set_add_file(&set, b, EV_FRDUMP, f1, NULL);
    rb_opts o = {0};
    rb_ctx *c = rb_run(&set, &o);
    rb_free(c);
    ev_set_free(&set);
    return 0;
}
