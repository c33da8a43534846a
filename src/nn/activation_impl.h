/*
 * Element-wise operations: ELU, ReLU, the residual add and inverted dropout, generic
 * over the scalar (see core/real.h); compiled by nn_f32.c and nn_f64.c.
 * Contracts: lipgnn/nn.h. Each element is computed alone, so the results do
 * not depend on how the OpenMP loop is split, and the loops are `simd`
 * (element-wise, also in place): branch-free selects instead of jumps on the
 * random signs and masks.
 */
#include "core/isa.h"
#include "core/real.h"
#include "nn/nn_common.h"

/* The ELU's expm1: in float inline (core/fexp.h), so that the ELU loop
 * vectorises; in double libm's. */
#if defined(LG_REAL_F32)
#define LG__NN_ELU_NEG(v) lg__expm1f_nonpos((v) < 0 ? (v) : 0.0f)
#else
#define LG__NN_ELU_NEG(v) expm1(v)
#endif

/* The element-wise loops run over chunks of LG__NN_CHUNK elements, each
 * chunk by the variant of its body for the CPU (core/isa.h); the chunks are
 * spread over the threads. Elements are independent: no result depends on
 * the chunking, the threads or the variant. */

/* (no restrict: y = x, in place, is allowed; element k is read before it is
 * written and no other element is touched) */
LG__ALWAYS_INLINE void LG__CAT(LG_FN(lg__elu_fwd), _body)(lg_real *y, const lg_real *x, lg_idx n) {
#pragma omp simd
    for (lg_idx k = 0; k < n; k++) {
        const lg_real v = x[k], e = LG__NN_ELU_NEG(v);
        y[k] = v <= 0 ? e : v;
    }
}
LG__ISA_VARIANTS(LG_FN(lg__elu_fwd), (lg_real * y, const lg_real *x, lg_idx n), (y, x, n))

/* y[k] = x[k] > 0 ? x[k] : expm1(x[k]) (NaN stays NaN); y = x allowed */
lg_status LG_FN(lg_elu_forward)(lg_real *y, const lg_real *x, lg_idx count) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", __func__);
    LG__NN_NEED(y, count > 0, "y");
    LG__NN_NEED(x, count > 0, "x");
    void (*f)(lg_real *, const lg_real *, lg_idx) = LG__ISA_PICK(LG_FN(lg__elu_fwd));
    const lg_idx nc = (count + LG__NN_CHUNK - 1) / LG__NN_CHUNK;
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN)
    for (lg_idx c = 0; c < nc; c++) {
        const lg_idx k0 = c * LG__NN_CHUNK;
        f(y + k0, x + k0, LG_MIN(LG__NN_CHUNK, count - k0));
    }
    return LG_OK;
}

LG__ALWAYS_INLINE void LG__CAT(LG_FN(lg__elu_bwd), _body)(lg_real *restrict dx, const lg_real *restrict dy,
                                               const lg_real *restrict y, lg_idx n) {
#pragma omp simd
    for (lg_idx k = 0; k < n; k++) { /* branch-free: the signs are random */
        const lg_real s = y[k] > 0 ? LG_R(1) : y[k] + LG_R(1);
        dx[k] += dy[k] * s;
    }
}
LG__ISA_VARIANTS(LG_FN(lg__elu_bwd), (lg_real *restrict dx, const lg_real *restrict dy, const lg_real *restrict y, lg_idx n),
                 (dx, dy, y, n))

/* dx[k] += dy[k] * (y[k] > 0 ? 1 : y[k] + 1), from the output y */
lg_status LG_FN(lg_elu_backward)(lg_real *dx, const lg_real *dy, const lg_real *y, lg_idx count) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", __func__);
    LG__NN_NEED(dx, count > 0, "dx");
    LG__NN_NEED(dy, count > 0, "dy");
    LG__NN_NEED(y, count > 0, "y");
    if (dx == dy || dx == y) { /* aliasing: the body's restrict does not hold */
#pragma omp parallel for simd schedule(static) if (count >= LG__NN_PAR_MIN)
        for (lg_idx k = 0; k < count; k++) {
            const lg_real s = y[k] > 0 ? LG_R(1) : y[k] + LG_R(1);
            dx[k] += dy[k] * s;
        }
        return LG_OK;
    }
    void (*f)(lg_real *restrict, const lg_real *restrict, const lg_real *restrict, lg_idx) =
        LG__ISA_PICK(LG_FN(lg__elu_bwd));
    const lg_idx nc = (count + LG__NN_CHUNK - 1) / LG__NN_CHUNK;
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN)
    for (lg_idx c = 0; c < nc; c++) {
        const lg_idx k0 = c * LG__NN_CHUNK;
        f(dx + k0, dy + k0, y + k0, LG_MIN(LG__NN_CHUNK, count - k0));
    }
    return LG_OK;
}

