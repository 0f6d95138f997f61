/* rd_memtl.c - PyTorch's raw memory timeline (MemoryProfileTimeline.
 * export_memory_timeline_raw, `torch.profiler._memory_profiler`; the file
 * HTA's MemoryAnalysis reads).
 *
 * Format: one JSON array of [t, action, bytes, category] records, in time
 * order: t in ns since the epoch (-1 for memory that existed before the
 * profile: PREEXISTING), action 1 PREEXISTING, 2 CREATE, 3
 * INCREMENT_VERSION, 4 DESTROY (PyTorch's Action enum values), bytes signed (a destroy or the old version
 * of an incremented tensor subtracts), category 0..7 (Parameter, Optimizer
 * state, Input, Temporary, Activation, Gradient, Autograd, Unknown; the
 * order PyTorch's and HTA's tables share). The file says nothing of the
 * device or rank (the export is per device).
 *
 * Each record becomes an instant event "[memory timeline]" with args
 * Action, Bytes and Category on one track of its own (kind OTHER, so no
 * analysis of CPU threads or GPU streams sees it); a pre-existing record
 * is placed at the profile's first positive time, where HTA places it,
 * its Action (1) keeping it apart. an_memtl.c turns them into the per
 * category timeline. A record that is not four integers, or has an action
 * or category out of range, is counted (bad_event) and skipped; a file cut
 * short keeps its complete records (truncated_file).
 *
 * Sniffing: '[' '[' then an integer, so neither the Kineto reader's
 * object form nor its array of event objects is claimed.
 */
#include "rd_memtl.h"
#include "reader.h"
#include "../base/jsontok.h"
#include "../base/src.h"
#include "../base/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MEMTL_EVENT "[memory timeline]"
#define MEMTL_ACTION_MIN 1 /* PREEXISTING */
#define MEMTL_ACTION_MAX 4 /* DESTROY */
#define MEMTL_CATEGORIES 8

int rd_memtl_sniff(const char *path, const unsigned char *head, size_t n)
{
    (void)path;
    size_t i = 0;
    while (i < n && isspace(head[i]))
        i++;
    if (i >= n || head[i++] != '[')
        return 0;
    while (i < n && isspace(head[i]))
        i++;
    if (i >= n || head[i++] != '[')
        return 0;
    while (i < n && isspace(head[i]))
        i++;
    if (i < n && head[i] == '-')
        i++;
    return i < n && isdigit(head[i]) ? 90 : 0;
}

typedef struct memtl_rec {
    int64_t t, action, bytes, category;
} memtl_rec;

/* One [t, action, bytes, category] record after its '['; 1 read, 0 damaged
 * (skipped to its ']'), < 0 a tokenizer error. */
static int read_record(cp_jt *jt, memtl_rec *r, cp_error *err)
{
    int64_t v[4];
    size_t k = 0;
    bool bad = false;
    cp_jt_tok t;
    int rc;
    while ((rc = cp_jt_next(jt, &t, err)) > 0 && rc != CP_JT_ARR_END) {
        if (rc == CP_JT_NUMBER && (t.flags & CP_JT_F_INT) && k < 4 && cp_jt_parse_i64(t.s, t.n, &v[k]) == 0) {
            k++;
            continue;
        }
        bad = true;
        if ((rc == CP_JT_ARR_BEGIN || rc == CP_JT_OBJ_BEGIN) && (rc = cp_jt_skip_rest(jt, err)) < 0)
            return rc;
    }
    if (rc < 0)
        return rc;
    if (bad || k != 4 || v[1] < MEMTL_ACTION_MIN || v[1] > MEMTL_ACTION_MAX || v[3] < 0 || v[3] >= MEMTL_CATEGORIES)
        return 0;
    *r = (memtl_rec){ v[0], v[1], v[2], v[3] };
    return 1;
}

