/* rd_nsys_util.c - the nsys reader's pure helpers (no SQLite): API name
 * normalization, PyTorch emit_nvtx op names, NVTX binary payload decoding.
 * Kept apart so the fuzz target and unit tests reach them without a
 * database. */
#include "rd_nsys.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

char *rd_nsys_normalize_api(char *s)
{
    size_t n = strlen(s);
    size_t i = n;
    while (i > 0 && isdigit((unsigned char)s[i - 1]))
        i--;
    if (i < n && i >= 2 && s[i - 1] == 'v' && s[i - 2] == '_')
        s[i - 2] = 0;
    return s;
}

size_t rd_nsys_torch_op_len(const char *text)
{
    static const char *const prefixes[] = { "aten::", "autograd::", "c10d::", "torch::", "cudnn::",
                                            "prim::", "profiler::", "nccl:", "record_param_comms" };
    bool known = false;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0] && !known; i++)
        known = strncmp(text, prefixes[i], strlen(prefixes[i])) == 0;
    const char *comma = strstr(text, ", seq = ");
    if (!comma)
        comma = strstr(text, ", op_id = ");
    if (!comma)
        comma = strstr(text, ", sizes = ");
    if (!known && !comma)
        return 0;
    return comma ? (size_t)(comma - text) : strlen(text);
}

/* LP64 sizes of the scalar payload entry types; 0 = not a scalar we read */
static size_t type_size(uint64_t t, int *is_float, int *is_signed)
{
    *is_float = 0;
    *is_signed = 1;
    switch (t) {
    case 1: case 11: return 1;                  /* char, int8 */
    case 2: case 12: *is_signed = 0; return 1;  /* uchar, uint8 */
    case 3: case 13: return 2;
    case 4: case 14: *is_signed = 0; return 2;
    case 5: case 15: return 4;                  /* int, int32 */
    case 6: case 16: *is_signed = 0; return 4;
    case 7: case 9: case 17: return 8;          /* long, long long, int64 */
    case 8: case 10: case 18: case 22: case 23: *is_signed = 0; return 8; /* size_t, address */
    case 19: case 43: *is_float = 1; return 4;
    case 20: case 44: *is_float = 1; return 8;
    case 128: *is_signed = 0; return 8;         /* timestamp64 */
    default: return 0;
    }
}

size_t rd_nvtx_decode(const rd_nvtx_entry *entries, size_t n_entries, const uint8_t *blob, size_t len,
                      rd_nvtx_value *out, size_t max_out, size_t *skipped)
{
    size_t n = 0;
    *skipped = 0;
    for (size_t e = 0; e < n_entries; e++) {
        int fl, sg;
        size_t sz = type_size(entries[e].type, &fl, &sg);
        uint64_t off = entries[e].offset;
        if (!sz || off > len || len - off < sz || n >= max_out) {
            (*skipped)++;
            continue;
        }
        uint64_t raw = 0;
        for (size_t b = 0; b < sz; b++) /* little endian, as x86-64 and arm64 write it */
            raw |= (uint64_t)blob[off + b] << (8 * b);
        rd_nvtx_value *v = &out[n++];
        v->name = entries[e].name;
        v->is_float = fl;
        v->i = 0;
        v->d = 0;
        if (fl) {
            if (sz == 4) {
                uint32_t r32 = (uint32_t)raw;
                float f;
                memcpy(&f, &r32, 4);
                v->d = f;
            } else {
                memcpy(&v->d, &raw, 8);
            }
        } else if (sg && sz < 8 && (raw >> (8 * sz - 1)) & 1) {
            v->i = (int64_t)(raw | (~0ULL << (8 * sz)));
        } else {
            v->i = (int64_t)raw;
        }
    }
    return n;
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (uint8_t)tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

size_t rd_nvtx_blob_bytes(const uint8_t *data, size_t n, int is_text, uint8_t *out, size_t cap)
{
    bool hex = is_text && n % 2 == 0 && n > 0;
    for (size_t i = 0; hex && i < n; i++)
        hex = hexval(data[i]) >= 0;
    size_t w = 0;
    if (hex) {
        for (size_t i = 0; i + 1 < n && w < cap; i += 2)
            out[w++] = (uint8_t)(hexval(data[i]) << 4 | hexval(data[i + 1]));
        return w;
    }
    w = n < cap ? n : cap;
    memcpy(out, data, w);
    return w;
}
