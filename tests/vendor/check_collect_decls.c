/* check_collect_decls.c - the collector's own declarations of CUDA, CUPTI
 * and NCCL's profiler plugin interface (src/collect/col_*_abi.h, col_nccl.c)
 * against the real headers, at compile time (like check_decls.c).
 *
 * Built as an object library that is never linked; compiling it is the
 * test. Sections: CUDA runtime and driver (cuda_runtime_api.h, cuda.h)
 * always; CUPTI when cupti_activity.h is found (CP_HAVE_CUPTI_H); NCCL's
 * profiler interface when a directory with its ext-profiler headers is
 * given (CP_NCCL_PROFILER_INC: NCCL's plugins/profiler/example/nccl, which
 * holds profiler.h, profiler_v1.h ... profiler_v6.h, err.h, common.h; they
 * are NCCL sources, not part of an installed NCCL). For every interposed
 * function a wrapper with our signature calls the real one, so a wrong
 * arity or argument kind does not compile; every struct field we read sits
 * at the real offset; every constant equals the real one.
 */
#include "collect/col_cuda_abi.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stddef.h>
#include <string.h>

#define SAME(ours, theirs) _Static_assert((long long)(ours) == (long long)(theirs), #ours " != " #theirs)
#define AT(ts, tf, os, of) _Static_assert(offsetof(ts, tf) == offsetof(os, of), #ts "." #tf " offset")

/* W(type, params, call): a wrapper with our signature calling the real
 * function, and an assertion that its type is our function pointer type. */
