/* Tests of src/nn: every gradient against central finite differences (double
 * precision), forward outputs against the naive oracles of nn_oracle.h, the
 * properties of PairNorm, LayerNorm and dropout, bitwise reproducibility of the
 * float kernels across thread counts, float against double, sparse against
 * dense, and bad input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <omp.h>

#include "testutil.h"
#include "core/internal.h"
#include "core/fexp.h"
#include "core/gemm.h"
#include "nn/nn_common.h"
#include "nn_oracle.h"

/* ------------------------------------------------------------------------- */
/* Helpers                                                                    */
/* ------------------------------------------------------------------------- */

static lg_rng rng;

static double urand(void) { return 2.0 * lg_rng_double(&rng) - 1.0; }

static double *dvec(lg_idx n) {
    double *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    assert_non_null(v);
    return v;
}

static float *fvec(lg_idx n) {
    float *v = calloc((size_t)(n > 0 ? n : 1), sizeof *v);
    assert_non_null(v);
    return v;
}

static double *drand(lg_idx n) {
    double *v = dvec(n);
    for (lg_idx k = 0; k < n; k++) v[k] = urand();
    return v;
}

static float *frand(lg_idx n) {
    float *v = fvec(n);
    for (lg_idx k = 0; k < n; k++) v[k] = (float)urand();
    return v;
}

static double *to_d(const float *f, lg_idx n) {
    double *v = dvec(n);
    for (lg_idx k = 0; k < n; k++) v[k] = f[k];
    return v;
}

static double dot(const double *a, const double *b, lg_idx n) {
    double s = 0;
    for (lg_idx k = 0; k < n; k++) s += a[k] * b[k];
    return s;
}

/* max |a - b| / max(1, max |b|) */
static double rel_err(const double *a, const double *b, lg_idx n) {
    double e = 0, m = 1;
    for (lg_idx k = 0; k < n; k++) {
        e = fmax(e, fabs(a[k] - b[k]));
        m = fmax(m, fabs(b[k]));
    }
    return e / m;
}

static double rel_err_f(const float *a, const double *b, lg_idx n) {
    double e = 0, m = 1;
    for (lg_idx k = 0; k < n; k++) {
        e = fmax(e, fabs((double)a[k] - b[k]));
        m = fmax(m, fabs(b[k]));
    }
    return e / m;
}

#define assert_close(a, b, n, tol, what)                                                          \
    do {                                                                                          \
        double e__ = rel_err((a), (b), (n));                                                      \
        if (!(e__ <= (tol))) fail_msg("%s: relative error %.3g > %.1g", (what), e__, (double)(tol)); \
    } while (0)

#define assert_close_f(a, b, n, tol, what)                                                        \
    do {                                                                                          \
        double e__ = rel_err_f((a), (b), (n));                                                    \
        if (!(e__ <= (tol))) fail_msg("%s: relative error %.3g > %.1g", (what), e__, (double)(tol)); \
    } while (0)

/* A random sparse n x d matrix (float values in [-1, 1]), allocated through
 * the library's hook so that lg_features_free releases it; row 1 is empty. */
static lg_features *rand_sparse(lg_idx n, lg_idx d, double density) {
    lg_features *f = lg__calloc(1, sizeof *f);
    assert_non_null(f);
    f->n = n;
    f->d = d;
    f->kind = LG_FEAT_SPARSE;
    f->p = lg__calloc((size_t)n + 1, sizeof *f->p);
    f->j = lg__malloc_array((size_t)(n * d) + 1, sizeof *f->j);
    f->x = lg__malloc_array((size_t)(n * d) + 1, sizeof *f->x);
    assert_true(f->p && f->j && f->x);
    lg_idx q = 0;
    for (lg_idx i = 0; i < n; i++) {
        for (lg_idx c = 0; c < d; c++)
            if (i != 1 && lg_rng_double(&rng) < density) {
                f->j[q] = c;
                f->x[q++] = (float)urand();
            }
        f->p[i + 1] = q;
    }
    f->nnz = q;
    return f;
}

/* ------------------------------------------------------------------------- */
/* The finite-difference checker                                              */
/* ------------------------------------------------------------------------- */

/* A loss L(params) evaluated through the double kernels. */
typedef double (*loss_fn)(void *ctx);

#define FD_H 1e-6

/* max over k of |g[k] - fd_k| / max(1, |fd_k|), fd_k the central difference
 * (L(p + h e_k) - L(p - h e_k)) / 2h. p is restored. */
static double fd_error(loss_fn f, void *ctx, double *p, const double *g, lg_idx len) {
    double worst = 0;
    for (lg_idx k = 0; k < len; k++) {
        double o = p[k];
        p[k] = o + FD_H;
        double lp = f(ctx);
        p[k] = o - FD_H;
        double lm = f(ctx);
        p[k] = o;
        double fd = (lp - lm) / (2 * FD_H);
        double e = fabs(fd - g[k]) / fmax(1.0, fabs(fd));
        if (!(e <= worst)) worst = e; /* NaN propagates as a failure */
    }
    return worst;
}

/* Fails unless the gradient g of f with respect to p matches central
 * differences to tol, and is not identically zero (a vacuous pass). */
static void check_grad(const char *what, loss_fn f, void *ctx, double *p, const double *g, lg_idx len,
                       double tol) {
    double gmax = 0;
    for (lg_idx k = 0; k < len; k++) gmax = fmax(gmax, fabs(g[k]));
    if (!(gmax > 1e-6)) fail_msg("%s: gradient is identically zero", what);
    double e = fd_error(f, ctx, p, g, len);
    if (!(e <= tol)) fail_msg("%s: differs from central differences by %.3g (tolerance %.1g)", what, e, tol);
}

/* g - g0: what a backward added to a gradient that started at g0 (so that a
 * backward that overwrites instead of accumulating fails the check). */
static void sub_prior(double *g, const double *g0, lg_idx n) {
    for (lg_idx k = 0; k < n; k++) g[k] -= g0[k];
}

/* Tolerances of the checks. Central differences with h = 1e-6 in double carry
 * a truncation error ~h^2 |L'''| ~ 1e-10 and a rounding error ~1e-16 |L| / h
 * ~ 1e-9 for the losses below (|L| ~ 10); the tolerances leave a margin of
 * ~100 above that, far below any wrong term (>= 1e-3 here). Linear maps
 * (linear, dropout) have no truncation error. */
#define TOL_LINEAR 1e-8
#define TOL_SMOOTH 1e-7

/* ------------------------------------------------------------------------- */
/* Finite-difference checks, one per operation                                */
/* ------------------------------------------------------------------------- */

typedef struct {
    lg_idx n, in, out;
    double *x, *w, *b, *y, *R;
} lin_ctx;

static double lin_loss(void *v) {
    lin_ctx *c = v;
    assert_ok(lg_linear_forward_f64(c->y, c->x, c->w, c->b, c->n, c->in, c->out));
    return dot(c->y, c->R, c->n * c->out);
}

static void test_fd_linear(void **state) {
    (void)state;
    lin_ctx c = {6, 5, 4, NULL, NULL, NULL, NULL, NULL};
    c.x = drand(c.n * c.in);
    c.w = drand(c.in * c.out);
    c.b = drand(c.out);
    c.y = dvec(c.n * c.out);
    c.R = drand(c.n * c.out);
    double *ref = dvec(c.n * c.out);
    lin_loss(&c);
    oracle_linear(ref, c.x, c.w, c.b, c.n, c.in, c.out);
    assert_close(c.y, ref, c.n * c.out, 1e-14, "linear forward vs oracle");

    double *dx0 = drand(c.n * c.in), *dw0 = drand(c.in * c.out), *db0 = drand(c.out);
    double *dx = dvec(c.n * c.in), *dw = dvec(c.in * c.out), *db = dvec(c.out);
    memcpy(dx, dx0, sizeof(double) * (size_t)(c.n * c.in));
    memcpy(dw, dw0, sizeof(double) * (size_t)(c.in * c.out));
    memcpy(db, db0, sizeof(double) * (size_t)c.out);
    assert_ok(lg_linear_backward_f64(dx, dw, db, c.R, c.x, c.w, c.n, c.in, c.out));
    sub_prior(dx, dx0, c.n * c.in);
    sub_prior(dw, dw0, c.in * c.out);
    sub_prior(db, db0, c.out);
    check_grad("linear dX", lin_loss, &c, c.x, dx, c.n * c.in, TOL_LINEAR);
    check_grad("linear dW", lin_loss, &c, c.w, dw, c.in * c.out, TOL_LINEAR);
    check_grad("linear db", lin_loss, &c, c.b, db, c.out, TOL_LINEAR);
    free(c.x); free(c.w); free(c.b); free(c.y); free(c.R); free(ref);
    free(dx0); free(dw0); free(db0); free(dx); free(dw); free(db);
}

typedef struct {
    lg_features *X;
    lg_idx out;
    double *w, *b, *y, *R;
} slin_ctx;

static double slin_loss(void *v) {
    slin_ctx *c = v;
    assert_ok(lg_linear_sparse_forward_f64(c->y, c->X, c->w, c->b, c->out));
    return dot(c->y, c->R, c->X->n * c->out);
}

static void test_fd_sparse_linear(void **state) {
    (void)state;
    slin_ctx c = {rand_sparse(7, 9, 0.35), 4, NULL, NULL, NULL, NULL};
    lg_idx n = c.X->n, in = c.X->d;
    c.w = drand(in * c.out);
    c.b = drand(c.out);
    c.y = dvec(n * c.out);
    c.R = drand(n * c.out);
    double *xd = dvec(n * in), *ref = dvec(n * c.out);
    oracle_densify(xd, c.X);
    oracle_linear(ref, xd, c.w, c.b, n, in, c.out);
    slin_loss(&c);
    assert_close(c.y, ref, n * c.out, 1e-14, "sparse linear forward vs oracle");

    double *dw0 = drand(in * c.out), *db0 = drand(c.out), *dw = dvec(in * c.out), *db = dvec(c.out);
    memcpy(dw, dw0, sizeof(double) * (size_t)(in * c.out));
    memcpy(db, db0, sizeof(double) * (size_t)c.out);
    assert_ok(lg_linear_sparse_backward_f64(dw, db, c.R, c.X, in, c.out));
    sub_prior(dw, dw0, in * c.out);
    sub_prior(db, db0, c.out);
    check_grad("sparse linear dW", slin_loss, &c, c.w, dw, in * c.out, TOL_LINEAR);
    check_grad("sparse linear db", slin_loss, &c, c.b, db, c.out, TOL_LINEAR);
    lg_features_free(c.X);
    free(c.w); free(c.b); free(c.y); free(c.R); free(xd); free(ref);
    free(dw0); free(db0); free(dw); free(db);
}

typedef struct {
    lg_idx n;
    double *x, *y, *R;
} elu_ctx;

static double elu_loss(void *v) {
    elu_ctx *c = v;
    assert_ok(lg_elu_forward_f64(c->y, c->x, c->n));
    return dot(c->y, c->R, c->n);
}

/* ELU inputs at least 0.05 away from the kink at 0 */
static double *elu_inputs(lg_idx n) {
    double *x = dvec(n);
    for (lg_idx k = 0; k < n; k++) x[k] = (k % 2 ? 1 : -1) * (0.05 + 2.0 * lg_rng_double(&rng));
    return x;
}

/* The float ELU computes expm1 inline (vectorised, core/fexp.h); against
 * double expm1 rounded to float: within 2 ulp over [-100, 10] (1.07 at worst
 * over every float of [-87, 0], bench/README.md, stop 41) and at the special values
 * (NaN stays NaN, -inf gives -1, +inf stays). */
static void test_elu_f32_accuracy(void **state) {
    (void)state;
    const lg_idx n = 400001;
    float *x = malloc(sizeof(float) * (size_t)(n + 8)), *y = malloc(sizeof(float) * (size_t)(n + 8));
    assert_non_null(x);
    assert_non_null(y);
    for (lg_idx k = 0; k < n; k++) x[k] = -100.0f + 110.0f * (float)k / (float)(n - 1);
    const float special[8] = {-0.0f, -1e-30f, -1e-7f, -0.3465f, -0.3467f, -87.5f, -INFINITY, INFINITY};
    for (int k = 0; k < 8; k++) x[n + k] = special[k];
    assert_ok(lg_elu_forward_f32(y, x, n + 8));
    double worst = 0;
    for (lg_idx k = 0; k < n + 8; k++) {
        double ref = x[k] > 0 ? x[k] : expm1((double)x[k]);
        float rf = (float)ref;
        if (isinf(rf)) {
            assert_true(y[k] == rf);
            continue;
        }
        double ulp = nextafterf(fabsf(rf), INFINITY) - fabsf(rf);
        double e = fabs((double)y[k] - ref) / ulp;
        if (e > worst) worst = e;
        if (!(e <= 2)) fail_msg("ELU(%.9g) = %.9g, expm1 gives %.9g (%.2f ulp)", x[k], y[k], ref, e);
    }
    print_message("float ELU: worst error %.2f ulp\n", worst);
    x[0] = NAN;
    assert_ok(lg_elu_forward_f32(y, x, 1));
    assert_true(isnan(y[0]));
    free(x);
    free(y);
}

