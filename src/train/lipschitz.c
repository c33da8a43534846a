/*
 * Per-layer Lipschitz constants of a trained model (lipgnn/lipschitz.h):
 * power iteration and gradient ascent on each block of a double copy of the
 * model, and the theoretical bound of each layer kind (Dasoulas, Scaman &
 * Virmaux 2021, Corollaries 1 and 2, combined over the graph as derived in
 * docs/lipschitz-estimator.md).
 *
 * New layer kinds plug in at lg__block_bound: one function per kind
 * returning its bound (lg_lip_bound_gat, lg_lip_bound_gt); a kind without
 * one gets INFINITY ("no bound known"), and its estimates still run, through
 * the model's own block forward and backward.
 */
#include <math.h>
#include <string.h>

#include "core/gemm.h"
#include "core/internal.h"
#include "train/lipschitz_internal.h"
#include "train/model.h"
#include "train/trainer_internal.h"

void lg_lip_config_default(lg_lip_config *c) {
    if (!c) return;
    c->iters = 50;
    c->starts = 3;
    c->seed = 1;
    c->radius = 0.1;
}

lg_status lg_lip_config_check(const lg_lip_config *c) {
    if (!c) return lg__error(LG_EINVAL, "lipschitz config: NULL");
    if (c->iters < 1 || c->iters > 100000) return lg__error(LG_EINVAL, "lipschitz config: iters %d outside 1..100000", c->iters);
    if (c->starts < 0 || c->starts > 10000)
        return lg__error(LG_EINVAL, "lipschitz config: starts %d outside 0..10000", c->starts);
    if (!isfinite(c->radius) || !(c->radius > 0) || c->radius > 100)
        return lg__error(LG_EINVAL, "lipschitz config: radius %g outside (0, 100]", c->radius);
    return LG_OK;
}

/* ------------------------------------------------------------------------- */
/* Vectors                                                                     */
/* ------------------------------------------------------------------------- */

static double lg__nrm(const double *v, lg_idx n) {
    double s = 0;
    for (lg_idx k = 0; k < n; k++) s += v[k] * v[k];
    return sqrt(s);
}

/* v = a random unit vector (uniform entries in [-1, 1), normalised). */
static void lg__rand_unit(double *v, lg_idx n, lg_rng *rng) {
    double s;
    do {
        for (lg_idx k = 0; k < n; k++) v[k] = 2 * lg_rng_double(rng) - 1;
        s = lg__nrm(v, n);
    } while (!(s > 0));
    for (lg_idx k = 0; k < n; k++) v[k] /= s;
}

static lg_status lg__map_check(const lg__lip_map *f, const double *x0, const char *fn) {
    if (!f || !f->forward || !f->backward || !x0 || f->n_in < 1 || f->n_out < 1)
        return lg__error(LG_EINVAL, "%s: bad map or input", fn);
    return LG_OK;
}

/* ------------------------------------------------------------------------- */
/* Power iteration                                                            */
/* ------------------------------------------------------------------------- */

