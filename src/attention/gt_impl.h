/*
 * The graph-transformer layer's kernels, written once over lg_real
 * (core/real.h) and compiled as gt_f32.c and gt_f64.c. Maths:
 * docs/attention-spec.md 3-4. P = 3KC + D, Z row i = [q_i | k_i | v_i | r_i].
 *
 * Forward, per call:
 *   1. Z = H W                       (ONE OpenBLAS gemm, n x F by F x P)
 *   2. node pass, over nodes j:      z_j += b; per head ||q_jk||, ||k_jk||,
 *                                    ||v_jk|| (Lipschitz modes)
 *      (reference form)              U_k = sqrt(sum_j |N(j)| ||q_jk||^2), one
 *                                    serial sum over nodes in order
 *   3. row pass, over targets i:     per head: arg-max neighbours of ||k||
 *                                    and ||v||, the normaliser (max of three
 *                                    products + eps, its arg-max); then edge-major
 *                                    scores q_ik . k_jk times the head's
 *                                    coefficient, softmax per head (max
 *                                    subtracted), edge-major aggregation
 *                                    m_i += att'_ij v_j over whole rows of Z;
 *                                    then the skip term and the gate.
 *
 * Backward (t = P_ij * cs_ik, P_ij = q_ik . k_jk, cs = 1/sqrt(C), 1/den or
 * 1/(sqrt(C) den)):
 *   B0. tpos[e] = position of edge e in the transposed graph (counting sort,
 *                                    O(n + nnz), which also checks gT).
 *   B1. row pass over targets i:     gate backward -> dm_i and dr_i (into dZ);
 *                                    dA_ij = dm_ik . v_jk (through the dropout
 *                                    mask), softmax backward -> dt_ij;
 *                                    dq_i += sum_j dt_ij cs k_j; dL/dden_i =
 *                                    -sum_j dt_ij t_ij / den_i, sent through
 *                                    the arg-max product to nq (dq_i here), to
 *                                    U (stored) and to nk, nv; for each edge a
 *                                    record (att'_ij, dt_ij cs, and on the
 *                                    arg-max edges dL/dnk / ||k||, dL/dnv / ||v||)
 *                                    written at tpos[e], so that
 *   (reference form)                 dU_k = sum_i dU_ik, serial, in order, and
 *   B2. the pass over sources j (transposed graph, fixed chunks of nodes) reads
 *                                    the records in order and gathers only rows
 *                                    q_i and dm_i: dk_j = sum_i (dt cs)_ij q_i +
 *                                    (arg-max coefficients) k_j; dv_j = sum_i
 *                                    att'_ij dm_ik + (arg-max coefficients) v_j;
 *                                    dq_j += dU_k |N(j)| q_j / U_k; each row of
 *                                    dZ written by one thread; per-chunk partial
 *                                    sums of the bias and gate gradients, added
 *                                    in chunk order.
 *   B3. dW += H^T dZ, d_in += dZ W^T (OpenBLAS; = when d_in is d_out, which
 *       only B1 reads). On a large graph dW's product is split along n over
 *       the reduction partials' buffer (core/gemm.h).
 * Every thread writes only the rows it is given (a node's row, or a chunk's
 * partial sums, is computed by one thread alone); no atomics on values; sums
 * run in a fixed order, so results are bitwise identical whatever the number
 * of threads. The per-node passes hand out their rows as schedule(static)
 * would, and a thread whose range is done takes chunks left in the other's
 * (core/steal.h): which thread computes a row changes none of its bits.
 * Forward and backward are compiled per instruction set (core/isa.h,
 * LG__ISA_FN): gt_f32.c (LG__ISA_DISPATCH: everything, the baseline variant
 * and the dispatchers), gt_f32_avx2.c and gt_f32_avx512.c (LG__ISA_FILE:
 * forward and backward only), and each of the three again at one head of 64
 * (gt_f32*_k1c64.c: LG__ATT_SHAPE_K and _C, att_common_impl.h; the
 * dispatchers call them for that shape); test_gt compares the variants
 * bitwise.
 */
#include <string.h>

#include "core/gemm.h"
#include "core/isa.h"
#include "core/passtime.h"
#include "core/real.h"
#include "core/steal.h"
#include "attention/att_cache.h"
#include "attention/gt_internal.h"
#include "attention/att_common_impl.h"
#include "graph/graph_internal.h"

/* The coefficient cs of a head at a node: t_ij = (q_i . k_j) cs. One function
 * for forward, backward and read-outs: identical rounding. */
