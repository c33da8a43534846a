/*
 * LayerNorm per node over its features (Ba, Kiros & Hinton 2016; PyTorch's
 * nn.LayerNorm semantics: biased variance, eps 1e-5, learnable gain and bias),
 * forward and backward, generic over the scalar (see core/real.h); compiled by
 * nn_f32.c and nn_f64.c. Contracts: lipgnn/nn.h.
 */
#include "core/real.h"
#include "nn/nn_common.h"

#define LG__LN_EPS 1e-5

/* y (n x d), mean (n), rstd (n)  <-  x (n x d), gain (d), bias (d) */
lg_status LG_FN(lg_layernorm_forward)(lg_real *y, lg_real *mean, lg_real *rstd, const lg_real *x,
                                      const lg_real *gain, const lg_real *bias, lg_idx n, lg_idx d) {
    LG_CHECK(lg__nn_shape(__func__, n, d));
    LG__NN_NEED(y, n > 0 && d > 0, "y");
    LG__NN_NEED(x, n > 0 && d > 0, "x");
    LG__NN_NEED(mean, n > 0, "mean");
    LG__NN_NEED(rstd, n > 0, "rstd");
    if (n == 0) return LG_OK;
#pragma omp parallel for schedule(static) if (n * d >= LG__NN_PAR_MIN)
    for (lg_idx i = 0; i < n; i++) {
        const lg_real *xi = x + i * d;
        lg_real *yi = y + i * d;
        /* shifted by the first value: exact for a constant row */
        lg_real x0 = d > 0 ? xi[0] : LG_R(0), sh = 0;
        for (lg_idx c = 0; c < d; c++) sh += xi[c] - x0;
        lg_real mu = d > 0 ? x0 + sh / (lg_real)d : LG_R(0), var = 0;
        for (lg_idx c = 0; c < d; c++) var += (xi[c] - mu) * (xi[c] - mu);
        if (d > 0) var /= (lg_real)d;
        lg_real r = LG_R(1) / LG_SQRT(var + LG_R(LG__LN_EPS));
        mean[i] = mu;
        rstd[i] = r;
        for (lg_idx c = 0; c < d; c++) {
            lg_real h = (xi[c] - mu) * r;
            yi[c] = (gain ? h * gain[c] : h) + (bias ? bias[c] : LG_R(0));
        }
    }
    return LG_OK;
}

/* dx (n x d), dgain (d), dbias (d)  +=  from dy (n x d), x, mean, rstd, gain */
lg_status LG_FN(lg_layernorm_backward)(lg_real *dx, lg_real *dgain, lg_real *dbias, const lg_real *dy,
                                       const lg_real *x, const lg_real *mean, const lg_real *rstd,
                                       const lg_real *gain, lg_idx n, lg_idx d) {
    LG_CHECK(lg__nn_shape(__func__, n, d));
    const int any = dx || dgain || dbias;
    LG__NN_NEED(dy, any && n > 0 && d > 0, "dy");
    LG__NN_NEED(x, (dx || dgain) && n > 0 && d > 0, "x");
    LG__NN_NEED(mean, (dx || dgain) && n > 0, "mean");
    LG__NN_NEED(rstd, (dx || dgain) && n > 0, "rstd");
    if (n == 0 || d == 0) return LG_OK;
    const int par = n * d >= LG__NN_PAR_MIN;
    if (dx) {
#pragma omp parallel for schedule(static) if (par)
        for (lg_idx i = 0; i < n; i++) {
            const lg_real *xi = x + i * d, *gi = dy + i * d;
            const lg_real mu = mean[i], r = rstd[i];
            lg_real m1 = 0, m2 = 0;
            for (lg_idx c = 0; c < d; c++) {
                lg_real g = gain ? gi[c] * gain[c] : gi[c];
                m1 += g;
                m2 += g * ((xi[c] - mu) * r);
            }
            m1 /= (lg_real)d;
            m2 /= (lg_real)d;
            lg_real *dxi = dx + i * d;
            for (lg_idx c = 0; c < d; c++) {
                lg_real g = gain ? gi[c] * gain[c] : gi[c];
                dxi[c] += r * (g - m1 - ((xi[c] - mu) * r) * m2);
            }
        }
    }
    if (dgain || dbias) {
        const lg_idx nb = (d + LG__NN_CB - 1) / LG__NN_CB;
#pragma omp parallel for schedule(static) if (par)
        for (lg_idx b = 0; b < nb; b++) {
            lg_idx c0 = b * LG__NN_CB, w = LG_MIN(d - c0, (lg_idx)LG__NN_CB);
            lg_real ag[LG__NN_CB] = {0}, ab[LG__NN_CB] = {0};
            for (lg_idx i = 0; i < n; i++) {
                const lg_real *gi = dy + i * d + c0;
                if (dgain) {
                    const lg_real *xi = x + i * d + c0;
                    const lg_real mu = mean[i], r = rstd[i];
                    for (lg_idx c = 0; c < w; c++) ag[c] += gi[c] * ((xi[c] - mu) * r);
                }
                for (lg_idx c = 0; c < w; c++) ab[c] += gi[c];
            }
            for (lg_idx c = 0; c < w; c++) {
                if (dgain) dgain[c0 + c] += ag[c];
                if (dbias) dbias[c0 + c] += ab[c];
            }
        }
    }
    return LG_OK;
}

#undef LG__LN_EPS
