/* check_decls.c - chainprof's own declarations of the NVIDIA libraries
 * (src/gpu/gpu.h) against the real headers, at compile time.
 *
 * Built only when the build machine has the headers (tests/CMakeLists.txt
 * looks for cuda_runtime_api.h, cublasLt.h and nccl.h) as an object library
 * that is never linked: compiling it is the test (ctest's vendor.decls
 * rebuilds it). Each GPU_* constant must
 * equal the vendor enum it copies, and each function pointer type in
 * gpu_rt must be exactly the type of a wrapper whose body calls the real
 * function with the same arguments: a wrong arity or an argument of another
 * kind (a pointer where a size goes, a missing level of indirection) does
 * not compile under -Werror. Opaque handles are void * on our side, which
 * converts implicitly to the vendor's pointer typedefs by design.
 */
#include "gpu/gpu.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <library_types.h>
#include <nccl.h>
#include <string.h>

#define SAME(ours, theirs) _Static_assert((int)(ours) == (int)(theirs), #ours " != " #theirs)
SAME(GPU_R_32F, CUDA_R_32F);
SAME(GPU_R_16F, CUDA_R_16F);
SAME(GPU_R_16BF, CUDA_R_16BF);
SAME(GPU_R_8F_E4M3, CUDA_R_8F_E4M3);
SAME(GPU_COMPUTE_32F, CUBLAS_COMPUTE_32F);
SAME(GPU_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_TF32);
SAME(GPU_OP_N, CUBLAS_OP_N);
SAME(GPU_OP_T, CUBLAS_OP_T);
SAME(GPU_LT_DESC_TRANSA, CUBLASLT_MATMUL_DESC_TRANSA);
SAME(GPU_LT_DESC_TRANSB, CUBLASLT_MATMUL_DESC_TRANSB);
SAME(GPU_LT_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER);
SAME(GPU_LT_DESC_B_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER);
SAME(GPU_LT_PREF_MAX_WORKSPACE_BYTES, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
SAME(GPU_ATTR_CC_MAJOR, cudaDevAttrComputeCapabilityMajor);
SAME(GPU_ATTR_CC_MINOR, cudaDevAttrComputeCapabilityMinor);
SAME(GPU_ATTR_L2_CACHE_SIZE, cudaDevAttrL2CacheSize);
SAME(GPU_ERR_NOT_READY, cudaErrorNotReady);
SAME(GPU_NCCL_FLOAT32, ncclFloat32);
SAME(GPU_NCCL_SUM, ncclSum);
SAME(GPU_NCCL_UNIQUE_ID_BYTES, NCCL_UNIQUE_ID_BYTES);
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 21400 /* ncclInProgress: NCCL 2.14 */
SAME(GPU_NCCL_IN_PROGRESS, ncclInProgress);
#endif
_Static_assert(sizeof(gpu_nccl_id) == sizeof(ncclUniqueId), "ncclUniqueId size");
_Static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96, "heuristic result size (gpu.c lt_heuristic)");
_Static_assert(sizeof(int32_t) == sizeof(cublasOperation_t), "TRANSA/TRANSB are int32");

/* W(field, params, call): a wrapper with our signature calling the
 * real function, and an assertion that its type is the field's type. */
#define W(field, params, call)                                                                    \
    static int chk_##field params { return (int)(call); }                                         \
    _Static_assert(_Generic(&chk_##field, __typeof__(((gpu_rt *)0)->field): 1, default: 0),       \
                   #field " type differs from its wrapper");

W(ncclGetVersion, (int *v), ncclGetVersion(v))
W(ncclGetUniqueId, (gpu_nccl_id *id), ncclGetUniqueId((ncclUniqueId *)(void *)id))
W(ncclCommDestroy, (void *c), ncclCommDestroy(c))
W(ncclCommAbort, (void *c), ncclCommAbort(c))
W(ncclCommGetAsyncError, (void *c, int *e), ncclCommGetAsyncError(c, (ncclResult_t *)(void *)e))
W(ncclAllReduce, (const void *s, void *r, size_t n, int dt, int op, void *c, void *st),
  ncclAllReduce(s, r, n, (ncclDataType_t)dt, (ncclRedOp_t)op, c, st))
W(ncclAllGather, (const void *s, void *r, size_t n, int dt, void *c, void *st),
  ncclAllGather(s, r, n, (ncclDataType_t)dt, c, st))
W(ncclReduceScatter, (const void *s, void *r, size_t n, int dt, int op, void *c, void *st),
  ncclReduceScatter(s, r, n, (ncclDataType_t)dt, (ncclRedOp_t)op, c, st))
W(ncclBroadcast, (const void *s, void *r, size_t n, int dt, int root, void *c, void *st),
  ncclBroadcast(s, r, n, (ncclDataType_t)dt, root, c, st))
W(ncclAlltoAll, (const void *s, void *r, size_t n, int dt, void *c, void *st),
  ncclAlltoAll(s, r, n, (ncclDataType_t)dt, c, st))
W(ncclSend, (const void *s, size_t n, int dt, int peer, void *c, void *st),
  ncclSend(s, n, (ncclDataType_t)dt, peer, c, st))
W(ncclRecv, (void *r, size_t n, int dt, int peer, void *c, void *st), ncclRecv(r, n, (ncclDataType_t)dt, peer, c, st))
W(ncclGroupStart, (void), ncclGroupStart())
W(ncclGroupEnd, (void), ncclGroupEnd())
W(StreamCreate, (void **s), cudaStreamCreate((cudaStream_t *)s))
W(StreamDestroy, (void *s), cudaStreamDestroy(s))
W(StreamQuery, (void *s), cudaStreamQuery(s))
W(DeviceGetAttribute, (int *v, int a, int d), cudaDeviceGetAttribute(v, (enum cudaDeviceAttr)a, d))
W(ltMatmulDescSetAttribute, (void *d, int a, const void *b, size_t n),
  cublasLtMatmulDescSetAttribute(d, (cublasLtMatmulDescAttributes_t)a, b, n))
W(ltMatmulDescCreate, (void **d, int c, int s),
  cublasLtMatmulDescCreate((cublasLtMatmulDesc_t *)d, (cublasComputeType_t)c, (cudaDataType_t)s))
W(ltMatrixLayoutCreate, (void **l, int t, uint64_t r, uint64_t c, int64_t ld),
  cublasLtMatrixLayoutCreate((cublasLtMatrixLayout_t *)l, (cudaDataType_t)t, r, c, ld))

/* ncclCommInitRank takes the id by value: the wrapper passes ours as theirs */
static int chk_ncclCommInitRank(void **c, int n, gpu_nccl_id id, int r)
{
    ncclUniqueId u;
    memcpy(&u, &id, sizeof u);
    return (int)ncclCommInitRank((ncclComm_t *)c, n, u, r);
}
_Static_assert(_Generic(&chk_ncclCommInitRank, __typeof__(((gpu_rt *)0)->ncclCommInitRank): 1, default: 0),
               "ncclCommInitRank type");
