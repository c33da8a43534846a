/*
 * The one way lipgnn calls a dense product: lg__gemm_f32 / lg__gemm_f64,
 *     C (M x N, row-major, ldc) = op(A) op(B) + beta C,   alpha = 1,
 * op(A) = A or A^T (M x K), op(B) = B or B^T (K x N).
 *
 * OpenBLAS splits C among its own threads and its edge kernels round
 * differently from its inner ones, so the bits of C depend on OpenBLAS's
 * thread count. lipgnn therefore runs OpenBLAS on ONE thread (lg_threads_set)
 * and spreads fixed panels of C over OpenMP: LG__GEMM_PANEL rows per panel
 * when M is large enough, else LG__GEMM_PANEL columns; one single-threaded
 * gemm per panel. The partition never depends on the thread count, so C has
 * the same bits whatever it is. If a caller lets OpenBLAS run several threads,
 * one gemm call is made instead (threaded by OpenBLAS).
 */
#ifndef LG_CORE_GEMM_H
#define LG_CORE_GEMM_H

#include <cblas.h>

#include "core/internal.h"

#define LG__GEMM_PANEL 128

void lg__gemm_f32(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K, const float *A,
                  lg_idx lda, const float *B, lg_idx ldb, float beta, float *C, lg_idx ldc);
void lg__gemm_f64(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, lg_idx M, lg_idx N, lg_idx K, const double *A,
                  lg_idx lda, const double *B, lg_idx ldb, double beta, double *C, lg_idx ldc);

#endif
