/* topo.c - topology model, its JSON form and the loader for that form.
 *
 * The model is small (tens of devices per host, a few thousand hosts at
 * most), so lookups are linear scans and the arrays grow by doubling up to
 * TOPO_MAX_ITEMS. The JSON writer is a plain string builder and the loader a
 * small DOM parser private to this file: the topology file is tiny, and the
 * model must load without anything else of the project being present.
 */
#include "topo.h"

#include "../base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_keys[TOPO_LINK__COUNT] = {
#define TOPO_LINK_KEY(e, k, d) k,
    TOPO_LINK_KINDS(TOPO_LINK_KEY)
#undef TOPO_LINK_KEY
};
static const char *const kind_what[TOPO_LINK__COUNT] = {
#define TOPO_LINK_WHAT(e, k, d) d,
    TOPO_LINK_KINDS(TOPO_LINK_WHAT)
#undef TOPO_LINK_WHAT
};
static const char *const ep_keys[TOPO_EP__COUNT] = {"host", "numa", "gpu", "nic"};

const char *topo_link_kind_key(topo_link_kind k)
{
    return (unsigned)k < TOPO_LINK__COUNT ? kind_keys[k] : "unknown";
}

const char *topo_link_kind_what(topo_link_kind k)
{
    return (unsigned)k < TOPO_LINK__COUNT ? kind_what[k] : kind_what[0];
}

topo_link_kind topo_link_kind_from_key(const char *key)
{
    for (int i = 0; i < TOPO_LINK__COUNT; i++)
        if (strcmp(kind_keys[i], key) == 0)
            return (topo_link_kind)i;
    return TOPO_LINK_UNKNOWN;
}

int topo_link_kind_rank(topo_link_kind k)
{
    switch (k) {
    case TOPO_LINK_NVLINK: return 0;
    case TOPO_LINK_PIX: return 1;
    case TOPO_LINK_PXB: return 2;
    case TOPO_LINK_PHB: return 3;
    case TOPO_LINK_NODE: return 4;
    case TOPO_LINK_SYS: return 5;
    case TOPO_LINK_NET: return 6;
    default: return 7;
    }
}

/* ---- model ------------------------------------------------------------ */

topo *topo_new(void)
{
    return cp_xcalloc(1, sizeof(topo));
}

void topo_free(topo *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_sources; i++)
        free(t->sources[i]);
    free(t->sources);
    free(t->hosts);
    free(t->sockets);
    free(t->numa_nodes);
    free(t->gpus);
    free(t->nics);
    free(t->links);
    free(t);
}

