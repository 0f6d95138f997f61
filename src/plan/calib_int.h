/* calib_int.h - internal to the calibration (calib.c reads files, fits and
 * reports; calib_row.c turns one CSV row into model inputs). Not an API. */
#ifndef CP_PLAN_CALIB_INT_H
#define CP_PLAN_CALIB_INT_H

#include "plan/calib.h"
#include "plan/planner.h"

#define CALIB_MAXCOLS 64

enum {
    C_SOURCE, C_MODEL, C_LAYERS, C_HIDDEN, C_HEADS, C_SEQ, C_VOCAB, C_GPU, C_NGPU, C_TP, C_PP, C_DP,
    C_CPSP, C_EP, C_MB, C_GB, C_RC, C_PREC, C_TFLOPS, C_TPS, C_TPSG, C_MFU, C_STEP, C_CONV, C_NOTES,
    C_MEM, C_CP, C_KV, C_FFN, C_EXPERTS, C_EXPERTS2, C_TOPK, C_TOPK2, C_MOE_FFN, C_SWIGLU, C_ETP, C_VP, C_NCOLS
};
extern const char *const calib_cols[C_NCOLS];

enum { M_STEP, M_TPSG, M_TPS, M_TFLOPS, M_MFU };

/* One modelled row: what it states, how its layout was resolved and what
 * is compared. */
typedef struct calib_case {
    plan_inputs base;   /* stated and implied inputs, before the search */
    plan_space sp;      /* what the search may still choose */
    int half;           /* torchtitan selective AC: half the stage's layers recomputed */
    bool searched;      /* the planner chose something (re-resolve per constant set) */
    plan_inputs in;     /* the resolved inputs */
    int metric;         /* M_* */
    double measured;
    double conv_flops;  /* FLOPs per step in the row's convention; 0 = the model's hardware FLOPs */
    int src;            /* index of its source */
    int row;            /* index of its plan_calib_row */
} calib_case;

/* Split one CSV record in place (RFC 4180 quotes); returns the field count. */
int calib_split_csv(char *line, char **f, int max);
/* Next line of [*p, end) as a malloc'd string without its ending; NULL at the end. */
char *calib_next_line(const char **p, const char *end);
int calib_icontains(const char *hay, const char *needle);
/* A cell as a number; NaN when empty or not a number. */
double calib_num(const char *s);
/* Median of v[0..n) (sorts v); NaN for n <= 0. */
double calib_median(double *v, int n);

/* Interpret one row into cs (and the row's model/source/metric/notes).
 * Returns 0, or -1 with r->why. */
int calib_interpret(char **f, int nf, const int *col, plan_calib_row *r, calib_case *cs);
/* Resolve cs->in from cs->base and cs->sp with constants k (the planner
 * fills what the row left free). r (may be NULL) gets the layout text and
 * fit notes. Returns 0 or -1 with r->why. */
int calib_resolve(calib_case *cs, const plan_defaults *k, plan_calib_row *r);
/* Predict cs with constants k on its resolved inputs: returns the
 * step-time error (NaN when the model refuses) and the predicted figure in
 * *fig; *res gets the model's result when not NULL. */
double calib_predict(const calib_case *cs, const plan_defaults *k, double *fig, plan_result *res);

#endif
