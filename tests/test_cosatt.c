/*
 * Tests of the scaled cosine-similarity attention layer (lipgnn/cosatt.h):
 * the header's worked example, the fused kernels against the naive oracle
 * (tests/cosatt_naive.c), central finite differences of every gradient in
 * double, accumulation (+=), bitwise thread invariance, the Jacobian's
 * spectral norm as the input scale grows (against a graph-transformer layer
 * without normalisation), huge inputs, invalid arguments and allocation
 * failures.
 *
 * Tolerances (stated once, not tuned to pass):
 *   finite differences (double, central, h = 1e-6, inputs and parameters
 *   O(1), tau = 10): every gradient (input, Wq, Wk, Wv, bq, bk, bv, W_O, b_O)
 *       |analytic - fd| <= 1e-7 + 1e-6 |fd|  (truncation ~h^2 |L'''| ~1e-10,
 *       rounding ~1e-16 |L| / h ~1e-10: a margin of ~1000x)
 *   fused double forward vs naive: 1e-12 relative to max(1, |value|)
 *   fused float vs naive: 1e-5 relative to max(1, |value|)
 *   thread counts: bitwise equal
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "testgraph.h"
#include "testutil.h"
#include "cosatt_naive.h"
#include "attention/cosatt_internal.h"
#include "graph/graph_internal.h"

/* Random parameters: W and W_O entries uniform in +-ws, biases in +-0.5. */
static void rand_params(lg_rng *r, double *prm, const lg_cosatt_config *cfg, double ws) {
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(cfg, &lay));
    for (lg_idx t = 0; t < lay.count; t++) {
        int bias = (t >= lay.b && t < lay.wo) || t >= lay.bo;
        prm[t] = bias ? 0.5 * urand(r) : ws * urand(r);
    }
}

static const char *block_name(const lg_cosatt_config *cfg, lg_idx t) {
    lg_cosatt_layout lay;
    lg_cosatt_layout_get(cfg, &lay);
    const lg_idx KC = cfg->heads * cfg->head_dim;
    if (t < lay.b) {
        lg_idx c = t % lay.w_cols;
        return c < KC ? "Wq" : c < 2 * KC ? "Wk" : "Wv";
    }
    if (t < lay.wo) return t - lay.b < KC ? "bq" : t - lay.b < 2 * KC ? "bk" : "bv";
    return t < lay.bo ? "W_O" : "b_O";
}

/* ------------------------------------------------------------------------- */
/* Worked example, forward against the naive oracle                           */
/* ------------------------------------------------------------------------- */

/* The example at the top of lipgnn/cosatt.h, at scale 1 and 1000. */
static void test_worked_example(void **state) {
    (void)state;
    lg_cosatt_config cfg = lg_cosatt_config_default(2, 1, 2, 2);
    cfg.eps = 1e-12;
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(&cfg, &lay));
    double prm[64] = {0};
    assert_true(lay.count <= 64);
    /* W = [3I | I | 2I] (2 x 6), W_O = I */
    prm[0 * 6 + 0] = 3, prm[1 * 6 + 1] = 3;
    prm[0 * 6 + 2] = 1, prm[1 * 6 + 3] = 1;
    prm[0 * 6 + 4] = 2, prm[1 * 6 + 5] = 2;
    prm[lay.wo + 0] = 1, prm[lay.wo + 3] = 1;
    lg_idx src[] = {0, 1}, dst[] = {0, 0};
    lg_graph *g;
    assert_ok(lg_graph_from_edges(&g, 2, 2, src, dst, 0));
    lg_cosatt_cache *c;
    assert_ok(lg_cosatt_cache_init_f64(&c, &cfg, 2, 2));
    const double a0 = 1.0 / (1.0 + exp(-10.0));
    for (double s = 1; s <= 1000; s *= 1000) {
        double in[4] = {1 * s, 0, 0, 5 * s}, out[4], att[2];
        assert_ok(lg_cosatt_forward_f64(out, c, in, prm, g, &cfg));
        assert_ok(lg_cosatt_attention_f64(att, c));
        assert_true(fabs(att[0] - a0) < 1e-9 && fabs(att[1] - (1 - a0)) < 1e-9);
        assert_true(fabs(out[0] - a0) < 1e-9 && fabs(out[1] - (1 - a0)) < 1e-9);
        assert_true(fabs(out[0] - 0.9999546) < 1e-7 && fabs(out[1] - 0.0000454) < 1e-7);
        assert_true(out[2] == 0 && out[3] == 0); /* node 1: no in-neighbour -> b_O = 0 */
    }
    lg_cosatt_cache_free(c);
    lg_graph_free(g);
}