lg_status lg__lip_power(double *est, int *steps, const lg__lip_map *f, const double *x0, int iters, lg_rng *rng) {
    lg_status st = LG_OK;
    double *v = NULL, *xp = NULL, *fp = NULL, *fm = NULL;
    if (!est || !rng || iters < 1) return lg__error(LG_EINVAL, "lg__lip_power: bad argument");
    LG_CHECK(lg__map_check(f, x0, "lg__lip_power"));
    *est = 0;
    if (steps) *steps = 0;
    const lg_idx N = f->n_in, M = f->n_out;
    LG_ALLOC(v, N, "power iteration");
    LG_ALLOC(xp, N, "power iteration");
    LG_ALLOC(fp, M, "power iteration");
    LG_ALLOC(fm, M, "power iteration");
    lg__rand_unit(v, N, rng);
    const double h = 1e-6 * LG_MAX(1.0, lg__nrm(x0, N));
    double prev = -1;
    for (int k = 0; k < iters; k++) {
        /* u = J v by central differences (fp) */
        for (lg_idx q = 0; q < N; q++) xp[q] = x0[q] + h * v[q];
        LG_TRY(f->forward(f->ctx, xp, fp));
        for (lg_idx q = 0; q < N; q++) xp[q] = x0[q] - h * v[q];
        LG_TRY(f->forward(f->ctx, xp, fm));
        for (lg_idx q = 0; q < M; q++) fp[q] = (fp[q] - fm[q]) / (2 * h);
        double s = lg__nrm(fp, M);
        if (!isfinite(s)) {
            st = lg__error(LG_ENUMERIC, "power iteration: the layer's output is not finite near its input");
            goto fail;
        }
        if (s > *est) *est = s;
        if (steps) *steps = k + 1;
        if (s == 0 || (prev >= 0 && fabs(s - prev) <= 1e-9 * s) || k == iters - 1) break;
        prev = s;
        /* v = J^T u / ||J^T u||, the backward at x0 */
        LG_TRY(f->forward(f->ctx, x0, fm));
        LG_TRY(f->backward(f->ctx, fp, xp));
        double w = lg__nrm(xp, N);
        if (!(w > 0) || !isfinite(w)) break;
        for (lg_idx q = 0; q < N; q++) v[q] = xp[q] / w;
    }
fail:
    lg__free(v);
    lg__free(xp);
    lg__free(fp);
    lg__free(fm);
    return st;
}

/* ------------------------------------------------------------------------- */
/* Gradient ascent over pairs of inputs                                        */
/* ------------------------------------------------------------------------- */

/* R = ||f(x) - f(y)|| / ||x - y|| (0 when x = y); fx, fy = f(x), f(y); the
 * map's state is left at y. */
static lg_status lg__ratio(double *R, const lg__lip_map *f, const double *x, const double *y, double *fx, double *fy) {
    LG_CHECK(f->forward(f->ctx, x, fx));
    LG_CHECK(f->forward(f->ctx, y, fy));
    double num = 0, den = 0;
    for (lg_idx q = 0; q < f->n_out; q++) num += (fx[q] - fy[q]) * (fx[q] - fy[q]);
    for (lg_idx q = 0; q < f->n_in; q++) den += (x[q] - y[q]) * (x[q] - y[q]);
    *R = den > 0 ? sqrt(num) / sqrt(den) : 0;
    return LG_OK;
}

static void lg__swap(double **a, double **b) {
    double *t = *a;
    *a = *b;
    *b = t;
}

