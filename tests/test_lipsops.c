/*
 * Tests of LipsFormer's small ops in src/nn (lipgnn/nn.h): CenterNorm,
 * the weighted residual shortcut, and the spectral rescaling used by the
 * spectral initialisation (also through lg_cosatt_params_init).
 *
 * Tolerances (stated once, not tuned to pass):
 *   forwards vs a naive double loop in this file: 1e-14 relative (f64),
 *       1e-6 (f32)
 *   central finite differences (double, h = 1e-6, O(1) values), every
 *   gradient: |analytic - fd| <= 1e-8 (1 + |fd|) (the ops are linear or
 *       bilinear: the truncation error is 0, the rounding ~1e-10)
 *   spectral rescale: sigma_max after = 1 within 1e-9 (2x2 closed form and a
 *       1000-iteration reference; the default 100 iterations converge at the
 *       rate (s2/s1)^200 for these matrices)
 *   thread counts: bitwise equal
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static double ur(lg_rng *r) { return 2.0 * lg_rng_double(r) - 1.0; }

/* ------------------------------------------------------------------------- */
/* CenterNorm                                                                 */
/* ------------------------------------------------------------------------- */

/* y = gain * d/(d-1) (x - mean) + bias, written out */
static void cn_naive(double *y, const double *x, const double *gain, const double *bias, lg_idx n, lg_idx d) {
    for (lg_idx i = 0; i < n; i++) {
        double m = 0;
        for (lg_idx c = 0; c < d; c++) m += x[i * d + c];
        m /= (double)d;
        for (lg_idx c = 0; c < d; c++)
            y[i * d + c] = gain[c] * ((double)d / (double)(d - 1)) * (x[i * d + c] - m) + bias[c];
    }
}

static void test_centernorm_forward(void **state) {
    (void)state;
    lg_rng r;
    lg_rng_seed(&r, 1);
    const lg_idx n = 37, d = 21;
    double *x = lg_test_dvec(n * d), *g = lg_test_dvec(d), *b = lg_test_dvec(d), *y = lg_test_dvec(n * d),
           *ref = lg_test_dvec(n * d);
    float *xf = calloc((size_t)(n * d), sizeof(float)), *gf = calloc((size_t)d, sizeof(float));
    float *bf = calloc((size_t)d, sizeof(float)), *yf = calloc((size_t)(n * d), sizeof(float));
    assert_true(xf && gf && bf && yf);
    for (lg_idx t = 0; t < n * d; t++) x[t] = 3 * ur(&r) + 5, xf[t] = (float)x[t], x[t] = xf[t];
    for (lg_idx c = 0; c < d; c++) g[c] = 1 + 0.5 * ur(&r), b[c] = ur(&r), gf[c] = (float)g[c], bf[c] = (float)b[c],
                                   g[c] = gf[c], b[c] = bf[c];
    cn_naive(ref, x, g, b, n, d);
    assert_ok(lg_centernorm_forward_f64(y, x, g, b, n, d));
    assert_ok(lg_centernorm_forward_f32(yf, xf, gf, bf, n, d));
    for (lg_idx t = 0; t < n * d; t++) {
        assert_true(fabs(y[t] - ref[t]) <= 1e-14 * (1 + fabs(ref[t])));
        assert_true(fabs(yf[t] - ref[t]) <= 1e-5 * (1 + fabs(ref[t])));
    }
    /* NULL gain and bias: 1 and 0; each row of the result sums to 0 */
    assert_ok(lg_centernorm_forward_f64(y, x, NULL, NULL, n, d));
    for (lg_idx i = 0; i < n; i++) {
        double s = 0;
        for (lg_idx c = 0; c < d; c++) s += y[i * d + c];
        assert_true(fabs(s) < 1e-12);
    }
    /* a constant row maps exactly to the bias */
    for (lg_idx c = 0; c < d; c++) x[c] = 0.1;
    assert_ok(lg_centernorm_forward_f64(y, x, g, b, 1, d));
    for (lg_idx c = 0; c < d; c++) assert_true(y[c] == b[c]);
    /* the Lipschitz constant: ||J|| = max|gain| d/(d-1) along the worst
     * zero-mean direction; with gain = 1, ||y(x) - y(x')|| = d/(d-1) ||u|| for
     * a zero-mean difference u, and <= for any */
    for (lg_idx c = 0; c < d; c++) g[c] = 1, b[c] = 0;
    double u[21], x2[21], y1[21], y2[21], mu = 0, nu = 0, ny = 0;
    for (lg_idx c = 0; c < d; c++) u[c] = ur(&r), mu += u[c] / (double)d, x[c] = ur(&r);
    for (lg_idx c = 0; c < d; c++) u[c] -= mu, x2[c] = x[c] + u[c], nu += u[c] * u[c];
    assert_ok(lg_centernorm_forward_f64(y1, x, g, b, 1, d));
    assert_ok(lg_centernorm_forward_f64(y2, x2, g, b, 1, d));
    for (lg_idx c = 0; c < d; c++) ny += (y2[c] - y1[c]) * (y2[c] - y1[c]);
    assert_true(fabs(sqrt(ny) - (double)d / (double)(d - 1) * sqrt(nu)) < 1e-12);
    free(x), free(g), free(b), free(y), free(ref), free(xf), free(gf), free(bf), free(yf);
}

