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
 *   OS runtime calls become osrt events (storage-layer evidence).
 */
#include "reader.h"
#include "rd_nsys.h"
#include "../base/log.h"
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

typedef struct nsys_proc {
    int64_t pid;
    tl_builder *b;
    uint32_t *sid_cache; /* StringIds id -> builder string id + 1 (0 = not yet) */
} nsys_proc;

typedef struct nsys_ctx {
    sqlite3 *db;
    const char *path;
    const rd_opts *opts;
    nsys_proc *procs;
    size_t n_procs;
    char **strs; /* StringIds: id -> text (NULL when absent) */
    size_t n_strs;
    cp_arena arena;
    int64_t nccl_domain; /* NVTX domainId of NCCL, -1 unknown */
    char **domains;      /* domainId -> name, for small ids */
    size_t n_domains;
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

/* Build "SELECT a, b, NULL, ... FROM t" from wanted columns, NULL for absent ones. */
static sqlite3_stmt *select_cols(nsys_ctx *c, const char *table, const char *const *cols, size_t n,
                                 const char *tail)
{
    if (!table_has(c, table))
        return NULL;
    char sql[2048];
    size_t w = (size_t)snprintf(sql, sizeof sql, "SELECT ");
    for (size_t i = 0; i < n && w < sizeof sql; i++)
        w += (size_t)snprintf(sql + w, sizeof sql - w, "%s%s", i ? ", " : "",
                              col_has(c, table, cols[i]) ? cols[i] : "NULL");
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

static void load_strings(nsys_ctx *c)
{
    sqlite3_stmt *st;
    if (!table_has(c, "StringIds") ||
        sqlite3_prepare_v2(c->db, "SELECT id, value FROM StringIds", -1, &st, NULL) != SQLITE_OK)
        return;
    size_t cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        if (id < 0 || id > (1 << 26) || !v)
            continue;
        if ((size_t)id >= c->n_strs) {
            cp_xgrow((void **)&c->strs, &cap, (size_t)id + 1, sizeof *c->strs);
            memset(c->strs + c->n_strs, 0, ((size_t)id + 1 - c->n_strs) * sizeof *c->strs);
            c->n_strs = (size_t)id + 1;
        }
        c->strs[id] = cp_arena_strdup(&c->arena, v);
    }
    sqlite3_finalize(st);
}

static const char *sid_text(nsys_ctx *c, int64_t id)
{
    return id >= 0 && (size_t)id < c->n_strs ? c->strs[id] : NULL;
}

/* Intern a StringIds entry into a process's builder, cached per id. */
static uint32_t sid_intern(nsys_ctx *c, nsys_proc *p, int64_t id, bool api_name)
{
    const char *s = sid_text(c, id);
    if (!s)
        return cp_intern_s(tl_builder_strings(p->b), "<unknown>");
    if (!p->sid_cache)
        p->sid_cache = cp_xcalloc(c->n_strs ? c->n_strs : 1, sizeof *p->sid_cache);
    if (!p->sid_cache[id]) {
        char tmp[512];
        const char *v = s;
        if (api_name && strlen(s) < sizeof tmp) {
            strcpy(tmp, s);
            v = rd_nsys_normalize_api(tmp);
        }
        p->sid_cache[id] = cp_intern_s(tl_builder_strings(p->b), v) + 1;
    }
    return p->sid_cache[id] - 1;
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
    for (size_t i = 0; i < n; i++) {
        c->procs[i].pid = pids[i];
        if (i == 0 || !c->opts || !c->opts->more)
            c->procs[i].b = first;
        else
            c->procs[i].b = c->opts->more(c->opts->more_ctx, c->path);
        if (c->opts && c->opts->rank_map && (i == 0 || c->procs[i].b != c->procs[0].b))
            tl_builder_meta(c->procs[i].b)->rank = mapped_rank(c->opts->rank_map, pids[i]);
    }
    free(pids);
}

/* The process of a row; rows without a pid go to the only/first process. */
static nsys_proc *proc_of(nsys_ctx *c, int64_t pid)
{
    for (size_t i = 0; i < c->n_procs; i++)
        if (c->procs[i].pid == pid)
            return &c->procs[i];
    return &c->procs[0];
}

static uint32_t str(nsys_proc *p, const char *s) { return cp_intern_s(tl_builder_strings(p->b), s); }

static uint32_t gpu_track(nsys_proc *p, int64_t device, int64_t stream)
{
    tl_track_key k = { TL_TRACK_GPU, p->pid, stream, (int32_t)device, stream };
    return tl_builder_track(p->b, &k);
}

static uint32_t cpu_track(nsys_proc *p, int64_t gtid)
{
    tl_track_key k = { TL_TRACK_CPU, p->pid, gtid >= 0 ? TID_OF(gtid) : 0, -1, -1 };
    return tl_builder_track(p->b, &k);
}

static void add_event(nsys_proc *p, nsys_ctx *c, int64_t start, int64_t end, uint32_t name, tl_cat cat,
                      uint32_t track, int64_t corr, uint32_t flags)
{
    tl_ev ev = { .ts_ns = start, .dur_ns = end - start, .name = name, .cat = cat, .track = track,
                 .corr = corr, .ext_id = -1, .flags = flags };
    if (ev.dur_ns < 0) {
        diag_count(tl_builder_diag(p->b), DIAG_NEGATIVE_DUR, c->path, -1);
        ev.dur_ns = 0;
    }
    tl_builder_add(p->b, &ev);
}

/* Every CUPTI GPU-activity query starts with these six columns. */
#define GPU_COLS "start", "end", "deviceId", "streamId", "correlationId", "globalPid"

static nsys_proc *row_proc(nsys_ctx *c, sqlite3_stmt *st)
{
    int64_t gpid = col_i64(st, 5, -1);
    return proc_of(c, gpid >= 0 ? PID_OF(gpid) : -1);
}

/* Add the GPU event of the current row (columns GPU_COLS) to process p with
 * its device and stream args, and, when bytes_col >= 0, its byte count. */
static void gpu_row(nsys_ctx *c, sqlite3_stmt *st, nsys_proc *p, uint32_t name, tl_cat cat, int bytes_col)
{
    int64_t dev = col_i64(st, 2, 0), stream = col_i64(st, 3, 0);
    add_event(p, c, col_i64(st, 0, 0), col_i64(st, 1, 0), name, cat, gpu_track(p, dev, stream),
              col_i64(st, 4, -1), 0);
    tl_builder_arg_int(p->b, str(p, "device"), dev);
    tl_builder_arg_int(p->b, str(p, "stream"), stream);
    if (bytes_col >= 0)
        tl_builder_arg_int(p->b, str(p, "bytes"), col_i64(st, bytes_col, 0));
}

/* ---- CUDA activity ---- */

static void read_kernels(nsys_ctx *c)
{
    static const char *const cols[] = { GPU_COLS, "demangledName", "shortName", "gridX", "gridY", "gridZ",
                                        "blockX", "blockY", "blockZ" };
    sqlite3_stmt *st = select_cols(c, "CUPTI_ACTIVITY_KIND_KERNEL", cols, CP_ARRAY_LEN(cols), NULL);
    if (!st)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        nsys_proc *p = row_proc(c, st);
        gpu_row(c, st, p, sid_intern(c, p, col_i64(st, 6, col_i64(st, 7, -1)), false), TL_CAT_KERNEL, -1);
        tl_builder *b = p->b;
        if (sqlite3_column_type(st, 7) != SQLITE_NULL)
            tl_builder_arg_str(b, str(p, "short_name"), sid_intern(c, p, col_i64(st, 7, -1), false));
        tl_builder_arg_int(b, str(p, "grid"), col_i64(st, 8, 1) * col_i64(st, 9, 1) * col_i64(st, 10, 1));
        tl_builder_arg_int(b, str(p, "block"), col_i64(st, 11, 1) * col_i64(st, 12, 1) * col_i64(st, 13, 1));
    }
    sqlite3_finalize(st);
}

