/* rd_nsys.c - Nsight Systems exports (`nsys export --type sqlite`) into the
 * timeline, so every analysis works unchanged on nsys input.
 *
 * Design
 * - The database is opened read-only and immutable (a URI with
 *   mode=ro&immutable=1): we never take locks or write journals next to a
 *   user's file, even on a read-only filesystem.
 * - Schemas vary between nsys versions: tables exist only when they have
 *   data (lazy export), columns are added and renamed, ENUM_* tables may be
 *   missing. Every query is built from the columns actually present
 *   (PRAGMA table_info) with NULL for absent ones, and the enum constants
 *   (copy kinds, memory kinds, sync types, NVTX event types) are carried
 *   here, so no ENUM_* table is needed.
 * - One rank per process (globalPid bits 24..47; tid = low 24 bits of
 *   globalTid). A report of several processes yields several builders via
 *   rd_opts.more. A rank found in an NCCL NVTX payload ("Rank") is used;
 *   otherwise ranks are left unknown for tl_finish to number in pid order.
 * - Clock: with TARGET_INFO_SESSION_START_TIME.systemClockNs the event
 *   timestamps are raw system-clock ns, so base = utcEpochNs - systemClockNs;
 *   without that column they are ns since the session start, so base =
 *   utcEpochNs. Either way several reports land on one UTC clock.
 * - Names follow Kineto's so analyses need no special cases: kernels by
 *   their demangled name, "Memcpy HtoD (Pageable -> Device)", "Memset
 *   (Device)", "Stream Sync"; API names lose their _vNNNN suffix. PyTorch
 *   emit_nvtx ranges become cpu_op events named by the op; NCCL's own NVTX
 *   domain ranges become nvtx events with domain "NCCL" and their decoded
 *   payload fields as args; other NVTX ranges are user annotations.
 *   OS runtime calls become osrt events (storage-layer evidence). GPU and
 *   NIC/IB metric tables become counter samples (see "GPU and NIC/IB
 *   metrics" below).
 * - Speed: each table is one prepared statement stepped once, every value
 *   one sqlite3_column_int64 (defaults applied in SQL), no allocation or
 *   formatting per row. Names go through per-process memo arrays indexed by
 *   StringIds id (or by enum value), so a distinct name is looked up and
 *   interned once; builders are reserved from the tables' row counts. The
 *   builders take the rows directly: nothing is staged in between. With
 *   spare threads the kernel and runtime tables are read in parts (see
 *   "the big tables, read in parts" below).
 */
#include "reader.h"
#include "rd_nsys.h"
#include "rd_text.h"
#include "../base/log.h"
#include "../base/par.h"
#include "../base/util.h"

#include <errno.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PID_OF(gid) (((gid) >> 24) & 0xFFFFFF)
#define TID_OF(gid) ((gid)&0xFFFFFF)

/* StringIds ids above this are not cached (interned on every use). */
#define SID_CACHE_MAX (1u << 26)
/* Direct-mapped cache of recently used tracks per process. */
#define TRACK_CACHE 64

/* What a StringIds id means in one process's builder, filled on first use:
 * the interned name (+1, 0 = not yet) in each role the id was used in. */
typedef struct sid_memo {
    uint32_t plain;  /* the text as is */
    uint32_t api;    /* an API name without its _vNNNN suffix */
    uint32_t op;     /* NVTX use: 0 = not yet, 1 = not a PyTorch emit_nvtx op, else the op name + 2 */
    uint8_t api_info; /* API_DRIVER | API_SYNC */
    uint8_t nccl_text; /* the text starts with "nccl" */
} sid_memo;

enum { API_DRIVER = 1, API_SYNC = 2 };

typedef struct track_slot {
    int64_t a, b; /* (device, stream) or (globalTid, -1) */
    uint32_t track;
    uint8_t kind; /* tl_track_kind + 1, 0 = empty */
} track_slot;

typedef struct nsys_proc {
    int64_t pid;
    tl_builder *b;
    sid_memo *memo; /* StringIds id -> names, n_memo entries (lazily allocated) */
    /* interned keys and fixed names of this builder */
    uint32_t k_short_name, k_grid, k_block, k_bytes, k_domain, k_value, k_port, k_interval, s_nccl, s_unknown;
    uint32_t copy_names[14][9][8]; /* Memcpy name by (copyKind, srcKind or 8 = none, dstKind), +1 */
    uint32_t set_names[8];         /* Memset name by memKind, +1 */
    uint32_t sync_names[5];        /* sync event name by syncType, +1 */
    track_slot tcache[TRACK_CACHE];
} nsys_proc;

typedef struct nsys_ctx {
    sqlite3 *db;
    const char *path;
    const rd_opts *opts;
    nsys_proc *procs;
    size_t n_procs;
    nsys_proc *last; /* process of the previous row */
    sqlite3_stmt *str_st; /* SELECT value FROM StringIds WHERE id = ? (NULL without StringIds) */
    size_t n_memo;        /* max StringIds id + 1, capped at SID_CACHE_MAX */
    cp_arena arena;
    int64_t nccl_domain; /* NVTX domainId of NCCL, -1 unknown */
    int64_t dev_owner[64]; /* CUDA device -> index of the first process with kernels on it + 1 */
} nsys_ctx;

int rd_nsys_sniff(const char *path, const unsigned char *head, size_t n)
{
    if (n >= 16 && memcmp(head, "SQLite format 3", 16) == 0)
        return 90;
    if (cp_str_ends(path, ".nsys-rep") || cp_str_ends(path, ".qdrep"))
        return 90;
    return 0;
}

static bool table_has(nsys_ctx *c, const char *table)
{
    sqlite3_stmt *st;
    bool yes = false;
    if (sqlite3_prepare_v2(c->db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
        yes = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return yes;
}

static bool col_has(nsys_ctx *c, const char *table, const char *col)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name=?", table);
    sqlite3_stmt *st;
    bool yes = false;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, col, -1, SQLITE_STATIC);
        yes = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return yes;
}

/* A wanted column: its name and the SQL literal that stands for it when it
 * is absent or NULL (NULL: keep NULL, the caller tests the type). Defaults
 * applied in SQL let the row loops read every integer with one
 * sqlite3_column_int64 call. A name "a*b*c" is the product of those
 * columns (each defaulted), one value instead of three. */
typedef struct qcol {
    const char *name;
    const char *dflt;
} qcol;

/* Build "SELECT coalesce(a, d), b, NULL, ... FROM t" from the wanted columns. */
static sqlite3_stmt *select_cols(nsys_ctx *c, const char *table, const qcol *cols, size_t n, const char *tail)
{
    if (!table_has(c, table))
        return NULL;
    char sql[2048];
    size_t w = (size_t)snprintf(sql, sizeof sql, "SELECT ");
    for (size_t i = 0; i < n && w < sizeof sql; i++) {
        const char *sep = i ? ", " : "";
        if (strchr(cols[i].name, '*')) { /* "a*b*c": the product, each factor defaulted */
            w += (size_t)snprintf(sql + w, sizeof sql - w, "%s1", sep);
            for (const char *f = cols[i].name; *f && w < sizeof sql;) {
                int len = (int)strcspn(f, "*");
                char one[64];
                snprintf(one, sizeof one, "%.*s", len, f);
                if (col_has(c, table, one))
                    w += (size_t)snprintf(sql + w, sizeof sql - w, "*coalesce(\"%s\", %s)", one, cols[i].dflt);
                f += len + (f[len] == '*');
            }
        } else if (!col_has(c, table, cols[i].name))
            w += (size_t)snprintf(sql + w, sizeof sql - w, "%s%s", sep, cols[i].dflt ? cols[i].dflt : "NULL");
        else if (cols[i].dflt)
            w += (size_t)snprintf(sql + w, sizeof sql - w, "%scoalesce(\"%s\", %s)", sep, cols[i].name,
                                  cols[i].dflt);
        else
            w += (size_t)snprintf(sql + w, sizeof sql - w, "%s\"%s\"", sep, cols[i].name);
    }
    if (w < sizeof sql)
        snprintf(sql + w, sizeof sql - w, " FROM %s %s", table, tail ? tail : "");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
        cp_log_warn("%s: cannot query %s: %s", c->path, table, sqlite3_errmsg(c->db));
        return NULL;
    }
    return st;
}

