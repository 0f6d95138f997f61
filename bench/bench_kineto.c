/* bench_kineto.c - end-to-end Kineto read throughput: file bytes -> builder.
 *
 *   bench_kineto FILE [REPS]
 *
 * Reads FILE with rd_kineto_read into a fresh tl_builder REPS times (best
 * time wins), then freezes one with tl_finish, and prints uncompressed MB/s
 * per CPU-second of this thread (not wall time, so a
 * busy shared machine does not distort it) plus the builder's retained bytes. Built and run by
 * bench/bench_kineto.sh; figures go to docs/PERFORMANCE.md. */
#include "readers/rd_kineto.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

/* CPU time of this thread: the machine may be shared, wall time is not per-core work. */
static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_kineto FILE [REPS]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    cp_src *s;
    cp_error err;
    if (cp_src_open(&s, argv[1], &err) < 0) {
        fprintf(stderr, "bench_kineto: cannot open %s\n", argv[1]);
        return 1;
    }
    char tmp[1 << 16];
    uint64_t bytes = 0;
    ssize_t got;
    while ((got = cp_src_read(s, tmp, sizeof tmp, &err)) > 0) /* uncompressed size, warms the cache */
        bytes += (uint64_t)got;
    cp_src_close(s);
    double best = 1e30;
    size_t n_ev = 0, retained = 0;
    for (int i = 0; i < reps; i++) {
        tl_builder *b = tl_builder_new(argv[1]);
        int64_t t0 = cpu_ns();
        int rc = rd_kineto_read(argv[1], b, NULL, &err);
        int64_t t1 = cpu_ns();
        if (rc < 0) {
            fprintf(stderr, "bench_kineto: read failed: %s\n", err.msg);
            return 1;
        }
        n_ev = tl_builder_count(b);
        retained = tl_builder_bytes(b);
        double sec = (double)(t1 - t0) / 1e9;
        if (sec < best)
            best = sec;
        if (i + 1 < reps) {
            tl_builder_free(b);
            continue;
        }
        tl_timeline *tl;
        int64_t f0 = cpu_ns();
        tl_finish(&b, 1, NULL, &tl, &err);
        int64_t f1 = cpu_ns();
        printf("finish: %.3f s for %zu events\n", (double)(f1 - f0) / 1e9, tl->n_events);
        tl_free(tl);
    }
    printf("read: %.1f MB in %.3f s = %.0f MB/s per core; %zu events, %.1f MB retained by the builder\n",
           (double)bytes / 1e6, best, (double)bytes / 1e6 / best, n_ev, (double)retained / 1e6);
    return 0;
}