lg_status lg__lip_ascent(double *best, const lg__lip_map *f, const double *x0, int starts, int iters, double radius,
                         lg_rng *rng) {
    lg_status st = LG_OK;
    double *x = NULL, *y = NULL, *xn = NULL, *yn = NULL, *gx = NULL, *gy = NULL;
    double *fx = NULL, *fy = NULL, *fxn = NULL, *fyn = NULL, *r = NULL;
    if (!best || !rng || starts < 0 || iters < 0 || !isfinite(radius) || !(radius > 0))
        return lg__error(LG_EINVAL, "lg__lip_ascent: bad argument");
    LG_CHECK(lg__map_check(f, x0, "lg__lip_ascent"));
    *best = 0;
    const lg_idx N = f->n_in, M = f->n_out;
    LG_ALLOC(x, N, "ascent");
    LG_ALLOC(y, N, "ascent");
    LG_ALLOC(xn, N, "ascent");
    LG_ALLOC(yn, N, "ascent");
    LG_ALLOC(gx, N, "ascent");
    LG_ALLOC(gy, N, "ascent");
    LG_ALLOC(fx, M, "ascent");
    LG_ALLOC(fy, M, "ascent");
    LG_ALLOC(fxn, M, "ascent");
    LG_ALLOC(fyn, M, "ascent");
    LG_ALLOC(r, M, "ascent");
    const double n0 = lg__nrm(x0, N), scale = n0 > 0 ? n0 : 1;
    for (int s = 0; s < starts; s++) {
        lg__rand_unit(gx, N, rng);
        lg__rand_unit(gy, N, rng);
        for (lg_idx q = 0; q < N; q++) {
            x[q] = x0[q] + radius * scale * gx[q];
            y[q] = x[q] + 0.1 * radius * scale * gy[q];
        }
        double R;
        LG_TRY(lg__ratio(&R, f, x, y, fx, fy)); /* state at y */
        if (!isfinite(R)) continue;
        if (R > *best) *best = R;
        double t = 0.5;
        for (int k = 0; k < iters; k++) {
            double nr = 0, del;
            for (lg_idx q = 0; q < M; q++) {
                r[q] = fx[q] - fy[q];
                nr += r[q] * r[q];
            }
            nr = sqrt(nr);
            for (lg_idx q = 0; q < N; q++) xn[q] = x[q] - y[q]; /* d = x - y */
            del = lg__nrm(xn, N);
            if (!(nr > 0) || !(del > 0)) break;
            for (lg_idx q = 0; q < M; q++) r[q] /= nr;
            /* dR/dy = -J_y^T r/del + R d/del^2, dR/dx = J_x^T r/del - R d/del^2 */
            LG_TRY(f->backward(f->ctx, r, gy));
            LG_TRY(f->forward(f->ctx, x, fxn));
            LG_TRY(f->backward(f->ctx, r, gx));
            double G = 0;
            for (lg_idx q = 0; q < N; q++) {
                gx[q] = gx[q] / del - R * xn[q] / (del * del);
                gy[q] = -gy[q] / del + R * xn[q] / (del * del);
                G += gx[q] * gx[q] + gy[q] * gy[q];
            }
            G = sqrt(G);
            if (!(G > 0) || !isfinite(G)) break;
            int accepted = 0;
            for (int tries = 0; tries < 10 && !accepted; tries++) {
                const double a = t * del / G;
                for (lg_idx q = 0; q < N; q++) {
                    xn[q] = x[q] + a * gx[q];
                    yn[q] = y[q] + a * gy[q];
                }
                double Rn;
                LG_TRY(lg__ratio(&Rn, f, xn, yn, fxn, fyn)); /* state at yn */
                if (Rn > R) {
                    accepted = 1;
                    R = Rn;
                    lg__swap(&x, &xn);
                    lg__swap(&y, &yn);
                    lg__swap(&fx, &fxn);
                    lg__swap(&fy, &fyn);
                    t = LG_MIN(2 * t, 4.0);
                } else {
                    t *= 0.5;
                }
            }
            if (!accepted) break;
            if (R > *best) *best = R;
        }
    }
fail:
    lg__free(x);
    lg__free(y);
    lg__free(xn);
    lg__free(yn);
    lg__free(gx);
    lg__free(gy);
    lg__free(fx);
    lg__free(fy);
    lg__free(fxn);
    lg__free(fyn);
    lg__free(r);
    return st;
}

/* ------------------------------------------------------------------------- */
/* Theoretical bounds                                                          */
/* ------------------------------------------------------------------------- */

