/*
 * Naive double-precision reference implementations of the src/nn operations,
 * written straight from the formulas (lipgnn/nn.h, attention-spec.md section
 * 5), as test oracles for tests/test_nn.c only. Deliberately simple: plain
 * loops, textbook formulas (mean = sum / d, two-pass variance), no threads.
 */
#ifndef LG_NN_ORACLE_H
#define LG_NN_ORACLE_H

#include <math.h>
#include <stdint.h>

#include "lipgnn.h"

/* y = x w + b */
static void oracle_linear(double *y, const double *x, const double *w, const double *b, lg_idx n, lg_idx in,
                          lg_idx out) {
    for (lg_idx i = 0; i < n; i++)
        for (lg_idx c = 0; c < out; c++) {
            double s = b ? b[c] : 0.0;
            for (lg_idx k = 0; k < in; k++) s += x[i * in + k] * w[k * out + c];
            y[i * out + c] = s;
        }
}

/* the dense n x d copy of a sparse feature matrix */
static void oracle_densify(double *dense, const lg_features *f) {
    for (lg_idx k = 0; k < f->n * f->d; k++) dense[k] = 0.0;
    for (lg_idx i = 0; i < f->n; i++)
        for (lg_idx e = f->p[i]; e < f->p[i + 1]; e++) dense[i * f->d + f->j[e]] += f->x[e];
}

static void oracle_elu(double *y, const double *x, lg_idx count) {
    for (lg_idx k = 0; k < count; k++) y[k] = x[k] > 0 ? x[k] : exp(x[k]) - 1.0;
}

static void oracle_layernorm(double *y, const double *x, const double *gain, const double *bias, lg_idx n,
                             lg_idx d) {
    for (lg_idx i = 0; i < n; i++) {
        double mu = 0, var = 0;
        for (lg_idx c = 0; c < d; c++) mu += x[i * d + c];
        mu /= (double)d;
        for (lg_idx c = 0; c < d; c++) var += (x[i * d + c] - mu) * (x[i * d + c] - mu);
        var /= (double)d;
        for (lg_idx c = 0; c < d; c++)
            y[i * d + c] = (x[i * d + c] - mu) / sqrt(var + 1e-5) * (gain ? gain[c] : 1.0) + (bias ? bias[c] : 0.0);
    }
}

/* mode 0: PN, 1: PN-SI; seg: n_graphs + 1 offsets */
static void oracle_pairnorm(double *out, const double *x, lg_idx n, lg_idx d, const lg_idx *seg, lg_idx ng,
                            int mode, double s) {
    (void)n;
    for (lg_idx g = 0; g < ng; g++) {
        lg_idx i0 = seg[g], i1 = seg[g + 1], N = i1 - i0;
        if (N == 0) continue;
        for (lg_idx c = 0; c < d; c++) {
            double mu = 0;
            for (lg_idx i = i0; i < i1; i++) mu += x[i * d + c];
            mu /= (double)N;
            for (lg_idx i = i0; i < i1; i++) out[i * d + c] = x[i * d + c] - mu;
        }
        double tot = 0;
        for (lg_idx i = i0; i < i1; i++)
            for (lg_idx c = 0; c < d; c++) tot += out[i * d + c] * out[i * d + c];
        for (lg_idx i = i0; i < i1; i++) {
            double row = 0;
            for (lg_idx c = 0; c < d; c++) row += out[i * d + c] * out[i * d + c];
            double den = mode == 0 ? sqrt(1e-12 + tot / (double)N) : sqrt(1e-12 + row);
            for (lg_idx c = 0; c < d; c++) out[i * d + c] = s * out[i * d + c] / den;
        }
    }
}

static void oracle_log_softmax(double *lp, const double *z, lg_idx n, lg_idx c) {
    for (lg_idx i = 0; i < n; i++) {
        double s = 0;
        for (lg_idx k = 0; k < c; k++) s += exp(z[i * c + k]);
        for (lg_idx k = 0; k < c; k++) lp[i * c + k] = z[i * c + k] - log(s);
    }
}

static double oracle_nll(const double *lp, lg_idx c, const int32_t *labels, const lg_idx *nodes, lg_idx m) {
    double s = 0;
    for (lg_idx k = 0; k < m; k++) s += -lp[nodes[k] * c + labels[nodes[k]]];
    return m ? s / (double)m : 0.0;
}

/* arg-max with ties to the lowest class */
static double oracle_accuracy(const double *sc, lg_idx c, const int32_t *labels, const lg_idx *nodes, lg_idx m) {
    lg_idx right = 0;
    for (lg_idx k = 0; k < m; k++) {
        lg_idx i = nodes[k], b = 0;
        for (lg_idx q = 1; q < c; q++)
            if (sc[i * c + q] > sc[i * c + b]) b = q;
        right += b == labels[i];
    }
    return m ? (double)right / (double)m : 0.0;
}

#endif
