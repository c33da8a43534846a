/*
 * The L2-attention layer's kernels, written once over lg_real (core/real.h)
 * and compiled as l2att_f32.c and l2att_f64.c. Maths: lipgnn/l2att.h and
 * docs/l2-attention.md.
 *
 * Forward:
 *   1. Q = X W_Q                               (gemm, n x F by F x KC)
 *   2. node pass: qn_ih = ||q_i^h||^2
 *   3. fused row pass over targets i (OpenMP, CSR rows): per head the scores
 *      -(qn_i + qn_j - 2 q_i . q_j)/sqrt(C) (0 for the self-loop), softmax
 *      with the maximum subtracted (P kept, nnz x K), then one edge-major
 *      sweep m_i += P_ij q_j over whole rows of Q
 *   4. per head O_h = M_h V_h                  (K small gemms, C x C)
 *   5. out = s (O W_O + b)                     (gemm; s = 1 or c / (B + eps))
 * Backward (g = dL/d out, s the forward's scale):
 *   B0. edge position map of gT (lg__graph_transpose_map, also checks gT)
 *   B1. G_O = O^T g (K C x D), the bias partials (fixed chunks of rows);
 *       dO = s g W_O^T; dW_O += s G_O; db += s sum_i g_i
 *   B2. per head dV_h += M_h^T dO_h, dM_h = dO_h V_h^T (strided gemms)
 *   B3. row pass over targets i: dP_ij = dm_i . q_j, ds_ij = P_ij (dP_ij -
 *       sum_l P_il dP_il) into the records (transposed order), and the target
 *       term dq_i = -(2/sqrt C) sum_j ds_ij (q_i - q_j)
 *   B4. pass over sources j (gT): dq_j += sum_i P_ij dm_i + (2/sqrt C)
 *       sum_i ds_ij (q_i - q_j), the records read in order
 *   B5. dW_Q += X^T dQ; d_in += dQ W_Q^T (gemms)
 *   B6. contractive form: dL/ds = <G_O, W_O> + <sum_i g_i, b>, and
 *       d params += dL/ds * (-s / (B + eps)) * grad B
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
#include "attention/l2att_internal.h"
#include "attention/att_common_impl.h"
#include "graph/graph_internal.h"

lg_status LG_FN(lg_l2att_cache_init)(lg_l2att_cache **out, const lg_l2att_config *cfg, lg_idx n_cap, lg_idx nnz_cap) {
    return lg__l2att_cache_alloc(out, cfg, n_cap, nnz_cap, sizeof(lg_real), NULL, 0, 0);
}

lg_status LG_FN(lg_l2att_params_init)(lg_real *params, const lg_l2att_config *cfg, lg_rng *rng) {
    lg_l2att_layout lay;
    if (!params || !rng) return lg__error(LG_EINVAL, "lg_l2att_params_init: NULL argument");
    LG_CHECK(lg_l2att_layout_get(cfg, &lay));
    lg_idx kc = cfg->heads * cfg->head_dim;
    double bq = sqrt(6.0 / (double)(cfg->in_dim + kc)), bv = sqrt(6.0 / (double)(2 * cfg->head_dim)),
           bo = sqrt(6.0 / (double)(kc + cfg->out_dim));
    for (lg_idx t = lay.wq; t < lay.v; t++) params[t] = (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * bq);
    for (lg_idx t = lay.v; t < lay.wo; t++) params[t] = (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * bv);
    for (lg_idx t = lay.wo; t < lay.bias; t++) params[t] = (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * bo);
    for (lg_idx t = lay.bias; t < lay.count; t++) params[t] = 0;
    return LG_OK;
}

/* The parameter norms of the bound: a_h = ||W_Q^h||_F^2 (into a, K values),
 * b_h = ||V_h||_F^2 (into b), returns ||W_O||_F^2 (*S = sqrt(sum a_h b_h)).
 * In double, in a fixed order. */
