/*
 * Linear layers, dense and sparse input, generic over the scalar (see
 * core/real.h); compiled by nn_f32.c and nn_f64.c. Contracts: lipgnn/nn.h.
 */
#include <omp.h>

#include "core/gemm.h"
#include "core/isa.h"
#include "core/real.h"
#include "nn/nn_common.h"

/* db (out) += column sums of dy's rows (n of them; dy has out columns): of
 * rows 0..n-1, or with rows (not NULL) of rows[0..n-1]. One task per block of
 * LG__NN_CB columns, each summing its columns over those rows in order from
 * 0 (the listed rows of a dy whose other rows are zero, listed in increasing
 * order: the bits of the sum over every row). O(n out). */
void LG_FN(lg__colsum_add)(lg_real *db, const lg_real *dy, lg_idx n, lg_idx out, const lg_idx *rows) {
    lg_idx nb = (out + LG__NN_CB - 1) / LG__NN_CB;
#pragma omp parallel for schedule(static) if (n * out >= LG__NN_PAR_MIN)
    for (lg_idx b = 0; b < nb; b++) {
        lg_idx c0 = b * LG__NN_CB, w = LG_MIN(out - c0, (lg_idx)LG__NN_CB);
        lg_real acc[LG__NN_CB] = {0};
        for (lg_idx i = 0; i < n; i++) {
            const lg_real *r = dy + (rows ? rows[i] : i) * out + c0;
            for (lg_idx c = 0; c < w; c++) acc[c] += r[c];
        }
        for (lg_idx c = 0; c < w; c++) db[c0 + c] += acc[c];
    }
}

/* the bias added to rows [i0, i1) of y: lg_linear_forward's product epilogue */
typedef struct {
    lg_real *y;
    const lg_real *b;
    lg_idx out;
} LG_FN(lg__bias_ctx);

static void LG_FN(lg__bias_rows)(void *v, lg_idx i0, lg_idx i1) {
    const LG_FN(lg__bias_ctx) *x = v;
    for (lg_idx i = i0; i < i1; i++) {
        lg_real *yi = x->y + i * x->out;
        for (lg_idx c = 0; c < x->out; c++) yi[c] += x->b[c];
    }
}

/* y (n x out): every row = b, or 0 if b is NULL. */
static void LG_FN(lg__rows_set)(lg_real *y, const lg_real *b, lg_idx n, lg_idx out) {
#pragma omp parallel for schedule(static) if (n * out >= LG__NN_PAR_MIN)
    for (lg_idx i = 0; i < n; i++) {
        lg_real *yi = y + i * out;
        for (lg_idx c = 0; c < out; c++) yi[c] = b ? b[c] : LG_R(0);
    }
}

/* y (n x out) = x (n x in) w (in x out) + b (out) */
lg_status LG_FN(lg_linear_forward)(lg_real *y, const lg_real *x, const lg_real *w, const lg_real *b,
                                   lg_idx n, lg_idx in, lg_idx out) {
    LG_CHECK(lg__blas_usable(__func__));
    LG_CHECK(lg__nn_shape(__func__, n, in));
    LG_CHECK(lg__nn_shape(__func__, n, out));
    LG_CHECK(lg__nn_shape(__func__, in, out));
    LG_CHECK(lg__nn_blas_dim(__func__, n));
    LG_CHECK(lg__nn_blas_dim(__func__, in));
    LG_CHECK(lg__nn_blas_dim(__func__, out));
    LG__NN_NEED(y, n > 0 && out > 0, "y");
    LG__NN_NEED(x, n > 0 && in > 0, "x");
    LG__NN_NEED(w, in > 0 && out > 0, "w");
    if (n == 0 || out == 0) return LG_OK;
    const size_t ys = (size_t)(n * out) * sizeof(lg_real); /* sizes checked by lg__nn_shape */
    LG_CHECK(lg__apart(__func__, y, "y", ys, x, "x", (size_t)(n * in) * sizeof(lg_real)));
    LG_CHECK(lg__apart(__func__, y, "y", ys, w, "w", (size_t)(in * out) * sizeof(lg_real)));
    LG_FN(lg__bias_ctx) bc = {y, b, out};
    if (in == 0) { /* 0, then + b */
        LG_FN(lg__rows_set)(y, NULL, n, out);
        if (b) LG_FN(lg__bias_rows)(&bc, 0, n);
        return LG_OK;
    }
    /* the bias added to each panel of rows as it is made (the same bits as a pass after) */
    LG_FN(lg__gemm_ep)(CblasNoTrans, CblasNoTrans, n, out, in, x, in, w, out, LG_R(0), y, out,
                       b ? LG_FN(lg__bias_rows) : NULL, &bc);
    return LG_OK;
}

