/* model_int.h - what the three parts of the step model share (internal to
 * src/plan: model.c computes, model_comm.c communicates, model_mem.c
 * counts memory). Not an API: plan_model() in model.h is. */
#ifndef CP_PLAN_MODEL_INT_H
#define CP_PLAN_MODEL_INT_H

#include "model/collmodel.h"
#include "plan/model.h"

/* Shape in doubles, resolved once. */
typedef struct dims {
    double h, a, kv, d, f, fe, s, V, E, k, sh, g; /* g = matrices per MLP */
    double attn_p, mlp_p, exp_p;                 /* params: attention, dense MLP, one expert */
    int L, Ld, Lm;                               /* layers, dense, MoE */
} dims;

void plan_dims(const plan_shape *m, dims *x);

typedef struct ctx {
    const plan_inputs *in;
    const plan_defaults *k;
    dims x;
    double peak, peak_gemm, eff, hbm_bw; /* FLOP/s, GEMM efficiency, bytes/s */
    double attn_rate;                    /* fused attention forward FLOP/s */
    double nvl_bw, nic_bw_gpu;           /* bytes/s per direction, line rate */
    int domain;                          /* GPUs per NVLink domain */
    int gpn;                             /* GPUs per host */
    int etp;                             /* expert tensor parallel degree */
    int arch;                            /* COLLM_ARCH_* */
    double pcie_bw;                      /* host link bytes/s per direction */
} ctx;

/* One pass (forward) of one layer for one micro-batch: compute and the
 * communication the layer itself issues. */
typedef struct pass_t {
    double comp, gemm, tp, cp, ep;
} pass_t;

/* What the step-level accounting needs to know about the slowest stage. */
typedef struct stage {
    int Ls, rl, nmb;           /* layers per stage, of them recomputed, micro-batches */
    double st_comp;            /* compute of one micro-batch on the stage */
    double mb_fwd, mb_bwd;     /* forward / backward of one micro-batch on the stage */
    double stage_dense;        /* non-expert parameters of the stage's layers */
    double P_dense, P_exp;     /* parameters per GPU: non-expert (incl. embeddings), expert */
    double dp_dense, dp_exp;   /* sharding degrees: DP*CP, and expert DP */
} stage;

/* The topology a group of n ranks sees when consecutive members are
 * `stride` ranks apart and every GPU of the job runs such a group at the
 * same time (so a domain's NICs are shared by its members). */
void plan_group_topo(const ctx *c, int n, int stride, collm_topo *t);
/* Seconds for one collective of `bytes` (nccl-tests size) on that group,
 * with the training-fabric factor applied to network-bound time. */
double plan_group_coll_s(const ctx *c, coll_op op, double bytes, int n, int stride);

/* Per-layer communication of one forward pass (TP, CP, EP) into o. */
void plan_layer_comm(const ctx *c, int moe, double T, double attn_s, pass_t *o);
/* Exposed data-parallel / ZeRO traffic per step. */
double plan_dp_traffic(const ctx *c, const stage *st);
/* Exposed pipeline send/recv per step. */
double plan_pp_p2p(const ctx *c, const stage *st, double T);

/* Per-GPU memory of the stage that holds the most. */
void plan_fill_memory(const ctx *c, const stage *st, double P_opt, double T, plan_memory *mem);

#endif
