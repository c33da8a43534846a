/*
 * Element-wise operations: ELU, ReLU, the residual add and inverted dropout, generic
 * over the scalar (see core/real.h); compiled by nn_f32.c and nn_f64.c.
 * Contracts: lipgnn/nn.h. Each element is computed alone, so the results do
 * not depend on how the OpenMP loop is split.
 */
#include "core/real.h"
#include "nn/nn_common.h"

#if defined(LG_REAL_F32)
#define LG__NN_EXPM1 expm1f
#else
#define LG__NN_EXPM1 expm1
#endif

/* y[k] = x[k] > 0 ? x[k] : expm1(x[k]) */
lg_status LG_FN(lg_elu_forward)(lg_real *y, const lg_real *x, lg_idx count) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", __func__);
    LG__NN_NEED(y, count > 0, "y");
    LG__NN_NEED(x, count > 0, "x");
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN)
    for (lg_idx k = 0; k < count; k++) {
        lg_real v = x[k];
        y[k] = v > 0 ? v : LG__NN_EXPM1(v);
    }
    return LG_OK;
}

/* dx[k] += dy[k] * (y[k] > 0 ? 1 : y[k] + 1), from the output y */
lg_status LG_FN(lg_elu_backward)(lg_real *dx, const lg_real *dy, const lg_real *y, lg_idx count) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", __func__);
    LG__NN_NEED(dx, count > 0, "dx");
    LG__NN_NEED(dy, count > 0, "dy");
    LG__NN_NEED(y, count > 0, "y");
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN)
    for (lg_idx k = 0; k < count; k++) dx[k] += y[k] > 0 ? dy[k] : dy[k] * (y[k] + LG_R(1));
    return LG_OK;
}

/* y[k] = max(x[k], 0) */
lg_status LG_FN(lg_relu_forward)(lg_real *y, const lg_real *x, lg_idx count) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", __func__);
    LG__NN_NEED(y, count > 0, "y");
    LG__NN_NEED(x, count > 0, "x");
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN)
    for (lg_idx k = 0; k < count; k++) y[k] = x[k] > 0 ? x[k] : LG_R(0);
    return LG_OK;
}

/* dx[k] += y[k] > 0 ? dy[k] : 0, from the output y */
lg_status LG_FN(lg_relu_backward)(lg_real *dx, const lg_real *dy, const lg_real *y, lg_idx count) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", __func__);
    LG__NN_NEED(dx, count > 0, "dx");
    LG__NN_NEED(dy, count > 0, "dy");
    LG__NN_NEED(y, count > 0, "y");
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN)
    for (lg_idx k = 0; k < count; k++)
        if (y[k] > 0) dx[k] += dy[k];
    return LG_OK;
}

/* y[k] += x[k] */
lg_status LG_FN(lg_add)(lg_real *y, const lg_real *x, lg_idx count) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", __func__);
    LG__NN_NEED(y, count > 0, "y");
    LG__NN_NEED(x, count > 0, "x");
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN)
    for (lg_idx k = 0; k < count; k++) y[k] += x[k];
    return LG_OK;
}

/* y[k] = kept(k) ? x[k] / (1 - p) : 0 (y = x when not training or p = 0) */
lg_status LG_FN(lg_dropout_forward)(lg_real *y, const lg_real *x, lg_idx count, double p, uint64_t seed,
                                    uint64_t counter, int training) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", __func__);
    LG_CHECK(lg__nn_dropout_p(__func__, p));
    LG__NN_NEED(y, count > 0, "y");
    LG__NN_NEED(x, count > 0, "x");
    if (!training || p == 0.0) {
        if (y != x) {
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN)
            for (lg_idx k = 0; k < count; k++) y[k] = x[k];
        }
        return LG_OK;
    }
    const uint64_t stream = lg__nn_dropout_stream(seed, counter), thr = lg__nn_dropout_threshold(p);
    const lg_real scale = (lg_real)(1.0 / (1.0 - p));
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN / 4)
    for (lg_idx k = 0; k < count; k++) y[k] = lg__nn_dropout_keep(stream, thr, k) ? x[k] * scale : LG_R(0);
    return LG_OK;
}

/* dx[k] += kept(k) ? dy[k] / (1 - p) : 0 (dx += dy when not training or p = 0) */
lg_status LG_FN(lg_dropout_backward)(lg_real *dx, const lg_real *dy, lg_idx count, double p, uint64_t seed,
                                     uint64_t counter, int training) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", __func__);
    LG_CHECK(lg__nn_dropout_p(__func__, p));
    LG__NN_NEED(dx, count > 0, "dx");
    LG__NN_NEED(dy, count > 0, "dy");
    if (!training || p == 0.0) return LG_FN(lg_add)(dx, dy, count);
    const uint64_t stream = lg__nn_dropout_stream(seed, counter), thr = lg__nn_dropout_threshold(p);
    const lg_real scale = (lg_real)(1.0 / (1.0 - p));
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN / 4)
    for (lg_idx k = 0; k < count; k++)
        if (lg__nn_dropout_keep(stream, thr, k)) dx[k] += dy[k] * scale;
    return LG_OK;
}

#undef LG__NN_EXPM1
