/*
 * Helpers shared by the attention kernels (gat_impl.h, gt_impl.h), generic
 * over the scalar (core/real.h): included once by each impl after real.h.
 * Everything is static inline; one definition serves both layers.
 */
#ifndef LG_ATT_COMMON_IMPL_H
#define LG_ATT_COMMON_IMPL_H

/* Shape variants (core/isa.h): a file that defines LG__ATT_SHAPE_K and
 * LG__ATT_SHAPE_C before including an impl compiles its forward and backward
 * with that shape fixed: K heads of C values (and D = C, one head's output
 * width, at one head; D from the configuration otherwise: concatenated or
 * averaged), named with the suffix _k<K>c<C>; the dispatchers call them when
 * the configuration has that shape. The shapes: one head of 64 (GAT and GT:
 * the deep models' width, the paper's and the suite's narrow
 * configurations), where the loops per edge are short enough for their
 * overhead to count (bench/README.md: DeepGAT 30's epoch 13-16% shorter), and
 * for GAT 8 heads of 64 (the paper's setting: the per-edge passes 11-14%
 * shorter, an epoch 2-4%) and one head of 32 (TREES' width). Elsewhere the
 * sizes are the configuration's. */
#define LG__ATT_IS(cfg, k, c) ((cfg) && (cfg)->heads == (k) && (cfg)->head_dim == (c))
/* An attention layer's public function pub over its impl (forward or
 * backward): the variant of this CPU, and the shape variant at one head of 64
 * when the function's argument named cfg has that shape (core/isa.h);
 * LG__ATT_PUBLIC_GAT also at 8 heads of 64 and at one head of 32. */
#define LG__ATT_PUBLIC(ret, pub, impl, params, args) \
    LG__ISA_PUBLIC_SHAPE(ret, pub, impl, LG__CAT(impl, _k1c64), LG__ATT_IS(cfg, 1, 64), params, args)
#define LG__ATT_PUBLIC_GAT(ret, pub, impl, params, args)                                                   \
    LG__ISA_PUBLIC_SHAPE3(ret, pub, impl, LG__CAT(impl, _k1c64), LG__ATT_IS(cfg, 1, 64), LG__CAT(impl, _k8c64), \
                          LG__ATT_IS(cfg, 8, 64), LG__CAT(impl, _k1c32), LG__ATT_IS(cfg, 1, 32), params, args)
#ifdef LG__ATT_SHAPE_K
#define LG__ATT_FN(name) LG__ISA_FN(LG__CAT(name, LG__CAT(LG__CAT(_k, LG__ATT_SHAPE_K), LG__CAT(c, LG__ATT_SHAPE_C))))
#define LG__ATT_K(k) ((lg_idx)LG__ATT_SHAPE_K)
#define LG__ATT_C(c) ((lg_idx)LG__ATT_SHAPE_C)
#define LG__ATT_D(d) (LG__ATT_SHAPE_K == 1 ? (lg_idx)LG__ATT_SHAPE_C : (d))
#else
#define LG__ATT_FN(name) LG__ISA_FN(name)
#define LG__ATT_K(k) (k)
#define LG__ATT_C(c) (c)
#define LG__ATT_D(d) (d)
#endif

/* In the shape variant of 32 values a head, lg__adot's loop is kept a loop:
 * GCC unrolls a loop of 4 constant trips completely before vectorising, and
 * left its 32 products scalar (the per-node pass twice as long). Elsewhere
 * the compiler's choice (the pragma changes the code of every variant). */
#if defined(LG__ATT_SHAPE_C) && LG__ATT_SHAPE_C <= 32
#define LG__ADOT_LOOP _Pragma("GCC unroll 1")
#else
#define LG__ADOT_LOOP
#endif

/* sum_c a[c] b[c] in a fixed order (8 interleaved partial sums, then the
 * tail), which the compiler can vectorise without reordering. O(n). */
static inline lg_real lg__adot(const lg_real *restrict a, const lg_real *restrict b, lg_idx n) {
    lg_real s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const lg_idx m = n - n % 8; /* (the tail's bounds written so that a
                                   constant n leaves no loop to analyse) */
    LG__ADOT_LOOP
    for (lg_idx c = 0; c < m; c += 8)
        for (int l = 0; l < 8; l++) s[l] += a[c + l] * b[c + l];
    lg_real r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (lg_idx c = m; c < n; c++) r += a[c] * b[c];
    return r;
}

/* y += w x over n values. */
static inline void lg__aaxpy(lg_real *restrict y, lg_real w, const lg_real *restrict x, lg_idx n) {
    for (lg_idx c = 0; c < n; c++) y[c] += w * x[c];
}