/* Fused f64 and f32 forwards vs the naive oracle, several shapes and graphs. */
static void test_forward_vs_naive(void **state) {
    (void)state;
    static const lg_idx shapes[][4] = {{5, 1, 3, 4}, {6, 3, 4, 5}, {4, 2, 9, 3}};
    lg_rng r;
    lg_rng_seed(&r, 5);
    for (int sh = 0; sh < 3; sh++)
        for (int loops = 0; loops < 2; loops++) {
            gpair gp = sh == 2 ? random_graph(200, 4, 17, loops) : small_graph(3 + (uint64_t)sh, loops);
            lg_cosatt_config cfg = lg_cosatt_config_default(shapes[sh][0], shapes[sh][1], shapes[sh][2], shapes[sh][3]);
            cfg.nu = sh == 1 ? 1.7 : 1.0;
            cfg.tau = sh == 2 ? 4.0 : 10.0;
            lg_cosatt_layout lay;
            assert_ok(lg_cosatt_layout_get(&cfg, &lay));
            const lg_idx n = gp.g->n, F = cfg.in_dim, D = cfg.out_dim, K = cfg.heads, nnz = gp.g->nnz;
            double *in = lg_test_dvec(n * F), *prm = lg_test_dvec(lay.count), *ref = lg_test_dvec(n * D),
                   *out = lg_test_dvec(n * D);
            double *aref = lg_test_dvec(nnz * K), *a64 = lg_test_dvec(nnz * K);
            float *inf = lg_test_fvec(n * F), *prmf = lg_test_fvec(lay.count), *outf = lg_test_fvec(n * D),
                  *af = lg_test_fvec(nnz * K);
            for (lg_idx t = 0; t < n * F; t++) in[t] = urand(&r), inf[t] = (float)in[t];
            rand_params(&r, prm, &cfg, 0.8);
            for (lg_idx t = 0; t < lay.count; t++) prmf[t] = (float)prm[t];
            /* the oracle in double on the float-rounded values, for the float check */
            for (lg_idx t = 0; t < n * F; t++) in[t] = inf[t];
            for (lg_idx t = 0; t < lay.count; t++) prm[t] = prmf[t];
            assert_int_equal(cosatt_naive_forward(ref, aref, in, prm, gp.g, &cfg), 0);
            lg_cosatt_cache *c64, *c32;
            assert_ok(lg_cosatt_cache_init_f64(&c64, &cfg, n, nnz));
            assert_ok(lg_cosatt_cache_init_f32(&c32, &cfg, n, nnz));
            assert_ok(lg_cosatt_forward_f64(out, c64, in, prm, gp.g, &cfg));
            assert_ok(lg_cosatt_forward_f32(outf, c32, inf, prmf, gp.g, &cfg));
            assert_ok(lg_cosatt_attention_f64(a64, c64));
            assert_ok(lg_cosatt_attention_f32(af, c32));
            double e64 = 0, e32 = 0, ea = 0, ea32 = 0;
            for (lg_idx t = 0; t < n * D; t++) {
                e64 = fmax(e64, fabs(out[t] - ref[t]) / fmax(1, fabs(ref[t])));
                e32 = fmax(e32, fabs(outf[t] - ref[t]) / fmax(1, fabs(ref[t])));
            }
            for (lg_idx t = 0; t < nnz * K; t++) ea = fmax(ea, fabs(a64[t] - aref[t])), ea32 = fmax(ea32, fabs(af[t] - aref[t]));
            assert_true(e64 <= 1e-12);
            assert_true(e32 <= 1e-5);
            assert_true(ea <= 1e-12 && ea32 <= 1e-5);
            /* every non-empty row sums to 1 per head */
            for (lg_idx i = 0; i < n; i++)
                for (lg_idx k = 0; k < K; k++) {
                    if (gp.g->p[i + 1] == gp.g->p[i]) continue;
                    double s = 0;
                    for (lg_idx e = gp.g->p[i]; e < gp.g->p[i + 1]; e++) s += a64[e * K + k];
                    assert_true(fabs(s - 1) < 1e-12);
                }
            /* a node without in-neighbours outputs b_O exactly */
            if (!loops && sh < 2)
                for (lg_idx o = 0; o < D; o++) assert_true(out[8 * D + o] == prm[lay.bo + o]);
            lg_cosatt_cache_free(c64);
            lg_cosatt_cache_free(c32);
            free(in), free(prm), free(ref), free(out), free(aref), free(a64), free(inf), free(prmf), free(outf),
                free(af);
            gpair_free(&gp);
        }
}

/* ------------------------------------------------------------------------- */
/* Finite differences                                                         */
/* ------------------------------------------------------------------------- */

#define FD_H 1e-6
#define FD_ABS 1e-7
#define FD_REL 1e-6

static double loss64(lg_cosatt_cache *c, const double *in, const double *prm, const lg_graph *g,
                     const lg_cosatt_config *cfg, const double *G, double *out) {
    assert_ok(lg_cosatt_forward_f64(out, c, in, prm, g, cfg));
    double s = 0;
    for (lg_idx t = 0; t < g->n * cfg->out_dim; t++) s += out[t] * G[t];
    return s;
}

/* Backward vs central differences for every input and parameter; corrupt >= 0
 * perturbs that analytic entry (params first, then inputs) to show the
 * checker sees it. Returns the number of mismatches; per-block maximum
 * relative errors are printed. */
static int fd_check(const lg_cosatt_config *cfg, const gpair *gp, double *in, double *prm, const double *G,
                    lg_idx corrupt) {
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(cfg, &lay));
    const lg_idx n = gp->g->n, F = cfg->in_dim, D = cfg->out_dim, np = lay.count;
    lg_cosatt_cache *c = NULL;
    assert_ok(lg_cosatt_cache_init_f64(&c, cfg, n, gp->g->nnz));
    double *out = lg_test_dvec(n * D), *din = lg_test_dvec(n * F), *dpr = lg_test_dvec(np);
    loss64(c, in, prm, gp->g, cfg, G, out);
    assert_ok(lg_cosatt_backward_f64(din, dpr, G, c, in, prm, gp->g, gp->gT, cfg));
    if (corrupt >= 0) {
        double *x = corrupt < np ? &dpr[corrupt] : &din[corrupt - np];
        *x += 1e-4 * (1 + fabs(*x));
    }
    int bad = 0;
    double worst = 0, gmax = 0;
    for (lg_idx t = 0; t < np + n * F; t++) {
        double *x = t < np ? &prm[t] : &in[t - np], an = t < np ? dpr[t] : din[t - np], x0 = *x;
        *x = x0 + FD_H;
        double lp = loss64(c, in, prm, gp->g, cfg, G, out);
        *x = x0 - FD_H;
        double lm = loss64(c, in, prm, gp->g, cfg, G, out);
        *x = x0;
        double fd = (lp - lm) / (2 * FD_H), tol = FD_ABS + FD_REL * fabs(fd);
        worst = fmax(worst, fabs(an - fd) / tol);
        gmax = fmax(gmax, fabs(fd));
        if (!(fabs(an - fd) <= tol)) {
            if (!bad && corrupt < 0)
                print_message("  %s[%lld] analytic %.12g fd %.12g\n", t < np ? block_name(cfg, t) : "input",
                              (long long)(t < np ? t : t - np), an, fd);
            bad++;
        }
    }
    if (corrupt < 0) print_message("  fd: worst error / tolerance %.3g, largest gradient %.3g\n", worst, gmax);
    lg_cosatt_cache_free(c);
    free(out), free(din), free(dpr);
    return bad;
}