/* L = sum G * centernorm(x; gain, bias) */
static double cn_loss(const double *x, const double *g, const double *b, const double *G, lg_idx n, lg_idx d,
                      double *y) {
    assert_ok(lg_centernorm_forward_f64(y, x, g, b, n, d));
    double s = 0;
    for (lg_idx t = 0; t < n * d; t++) s += y[t] * G[t];
    return s;
}

static int fd_entries(double *v, lg_idx m, const double *an, double (*loss)(void *), void *ctx, const char *what) {
    int bad = 0;
    for (lg_idx t = 0; t < m; t++) {
        double v0 = v[t];
        v[t] = v0 + 1e-6;
        double lp = loss(ctx);
        v[t] = v0 - 1e-6;
        double lm = loss(ctx);
        v[t] = v0;
        double fd = (lp - lm) / 2e-6;
        if (!(fabs(an[t] - fd) <= 1e-8 * (1 + fabs(fd)))) {
            if (!bad) print_message("  %s[%lld]: analytic %.12g fd %.12g\n", what, (long long)t, an[t], fd);
            bad++;
        }
    }
    return bad;
}

typedef struct cn_ctx {
    double *x, *g, *b, *G, *y;
    lg_idx n, d;
} cn_ctx;

static double cn_loss_ctx(void *p) {
    cn_ctx *c = p;
    return cn_loss(c->x, c->g, c->b, c->G, c->n, c->d, c->y);
}

static void test_centernorm_fd(void **state) {
    (void)state;
    lg_rng r;
    lg_rng_seed(&r, 2);
    for (int withgain = 0; withgain < 2; withgain++) {
        const lg_idx n = 6, d = 5;
        cn_ctx c = {lg_test_dvec(n * d), lg_test_dvec(d), lg_test_dvec(d), lg_test_dvec(n * d),
                    lg_test_dvec(n * d), n, d};
        for (lg_idx t = 0; t < n * d; t++) c.x[t] = ur(&r), c.G[t] = ur(&r);
        for (lg_idx k = 0; k < d; k++) c.g[k] = 1 + 0.5 * ur(&r), c.b[k] = ur(&r);
        double *dx = lg_test_dvec(n * d), *dg = lg_test_dvec(d), *db = lg_test_dvec(d);
        /* start from non-zero contents: the backward adds */
        for (lg_idx t = 0; t < n * d; t++) dx[t] = 0.5;
        for (lg_idx k = 0; k < d; k++) dg[k] = -0.25, db[k] = 0.75;
        assert_ok(lg_centernorm_backward_f64(dx, dg, db, c.G, c.x, withgain ? c.g : NULL, n, d));
        for (lg_idx t = 0; t < n * d; t++) dx[t] -= 0.5;
        for (lg_idx k = 0; k < d; k++) dg[k] += 0.25, db[k] -= 0.75;
        if (!withgain)
            for (lg_idx k = 0; k < d; k++) c.g[k] = 1; /* NULL gain = 1 */
        assert_int_equal(fd_entries(c.x, n * d, dx, cn_loss_ctx, &c, "dx"), 0);
        assert_int_equal(fd_entries(c.g, d, dg, cn_loss_ctx, &c, "dgain"), 0);
        assert_int_equal(fd_entries(c.b, d, db, cn_loss_ctx, &c, "dbias"), 0);
        /* the checker sees a wrong entry */
        dx[3] += 1e-4;
        assert_int_equal(fd_entries(c.x, n * d, dx, cn_loss_ctx, &c, "dx"), 1);
        free(c.x), free(c.g), free(c.b), free(c.G), free(c.y), free(dx), free(dg), free(db);
    }
}