lg_status lg_lip_spectral_norm(double *upper, const double *w, lg_idx rows, lg_idx ld, const lg_idx *cols,
                               lg_idx ncols) {
    lg_status st = LG_OK;
    double *a = NULL, *mm = NULL, *m2 = NULL;
    if (!upper) return lg__error(LG_EINVAL, "lg_lip_spectral_norm: bad argument (upper is NULL)");
    *upper = 0;
    if (!w || !cols || rows < 1 || ncols < 1)
        return lg__error(LG_EINVAL, "lg_lip_spectral_norm: bad argument (w %s, cols %s, rows %lld, ncols %lld)",
                         w ? "given" : "NULL", cols ? "given" : "NULL", (long long)rows, (long long)ncols);
    LG_CHECK(lg__blas_usable("lg_lip_spectral_norm"));
    lg_idx maxcol = 0;
    for (lg_idx c = 0; c < ncols; c++) {
        if (cols[c] < 0 || cols[c] >= ld)
            return lg__error(LG_EINVAL, "lg_lip_spectral_norm: column %lld outside 0..%lld", (long long)cols[c],
                             (long long)ld - 1);
        maxcol = LG_MAX(maxcol, cols[c]);
    }
    /* the extent of w read, (rows - 1) ld + maxcol + 1 doubles, and the
     * copy's rows ncols, addressable (ld > maxcol >= 0) */
    if ((rows > 1 && ld > ((lg_idx)(INT64_MAX / 8) - maxcol - 1) / (rows - 1)) || ncols > (lg_idx)(INT64_MAX / 8) / rows)
        return lg__error(LG_ERANGE, "lg_lip_spectral_norm: %lld rows of stride ld = %lld (%lld columns) overflow",
                         (long long)rows, (long long)ld, (long long)ncols);
    const lg_idx r = LG_MIN(rows, ncols);
    const lg_idx na = rows * ncols, nr = r * r;
    LG_ALLOC(a, na, "spectral norm");
    LG_ALLOC(mm, nr, "spectral norm");
    LG_ALLOC(m2, nr, "spectral norm");
    int finite = 1;
    for (lg_idx i = 0; i < rows; i++)
        for (lg_idx c = 0; c < ncols; c++) {
            a[i * ncols + c] = w[i * ld + cols[c]];
            finite &= isfinite(a[i * ncols + c]) != 0;
        }
    if (!finite) { st = lg__error(LG_ENUMERIC, "lg_lip_spectral_norm: weights not finite"); goto fail; }
    /* the smaller Gram matrix: A^T A (ncols) or A A^T (rows) */
    if (ncols <= rows) lg__gemm_f64(CblasTrans, CblasNoTrans, r, r, rows, a, ncols, a, ncols, 0, mm, r);
    else lg__gemm_f64(CblasNoTrans, CblasTrans, r, r, ncols, a, ncols, a, ncols, 0, mm, r);
    double tr = 0;
    for (lg_idx i = 0; i < r; i++) tr += mm[i * r + i];
    if (!isfinite(tr)) {
        st = lg__error(LG_ENUMERIC, "lg_lip_spectral_norm: the Gram product of finite weights overflows (trace %g)", tr);
        goto fail;
    }
    if (tr > 0) {
        /* M^(2^p) = c_p N_p with trace(N_p) = 1: log c_{p+1} = 2 log c_p + log trace(N_p^2) */
        enum { P = 12 };
        double logc = log(tr);
        for (lg_idx k = 0; k < r * r; k++) mm[k] /= tr;
        int p;
        for (p = 0; p < P; p++) {
            lg__gemm_f64(CblasNoTrans, CblasNoTrans, r, r, r, mm, r, mm, r, 0, m2, r);
            double s = 0;
            for (lg_idx i = 0; i < r; i++) s += m2[i * r + i];
            if (!(s > 0)) break;
            logc = 2 * logc + log(s);
            for (lg_idx k = 0; k < r * r; k++) mm[k] = m2[k] / s;
        }
        *upper = exp(logc / ldexp(1.0, p + 1)); /* sqrt(lambda_max) */
    }
fail:
    lg__free(a);
    lg__free(mm);
    lg__free(m2);
    return st;
}

/* For Corollaries 1 and 2 combined over the graph: *bq2 = max_i B_i^2 and
 * *bkv2 = max_j sum over the edges j -> i of B_i^2, B_i = c1 / sqrt(|N(i)|)
 * + c2 (0 for an empty N(i)). Edges are counted as listed (a repeated edge
 * is another input slot of the attention of its target). */
static lg_status lg__graph_factors(double *bq2, double *bkv2, const lg_graph *g, double c1, double c2) {
    lg_status st = LG_OK;
    double *acc = NULL;
    *bq2 = *bkv2 = 0;
    LG_CALLOC(acc, g->n, "bound");
    for (lg_idx i = 0; i < g->n; i++) {
        lg_idx ni = g->p[i + 1] - g->p[i];
        if (ni == 0) continue;
        double B = c1 / sqrt((double)ni) + c2;
        *bq2 = LG_MAX(*bq2, B * B);
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) acc[g->j[e]] += B * B;
    }
    for (lg_idx j = 0; j < g->n; j++) *bkv2 = LG_MAX(*bkv2, acc[j]);