LG__ALWAYS_INLINE void LG__CAT(LG_FN(lg__elu_bwd_ip), _body)(lg_real *restrict g, const lg_real *restrict y, lg_idx n) {
#pragma omp simd
    for (lg_idx k = 0; k < n; k++) g[k] *= y[k] > 0 ? LG_R(1) : y[k] + LG_R(1);
}
LG__ISA_VARIANTS(LG_FN(lg__elu_bwd_ip), (lg_real *restrict g, const lg_real *restrict y, lg_idx n), (g, y, n))

/* g[k] *= (y[k] > 0 ? 1 : y[k] + 1) */
lg_status LG_FN(lg_elu_backward_inplace)(lg_real *g, const lg_real *y, lg_idx count) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", __func__);
    LG__NN_NEED(g, count > 0, "g");
    LG__NN_NEED(y, count > 0, "y");
    if (count > 0 && g == y) return lg__error(LG_EINVAL, "%s: g and y are the same array", __func__);
    void (*f)(lg_real *restrict, const lg_real *restrict, lg_idx) = LG__ISA_PICK(LG_FN(lg__elu_bwd_ip));
    const lg_idx nc = (count + LG__NN_CHUNK - 1) / LG__NN_CHUNK;
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN)
    for (lg_idx c = 0; c < nc; c++) {
        const lg_idx k0 = c * LG__NN_CHUNK;
        f(g + k0, y + k0, LG_MIN(LG__NN_CHUNK, count - k0));
    }
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
#pragma omp parallel for simd schedule(static) if (count >= LG__NN_PAR_MIN)
    for (lg_idx k = 0; k < count; k++) y[k] += x[k];
    return LG_OK;
}

/* v if keep, else +0, without a jump (the mask is random: a jump on it
 * mispredicts half the time). */
#if defined(LG_REAL_F32)
typedef uint32_t lg__nn_bits_f32;
#else
typedef uint64_t lg__nn_bits_f64;
#endif
static inline lg_real LG_FN(lg__nn_keep_or_zero)(lg_real v, int keep) {
    union { lg_real r; LG_FN(lg__nn_bits) b; } u = {.r = v};
    u.b &= (LG_FN(lg__nn_bits))0 - (LG_FN(lg__nn_bits))keep;
    return u.r;
}

/* Dropout of elements [k0, k0 + n) of a tensor, one chunk of the loops
 * below (so the range does not straddle a multiple of 2^32, as the mask's
 * key requires: nn_common.h): y[k] = kept(k0 + k) ? x[k] scale : 0, or,
 * accumulating (acc = 1), y[k] += that. In place allowed for the forward
 * (y = x): each element is read before it is written. */
LG__ALWAYS_INLINE void LG__CAT(LG_FN(lg__dropout), _body)(lg_real *y, const lg_real *x, lg_idx k0, lg_idx n, uint64_t stream,
                                               uint64_t thr, lg_real scale, int acc) {
    const uint64_t key = lg__nn_dropout_key(stream, (uint64_t)k0 >> 32); /* [k0, k0 + n): one chunk */
    if (acc) {
#pragma omp simd
        for (lg_idx k = 0; k < n; k++)
            y[k] += LG_FN(lg__nn_keep_or_zero)(x[k] * scale, lg__nn_keep32(key, thr, (uint32_t)k0 + (uint32_t)k));
    } else {
#pragma omp simd
        for (lg_idx k = 0; k < n; k++)
            y[k] = LG_FN(lg__nn_keep_or_zero)(x[k] * scale, lg__nn_keep32(key, thr, (uint32_t)k0 + (uint32_t)k));
    }
}
LG__ISA_VARIANTS(LG_FN(lg__dropout),
                 (lg_real * y, const lg_real *x, lg_idx k0, lg_idx n, uint64_t stream, uint64_t thr, lg_real scale,
                  int acc),
                 (y, x, k0, n, stream, thr, scale, acc))

/* The dropout loop over chunks, spread over the threads. */
static void LG_FN(lg__dropout_run)(lg_real *y, const lg_real *x, lg_idx count, double p, uint64_t seed,
                                   uint64_t counter, int acc) {
    const uint64_t stream = lg__nn_dropout_stream(seed, counter), thr = lg__nn_dropout_threshold(p);
    const lg_real scale = (lg_real)(1.0 / (1.0 - p));
    void (*f)(lg_real *, const lg_real *, lg_idx, lg_idx, uint64_t, uint64_t, lg_real, int) =
        LG__ISA_PICK(LG_FN(lg__dropout));
    const lg_idx nc = (count + LG__NN_CHUNK - 1) / LG__NN_CHUNK;
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN / 4)
    for (lg_idx c = 0; c < nc; c++) {
        const lg_idx k0 = c * LG__NN_CHUNK;
        f(y + k0, x + k0, k0, LG_MIN(LG__NN_CHUNK, count - k0), stream, thr, scale, acc);
    }
}