/* dx (n x in) += dy w^T; dw (in x out) += x^T dy; db (out) += colsum(dy) */
lg_status LG_FN(lg_linear_backward)(lg_real *dx, lg_real *dw, lg_real *db, const lg_real *dy,
                                    const lg_real *x, const lg_real *w, lg_idx n, lg_idx in, lg_idx out) {
    LG_CHECK(lg__blas_usable(__func__));
    LG_CHECK(lg__nn_shape(__func__, n, in));
    LG_CHECK(lg__nn_shape(__func__, n, out));
    LG_CHECK(lg__nn_shape(__func__, in, out));
    LG_CHECK(lg__nn_blas_dim(__func__, n));
    LG_CHECK(lg__nn_blas_dim(__func__, in));
    LG_CHECK(lg__nn_blas_dim(__func__, out));
    LG__NN_NEED(dy, n > 0 && out > 0 && (dx || dw || db), "dy");
    LG__NN_NEED(w, dx && n > 0 && in > 0 && out > 0, "w");
    LG__NN_NEED(x, dw && n > 0 && in > 0 && out > 0, "x");
    if (n == 0 || out == 0) return LG_OK;
    if (dx && in > 0)
        LG_FN(lg__gemm)(CblasNoTrans, CblasTrans, n, in, out, dy, out, w, out, LG_R(1), dx, in);
    if (dw && in > 0)
        LG_FN(lg__gemm)(CblasTrans, CblasNoTrans, in, out, n, x, in, dy, out, LG_R(1), dw, out);
    if (db) LG_FN(lg__colsum_add)(db, dy, n, out, NULL);
    return LG_OK;
}

/* Rows [i0, i1) of the sparse forward below, each from its non-zeros in
 * storage order; compiled for each instruction set (core/isa.h). */
LG__ALWAYS_INLINE void LG__CAT(LG_FN(lg__spfwd), _body)(lg_real *restrict y, const lg_idx *restrict xp,
                                                     const lg_idx *restrict xj, const float *restrict xv,
                                                     const lg_real *restrict w, const lg_real *restrict b,
                                                     lg_idx out, lg_idx i0, lg_idx i1) {
    for (lg_idx i = i0; i < i1; i++) {
        lg_real *restrict yi = y + i * out;
#pragma omp simd
        for (lg_idx c = 0; c < out; c++) yi[c] = b ? b[c] : LG_R(0);
        for (lg_idx e = xp[i]; e < xp[i + 1]; e++) {
            const lg_real v = (lg_real)xv[e];
            const lg_real *restrict wr = w + xj[e] * out;
#pragma omp simd
            for (lg_idx c = 0; c < out; c++) yi[c] += v * wr[c];
        }
    }
}
LG__ISA_VARIANTS(LG_FN(lg__spfwd),
                 (lg_real *restrict y, const lg_idx *restrict xp, const lg_idx *restrict xj, const float *restrict xv,
                  const lg_real *restrict w, const lg_real *restrict b, lg_idx out, lg_idx i0, lg_idx i1),
                 (y, xp, xj, xv, w, b, out, i0, i1))

/* y (n x out) = x (n x in, sparse) w (in x out) + b (out), in blocks of
 * LG__NN_SPROWS rows spread over the threads */
lg_status LG_FN(lg_linear_sparse_forward)(lg_real *y, const lg_features *x, const lg_real *w,
                                          const lg_real *b, lg_idx out) {
    LG_CHECK(lg__nn_csr_check(__func__, x));
    LG_CHECK(lg__nn_shape(__func__, x->n, out));
    LG_CHECK(lg__nn_shape(__func__, x->d, out));
    const lg_idx n = x->n;
    LG__NN_NEED(y, n > 0 && out > 0, "y");
    LG__NN_NEED(w, x->nnz > 0 && out > 0, "w");
    if (n == 0 || out == 0) return LG_OK;
    void (*f)(lg_real *restrict, const lg_idx *restrict, const lg_idx *restrict, const float *restrict,
              const lg_real *restrict, const lg_real *restrict, lg_idx, lg_idx, lg_idx) = LG__ISA_PICK(LG_FN(lg__spfwd));
    const lg_idx nb = (n + LG__NN_SPROWS - 1) / LG__NN_SPROWS;
#pragma omp parallel for schedule(static) if ((x->nnz + n) * out >= LG__NN_PAR_MIN)
    for (lg_idx k = 0; k < nb; k++)
        f(y, x->p, x->j, x->x, w, b, out, k * LG__NN_SPROWS, LG_MIN(n, (k + 1) * LG__NN_SPROWS));
    return LG_OK;
}