static int64_t col_i64(sqlite3_stmt *st, int i, int64_t dflt)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? dflt : sqlite3_column_int64(st, i);
}

#define I64(st, i) sqlite3_column_int64(st, i)

/* The rowids of a table, [*lo, *hi), without reading its rows (two B-tree
 * descents); false when the table is absent or empty. */
static bool rowid_range(nsys_ctx *c, const char *table, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    if (!table_has(c, table))
        return false;
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT min(rowid), max(rowid) FROM %s", table);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
        *lo = sqlite3_column_int64(st, 0);
        *hi = sqlite3_column_int64(st, 1) + 1;
    }
    sqlite3_finalize(st);
    return *hi > *lo;
}

/* Rows of a table, from its largest rowid: a hint for reserving builder
 * room; 0 when absent. */
static size_t table_rows(nsys_ctx *c, const char *table)
{
    int64_t lo, hi;
    return rowid_range(c, table, &lo, &hi) && hi > 1 ? (size_t)(hi - 1) : 0;
}

/* StringIds are looked up one id at a time (id is the table's INTEGER
 * PRIMARY KEY, so each lookup is a B-tree descent) the first time a
 * process uses the id; the table is never copied, and an export whose
 * StringIds holds millions of NVTX texts costs only the ones used. */
static void open_strings(nsys_ctx *c)
{
    if (!table_has(c, "StringIds") ||
        sqlite3_prepare_v2(c->db, "SELECT value FROM StringIds WHERE id = ?", -1, &c->str_st, NULL) != SQLITE_OK) {
        c->str_st = NULL;
        return;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db, "SELECT max(id) FROM StringIds", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        int64_t m = sqlite3_column_int64(st, 0);
        c->n_memo = m < 0 ? 0 : m >= (int64_t)SID_CACHE_MAX ? SID_CACHE_MAX : (size_t)m + 1;
    }
    sqlite3_finalize(st);
}

/* The text of a StringIds id, or NULL. Valid until the next call. */
static const char *sid_text(nsys_ctx *c, int64_t id)
{
    if (!c->str_st || id < 0)
        return NULL;
    sqlite3_reset(c->str_st);
    sqlite3_bind_int64(c->str_st, 1, id);
    if (sqlite3_step(c->str_st) != SQLITE_ROW)
        return NULL;
    return (const char *)sqlite3_column_text(c->str_st, 0);
}

static uint32_t str(nsys_proc *p, const char *s) { return cp_intern_s(tl_builder_strings(p->b), s); }

/* The memo of id in process p, NULL when id is not cacheable. */
static sid_memo *memo_of(nsys_ctx *c, nsys_proc *p, int64_t id)
{
    if (id < 0 || (size_t)id >= c->n_memo)
        return NULL;
    if (!p->memo) /* calloc'd: pages of ids never used are never touched */
        p->memo = cp_xcalloc(c->n_memo, sizeof *p->memo);
    return &p->memo[id];
}

/* A StringIds entry as a name in p's builder, interned once per id. */
static uint32_t sid_plain(nsys_ctx *c, nsys_proc *p, int64_t id)
{
    sid_memo *m = memo_of(c, p, id);
    if (m && m->plain)
        return m->plain - 1;
    const char *s = sid_text(c, id);
    uint32_t v = s ? str(p, s) : p->s_unknown;
    if (m)
        m->plain = v + 1;
    return v;
}

/* Host APIs whose call blocks the thread until the GPU work is done. */
static bool is_sync_api(const char *n)
{
    static const char *const sync[] = { "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemset",
                                        "cudaMemset2D", "cudaDeviceSynchronize", "cudaStreamSynchronize",
                                        "cudaEventSynchronize", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol",
                                        "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
                                        "cuMemcpy", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemsetD8", "cuMemsetD32" };
    for (size_t i = 0; i < CP_ARRAY_LEN(sync); i++)
        if (!strcmp(n, sync[i]))
            return true;
    return false;
}

/* An API name (suffix dropped) and what it is (API_DRIVER, API_SYNC),
 * worked out once per StringIds id. */
static uint32_t sid_api(nsys_ctx *c, nsys_proc *p, int64_t id, uint8_t *info)
{
    sid_memo *m = memo_of(c, p, id);
    if (m && m->api) {
        *info = m->api_info;
        return m->api - 1;
    }
    const char *s = sid_text(c, id);
    char tmp[512];
    uint32_t v = p->s_unknown;
    if (s && strlen(s) < sizeof tmp) {
        strcpy(tmp, s);
        v = str(p, rd_nsys_normalize_api(tmp));
    } else if (s) {
        v = str(p, s);
    }
    const char *nm = cp_intern_str(tl_builder_strings(p->b), v);
    *info = (uint8_t)((nm[0] == 'c' && nm[1] == 'u' && strncmp(nm, "cuda", 4) != 0 ? API_DRIVER : 0) |
                      (is_sync_api(nm) ? API_SYNC : 0));
    if (m) {
        m->api = v + 1;
        m->api_info = *info;
    }
    return v;
}

static void add_pid(int64_t **v, size_t *n, size_t *cap, int64_t pid)
{
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i] == pid)
            return;
    cp_xgrow((void **)v, cap, *n + 1, sizeof **v);
    (*v)[(*n)++] = pid;
}