/* ENUM_CUDA_MEMCPY_OPER and ENUM_CUDA_MEM_KIND, carried here because lazy
 * exports may lack the enum tables. */
static const char *copy_kind_tag(int64_t k)
{
    static const char *const tags[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA",
                                        "DtoD", "HtoH", "PtoP", "HtoD", "DtoH", "DtoD" };
    return k >= 0 && k < (int64_t)CP_ARRAY_LEN(tags) ? tags[k] : "Unknown";
}

static const char *mem_kind_name(int64_t k)
{
    static const char *const names[] = { "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static",
                                         "Managed Static", "Unknown" };
    return k >= 0 && k < (int64_t)CP_ARRAY_LEN(names) ? names[k] : "Unknown";
}

static void read_memcpy(nsys_ctx *c)
{
    static const char *const cols[] = { GPU_COLS, "bytes", "copyKind", "srcKind", "dstKind" };
    sqlite3_stmt *st = select_cols(c, "CUPTI_ACTIVITY_KIND_MEMCPY", cols, CP_ARRAY_LEN(cols), NULL);
    if (!st)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char name[96];
        int64_t kind = col_i64(st, 7, 0);
        if (sqlite3_column_type(st, 8) != SQLITE_NULL)
            snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", copy_kind_tag(kind),
                     mem_kind_name(col_i64(st, 8, 7)), mem_kind_name(col_i64(st, 9, 7)));
        else
            snprintf(name, sizeof name, "Memcpy %s", copy_kind_tag(kind));
        nsys_proc *p = row_proc(c, st);
        gpu_row(c, st, p, str(p, name), TL_CAT_GPU_MEMCPY, 6);
    }
    sqlite3_finalize(st);
}

