/*
 * PairNorm (Zhao & Akoglu, "PairNorm: tackling oversmoothing in GNNs", ICLR
 * 2020) per segment of a batch, forward and backward, generic over the scalar
 * (see core/real.h); compiled by nn_f32.c and nn_f64.c. Contracts: lipgnn/nn.h.
 *
 * Every sum across rows runs in row order inside one task: column sums in a
 * (segment, column block) task, per-row dot products by the row's thread, and
 * their per-segment sums serially within the segment's task.
 *
 * Backward. With y_i = s r_i xc_i (the output), g_i = dL/dy_i and N the
 * segment's size:
 *   PN:    r = (eps + (1/N) sum_k ||xc_k||^2)^(-1/2) for the whole segment and
 *          dL/dxc_i = s r g_i - (r D / (s N)) y_i,  D = sum_k g_k . y_k
 *   PN-SI: r_i = (eps + ||xc_i||^2)^(-1/2) and
 *          dL/dxc_i = s r_i g_i - (r_i (g_i . y_i) / s) y_i
 * both of the form a_i g_i - b_i y_i; then through the centring
 *   dL/dx_i = dL/dxc_i - (1/N) sum_k dL/dxc_k.
 */
#include "core/real.h"
#include "nn/nn_common.h"

#define LG__PN_EPS 1e-12

static lg_status LG_FN(lg__pairnorm_args)(const char *fn, lg_idx n, lg_idx d, const lg_idx *graph_ptr,
                                          lg_idx n_graphs, lg_pairnorm_mode mode, double scale) {
    LG_CHECK(lg__nn_shape(fn, n, d));
    LG_CHECK(lg__nn_segments(fn, graph_ptr, n_graphs, n));
    if (mode != LG_PAIRNORM_PN && mode != LG_PAIRNORM_SI)
        return lg__error(LG_EINVAL, "%s: unknown PairNorm mode %d", fn, (int)mode);
    if (!(scale > 0.0) || !isfinite(scale))
        return lg__error(LG_EINVAL, "%s: scale %g is not a positive finite number", fn, scale);
    return LG_OK;
}

/* out (n x d), rstd (n)  <-  x (n x d), segments graph_ptr[0..n_graphs] */
lg_status LG_FN(lg_pairnorm_forward)(lg_real *out, lg_real *rstd, const lg_real *x, lg_idx n, lg_idx d,
                                     const lg_idx *graph_ptr, lg_idx n_graphs, lg_pairnorm_mode mode,
                                     double scale) {
    LG_CHECK(LG_FN(lg__pairnorm_args)(__func__, n, d, graph_ptr, n_graphs, mode, scale));
    LG__NN_NEED(out, n > 0 && d > 0, "out");
    LG__NN_NEED(x, n > 0 && d > 0, "x");
    LG__NN_NEED(rstd, n > 0, "rstd");
    if (n == 0) return LG_OK;
    lg_idx one[2] = {0, n};
    const lg_idx *seg = graph_ptr ? graph_ptr : one;
    const lg_idx ng = graph_ptr ? n_graphs : 1, nb = (d + LG__NN_CB - 1) / LG__NN_CB;
    const lg_real s = (lg_real)scale;
    const int par = n * LG_MAX(d, (lg_idx)1) >= LG__NN_PAR_MIN;

    /* 1. centre: each (segment, column block) task sums its columns over the
     *    segment's rows in order, then subtracts the mean */
#pragma omp parallel for schedule(static) if (par)
    for (lg_idx t = 0; t < ng * nb; t++) {
        lg_idx g = t / nb, c0 = (t % nb) * LG__NN_CB, w = LG_MIN(d - c0, (lg_idx)LG__NN_CB);
        lg_idx i0 = seg[g], i1 = seg[g + 1];
        if (i0 == i1) continue;
        lg_real acc[LG__NN_CB] = {0};
        for (lg_idx i = i0; i < i1; i++)
            for (lg_idx c = 0; c < w; c++) acc[c] += x[i * d + c0 + c];
        for (lg_idx c = 0; c < w; c++) acc[c] /= (lg_real)(i1 - i0);
        for (lg_idx i = i0; i < i1; i++)
            for (lg_idx c = 0; c < w; c++) out[i * d + c0 + c] = x[i * d + c0 + c] - acc[c];
    }
    /* 2. squared norm of each centred row */
#pragma omp parallel for schedule(static) if (par)
    for (lg_idx i = 0; i < n; i++) {
        lg_real q = 0;
        for (lg_idx c = 0; c < d; c++) q += out[i * d + c] * out[i * d + c];
        rstd[i] = q;
    }
    /* 3. the factor: per segment (PN, sum in row order) or per row (PN-SI) */
    if (mode == LG_PAIRNORM_PN) {
#pragma omp parallel for schedule(static) if (par && ng > 1)
        for (lg_idx g = 0; g < ng; g++) {
            lg_idx i0 = seg[g], i1 = seg[g + 1];
            if (i0 == i1) continue;
            lg_real q = 0;
            for (lg_idx i = i0; i < i1; i++) q += rstd[i];
            lg_real r = LG_R(1) / LG_SQRT(LG_R(LG__PN_EPS) + q / (lg_real)(i1 - i0));
            for (lg_idx i = i0; i < i1; i++) rstd[i] = r;
        }
    } else {
#pragma omp parallel for schedule(static) if (par)
        for (lg_idx i = 0; i < n; i++) rstd[i] = LG_R(1) / LG_SQRT(LG_R(LG__PN_EPS) + rstd[i]);
    }
    /* 4. scale the rows */
#pragma omp parallel for schedule(static) if (par)
    for (lg_idx i = 0; i < n; i++) {
        lg_real f = s * rstd[i];
        for (lg_idx c = 0; c < d; c++) out[i * d + c] *= f;
    }
    return LG_OK;
}

