/* fake_cublaslt.c - a fake cuBLASLt for tests: handles are dummies and a
 * "GEMM" sleeps 1 ms, so chainprof's TFLOP/s = 2 n^3 / 1 ms is predictable
 * to within scheduling noise (n = 4096: about 137 TFLOP/s, never more). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static int dummy;
int cublasLtCreate(void **h) { *h = &dummy; return 0; }
int cublasLtDestroy(void *h) { (void)h; return 0; }
int cublasLtMatmulDescCreate(void **d, int c, int s) { (void)c, (void)s; *d = &dummy; return 0; }
int cublasLtMatmulDescDestroy(void *d) { (void)d; return 0; }
int cublasLtMatrixLayoutCreate(void **l, int t, uint64_t r, uint64_t c, int64_t ld) { (void)t, (void)r, (void)c, (void)ld; *l = &dummy; return 0; }
int cublasLtMatrixLayoutDestroy(void *l) { (void)l; return 0; }
int cublasLtMatmulPreferenceCreate(void **p) { *p = &dummy; return 0; }
int cublasLtMatmulPreferenceSetAttribute(void *p, int a, const void *v, size_t n) { (void)p, (void)a, (void)v, (void)n; return 0; }
int cublasLtMatmulPreferenceDestroy(void *p) { (void)p; return 0; }
int cublasLtMatmulAlgoGetHeuristic(void *h, void *d, void *a, void *b, void *c, void *dd, void *p, int req, void *res, int *found)
{
    (void)h, (void)d, (void)a, (void)b, (void)c, (void)dd, (void)p, (void)req;
    memset(res, 0, 96);
    *found = 1;
    return 0;
}
int cublasLtMatmul(void *h, void *d, const void *al, const void *a, void *la, const void *b, void *lb, const void *be,
                   const void *c, void *lc, void *dd, void *ld, const void *algo, void *ws, size_t wss, void *st)
{
    (void)h, (void)d, (void)al, (void)a, (void)la, (void)b, (void)lb, (void)be, (void)c, (void)lc, (void)dd, (void)ld;
    (void)algo, (void)ws, (void)wss, (void)st;
    struct timespec ts = { 0, 1000000 };
    nanosleep(&ts, NULL);
    return 0;
}