static void read_memset(nsys_ctx *c)
{
    static const char *const cols[] = { GPU_COLS, "bytes", "memKind" };
    sqlite3_stmt *st = select_cols(c, "CUPTI_ACTIVITY_KIND_MEMSET", cols, CP_ARRAY_LEN(cols), NULL);
    if (!st)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char name[64];
        snprintf(name, sizeof name, "Memset (%s)", mem_kind_name(col_i64(st, 7, 2)));
        nsys_proc *p = row_proc(c, st);
        gpu_row(c, st, p, str(p, name), TL_CAT_GPU_MEMSET, 6);
    }
    sqlite3_finalize(st);
}

static void read_sync(nsys_ctx *c)
{
    static const char *const names[] = { "Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync",
                                         "Context Sync" };
    static const char *const cols[] = { GPU_COLS, "syncType" };
    sqlite3_stmt *st = select_cols(c, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", cols, CP_ARRAY_LEN(cols), NULL);
    if (!st)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t t = col_i64(st, 6, 0);
        nsys_proc *p = row_proc(c, st);
        gpu_row(c, st, p, str(p, t >= 0 && t < (int64_t)CP_ARRAY_LEN(names) ? names[t] : names[0]),
                TL_CAT_CUDA_SYNC, -1);
    }
    sqlite3_finalize(st);
}

/* Host APIs whose call blocks the thread until the GPU work is done. */
static bool is_sync_api(const char *n)
{
    static const char *const sync[] = { "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemset",
                                        "cudaMemset2D", "cudaDeviceSynchronize", "cudaStreamSynchronize",
                                        "cudaEventSynchronize", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol",
                                        "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
                                        "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyDtoD", "cuMemcpy",
                                        "cuMemsetD8", "cuMemsetD32" };
    for (size_t i = 0; i < CP_ARRAY_LEN(sync); i++)
        if (!strcmp(n, sync[i]))
            return true;
    return false;
}

