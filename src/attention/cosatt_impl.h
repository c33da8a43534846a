/*
 * The scaled cosine-similarity attention layer's kernels (lipgnn/cosatt.h),
 * written once over lg_real (core/real.h), compiled as cosatt_f32.c and
 * cosatt_f64.c. P = 3KC; row i of the hat buffer = [qhat_i | khat_i | vhat_i].
 *
 * Forward:
 *   1. Z = H W                        (one gemm, n x F by F x P)
 *   2. node pass over j:              z_j += b; per head slice x of q, k, v:
 *                                     r = 1/sqrt(||x||^2 + eps), xhat = r x
 *                                     (in place: Z becomes the hats)
 *   3. row pass over targets i:       s_ij = tau qhat_i . khat_j edge-major,
 *                                     softmax per head (max subtracted),
 *                                     m_i = nu sum_j att_ij vhat_j
 *   4. out = M W_O + b_O              (one gemm, then the bias)
 *
 * Backward (d hats first, then through the normalisation):
 *   B0. dM = dOut W_O^T, dW_O += M^T dOut (gemms); tpos = the position of each
 *       edge of g in gT (counting sort, also checks gT).
 *   B1. row pass over targets i:      dA_ij = nu dm_i . vhat_j; softmax
 *                                     backward ds_ij = att (dA - sum att dA);
 *                                     dqhat_i = tau sum_j ds_ij khat_j; per
 *                                     edge a record (nu att_ij, tau ds_ij)
 *                                     written at tpos[e]
 *   B2. source pass over j (gT, fixed chunks of nodes): dkhat_j = sum_i
 *       (tau ds)_ij qhat_i, dvhat_j = sum_i (nu att)_ij dm_i, reading the
 *       records in order; then per slice dx = r (dxhat - xhat (xhat . dxhat))
 *       for q, k and v of row j; chunk partials of the bias gradients (b from
 *       dZ, b_O from dOut), summed in chunk order.
 *   B3. dW += H^T dZ; d_in += dZ W^T.
 * Each thread writes only the rows (or chunk partials) it is given, each computed
 * by one thread alone; no atomics on values; fixed summation orders: bitwise
 * identical results for any number of threads. The per-node passes hand out
 * their rows as schedule(static) would, and a thread whose range is done takes
 * chunks left in the other's (core/steal.h): which thread computes a row
 * changes none of its bits.
 */
#include <string.h>

#include "core/gemm.h"
#include "core/real.h"
#include "core/steal.h"
#include "attention/att_cache.h"
#include "attention/cosatt_internal.h"
#include "attention/att_common_impl.h"
#include "graph/graph_internal.h"

lg_status LG_FN(lg_cosatt_cache_init)(lg_cosatt_cache **out, const lg_cosatt_config *cfg, lg_idx n_cap,
                                      lg_idx nnz_cap) {
    return lg__cos_cache_alloc(out, cfg, n_cap, nnz_cap, sizeof(lg_real));
}

lg_status LG_FN(lg_cosatt_params_init)(lg_real *params, const lg_cosatt_config *cfg, lg_rng *rng) {
    lg_cosatt_layout lay;
    if (!params || !rng) return lg__error(LG_EINVAL, "lg_cosatt_params_init: NULL argument");
    LG_CHECK(lg_cosatt_layout_get(cfg, &lay));
    const lg_idx F = cfg->in_dim, KC = cfg->heads * cfg->head_dim, D = cfg->out_dim, P = lay.w_cols;
    const double bw = sqrt(6.0 / (double)(F + KC)), bo = sqrt(6.0 / (double)(KC + D));
    for (int blk = 0; blk < 3; blk++)
        for (lg_idx f = 0; f < F; f++)
            for (lg_idx c = 0; c < KC; c++)
                params[f * P + blk * KC + c] = (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * bw);
    for (lg_idx t = 0; t < KC * D; t++) params[lay.wo + t] = (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * bo);
    for (lg_idx t = lay.b; t < lay.wo; t++) params[t] = 0;
    for (lg_idx t = lay.bo; t < lay.count; t++) params[t] = 0;
    if (cfg->spectral_init) {
        const uint64_t s1 = lg_rng_next(rng), s2 = lg_rng_next(rng);
        LG_CHECK(LG_FN(lg_spectral_rescale)(params + lay.w, F, P, P, LG_SPECTRAL_ITERS, s1, NULL));
        LG_CHECK(LG_FN(lg_spectral_rescale)(params + lay.wo, KC, D, D, LG_SPECTRAL_ITERS, s2, NULL));
    }
    return LG_OK;
}