#define W(type, params, call)                                                                         \
    __attribute__((unused)) static int chk_##type params { return (int)(call); }                      \
    _Static_assert(_Generic(&chk_##type, type: 1, default: 0), #type " differs from its wrapper");

static dim3 d3(col_dim3 v)
{
    dim3 d;
    memcpy(&d, &v, sizeof d);
    return d;
}
_Static_assert(sizeof(col_dim3) == sizeof(dim3), "dim3 size");
AT(cudaLaunchConfig_t, stream, col_cuda_launch_config, stream);
AT(cudaLaunchConfig_t, dynamicSmemBytes, col_cuda_launch_config, dynamic_smem_bytes);
AT(CUlaunchConfig, hStream, col_cu_launch_config, stream);
AT(CUlaunchConfig, sharedMemBytes, col_cu_launch_config, shared_mem_bytes);
_Static_assert(sizeof(CUdeviceptr) == sizeof(col_cu_devptr), "CUdeviceptr");
SAME(COL_CUDA_ERR_INIT, cudaErrorInitializationError);
SAME(COL_CUDA_ERR_INIT, CUDA_ERROR_NOT_INITIALIZED);

W(col_cudaLaunchKernel_fn, (const void *f, col_dim3 g, col_dim3 b, void **a, size_t s, void *st),
  cudaLaunchKernel(f, d3(g), d3(b), a, s, st))
W(col_cudaLaunchKernelExC_fn, (const col_cuda_launch_config *c, const void *f, void **a),
  cudaLaunchKernelExC((const cudaLaunchConfig_t *)(const void *)c, f, a))
W(col_cudaLaunchCooperativeKernel_fn, (const void *f, col_dim3 g, col_dim3 b, void **a, size_t s, void *st),
  cudaLaunchCooperativeKernel(f, d3(g), d3(b), a, s, st))
W(col_cudaMemcpy_fn, (void *d, const void *s, size_t n, int k), cudaMemcpy(d, s, n, (enum cudaMemcpyKind)k))
W(col_cudaMemcpyAsync_fn, (void *d, const void *s, size_t n, int k, void *st),
  cudaMemcpyAsync(d, s, n, (enum cudaMemcpyKind)k, st))
W(col_cudaMemcpyPeer_fn, (void *d, int dd, const void *s, int sd, size_t n), cudaMemcpyPeer(d, dd, s, sd, n))
W(col_cudaMemcpyPeerAsync_fn, (void *d, int dd, const void *s, int sd, size_t n, void *st),
  cudaMemcpyPeerAsync(d, dd, s, sd, n, st))
W(col_cudaMemset_fn, (void *p, int v, size_t n), cudaMemset(p, v, n))
W(col_cudaMemsetAsync_fn, (void *p, int v, size_t n, void *st), cudaMemsetAsync(p, v, n, st))
W(col_cudaDeviceSynchronize_fn, (void), cudaDeviceSynchronize())
W(col_cudaStreamSynchronize_fn, (void *s), cudaStreamSynchronize(s))
W(col_cudaEventSynchronize_fn, (void *e), cudaEventSynchronize(e))
W(col_cudaStreamWaitEvent_fn, (void *s, void *e, unsigned f), cudaStreamWaitEvent(s, e, f))
W(col_cudaGraphLaunch_fn, (void *g, void *s), cudaGraphLaunch(g, s))
W(col_cudaSetDevice_fn, (int d), cudaSetDevice(d))
W(col_cuLaunchKernel_fn,
  (void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, void *s,
   void **p, void **e),
  cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sh, s, p, e))
W(col_cuLaunchKernelEx_fn, (const col_cu_launch_config *c, void *f, void **p, void **e),
  cuLaunchKernelEx((const CUlaunchConfig *)(const void *)c, f, p, e))
W(col_cuMemcpyHtoD_fn, (col_cu_devptr d, const void *s, size_t n), cuMemcpyHtoD_v2(d, s, n))
W(col_cuMemcpyDtoH_fn, (void *d, col_cu_devptr s, size_t n), cuMemcpyDtoH_v2(d, s, n))
W(col_cuMemcpyAsync_fn, (col_cu_devptr d, col_cu_devptr s, size_t n, void *st), cuMemcpyAsync(d, s, n, st))
W(col_cuMemcpyHtoDAsync_fn, (col_cu_devptr d, const void *s, size_t n, void *st), cuMemcpyHtoDAsync_v2(d, s, n, st))
W(col_cuMemcpyDtoHAsync_fn, (void *d, col_cu_devptr s, size_t n, void *st), cuMemcpyDtoHAsync_v2(d, s, n, st))
W(col_cuMemsetD8Async_fn, (col_cu_devptr d, unsigned char v, size_t n, void *st), cuMemsetD8Async(d, v, n, st))
W(col_cuCtxSynchronize_fn, (void), cuCtxSynchronize())
W(col_cuStreamSynchronize_fn, (void *s), cuStreamSynchronize(s))
W(col_cuEventSynchronize_fn, (void *e), cuEventSynchronize(e))
W(col_cuGraphLaunch_fn, (void *g, void *s), cuGraphLaunch(g, s))

/* the copy kinds the records use are the runtime's */
#include "chainprof/cptrace.h"
SAME(CPT_MK_H2H, cudaMemcpyHostToHost);
SAME(CPT_MK_H2D, cudaMemcpyHostToDevice);
SAME(CPT_MK_D2H, cudaMemcpyDeviceToHost);
SAME(CPT_MK_D2D, cudaMemcpyDeviceToDevice);
SAME(CPT_MK_DEFAULT, cudaMemcpyDefault);

#ifdef CP_HAVE_CUPTI_H
#include "collect/col_cupti_abi.h"
#include <cupti_activity.h>

SAME(CU_ACT_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY);
SAME(CU_ACT_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET);
SAME(CU_ACT_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL);
SAME(CU_ACT_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
SAME(CU_ACT_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
SAME(CU_EXT_CUSTOM0, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
SAME(CU_FLUSH_FORCED, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
SAME(CU_MAX_LIMIT_REACHED, CUPTI_ERROR_MAX_LIMIT_REACHED);
SAME(CU_MK_HTOD, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
SAME(CU_MK_DTOH, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
SAME(CU_MK_DTOD, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
SAME(CU_MK_HTOH, CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
SAME(CU_MK_PTOP, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
SAME(CU_MEM_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
AT(CUpti_ActivityKernel9, start, cu_kernel, start);
AT(CUpti_ActivityKernel9, end, cu_kernel, end);
AT(CUpti_ActivityKernel9, deviceId, cu_kernel, device_id);
AT(CUpti_ActivityKernel9, contextId, cu_kernel, context_id);
AT(CUpti_ActivityKernel9, streamId, cu_kernel, stream_id);
AT(CUpti_ActivityKernel9, correlationId, cu_kernel, correlation_id);
AT(CUpti_ActivityKernel9, name, cu_kernel, name);
AT(CUpti_ActivityKernel4, start, cu_kernel, start); /* the oldest layout still generated by CUDA 11 */
AT(CUpti_ActivityKernel4, correlationId, cu_kernel, correlation_id);
AT(CUpti_ActivityKernel4, name, cu_kernel, name);
AT(CUpti_ActivityMemcpy5, copyKind, cu_memcpy, copy_kind);
AT(CUpti_ActivityMemcpy5, srcKind, cu_memcpy, src_kind);
AT(CUpti_ActivityMemcpy5, dstKind, cu_memcpy, dst_kind);
AT(CUpti_ActivityMemcpy5, bytes, cu_memcpy, bytes);
AT(CUpti_ActivityMemcpy5, start, cu_memcpy, start);
AT(CUpti_ActivityMemcpy5, end, cu_memcpy, end);
AT(CUpti_ActivityMemcpy5, deviceId, cu_memcpy, device_id);
AT(CUpti_ActivityMemcpy5, streamId, cu_memcpy, stream_id);
AT(CUpti_ActivityMemcpy5, correlationId, cu_memcpy, correlation_id);
#if defined(CUPTI_API_VERSION) && CUPTI_API_VERSION >= 130000 /* CUDA 13: Kernel10, Memcpy6 are generated */
AT(CUpti_ActivityKernel10, start, cu_kernel, start);
AT(CUpti_ActivityKernel10, end, cu_kernel, end);
AT(CUpti_ActivityKernel10, deviceId, cu_kernel, device_id);
AT(CUpti_ActivityKernel10, streamId, cu_kernel, stream_id);
AT(CUpti_ActivityKernel10, correlationId, cu_kernel, correlation_id);
AT(CUpti_ActivityKernel10, name, cu_kernel, name);
AT(CUpti_ActivityMemcpy6, copyKind, cu_memcpy, copy_kind);
AT(CUpti_ActivityMemcpy6, srcKind, cu_memcpy, src_kind);
AT(CUpti_ActivityMemcpy6, bytes, cu_memcpy, bytes);
AT(CUpti_ActivityMemcpy6, start, cu_memcpy, start);
AT(CUpti_ActivityMemcpy6, end, cu_memcpy, end);
AT(CUpti_ActivityMemcpy6, deviceId, cu_memcpy, device_id);
AT(CUpti_ActivityMemcpy6, streamId, cu_memcpy, stream_id);
AT(CUpti_ActivityMemcpy6, correlationId, cu_memcpy, correlation_id);
#endif
AT(CUpti_ActivityMemset4, bytes, cu_memset, bytes);
AT(CUpti_ActivityMemset4, start, cu_memset, start);
AT(CUpti_ActivityMemset4, end, cu_memset, end);
AT(CUpti_ActivityMemset4, deviceId, cu_memset, device_id);
AT(CUpti_ActivityMemset4, streamId, cu_memset, stream_id);
AT(CUpti_ActivityMemset4, correlationId, cu_memset, correlation_id);
AT(CUpti_ActivityExternalCorrelation, externalKind, cu_ext_corr, external_kind);
AT(CUpti_ActivityExternalCorrelation, externalId, cu_ext_corr, external_id);
AT(CUpti_ActivityExternalCorrelation, correlationId, cu_ext_corr, correlation_id);

__attribute__((unused)) static void req_ours(uint8_t **b, size_t *s, size_t *m) { (void)b, (void)s, (void)m; }
__attribute__((unused)) static void done_ours(CUcontext c, uint32_t st, uint8_t *b, size_t s, size_t v) { (void)c, (void)st, (void)b, (void)s, (void)v; }
_Static_assert(_Generic(&req_ours, CUpti_BuffersCallbackRequestFunc: 1, default: 0), "request callback");
_Static_assert(_Generic(&done_ours, CUpti_BuffersCallbackCompleteFunc: 1, default: 0), "complete callback");
W(cu_register_callbacks_fn, (cu_buffer_request_fn rq, cu_buffer_complete_fn cp),
  cuptiActivityRegisterCallbacks(rq, (CUpti_BuffersCallbackCompleteFunc)(void *)cp))
W(cu_enable_fn, (int k), cuptiActivityEnable((CUpti_ActivityKind)k))
W(cu_flush_all_fn, (uint32_t f), cuptiActivityFlushAll(f))
W(cu_next_record_fn, (uint8_t *b, size_t n, void **r), cuptiActivityGetNextRecord(b, n, (CUpti_Activity **)r))
W(cu_push_ext_fn, (int k, uint64_t id), cuptiActivityPushExternalCorrelationId((CUpti_ExternalCorrelationKind)k, id))
W(cu_pop_ext_fn, (int k, uint64_t *id), cuptiActivityPopExternalCorrelationId((CUpti_ExternalCorrelationKind)k, id))
W(cu_timestamp_fn, (uint64_t *t), cuptiGetTimestamp(t))
W(cu_dropped_fn, (void *c, uint32_t s, size_t *n), cuptiActivityGetNumDroppedRecords(c, s, n))
#endif

#ifdef CP_NCCL_PROFILER_INC
#include "collect/col_nprof_abi.h"
#include "err.h"
#include "profiler.h"

SAME(NP_GROUP, ncclProfileGroup);
SAME(NP_COLL, ncclProfileColl);
SAME(NP_P2P, ncclProfileP2p);
SAME(NP_PROXY_OP, ncclProfileProxyOp);
SAME(NP_PROXY_STEP, ncclProfileProxyStep);
SAME(NP_PROXY_CTRL, ncclProfileProxyCtrl);
SAME(NP_KERNEL_CH, ncclProfileKernelCh);
SAME(NP_NET_PLUGIN, ncclProfileNetPlugin);
SAME(NP_GROUP_API, ncclProfileGroupApi);
SAME(NP_COLL_API, ncclProfileCollApi);
SAME(NP_P2P_API, ncclProfileP2pApi);
SAME(NP_KERNEL_LAUNCH, ncclProfileKernelLaunch);
SAME(CPT_NS_PROXYOP_SEND_POSTED, ncclProfilerProxyOpSendPosted);
SAME(CPT_NS_PROXYOP_SEND_REM_FIFO_WAIT, ncclProfilerProxyOpSendRemFifoWait);
SAME(CPT_NS_PROXYOP_SEND_TRANSMITTED, ncclProfilerProxyOpSendTransmitted);
SAME(CPT_NS_PROXYOP_SEND_DONE, ncclProfilerProxyOpSendDone);
SAME(CPT_NS_PROXYOP_RECV_POSTED, ncclProfilerProxyOpRecvPosted);
SAME(CPT_NS_PROXYOP_RECV_RECEIVED, ncclProfilerProxyOpRecvReceived);
SAME(CPT_NS_PROXYOP_RECV_TRANSMITTED, ncclProfilerProxyOpRecvTransmitted);
SAME(CPT_NS_PROXYOP_RECV_DONE, ncclProfilerProxyOpRecvDone);
SAME(CPT_NS_STEP_SEND_GPU_WAIT, ncclProfilerProxyStepSendGPUWait);
SAME(CPT_NS_STEP_SEND_WAIT, ncclProfilerProxyStepSendWait);
SAME(CPT_NS_STEP_RECV_WAIT, ncclProfilerProxyStepRecvWait);
SAME(CPT_NS_STEP_RECV_FLUSH_WAIT, ncclProfilerProxyStepRecvFlushWait);
SAME(CPT_NS_STEP_RECV_GPU_WAIT, ncclProfilerProxyStepRecvGPUWait);
SAME(CPT_NS_PROXYOP_IN_PROGRESS, ncclProfilerProxyOpInProgress_v4);
SAME(CPT_NS_STEP_SEND_PEER_WAIT, ncclProfilerProxyStepSendPeerWait_v4);
SAME(CPT_NS_KCH_STOP, ncclProfilerKernelChStop);
_Static_assert(sizeof(ncclResult_t) == sizeof(int), "ncclResult_t is an int");

/* descriptors: every field we read, every version */
#define D(v, theirs, ours) AT(ncclProfilerEventDescr_v##v##_t, theirs, np_descr_v##v, ours)
#define DV(v)                                                                                          \
    D(v, type, type); D(v, parentObj, parent); D(v, rank, rank);                                       \
    D(v, proxyOp.pid, proxy_op.pid); D(v, proxyOp.channelId, proxy_op.channel_id);                     \
    D(v, proxyOp.peer, proxy_op.peer); D(v, proxyOp.nSteps, proxy_op.n_steps);                         \
    D(v, proxyOp.chunkSize, proxy_op.chunk_size); D(v, proxyOp.isSend, proxy_op.is_send);              \
    D(v, proxyStep.step, proxy_step.step);                                                             \
    _Static_assert(sizeof(((ncclProfilerEventDescr_v##v##_t *)0)->type) == sizeof(((np_descr_v##v *)0)->type), "type width v" #v)
DV(1);
DV(2);
DV(3);
DV(4);
DV(5);
D(1, coll.name, coll.name); D(1, coll.commHash, coll.comm_hash); D(1, coll.seqNumber, coll.seq);
D(1, coll.func, coll.func); D(1, coll.count, coll.count); D(1, coll.root, coll.root);
D(1, coll.datatype, coll.datatype); D(1, coll.nMaxChannels, coll.n_max_channels); D(1, coll.nWarps, coll.n_warps);
D(1, coll.algo, coll.algo); D(1, coll.proto, coll.proto); D(1, p2p.name, p2p.name); D(1, p2p.commHash, p2p.comm_hash);
D(1, p2p.func, p2p.func); D(1, p2p.count, p2p.count); D(1, p2p.datatype, p2p.datatype); D(1, p2p.peer, p2p.peer);
D(2, coll.name, coll.name); D(2, coll.commHash, coll.comm_hash); D(2, coll.seqNumber, coll.seq);
D(2, coll.func, coll.func); D(2, coll.count, coll.count); D(2, coll.root, coll.root);
D(2, coll.datatype, coll.datatype); D(2, coll.nMaxChannels, coll.n_max_channels); D(2, coll.nWarps, coll.n_warps);
D(2, coll.algo, coll.algo); D(2, coll.proto, coll.proto); D(2, p2p.func, p2p.func); D(2, p2p.count, p2p.count);
D(2, p2p.datatype, p2p.datatype); D(2, p2p.peer, p2p.peer); D(2, p2p.name, p2p.name);
D(3, coll.name, coll.name); D(3, coll.commHash, coll.comm_hash); D(3, coll.seqNumber, coll.seq);
D(3, coll.func, coll.func); D(3, coll.count, coll.count); D(3, coll.root, coll.root);
D(3, coll.datatype, coll.datatype); D(3, coll.nMaxChannels, coll.n_max_channels); D(3, coll.nWarps, coll.n_warps);
D(3, coll.algo, coll.algo); D(3, coll.proto, coll.proto); D(3, p2p.func, p2p.func); D(3, p2p.count, p2p.count);
D(3, p2p.datatype, p2p.datatype); D(3, p2p.peer, p2p.peer); D(3, kernelCh.channelId, kernel_ch.channel_id);
D(4, coll.seqNumber, coll.seq); D(4, coll.func, coll.func); D(4, coll.count, coll.count); D(4, coll.root, coll.root);
D(4, coll.datatype, coll.datatype); D(4, coll.nChannels, coll.n_channels); D(4, coll.nWarps, coll.n_warps);
D(4, coll.algo, coll.algo); D(4, coll.proto, coll.proto); D(4, p2p.func, p2p.func); D(4, p2p.count, p2p.count);
D(4, p2p.datatype, p2p.datatype); D(4, p2p.peer, p2p.peer); D(4, p2p.nChannels, p2p.n_channels);
D(4, kernelCh.channelId, kernel_ch.channel_id); D(4, kernelCh.pTimer, kernel_ch.ptimer);
D(5, groupApi.groupDepth, group_api.group_depth); D(5, collApi.func, coll_api.func);
D(5, collApi.count, coll_api.count); D(5, collApi.datatype, coll_api.datatype); D(5, collApi.root, coll_api.root);
D(5, collApi.stream, coll_api.stream); D(5, p2pApi.func, p2p_api.func); D(5, p2pApi.count, p2p_api.count);
D(5, p2pApi.datatype, p2p_api.datatype); D(5, p2pApi.stream, p2p_api.stream);
D(5, kernelLaunch.stream, kernel_launch.stream); D(5, coll.seqNumber, coll.seq); D(5, coll.func, coll.func);
D(5, coll.count, coll.count); D(5, coll.root, coll.root); D(5, coll.datatype, coll.datatype);
D(5, coll.nChannels, coll.n_channels); D(5, coll.nWarps, coll.n_warps); D(5, coll.algo, coll.algo);
D(5, coll.proto, coll.proto); D(5, coll.parentGroup, coll.parent_group); D(5, p2p.func, p2p.func);
D(5, p2p.count, p2p.count); D(5, p2p.datatype, p2p.datatype); D(5, p2p.peer, p2p.peer);
D(5, p2p.nChannels, p2p.n_channels); D(5, kernelCh.channelId, kernel_ch.channel_id);
D(5, kernelCh.pTimer, kernel_ch.ptimer);
/* v6 reuses v5's parsing: the fields we read sit where v5 has them */
#define D6(f) _Static_assert(offsetof(ncclProfilerEventDescr_v6_t, f) == offsetof(ncclProfilerEventDescr_v5_t, f), "v6 " #f)
D6(type); D6(parentObj); D6(rank); D6(groupApi.groupDepth); D6(collApi.func); D6(collApi.count); D6(collApi.datatype);
D6(collApi.root); D6(collApi.stream); D6(p2pApi.stream); D6(kernelLaunch.stream); D6(coll.seqNumber); D6(coll.func);
D6(coll.count); D6(coll.root); D6(coll.datatype); D6(coll.nChannels); D6(coll.nWarps); D6(coll.algo); D6(coll.proto);
D6(p2p.func); D6(p2p.count); D6(p2p.datatype); D6(p2p.peer); D6(p2p.nChannels); D6(proxyOp.pid); D6(proxyOp.peer);
D6(proxyOp.nSteps); D6(proxyOp.chunkSize); D6(proxyOp.isSend); D6(proxyStep.step); D6(kernelCh.pTimer);
/* state arguments */
AT(ncclProfilerEventStateArgs_v1_t, proxyOp.transSize, np_state_args_v1, proxy_op.trans_size);
AT(ncclProfilerEventStateArgs_v1_t, proxyOp.steps, np_state_args_v1, proxy_op.steps);
AT(ncclProfilerEventStateArgs_v3_t, proxyOp.transSize, np_state_args_v1, proxy_op.trans_size);
AT(ncclProfilerEventStateArgs_v4_t, proxyStep.transSize, np_state_args_v4, proxy_step.trans_size);
AT(ncclProfilerEventStateArgs_v4_t, kernelCh.pTimer, np_state_args_v4, kernel_ch.ptimer);
AT(ncclProfilerEventStateArgs_v5_t, proxyStep.transSize, np_state_args_v4, proxy_step.trans_size);
AT(ncclProfilerEventStateArgs_v6_t, kernelCh.pTimer, np_state_args_v4, kernel_ch.ptimer);
_Static_assert(sizeof(ncclProfilerEventStateArgs_v1_t) == sizeof(np_state_args_v1), "state args v1 size");
_Static_assert(sizeof(ncclProfilerEventStateArgs_v4_t) == sizeof(np_state_args_v4), "state args v4 size");

/* entry-point tables: the real signature calls ours with the same
 * arguments (arity and kinds checked), and the fields sit alike */
#define T(v, theirs, ours) AT(ncclProfiler_v##v##_t, theirs, np_v##v, ours)
#define TV(v) T(v, name, name); T(v, init, init); T(v, startEvent, start_event); T(v, stopEvent, stop_event); \
    T(v, recordEventState, record_event_state); T(v, finalize, finalize)
TV(1);
TV(2);
TV(3);
TV(4);
TV(5);
TV(6);
static ncclResult_t i13(void **c, int *m) { return (ncclResult_t)((np_v1 *)0)->init(c, m); }
static ncclResult_t i4(void **c, int *m, const char *n, uint64_t h, int nn, int nr, int r, ncclDebugLogger_t l)
{
    return (ncclResult_t)((np_v4 *)0)->init(c, m, n, h, nn, nr, r, (np_logger)(void *)l);
}
static ncclResult_t i56(void **c, uint64_t id, int *m, const char *n, int nn, int nr, int r, ncclDebugLogger_t l)
{
    return (ncclResult_t)((np_v5 *)0)->init(c, id, m, n, nn, nr, r, (np_logger)(void *)l);
}
static ncclResult_t r13(void *h, ncclProfilerEventState_v1_t s, ncclProfilerEventStateArgs_v1_t *a)
{
    return (ncclResult_t)((np_v1 *)0)->record_event_state(h, (int)s, (np_state_args_v1 *)(void *)a);
}
static ncclResult_t r46(void *h, ncclProfilerEventState_v4_t s, ncclProfilerEventStateArgs_v4_t *a)
{
    return (ncclResult_t)((np_v4 *)0)->record_event_state(h, (int)s, (np_state_args_v4 *)(void *)a);
}
static ncclResult_t r56(void *h, ncclProfilerEventState_v5_t s, ncclProfilerEventStateArgs_v5_t *a)
{
    return (ncclResult_t)((np_v5 *)0)->record_event_state(h, (int)s, (np_state_args_v4 *)(void *)a);
}
static ncclResult_t s1(void *c, void **h, ncclProfilerEventDescr_v1_t *d)
{
    return (ncclResult_t)((np_v1 *)0)->start_event(c, h, (np_descr_v1 *)(void *)d);
}
static ncclResult_t s5(void *c, void **h, ncclProfilerEventDescr_v6_t *d)
{
    return (ncclResult_t)((np_v6 *)0)->start_event(c, h, (np_descr_v5 *)(void *)d);
}
static ncclResult_t stop(void *h) { return (ncclResult_t)((np_v1 *)0)->stop_event(h); }
static ncclResult_t fin(void *c) { return (ncclResult_t)((np_v1 *)0)->finalize(c); }
static const ncclProfiler_v1_t t1 = { "t", i13, s1, stop, r13, fin };
static const ncclProfiler_v4_t t4 = { "t", i4, NULL, stop, r46, fin };
static const ncclProfiler_v5_t t5 = { "t", i56, NULL, stop, r56, fin };
static const ncclProfiler_v6_t t6 = { "t", i56, s5, stop, r56, fin };
const void *check_collect_tables[] = { &t1, &t4, &t5, &t6 };
#endif
