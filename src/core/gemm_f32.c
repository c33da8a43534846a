/* lg__gemm in float, the benchmark trace hook and the K-split's workspace
 * (core/gemm.h). */
#define LG_REAL_F32
#include "core/gemm_impl.h"

lg__gemm_log *lg__gemm_trace = NULL;

lg_idx lg__gemm_ksplit_len(lg_idx M, lg_idx N, lg_idx K) {
    if (M <= 0 || N <= 0 || M > LG__GEMM_KSPLIT_WS / N) return 0; /* (no overflow: M N <= the cap) */
    if (2.0 * (double)M * (double)N * (double)K < LG__GEMM_MIN_FLOPS) return 0;
    const lg_idx s = LG_MIN(LG_MIN((lg_idx)LG__GEMM_KSPLIT_MAX, K / LG__GEMM_KSPLIT_ROWS),
                            1 + (lg_idx)LG__GEMM_KSPLIT_WS / (M * N));
    lg_idx S = 1;
    while (2 * S <= s) S *= 2; /* a power of two */
    return S >= 2 ? (S - 1) * M * N : 0;
}
