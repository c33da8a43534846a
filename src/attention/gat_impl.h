/*
 * The GAT layer's kernels, written once over lg_real (core/real.h) and
 * compiled as gat_f32.c and gat_f64.c. Maths: docs/attention-spec.md 1-2.
 *
 * Forward, per call:
 *   1. XP = H W                      (OpenBLAS gemm, n x F by F x KC)
 *   2. node pass, over nodes j:      sd_jk = aeff_dst_k . x_jk, ss_jk = aeff_src_k . x_jk,
 *                                    nrm_jk = ||x_jk|| (Lipschitz modes)
 *   3. row pass, over targets i in groups of rows: per block of heads (the
 *                                    heads the inner loop): arg-max of the
 *                                    neighbours' norms, q_i, then over the
 *                                    group's edges at once the scores and
 *                                    LeakyReLU, and the softmax (max
 *                                    subtracted; maxima and sums per row); then
 *                                    per row one edge-major sweep
 *                                    out_i += att'_ij x_j over whole rows of XP.
 * In the paper's form aeff = a_k / ||a_k||, so the normalised score is
 * (aeff . z_ij) / q_i with q_i = sqrt(||x_i||^2 + max_j ||x_j||^2 + eps)
 * (= s_ij / c_i, c_i = ||a_k|| q_i) and no division by a tiny c occurs.
 *
 * Backward (t = the scaled normalised score, e = LeakyReLU(t); records are
 * per edge and head, stored in transposed order, RW scalars per edge):
 *   B0. tpos[e] = position of edge e in the transposed graph and its inverse
 *       tedge (counting sort, O(n + nnz), which also checks gT).
 *   B1. pass over sources j (gT): the backward's only gather, rows g_i:
 *       d x_j = sum_i att'_ij g_i and the dots dL/d att'_ij = m_ij g_i . x_j.
 *   B2. pass over targets i (g), scalars only, per block of heads as in 3:
 *       softmax, LeakyReLU and
 *       normaliser backward -> dL/ds_ij (over the dot, in the record); the
 *       normaliser's coefficient
 *       dL/dq / q (to x_i and x_amax; per edge for the reference form);
 *       per-node sums nsd; partial sums of the bias gradient.
 *   B3. pass over sources j: d x_j += (sum_i dL/ds_ij) aeff_src + nsd_j aeff_dst
 *       + (coefficients) x_j, and partial sums of d aeff, reading the records
 *       in order. Partial sums are per fixed chunk of nodes, added in order.
 *   B4. dW += H^T dXP, d_in += dXP W^T (OpenBLAS; = when d_in is d_out, which
 *       no pass reads after B2). On a large graph dW's product is split along
 *       n over the reduction partials' buffer (core/gemm.h).
 * Every thread writes only the rows it is given (a node's row, or a chunk's
 * partial sums, is computed by one thread alone); no atomics on values; sums
 * run in a fixed order, so results are bitwise identical whatever the number
 * of threads. The per-node passes hand out their rows as schedule(static)
 * would, and a thread whose range is done takes chunks left in the other's
 * (core/steal.h): which thread computes a row changes none of its bits.
 */
#include <string.h>

#include "core/gemm.h"
#include "core/isa.h"
#include "core/passtime.h"
#include "core/real.h"
#include "core/steal.h"
#include "attention/att_cache.h"
#include "attention/gat_internal.h"
#include "attention/att_common_impl.h"
#include "graph/graph_internal.h"

/* Forward and backward are compiled per instruction set (core/isa.h,
 * LG__ISA_FN): gat_f32.c (LG__ISA_DISPATCH: everything, the baseline variant
 * and the dispatchers), gat_f32_avx2.c and gat_f32_avx512.c (LG__ISA_FILE:
 * forward and backward only), and each of the three again at one head of
 * 64, 8 heads of 64 and one head of 32 (gat_f32*_k1c64.c, _k8c64.c, _k1c32.c:
 * LG__ATT_SHAPE_K and _C, att_common_impl.h; the dispatchers call them for
 * those shapes); test_gat compares the variants bitwise. */
/* The LeakyReLU factor of t (1 or the slope, by its sign) in B2's loops over
 * a block of heads (att_common_impl.h, LG__ATT_HLOOP). In the shape variant at
 * several heads those are vector code and the factor a select, which becomes
 * a blend. Elsewhere they are scalar code, and the factor an indexed load
 * from lr = {slope, 1}: GCC makes the select a branch, mispredicted on every
 * other edge (DeepGAT 30's B2 a third longer, bench/README.md, stop 40). The
 * forward's scores (lg__gat_scores) are one loop over a group's edges, vector
 * code at one head too: a select there. */
#if defined(LG__ATT_SHAPE_K) && LG__ATT_SHAPE_K > 1
#define LG__GAT_LEAKY(t) ((t) > 0 ? LG_R(1) : slope)
#else
#define LG__GAT_LEAKY(t) lr[(t) > 0]
#endif
#if defined(LG_REAL_F32)
#define LG__GAT_BIG 1e18f /* squares of values below this cannot overflow */
#else
#define LG__GAT_BIG 1e150
#endif

/* sqrt(a^2 + b^2 + eps) for a, b >= 0, without overflow. */
static inline lg_real lg__ghyp(lg_real a, lg_real b, lg_real eps) {
    lg_real m = a > b ? a : b;
    if (m <= LG__GAT_BIG) return LG_SQRT(a * a + b * b + eps);
    lg_real x = a / m, y = b / m;
    return m * LG_SQRT(x * x + y * y + eps / m / m);
}

/* Scalars gathered per edge (the sources' per-node scores and norms in the
 * forward, the records in B2) are prefetched for the edge LG__GAT_SCALAR_PF
 * ahead in the whole CSR, across row ends, as the rows of XP are
 * (LG__ATT_PF_DIST). One row ahead, as before, was too close: DeepGAT 30's B2
 * 125-135 -> 105-110 µs a layer at 1 thread, 110-113 -> 89-99 at 2
 * (bench/README.md, stop 43). */
#ifndef LG__GAT_SCALAR_PF
#define LG__GAT_SCALAR_PF 16
#endif