/* The softmax's float exp (core/fexp.h, lg__expf_nonpos) against double exp
 * rounded to float: within 2 ulp on every 61st float of [-87, 0] (18 million);
 * exactly 1 at 0 and -0 (a row of one edge relies on it); 0 below -87 and at
 * -inf; NaN stays NaN. */
static void test_fexp_accuracy(void **state) {
    (void)state;
    double worst = 0;
    float wx = 0;
    union { float f; uint32_t u; } lo = {.f = -87.0f}, b;
    for (uint32_t u = 0x80000000u; u <= lo.u; u += 61) {
        b.u = u;
        const float y = lg__expf_nonpos(b.f);
        const double ref = exp((double)b.f);
        const float rf = (float)ref;
        const double e = fabs((double)y - ref) / (double)(nextafterf(rf, INFINITY) - rf);
        if (e > worst) worst = e, wx = b.f;
        if (!(e <= 2)) fail_msg("exp(%.9g) = %.9g, exp gives %.9g (%.2f ulp)", b.f, y, ref, e);
    }
    print_message("float exp: worst error %.2f ulp at %.9g\n", worst, wx);
    assert_true(lg__expf_nonpos(0.0f) == 1.0f);
    assert_true(lg__expf_nonpos(-0.0f) == 1.0f);
    const float zero[4] = {-87.0001f, -88.0f, -1e30f, -INFINITY};
    for (int k = 0; k < 4; k++) assert_true(lg__expf_nonpos(zero[k]) == 0.0f);
    assert_true(isnan(lg__expf_nonpos(NAN)));
}

static void test_fd_elu(void **state) {
    (void)state;
    elu_ctx c = {24, elu_inputs(24), dvec(24), drand(24)};
    double *ref = dvec(c.n), *dx0 = drand(c.n), *dx = dvec(c.n);
    elu_loss(&c);
    oracle_elu(ref, c.x, c.n);
    assert_close(c.y, ref, c.n, 1e-15, "ELU forward vs oracle");
    memcpy(dx, dx0, sizeof(double) * (size_t)c.n);
    assert_ok(lg_elu_backward_f64(dx, c.R, c.y, c.n));
    sub_prior(dx, dx0, c.n);
    check_grad("ELU dX", elu_loss, &c, c.x, dx, c.n, TOL_SMOOTH);
    /* in place: the forward may overwrite its input */
    elu_loss(&c); /* c.y of the unperturbed x */
    double *z = dvec(c.n);
    memcpy(z, c.x, sizeof(double) * (size_t)c.n);
    assert_ok(lg_elu_forward_f64(z, z, c.n));
    assert_memory_equal(z, c.y, sizeof(double) * (size_t)c.n);
    free(z); free(c.x); free(c.y); free(c.R); free(ref); free(dx0); free(dx);
}

/* The checker catches wrong gradients: ELU's derivative written as exp(y)
 * instead of y + 1 (a plausible slip), and a single perturbed entry. */
static void test_fd_checker_catches_bugs(void **state) {
    (void)state;
    elu_ctx c = {24, elu_inputs(24), dvec(24), drand(24)};
    double *dx = dvec(c.n), *bad = dvec(c.n);
    elu_loss(&c);
    assert_ok(lg_elu_backward_f64(dx, c.R, c.y, c.n));
    assert_true(fd_error(elu_loss, &c, c.x, dx, c.n) <= TOL_SMOOTH);
    for (lg_idx k = 0; k < c.n; k++) bad[k] = c.R[k] * (c.y[k] > 0 ? 1.0 : exp(c.y[k]));
    double e = fd_error(elu_loss, &c, c.x, bad, c.n);
    assert_true(e > 1e3 * TOL_SMOOTH);
    memcpy(bad, dx, sizeof(double) * (size_t)c.n);
    bad[5] += 1e-4;
    e = fd_error(elu_loss, &c, c.x, bad, c.n);
    assert_true(e > 10 * TOL_SMOOTH);
    free(c.x); free(c.y); free(c.R); free(dx); free(bad);
}

typedef struct {
    lg_idx n;
    double p;
    double *x, *y, *R;
} drop_ctx;

static double drop_loss(void *v) {
    drop_ctx *c = v;
    assert_ok(lg_dropout_forward_f64(c->y, c->x, c->n, c->p, 1234, 7, 1));
    return dot(c->y, c->R, c->n);
}

static void test_fd_dropout(void **state) {
    (void)state;
    drop_ctx c = {40, 0.4, drand(40), dvec(40), drand(40)};
    double *dx0 = drand(c.n), *dx = dvec(c.n);
    memcpy(dx, dx0, sizeof(double) * (size_t)c.n);
    drop_loss(&c);
    assert_ok(lg_dropout_backward_f64(dx, c.R, c.n, c.p, 1234, 7, 1));
    sub_prior(dx, dx0, c.n);
    int dropped = 0;
    for (lg_idx k = 0; k < c.n; k++) dropped += dx[k] == 0.0;
    assert_true(dropped > 0 && dropped < c.n); /* the mask does something */
    check_grad("dropout dX", drop_loss, &c, c.x, dx, c.n, TOL_LINEAR);
    free(c.x); free(c.y); free(c.R); free(dx0); free(dx);
}

typedef struct {
    lg_idx n, d, ng;
    const lg_idx *seg;
    lg_pairnorm_mode mode;
    double s;
    double *x, *out, *rstd, *R;
} pn_ctx;

static double pn_loss(void *v) {
    pn_ctx *c = v;
    assert_ok(lg_pairnorm_forward_f64(c->out, c->rstd, c->x, c->n, c->d, c->seg, c->ng, c->mode, c->s));
    return dot(c->out, c->R, c->n * c->d);
}

static void fd_pairnorm(lg_pairnorm_mode mode, double s) {
    /* two segments of 4 and 5 nodes with an empty one between them */
    static const lg_idx seg[] = {0, 4, 4, 9};
    pn_ctx c = {9, 5, 3, seg, mode, s, NULL, NULL, NULL, NULL};
    c.x = drand(c.n * c.d);
    for (lg_idx k = 0; k < c.n * c.d; k++) c.x[k] += 0.7; /* a mean to remove */
    c.out = dvec(c.n * c.d);
    c.rstd = dvec(c.n);
    c.R = drand(c.n * c.d);
    double *ref = dvec(c.n * c.d), *work = dvec(c.n);
    pn_loss(&c);
    oracle_pairnorm(ref, c.x, c.n, c.d, seg, c.ng, (int)mode, s);
    assert_close(c.out, ref, c.n * c.d, 1e-14, mode == LG_PAIRNORM_PN ? "PN forward vs oracle" : "PN-SI forward vs oracle");
    double *dx0 = drand(c.n * c.d), *dx = dvec(c.n * c.d);
    memcpy(dx, dx0, sizeof(double) * (size_t)(c.n * c.d));
    assert_ok(lg_pairnorm_backward_f64(dx, work, c.R, c.out, c.rstd, c.n, c.d, seg, c.ng, mode, s));
    sub_prior(dx, dx0, c.n * c.d);
    check_grad(mode == LG_PAIRNORM_PN ? "PairNorm PN dX" : "PairNorm PN-SI dX", pn_loss, &c, c.x, dx, c.n * c.d,
               TOL_SMOOTH);
    free(c.x); free(c.out); free(c.rstd); free(c.R); free(ref); free(work); free(dx0); free(dx);
}

static void test_fd_pairnorm(void **state) {
    (void)state;
    fd_pairnorm(LG_PAIRNORM_PN, 1.0);
    fd_pairnorm(LG_PAIRNORM_SI, 1.0);
    fd_pairnorm(LG_PAIRNORM_PN, 1.7);
    fd_pairnorm(LG_PAIRNORM_SI, 0.6);
}

typedef struct {
    lg_idx n, d;
    double *x, *gain, *bias, *y, *mean, *rstd, *R;
} ln_ctx;

static double ln_loss(void *v) {
    ln_ctx *c = v;
    assert_ok(lg_layernorm_forward_f64(c->y, c->mean, c->rstd, c->x, c->gain, c->bias, c->n, c->d));
    return dot(c->y, c->R, c->n * c->d);
}

