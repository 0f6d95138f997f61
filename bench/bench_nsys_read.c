/* bench_nsys_read.c - the Nsight Systems reader alone: SQLite rows -> builders.
 *
 *   bench_nsys_read FILE.sqlite [REPS]
 *
 * Reads FILE with rd_nsys_read into fresh builders (one per process, as
 * analyze does) REPS times (best CPU time of this thread wins), then
 * freezes the last set with tl_finish and times that separately, and prints
 * events, builder bytes and the peak RSS of the process. Built and run by
 * bench/bench_nsys.sh; figures go to docs/PERFORMANCE.md. */
#include "readers/rd_nsys.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* CPU time of this thread: the machine may be shared, wall time is not per-core work. */
static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

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
        fprintf(stderr, "usage: bench_nsys_read FILE.sqlite [REPS]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    double best = 1e30;
    for (int i = 0; i < reps; i++) {
        set s = { .n = 0 };
        s.b[s.n++] = tl_builder_new(argv[1]);
        rd_opts o = { .more = more, .more_ctx = &s };
        cp_error err;
        int64_t t0 = cpu_ns();
        int rc = rd_nsys_read(argv[1], s.b[0], &o, &err);
        int64_t t1 = cpu_ns();
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
        printf("read: %.3f s cpu (best of %d), %zu events in %zu builders, %.1f MB in the builders; "
               "tl_finish: %.3f s; peak RSS %ld MB\n",
               best, reps, n_ev, s.n, (double)bytes / 1e6, (double)(f1 - f0) / 1e9, ru.ru_maxrss / 1024);
        tl_free(tl);
    }
    return 0;
}