fail:
    lg__free(acc);
    return st;
}

static lg_status lg__graph_arg(const lg_graph *g, const char *fn) {
    if (!g || g->n < 0 || !g->p || (g->nnz > 0 && !g->j)) return lg__error(LG_EINVAL, "%s: bad graph", fn);
    for (lg_idx i = 0; i < g->n; i++)
        if (g->p[i + 1] < g->p[i]) return lg__error(LG_EINVAL, "%s: bad graph", fn);
    for (lg_idx e = 0; e < g->nnz; e++)
        if (g->j[e] < 0 || g->j[e] >= g->n) return lg__error(LG_EINVAL, "%s: bad graph", fn);
    return LG_OK;
}

/* *out = the spectral norm bound of columns [c0, c0 + len) and, if len2 > 0,
 * [c1, c1 + len2) of the F x ld matrix w. */
static lg_status lg__block_norm(double *out, const double *w, lg_idx F, lg_idx ld, lg_idx c0, lg_idx len, lg_idx c1,
                                lg_idx len2) {
    lg_status st = LG_OK;
    lg_idx *cols = NULL;
    LG_ALLOC(cols, len + len2, "bound");
    for (lg_idx c = 0; c < len; c++) cols[c] = c0 + c;
    for (lg_idx c = 0; c < len2; c++) cols[len + c] = c1 + c;
    st = lg_lip_spectral_norm(out, w, F, ld, cols, len + len2);
fail:
    lg__free(cols);
    return st;
}

lg_status lg_lip_bound_gat(double *bound, const lg_gat_config *cfg, const double *params, const lg_graph *g) {
    static const char fn[] = "lg_lip_bound_gat";
    if (!bound || !cfg || !params) return lg__error(LG_EINVAL, "%s: NULL argument", fn);
    LG_CHECK(lg_gat_config_check(cfg));
    LG_CHECK(lg__graph_arg(g, fn));
    *bound = INFINITY;
    if (cfg->norm != LG_ATT_NORM_LIPSCHITZ) return LG_OK; /* no bound known */
    for (lg_idx i = 0; i < g->n; i++) { /* Corollary 1 needs x_i among the inputs */
        int has = g->p[i + 1] == g->p[i];
        for (lg_idx e = g->p[i]; e < g->p[i + 1] && !has; e++) has = g->j[e] == i;
        if (!has) return LG_OK;
    }
    const double s = cfg->lip_scale;
    double bq2, bkv2;
    LG_CHECK(lg__graph_factors(&bq2, &bkv2, g, exp(s), s * sqrt(8.0)));
    const lg_idx F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim;
    double sum2 = 0, sum = 0;
    for (lg_idx k = 0; k < K; k++) {
        double wn;
        LG_CHECK(lg__block_norm(&wn, params, F, K * C, k * C, C, 0, 0));
        sum2 += wn * wn;
        sum += wn;
    }
    *bound = sqrt(bkv2) * (cfg->concat ? sqrt(sum2) : sum / (double)K);
    return LG_OK;
}

