/* rd_pyval.c - the value tree of rd_pyval.h and its two decoders: a bounded
 * unpickler (plain data only, nothing executed) and a JSON builder over
 * base/jsontok. Opcode values follow Python's pickletools documentation
 * (Lib/pickletools.py): each is one byte, its argument's width fixed by the
 * opcode; integers little-endian, BINFLOAT big-endian.
 */
#include "rd_pyval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/jsontok.h"
#include "../base/util.h"

/* ---- nodes ------------------------------------------------------------ */

static rd_py *node(rd_py_doc *d, int type)
{
    rd_py *v = CP_ANEW(&d->arena, rd_py);
    v->type = (uint8_t)type;
    d->nodes++;
    return v;
}

/* Append k slots' worth of items (a dict appends key and value). */
static void push_items(rd_py_doc *d, rd_py *c, rd_py *const *items, uint32_t k)
{
    uint32_t have = c->type == RD_PY_DICT ? 2 * c->n : c->n;
    if (have + k > c->cap) {
        uint32_t cap = c->cap ? c->cap : 4;
        while (cap < have + k) cap *= 2;
        rd_py **a = CP_ANEWN(&d->arena, rd_py *, cap);
        if (have) memcpy(a, c->v.items, sizeof(*a) * have);
        c->v.items = a;
        c->cap = cap;
    }
    memcpy(c->v.items + have, items, sizeof(*items) * k);
    c->n += c->type == RD_PY_DICT ? k / 2 : k;
}

static rd_py *str_node(rd_py_doc *d, int type, const char *s, size_t n)
{
    rd_py *v = node(d, type);
    v->v.s = cp_arena_strndup(&d->arena, s, n);
    v->n = (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n);
    return v;
}

void rd_py_doc_free(rd_py_doc *doc)
{
    if (!doc) return;
    cp_arena_free(&doc->arena);
    doc->root = NULL;
}

/* ---- the unpickler ---------------------------------------------------- */

typedef struct pk {
    const char *p, *end, *base;
    const char *name;
    rd_py_doc *doc;
    rd_py **stack;
    size_t sp, scap;
    size_t *marks;
    size_t nmarks;
    rd_py **memo;
    size_t memo_cap;
    size_t memo_count; /* indices stored: MEMOIZE's next index */
    const char *global; /* the last GLOBAL's name (only build_*list allowed) */
    bool truncated;
    cp_error *err;
} pk;

static int pk_fail(pk *k, long long at, const char *why)
{
    return cp_error_set(k->err, CP_ERR_FORMAT, k->name, 0, 0, at, "not a readable pickle: %s", why);
}

static long long pk_off(const pk *k) { return (long long)(k->p - k->base); }

static int pk_need(pk *k, size_t n)
{
    if ((size_t)(k->end - k->p) >= n) return 0;
    k->truncated = true;
    return pk_fail(k, pk_off(k), "input ends inside an opcode (truncated)");
}

static uint64_t le(const char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | (unsigned char)p[i];
    return v;
}

static int pk_push(pk *k, rd_py *v)
{
    if (k->sp == k->scap) cp_xgrow((void **)&k->stack, &k->scap, k->sp + 1, sizeof(*k->stack));
    k->stack[k->sp++] = v;
    return 0;
}

static rd_py *pk_top(pk *k) { return k->sp ? k->stack[k->sp - 1] : NULL; }

/* Items above the last mark: *from is their start; the mark is popped. */
static int pk_pop_mark(pk *k, size_t *from)
{
    if (!k->nmarks) return pk_fail(k, pk_off(k) - 1, "an opcode needs a MARK and there is none");
    *from = k->marks[--k->nmarks];
    if (*from > k->sp) return pk_fail(k, pk_off(k) - 1, "a MARK above the stack (items popped past it)");
    return 0;
}

static int pk_memo_put(pk *k, uint64_t idx)
{
    rd_py *v = pk_top(k);
    if (!v) return pk_fail(k, pk_off(k), "memo store with an empty stack");
    /* Each memo store costs at least one byte, so an honest index is below the input length. */
    if (idx > (uint64_t)(k->end - k->base)) return pk_fail(k, pk_off(k), "memo index beyond any honest pickle");
    if (idx >= k->memo_cap) {
        size_t old = k->memo_cap;
        cp_xgrow((void **)&k->memo, &k->memo_cap, (size_t)idx + 1, sizeof(*k->memo));
        memset(k->memo + old, 0, sizeof(*k->memo) * (k->memo_cap - old));
    }
    if (!k->memo[idx]) k->memo_count++;
    k->memo[idx] = v;
    return 0;
}

