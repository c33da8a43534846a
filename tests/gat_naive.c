/* The naive GAT oracle (see gat_naive.h). */
#include "gat_naive.h"

#include <math.h>
#include <stdlib.h>

#include "testutil.h"

int gat_naive_forward(double *out, double *att, double *cn, const double *in, const double *params,
                      const lg_graph *g, const lg_gat_config *cfg, int training, uint64_t seed,
                      uint64_t counter) {
    const lg_idx n = g->n, F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C;
    const lg_idx D = cfg->concat ? KC : C;
    const double *W = params, *a_dst = params + F * KC, *a_src = a_dst + KC, *bias = a_src + KC;
    double *x = malloc(sizeof(double) * (size_t)(n * KC + 1));
    double *sc = malloc(sizeof(double) * (size_t)(g->nnz + 1));
    if (!x || !sc) {
        free(x);
        free(sc);
        return -1;
    }
    /* x_i = h_i W */
    for (lg_idx i = 0; i < n; i++)
        for (lg_idx t = 0; t < KC; t++) {
            double s = 0;
            for (lg_idx f = 0; f < F; f++) s += in[i * F + f] * W[f * KC + t];
            x[i * KC + t] = s;
        }
    uint64_t key = lg_hash64(seed ^ lg_hash64(counter));
    for (lg_idx i = 0; i < n; i++) {
        for (lg_idx t = 0; t < D; t++) out[i * D + t] = bias[t];
        for (lg_idx k = 0; k < K; k++) {
            const double *ad = a_dst + k * C, *as = a_src + k * C, *xi = x + i * KC + k * C;
            double A = sqrt(lg_test_sq(ad, C) + lg_test_sq(as, C));
            double maxsq = 0;
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                double v = lg_test_sq(x + g->j[e] * KC + k * C, C);
                if (v > maxsq) maxsq = v;
            }
            /* scores, normalised, LeakyReLU */
            double mx = -INFINITY;
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                const double *xj = x + g->j[e] * KC + k * C;
                double s = lg_test_dot(ad, xi, C) + lg_test_dot(as, xj, C), c = 1.0;
                if (cfg->norm == LG_ATT_NORM_LIPSCHITZ) c = A * sqrt(lg_test_sq(xi, C) + maxsq + 1e-12);
                if (cfg->norm == LG_ATT_NORM_LIPSCHITZ_REF) c = 4.0 * A * sqrt(maxsq + lg_test_sq(xj, C)) + 1e-12;
                double t = cfg->norm == LG_ATT_NORM_NONE ? s : cfg->lip_scale * s / c;
                double ev = t > 0 ? t : cfg->negative_slope * t;
                sc[e] = ev;
                if (ev > mx) mx = ev;
                if (cn) cn[e * K + k] = c;
            }
            double z = 0;
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) z += exp(sc[e] - mx);
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                double a = exp(sc[e] - mx) / z;
                if (att) att[e * K + k] = a;
                if (training && cfg->att_dropout > 0) {
                    uint64_t h = lg_hash64(key + ((uint64_t)e * (uint64_t)K + (uint64_t)k) * 0x9E3779B97F4A7C15ULL);
                    int keep = (double)(h >> 11) * 0x1.0p-53 >= cfg->att_dropout;
                    a = keep ? a / (1.0 - cfg->att_dropout) : 0.0;
                }
                const double *xj = x + g->j[e] * KC + k * C;
                for (lg_idx c = 0; c < C; c++) {
                    if (cfg->concat) out[i * D + k * C + c] += a * xj[c];
                    else out[i * D + c] += a * xj[c] / (double)K;
                }
            }
        }
    }
    free(x);
    free(sc);
    return 0;
}