static inline lg_real lg__tcoef(lg_att_norm mode, lg_real isc, lg_real den) {
    if (mode == LG_ATT_NORM_NONE) return isc;
    if (mode == LG_ATT_NORM_LIPSCHITZ) return LG_R(1.0) / den;
    return isc / den;
}

/* The logistic function, without overflow for any finite a. */
static inline lg_real lg__tsigmoid(lg_real a) {
    if (a >= 0) return LG_R(1.0) / (LG_R(1.0) + LG_EXP(-a));
    lg_real e = LG_EXP(a);
    return e / (LG_R(1.0) + e);
}

#ifndef LG__ISA_FILE /* not in the instruction-set variants: forward and backward only */
lg_status LG_FN(lg_gt_cache_init)(lg_gt_cache **out, const lg_gt_config *cfg, lg_idx n_cap, lg_idx nnz_cap) {
    return lg__gt_cache_alloc(out, cfg, n_cap, nnz_cap, sizeof(lg_real), NULL, 0, 0);
}

lg_status LG_FN(lg_gt_cache_init_shared)(lg_gt_cache **out, const lg_gt_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                                         void *ws, size_t ws_bytes) {
    if (!ws) return lg__error(LG_EINVAL, "lg_gt_cache_init_shared: ws is NULL");
    return lg__gt_cache_alloc(out, cfg, n_cap, nnz_cap, sizeof(lg_real), ws, ws_bytes, 0);
}

lg_status LG_FN(lg_gt_params_init_as)(lg_real *params, const lg_gt_config *cfg, lg_init scheme, lg_rng *rng) {
    lg_gt_layout lay;
    if (!params || !rng) return lg__error(LG_EINVAL, "lg_gt_params_init: NULL argument");
    if (scheme != LG_INIT_GLOROT && scheme != LG_INIT_PYTORCH)
        return lg__error(LG_EINVAL, "lg_gt_params_init_as: scheme %d is not LG_INIT_GLOROT or LG_INIT_PYTORCH",
                         (int)scheme);
    LG_CHECK(lg_gt_layout_get(cfg, &lay));
    const lg_idx F = cfg->in_dim, KC = cfg->heads * cfg->head_dim, D = lg_gt_out_dim(cfg), P = lay.w_cols;
    const int torch = scheme == LG_INIT_PYTORCH;
    /* nn.Linear's bound is 1/sqrt(fan_in) for its weights and its bias */
    const double bqkv = torch ? 1.0 / sqrt((double)F) : sqrt(6.0 / (double)(F + KC));
    const double bskip = torch ? bqkv : sqrt(6.0 / (double)(F + D));
    const double bgate = torch ? 1.0 / sqrt((double)(3 * D)) : sqrt(6.0 / (double)(3 * D + 1));
    /* Wq, Wk, Wv, Wskip in turn, each row-major over its own columns */
    for (int blk = 0; blk < 4; blk++) {
        const lg_idx c0 = blk * KC, cols = blk < 3 ? KC : D;
        const double bound = blk < 3 ? bqkv : bskip;
        for (lg_idx f = 0; f < F; f++)
            for (lg_idx c = 0; c < cols; c++)
                params[f * P + c0 + c] = (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * bound);
    }
    for (lg_idx t = lay.bq; t < lay.gate; t++)
        params[t] = torch ? (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * bqkv) : 0;
    for (lg_idx t = lay.gate; t < lay.count; t++) params[t] = (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * bgate);
    return LG_OK;
}

lg_status LG_FN(lg_gt_params_init)(lg_real *params, const lg_gt_config *cfg, lg_rng *rng) {
    return LG_FN(lg_gt_params_init_as)(params, cfg, LG_INIT_GLOROT, rng);
}

#endif

/* The forward's per-node pass over nodes [j0, j1): the biases added to Z and,
 * with a normaliser, the norms of q, k and v per head (a gemm epilogue: run on
 * each panel of Z as it is made). */
typedef struct {
    lg_real *z, *nrm;    /* n x P (P = 3 K C + D); n x 3 x K */
    const lg_real *bias; /* P                                */
    lg_idx K, C, D;
    int lip;
} LG__ATT_FN(LG_FN(lg__gt_nodes_ctx));

static void LG__ATT_FN(LG_FN(lg__gt_nodes))(void *v, lg_idx j0, lg_idx j1) {
    const LG__ATT_FN(LG_FN(lg__gt_nodes_ctx)) *x = v;
    const lg_idx K = LG__ATT_K(x->K), C = LG__ATT_C(x->C), KC = K * C, P = 3 * KC + LG__ATT_D(x->D);
    for (lg_idx j = j0; j < j1; j++) {
        lg_real *zj = x->z + j * P;
        for (lg_idx c = 0; c < P; c++) zj[c] += x->bias[c];
        if (x->lip)
            for (lg_idx w = 0; w < 3; w++)
                for (lg_idx k = 0; k < K; k++) x->nrm[(j * 3 + w) * K + k] = lg__anorm(zj + w * KC + k * C, C);
    }
}