static double LG_FN(lg__l2_norms)(const lg_real *params, const lg_l2att_config *cfg, double *a, double *b, double *S) {
    const lg_idx F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C, D = cfg->out_dim;
    const lg_real *Wq = params, *V = params + F * KC, *Wo = V + KC * C;
    double s = 0;
    for (lg_idx h = 0; h < K; h++) {
        double ah = 0, bh = 0;
        for (lg_idx f = 0; f < F; f++)
            for (lg_idx c = 0; c < C; c++) ah += (double)Wq[f * KC + h * C + c] * (double)Wq[f * KC + h * C + c];
        for (lg_idx t = 0; t < C * C; t++) bh += (double)V[h * C * C + t] * (double)V[h * C * C + t];
        if (a) a[h] = ah;
        if (b) b[h] = bh;
        s += ah * bh;
    }
    *S = sqrt(s);
    double wo = 0;
    for (lg_idx t = 0; t < KC * D; t++) wo += (double)Wo[t] * (double)Wo[t];
    return wo;
}

lg_status LG_FN(lg_l2att_lipschitz_bound)(double *bound, const lg_real *params, const lg_l2att_config *cfg,
                                          lg_idx n_in, lg_idx n_out) {
    static const char fn[] = "lg_l2att_lipschitz_bound";
    if (!bound || !params) return lg__error(LG_EINVAL, "%s: NULL argument", fn);
    LG_CHECK(lg_l2att_config_check(cfg));
    if (n_in < 1 || n_out < 1)
        return lg__error(LG_EINVAL, "%s: n_in = %lld, n_out = %lld: both must be >= 1 (self-loops included)", fn,
                         (long long)n_in, (long long)n_out);
    double S, wo = LG_FN(lg__l2_norms)(params, cfg, NULL, NULL, &S);
    *bound = lg_l2att_attention_lip(n_in, n_out) * S * sqrt(wo);
    return LG_OK;
}

/* d_params += coef * grad B (B = L S ||W_O||_F); 0 where S or ||W_O|| is 0. */
static void LG_FN(lg__l2_bound_grad)(lg_real *d_params, const lg_real *params, const lg_l2att_config *cfg, double L,
                                     double coef) {
    const lg_idx F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C, D = cfg->out_dim;
    const lg_real *Wq = params, *V = params + F * KC, *Wo = V + KC * C;
    lg_real *dWq = d_params, *dV = d_params + F * KC, *dWo = dV + KC * C;
    double S = 0;
    double wo2 = 0;
    /* per-head norms recomputed in two passes (no allocation): a_h, b_h */
    for (lg_idx t = 0; t < KC * D; t++) wo2 += (double)Wo[t] * (double)Wo[t];
    for (lg_idx h = 0; h < K; h++) {
        double ah = 0, bh = 0;
        for (lg_idx f = 0; f < F; f++)
            for (lg_idx c = 0; c < C; c++) ah += (double)Wq[f * KC + h * C + c] * (double)Wq[f * KC + h * C + c];
        for (lg_idx t = 0; t < C * C; t++) bh += (double)V[h * C * C + t] * (double)V[h * C * C + t];
        S += ah * bh;
    }
    S = sqrt(S);
    const double wo = sqrt(wo2);
    if (!(S > 0) || !(wo > 0)) return;
    for (lg_idx h = 0; h < K; h++) {
        double ah = 0, bh = 0;
        for (lg_idx f = 0; f < F; f++)
            for (lg_idx c = 0; c < C; c++) ah += (double)Wq[f * KC + h * C + c] * (double)Wq[f * KC + h * C + c];
        for (lg_idx t = 0; t < C * C; t++) bh += (double)V[h * C * C + t] * (double)V[h * C * C + t];
        const double fq = coef * L * wo * bh / S, fv = coef * L * wo * ah / S;
        for (lg_idx f = 0; f < F; f++)
            for (lg_idx c = 0; c < C; c++) dWq[f * KC + h * C + c] += (lg_real)(fq * (double)Wq[f * KC + h * C + c]);
        for (lg_idx t = 0; t < C * C; t++) dV[h * C * C + t] += (lg_real)(fv * (double)V[h * C * C + t]);
    }
    const double fo = coef * L * S / wo;
    for (lg_idx t = 0; t < KC * D; t++) dWo[t] += (lg_real)(fo * (double)Wo[t]);
}