static int cmp_i64p(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The rank --rank-map gives a pid, or -1. */
static int32_t mapped_rank(const char *map, int64_t pid)
{
    for (const char *s = map; s && *s;) {
        char *end;
        long long p = strtoll(s, &end, 10);
        if (*end == '=') {
            long long r = strtoll(end + 1, &end, 10);
            if (p == pid && r >= 0 && r < INT32_MAX)
                return (int32_t)r;
        }
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    return -1;
}

static void init_proc(nsys_proc *p)
{
    p->k_short_name = str(p, "short_name");
    p->k_grid = str(p, "grid");
    p->k_block = str(p, "block");
    p->k_bytes = str(p, "bytes");
    p->k_domain = str(p, "domain");
    p->k_value = str(p, "value");
    p->k_port = str(p, "port");
    p->k_interval = str(p, "interval_ns");
    p->s_nccl = str(p, "NCCL");
    p->s_unknown = str(p, "<unknown>");
}

/* Room in every builder for the rows the tables hold (split evenly over
 * the processes of a multi-process report), so columns never regrow. */
static void reserve(nsys_ctx *c)
{
    size_t k = table_rows(c, "CUPTI_ACTIVITY_KIND_KERNEL"), cp = table_rows(c, "CUPTI_ACTIVITY_KIND_MEMCPY"),
           ms = table_rows(c, "CUPTI_ACTIVITY_KIND_MEMSET"), nv = table_rows(c, "NVTX_EVENTS");
    size_t ev = k + cp + ms + nv + table_rows(c, "CUPTI_ACTIVITY_KIND_RUNTIME") +
                table_rows(c, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") + table_rows(c, "OSRT_API");
    size_t args = 3 * k + cp + ms + nv;
    size_t n_b = 0;
    for (size_t i = 0; i < c->n_procs; i++)
        n_b += i == 0 || c->procs[i].b != c->procs[0].b;
    for (size_t i = 0; i < c->n_procs; i++)
        if (i == 0 || c->procs[i].b != c->procs[0].b)
            tl_builder_reserve(c->procs[i].b, ev / n_b + 1, args / n_b + 1);
}

/* Processes with CUDA activity, in pid order; the first uses `first`. */
static void discover_procs(nsys_ctx *c, tl_builder *first)
{
    static const struct { const char *table, *col; } src[] = {
        { "CUPTI_ACTIVITY_KIND_KERNEL", "globalPid" }, { "CUPTI_ACTIVITY_KIND_MEMCPY", "globalPid" },
        { "CUPTI_ACTIVITY_KIND_MEMSET", "globalPid" }, { "CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid" },
    };
    int64_t *pids = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < CP_ARRAY_LEN(src); i++) {
        if (!table_has(c, src[i].table) || !col_has(c, src[i].table, src[i].col))
            continue;
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT DISTINCT (%s >> 24) & 16777215 FROM %s WHERE %s IS NOT NULL",
                 src[i].col, src[i].table, src[i].col);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
            continue;
        while (sqlite3_step(st) == SQLITE_ROW)
            add_pid(&pids, &n, &cap, sqlite3_column_int64(st, 0));
        sqlite3_finalize(st);
    }
    if (n == 0)
        add_pid(&pids, &n, &cap, -1); /* minimal exports carry no process ids */
    qsort(pids, n, sizeof *pids, cmp_i64p);
    c->procs = cp_xcalloc(n, sizeof *c->procs);
    c->n_procs = n;
    c->last = &c->procs[0];
    for (size_t i = 0; i < n; i++) {
        c->procs[i].pid = pids[i];
        if (i == 0 || !c->opts || !c->opts->more)
            c->procs[i].b = first;
        else
            c->procs[i].b = c->opts->more(c->opts->more_ctx, c->path);
        init_proc(&c->procs[i]);
        if (c->opts && c->opts->rank_map && (i == 0 || c->procs[i].b != c->procs[0].b))
            tl_builder_meta(c->procs[i].b)->rank = mapped_rank(c->opts->rank_map, pids[i]);
    }
    free(pids);
    reserve(c);
}

/* The process of pid, or NULL when it has no CUDA activity. */
static nsys_proc *find_proc(nsys_ctx *c, int64_t pid)
{
    if (c->last->pid == pid)
        return c->last;
    for (size_t i = 0; i < c->n_procs; i++)
        if (c->procs[i].pid == pid)
            return c->last = &c->procs[i];
    return NULL;
}

/* The process of a row; rows without a known pid go to the first process. */
static nsys_proc *proc_of(nsys_ctx *c, int64_t pid)
{
    nsys_proc *p = find_proc(c, pid);
    return p ? p : &c->procs[0];
}

/* The builder track of key, through a small direct-mapped cache keyed by
 * (a, b): rows alternate between a few streams or threads, and the
 * builder's own lookup is a linear search. */
static uint32_t track_of(nsys_proc *p, const tl_track_key *key, int64_t a, int64_t b)
{
    uint64_t h = ((uint64_t)a * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)b * 0xC2B2AE3D27D4EB4Full) ^ key->kind;
    track_slot *t = &p->tcache[(h >> 32) % TRACK_CACHE];
    if (t->kind == key->kind + 1u && t->a == a && t->b == b)
        return t->track;
    *t = (track_slot){ a, b, tl_builder_track(p->b, key), (uint8_t)(key->kind + 1) };
    return t->track;
}

static uint32_t gpu_track(nsys_proc *p, int64_t device, int64_t stream)
{
    tl_track_key k = { TL_TRACK_GPU, p->pid, stream, (int32_t)device, stream };
    return track_of(p, &k, device, stream);
}

static uint32_t cpu_track(nsys_proc *p, int64_t gtid)
{
    tl_track_key k = { TL_TRACK_CPU, p->pid, gtid >= 0 ? TID_OF(gtid) : 0, -1, -1 };
    return track_of(p, &k, gtid, -1);
}

static void add_event(nsys_proc *p, nsys_ctx *c, int64_t start, int64_t end, uint32_t name, tl_cat cat,
                      uint32_t track, int64_t corr, uint32_t flags)
{
    tl_ev ev = { .ts_ns = start, .dur_ns = 0, .name = name, .cat = cat, .track = track,
                 .corr = corr, .ext_id = -1, .flags = flags };
    /* a row whose end minus start does not fit (start INT64_MAX, end
     * INT64_MIN) is as damaged as a negative duration */
    if (__builtin_sub_overflow(end, start, &ev.dur_ns) || ev.dur_ns < 0) {
        diag_count(tl_builder_diag(p->b), DIAG_NEGATIVE_DUR, c->path, -1);
        ev.dur_ns = 0;
    }
    tl_builder_add(p->b, &ev);
}

/* Every CUPTI GPU-activity query starts with these six columns. Device and
 * stream go into the track key, as the Kineto reader puts them. */
#define GPU_COLS                                                                                                \
    { "start", "0" }, { "end", "0" }, { "deviceId", "0" }, { "streamId", "0" }, { "correlationId", "-1" },      \
    {                                                                                                           \
        "globalPid", "-1"                                                                                       \
    }

static nsys_proc *row_proc(nsys_ctx *c, sqlite3_stmt *st)
{
    int64_t gpid = I64(st, 5);
    return proc_of(c, gpid >= 0 ? PID_OF(gpid) : -1);
}

/* Add the GPU event of the current row (columns GPU_COLS) to process p and,
 * when bytes_col >= 0, its byte count. */
static void gpu_row(nsys_ctx *c, sqlite3_stmt *st, nsys_proc *p, uint32_t name, tl_cat cat, int bytes_col)
{
    add_event(p, c, I64(st, 0), I64(st, 1), name, cat, gpu_track(p, I64(st, 2), I64(st, 3)), I64(st, 4), 0);
    if (bytes_col >= 0)
        tl_builder_arg_int(p->b, p->k_bytes, I64(st, bytes_col));
}

/* ---- CUDA activity ---- */

static void read_kernels(nsys_ctx *c, const char *tail)
{
    static const qcol cols[] = { GPU_COLS, { "demangledName", "-1" }, { "shortName", "-1" },
                                 { "gridX*gridY*gridZ", "1" }, { "blockX*blockY*blockZ", "1" } };
    sqlite3_stmt *st = select_cols(c, "CUPTI_ACTIVITY_KIND_KERNEL", cols, CP_ARRAY_LEN(cols), tail);
    if (!st)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        nsys_proc *p = row_proc(c, st);
        int64_t dev = I64(st, 2), dname = I64(st, 6), sname = I64(st, 7);
        if (dev >= 0 && dev < (int64_t)CP_ARRAY_LEN(c->dev_owner) && !c->dev_owner[dev])
            c->dev_owner[dev] = (p - c->procs) + 1;
        gpu_row(c, st, p, sid_plain(c, p, dname >= 0 ? dname : sname), TL_CAT_KERNEL, -1);
        tl_builder *b = p->b;
        if (sname >= 0)
            tl_builder_arg_str(b, p->k_short_name, sid_plain(c, p, sname));
        tl_builder_arg_int(b, p->k_grid, I64(st, 8));
        tl_builder_arg_int(b, p->k_block, I64(st, 9));
    }
    sqlite3_finalize(st);
}

/* ENUM_CUDA_MEMCPY_OPER and ENUM_CUDA_MEM_KIND, carried here because lazy
 * exports may lack the enum tables. */
static const char *const copy_tags[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD",
                                         "DtoA",    "DtoD", "HtoH", "PtoP", "HtoD", "DtoH", "DtoD" };
