/* stream_ref.c - a STREAM-style reference for bench_probe.sh.
 *
 * Written independently of src/probe/probe_memory.c on purpose (OpenMP,
 * static schedule, no pinning of our own: OMP_PROC_BIND/OMP_PLACES decide)
 * so the benchmark compares chainprof against a separate implementation of
 * the same method: arrays of N doubles, copy/scale/add/triad, best time of
 * NTIMES after the first, bytes counted as STREAM does (2 or 3 arrays of
 * 8-byte words, no write-allocate). Prints "kernel GB/s" lines.
 *
 *   cc -O2 -fopenmp bench/stream_ref.c -o stream_ref && ./stream_ref N NTIMES
 */
#include <float.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 80000000L;
    int ntimes = argc > 2 ? atoi(argv[2]) : 10;
    if (n < 1000 || ntimes < 2) {
        fprintf(stderr, "usage: stream_ref N NTIMES (N >= 1000, NTIMES >= 2)\n");
        return 2;
    }
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), *c = malloc((size_t)n * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "stream_ref: out of memory\n");
        return 1;
    }
#pragma omp parallel for schedule(static)
    for (long j = 0; j < n; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.0;
    }
    const double s = 3.0;
    double best[4] = { DBL_MAX, DBL_MAX, DBL_MAX, DBL_MAX };
    for (int k = 0; k < ntimes; k++) {
        double t[4];
        t[0] = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++)
            c[j] = a[j];
        t[0] = omp_get_wtime() - t[0];
        t[1] = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++)
            b[j] = s * c[j];
        t[1] = omp_get_wtime() - t[1];
        t[2] = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++)
            c[j] = a[j] + b[j];
        t[2] = omp_get_wtime() - t[2];
        t[3] = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++)
            a[j] = b[j] + s * c[j];
        t[3] = omp_get_wtime() - t[3];
        for (int i = 0; k > 0 && i < 4; i++)
            if (t[i] < best[i])
                best[i] = t[i];
    }
    static const char *names[4] = { "copy", "scale", "add", "triad" };
    static const double words[4] = { 2, 2, 3, 3 };
    for (int i = 0; i < 4; i++)
        printf("%s %.3f\n", names[i], words[i] * 8.0 * (double)n / best[i] / 1e9);
    printf("check %.6g\n", a[n / 2]);
    free(a), free(b), free(c);
    return 0;
}