lg_status LG_FN(lg_cosatt_forward)(lg_real *out, lg_cosatt_cache *cache, const lg_real *in, const lg_real *params,
                                   const lg_graph *g, const lg_cosatt_config *cfg) {
    static const char fn[] = "lg_cosatt_forward";
    LG_CHECK(lg__cos_check_cache(cache, cfg, sizeof(lg_real), fn));
    if (!out || !in || !params) return lg__error(LG_EINVAL, "%s: out, in or params is NULL", fn);
    LG_CHECK(lg__att_check_graph(&cache->head, g, "graph", fn));
    LG_CHECK(lg__apart(fn, out, "out", (size_t)(g->n * cfg->out_dim) * sizeof(lg_real), in, "in",
                       (size_t)(g->n * cfg->in_dim) * sizeof(lg_real)));
    cache->have_fwd = 0;

    const lg_idx n = g->n, nnz = g->nnz, F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C;
    const lg_idx P = 3 * KC, D = cfg->out_dim;
    const lg_real tau = (lg_real)cfg->tau, nu = (lg_real)cfg->nu, eps = (lg_real)cfg->eps;
    const lg_real *W = params, *bias = params + F * P, *Wo = bias + P, *bo = Wo + KC * D;
    lg_real *zh = cache->zh, *rinv = cache->rinv, *att = cache->att, *msg = cache->msg;

    if (n > 0) {
        /* 1. Z = H W */
        LG_FN(lg__gemm)(CblasNoTrans, CblasNoTrans, n, P, F, in, F, W, P, LG_R(0), zh, P);
        /* 2. biases, row norms, hats in place */
#pragma omp parallel for schedule(static)
        for (lg_idx j = 0; j < n; j++) {
            lg_real *zj = zh + j * P;
            for (lg_idx c = 0; c < P; c++) zj[c] += bias[c];
            for (lg_idx w = 0; w < 3 * K; w++) {
                lg_real *x = zj + w * C;
                /* ||x||^2 + eps, scaled by the largest |x_c| when it would overflow */
                lg_real ss = lg__adot(x, x, C), r;
                if (ss <= LG_REAL_MAX) {
                    r = LG_R(1.0) / LG_SQRT(ss + eps);
                } else {
                    lg_real m = 0, t = 0;
                    for (lg_idx c = 0; c < C; c++) m = LG_FABS(x[c]) > m ? LG_FABS(x[c]) : m;
                    for (lg_idx c = 0; c < C; c++) t += (x[c] / m) * (x[c] / m);
                    r = LG_R(1.0) / (m * LG_SQRT(t)); /* eps / m^2 is below rounding there */
                }
                rinv[j * 3 * K + w] = r;
                for (lg_idx c = 0; c < C; c++) x[c] *= r;
            }
        }
        /* 3. fused row pass: scores, softmax, aggregation */
        lg__steal st;
        lg__steal_reset(&st);
#pragma omp parallel
        LG__STEAL_FOR(&st, n, lg__steal_rows(n), i) {
            const lg_idx e0 = g->p[i], e1 = g->p[i + 1];
            const lg_real *qi = zh + i * P;
            lg_real *m = msg + i * KC;
            for (lg_idx c = 0; c < KC; c++) m[c] = 0;
            if (e1 == e0) continue;
            for (lg_idx e = e0; e < e1; e++) {
                const lg_real *kj = zh + g->j[e] * P + KC;
                if (e + LG__ATT_PF_DIST < nnz) lg__aprefetch(zh + g->j[e + LG__ATT_PF_DIST] * P + KC, 2 * KC);
                for (lg_idx k = 0; k < K; k++) att[e * K + k] = tau * lg__adot(qi + k * C, kj + k * C, C);
            }
            for (lg_idx k = 0; k < K; k++) lg__asoftmax(att, e0, e1, K, k, 1);
            for (lg_idx e = e0; e < e1; e++) {
                const lg_real *vj = zh + g->j[e] * P + 2 * KC;
                for (lg_idx k = 0; k < K; k++) lg__aaxpy(m + k * C, nu * att[e * K + k], vj + k * C, C);
            }
        }
        /* 4. out = M W_O + b_O */
        LG_FN(lg__gemm)(CblasNoTrans, CblasNoTrans, n, D, KC, msg, KC, Wo, D, LG_R(0), out, D);
#pragma omp parallel for schedule(static)
        for (lg_idx i = 0; i < n; i++)
            for (lg_idx c = 0; c < D; c++) out[i * D + c] += bo[c];
    }
    cache->n = n;
    cache->nnz = nnz;
    cache->fg = lg__graph_id_of(g);
    cache->have_fwd = 1;
    return LG_OK;
}