lg_status LG__ATT_FN(LG_FN(lg__gt_forward))(lg_real *out, lg_gt_cache *cache, const lg_real *in,
                                            const lg_real *params, const lg_graph *g, const lg_gt_config *cfg,
                                            int training, uint64_t seed, uint64_t counter) {
    static const char fn[] = "lg_gt_forward";
    LG_CHECK(lg__gt_check_cache(cache, cfg, sizeof(lg_real), fn));
    LG__PASS_MARK(LG__PASS_START);
    if (!out || !in || !params) return lg__error(LG_EINVAL, "%s: out, in or params is NULL", fn);
    LG_CHECK(lg__att_check_graph(&cache->head, g, "graph", fn));
    /* out (n x D) must not alias in (n x F): sizes within the cache's, checked at its making */
    LG_CHECK(lg__apart(fn, out, "out", (size_t)(g->n * lg_gt_out_dim(cfg)) * sizeof(lg_real), in, "in",
                       (size_t)(g->n * cfg->in_dim) * sizeof(lg_real)));
    cache->have_fwd = 0;

    const lg_idx n = g->n, nnz = g->nnz, F = cfg->in_dim;
    const lg_idx K = LG__ATT_K(cfg->heads), C = LG__ATT_C(cfg->head_dim), KC = K * C;
    const lg_idx D = LG__ATT_D(lg_gt_out_dim(cfg)), P = 3 * KC + D;
    const int concat = cfg->concat, gate = cfg->gate;
    const lg_att_norm mode = cfg->norm;
    const int lip = mode != LG_ATT_NORM_NONE, ref = mode == LG_ATT_NORM_LIPSCHITZ_REF;
    const lg_real eps = LG_R(LG__GT_EPS), invK = LG_R(1.0) / (lg_real)K;
    const lg_real isc = LG_R(1.0) / LG_SQRT((lg_real)C);
    const lg_real *W = params, *bias = params + F * P, *gw = bias + P;
    lg_real *z = cache->z, *att = cache->att, *nrm = cache->nrm, *den = cache->den, *u = cache->u, *tsc = cache->tsc;
    lg_real *msg = cache->msg, *gb = cache->gb;
    lg_idx *amax = cache->amax;

    const int drop = training && cfg->att_dropout > 0;
    const double p = cfg->att_dropout;
    const uint64_t key = lg_hash64(seed ^ lg_hash64(counter));
    const lg_real dscale = (lg_real)(1.0 / (1.0 - p));

    if (n > 0) {
        /* 1. Z = H W: the four dense maps in one gemm, and 2. biases and
         * per-node norms, panel by panel */
        LG__ATT_FN(LG_FN(lg__gt_nodes_ctx)) nodes = {z, nrm, bias, K, C, D, lip};
        LG_FN(lg__gemm_ep)(CblasNoTrans, CblasNoTrans, n, P, F, in, F, W, P, LG_R(0), z, P,
                           LG__ATT_FN(LG_FN(lg__gt_nodes)), &nodes);
        /* the reference form's U_k: one serial sum in node order */
        if (ref)
            for (lg_idx k = 0; k < K; k++) {
                lg_real s = 0;
                for (lg_idx j = 0; j < n; j++) {
                    lg_real nq = nrm[(j * 3) * K + k];
                    s += (lg_real)(g->p[j + 1] - g->p[j]) * (nq * nq);
                }
                u[k] = LG_SQRT(s);
            }
        LG__PASS_MARK(LG__PASS_GT_FWD_GEMM);

        /* 3. fused row pass: normaliser, scores, softmax, aggregation, skip, gate */
        lg__steal st;
        lg__steal_reset(&st);
#pragma omp parallel
        LG__STEAL_FOR(&st, n, lg__steal_rows(n), i) {
            const lg_idx e0 = g->p[i], e1 = g->p[i + 1];
            const lg_real *zi = z + i * P;
            lg_real *o = out + i * D;
            LG__ATT_ACC(acc, o, D);
            if (lip)
                for (lg_idx k = 0; k < K; k++) {
                    lg_idx ak = -1, av = -1, sel = 0;
                    lg_real nk = 0, nv = 0, dn = 0;
                    if (e1 > e0) { /* arg-max of ||k_j|| and ||v_j||: the first (lowest) on ties */
                        ak = av = g->j[e0];
                        nk = nrm[(ak * 3 + 1) * K + k];
                        nv = nrm[(av * 3 + 2) * K + k];
                        for (lg_idx e = e0 + 1; e < e1; e++) {
                            const lg_idx j = g->j[e];
                            lg_real a = nrm[(j * 3 + 1) * K + k], b = nrm[(j * 3 + 2) * K + k];
                            if (a > nk) nk = a, ak = j;
                            if (b > nv) nv = b, av = j;
                        }
                        lg_real nq = ref ? u[k] : nrm[(i * 3) * K + k];
                        lg_real p0 = nq * nk, p1 = nq * nv, p2 = nk * nv, pm = p0;
                        if (p1 > pm) pm = p1, sel = LG__GT_SEL_QV;
                        if (p2 > pm) pm = p2, sel = LG__GT_SEL_KV;
                        dn = pm + eps;
                    }
                    amax[(i * 3) * K + k] = ak;
                    amax[(i * 3 + 1) * K + k] = av;
                    amax[(i * 3 + 2) * K + k] = sel;
                    den[i * K + k] = dn;
                }
            if (e1 > e0) {
                /* scores, edge-major over whole key rows (kept for B1 in the Lipschitz modes) */
                for (lg_idx e = e0; e < e1; e++) {
                    const lg_real *kj = z + g->j[e] * P + KC;
                    if (e + LG__ATT_PF_DIST < nnz) lg__aprefetch(z + g->j[e + LG__ATT_PF_DIST] * P + KC, 2 * KC);
                    for (lg_idx k = 0; k < K; k++) {
                        const lg_real t =
                            lg__adot(zi + k * C, kj + k * C, C) * lg__tcoef(mode, isc, lip ? den[i * K + k] : 1);
                        att[e * K + k] = t;
                        if (lip) tsc[e * K + k] = t;
                    }
                }
                /* softmax per head, maximum subtracted */
                for (lg_idx k = 0; k < K; k++) lg__asoftmax(att, e0, e1, K, k, 1);
                /* aggregation, edge-major over whole value rows */
                for (lg_idx e = e0; e < e1; e++) {
                    const lg_real *vj = z + g->j[e] * P + 2 * KC;
                    if (e + LG__ATT_PF_DIST < nnz) lg__aprefetch(z + g->j[e + LG__ATT_PF_DIST] * P + 2 * KC, KC);
                    for (lg_idx k = 0; k < K; k++) {
                        lg_real w = att[e * K + k];
                        if (drop) w = lg__akeep(key, e, K, k, p) ? w * dscale : 0;
                        if (concat) lg__aaxpy(acc + k * C, w, vj + k * C, C);
                        else lg__aaxpy(acc, w * invK, vj + k * C, C);
                    }
                }
            }
            for (lg_idx c = 0; c < D; c++) o[c] = acc[c];
            /* skip term r_i and the gate */
            const lg_real *r = zi + 3 * KC;
            if (gate) {
                lg_real *m = msg + i * D;
                lg_real a = 0;
                for (lg_idx c = 0; c < D; c++) {
                    m[c] = o[c];
                    a += gw[c] * m[c] + gw[D + c] * r[c] + gw[2 * D + c] * (m[c] - r[c]);
                }
                lg_real b = lg__tsigmoid(a);
                gb[i] = b;
                for (lg_idx c = 0; c < D; c++) o[c] = b * r[c] + (LG_R(1.0) - b) * m[c];
            } else {
                for (lg_idx c = 0; c < D; c++) o[c] += r[c];
            }
        }
    }
    LG__PASS_MARK(LG__PASS_GT_FWD_ROWS);
    cache->fcfg = *cfg;
    cache->n = n;
    cache->nnz = g->nnz;
    cache->drop_on = drop;
    cache->drop_key = key;
    cache->drop_p = p;
    cache->fg = lg__graph_id_of(g);
    cache->have_fwd = 1;
    return LG_OK;
}

