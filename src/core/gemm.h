/*
 * The one way lipgnn calls a dense product: lg__gemm_f32 / lg__gemm_f64,
 *     C (M x N, row-major, ldc) = op(A) op(B) + beta C,   alpha = 1,
 * op(A) = A or A^T (M x K), op(B) = B or B^T (K x N).
 *
 * OpenBLAS splits C among its own threads and its edge kernels round
 * differently from its inner ones, so the bits of C depend on OpenBLAS's
 * thread count. lipgnn therefore runs OpenBLAS on ONE thread (lg_threads_set)
 * and spreads fixed panels of C over OpenMP: panels of rows when M is large
 * enough (lg__gemm_row_panels), else LG__GEMM_PANEL columns when N is, else a few
 * panels of rows (LG__GEMM_SMALL_PANELS), or, lent a workspace, chunks of K
 * (LG__GEMM_KSPLIT_ROWS); one single-threaded gemm per panel or chunk. The
 * partition never depends on the thread count, so C has the same bits
 * whatever it is. If a caller lets OpenBLAS run several threads,
 * one gemm call is made instead (threaded by OpenBLAS).
 */
#ifndef LG_CORE_GEMM_H
#define LG_CORE_GEMM_H

#include <cblas.h>

#include "core/internal.h"
#include "core/steal.h"

#define LG__GEMM_PANEL 128
/* Each panel's OpenBLAS call packs the whole of op(B) (N x K) again, so that
 * where op(B) is wide the packing of 128-row panels costs a good part of the
 * product: with op(B) of at least LG__GEMM_WIDE_NK values, C is cut into a
 * power of two of panels of at most LG__GEMM_WIDE_ROWS rows instead. On the
 * Intel Xeon VM (bench/README.md, stop 50), one thread: 2708 x 512 x 512
 * 12.3 -> 10.7 ms, 2708 x 256 x 64 890 -> 774 µs in panels of 677 rows; at
 * N K = 64 x 64 the 128-row panels were the faster (162 against 205 µs). */
#define LG__GEMM_WIDE_NK 16384
#define LG__GEMM_WIDE_ROWS 1024
/* C with fewer than 2 LG__GEMM_PANEL rows and columns (and enough work): at most
 * LG__GEMM_SMALL_PANELS panels of rows, each at least LG__GEMM_MIN_ROWS rows, so
 * that a small weight gradient lent no workspace (a linear layer's, 64 x 64,
 * inner dimension n) uses 2 threads; the attention layers' are split along n
 * (below). */
#define LG__GEMM_SMALL_PANELS 4
#define LG__GEMM_MIN_ROWS 32
/* Products of fewer flops are one call, not split. */
#define LG__GEMM_MIN_FLOPS 4e6
/* A weight gradient, X^T dY (C at most 1024 x 1024, the inner dimension the
 * graph's nodes), is, where the caller lends a workspace (lg__gemm_ws), split
 * along K instead: S chunks of K, S the largest power of two not above
 * min(LG__GEMM_KSPLIT_MAX, K / LG__GEMM_KSPLIT_ROWS, 1 + LG__GEMM_KSPLIT_WS /
 * (M N)) (S >= 2; S from the shape alone, never from the thread count), one
 * single-threaded gemm per chunk, chunk 0 into C (with beta), the others into
 * the workspace, then added to C in chunk order. Each thread then reads only
 * its share of the rows of X and dY, which are the rows the same thread wrote
 * in the passes before (the attention layers' static schedules over nodes: a
 * power of two of chunks splits where they split for 2, 4, ... threads), where
 * panels of C would each read
 * every row: TREES' 32 x 32 weight gradient over 511 000 rows 14.5 -> 7.7 ms
 * at 2 threads; on Cora, where the rows stay in the caches, 12% off DeepGAT
 * 30's epoch when the two vCPUs are far apart (bench/README.md, stop 33). The
 * same bits whatever the thread count; other bits than the product made whole. */
#define LG__GEMM_KSPLIT_ROWS 1024
#define LG__GEMM_KSPLIT_MAX 16
#define LG__GEMM_KSPLIT_WS (1 << 20) /* reals of workspace at most */

/* Benchmark hook (bench/bench_models.c): while lg__gemm_trace points to a log,
 * every lg__gemm_f32 call appends its arguments (not its data) to it, so that
 * the same products at the same shapes can be replayed and timed alone (a
 * model's floor). NULL (the default) in the product. Single-threaded set-up
 * only: the log is not locked. Calls past cap are counted, not stored. */
typedef struct lg__gemm_call {
    enum CBLAS_TRANSPOSE ta, tb; /* op(A), op(B)                               */
    lg_idx M, N, K;              /* C is M x N, the inner dimension K            */
    lg_idx lda, ldb, ldc;        /* leading dimensions                           */
    float beta;                  /* 0 or 1                                       */
    lg_idx wsn;                  /* workspace lent (lg__gemm_ws), in reals       */
} lg__gemm_call;

typedef struct lg__gemm_log {
    lg__gemm_call *calls; /* cap entries                                      */
    int cap;              /* capacity                                         */
    int count;            /* calls seen (may exceed cap: then the log is short) */
} lg__gemm_log;