static void test_fd_all(void **state) {
    (void)state;
    static const lg_idx shapes[][4] = {{4, 1, 3, 3}, {3, 3, 2, 4}, {5, 2, 4, 2}};
    lg_rng r;
    lg_rng_seed(&r, 11);
    for (int sh = 0; sh < 3; sh++)
        for (int loops = 0; loops < 2; loops++) {
            gpair gp = small_graph(40 + (uint64_t)sh, loops);
            lg_cosatt_config cfg = lg_cosatt_config_default(shapes[sh][0], shapes[sh][1], shapes[sh][2], shapes[sh][3]);
            cfg.nu = sh == 2 ? 0.6 : 1.0;
            lg_cosatt_layout lay;
            assert_ok(lg_cosatt_layout_get(&cfg, &lay));
            const lg_idx n = gp.g->n, F = cfg.in_dim, D = cfg.out_dim;
            double *in = lg_test_dvec(n * F), *prm = lg_test_dvec(lay.count), *G = lg_test_dvec(n * D);
            for (lg_idx t = 0; t < n * F; t++) in[t] = urand(&r);
            rand_params(&r, prm, &cfg, 1.0);
            for (lg_idx t = 0; t < n * D; t++) G[t] = urand(&r);
            assert_int_equal(fd_check(&cfg, &gp, in, prm, G, -1), 0);
            free(in), free(prm), free(G);
            gpair_free(&gp);
        }
}

/* The checker fails on a wrong gradient: a corrupted entry of each block. */
static void test_fd_catches_wrong_gradient(void **state) {
    (void)state;
    lg_rng r;
    lg_rng_seed(&r, 12);
    gpair gp = small_graph(7, 1);
    lg_cosatt_config cfg = lg_cosatt_config_default(3, 2, 2, 3);
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(&cfg, &lay));
    const lg_idx n = gp.g->n;
    double *in = lg_test_dvec(n * 3), *prm = lg_test_dvec(lay.count), *G = lg_test_dvec(n * 3);
    for (lg_idx t = 0; t < n * 3; t++) in[t] = urand(&r), G[t] = urand(&r);
    rand_params(&r, prm, &cfg, 1.0);
    const lg_idx picks[] = {1, 5, 9, lay.b + 1, lay.b + 5, lay.b + 9, lay.wo + 2, lay.bo, lay.count + 4};
    for (size_t k = 0; k < sizeof picks / sizeof picks[0]; k++) assert_int_equal(fd_check(&cfg, &gp, in, prm, G, picks[k]), 1);
    free(in), free(prm), free(G);
    gpair_free(&gp);
}

/* Backward adds into d_in and d_params: two calls give twice one call plus the
 * initial content. */
static void test_accumulate(void **state) {
    (void)state;
    lg_rng r;
    lg_rng_seed(&r, 13);
    gpair gp = small_graph(9, 1);
    lg_cosatt_config cfg = lg_cosatt_config_default(4, 2, 3, 3);
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(&cfg, &lay));
    const lg_idx n = gp.g->n, np = lay.count;
    double *in = lg_test_dvec(n * 4), *prm = lg_test_dvec(np), *G = lg_test_dvec(n * 3), *out = lg_test_dvec(n * 3);
    double *d1 = lg_test_dvec(np), *i1 = lg_test_dvec(n * 4), *d2 = lg_test_dvec(np), *i2 = lg_test_dvec(n * 4);
    for (lg_idx t = 0; t < n * 4; t++) in[t] = urand(&r);
    for (lg_idx t = 0; t < n * 3; t++) G[t] = urand(&r);
    rand_params(&r, prm, &cfg, 1.0);
    for (lg_idx t = 0; t < np; t++) d2[t] = 0.25;
    for (lg_idx t = 0; t < n * 4; t++) i2[t] = -0.5;
    lg_cosatt_cache *c;
    assert_ok(lg_cosatt_cache_init_f64(&c, &cfg, n, gp.g->nnz));
    assert_ok(lg_cosatt_forward_f64(out, c, in, prm, gp.g, &cfg));
    assert_ok(lg_cosatt_backward_f64(i1, d1, G, c, in, prm, gp.g, gp.gT, &cfg));
    assert_ok(lg_cosatt_backward_f64(i2, d2, G, c, in, prm, gp.g, gp.gT, &cfg));
    assert_ok(lg_cosatt_backward_f64(i2, d2, G, c, in, prm, gp.g, gp.gT, &cfg));
    double nz = 0;
    for (lg_idx t = 0; t < np; t++) assert_true(fabs(d2[t] - (0.25 + 2 * d1[t])) <= 1e-12 * (1 + fabs(d1[t]))), nz += fabs(d1[t]);
    for (lg_idx t = 0; t < n * 4; t++) assert_true(fabs(i2[t] - (-0.5 + 2 * i1[t])) <= 1e-12 * (1 + fabs(i1[t])));
    assert_true(nz > 0);
    lg_cosatt_cache_free(c);
    free(in), free(prm), free(G), free(out), free(d1), free(i1), free(d2), free(i2);
    gpair_free(&gp);
}

