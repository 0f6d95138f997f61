/* rd_pyval.h - one value tree for documents that Python writes as a pickle
 * or as JSON (PyTorch's Flight Recorder dumps come in both forms).
 *
 * Why one tree: the Flight Recorder reader (rd_frdump.c) walks the same keys
 * whichever form a rank wrote, so both decoders build the same tree and the
 * reader is written once. Values are what a pickle of plain data holds:
 * None, bool, int, float, str, bytes, list, tuple, dict (a set is read as a
 * list). JSON objects become dicts, arrays lists.
 *
 * The unpickler is bounded and never executes anything: it knows the opcodes
 * of protocols 2 to 5 that a pickle of plain containers and scalars uses
 * (PROTO, FRAME, EMPTY_DICT/LIST/TUPLE, MARK, SETITEM(S), APPEND(S), the
 * integer, float, string and bytes opcodes, NONE, NEWTRUE/NEWFALSE, the memo
 * opcodes, TUPLE..TUPLE3, POP, DUP, STOP), plus GLOBAL/STACK_GLOBAL + REDUCE
 * only for torch.jit._pickle's build_*list helpers (which TorchScript's own
 * pickler writes around specialised lists; they are the identity on their
 * list). Anything else is an error naming the opcode and its byte offset.
 * Caps: nesting (RD_PY_MAX_DEPTH marks/containers), memo indices below the
 * input length, every length checked against the bytes left.
 *
 * Memory: every node and string lives in the document's arena (one free).
 * Containers are walked by index; dict lookup is linear (documents here have
 * dicts of tens of keys). A tree from a pickle may share nodes (memo) and,
 * in a hostile input, contain itself: walkers must bound their depth.
 */
#ifndef CP_READERS_RD_PYVAL_H
#define CP_READERS_RD_PYVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/arena.h"
#include "../base/error.h"

#define RD_PY_MAX_DEPTH 256

typedef enum rd_py_type {
    RD_PY_NONE = 0,
    RD_PY_BOOL,
    RD_PY_INT,
    RD_PY_FLOAT,
    RD_PY_STR,
    RD_PY_BYTES,
    RD_PY_LIST,
    RD_PY_TUPLE,
    RD_PY_DICT,
} rd_py_type;

typedef struct rd_py rd_py;
struct rd_py {
    uint8_t type;      /* rd_py_type */
    bool big;          /* INT beyond int64 (value clamped) */
    uint32_t n;        /* STR/BYTES: bytes; LIST/TUPLE: items; DICT: pairs */
    uint32_t cap;      /* containers: allocated slots */
    union {
        int64_t i;     /* INT, BOOL */
        double f;      /* FLOAT */
        const char *s; /* STR/BYTES (NUL-terminated copy in the arena) */
        rd_py **items; /* LIST/TUPLE: n items; DICT: 2n (key, value, ...) */
    } v;
};

typedef struct rd_py_doc {
    cp_arena arena;
    rd_py *root;
    long long nodes;   /* nodes built */
} rd_py_doc;

/* Decode a pickle (protocol 2..5; 0/1 opcodes of the same kinds are read too).
 * 0 and doc->root set, or CP_ERR_FORMAT with err's offset at the opcode that
 * failed; *truncated (may be NULL) tells an input that ended early from a
 * damaged one. A truncated or damaged input still gets a root when its outer dict had
 * begun: each open container keeps what was decoded before the cut (JSON the
 * same), so the caller keeps every complete record. doc is initialised here;
 * free it with rd_py_doc_free either way. */
int rd_py_pickle(const char *data, size_t len, const char *name, rd_py_doc *doc, bool *truncated, cp_error *err);
/* Decode a JSON document into the same tree (base/jsontok). */
int rd_py_json(const char *data, size_t len, const char *name, rd_py_doc *doc, bool *truncated, cp_error *err);
void rd_py_doc_free(rd_py_doc *doc);

/* Dict member by key (a str key), or NULL (also when d is not a dict). */
const rd_py *rd_py_get(const rd_py *d, const char *key);
/* Item i of a list or tuple, or NULL. */
const rd_py *rd_py_at(const rd_py *l, uint32_t i);
/* An int (or bool) value: true and *out set. */
bool rd_py_int(const rd_py *v, int64_t *out);
/* A str (or bytes) value, or NULL. */
const char *rd_py_str(const rd_py *v);
/* Items of a list or tuple (0 otherwise). */
uint32_t rd_py_len(const rd_py *l);
bool rd_py_is_seq(const rd_py *v);

#endif
