/* rd_frdump.c - PyTorch Flight Recorder dumps, one file per rank, in both
 * forms ProcessGroupNCCL writes: the pickle (FlightRecorder::dump, the
 * default of TORCH_NCCL_DUMP_ON_TIMEOUT) and the JSON (dump_json, also what
 * the _dump_nccl_trace_json API returns). Both decode into one value tree
 * (rd_pyval.h), so the keys below are read once.
 *
 * Schema (FlightRecorderDetail.hpp, versions "2.5" and later under the
 * `version` key; the keys read here did not change their meaning since):
 *   top level   version, pg_config {name: {name, desc, ranks: "[0, 1]"}},
 *               pg_status, comm_lib_version, entries [...], nccl_comm_state;
 *   entry       record_id, pg_id, process_group (name, desc),
 *               collective_seq_id, p2p_seq_id, op_id, profiling_name
 *               ("nccl:all_reduce", "nccl:send 0->1", "nccl:recv 1<-0",
 *               "nccl:coalesced"), time_created_ns, input_sizes/output_sizes
 *               (a list of shapes), input_dtypes/output_dtypes, state
 *               (scheduled | started | completed), time_discovered_*,
 *               retired, timeout_ms, is_p2p, frames [{name, filename, line}]
 *               (pickle only), thread_name/thread_id (later versions).
 * Unknown keys are ignored. An entry without record_id, process_group,
 * profiling_name, state or collective_seq_id is skipped (bad_event); a
 * missing optional key is counted (missing_key) and read as unknown.
 * The rank: a top-level `rank` when a writer adds one, else the file name
 * (rd_rank_from_name, else its trailing digits, as fr_trace's loader does:
 * TORCH_NCCL_DEBUG_INFO_TEMP_FILE + rank). A dump cut short keeps its
 * complete entries (truncated_file); one that cannot be decoded at all is
 * kept as a damaged dump of its rank (corrupt_file), so the matcher can tell
 * "no readable dump" from "no dump".
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../base/util.h"
#include "evidence.h"
#include "log_prefix.h"
#include "rd_pyval.h"
#include "rd_text.h"

RD_EV_FILE_DECLARE(frdump);

static bool has(const char *head, size_t n, const char *needle)
{
    return rd_memmem(head, n, needle) != NULL;
}

int rd_frdump_sniff(const char *head, size_t n)
{
    /* any pickle (no other reader reads them): one that is not a dump is
     * then "not recognised" by name instead of read as text */
    if (n >= 2 && (unsigned char)head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
        return has(head, n, "pg_config") || (has(head, n, "entries") && has(head, n, "profiling_name")) ? 95 : RD_EV_MIN_CONFIDENCE;
    size_t i = 0;
    while (i < n && isspace((unsigned char)head[i])) i++;
    if (i >= n || head[i] != '{') return 0;
    if (has(head, n, "\"pg_config\"") && (has(head, n, "\"version\"") || has(head, n, "\"comm_lib_version\""))) return 90;
    return has(head, n, "\"collective_seq_id\"") && has(head, n, "\"profiling_name\"") ? 90 : 0;
}

/* ---- small readers of tree values -------------------------------------- */

typedef struct fr_rd {
    ev_frdump *d;
    const char *path;
    diag_set *diag;
} fr_rd;

static void missing(fr_rd *c, long long i)
{
    c->d->missing_keys++;
    diag_count(c->diag, DIAG_MISSING_KEY, c->path, i);
}

