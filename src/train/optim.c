/* Adam and the explosion detector (src/train/optim.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "core/isa.h"
#include "nn/nn_common.h"
#include "train/optim.h"

/* Adam over the n values from p, grad, m, v (one chunk), the step's
 * constants given. The compiler vectorises it for each instruction set
 * (core/isa.h): the same operations per element in the same order (no FMA
 * contraction; sqrt and division are exact IEEE operations at every width),
 * so the same bits. The file is compiled with -fno-math-errno (sqrtf would
 * otherwise branch to set errno, which keeps the loop scalar; v >= 0 here). */
LG__ALWAYS_INLINE void lg__adam_body(float *restrict p, const float *restrict grad, float *restrict m,
                                     float *restrict v, long long n, float step, float rbc2, float b1, float b2,
                                     float eps, float wd) {
    for (long long k = 0; k < n; k++) {
        float g = grad[k] + wd * p[k];
        m[k] = b1 * m[k] + (1.0f - b1) * g;
        v[k] = b2 * v[k] + (1.0f - b2) * g * g;
        p[k] -= step * m[k] / (sqrtf(v[k]) * rbc2 + eps);
    }
}
LG__ISA_VARIANTS(lg__adam,
                 (float *restrict p, const float *restrict grad, float *restrict m, float *restrict v, long long n,
                  float step, float rbc2, float b1, float b2, float eps, float wd),
                 (p, grad, m, v, n, step, rbc2, b1, b2, eps, wd))

void lg__adam_step(const lg_adam *a, long t, float *p, const float *grad, float *m, float *v, size_t n) {
    const double bc1 = 1.0 - pow(a->beta1, (double)t), bc2 = 1.0 - pow(a->beta2, (double)t);
    const float step = (float)(a->lr / bc1), rbc2 = (float)(1.0 / sqrt(bc2));
    const float b1 = (float)a->beta1, b2 = (float)a->beta2, eps = (float)a->eps, wd = (float)a->weight_decay;
    void (*f)(float *restrict, const float *restrict, float *restrict, float *restrict, long long, float, float, float,
              float, float, float) = LG__ISA_PICK(lg__adam);
    const long long nn = (long long)n, nc = (nn + LG__NN_CHUNK - 1) / LG__NN_CHUNK;
#pragma omp parallel for schedule(static) if (nn >= LG__NN_PAR_MIN)
    for (long long c = 0; c < nc; c++) {
        const long long k0 = c * LG__NN_CHUNK;
        f(p + k0, grad + k0, m + k0, v + k0, LG_MIN(LG__NN_CHUNK, nn - k0), step, rbc2, b1, b2, eps, wd);
    }
}

lg_status lg__explode_init(lg_explode *d, int layers, const lg_explode_opts *o) {
    memset(d, 0, sizeof *d);
    if (layers < 0 || !o || o->window < 0 || !(o->threshold > 0) || !(o->growth > 1))
        return lg__error(LG_EINVAL, "explosion detector: threshold must be > 0, growth > 1, window >= 0");
    d->o = *o;
    d->layers = layers;
    d->epoch = -1;
    d->layer = -1;
    d->hist = lg__calloc((size_t)(o->window + 1) * (size_t)(layers ? layers : 1), sizeof(double));
    if (!d->hist) return lg__nomem("explosion detector history");
    return LG_OK;
}

void lg__explode_destroy(lg_explode *d) {
    if (!d) return;
    lg__free(d->hist);
    d->hist = NULL;
}

/* "nan", "inf" or "-inf" for a value that is not finite (printf's %g gives
 * "-nan" for a NaN with its sign bit set, which reads as a number). */
static const char *lg__nonfinite(double x) { return isnan(x) ? "nan" : x > 0 ? "inf" : "-inf"; }

static int lg__explode_fire(lg_explode *d, long epoch, int layer, const char *why) {
    if (d->fired) return 0;
    d->fired = 1;
    d->epoch = epoch;
    d->layer = layer;
    snprintf(d->reason, sizeof d->reason, "%s", why);
    return 1;
}

int lg__explode_observe(lg_explode *d, long epoch, double loss, int loss_layer, const double *norms) {
    char why[160];
    int fire = 0;
    const int w = d->o.window, rows = w + 1;
    double *now = d->hist + (size_t)(d->seen % rows) * (size_t)d->layers;
    for (int l = 0; l < d->layers; l++) now[l] = norms[l];
    if (!isfinite(loss)) {
        int at = loss_layer >= 0 && loss_layer < d->layers ? loss_layer : -1;
        if (at >= 0)
            snprintf(why, sizeof why, "loss is %s: the output of layer %d is the first not finite", lg__nonfinite(loss),
                     at);
        else snprintf(why, sizeof why, "loss is %s", lg__nonfinite(loss));
        fire = lg__explode_fire(d, epoch, at, why);
    }
    /* the first layer whose norm is not finite; else the largest norm above the
     * threshold, with how many are above it; else growth, layer by layer */
    int bad = -1, top = -1, above = 0;
    for (int l = 0; l < d->layers; l++) {
        if (!isfinite(norms[l])) {
            if (bad < 0) bad = l;
        } else if (norms[l] > d->o.threshold) {
            above++;
            if (top < 0 || norms[l] > norms[top]) top = l;
        }
    }
    if (!d->fired && bad >= 0) {
        snprintf(why, sizeof why, "gradient norm of layer %d is not finite (%s)", bad, lg__nonfinite(norms[bad]));
        fire = lg__explode_fire(d, epoch, bad, why);
    } else if (!d->fired && top >= 0) {
        if (above > 1)
            snprintf(why, sizeof why, "gradient norm of layer %d is %.3g > threshold %.3g (the largest of %d layers "
                     "above it)", top, norms[top], d->o.threshold, above);
        else
            snprintf(why, sizeof why, "gradient norm of layer %d is %.3g > threshold %.3g", top, norms[top],
                     d->o.threshold);
        fire = lg__explode_fire(d, epoch, top, why);
    }
    for (int l = 0; l < d->layers && !d->fired && w > 0 && d->seen >= w; l++) {
        double then = d->hist[(size_t)((d->seen - w) % rows) * (size_t)d->layers + (size_t)l];
        /* growth counts once the norm is large enough to cross the
         * threshold within one more such window (>= threshold / growth):
         * vanishing gradients that grow from 1e-25 to 1e-21 do not */
        if (then > 0 && norms[l] > d->o.growth * then && norms[l] >= d->o.threshold / d->o.growth) {
            snprintf(why, sizeof why, "gradient norm of layer %d grew %.3gx in %d epochs (%.3g -> %.3g)", l,
                     norms[l] / then, w, then, norms[l]);
            fire = lg__explode_fire(d, epoch, l, why);
        }
    }
    d->seen++;
    return fire;
}
