/* Naive reference of the L2-attention layer (l2att_naive.h). */
#include <math.h>
#include <stdlib.h>

#include "l2att_naive.h"

double l2_naive_w0(double x) {
    double lo = 0, hi = 1;
    while (hi * exp(hi) < x) hi *= 2;
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (mid * exp(mid) < x) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

double l2_naive_lip(lg_idx n_in, lg_idx n_out) {
    double w = l2_naive_w0((double)(n_in - 1) / exp(1.0));
    double kappa = 0.5 + 2 * l2_naive_w0(exp(-1.0)) + 2 * 0.27786 * sqrt(w);
    return sqrt((1 + 4 * w) * (1 + 2 * w + (double)(n_out - 1) * kappa));
}

int l2_naive_forward(double *out, double *att, const double *in, const double *params, const lg_graph *g,
                     const lg_l2att_config *cfg) {
    lg_idx n = g->n, F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, D = cfg->out_dim;
    const double *Wq = params, *V = Wq + F * K * C, *Wo = V + K * C * C, *b = Wo + K * C * D;
    double *q = calloc((size_t)(n * K * C + 1), sizeof(double));
    double *o = calloc((size_t)(K * C + 1), sizeof(double));
    double *mm = calloc((size_t)(C + 1), sizeof(double));
    double *w = calloc((size_t)(g->nnz + 1), sizeof(double));
    lg_idx *outdeg = calloc((size_t)(n + 1), sizeof(lg_idx));
    if (!q || !o || !mm || !w || !outdeg) {
        free(q), free(o), free(mm), free(w), free(outdeg);
        return -1;
    }
    /* q_i^h[c] = sum_f x_if W_Q[f, hC + c] */
    for (lg_idx i = 0; i < n; i++)
        for (lg_idx h = 0; h < K; h++)
            for (lg_idx c = 0; c < C; c++) {
                double s = 0;
                for (lg_idx f = 0; f < F; f++) s += in[i * F + f] * Wq[f * K * C + h * C + c];
                q[(i * K + h) * C + c] = s;
            }
    double scale = 1;
    if (cfg->contractive > 0) {
        lg_idx nin = 0, nout = 0;
        for (lg_idx i = 0; i < n; i++) {
            if (g->p[i + 1] - g->p[i] > nin) nin = g->p[i + 1] - g->p[i];
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) outdeg[g->j[e]]++;
        }
        for (lg_idx i = 0; i < n; i++)
            if (outdeg[i] > nout) nout = outdeg[i];
        double S = 0, wo = 0;
        for (lg_idx h = 0; h < K; h++) {
            double a = 0, bb = 0;
            for (lg_idx f = 0; f < F; f++)
                for (lg_idx c = 0; c < C; c++) a += pow(Wq[f * K * C + h * C + c], 2);
            for (lg_idx t = 0; t < C * C; t++) bb += pow(V[h * C * C + t], 2);
            S += a * bb;
        }
        for (lg_idx t = 0; t < K * C * D; t++) wo += Wo[t] * Wo[t];
        double B = l2_naive_lip(nin, nout) * sqrt(S) * sqrt(wo);
        scale = cfg->contractive / (B + 1e-12);
    }
    for (lg_idx i = 0; i < n; i++) {
        for (lg_idx h = 0; h < K; h++) {
            /* log-sum-exp of the scores */
            double lse_max = -INFINITY;
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                lg_idx j = g->j[e];
                double d2 = 0;
                for (lg_idx c = 0; c < C; c++) d2 += pow(q[(i * K + h) * C + c] - q[(j * K + h) * C + c], 2);
                w[e] = -d2 / sqrt((double)C);
                if (w[e] > lse_max) lse_max = w[e];
            }
            double z = 0;
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) z += exp(w[e] - lse_max);
            for (lg_idx c = 0; c < C; c++) mm[c] = 0;
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                double P = exp(w[e] - lse_max - log(z));
                if (att) att[e * K + h] = P;
                for (lg_idx c = 0; c < C; c++) mm[c] += P * q[(g->j[e] * K + h) * C + c];
            }
            for (lg_idx c = 0; c < C; c++) {
                double s = 0;
                for (lg_idx t = 0; t < C; t++) s += mm[t] * V[h * C * C + t * C + c];
                o[h * C + c] = s;
            }
        }
        for (lg_idx d = 0; d < D; d++) {
            double s = b[d];
            for (lg_idx t = 0; t < K * C; t++) s += o[t] * Wo[t * D + d];
            out[i * D + d] = scale * s;
        }
    }
    free(q), free(o), free(mm), free(w), free(outdeg);
    return 0;
}