/* Room for one more element; -1 at the cap. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n >= TOPO_MAX_ITEMS)
        return -1;
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 8;
    *arr = cp_xrealloc(*arr, nc * elem);
    *cap = nc;
    return 0;
}

static void copy_str(char *dst, size_t cap, const char *s)
{
    snprintf(dst, cap, "%s", s ? s : "");
}

int32_t topo_add_source(topo *t, const char *name)
{
    for (size_t i = 0; i < t->n_sources; i++)
        if (strcmp(t->sources[i], name) == 0)
            return (int32_t)i;
    if (grow((void **)&t->sources, &t->cap_sources, t->n_sources, sizeof *t->sources) < 0)
        return -1;
    t->sources[t->n_sources] = cp_xstrdup(name);
    return (int32_t)t->n_sources++;
}

int topo_add_host(topo *t, const char *name, topo_src src)
{
    for (size_t i = 0; i < t->n_hosts; i++)
        if (strcmp(t->hosts[i].name, name) == 0)
            return (int)i;
    if (grow((void **)&t->hosts, &t->cap_hosts, t->n_hosts, sizeof *t->hosts) < 0)
        return -1;
    topo_host *h = &t->hosts[t->n_hosts];
    memset(h, 0, sizeof *h);
    copy_str(h->name, sizeof h->name, name);
    h->src = src;
    return (int)t->n_hosts++;
}

int topo_add_socket(topo *t, uint32_t host, int id, topo_src src)
{
    if (host >= t->n_hosts)
        return -1;
    for (size_t i = 0; i < t->n_sockets; i++)
        if (t->sockets[i].host == host && t->sockets[i].id == id)
            return (int)i;
    if (grow((void **)&t->sockets, &t->cap_sockets, t->n_sockets, sizeof *t->sockets) < 0)
        return -1;
    t->sockets[t->n_sockets] = (topo_socket){.host = host, .id = id, .src = src};
    return (int)t->n_sockets++;
}

int topo_add_numa(topo *t, uint32_t host, int id, topo_src src)
{
    if (host >= t->n_hosts)
        return -1;
    for (size_t i = 0; i < t->n_numa; i++)
        if (t->numa_nodes[i].host == host && t->numa_nodes[i].id == id)
            return (int)i;
    if (grow((void **)&t->numa_nodes, &t->cap_numa, t->n_numa, sizeof *t->numa_nodes) < 0)
        return -1;
    topo_numa *n = &t->numa_nodes[t->n_numa];
    memset(n, 0, sizeof *n);
    n->host = host;
    n->id = id;
    n->socket = -1;
    n->src = src;
    return (int)t->n_numa++;
}

int topo_add_gpu(topo *t, uint32_t host, int index, topo_src src)
{
    if (host >= t->n_hosts)
        return -1;
    for (size_t i = 0; i < t->n_gpus; i++)
        if (t->gpus[i].host == host && t->gpus[i].index == index)
            return (int)i;
    if (grow((void **)&t->gpus, &t->cap_gpus, t->n_gpus, sizeof *t->gpus) < 0)
        return -1;
    topo_gpu *g = &t->gpus[t->n_gpus];
    memset(g, 0, sizeof *g);
    g->host = host;
    g->index = index;
    g->numa = -1;
    g->src = src;
    return (int)t->n_gpus++;
}

int topo_add_nic(topo *t, uint32_t host, const char *name, topo_src src)
{
    if (host >= t->n_hosts)
        return -1;
    for (size_t i = 0; i < t->n_nics; i++)
        if (t->nics[i].host == host && strcmp(t->nics[i].name, name) == 0)
            return (int)i;
    if (grow((void **)&t->nics, &t->cap_nics, t->n_nics, sizeof *t->nics) < 0)
        return -1;
    topo_nic *c = &t->nics[t->n_nics];
    memset(c, 0, sizeof *c);
    c->host = host;
    copy_str(c->name, sizeof c->name, name);
    c->numa = -1;
    c->port_gbps = NAN;
    c->src = src;
    return (int)t->n_nics++;
}

static int ref_valid(const topo *t, topo_ref r)
{
    switch (r.type) {
    case TOPO_EP_HOST: return r.index < t->n_hosts;
    case TOPO_EP_NUMA: return r.index < t->n_numa;
    case TOPO_EP_GPU: return r.index < t->n_gpus;
    case TOPO_EP_NIC: return r.index < t->n_nics;
    default: return 0;
    }
}

static int ref_eq(topo_ref x, topo_ref y)
{
    return x.type == y.type && x.index == y.index;
}

static long find_link(const topo *t, topo_ref a, topo_ref b)
{
    for (size_t i = 0; i < t->n_links; i++) {
        const topo_link *l = &t->links[i];
        if ((ref_eq(l->a, a) && ref_eq(l->b, b)) || (ref_eq(l->a, b) && ref_eq(l->b, a)))
            return (long)i;
    }
    return -1;
}

const topo_link *topo_find_link(const topo *t, topo_ref a, topo_ref b)
{
    long i = find_link(t, a, b);
    return i < 0 ? NULL : &t->links[i];
}

int topo_add_link(topo *t, topo_link_kind kind, topo_ref a, topo_ref b, int lanes,
                  double bandwidth_gbps, double latency_us, topo_src src)
{
    if (!ref_valid(t, a) || !ref_valid(t, b) || (unsigned)kind >= TOPO_LINK__COUNT)
        return -1;
    long i = find_link(t, a, b);
    if (i >= 0) {
        /* A later source refines what an earlier one left unknown. */
        topo_link *l = &t->links[i];
        if (kind != TOPO_LINK_UNKNOWN)
            l->kind = kind;
        if (lanes > 0)
            l->lanes = lanes;
        if (!isnan(bandwidth_gbps))
            l->bandwidth_gbps = bandwidth_gbps;
        if (!isnan(latency_us))
            l->latency_us = latency_us;
        return (int)i;
    }
    if (grow((void **)&t->links, &t->cap_links, t->n_links, sizeof *t->links) < 0)
        return -1;
    t->links[t->n_links] = (topo_link){.kind = kind, .a = a, .b = b, .lanes = lanes,
                                       .bandwidth_gbps = bandwidth_gbps,
                                       .latency_us = latency_us, .src = src};
    return (int)t->n_links++;
}

