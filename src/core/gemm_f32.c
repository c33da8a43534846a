/* lg__gemm in float, the benchmark trace hook and the K-split's workspace
 * (core/gemm.h). */
#define LG_REAL_F32
#include "core/gemm_impl.h"

lg__gemm_log *lg__gemm_trace = NULL;

lg_idx lg__gemm_ksplit_len(lg_idx M, lg_idx N, lg_idx K) {
    if (M <= 0 || N <= 0 || M >= 2 * LG__GEMM_PANEL || N >= 2 * LG__GEMM_PANEL) return 0;
    if (2.0 * (double)M * (double)N * (double)K < LG__GEMM_MIN_FLOPS) return 0;
    const lg_idx S = LG_MIN((lg_idx)LG__GEMM_KSPLIT_MAX, K / LG__GEMM_KSPLIT_ROWS);
    return S >= 2 ? (S - 1) * M * N : 0;
}