static int pk_memo_get(pk *k, uint64_t idx)
{
    if (idx >= k->memo_cap || !k->memo[idx]) return pk_fail(k, pk_off(k), "memo fetch of an index never stored");
    return pk_push(k, k->memo[idx]);
}

/* A tuple of the stack's items from `from` up (they are popped). */
static int pk_tuple(pk *k, size_t from)
{
    rd_py *t = node(k->doc, RD_PY_TUPLE);
    if (k->sp > from) push_items(k->doc, t, k->stack + from, (uint32_t)(k->sp - from));
    k->sp = from;
    return pk_push(k, t);
}

/* Append the items above `from` into the container just below them. */
static int pk_fill(pk *k, size_t from, int want)
{
    if (from == 0) return pk_fail(k, pk_off(k), "no container under the items");
    rd_py *c = k->stack[from - 1];
    size_t n = k->sp - from;
    if (want == RD_PY_DICT) {
        if (c->type != RD_PY_DICT || n % 2) return pk_fail(k, pk_off(k), "SETITEM(S) without a dict or with an odd count");
    } else if (c->type != RD_PY_LIST) {
        return pk_fail(k, pk_off(k), "APPEND(S)/ADDITEMS without a list");
    }
    if (n) push_items(k->doc, c, k->stack + from, (uint32_t)n);
    k->sp = from;
    return 0;
}

static int pk_int(pk *k, const char *p, size_t n)
{
    rd_py *v = node(k->doc, RD_PY_INT);
    if (n == 0) v->v.i = 0;
    else if (n <= 8) {
        uint64_t u = le(p, (int)n);
        if (n < 8 && (u >> (8 * n - 1)) & 1) u |= ~0ull << (8 * n); /* sign-extend */
        v->v.i = (int64_t)u;
    } else {
        bool neg = (unsigned char)p[n - 1] & 0x80;
        v->big = true;
        v->v.i = neg ? INT64_MIN : INT64_MAX;
    }
    return pk_push(k, v);
}

/* GLOBAL's "module\nname\n" or STACK_GLOBAL's two strings: only the list
 * helpers of TorchScript's pickler are accepted. */
static int pk_global(pk *k, const char *mod, const char *name)
{
    static const char *const ok[] = {"build_intlist", "build_doublelist", "build_boollist", "build_tensorlist", "build_genericlist"};
    if (!strcmp(mod, "torch.jit._pickle"))
        for (size_t i = 0; i < CP_ARRAY_LEN(ok); i++)
            if (!strcmp(name, ok[i])) {
                rd_py *g = str_node(k->doc, RD_PY_NONE, name, strlen(name));
                k->global = g->v.s;
                return pk_push(k, g);
            }
    char why[200];
    snprintf(why, sizeof why, "global %.60s.%.60s is not plain data (not decoded)", mod, name);
    return pk_fail(k, pk_off(k), why);
}

static int pk_line(pk *k, char *out, size_t cap)
{
    const char *nl = memchr(k->p, '\n', (size_t)(k->end - k->p));
    if (!nl) return pk_need(k, (size_t)(k->end - k->p) + 1);
    size_t n = (size_t)(nl - k->p);
    if (n >= cap) return pk_fail(k, pk_off(k), "GLOBAL name too long");
    memcpy(out, k->p, n);
    out[n] = 0;
    k->p = nl + 1;
    return 0;
}

/* Lengths of the counted opcodes: the argument's width, or 0 for others. */
static int pk_len_width(unsigned char op)
{
    switch (op) {
    case 0x8c: case 'U': case 'C': return 1;  /* SHORT_BINUNICODE, SHORT_BINSTRING, SHORT_BINBYTES */
    case 'X': case 'T': case 'B': return 4;   /* BINUNICODE, BINSTRING, BINBYTES */
    case 0x8d: case 0x8e: case 0x96: return 8; /* BINUNICODE8, BINBYTES8, BYTEARRAY8 */
    default: return 0;
    }
}