/* ------------------------------------------------------------------------- */
/* Threads                                                                    */
/* ------------------------------------------------------------------------- */

static void run_f32(int threads, const lg_cosatt_config *cfg, const gpair *gp, const float *in, const float *prm,
                    const float *G, float *out, float *din, float *dpr, float *att) {
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(cfg, &lay));
    omp_set_num_threads(threads);
    lg_cosatt_cache *c = NULL;
    assert_ok(lg_cosatt_cache_init_f32(&c, cfg, gp->g->n, gp->g->nnz));
    memset(din, 0, sizeof(float) * (size_t)(gp->g->n * cfg->in_dim));
    memset(dpr, 0, sizeof(float) * (size_t)lay.count);
    assert_ok(lg_cosatt_forward_f32(out, c, in, prm, gp->g, cfg));
    assert_ok(lg_cosatt_backward_f32(din, dpr, G, c, in, prm, gp->g, gp->gT, cfg));
    assert_ok(lg_cosatt_attention_f32(att, c));
    lg_cosatt_cache_free(c);
}

static void test_threads_bitwise(void **state) {
    (void)state;
    lg_rng r;
    lg_rng_seed(&r, 31);
    gpair gp = random_graph(700, 5, 32, 1);
    const int saved = omp_get_max_threads();
    lg_cosatt_config cfg = lg_cosatt_config_default(16, 4, 8, 7);
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(&cfg, &lay));
    const lg_idx n = gp.g->n, D = cfg.out_dim, nnz = gp.g->nnz;
    float *in = lg_test_fvec(n * 16), *prm = lg_test_fvec(lay.count), *G = lg_test_fvec(n * D);
    float *o[2], *di[2], *dp[2], *at[2];
    for (lg_idx t = 0; t < n * 16; t++) in[t] = (float)urand(&r);
    assert_ok(lg_cosatt_params_init_f32(prm, &cfg, &r));
    for (lg_idx t = lay.b; t < lay.wo; t++) prm[t] = (float)(0.3 * urand(&r));
    for (lg_idx t = 0; t < n * D; t++) G[t] = (float)urand(&r);
    for (int s = 0; s < 2; s++) {
        o[s] = lg_test_fvec(n * D), di[s] = lg_test_fvec(n * 16), dp[s] = lg_test_fvec(lay.count),
            at[s] = lg_test_fvec(nnz * 4);
        run_f32(s + 1, &cfg, &gp, in, prm, G, o[s], di[s], dp[s], at[s]);
    }
    omp_set_num_threads(saved);
    assert_memory_equal(o[0], o[1], sizeof(float) * (size_t)(n * D));
    assert_memory_equal(di[0], di[1], sizeof(float) * (size_t)(n * 16));
    assert_memory_equal(dp[0], dp[1], sizeof(float) * (size_t)lay.count);
    assert_memory_equal(at[0], at[1], sizeof(float) * (size_t)(nnz * 4));
    double gn = 0;
    for (lg_idx t = 0; t < lay.count; t++) gn += fabs(dp[0][t]);
    assert_true(gn > 0);
    for (int s = 0; s < 2; s++) free(o[s]), free(di[s]), free(dp[s]), free(at[s]);
    free(in), free(prm), free(G);
    gpair_free(&gp);
}

/* ------------------------------------------------------------------------- */
/* The Jacobian as the input scale grows                                      */
/* ------------------------------------------------------------------------- */

/* sigma_max of the (n D) x (n F) matrix J (row-major), 500 power iterations
 * on J^T J from a fixed start (exact to ~1e-10 for these tiny matrices unless
 * the top two singular values nearly coincide, which only slows it). */
static double sigma_max(const double *J, lg_idx rows, lg_idx cols) {
    double *v = lg_test_dvec(cols), *u = lg_test_dvec(rows), s = 0;
    for (lg_idx c = 0; c < cols; c++) v[c] = 1.0 + 0.01 * (double)c;
    for (int it = 0; it < 500; it++) {
        double nv = 0;
        for (lg_idx c = 0; c < cols; c++) nv += v[c] * v[c];
        nv = sqrt(nv);
        if (!(nv > 0)) break;
        for (lg_idx c = 0; c < cols; c++) v[c] /= nv;
        double nu = 0;
        for (lg_idx i = 0; i < rows; i++) {
            u[i] = 0;
            for (lg_idx c = 0; c < cols; c++) u[i] += J[i * cols + c] * v[c];
            nu += u[i] * u[i];
        }
        s = sqrt(nu);
        for (lg_idx c = 0; c < cols; c++) v[c] = 0;
        for (lg_idx i = 0; i < rows; i++)
            for (lg_idx c = 0; c < cols; c++) v[c] += J[i * cols + c] * u[i];
    }
    free(v), free(u);
    return s;
}

/* The full input Jacobian of the f64 cosine layer at `in`, one backward per
 * output entry (d_out = a unit vector): row (i D + o) = d out_io / d in. */