/* ---- JSON writer ------------------------------------------------------ */

/* "" and negative indices are unknown: null, never "" or -1. */
static void jw_str_or_null(cp_jw *w, const char *key, const char *s)
{
    cp_jw_key(w, key);
    if (s[0])
        cp_jw_str(w, s);
    else
        cp_jw_null(w);
}

static void jw_idx_or_null(cp_jw *w, const char *key, long long v)
{
    cp_jw_key(w, key);
    if (v >= 0)
        cp_jw_int(w, v);
    else
        cp_jw_null(w);
}

static void jw_src(cp_jw *w, topo_src s)
{
    cp_jw_key(w, "source");
    cp_jw_obj_begin(w);
    jw_idx_or_null(w, "file", s.file);
    jw_idx_or_null(w, "line", s.line ? (long long)s.line : -1);
    cp_jw_obj_end(w);
}

static void jw_ref(cp_jw *w, const char *key, topo_ref r)
{
    cp_jw_key(w, key);
    cp_jw_obj_begin(w);
    cp_jw_key(w, "type");
    cp_jw_str(w, ep_keys[r.type]);
    cp_jw_key(w, "index");
    cp_jw_uint(w, r.index);
    cp_jw_obj_end(w);
}

void topo_write_json(const topo *t, cp_jw *w)
{
    cp_jw_obj_begin(w);
    cp_jw_key(w, "schema");
    cp_jw_str(w, "chainprof.topo/1");
    cp_jw_key(w, "sources");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < t->n_sources; i++)
        cp_jw_str(w, t->sources[i]);
    cp_jw_arr_end(w);

    cp_jw_key(w, "hosts");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < t->n_hosts; i++) {
        cp_jw_obj_begin(w);
        cp_jw_key(w, "name");
        cp_jw_str(w, t->hosts[i].name);
        jw_src(w, t->hosts[i].src);
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);

    cp_jw_key(w, "sockets");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < t->n_sockets; i++) {
        const topo_socket *s = &t->sockets[i];
        cp_jw_obj_begin(w);
        cp_jw_key(w, "host");
        cp_jw_uint(w, s->host);
        cp_jw_key(w, "id");
        cp_jw_int(w, s->id);
        jw_src(w, s->src);
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);

    cp_jw_key(w, "numa_nodes");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < t->n_numa; i++) {
        const topo_numa *n = &t->numa_nodes[i];
        cp_jw_obj_begin(w);
        cp_jw_key(w, "host");
        cp_jw_uint(w, n->host);
        cp_jw_key(w, "id");
        cp_jw_int(w, n->id);
        jw_idx_or_null(w, "socket", n->socket);
        jw_str_or_null(w, "cpus", n->cpus);
        jw_src(w, n->src);
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);

    cp_jw_key(w, "gpus");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < t->n_gpus; i++) {
        const topo_gpu *g = &t->gpus[i];
        cp_jw_obj_begin(w);
        cp_jw_key(w, "host");
        cp_jw_uint(w, g->host);
        cp_jw_key(w, "index");
        cp_jw_int(w, g->index);
        jw_str_or_null(w, "name", g->name);
        jw_str_or_null(w, "pci_bus", g->pci_bus);
        jw_idx_or_null(w, "numa", g->numa);
        jw_str_or_null(w, "cpu_affinity", g->cpu_affinity);
        jw_src(w, g->src);
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);

    cp_jw_key(w, "nics");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < t->n_nics; i++) {
        const topo_nic *c = &t->nics[i];
        cp_jw_obj_begin(w);
        cp_jw_key(w, "host");
        cp_jw_uint(w, c->host);
        cp_jw_key(w, "name");
        cp_jw_str(w, c->name);
        jw_str_or_null(w, "label", c->label);
        jw_idx_or_null(w, "numa", c->numa);
        cp_jw_key(w, "port_gbps");
        cp_jw_double(w, c->port_gbps);
        jw_src(w, c->src);
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);

    cp_jw_key(w, "links");
    cp_jw_arr_begin(w);
    for (size_t i = 0; i < t->n_links; i++) {
        const topo_link *l = &t->links[i];
        cp_jw_obj_begin(w);
        cp_jw_key(w, "kind");
        cp_jw_str(w, topo_link_kind_key(l->kind));
        jw_ref(w, "a", l->a);
        jw_ref(w, "b", l->b);
        cp_jw_key(w, "lanes");
        cp_jw_int(w, l->lanes);
        cp_jw_key(w, "bandwidth_gbps");
        cp_jw_double(w, l->bandwidth_gbps);
        cp_jw_key(w, "latency_us");
        cp_jw_double(w, l->latency_us);
        jw_src(w, l->src);
        cp_jw_obj_end(w);
    }
    cp_jw_arr_end(w);
    cp_jw_obj_end(w);
}