static const char *const mem_kinds[] = { "Pageable",       "Pinned", "Device", "Array", "Managed", "Device Static",
                                         "Managed Static", "Unknown" };

static size_t clamp_idx(int64_t v, size_t n, size_t dflt) { return v >= 0 && v < (int64_t)n ? (size_t)v : dflt; }

static void read_memcpy(nsys_ctx *c)
{
    static const qcol cols[] = { GPU_COLS, { "bytes", "0" }, { "copyKind", "0" }, { "srcKind", NULL },
                                 { "dstKind", "7" } };
    sqlite3_stmt *st = select_cols(c, "CUPTI_ACTIVITY_KIND_MEMCPY", cols, CP_ARRAY_LEN(cols), NULL);
    if (!st)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        nsys_proc *p = row_proc(c, st);
        size_t kind = clamp_idx(I64(st, 7), CP_ARRAY_LEN(copy_tags), 0);
        size_t src = sqlite3_column_type(st, 8) == SQLITE_NULL ? 8 : clamp_idx(I64(st, 8), 8, 7);
        size_t dst = clamp_idx(I64(st, 9), 8, 7);
        uint32_t *nm = &p->copy_names[kind][src][dst];
        if (!*nm) { /* "Memcpy HtoD (Pageable -> Device)", as Kineto names it */
            char name[96];
            if (src < 8)
                snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", copy_tags[kind], mem_kinds[src], mem_kinds[dst]);
            else
                snprintf(name, sizeof name, "Memcpy %s", copy_tags[kind]);
            *nm = str(p, name) + 1;
        }
        gpu_row(c, st, p, *nm - 1, TL_CAT_GPU_MEMCPY, 6);
    }
    sqlite3_finalize(st);
}

static void read_memset(nsys_ctx *c)
{
    static const qcol cols[] = { GPU_COLS, { "bytes", "0" }, { "memKind", "2" } };
    sqlite3_stmt *st = select_cols(c, "CUPTI_ACTIVITY_KIND_MEMSET", cols, CP_ARRAY_LEN(cols), NULL);
    if (!st)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        nsys_proc *p = row_proc(c, st);
        size_t k = clamp_idx(I64(st, 7), 8, 7);
        if (!p->set_names[k]) {
            char name[64];
            snprintf(name, sizeof name, "Memset (%s)", mem_kinds[k]);
            p->set_names[k] = str(p, name) + 1;
        }
        gpu_row(c, st, p, p->set_names[k] - 1, TL_CAT_GPU_MEMSET, 6);
    }
    sqlite3_finalize(st);
}

static void read_sync(nsys_ctx *c)
{
    static const char *const names[] = { "Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync",
                                         "Context Sync" };
    static const qcol cols[] = { GPU_COLS, { "syncType", "0" } };
    sqlite3_stmt *st = select_cols(c, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", cols, CP_ARRAY_LEN(cols), NULL);
    if (!st)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        nsys_proc *p = row_proc(c, st);
        size_t t = clamp_idx(I64(st, 6), CP_ARRAY_LEN(names), 0);
        if (!p->sync_names[t])
            p->sync_names[t] = str(p, names[t]) + 1;
        gpu_row(c, st, p, p->sync_names[t] - 1, TL_CAT_CUDA_SYNC, -1);
    }
    sqlite3_finalize(st);
}

static void read_runtime(nsys_ctx *c, const char *tail)
{
    static const qcol cols[] = { { "start", "0" }, { "end", "0" }, { "globalTid", "-1" }, { "correlationId", "-1" },
                                 { "nameId", "-1" } };
    sqlite3_stmt *st = select_cols(c, "CUPTI_ACTIVITY_KIND_RUNTIME", cols, CP_ARRAY_LEN(cols), tail);
    if (!st)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t gtid = I64(st, 2);
        nsys_proc *p = proc_of(c, gtid >= 0 ? PID_OF(gtid) : -1);
        uint8_t info;
        uint32_t name = sid_api(c, p, I64(st, 4), &info);
        add_event(p, c, I64(st, 0), I64(st, 1), name, info & API_DRIVER ? TL_CAT_CUDA_DRIVER : TL_CAT_CUDA_RUNTIME,
                  cpu_track(p, gtid), I64(st, 3), info & API_SYNC ? TL_F_SYNC_CALL : 0);
    }
    sqlite3_finalize(st);
}

/* ---- NVTX ---- */

enum { NVTX_MARK = 34, NVTX_PUSHPOP = 59, NVTX_STARTEND = 60, NVTXT_PUSHPOP = 70, NVTXT_STARTEND = 71,
       NVTX_DOMAIN_CREATE = 75 };

static void load_domains(nsys_ctx *c)
{
    c->nccl_domain = -1;
    sqlite3_stmt *st;
    if (!table_has(c, "NVTX_EVENTS") ||
        sqlite3_prepare_v2(c->db, "SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = 75", -1, &st, NULL) !=
            SQLITE_OK)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 1);
        int64_t id = sqlite3_column_int64(st, 0);
        if (t && !strcmp(t, "NCCL"))
            c->nccl_domain = id;
    }
    sqlite3_finalize(st);
}

typedef struct payload_schema {
    int64_t domain, id;
    rd_nvtx_entry *entries;
    size_t n;
} payload_schema;

static size_t load_payload_schemas(nsys_ctx *c, payload_schema **out)
{
    *out = NULL;
    static const qcol cols[] = { { "domainId", NULL }, { "schemaId", NULL }, { "type", NULL }, { "offset", NULL },
                                 { "name", NULL } };
    sqlite3_stmt *st = select_cols(c, "NVTX_PAYLOAD_SCHEMA_ENTRIES", cols, CP_ARRAY_LEN(cols),
                                   "ORDER BY domainId, schemaId, idx");
    if (!st)
        return 0;
    payload_schema *v = NULL;
    size_t n = 0, cap = 0, ecap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t dom = col_i64(st, 0, 0), sid = col_i64(st, 1, 0);
        if (!n || v[n - 1].domain != dom || v[n - 1].id != sid) {
            cp_xgrow((void **)&v, &cap, n + 1, sizeof *v);
            v[n++] = (payload_schema){ dom, sid, NULL, 0 };
            ecap = 0;
        }
        payload_schema *s = &v[n - 1];
        cp_xgrow((void **)&s->entries, &ecap, s->n + 1, sizeof *s->entries);
        const char *nm = (const char *)sqlite3_column_text(st, 4);
        s->entries[s->n++] = (rd_nvtx_entry){ (uint64_t)col_i64(st, 2, 0), (uint64_t)col_i64(st, 3, 0),
                                              cp_arena_strdup(&c->arena, nm ? nm : "") };
    }
    sqlite3_finalize(st);
    *out = v;
    return n;
}

/* Attach decoded payload fields of NCCL ranges as args ("Message size
 * [bytes]" -> bytes, "Rank", "No. of ranks", "Peer rank", "Root"). */