/* Prefetches the per-node scalars (ns values a node: the source scores, then
 * the norms) of the sources of row i, one row ahead of its use (B2 in the
 * reference form, which recomputes the scores). */
static inline void lg__gprefetch_sources(const lg_graph *g, lg_idx i, const lg_real *a, lg_idx ns) {
    if (i >= g->n) return;
    for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) __builtin_prefetch(a + g->j[e] * ns);
}

/* The end of B3 for node j and head k (C values): dk += s1 aeff_src +
 * sD aeff_dst + c1 x_jk; the parameter-gradient partials pd += sD x_jk and
 * ps += s1 x_jk. */
static inline void lg__gsrc_tail(lg_real *restrict dk, lg_real *restrict pd, lg_real *restrict ps,
                                 const lg_real *restrict xk, const lg_real *restrict ad, const lg_real *restrict as,
                                 lg_real s1, lg_real sD, lg_real c1, lg_idx C) {
    for (lg_idx c = 0; c < C; c++) {
        dk[c] += s1 * as[c] + sD * ad[c] + c1 * xk[c];
        pd[c] += sD * xk[c];
        ps[c] += s1 * xk[c];
    }
}

/* The scaled normalised score t of one edge and head: s = raw score with the
 * effective vectors, qi = q_i (paper), m = max neighbour norm and nj = ||x_j||
 * (reference form, which also returns q_ij in *qr and c_ij in *cij). One
 * function for forward, backward and read-outs: identical rounding. */
static inline lg_real lg__gscore(lg_att_norm mode, lg_real s, lg_real sc, lg_real qi, lg_real m, lg_real nj,
                                 lg_real a4, lg_real *qr, lg_real *cij) {
    if (mode == LG_ATT_NORM_NONE) return s;
    if (mode == LG_ATT_NORM_LIPSCHITZ) return sc * (s / qi);
    lg_real q = lg__ghyp(m, nj, 0);
    lg_real c = a4 * q + LG_R(LG__GAT_EPS);
    *qr = q;
    *cij = c;
    return sc * (s / c);
}

/* The forward's scores of a group of rows (the row pass), edges [e0, e1), over
 * a block of kn heads: per edge and head t with lg__gscore, v = LeakyReLU(t)
 * into att, t into tsc (but in the reference form). att holds the source's
 * score ss_jk there on entry (staged by the row pass, which reads the
 * sources' norms from the same place: this loop then gathers nothing but in
 * the reference form, and is vector code at one head). One loop over all the
 * group's edges; the LeakyReLU factor a select (a blend in vector code).
 * Called with a constant mode, so that each mode's loop is specialised. */
typedef struct {
    const lg_idx *gj;            /* the graph's sources, g->j                               */
    lg_idx e0, e1, K, NS, kn;    /* the group's edges, heads, per-node source scalars, block */
    const int *er;               /* each edge's row in the group (from e0), or NULL: one row */
    const lg_real *sd, *qi, *m;  /* per row of the group (K apart, from its first row): the
                                    target's scores; q_i (read in the paper's form only);
                                    the maximum neighbour norm (the reference form only)    */
    const lg_real *nrm;          /* every node's norms (NS apart), the reference form        */
    const lg_real *anorm;        /* ||a_k||                                                */
    lg_real *att, *tsc;          /* n x K, from the block's first head                      */
    lg_real sc, slope;           /* the Lipschitz scale, the LeakyReLU slope                */
} lg__gat_scores_in;

static inline __attribute__((always_inline)) void lg__gat_scores(lg_att_norm mode, const lg__gat_scores_in *in) {
    const lg_real slope = in->slope, sc = in->sc, *restrict an = in->anorm;
    const lg_idx K = in->K, NS = in->NS, kn = in->kn, e0 = in->e0;
    const int *restrict er = in->er;
    LG__ATT_ELOOP for (lg_idx e = e0; e < in->e1; e++) {
        const lg_idx r = (er ? er[e - e0] : 0) * K;
        const lg_real *restrict sd = in->sd + r;
        const lg_real *restrict qi = mode == LG_ATT_NORM_LIPSCHITZ ? in->qi + r : NULL; /* (NULL: no offset) */
        const lg_real *restrict m = mode == LG_ATT_NORM_LIPSCHITZ_REF ? in->m + r : NULL;
        const lg_real *restrict nj = mode == LG_ATT_NORM_LIPSCHITZ_REF ? in->nrm + in->gj[e] * NS : NULL;
        lg_real *restrict a = in->att + e * K, *restrict ts = mode == LG_ATT_NORM_LIPSCHITZ_REF ? NULL : in->tsc + e * K;
        LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) {
            lg_real qr = 0, cij = 0;
            const lg_real t = lg__gscore(mode, sd[k] + a[k], sc, mode == LG_ATT_NORM_LIPSCHITZ ? qi[k] : 1,
                                         mode == LG_ATT_NORM_LIPSCHITZ_REF ? m[k] : 0,
                                         mode == LG_ATT_NORM_LIPSCHITZ_REF ? nj[k] : 0, 4 * an[k], &qr, &cij);
            const lg_real v = t * (t > 0 ? LG_R(1) : slope);
            a[k] = v;
            if (mode != LG_ATT_NORM_LIPSCHITZ_REF) ts[k] = t;
        }
    }
}

/* The forward's row pass takes the rows in groups (gat_internal.h,
 * LG__GAT_GR, _GV, _GE): runs of rows of at most gr = min(LG__GAT_GR,
 * LG__GAT_GV / kb) rows, for head blocks of kb = min(K, LG__ATT_HB) heads, and
 * LG__GAT_GE edges, or one row of more edges; the per-edge work that needs
 * no row sum runs over a group's edges at once (lg__gat_scores,
 * lg__asoftmax_rows). What it needs per row and head is in the cache's n x K
 * arrays (sd, q, nmax); its scratch, each edge's row in the group and the
 * softmax's maxima and inverse sums, is the calling thread's block of the
 * cache's fscr (lg__gat_fscr_get). */
typedef struct {
    int *er;          /* LG__GAT_GE: (per edge of the group) its row's place in the group */
    lg_real *mx, *z;  /* LG__GAT_GV each: (per row and head of the block, kn apart) the
                         softmax's maximum, the inverse of its sum                        */
} lg__gat_fscr_blk;
_Static_assert(LG__ATT_HB <= LG__GAT_GV, "a group holds at least one row of a block of heads");

