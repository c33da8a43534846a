/* The naive graph-transformer oracle (see gt_naive.h). */
#include "gt_naive.h"

#include <math.h>
#include <stdlib.h>

#include "testutil.h"

/* relative gap between the largest and the second largest of v[0..m) */
static double gap(const double *v, lg_idx m) {
    if (m < 2) return 1.0;
    double a = -INFINITY, b = -INFINITY;
    for (lg_idx t = 0; t < m; t++) {
        if (v[t] > a) {
            b = a;
            a = v[t];
        } else if (v[t] > b) {
            b = v[t];
        }
    }
    return a > 0 ? (a - b) / a : 0.0;
}

int gt_naive_forward(double *out, double *att, double *tout, double *margin, const double *in,
                     const double *params, const lg_graph *g, const lg_gt_config *cfg, int training,
                     uint64_t seed, uint64_t counter) {
    const lg_idx n = g->n, F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C;
    const lg_idx D = cfg->concat ? KC : C, P = 3 * KC + D;
    const double *W = params, *bq = params + F * P, *bk = bq + KC, *bv = bk + KC, *bs = bv + KC, *w = bs + D;
    double *q = malloc(sizeof(double) * (size_t)(n * KC + 1));
    double *k = malloc(sizeof(double) * (size_t)(n * KC + 1));
    double *v = malloc(sizeof(double) * (size_t)(n * KC + 1));
    double *r = malloc(sizeof(double) * (size_t)(n * D + 1));
    double *m = malloc(sizeof(double) * (size_t)(D + 1));
    double *s = malloc(sizeof(double) * (size_t)(g->nnz + 1));
    double *nk = malloc(sizeof(double) * (size_t)(g->nnz + 1));
    double *nv = malloc(sizeof(double) * (size_t)(g->nnz + 1));
    int ret = -1;
    if (!q || !k || !v || !r || !m || !s || !nk || !nv) goto done;
    /* the four maps, each from its own block of W */
    for (lg_idx i = 0; i < n; i++) {
        for (lg_idx c = 0; c < KC; c++) {
            double a = bq[c], b = bk[c], d = bv[c];
            for (lg_idx f = 0; f < F; f++) {
                a += in[i * F + f] * W[f * P + c];
                b += in[i * F + f] * W[f * P + KC + c];
                d += in[i * F + f] * W[f * P + 2 * KC + c];
            }
            q[i * KC + c] = a;
            k[i * KC + c] = b;
            v[i * KC + c] = d;
        }
        for (lg_idx c = 0; c < D; c++) {
            double a = bs[c];
            for (lg_idx f = 0; f < F; f++) a += in[i * F + f] * W[f * P + 3 * KC + c];
            r[i * D + c] = a;
        }
    }
    double mg = 1.0;
    uint64_t key = lg_hash64(seed ^ lg_hash64(counter));
    for (lg_idx i = 0; i < n; i++) {
        const lg_idx e0 = g->p[i], e1 = g->p[i + 1], deg = e1 - e0;
        for (lg_idx c = 0; c < D; c++) m[c] = 0;
        for (lg_idx h = 0; h < K; h++) {
            if (deg == 0) continue;
            const double *qi = q + i * KC + h * C;
            /* the normaliser */
            double NQ = sqrt(lg_test_sq(qi, C)), NK = 0, NV = 0, U = 0;
            for (lg_idx e = e0; e < e1; e++) {
                nk[e - e0] = sqrt(lg_test_sq(k + g->j[e] * KC + h * C, C));
                nv[e - e0] = sqrt(lg_test_sq(v + g->j[e] * KC + h * C, C));
                if (nk[e - e0] > NK) NK = nk[e - e0];
                if (nv[e - e0] > NV) NV = nv[e - e0];
            }
            if (cfg->norm == LG_ATT_NORM_LIPSCHITZ_REF) { /* Frobenius norm of the queries over all edges */
                for (lg_idx a = 0; a < n; a++)
                    for (lg_idx e = g->p[a]; e < g->p[a + 1]; e++) U += lg_test_sq(q + a * KC + h * C, C);
                U = sqrt(U);
            }
            double first = cfg->norm == LG_ATT_NORM_LIPSCHITZ ? NQ : U;
            double prod[3] = {first * NK, first * NV, NK * NV};
            double den = fmax(prod[0], fmax(prod[1], prod[2])) + 1e-12;
            if (cfg->norm != LG_ATT_NORM_NONE) {
                /* kinks: distinct neighbours only (a node may not repeat in a row) */
                double gk = gap(nk, deg), gv = gap(nv, deg), gp = gap(prod, 3);
                mg = fmin(mg, fmin(gk, fmin(gv, gp)));
            }
            double mx = -INFINITY;
            for (lg_idx e = e0; e < e1; e++) {
                double pij = lg_test_dot(qi, k + g->j[e] * KC + h * C, C), t;
                if (cfg->norm == LG_ATT_NORM_NONE) t = pij / sqrt((double)C);
                else if (cfg->norm == LG_ATT_NORM_LIPSCHITZ) t = pij / den;
                else t = pij / sqrt((double)C) / den;
                s[e] = t;
                if (tout) tout[e * K + h] = t;
                if (t > mx) mx = t;
            }
            double zs = 0;
            for (lg_idx e = e0; e < e1; e++) zs += exp(s[e] - mx);
            for (lg_idx e = e0; e < e1; e++) {
                double a = exp(s[e] - mx) / zs;
                if (att) att[e * K + h] = a;
                if (training && cfg->att_dropout > 0) {
                    uint64_t hh = lg_hash64(key + ((uint64_t)e * (uint64_t)K + (uint64_t)h) * 0x9E3779B97F4A7C15ULL);
                    int keep = (double)(hh >> 11) * 0x1.0p-53 >= cfg->att_dropout;
                    a = keep ? a / (1.0 - cfg->att_dropout) : 0.0;
                }
                const double *vj = v + g->j[e] * KC + h * C;
                for (lg_idx c = 0; c < C; c++) {
                    if (cfg->concat) m[h * C + c] += a * vj[c];
                    else m[c] += a * vj[c] / (double)K;
                }
            }
        }
        const double *ri = r + i * D;
        if (cfg->gate) {
            double logit = 0;
            for (lg_idx c = 0; c < D; c++) logit += w[c] * m[c] + w[D + c] * ri[c] + w[2 * D + c] * (m[c] - ri[c]);
            double b = 1.0 / (1.0 + exp(-logit));
            for (lg_idx c = 0; c < D; c++) out[i * D + c] = b * ri[c] + (1.0 - b) * m[c];
        } else {
            for (lg_idx c = 0; c < D; c++) out[i * D + c] = ri[c] + m[c];
        }
    }
    if (margin) *margin = mg;
    ret = 0;
done:
    free(q);
    free(k);
    free(v);
    free(r);
    free(m);
    free(s);
    free(nk);
    free(nv);
    return ret;
}