static void payload_args(nsys_proc *p, sqlite3_stmt *st, int col, int64_t domain,
                         const payload_schema *schemas, size_t n_schemas)
{
    int type = sqlite3_column_type(st, col);
    if (type == SQLITE_NULL || n_schemas == 0)
        return;
    const uint8_t *data = type == SQLITE_BLOB ? sqlite3_column_blob(st, col) : sqlite3_column_text(st, col);
    size_t n = (size_t)sqlite3_column_bytes(st, col);
    uint8_t blob[4096];
    size_t len = rd_nvtx_blob_bytes(data, n, type == SQLITE_TEXT, blob, sizeof blob);
    for (size_t s = 0; s < n_schemas; s++) {
        if (schemas[s].domain != domain)
            continue;
        /* without a schema id column in NVTX_EVENTS, the schema whose static
         * size matches the blob is the one (NCCL's schemas differ in size) */
        size_t need = 0;
        for (size_t e = 0; e < schemas[s].n; e++)
            need = CP_MAX(need, (size_t)schemas[s].entries[e].offset + 8);
        if (need > len + 7 || need + 8 < len)
            continue;
        rd_nvtx_value vals[16];
        size_t skipped;
        size_t k = rd_nvtx_decode(schemas[s].entries, schemas[s].n, blob, len, vals, 16, &skipped);
        for (size_t i = 0; i < k; i++) {
            if (!vals[i].name[0] || vals[i].is_float)
                continue;
            tl_builder_arg_int(p->b, str(p, vals[i].name), vals[i].i);
            if (!strcmp(vals[i].name, "Rank") && tl_builder_meta(p->b)->rank < 0)
                tl_builder_meta(p->b)->rank = (int32_t)vals[i].i;
        }
        break;
    }
}

/* The name and category of an NVTX range or mark from its text: NCCL's
 * ranges keep their full text, PyTorch emit_nvtx ranges become the op,
 * the rest are user annotations. The op name is worked out once per
 * StringIds id (memo) or per row for inline texts. */
static tl_cat nvtx_name(nsys_ctx *c, nsys_proc *p, int64_t domain, const char *text, int64_t text_id,
                        uint32_t *name)
{
    sid_memo *m = text ? NULL : memo_of(c, p, text_id);
    if (!m || !m->op) {
        if (!text)
            text = sid_text(c, text_id);
        if (!text)
            text = "";
        size_t oplen = rd_nsys_torch_op_len(text);
        uint32_t full = str(p, text);
        uint32_t op = oplen ? cp_intern_n(tl_builder_strings(p->b), text, oplen) : UINT32_MAX;
        bool nccl = strncmp(text, "nccl", 4) == 0;
        if (!m) { /* an inline text: nothing to remember */
            if ((c->nccl_domain >= 0 && domain == c->nccl_domain) || (domain > 0 && nccl))
                return *name = full, TL_CAT_NVTX;
            return op != UINT32_MAX ? (*name = op, TL_CAT_CPU_OP) : (*name = full, TL_CAT_USER_ANNOTATION);
        }
        m->plain = full + 1;
        m->op = op == UINT32_MAX ? 1 : op + 2;
        m->nccl_text = nccl;
    }
    /* NCCL's ranges name the NCCL API call; the domain row may be cut out of
     * a sliced capture, so the names identify them too */
    if ((c->nccl_domain >= 0 && domain == c->nccl_domain) || (domain > 0 && m->nccl_text))
        return *name = m->plain - 1, TL_CAT_NVTX;
    if (m->op > 1)
        return *name = m->op - 2, TL_CAT_CPU_OP;
    return *name = m->plain - 1, TL_CAT_USER_ANNOTATION;
}

static void read_nvtx(nsys_ctx *c)
{
    load_domains(c);
    payload_schema *schemas;
    size_t n_schemas = load_payload_schemas(c, &schemas);
    static const qcol cols[] = { { "start", "0" },    { "end", "-1" },       { "eventType", "0" },
                                 { "text", NULL },    { "textId", "-1" },    { "globalTid", "-1" },
                                 { "domainId", "0" }, { "binaryData", NULL } };
    sqlite3_stmt *st = select_cols(c, "NVTX_EVENTS", cols, CP_ARRAY_LEN(cols), NULL);
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int64_t type = I64(st, 2);
        bool range = type == NVTX_PUSHPOP || type == NVTX_STARTEND || type == NVTXT_PUSHPOP ||
                     type == NVTXT_STARTEND;
        if (!range && type != NVTX_MARK)
            continue; /* domain creation, categories, naming: metadata only */
        int64_t gtid = I64(st, 5);
        nsys_proc *p = proc_of(c, gtid >= 0 ? PID_OF(gtid) : -1);
        int64_t start = I64(st, 0), end = I64(st, 1);
        uint32_t flags = 0;
        if (type == NVTX_MARK) {
            end = start;
            flags |= TL_F_INSTANT;
        } else if (end < 0) {
            diag_count(tl_builder_diag(p->b), DIAG_MISSING_DUR, c->path, -1);
            end = start;
            flags |= TL_F_NO_DUR;
        }
        int64_t domain = I64(st, 6);
        uint32_t name;
        tl_cat cat = nvtx_name(c, p, domain, (const char *)sqlite3_column_text(st, 3), I64(st, 4), &name);
        add_event(p, c, start, end, name, cat, cpu_track(p, gtid), -1, flags);
        if (cat == TL_CAT_NVTX) {
            tl_builder_arg_str(p->b, p->k_domain, p->s_nccl);
            payload_args(p, st, 7, domain, schemas, n_schemas);
        } else if (domain > 0) {
            tl_builder_arg_int(p->b, p->k_domain, domain);
        }
    }
    sqlite3_finalize(st);
    for (size_t i = 0; i < n_schemas; i++)
        free(schemas[i].entries);
    free(schemas);
}

/* ---- OS runtime, names, devices, clock ---- */

static void read_osrt(nsys_ctx *c)
{
    static const qcol cols[] = { { "start", "0" }, { "end", "0" }, { "globalTid", "-1" }, { "nameId", "-1" } };
    sqlite3_stmt *st = select_cols(c, "OSRT_API", cols, CP_ARRAY_LEN(cols), NULL);
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int64_t gtid = I64(st, 2);
        /* OS runtime calls of processes without CUDA activity are not part of the job */
        nsys_proc *p = find_proc(c, gtid >= 0 ? PID_OF(gtid) : -1);
        if (!p)
            continue;
        add_event(p, c, I64(st, 0), I64(st, 1), sid_plain(c, p, I64(st, 3)), TL_CAT_OSRT, cpu_track(p, gtid), -1, 0);
    }
    sqlite3_finalize(st);
}

static void read_thread_names(nsys_ctx *c)
{
    static const qcol cols[] = { { "nameId", "-1" }, { "globalTid", NULL } };
    sqlite3_stmt *st = select_cols(c, "ThreadNames", cols, CP_ARRAY_LEN(cols), NULL);
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int64_t gtid = col_i64(st, 1, -1);
        if (gtid < 0)
            continue;
        int64_t pid = PID_OF(gtid);
        for (size_t i = 0; i < c->n_procs; i++)
            if (c->procs[i].pid == pid) {
                nsys_proc *p = &c->procs[i];
                tl_builder_track_name(p->b, cpu_track(p, gtid), sid_plain(c, p, I64(st, 0)));
            }
    }
    sqlite3_finalize(st);
}

static void read_meta(nsys_ctx *c)
{
    int64_t base = 0;
    bool has_base = false;
    static const qcol tcols[] = { { "utcEpochNs", NULL }, { "systemClockNs", NULL } };
    sqlite3_stmt *st = select_cols(c, "TARGET_INFO_SESSION_START_TIME", tcols, 2, NULL);
    if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        has_base = true;
        base = sqlite3_column_int64(st, 0) - col_i64(st, 1, 0);
    }
    sqlite3_finalize(st);
    char gpu[256] = "";
    int64_t mem = -1, n_gpus = 0;
    static const qcol gcols[] = { { "name", NULL }, { "totalMemory", NULL } };
    st = select_cols(c, "TARGET_INFO_GPU", gcols, 2, "ORDER BY id");
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        if (!n_gpus++ && sqlite3_column_text(st, 0)) {
            snprintf(gpu, sizeof gpu, "%s", (const char *)sqlite3_column_text(st, 0));
            mem = col_i64(st, 1, -1);
        }
    }
    sqlite3_finalize(st);
    char host[256] = "";
    static const qcol ecols[] = { { "name", NULL }, { "value", NULL } };
    st = select_cols(c, "TARGET_INFO_SYSTEM_ENV", ecols, 2, "WHERE name = 'Hostname'");
    if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 1))
        snprintf(host, sizeof host, "%s", (const char *)sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    for (size_t i = 0; i < c->n_procs; i++) {
        tl_builder *b = c->procs[i].b;
        if (i > 0 && b == c->procs[0].b)
            break;
        tl_rank_meta *m = tl_builder_meta(b);
        m->has_base_time = has_base;
        m->base_time_ns = base;
        m->format = cp_intern_s(tl_builder_strings(b), "nsys");
        m->vendor = TL_VENDOR_NVIDIA;
        m->n_devices = (int32_t)n_gpus;
        m->gpu_mem_bytes = mem;
        if (gpu[0])
            m->gpu_name = cp_intern_s(tl_builder_strings(b), gpu);
        if (host[0])
            m->hostname = cp_intern_s(tl_builder_strings(b), host);
    }
}