/* ------------------------------------------------------------------------- */
/* Weighted residual                                                          */
/* ------------------------------------------------------------------------- */

typedef struct wr_ctx {
    double *x, *f, *a, *G, *y;
    lg_idx n, d;
} wr_ctx;

static double wr_loss_ctx(void *p) {
    wr_ctx *c = p;
    assert_ok(lg_wresidual_forward_f64(c->y, c->x, c->f, c->a, c->n, c->d));
    double s = 0;
    for (lg_idx t = 0; t < c->n * c->d; t++) s += c->y[t] * c->G[t];
    return s;
}

static void test_wresidual(void **state) {
    (void)state;
    lg_rng r;
    lg_rng_seed(&r, 3);
    const lg_idx n = 7, d = 19; /* two column blocks */
    wr_ctx c = {lg_test_dvec(n * d), lg_test_dvec(n * d), lg_test_dvec(d), lg_test_dvec(n * d),
                lg_test_dvec(n * d), n, d};
    assert_ok(lg_wresidual_init_f64(c.a, d, 8));
    for (lg_idx k = 0; k < d; k++) assert_true(c.a[k] == 0.125);
    assert_int_equal(lg_wresidual_init_f64(c.a, d, 0), LG_EINVAL);
    for (lg_idx t = 0; t < n * d; t++) c.x[t] = ur(&r), c.f[t] = ur(&r), c.G[t] = ur(&r);
    for (lg_idx k = 0; k < d; k++) c.a[k] = ur(&r);
    assert_ok(lg_wresidual_forward_f64(c.y, c.x, c.f, c.a, n, d));
    for (lg_idx t = 0; t < n * d; t++) assert_true(c.y[t] == c.x[t] + c.a[t % d] * c.f[t]);
    /* in place (y = x) */
    double *xc = lg_test_dvec(n * d);
    memcpy(xc, c.x, sizeof(double) * (size_t)(n * d));
    assert_ok(lg_wresidual_forward_f64(xc, xc, c.f, c.a, n, d));
    assert_memory_equal(xc, c.y, sizeof(double) * (size_t)(n * d));
    double *dx = lg_test_dvec(n * d), *df = lg_test_dvec(n * d), *da = lg_test_dvec(d);
    assert_ok(lg_wresidual_backward_f64(dx, df, da, c.G, c.f, c.a, n, d));
    assert_int_equal(fd_entries(c.x, n * d, dx, wr_loss_ctx, &c, "dx"), 0);
    assert_int_equal(fd_entries(c.f, n * d, df, wr_loss_ctx, &c, "df"), 0);
    assert_int_equal(fd_entries(c.a, d, da, wr_loss_ctx, &c, "dalpha"), 0);
    da[17] += 1e-4;
    assert_int_equal(fd_entries(c.a, d, da, wr_loss_ctx, &c, "dalpha"), 1);
    /* accumulation: a second call doubles */
    double *da2 = lg_test_dvec(d);
    assert_ok(lg_wresidual_backward_f64(NULL, NULL, da2, c.G, c.f, c.a, n, d));
    assert_ok(lg_wresidual_backward_f64(NULL, NULL, da2, c.G, c.f, c.a, n, d));
    for (lg_idx k = 0; k < d; k++) assert_true(fabs(da2[k] - 2 * (da[k] - (k == 17 ? 1e-4 : 0))) < 1e-12);
    /* errors */
    assert_int_equal(lg_wresidual_forward_f64(NULL, c.x, c.f, c.a, n, d), LG_EINVAL);
    assert_int_equal(lg_wresidual_forward_f64(c.y, c.x, c.f, NULL, n, d), LG_EINVAL);
    assert_int_equal(lg_wresidual_forward_f64(c.y, c.x, c.f, c.a, -1, d), LG_EINVAL);
    assert_int_equal(lg_wresidual_backward_f64(NULL, df, NULL, c.G, c.f, NULL, n, d), LG_EINVAL);
    assert_int_equal(lg_wresidual_backward_f64(NULL, NULL, da, c.G, NULL, c.a, n, d), LG_EINVAL);
    assert_int_equal(lg_wresidual_backward_f64(dx, NULL, NULL, NULL, c.f, c.a, n, d), LG_EINVAL);
    /* dx and df aliasing: refused (it added both into one array and returned LG_OK) */
    assert_int_equal(lg_wresidual_backward_f64(dx, dx, NULL, c.G, c.f, c.a, n, d), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "dx and df overlap"));
    float fdx[8] = {0}, fg[6] = {1, 1, 1, 1, 1, 1}, fa[2] = {1, 1};
    assert_int_equal(lg_wresidual_backward_f32(fdx, fdx + 2, NULL, fg, NULL, fa, 3, 2), LG_EINVAL);
    assert_true(fdx[0] == 0 && fdx[2] == 0); /* nothing written */
    assert_ok(lg_wresidual_forward_f64(NULL, NULL, NULL, NULL, 0, d)); /* empty */
    free(c.x), free(c.f), free(c.a), free(c.G), free(c.y), free(xc), free(dx), free(df), free(da), free(da2);
}

