/* bench_nsys_read.c - the Nsight Systems reader alone: SQLite rows -> builders.
 *
 *   bench_nsys_read FILE.sqlite [REPS] [THREADS]
 *
 * Reads FILE with rd_nsys_read into fresh builders (one per process, as
 * analyze does) REPS times on THREADS threads (default 1; best CPU time of
 * the process and best wall time win), then
 * freezes the last set with tl_finish and times that separately, and prints
 * events, builder bytes and the peak RSS of the process. Built and run by
 * bench/bench_nsys.sh; figures go to docs/PERFORMANCE.md. */
#include "readers/rd_nsys.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* CPU time of the process (every reading thread): the machine may be
 * shared, so wall time alone is not the work done. */
static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static int64_t cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

typedef struct set {
    tl_builder *b[64];
    size_t n;
} set;

static tl_builder *more(void *ctx, const char *source)
{
    set *s = ctx;
    if (s->n >= 64)
        return s->b[0];
    s->b[s->n] = tl_builder_new(source);
    return s->b[s->n++];
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_nsys_read FILE.sqlite [REPS] [THREADS]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    double best = 1e30, best_wall = 1e30;
    for (int i = 0; i < reps; i++) {
        set s = { .n = 0 };
        s.b[s.n++] = tl_builder_new(argv[1]);
        rd_opts o = { .more = more, .more_ctx = &s, .threads = threads };
        cp_error err;
        int64_t t0 = cpu_ns(), w0 = clock_ns(CLOCK_MONOTONIC);
        int rc = rd_nsys_read(argv[1], s.b[0], &o, &err);
        int64_t t1 = cpu_ns(), w1 = clock_ns(CLOCK_MONOTONIC);
        if (rc < 0) {
            fprintf(stderr, "bench_nsys_read: read failed: %s\n", err.msg);
            return 1;
        }
        size_t n_ev = 0, bytes = 0;
        for (size_t k = 0; k < s.n; k++) {
            n_ev += tl_builder_count(s.b[k]);
            bytes += tl_builder_bytes(s.b[k]);
        }
        double sec = (double)(t1 - t0) / 1e9;
        if (sec < best)
            best = sec;
        if ((double)(w1 - w0) / 1e9 < best_wall)
            best_wall = (double)(w1 - w0) / 1e9;
        if (i + 1 < reps) {
            for (size_t k = 0; k < s.n; k++)
                tl_builder_free(s.b[k]);
            continue;
        }
        tl_timeline *tl;
        int64_t f0 = cpu_ns();
        if (tl_finish(s.b, s.n, NULL, &tl, &err) < 0) {
            fprintf(stderr, "bench_nsys_read: finish failed: %s\n", err.msg);
            return 1;
        }
        int64_t f1 = cpu_ns();
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("read: %.3f s cpu, %.3f s wall on %d thread%s (best of %d), %zu events in %zu builders, %.1f MB in the builders; "
               "tl_finish: %.3f s; peak RSS %ld MB\n",
               best, best_wall, threads, threads == 1 ? "" : "s", reps, n_ev, s.n, (double)bytes / 1e6, (double)(f1 - f0) / 1e9, ru.ru_maxrss / 1024);
        tl_free(tl);
    }
    return 0;
}