/* The calling thread's block of the cache's forward scratch, which
 * lg__gat_fscr_reserve made for the team. */
static inline lg__gat_fscr_blk lg__gat_fscr_get(const lg_gat_cache *c) {
    char *b = (char *)c->fscr + (size_t)omp_get_thread_num() * lg__gat_fscr_bytes(sizeof(lg_real));
    lg_real *mx = (lg_real *)(b + LG__GAT_GE * sizeof(int));
    const lg__gat_fscr_blk w = {(int *)b, mx, mx + LG__GAT_GV};
    return w;
}

/* What the row pass's groups read and write (lg__gat_group_scores). */
typedef struct {
    const lg_graph *g;
    const lg_real *sd, *ss, *nrm, *anorm; /* target scores; source scores and norms (NS apart); ||a_k|| */
    lg_real *att, *tsc, *q, *nmax;        /* per edge and head; per node and head                   */
    lg_idx *amax;                         /* per node and head: the arg-max neighbour               */
    lg_idx NS;                            /* per-node source scalars                                */
    lg_att_norm mode;
    lg_real sc, slope, eps;
} lg__gat_rows_in;

/* The row pass's normaliser, scores and softmax for the group of rows [ia,
 * ib) (several rows of at most LG__GAT_GE edges in all, or one row) over the
 * heads [k0, k0 + kn) of K: per row one loop over its edges (each edge's row
 * into er, the sources' scores staged into att, the arg-max of ||x_j||,
 * the first, lowest, on ties), q_i, then lg__gat_scores and
 * lg__asoftmax_rows over the group. An empty row gets amax = -1, nmax = 0
 * and q = 0 (the bias alone is its output). Inlined, so that K and the mode
 * are the caller's constants. */
static inline __attribute__((always_inline)) void lg__gat_group_scores(const lg__gat_rows_in *x,
                                                                       const lg__gat_fscr_blk *w, lg_idx ia,
                                                                       lg_idx ib, lg_idx K, lg_idx k0, lg_idx kn) {
    const lg_graph *g = x->g;
    const lg_idx NS = x->NS, Ea = g->p[ia], Eb = g->p[ib];
    const lg_real *ss = x->ss, *nrm = x->nrm;
    lg_real *att = x->att;
    const int lip = x->mode != LG_ATT_NORM_NONE, paper = x->mode == LG_ATT_NORM_LIPSCHITZ;
    int *er = ib > ia + 1 ? w->er : NULL;
    for (lg_idx i = ia; i < ib; i++) {
        const lg_idx e0 = g->p[i], e1 = g->p[i + 1], r = i - ia;
        lg_real m[LG__ATT_HB];
        lg_idx am[LG__ATT_HB];
        if (e1 == e0) {
            for (lg_idx k = 0; k < kn && lip; k++) {
                x->amax[i * K + k0 + k] = -1;
                x->nmax[i * K + k0 + k] = 0;
                if (paper) x->q[i * K + k0 + k] = 0;
            }
            continue;
        }
        LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) m[k] = 0, am[k] = -1;
        for (lg_idx e = e0; e < e1; e++) {
            const lg_idx j = g->j[e];
            const lg_real *sj = ss + j * NS + k0;
            lg_real *a = att + e * K + k0;
            if (e + LG__GAT_SCALAR_PF < g->nnz) __builtin_prefetch(ss + g->j[e + LG__GAT_SCALAR_PF] * NS + k0);
            if (er) er[e - Ea] = (int)r;
            LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) a[k] = sj[k];
            if (lip) {
                const lg_real *nj = nrm + j * NS + k0;
                LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) {
                    if (e == e0 || nj[k] > m[k]) {
                        m[k] = nj[k];
                        am[k] = j;
                    }
                }
            }
        }
        if (lip) {
            LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) {
                x->amax[i * K + k0 + k] = am[k];
                x->nmax[i * K + k0 + k] = m[k];
            }
            if (paper)
                for (lg_idx k = 0; k < kn; k++) x->q[i * K + k0 + k] = lg__ghyp(nrm[i * NS + k0 + k], m[k], x->eps);
        }
    }
    /* scores t (kept for B2 but in the reference form), LeakyReLU, softmax */
    const lg__gat_scores_in blk = {g->j,
                                   Ea,
                                   Eb,
                                   K,
                                   NS,
                                   kn,
                                   er,
                                   x->sd + ia * K + k0,
                                   paper ? x->q + ia * K + k0 : NULL,
                                   lip ? x->nmax + ia * K + k0 : NULL,
                                   lip ? nrm + k0 : NULL,
                                   x->anorm + k0,
                                   att + k0,
                                   x->mode != LG_ATT_NORM_LIPSCHITZ_REF ? x->tsc + k0 : NULL,
                                   x->sc,
                                   x->slope};
    if (x->mode == LG_ATT_NORM_NONE) lg__gat_scores(LG_ATT_NORM_NONE, &blk);
    else if (paper) lg__gat_scores(LG_ATT_NORM_LIPSCHITZ, &blk);
    else lg__gat_scores(LG_ATT_NORM_LIPSCHITZ_REF, &blk);
    lg__asoftmax_rows(att, g->p, ia, ib, K, k0, kn, er, w->mx, w->z);
}

#ifndef LG__ISA_FILE /* not in the instruction-set variants: forward and backward only */
lg_status LG_FN(lg_gat_cache_init)(lg_gat_cache **out, const lg_gat_config *cfg, lg_idx n_cap, lg_idx nnz_cap) {
    return lg__gat_cache_alloc(out, cfg, n_cap, nnz_cap, sizeof(lg_real), NULL, 0, 0);
}

lg_status LG_FN(lg_gat_cache_init_shared)(lg_gat_cache **out, const lg_gat_config *cfg, lg_idx n_cap,
                                          lg_idx nnz_cap, void *ws, size_t ws_bytes) {
    if (!ws) return lg__error(LG_EINVAL, "lg_gat_cache_init_shared: ws is NULL");
    return lg__gat_cache_alloc(out, cfg, n_cap, nnz_cap, sizeof(lg_real), ws, ws_bytes, 0);
}