/* y[k] = kept(k) ? x[k] / (1 - p) : 0 (y = x when not training or p = 0) */
lg_status LG_FN(lg_dropout_forward)(lg_real *y, const lg_real *x, lg_idx count, double p, uint64_t seed,
                                    uint64_t counter, int training) {
    LG_CHECK(lg__nn_dropout_args(__func__, count, p, y, "y", x, "x", 0));
    if (!training || p == 0.0) {
        if (y != x) {
#pragma omp parallel for simd schedule(static) if (count >= LG__NN_PAR_MIN)
            for (lg_idx k = 0; k < count; k++) y[k] = x[k];
        }
        return LG_OK;
    }
    LG_FN(lg__dropout_run)(y, x, count, p, seed, counter, 0);
    return LG_OK;
}

/* dx[k] += kept(k) ? dy[k] / (1 - p) : 0 (dx += dy when not training or p = 0) */
lg_status LG_FN(lg_dropout_backward)(lg_real *dx, const lg_real *dy, lg_idx count, double p, uint64_t seed,
                                     uint64_t counter, int training) {
    LG_CHECK(lg__nn_dropout_args(__func__, count, p, dx, "dx", dy, "dy", 0));
    if (!training || p == 0.0) return LG_FN(lg_add)(dx, dy, count);
    LG_FN(lg__dropout_run)(dx, dy, count, p, seed, counter, 1);
    return LG_OK;
}

/* ELU then the next layer's input dropout, in one pass (lipgnn/nn.h), over
 * one chunk [k0, k0 + n): z[k] = ELU(z[k]), d[k] = dropout(z[k]) (a copy
 * when drop is 0). */
LG__ALWAYS_INLINE void LG__CAT(LG_FN(lg__elu_drop), _body)(lg_real *restrict z, lg_real *restrict d, lg_idx k0, lg_idx n,
                                                uint64_t stream, uint64_t thr, lg_real scale, int drop) {
    const uint64_t key = lg__nn_dropout_key(stream, (uint64_t)k0 >> 32); /* [k0, k0 + n): one chunk */
    if (drop) {
#pragma omp simd
        for (lg_idx k = 0; k < n; k++) {
            const lg_real v = z[k], e = LG__NN_ELU_NEG(v), y = v <= 0 ? e : v;
            z[k] = y;
            d[k] = LG_FN(lg__nn_keep_or_zero)(y * scale, lg__nn_keep32(key, thr, (uint32_t)k0 + (uint32_t)k));
        }
    } else {
#pragma omp simd
        for (lg_idx k = 0; k < n; k++) {
            const lg_real v = z[k], e = LG__NN_ELU_NEG(v), y = v <= 0 ? e : v;
            z[k] = y;
            d[k] = y;
        }
    }
}
LG__ISA_VARIANTS(LG_FN(lg__elu_drop),
                 (lg_real *restrict z, lg_real *restrict d, lg_idx k0, lg_idx n, uint64_t stream, uint64_t thr,
                  lg_real scale, int drop),
                 (z, d, k0, n, stream, thr, scale, drop))

/* Their backward in place over one chunk: g[k] = (kept(k) ? g[k] / (1 - p)
 * : 0) * ELU' from the output z (the mask skipped when not training or
 * p = 0); and, when d is not NULL, in the same pass d[k] = kept(k) ? z[k] /
 * (1 - p) : 0 (d = z when not training or p = 0): the forward's dropped copy
 * made again, as lg__dropout's body writes it. */
LG__ALWAYS_INLINE void LG__CAT(LG_FN(lg__drop_elu_bwd), _body)(lg_real *restrict g, lg_real *restrict d,
                                                    const lg_real *restrict z, lg_idx k0, lg_idx n, uint64_t stream,
                                                    uint64_t thr, lg_real scale, int drop) {
    const uint64_t key = lg__nn_dropout_key(stream, (uint64_t)k0 >> 32); /* [k0, k0 + n): one chunk */
    if (drop && d) {
#pragma omp simd
        for (lg_idx k = 0; k < n; k++) {
            const int keep = lg__nn_keep32(key, thr, (uint32_t)k0 + (uint32_t)k);
            const lg_real zk = z[k], t = LG_FN(lg__nn_keep_or_zero)(g[k] * scale, keep);
            g[k] = t * (zk > 0 ? LG_R(1) : zk + LG_R(1));
            d[k] = LG_FN(lg__nn_keep_or_zero)(zk * scale, keep);
        }
    } else if (drop) {
#pragma omp simd
        for (lg_idx k = 0; k < n; k++) {
            const lg_real t = LG_FN(lg__nn_keep_or_zero)(g[k] * scale, lg__nn_keep32(key, thr, (uint32_t)k0 + (uint32_t)k));
            g[k] = t * (z[k] > 0 ? LG_R(1) : z[k] + LG_R(1));
        }
    } else if (d) {
#pragma omp simd
        for (lg_idx k = 0; k < n; k++) {
            const lg_real zk = z[k];
            g[k] *= zk > 0 ? LG_R(1) : zk + LG_R(1);
            d[k] = zk;
        }
    } else {
#pragma omp simd
        for (lg_idx k = 0; k < n; k++) g[k] *= z[k] > 0 ? LG_R(1) : z[k] + LG_R(1);
    }
}
LG__ISA_VARIANTS(LG_FN(lg__drop_elu_bwd),
                 (lg_real *restrict g, lg_real *restrict d, const lg_real *restrict z, lg_idx k0, lg_idx n,
                  uint64_t stream, uint64_t thr, lg_real scale, int drop),
                 (g, d, z, k0, n, stream, thr, scale, drop))