/* CenterNorm and residual gradients in float: 1 and 2 threads, bitwise equal
 * (rows above the parallel threshold). */
static void test_threads_bitwise(void **state) {
    (void)state;
    lg_rng r;
    lg_rng_seed(&r, 4);
    const lg_idx n = 3000, d = 40;
    float *x = calloc((size_t)(n * d), sizeof(float)), *G = calloc((size_t)(n * d), sizeof(float));
    float *g = calloc((size_t)d, sizeof(float)), *b = calloc((size_t)d, sizeof(float));
    assert_true(x && G && g && b);
    for (lg_idx t = 0; t < n * d; t++) x[t] = (float)ur(&r), G[t] = (float)ur(&r);
    for (lg_idx k = 0; k < d; k++) g[k] = (float)(1 + ur(&r)), b[k] = (float)ur(&r);
    float *res[2][5];
    const int saved = omp_get_max_threads();
    for (int s = 0; s < 2; s++) {
        omp_set_num_threads(s + 1);
        for (int k = 0; k < 5; k++) {
            res[s][k] = calloc((size_t)(n * d), sizeof(float));
            assert_non_null(res[s][k]);
        }
        assert_ok(lg_centernorm_forward_f32(res[s][0], x, g, b, n, d));
        assert_ok(lg_centernorm_backward_f32(res[s][1], res[s][2], res[s][2] + d, G, x, g, n, d));
        assert_ok(lg_wresidual_forward_f32(res[s][3], x, G, g, n, d));
        assert_ok(lg_wresidual_backward_f32(res[s][4], res[s][4] + n * d / 2, res[s][2] + 2 * d, G, x, g, n / 2, d));
    }
    omp_set_num_threads(saved);
    for (int k = 0; k < 5; k++) {
        assert_memory_equal(res[0][k], res[1][k], sizeof(float) * (size_t)(n * d));
        free(res[0][k]), free(res[1][k]);
    }
    free(x), free(G), free(g), free(b);
}