lg_status LG__ATT_FN(LG_FN(lg__gt_backward))(lg_real *d_in, lg_real *d_params, const lg_real *d_out,
                                             lg_gt_cache *cache, const lg_real *in, const lg_real *params,
                                             const lg_graph *g, const lg_graph *gT, const lg_gt_config *cfg) {
    static const char fn[] = "lg_gt_backward";
    LG_CHECK(lg__gt_check_cache(cache, cfg, sizeof(lg_real), fn));
    LG__PASS_MARK(LG__PASS_START);
    LG_CHECK(LG__ATT_AFTER_FWD(cache, fn));
    if (!d_params || !d_out || !in || !params)
        return lg__error(LG_EINVAL, "%s: d_params, d_out, in or params is NULL", fn);
    if (cache->fcfg.att_dropout != cfg->att_dropout)
        return lg__error(LG_EINVAL, "%s: att_dropout %g differs from the forward's %g", fn, cfg->att_dropout,
                         cache->fcfg.att_dropout);
    LG_CHECK(lg__graph_id_check(&cache->fg, g, fn)); /* checked by the forward */
    /* gT's shape here, its entries by the transpose map (B0) */
    LG_CHECK(lg__att_check_backward_graphs(&cache->head, g, gT, fn));

    const lg_idx n = g->n, nnz = g->nnz, F = cfg->in_dim;
    const lg_idx K = LG__ATT_K(cfg->heads), C = LG__ATT_C(cfg->head_dim), KC = K * C;
    const lg_idx D = LG__ATT_D(lg_gt_out_dim(cfg)), P = 3 * KC + D, PW = lg__gt_part_width(cfg);
    const int concat = cfg->concat, gate = cfg->gate;
    const lg_att_norm mode = cfg->norm;
    const int lip = mode != LG_ATT_NORM_NONE, paper = mode == LG_ATT_NORM_LIPSCHITZ,
              ref = mode == LG_ATT_NORM_LIPSCHITZ_REF;
    const lg_real invK = LG_R(1.0) / (lg_real)K, isc = LG_R(1.0) / LG_SQRT((lg_real)C);
    const lg_real *W = params, *gw = params + F * P + P;
    const lg_real *z = cache->z, *att = cache->att, *nrm = cache->nrm, *den = cache->den, *u = cache->u;
    const lg_real *tsc = cache->tsc;
    const lg_real *msg = cache->msg, *gb = cache->gb;
    const lg_idx *amax = cache->amax;
    lg_real *dz = cache->dz, *dm = cache->dm, *eds = cache->eds, *rec = cache->rec, *ncf = cache->ncf;
    lg_real *dun = cache->dun, *ga = cache->ga, *part = cache->part;
    const lg__epos *tpos, *tedge_unused;
    const lg_idx RW = (lip ? 4 : 2) * K; /* record: att' | dt cs | (lip) k coef | v coef */
    const int drop = cache->drop_on;
    const uint64_t key = cache->drop_key;
    const double p = cache->drop_p;
    const lg_real dscale = (lg_real)(1.0 / (1.0 - p));
    if (n == 0) return LG_OK;

    /* B0. position in gT of every edge of g, checking gT (or the map lent by
     * a model, made and checked once for these graphs) */
    LG_CHECK(lg__att_tmap_pick(&cache->lent, cache->tpos, NULL, cache->tnext, g, gT, &tpos, &tedge_unused, fn));
    LG__PASS_MARK(LG__PASS_GT_BWD_CHECK);

    /* B1. row pass over targets i: per-edge records written at their position
     * in gT (each edge once: no two threads write the same place) */
    lg__steal st; /* each pass resets it */
    lg__steal_reset(&st);
#pragma omp parallel
    LG__STEAL_FOR(&st, n, lg__steal_rows(n), i) {
        const lg_idx e0 = g->p[i], e1 = g->p[i + 1];
        const lg_real *gi = d_out + i * D, *zi = z + i * P, *r = zi + 3 * KC;
        lg_real *dzi = dz + i * P, *dmi = dm + i * D;
        /* gate: out = b r + (1 - b) m, b = sigmoid(a) */
        if (gate) {
            const lg_real *m = msg + i * D, b = gb[i];
            lg_real db = 0;
            for (lg_idx c = 0; c < D; c++) db += gi[c] * (r[c] - m[c]);
            lg_real da = db * b * (LG_R(1.0) - b);
            ga[i] = da;
            for (lg_idx c = 0; c < D; c++) {
                dmi[c] = (LG_R(1.0) - b) * gi[c] + da * (gw[c] + gw[2 * D + c]);
                dzi[3 * KC + c] = b * gi[c] + da * (gw[D + c] - gw[2 * D + c]);
            }
        } else {
            for (lg_idx c = 0; c < D; c++) dmi[c] = dzi[3 * KC + c] = gi[c];
        }
        LG__ATT_ACC_WIDE(dqa, dzi, KC); /* dq_i: a local row with AVX-512 at one head of 64, written at the end */
        if (ref)
            for (lg_idx k = 0; k < K; k++) dun[i * K + k] = 0;
        if (e1 == e0) {
            if (dqa != dzi) /* a local row */
                for (lg_idx c = 0; c < KC; c++) dzi[c] = dqa[c];
            continue;
        }
        /* dA_ij = dm_ik . v_jk and the weight of dm_i in dv_j, through the dropout mask */
        for (lg_idx e = e0; e < e1; e++) {
            const lg_real *vj = z + g->j[e] * P + 2 * KC;
            lg_real *rc = rec + tpos[e] * RW;
            if (e + LG__ATT_PF_DIST < nnz) lg__aprefetch(z + g->j[e + LG__ATT_PF_DIST] * P + KC, 2 * KC);
            for (lg_idx k = 0; k < K; k++) {
                lg_real d = concat ? lg__adot(dmi + k * C, vj + k * C, C) : lg__adot(dmi, vj + k * C, C) * invK;
                lg_real a = att[e * K + k];
                if (drop) {
                    int kept = lg__akeep(key, e, K, k, p);
                    d = kept ? d * dscale : 0;
                    a = kept ? a * dscale : 0;
                }
                eds[e * K + k] = d;
                rc[k] = concat ? a : a * invK;
                if (lip) rc[2 * K + k] = rc[3 * K + k] = 0;
            }
        }
        for (lg_idx k = 0; k < K; k++) {
            const lg_real *qi = zi + k * C;
            lg_real *dq = dqa + k * C;
            const lg_real dn = lip ? den[i * K + k] : 1, cs = lg__tcoef(mode, isc, dn);
            const lg_idx ak = lip ? amax[(i * 3) * K + k] : -1, av = lip ? amax[(i * 3 + 1) * K + k] : -1;
            lg_idx eak = -1, eav = -1; /* the arg-maxima's edges */
            lg_real S = 0, T = 0;
            for (lg_idx e = e0; e < e1; e++) S += att[e * K + k] * eds[e * K + k];
            for (lg_idx e = e0; e < e1; e++) {
                const lg_idx j = g->j[e];
                const lg_real *kj = z + j * P + KC + k * C;
                if (e + LG__ATT_PF_DIST < e1) lg__aprefetch(z + g->j[e + LG__ATT_PF_DIST] * P + KC + k * C, C);
                lg_real dt = att[e * K + k] * (eds[e * K + k] - S); /* softmax backward */
                if (lip) {
                    T += dt * tsc[e * K + k]; /* sum_j dt_ij t_ij (t as the forward kept it) */
                    if (j == ak) eak = e;
                    if (j == av) eav = e;
                }
                rec[tpos[e] * RW + K + k] = dt * cs;
                lg__aaxpy(dq, dt * cs, kj, C);
            }
            if (!lip) continue;
            /* through den = max(p0, p1, p2) + eps to the three factors */
            const lg_real Dd = -T / dn;
            const lg_idx sel = amax[(i * 3 + 2) * K + k];
            const lg_real nq = nrm[(i * 3) * K + k], nk = nrm[(ak * 3 + 1) * K + k], nv = nrm[(av * 3 + 2) * K + k];
            const lg_real a = paper ? nq : u[k]; /* the first factor: nq or U */
            lg_real da = 0, dnk = 0, dnv = 0;
            if (sel == LG__GT_SEL_QK) da = Dd * nk, dnk = Dd * a;
            else if (sel == LG__GT_SEL_QV) da = Dd * nv, dnv = Dd * a;
            else dnk = Dd * nv, dnv = Dd * nk;
            /* d||x||/dx = x / ||x||, taken as 0 at x = 0 */
            if (nk > 0) rec[tpos[eak] * RW + 2 * K + k] = dnk / nk;
            if (nv > 0) rec[tpos[eav] * RW + 3 * K + k] = dnv / nv;
            if (paper) {
                if (nq > 0) lg__aaxpy(dq, da / nq, qi, C);
            } else {
                dun[i * K + k] = da;
            }
        }
        if (dqa != dzi) /* a local row */
            for (lg_idx c = 0; c < KC; c++) dzi[c] = dqa[c];
    }

    /* the reference form's dL/dU_k: one serial sum in node order */
    lg_real *dut = ref ? dun + n * K : NULL;
    if (ref)
        for (lg_idx k = 0; k < K; k++) {
            lg_real s = 0;
            for (lg_idx i = 0; i < n; i++) s += dun[i * K + k];
            dut[k] = s;
        }

    LG__PASS_MARK(LG__PASS_GT_BWD_B1);
    /* B2. pass over sources j on the transposed graph, chunks of nodes; the
     * records are read in order, only the rows q_i and dm_i are gathered */
    const lg_idx nch = (n + LG__GT_CHUNK - 1) / LG__GT_CHUNK;
    lg__steal_reset(&st);
#pragma omp parallel
    LG__STEAL_FOR(&st, nch, 1, b) {
        lg_real *pb = part + b * PW, *pg = pb + P;
        for (lg_idx t = 0; t < PW; t++) pb[t] = 0;
        const lg_idx jend = LG_MIN(n, (b + 1) * LG__GT_CHUNK);
        for (lg_idx j = b * LG__GT_CHUNK; j < jend; j++) {
            const lg_real *zj = z + j * P;
            lg_real *dzj = dz + j * P, *cf = lip ? ncf + j * 2 * K : NULL;
            LG__ATT_ACC_WIDE(dk, dzj + KC, KC); /* local rows with AVX-512 at one head of 64, written below */
            LG__ATT_ACC_WIDE(dv, dzj + 2 * KC, KC);
            if (lip)
                for (lg_idx k = 0; k < 2 * K; k++) cf[k] = 0;
            for (lg_idx t = gT->p[j]; t < gT->p[j + 1]; t++) {
                const lg_idx i = gT->j[t];
                const lg_real *qi = z + i * P, *dmi = dm + i * D, *rc = rec + t * RW;
                if (t + LG__ATT_PF_DIST < nnz) {
                    lg__aprefetch(z + gT->j[t + LG__ATT_PF_DIST] * P, KC);
                    lg__aprefetch(dm + gT->j[t + LG__ATT_PF_DIST] * D, D);
                }
                for (lg_idx k = 0; k < K; k++) {
                    lg__aaxpy(dk + k * C, rc[K + k], qi + k * C, C);
                    lg__aaxpy(dv + k * C, rc[k], concat ? dmi + k * C : dmi, C);
                    if (lip) cf[k] += rc[2 * K + k], cf[K + k] += rc[3 * K + k];
                }
            }
            if (lip) /* j as the arg-max of ||k|| or ||v|| of its targets */
                for (lg_idx k = 0; k < K; k++) {
                    if (cf[k] != 0) lg__aaxpy(dk + k * C, cf[k], zj + KC + k * C, C);
                    if (cf[K + k] != 0) lg__aaxpy(dv + k * C, cf[K + k], zj + 2 * KC + k * C, C);
                }
            if (dk != dzj + KC) /* local rows */
                for (lg_idx c = 0; c < KC; c++) dzj[KC + c] = dk[c], dzj[2 * KC + c] = dv[c];
            if (ref) { /* U_k = sqrt(sum_j |N(j)| ||q_jk||^2): dq_j += dU |N(j)| q_j / U */
                const lg_real deg = (lg_real)(g->p[j + 1] - g->p[j]);
                for (lg_idx k = 0; k < K; k++)
                    if (u[k] > 0 && deg > 0) lg__aaxpy(dzj + k * C, dut[k] * deg / u[k], zj + k * C, C);
            }
            for (lg_idx c = 0; c < P; c++) pb[c] += dzj[c];
            if (gate) {
                const lg_real *m = msg + j * D, *r = zj + 3 * KC, a = ga[j];
                for (lg_idx c = 0; c < D; c++) {
                    pg[c] += a * m[c];
                    pg[D + c] += a * r[c];
                    pg[2 * D + c] += a * (m[c] - r[c]);
                }
            }
        }
    }

    /* reduction partials, in chunk order */
    lg_real *tot = part + nch * PW;
    for (lg_idx t = 0; t < PW; t++) tot[t] = 0;
    for (lg_idx b = 0; b < nch; b++)
        for (lg_idx t = 0; t < PW; t++) tot[t] += part[b * PW + t];
    lg_real *dW = d_params, *db = d_params + F * P;
    for (lg_idx t = 0; t < PW; t++) db[t] += tot[t]; /* biases, then the gate vector */
    LG__PASS_MARK(LG__PASS_GT_BWD_B2);

    /* B3. dW += H^T dZ (on a large graph split along n, over part, whose
     * partials are summed above); d_in += dZ W^T, or d_in = dZ W^T over d_out
     * when they are one buffer (d_out was last read by B1). With the
     * caller's step (att_cache.h, lg__att_mid), d_in's product, the step,
     * then dW's (which reads in, the step's to write) */
    const lg__att_mid mid = cache->mid;
    if (!mid.fn)
        LG_FN(lg__gemm_ws)(CblasTrans, CblasNoTrans, F, P, n, in, F, dz, P, LG_R(1), dW, P, part,
                           lg__gt_part_len(cfg, n));
    if (d_in)
        LG_FN(lg__gemm)(CblasNoTrans, CblasTrans, n, F, P, dz, P, W, P, d_in == d_out ? LG_R(0) : LG_R(1), d_in, F);
    if (mid.fn) {
        LG_CHECK(mid.fn(mid.ctx));
        LG_FN(lg__gemm_ws)(CblasTrans, CblasNoTrans, F, P, n, in, F, dz, P, LG_R(1), dW, P, part,
                           lg__gt_part_len(cfg, n));
    }
    LG__PASS_MARK(LG__PASS_GT_BWD_TAIL);
    return LG_OK;
}