lg_status LG_FN(lg_gat_params_init)(lg_real *params, const lg_gat_config *cfg, lg_rng *rng) {
    lg_gat_layout lay;
    if (!params || !rng) return lg__error(LG_EINVAL, "lg_gat_params_init: NULL argument");
    LG_CHECK(lg_gat_layout_get(cfg, &lay));
    lg_idx kc = cfg->heads * cfg->head_dim;
    double bw = sqrt(6.0 / (double)(cfg->in_dim + kc)), ba = sqrt(6.0 / (double)(cfg->heads + cfg->head_dim));
    for (lg_idx t = 0; t < lay.a_dst; t++) params[t] = (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * bw);
    for (lg_idx t = lay.a_dst; t < lay.bias; t++) params[t] = (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * ba);
    for (lg_idx t = lay.bias; t < lay.count; t++) params[t] = 0;
    return LG_OK;
}

#endif

/* The forward's per-node pass over nodes [j0, j1): the two scores of each
 * head and, with a normaliser, the norm of each head's row (a gemm epilogue:
 * run on each panel of XP as it is made). */
typedef struct {
    const lg_real *xp, *aeff; /* n x KC; the effective vectors a_dst | a_src (2 KC) */
    lg_real *sd, *ss;         /* n x K; n x NS (the scores, then the norms)          */
    lg_idx K, C;
    int lip;
} LG__ATT_FN(LG_FN(lg__gat_nodes_ctx));

static void LG__ATT_FN(LG_FN(lg__gat_nodes))(void *v, lg_idx j0, lg_idx j1) {
    const LG__ATT_FN(LG_FN(lg__gat_nodes_ctx)) *x = v;
    const lg_idx K = LG__ATT_K(x->K), C = LG__ATT_C(x->C), KC = K * C, NS = lg__gat_ns(K, x->lip);
    for (lg_idx j = j0; j < j1; j++) {
        const lg_real *xj = x->xp + j * KC;
        for (lg_idx k = 0; k < K; k++) {
            x->sd[j * K + k] = lg__adot(x->aeff + k * C, xj + k * C, C);
            x->ss[j * NS + k] = lg__adot(x->aeff + KC + k * C, xj + k * C, C);
            if (x->lip) x->ss[j * NS + K + k] = lg__anorm(xj + k * C, C);
        }
    }
}

lg_status LG__ATT_FN(LG_FN(lg__gat_forward))(lg_real *out, lg_gat_cache *cache, const lg_real *in, const lg_real *params,
                                   const lg_graph *g, const lg_gat_config *cfg, int training, uint64_t seed,
                                   uint64_t counter) {
    static const char fn[] = "lg_gat_forward";
    LG_CHECK(lg__gat_check_cache(cache, cfg, sizeof(lg_real), fn));
    LG__PASS_MARK(LG__PASS_START);
    if (!out || !in || !params) return lg__error(LG_EINVAL, "%s: out, in or params is NULL", fn);
    LG_CHECK(lg__att_check_graph(&cache->head, g, "graph", fn));
    /* out (n x D) must not alias in (n x F): sizes within the cache's, checked at its making */
    LG_CHECK(lg__apart(fn, out, "out", (size_t)(g->n * lg_gat_out_dim(cfg)) * sizeof(lg_real), in, "in",
                       (size_t)(g->n * cfg->in_dim) * sizeof(lg_real)));
    LG_CHECK(lg__gat_fscr_reserve(cache, omp_get_max_threads())); /* (more threads than at its making) */
    cache->have_fwd = 0;

    const lg_idx n = g->n, nnz = g->nnz, F = cfg->in_dim;
    const lg_idx K = LG__ATT_K(cfg->heads), C = LG__ATT_C(cfg->head_dim), KC = K * C;
    const lg_idx D = LG__ATT_D(lg_gat_out_dim(cfg));
    const int concat = cfg->concat;
    const lg_att_norm mode = cfg->norm;
    const int lip = mode != LG_ATT_NORM_NONE, paper = mode == LG_ATT_NORM_LIPSCHITZ;
    const lg_real sc = (lg_real)cfg->lip_scale, slope = (lg_real)cfg->negative_slope;
    const lg_real eps = LG_R(LG__GAT_EPS), invK = LG_R(1.0) / (lg_real)K;
    const lg_real *W = params, *a_dst = params + F * KC, *a_src = a_dst + KC, *bias = a_src + KC;
    const lg_idx NS = lg__gat_ns(K, lip); /* per-node source scalars: K scores, then K norms */
    lg_real *xp = cache->xp, *att = cache->att, *sd = cache->sd, *ss = cache->ss;
    lg_real *nrm = LG__GAT_NORMS(ss, K, lip, n);
    lg_real *q = cache->q, *aeff = cache->aeff, *anorm = cache->anorm, *nmax = cache->nmax, *tsc = cache->tsc;
    lg_idx *amax = cache->amax;

    /* per head: ||a_k|| and the effective vectors (a_k / ||a_k|| in the paper's form) */
    for (lg_idx k = 0; k < K; k++) {
        lg_real A = lg__ghyp(lg__anorm(a_dst + k * C, C), lg__anorm(a_src + k * C, C), 0);
        anorm[k] = A;
        for (lg_idx c = 0; c < C; c++) {
            lg_real d = a_dst[k * C + c], s = a_src[k * C + c];
            if (paper) {
                d = A > 0 ? d / A : 0;
                s = A > 0 ? s / A : 0;
            }
            aeff[k * C + c] = d;
            aeff[KC + k * C + c] = s;
        }
    }
    const int drop = training && cfg->att_dropout > 0;
    const double p = cfg->att_dropout;
    const uint64_t key = lg_hash64(seed ^ lg_hash64(counter));
    const lg_real dscale = (lg_real)(1.0 / (1.0 - p));
    const lg_real mk[2] = {0, dscale}; /* dropout factors */

    if (n > 0) {
        /* 1. XP = H W, and 2. per-node scores and norms, panel by panel */
        LG__ATT_FN(LG_FN(lg__gat_nodes_ctx)) nodes = {xp, aeff, sd, ss, K, C, lip};
        LG_FN(lg__gemm_ep)(CblasNoTrans, CblasNoTrans, n, KC, F, in, F, W, KC, LG_R(0), xp, KC,
                           LG__ATT_FN(LG_FN(lg__gat_nodes)), &nodes);

        LG__PASS_MARK(LG__PASS_GAT_FWD_GEMM);
        /* 3. fused row pass: normaliser, scores, softmax, aggregation; the
         * rows in groups (above), each row's edges in order */
        const lg__gat_rows_in rows = {g, sd, ss, nrm, anorm, att, tsc, q, nmax, amax, NS, mode, sc, slope, eps};
        const lg_idx gr = LG_MIN(LG__GAT_GR, LG__GAT_GV / LG_MIN(K, LG__ATT_HB)); /* rows of a group */
        lg__steal st;
        lg__steal_reset(&st);
#pragma omp parallel
        {
            const lg__gat_fscr_blk fs = lg__gat_fscr_get(cache); /* this thread's scratch */
            for (lg__steal_it it = {0, 0, 0}; lg__steal_next(&st, n, lg__steal_rows(n), &it);) {
                for (lg_idx ia = it.i0, ib; ia < it.i1; ia = ib) {
                    /* the group [ia, ib): several rows of at most LG__GAT_GE edges in all, or one row */
                    lg_idx ne = g->p[ia + 1] - g->p[ia];
                    for (ib = ia + 1; ib < it.i1 && ib - ia < gr && ne + g->p[ib + 1] - g->p[ib] <= LG__GAT_GE;
                         ib++)
                        ne += g->p[ib + 1] - g->p[ib];
                    for (lg_idx k0 = 0; k0 < K; k0 += LG__ATT_HB)
                        lg__gat_group_scores(&rows, &fs, ia, ib, K, k0, LG_MIN(K - k0, LG__ATT_HB));
                    /* aggregation, edge-major over whole rows of XP */
                    for (lg_idx i = ia; i < ib; i++) {
                        const lg_idx e0 = g->p[i], e1 = g->p[i + 1];
                        lg_real *o = out + i * D;
                        if (e1 == e0) {
                            for (lg_idx c = 0; c < D; c++) o[c] = bias[c];
                            continue;
                        }
                        LG__ATT_ACC(acc, o, D);
                        for (lg_idx e = e0; e < e1; e++) {
                            const lg_real *xj = xp + g->j[e] * KC;
                            if (e + LG__ATT_PF_DIST < nnz) lg__aprefetch(xp + g->j[e + LG__ATT_PF_DIST] * KC, KC);
                            for (lg_idx k = 0; k < K; k++) {
                                lg_real w = att[e * K + k];
                                if (drop) w *= mk[lg__akeep(key, e, K, k, p)];
                                if (concat) lg__aaxpy(acc + k * C, w, xj + k * C, C);
                                else lg__aaxpy(acc, w * invK, xj + k * C, C);
                            }
                        }
                        for (lg_idx c = 0; c < D; c++) o[c] = acc[c] + bias[c];
                    }
                }
            }
        }
    }
    LG__PASS_MARK(LG__PASS_GAT_FWD_ROWS);
    cache->fcfg = *cfg;
    cache->n = n;
    cache->nnz = g->nnz;
    cache->fg = lg__graph_id_of(g);
    cache->drop_on = drop;
    cache->drop_key = key;
    cache->drop_p = p;
    cache->have_fwd = 1;
    return LG_OK;
}