lg_status LG_FN(lg_l2att_forward)(lg_real *out, lg_l2att_cache *cache, const lg_real *in, const lg_real *params,
                                  const lg_graph *g, const lg_l2att_config *cfg) {
    static const char fn[] = "lg_l2att_forward";
    LG_CHECK(lg__l2att_check_cache(cache, cfg, sizeof(lg_real), fn));
    if (!out || !in || !params) return lg__error(LG_EINVAL, "%s: out, in or params is NULL", fn);
    LG_CHECK(lg__att_check_graph(&cache->head, g, "graph", fn));
    LG_CHECK(lg__l2att_check_loops(g, fn));
    LG_CHECK(lg__apart(fn, out, "out", (size_t)(g->n * cfg->out_dim) * sizeof(lg_real), in, "in",
                       (size_t)(g->n * cfg->in_dim) * sizeof(lg_real)));
    cache->have_fwd = 0;

    const lg_idx n = g->n, F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C, D = cfg->out_dim;
    const lg_real *Wq = params, *V = params + F * KC, *Wo = V + KC * C, *bias = Wo + KC * D;
    lg_real *q = cache->q, *qn = cache->qn, *att = cache->att, *m = cache->m, *o = cache->o;
    const lg_real isc = LG_R(1.0) / LG_SQRT((lg_real)C);

    double scale = 1, B = 0;
    lg_idx n_in = 0, n_out = 0;
    if (cfg->contractive > 0 && n > 0) {
        lg__l2att_degrees(g, cache->tnext, &n_in, &n_out);
        LG_CHECK(LG_FN(lg_l2att_lipschitz_bound)(&B, params, cfg, n_in, n_out));
        if (!isfinite(B)) return lg__error(LG_ENUMERIC, "%s: the Lipschitz bound is not finite (%g)", fn, B);
        scale = cfg->contractive / (B + LG__L2_EPS);
    }
    const lg_real sc = (lg_real)scale;

    if (n > 0) {
        /* 1. Q = X W_Q */
        LG_FN(lg__gemm)(CblasNoTrans, CblasNoTrans, n, KC, F, in, F, Wq, KC, LG_R(0), q, KC);
        /* 2. squared norms */
#pragma omp parallel for schedule(static)
        for (lg_idx j = 0; j < n; j++)
            for (lg_idx k = 0; k < K; k++) qn[j * K + k] = lg__adot(q + j * KC + k * C, q + j * KC + k * C, C);
        /* 3. fused row pass: scores, softmax, aggregation */
        lg__steal st;
        lg__steal_reset(&st);
#pragma omp parallel
        LG__STEAL_FOR(&st, n, lg__steal_rows(n), i) {
            const lg_idx e0 = g->p[i], e1 = g->p[i + 1]; /* e1 > e0: the self-loop */
            const lg_real *qi = q + i * KC;
            lg_real *mi = m + i * KC;
            for (lg_idx k = 0; k < K; k++) {
                const lg_real qni = qn[i * K + k];
                for (lg_idx e = e0; e < e1; e++) {
                    const lg_idx j = g->j[e];
                    if (e + LG__ATT_PF_DIST < e1) __builtin_prefetch(q + g->j[e + LG__ATT_PF_DIST] * KC + k * C);
                    lg_real s = j == i ? 0 : -((qni + qn[j * K + k]) - 2 * lg__adot(qi + k * C, q + j * KC + k * C, C)) * isc;
                    att[e * K + k] = s;
                }
                lg__asoftmax(att, e0, e1, K, k, 1);
            }
            for (lg_idx c = 0; c < KC; c++) mi[c] = 0;
            for (lg_idx e = e0; e < e1; e++) {
                const lg_real *qj = q + g->j[e] * KC;
                if (e + LG__ATT_PF_DIST < e1) lg__aprefetch(q + g->j[e + LG__ATT_PF_DIST] * KC, KC);
                for (lg_idx k = 0; k < K; k++) lg__aaxpy(mi + k * C, att[e * K + k], qj + k * C, C);
            }
        }
        /* 4. O_h = M_h V_h */
        for (lg_idx h = 0; h < K; h++)
            LG_FN(lg__gemm)(CblasNoTrans, CblasNoTrans, n, C, C, m + h * C, KC, V + h * C * C, C, LG_R(0), o + h * C, KC);
        /* 5. out = s (O W_O + b) */
        LG_FN(lg__gemm)(CblasNoTrans, CblasNoTrans, n, D, KC, o, KC, Wo, D, LG_R(0), out, D);
#pragma omp parallel for schedule(static)
        for (lg_idx i = 0; i < n; i++)
            for (lg_idx c = 0; c < D; c++) {
                lg_real v = out[i * D + c] + bias[c];
                out[i * D + c] = cfg->contractive > 0 ? sc * v : v;
            }
    }
    cache->fcfg = *cfg;
    cache->n = n;
    cache->nnz = g->nnz;
    cache->fg = lg__graph_id_of(g);
    cache->n_in = n_in;
    cache->n_out = n_out;
    cache->bound = B;
    cache->scale = scale;
    cache->have_fwd = 1;
    return LG_OK;
}