lg_status lg_lip_bound_gt(double *bound, const lg_gt_config *cfg, const double *params, const lg_graph *g) {
    static const char fn[] = "lg_lip_bound_gt";
    if (!bound || !cfg || !params) return lg__error(LG_EINVAL, "%s: NULL argument", fn);
    LG_CHECK(lg_gt_config_check(cfg));
    LG_CHECK(lg__graph_arg(g, fn));
    *bound = INFINITY;
    if (cfg->norm != LG_ATT_NORM_LIPSCHITZ || cfg->gate) return LG_OK; /* no bound known */
    lg_gt_layout lay;
    LG_CHECK(lg_gt_layout_get(cfg, &lay));
    double bq2, bkv2;
    LG_CHECK(lg__graph_factors(&bq2, &bkv2, g, exp(sqrt(3.0)), 2 * sqrt(6.0)));
    const lg_idx F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C, P = lay.w_cols;
    const lg_idx D = lg_gt_out_dim(cfg);
    const double *W = params + lay.w;
    double sum2 = 0, sum = 0, wq, wkv, wskip;
    for (lg_idx k = 0; k < K; k++) {
        LG_CHECK(lg__block_norm(&wq, W, F, P, k * C, C, 0, 0));
        LG_CHECK(lg__block_norm(&wkv, W, F, P, KC + k * C, C, 2 * KC + k * C, C));
        double l2 = bq2 * wq * wq + bkv2 * wkv * wkv;
        sum2 += l2;
        sum += sqrt(l2);
    }
    LG_CHECK(lg__block_norm(&wskip, W, F, P, 3 * KC, D, 0, 0));
    *bound = wskip + (cfg->concat ? sqrt(sum2) : sum / (double)K);
    return LG_OK;
}

lg_status lg_lip_bound_cosine(double *bound, const lg_cosatt_config *cfg, const double *params, const double *gain,
                              const double *alpha, const lg_graph *g) {
    static const char fn[] = "lg_lip_bound_cosine";
    if (!bound || !cfg || !params || !gain || !alpha) return lg__error(LG_EINVAL, "%s: NULL argument", fn);
    LG_CHECK(lg_cosatt_config_check(cfg));
    LG_CHECK(lg__graph_arg(g, fn));
    *bound = INFINITY;
    lg_cosatt_layout lay;
    LG_CHECK(lg_cosatt_layout_get(cfg, &lay));
    const lg_idx F = cfg->in_dim, K = cfg->heads, C = cfg->head_dim, KC = K * C, D = F;
    if (D < 2) return LG_OK; /* CenterNorm's D/(D-1) */
    lg_idx *deg = NULL;
    lg_status st = LG_OK;
    LG_CALLOC(deg, g->n, "bound");
    lg_idx n_out = 1;
    for (lg_idx e = 0; e < g->nnz; e++) n_out = LG_MAX(n_out, ++deg[g->j[e]]);
    double sum2 = 0, amax = 0, gmax = 0, wo;
    const double so = sqrt((double)n_out), tau = cfg->tau;
    for (lg_idx h = 0; h < K; h++) {
        double aq, ak, av;
        LG_TRY(lg__block_norm(&aq, params + lay.w, F, lay.w_cols, h * C, C, 0, 0));
        LG_TRY(lg__block_norm(&ak, params + lay.w, F, lay.w_cols, KC + h * C, C, 0, 0));
        LG_TRY(lg__block_norm(&av, params + lay.w, F, lay.w_cols, 2 * KC + h * C, C, 0, 0));
        double ch = so * av + 2 * tau * aq + 2 * tau * so * ak;
        sum2 += ch * ch;
    }
    LG_TRY(lg__block_norm(&wo, params + lay.wo, KC, cfg->out_dim, 0, cfg->out_dim, 0, 0));
    for (lg_idx c = 0; c < D; c++) {
        amax = fmax(amax, fabs(alpha[c]));
        gmax = fmax(gmax, fabs(gain[c]));
    }
    *bound = 1 + amax * ((double)D / (double)(D - 1)) * gmax * wo * cfg->nu / sqrt(cfg->eps) * sqrt(sum2);
fail:
    lg__free(deg);
    return st;
}

/* The bound of a whole block: its layer's (one function per kind; INFINITY,
 * "no bound known", for a kind without one), times 1 for the activation
 * (ELU, ReLU: 1-Lipschitz), plus 1 with a residual; none with LayerNorm or
 * PairNorm. */