extern lg__gemm_log *lg__gemm_trace;

/* A partition of C's rows into panels: np panels of step rows (the last the
 * rest), or, step 0, np even splits as schedule(static) deals rows to np
 * threads (lg__steal_range). */
typedef struct lg__gemm_rows {
    lg_idx np;   /* panels                                   */
    lg_idx step; /* rows a panel, or 0: np even splits        */
} lg__gemm_rows;

/* How lg__gemm cuts C (M x N, inner dimension K) into panels of rows, from
 * the shape alone, never the thread count. Tall C (M >= 2 LG__GEMM_PANEL):
 * where N K < LG__GEMM_WIDE_NK, panels of LG__GEMM_PANEL rows; else S even
 * splits (of at least LG__GEMM_PANEL rows), S the smallest power of two >= 2
 * with M <= S LG__GEMM_WIDE_ROWS, so that 2, 4, ... threads each take a
 * contiguous run of panels, within a few rows of the rows the node passes'
 * static schedules give them. Short C: none (np 0: panels of columns) where
 * N >= 2 LG__GEMM_PANEL; else at most LG__GEMM_SMALL_PANELS panels of at
 * least LG__GEMM_MIN_ROWS rows (fewer than two of them: one call). O(log M). */
static inline lg__gemm_rows lg__gemm_row_panels(lg_idx M, lg_idx N, lg_idx K) {
    if (M < 2 * LG__GEMM_PANEL) {
        if (N >= 2 * LG__GEMM_PANEL) return (lg__gemm_rows){0, 0};
        const lg_idx step = LG_MAX((lg_idx)LG__GEMM_MIN_ROWS, (M + LG__GEMM_SMALL_PANELS - 1) / LG__GEMM_SMALL_PANELS);
        return (lg__gemm_rows){(M + step - 1) / step, step};
    }
    if ((double)N * (double)K < LG__GEMM_WIDE_NK)
        return (lg__gemm_rows){(M + LG__GEMM_PANEL - 1) / LG__GEMM_PANEL, LG__GEMM_PANEL};
    lg_idx S = 2;
    while (S * (lg_idx)LG__GEMM_WIDE_ROWS < M) S *= 2;
    return (lg__gemm_rows){S, 0};
}

/* Rows [*r0, *r1) of panel q < p->np of a partition of M rows. O(1). */
static inline void lg__gemm_row_range(const lg__gemm_rows *p, lg_idx M, lg_idx q, lg_idx *r0, lg_idx *r1) {
    if (p->step == 0) {
        lg__steal_range(M, (int)p->np, (int)q, r0, r1);
        return;
    }
    *r0 = q * p->step;
    *r1 = LG_MIN(M, *r0 + p->step);
}

/* A row epilogue: a pass over rows [r0, r1) of C that reads only those rows
 * of C (and other data) and writes only what belongs to those rows. */
typedef void (*lg__gemm_rows_fn)(void *ctx, lg_idx r0, lg_idx r1);

void lg__gemm_f32(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K, const float *A,
                  lg_idx lda, const float *B, lg_idx ldb, float beta, float *C, lg_idx ldc);
void lg__gemm_f64(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K, const double *A,
                  lg_idx lda, const double *B, lg_idx ldb, double beta, double *C, lg_idx ldc);
/* The workspace, in reals, that lg__gemm_ws needs to split this product along
 * K (LG__GEMM_KSPLIT_ROWS above): (S - 1) M N, or 0 when it would not split it.
 * O(1). */
lg_idx lg__gemm_ksplit_len(lg_idx M, lg_idx N, lg_idx K);
/* lg__gemm with a workspace ws of wsn reals (ws may be NULL when wsn is 0),
 * used, and overwritten, when wsn >= lg__gemm_ksplit_len(M, N, K) > 0. */
void lg__gemm_ws_f32(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K, const float *A,
                     lg_idx lda, const float *B, lg_idx ldb, float beta, float *C, lg_idx ldc, float *ws, lg_idx wsn);
void lg__gemm_ws_f64(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K, const double *A,
                     lg_idx lda, const double *B, lg_idx ldb, double beta, double *C, lg_idx ldc, double *ws,
                     lg_idx wsn);
/* lg__gemm, then ep(ctx, r0, r1) over a partition of C's rows [0, M) into
 * ranges of at most LG__GEMM_PANEL rows, in parallel; where C is split into
 * panels of rows, each range right after its panel, by the thread that made it
 * (while the panel is in its cache), which spares a pass and a parallel region.
 * ep must give the same result whatever the ranges (the kernels' per-node
 * passes: each row on its own). Traced and replayed as the product alone. */
void lg__gemm_ep_f32(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K, const float *A,
                     lg_idx lda, const float *B, lg_idx ldb, float beta, float *C, lg_idx ldc, lg__gemm_rows_fn ep,
                     void *ctx);
void lg__gemm_ep_f64(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K, const double *A,
                     lg_idx lda, const double *B, lg_idx ldb, double beta, double *C, lg_idx ldc, lg__gemm_rows_fn ep,
                     void *ctx);

#endif