void topo_to_json(const topo *t, cp_buf *out)
{
    cp_jw w;
    cp_jw_init(&w, out, 2);
    topo_write_json(t, &w);
    cp_buf_putc(out, '\n');
}

/* ---- JSON loader: a small DOM ----------------------------------------- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jnode {
    enum jtype type;
    double num;
    char *str;   /* J_STR value */
    char *key;   /* member name when inside an object */
    int first;   /* first child, -1 */
    int next;    /* next sibling, -1 */
} jnode;

typedef struct jdom {
    jnode *n;
    size_t len, cap;
    const char *s, *end, *base;
    const char *name;
    cp_error *err;
    int failed;
} jdom;

#define JSON_MAX_DEPTH 64

static int jfail(jdom *d, const char *what)
{
    if (!d->failed)
        cp_error_set(d->err, CP_ERR_FORMAT, d->name, 0, 0, (long long)(d->s - d->base),
                     "invalid topology json: %s", what);
    d->failed = 1;
    return -1;
}

static void jws(jdom *d)
{
    while (d->s < d->end && (*d->s == ' ' || *d->s == '\n' || *d->s == '\t' || *d->s == '\r'))
        d->s++;
}

static int jnew(jdom *d, enum jtype type)
{
    if (d->len >= 4u * TOPO_MAX_ITEMS * 16u)
        return jfail(d, "too many values");
    if (d->len == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 256;
        d->n = cp_xrealloc(d->n, nc * sizeof *d->n);
        d->cap = nc;
    }
    d->n[d->len] = (jnode){.type = type, .first = -1, .next = -1};
    return (int)d->len++;
}

/* Parses a string at d->s (after the opening quote is checked); returns a
 * malloc'ed UTF-8 copy. \u escapes of the BMP are encoded back to UTF-8. */