static lg_status lg__block_bound(lg_lip_layer *row, const lg__block_info *b) {
    double lb = INFINITY;
    const char *basis = "no bound known for this kind";
    switch (b->kind) {
    case LG__BLOCK_GAT:
        LG_CHECK(lg_lip_bound_gat(&lb, b->gc, b->params, b->g));
        basis = isfinite(lb) ? "corollary 1"
                : b->gc->norm == LG_ATT_NORM_NONE ? "no LipschitzNorm"
                : b->gc->norm == LG_ATT_NORM_LIPSCHITZ_REF ? "reference form: none derived"
                                                           : "no self-loop: none derived";
        break;
    case LG__BLOCK_GT:
        LG_CHECK(lg_lip_bound_gt(&lb, b->tc, b->params, b->g));
        basis = isfinite(lb) ? "corollary 2"
                : b->tc->norm == LG_ATT_NORM_NONE ? "no LipschitzNorm"
                : b->tc->norm == LG_ATT_NORM_LIPSCHITZ_REF ? "reference form: none derived"
                                                           : "gate: none derived";
        break;
    case LG__BLOCK_L2: { /* the graph bound of docs/l2-attention.md, from g's degrees */
        lg_idx n_in, n_out;
        LG_CHECK(lg_l2att_graph_degrees(b->g, &n_in, &n_out));
        LG_CHECK(lg_l2att_lipschitz_bound_f64(&lb, b->params, b->lc, n_in, n_out));
        basis = "L2 attention: graph bound";
        if (b->lc->contractive > 0) {
            lb = b->lc->contractive;
            basis = "L2 attention: contractive";
        }
        break;
    }
    case LG__BLOCK_COS:
        LG_CHECK(lg_lip_bound_cosine(&lb, b->sc, b->params, b->cn_gain, b->alpha, b->g));
        basis = "cosine block (eps^-1/2: loose)";
        break;
    default: break;
    }
    if (isfinite(lb) && b->layernorm) { lb = INFINITY; basis = "LayerNorm: none derived"; }
    if (isfinite(lb) && b->pairnorm) { lb = INFINITY; basis = "PairNorm: not Lipschitz"; }
    if (b->residual) lb += 1;
    row->bound = lb;
    snprintf(row->basis, sizeof row->basis, "%s%s", basis, b->residual && isfinite(lb) ? " + residual" : "");
    return LG_OK;
}

/* ------------------------------------------------------------------------- */
/* A model, block by block                                                     */
/* ------------------------------------------------------------------------- */

/* a b, with 0 times infinity = 0 (a constant block makes the stack constant) */
static double lg__times(double a, double b) { return a == 0 || b == 0 ? 0 : a * b; }

typedef struct {
    lg__model_f64 *m;
    int l;
} lg__block_ctx;

static lg_status lg__block_fwd(void *ctx, const double *in, double *out) {
    lg__block_ctx *b = ctx;
    return lg__model_block_forward_f64(b->m, b->l, in, out);
}

static lg_status lg__block_bwd(void *ctx, const double *d_out, double *d_in) {
    lg__block_ctx *b = ctx;
    return lg__model_block_backward_f64(b->m, b->l, d_out, d_in);
}