static int pk_step(pk *k, unsigned char op, bool *stop)
{
    int r = 0, w;
    size_t from = 0;
    uint64_t u;
    if ((w = pk_len_width(op))) {
        if ((r = pk_need(k, (size_t)w))) return r;
        u = le(k->p, w);
        k->p += w;
        if ((r = pk_need(k, u > SIZE_MAX ? SIZE_MAX : (size_t)u))) return r;
        bool text = op == 0x8c || op == 'X' || op == 0x8d || op == 'U' || op == 'T';
        r = pk_push(k, str_node(k->doc, text ? RD_PY_STR : RD_PY_BYTES, k->p, (size_t)u));
        k->p += u;
        return r;
    }
    switch (op) {
    case 0x80: /* PROTO */
        if ((r = pk_need(k, 1))) return r;
        if ((unsigned char)*k->p > 5) return pk_fail(k, pk_off(k), "protocol above 5");
        k->p++;
        return 0;
    case 0x95: /* FRAME: a length hint only */
        if ((r = pk_need(k, 8))) return r;
        k->p += 8;
        return 0;
    case '.': *stop = true; return 0;
    case '}': return pk_push(k, node(k->doc, RD_PY_DICT));
    case ']': return pk_push(k, node(k->doc, RD_PY_LIST));
    case 0x8f: return pk_push(k, node(k->doc, RD_PY_LIST)); /* EMPTY_SET: read as a list */
    case ')': return pk_push(k, node(k->doc, RD_PY_TUPLE));
    case 'N': return pk_push(k, node(k->doc, RD_PY_NONE));
    case 0x88: case 0x89: {
        rd_py *b = node(k->doc, RD_PY_BOOL);
        b->v.i = op == 0x88;
        return pk_push(k, b);
    }
    case '(':
        if (k->nmarks >= RD_PY_MAX_DEPTH) return pk_fail(k, pk_off(k) - 1, "marks nested deeper than the cap");
        k->marks[k->nmarks++] = k->sp;
        return 0;
    case 's': case 'a': /* SETITEM, APPEND: the last one or two items */
        w = op == 's' ? 2 : 1;
        if (k->sp < (size_t)w + 1) return pk_fail(k, pk_off(k) - 1, "SETITEM/APPEND on a short stack");
        return pk_fill(k, k->sp - (size_t)w, op == 's' ? RD_PY_DICT : RD_PY_LIST);
    case 'u': case 'e': case 0x90: /* SETITEMS, APPENDS, ADDITEMS */
        if ((r = pk_pop_mark(k, &from))) return r;
        return pk_fill(k, from, op == 'u' ? RD_PY_DICT : RD_PY_LIST);
    case 'd': case 'l': case 't': case 0x91: { /* DICT, LIST, TUPLE, FROZENSET (from a mark) */
        if ((r = pk_pop_mark(k, &from))) return r;
        if (op == 't') return pk_tuple(k, from);
        rd_py *c = node(k->doc, op == 'd' ? RD_PY_DICT : RD_PY_LIST);
        size_t n = k->sp - from;
        if (op == 'd' && n % 2) return pk_fail(k, pk_off(k) - 1, "DICT with an odd count");
        if (n) push_items(k->doc, c, k->stack + from, (uint32_t)n);
        k->sp = from;
        return pk_push(k, c);
    }
    case 0x85: case 0x86: case 0x87: /* TUPLE1..3 */
        w = op - 0x84;
        if (k->sp < (size_t)w) return pk_fail(k, pk_off(k) - 1, "TUPLEn on a short stack");
        return pk_tuple(k, k->sp - (size_t)w);
    case 'J': case 'K': case 'M': /* BININT, BININT1, BININT2 */
        w = op == 'J' ? 4 : op == 'K' ? 1 : 2;
        if ((r = pk_need(k, (size_t)w))) return r;
        if (op == 'J') r = pk_int(k, k->p, 4); /* signed */
        else {
            rd_py *v = node(k->doc, RD_PY_INT);
            v->v.i = (int64_t)le(k->p, w); /* BININT1/2 are unsigned */
            r = pk_push(k, v);
        }
        k->p += w;
        return r;
    case 0x8a: case 0x8b: /* LONG1, LONG4 */
        w = op == 0x8a ? 1 : 4;
        if ((r = pk_need(k, (size_t)w))) return r;
        u = le(k->p, w);
        k->p += w;
        if ((r = pk_need(k, u > SIZE_MAX ? SIZE_MAX : (size_t)u))) return r;
        r = pk_int(k, k->p, (size_t)u);
        k->p += u;
        return r;
    case 'G': { /* BINFLOAT, big-endian */
        if ((r = pk_need(k, 8))) return r;
        uint64_t b = 0;
        for (int i = 0; i < 8; i++) b = b << 8 | (unsigned char)k->p[i];
        k->p += 8;
        rd_py *f = node(k->doc, RD_PY_FLOAT);
        memcpy(&f->v.f, &b, sizeof b);
        return pk_push(k, f);
    }
    case 0x94: return pk_memo_put(k, k->memo_count); /* MEMOIZE: the memo's length */
    case 'q': case 'r': case 'h': case 'j':
        w = (op == 'q' || op == 'h') ? 1 : 4;
        if ((r = pk_need(k, (size_t)w))) return r;
        u = le(k->p, w);
        k->p += w;
        return (op == 'q' || op == 'r') ? pk_memo_put(k, u) : pk_memo_get(k, u);
    case '0': /* POP */
        if (!k->sp) return pk_fail(k, pk_off(k) - 1, "POP on an empty stack");
        k->sp--;
        return 0;
    case '1': /* POP_MARK */
        if ((r = pk_pop_mark(k, &from))) return r;
        k->sp = from;
        return 0;
    case '2': /* DUP */
        if (!k->sp) return pk_fail(k, pk_off(k) - 1, "DUP on an empty stack");
        return pk_push(k, pk_top(k));
    case 'c': { /* GLOBAL "module\nname\n" */
        char mod[128], name[128];
        if ((r = pk_line(k, mod, sizeof mod)) || (r = pk_line(k, name, sizeof name))) return r;
        return pk_global(k, mod, name);
    }
    case 0x93: { /* STACK_GLOBAL */
        if (k->sp < 2) return pk_fail(k, pk_off(k) - 1, "STACK_GLOBAL on a short stack");
        const char *mod = rd_py_str(k->stack[k->sp - 2]), *name = rd_py_str(k->stack[k->sp - 1]);
        if (!mod || !name) return pk_fail(k, pk_off(k) - 1, "STACK_GLOBAL without two strings");
        k->sp -= 2;
        return pk_global(k, mod, name);
    }
    case 'R': { /* REDUCE: build_*list(list) is that list */
        if (k->sp < 2) return pk_fail(k, pk_off(k) - 1, "REDUCE on a short stack");
        rd_py *args = k->stack[k->sp - 1], *fn = k->stack[k->sp - 2];
        if (fn->type != RD_PY_NONE || !fn->v.s || args->type != RD_PY_TUPLE || args->n != 1)
            return pk_fail(k, pk_off(k) - 1, "REDUCE of something other than a list helper");
        k->sp -= 2;
        return pk_push(k, args->v.items[0]);
    }
    default: {
        char why[64];
        snprintf(why, sizeof why, "opcode 0x%02x is not one plain data uses", op);
        return pk_fail(k, pk_off(k) - 1, why);
    }
    }
}