static char *jstring(jdom *d)
{
    d->s++; /* opening quote */
    size_t cap = 32, n = 0;
    char *out = cp_xmalloc(cap);
    while (d->s < d->end && *d->s != '"') {
        unsigned c = (unsigned char)*d->s++;
        char enc[4];
        size_t k = 1;
        enc[0] = (char)c;
        if (c < 0x20) {
            free(out);
            jfail(d, "control character in string");
            return NULL;
        }
        if (c == '\\') {
            if (d->s >= d->end)
                break;
            char e = *d->s++;
            switch (e) {
            case '"': case '\\': case '/': enc[0] = e; break;
            case 'b': enc[0] = '\b'; break;
            case 'f': enc[0] = '\f'; break;
            case 'n': enc[0] = '\n'; break;
            case 'r': enc[0] = '\r'; break;
            case 't': enc[0] = '\t'; break;
            case 'u': {
                unsigned v = 0;
                for (int i = 0; i < 4; i++) {
                    if (d->s >= d->end) {
                        free(out);
                        jfail(d, "truncated \\u escape");
                        return NULL;
                    }
                    char h = *d->s++;
                    v <<= 4;
                    if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
                    else {
                        free(out);
                        jfail(d, "bad \\u escape");
                        return NULL;
                    }
                }
                if (v < 0x80) {
                    enc[0] = (char)v;
                } else if (v < 0x800) {
                    enc[0] = (char)(0xc0 | (v >> 6));
                    enc[1] = (char)(0x80 | (v & 0x3f));
                    k = 2;
                } else {
                    enc[0] = (char)(0xe0 | (v >> 12));
                    enc[1] = (char)(0x80 | ((v >> 6) & 0x3f));
                    enc[2] = (char)(0x80 | (v & 0x3f));
                    k = 3;
                }
                break;
            }
            default:
                free(out);
                jfail(d, "bad escape");
                return NULL;
            }
        }
        if (n + k + 1 > cap) {
            cap *= 2;
            out = cp_xrealloc(out, cap);
        }
        memcpy(out + n, enc, k);
        n += k;
    }
    if (d->s >= d->end) {
        free(out);
        jfail(d, "unterminated string");
        return NULL;
    }
    d->s++; /* closing quote */
    out[n] = '\0';
    return out;
}

static int jvalue(jdom *d, int depth);