/* ||x||, without overflow when the squares would overflow. O(n). */
static inline lg_real lg__anorm(const lg_real *x, lg_idx n) {
    lg_real s = lg__adot(x, x, n);
    if (s <= LG_REAL_MAX) return LG_SQRT(s);
    lg_real m = 0;
    for (lg_idx c = 0; c < n; c++) m = LG_FABS(x[c]) > m ? LG_FABS(x[c]) : m;
    if (!(m > 0 && m <= LG_REAL_MAX)) return s; /* an infinity or NaN among x */
    lg_real t = 0;
    for (lg_idx c = 0; c < n; c++) {
        lg_real v = x[c] / m;
        t += v * v;
    }
    return m * LG_SQRT(t);
}

/* Heads are taken in blocks of at most LG__ATT_HB where a loop runs over the
 * heads inside a loop over a row's edges (the GAT layer's forward row pass and
 * B2, the softmax below); LG__ATT_HLOOP marks such a loop over a block. In the
 * shape variants at several heads it is kept a loop, which GCC vectorises,
 * rather than unrolled first into scalar code; elsewhere it is left to the
 * compiler. */
#define LG__ATT_HB 16
#if defined(LG__ATT_SHAPE_K) && LG__ATT_SHAPE_K > 1
#define LG__ATT_HLOOP _Pragma("GCC unroll 1") _Pragma("GCC ivdep")
#else
#define LG__ATT_HLOOP
#endif
/* A loop over a group of rows' edges that reads per-row values (maxima,
 * sums, scores) through each edge's row in the group and writes per-edge
 * values: different arrays, which the compiler cannot tell apart when they
 * are the cache's; without ivdep GCC keeps such a loop scalar (DeepGAT 30's
 * forward row pass 212-220 µs against 169-176 at 2 threads, bench/README.md,
 * stop 44). */
#define LG__ATT_ELOOP _Pragma("GCC ivdep")

/* The softmax of the rows [ia, ib) of a CSR (row pointers p) over the heads
 * [k0, k0 + kn) of K (kn <= LG__ATT_HB), in place: att[e K + k] for the edges
 * e of each row become exp(a - max) / sum, each head's maximum over the row
 * subtracted (every exponent <= 0: no overflow; the sum >= 1) and the sum's
 * inverse multiplied; each head's maximum and sum run over the row's edges in
 * order. er gives each edge of the rows (from p[ia]) its row's place r = i -
 * ia, or is NULL for one row; mx and z are scratch of (ib - ia) kn values
 * (the maxima and the sums' inverses).
 * The maxima and sums are loops per row; the exponentials and the products by
 * the inverse are loops over all the rows' edges at once (long enough for
 * vector code: over a row's few edges each the loops' overhead dominated,
 * bench/README.md, stop 43), which change no bit: each value is computed by
 * the same operations either way. An empty row is left as it is. The
 * exponential is LG_EXP_NONPOS (in float inline, core/fexp.h; exponents below
 * -87 give 0). The one softmax of every attention layer. O(edges kn). */
static inline void lg__asoftmax_rows(lg_real *att, const lg_idx *p, lg_idx ia, lg_idx ib, lg_idx K, lg_idx k0,
                                     lg_idx kn, const int *er, lg_real *restrict mx, lg_real *restrict z) {
    const lg_idx E0 = p[ia], E1 = p[ib];
    if (E1 == E0) return; /* empty rows only: no sum to invert */
    for (lg_idx i = ia; i < ib; i++) {
        const lg_idx e0 = p[i], e1 = p[i + 1];
        lg_real m[LG__ATT_HB]; /* in registers: mx may be any buffer for the compiler */
        if (e1 == e0) continue;
        const lg_real *a0 = att + e0 * K + k0;
        LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) m[k] = a0[k];
        for (lg_idx e = e0 + 1; e < e1; e++) {
            const lg_real *a = att + e * K + k0;
            LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) m[k] = a[k] > m[k] ? a[k] : m[k];
        }
        LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) mx[(i - ia) * kn + k] = m[k];
    }
    if (!er) { /* one row: the exponentials and their sum in one loop */
        if (E1 == E0 + 1) { /* one edge (TREES' leaves are half its rows) */
            lg_real *a = att + E0 * K + k0;
            for (lg_idx k = 0; k < kn; k++) {
                if (a[k] - a[k] == 0) { /* a finite score: exp(0) = 1, times 1/1 */
                    a[k] = 1;
                } else { /* the general path's steps: NaN */
                    const lg_real v = LG_EXP_NONPOS(a[k] - a[k]);
                    a[k] = v * (1 / v);
                }
            }
            return;
        }
        lg_real m[LG__ATT_HB], s[LG__ATT_HB]; /* in registers (above) */
        LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) m[k] = mx[k], s[k] = 0;
        for (lg_idx e = E0; e < E1; e++) {
            lg_real *restrict a = att + e * K + k0;
            LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) {
                a[k] = LG_EXP_NONPOS(a[k] - m[k]);
                s[k] += a[k];
            }
        }
        LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) z[k] = 1 / s[k];
    } else {
        LG__ATT_ELOOP for (lg_idx e = E0; e < E1; e++) {
            lg_real *restrict a = att + e * K + k0;
            const lg_real *restrict m = mx + er[e - E0] * kn;
            LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) a[k] = LG_EXP_NONPOS(a[k] - m[k]);
        }
        for (lg_idx i = ia; i < ib; i++) {
            const lg_idx e0 = p[i], e1 = p[i + 1];
            lg_real s[LG__ATT_HB]; /* in registers (above) */
            if (e1 == e0) { /* no sum to invert */
                continue;
            }
            LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) s[k] = 0;
            for (lg_idx e = e0; e < e1; e++) {
                const lg_real *a = att + e * K + k0;
                LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) s[k] += a[k];
            }
            LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) z[(i - ia) * kn + k] = 1 / s[k];
        }
    }
    LG__ATT_ELOOP for (lg_idx e = E0; e < E1; e++) {
        lg_real *restrict a = att + e * K + k0;
        const lg_real *restrict s = z + (er ? er[e - E0] : 0) * kn;
        LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) a[k] *= s[k];
    }
}