static void test_centernorm_invalid(void **state) {
    (void)state;
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8], dx[8];
    assert_int_equal(lg_centernorm_forward_f64(y, x, NULL, NULL, 8, 1), LG_EINVAL); /* d = 1 */
    assert_non_null(strstr(lg_last_error(), "d >= 2"));
    assert_int_equal(lg_centernorm_forward_f64(y, x, NULL, NULL, -1, 2), LG_EINVAL);
    assert_int_equal(lg_centernorm_forward_f64(NULL, x, NULL, NULL, 4, 2), LG_EINVAL);
    assert_int_equal(lg_centernorm_forward_f64(y, NULL, NULL, NULL, 4, 2), LG_EINVAL);
    assert_int_equal(lg_centernorm_backward_f64(dx, NULL, NULL, NULL, x, NULL, 4, 2), LG_EINVAL);
    double dg[2];
    assert_int_equal(lg_centernorm_backward_f64(NULL, dg, NULL, y, NULL, NULL, 4, 2), LG_EINVAL);
    assert_ok(lg_centernorm_backward_f64(dx, NULL, NULL, y, NULL, NULL, 4, 2)); /* x not needed for dx */
    assert_ok(lg_centernorm_forward_f64(NULL, NULL, NULL, NULL, 0, 2));
}

/* ------------------------------------------------------------------------- */
/* Spectral rescaling                                                         */
/* ------------------------------------------------------------------------- */

/* sigma_max of a 2x2 matrix [a b; c d] in closed form. */
static double sigma2x2(double a, double b, double c, double d) {
    double s = a * a + b * b + c * c + d * d, det = a * d - b * c;
    return sqrt((s + sqrt(fmax(0, s * s - 4 * det * det))) / 2);
}

/* sigma_max by `it` power iterations on W^T W in this file (the reference). */
static double sigma_ref(const double *w, lg_idx rows, lg_idx cols, lg_idx ld, int it) {
    double *v = lg_test_dvec(cols), *u = lg_test_dvec(rows), s = 0;
    for (lg_idx c = 0; c < cols; c++) v[c] = 1 + 0.1 * (double)c;
    for (int k = 0; k < it; k++) {
        double nv = 0, nu = 0;
        for (lg_idx c = 0; c < cols; c++) nv += v[c] * v[c];
        for (lg_idx c = 0; c < cols; c++) v[c] /= sqrt(nv);
        for (lg_idx i = 0; i < rows; i++) {
            u[i] = 0;
            for (lg_idx c = 0; c < cols; c++) u[i] += w[i * ld + c] * v[c];
            nu += u[i] * u[i];
        }
        s = sqrt(nu);
        for (lg_idx c = 0; c < cols; c++) {
            v[c] = 0;
            for (lg_idx i = 0; i < rows; i++) v[c] += w[i * ld + c] * u[i];
        }
    }
    free(v), free(u);
    return s;
}