lg_status LG_FN(lg_l2att_backward)(lg_real *d_in, lg_real *d_params, const lg_real *d_out, lg_l2att_cache *cache,
                                   const lg_real *in, const lg_real *params, const lg_graph *g, const lg_graph *gT,
                                   const lg_l2att_config *cfg) {
    static const char fn[] = "lg_l2att_backward";
    LG_CHECK(lg__l2att_check_cache(cache, cfg, sizeof(lg_real), fn));
    LG_CHECK(LG__ATT_AFTER_FWD(cache, fn));
    if (!d_params || !d_out || !in || !params)
        return lg__error(LG_EINVAL, "%s: d_params, d_out, in or params is NULL", fn);
    if (cache->fcfg.contractive != cfg->contractive)
        return lg__error(LG_EINVAL, "%s: contractive = %g differs from the forward's %g", fn, cfg->contractive,
                         cache->fcfg.contractive);
    LG_CHECK(lg__graph_id_check(&cache->fg, g, fn)); /* checked by the forward */
    LG_CHECK(lg__att_check_backward_graphs(&cache->head, g, gT, fn));

    const lg_idx n = g->n, F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C, D = cfg->out_dim;
    const lg_real *Wq = params, *V = params + F * KC, *Wo = V + KC * C, *bias = Wo + KC * D;
    lg_real *dWq = d_params, *dV = d_params + F * KC, *dWo = dV + KC * C, *db = dWo + KC * D;
    const lg_real *q = cache->q, *att = cache->att, *m = cache->m, *o = cache->o;
    lg_real *dO = cache->dO, *dM = cache->dM, *dQ = cache->dQ, *rec = cache->rec, *gwo = cache->gwo, *part = cache->part;
    const lg__epos *tpos, *tedge;
    const int contr = cfg->contractive > 0;
    const lg_real sc = (lg_real)cache->scale, two = 2 / LG_SQRT((lg_real)C);
    if (n == 0) return LG_OK;

    /* B0: the edge map, checking gT (or the map lent by a model, made and
     * checked once for these graphs) */
    LG_CHECK(lg__att_tmap_pick(&cache->lent, cache->tpos, cache->tedge, cache->tnext, g, gT, &tpos, &tedge, fn));
    const lg_idx nch = (n + LG__L2_CHUNK - 1) / LG__L2_CHUNK;

    /* B1. G_O = O^T g; bias partials; dO = s g W_O^T */
    LG_FN(lg__gemm)(CblasTrans, CblasNoTrans, KC, D, n, o, KC, d_out, D, LG_R(0), gwo, D);
    lg__steal st; /* each pass resets it */
    lg__steal_reset(&st);
#pragma omp parallel
    LG__STEAL_FOR(&st, nch, 1, b) {
        lg_real *pb = part + b * D;
        for (lg_idx c = 0; c < D; c++) pb[c] = 0;
        const lg_idx iend = LG_MIN(n, (b + 1) * LG__L2_CHUNK);
        for (lg_idx i = b * LG__L2_CHUNK; i < iend; i++)
            for (lg_idx c = 0; c < D; c++) pb[c] += d_out[i * D + c];
    }
    lg_real *tot = part + nch * D;
    for (lg_idx c = 0; c < D; c++) tot[c] = 0;
    for (lg_idx b = 0; b < nch; b++)
        for (lg_idx c = 0; c < D; c++) tot[c] += part[b * D + c];
    LG_FN(lg__gemm)(CblasNoTrans, CblasTrans, n, KC, D, d_out, D, Wo, D, LG_R(0), dO, KC);
    if (contr) {
#pragma omp parallel for schedule(static)
        for (lg_idx i = 0; i < n; i++)
            for (lg_idx c = 0; c < KC; c++) dO[i * KC + c] *= sc;
    }

    /* B2. per head: dV_h += M_h^T dO_h; dM_h = dO_h V_h^T */
    for (lg_idx h = 0; h < K; h++) {
        LG_FN(lg__gemm)(CblasTrans, CblasNoTrans, C, C, n, m + h * C, KC, dO + h * C, KC, LG_R(1), dV + h * C * C, C);
        LG_FN(lg__gemm)(CblasNoTrans, CblasTrans, n, C, C, dO + h * C, KC, V + h * C * C, C, LG_R(0), dM + h * C, KC);
    }

    /* B3. rows i: softmax backward into the records; the target term of dq_i */
    lg__steal_reset(&st);
#pragma omp parallel
    LG__STEAL_FOR(&st, n, lg__steal_rows(n), i) {
        const lg_idx e0 = g->p[i], e1 = g->p[i + 1];
        const lg_real *qi = q + i * KC, *dmi = dM + i * KC;
        lg_real *dqi = dQ + i * KC;
        for (lg_idx c = 0; c < KC; c++) dqi[c] = 0;
        for (lg_idx k = 0; k < K; k++) {
            lg_real S = 0;
            for (lg_idx e = e0; e < e1; e++) {
                lg_real dp = lg__adot(dmi + k * C, q + g->j[e] * KC + k * C, C);
                rec[tpos[e] * K + k] = dp;
                S += att[e * K + k] * dp;
            }
            for (lg_idx e = e0; e < e1; e++) {
                const lg_idx j = g->j[e];
                lg_real *r = rec + tpos[e] * K + k;
                const lg_real ds = att[e * K + k] * (*r - S);
                *r = ds;
                if (j == i) continue; /* s_ii = 0: no gradient */
                const lg_real w = -two * ds;
                const lg_real *qj = q + j * KC + k * C;
                for (lg_idx c = 0; c < C; c++) dqi[k * C + c] += w * (qi[k * C + c] - qj[c]);
            }
        }
    }

    /* B4. sources j (gT): sum_i P_ij dm_i + (2/sqrt C) sum_i ds_ij (q_i - q_j) */
    lg__steal_reset(&st);
#pragma omp parallel
    LG__STEAL_FOR(&st, n, lg__steal_rows(n), j) {
        lg_real *dqj = dQ + j * KC;
        const lg_real *qj = q + j * KC;
        for (lg_idx t = gT->p[j]; t < gT->p[j + 1]; t++) {
            const lg_idx i = gT->j[t], e = tedge[t];
            const lg_real *dmi = dM + i * KC, *qi = q + i * KC;
            if (t + LG__ATT_PF_DIST < gT->p[j + 1]) lg__aprefetch(dM + gT->j[t + LG__ATT_PF_DIST] * KC, KC);
            for (lg_idx k = 0; k < K; k++) {
                lg__aaxpy(dqj + k * C, att[e * K + k], dmi + k * C, C);
                if (i == j) continue;
                const lg_real w = two * rec[t * K + k];
                for (lg_idx c = 0; c < C; c++) dqj[k * C + c] += w * (qi[k * C + c] - qj[k * C + c]);
            }
        }
    }

    /* B5. dW_Q += X^T dQ; d_in += dQ W_Q^T (= when d_in is d_out, last read in
     * B1). With the caller's step (att_cache.h, lg__att_mid), d_in's
     * product, the step, then dW_Q's (which reads in, the step's to write) */
    const lg__att_mid mid = cache->mid;
    if (!mid.fn) LG_FN(lg__gemm)(CblasTrans, CblasNoTrans, F, KC, n, in, F, dQ, KC, LG_R(1), dWq, KC);
    if (d_in)
        LG_FN(lg__gemm)(CblasNoTrans, CblasTrans, n, F, KC, dQ, KC, Wq, KC, d_in == d_out ? LG_R(0) : LG_R(1), d_in, F);
    if (mid.fn) {
        LG_CHECK(mid.fn(mid.ctx));
        LG_FN(lg__gemm)(CblasTrans, CblasNoTrans, F, KC, n, in, F, dQ, KC, LG_R(1), dWq, KC);
    }

    /* W_O and bias; B6 (contractive): the path through the bound */
    for (lg_idx t = 0; t < KC * D; t++) dWo[t] += contr ? sc * gwo[t] : gwo[t];
    for (lg_idx c = 0; c < D; c++) db[c] += contr ? sc * tot[c] : tot[c];
    if (contr) {
        double dLds = 0;
        for (lg_idx t = 0; t < KC * D; t++) dLds += (double)gwo[t] * (double)Wo[t];
        for (lg_idx c = 0; c < D; c++) dLds += (double)tot[c] * (double)bias[c];
        const double L = lg_l2att_attention_lip(cache->n_in, cache->n_out);
        LG_FN(lg__l2_bound_grad)(d_params, params, cfg, L, -dLds * cache->scale / (cache->bound + LG__L2_EPS));
    }
    return LG_OK;
}