lg_status LG_FN(lg_cosatt_backward)(lg_real *d_in, lg_real *d_params, const lg_real *d_out,
                                    lg_cosatt_cache *cache, const lg_real *in, const lg_real *params,
                                    const lg_graph *g, const lg_graph *gT, const lg_cosatt_config *cfg) {
    static const char fn[] = "lg_cosatt_backward";
    LG_CHECK(lg__cos_check_cache(cache, cfg, sizeof(lg_real), fn));
    LG_CHECK(LG__ATT_AFTER_FWD(cache, fn));
    if (!d_params || !d_out || !in || !params)
        return lg__error(LG_EINVAL, "%s: d_params, d_out, in or params is NULL", fn);
    LG_CHECK(lg__graph_id_check(&cache->fg, g, fn)); /* checked by the forward */
    /* gT's shape here, its entries by the transpose map (B0) */
    LG_CHECK(lg__att_check_backward_graphs(&cache->head, g, gT, fn));

    const lg_idx n = g->n, nnz = g->nnz, F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C;
    const lg_idx P = 3 * KC, D = cfg->out_dim, PW = P + D;
    const lg_real tau = (lg_real)cfg->tau, nu = (lg_real)cfg->nu;
    const lg_real *W = params, *Wo = params + F * P + P;
    const lg_real *zh = cache->zh, *rinv = cache->rinv, *att = cache->att, *msg = cache->msg;
    lg_real *dz = cache->dz, *dm = cache->dm, *eds = cache->eds, *rec = cache->rec, *part = cache->part;
    lg__epos *tpos = cache->tpos;
    lg_idx *tnext = cache->tnext;
    lg_real *dW = d_params, *db = d_params + F * P, *dWo = db + P, *dbo = dWo + KC * D;
    if (n == 0) return LG_OK;

    /* B0. the transpose map (checks gT before anything is written) */
    if (!lg__graph_transpose_map(tpos, NULL, tnext, g, gT))
        return lg__error(LG_EINVAL, "%s: the transposed graph is not the transpose of the graph", fn);
    /* dM = dOut W_O^T; dW_O += M^T dOut */
    LG_FN(lg__gemm)(CblasNoTrans, CblasTrans, n, KC, D, d_out, D, Wo, D, LG_R(0), dm, KC);
    LG_FN(lg__gemm)(CblasTrans, CblasNoTrans, KC, D, n, msg, KC, d_out, D, LG_R(1), dWo, D);

    /* B1. row pass over targets: dqhat_i and the per-edge records */
    lg__steal st; /* each pass resets it */
    lg__steal_reset(&st);
#pragma omp parallel
    LG__STEAL_FOR(&st, n, lg__steal_rows(n), i) {
        const lg_idx e0 = g->p[i], e1 = g->p[i + 1];
        const lg_real *dmi = dm + i * KC;
        lg_real *dq = dz + i * P;
        for (lg_idx c = 0; c < KC; c++) dq[c] = 0;
        for (lg_idx e = e0; e < e1; e++) {
            const lg_real *vj = zh + g->j[e] * P + 2 * KC;
            if (e + LG__ATT_PF_DIST < nnz) lg__aprefetch(zh + g->j[e + LG__ATT_PF_DIST] * P + KC, 2 * KC);
            for (lg_idx k = 0; k < K; k++) eds[e * K + k] = nu * lg__adot(dmi + k * C, vj + k * C, C);
        }
        for (lg_idx k = 0; k < K; k++) {
            lg_real S = 0;
            for (lg_idx e = e0; e < e1; e++) S += att[e * K + k] * eds[e * K + k];
            for (lg_idx e = e0; e < e1; e++) {
                const lg_real a = att[e * K + k], ds = a * (eds[e * K + k] - S);
                lg_real *rc = rec + tpos[e] * 2 * K;
                rc[k] = nu * a;
                rc[K + k] = tau * ds;
                lg__aaxpy(dq + k * C, tau * ds, zh + g->j[e] * P + KC + k * C, C);
            }
        }
    }

    /* B2. source pass over gT in fixed chunks: dkhat, dvhat, then through the
     * normalisation for the whole row; bias partials per chunk */
    const lg_idx nch = (n + LG__COS_CHUNK - 1) / LG__COS_CHUNK;
    lg__steal_reset(&st);
#pragma omp parallel
    LG__STEAL_FOR(&st, nch, 1, b) {
        lg_real *pb = part + b * PW;
        for (lg_idx t = 0; t < PW; t++) pb[t] = 0;
        const lg_idx jend = LG_MIN(n, (b + 1) * LG__COS_CHUNK);
        for (lg_idx j = b * LG__COS_CHUNK; j < jend; j++) {
            const lg_real *hj = zh + j * P;
            lg_real *dzj = dz + j * P, *dk = dzj + KC, *dv = dzj + 2 * KC;
            for (lg_idx c = KC; c < P; c++) dzj[c] = 0;
            for (lg_idx t = gT->p[j]; t < gT->p[j + 1]; t++) {
                const lg_idx i = gT->j[t];
                const lg_real *qi = zh + i * P, *dmi = dm + i * KC, *rc = rec + t * 2 * K;
                if (t + LG__ATT_PF_DIST < nnz) {
                    lg__aprefetch(zh + gT->j[t + LG__ATT_PF_DIST] * P, KC);
                    lg__aprefetch(dm + gT->j[t + LG__ATT_PF_DIST] * KC, KC);
                }
                for (lg_idx k = 0; k < K; k++) {
                    lg__aaxpy(dk + k * C, rc[K + k], qi + k * C, C);
                    lg__aaxpy(dv + k * C, rc[k], dmi + k * C, C);
                }
            }
            /* xhat = r x: dx = r (dxhat - xhat (xhat . dxhat)) */
            for (lg_idx w = 0; w < 3 * K; w++) {
                const lg_real *h = hj + w * C, r = rinv[j * 3 * K + w];
                lg_real *d = dzj + w * C;
                const lg_real hd = lg__adot(h, d, C);
                for (lg_idx c = 0; c < C; c++) d[c] = r * (d[c] - h[c] * hd);
            }
            for (lg_idx c = 0; c < P; c++) pb[c] += dzj[c];
            for (lg_idx c = 0; c < D; c++) pb[P + c] += d_out[j * D + c];
        }
    }
    lg_real *tot = part + nch * PW;
    for (lg_idx t = 0; t < PW; t++) tot[t] = 0;
    for (lg_idx b = 0; b < nch; b++)
        for (lg_idx t = 0; t < PW; t++) tot[t] += part[b * PW + t];
    for (lg_idx c = 0; c < P; c++) db[c] += tot[c];
    for (lg_idx c = 0; c < D; c++) dbo[c] += tot[P + c];

    /* B3. dW += H^T dZ; d_in += dZ W^T */
    LG_FN(lg__gemm)(CblasTrans, CblasNoTrans, F, P, n, in, F, dz, P, LG_R(1), dW, P);
    if (d_in) LG_FN(lg__gemm)(CblasNoTrans, CblasTrans, n, F, P, dz, P, W, P, LG_R(1), d_in, F);
    return LG_OK;
}

lg_status LG_FN(lg_cosatt_attention)(lg_real *att, const lg_cosatt_cache *cache) {
    LG_CHECK(LG__ATT_AFTER_FWD(cache, "lg_cosatt_attention"));
    if (!att) return lg__error(LG_EINVAL, "lg_cosatt_attention: att is NULL");
    if (cache->nnz > 0) memcpy(att, cache->att, sizeof(lg_real) * (size_t)(cache->nnz * cache->cfg.heads));
    return LG_OK;
}