static void test_spectral(void **state) {
    (void)state;
    /* 2x2 closed form */
    double w2[4] = {3, 1, -2, 0.5}, s = 0;
    const double exact = sigma2x2(3, 1, -2, 0.5);
    assert_ok(lg_spectral_rescale_f64(w2, 2, 2, 2, LG_SPECTRAL_ITERS, 9, &s));
    assert_true(fabs(s - exact) < 1e-9 * exact);
    assert_true(fabs(sigma2x2(w2[0], w2[1], w2[2], w2[3]) - 1) < 1e-9);
    assert_true(fabs(w2[0] - 3 / exact) < 1e-12);
    /* random 7 x 5 inside a row stride of 9 (the padding is left alone) */
    lg_rng r;
    lg_rng_seed(&r, 6);
    double w[7 * 9];
    for (int t = 0; t < 63; t++) w[t] = ur(&r);
    double pad = w[5];
    const double before = sigma_ref(w, 7, 5, 9, 1000);
    assert_ok(lg_spectral_rescale_f64(w, 7, 5, 9, LG_SPECTRAL_ITERS, 1, &s));
    print_message("  7x5: sigma %.12g (reference %.12g), after %.12g\n", s, before, sigma_ref(w, 7, 5, 9, 1000));
    assert_true(fabs(s - before) < 1e-9 * before);
    assert_true(fabs(sigma_ref(w, 7, 5, 9, 1000) - 1) < 1e-9);
    assert_true(w[5] == pad);
    /* float */
    float wf[6] = {1, 2, 3, 4, 5, 6};
    assert_ok(lg_spectral_rescale_f32(wf, 2, 3, 3, LG_SPECTRAL_ITERS, 2, &s));
    double wd[6];
    for (int t = 0; t < 6; t++) wd[t] = wf[t];
    assert_true(fabs(sigma_ref(wd, 2, 3, 3, 1000) - 1) < 1e-6);
    /* a zero matrix stays zero, sigma 0 */
    double z[4] = {0, 0, 0, 0};
    assert_ok(lg_spectral_rescale_f64(z, 2, 2, 2, 10, 1, &s));
    assert_true(s == 0 && z[0] == 0 && z[3] == 0);
    /* errors */
    assert_int_equal(lg_spectral_rescale_f64(NULL, 2, 2, 2, 10, 1, NULL), LG_EINVAL);
    assert_int_equal(lg_spectral_rescale_f64(w2, 2, 2, 1, 10, 1, NULL), LG_EINVAL); /* ld < cols */
    assert_int_equal(lg_spectral_rescale_f64(w2, 2, 2, 2, 0, 1, NULL), LG_EINVAL);
    assert_int_equal(lg_spectral_rescale_f64(w2, -2, 2, 2, 10, 1, NULL), LG_EINVAL);
    /* a row stride whose extent overflows: refused, nothing read or written (it wrote out of bounds) */
    float f4[4] = {1, 2, 3, 4};
    s = -1;
    assert_int_equal(lg_spectral_rescale_f32(f4, 2, 2, INT64_MAX / 2, 10, 1, &s), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "overflow"));
    assert_int_equal(lg_spectral_rescale_f32(f4, 3, 2, INT64_MAX / 16, 10, 1, &s), LG_EINVAL);
    assert_int_equal(lg_spectral_rescale_f64(w2, 2, 2, INT64_MAX / 8, 10, 1, &s), LG_EINVAL);
    assert_true(s == -1 && f4[0] == 1 && f4[3] == 4);
    assert_ok(lg_spectral_rescale_f32(f4, 1, 2, INT64_MAX, 10, 1, &s)); /* one row: the stride is never used */
    double inf[4] = {INFINITY, 0, 0, 1};
    assert_int_equal(lg_spectral_rescale_f64(inf, 2, 2, 2, 10, 1, NULL), LG_EINVAL);
    lg_test_alloc_fail_at(1);
    assert_int_equal(lg_spectral_rescale_f64(w2, 2, 2, 2, 10, 1, NULL), LG_ENOMEM);
    lg_test_alloc_reset();
    assert_int_equal(lg_test_alloc_live(), 0);
}

/* lg_cosatt_params_init with spectral_init: W (F x 3KC) and W_O (KC x D)
 * have spectral norm 1 afterwards; without it, their Glorot norms differ
 * from 1. */
static void test_cosatt_spectral_init(void **state) {
    (void)state;
    lg_cosatt_config cfg = lg_cosatt_config_default(12, 2, 5, 7);
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(&cfg, &lay));
    double *p = lg_test_dvec(lay.count);
    lg_rng r;
    lg_rng_seed(&r, 8);
    assert_ok(lg_cosatt_params_init_f64(p, &cfg, &r));
    const double s0 = sigma_ref(p, 12, 30, 30, 2000), so0 = sigma_ref(p + lay.wo, 10, 7, 7, 2000);
    cfg.spectral_init = 1;
    lg_rng_seed(&r, 8);
    assert_ok(lg_cosatt_params_init_f64(p, &cfg, &r));
    const double s1 = sigma_ref(p, 12, 30, 30, 2000), so1 = sigma_ref(p + lay.wo, 10, 7, 7, 2000);
    print_message("  cosatt init: sigma(W) %.6g -> %.9g, sigma(W_O) %.6g -> %.9g\n", s0, s1, so0, so1);
    assert_true(fabs(s0 - 1) > 0.1 && fabs(so0 - 1) > 0.1);
    assert_true(fabs(s1 - 1) < 1e-6 && fabs(so1 - 1) < 1e-6);
    free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_centernorm_forward),   cmocka_unit_test(test_centernorm_fd),
        cmocka_unit_test(test_centernorm_invalid),   cmocka_unit_test(test_wresidual),
        cmocka_unit_test(test_threads_bitwise),      cmocka_unit_test(test_spectral),
        cmocka_unit_test(test_cosatt_spectral_init),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
