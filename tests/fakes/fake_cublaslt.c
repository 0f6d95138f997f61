/* fake_cublaslt.c - a fake cuBLASLt for tests.
 *
 * Descriptors and layouts are real objects that remember what chainprof set,
 * and cublasLtMatmulAlgoGetHeuristic applies the rules the real library
 * documents for the combinations chainprof asks for, returning
 * CUBLAS_STATUS_NOT_SUPPORTED (15) otherwise:
 *   bf16/fp16: A, B, C of that type, CUBLAS_COMPUTE_32F (68), fp32 scale;
 *   tf32:      fp32 A, B, C, CUBLAS_COMPUTE_32F_FAST_TF32 (77);
 *   fp8:       E4M3 (28) A and B, bf16/fp16/fp32 C, compute 68, A transposed
 *              and B not ("TN"), A and B scale pointers set to positive floats.
 * A GEMM refuses operands that would make a dishonest or broken measurement
 * (CUBLAS_STATUS_INVALID_VALUE, 7): more than 1 % zero elements (a tensor
 * core runs faster on zeros than on real data) or any NaN/Inf ("device"
 * memory is host memory in the fake cudart, so it can look).
 * A "GEMM" then sleeps 1 ms (fp8: 0.5 ms), so chainprof's TFLOP/s =
 * 2 n^3 / time is predictable to within scheduling noise (n = 4096: at most
 * 137.4 TFLOP/s, fp8 274.9). Leaked descriptors show up under ASan.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct desc { int compute, scale_type, transa, transb; const void *a_scale, *b_scale; } desc;
typedef struct layout { int type; uint64_t rows, cols; int64_t ld; } layout;
static int dummy;

int cublasLtCreate(void **h) { *h = &dummy; return 0; }
int cublasLtDestroy(void *h) { return h == &dummy ? 0 : 7; }
int cublasLtMatmulDescCreate(void **d, int c, int s)
{
    desc *x = calloc(1, sizeof *x);
    if (!x)
        return 3;
    x->compute = c, x->scale_type = s;
    *d = x;
    return 0;
}
int cublasLtMatmulDescDestroy(void *d) { free(d); return 0; }
int cublasLtMatmulDescSetAttribute(void *d, int attr, const void *buf, size_t n)
{
    desc *x = d;
    switch (attr) {
    case 3: if (n != 4) return 7; memcpy(&x->transa, buf, 4); return 0; /* TRANSA, int32 */
    case 4: if (n != 4) return 7; memcpy(&x->transb, buf, 4); return 0; /* TRANSB */
    case 17: if (n != sizeof(void *)) return 7; memcpy(&x->a_scale, buf, n); return 0; /* A_SCALE_POINTER */
    case 18: if (n != sizeof(void *)) return 7; memcpy(&x->b_scale, buf, n); return 0; /* B_SCALE_POINTER */
    default: return 7; /* CUBLAS_STATUS_INVALID_VALUE */
    }
}
int cublasLtMatrixLayoutCreate(void **l, int t, uint64_t r, uint64_t c, int64_t ld)
{
    layout *x = malloc(sizeof *x);
    if (!x)
        return 3;
    *x = (layout){ t, r, c, ld };
    *l = x;
    return 0;
}
int cublasLtMatrixLayoutDestroy(void *l) { free(l); return 0; }
int cublasLtMatmulPreferenceCreate(void **p) { *p = &dummy; return 0; }
int cublasLtMatmulPreferenceSetAttribute(void *p, int a, const void *v, size_t n) { (void)p, (void)a, (void)v, (void)n; return 0; }
int cublasLtMatmulPreferenceDestroy(void *p) { (void)p; return 0; }

static int supported(const desc *d, const layout *a, const layout *b, const layout *c)
{
    if (a->type != b->type || d->scale_type != 0)
        return 0;
    switch (a->type) {
    case 2: case 14: return c->type == a->type && d->compute == 68 && !d->transa && !d->transb;
    case 0: return c->type == 0 && (d->compute == 77 || d->compute == 68);
    case 28:
        return (c->type == 14 || c->type == 2 || c->type == 0) && d->compute == 68 && d->transa == 1 &&
               d->transb == 0 && d->a_scale && d->b_scale &&
               /* "device" memory is host memory in the fake cudart: the scales must be readable floats */
               *(const float *)d->a_scale > 0 && *(const float *)d->b_scale > 0;
    default: return 0;
    }
}

int cublasLtMatmulAlgoGetHeuristic(void *h, void *d, void *a, void *b, void *c, void *dd, void *p, int req, void *res, int *found)
{
    (void)h, (void)dd, (void)p, (void)req;
    *found = 0;
    if (!supported(d, a, b, c))
        return 15; /* CUBLAS_STATUS_NOT_SUPPORTED */
    memset(res, 0, 96);
    memcpy(res, &((layout *)a)->type, sizeof(int)); /* the "algo" remembers the input type */
    *found = 1;
    return 0;
}
/* 1 when the n elements of type t at p have under 1 % zeros and no NaN/Inf */
static int operand_ok(const void *p, const layout *l)
{
    uint64_t n = l->rows * l->cols, zeros = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t bits, exp_all_ones;
        switch (l->type) {
        case 0: memcpy(&bits, (const char *)p + 4 * i, 4); exp_all_ones = (bits >> 23 & 0xff) == 0xff; bits <<= 1; break;
        case 14: bits = ((const uint16_t *)p)[i]; exp_all_ones = (bits >> 7 & 0xff) == 0xff; bits = bits << 1 & 0xffff; break;
        case 2: bits = ((const uint16_t *)p)[i]; exp_all_ones = (bits >> 10 & 0x1f) == 0x1f; bits = bits << 1 & 0xffff; break;
        case 28: bits = ((const uint8_t *)p)[i]; exp_all_ones = (bits & 0x7f) == 0x7f; bits = bits << 1 & 0xff; break;
        default: return 0;
        }
        if (exp_all_ones)
            return 0;
        zeros += bits == 0; /* +0 and -0 */
    }
    return zeros * 100 < n;
}

int cublasLtMatmul(void *h, void *d, const void *al, const void *a, void *la, const void *b, void *lb, const void *be,
                   const void *c, void *lc, void *dd, void *ld, const void *algo, void *ws, size_t wss, void *st)
{
    (void)h, (void)al, (void)be, (void)c, (void)dd, (void)ld;
    (void)ws, (void)wss, (void)st;
    if (!supported(d, la, lb, lc))
        return 15;
    if (!operand_ok(a, la) || !operand_ok(b, lb))
        return 7;
    int type;
    memcpy(&type, algo, sizeof type);
    struct timespec ts = { 0, type == 28 ? 500000 : 1000000 };
    nanosleep(&ts, NULL);
    return 0;
}