/* One thread's share of the sparse backward below: dw's rows [f0, f1), from
 * the non-zeros of x (CSR p, j, v; n rows) in those columns, in node order;
 * compiled for each instruction set (core/isa.h; element-wise: the same bits). */
LG__ALWAYS_INLINE void LG__CAT(LG_FN(lg__spbwd), _body)(lg_real *restrict dw, const lg_real *restrict dy,
                                                     const lg_idx *restrict xp, const lg_idx *restrict xj,
                                                     const float *restrict xv, lg_idx n, lg_idx out, lg_idx f0,
                                                     lg_idx f1) {
    if (f0 >= f1) return;
    for (lg_idx i = 0; i < n; i++) {
        const lg_idx e1 = xp[i + 1];
        lg_idx e = xp[i];
        if (f0 > 0) { /* the first non-zero of the row at column f0 or beyond */
            lg_idx hi = e1;
            while (e < hi) {
                const lg_idx mid = e + (hi - e) / 2;
                if (xj[mid] < f0) e = mid + 1;
                else hi = mid;
            }
        }
        const lg_real *restrict g = dy + i * out;
        for (; e < e1 && xj[e] < f1; e++) {
            const lg_real v = (lg_real)xv[e];
            lg_real *restrict dwr = dw + xj[e] * out;
#pragma omp simd
            for (lg_idx c = 0; c < out; c++) dwr[c] += v * g[c];
        }
    }
}
LG__ISA_VARIANTS(LG_FN(lg__spbwd),
                 (lg_real *restrict dw, const lg_real *restrict dy, const lg_idx *restrict xp,
                  const lg_idx *restrict xj, const float *restrict xv, lg_idx n, lg_idx out, lg_idx f0, lg_idx f1),
                 (dw, dy, xp, xj, xv, n, out, f0, f1))

/* dw (in x out) += x^T dy; db (out) += colsum(dy). Each thread owns a range
 * of rows of dw (features [f0, f1)): it streams x's rows and dy's rows in
 * order and, in each row of x, the non-zeros of its range (a contiguous run:
 * column ids ascend) add their share to its rows of dw; so every element of
 * dw is summed over the nodes in ascending order whatever the thread count,
 * nothing is gathered, and no line of dw is written by two threads but at
 * the ranges' ends. (Threads that split the columns of dw instead, each
 * writing its part of every row, ran 2-5x slower at 2 threads than at 1 on
 * the development VM, even with the parts on separate lines; presumably the
 * cores' prefetchers fetch the neighbouring lines, not measured.) */
lg_status LG_FN(lg_linear_sparse_backward)(lg_real *dw, lg_real *db, const lg_real *dy,
                                           const lg_features *x, lg_idx in, lg_idx out) {
    LG_CHECK(lg__nn_csr_check(__func__, x));
    LG_CHECK(lg__nn_shape(__func__, x->n, out));
    LG_CHECK(lg__nn_shape(__func__, x->d, out));
    if (x->d != in)
        return lg__error(LG_EINVAL, "%s: x has %lld columns, dw %lld rows (x is the forward's n x in features, not "
                         "their transpose)", __func__, (long long)x->d, (long long)in);
    const lg_idx n = x->n;
    LG__NN_NEED(dy, n > 0 && out > 0 && (dw || db), "dy");
    if (n == 0 || out == 0) return LG_OK;
    if (dw && x->nnz > 0) {
        void (*f)(lg_real *restrict, const lg_real *restrict, const lg_idx *restrict, const lg_idx *restrict,
                  const float *restrict, lg_idx, lg_idx, lg_idx, lg_idx) = LG__ISA_PICK(LG_FN(lg__spbwd));
#pragma omp parallel if ((x->nnz + n) * out >= LG__NN_PAR_MIN)
        {
            const lg_idx T = omp_get_num_threads(), t = omp_get_thread_num();
            f(dw, dy, x->p, x->j, x->x, n, out, in * t / T, in * (t + 1) / T);
        }
    }
    if (db) LG_FN(lg__colsum_add)(db, dy, n, out, NULL);
    return LG_OK;
}