#ifndef LG__ISA_FILE
lg_status LG_FN(lg_gt_attention)(lg_real *att, const lg_gt_cache *cache) {
    LG_CHECK(LG__ATT_AFTER_FWD(cache, "lg_gt_attention"));
    if (!att) return lg__error(LG_EINVAL, "lg_gt_attention: att is NULL");
    if (cache->nnz > 0) memcpy(att, cache->att, sizeof(lg_real) * (size_t)(cache->nnz * cache->cfg.heads));
    return LG_OK;
}

lg_status LG_FN(lg_gt_normaliser)(lg_real *c, const lg_gt_cache *cache) {
    static const char fn[] = "lg_gt_normaliser";
    LG_CHECK(LG__ATT_AFTER_FWD(cache, fn));
    if (!c) return lg__error(LG_EINVAL, "%s: c is NULL", fn);
    const lg_idx K = cache->cfg.heads;
    const lg_real sq = LG_SQRT((lg_real)cache->cfg.head_dim);
    const lg_real *den = cache->den;
    for (lg_idx t = 0; t < cache->n * K; t++) switch (cache->cfg.norm) {
        case LG_ATT_NORM_LIPSCHITZ: c[t] = den[t]; break;
        case LG_ATT_NORM_LIPSCHITZ_REF: c[t] = sq * den[t]; break;
        default: c[t] = sq; break;
        }
    return LG_OK;
}

