/* tl_extras.h - the packed per-event "extras" records of the timeline (internal to src/model).
 *
 * Why: args, the External id and a category string that is not the
 * category's canonical name are what an event has beyond its fixed columns.
 * Held as 16-byte tl_arg structs they cost more than the events themselves
 * (a Kineto kernel has seven args: 112 bytes, against 40 bytes of columns).
 * Packed as varints they take 15-50 bytes a record, and an event with none
 * shares one record, so the frozen timeline stays at 40 bytes an event plus
 * what its args really need. Lookups decode a few bytes of one record.
 *
 * Record (timeline.h "Event layout" documents it for users of the model):
 *   header  varint: n_args << 3 | XH_EXT | XH_CAT | XH_CAT_NONE
 *   [ext]   zigzag varint, when XH_EXT
 *   [cat]   varint string id, when XH_CAT (the raw category differs from the
 *           canonical name of the event's tl_cat); XH_CAT_NONE: the reader gave
 *           no category string
 *   args    n_args x { varint key << 2 | type; value }, value by type:
 *           INT/BOOL zigzag varint, NUM 8 bytes (the double's bytes, host order),
 *           STR varint string id
 * Builders write the same record without the count in the header (args are
 * added after their event): a builder record ends where the next one starts,
 * and the finish step re-encodes it with the count and the global string ids.
 * Offsets 0 and 1 of every rank's stream are the shared empty records
 * (header 0, and header XH_CAT_NONE).
 */
#ifndef CP_MODEL_TL_EXTRAS_H
#define CP_MODEL_TL_EXTRAS_H

#include "timeline.h"

#include <stdint.h>
#include <string.h>

enum { XH_EXT = 1, XH_CAT = 2, XH_CAT_NONE = 4, XH_SHIFT = 3 };

/* The longest encoding of one arg: a 10-byte key varint and a 10-byte value. */
#define TLX_ARG_MAX 20
/* The longest header + ext + cat. */
#define TLX_HEAD_MAX 30
/* Room that re-encoding a builder record of len bytes may need: every arg
 * takes at least 2 bytes in and at most TLX_ARG_MAX out. */
static inline size_t tlx_room(size_t len) { return TLX_HEAD_MAX + (len / 2 + 1) * TLX_ARG_MAX; }

static inline uint8_t *tlx_put_u(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static inline uint8_t *tlx_put_s(uint8_t *o, int64_t v)
{
    return tlx_put_u(o, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static inline const uint8_t *tlx_get_u(const uint8_t *p, uint64_t *v)
{
    uint64_t x = *p & 0x7f;
    unsigned s = 7;
    while (*p++ & 0x80) {
        x |= (uint64_t)(*p & 0x7f) << s;
        s += 7;
    }
    *v = x;
    return p;
}

static inline const uint8_t *tlx_get_s(const uint8_t *p, int64_t *v)
{
    uint64_t u;
    p = tlx_get_u(p, &u);
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return p;
}

/* Encode one arg (key and string value already in the target's ids). */
static inline uint8_t *tlx_put_arg(uint8_t *o, const tl_arg *a)
{
    o = tlx_put_u(o, (uint64_t)a->key << 2 | (a->type & 3u));
    switch (a->type) {
    case TL_ARG_NUM: memcpy(o, &a->v.d, 8); return o + 8;
    case TL_ARG_STR: return tlx_put_u(o, a->v.s);
    default: return tlx_put_s(o, a->v.i);
    }
}

static inline const uint8_t *tlx_get_arg(const uint8_t *p, tl_arg *a)
{
    uint64_t kt;
    p = tlx_get_u(p, &kt);
    a->key = (uint32_t)(kt >> 2);
    a->type = (uint8_t)(kt & 3u);
    switch (a->type) {
    case TL_ARG_NUM: memcpy(&a->v.d, p, 8); return p + 8;
    case TL_ARG_STR: {
        uint64_t s;
        p = tlx_get_u(p, &s);
        a->v.s = (uint32_t)s;
        return p;
    }
    default: return tlx_get_s(p, &a->v.i);
    }
}

/* The fixed part of a frozen record: fills what is asked (NULL: not needed)
 * and returns where the args begin. */
static inline const uint8_t *tlx_head(const uint8_t *p, unsigned *flags, uint64_t *n_args, int64_t *ext,
                                      uint32_t *cat)
{
    uint64_t h;
    p = tlx_get_u(p, &h);
    int64_t e = -1;
    uint64_t c = 0;
    if (h & XH_EXT)
        p = tlx_get_s(p, &e);
    if (h & XH_CAT)
        p = tlx_get_u(p, &c);
    if (flags)
        *flags = (unsigned)(h & 7u);
    if (n_args)
        *n_args = h >> XH_SHIFT;
    if (ext)
        *ext = e;
    if (cat)
        *cat = (uint32_t)c;
    return p;
}

/* Re-encode one builder record [p, end) into o with string ids mapped
 * through smap; with `counted` the header carries the arg count (the
 * frozen form), else not (a builder's). Returns the end of the output; o
 * needs room for tlx_room(end - p) bytes. *n_args gets the count. */
uint8_t *tlx_reencode(const uint8_t *p, const uint8_t *end, const uint32_t *smap, int counted, uint8_t *o,
                      size_t *n_args);

#endif