/* dx (n x d) += J^T dout, from out (n x d) and rstd (n); work: n scratch */
lg_status LG_FN(lg_pairnorm_backward)(lg_real *dx, lg_real *work, const lg_real *dout, const lg_real *out,
                                      const lg_real *rstd, lg_idx n, lg_idx d, const lg_idx *graph_ptr,
                                      lg_idx n_graphs, lg_pairnorm_mode mode, double scale) {
    LG_CHECK(LG_FN(lg__pairnorm_args)(__func__, n, d, graph_ptr, n_graphs, mode, scale));
    LG__NN_NEED(dx, n > 0 && d > 0, "dx");
    LG__NN_NEED(dout, n > 0 && d > 0, "dout");
    LG__NN_NEED(out, n > 0 && d > 0, "out");
    LG__NN_NEED(rstd, n > 0, "rstd");
    LG__NN_NEED(work, n > 0, "work");
    if (n == 0 || d == 0) return LG_OK;
    lg_idx one[2] = {0, n};
    const lg_idx *seg = graph_ptr ? graph_ptr : one;
    const lg_idx ng = graph_ptr ? n_graphs : 1, nb = (d + LG__NN_CB - 1) / LG__NN_CB;
    const lg_real s = (lg_real)scale;
    const int par = n * d >= LG__NN_PAR_MIN;

    /* 1. work_i = g_i . y_i */
#pragma omp parallel for schedule(static) if (par)
    for (lg_idx i = 0; i < n; i++) {
        lg_real q = 0;
        for (lg_idx c = 0; c < d; c++) q += dout[i * d + c] * out[i * d + c];
        work[i] = q;
    }
    /* 2. work_i = b_i */
    if (mode == LG_PAIRNORM_PN) {
#pragma omp parallel for schedule(static) if (par && ng > 1)
        for (lg_idx g = 0; g < ng; g++) {
            lg_idx i0 = seg[g], i1 = seg[g + 1];
            lg_real q = 0;
            for (lg_idx i = i0; i < i1; i++) q += work[i];
            q /= s * (lg_real)LG_MAX(i1 - i0, (lg_idx)1);
            for (lg_idx i = i0; i < i1; i++) work[i] = rstd[i] * q;
        }
    } else {
#pragma omp parallel for schedule(static) if (par)
        for (lg_idx i = 0; i < n; i++) work[i] = rstd[i] * work[i] / s;
    }
    /* 3. dxc_i = a_i g_i - b_i y_i, a_i = s rstd_i; dx_i += dxc_i - mean(dxc):
     *    each (segment, column block) task sums its columns in row order */
#pragma omp parallel for schedule(static) if (par)
    for (lg_idx t = 0; t < ng * nb; t++) {
        lg_idx g = t / nb, c0 = (t % nb) * LG__NN_CB, w = LG_MIN(d - c0, (lg_idx)LG__NN_CB);
        lg_idx i0 = seg[g], i1 = seg[g + 1];
        if (i0 == i1) continue;
        lg_real acc[LG__NN_CB] = {0};
        for (lg_idx i = i0; i < i1; i++) {
            lg_real a = s * rstd[i], b = work[i];
            for (lg_idx c = 0; c < w; c++) acc[c] += a * dout[i * d + c0 + c] - b * out[i * d + c0 + c];
        }
        for (lg_idx c = 0; c < w; c++) acc[c] /= (lg_real)(i1 - i0);
        for (lg_idx i = i0; i < i1; i++) {
            lg_real a = s * rstd[i], b = work[i];
            for (lg_idx c = 0; c < w; c++)
                dx[i * d + c0 + c] += (a * dout[i * d + c0 + c] - b * out[i * d + c0 + c]) - acc[c];
        }
    }
    return LG_OK;
}

#undef LG__PN_EPS