static void read_runtime(nsys_ctx *c)
{
    static const char *const cols[] = { "start", "end", "globalTid", "correlationId", "nameId" };
    sqlite3_stmt *st = select_cols(c, "CUPTI_ACTIVITY_KIND_RUNTIME", cols, CP_ARRAY_LEN(cols), NULL);
    if (!st)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t gtid = col_i64(st, 2, -1);
        nsys_proc *p = proc_of(c, gtid >= 0 ? PID_OF(gtid) : -1);
        uint32_t name = sid_intern(c, p, col_i64(st, 4, -1), true);
        const char *nm = cp_intern_str(tl_builder_strings(p->b), name);
        tl_cat cat = (nm[0] == 'c' && nm[1] == 'u' && strncmp(nm, "cuda", 4) != 0) ? TL_CAT_CUDA_DRIVER
                                                                                   : TL_CAT_CUDA_RUNTIME;
        add_event(p, c, col_i64(st, 0, 0), col_i64(st, 1, 0), name, cat, cpu_track(p, gtid), col_i64(st, 3, -1),
                  is_sync_api(nm) ? TL_F_SYNC_CALL : 0);
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

/* NCCL's NVTX ranges name the NCCL API call; the domain row may be cut out
 * of a sliced capture, so the names identify them too. */
static bool is_nccl_range(nsys_ctx *c, int64_t domain, const char *text)
{
    if (c->nccl_domain >= 0 && domain == c->nccl_domain)
        return true;
    return domain > 0 && strncmp(text, "nccl", 4) == 0;
}

typedef struct payload_schema {
    int64_t domain, id;
    rd_nvtx_entry *entries;
    size_t n;
} payload_schema;

static size_t load_payload_schemas(nsys_ctx *c, payload_schema **out)
{
    *out = NULL;
    static const char *const cols[] = { "domainId", "schemaId", "type", "offset", "name" };
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

static void read_nvtx(nsys_ctx *c)
{
    load_domains(c);
    payload_schema *schemas;
    size_t n_schemas = load_payload_schemas(c, &schemas);
    static const char *const cols[] = { "start", "end", "eventType", "text", "textId", "globalTid", "domainId",
                                        "binaryData" };
    sqlite3_stmt *st = select_cols(c, "NVTX_EVENTS", cols, CP_ARRAY_LEN(cols), NULL);
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int64_t type = col_i64(st, 2, 0);
        bool range = type == NVTX_PUSHPOP || type == NVTX_STARTEND || type == NVTXT_PUSHPOP ||
                     type == NVTXT_STARTEND;
        if (!range && type != NVTX_MARK)
            continue; /* domain creation, categories, naming: metadata only */
        int64_t gtid = col_i64(st, 5, -1);
        nsys_proc *p = proc_of(c, gtid >= 0 ? PID_OF(gtid) : -1);
        const char *text = (const char *)sqlite3_column_text(st, 3);
        if (!text)
            text = sid_text(c, col_i64(st, 4, -1));
        if (!text)
            text = "";
        int64_t start = col_i64(st, 0, 0), end = col_i64(st, 1, -1);
        uint32_t flags = 0;
        if (type == NVTX_MARK) {
            end = start;
            flags |= TL_F_INSTANT;
        } else if (end < 0) {
            diag_count(tl_builder_diag(p->b), DIAG_MISSING_DUR, c->path, -1);
            end = start;
            flags |= TL_F_NO_DUR;
        }
        int64_t domain = col_i64(st, 6, 0);
        size_t oplen = rd_nsys_torch_op_len(text);
        tl_cat cat;
        uint32_t name;
        if (is_nccl_range(c, domain, text)) {
            cat = TL_CAT_NVTX;
            name = str(p, text);
        } else if (oplen) {
            cat = TL_CAT_CPU_OP;
            name = cp_intern_n(tl_builder_strings(p->b), text, oplen);
        } else {
            cat = TL_CAT_USER_ANNOTATION;
            name = str(p, text);
        }
        add_event(p, c, start, end, name, cat, cpu_track(p, gtid), -1, flags);
        if (cat == TL_CAT_NVTX) {
            tl_builder_arg_str(p->b, str(p, "domain"), str(p, "NCCL"));
            payload_args(p, st, 7, domain, schemas, n_schemas);
        } else if (domain > 0) {
            tl_builder_arg_int(p->b, str(p, "domain"), domain);
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
    static const char *const cols[] = { "start", "end", "globalTid", "nameId" };
    sqlite3_stmt *st = select_cols(c, "OSRT_API", cols, CP_ARRAY_LEN(cols), NULL);
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int64_t gtid = col_i64(st, 2, -1);
        int64_t pid = gtid >= 0 ? PID_OF(gtid) : -1;
        /* OS runtime calls of processes without CUDA activity are not part of the job */
        bool known = false;
        for (size_t i = 0; i < c->n_procs && !known; i++)
            known = c->procs[i].pid == pid;
        if (!known)
            continue;
        nsys_proc *p = proc_of(c, pid);
        add_event(p, c, col_i64(st, 0, 0), col_i64(st, 1, 0), sid_intern(c, p, col_i64(st, 3, -1), false),
                  TL_CAT_OSRT, cpu_track(p, gtid), -1, 0);
    }
    sqlite3_finalize(st);
}

static void read_thread_names(nsys_ctx *c)
{
    static const char *const cols[] = { "nameId", "globalTid" };
    sqlite3_stmt *st = select_cols(c, "ThreadNames", cols, CP_ARRAY_LEN(cols), NULL);
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        int64_t gtid = col_i64(st, 1, -1);
        if (gtid < 0)
            continue;
        int64_t pid = PID_OF(gtid);
        for (size_t i = 0; i < c->n_procs; i++)
            if (c->procs[i].pid == pid) {
                nsys_proc *p = &c->procs[i];
                tl_builder_track_name(p->b, cpu_track(p, gtid), sid_intern(c, p, col_i64(st, 0, -1), false));
            }
    }
    sqlite3_finalize(st);
}

static void read_meta(nsys_ctx *c)
{
    int64_t base = 0;
    bool has_base = false;
    static const char *const tcols[] = { "utcEpochNs", "systemClockNs" };
    sqlite3_stmt *st = select_cols(c, "TARGET_INFO_SESSION_START_TIME", tcols, 2, NULL);
    if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        has_base = true;
        base = sqlite3_column_int64(st, 0) - col_i64(st, 1, 0);
    }
    sqlite3_finalize(st);
    char gpu[256] = "";
    int64_t mem = -1, n_gpus = 0;
    static const char *const gcols[] = { "name", "totalMemory" };
    st = select_cols(c, "TARGET_INFO_GPU", gcols, 2, "ORDER BY id");
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        if (!n_gpus++ && sqlite3_column_text(st, 0)) {
            snprintf(gpu, sizeof gpu, "%s", (const char *)sqlite3_column_text(st, 0));
            mem = col_i64(st, 1, -1);
        }
    }
    sqlite3_finalize(st);
    char host[256] = "";
    static const char *const ecols[] = { "name", "value" };
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