static int jcontainer(jdom *d, int depth, int is_obj)
{
    int self = jnew(d, is_obj ? J_OBJ : J_ARR);
    if (self < 0)
        return -1;
    d->s++;
    jws(d);
    char close = is_obj ? '}' : ']';
    int last = -1;
    if (d->s < d->end && *d->s == close) {
        d->s++;
        return self;
    }
    for (;;) {
        char *key = NULL;
        jws(d);
        if (is_obj) {
            if (d->s >= d->end || *d->s != '"')
                return jfail(d, "expected a member name");
            key = jstring(d);
            if (!key)
                return -1;
            jws(d);
            if (d->s >= d->end || *d->s != ':') {
                free(key);
                return jfail(d, "expected ':'");
            }
            d->s++;
        }
        int child = jvalue(d, depth + 1);
        if (child < 0) {
            free(key);
            return -1;
        }
        d->n[child].key = key;
        if (last < 0)
            d->n[self].first = child;
        else
            d->n[last].next = child;
        last = child;
        jws(d);
        if (d->s < d->end && *d->s == ',') {
            d->s++;
            continue;
        }
        if (d->s < d->end && *d->s == close) {
            d->s++;
            return self;
        }
        return jfail(d, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int jvalue(jdom *d, int depth)
{
    if (depth > JSON_MAX_DEPTH)
        return jfail(d, "nested too deeply");
    jws(d);
    if (d->s >= d->end)
        return jfail(d, "unexpected end");
    char c = *d->s;
    if (c == '{' || c == '[')
        return jcontainer(d, depth, c == '{');
    if (c == '"') {
        char *s = jstring(d);
        if (!s)
            return -1;
        int i = jnew(d, J_STR);
        if (i < 0) {
            free(s);
            return -1;
        }
        d->n[i].str = s;
        return i;
    }
    static const struct { const char *word; enum jtype type; double v; } lits[] = {
        {"null", J_NULL, 0}, {"true", J_BOOL, 1}, {"false", J_BOOL, 0},
    };
    for (size_t k = 0; k < 3; k++) {
        size_t wl = strlen(lits[k].word);
        if ((size_t)(d->end - d->s) >= wl && memcmp(d->s, lits[k].word, wl) == 0) {
            d->s += wl;
            int i = jnew(d, lits[k].type);
            if (i >= 0)
                d->n[i].num = lits[k].v;
            return i;
        }
    }
    char tmp[64];
    size_t n = 0;
    while (d->s + n < d->end && n < sizeof tmp - 1 &&
           strchr("0123456789+-.eE", d->s[n]) != NULL)
        n++;
    if (n == 0)
        return jfail(d, "unexpected character");
    memcpy(tmp, d->s, n);
    tmp[n] = '\0';
    char *e = NULL;
    double v = strtod(tmp, &e);
    if (e != tmp + n)
        return jfail(d, "bad number");
    d->s += n;
    int i = jnew(d, J_NUM);
    if (i >= 0)
        d->n[i].num = v;
    return i;
}

static void jdom_free(jdom *d)
{
    for (size_t i = 0; i < d->len; i++) {
        free(d->n[i].str);
        free(d->n[i].key);
    }
    free(d->n);
}

static int jget(const jdom *d, int obj, const char *key)
{
    if (obj < 0 || d->n[obj].type != J_OBJ)
        return -1;
    for (int c = d->n[obj].first; c >= 0; c = d->n[c].next)
        if (d->n[c].key && strcmp(d->n[c].key, key) == 0)
            return c;
    return -1;
}

static double jnum(const jdom *d, int obj, const char *key, double dflt)
{
    int c = jget(d, obj, key);
    return c >= 0 && d->n[c].type == J_NUM ? d->n[c].num : dflt;
}

/* An int member within [lo, hi], else dflt (never a cast of a wild double). */
static int jint(const jdom *d, int obj, const char *key, int lo, int hi, int dflt)
{
    double v = jnum(d, obj, key, NAN);
    return v >= lo && v <= hi && v == floor(v) ? (int)v : dflt;
}

static const char *jstr(const jdom *d, int obj, const char *key)
{
    int c = jget(d, obj, key);
    return c >= 0 && d->n[c].type == J_STR ? d->n[c].str : "";
}

static topo_src jsrc(const jdom *d, int obj, const topo *t)
{
    int s = jget(d, obj, "source");
    double f = jnum(d, s, "file", -1), l = jnum(d, s, "line", 0);
    topo_src src = {-1, 0};
    if (f >= 0 && f < (double)t->n_sources)
        src.file = (int32_t)f;
    if (l > 0 && l < 4e9)
        src.line = (uint32_t)l;
    return src;
}

/* Index fields are validated against what is already loaded, so a damaged
 * file cannot make the model point outside its arrays. */
static int jidx(const jdom *d, int obj, const char *key, size_t n_valid, int *out)
{
    double v = jnum(d, obj, key, -1);
    if (v < 0 || v >= (double)n_valid || v != floor(v))
        return -1;
    *out = (int)v;
    return 0;
}

static int jref(const jdom *d, int obj, const char *key, topo_ref *r)
{
    int o = jget(d, obj, key);
    const char *type = jstr(d, o, "type");
    double idx = jnum(d, o, "index", -1);
    for (int i = 0; i < TOPO_EP__COUNT; i++) {
        if (strcmp(type, ep_keys[i]) == 0 && idx >= 0 && idx < 4e9) {
            r->type = (topo_ep_type)i;
            r->index = (uint32_t)idx;
            return 0;
        }
    }
    return -1;
}

static int jarray(const jdom *d, int root, const char *key)
{
    int a = jget(d, root, key);
    return a >= 0 && d->n[a].type == J_ARR ? d->n[a].first : -1;
}

static double jnum_or_nan(const jdom *d, int obj, const char *key)
{
    return jnum(d, obj, key, NAN);
}

static int load(const jdom *d, int root, topo *t, const char **bad)
{
    int idx;
    for (int c = jarray(d, root, "sources"); c >= 0; c = d->n[c].next)
        if (d->n[c].type != J_STR || topo_add_source(t, d->n[c].str) < 0)
            return *bad = "sources", -1;
    for (int c = jarray(d, root, "hosts"); c >= 0; c = d->n[c].next)
        if (topo_add_host(t, jstr(d, c, "name"), jsrc(d, c, t)) < 0)
            return *bad = "hosts", -1;
    for (int c = jarray(d, root, "sockets"); c >= 0; c = d->n[c].next)
        if (jidx(d, c, "host", t->n_hosts, &idx) < 0 ||
            topo_add_socket(t, (uint32_t)idx, jint(d, c, "id", -1, INT32_MAX, -1), jsrc(d, c, t)) < 0)
            return *bad = "sockets", -1;
    for (int c = jarray(d, root, "numa_nodes"); c >= 0; c = d->n[c].next) {
        int k;
        if (jidx(d, c, "host", t->n_hosts, &idx) < 0 ||
            (k = topo_add_numa(t, (uint32_t)idx, jint(d, c, "id", -1, INT32_MAX, -1), jsrc(d, c, t))) < 0)
            return *bad = "numa_nodes", -1;
        int s;
        t->numa_nodes[k].socket = jidx(d, c, "socket", t->n_sockets, &s) == 0 ? s : -1;
        copy_str(t->numa_nodes[k].cpus, sizeof t->numa_nodes[k].cpus, jstr(d, c, "cpus"));
    }
    for (int c = jarray(d, root, "gpus"); c >= 0; c = d->n[c].next) {
        int k;
        if (jidx(d, c, "host", t->n_hosts, &idx) < 0 ||
            (k = topo_add_gpu(t, (uint32_t)idx, jint(d, c, "index", -1, INT32_MAX, -1), jsrc(d, c, t))) < 0)
            return *bad = "gpus", -1;
        topo_gpu *g = &t->gpus[k];
        copy_str(g->name, sizeof g->name, jstr(d, c, "name"));
        copy_str(g->pci_bus, sizeof g->pci_bus, jstr(d, c, "pci_bus"));
        copy_str(g->cpu_affinity, sizeof g->cpu_affinity, jstr(d, c, "cpu_affinity"));
        int nn;
        g->numa = jidx(d, c, "numa", t->n_numa, &nn) == 0 ? nn : -1;
    }
    for (int c = jarray(d, root, "nics"); c >= 0; c = d->n[c].next) {
        int k;
        if (jidx(d, c, "host", t->n_hosts, &idx) < 0 ||
            (k = topo_add_nic(t, (uint32_t)idx, jstr(d, c, "name"), jsrc(d, c, t))) < 0)
            return *bad = "nics", -1;
        topo_nic *n = &t->nics[k];
        copy_str(n->label, sizeof n->label, jstr(d, c, "label"));
        int nn;
        n->numa = jidx(d, c, "numa", t->n_numa, &nn) == 0 ? nn : -1;
        n->port_gbps = jnum_or_nan(d, c, "port_gbps");
    }
    for (int c = jarray(d, root, "links"); c >= 0; c = d->n[c].next) {
        topo_ref a, b;
        if (jref(d, c, "a", &a) < 0 || jref(d, c, "b", &b) < 0 ||
            topo_add_link(t, topo_link_kind_from_key(jstr(d, c, "kind")), a, b,
                          jint(d, c, "lanes", 0, 1 << 20, 0), jnum_or_nan(d, c, "bandwidth_gbps"),
                          jnum_or_nan(d, c, "latency_us"), jsrc(d, c, t)) < 0)
            return *bad = "links", -1;
    }
    return 0;
}

int topo_from_json(const char *json, size_t len, const char *name, topo **out, cp_error *err)
{
    *out = NULL;
    jdom d = {.s = json, .end = json + len, .base = json, .name = name, .err = err};
    int root = jvalue(&d, 0);
    if (root >= 0) {
        jws(&d);
        if (d.s != d.end)
            root = jfail(&d, "trailing characters after the document");
    }
    if (root < 0) {
        jdom_free(&d);
        return CP_ERR_FORMAT;
    }
    if (d.n[root].type != J_OBJ || strcmp(jstr(&d, root, "schema"), "chainprof.topo/1") != 0) {
        jdom_free(&d);
        return cp_error_set(err, CP_ERR_FORMAT, name, 0, 0, 0,
                            "not a topology: schema is not chainprof.topo/1");
    }
    topo *t = topo_new();
    const char *bad = "";
    if (load(&d, root, t, &bad) < 0) {
        jdom_free(&d);
        topo_free(t);
        return cp_error_set(err, CP_ERR_FORMAT, name, 0, 0, -1,
                            "invalid topology json: bad entry in \"%s\"", bad);
    }
    jdom_free(&d);
    *out = t;
    return 0;
}