static int read_all(const char *path, cp_jt *jt, tl_builder *b, memtl_rec **out, size_t *n_out, cp_error *err)
{
    cp_jt_tok t;
    int rc = cp_jt_next(jt, &t, err);
    if (rc < 0)
        return rc;
    if (rc != CP_JT_ARR_BEGIN)
        return cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, t.offset, "not a raw memory timeline: expected '['");
    memtl_rec *v = NULL;
    size_t n = 0, cap = 0;
    while ((rc = cp_jt_next(jt, &t, err)) > 0 && rc != CP_JT_ARR_END) {
        long long at = t.offset;
        if (rc != CP_JT_ARR_BEGIN) {
            if (n == 0 && !diag_total(tl_builder_diag(b))) {
                free(v);
                return cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, at,
                                    "not a raw memory timeline: expected [t, action, bytes, category]");
            }
            diag_count(tl_builder_diag(b), DIAG_BAD_EVENT, path, at);
            if ((rc == CP_JT_OBJ_BEGIN) && (rc = cp_jt_skip_rest(jt, err)) < 0)
                break;
            continue;
        }
        memtl_rec r;
        if ((rc = read_record(jt, &r, err)) < 0)
            break;
        if (rc == 0) {
            diag_count(tl_builder_diag(b), DIAG_BAD_EVENT, path, at);
            continue;
        }
        cp_xgrow((void **)&v, &cap, n + 1, sizeof *v);
        v[n++] = r;
    }
    *out = v;
    *n_out = n;
    if (rc < 0 && cp_jt_truncated(jt)) {
        diag_count(tl_builder_diag(b), DIAG_TRUNCATED_FILE, path, cp_jt_last_complete_end(jt));
        cp_error_clear(err);
        return 0;
    }
    return rc < 0 ? rc : 0;
}

int rd_memtl_read_src(cp_src *src, const char *path, tl_builder *b, cp_error *err)
{
    cp_jt *jt = cp_jt_open_src(src, NULL);
    memtl_rec *v = NULL;
    size_t n = 0;
    int rc = read_all(path, jt, b, &v, &n, err);
    cp_jt_close(jt);
    if (rc < 0) {
        free(v);
        return rc;
    }
    int64_t t_min = -1; /* the first positive time: where pre-existing memory is placed (HTA) */
    for (size_t i = 0; i < n; i++)
        if (v[i].t > 0 && (t_min < 0 || v[i].t < t_min))
            t_min = v[i].t;
    cp_intern *st = tl_builder_strings(b);
    tl_rank_meta *m = tl_builder_meta(b);
    m->format = cp_intern_s(st, "memory_timeline_raw");
    tl_track_key key = { TL_TRACK_OTHER, 0, 0, -1, -1 };
    uint32_t track = tl_builder_track(b, &key);
    tl_builder_track_name(b, track, cp_intern_s(st, "memory timeline"));
    uint32_t name = cp_intern_s(st, MEMTL_EVENT), cat = cp_intern_s(st, "memory_timeline");
    uint32_t k_action = cp_intern_s(st, "Action"), k_bytes = cp_intern_s(st, "Bytes"),
             k_cat = cp_intern_s(st, "Category");
    tl_builder_reserve(b, n, 3 * n);
    for (size_t i = 0; i < n; i++) {
        tl_ev ev = { .ts_ns = v[i].t < 0 ? (t_min < 0 ? 0 : t_min) : v[i].t, .name = name, .cat_name = cat,
                     .cat = TL_CAT_OTHER, .track = track, .corr = -1, .ext_id = -1, .flags = TL_F_INSTANT };
        tl_builder_add(b, &ev);
        tl_builder_arg_int(b, k_action, v[i].action);
        tl_builder_arg_int(b, k_bytes, v[i].bytes);
        tl_builder_arg_int(b, k_cat, v[i].category);
    }
    free(v);
    return 0;
}

int rd_memtl_read(const char *path, tl_builder *b, const rd_opts *o, cp_error *err)
{
    (void)o;
    cp_src *src;
    int rc = cp_src_open(&src, path, err);
    if (rc < 0)
        return rc;
    rc = rd_memtl_read_src(src, path, b, err);
    cp_src_close(src);
    return rc;
}
