/*
 * LipsFormer's CenterNorm and weighted residual shortcut, forward and
 * backward, generic over the scalar (core/real.h); compiled by nn_f32.c and
 * nn_f64.c. Contracts: lipgnn/nn.h. Row-parallel maps (OpenMP over rows);
 * the parameter-gradient sums run over column blocks, each summing all rows
 * in ascending order: no result depends on the number of threads.
 */
#include "core/real.h"
#include "nn/nn_common.h"

/* mean of a row, shifted by its first value (exact for a constant row) */
static inline lg_real LG_FN(lg__cn_mean)(const lg_real *x, lg_idx d) {
    lg_real x0 = x[0], sh = 0;
    for (lg_idx c = 0; c < d; c++) sh += x[c] - x0;
    return x0 + sh / (lg_real)d;
}

static lg_status lg__cn_shape(const char *fn, lg_idx n, lg_idx d) {
    LG_CHECK(lg__nn_shape(fn, n, d));
    if (d < 2) return lg__error(LG_EINVAL, "%s: width d = %lld: CenterNorm needs d >= 2 (d/(d-1))", fn, (long long)d);
    return LG_OK;
}

lg_status LG_FN(lg_centernorm_forward)(lg_real *y, const lg_real *x, const lg_real *gain, const lg_real *bias,
                                       lg_idx n, lg_idx d) {
    LG_CHECK(lg__cn_shape(__func__, n, d));
    LG__NN_NEED(y, n > 0, "y");
    LG__NN_NEED(x, n > 0, "x");
    const lg_real s = (lg_real)d / (lg_real)(d - 1);
#pragma omp parallel for schedule(static) if (n * d >= LG__NN_PAR_MIN)
    for (lg_idx i = 0; i < n; i++) {
        const lg_real *xi = x + i * d;
        lg_real *yi = y + i * d;
        const lg_real mu = LG_FN(lg__cn_mean)(xi, d);
        for (lg_idx c = 0; c < d; c++) {
            lg_real h = s * (xi[c] - mu);
            yi[c] = (gain ? gain[c] * h : h) + (bias ? bias[c] : LG_R(0));
        }
    }
    return LG_OK;
}

lg_status LG_FN(lg_centernorm_backward)(lg_real *dx, lg_real *dgain, lg_real *dbias, const lg_real *dy,
                                        const lg_real *x, const lg_real *gain, lg_idx n, lg_idx d) {
    LG_CHECK(lg__cn_shape(__func__, n, d));
    LG__NN_NEED(dy, (dx || dgain || dbias) && n > 0, "dy");
    LG__NN_NEED(x, dgain && n > 0, "x");
    if (n == 0) return LG_OK;
    const lg_real s = (lg_real)d / (lg_real)(d - 1);
    const int par = n * d >= LG__NN_PAR_MIN;
    if (dx) {
#pragma omp parallel for schedule(static) if (par)
        for (lg_idx i = 0; i < n; i++) {
            const lg_real *gi = dy + i * d;
            lg_real m = 0;
            for (lg_idx c = 0; c < d; c++) m += gain ? gi[c] * gain[c] : gi[c];
            m /= (lg_real)d;
            lg_real *dxi = dx + i * d;
            for (lg_idx c = 0; c < d; c++) dxi[c] += s * ((gain ? gi[c] * gain[c] : gi[c]) - m);
        }
    }
    if (dgain || dbias) {
        const lg_idx nb = (d + LG__NN_CB - 1) / LG__NN_CB;
#pragma omp parallel for schedule(static) if (par)
        for (lg_idx b = 0; b < nb; b++) {
            const lg_idx c0 = b * LG__NN_CB, w = LG_MIN(d - c0, (lg_idx)LG__NN_CB);
            lg_real ag[LG__NN_CB] = {0}, ab[LG__NN_CB] = {0};
            for (lg_idx i = 0; i < n; i++) {
                const lg_real *gi = dy + i * d + c0;
                if (dgain) {
                    const lg_real *xi = x + i * d;
                    const lg_real mu = LG_FN(lg__cn_mean)(xi, d);
                    for (lg_idx c = 0; c < w; c++) ag[c] += gi[c] * (s * (xi[c0 + c] - mu));
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

lg_status LG_FN(lg_wresidual_init)(lg_real *alpha, lg_idx d, lg_idx layers) {
    LG_CHECK(lg__nn_shape(__func__, 1, d));
    LG__NN_NEED(alpha, d > 0, "alpha");
    if (layers < 1) return lg__error(LG_EINVAL, "%s: layers = %lld: must be >= 1", __func__, (long long)layers);
    for (lg_idx c = 0; c < d; c++) alpha[c] = LG_R(1.0) / (lg_real)layers;
    return LG_OK;
}

lg_status LG_FN(lg_wresidual_forward)(lg_real *y, const lg_real *x, const lg_real *f, const lg_real *alpha,
                                      lg_idx n, lg_idx d) {
    LG_CHECK(lg__nn_shape(__func__, n, d));
    LG__NN_NEED(y, n > 0 && d > 0, "y");
    LG__NN_NEED(x, n > 0 && d > 0, "x");
    LG__NN_NEED(f, n > 0 && d > 0, "f");
    LG__NN_NEED(alpha, n > 0 && d > 0, "alpha");
#pragma omp parallel for schedule(static) if (n * d >= LG__NN_PAR_MIN)
    for (lg_idx i = 0; i < n; i++)
        for (lg_idx c = 0; c < d; c++) y[i * d + c] = x[i * d + c] + alpha[c] * f[i * d + c];
    return LG_OK;
}

lg_status LG_FN(lg_wresidual_backward)(lg_real *dx, lg_real *df, lg_real *dalpha, const lg_real *dy,
                                       const lg_real *f, const lg_real *alpha, lg_idx n, lg_idx d) {
    LG_CHECK(lg__nn_shape(__func__, n, d));
    LG__NN_NEED(dy, (dx || df || dalpha) && n > 0 && d > 0, "dy");
    LG__NN_NEED(alpha, df && n > 0 && d > 0, "alpha");
    LG__NN_NEED(f, dalpha && n > 0 && d > 0, "f");
    if (n == 0 || d == 0) return LG_OK;
    if (dx && df) LG_CHECK(lg__apart(__func__, dx, "dx", (size_t)(n * d) * sizeof(lg_real), df, "df",
                                     (size_t)(n * d) * sizeof(lg_real)));
    const int par = n * d >= LG__NN_PAR_MIN;
    if (dx || df) {
#pragma omp parallel for schedule(static) if (par)
        for (lg_idx i = 0; i < n; i++)
            for (lg_idx c = 0; c < d; c++) {
                const lg_real g = dy[i * d + c];
                if (dx) dx[i * d + c] += g;
                if (df) df[i * d + c] += alpha[c] * g;
            }
    }
    if (dalpha) {
        const lg_idx nb = (d + LG__NN_CB - 1) / LG__NN_CB;
#pragma omp parallel for schedule(static) if (par)
        for (lg_idx b = 0; b < nb; b++) {
            const lg_idx c0 = b * LG__NN_CB, w = LG_MIN(d - c0, (lg_idx)LG__NN_CB);
            lg_real acc[LG__NN_CB] = {0};
            for (lg_idx i = 0; i < n; i++)
                for (lg_idx c = 0; c < w; c++) acc[c] += dy[i * d + c0 + c] * f[i * d + c0 + c];
            for (lg_idx c = 0; c < w; c++) dalpha[c0 + c] += acc[c];
        }
    }
    return LG_OK;
}
