/* fake_job.c - a training job for the `chainprof run` tests, linked against
 * the fake libcudart and libnccl (tests/fakes): per step it launches
 * kernels, copies a batch to the "device", reads a dataset file, all-reduces
 * its gradients and synchronises; every few steps it writes a checkpoint
 * with fsync. It does not know chainprof: steps are marked only when the
 * collector's chainprof_step_mark is there (found at run time), as a
 * framework's hook would.
 *
 * usage: fake_job WORK_DIR STEPS [ELEMS [CKPT_EVERY]]
 * Rank and world size come from RANK/WORLD_SIZE or OMPI_COMM_WORLD_RANK/
 * SIZE (default 0/1); rank 0 writes the NCCL unique id to WORK_DIR/nccl.id,
 * the others wait for it. Each rank writes WORK_DIR/own.<rank>.json: the
 * counts the test holds chainprof's figures against.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct { char internal[128]; } nccl_id;
typedef struct { unsigned x, y, z; } dim3;
int ncclGetUniqueId(nccl_id *id);
int ncclCommInitRank(void **comm, int n, nccl_id id, int rank);
int ncclAllReduce(const void *s, void *r, size_t n, int dt, int op, void *comm, void *stream);
int ncclAllGather(const void *s, void *r, size_t n, int dt, void *comm, void *stream);
int ncclGroupStart(void);
int ncclGroupEnd(void);
int ncclSend(const void *s, size_t n, int dt, int peer, void *comm, void *stream);
int ncclRecv(void *r, size_t n, int dt, int peer, void *comm, void *stream);
int ncclCommDestroy(void *comm);
int cudaSetDevice(int d);
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaStreamCreate(void **s);
int cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t sh, void *s);
int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *st);
int cudaStreamSynchronize(void *s);

/* the "kernels" (their symbols name them in the fake CUPTI's records) */
void gemm_kernel(void) {}
void softmax_kernel(void) {}

static int env_int(const char *a, const char *b, int def)
{
    const char *v = getenv(a);
    if (!v || !*v)
        v = getenv(b);
    return v && *v ? atoi(v) : def;
}

static void get_id(const char *dir, int rank, nccl_id *id)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/nccl.id", dir);
    if (rank == 0) {
        ncclGetUniqueId(id);
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) {
            perror("fake_job: nccl.id");
            exit(1);
        }
        return;
    }
    for (int i = 0; i < 6000; i++) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t n = fread(id, sizeof *id, 1, f);
            fclose(f);
            if (n == 1)
                return;
        }
        struct timespec nap = { 0, 10000000 };
        nanosleep(&nap, NULL);
    }
    fprintf(stderr, "fake_job: no %s after 60 s\n", path);
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fake_job WORK_DIR STEPS [ELEMS [CKPT_EVERY]]\n");
        return 2;
    }
    const char *dir = argv[1];
    int steps = atoi(argv[2]);
    size_t elems = argc > 3 ? (size_t)atol(argv[3]) : 65536;
    int every = argc > 4 ? atoi(argv[4]) : 3;
    int rank = env_int("RANK", "OMPI_COMM_WORLD_RANK", 0), world = env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", 1);
    void (*mark)(void) = NULL;
    *(void **)&mark = dlsym(RTLD_DEFAULT, "chainprof_step_mark");
    void (*end)(void) = NULL;
    *(void **)&end = dlsym(RTLD_DEFAULT, "chainprof_step_end");

    nccl_id id;
    get_id(dir, rank, &id);
    void *comm = NULL, *stream = NULL, *dev = NULL;
    if (cudaSetDevice(0) || ncclCommInitRank(&comm, world, id, rank) || cudaStreamCreate(&stream) ||
        cudaMalloc(&dev, elems * 4)) {
        fprintf(stderr, "fake_job: rank %d: init failed\n", rank);
        return 1;
    }
    float *grad = calloc(elems, 4), *host = calloc(elems, 4), *gathered = calloc(elems * (size_t)world, 4);
    for (size_t i = 0; i < elems; i++)
        grad[i] = (float)(rank + 1);
    char data[4200];
    snprintf(data, sizeof data, "%s/dataset.%d.bin", dir, rank);
    int fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, host, elems * 4) != (ssize_t)(elems * 4) || close(fd) != 0) {
        perror("fake_job: dataset");
        return 1;
    }
    long long nccl_ops = 0, kernels = 0, write_bytes = 0, read_bytes = 0;
    dim3 g = { 64, 1, 1 }, b = { 256, 1, 1 };
    for (int s = 0; s < steps; s++) {
        if (mark)
            mark();
        int in = open(data, O_RDONLY);
        ssize_t got = in >= 0 ? read(in, host, elems * 4) : -1;
        read_bytes += got > 0 ? got : 0;
        if (in >= 0)
            close(in);
        cudaMemcpyAsync(dev, host, elems * 4, 1 /* H2D */, stream);
        for (int k = 0; k < 8; k++, kernels++)
            cudaLaunchKernel(k % 2 ? (const void *)softmax_kernel : (const void *)gemm_kernel, g, b, NULL, 0, stream);
        if (ncclAllReduce(grad, grad, elems, 7, 0, comm, stream) != 0) {
            fprintf(stderr, "fake_job: rank %d: all-reduce failed\n", rank);
            return 1;
        }
        nccl_ops++;
        if (world > 1 && s % 2 == 1) { /* a pipeline-style exchange with the neighbours */
            ncclGroupStart();
            ncclSend(host, elems / 4, 7, (rank + 1) % world, comm, stream);
            ncclRecv(host + elems / 2, elems / 4, 7, (rank + world - 1) % world, comm, stream);
            ncclGroupEnd();
            nccl_ops += 2;
        }
        cudaStreamSynchronize(stream);
        if (every > 0 && s % every == every - 1) {
            char ckpt[4200];
            snprintf(ckpt, sizeof ckpt, "%s/ckpt-rank%d-step%d.pt", dir, rank, s);
            int c = open(ckpt, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ssize_t w = c >= 0 ? write(c, grad, elems * 4) : -1;
            write_bytes += w > 0 ? w : 0;
            if (c >= 0) {
                fsync(c);
                close(c);
            }
        }
    }
    if (end)
        end();
    ncclAllGather(grad, gathered, elems, 7, comm, stream); /* after the last step */
    nccl_ops++;
    ncclCommDestroy(comm);
    cudaFree(dev);
    char own[4200];
    snprintf(own, sizeof own, "%s/own.%d.json", dir, rank);
    FILE *f = fopen(own, "w");
    if (!f)
        return 1;
    fprintf(f, "{\"rank\": %d, \"steps\": %d, \"nccl_ops\": %lld, \"kernels\": %lld, \"write_bytes\": %lld, "
               "\"read_bytes\": %lld, \"grad0\": %g}\n", rank, steps, nccl_ops, kernels, write_bytes, read_bytes,
            (double)grad[0]);
    fclose(f);
    free(grad), free(host), free(gathered);
    return 0;
}