/* ---- GPU and NIC/IB metrics: counters ----
 *
 * Sampled metrics become counter samples as the Kineto reader keeps "C"
 * events: instant events on a track of kind TL_TRACK_OTHER, named by the
 * metric, the sample in arg "value". GPU_METRICS (timestamp, typeId,
 * metricId, value) is named through TARGET_INFO_GPU_METRICS (typeId,
 * metricId, metricName); the GPU is typeId & 0xFF, and its samples go to the
 * process whose kernels ran on that GPU (else the first). NET_NIC_METRIC and
 * NET_IB_SWITCH_METRIC (start, end, globalId, portId, metricsListId,
 * metricsIdx, value) are named through TARGET_INFO_NETWORK_METRICS
 * (metricsListId, metricsIdx, name) and the device through NIC_ID_MAP +
 * TARGET_INFO_NIC_INFO; NICs serve the whole node, so their samples go to
 * the first process. Every table is optional; a sample without a time or a
 * value counts as bad_event. */

typedef struct mentry {
    int64_t a, b;     /* (typeId, metricId) or (metricsListId, metricsIdx) */
    const char *text; /* the dictionary's name (arena), NULL when not listed */
    uint32_t name;    /* interned in the target builder, +1 */
} mentry;

typedef struct mdict {
    mentry *v;
    size_t n, cap;
} mdict;

/* Index of (a, b) in the sorted dictionary, or where it goes. */
static size_t mdict_pos(const mdict *d, int64_t a, int64_t b)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const mentry *e = &d->v[mid];
        if (e->a < a || (e->a == a && e->b < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static mentry *mdict_get(mdict *d, int64_t a, int64_t b)
{
    size_t i = mdict_pos(d, a, b);
    if (i < d->n && d->v[i].a == a && d->v[i].b == b)
        return &d->v[i];
    cp_xgrow((void **)&d->v, &d->cap, d->n + 1, sizeof *d->v);
    memmove(&d->v[i + 1], &d->v[i], (d->n - i) * sizeof *d->v);
    d->n++;
    d->v[i] = (mentry){ a, b, NULL, 0 };
    return &d->v[i];
}

/* Fill d from a query of (a, b, name) rows; the first name of a key wins. */
static void mdict_load(nsys_ctx *c, mdict *d, const char *table, const qcol cols[3])
{
    sqlite3_stmt *st = select_cols(c, table, cols, 3, NULL);
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 2);
        mentry *e = mdict_get(d, I64(st, 0), I64(st, 1));
        if (t && !e->text)
            e->text = cp_arena_strdup(&c->arena, t);
    }
    sqlite3_finalize(st);
}

/* The metric's name in p's builder ("metric A/B" when the dictionary lacks it). */
static uint32_t metric_name(nsys_proc *p, mentry *e)
{
    if (!e->name) {
        char tmp[64];
        if (!e->text)
            snprintf(tmp, sizeof tmp, "metric %lld/%lld", (long long)e->a, (long long)e->b);
        e->name = str(p, e->text ? e->text : tmp) + 1;
    }
    return e->name - 1;
}

/* Append one counter sample (the value column `vcol` as int or number). */
static void add_sample(nsys_proc *p, int64_t ts, uint32_t name, uint32_t cat_name, uint32_t track,
                       sqlite3_stmt *st, int vcol)
{
    tl_ev ev = { .ts_ns = ts, .name = name, .cat_name = cat_name, .cat = TL_CAT_OTHER, .track = track,
                 .corr = -1, .ext_id = -1, .flags = TL_F_INSTANT };
    tl_builder_add(p->b, &ev);
    if (sqlite3_column_type(st, vcol) == SQLITE_INTEGER)
        tl_builder_arg_int(p->b, p->k_value, I64(st, vcol));
    else
        tl_builder_arg_num(p->b, p->k_value, sqlite3_column_double(st, vcol));
}

static void read_gpu_metrics(nsys_ctx *c)
{
    static const qcol cols[] = { { "timestamp", NULL }, { "typeId", "0" }, { "metricId", "-1" }, { "value", NULL } };
    sqlite3_stmt *st = select_cols(c, "GPU_METRICS", cols, CP_ARRAY_LEN(cols), NULL);
    if (!st)
        return;
    static const qcol dcols[] = { { "typeId", "0" }, { "metricId", "-1" }, { "metricName", NULL } };
    mdict d = { 0 };
    mdict_load(c, &d, "TARGET_INFO_GPU_METRICS", dcols);
    /* per GPU (typeId & 0xFF): its process and track, made on first use;
     * rows of several GPUs interleave sample by sample */
    nsys_proc *gp[256] = { 0 };
    uint32_t gtrack[256], gcat[256];
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t type = I64(st, 1);
        size_t dev = (size_t)(type & 0xFF);
        if (!gp[dev]) {
            int64_t owner = dev < CP_ARRAY_LEN(c->dev_owner) ? c->dev_owner[dev] : 0;
            nsys_proc *p = gp[dev] = owner ? &c->procs[owner - 1] : &c->procs[0];
            tl_track_key k = { TL_TRACK_OTHER, p->pid, (int64_t)dev, (int32_t)dev, -1 };
            gtrack[dev] = tl_builder_track(p->b, &k);
            char tn[48];
            snprintf(tn, sizeof tn, "GPU %zu metrics", dev);
            tl_builder_track_name(p->b, gtrack[dev], str(p, tn));
            gcat[dev] = str(p, "gpu_metrics");
        }
        nsys_proc *p = gp[dev];
        if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 3) == SQLITE_NULL) {
            diag_count(tl_builder_diag(p->b), DIAG_BAD_EVENT, c->path, -1);
            continue;
        }
        add_sample(p, I64(st, 0), metric_name(p, mdict_get(&d, type, I64(st, 2))), gcat[dev], gtrack[dev], st, 3);
    }
    sqlite3_finalize(st);
    free(d.v);
}

/* NIC names by metric globalId (NIC_ID_MAP + TARGET_INFO_NIC_INFO). */
static void load_nic_names(nsys_ctx *c, mdict *names)
{
    if (!table_has(c, "NIC_ID_MAP") || !table_has(c, "TARGET_INFO_NIC_INFO") ||
        !col_has(c, "NIC_ID_MAP", "globalId") || !col_has(c, "NIC_ID_MAP", "nicId") ||
        !col_has(c, "TARGET_INFO_NIC_INFO", "nicId") || !col_has(c, "TARGET_INFO_NIC_INFO", "name"))
        return;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db,
                           "SELECT m.globalId, 0, i.name FROM NIC_ID_MAP m JOIN TARGET_INFO_NIC_INFO i "
                           "ON i.nicId = m.nicId",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 2);
        mentry *e = mdict_get(names, I64(st, 0), 0);
        if (t && !e->text)
            e->text = cp_arena_strdup(&c->arena, t);
    }
    sqlite3_finalize(st);
}

