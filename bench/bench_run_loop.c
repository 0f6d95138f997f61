/* bench_run_loop.c - the job bench/bench_run.sh runs with and without the
 * `chainprof run` collector (over the fake CUDA runtime of tests/fakes):
 *
 *   per-event cost   the best of 7 rounds of N back-to-back cudaLaunchKernel
 *                    calls (the fake runs no work) and N/10 pwrite calls of
 *                    64 bytes on a checkpoint file: ns per call;
 *   step loop        steps of a fixed amount of host work (ITERS iterations,
 *                    the same in every mode) with 90 kernel launches and 10
 *                    pwrite calls of 4 KiB each: 10,000 events per second at
 *                    10 ms steps; step marks through chainprof_step_mark
 *                    when the collector is there. Process CPU time (every
 *                    thread, the collector's writer included) per step and
 *                    wall time per step.
 *
 * usage: bench_run_loop DIR events [N]      per-event cost
 *        bench_run_loop DIR loop STEPS ITERS the step loop
 *        bench_run_loop DIR calibrate        iterations that take 10 ms of CPU here
 * One JSON line on stdout (a number for calibrate).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef struct { unsigned x, y, z; } dim3;
int cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t sh, void *s);
void bench_kernel(void) {}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec + 1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

static volatile uint64_t sink;

static void work(uint64_t iters)
{
    uint64_t x = 1;
    for (uint64_t i = 0; i < iters; i++)
        x = x * 6364136223846793005ull + i;
    sink = x;
}

static double events(int fd, long n)
{
    static char buf[64];
    dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
    double ns_launch = 1e18, ns_write = 1e18;
    for (int r = 0; r < 7; r++) {
        int64_t t0 = now_ns();
        for (long i = 0; i < n; i++)
            cudaLaunchKernel((const void *)bench_kernel, g, b, NULL, 0, NULL);
        int64_t t1 = now_ns();
        for (long i = 0; i < n / 10; i++)
            if (pwrite(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf)
                return -1;
        int64_t t2 = now_ns();
        double l = (double)(t1 - t0) / (double)n, w = (double)(t2 - t1) / (double)(n / 10);
        ns_launch = l < ns_launch ? l : ns_launch;
        ns_write = w < ns_write ? w : ns_write;
        struct timespec nap = { 0, 50000000 }; /* let the collector's writer drain between rounds */
        nanosleep(&nap, NULL);
    }
    printf("{\"ns_launch\": %.1f, \"ns_pwrite\": %.1f, \"events\": %ld}\n", ns_launch, ns_write, 7 * (n + n / 10));
    return 0;
}

static int loop(int fd, long steps, uint64_t iters)
{
    static char buf[4096];
    void (*mark)(void) = NULL;
    *(void **)&mark = dlsym(RTLD_DEFAULT, "chainprof_step_mark");
    dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
    double c0 = cpu_s();
    int64_t w0 = now_ns();
    for (long s = 0; s < steps; s++) {
        if (mark)
            mark();
        for (int k = 0; k < 10; k++) {
            work(iters / 10);
            for (int j = 0; j < 9; j++)
                cudaLaunchKernel((const void *)bench_kernel, g, b, NULL, 0, NULL);
            if (pwrite(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf)
                return 1;
        }
    }
    double wall = (double)(now_ns() - w0) * 1e-9, cpu = cpu_s() - c0;
    printf("{\"steps\": %ld, \"wall_ms_per_step\": %.4f, \"cpu_ms_per_step\": %.4f, \"events_per_s\": %.0f}\n", steps,
           1e3 * wall / (double)steps, 1e3 * cpu / (double)steps, (double)steps * 100 / wall);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_run_loop DIR events [N] | DIR loop STEPS ITERS | DIR calibrate\n");
        return 2;
    }
    if (!strcmp(argv[2], "calibrate")) { /* iterations per 10 ms of CPU time, the best of 5 */
        uint64_t probe = 1000000;
        int64_t best = INT64_MAX;
        for (int r = 0; r < 5; r++) {
            struct timespec a, z;
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
            work(probe);
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &z);
            int64_t t = (int64_t)(z.tv_sec - a.tv_sec) * 1000000000 + (z.tv_nsec - a.tv_nsec);
            best = t < best ? t : best;
        }
        printf("%llu\n", (unsigned long long)(probe * 10000000.0 / (double)best));
        return 0;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/bench-ckpt.%d.pt", argv[1], (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    int rc = !strcmp(argv[2], "events") ? events(fd, argc > 3 ? atol(argv[3]) : 200000) != 0
             : argc > 4                 ? loop(fd, atol(argv[3]), strtoull(argv[4], NULL, 10))
                                        : 2;
    close(fd);
    unlink(path);
    return rc;
}
