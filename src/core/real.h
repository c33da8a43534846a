/*
 * Scalar-generic kernels. Each kernel is written once, in a `<name>_impl.h`
 * that uses only the names below, and compiled twice: `<name>_f32.c` is
 *
 *     #define LG_REAL_F32
 *     #include "attention/gat_impl.h"
 *
 * and `<name>_f64.c` the same with LG_REAL_F64 (float in production, double
 * for the finite-difference checks). Functions are named LG_FN(lg_gat_forward)
 * which becomes lg_gat_forward_f32 / lg_gat_forward_f64.
 */
#ifndef LG_CORE_REAL_H
#define LG_CORE_REAL_H

#include <cblas.h>
#include <math.h>

#include "core/fexp.h"

#if defined(LG_REAL_F32)
typedef float lg_real;
#define LG_FN(name) name##_f32
#define LG_R(c) ((float)(c))
#define LG_SQRT sqrtf
#define LG_EXP expf
#define LG_EXP_NONPOS lg__expf_nonpos /* exp(w) for w <= 0: inline, no call (core/fexp.h) */
#define LG_LOG logf
#define LG_FABS fabsf
#define LG_GEMM cblas_sgemm
#define LG_GEMV cblas_sgemv
#define LG_AXPY cblas_saxpy
#define LG_DOT cblas_sdot
#define LG_REAL_MAX 3.402823466e+38F
#elif defined(LG_REAL_F64)
typedef double lg_real;
#define LG_FN(name) name##_f64
#define LG_R(c) ((double)(c))
#define LG_SQRT sqrt
#define LG_EXP exp
#define LG_EXP_NONPOS exp
#define LG_LOG log
#define LG_FABS fabs
#define LG_GEMM cblas_dgemm
#define LG_GEMV cblas_dgemv
#define LG_AXPY cblas_daxpy
#define LG_DOT cblas_ddot
#define LG_REAL_MAX 1.7976931348623157e+308
#else
#error "define LG_REAL_F32 or LG_REAL_F64 before including core/real.h"
#endif

#endif /* LG_CORE_REAL_H */