static void test_fd_layernorm(void **state) {
    (void)state;
    ln_ctx c = {6, 7, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    lg_idx nd = c.n * c.d;
    c.x = drand(nd);
    for (lg_idx k = 0; k < nd; k++) c.x[k] = 3.0 * c.x[k] + 0.5;
    c.gain = drand(c.d);
    c.bias = drand(c.d);
    c.y = dvec(nd);
    c.mean = dvec(c.n);
    c.rstd = dvec(c.n);
    c.R = drand(nd);
    double *ref = dvec(nd);
    ln_loss(&c);
    oracle_layernorm(ref, c.x, c.gain, c.bias, c.n, c.d);
    assert_close(c.y, ref, nd, 1e-14, "LayerNorm forward vs oracle");
    double *dx0 = drand(nd), *dg0 = drand(c.d), *db0 = drand(c.d);
    double *dx = dvec(nd), *dg = dvec(c.d), *db = dvec(c.d);
    memcpy(dx, dx0, sizeof(double) * (size_t)nd);
    memcpy(dg, dg0, sizeof(double) * (size_t)c.d);
    memcpy(db, db0, sizeof(double) * (size_t)c.d);
    assert_ok(lg_layernorm_backward_f64(dx, dg, db, c.R, c.x, c.mean, c.rstd, c.gain, c.n, c.d));
    sub_prior(dx, dx0, nd);
    sub_prior(dg, dg0, c.d);
    sub_prior(db, db0, c.d);
    check_grad("LayerNorm dX", ln_loss, &c, c.x, dx, nd, TOL_SMOOTH);
    check_grad("LayerNorm dgain", ln_loss, &c, c.gain, dg, c.d, TOL_SMOOTH);
    check_grad("LayerNorm dbias", ln_loss, &c, c.bias, db, c.d, TOL_SMOOTH);
    /* without gain and bias: the identity affine map */
    assert_ok(lg_layernorm_forward_f64(c.y, c.mean, c.rstd, c.x, NULL, NULL, c.n, c.d));
    oracle_layernorm(ref, c.x, NULL, NULL, c.n, c.d);
    assert_close(c.y, ref, nd, 1e-14, "LayerNorm forward without affine");
    free(c.x); free(c.gain); free(c.bias); free(c.y); free(c.mean); free(c.rstd); free(c.R); free(ref);
    free(dx0); free(dg0); free(db0); free(dx); free(dg); free(db);
}

typedef struct {
    lg_idx n, c, m;
    const int32_t *labels;
    const lg_idx *nodes;
    double *z, *lp;
} nll_ctx;

static double nll_loss(void *v) {
    nll_ctx *c = v;
    double loss = NAN;
    assert_ok(lg_log_softmax_forward_f64(c->lp, c->z, c->n, c->c));
    assert_ok(lg_nll_forward_f64(&loss, c->lp, c->n, c->c, c->labels, c->nodes, c->m));
    return loss;
}

static void test_fd_log_softmax_nll(void **state) {
    (void)state;
    static const int32_t labels[] = {2, -1, 0, 3, 1, -1, 4, 0};
    static const lg_idx nodes[] = {6, 0, 3, 2, 7}; /* rows 1, 4, 5 not listed */
    nll_ctx c = {8, 5, 5, labels, nodes, NULL, NULL};
    c.z = drand(c.n * c.c);
    for (lg_idx k = 0; k < c.n * c.c; k++) c.z[k] *= 3.0;
    c.lp = dvec(c.n * c.c);
    double *ref = dvec(c.n * c.c), loss = nll_loss(&c);
    oracle_log_softmax(ref, c.z, c.n, c.c);
    assert_close(c.lp, ref, c.n * c.c, 1e-14, "log-softmax vs oracle");
    assert_true(fabs(loss - oracle_nll(ref, c.c, labels, nodes, c.m)) <= 1e-14 * fabs(loss));
    double *dz = dvec(c.n * c.c);
    assert_ok(lg_log_softmax_nll_backward_f64(dz, c.lp, c.n, c.c, labels, nodes, c.m, 1.0));
    for (lg_idx q = 0; q < c.c; q++) /* rows not listed are untouched */
        assert_true(dz[1 * c.c + q] == 0.0 && dz[4 * c.c + q] == 0.0 && dz[5 * c.c + q] == 0.0);
    check_grad("log-softmax + NLL dlogits", nll_loss, &c, c.z, dz, c.n * c.c, TOL_SMOOTH);
    /* dloss scales the gradient and += accumulates */
    nll_loss(&c); /* c.lp of the unperturbed logits */
    double *dz2 = dvec(c.n * c.c);
    assert_ok(lg_log_softmax_nll_backward_f64(dz2, c.lp, c.n, c.c, labels, nodes, c.m, 0.5));
    assert_ok(lg_log_softmax_nll_backward_f64(dz2, c.lp, c.n, c.c, labels, nodes, c.m, 1.5));
    for (lg_idx k = 0; k < c.n * c.c; k++) assert_true(fabs(dz2[k] - 2.0 * dz[k]) <= 1e-15);
    free(c.z); free(c.lp); free(ref); free(dz); free(dz2);
}

/* The listed rows only: each with the bits of the full log-softmax, every
 * other row left as it was; a row listed twice is the same; the refusals. */
static void test_log_softmax_rows(void **state) {
    (void)state;
    const lg_idx n = 9, c = 6, nr = 4;
    static const lg_idx rows[] = {6, 0, 3, 6};
    static const int listed[] = {1, 0, 0, 1, 0, 0, 1, 0, 0};
    double *z = drand(n * c), *full = dvec(n * c), *part = dvec(n * c);
    float *zf = fvec(n * c), *fullf = fvec(n * c), *partf = fvec(n * c);
    for (lg_idx k = 0; k < n * c; k++) zf[k] = (float)(z[k] *= 4.0);
    for (lg_idx k = 0; k < n * c; k++) part[k] = 7.0, partf[k] = 7.0f;
    assert_ok(lg_log_softmax_forward_f64(full, z, n, c));
    assert_ok(lg_log_softmax_forward_f32(fullf, zf, n, c));
    assert_ok(lg_log_softmax_rows_forward_f64(part, z, n, c, rows, nr));
    assert_ok(lg_log_softmax_rows_forward_f32(partf, zf, n, c, rows, nr));
    for (lg_idx i = 0; i < n; i++)
        for (lg_idx q = 0; q < c; q++) {
            const lg_idx k = i * c + q;
            if (listed[i]) {
                assert_memory_equal(&part[k], &full[k], sizeof(double));
                assert_memory_equal(&partf[k], &fullf[k], sizeof(float));
            } else {
                assert_true(part[k] == 7.0 && partf[k] == 7.0f);
            }
        }
    /* in place, as lg_log_softmax_forward allows */
    assert_ok(lg_log_softmax_rows_forward_f64(z, z, n, c, rows, nr));
    assert_memory_equal(&z[6 * c], &full[6 * c], sizeof(double) * (size_t)c);
    /* no rows: nothing to read */
    assert_ok(lg_log_softmax_rows_forward_f32(NULL, NULL, n, c, NULL, 0));
    static const lg_idx low[] = {2, -1}, high[] = {9};
    assert_int_equal(lg_log_softmax_rows_forward_f32(partf, zf, n, c, low, 2), LG_EINVAL);
    assert_int_equal(lg_log_softmax_rows_forward_f32(partf, zf, n, c, high, 1), LG_EINVAL);
    assert_int_equal(lg_log_softmax_rows_forward_f64(part, z, n, c, rows, -1), LG_EINVAL);
    assert_int_equal(lg_log_softmax_rows_forward_f64(part, z, n, c, NULL, 2), LG_EINVAL);
    assert_int_equal(lg_log_softmax_rows_forward_f64(NULL, z, n, c, rows, 2), LG_EINVAL);
    assert_int_equal(lg_log_softmax_rows_forward_f64(part, z, n, 0, rows, 2), LG_EINVAL);
    assert_int_equal(lg_log_softmax_rows_forward_f64(part, z, -1, c, rows, 2), LG_EINVAL);
    for (lg_idx i = 0; i < n; i++) /* a refused call writes nothing */
        if (!listed[i]) assert_true(partf[i * c] == 7.0f && part[i * c] == 7.0);
    free(z); free(full); free(part); free(zf); free(fullf); free(partf);
}

/* ------------------------------------------------------------------------- */
/* Properties                                                                 */
/* ------------------------------------------------------------------------- */

static void test_pairnorm_properties(void **state) {
    (void)state;
    static const lg_idx seg[] = {0, 5, 5, 12, 13};
    const lg_idx n = 13, d = 6, ng = 4;
    double *x = drand(n * d), *out = dvec(n * d), *rstd = dvec(n);
    float *xf = fvec(n * d), *outf = fvec(n * d), *rstdf = fvec(n);
    for (lg_idx k = 0; k < n * d; k++) xf[k] = (float)(x[k] = 5.0 * x[k] + 2.0);
    for (int mode = 0; mode < 2; mode++)
        for (int s10 = 10; s10 <= 20; s10 += 10) {
            double s = s10 / 10.0;
            assert_ok(lg_pairnorm_forward_f64(out, rstd, x, n, d, seg, ng, (lg_pairnorm_mode)mode, s));
            assert_ok(lg_pairnorm_forward_f32(outf, rstdf, xf, n, d, seg, ng, (lg_pairnorm_mode)mode, s));
            for (lg_idx g = 0; g < ng; g++) {
                lg_idx i0 = seg[g], i1 = seg[g + 1], N = i1 - i0;
                if (N < 2) continue; /* one node: centred to 0 */
                double msq = 0, msqf = 0;
                for (lg_idx c = 0; c < d && mode == LG_PAIRNORM_PN; c++) { /* PN-SI rescales rows */
                    double mu = 0, muf = 0;
                    for (lg_idx i = i0; i < i1; i++) {
                        mu += out[i * d + c];
                        muf += outf[i * d + c];
                    }
                    if (!(fabs(mu / (double)N) < 1e-14)) fail_msg("mode %d seg %lld col %lld: mean %g", mode, (long long)g, (long long)c, mu / (double)N);
                    assert_true(fabs(muf / (double)N) < 1e-6);
                }
                for (lg_idx i = i0; i < i1; i++) {
                    double q = 0, qf = 0;
                    for (lg_idx c = 0; c < d; c++) {
                        q += out[i * d + c] * out[i * d + c];
                        qf += (double)outf[i * d + c] * outf[i * d + c];
                    }
                    msq += q / (double)N;
                    msqf += qf / (double)N;
                    if (mode == LG_PAIRNORM_SI) {
                        assert_true(fabs(sqrt(q) - s) < 1e-12);
                        assert_true(fabs(sqrt(qf) - s) < 1e-6);
                    }
                }
                if (mode == LG_PAIRNORM_PN) {
                    assert_true(fabs(msq - s * s) < 1e-12);
                    assert_true(fabs(msqf - s * s) < 1e-5);
                }
            }
            /* the single-node segment is centred to exactly 0, finite */
            for (lg_idx c = 0; c < d; c++) assert_true(out[12 * d + c] == 0.0 && outf[12 * d + c] == 0.0f);
        }
    /* one constant segment: output 0, backward finite */
    for (lg_idx k = 0; k < 5 * d; k++) x[k] = 0.25;
    double *dx = dvec(n * d), *work = dvec(n), *dy = drand(n * d);
    for (int mode = 0; mode < 2; mode++) {
        assert_ok(lg_pairnorm_forward_f64(out, rstd, x, n, d, seg, ng, (lg_pairnorm_mode)mode, 1.0));
        for (lg_idx k = 0; k < 5 * d; k++) assert_true(out[k] == 0.0);
        assert_ok(lg_pairnorm_backward_f64(dx, work, dy, out, rstd, n, d, seg, ng, (lg_pairnorm_mode)mode, 1.0));
        for (lg_idx k = 0; k < n * d; k++) assert_true(isfinite(dx[k]));
    }
    /* graph_ptr NULL is one segment */
    static const lg_idx whole[] = {0, 13};
    double *out1 = dvec(n * d);
    assert_ok(lg_pairnorm_forward_f64(out, rstd, x, n, d, NULL, 0, LG_PAIRNORM_PN, 1.0));
    assert_ok(lg_pairnorm_forward_f64(out1, rstd, x, n, d, whole, 1, LG_PAIRNORM_PN, 1.0));
    assert_memory_equal(out, out1, sizeof(double) * (size_t)(n * d));
    /* in place */
    memcpy(out1, x, sizeof(double) * (size_t)(n * d));
    assert_ok(lg_pairnorm_forward_f64(out1, rstd, out1, n, d, seg, ng, LG_PAIRNORM_SI, 1.0));
    assert_ok(lg_pairnorm_forward_f64(out, rstd, x, n, d, seg, ng, LG_PAIRNORM_SI, 1.0));
    assert_memory_equal(out, out1, sizeof(double) * (size_t)(n * d));
    free(x); free(out); free(rstd); free(xf); free(outf); free(rstdf); free(dx); free(work); free(dy); free(out1);
}

static void test_layernorm_constant_row(void **state) {
    (void)state;
    static const double consts[] = {0.1, 3.7, -1234.5678, 1e-3, 0.0, 1e30 / 7};
    for (lg_idx d = 7; d <= 64; d += 57) {
        lg_idx n = 6;
        double *x = dvec(n * d), *y = dvec(n * d), *mean = dvec(n), *rstd = dvec(n);
        double *gain = drand(d), *bias = drand(d), *dx = dvec(n * d), *dg = dvec(d), *dy = drand(n * d);
        float *xf = fvec(n * d), *yf = fvec(n * d), *meanf = fvec(n), *rstdf = fvec(n);
        float *gainf = fvec(d), *biasf = fvec(d);
        for (lg_idx c = 0; c < d; c++) {
            gainf[c] = (float)gain[c];
            biasf[c] = (float)bias[c];
        }
        for (lg_idx i = 0; i < n; i++)
            for (lg_idx c = 0; c < d; c++) xf[i * d + c] = (float)(x[i * d + c] = consts[i]);
        assert_ok(lg_layernorm_forward_f64(y, mean, rstd, x, gain, bias, n, d));
        assert_ok(lg_layernorm_forward_f32(yf, meanf, rstdf, xf, gainf, biasf, n, d));
        for (lg_idx i = 0; i < n; i++)
            for (lg_idx c = 0; c < d; c++) {
                assert_true(isfinite(y[i * d + c]) && isfinite(yf[i * d + c]));
                if (y[i * d + c] != bias[c] || yf[i * d + c] != biasf[c])
                    fail_msg("constant row %g, d %lld: y = %.17g / %.9g, bias %.17g", consts[i], (long long)d,
                             y[i * d + c], (double)yf[i * d + c], bias[c]);
            }
        assert_ok(lg_layernorm_backward_f64(dx, dg, NULL, dy, x, mean, rstd, gain, n, d));
        for (lg_idx k = 0; k < n * d; k++) assert_true(isfinite(dx[k]));
        free(x); free(y); free(mean); free(rstd); free(gain); free(bias); free(dx); free(dg); free(dy);
        free(xf); free(yf); free(meanf); free(rstdf); free(gainf); free(biasf);
    }
}

/* The mask's rule as lipgnn/nn.h states it, written out here (its own mixer
 * and constants) as the oracle of lg_dropout_kept. */
static uint32_t rule_mix32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}
static int rule_kept(uint64_t seed, uint64_t counter, uint64_t k, double p) {
    const uint64_t stream = lg_hash64(seed ^ lg_hash64(counter));
    const uint64_t key = lg_hash64(stream + (k >> 32) * 0x9e3779b97f4a7c15ULL);
    const uint32_t u = rule_mix32(rule_mix32((uint32_t)k + (uint32_t)key) ^ (uint32_t)(key >> 32));
    return u >= (uint32_t)(p * 4294967296.0);
}

/* lg_dropout_kept follows the documented rule, beyond 2^32 elements too, and
 * its masks look independent: a fraction p dropped, neighbouring elements
 * and neighbouring counters uncorrelated (6 standard deviations). */
static void test_dropout_rule(void **state) {
    (void)state;
    static const uint64_t ks[] = {0, 1, 2, 4095, 4096, 4294967295ULL, 4294967296ULL, 4294967297ULL,
                                  (1ULL << 40) + 12345, (1ULL << 62) + 7};
    for (uint64_t seed = 0; seed < 4; seed++)
        for (uint64_t ctr = 0; ctr < 4; ctr++)
            for (size_t i = 0; i < sizeof ks / sizeof *ks; i++)
                for (double p = 0.05; p < 1.0; p += 0.15)
                    if (lg_dropout_kept(seed, ctr, (lg_idx)ks[i], p) != rule_kept(seed, ctr, ks[i], p))
                        fail_msg("seed %llu counter %llu k %llu p %.2f: not the rule", (unsigned long long)seed,
                                 (unsigned long long)ctr, (unsigned long long)ks[i], p);
    const lg_idx N = 1 << 20;
    const double p = 0.6;
    lg_idx dropped = 0, both_lag1 = 0, both_ctr = 0, mism = 0;
    int prev = 0;
    for (lg_idx k = 0; k < N; k++) {
        const int kept = lg_dropout_kept(7, 3, k, p), kept2 = lg_dropout_kept(7, 4, k, p);
        mism += kept != rule_kept(7, 3, (uint64_t)k, p);
        dropped += !kept;
        both_lag1 += k > 0 && !kept && !prev;
        both_ctr += !kept && !kept2;
        prev = kept;
    }
    assert_int_equal(mism, 0);
    const double sd1 = sqrt(p * (1 - p) / (double)N), q = p * p, sd2 = sqrt(q * (1 - q) / (double)N);
    if (fabs((double)dropped / (double)N - p) > 6 * sd1) fail_msg("dropped %.5f for p = %.2f", (double)dropped / N, p);
    if (fabs((double)both_lag1 / (double)(N - 1) - q) > 6 * sd2)
        fail_msg("neighbours both dropped %.5f, not about p^2 = %.4f", (double)both_lag1 / (N - 1), q);
    if (fabs((double)both_ctr / (double)N - q) > 6 * sd2)
        fail_msg("counters 3 and 4 both dropped %.5f, not about p^2 = %.4f", (double)both_ctr / N, q);
}

