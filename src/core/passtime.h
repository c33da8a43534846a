/*
 * Opt-in timers of a kernel's passes, for performance work (issue 8): built
 * only with `cmake -DLG_PASS_TIMES=ON` (the macro LG_PASS_TIMES); otherwise
 * LG__PASS_MARK compiles to nothing and the product carries no timer.
 *
 * A kernel calls LG__PASS_MARK(LG__PASS_START) on entry and LG__PASS_MARK(k)
 * at the end of its pass k: the wall time since the previous mark is added
 * to pass k, in a bucket per OpenMP thread count (1, or 2 and more), so that
 * a run that alternates thread counts (bench_models --threads1) compares each
 * pass at 1 and at T threads, side by side in one process. Marks are made
 * from serial code only (between parallel regions); not thread-safe. They
 * count only between lg__pass_times_enable(1) and lg__pass_times_enable(0).
 * lg__pass_times_report writes one JSON line per pass with calls at each
 * bucket, microseconds per call, and the ratio. Instrumented: the GAT layer
 * and the graph-transformer layer (forward and backward).
 */
#ifndef LG_CORE_PASSTIME_H
#define LG_CORE_PASSTIME_H

#include <stdio.h>

enum {
    LG__PASS_START = -1,
    LG__PASS_GAT_FWD_GEMM,    /* the checks, set-up, XP = H W and its epilogue,
                                 the per-node scores and norms (a pass of its
                                 own, gat_fwd_scores, until 2026-11-27)        */
    LG__PASS_GAT_FWD_ROWS,    /* the fused row pass: normaliser, softmax, sum   */
    LG__PASS_GAT_BWD_CHECK,   /* checks and the transposed graph's position map */
    LG__PASS_GAT_BWD_B1,      /* sources: d x_j and the dots (gather)           */
    LG__PASS_GAT_BWD_B2,      /* targets: softmax and normaliser backward        */
    LG__PASS_GAT_BWD_B3,      /* sources: the rest of d x_j, partial sums        */
    LG__PASS_GAT_BWD_TAIL,    /* reductions, d W, d H                           */
    LG__PASS_GT_FWD_GEMM,     /* graph transformer: the checks, Z = H W and its
                                 epilogue (biases, per-node norms)             */
    LG__PASS_GT_FWD_ROWS,     /* the fused row pass: normaliser, scores,
                                 softmax, aggregation, skip, gate              */
    LG__PASS_GT_BWD_CHECK,    /* checks and the transposed graph's position map */
    LG__PASS_GT_BWD_B1,       /* targets: the row pass and its per-edge records */
    LG__PASS_GT_BWD_B2,       /* sources (transposed graph): the gathers of q_i
                                 and dm_i, and the reductions                  */
    LG__PASS_GT_BWD_TAIL,     /* d W, d H                                       */
    LG__PASS_COUNT
};

#ifdef LG_PASS_TIMES
void lg__pass_mark(int pass);
void lg__pass_times_enable(int on);
void lg__pass_times_report(FILE *f);
#define LG__PASS_MARK(k) lg__pass_mark(k)
#else
#define LG__PASS_MARK(k) ((void)0)
#endif

#endif