/* "[0, 1, 2]" (how pg_config writes ranks) or a real list. */
static uint32_t parse_ranks(fr_rd *c, const rd_py *v)
{
    ev_frdump *d = c->d;
    uint32_t n = 0;
    size_t cap = d->n_ranks;
    int64_t x;
    if (rd_py_is_seq(v)) {
        for (uint32_t i = 0; i < v->n && d->n_ranks < EV_FR_MAX_PG_RANKS; i++)
            if (rd_py_int(v->v.items[i], &x) && x >= 0 && x <= INT32_MAX) {
                cp_xgrow((void **)&d->ranks, &cap, d->n_ranks + 1, sizeof(*d->ranks));
                d->ranks[d->n_ranks++] = (int32_t)x, n++;
            }
        return n;
    }
    const char *s = rd_py_str(v);
    for (const char *p = s; p && *p && d->n_ranks < EV_FR_MAX_PG_RANKS;) {
        if (!isdigit((unsigned char)*p)) { p++; continue; }
        char *end;
        long long r = strtoll(p, &end, 10);
        p = end;
        if (r > INT32_MAX) continue;
        cp_xgrow((void **)&d->ranks, &cap, d->n_ranks + 1, sizeof(*d->ranks));
        d->ranks[d->n_ranks++] = (int32_t)r, n++;
    }
    return n;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static uint16_t add_pg(fr_rd *c, const char *name, const char *desc, const rd_py *ranks)
{
    ev_frdump *d = c->d;
    for (size_t i = 0; i < d->n_pgs; i++)
        if (!strcmp(ev_fr_str(d, d->pgs[i].name), name)) return (uint16_t)i;
    if (d->n_pgs >= EV_FR_MAX_PGS) return (uint16_t)(d->n_pgs - 1);
    size_t cap = d->n_pgs;
    cp_xgrow((void **)&d->pgs, &cap, d->n_pgs + 1, sizeof(*d->pgs));
    ev_fr_pg *g = &d->pgs[d->n_pgs];
    memset(g, 0, sizeof *g);
    g->name = cp_intern_s(&d->strs, name);
    g->desc = cp_intern_s(&d->strs, desc ? desc : "undefined");
    g->first_rank = (uint32_t)d->n_ranks;
    g->n_ranks = ranks ? parse_ranks(c, ranks) : 0;
    if (g->n_ranks) {
        qsort(d->ranks + g->first_rank, g->n_ranks, sizeof(int32_t), cmp_i32);
        g->ranks_hash = cp_hash64(d->ranks + g->first_rank, sizeof(int32_t) * g->n_ranks);
    }
    return (uint16_t)d->n_pgs++;
}

/* Shapes: a signature over every dimension, and "[[4, 8], [2]]" text. */
static uint64_t shapes(const rd_py *v, char *txt, size_t cap, bool *nonempty)
{
    uint64_t h = 1469598103934665603ull;
    size_t o = 0;
    o += (size_t)snprintf(txt + o, cap - o, "[");
    *nonempty = false;
    for (uint32_t i = 0; i < rd_py_len(v); i++) {
        const rd_py *s = v->v.items[i];
        if (o < cap) o += (size_t)snprintf(txt + o, cap - o, "%s[", i ? ", " : "");
        for (uint32_t j = 0; j < rd_py_len(s); j++) {
            int64_t x = -1;
            rd_py_int(s->v.items[j], &x);
            h = (h ^ (uint64_t)x) * 1099511628211ull;
            if (o < cap) o += (size_t)snprintf(txt + o, cap - o, "%s%lld", j ? ", " : "", (long long)x);
        }
        if (i == 0) *nonempty = rd_py_len(s) > 0;
        h = (h ^ 0x5bd1e995u) * 1099511628211ull; /* shape boundary */
        if (o < cap) o += (size_t)snprintf(txt + o, cap - o, "]");
    }
    if (o < cap) snprintf(txt + o, cap - o, "]");
    return h;
}

static uint32_t dtypes(ev_frdump *d, const rd_py *v)
{
    char buf[160];
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < rd_py_len(v) && o < sizeof buf; i++) {
        const char *s = rd_py_str(v->v.items[i]);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "," : "", s ? s : "?");
    }
    return cp_intern_s(&d->strs, buf);
}

/* The innermost frames outside torch.distributed's own wrappers (the
 * caller's code: where the rank was when it entered the op). */
static uint32_t frames(ev_frdump *d, const rd_py *v)
{
    char buf[240];
    size_t o = 0;
    int kept = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < rd_py_len(v) && kept < 3 && o < sizeof buf; i++) {
        const rd_py *f = v->v.items[i];
        const char *name = rd_py_str(rd_py_get(f, "name")), *file = rd_py_str(rd_py_get(f, "filename"));
        int64_t line = 0;
        rd_py_int(rd_py_get(f, "line"), &line);
        if (!name || !file || strstr(file, "torch/distributed/")) continue;
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s (%s:%lld)", kept ? " < " : "", name, file, (long long)line);
        kept++;
    }
    return cp_intern_s(&d->strs, buf);
}