static void test_dropout(void **state) {
    (void)state;
    const lg_idx N = 1 << 20;
    const int saved = omp_get_max_threads();
    float *x = fvec(N), *y1 = fvec(N), *y2 = fvec(N), *dx = fvec(N), *ones = fvec(N);
    for (lg_idx k = 0; k < N; k++) {
        x[k] = (float)(0.5 + lg_rng_double(&rng)); /* never 0 */
        ones[k] = 1.0f;
    }
    static const double ps[] = {0.3, 0.6, 0.05};
    for (int t = 0; t < 3; t++) {
        double p = ps[t];
        omp_set_num_threads(1);
        assert_ok(lg_dropout_forward_f32(y1, x, N, p, 99, (uint64_t)t, 1));
        omp_set_num_threads(2);
        assert_ok(lg_dropout_forward_f32(y2, x, N, p, 99, (uint64_t)t, 1));
        assert_memory_equal(y1, y2, sizeof(float) * (size_t)N);
        lg_idx dropped = 0;
        const float scale = (float)(1.0 / (1.0 - p));
        for (lg_idx k = 0; k < N; k++) {
            int kept = lg_dropout_kept(99, (uint64_t)t, k, p);
            if (kept ? y1[k] != x[k] * scale : y1[k] != 0.0f) fail_msg("element %lld does not follow the mask", (long long)k);
            dropped += !kept;
        }
        /* binomial: 6 standard deviations */
        double frac = (double)dropped / (double)N, sd = sqrt(p * (1 - p) / (double)N);
        if (fabs(frac - p) > 6 * sd) fail_msg("dropped %.5f of the elements for p = %.2f", frac, p);
        /* the backward applies the same mask, whatever the threads */
        memset(dx, 0, sizeof(float) * (size_t)N);
        omp_set_num_threads(1);
        assert_ok(lg_dropout_backward_f32(dx, ones, N, p, 99, (uint64_t)t, 1));
        for (lg_idx k = 0; k < N; k++)
            if ((y1[k] != 0.0f) != (dx[k] == scale)) fail_msg("backward mask differs at %lld", (long long)k);
        memset(y2, 0, sizeof(float) * (size_t)N);
        omp_set_num_threads(2);
        assert_ok(lg_dropout_backward_f32(y2, ones, N, p, 99, (uint64_t)t, 1));
        assert_memory_equal(dx, y2, sizeof(float) * (size_t)N);
    }
    /* another counter, another mask: agreement ~ p^2 + (1-p)^2, not 1 */
    assert_ok(lg_dropout_forward_f32(y1, x, N, 0.5, 99, 1, 1));
    assert_ok(lg_dropout_forward_f32(y2, x, N, 0.5, 99, 2, 1));
    lg_idx same = 0;
    for (lg_idx k = 0; k < N; k++) same += (y1[k] == 0.0f) == (y2[k] == 0.0f);
    assert_true(fabs((double)same / (double)N - 0.5) < 0.01);
    /* evaluation and p = 0: the identity, forward and backward */
    assert_ok(lg_dropout_forward_f32(y1, x, N, 0.6, 99, 1, 0));
    assert_memory_equal(y1, x, sizeof(float) * (size_t)N);
    assert_ok(lg_dropout_forward_f32(y1, x, N, 0.0, 99, 1, 1));
    assert_memory_equal(y1, x, sizeof(float) * (size_t)N);
    memcpy(dx, x, sizeof(float) * (size_t)N);
    assert_ok(lg_dropout_backward_f32(dx, ones, N, 0.6, 99, 1, 0));
    for (lg_idx k = 0; k < N; k++) assert_true(dx[k] == x[k] + 1.0f);
    /* in place */
    memcpy(y2, x, sizeof(float) * (size_t)N);
    assert_ok(lg_dropout_forward_f32(y2, y2, N, 0.3, 5, 5, 1));
    assert_ok(lg_dropout_forward_f32(y1, x, N, 0.3, 5, 5, 1));
    assert_memory_equal(y1, y2, sizeof(float) * (size_t)N);
    omp_set_num_threads(saved);
    free(x); free(y1); free(y2); free(dx); free(ones);
}

static void test_accuracy(void **state) {
    (void)state;
    /* ties go to the lowest class; NaN never wins */
    static const double sc[] = {1, 3, 3, 0,   /* tie 1/2 -> 1 */
                                NAN, 0, -1, 0, /* NaN first -> 1 (tie with 3) */
                                2, 2, 2, 2,   /* all tied -> 0 */
                                0, 1, NAN, 5}; /* -> 3 */
    static const int32_t labels[] = {1, 1, 0, 3};
    static const int32_t wrong[] = {2, 3, 1, 2};
    static const lg_idx nodes[] = {0, 1, 2, 3};
    double acc = -1;
    assert_ok(lg_accuracy_f64(&acc, sc, 4, 4, labels, nodes, 4));
    assert_true(acc == 1.0);
    assert_ok(lg_accuracy_f64(&acc, sc, 4, 4, wrong, nodes, 4));
    assert_true(acc == 0.0);
    assert_ok(lg_accuracy_f64(&acc, sc, 4, 4, labels, nodes, 0));
    assert_true(acc == 0.0);
    /* random scores against the oracle, float and double */
    const lg_idx n = 200, c = 6;
    double *s = drand(n * c);
    float *sf = fvec(n * c);
    int32_t *lab = malloc(sizeof *lab * (size_t)n);
    lg_idx *list = malloc(sizeof *list * (size_t)n);
    assert_true(lab && list);
    for (lg_idx i = 0; i < n; i++) {
        lab[i] = (int32_t)lg_rng_below(&rng, (uint64_t)c);
        s[i * c + lab[i]] += 0.5; /* better than chance */
        list[i] = (i * 7) % n;
    }
    for (lg_idx k = 0; k < n * c; k++) sf[k] = (float)s[k];
    double acc32 = -1, ref = oracle_accuracy(s, c, lab, list, 150);
    assert_ok(lg_accuracy_f64(&acc, s, n, c, lab, list, 150));
    assert_ok(lg_accuracy_f32(&acc32, sf, n, c, lab, list, 150));
    assert_true(acc == ref && acc32 == ref);
    assert_true(ref > 0.3 && ref < 1.0);
    free(s); free(sf); free(lab); free(list);
}

/* ------------------------------------------------------------------------- */
/* Transpose, sparse against dense                                            */
/* ------------------------------------------------------------------------- */

static void test_transpose(void **state) {
    (void)state;
    lg_features *x = rand_sparse(30, 17, 0.2), *t = NULL, *tt = NULL;
    assert_ok(lg_features_transpose(&t, x));
    assert_int_equal(t->n, 17);
    assert_int_equal(t->d, 30);
    assert_int_equal(t->nnz, x->nnz);
    double *a = dvec(30 * 17), *b = dvec(17 * 30);
    oracle_densify(a, x);
    oracle_densify(b, t);
    for (lg_idx i = 0; i < 30; i++)
        for (lg_idx c = 0; c < 17; c++) assert_true(a[i * 17 + c] == b[c * 30 + i]);
    for (lg_idx r = 0; r < t->n; r++)
        for (lg_idx e = t->p[r] + 1; e < t->p[r + 1]; e++) assert_true(t->j[e] > t->j[e - 1]);
    assert_ok(lg_features_transpose(&tt, t));
    assert_memory_equal(tt->p, x->p, sizeof(lg_idx) * 31);
    assert_memory_equal(tt->j, x->j, sizeof(lg_idx) * (size_t)x->nnz);
    assert_memory_equal(tt->x, x->x, sizeof(float) * (size_t)x->nnz);
    lg_features_free(tt);
    lg_features_free(t);
    /* every allocation failing in turn: LG_ENOMEM, *out NULL, nothing leaked */
    for (long k = 1; k <= 6; k++) {
        lg_test_alloc_fail_at(k);
        t = (lg_features *)x; /* must be reset to NULL */
        lg_status st = lg_features_transpose(&t, x);
        long live = lg_test_alloc_live();
        lg_features_free(t);
        lg_test_alloc_reset();
        if (k <= 5) {
            assert_int_equal(st, LG_ENOMEM);
            assert_null(t);
            assert_int_equal(live, 0);
        } else {
            assert_int_equal(st, LG_OK); /* five allocations in all */
        }
    }
    lg_features_free(x);
    free(a); free(b);
}

static void test_sparse_equals_dense(void **state) {
    (void)state;
    const lg_idx n = 50, in = 40, out = 9;
    lg_features *x = rand_sparse(n, in, 0.1);
    double *xd = dvec(n * in), *w = drand(in * out), *b = drand(out), *dy = drand(n * out);
    oracle_densify(xd, x);
    double *y1 = dvec(n * out), *y2 = dvec(n * out), *dw1 = dvec(in * out), *dw2 = dvec(in * out);
    double *db1 = dvec(out), *db2 = dvec(out);
    assert_ok(lg_linear_forward_f64(y1, xd, w, b, n, in, out));
    assert_ok(lg_linear_sparse_forward_f64(y2, x, w, b, out));
    assert_close(y2, y1, n * out, 1e-14, "sparse forward vs dense (f64)");
    assert_ok(lg_linear_backward_f64(NULL, dw1, db1, dy, xd, w, n, in, out));
    assert_ok(lg_linear_sparse_backward_f64(dw2, db2, dy, x, in, out));
    assert_close(dw2, dw1, in * out, 1e-14, "sparse dW vs dense (f64)");
    assert_memory_equal(db1, db2, sizeof(double) * (size_t)out); /* the same column sums */
    /* float */
    float *xdf = fvec(n * in), *wf = fvec(in * out), *bf = fvec(out), *dyf = fvec(n * out);
    float *y1f = fvec(n * out), *y2f = fvec(n * out), *dw1f = fvec(in * out), *dw2f = fvec(in * out);
    for (lg_idx k = 0; k < n * in; k++) xdf[k] = (float)xd[k];
    for (lg_idx k = 0; k < in * out; k++) wf[k] = (float)w[k];
    for (lg_idx k = 0; k < out; k++) bf[k] = (float)b[k];
    for (lg_idx k = 0; k < n * out; k++) dyf[k] = (float)dy[k];
    assert_ok(lg_linear_forward_f32(y1f, xdf, wf, bf, n, in, out));
    assert_ok(lg_linear_sparse_forward_f32(y2f, x, wf, bf, out));
    assert_ok(lg_linear_backward_f32(NULL, dw1f, NULL, dyf, xdf, wf, n, in, out));
    assert_ok(lg_linear_sparse_backward_f32(dw2f, NULL, dyf, x, in, out));
    double *t1 = to_d(y1f, n * out), *t2 = to_d(dw1f, in * out);
    assert_close_f(y2f, t1, n * out, 1e-6, "sparse forward vs dense (f32)");
    assert_close_f(dw2f, t2, in * out, 1e-6, "sparse dW vs dense (f32)");
    lg_features_free(x);
    free(xd); free(w); free(b); free(dy); free(y1); free(y2); free(dw1); free(dw2); free(db1); free(db2);
    free(xdf); free(wf); free(bf); free(dyf); free(y1f); free(y2f); free(dw1f); free(dw2f); free(t1); free(t2);
}

/* ------------------------------------------------------------------------- */
/* Every float kernel: the same bits with 1 and 2 threads; float vs double    */
/* ------------------------------------------------------------------------- */

/* Inputs and outputs of a run of every operation, forward and backward. */
typedef struct {
    lg_idx n, in, out, d, c, m, ng;
    /* inputs */
    lg_features *xs;
    lg_idx *seg, *nodes;
    int32_t *labels;
    float *x, *w, *b, *dy, *h, *dh, *gain, *bias, *z;
    /* outputs */
    float *out_[32];
    lg_idx len_[32];
    const char *name_[32];
    double scal[4];
    int k;
} run_t;

static float *out_buf(run_t *r, const char *name, lg_idx len) {
    assert_true(r->k < 32);
    r->name_[r->k] = name;
    r->len_[r->k] = len;
    float *v = r->out_[r->k++] = fvec(len);
    for (lg_idx q = 0; q < len; q++) v[q] = 0.25f; /* gradients accumulate onto this */
    return v;
}