/* Their loops over chunks, spread over the threads: the forward on (x = z,
 * d) when fwd, else the backward on (x = g, d, zr = z). */
static void LG_FN(lg__elu_drop_run)(int fwd, lg_real *x, lg_real *d, const lg_real *zr, lg_idx count, double p,
                                    uint64_t seed, uint64_t counter, int training) {
    const int drop = training && p != 0.0;
    const uint64_t stream = lg__nn_dropout_stream(seed, counter), thr = lg__nn_dropout_threshold(p);
    const lg_real scale = (lg_real)(1.0 / (1.0 - p));
    void (*ff)(lg_real *restrict, lg_real *restrict, lg_idx, lg_idx, uint64_t, uint64_t, lg_real, int) =
        LG__ISA_PICK(LG_FN(lg__elu_drop));
    void (*fb)(lg_real *restrict, lg_real *restrict, const lg_real *restrict, lg_idx, lg_idx, uint64_t, uint64_t,
               lg_real, int) = LG__ISA_PICK(LG_FN(lg__drop_elu_bwd));
    const lg_idx nc = (count + LG__NN_CHUNK - 1) / LG__NN_CHUNK;
#pragma omp parallel for schedule(static) if (count >= LG__NN_PAR_MIN)
    for (lg_idx c = 0; c < nc; c++) {
        const lg_idx k0 = c * LG__NN_CHUNK, len = LG_MIN(LG__NN_CHUNK, count - k0);
        if (fwd) ff(x + k0, d + k0, k0, len, stream, thr, scale, drop);
        else fb(x + k0, d ? d + k0 : NULL, zr + k0, k0, len, stream, thr, scale, drop);
    }
}

/* z[k] = ELU(z[k]), then d[k] = kept(k) ? z[k] / (1 - p) : 0 (d = z when not
 * training or p = 0): lg_elu_forward(z, z) then lg_dropout_forward(d, z) */
lg_status LG_FN(lg_elu_dropout_forward)(lg_real *z, lg_real *d, lg_idx count, double p, uint64_t seed, uint64_t counter,
                                        int training) {
    LG_CHECK(lg__nn_dropout_args(__func__, count, p, z, "z", d, "d", sizeof(lg_real)));
    LG_FN(lg__elu_drop_run)(1, z, d, NULL, count, p, seed, counter, training);
    return LG_OK;
}

/* lg_dropout_forward(g, g) then lg_elu_backward_inplace(g, z) */
lg_status LG_FN(lg_dropout_elu_backward_inplace)(lg_real *g, const lg_real *z, lg_idx count, double p, uint64_t seed,
                                                 uint64_t counter, int training) {
    LG_CHECK(lg__nn_dropout_args(__func__, count, p, g, "g", z, "z", sizeof(lg_real)));
    LG_FN(lg__elu_drop_run)(0, g, NULL, z, count, p, seed, counter, training);
    return LG_OK;
}

/* lg_dropout_elu_backward_inplace(g, z) and lg_dropout_forward(d, z) in one
 * pass (one mask for both) */
lg_status LG_FN(lg_dropout_elu_backward_remake)(lg_real *g, lg_real *d, const lg_real *z, lg_idx count, double p,
                                                uint64_t seed, uint64_t counter, int training) {
    LG_CHECK(lg__nn_dropout_args(__func__, count, p, g, "g", z, "z", sizeof(lg_real)));
    LG_CHECK(lg__nn_dropout_args(__func__, count, p, d, "d", z, "z", sizeof(lg_real)));
    LG_CHECK(lg__nn_dropout_args(__func__, count, p, g, "g", d, "d", sizeof(lg_real)));
    LG_FN(lg__elu_drop_run)(0, g, d, z, count, p, seed, counter, training);
    return LG_OK;
}

#undef LG__NN_ELU_NEG