lg_status LG_FN(lg_gt_scores)(lg_real *t, const lg_gt_cache *cache, const lg_graph *g) {
    static const char fn[] = "lg_gt_scores";
    LG_CHECK(LG__ATT_AFTER_FWD(cache, fn));
    if (!t) return lg__error(LG_EINVAL, "%s: t is NULL", fn);
    LG_CHECK(lg__graph_id_check(&cache->fg, g, fn));
    const lg_idx K = cache->cfg.heads, C = cache->cfg.head_dim, KC = K * C;
    const lg_idx P = 3 * KC + lg_gt_out_dim(&cache->cfg);
    const lg_att_norm mode = cache->cfg.norm;
    const lg_real isc = LG_R(1.0) / LG_SQRT((lg_real)C);
    const lg_real *z = cache->z, *den = cache->den;
    for (lg_idx i = 0; i < g->n; i++)
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
            const lg_real *kj = z + g->j[e] * P + KC;
            for (lg_idx k = 0; k < K; k++)
                t[e * K + k] = lg__adot(z + i * P + k * C, kj + k * C, C) *
                               lg__tcoef(mode, isc, mode != LG_ATT_NORM_NONE ? den[i * K + k] : 1);
        }
    return LG_OK;
}

lg_status LG_FN(lg_gt_gate)(lg_real *b, const lg_gt_cache *cache) {
    LG_CHECK(LG__ATT_AFTER_FWD(cache, "lg_gt_gate"));
    if (!b) return lg__error(LG_EINVAL, "lg_gt_gate: b is NULL");
    if (!cache->cfg.gate) return lg__error(LG_EINVAL, "lg_gt_gate: the layer has no gate");
    if (cache->n > 0) memcpy(b, cache->gb, sizeof(lg_real) * (size_t)cache->n);
    return LG_OK;
}

/* the public forward and backward: the variant of this CPU and shape (att_common_impl.h) */
LG__ATT_PUBLIC(lg_status, LG_FN(lg_gt_forward), LG_FN(lg__gt_forward),
               (lg_real *out, lg_gt_cache *cache, const lg_real *in, const lg_real *params, const lg_graph *g,
                const lg_gt_config *cfg, int training, uint64_t seed, uint64_t counter),
               (out, cache, in, params, g, cfg, training, seed, counter))
LG__ATT_PUBLIC(lg_status, LG_FN(lg_gt_backward), LG_FN(lg__gt_backward),
               (lg_real *d_in, lg_real *d_params, const lg_real *d_out, lg_gt_cache *cache, const lg_real *in,
                const lg_real *params, const lg_graph *g, const lg_graph *gT, const lg_gt_config *cfg),
               (d_in, d_params, d_out, cache, in, params, g, gT, cfg))
#endif /* LG__ISA_FILE */