lg_status LG_FN(lg_l2att_invert)(lg_real *x, int *iters, lg_l2att_cache *cache, const lg_real *y, const lg_real *params,
                                 const lg_graph *g, const lg_l2att_config *cfg, double tol, int max_iter) {
    static const char fn[] = "lg_l2att_invert";
    LG_CHECK(lg__l2att_check_cache(cache, cfg, sizeof(lg_real), fn));
    if (!x || !y || !params) return lg__error(LG_EINVAL, "%s: x, y or params is NULL", fn);
    if (!(cfg->contractive > 0) || cfg->out_dim != cfg->in_dim)
        return lg__error(LG_EINVAL, "%s: needs the contractive form (contractive = %g) and out_dim = in_dim (%lld, %lld)",
                         fn, cfg->contractive, (long long)cfg->out_dim, (long long)cfg->in_dim);
    if (!(tol > 0) || max_iter < 1)
        return lg__error(LG_EINVAL, "%s: tol = %g must be > 0 and max_iter = %d >= 1", fn, tol, max_iter);
    LG_CHECK(lg__att_check_graph(&cache->head, g, "graph", fn));
    if (x == y) return lg__error(LG_EINVAL, "%s: x must not alias y", fn);
    const lg_idx nv = g->n * cfg->in_dim;
    lg_real *fx = cache->fx;
    if (iters) *iters = 0;
    memcpy(x, y, sizeof(lg_real) * (size_t)nv);
    for (int it = 1; it <= max_iter; it++) {
        LG_CHECK(LG_FN(lg_l2att_forward)(fx, cache, x, params, g, cfg));
        double change = 0;
        for (lg_idx t = 0; t < nv; t++) {
            lg_real v = y[t] - fx[t];
            double d = fabs((double)(v - x[t]));
            change = d > change ? d : change;
            x[t] = v;
        }
        if (iters) *iters = it;
        if (change < tol) return LG_OK;
    }
    return lg__error(LG_ERANGE, "%s: no convergence to tol %g within %d iterations", fn, tol, max_iter);
}

lg_status LG_FN(lg_l2att_attention)(lg_real *att, const lg_l2att_cache *cache) {
    LG_CHECK(LG__ATT_AFTER_FWD(cache, "lg_l2att_attention"));
    if (!att) return lg__error(LG_EINVAL, "lg_l2att_attention: att is NULL");
    if (cache->nnz > 0) memcpy(att, cache->att, sizeof(lg_real) * (size_t)(cache->nnz * cache->cfg.heads));
    return LG_OK;
}