/* NET_NIC_METRIC or NET_IB_SWITCH_METRIC: counters of the node's first process. */
static void read_net_metrics(nsys_ctx *c, const char *table, const char *cat_name, const char *what,
                             const mdict *nics, mdict *d)
{
    static const qcol cols[] = { { "start", NULL },        { "end", NULL },        { "globalId", "0" },
                                 { "portId", "0" },        { "metricsListId", "-1" }, { "metricsIdx", "-1" },
                                 { "value", NULL } };
    sqlite3_stmt *st = select_cols(c, table, cols, CP_ARRAY_LEN(cols), NULL);
    if (!st)
        return;
    nsys_proc *p = &c->procs[0];
    uint32_t cat = str(p, cat_name);
    int64_t lg = INT64_MIN, lport = INT64_MIN;
    uint32_t ltrack = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 6) == SQLITE_NULL) {
            diag_count(tl_builder_diag(p->b), DIAG_BAD_EVENT, c->path, -1);
            continue;
        }
        int64_t g = I64(st, 2), port = I64(st, 3);
        if (g != lg || port != lport) {
            /* device -2 keeps these tracks apart from the GPU metric tracks */
            tl_track_key k = { TL_TRACK_OTHER, p->pid, g, -2, port };
            ltrack = tl_builder_track(p->b, &k);
            size_t i = mdict_pos(nics, g, 0);
            const char *nic = i < nics->n && nics->v[i].a == g ? nics->v[i].text : NULL;
            char tn[160];
            if (nic)
                snprintf(tn, sizeof tn, "%s %s port %lld", what, nic, (long long)port);
            else
                snprintf(tn, sizeof tn, "%s %lld port %lld", what, (long long)g, (long long)port);
            tl_builder_track_name(p->b, ltrack, str(p, tn));
            lg = g;
            lport = port;
        }
        int64_t start = I64(st, 0);
        add_sample(p, start, metric_name(p, mdict_get(d, I64(st, 4), I64(st, 5))), cat, ltrack, st, 6);
        tl_builder_arg_int(p->b, p->k_port, port);
        if (sqlite3_column_type(st, 1) != SQLITE_NULL && I64(st, 1) >= start)
            tl_builder_arg_int(p->b, p->k_interval, I64(st, 1) - start);
    }
    sqlite3_finalize(st);
}

static void read_metrics(nsys_ctx *c)
{
    read_gpu_metrics(c);
    if (!table_has(c, "NET_NIC_METRIC") && !table_has(c, "NET_IB_SWITCH_METRIC"))
        return;
    static const qcol dcols[] = { { "metricsListId", "-1" }, { "metricsIdx", "-1" }, { "name", NULL } };
    mdict d = { 0 }, nics = { 0 };
    mdict_load(c, &d, "TARGET_INFO_NETWORK_METRICS", dcols);
    load_nic_names(c, &nics);
    read_net_metrics(c, "NET_NIC_METRIC", "nic_metrics", "NIC", &nics, &d);
    read_net_metrics(c, "NET_IB_SWITCH_METRIC", "ib_switch_metrics", "IB switch", &nics, &d);
    free(d.v);
    free(nics.v);
}

/* Percent-encode a path for an SQLite file: URI. */
static void uri_for(const char *path, char *out, size_t cap)
{
    size_t w = (size_t)snprintf(out, cap, "file:");
    for (const unsigned char *s = (const unsigned char *)path; *s && w + 4 < cap; s++) {
        if (*s == '?' || *s == '#' || *s == '%' || *s < 0x21 || *s >= 0x7f)
            w += (size_t)snprintf(out + w, cap - w, "%%%02X", *s);
        else
            out[w++] = (char)*s;
    }
    snprintf(out + w, cap - w, "?mode=ro&immutable=1");
}

/* One connection per thread (no SQLite mutex on every column read), the
 * immutable file's pages mapped rather than copied through the page cache. */
static int open_db(const char *uri, sqlite3 **db)
{
    int rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK)
        sqlite3_exec(*db, "PRAGMA mmap_size = 1099511627776", NULL, NULL, NULL);
    return rc;
}

/* Free what a context owns except the builders. */
static void ctx_close(nsys_ctx *c)
{
    for (size_t i = 0; i < c->n_procs; i++)
        free(c->procs[i].memo);
    free(c->procs);
    sqlite3_finalize(c->str_st);
    cp_arena_free(&c->arena);
    sqlite3_close(c->db);
}

/* ---- the big tables, read in parts on several threads ----
 *
 * Kernels and runtime calls are most of an export's rows. With more than
 * one thread such a table is read in parts of consecutive rowids, each on
 * its own connection into its own builders (one per process), a batch of
 * `threads` parts at a time; after each batch the parts are absorbed into
 * the process builders in rowid order (tl_builder_absorb). Rows, strings
 * and tracks then land in the order a serial read leaves them, so the
 * timeline (and every figure) is the same for every thread count, and at
 * most one batch of parts is held beside the builders. */

/* Rows per part: enough that a part's connection, statements and builders
 * cost nothing next to its rows; few enough that a batch holds little. */
#define PART_ROWS ((int64_t)1 << 20)
#define PARTS_MAX 4096

typedef void (*table_fn)(nsys_ctx *c, const char *tail);

typedef struct nsys_part {
    int64_t lo, hi; /* rowids [lo, hi) */
    nsys_ctx c;     /* its own connection, processes and builders */
    bool ok;        /* read; else the main connection reads it when absorbing */
    bool direct;    /* read straight into the process builders (the batch's first part) */
} nsys_part;

typedef struct part_batch {
    nsys_ctx *main;
    const char *uri;
    table_fn read;
    size_t args_per_row;
    nsys_part *parts;
} part_batch;

static void part_tail(const nsys_part *pt, char *out, size_t cap)
{
    snprintf(out, cap, "WHERE rowid >= %lld AND rowid < %lld", (long long)pt->lo, (long long)pt->hi);
}

/* The first process of m that shares process k's builder (k when none). */
static size_t builder_owner(const nsys_ctx *m, size_t k)
{
    size_t j = 0;
    while (m->procs[j].b != m->procs[k].b)
        j++;
    return j;
}

static void part_read(void *ctx, size_t i)
{
    part_batch *pb = ctx;
    nsys_ctx *m = pb->main;
    nsys_part *pt = &pb->parts[i];
    nsys_ctx *c = &pt->c;
    char tail[96];
    part_tail(pt, tail, sizeof tail);
    if (i == 0) { /* next in row order: nothing else touches the main context during a batch */
        pb->read(m, tail);
        pt->ok = pt->direct = true;
        return;
    }
    *c = (nsys_ctx){ .path = m->path, .opts = m->opts, .nccl_domain = m->nccl_domain };
    cp_arena_init(&c->arena);
    if (open_db(pb->uri, &c->db) != SQLITE_OK)
        return; /* pt->ok stays false: read on the main connection instead */
    open_strings(c);
    c->n_procs = m->n_procs;
    c->procs = cp_xcalloc(c->n_procs, sizeof *c->procs);
    c->last = &c->procs[0];
    size_t n_b = 0;
    for (size_t k = 0; k < c->n_procs; k++)
        n_b += builder_owner(m, k) == k;
    size_t rows = (size_t)(pt->hi - pt->lo) / n_b + 1;
    for (size_t k = 0; k < c->n_procs; k++) {
        nsys_proc *p = &c->procs[k];
        size_t j = builder_owner(m, k);
        p->pid = m->procs[k].pid;
        if (j < k) {
            p->b = c->procs[j].b;
        } else {
            p->b = tl_builder_new(tl_builder_source(m->procs[k].b));
            tl_builder_reserve(p->b, rows, rows * pb->args_per_row);
        }
        init_proc(p);
    }
    pb->read(c, tail);
    pt->ok = true;
}