lg_status LG__ATT_FN(LG_FN(lg__gat_backward))(lg_real *d_in, lg_real *d_params, const lg_real *d_out, lg_gat_cache *cache,
                                    const lg_real *in, const lg_real *params, const lg_graph *g,
                                    const lg_graph *gT, const lg_gat_config *cfg) {
    static const char fn[] = "lg_gat_backward";
    LG_CHECK(lg__gat_check_cache(cache, cfg, sizeof(lg_real), fn));
    LG__PASS_MARK(LG__PASS_START);
    LG_CHECK(LG__ATT_AFTER_FWD(cache, fn));
    if (!d_params || !d_out || !in || !params) return lg__error(LG_EINVAL, "%s: d_params, d_out, in or params is NULL", fn);
    const lg_gat_config *fc = &cache->fcfg;
    if (fc->lip_scale != cfg->lip_scale || fc->negative_slope != cfg->negative_slope ||
        fc->att_dropout != cfg->att_dropout)
        return lg__error(LG_EINVAL, "%s: config differs from the forward's (lip_scale, negative_slope or att_dropout)", fn);
    /* g must be the forward's, which checked it; gT's rows are checked here
     * (O(n)) and its entries by B0 */
    LG_CHECK(lg__graph_id_check(&cache->fg, g, fn));
    LG_CHECK(lg__att_check_backward_graphs(&cache->head, g, gT, fn));

    const lg_idx n = g->n, nnz = g->nnz, F = cfg->in_dim;
    const lg_idx K = LG__ATT_K(cfg->heads), C = LG__ATT_C(cfg->head_dim), KC = K * C;
    const lg_idx D = LG__ATT_D(lg_gat_out_dim(cfg)), PW = 2 * KC + K + D;
    const int concat = cfg->concat;
    const lg_att_norm mode = cfg->norm;
    const int lip = mode != LG_ATT_NORM_NONE, paper = mode == LG_ATT_NORM_LIPSCHITZ,
              ref = mode == LG_ATT_NORM_LIPSCHITZ_REF;
    const lg_real sc = (lg_real)cfg->lip_scale, slope = (lg_real)cfg->negative_slope;
    const lg_real invK = LG_R(1.0) / (lg_real)K;
    const lg_idx NS = lg__gat_ns(K, lip);
    const lg_real *W = params, *a_dst = params + F * KC, *a_src = a_dst + KC;
    const lg_real *xp = cache->xp, *att = cache->att, *sd = cache->sd, *ss = cache->ss;
    const lg_real *nrm = LG__GAT_NORMS(ss, K, lip, n);
    const lg_real *q = cache->q, *aeff = cache->aeff, *anorm = cache->anorm, *nmax = cache->nmax, *tsc = cache->tsc;
    const lg_idx *amax = cache->amax;
    lg_real *dxp = cache->dxp, *rec = cache->rec, *nsd = cache->nsd, *nss = cache->nss;
    lg_real *ncoef = cache->ncoef, *ncw = cache->ncw, *ndan = cache->ndan, *part = cache->part;
    const lg__epos *tpos, *tedge;
    /* record: dL/d att' (B1), replaced by dL/ds (B2, which reads it first) |
     * (Lipschitz modes) the coefficient of x_j */
    const int keep_t = !ref; /* the forward kept t (tsc) */
    const lg_idx RW = (lip ? 2 : 1) * K;
    const int drop = cache->drop_on;
    const uint64_t key = cache->drop_key;
    const double p = cache->drop_p;
    const lg_real dscale = (lg_real)(1.0 / (1.0 - p));
    const lg_real lr[2] = {slope, 1}, mk[2] = {0, dscale}; /* LeakyReLU slopes, dropout factors */
    (void)lr; /* unused where B2 selects (LG__GAT_LEAKY) */
    if (n == 0) return LG_OK;

    /* B0. position in gT of every edge of g and its inverse, checking gT (or
     * the map lent by a model, made and checked once for these graphs) */
    LG_CHECK(lg__att_tmap_pick(&cache->lent, cache->tpos, cache->tedge, cache->tnext, g, gT, &tpos, &tedge, fn));
    const lg_idx nch = (n + LG__GAT_CHUNK - 1) / LG__GAT_CHUNK;

    LG__PASS_MARK(LG__PASS_GAT_BWD_CHECK);
    /* B1. pass over sources j (transposed graph): the only gather of the
     * backward, rows g_i of the targets of j. d x_j = sum_i att'_ij g_i, and
     * the dots g_i . x_j that the softmax backward needs (through the dropout
     * mask), stored in the edge's record (transposed order). */
    lg__steal st; /* each pass resets it */
    lg__steal_reset(&st);
#pragma omp parallel
    LG__STEAL_FOR(&st, n, lg__steal_rows(n), j) {
        lg_real *dxj = dxp + j * KC;
        const lg_real *xj = xp + j * KC;
        LG__ATT_ACC(dx, dxj, KC);
        for (lg_idx t = gT->p[j]; t < gT->p[j + 1]; t++) {
            const lg_idx e = tedge[t];
            const lg_real *gi = d_out + gT->j[t] * D;
            lg_real *r = rec + t * RW;
            if (t + LG__ATT_PF_DIST < nnz) {
                lg__aprefetch(d_out + gT->j[t + LG__ATT_PF_DIST] * D, D);
                __builtin_prefetch(att + tedge[t + LG__ATT_PF_DIST] * K);
            }
            for (lg_idx k = 0; k < K; k++) {
                const lg_real f = drop ? mk[lg__akeep(key, e, K, k, p)] : 1; /* dropout factor */
                const lg_real w = att[e * K + k] * f;                       /* att'_ij */
                if (concat) {
                    r[k] = f * lg__adot(gi + k * C, xj + k * C, C);
                    lg__aaxpy(dx + k * C, w, gi + k * C, C);
                } else {
                    r[k] = f * (lg__adot(gi, xj + k * C, C) * invK);
                    lg__aaxpy(dx + k * C, w * invK, gi, C);
                }
            }
        }
        for (lg_idx c = 0; c < KC; c++) dxj[c] = dx[c];
    }

    LG__PASS_MARK(LG__PASS_GAT_BWD_B1);
    /* B2. row pass over targets i, in the fixed chunks of nodes of the
     * reductions, on scalars only: softmax, LeakyReLU and normaliser backward
     * from the dots; dL/ds_ij and the coefficients of x_j into the records;
     * the bias gradient's partial sums. */
    lg__steal_reset(&st);
#pragma omp parallel
    LG__STEAL_FOR(&st, nch, 1, b) {
        lg_real *pb = part + b * PW + 2 * KC + K;
        for (lg_idx c = 0; c < D; c++) pb[c] = 0;
        const lg_idx iend = LG_MIN(n, (b + 1) * LG__GAT_CHUNK);
        for (lg_idx i = b * LG__GAT_CHUNK; i < iend; i++) {
            const lg_idx e0 = g->p[i], e1 = g->p[i + 1];
            const lg_real *gi = d_out + i * D;
            lg_real *Sd = nsd + i * K, *cf = lip ? ncoef + i * K : NULL, *dA = ref ? ndan + i * K : NULL;
            for (lg_idx c = 0; c < D; c++) pb[c] += gi[c];
            if (ref) lg__gprefetch_sources(g, i + 1, ss, NS);
            /* heads as the inner loop, in blocks of LG__ATT_HB: each head's
             * sums still run over the row's edges in order (the same bits as
             * head by head), and at several heads the loops over a block are
             * vector code (bench/README.md, stop 40) */
            for (lg_idx k0 = 0; k0 < K; k0 += LG__ATT_HB) {
                const lg_idx kn = LG_MIN(K - k0, LG__ATT_HB);
                lg_real S[LG__ATT_HB], sdk[LG__ATT_HB], cfk[LG__ATT_HB], dAk[LG__ATT_HB];
                LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) S[k] = sdk[k] = cfk[k] = dAk[k] = 0;
                for (lg_idx e = e0; e < e1; e++) {
                    const lg_real *a = att + e * K + k0, *r = rec + tpos[e] * RW + k0;
                    if (e + LG__GAT_SCALAR_PF < nnz) __builtin_prefetch(rec + tpos[e + LG__GAT_SCALAR_PF] * RW + k0);
                    LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) S[k] += a[k] * r[k];
                }
                for (lg_idx e = e0; e < e1; e++) {
                    const lg_real *restrict a = att + e * K + k0, *restrict ts = keep_t ? tsc + e * K + k0 : NULL;
                    lg_real *restrict r = rec + tpos[e] * RW + k0;
                    /* de: softmax backward; dt: LeakyReLU backward;
                     * ds = dL/ds_ij, in place of dL/d att' (read above and not again) */
                    if (mode == LG_ATT_NORM_NONE) {
                        LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) {
                            const lg_real de = a[k] * (r[k] - S[k]), dt = de * LG__GAT_LEAKY(ts[k]);
                            r[k] = dt;
                            sdk[k] += dt;
                        }
                    } else if (paper) { /* t = sc s / q_i; cfk accumulates sum dt t */
                        const lg_real *restrict qi = q + i * K + k0;
                        LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) {
                            const lg_real de = a[k] * (r[k] - S[k]), t = ts[k], dt = de * LG__GAT_LEAKY(t);
                            const lg_real ds = sc * dt / qi[k];
                            cfk[k] += dt * t;
                            r[K + k] = 0;
                            r[k] = ds;
                            sdk[k] += ds;
                        }
                    } else { /* t = sc s / c_ij, c_ij = 4 ||a_k|| q_ij + eps, recomputed as the forward did */
                        const lg_idx j = g->j[e];
                        LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) {
                            const lg_idx kk = k0 + k;
                            const lg_real a4 = 4 * anorm[kk], de = a[k] * (r[k] - S[k]);
                            lg_real qr = 0, cij = 0;
                            const lg_real t = lg__gscore(mode, sd[i * K + kk] + ss[j * NS + kk], sc, 1, nmax[i * K + kk],
                                                         nrm[j * NS + kk], a4, &qr, &cij);
                            const lg_real dt = de * LG__GAT_LEAKY(t), ds = sc * dt / cij, dc = -t * dt / cij;
                            dAk[k] += dc * 4 * qr;
                            const lg_real w = qr > 0 ? dc * a4 / qr : 0; /* dL/dq_ij / q_ij: x_j and x_amax */
                            r[K + k] = w;
                            cfk[k] += w;
                            r[k] = ds;
                            sdk[k] += ds;
                        }
                    }
                }
                LG__ATT_HLOOP for (lg_idx k = 0; k < kn; k++) {
                    const lg_idx kk = k0 + k;
                    Sd[kk] = sdk[k];
                    if (paper) { /* dL/dq_i / q_i: x_i (own) and x_amax */
                        const lg_real qi = q[i * K + kk];
                        cf[kk] = e1 > e0 ? (-cfk[k] / qi) / qi : 0;
                    }
                    if (ref) cf[kk] = cfk[k], dA[kk] = dAk[k]; /* the row's coefficients, to x_amax */
                }
            }
            if (lip) { /* add the normaliser's coefficient to the arg-max's record */
                const lg_idx *am = amax + i * K;
                for (lg_idx e = e0; e < e1; e++)
                    for (lg_idx k = 0; k < K; k++)
                        if (g->j[e] == am[k]) rec[tpos[e] * RW + K + k] += cf[k];
            }
        }
    }

    LG__PASS_MARK(LG__PASS_GAT_BWD_B2);
    /* B3. pass over sources j, in the chunks: the remaining terms of d x_j
     * from the records (read in order; no gather) and the partial sums of
     * the attention vectors' gradients. */
    lg__steal_reset(&st);