static int state_of(const char *s)
{
    if (!s) return EV_FR_STATE_UNKNOWN;
    if (!strcmp(s, "completed")) return EV_FR_COMPLETED;
    if (!strcmp(s, "started")) return EV_FR_STARTED;
    if (!strcmp(s, "scheduled")) return EV_FR_SCHEDULED;
    return EV_FR_STATE_UNKNOWN;
}

/* "nccl:send 0->1" -> op "send", src 0, dst 1; "nccl:all_reduce" -> "all_reduce". */
static void parse_name(ev_frdump *d, const char *pn, ev_fr_entry *e)
{
    const char *colon = strchr(pn, ':');
    const char *op = colon ? colon + 1 : pn;
    const char *sp = strchr(op, ' ');
    size_t n = sp ? (size_t)(sp - op) : strlen(op);
    e->op = cp_intern_n(&d->strs, op, n);
    e->src = e->dst = -1;
    if (!sp) return;
    int a, b;
    if (n == 4 && !memcmp(op, "send", 4) && sscanf(sp + 1, "%d->%d", &a, &b) == 2) e->src = (int16_t)a, e->dst = (int16_t)b;
    if (n == 4 && !memcmp(op, "recv", 4) && sscanf(sp + 1, "%d<-%d", &a, &b) == 2) e->dst = (int16_t)a, e->src = (int16_t)b;
}

static bool read_entry(fr_rd *c, const rd_py *v, long long idx, ev_fr_entry *e)
{
    ev_frdump *d = c->d;
    memset(e, 0, sizeof *e);
    const rd_py *pgv = rd_py_get(v, "process_group");
    const char *pgname = rd_py_str(rd_py_at(pgv, 0)), *pn = rd_py_str(rd_py_get(v, "profiling_name"));
    const char *st = rd_py_str(rd_py_get(v, "state"));
    if (!pgname || !pn || !st || !rd_py_int(rd_py_get(v, "record_id"), &e->record_id) ||
        !rd_py_int(rd_py_get(v, "collective_seq_id"), &e->coll_seq)) {
        d->bad_entries++;
        diag_count(c->diag, DIAG_BAD_EVENT, c->path, idx);
        return false;
    }
    size_t before = d->n_pgs;
    e->pg = add_pg(c, pgname, rd_py_str(rd_py_at(pgv, 1)), NULL);
    if (d->n_pgs > before) missing(c, idx); /* a group pg_config does not list */
    parse_name(d, pn, e);
    e->state = (uint8_t)state_of(st);
    if (!rd_py_int(rd_py_get(v, "p2p_seq_id"), &e->p2p_seq)) e->p2p_seq = -1, missing(c, idx);
    if (!rd_py_int(rd_py_get(v, "time_created_ns"), &e->created_ns)) missing(c, idx);
    int64_t b;
    const char *op = ev_fr_str(d, e->op);
    e->is_p2p = rd_py_int(rd_py_get(v, "is_p2p"), &b) ? b != 0 : (!strcmp(op, "send") || !strcmp(op, "recv"));
    char in[96], out[96], sz[200];
    const rd_py *is = rd_py_get(v, "input_sizes"), *os = rd_py_get(v, "output_sizes");
    if (!is || !os) missing(c, idx);
    e->in_sig = shapes(is, in, sizeof in, &e->has_in);
    e->out_sig = shapes(os, out, sizeof out, &e->has_out);
    snprintf(sz, sizeof sz, "in %s out %s", in, out);
    e->sizes = cp_intern_s(&d->strs, sz);
    const rd_py *idt = rd_py_get(v, "input_dtypes"), *odt = rd_py_get(v, "output_dtypes");
    if (!idt || !odt) missing(c, idx);
    e->in_dtypes = dtypes(d, idt);
    e->out_dtypes = dtypes(d, odt);
    e->frames = frames(d, rd_py_get(v, "frames"));
    return true;
}

static int cmp_entry(const void *a, const void *b)
{
    const ev_fr_entry *x = a, *y = b;
    return (x->record_id > y->record_id) - (x->record_id < y->record_id);
}