static void run_inputs(run_t *r, lg_idx n, lg_idx in, lg_idx out, lg_idx d, lg_idx c) {
    memset(r, 0, sizeof *r);
    r->n = n; r->in = in; r->out = out; r->d = d; r->c = c;
    r->x = frand(n * in);
    r->w = frand(in * out);
    r->b = frand(out);
    r->dy = frand(n * out);
    r->xs = rand_sparse(n, in, 0.05);
    r->h = frand(n * d);
    for (lg_idx k = 0; k < n * d; k++) r->h[k] = 2.0f * r->h[k] + 0.3f;
    r->dh = frand(n * d);
    r->gain = frand(d);
    r->bias = frand(d);
    r->z = frand(n * c);
    /* segments: a big one (half the nodes), an empty one, then sizes 1..40 */
    r->seg = malloc(sizeof *r->seg * (size_t)(n + 2));
    assert_non_null(r->seg);
    r->seg[0] = 0;
    r->seg[1] = n / 2;
    r->seg[2] = n / 2;
    lg_idx g = 2;
    while (r->seg[g] < n) {
        lg_idx len = 1 + (lg_idx)lg_rng_below(&rng, 40);
        r->seg[g + 1] = LG_MIN(n, r->seg[g] + len);
        g++;
    }
    r->ng = g;
    r->labels = malloc(sizeof *r->labels * (size_t)n);
    r->nodes = malloc(sizeof *r->nodes * (size_t)n);
    assert_true(r->labels && r->nodes);
    for (lg_idx i = 0; i < n; i++) r->labels[i] = (i % 5 == 0) ? -1 : (int32_t)lg_rng_below(&rng, (uint64_t)c);
    r->m = 0;
    for (lg_idx i = 0; i < n; i += 2)
        if (r->labels[i] >= 0) r->nodes[r->m++] = i;
}

static void run_free(run_t *r) {
    lg_features_free(r->xs);
    free(r->seg); free(r->nodes); free(r->labels);
    free(r->x); free(r->w); free(r->b); free(r->dy); free(r->h); free(r->dh); free(r->gain); free(r->bias);
    free(r->z);
    for (int k = 0; k < r->k; k++) free(r->out_[k]);
}

/* Runs every float operation on r's inputs into fresh output buffers. */
static void run_all_f32(run_t *r) {
    const lg_idx n = r->n, in = r->in, out = r->out, d = r->d, c = r->c, nd = n * d;
    for (int k = 0; k < r->k; k++) free(r->out_[k]);
    r->k = 0;
    float *y = out_buf(r, "linear y", n * out), *dx = out_buf(r, "linear dx", n * in);
    float *dw = out_buf(r, "linear dw", in * out), *db = out_buf(r, "linear db", out);
    assert_ok(lg_linear_forward_f32(y, r->x, r->w, r->b, n, in, out));
    assert_ok(lg_linear_backward_f32(dx, dw, db, r->dy, r->x, r->w, n, in, out));
    float *ys = out_buf(r, "sparse y", n * out), *dws = out_buf(r, "sparse dw", in * out);
    float *dbs = out_buf(r, "sparse db", out);
    assert_ok(lg_linear_sparse_forward_f32(ys, r->xs, r->w, r->b, out));
    assert_ok(lg_linear_sparse_backward_f32(dws, dbs, r->dy, r->xs, in, out));
    float *e = out_buf(r, "elu y", nd), *de = out_buf(r, "elu dx", nd);
    assert_ok(lg_elu_forward_f32(e, r->h, nd));
    assert_ok(lg_elu_backward_f32(de, r->dh, e, nd));
    float *a = out_buf(r, "add", nd);
    assert_ok(lg_add_f32(a, r->h, nd));
    float *dr = out_buf(r, "dropout y", nd), *ddr = out_buf(r, "dropout dx", nd);
    assert_ok(lg_dropout_forward_f32(dr, r->h, nd, 0.35, 17, 3, 1));
    assert_ok(lg_dropout_backward_f32(ddr, r->dh, nd, 0.35, 17, 3, 1));
    for (int mode = 0; mode < 2; mode++) {
        float *po = out_buf(r, mode ? "PN-SI out" : "PN out", nd), *pr = out_buf(r, mode ? "PN-SI rstd" : "PN rstd", n);
        float *pd = out_buf(r, mode ? "PN-SI dx" : "PN dx", nd), *pw = out_buf(r, "PN work", n);
        assert_ok(lg_pairnorm_forward_f32(po, pr, r->h, n, d, r->seg, r->ng, (lg_pairnorm_mode)mode, 1.0));
        assert_ok(lg_pairnorm_backward_f32(pd, pw, r->dh, po, pr, n, d, r->seg, r->ng, (lg_pairnorm_mode)mode, 1.0));
    }
    float *po1 = out_buf(r, "PN one segment out", nd), *pr1 = out_buf(r, "PN one segment rstd", n);
    float *pd1 = out_buf(r, "PN one segment dx", nd), *pw1 = out_buf(r, "PN one segment work", n);
    assert_ok(lg_pairnorm_forward_f32(po1, pr1, r->h, n, d, NULL, 0, LG_PAIRNORM_PN, 1.0));
    assert_ok(lg_pairnorm_backward_f32(pd1, pw1, r->dh, po1, pr1, n, d, NULL, 0, LG_PAIRNORM_PN, 1.0));
    float *ly = out_buf(r, "LN y", nd), *lm = out_buf(r, "LN mean", n), *ls = out_buf(r, "LN rstd", n);
    float *ldx = out_buf(r, "LN dx", nd), *ldg = out_buf(r, "LN dgain", d), *ldb = out_buf(r, "LN dbias", d);
    assert_ok(lg_layernorm_forward_f32(ly, lm, ls, r->h, r->gain, r->bias, n, d));
    assert_ok(lg_layernorm_backward_f32(ldx, ldg, ldb, r->dh, r->h, lm, ls, r->gain, n, d));
    float *lp = out_buf(r, "log-softmax", n * c), *dz = out_buf(r, "NLL dlogits", n * c);
    assert_ok(lg_log_softmax_forward_f32(lp, r->z, n, c));
    assert_ok(lg_nll_forward_f32(&r->scal[0], lp, n, c, r->labels, r->nodes, r->m));
    assert_ok(lg_log_softmax_nll_backward_f32(dz, lp, n, c, r->labels, r->nodes, r->m, 1.0));
    assert_ok(lg_accuracy_f32(&r->scal[1], lp, n, c, r->labels, r->nodes, r->m));
}

static void test_threads_bitwise_f32(void **state) {
    (void)state;
    const int saved = omp_get_max_threads();
    run_t r1, r2;
    run_inputs(&r1, 3001, 203, 37, 29, 7);
    /* large enough that every loop forks (LG__NN_PAR_MIN) */
    assert_true(r1.n * r1.c >= LG__NN_PAR_MIN && r1.n * r1.d >= LG__NN_PAR_MIN && r1.n * r1.out >= LG__NN_PAR_MIN);
    assert_true((r1.xs->nnz + r1.n) * r1.out >= LG__NN_PAR_MIN && r1.ng > 50);
    assert_true(r1.in > LG__GEMM_PANEL && r1.n > LG__GEMM_PANEL); /* several gemm panels */
    r2 = r1;
    for (int k = 0; k < 32; k++) r2.out_[k] = NULL;
    r2.k = 0;
    /* OpenBLAS on one thread: the gemms then run as fixed row panels over
     * OpenMP (lipgnn/nn.h), so the OpenMP count is the only thread count */
    const int saved_blas = openblas_get_num_threads();
    openblas_set_num_threads(1);
    omp_set_num_threads(1);
    run_all_f32(&r1);
    omp_set_num_threads(2);
    run_all_f32(&r2);
    omp_set_num_threads(saved);
    openblas_set_num_threads(saved_blas);
    assert_int_equal(r1.k, r2.k);
    for (int k = 0; k < r1.k; k++)
        if (memcmp(r1.out_[k], r2.out_[k], sizeof(float) * (size_t)r1.len_[k]) != 0)
            fail_msg("%s differs between 1 and 2 threads", r1.name_[k]);
    assert_memory_equal(r1.scal, r2.scal, sizeof r1.scal);
    for (int k = 0; k < r2.k; k++) free(r2.out_[k]);
    run_free(&r1);
}

/* lg__colsum_add over listed rows: over a dy that is zero outside them, listed
 * in increasing order, the bits of the sum over every row; any list sums its
 * rows in list order. */
static void test_colsum_rows(void **state) {
    (void)state;
    const lg_idx n = 500, out = 37, m = 6;
    static const lg_idx rows[] = {2, 3, 77, 200, 201, 499}, perm[] = {201, 2, 499, 3, 200, 77};
    float *dy = fvec(n * out), *a = fvec(out), *b = fvec(out), *c = fvec(out);
    for (lg_idx k = 0; k < m; k++)
        for (lg_idx q = 0; q < out; q++) dy[rows[k] * out + q] = (float)((k * 31 + q * 17) % 23) / 7.0f - 1.5f;
    for (lg_idx q = 0; q < out; q++) a[q] = b[q] = c[q] = 0.125f * (float)q;
    lg__colsum_add_f32(a, dy, n, out, NULL);
    lg__colsum_add_f32(b, dy, m, out, rows);
    assert_memory_equal(a, b, sizeof(float) * (size_t)out);
    lg__colsum_add_f32(c, dy, m, out, perm); /* list order: the same values, summed otherwise */
    for (lg_idx q = 0; q < out; q++) assert_true(fabsf(c[q] - a[q]) <= 1e-5f * (1 + fabsf(a[q])));
    free(dy); free(a); free(b); free(c);
}

/* lg__gemm_ep's contract, on each of lg__gemm's partitions (one call, panels
 * of rows, panels of columns, no product) and at 1 and 2 threads: the
 * epilogue sees every row of C exactly once, in ranges of at most
 * LG__GEMM_PANEL rows, each only once those rows of C are complete; and C is
 * the bits of lg__gemm. */
typedef struct {
    const float *c, *ref; /* C as the call writes it; the product made alone */
    lg_idx n;             /* columns                                         */
    int *seen;            /* per row: times the epilogue was given it         */
    int bad;              /* a range too long, or rows not yet complete       */
} ep_probe;

static void ep_record(void *v, lg_idx r0, lg_idx r1) {
    ep_probe *p = v;
    if (r1 - r0 > LG__GEMM_PANEL || r1 <= r0) p->bad = 1;
    if (p->n > 0 && memcmp(p->c + r0 * p->n, p->ref + r0 * p->n, sizeof(float) * (size_t)((r1 - r0) * p->n)) != 0)
        p->bad = 1;
    for (lg_idx r = r0; r < r1; r++) {
#pragma omp atomic
        p->seen[r]++;
    }
}

/* The panels of rows (lg__gemm_row_panels, lg__gemm_row_range): for tall C,
 * 128 rows under a narrow op(B); under a wide one a power of two of even
 * panels of at most LG__GEMM_WIDE_ROWS and at least 128 rows, which cover
 * [0, M) in order. For short C, none where N is wide (panels of columns),
 * else at most LG__GEMM_SMALL_PANELS of at least LG__GEMM_MIN_ROWS rows. */
static lg_idx row_start(lg__gemm_rows p, lg_idx M, lg_idx q) {
    lg_idx r0, r1;
    lg__gemm_row_range(&p, M, q, &r0, &r1);
    return r0;
}

static void test_gemm_row_panels(void **state) {
    (void)state;
    assert_int_equal(LG__GEMM_WIDE_NK, 16384);
    assert_int_equal(LG__GEMM_WIDE_ROWS, 1024);
    const lg__gemm_rows gat = lg__gemm_row_panels(2708, 64, 64); /* DeepGAT 30's products: 128 rows */
    assert_int_equal(gat.np, 22);
    assert_int_equal(gat.step, LG__GEMM_PANEL);
    lg_idx r0, r1;
    lg__gemm_row_range(&gat, 2708, 21, &r0, &r1);
    assert_int_equal(r0, 2688);
    assert_int_equal(r1, 2708);
    assert_int_equal(lg__gemm_row_panels(511000, 32, 32).np, 3993); /* TREES'                   */
    assert_int_equal(lg__gemm_row_panels(2708, 128, 127).np, 22);   /* N K one under the bound  */
    assert_int_equal(lg__gemm_row_panels(2708, 128, 128).np, 4);    /* 677 rows each            */
    const lg__gemm_rows gt = lg__gemm_row_panels(2708, 256, 64);    /* DeepGT 10's forward      */
    assert_int_equal(gt.np, 4);
    assert_int_equal(gt.step, 0);
    assert_int_equal(row_start(gt, 2708, 1), 677);
    const lg__gemm_rows pub = lg__gemm_row_panels(19717, 512, 512); /* 8 heads of 64 on PubMed  */
    assert_int_equal(pub.np, 32);
    assert_int_equal(row_start(pub, 19717, 1), 617); /* 19717 = 32 x 616 + 5: five of 617 first */
    assert_int_equal(row_start(pub, 19717, 6) - row_start(pub, 19717, 5), 616);
    assert_int_equal(lg__gemm_row_panels(2048, 512, 512).np, 2);    /* 1024 rows, at the bound  */
    assert_int_equal(lg__gemm_row_panels(2049, 512, 512).np, 4);
    assert_int_equal(lg__gemm_row_panels(256, 512, 512).np, 2);     /* the fewest rows: 2 x 128 */
    assert_int_equal(LG__GEMM_SMALL_PANELS, 4);
    assert_int_equal(LG__GEMM_MIN_ROWS, 32);
    const lg__gemm_rows dw = lg__gemm_row_panels(64, 64, 2708);     /* a weight gradient        */
    assert_int_equal(dw.np, 2);
    assert_int_equal(dw.step, 32);
    const lg__gemm_rows sh = lg__gemm_row_panels(255, 255, 64);     /* the tallest short C      */
    assert_int_equal(sh.np, 4);
    assert_int_equal(sh.step, 64);
    lg__gemm_row_range(&sh, 255, 3, &r0, &r1);
    assert_int_equal(r0, 192);
    assert_int_equal(r1, 255);
    assert_int_equal(lg__gemm_row_panels(64, 256, 64).np, 0);       /* wide N: panels of columns */
    assert_int_equal(lg__gemm_row_panels(40, 64, 4096).step, 32);   /* under 2 x 32 rows: 1 call */
    for (lg_idx M = 256; M < 3000000; M = M + 1 + M / 7) {
        const lg__gemm_rows p = lg__gemm_row_panels(M, 512, 512);
        assert_int_equal(p.np & (p.np - 1), 0);
        lg_idx end = 0;
        for (lg_idx q = 0; q < p.np; q++) {
            lg__gemm_row_range(&p, M, q, &r0, &r1);
            assert_int_equal(r0, end); /* in order, no gap, no overlap */
            assert_true(r1 - r0 >= LG__GEMM_PANEL && r1 - r0 <= LG__GEMM_WIDE_ROWS);
            end = r1;
        }
        assert_int_equal(end, M);
    }
}