static void jac_cos(double *J, const lg_cosatt_config *cfg, const gpair *gp, const double *in, const double *prm) {
    const lg_idx n = gp->g->n, F = cfg->in_dim, D = cfg->out_dim;
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(cfg, &lay));
    lg_cosatt_cache *c;
    assert_ok(lg_cosatt_cache_init_f64(&c, cfg, n, gp->g->nnz));
    double *out = lg_test_dvec(n * D), *G = lg_test_dvec(n * D), *dp = lg_test_dvec(lay.count);
    assert_ok(lg_cosatt_forward_f64(out, c, in, prm, gp->g, cfg));
    for (lg_idx t = 0; t < n * D; t++) {
        G[t] = 1;
        memset(J + t * n * F, 0, sizeof(double) * (size_t)(n * F));
        assert_ok(lg_cosatt_backward_f64(J + t * n * F, dp, G, c, in, prm, gp->g, gp->gT, cfg));
        G[t] = 0;
    }
    lg_cosatt_cache_free(c);
    free(out), free(G), free(dp);
}

/* The same for the graph-transformer layer (lipgnn/gt.h), no normalisation. */
static void jac_gt(double *J, const lg_gt_config *cfg, const gpair *gp, const double *in, const double *prm) {
    const lg_idx n = gp->g->n, F = cfg->in_dim, D = lg_gt_out_dim(cfg);
    lg_gt_layout lay;
    assert_ok(lg_gt_layout_get(cfg, &lay));
    lg_gt_cache *c;
    assert_ok(lg_gt_cache_init_f64(&c, cfg, n, gp->g->nnz));
    double *out = lg_test_dvec(n * D), *G = lg_test_dvec(n * D), *dp = lg_test_dvec(lay.count);
    assert_ok(lg_gt_forward_f64(out, c, in, prm, gp->g, cfg, 0, 0, 0));
    for (lg_idx t = 0; t < n * D; t++) {
        G[t] = 1;
        memset(J + t * n * F, 0, sizeof(double) * (size_t)(n * F));
        assert_ok(lg_gt_backward_f64(J + t * n * F, dp, G, c, in, prm, gp->g, gp->gT, cfg));
        G[t] = 0;
    }
    lg_gt_cache_free(c);
    free(out), free(G), free(dp);
}

/* ||J|| at s * x for s = 1, 10, 100, 1000.
 * (a) A tie: node 0 attends {1, 2} with x_2 = -x_1 and x_0 chosen so that
 *     q_0 . k_1 = 0 (biases 0), so both scores are equal at every scale. In
 *     the graph transformer without norm the softmax stays at (1/2, 1/2) and
 *     d out_0 / d x_0 contains (v_1 - v_2) (x Wq k_1^T)-terms of order s^2
 *     beside the O(1) linear ones: ||J|| must grow at each decade of s (2x
 *     from 1 to 10, where the linear terms still count; measured 8x) and
 *     50x per decade from 10 on (measured 100x: the s^2 term). In the
 *     cosine layer the hats do not change with s and ||J|| must not grow
 *     (measured: it falls like 1/s, 30.4 -> 0.030 from s = 1 to 1000).
 * (b) Random inputs and parameters with biases on the 9-node graph with
 *     self-loops: the cosine layer's ||J|| at s = 10, 100, 1000 stays below
 *     its value at s = 1 (times 1.01).
 * The figures are printed. */
static void test_jacobian_scale(void **state) {
    (void)state;
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    lg_rng r;
    lg_rng_seed(&r, 77);
    const lg_idx F = 4, K = 1, C = 3, KC = K * C;
    /* (a) the tie */
    {
        lg_idx src[] = {1, 2}, dst[] = {0, 0};
        gpair gp = gpair_from_edges(3, 2, src, dst, 0);
        lg_cosatt_config cc = lg_cosatt_config_default(F, K, C, KC);
        lg_gt_config gc = lg_gt_config_default(F, K, C);
        lg_cosatt_layout cl;
        lg_gt_layout gl;
        assert_ok(lg_cosatt_layout_get(&cc, &cl));
        assert_ok(lg_gt_layout_get(&gc, &gl));
        double *pc = lg_test_dvec(cl.count), *pg = lg_test_dvec(gl.count), x[12];
        for (lg_idx f = 0; f < F; f++)
            for (lg_idx col = 0; col < 3 * KC; col++) {
                double w = urand(&r);
                pc[f * cl.w_cols + col] = w;
                pg[f * gl.w_cols + col] = w; /* same Wq, Wk, Wv */
            }
        for (lg_idx f = 0; f < F; f++)
            for (lg_idx col = 3 * KC; col < gl.w_cols; col++) pg[f * gl.w_cols + col] = urand(&r); /* Wskip */
        for (lg_idx t = 0; t < KC * KC; t++) pc[cl.wo + t] = urand(&r);
        for (int t = 0; t < 12; t++) x[t] = urand(&r);
        for (lg_idx f = 0; f < F; f++) x[2 * F + f] = -x[F + f];
        /* u = Wq k_1^T (F-vector): x_0 -= (x_0 . u / u . u) u makes q_0 . k_1 = 0 */
        double k1[8] = {0}, u[8] = {0}, xu = 0, uu = 0;
        for (lg_idx c = 0; c < KC; c++)
            for (lg_idx f = 0; f < F; f++) k1[c] += x[F + f] * pc[f * cl.w_cols + KC + c];
        for (lg_idx f = 0; f < F; f++) {
            for (lg_idx c = 0; c < KC; c++) u[f] += pc[f * cl.w_cols + c] * k1[c];
            xu += x[f] * u[f], uu += u[f] * u[f];
        }
        for (lg_idx f = 0; f < F; f++) x[f] -= xu / uu * u[f];
        double *J = lg_test_dvec(3 * KC * 3 * F), sc[4], sg[4], xs[12];
        int k = 0;
        for (double s = 1; s <= 1000; s *= 10, k++) {
            for (int t = 0; t < 12; t++) xs[t] = s * x[t];
            jac_cos(J, &cc, &gp, xs, pc);
            sc[k] = sigma_max(J, 3 * KC, 3 * F);
            jac_gt(J, &gc, &gp, xs, pg);
            sg[k] = sigma_max(J, 3 * KC, 3 * F);
            print_message("  tie, scale %6g: ||J|| cosine %.6g, graph transformer (no norm) %.6g\n", s, sc[k], sg[k]);
        }
        for (k = 1; k < 4; k++) {
            assert_true(isfinite(sc[k]) && sc[k] <= sc[0] * 1.01);
            assert_true(sg[k] >= (k == 1 ? 2 : 50) * sg[k - 1]);
        }
        free(pc), free(pg), free(J);
        gpair_free(&gp);
    }
    /* (b) random inputs and parameters */
    {
        gpair gp = small_graph(21, 1);
        lg_cosatt_config cc = lg_cosatt_config_default(F, 2, C, 3);
        lg_cosatt_layout cl;
        assert_ok(lg_cosatt_layout_get(&cc, &cl));
        const lg_idx n = gp.g->n;
        double *pc = lg_test_dvec(cl.count), *x = lg_test_dvec(n * F), *xs = lg_test_dvec(n * F),
               *J = lg_test_dvec(n * 3 * n * F), s1 = 0;
        rand_params(&r, pc, &cc, 1.0);
        for (lg_idx t = 0; t < n * F; t++) x[t] = urand(&r);
        for (double s = 1; s <= 1000; s *= 10) {
            for (lg_idx t = 0; t < n * F; t++) xs[t] = s * x[t];
            jac_cos(J, &cc, &gp, xs, pc);
            double sg = sigma_max(J, n * 3, n * F);
            print_message("  random, scale %6g: ||J|| cosine %.6g\n", s, sg);
            if (s == 1) s1 = sg;
            assert_true(sg > 0 && sg <= 1.01 * s1);
        }
        free(pc), free(x), free(xs), free(J);
        gpair_free(&gp);
    }
    omp_set_num_threads(saved);
}