#pragma omp parallel
    LG__STEAL_FOR(&st, nch, 1, b) {
        lg_real *pd = part + b * PW, *ps = pd + KC, *pA = pd + 2 * KC;
        for (lg_idx t = 0; t < 2 * KC + K; t++) pd[t] = 0; /* the bias part is B2's */
        const lg_idx jend = LG_MIN(n, (b + 1) * LG__GAT_CHUNK);
        for (lg_idx j = b * LG__GAT_CHUNK; j < jend; j++) {
            lg_real *sS = nss + j * K, *cw = ncw + j * K;
            for (lg_idx k = 0; k < K; k++) {
                sS[k] = 0;
                cw[k] = paper ? ncoef[j * K + k] : 0; /* q_j's own term */
            }
            for (lg_idx t = gT->p[j]; t < gT->p[j + 1]; t++) {
                const lg_real *r = rec + t * RW;
                for (lg_idx k = 0; k < K; k++) {
                    sS[k] += r[k];
                    if (lip) cw[k] += r[K + k];
                }
            }
            for (lg_idx k = 0; k < K; k++) {
                lg__gsrc_tail(dxp + j * KC + k * C, pd + k * C, ps + k * C, xp + j * KC + k * C, aeff + k * C,
                              aeff + KC + k * C, sS[k], nsd[j * K + k], cw[k], C);
                if (ref) pA[k] += ndan[j * K + k];
            }
        }
    }

    LG__PASS_MARK(LG__PASS_GAT_BWD_B3);
    /* reduction partials, in chunk order */
    lg_real *tot = part + nch * PW;
    for (lg_idx t = 0; t < PW; t++) tot[t] = 0;
    for (lg_idx b = 0; b < nch; b++)
        for (lg_idx t = 0; t < PW; t++) tot[t] += part[b * PW + t];
    lg_real *dW = d_params, *dad = d_params + F * KC, *das = dad + KC, *db = das + KC;
    for (lg_idx k = 0; k < K; k++) {
        const lg_real *pdk = tot + k * C, *psk = tot + KC + k * C, A = anorm[k];
        if (paper) { /* aeff = a / A: d a = (d aeff - (aeff . d aeff) aeff) / A; 0 at a = 0 */
            if (A > 0) {
                const lg_real *ad = aeff + k * C, *as = aeff + KC + k * C;
                lg_real dot = lg__adot(ad, pdk, C) + lg__adot(as, psk, C);
                for (lg_idx c = 0; c < C; c++) {
                    dad[k * C + c] += (pdk[c] - dot * ad[c]) / A;
                    das[k * C + c] += (psk[c] - dot * as[c]) / A;
                }
            }
        } else {
            lg_real dA = ref && A > 0 ? tot[2 * KC + k] / A : 0; /* d||a||/da = a / ||a|| */
            for (lg_idx c = 0; c < C; c++) {
                dad[k * C + c] += pdk[c] + dA * a_dst[k * C + c];
                das[k * C + c] += psk[c] + dA * a_src[k * C + c];
            }
        }
    }
    for (lg_idx c = 0; c < D; c++) db[c] += tot[2 * KC + K + c];

    /* B4. dW += H^T dXP (on a large graph split along n, over part, whose
     * partials are summed above); d_in += dXP W^T, or d_in = dXP W^T over
     * d_out when they are one buffer (d_out was last read by B2). With the
     * caller's step (att_cache.h, lg__att_mid), d_in's product, the step,
     * then dW's (which reads in, the step's to write) */
    const lg__att_mid mid = cache->mid;
    if (!mid.fn)
        LG_FN(lg__gemm_ws)(CblasTrans, CblasNoTrans, F, KC, n, in, F, dxp, KC, LG_R(1), dW, KC, part,
                           lg__gat_part_len(cfg, n));
    if (d_in)
        LG_FN(lg__gemm)(CblasNoTrans, CblasTrans, n, F, KC, dxp, KC, W, KC, d_in == d_out ? LG_R(0) : LG_R(1), d_in,
                        F);
    if (mid.fn) {
        LG_CHECK(mid.fn(mid.ctx));
        LG_FN(lg__gemm_ws)(CblasTrans, CblasNoTrans, F, KC, n, in, F, dxp, KC, LG_R(1), dW, KC, part,
                           lg__gat_part_len(cfg, n));
    }
    LG__PASS_MARK(LG__PASS_GAT_BWD_TAIL);
    return LG_OK;
}