/* An input cut short or damaged: commit what each open container has on the stack
 * (innermost first; a dict's odd last key is dropped), so every complete
 * record before the cut is kept. Pickles of plain data open one MARK per
 * non-empty container (Python's and TorchScript's picklers both do). */
static void pk_salvage(pk *k)
{
    while (k->nmarks) {
        size_t from = k->marks[--k->nmarks];
        if (from > 0 && from <= k->sp) {
            rd_py *c = k->stack[from - 1];
            size_t n = k->sp - from;
            if (c->type == RD_PY_DICT) n &= ~(size_t)1;
            if ((c->type == RD_PY_DICT || c->type == RD_PY_LIST) && n) push_items(k->doc, c, k->stack + from, (uint32_t)n);
        }
        k->sp = from < k->sp ? from : k->sp;
    }
    if (k->sp && k->stack[0]->type == RD_PY_DICT) k->doc->root = k->stack[0];
}

int rd_py_pickle(const char *data, size_t len, const char *name, rd_py_doc *doc, bool *truncated, cp_error *err)
{
    memset(doc, 0, sizeof *doc);
    cp_arena_init(&doc->arena);
    if (truncated) *truncated = false;
    size_t marks[RD_PY_MAX_DEPTH];
    pk k = {.p = data, .end = data + len, .base = data, .name = name, .doc = doc, .marks = marks, .err = err};
    int r = 0;
    bool stop = false;
    if (len < 2 || (unsigned char)data[0] != 0x80)
        r = pk_fail(&k, 0, "no PROTO opcode at the start (protocol 2 or later expected)");
    while (!r && !stop) {
        if (k.p >= k.end) {
            k.truncated = true;
            r = pk_fail(&k, pk_off(&k), "input ends before STOP (truncated)");
            break;
        }
        unsigned char op = (unsigned char)*k.p++;
        r = pk_step(&k, op, &stop);
    }
    if (!r && k.sp != 1) r = pk_fail(&k, pk_off(&k) - 1, "STOP with other than one value on the stack");
    if (!r) doc->root = k.stack[0];
    else pk_salvage(&k); /* truncated or damaged: keep what came before */
    if (truncated) *truncated = k.truncated;
    free(k.stack);
    free(k.memo);
    return r;
}