static void test_gemm_epilogue(void **state) {
    (void)state;
    const int saved = omp_get_max_threads(), saved_blas = openblas_get_num_threads();
    openblas_set_num_threads(1);
    /* 128-row panels, wide panels (op(B) of LG__GEMM_WIDE_NK values: 2 of 550
     * rows), column panels, one call, row panels of a long K, no product */
    static const lg_idx shapes[][3] = {{600, 64, 64},  {1100, 128, 128}, {100, 600, 64},
                                       {10, 5, 3},     {700, 9, 700},    {50, 0, 4}};
    for (size_t q = 0; q < sizeof shapes / sizeof *shapes; q++) {
        const lg_idx M = shapes[q][0], N = shapes[q][1], K = shapes[q][2];
        float *a = fvec(M * K), *b = fvec(K * (N > 0 ? N : 1)), *ref = fvec(M * (N > 0 ? N : 1));
        float *c = fvec(M * (N > 0 ? N : 1));
        for (lg_idx k = 0; k < M * K; k++) a[k] = (float)((k * 7919) % 101) / 50.0f - 1.0f;
        for (lg_idx k = 0; k < K * N; k++) b[k] = (float)((k * 104729) % 97) / 48.0f - 1.0f;
        lg__gemm_f32(CblasNoTrans, CblasNoTrans, M, N, K, a, K, b, N, 0.0f, ref, N);
        for (int t = 1; t <= 2; t++) {
            omp_set_num_threads(t);
            int *seen = calloc((size_t)M, sizeof(int));
            for (lg_idx k = 0; k < M * N; k++) c[k] = NAN;
            ep_probe p = {c, ref, N, seen, 0};
            lg__gemm_ep_f32(CblasNoTrans, CblasNoTrans, M, N, K, a, K, b, N, 0.0f, c, N, ep_record, &p);
            assert_false(p.bad);
            for (lg_idx r = 0; r < M; r++) assert_int_equal(seen[r], 1);
            assert_memory_equal(c, ref, sizeof(float) * (size_t)(M * N));
            free(seen);
        }
        free(a); free(b); free(ref); free(c);
    }
    omp_set_num_threads(saved);
    openblas_set_num_threads(saved_blas);
}

/* lg__gemm_ws's split along K (core/gemm.h), on a weight gradient's shape
 * (A^T B) and on A B^T, beta 1 over a C with padded rows: C = beta C + op(A)
 * op(B) within float rounding of a product in double; the same bits at 1 and
 * 2 threads; the padding untouched; all of the workspace written; and, with a
 * workspace one real short, the bits of lg__gemm (no split, the workspace
 * untouched). K below two chunks' rows, or C too wide: no split at all. */
static void test_gemm_ksplit(void **state) {
    (void)state;
    const int saved = omp_get_max_threads(), saved_blas = openblas_get_num_threads();
    openblas_set_num_threads(1);
    assert_int_equal(lg__gemm_ksplit_len(32, 48, 2 * LG__GEMM_KSPLIT_ROWS - 1), 0);
    assert_int_equal(lg__gemm_ksplit_len(1025, 1024, 100000), 0); /* over LG__GEMM_KSPLIT_WS */
    assert_int_equal(lg__gemm_ksplit_len(512, 512, 100000), 3 * 512 * 512); /* S capped by the workspace: 5 -> 4 */
    assert_int_equal(lg__gemm_ksplit_len(32, 48, 3 * LG__GEMM_KSPLIT_ROWS + 5), 32 * 48); /* a power of two: 3 -> 2 */
    const lg_idx M = 32, N = 48, K = 4 * LG__GEMM_KSPLIT_ROWS + 5, ldc = N + 3, S = 4;
    const lg_idx need = lg__gemm_ksplit_len(M, N, K);
    assert_int_equal(need, (S - 1) * M * N);
    for (int form = 0; form < 2; form++) {
        const enum CBLAS_TRANSPOSE ta = form ? CblasNoTrans : CblasTrans, tb = form ? CblasTrans : CblasNoTrans;
        const lg_idx lda = form ? K : M, ldb = form ? K : N; /* A: K x M or M x K; B: K x N or N x K */
        float *a = fvec(M * K), *b = fvec(K * N), *c0 = fvec(M * ldc), *ws = fvec(need);
        float *c[3] = {fvec(M * ldc), fvec(M * ldc), fvec(M * ldc)};
        for (lg_idx k = 0; k < M * K; k++) a[k] = (float)((k * 7919) % 101) / 50.0f - 1.0f;
        for (lg_idx k = 0; k < K * N; k++) b[k] = (float)((k * 104729) % 97) / 48.0f - 1.0f;
        for (lg_idx k = 0; k < M * ldc; k++) c0[k] = k % ldc < N ? (float)(k % 13) * 100.0f - 600.0f : NAN;
        for (int t = 0; t < 3; t++) {
            memcpy(c[t], c0, sizeof(float) * (size_t)(M * ldc));
            omp_set_num_threads(t == 1 ? 2 : 1);
            for (lg_idx k = 0; k < need; k++) ws[k] = NAN; /* scratch: overwritten, never read first */
            lg__gemm_ws_f32(ta, tb, M, N, K, a, lda, b, ldb, 1.0f, c[t], ldc, ws, t == 2 ? need - 1 : need);
            lg_idx nan_left = 0; /* the split wrote all of ws; without it, nothing */
            for (lg_idx k = 0; k < need; k++) nan_left += isnan(ws[k]);
            assert_int_equal(nan_left, t == 2 ? need : 0);
        }
        assert_memory_equal(c[0], c[1], sizeof(float) * (size_t)(M * ldc));
        float *whole = fvec(M * ldc);
        memcpy(whole, c0, sizeof(float) * (size_t)(M * ldc));
        lg__gemm_f32(ta, tb, M, N, K, a, lda, b, ldb, 1.0f, whole, ldc);
        assert_memory_equal(c[2], whole, sizeof(float) * (size_t)(M * ldc));
        for (lg_idx i = 0; i < M; i++)
            for (lg_idx j = 0; j < ldc; j++) {
                const float v = c[0][i * ldc + j];
                if (j >= N) {
                    assert_true(isnan(v));
                    continue;
                }
                double ref = c0[i * ldc + j], mag = fabs(ref);
                for (lg_idx k = 0; k < K; k++) {
                    const double x = form ? a[i * lda + k] : a[k * lda + i], y = form ? b[j * ldb + k] : b[k * ldb + j];
                    ref += x * y;
                    mag += fabs(x * y);
                }
                assert_true(fabs(v - ref) <= 1e-5 * mag);
            }
        free(a); free(b); free(c0); free(ws); free(whole);
        for (int t = 0; t < 3; t++) free(c[t]);
    }
    omp_set_num_threads(saved);
    openblas_set_num_threads(saved_blas);
}

/* The float kernels against the double ones on the same inputs. */
static void test_f32_matches_f64(void **state) {
    (void)state;
    run_t r;
    run_inputs(&r, 301, 23, 11, 13, 5);
    run_all_f32(&r);
    const lg_idx n = r.n, in = r.in, out = r.out, d = r.d, c = r.c, nd = n * d;
    double *x = to_d(r.x, n * in), *w = to_d(r.w, in * out), *b = to_d(r.b, out), *dy = to_d(r.dy, n * out);
    double *h = to_d(r.h, nd), *dh = to_d(r.dh, nd), *gain = to_d(r.gain, d), *bias = to_d(r.bias, d);
    double *z = to_d(r.z, n * c);
    double *o[32];
    for (int k = 0; k < r.k; k++) {
        o[k] = dvec(r.len_[k]);
        for (lg_idx q = 0; q < r.len_[k]; q++) o[k][q] = 0.25;
    }
    /* the same sequence as run_all_f32, in double */
    assert_ok(lg_linear_forward_f64(o[0], x, w, b, n, in, out));
    assert_ok(lg_linear_backward_f64(o[1], o[2], o[3], dy, x, w, n, in, out));
    assert_ok(lg_linear_sparse_forward_f64(o[4], r.xs, w, b, out));
    assert_ok(lg_linear_sparse_backward_f64(o[5], o[6], dy, r.xs, in, out));
    assert_ok(lg_elu_forward_f64(o[7], h, nd));
    assert_ok(lg_elu_backward_f64(o[8], dh, o[7], nd));
    assert_ok(lg_add_f64(o[9], h, nd));
    assert_ok(lg_dropout_forward_f64(o[10], h, nd, 0.35, 17, 3, 1));
    assert_ok(lg_dropout_backward_f64(o[11], dh, nd, 0.35, 17, 3, 1));
    int k = 12;
    for (int mode = 0; mode < 2; mode++, k += 4) {
        assert_ok(lg_pairnorm_forward_f64(o[k], o[k + 1], h, n, d, r.seg, r.ng, (lg_pairnorm_mode)mode, 1.0));
        assert_ok(lg_pairnorm_backward_f64(o[k + 2], o[k + 3], dh, o[k], o[k + 1], n, d, r.seg, r.ng,
                                           (lg_pairnorm_mode)mode, 1.0));
    }
    assert_ok(lg_pairnorm_forward_f64(o[k], o[k + 1], h, n, d, NULL, 0, LG_PAIRNORM_PN, 1.0));
    assert_ok(lg_pairnorm_backward_f64(o[k + 2], o[k + 3], dh, o[k], o[k + 1], n, d, NULL, 0, LG_PAIRNORM_PN, 1.0));
    k += 4;
    assert_ok(lg_layernorm_forward_f64(o[k], o[k + 1], o[k + 2], h, gain, bias, n, d));
    assert_ok(lg_layernorm_backward_f64(o[k + 3], o[k + 4], o[k + 5], dh, h, o[k + 1], o[k + 2], gain, n, d));
    k += 6;
    double loss = 0, acc = 0;
    assert_ok(lg_log_softmax_forward_f64(o[k], z, n, c));
    assert_ok(lg_nll_forward_f64(&loss, o[k], n, c, r.labels, r.nodes, r.m));
    assert_ok(lg_log_softmax_nll_backward_f64(o[k + 1], o[k], n, c, r.labels, r.nodes, r.m, 1.0));
    assert_ok(lg_accuracy_f64(&acc, o[k], n, c, r.labels, r.nodes, r.m));
    k += 2;
    assert_int_equal(k, r.k);
    /* float rounding (2^-24) over sums of up to n = 301 terms */
    for (int q = 0; q < r.k; q++) {
        if (strstr(r.name_[q], "work")) continue; /* scratch */
        double e = rel_err_f(r.out_[q], o[q], r.len_[q]);
        if (!(e <= 2e-5)) fail_msg("%s: float vs double relative error %.3g", r.name_[q], e);
    }
    assert_true(fabs(r.scal[0] - loss) <= 1e-5 * fabs(loss));
    assert_true(r.scal[1] == acc);
    for (int q = 0; q < r.k; q++) free(o[q]);
    free(x); free(w); free(b); free(dy); free(h); free(dh); free(gain); free(bias); free(z);
    run_free(&r);
}

/* ------------------------------------------------------------------------- */
/* Bad input                                                                  */
/* ------------------------------------------------------------------------- */