/* ------------------------------------------------------------------------- */
/* Large inputs, layout, errors                                               */
/* ------------------------------------------------------------------------- */

/* Float inputs of scale 1e20 (||x||^2 overflows float: the scaled branch),
 * biases 0: the output equals the one at scale 1 (the hats do not depend on
 * the scale, eps / ||x||^2 is below rounding). */
static void test_large_inputs(void **state) {
    (void)state;
    lg_rng r;
    lg_rng_seed(&r, 3);
    gpair gp = small_graph(4, 1);
    lg_cosatt_config cfg = lg_cosatt_config_default(5, 2, 4, 3);
    cfg.eps = 1e-30;
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(&cfg, &lay));
    const lg_idx n = gp.g->n;
    float *in = lg_test_fvec(n * 5), *big = lg_test_fvec(n * 5), *prm = lg_test_fvec(lay.count),
          *o1 = lg_test_fvec(n * 3), *o2 = lg_test_fvec(n * 3);
    float *din = lg_test_fvec(n * 5), *dp = lg_test_fvec(lay.count), *G = lg_test_fvec(n * 3);
    assert_ok(lg_cosatt_params_init_f32(prm, &cfg, &r));
    for (lg_idx t = 0; t < n * 5; t++) in[t] = (float)urand(&r), big[t] = in[t] * 1e20f;
    for (lg_idx t = 0; t < n * 3; t++) G[t] = 1;
    lg_cosatt_cache *c;
    assert_ok(lg_cosatt_cache_init_f32(&c, &cfg, n, gp.g->nnz));
    assert_ok(lg_cosatt_forward_f32(o1, c, in, prm, gp.g, &cfg));
    assert_ok(lg_cosatt_forward_f32(o2, c, big, prm, gp.g, &cfg));
    for (lg_idx t = 0; t < n * 3; t++) assert_true(isfinite(o2[t]) && fabsf(o1[t] - o2[t]) <= 1e-4f * (1 + fabsf(o1[t])));
    assert_ok(lg_cosatt_backward_f32(din, dp, G, c, big, prm, gp.g, gp.gT, &cfg));
    for (lg_idx t = 0; t < n * 5; t++) assert_true(isfinite(din[t]));
    lg_cosatt_cache_free(c);
    free(in), free(big), free(prm), free(o1), free(o2), free(din), free(dp), free(G);
    gpair_free(&gp);
}

static void test_layout_and_init(void **state) {
    (void)state;
    lg_cosatt_config cfg = lg_cosatt_config_default(5, 3, 4, 6);
    assert_true(cfg.tau == 10 && cfg.nu == 1 && cfg.eps == 1e-6 && cfg.spectral_init == 0);
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(&cfg, &lay));
    assert_int_equal(lay.w_cols, 36);
    assert_int_equal(lay.b, 5 * 36);
    assert_int_equal(lay.wo, 5 * 36 + 36);
    assert_int_equal(lay.bo, 5 * 36 + 36 + 12 * 6);
    assert_int_equal(lay.count, lay.bo + 6);
    double *p = lg_test_dvec(lay.count);
    lg_rng r;
    lg_rng_seed(&r, 1);
    assert_ok(lg_cosatt_params_init_f64(p, &cfg, &r));
    const double bw = sqrt(6.0 / (5 + 12)), bo = sqrt(6.0 / (12 + 6));
    double mw = 0, mo = 0;
    for (lg_idx t = 0; t < lay.b; t++) mw = fmax(mw, fabs(p[t]));
    for (lg_idx t = lay.wo; t < lay.bo; t++) mo = fmax(mo, fabs(p[t]));
    assert_true(mw <= bw && mw > 0.8 * bw && mo <= bo && mo > 0.8 * bo);
    for (lg_idx t = lay.b; t < lay.wo; t++) assert_true(p[t] == 0);
    for (lg_idx t = lay.bo; t < lay.count; t++) assert_true(p[t] == 0);
    free(p);
}