#ifndef LG__ISA_FILE
lg_status LG_FN(lg_gat_attention)(lg_real *att, const lg_gat_cache *cache) {
    LG_CHECK(LG__ATT_AFTER_FWD(cache, "lg_gat_attention"));
    if (!att) return lg__error(LG_EINVAL, "lg_gat_attention: att is NULL");
    if (cache->nnz > 0) memcpy(att, cache->att, sizeof(lg_real) * (size_t)(cache->nnz * cache->cfg.heads));
    return LG_OK;
}

lg_status LG_FN(lg_gat_node_normaliser)(lg_real *c, const lg_gat_cache *cache) {
    static const char fn[] = "lg_gat_node_normaliser";
    LG_CHECK(LG__ATT_AFTER_FWD(cache, fn));
    if (!c) return lg__error(LG_EINVAL, "%s: c is NULL", fn);
    const lg_idx K = cache->cfg.heads;
    const lg_real *q = cache->q, *anorm = cache->anorm;
    switch (cache->cfg.norm) {
    case LG_ATT_NORM_NONE:
        for (lg_idx t = 0; t < cache->n * K; t++) c[t] = 1;
        return LG_OK;
    case LG_ATT_NORM_LIPSCHITZ:
        for (lg_idx t = 0; t < cache->n * K; t++) c[t] = anorm[t % K] * q[t];
        return LG_OK;
    default:
        return lg__error(LG_EINVAL, "%s: the %s normaliser is per edge (lg_gat_edge_normaliser)", fn,
                         lg_att_norm_name(cache->cfg.norm));
    }
}