static void part_absorb(nsys_ctx *m, table_fn read, nsys_part *pt)
{
    nsys_ctx *c = &pt->c;
    if (pt->direct)
        return;
    if (!pt->ok) {
        char tail[96];
        part_tail(pt, tail, sizeof tail);
        read(m, tail);
    } else {
        for (size_t k = 0; k < m->n_procs; k++)
            if (builder_owner(m, k) == k)
                tl_builder_absorb(m->procs[k].b, c->procs[k].b);
        for (size_t d = 0; d < CP_ARRAY_LEN(m->dev_owner); d++)
            if (!m->dev_owner[d])
                m->dev_owner[d] = c->dev_owner[d];
    }
    ctx_close(c);
}

/* Read table with fn: in parts on opts->threads threads when it is large,
 * else in one pass on the main connection. */
static void read_big(nsys_ctx *m, const char *uri, const char *table, table_fn read, size_t args_per_row)
{
    int threads = m->opts && m->opts->threads > 1 ? m->opts->threads : 1;
    int64_t lo = 0, hi = 0;
    if (threads > 1)
        rowid_range(m, table, &lo, &hi);
    int64_t part_rows = m->opts && m->opts->split_rows ? (int64_t)m->opts->split_rows : PART_ROWS;
    if (hi - lo <= part_rows) {
        read(m, NULL);
        return;
    }
    int64_t n_parts = (hi - lo + part_rows - 1) / part_rows;
    n_parts = n_parts > PARTS_MAX ? PARTS_MAX : n_parts;
    int64_t step = (hi - lo + n_parts - 1) / n_parts;
    nsys_part *parts = cp_xcalloc((size_t)threads, sizeof *parts);
    for (int64_t first = lo; first < hi;) {
        size_t n = 0;
        for (; n < (size_t)threads && first < hi; n++, first += step)
            parts[n] = (nsys_part){ .lo = first, .hi = hi - first < step ? hi : first + step };
        part_batch pb = { m, uri, read, args_per_row, parts };
        cp_par_for(n, threads, part_read, &pb);
        for (size_t i = 0; i < n; i++)
            part_absorb(m, read, &parts[i]);
    }
    free(parts);
}

/* A cut SQLite file is not "a database without Nsight Systems tables": the
 * header (sqlite.org/fileformat.html) gives the page size (offset 16, 1 =
 * 65536) and, when the version-valid-for number at 92 matches the change
 * counter at 24, the size in pages (offset 28). Returns 0, or an error when
 * the file is shorter than that. */
static int check_not_cut(const char *path, const char *shown, cp_error *err)
{
    unsigned char h[100];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0; /* opening reports it */
    size_t got = fread(h, 1, sizeof h, f);
    fclose(f);
    struct stat st;
    if (got < sizeof h || stat(path, &st) != 0 || memcmp(h, "SQLite format 3", 16) != 0)
        return 0;
    uint32_t page = (uint32_t)h[16] << 8 | h[17];
    page = page == 1 ? 65536 : page;
    uint32_t counter = (uint32_t)h[24] << 24 | (uint32_t)h[25] << 16 | (uint32_t)h[26] << 8 | h[27];
    uint32_t pages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 | (uint32_t)h[30] << 8 | h[31];
    uint32_t valid_for = (uint32_t)h[92] << 24 | (uint32_t)h[93] << 16 | (uint32_t)h[94] << 8 | h[95];
    uint64_t want = (uint64_t)page * pages;
    if (valid_for != counter || pages == 0 || (uint64_t)st.st_size >= want)
        return 0;
    return cp_error_set(err, CP_ERR_FORMAT, shown, 0, 0, (long long)st.st_size,
                        "truncated SQLite file: %lld of the %llu bytes its header declares (the export or the copy "
                        "was cut)", (long long)st.st_size, (unsigned long long)want);
}

static int read_sqlite(const char *path, const char *shown, tl_builder *b, const rd_opts *o, cp_error *err)
{
    int cut = check_not_cut(path, shown, err);
    if (cut < 0)
        return cut;
    nsys_ctx c = { .path = shown, .opts = o };
    cp_arena_init(&c.arena);
    char uri[8192];
    uri_for(path, uri, sizeof uri);
    int rc = open_db(uri, &c.db);
    if (rc != SQLITE_OK) {
        int r = cp_error_set(err, CP_ERR_IO, shown, 0, 0, -1, "cannot open as SQLite: %s",
                             c.db ? sqlite3_errmsg(c.db) : sqlite3_errstr(rc));
        sqlite3_close(c.db);
        return r;
    }
    if (!table_has(&c, "CUPTI_ACTIVITY_KIND_KERNEL") && !table_has(&c, "CUPTI_ACTIVITY_KIND_RUNTIME") &&
        !table_has(&c, "NVTX_EVENTS")) {
        sqlite3_close(c.db);
        return cp_error_set(err, CP_ERR_FORMAT, shown, 0, 0, 0,
                            "input not recognised: an SQLite database without Nsight Systems tables");
    }
    open_strings(&c);
    discover_procs(&c, b);
    read_meta(&c);
    read_thread_names(&c);
    /* this order is the builders' row order (ties in tl_finish's sort keep it) */
    read_big(&c, uri, "CUPTI_ACTIVITY_KIND_KERNEL", read_kernels, 3);
    read_memcpy(&c);
    read_memset(&c);
    read_sync(&c);
    read_big(&c, uri, "CUPTI_ACTIVITY_KIND_RUNTIME", read_runtime, 0);
    read_nvtx(&c);
    read_osrt(&c);
    read_metrics(&c);
    ctx_close(&c);
    return 0;
}

/* .nsys-rep: export with nsys when it is on PATH, else say exactly what to run. */
static int read_report(const char *path, tl_builder *b, const rd_opts *o, cp_error *err)
{
    char tmpdir[] = "/tmp/chainprof-nsys-XXXXXX";
    char nsys[4096];
    if (!rd_which("nsys", nsys, sizeof nsys))
        return cp_error_set(err, CP_ERR_UNAVAILABLE, path, 0, 0, -1,
                            "nsys is not on PATH to export this report; run: nsys export --type sqlite "
                            "--output %.*s.sqlite %s and analyze the .sqlite file",
                            (int)(strlen(path) - strlen(".nsys-rep")), path, path);
    if (!mkdtemp(tmpdir))
        return cp_error_sys(err, CP_ERR_IO, path, "cannot create a temporary directory for nsys export");
    char out[512];
    snprintf(out, sizeof out, "%s/export.sqlite", tmpdir);
    char *argv[] = { nsys, "export", "--type", "sqlite", "--output", out, (char *)path, NULL };
    pid_t pid;
    int status = -1;
    int rc;
    if (posix_spawn(&pid, nsys, NULL, NULL, argv, environ) != 0 || waitpid(pid, &status, 0) < 0 ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        rc = cp_error_set(err, CP_ERR_UNAVAILABLE, path, 0, 0, -1,
                          "nsys export failed (status %d); run: nsys export --type sqlite --output OUT.sqlite %s",
                          status, path);
    else
        rc = read_sqlite(out, path, b, o, err);
    unlink(out);
    rmdir(tmpdir);
    return rc;
}

int rd_nsys_read(const char *path, tl_builder *b, const rd_opts *o, cp_error *err)
{
    if (cp_str_ends(path, ".nsys-rep") || cp_str_ends(path, ".qdrep"))
        return read_report(path, b, o, err);
    return read_sqlite(path, path, b, o, err);
}