static void test_bad_input(void **state) {
    (void)state;
    float y[12] = {0}, x[12] = {0}, w[12] = {0}, s[4] = {0};
    double loss = -7;
    assert_int_equal(lg_linear_forward_f32(NULL, x, w, NULL, 3, 2, 2), LG_EINVAL);
    assert_int_equal(lg_linear_forward_f32(y, x, w, NULL, -1, 2, 2), LG_EINVAL);
    assert_int_equal(lg_linear_forward_f32(y, x, w, NULL, INT64_MAX / 2, 4, 2), LG_EINVAL);
    assert_int_equal(lg_linear_forward_f32(y, x, w, NULL, (lg_idx)1 << 32, 1, 0), LG_ERANGE);
    /* y overlapping x or w: refused (it ran, in place, and returned LG_OK) */
    assert_int_equal(lg_linear_forward_f32(y, y, w, NULL, 3, 2, 2), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "y and x overlap"));
    assert_int_equal(lg_linear_forward_f32(y + 5, y, w, NULL, 3, 2, 2), LG_EINVAL); /* x's last value is y's first */
    assert_int_equal(lg_linear_forward_f32(w + 2, x, w, NULL, 3, 2, 2), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "y and w overlap"));
    assert_ok(lg_linear_forward_f32(y + 6, y, w, NULL, 3, 2, 2)); /* adjacent, not overlapping */
    assert_int_equal(lg_linear_backward_f32(x, NULL, NULL, y, x, NULL, 3, 2, 2), LG_EINVAL); /* dx needs w */
    assert_ok(lg_linear_forward_f32(y, NULL, NULL, NULL, 0, 0, 0));
    assert_ok(lg_elu_forward_f32(NULL, NULL, 0));
    assert_int_equal(lg_elu_forward_f32(y, x, -3), LG_EINVAL);
    /* sparse: wrong kind, a column out of range, non-monotone pointers */
    lg_features f = {2, 3, LG_FEAT_DENSE, 6, x, NULL, NULL};
    lg_features *t = (lg_features *)&f;
    assert_int_equal(lg_linear_sparse_forward_f32(y, &f, w, NULL, 2), LG_EINVAL);
    assert_int_equal(lg_features_transpose(&t, &f), LG_EINVAL);
    assert_null(t);
    lg_idx p[] = {0, 2, 3}, j[] = {0, 3, 1};
    lg_features sp = {2, 3, LG_FEAT_SPARSE, 3, x, p, j};
    for (int k = 0; k < 12; k++) y[k] = 9.0f;
    assert_int_equal(lg_linear_sparse_forward_f32(y, &sp, w, NULL, 2), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "column 3"));
    assert_true(y[0] == 9.0f); /* nothing written */
    j[1] = 2;
    p[1] = 4;
    assert_int_equal(lg_linear_sparse_forward_f32(y, &sp, w, NULL, 2), LG_EINVAL);
    assert_int_equal(lg_linear_sparse_backward_f32(w, NULL, y, &sp, 3, 2), LG_EINVAL);
    p[1] = 2;
    assert_ok(lg_linear_sparse_forward_f32(y, &sp, w, NULL, 2));
    /* dw's rows must be x's columns (x, not its transpose): nothing written */
    for (int k = 0; k < 6; k++) w[k] = 5.0f;
    assert_int_equal(lg_linear_sparse_backward_f32(w, NULL, y, &sp, 2, 2), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "transpose"));
    assert_true(w[0] == 5.0f);
    assert_ok(lg_linear_sparse_backward_f32(w, NULL, y, &sp, 3, 2));
    /* dropout rates */
    assert_int_equal(lg_dropout_forward_f32(y, x, 4, 1.0, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_forward_f32(y, x, 4, -0.1, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_backward_f32(y, x, 4, NAN, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_kept(1, 1, 0, 1.0), 1);
    /* PairNorm segments, mode, scale */
    lg_idx seg_bad_end[] = {0, 2, 3}, seg_down[] = {0, 3, 2, 4}, seg_ok[] = {0, 1, 4};
    assert_int_equal(lg_pairnorm_forward_f32(y, s, x, 4, 3, seg_bad_end, 2, LG_PAIRNORM_PN, 1.0), LG_EINVAL);
    assert_int_equal(lg_pairnorm_forward_f32(y, s, x, 4, 3, seg_down, 3, LG_PAIRNORM_PN, 1.0), LG_EINVAL);
    assert_int_equal(lg_pairnorm_forward_f32(y, s, x, 4, 3, seg_ok, -1, LG_PAIRNORM_PN, 1.0), LG_EINVAL);
    assert_int_equal(lg_pairnorm_forward_f32(y, s, x, 4, 3, seg_ok, 2, (lg_pairnorm_mode)7, 1.0), LG_EINVAL);
    assert_int_equal(lg_pairnorm_forward_f32(y, s, x, 4, 3, seg_ok, 2, LG_PAIRNORM_SI, 0.0), LG_EINVAL);
    assert_int_equal(lg_pairnorm_forward_f32(y, s, x, 4, 3, seg_ok, 2, LG_PAIRNORM_SI, NAN), LG_EINVAL);
    assert_int_equal(lg_pairnorm_backward_f32(y, NULL, x, x, s, 4, 3, seg_ok, 2, LG_PAIRNORM_SI, 1.0), LG_EINVAL);
    assert_ok(lg_pairnorm_forward_f32(y, s, x, 4, 3, seg_ok, 2, LG_PAIRNORM_SI, 1.0));
    /* LayerNorm */
    assert_int_equal(lg_layernorm_forward_f32(y, NULL, s, x, NULL, NULL, 4, 3), LG_EINVAL);
    assert_int_equal(lg_layernorm_backward_f32(y, NULL, NULL, x, x, NULL, s, NULL, 4, 3), LG_EINVAL);
    /* loss: unlabelled or out-of-range nodes, labels out of range */
    int32_t labels[] = {0, -1, 2, 1};
    lg_idx ok[] = {0, 2, 3}, unl[] = {0, 1}, far[] = {4}, neg[] = {-1};
    assert_ok(lg_nll_check(labels, 4, 3, ok, 3));
    assert_int_equal(lg_nll_check(labels, 4, 3, unl, 2), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "unlabelled"));
    assert_int_equal(lg_nll_check(labels, 4, 3, far, 1), LG_EINVAL);
    assert_int_equal(lg_nll_check(labels, 4, 3, neg, 1), LG_EINVAL);
    assert_int_equal(lg_nll_check(labels, 4, 2, ok, 3), LG_EINVAL); /* label 2 with 2 classes */
    assert_int_equal(lg_nll_check(NULL, 4, 3, ok, 3), LG_EINVAL);
    assert_int_equal(lg_nll_forward_f32(&loss, x, 4, 3, labels, unl, 2), LG_EINVAL);
    assert_true(loss == -7);
    assert_int_equal(lg_log_softmax_nll_backward_f32(y, x, 4, 3, labels, far, 1, 1.0), LG_EINVAL);
    assert_int_equal(lg_accuracy_f32(&loss, x, 4, 3, labels, unl, 2), LG_EINVAL);
    assert_int_equal(lg_log_softmax_forward_f32(y, x, 4, 0), LG_EINVAL);
    assert_ok(lg_nll_forward_f32(&loss, x, 4, 3, labels, ok, 0));
    assert_true(loss == 0.0);
}

/* The sparse linear layer's instruction-set variants give the baseline's
 * bits: forward and backward (onto a non-zero dw), float and double, at a
 * width that is not a multiple of a vector, on 1 and 2 threads. */
static void test_isa_sparse_linear_bitwise(void **state) {
    (void)state;
    const char *isa[3] = {"baseline", "avx2", "avx512"};
    const lg_idx n = 301, in = 45, out = 37;
    lg_features *x = rand_sparse(n, in, 0.2);
    double *w = drand(in * out), *b = drand(out), *dy = drand(n * out), *dw0 = drand(in * out);
    float *wf = fvec(in * out), *bf = fvec(out), *dyf = fvec(n * out);
    for (lg_idx k = 0; k < in * out; k++) wf[k] = (float)w[k];
    for (lg_idx k = 0; k < out; k++) bf[k] = (float)b[k];
    for (lg_idx k = 0; k < n * out; k++) dyf[k] = (float)dy[k];
    double *yd[3][2], *dwd[3][2];
    float *yf[3][2], *dwf[3][2];
    int have[3] = {0, 0, 0};
    const int saved = omp_get_max_threads();
    for (int v = 0; v < 3; v++) {
        if (lg_set_kernel_isa(isa[v]) != LG_OK) continue;
        have[v] = 1;
        for (int t = 0; t < 2; t++) {
            omp_set_num_threads(t + 1);
            yd[v][t] = dvec(n * out), dwd[v][t] = dvec(in * out), yf[v][t] = fvec(n * out), dwf[v][t] = fvec(in * out);
            memcpy(dwd[v][t], dw0, sizeof(double) * (size_t)(in * out));
            for (lg_idx k = 0; k < in * out; k++) dwf[v][t][k] = (float)dw0[k];
            assert_ok(lg_linear_sparse_forward_f64(yd[v][t], x, w, b, out));
            assert_ok(lg_linear_sparse_backward_f64(dwd[v][t], NULL, dy, x, in, out));
            assert_ok(lg_linear_sparse_forward_f32(yf[v][t], x, wf, bf, out));
            assert_ok(lg_linear_sparse_backward_f32(dwf[v][t], NULL, dyf, x, in, out));
        }
    }
    omp_set_num_threads(saved);
    assert_ok(lg_set_kernel_isa("auto"));
    assert_true(have[0]);
    for (int v = 0; v < 3; v++) {
        if (!have[v]) {
            print_message("test_isa_sparse_linear_bitwise: this CPU has no %s (CPUID): not compared\n", isa[v]);
            continue;
        }
        for (int t = 0; t < 2; t++) {
            assert_memory_equal(yd[v][t], yd[0][0], sizeof(double) * (size_t)(n * out));
            assert_memory_equal(dwd[v][t], dwd[0][0], sizeof(double) * (size_t)(in * out));
            assert_memory_equal(yf[v][t], yf[0][0], sizeof(float) * (size_t)(n * out));
            assert_memory_equal(dwf[v][t], dwf[0][0], sizeof(float) * (size_t)(in * out));
        }
    }
    for (int v = 0; v < 3; v++)
        for (int t = 0; have[v] && t < 2; t++) free(yd[v][t]), free(dwd[v][t]), free(yf[v][t]), free(dwf[v][t]);
    lg_features_free(x);
    free(w), free(b), free(dy), free(dw0), free(wf), free(bf), free(dyf);
}

/* The kernels' instruction-set variants (core/isa.h) give the same bits as
 * the baseline one: ELU and dropout, forward and backward, float and double,
 * over inputs with both signs, zeros, NaN, huge and tiny values, a length that
 * is not a multiple of the chunk, and in-place dropout. Each variant the CPU
 * has is compared (a message names those it lacks). Also the setter's
 * refusals. */
static void test_isa_variants_bitwise(void **state) {
    (void)state;
    assert_int_equal(lg_set_kernel_isa("sse9"), LG_EINVAL);
    assert_int_equal(lg_set_kernel_isa(NULL), LG_EINVAL);
    const char *isa[3] = {"baseline", "avx2", "avx512"};
    int have[3] = {1, 0, 0};
    for (int v = 0; v < 3; v++) {
        lg_status st = lg_set_kernel_isa(isa[v]);
        if (st == LG_OK) {
            assert_string_equal(lg_kernel_isa(), isa[v]);
            have[v] = 1;
        } else {
            assert_int_equal(st, LG_EUNSUPPORTED);
            print_message("test_isa_variants_bitwise: this CPU has no %s (CPUID): that variant is not compared\n", isa[v]);
        }
    }
    assert_true(have[0]);
    const lg_idx n = 3 * 4096 + 123;
    lg_rng r;
    lg_rng_seed(&r, 77);
    float *xf = malloc(sizeof(float) * (size_t)n), *gf = malloc(sizeof(float) * (size_t)n);
    double *xd = malloc(sizeof(double) * (size_t)n), *gd = malloc(sizeof(double) * (size_t)n);
    assert_true(xf && gf && xd && gd);
    for (lg_idx k = 0; k < n; k++) {
        double v = (lg_rng_double(&r) - 0.5) * 20;
        if (k % 97 == 0) v = 0;
        if (k % 101 == 0) v = -1e30;
        if (k % 103 == 0) v = 1e-40;
        xd[k] = v;
        xf[k] = (float)v;
        gd[k] = lg_rng_double(&r) - 0.5;
        gf[k] = (float)gd[k];
    }
    xf[5] = NAN;
    xd[5] = NAN;
    float *of[3][4] = {{0}};
    double *od[3][4] = {{0}};
    for (int v = 0; v < 3; v++) {
        if (!have[v]) continue;
        assert_ok(lg_set_kernel_isa(isa[v]));
        for (int t = 0; t < 4; t++) {
            of[v][t] = calloc((size_t)n, sizeof(float));
            od[v][t] = calloc((size_t)n, sizeof(double));
            assert_true(of[v][t] && od[v][t]);
        }
        assert_ok(lg_elu_forward_f32(of[v][0], xf, n));
        memcpy(of[v][1], xf, sizeof(float) * (size_t)n); /* in place: the same bits */
        assert_ok(lg_elu_forward_f32(of[v][1], of[v][1], n));
        assert_memory_equal(of[v][1], of[v][0], sizeof(float) * (size_t)n);
        memset(of[v][1], 0, sizeof(float) * (size_t)n);
        assert_ok(lg_elu_backward_f32(of[v][1], gf, of[v][0], n));
        assert_ok(lg_dropout_forward_f32(of[v][2], xf, n, 0.3, 9, 4, 1));
        memcpy(of[v][3], xf, sizeof(float) * (size_t)n);
        assert_ok(lg_dropout_forward_f32(of[v][3], of[v][3], n, 0.6, 9, 5, 1)); /* in place */
        assert_ok(lg_dropout_backward_f32(of[v][1], gf, n, 0.3, 9, 4, 1));
        assert_ok(lg_elu_forward_f64(od[v][0], xd, n));
        assert_ok(lg_elu_backward_f64(od[v][1], gd, od[v][0], n));
        assert_ok(lg_dropout_forward_f64(od[v][2], xd, n, 0.3, 9, 4, 1));
        memcpy(od[v][3], xd, sizeof(double) * (size_t)n);
        assert_ok(lg_dropout_forward_f64(od[v][3], od[v][3], n, 0.6, 9, 5, 1));
        assert_ok(lg_dropout_backward_f64(od[v][1], gd, n, 0.3, 9, 4, 1));
    }
    assert_ok(lg_set_kernel_isa("auto"));
    for (int t = 0; t < 4; t++) {
        for (int v = 1; v < 3; v++) {
            if (!have[v]) continue;
            assert_memory_equal(of[0][t], of[v][t], sizeof(float) * (size_t)n);
            assert_memory_equal(od[0][t], od[v][t], sizeof(double) * (size_t)n);
        }
        for (int v = 0; v < 3; v++) free(of[v][t]), free(od[v][t]);
    }
    free(xf), free(gf), free(xd), free(gd);
}

/* lg_elu_backward_inplace: g *= ELU'(from y) gives the values of
 * lg_elu_backward into a zeroed dx (== compares -0 and +0 as equal), in both
 * precisions and both kernel variants; its refusals. */
static void test_elu_backward_inplace(void **state) {
    (void)state;
    const lg_idx n = 2 * 4096 + 77;
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    float *g = malloc(sizeof(float) * (size_t)n), *ref = calloc((size_t)n, sizeof(float));
    double *xd = malloc(sizeof(double) * (size_t)n), *yd = malloc(sizeof(double) * (size_t)n);
    double *gd = malloc(sizeof(double) * (size_t)n), *refd = calloc((size_t)n, sizeof(double));
    assert_true(x && y && g && ref && xd && yd && gd && refd);
    lg_rng r;
    lg_rng_seed(&r, 5);
    for (lg_idx k = 0; k < n; k++) {
        xd[k] = (lg_rng_double(&r) - 0.5) * 8;
        gd[k] = lg_rng_double(&r) - 0.5;
        x[k] = (float)xd[k];
        g[k] = (float)gd[k];
    }
    assert_ok(lg_elu_forward_f32(y, x, n));
    assert_ok(lg_elu_forward_f64(yd, xd, n));
    assert_ok(lg_elu_backward_f32(ref, g, y, n));
    assert_ok(lg_elu_backward_f64(refd, gd, yd, n));
    const char *isa[3] = {"baseline", "avx2", "auto"};
    for (int v = 0; v < 3; v++) {
        if (lg_set_kernel_isa(isa[v]) != LG_OK) continue; /* a CPU without AVX2 */
        float *t = malloc(sizeof(float) * (size_t)n);
        double *td = malloc(sizeof(double) * (size_t)n);
        assert_true(t && td);
        memcpy(t, g, sizeof(float) * (size_t)n);
        memcpy(td, gd, sizeof(double) * (size_t)n);
        assert_ok(lg_elu_backward_inplace_f32(t, y, n));
        assert_ok(lg_elu_backward_inplace_f64(td, yd, n));
        for (lg_idx k = 0; k < n; k++) {
            if (t[k] != ref[k]) fail_msg("f32 element %lld: %g, expected %g", (long long)k, t[k], ref[k]);
            if (td[k] != refd[k]) fail_msg("f64 element %lld: %g, expected %g", (long long)k, td[k], refd[k]);
        }
        free(t), free(td);
    }
    assert_ok(lg_set_kernel_isa("auto"));
    assert_int_equal(lg_elu_backward_inplace_f32(g, g, n), LG_EINVAL);
    assert_int_equal(lg_elu_backward_inplace_f32(NULL, y, n), LG_EINVAL);
    assert_int_equal(lg_elu_backward_inplace_f32(g, NULL, n), LG_EINVAL);
    assert_int_equal(lg_elu_backward_inplace_f64(gd, yd, -1), LG_EINVAL);
    assert_ok(lg_elu_backward_inplace_f32(NULL, NULL, 0));
    free(x), free(y), free(g), free(ref), free(xd), free(yd), free(gd), free(refd);
}

/* The fused ELU + dropout forward and its in-place backward give the bits of
 * the two operations in turn (lg_elu_forward then lg_dropout_forward;
 * lg_dropout_forward in place then lg_elu_backward_inplace), and the
 * backward that makes the dropped copy again those bits and the forward's
 * copy (lg_dropout_elu_backward_remake; into d3, first filled with 7s): every
 * instruction-set variant, both precisions, training with two rates, p = 0
 * and evaluation; values with zeros, huge negatives, subnormals and a NaN. */
#define LG_TEST_ELU_DROP(T, SFX, N, X, G, P, TRAIN, CTR)                                              \
    do {                                                                                             \
        T *z1 = malloc(sizeof(T) * (size_t)(N)), *z2 = malloc(sizeof(T) * (size_t)(N));              \
        T *d1 = malloc(sizeof(T) * (size_t)(N)), *d2 = malloc(sizeof(T) * (size_t)(N));              \
        T *g1 = malloc(sizeof(T) * (size_t)(N)), *g2 = malloc(sizeof(T) * (size_t)(N));              \
        T *g3 = malloc(sizeof(T) * (size_t)(N)), *d3 = malloc(sizeof(T) * (size_t)(N));              \
        assert_true(z1 && z2 && d1 && d2 && g1 && g2 && g3 && d3);                                   \
        memcpy(z1, X, sizeof(T) * (size_t)(N));                                                      \
        memcpy(z2, X, sizeof(T) * (size_t)(N));                                                      \
        assert_ok(lg_elu_forward_##SFX(z1, z1, N));                                                  \
        assert_ok(lg_dropout_forward_##SFX(d1, z1, N, P, 31, CTR, TRAIN));                           \
        assert_ok(lg_elu_dropout_forward_##SFX(z2, d2, N, P, 31, CTR, TRAIN));                       \
        assert_memory_equal(z1, z2, sizeof(T) * (size_t)(N));                                        \
        assert_memory_equal(d1, d2, sizeof(T) * (size_t)(N));                                        \
        memcpy(g1, G, sizeof(T) * (size_t)(N));                                                      \
        memcpy(g2, G, sizeof(T) * (size_t)(N));                                                      \
        assert_ok(lg_dropout_forward_##SFX(g1, g1, N, P, 31, CTR, TRAIN));                           \
        assert_ok(lg_elu_backward_inplace_##SFX(g1, z1, N));                                         \
        assert_ok(lg_dropout_elu_backward_inplace_##SFX(g2, z1, N, P, 31, CTR, TRAIN));              \
        assert_memory_equal(g1, g2, sizeof(T) * (size_t)(N));                                        \
        memcpy(g3, G, sizeof(T) * (size_t)(N));                                                      \
        for (lg_idx k_ = 0; k_ < (N); k_++) d3[k_] = 7;                                              \
        assert_ok(lg_dropout_elu_backward_remake_##SFX(g3, d3, z1, N, P, 31, CTR, TRAIN));           \
        assert_memory_equal(g1, g3, sizeof(T) * (size_t)(N));                                        \
        assert_memory_equal(d1, d3, sizeof(T) * (size_t)(N));                                        \
        free(z1), free(z2), free(d1), free(d2), free(g1), free(g2), free(g3), free(d3);              \
    } while (0)

static void test_elu_dropout_fused(void **state) {
    (void)state;
    const lg_idx n = 3 * 4096 + 57;
    lg_rng r;
    lg_rng_seed(&r, 91);
    float *xf = malloc(sizeof(float) * (size_t)n), *gf = malloc(sizeof(float) * (size_t)n);
    double *xd = malloc(sizeof(double) * (size_t)n), *gd = malloc(sizeof(double) * (size_t)n);
    assert_true(xf && gf && xd && gd);
    for (lg_idx k = 0; k < n; k++) {
        double v = (lg_rng_double(&r) - 0.5) * 12;
        if (k % 89 == 0) v = 0;
        if (k % 101 == 0) v = -1e30;
        if (k % 103 == 0) v = -1e-40;
        xd[k] = v;
        xf[k] = (float)v;
        gd[k] = lg_rng_double(&r) - 0.5;
        gf[k] = (float)gd[k];
    }
    xf[7] = NAN;
    xd[7] = NAN;
    const double ps[4] = {0.3, 0.6, 0.3, 0.0};
    const int train[4] = {1, 1, 0, 1};
    const char *isa[3] = {"baseline", "avx2", "avx512"};
    int compared = 0;
    for (int v = 0; v < 3; v++) {
        if (!lg_test_use_isa(isa[v])) continue;
        compared++;
        for (int c = 0; c < 4; c++) {
            LG_TEST_ELU_DROP(float, f32, n, xf, gf, ps[c], train[c], (uint64_t)(c + 1));
            LG_TEST_ELU_DROP(double, f64, n, xd, gd, ps[c], train[c], (uint64_t)(c + 1));
        }
    }
    assert_ok(lg_set_kernel_isa("auto"));
    assert_true(compared >= 1);
    /* refusals: overlap, NULL, negative count, a rate outside [0, 1) */
    assert_int_equal(lg_elu_dropout_forward_f32(xf, xf + 5, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_elu_dropout_forward_f32(xf, xf, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_elu_dropout_forward_f32(NULL, gf, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_elu_dropout_forward_f64(xd, gd, -1, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_elu_dropout_forward_f64(xd, gd, 10, 1.0, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_inplace_f32(gf, gf + 3, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_inplace_f32(gf, NULL, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_inplace_f64(gd, xd, 10, NAN, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_inplace_f64(gd, xd, -2, 0.5, 1, 1, 1), LG_EINVAL);
    assert_ok(lg_elu_dropout_forward_f32(NULL, NULL, 0, 0.5, 1, 1, 1));
    assert_ok(lg_dropout_elu_backward_inplace_f64(NULL, NULL, 0, 0.5, 1, 1, 1));
    /* the remaking backward: each pair of its three arrays apart, none NULL, the rate */
    float *df = malloc(sizeof(float) * (size_t)n);
    double *dd = malloc(sizeof(double) * (size_t)n);
    assert_true(df && dd);
    assert_int_equal(lg_dropout_elu_backward_remake_f32(gf, gf + 9, xf, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_remake_f32(gf, df, df + 50, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_remake_f32(gf, df, gf + 99, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_remake_f32(gf, NULL, xf, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_remake_f64(NULL, dd, xd, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_remake_f64(gd, dd, NULL, 100, 0.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_remake_f64(gd, dd, xd, 10, 1.5, 1, 1, 1), LG_EINVAL);
    assert_int_equal(lg_dropout_elu_backward_remake_f64(gd, dd, xd, -1, 0.5, 1, 1, 1), LG_EINVAL);
    assert_ok(lg_dropout_elu_backward_remake_f32(NULL, NULL, NULL, 0, 0.5, 1, 1, 1));
    free(df), free(dd);
    free(xf), free(gf), free(xd), free(gd);
}

int main(void) {
    lg_rng_seed(&rng, 20240611);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_linear),
        cmocka_unit_test(test_fd_sparse_linear),
        cmocka_unit_test(test_fd_elu),
        cmocka_unit_test(test_elu_f32_accuracy),
        cmocka_unit_test(test_fexp_accuracy),
        cmocka_unit_test(test_isa_variants_bitwise),
        cmocka_unit_test(test_isa_sparse_linear_bitwise),
        cmocka_unit_test(test_elu_backward_inplace),
        cmocka_unit_test(test_elu_dropout_fused),
        cmocka_unit_test(test_fd_checker_catches_bugs),
        cmocka_unit_test(test_fd_dropout),
        cmocka_unit_test(test_fd_pairnorm),
        cmocka_unit_test(test_fd_layernorm),
        cmocka_unit_test(test_fd_log_softmax_nll),
        cmocka_unit_test(test_log_softmax_rows),
        cmocka_unit_test(test_gemm_row_panels),
        cmocka_unit_test(test_gemm_epilogue),
        cmocka_unit_test(test_gemm_ksplit),
        cmocka_unit_test(test_colsum_rows),
        cmocka_unit_test(test_pairnorm_properties),
        cmocka_unit_test(test_layernorm_constant_row),
        cmocka_unit_test(test_dropout_rule),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_accuracy),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_sparse_equals_dense),
        cmocka_unit_test(test_threads_bitwise_f32),
        cmocka_unit_test(test_f32_matches_f64),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
