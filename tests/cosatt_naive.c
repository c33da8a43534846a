/* Naive reference of the cosine-attention layer (cosatt_naive.h). */
#include <math.h>
#include <stdlib.h>

#include "cosatt_naive.h"

/* x (KC) = h_node W_blk + b_blk, head slices normalised: x / sqrt(|x|^2 + eps). */
static void hat(double *x, const double *in, const double *prm, lg_idx node, int blk, const lg_cosatt_config *c) {
    const lg_idx F = c->in_dim, K = c->heads, C = c->head_dim, KC = K * C, P = 3 * KC;
    const double *W = prm, *b = prm + F * P;
    for (lg_idx col = 0; col < KC; col++) {
        double s = b[blk * KC + col];
        for (lg_idx f = 0; f < F; f++) s += in[node * F + f] * W[f * P + blk * KC + col];
        x[col] = s;
    }
    for (lg_idx h = 0; h < K; h++) {
        double ss = 0;
        for (lg_idx c2 = 0; c2 < C; c2++) ss += x[h * C + c2] * x[h * C + c2];
        double nr = sqrt(ss + c->eps);
        for (lg_idx c2 = 0; c2 < C; c2++) x[h * C + c2] /= nr;
    }
}

int cosatt_naive_forward(double *out, double *att, const double *in, const double *params, const lg_graph *g,
                         const lg_cosatt_config *cfg) {
    const lg_idx F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C, D = cfg->out_dim;
    const double *Wo = params + F * 3 * KC + 3 * KC, *bo = Wo + KC * D;
    double *q = malloc(sizeof(double) * (size_t)KC), *kk = malloc(sizeof(double) * (size_t)KC);
    double *v = malloc(sizeof(double) * (size_t)KC), *m = malloc(sizeof(double) * (size_t)KC);
    double *sc = malloc(sizeof(double) * (size_t)(g->nnz + 1));
    if (!q || !kk || !v || !m || !sc) {
        free(q), free(kk), free(v), free(m), free(sc);
        return -1;
    }
    for (lg_idx i = 0; i < g->n; i++) {
        hat(q, in, params, i, 0, cfg);
        for (lg_idx c = 0; c < KC; c++) m[c] = 0;
        const lg_idx e0 = g->p[i], e1 = g->p[i + 1];
        for (lg_idx h = 0; h < K; h++) {
            /* scores of head h */
            double mx = -INFINITY;
            for (lg_idx e = e0; e < e1; e++) {
                hat(kk, in, params, g->j[e], 1, cfg);
                double d = 0;
                for (lg_idx c = 0; c < C; c++) d += q[h * C + c] * kk[h * C + c];
                sc[e] = cfg->tau * d;
                if (sc[e] > mx) mx = sc[e];
            }
            double z = 0;
            for (lg_idx e = e0; e < e1; e++) z += exp(sc[e] - mx);
            for (lg_idx e = e0; e < e1; e++) {
                double a = exp(sc[e] - mx) / z;
                if (att) att[e * K + h] = a;
                hat(v, in, params, g->j[e], 2, cfg);
                for (lg_idx c = 0; c < C; c++) m[h * C + c] += cfg->nu * a * v[h * C + c];
            }
        }
        for (lg_idx o = 0; o < D; o++) {
            double s = bo[o];
            for (lg_idx c = 0; c < KC; c++) s += m[c] * Wo[c * D + o];
            out[i * D + o] = s;
        }
    }
    free(q), free(kk), free(v), free(m), free(sc);
    return 0;
}