lg_status lg_lipschitz_estimate(lg_lip_layer *out, int cap, lg_trainer *t, const lg_lip_config *c,
                                lg_progress_fn progress, void *ctx) {
    lg_status st = LG_OK;
    lg__model_f64 *m = NULL;
    double *x0 = NULL, *tmp = NULL;
    if (!out || !t) return lg__error(LG_EINVAL, "lg_lipschitz_estimate: NULL argument");
    LG_CHECK(lg_lip_config_check(c));
    const int L = lg_trainer_layers(t);
    if (cap < L) return lg__error(LG_EINVAL, "lg_lipschitz_estimate: room for %d layers, the model has %d", cap, L);
    if (!lg_trainer_graph(t))
        return lg__error(LG_EUNSUPPORTED, "Lipschitz estimates need the whole graph: this model was trained in "
                         "mini-batches (--batch-size); a full-batch model (--batch-size 0) is another run");
    const lg_model_config *mc = lg__trainer_model_config(t);
    const lg_dataset *ds = lg__trainer_dataset(t);
    lg__model_f32 *m32 = lg__trainer_model(t);
    lg_rng rng;
    lg_rng_seed(&rng, c->seed);
    LG_TRY(lg__model_init_f64(&m, mc, ds, lg__trainer_features(t), &rng));
    const lg_idx np = lg__model_nparams_f64(m);
    if (np != lg__model_nparams_f32(m32)) {
        st = lg__error(LG_EINVAL, "lg_lipschitz_estimate: double model of %lld parameters for %lld", (long long)np,
                       (long long)lg__model_nparams_f32(m32));
        goto fail;
    }
    const float *p32 = lg__model_params_f32(m32);
    double *p64 = lg__model_params_f64(m);
    for (lg_idx k = 0; k < np; k++) p64[k] = p32[k];
    LG_TRY(lg__model_forward_f64(m, 0, 0, 0));
    int bad = lg__model_first_nonfinite_f64(m);
    if (bad == -2 || (bad >= 0 && bad < L)) { /* -1: all finite; L: only the logits */
        st = lg__error(LG_ENUMERIC, "the model's activations are not finite (first in %s %d): no estimate",
                       bad == -2 ? "the input layer" : "layer", bad == -2 ? 0 : bad);
        goto fail;
    }
    lg_idx maxw = 1, n = 0;
    for (int l = 0; l < L; l++) {
        lg__block_info b;
        LG_TRY(lg__model_block_info_f64(m, l, &b));
        maxw = LG_MAX(maxw, LG_MAX(b.w_in, b.w_out));
        n = b.n;
    }
    const lg_idx nw = n * maxw;
    LG_ALLOC(x0, nw, "Lipschitz estimate");
    LG_ALLOC(tmp, nw, "Lipschitz estimate");
    double pp = 1, pa = 1, pb = 1;
    for (int l = 0; l < L; l++) {
        lg__block_info b;
        LG_TRY(lg__model_block_info_f64(m, l, &b));
        lg_lip_layer *row = &out[l];
        memset(row, 0, sizeof *row);
        row->layer = l;
        snprintf(row->kind, sizeof row->kind, "%s",
                 b.kind == LG__BLOCK_GAT ? "gat" : b.kind == LG__BLOCK_GT ? "gt" : b.kind == LG__BLOCK_L2 ? "l2"
                                                                                : lg_model_kind_name(mc->kind));
        row->heads = b.kind == LG__BLOCK_GAT ? b.gc->heads : b.kind == LG__BLOCK_GT ? b.tc->heads
                   : b.kind == LG__BLOCK_L2 ? b.lc->heads : b.kind == LG__BLOCK_COS ? b.sc->heads : 0;
        row->norm = b.kind == LG__BLOCK_GAT ? b.gc->norm : b.kind == LG__BLOCK_GT ? b.tc->norm : LG_ATT_NORM_NONE;
        memcpy(x0, lg__model_block_input_f64(m, l), sizeof(double) * (size_t)(n * b.w_in));
        lg__block_ctx bc = {m, l};
        lg__lip_map f = {n * b.w_in, n * b.w_out, &bc, lg__block_fwd, lg__block_bwd};
        /* a stream per layer: a layer's figures do not depend on the others' */
        lg_rng_seed(&rng, c->seed ^ lg_hash64((uint64_t)l + 1));
        LG_TRY(lg__lip_power(&row->power, NULL, &f, x0, c->iters, &rng));
        row->ascent = NAN;
        if (c->starts > 0) LG_TRY(lg__lip_ascent(&row->ascent, &f, x0, c->starts, c->iters, c->radius, &rng));
        LG_TRY(lg__block_bound(row, &b));
        pp = lg__times(pp, row->power);
        pa = lg__times(pa, row->ascent);
        pb = lg__times(pb, row->bound);
        row->prod_power = pp;
        row->prod_ascent = pa;
        row->prod_bound = pb;
        /* the next block's input: this block at the real input again */
        LG_TRY(lg__model_block_forward_f64(m, l, x0, tmp));
        if (progress) progress(ctx, l + 1, L);
    }
fail:
    lg__free(x0);
    lg__free(tmp);
    lg__model_free_f64(m);
    return st;
}