static int read_sqlite(const char *path, const char *shown, tl_builder *b, const rd_opts *o, cp_error *err)
{
    nsys_ctx c = { .path = shown, .opts = o };
    cp_arena_init(&c.arena);
    char uri[8192];
    uri_for(path, uri, sizeof uri);
    int rc = sqlite3_open_v2(uri, &c.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
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
    load_strings(&c);
    discover_procs(&c, b);
    read_meta(&c);
    read_thread_names(&c);
    read_kernels(&c);
    read_memcpy(&c);
    read_memset(&c);
    read_sync(&c);
    read_runtime(&c);
    read_nvtx(&c);
    read_osrt(&c);
    for (size_t i = 0; i < c.n_procs; i++)
        free(c.procs[i].sid_cache);
    free(c.procs);
    free(c.strs);
    cp_arena_free(&c.arena);
    sqlite3_close(c.db);
    return 0;
}

/* .nsys-rep: export with nsys when it is on PATH, else say exactly what to run. */
static int read_report(const char *path, tl_builder *b, const rd_opts *o, cp_error *err)
{
    char tmpdir[] = "/tmp/chainprof-nsys-XXXXXX";
    const char *pathenv = getenv("PATH");
    bool found = false;
    char nsys[4096];
    for (const char *s = pathenv ? pathenv : ""; *s && !found;) {
        size_t len = strcspn(s, ":");
        snprintf(nsys, sizeof nsys, "%.*s/nsys", (int)len, s);
        found = access(nsys, X_OK) == 0;
        s += len + (s[len] == ':');
    }
    if (!found)
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