/* The same for one row [e0, e1) (e1 > e0): lg__asoftmax_rows over that row. */
static inline void lg__asoftmax(lg_real *att, lg_idx e0, lg_idx e1, lg_idx K, lg_idx k0, lg_idx kn) {
    const lg_idx p[2] = {e0, e1};
    lg_real mx[LG__ATT_HB] = {0}, z[LG__ATT_HB]; /* (e1 > e0: mx is set; GCC cannot tell) */
    lg__asoftmax_rows(att, p, 0, 1, K, k0, kn, NULL, mx, z);
}

/* A zeroed row accumulator named name for a row that ends in dst (len
 * values): in the shape variants at one head, whose row length is a
 * constant, a local row the compiler keeps in registers across the edges
 * (dst written once at the end, by the caller: DeepGAT 30's forward row pass
 * 15% shorter on the Zen 3 VM, bench/README.md); elsewhere dst itself. The
 * same sums in the same order either way: the same bits. */
#define LG__ATT_ACC_LOCAL(name, dst, len) lg_real name[LG__ATT_SHAPE_C] = {0}
#define LG__ATT_ACC_MEM(name, dst, len) \
    lg_real *name = (dst);              \
    for (lg_idx c_ = 0; c_ < (len); c_++) name[c_] = 0
#if defined(LG__ATT_SHAPE_K) && LG__ATT_SHAPE_K == 1
#define LG__ATT_ACC LG__ATT_ACC_LOCAL
#else
#define LG__ATT_ACC LG__ATT_ACC_MEM
#endif
/* The same for a pass that keeps two or three such rows at once besides its
 * other values (the graph transformer's backward): local rows only where the
 * registers hold them, AVX-512's 32; with AVX2's 16 they spill, and its B2 was
 * a fifth slower than with the rows in memory (bench/README.md, stop 41). */
#if defined(LG__ATT_SHAPE_K) && LG__ATT_SHAPE_K == 1 && defined(__AVX512F__)
#define LG__ATT_ACC_WIDE LG__ATT_ACC_LOCAL
#else
#define LG__ATT_ACC_WIDE LG__ATT_ACC_MEM
#endif

/* Attention dropout, the rule of both layers (lipgnn/gat.h): 1 if edge e,
 * head k survives with key = lg_hash64(seed ^ lg_hash64(counter)). */
static inline int lg__akeep(uint64_t key, lg_idx e, lg_idx K, lg_idx k, double p) {
    uint64_t h = lg__hash64(key + ((uint64_t)e * (uint64_t)K + (uint64_t)k) * 0x9E3779B97F4A7C15ULL);
    return (double)(h >> 11) * 0x1.0p-53 >= p;
}

/* Gathered rows are latency-bound: each edge pass prefetches the row of the
 * edge LG__ATT_PF_DIST ahead (in the whole CSR, across row ends): 8, or 2 in
 * the shape variant at 8 heads of 64, whose rows are 2 KB (4 KB in flight:
 * bench/README.md, "prefetch distance in bytes"; a constant there, where a
 * distance computed at run time cost the narrow models 1-2%). */
#ifndef LG__ATT_PF_DIST
#if defined(LG__ATT_SHAPE_K) && LG__ATT_SHAPE_K * LG__ATT_SHAPE_C >= 512
#define LG__ATT_PF_DIST 2
#else
#define LG__ATT_PF_DIST 8
#endif
#endif

/* Prefetches the len values of row r into the cache. */
static inline void lg__aprefetch(const lg_real *r, lg_idx len) {
    for (lg_idx c = 0; c < len; c += (lg_idx)(64 / sizeof(lg_real))) __builtin_prefetch(r + c);
}

#endif /* LG_ATT_COMMON_IMPL_H */
