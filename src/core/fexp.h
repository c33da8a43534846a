/*
 * The float exponential for w <= 0, inline and branch-free, for the loops that
 * must vectorise or stay free of calls: the ELU (expm1, nn/activation_impl.h),
 * the attention softmax and the log-softmax (exp, LG_EXP_NONPOS of
 * core/real.h: attention/att_common_impl.h, nn/loss_impl.h). libm's expf and
 * expm1f are one call per element: the ELU's was a fifth of a DeepGAT epoch;
 * without the softmax's, DeepGAT 30's forward row pass is a tenth shorter and
 * at 8 heads the exps of a block of heads are one vector (bench/README.md,
 * stop 41). Arguments above 0 are outside the contract (where exp overflows,
 * above 88.7, the result is NaN, not inf): callers pass differences from a
 * maximum, which are <= 0.
 *
 * One range reduction and one polynomial for both: w = n ln2 + r, |r| <= ln2/2
 * (Cody-Waite, two constants), expm1(r) = r + r^2 p(r) with p of degree 4,
 * fitted to (expm1(r) - r) / r^2 on that interval (weighted least squares,
 * relative error of exp(r) below 4e-9 before rounding; evaluated in float,
 * both functions stay within 1.1 ulp), then
 *     exp(w)   = 2^n expm1(r) + 2^n
 *     expm1(w) = 2^n expm1(r) + (2^n - 1).
 * The same operations in every instruction-set variant (no FMA contraction:
 * CMakeLists.txt), so the same bits in each.
 */
#ifndef LG_CORE_FEXP_H
#define LG_CORE_FEXP_H

#include <stdint.h>

/* 2^n in *s and expm1(r) in *em for w = n ln2 + r, w clamped below at -87
 * (2^n stays normal: n >= -126). NaN gives NaN in *em. 2^n is read from the
 * bits of the rounding constant's sum (t = 1.5 2^23 + n exactly), so that no
 * float is converted to an integer (undefined for NaN). */
static inline void lg__fexp_parts(float w, float *s, float *em) {
    w = w < -87.0f ? -87.0f : w;
    const float t = w * 1.44269504089f + 12582912.0f; /* 1.5 * 2^23: rounds to nearest */
    const float n = t - 12582912.0f;
    const float r = (w - n * 0.693359375f) + n * 2.12194440e-4f;
    const float r2 = r * r; /* Estrin's scheme: a shorter chain than Horner's */
    const float p = (0.49999997f + 0.16666521f * r) + r2 * ((0.041667227f + 0.0083686933f * r) + r2 * 0.0013879691f);
    *em = r + r2 * p;
    union { float f; uint32_t u; } b = {.f = t};
    b.u = (b.u - 0x4B400000u + 127u) << 23; /* (n + 127) << 23, unsigned: no overflow */
    *s = b.f;
}

/* expm1(w) for w <= 0, within 2 ulp of expm1 (test_nn; 1.07 at worst); -1
 * below -87. */
static inline float lg__expm1f_nonpos(float w) {
    float s, em;
    lg__fexp_parts(w, &s, &em);
    return s * em + (s - 1.0f);
}

/* exp(w) for w <= 0 or NaN (a softmax's exponents), within 2 ulp of exp
 * (test_nn); exactly 1 at 0; 0 below -87, where exp(w) < 1.7e-38 (glibc's
 * expf gives a subnormal or 0 there); NaN stays NaN. 1.03 ulp at worst over
 * every float of [-87, 0]. */
static inline float lg__expf_nonpos(float w) {
    float s, em;
    lg__fexp_parts(w, &s, &em);
    const float v = s * em + s;
    return w < -87.0f ? 0.0f : v;
}

#endif /* LG_CORE_FEXP_H */
