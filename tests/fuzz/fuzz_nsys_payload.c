/* fuzz_nsys_payload.c - NVTX payload decoding and name handling of the nsys
 * reader. Input layout: byte 0 = number of schema entries (mod 9), then per
 * entry 2 bytes (type, offset), then the blob; the whole input is also fed
 * as text to the name helpers. */
#include "readers/rd_nsys.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    rd_nsys_normalize_api(text);
    (void)rd_nsys_torch_op_len(text);
    free(text);
    if (size < 1)
        return 0;
    size_t n = data[0] % 9, pos = 1;
    rd_nvtx_entry e[8];
    size_t k = 0;
    for (; k < n && pos + 2 <= size; k++, pos += 2)
        e[k] = (rd_nvtx_entry){ data[pos], data[pos + 1], "f" };
    uint8_t blob[256];
    size_t len = rd_nvtx_blob_bytes(data + pos, size - pos, data[0] & 0x80, blob, sizeof blob);
    rd_nvtx_value v[8];
    size_t skipped;
    size_t got = rd_nvtx_decode(e, k, blob, len, v, 8, &skipped);
    if (got + skipped != k)
        abort();
    return 0;
}
