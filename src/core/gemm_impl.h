/* lg__gemm, generic over the scalar (see core/gemm.h); compiled by gemm_f32.c
 * and gemm_f64.c. */
#include "core/gemm.h"
#include "core/real.h"

/* ep over rows [0, M) in ranges of LG__GEMM_PANEL rows, in parallel (nothing when ep is NULL) */
#define LG__GEMM_EP_ALL(ep, ctx, M)                                                                               \
    do {                                                                                                         \
        if (ep) {                                                                                                \
            const lg_idx np_ = ((M) + LG__GEMM_PANEL - 1) / LG__GEMM_PANEL;                                      \
            _Pragma("omp parallel for schedule(static) if (np_ > 1)") for (lg_idx q_ = 0; q_ < np_; q_++)       \
                (ep)((ctx), q_ * LG__GEMM_PANEL, LG_MIN((M), (q_ + 1) * LG__GEMM_PANEL));                        \
        }                                                                                                        \
    } while (0)

/* C = op(A) op(B) + beta C split along K into S chunks (core/gemm.h): chunk s
 * covers rows [s h, min(K, (s + 1) h)) of op(B), h = ceil(K / S); chunk 0 into
 * C, chunk s > 0 into ws + (s - 1) M N; then C += the chunks in order. */
static void LG_FN(lg__gemm_ksplit)(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K,
                                   lg_idx S, const lg_real *A, lg_idx lda, const lg_real *B, lg_idx ldb, lg_real beta,
                                   lg_real *C, lg_idx ldc, lg_real *ws) {
    const lg_idx h = (K + S - 1) / S;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (lg_idx s = 0; s < S; s++) {
            const lg_idx k0 = s * h, k = LG_MIN(K - k0, h);
            const lg_real *As = ta == CblasNoTrans ? A + k0 : A + k0 * lda;
            const lg_real *Bs = tb == CblasNoTrans ? B + k0 * ldb : B + k0;
            lg_real *Cs = s == 0 ? C : ws + (s - 1) * M * N;
            LG_GEMM(CblasRowMajor, ta, tb, (int)M, (int)N, (int)k, LG_R(1), As, (int)lda, Bs, (int)ldb,
                    s == 0 ? beta : LG_R(0), Cs, s == 0 ? (int)ldc : (int)N);
        }
#pragma omp for schedule(static)
        for (lg_idx r = 0; r < M; r++)
            for (lg_idx s = 1; s < S; s++) {
                const lg_real *p = ws + (s - 1) * M * N + r * N;
                lg_real *c = C + r * ldc;
                for (lg_idx q = 0; q < N; q++) c[q] += p[q];
            }
    }
}

static void LG_FN(lg__gemm_run)(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K,
                                const lg_real *A, lg_idx lda, const lg_real *B, lg_idx ldb, lg_real beta, lg_real *C,
                                lg_idx ldc, lg__gemm_rows_fn ep, void *ctx, lg_real *ws, lg_idx wsn) {
    if (M <= 0) return;
    if (N <= 0) { /* no product; the epilogue still runs */
        LG__GEMM_EP_ALL(ep, ctx, M);
        return;
    }
#ifdef LG_REAL_F32
    if (lg__gemm_trace) {
        lg__gemm_log *t = lg__gemm_trace;
        if (t->count < t->cap) t->calls[t->count] = (lg__gemm_call){ta, tb, M, N, K, lda, ldb, ldc, beta, wsn};
        t->count++;
    }
#endif
    const double flops = 2.0 * (double)M * (double)N * (double)K;
    const lg_idx P = LG__GEMM_PANEL;
    const lg__gemm_rows rows = lg__gemm_row_panels(M, N, K); /* np 0: panels of columns (core/gemm.h) */
    const lg_idx nks = lg__gemm_ksplit_len(M, N, K);
    if (openblas_get_num_threads() == 1 && !ep && nks > 0 && wsn >= nks) {
        LG_FN(lg__gemm_ksplit)(ta, tb, M, N, K, nks / (M * N) + 1, A, lda, B, ldb, beta, C, ldc, ws);
        return;
    }
    if (openblas_get_num_threads() != 1 || flops < LG__GEMM_MIN_FLOPS || (rows.step > 0 && M < 2 * rows.step)) {
        LG_GEMM(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, LG_R(1), A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
        LG__GEMM_EP_ALL(ep, ctx, M);
        return;
    }
    if (rows.np > 0) { /* panels of rows of C: rows of op(A) */
#pragma omp parallel for schedule(static)
        for (lg_idx q = 0; q < rows.np; q++) {
            lg_idx r0, r1;
            lg__gemm_row_range(&rows, M, q, &r0, &r1);
            const lg_idx m = r1 - r0;
            const lg_real *Aq = ta == CblasNoTrans ? A + r0 * lda : A + r0;
            LG_GEMM(CblasRowMajor, ta, tb, (int)m, (int)N, (int)K, LG_R(1), Aq, (int)lda, B, (int)ldb, beta,
                    C + r0 * ldc, (int)ldc);
            if (ep)
                for (lg_idx e = r0; e < r0 + m; e += P) ep(ctx, e, LG_MIN(r0 + m, e + P));
        }
    } else { /* panels of columns of C: columns of op(B) */
        const lg_idx np = (N + P - 1) / P;
#pragma omp parallel for schedule(static)
        for (lg_idx q = 0; q < np; q++) {
            lg_idx c0 = q * P, w = LG_MIN(N - c0, P);
            const lg_real *Bq = tb == CblasNoTrans ? B + c0 : B + c0 * ldb;
            LG_GEMM(CblasRowMajor, ta, tb, (int)M, (int)w, (int)K, LG_R(1), A, (int)lda, Bq, (int)ldb, beta, C + c0,
                    (int)ldc);
        }
        LG__GEMM_EP_ALL(ep, ctx, M);
    }
}

void LG_FN(lg__gemm_ep)(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K,
                        const lg_real *A, lg_idx lda, const lg_real *B, lg_idx ldb, lg_real beta, lg_real *C, lg_idx ldc,
                        lg__gemm_rows_fn ep, void *ctx) {
    LG_FN(lg__gemm_run)(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, ep, ctx, NULL, 0);
}

void LG_FN(lg__gemm)(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K, const lg_real *A,
                     lg_idx lda, const lg_real *B, lg_idx ldb, lg_real beta, lg_real *C, lg_idx ldc) {
    if (N > 0) LG_FN(lg__gemm_run)(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, NULL, NULL, NULL, 0);
}

void LG_FN(lg__gemm_ws)(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K,
                        const lg_real *A, lg_idx lda, const lg_real *B, lg_idx ldb, lg_real beta, lg_real *C, lg_idx ldc,
                        lg_real *ws, lg_idx wsn) {
    if (N > 0) LG_FN(lg__gemm_run)(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc, NULL, NULL, ws, wsn);
}