/* Per edge and head: the normaliser (what == 0) or the scaled normalised
 * score (what == 1) of the last forward. */
static lg_status LG_FN(lg__gat_edge_readout)(lg_real *r, const lg_gat_cache *cache, const lg_graph *g, int what,
                                             const char *fn) {
    LG_CHECK(LG__ATT_AFTER_FWD(cache, fn));
    if (!r) return lg__error(LG_EINVAL, "%s: output is NULL", fn);
    LG_CHECK(lg__graph_id_check(&cache->fg, g, fn));
    const lg_idx K = cache->cfg.heads;
    const lg_att_norm mode = cache->cfg.norm;
    const lg_real sc = (lg_real)cache->fcfg.lip_scale;
    const int lip = mode != LG_ATT_NORM_NONE;
    const lg_idx NS = lg__gat_ns(K, lip);
    const lg_real *sd = cache->sd, *ss = cache->ss, *q = cache->q, *anorm = cache->anorm;
    const lg_real *nrm = LG__GAT_NORMS(ss, K, lip, g->n);
    const lg_idx *amax = cache->amax;
    for (lg_idx i = 0; i < g->n; i++)
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
            const lg_idx j = g->j[e];
            for (lg_idx k = 0; k < K; k++) {
                lg_real qi = mode == LG_ATT_NORM_LIPSCHITZ ? q[i * K + k] : 1;
                lg_real m = lip ? nrm[amax[i * K + k] * NS + k] : 0;
                lg_real nj = lip ? nrm[j * NS + k] : 0, qr = 0, cij = 1;
                lg_real t = lg__gscore(mode, sd[i * K + k] + ss[j * NS + k], sc, qi, m, nj, 4 * anorm[k], &qr, &cij);
                if (what) r[e * K + k] = t;
                else r[e * K + k] = mode == LG_ATT_NORM_NONE ? 1 : mode == LG_ATT_NORM_LIPSCHITZ ? anorm[k] * qi : cij;
            }
        }
    return LG_OK;
}

lg_status LG_FN(lg_gat_edge_normaliser)(lg_real *c, const lg_gat_cache *cache, const lg_graph *g) {
    return LG_FN(lg__gat_edge_readout)(c, cache, g, 0, "lg_gat_edge_normaliser");
}

lg_status LG_FN(lg_gat_scores)(lg_real *e, const lg_gat_cache *cache, const lg_graph *g) {
    return LG_FN(lg__gat_edge_readout)(e, cache, g, 1, "lg_gat_scores");
}

/* the public forward and backward: the variant of this CPU and shape (att_common_impl.h) */
LG__ATT_PUBLIC_GAT(lg_status, LG_FN(lg_gat_forward), LG_FN(lg__gat_forward),
                   (lg_real *out, lg_gat_cache *cache, const lg_real *in, const lg_real *params,
                    const lg_graph *g, const lg_gat_config *cfg, int training, uint64_t seed, uint64_t counter),
                   (out, cache, in, params, g, cfg, training, seed, counter))
LG__ATT_PUBLIC_GAT(lg_status, LG_FN(lg_gat_backward), LG_FN(lg__gat_backward),
                   (lg_real *d_in, lg_real *d_params, const lg_real *d_out, lg_gat_cache *cache, const lg_real *in,
                    const lg_real *params, const lg_graph *g, const lg_graph *gT, const lg_gat_config *cfg),
                   (d_in, d_params, d_out, cache, in, params, g, gT, cfg))
#endif /* LG__ISA_FILE */