/* ---- JSON into the same tree ------------------------------------------- */

int rd_py_json(const char *data, size_t len, const char *name, rd_py_doc *doc, bool *truncated, cp_error *err)
{
    memset(doc, 0, sizeof *doc);
    cp_arena_init(&doc->arena);
    if (truncated) *truncated = false;
    cp_jt_opts o = {.name = name, .max_depth = RD_PY_MAX_DEPTH};
    cp_jt *jt = cp_jt_open_mem(data, len, &o);
    rd_py *open[RD_PY_MAX_DEPTH + 1];
    int depth = 0, r;
    rd_py *key = NULL;
    cp_jt_tok t;
    while ((r = cp_jt_next(jt, &t, err)) > 0 && r != CP_JT_EOF) {
        rd_py *v = NULL;
        switch (r) {
        case CP_JT_OBJ_BEGIN: v = node(doc, RD_PY_DICT); break;
        case CP_JT_ARR_BEGIN: v = node(doc, RD_PY_LIST); break;
        case CP_JT_OBJ_END: case CP_JT_ARR_END: depth--; continue;
        case CP_JT_KEY: key = str_node(doc, RD_PY_STR, t.s, t.n); continue;
        case CP_JT_STRING: v = str_node(doc, RD_PY_STR, t.s, t.n); break;
        case CP_JT_TRUE: case CP_JT_FALSE:
            v = node(doc, RD_PY_BOOL);
            v->v.i = r == CP_JT_TRUE;
            break;
        case CP_JT_NULL: v = node(doc, RD_PY_NONE); break;
        case CP_JT_NUMBER:
            v = node(doc, RD_PY_INT);
            if (!(t.flags & CP_JT_F_INT) || cp_jt_parse_i64(t.s, t.n, &v->v.i) != 0) {
                char buf[64];
                size_t n = t.n < sizeof buf - 1 ? t.n : sizeof buf - 1;
                memcpy(buf, t.s, n);
                buf[n] = 0;
                v->type = RD_PY_FLOAT;
                v->v.f = strtod(buf, NULL);
            }
            break;
        default: continue;
        }
        if (depth > 0) {
            rd_py *c = open[depth - 1];
            if (c->type == RD_PY_DICT) {
                rd_py *kv[2] = {key ? key : str_node(doc, RD_PY_STR, "", 0), v};
                push_items(doc, c, kv, 2);
                key = NULL;
            } else {
                push_items(doc, c, &v, 1);
            }
        } else if (!doc->root) {
            doc->root = v;
        }
        if (v->type == RD_PY_DICT || v->type == RD_PY_LIST) {
            if (depth >= RD_PY_MAX_DEPTH) { r = cp_error_set(err, CP_ERR_FORMAT, name, 0, 0, t.offset, "nested deeper than %d", RD_PY_MAX_DEPTH); break; }
            open[depth++] = v;
        }
    }
    if (truncated) *truncated = r < 0 && cp_jt_truncated(jt);
    cp_jt_close(jt);
    if (r < 0) return r;
    if (!doc->root) return cp_error_set(err, CP_ERR_FORMAT, name, 0, 0, 0, "empty JSON document");
    return 0;
}

/* ---- access ----------------------------------------------------------- */

const rd_py *rd_py_get(const rd_py *d, const char *key)
{
    if (!d || d->type != RD_PY_DICT) return NULL;
    size_t kn = strlen(key);
    for (uint32_t i = 0; i < d->n; i++) {
        const rd_py *k = d->v.items[2 * i];
        if ((k->type == RD_PY_STR || k->type == RD_PY_BYTES) && k->n == kn && !memcmp(k->v.s, key, kn))
            return d->v.items[2 * i + 1];
    }
    return NULL;
}

bool rd_py_is_seq(const rd_py *v) { return v && (v->type == RD_PY_LIST || v->type == RD_PY_TUPLE); }

uint32_t rd_py_len(const rd_py *l) { return rd_py_is_seq(l) ? l->n : 0; }

const rd_py *rd_py_at(const rd_py *l, uint32_t i) { return rd_py_is_seq(l) && i < l->n ? l->v.items[i] : NULL; }

bool rd_py_int(const rd_py *v, int64_t *out)
{
    if (!v || (v->type != RD_PY_INT && v->type != RD_PY_BOOL)) return false;
    *out = v->v.i;
    return true;
}

const char *rd_py_str(const rd_py *v)
{
    return v && (v->type == RD_PY_STR || v->type == RD_PY_BYTES) ? v->v.s : NULL;
}