/* The trailing number of a file's base name, before its extensions. */
static int rank_of_name(const char *path)
{
    int r = rd_rank_from_name(path);
    if (r >= 0) return r;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strchr(base, '.');
    const char *end = dot ? dot : base + strlen(base), *p = end;
    while (p > base && isdigit((unsigned char)p[-1])) p--;
    if (p == end || end - p > 7) return -1;
    return atoi(p);
}

static void read_tree(fr_rd *c, const rd_py *root)
{
    ev_frdump *d = c->d;
    const char *ver = rd_py_str(rd_py_get(root, "version"));
    if (ver) snprintf(d->version, sizeof d->version, "%s", ver);
    else missing(c, 0);
    int64_t rank;
    if (rd_py_int(rd_py_get(root, "rank"), &rank) && rank >= 0 && rank <= INT32_MAX) d->rank = (int)rank, d->rank_from_name = false;
    const rd_py *cfg = rd_py_get(root, "pg_config");
    if (!cfg) missing(c, 0);
    for (uint32_t i = 0; cfg && cfg->type == RD_PY_DICT && i < cfg->n; i++) {
        const rd_py *k = cfg->v.items[2 * i], *g = cfg->v.items[2 * i + 1];
        const char *name = rd_py_str(rd_py_get(g, "name"));
        if (!name) name = rd_py_str(k);
        if (name) add_pg(c, name, rd_py_str(rd_py_get(g, "desc")), rd_py_get(g, "ranks"));
    }
    const rd_py *ents = rd_py_get(root, "entries");
    size_t cap = 0;
    for (uint32_t i = 0; i < rd_py_len(ents); i++) {
        if (d->n_entries >= EV_FR_MAX_ENTRIES) { d->dropped++; continue; }
        cp_xgrow((void **)&d->entries, &cap, d->n_entries + 1, sizeof(*d->entries));
        if (read_entry(c, ents->v.items[i], i, &d->entries[d->n_entries])) d->n_entries++;
    }
    if (d->dropped) diag_count_n(c->diag, DIAG_LIMIT_REACHED, (uint64_t)d->dropped, c->path, 0);
    if (d->n_entries) qsort(d->entries, d->n_entries, sizeof(*d->entries), cmp_entry);
}

void *rd_frdump_file(const char *path, const char *data, size_t len, diag_set *diag)
{
    ev_frdump *d = cp_xcalloc(1, sizeof *d);
    cp_intern_init(&d->strs);
    fr_rd c = {d, path, diag};
    d->rank = rank_of_name(path);
    d->rank_from_name = d->rank >= 0;
    bool pickle = len > 0 && (unsigned char)data[0] == 0x80, truncated = false;
    snprintf(d->format, sizeof d->format, "%s", pickle ? "pickle" : "json");
    rd_py_doc doc;
    cp_error err;
    cp_error_clear(&err);
    int r = pickle ? rd_py_pickle(data, len, path, &doc, &truncated, &err) : rd_py_json(data, len, path, &doc, &truncated, &err);
    if (r < 0) {
        d->damaged = true;
        snprintf(d->error, sizeof d->error, "byte %lld: %.160s", err.offset, err.msg);
        diag_count(diag, truncated ? DIAG_TRUNCATED_FILE : DIAG_CORRUPT_FILE, path, err.offset);
    }
    if (!doc.root || doc.root->type != RD_PY_DICT) {
        if (pickle && !d->damaged) cp_log_warn("%s: a pickle of something other than a dict, not a Flight Recorder dump: not recognised", path);
        if (pickle && !d->damaged) { rd_py_doc_free(&doc); ev_frdump_free(d); return NULL; }
    } else {
        if (!rd_py_get(doc.root, "entries") && !rd_py_get(doc.root, "pg_config")) {
            cp_log_warn("%s: a %s without entries or pg_config, not a Flight Recorder dump: not recognised", path, d->format);
            rd_py_doc_free(&doc);
            ev_frdump_free(d); /* a pickle, but not of a Flight Recorder dump */
            return NULL;
        }
        read_tree(&c, doc.root);
    }
    rd_py_doc_free(&doc);
    return d;
}
