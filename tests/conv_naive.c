/* The naive per-node reference of the baseline layers (conv_naive.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_naive.h"

static double deg_isqrt(const lg_graph *g, lg_idx i) {
    lg_idx d = g->p[i + 1] - g->p[i];
    return d > 0 ? 1.0 / sqrt((double)d) : 0.0;
}

static double sig(double v) { return 1.0 / (1.0 + exp(-v)); }

void conv_naive_forward(double *out, double *gin_pre, const double *in, const double *h0, const double *params,
                        const lg_graph *g, const lg_conv_config *cfg) {
    const lg_idx n = g->n, F = cfg->in_dim, D = cfg->out_dim;
    double *agg = calloc((size_t)F, sizeof(double)), *hid = calloc((size_t)(3 * F + D), sizeof(double));
    double *xw = calloc((size_t)F, sizeof(double));
    for (lg_idx i = 0; i < n; i++) {
        double *o = out + i * D;
        const double *hi = in + i * F;
        switch (cfg->kind) {
        case LG_CONV_GCN: { /* out_i = sum_j s_i s_j (h_j W) + b */
            const double *W = params, *b = params + F * D;
            for (lg_idx d = 0; d < D; d++) o[d] = b[d];
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                lg_idx j = g->j[e];
                double w = deg_isqrt(g, i) * deg_isqrt(g, j);
                for (lg_idx d = 0; d < D; d++) {
                    double v = 0;
                    for (lg_idx f = 0; f < F; f++) v += in[j * F + f] * W[f * D + d];
                    o[d] += w * v;
                }
            }
            break;
        }
        case LG_CONV_GIN: {
            const double *W1 = params, *b1 = W1 + F * D, *W2 = b1 + D, *b2 = W2 + D * D;
            const double eps = cfg->train_eps ? b2[D] : cfg->eps;
            for (lg_idx f = 0; f < F; f++) agg[f] = (1 + eps) * hi[f];
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++)
                for (lg_idx f = 0; f < F; f++) agg[f] += in[g->j[e] * F + f];
            for (lg_idx d = 0; d < D; d++) {
                double v = b1[d];
                for (lg_idx f = 0; f < F; f++) v += agg[f] * W1[f * D + d];
                if (gin_pre) gin_pre[i * D + d] = v;
                hid[d] = v > 0 ? v : 0;
            }
            for (lg_idx d = 0; d < D; d++) {
                double v = b2[d];
                for (lg_idx k = 0; k < D; k++) v += hid[k] * W2[k * D + d];
                o[d] = v;
            }
            break;
        }
        case LG_CONV_GGNN: { /* m_i = sum_j h_j W; GRUCell(m_i, h_i) */
            const double *W = params, *Wi = W + F * F, *bi = Wi + 3 * F * F, *Wh = bi + 3 * F, *bh = Wh + 3 * F * F;
            for (lg_idx f = 0; f < F; f++) agg[f] = 0;
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                lg_idx j = g->j[e];
                for (lg_idx d = 0; d < F; d++) {
                    double v = 0;
                    for (lg_idx f = 0; f < F; f++) v += in[j * F + f] * W[f * F + d];
                    agg[d] += v;
                }
            }
            for (lg_idx c = 0; c < 3 * F; c++) { /* hid = gi, xw reused per gate below */
                double v = bi[c];
                for (lg_idx f = 0; f < F; f++) v += agg[f] * Wi[f * 3 * F + c];
                hid[c] = v;
            }
            for (lg_idx c = 0; c < F; c++) {
                double gh[3];
                for (int t = 0; t < 3; t++) {
                    double v = bh[t * F + c];
                    for (lg_idx f = 0; f < F; f++) v += hi[f] * Wh[f * 3 * F + t * F + c];
                    gh[t] = v;
                }
                double r = sig(hid[c] + gh[0]), z = sig(hid[F + c] + gh[1]);
                double cc = tanh(hid[2 * F + c] + r * gh[2]);
                xw[c] = (1 - z) * cc + z * hi[c];
            }
            for (lg_idx c = 0; c < F; c++) o[c] = xw[c];
            break;
        }
        default: { /* GCNII */
            const double *W = params;
            double a = cfg->alpha, b = cfg->beta;
            for (lg_idx f = 0; f < F; f++) agg[f] = a * h0[i * F + f];
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                lg_idx j = g->j[e];
                double w = (1 - a) * deg_isqrt(g, i) * deg_isqrt(g, j);
                for (lg_idx f = 0; f < F; f++) agg[f] += w * in[j * F + f];
            }
            for (lg_idx d = 0; d < F; d++) {
                double v = 0;
                for (lg_idx f = 0; f < F; f++) v += agg[f] * ((f == d ? 1 - b : 0) + b * W[f * F + d]);
                o[d] = v;
            }
            break;
        }
        }
    }
    free(agg);
    free(hid);
    free(xw);
}