static void test_invalid(void **state) {
    (void)state;
    lg_cosatt_config ok = lg_cosatt_config_default(4, 2, 3, 5), b;
    assert_ok(lg_cosatt_config_check(&ok));
    assert_int_equal(lg_cosatt_config_check(NULL), LG_EINVAL);
#define BAD(field, value) LG_TEST_BAD_CONFIG(cosatt, ok, b, field, value)
    BAD(in_dim, 0);
    BAD(heads, -1);
    BAD(head_dim, 0);
    BAD(head_dim, (lg_idx)1 << 40);
    BAD(out_dim, 0);
    BAD(tau, 0.0);
    BAD(tau, -1.0);
    BAD(tau, INFINITY);
    BAD(nu, NAN);
    BAD(nu, 0.0);
    BAD(eps, 0.0);
    BAD(eps, -1e-6);
    BAD(spectral_init, 2);
#undef BAD
    b = ok;
    b.heads = 1 << 15;
    b.head_dim = 1 << 15; /* 3 K C overflows an int */
    assert_int_equal(lg_cosatt_config_check(&b), LG_EINVAL);
    assert_int_equal(lg_cosatt_layout_get(&ok, NULL), LG_EINVAL);
    lg_cosatt_mem mem;
    assert_int_equal(lg_cosatt_memory(&ok, 10, 10, 2, &mem), LG_EINVAL);
    assert_int_equal(lg_cosatt_memory(&ok, -1, 10, 4, &mem), LG_EINVAL);
    /* n + 1 overflowed (signed) before the sizes were checked */
    assert_int_equal(lg_cosatt_memory(&ok, INT64_MAX, 5, 4, &mem), LG_ERANGE);
    lg_cosatt_cache *cc = (lg_cosatt_cache *)&cc;
    assert_int_equal(lg_cosatt_cache_init_f32(&cc, &ok, INT64_MAX, 5), LG_ERANGE);
    assert_null(cc);
    assert_int_equal(lg_cosatt_cache_init_f64(&cc, &ok, INT64_MAX, 5), LG_ERANGE);
    assert_ok(lg_cosatt_memory(&ok, 10, LG__EPOS_MAX, 4, &mem)); /* 32-bit edge positions */
    assert_int_equal(lg_cosatt_memory(&ok, 10, LG__EPOS_MAX + 1, 4, &mem), LG_ERANGE);
    assert_int_equal(lg_cosatt_memory(&ok, 10, 10, 4, NULL), LG_EINVAL);
    assert_ok(lg_cosatt_memory(&ok, 10, 30, 4, &mem));
    assert_true(mem.activations > 0 && mem.workspace > 0);
    lg_cosatt_mem m8;
    assert_ok(lg_cosatt_memory(&ok, 10, 30, 8, &m8));
    assert_true(m8.activations == 2 * mem.activations);
    lg_rng r;
    lg_rng_seed(&r, 1);
    assert_int_equal(lg_cosatt_params_init_f32(NULL, &ok, &r), LG_EINVAL);

    gpair gp = small_graph(2, 0), gp2 = small_graph(2, 1);
    lg_cosatt_layout lay;
    assert_ok(lg_cosatt_layout_get(&ok, &lay));
    const lg_idx n = gp.g->n, D = ok.out_dim;
    float *in = lg_test_fvec(n * 4), *prm = lg_test_fvec(lay.count), *out = lg_test_fvec(n * D),
          *dpr = lg_test_fvec(lay.count), *din = lg_test_fvec(n * 4);
    double *in64 = lg_test_dvec(n * 4), *out64 = lg_test_dvec(n * D), *prm64 = lg_test_dvec(lay.count);
    float att[256];
    lg_cosatt_cache *c = NULL, *small = NULL, *fewnodes = NULL;
    assert_ok(lg_cosatt_cache_init_f32(&c, &ok, n, gp2.g->nnz));
    assert_ok(lg_cosatt_cache_init_f32(&small, &ok, n, 3));
    assert_ok(lg_cosatt_cache_init_f32(&fewnodes, &ok, 4, gp2.g->nnz));
    assert_int_equal(lg_cosatt_cache_init_f32(NULL, &ok, 4, 4), LG_EINVAL);
    assert_int_equal(lg_cosatt_backward_f32(din, dpr, out, c, in, prm, gp.g, gp.gT, &ok), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "no forward"));
    assert_int_equal(lg_cosatt_attention_f32(att, c), LG_EINVAL);
    assert_int_equal(lg_cosatt_forward_f32(NULL, c, in, prm, gp.g, &ok), LG_EINVAL);
    assert_int_equal(lg_cosatt_forward_f32(out, c, NULL, prm, gp.g, &ok), LG_EINVAL);
    assert_int_equal(lg_cosatt_forward_f32(out, c, in, NULL, gp.g, &ok), LG_EINVAL);
    assert_int_equal(lg_cosatt_forward_f32(out, NULL, in, prm, gp.g, &ok), LG_EINVAL);
    assert_int_equal(lg_cosatt_forward_f32(out, c, in, prm, NULL, &ok), LG_EINVAL);
    assert_int_equal(lg_cosatt_forward_f32(out, c, in, prm, gp.g, NULL), LG_EINVAL);
    /* graph too big for the cache: too many edges, too many nodes */
    assert_int_equal(lg_cosatt_forward_f32(out, small, in, prm, gp.g, &ok), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "at most"));
    assert_int_equal(lg_cosatt_forward_f32(out, fewnodes, in, prm, gp.g, &ok), LG_EINVAL);
    /* wrong scalar type, config differing from the cache's */
    assert_int_equal(lg_cosatt_forward_f64(out64, c, in64, prm64, gp.g, &ok), LG_EINVAL);
    b = ok;
    b.tau = 5;
    assert_int_equal(lg_cosatt_forward_f32(out, c, in, prm, gp.g, &b), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "differs"));
    b = ok;
    b.out_dim = 4;
    assert_int_equal(lg_cosatt_forward_f32(out, c, in, prm, gp.g, &b), LG_EINVAL);
    /* a broken graph */
    lg_graph broken = *gp.g;
    lg_idx bj[256];
    memcpy(bj, gp.g->j, sizeof(lg_idx) * (size_t)gp.g->nnz);
    bj[0] = 99;
    broken.j = bj;
    assert_int_equal(lg_cosatt_forward_f32(out, c, in, prm, &broken, &ok), LG_EINVAL);
    /* out overlapping in: refused; out right after in: run */
    float *both = lg_test_fvec(n * (4 + D));
    assert_int_equal(lg_cosatt_forward_f32(both + 1, c, both, prm, gp.g, &ok), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "out and in overlap"));
    assert_int_equal(lg_cosatt_forward_f32(both, c, both + n * 4 - 1, prm, gp.g, &ok), LG_EINVAL);
    assert_ok(lg_cosatt_forward_f32(both + n * 4, c, both, prm, gp.g, &ok));
    free(both);

    assert_ok(lg_cosatt_forward_f32(out, c, in, prm, gp.g, &ok));
    assert_int_equal(lg_cosatt_backward_f32(din, NULL, out, c, in, prm, gp.g, gp.gT, &ok), LG_EINVAL);
    assert_int_equal(lg_cosatt_backward_f32(din, dpr, NULL, c, in, prm, gp.g, gp.gT, &ok), LG_EINVAL);
    assert_int_equal(lg_cosatt_backward_f32(din, dpr, out, c, in, prm, gp.g, NULL, &ok), LG_EINVAL);
    assert_int_equal(lg_cosatt_backward_f32(din, dpr, out, c, in, prm, gp.g, gp.g, &ok), LG_EINVAL);
    lg_graph same = *gp.g; /* the forward's graph in another lg_graph */
    assert_int_equal(lg_cosatt_backward_f32(din, dpr, out, c, in, prm, &same, gp.gT, &ok), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "graph is not the forward's"));
    { /* a transposed graph of the right shape with an entry out of range */
        lg_graph badT = *gp.gT;
        lg_idx *tj = malloc(sizeof(lg_idx) * (size_t)gp.gT->nnz);
        assert_non_null(tj);
        memcpy(tj, gp.gT->j, sizeof(lg_idx) * (size_t)gp.gT->nnz);
        tj[gp.gT->nnz - 1] = gp.gT->n + 7;
        badT.j = tj;
        assert_int_equal(lg_cosatt_backward_f32(din, dpr, out, c, in, prm, gp.g, &badT, &ok), LG_EINVAL);
        assert_non_null(strstr(lg_last_error(), "transpose"));
        free(tj);
    }
    assert_non_null(strstr(lg_last_error(), "transpose"));
    assert_int_equal(lg_cosatt_backward_f32(din, dpr, out, c, in, prm, gp2.g, gp2.gT, &ok), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "forward's"));
    assert_int_equal(lg_cosatt_backward_f32(din, dpr, out, c, in, prm, gp.g, gp2.gT, &ok), LG_EINVAL);
    b = ok;
    b.eps = 1e-3;
    assert_int_equal(lg_cosatt_backward_f32(din, dpr, out, c, in, prm, gp.g, gp.gT, &b), LG_EINVAL);
    assert_ok(lg_cosatt_backward_f32(din, dpr, out, c, in, prm, gp.g, gp.gT, &ok));
    assert_ok(lg_cosatt_backward_f32(NULL, dpr, out, c, in, prm, gp.g, gp.gT, &ok));
    assert_int_equal(lg_cosatt_attention_f32(NULL, c), LG_EINVAL);
    assert_int_equal(lg_cosatt_attention_f64((double *)att, c), LG_EINVAL);
    assert_ok(lg_cosatt_attention_f32(att, c));
    lg_cosatt_cache_free(NULL);
    lg_cosatt_cache_free(c);
    lg_cosatt_cache_free(small);
    lg_cosatt_cache_free(fewnodes);
    gpair_free(&gp);
    gpair_free(&gp2);
    free(in), free(prm), free(out), free(dpr), free(din), free(in64), free(out64), free(prm64);
}

/* One attempt of the sweep: an f32 cache for odd k, an f64 one for even k. */
LG_TEST_CACHE_ATTEMPT(cache_attempt, cosatt, const lg_cosatt_config, (lg_cosatt_cache *)1,
                      k % 2 ? lg_cosatt_cache_init_f32(&c, w, 300, 2000) : lg_cosatt_cache_init_f64(&c, w, 300, 2000))

static void test_alloc_failures(void **state) {
    (void)state;
    lg_cosatt_config cfg = lg_cosatt_config_default(8, 2, 4, 5);
    long failures = lg_test_alloc_sweep(cache_attempt, &cfg, 0);
    assert_int_equal(failures, 12); /* the struct and its 11 buffers */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_and_init),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_forward_vs_naive),
        cmocka_unit_test(test_fd_all),
        cmocka_unit_test(test_fd_catches_wrong_gradient),
        cmocka_unit_test(test_accumulate),
        cmocka_unit_test(test_threads_bitwise),
        cmocka_unit_test(test_jacobian_scale),
        cmocka_unit_test(test_large_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
