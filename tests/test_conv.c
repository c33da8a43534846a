/*
 * Tests of the baseline layers (src/conv: GCN, GIN, GGNN, GCNII):
 * finite-difference checks of every gradient of every layer in double
 * precision, on the graphs of test_gat.c (tests/testgraph.c), against the
 * fused kernel and against the naive per-node oracle (tests/conv_naive.c);
 * float and double kernels against the oracle; bitwise equality across thread
 * counts; a check that the FD checker catches a wrong gradient; GCN's
 * normalisation by hand; misuse and out-of-memory paths.
 *
 * Tolerances (stated once, not tuned to pass):
 *   finite differences (double, central, h = 1e-6 max(1, |v|)):
 *       |analytic - fd| <= 1e-6 * max(1, |fd|)
 *   fused double forward vs naive:   |a - b| <= 1e-11 (1 + |b|)
 *   fused float forward vs naive:    |a - b| <= 1e-4  (1 + |b|)
 *   float gradients vs double ones:  |a - b| <= 1e-3 * max(1, max |b|)
 *   thread counts:                   bitwise equal
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "conv_naive.h"
#include "testgraph.h"

/* ------------------------------------------------------------------------- */
/* A problem: config, graph, inputs (H, H0), parameters, loss weights R       */
/* ------------------------------------------------------------------------- */

typedef struct prob {
    lg_conv_config cfg;
    gpair gp;
    lg_idx n, F, D, P;
    double *in, *h0, *params, *R, *out;
    lg_conv_cache *cache;
} prob;

static void prob_init(prob *pr, const lg_conv_config *cfg, gpair gp, uint64_t seed) {
    memset(pr, 0, sizeof *pr);
    pr->cfg = *cfg;
    pr->gp = gp;
    pr->n = gp.g->n;
    pr->F = cfg->in_dim;
    pr->D = cfg->out_dim;
    lg_conv_layout lay;
    assert_ok(lg_conv_layout_get(cfg, &lay));
    pr->P = lay.count;
    pr->in = malloc(sizeof(double) * (size_t)(pr->n * pr->F));
    pr->h0 = malloc(sizeof(double) * (size_t)(pr->n * pr->F));
    pr->params = malloc(sizeof(double) * (size_t)pr->P);
    pr->R = malloc(sizeof(double) * (size_t)(pr->n * pr->D));
    pr->out = malloc(sizeof(double) * (size_t)(pr->n * pr->D));
    assert_true(pr->in && pr->h0 && pr->params && pr->R && pr->out);
    lg_rng r;
    lg_rng_seed(&r, seed);
    for (lg_idx t = 0; t < pr->n * pr->F; t++) pr->in[t] = urand(&r);
    for (lg_idx t = 0; t < pr->n * pr->F; t++) pr->h0[t] = urand(&r);
    assert_ok(lg_conv_params_init_f64(pr->params, cfg, &r));
    /* biases non-zero, so that their gradients are exercised */
    if (lay.b >= 0)
        for (lg_idx t = 0; t < pr->D; t++) pr->params[lay.b + t] = 0.1 * urand(&r);
    if (lay.b2 >= 0)
        for (lg_idx t = 0; t < pr->D; t++) pr->params[lay.b2 + t] = 0.1 * urand(&r);
    for (lg_idx t = 0; t < pr->n * pr->D; t++) pr->R[t] = urand(&r);
    assert_ok(lg_conv_cache_init_f64(&pr->cache, cfg, pr->n));
}

static void prob_free(prob *pr) {
    free(pr->in), free(pr->h0), free(pr->params), free(pr->R), free(pr->out);
    lg_conv_cache_free(pr->cache);
    gpair_free(&pr->gp);
}

static const double *prob_h0(const prob *pr) { return pr->cfg.kind == LG_CONV_GCNII ? pr->h0 : NULL; }

/* L = sum(out * R) through the fused double kernel (naive = 0) or the oracle. */
static double prob_loss(prob *pr, int naive) {
    if (naive) conv_naive_forward(pr->out, NULL, pr->in, prob_h0(pr), pr->params, pr->gp.g, &pr->cfg);
    else assert_ok(lg_conv_forward_f64(pr->out, pr->cache, pr->in, prob_h0(pr), pr->params, pr->gp.g, &pr->cfg));
    double L = 0;
    for (lg_idx t = 0; t < pr->n * pr->D; t++) L += pr->out[t] * pr->R[t];
    return L;
}

/* Analytic gradients of L, zeroed first (d_h0 may be NULL). */
static void prob_grad(prob *pr, double *d_in, double *d_h0, double *d_params) {
    memset(d_in, 0, sizeof(double) * (size_t)(pr->n * pr->F));
    if (d_h0) memset(d_h0, 0, sizeof(double) * (size_t)(pr->n * pr->F));
    memset(d_params, 0, sizeof(double) * (size_t)pr->P);
    (void)prob_loss(pr, 0);
    assert_ok(lg_conv_backward_f64(d_in, d_h0, d_params, pr->R, pr->cache, pr->in, prob_h0(pr), pr->params, pr->gp.g,
                                   pr->gp.gT, &pr->cfg));
}

static double prob_loss_cb(void *pr, int naive) { return prob_loss(pr, naive); }

/* Central differences of L with respect to v[0..m). */
static void fd_grad(prob *pr, double *v, lg_idx m, double *fd, int naive) {
    fd_grad_of(prob_loss_cb, pr, v, m, fd, naive);
}

/* 1 if GIN's pre-activations are all at least margin away from the ReLU's
 * kink (always 1 for the other kinds). */
static int prob_smooth(prob *pr, double margin) {
    if (pr->cfg.kind != LG_CONV_GIN) return 1;
    double *pre = malloc(sizeof(double) * (size_t)(pr->n * pr->D));
    assert_non_null(pre);
    conv_naive_forward(pr->out, pre, pr->in, NULL, pr->params, pr->gp.g, &pr->cfg);
    int ok = 1;
    for (lg_idx t = 0; t < pr->n * pr->D; t++) ok &= fabs(pre[t]) >= margin;
    free(pre);
    return ok;
}

static void smooth_prob(prob *pr, const lg_conv_config *cfg, int self_loops, uint64_t seed) {
    for (int attempt = 0; attempt < 500; attempt++) {
        prob_init(pr, cfg, small_graph(seed + 1000u * (uint64_t)attempt, self_loops), seed + (uint64_t)attempt);
        if (prob_smooth(pr, 1e-3)) return;
        prob_free(pr);
    }
    fail_msg("no smooth sample found");
}

/* The parameter groups of a layout, for messages. */
typedef struct group {
    const char *name;
    lg_idx off, len;
} group;

static int groups_of(const lg_conv_layout *l, const lg_conv_config *c, group *gr) {
    const lg_idx F = c->in_dim, D = c->out_dim;
    int k = 0;
    switch (c->kind) {
    case LG_CONV_GCN:
        gr[k++] = (group){"W", l->w, F * D};
        gr[k++] = (group){"b", l->b, D};
        break;
    case LG_CONV_GIN:
        gr[k++] = (group){"W1", l->w, F * D};
        gr[k++] = (group){"b1", l->b, D};
        gr[k++] = (group){"W2", l->w2, D * D};
        gr[k++] = (group){"b2", l->b2, D};
        if (c->train_eps) gr[k++] = (group){"eps", l->eps, 1};
        break;
    case LG_CONV_GGNN:
        gr[k++] = (group){"W", l->w, F * F};
        gr[k++] = (group){"Wi", l->wi, 3 * F * F};
        gr[k++] = (group){"bi", l->bi, 3 * F};
        gr[k++] = (group){"Wh", l->wh, 3 * F * F};
        gr[k++] = (group){"bh", l->bh, 3 * F};
        break;
    default:
        gr[k++] = (group){"W", l->w, F * F};
        break;
    }
    return k;
}

static lg_conv_config case_cfg(lg_conv_kind kind, int variant) {
    lg_idx F = 5, D = kind == LG_CONV_GGNN || kind == LG_CONV_GCNII ? 5 : 4;
    if (kind == LG_CONV_GCN && variant) F = 3, D = 6; /* widening */
    lg_conv_config cfg = lg_conv_config_default(kind, F, D);
    if (kind == LG_CONV_GIN) { /* learnt eps from 0.3, or fixed at -0.4 */
        cfg.train_eps = variant == 0;
        cfg.eps = variant ? -0.4 : 0.3;
    }
    if (kind == LG_CONV_GCNII) {
        cfg.alpha = variant ? 0.35 : 0.1;
        cfg.beta = variant ? log(0.5 / 7 + 1) : log(1.5);
    }
    return cfg;
}

/* ------------------------------------------------------------------------- */
/* Finite-difference checks                                                   */
/* ------------------------------------------------------------------------- */

static void test_fd_gradients(void **state) {
    (void)state;
    double worst = 0, worst_naive = 0;
    int cases = 0;
    for (int kind = 0; kind < LG_CONV_COUNT; kind++)
        for (int variant = 0; variant < 2; variant++)
            for (int loops = 1; loops >= 0; loops--) {
                lg_conv_config cfg = case_cfg((lg_conv_kind)kind, variant);
                prob pr;
                smooth_prob(&pr, &cfg, loops, 100u * (uint64_t)cases + 17u);
                lg_idx nin = pr.n * pr.F;
                double *an_in = malloc(sizeof(double) * (size_t)nin), *an_h0 = malloc(sizeof(double) * (size_t)nin);
                double *an_p = malloc(sizeof(double) * (size_t)pr.P), *fd_p = malloc(sizeof(double) * (size_t)pr.P);
                double *fd_in = malloc(sizeof(double) * (size_t)nin);
                assert_true(an_in && an_h0 && an_p && fd_p && fd_in);
                prob_grad(&pr, an_in, an_h0, an_p);
                print_message("case %d: %s variant %d self-loops=%d\n", cases, lg_conv_kind_name(cfg.kind), variant, loops);
                for (int naive = 0; naive <= 1; naive++) {
                    double *w = naive ? &worst_naive : &worst;
                    fd_grad(&pr, pr.in, nin, fd_in, naive);
                    assert_int_equal(fd_compare("d_in", an_in, fd_in, nin, 1e-6, w), 0);
                    if (cfg.kind == LG_CONV_GCNII) {
                        fd_grad(&pr, pr.h0, nin, fd_in, naive);
                        assert_int_equal(fd_compare("d_h0", an_h0, fd_in, nin, 1e-6, w), 0);
                    }
                    fd_grad(&pr, pr.params, pr.P, fd_p, naive);
                    lg_conv_layout lay;
                    assert_ok(lg_conv_layout_get(&cfg, &lay));
                    group gr[8];
                    int ng = groups_of(&lay, &cfg, gr);
                    lg_idx covered = 0;
                    for (int k = 0; k < ng; k++) {
                        covered += gr[k].len;
                        assert_int_equal(fd_compare(gr[k].name, an_p + gr[k].off, fd_p + gr[k].off, gr[k].len, 1e-6, w), 0);
                    }
                    assert_int_equal(covered, pr.P);
                }
                free(an_in), free(an_h0), free(an_p), free(fd_p), free(fd_in);
                prob_free(&pr);
                cases++;
            }
    print_message("%d cases; worst error / tolerance: fused %.3g, naive oracle %.3g\n", cases, worst, worst_naive);
}

/* The checker must catch a wrong gradient: one analytic entry off by 1e-3
 * (relative) in each parameter group of each kind, and in d_in. */
static void test_fd_checker_catches_errors(void **state) {
    (void)state;
    for (int kind = 0; kind < LG_CONV_COUNT; kind++) {
        lg_conv_config cfg = case_cfg((lg_conv_kind)kind, 0);
        prob pr;
        smooth_prob(&pr, &cfg, 1, 4242);
        lg_idx nin = pr.n * pr.F;
        double *an_in = malloc(sizeof(double) * (size_t)nin), *an_p = malloc(sizeof(double) * (size_t)pr.P);
        double *fd_in = malloc(sizeof(double) * (size_t)nin), *fd_p = malloc(sizeof(double) * (size_t)pr.P);
        assert_true(an_in && an_p && fd_in && fd_p);
        prob_grad(&pr, an_in, NULL, an_p);
        fd_grad(&pr, pr.in, nin, fd_in, 0);
        fd_grad(&pr, pr.params, pr.P, fd_p, 0);
        assert_int_equal(fd_compare("d_in", an_in, fd_in, nin, 1e-6, NULL), 0);
        assert_int_equal(fd_compare("d_params", an_p, fd_p, pr.P, 1e-6, NULL), 0);
        lg_conv_layout lay;
        assert_ok(lg_conv_layout_get(&cfg, &lay));
        group gr[8];
        int ng = groups_of(&lay, &cfg, gr);
        for (int k = 0; k < ng; k++) {
            lg_idx t = gr[k].off + gr[k].len / 2;
            double keep = an_p[t];
            an_p[t] += 1e-3 * fmax(1.0, fabs(keep));
            assert_int_equal(fd_compare("d_params (perturbed)", an_p, fd_p, pr.P, 1e-6, NULL), 1);
            an_p[t] = keep;
        }
        an_in[11] *= 1.001;
        an_in[11] += 1e-3;
        assert_int_equal(fd_compare("d_in (perturbed)", an_in, fd_in, nin, 1e-6, NULL), 1);
        free(an_in), free(an_p), free(fd_in), free(fd_p);
        prob_free(&pr);
    }
}

/* ------------------------------------------------------------------------- */
/* Fused kernels against the oracle, float against double, threads           */
/* ------------------------------------------------------------------------- */

static float *to_f32(const double *v, lg_idx m) {
    float *f = malloc(sizeof(float) * (size_t)(m > 0 ? m : 1));
    assert_non_null(f);
    for (lg_idx t = 0; t < m; t++) f[t] = (float)v[t];
    return f;
}

static void test_fused_matches_naive(void **state) {
    (void)state;
    double w64 = 0, w32 = 0, wg = 0;
    for (int kind = 0; kind < LG_CONV_COUNT; kind++)
        for (int loops = 0; loops <= 1; loops++) {
            lg_conv_config cfg = lg_conv_config_default((lg_conv_kind)kind, 12, kind >= LG_CONV_GGNN ? 12 : 9);
            prob pr;
            prob_init(&pr, &cfg, random_graph(400, 4, 31 + (uint64_t)kind, loops), 5 + (uint64_t)kind);
            lg_idx no = pr.n * pr.D, nin = pr.n * pr.F;
            double *ref = malloc(sizeof(double) * (size_t)no);
            assert_non_null(ref);
            conv_naive_forward(ref, NULL, pr.in, prob_h0(&pr), pr.params, pr.gp.g, &cfg);
            (void)prob_loss(&pr, 0);
            for (lg_idx t = 0; t < no; t++) {
                double err = fabs(pr.out[t] - ref[t]) / (1 + fabs(ref[t]));
                w64 = fmax(w64, err);
                assert_true(err <= 1e-11);
            }
            /* float kernels */
            float *in = to_f32(pr.in, nin), *h0 = to_f32(pr.h0, nin), *par = to_f32(pr.params, pr.P), *R = to_f32(pr.R, no);
            float *out = malloc(sizeof(float) * (size_t)no), *din = calloc((size_t)nin, sizeof(float));
            float *dh0 = calloc((size_t)nin, sizeof(float)), *dp = calloc((size_t)pr.P, sizeof(float));
            double *din64 = malloc(sizeof(double) * (size_t)nin), *dh064 = malloc(sizeof(double) * (size_t)nin);
            double *dp64 = malloc(sizeof(double) * (size_t)pr.P);
            assert_true(out && din && dh0 && dp && din64 && dh064 && dp64);
            lg_conv_cache *c = NULL;
            assert_ok(lg_conv_cache_init_f32(&c, &cfg, pr.n));
            const float *h0f = kind == LG_CONV_GCNII ? h0 : NULL;
            assert_ok(lg_conv_forward_f32(out, c, in, h0f, par, pr.gp.g, &cfg));
            for (lg_idx t = 0; t < no; t++) {
                double err = fabs((double)out[t] - ref[t]) / (1 + fabs(ref[t]));
                w32 = fmax(w32, err);
                assert_true(err <= 1e-4);
            }
            assert_ok(lg_conv_backward_f32(din, dh0, dp, R, c, in, h0f, par, pr.gp.g, pr.gp.gT, &cfg));
            prob_grad(&pr, din64, dh064, dp64);
            double scale = 1;
            for (lg_idx t = 0; t < nin; t++) scale = fmax(scale, fmax(fabs(din64[t]), fabs(dh064[t])));
            for (lg_idx t = 0; t < pr.P; t++) scale = fmax(scale, fabs(dp64[t]));
            for (lg_idx t = 0; t < nin; t++) {
                double err = fmax(fabs(din[t] - din64[t]), fabs(dh0[t] - dh064[t])) / scale;
                wg = fmax(wg, err);
                assert_true(err <= 1e-3);
            }
            for (lg_idx t = 0; t < pr.P; t++) {
                double err = fabs(dp[t] - dp64[t]) / scale;
                wg = fmax(wg, err);
                assert_true(err <= 1e-3);
            }
            lg_conv_cache_free(c);
            free(in), free(h0), free(par), free(R), free(out), free(din), free(dh0), free(dp);
            free(din64), free(dh064), free(dp64), free(ref);
            prob_free(&pr);
        }
    print_message("worst error: double forward %.3g, float forward %.3g, float gradients %.3g\n", w64, w32, wg);
}

/* Forward outputs and every gradient are bitwise equal with 1 and 2 threads. */
static void test_threads_bitwise(void **state) {
    (void)state;
    int maxt = omp_get_max_threads();
    for (int kind = 0; kind < LG_CONV_COUNT; kind++) {
        lg_conv_config cfg = lg_conv_config_default((lg_conv_kind)kind, 16, 16);
        prob pr;
        prob_init(&pr, &cfg, random_graph(3000, 5, 77 + (uint64_t)kind, kind != LG_CONV_GIN), 3);
        lg_idx nin = pr.n * pr.F, no = pr.n * pr.D;
        float *in = to_f32(pr.in, nin), *h0 = to_f32(pr.h0, nin), *par = to_f32(pr.params, pr.P), *R = to_f32(pr.R, no);
        const float *h0f = kind == LG_CONV_GCNII ? h0 : NULL;
        float *out[2], *din[2], *dh0[2], *dp[2];
        lg_conv_cache *c = NULL;
        assert_ok(lg_conv_cache_init_f32(&c, &cfg, pr.n));
        for (int r = 0; r < 2; r++) {
            omp_set_num_threads(r + 1);
            out[r] = malloc(sizeof(float) * (size_t)no);
            din[r] = calloc((size_t)nin, sizeof(float));
            dh0[r] = calloc((size_t)nin, sizeof(float));
            dp[r] = calloc((size_t)pr.P, sizeof(float));
            assert_true(out[r] && din[r] && dh0[r] && dp[r]);
            assert_ok(lg_conv_forward_f32(out[r], c, in, h0f, par, pr.gp.g, &cfg));
            assert_ok(lg_conv_backward_f32(din[r], dh0[r], dp[r], R, c, in, h0f, par, pr.gp.g, pr.gp.gT, &cfg));
        }
        omp_set_num_threads(maxt);
        assert_memory_equal(out[0], out[1], sizeof(float) * (size_t)no);
        assert_memory_equal(din[0], din[1], sizeof(float) * (size_t)nin);
        assert_memory_equal(dh0[0], dh0[1], sizeof(float) * (size_t)nin);
        assert_memory_equal(dp[0], dp[1], sizeof(float) * (size_t)pr.P);
        for (int r = 0; r < 2; r++) free(out[r]), free(din[r]), free(dh0[r]), free(dp[r]);
        lg_conv_cache_free(c);
        free(in), free(h0), free(par), free(R);
        prob_free(&pr);
    }
}

/* ------------------------------------------------------------------------- */
/* Definitions by hand                                                        */
/* ------------------------------------------------------------------------- */

/* GCN on the path 0 - 1 - 2 with self-loops, W = I, b = 0: degrees 2, 3, 2 and
 * out = D^-1/2 (A + I) D^-1/2 H. GCNII with alpha = 0.25, beta = 0 on the same
 * graph: 0.75 P H + 0.25 H0. GIN (eps fixed at 0.5) sums the neighbours. */
static void test_by_hand(void **state) {
    (void)state;
    lg_idx src[] = {0, 1, 1, 2}, dst[] = {1, 0, 2, 1};
    gpair gp = gpair_from_edges(3, 4, src, dst, 1);
    double H[3] = {1, 2, 4}, H0[3] = {8, 0, -4}, out[3];
    double P[3][3] = {{0.5, 1 / sqrt(6.0), 0}, {1 / sqrt(6.0), 1.0 / 3, 1 / sqrt(6.0)}, {0, 1 / sqrt(6.0), 0.5}};
    lg_conv_cache *c = NULL;
    lg_conv_config cfg = lg_conv_config_default(LG_CONV_GCN, 1, 1);
    double par[2] = {1, 0};
    assert_ok(lg_conv_cache_init_f64(&c, &cfg, 3));
    assert_ok(lg_conv_forward_f64(out, c, H, NULL, par, gp.g, &cfg));
    for (int i = 0; i < 3; i++) assert_true(fabs(out[i] - (P[i][0] * H[0] + P[i][1] * H[1] + P[i][2] * H[2])) < 1e-15);
    lg_conv_cache_free(c);
    cfg = lg_conv_config_default(LG_CONV_GCNII, 1, 1);
    cfg.alpha = 0.25;
    cfg.beta = 0;
    assert_ok(lg_conv_cache_init_f64(&c, &cfg, 3));
    assert_ok(lg_conv_forward_f64(out, c, H, H0, par, gp.g, &cfg));
    for (int i = 0; i < 3; i++)
        assert_true(fabs(out[i] - (0.75 * (P[i][0] * H[0] + P[i][1] * H[1] + P[i][2] * H[2]) + 0.25 * H0[i])) < 1e-15);
    lg_conv_cache_free(c);
    gpair_free(&gp);
    /* GIN without self-loops, W1 = W2 = 1, biases 0, eps 0.5: ReLU(1.5 h_i + sum_j h_j) */
    gp = gpair_from_edges(3, 4, src, dst, 0);
    cfg = lg_conv_config_default(LG_CONV_GIN, 1, 1);
    cfg.train_eps = 0;
    cfg.eps = 0.5;
    double gpar[4] = {1, 0, 1, 0}, want[3] = {1.5 + 2, 3 + 1 + 4, 6 + 2};
    assert_ok(lg_conv_cache_init_f64(&c, &cfg, 3));
    assert_ok(lg_conv_forward_f64(out, c, H, NULL, gpar, gp.g, &cfg));
    for (int i = 0; i < 3; i++) assert_true(fabs(out[i] - want[i]) < 1e-15);
    lg_conv_cache_free(c);
    gpair_free(&gp);
}

/* ------------------------------------------------------------------------- */
/* Misuse and out of memory                                                   */
/* ------------------------------------------------------------------------- */

static void test_misuse(void **state) {
    (void)state;
    lg_conv_config cfg = lg_conv_config_default(LG_CONV_GGNN, 4, 3);
    assert_int_equal(lg_conv_config_check(&cfg), LG_EINVAL); /* GGNN needs D = F */
    cfg = lg_conv_config_default(LG_CONV_GCNII, 4, 4);
    cfg.alpha = 1.5;
    assert_int_equal(lg_conv_config_check(&cfg), LG_EINVAL);
    cfg.alpha = 0.1;
    cfg.beta = -0.1;
    assert_int_equal(lg_conv_config_check(&cfg), LG_EINVAL);
    cfg = lg_conv_config_default(LG_CONV_GCN, 0, 3);
    assert_int_equal(lg_conv_config_check(&cfg), LG_EINVAL);
    cfg.kind = LG_CONV_COUNT;
    cfg.in_dim = 2;
    assert_int_equal(lg_conv_config_check(&cfg), LG_EINVAL);
    assert_string_equal(lg_conv_kind_name(LG_CONV_COUNT), "?");
    assert_string_equal(lg_conv_kind_name(LG_CONV_GCNII), "gcnii");

    cfg = lg_conv_config_default(LG_CONV_GCNII, 5, 5);
    prob pr;
    prob_init(&pr, &cfg, small_graph(3, 1), 9);
    double *din = calloc((size_t)(pr.n * pr.F), sizeof(double)), *dp = calloc((size_t)pr.P, sizeof(double));
    assert_true(din && dp);
    /* backward before any forward */
    assert_int_equal(lg_conv_backward_f64(din, NULL, dp, pr.R, pr.cache, pr.in, pr.h0, pr.params, pr.gp.g, pr.gp.gT, &cfg),
                     LG_EINVAL);
    /* GCNII without h0 */
    assert_int_equal(lg_conv_forward_f64(pr.out, pr.cache, pr.in, NULL, pr.params, pr.gp.g, &cfg), LG_EINVAL);
    /* a float call on a double cache */
    float fo[64];
    assert_int_equal(lg_conv_forward_f32(fo, pr.cache, (const float *)pr.in, (const float *)pr.h0, (const float *)pr.params,
                                         pr.gp.g, &cfg),
                     LG_EINVAL);
    /* another config than the cache's */
    lg_conv_config other = lg_conv_config_default(LG_CONV_GCN, 5, 5);
    assert_int_equal(lg_conv_forward_f64(pr.out, pr.cache, pr.in, pr.h0, pr.params, pr.gp.g, &other), LG_EINVAL);
    /* out overlapping in, h0 or params: refused (it ran, writing over what its
     * backward reads); out right after in: run */
    double *both = calloc((size_t)(pr.n * (pr.F + 5) + pr.P), sizeof(double));
    assert_non_null(both);
    memcpy(both, pr.in, sizeof(double) * (size_t)(pr.n * pr.F));
    assert_int_equal(lg_conv_forward_f64(both + 1, pr.cache, both, pr.h0, pr.params, pr.gp.g, &cfg), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "out and in overlap"));
    assert_int_equal(lg_conv_forward_f64(both + 1, pr.cache, pr.in, both, pr.params, pr.gp.g, &cfg), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "out and h0 overlap"));
    assert_int_equal(lg_conv_forward_f64(both + pr.P - 1, pr.cache, pr.in, pr.h0, both, pr.gp.g, &cfg), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "out and params overlap"));
    assert_ok(lg_conv_forward_f64(both + pr.n * pr.F, pr.cache, both, pr.h0, pr.params, pr.gp.g, &cfg));
    free(both);
    /* a graph larger than the cache */
    gpair big = random_graph(50, 2, 1, 1);
    assert_int_equal(lg_conv_forward_f64(pr.out, pr.cache, pr.in, pr.h0, pr.params, big.g, &cfg), LG_EINVAL);
    /* forward, then backward with a mismatched transpose or changed alpha */
    assert_ok(lg_conv_forward_f64(pr.out, pr.cache, pr.in, pr.h0, pr.params, pr.gp.g, &cfg));
    assert_int_equal(lg_conv_backward_f64(din, NULL, dp, pr.R, pr.cache, pr.in, pr.h0, pr.params, pr.gp.g, big.gT, &cfg),
                     LG_EINVAL);
    assert_int_equal(lg_conv_backward_f64(din, NULL, dp, pr.R, pr.cache, pr.in, pr.h0, pr.params, pr.gp.g, NULL, &cfg),
                     LG_EINVAL);
    lg_graph same = *pr.gp.g; /* the forward's graph in another lg_graph: refused (one of its sizes passed) */
    assert_int_equal(lg_conv_backward_f64(din, NULL, dp, pr.R, pr.cache, pr.in, pr.h0, pr.params, &same, pr.gp.gT, &cfg),
                     LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "graph is not the forward's"));
    assert_int_equal(lg_conv_backward_f64(din, NULL, dp, pr.R, pr.cache, pr.in, pr.h0, pr.params, big.g, big.gT, &cfg),
                     LG_EINVAL);
    other = cfg;
    other.alpha = 0.2;
    assert_int_equal(lg_conv_backward_f64(din, NULL, dp, pr.R, pr.cache, pr.in, pr.h0, pr.params, pr.gp.g, pr.gp.gT, &other),
                     LG_EINVAL);
    assert_int_equal(lg_conv_backward_f64(din, NULL, NULL, pr.R, pr.cache, pr.in, pr.h0, pr.params, pr.gp.g, pr.gp.gT, &cfg),
                     LG_EINVAL);
    assert_ok(lg_conv_backward_f64(din, NULL, dp, pr.R, pr.cache, pr.in, pr.h0, pr.params, pr.gp.g, pr.gp.gT, &cfg));
    lg_conv_mem mem;
    assert_ok(lg_conv_memory(&cfg, 100, 4, &mem));
    assert_true(mem.activations == 4 * (100 + 100 * 5) && mem.workspace == 4 * 2 * 100 * 5);
    assert_int_equal(lg_conv_memory(&cfg, 100, 3, &mem), LG_EINVAL);
    /* a negative size is LG_EINVAL in both (lg_conv_memory gave LG_ERANGE), one too large LG_ERANGE */
    assert_int_equal(lg_conv_memory(&cfg, -1, 4, &mem), LG_EINVAL);
    assert_int_equal(lg_conv_memory(&cfg, ((lg_idx)1 << 40) + 1, 4, &mem), LG_ERANGE);
    lg_conv_cache *neg = (lg_conv_cache *)&neg;
    assert_int_equal(lg_conv_cache_init_f32(&neg, &cfg, -1), LG_EINVAL);
    assert_null(neg);
    assert_int_equal(lg_conv_cache_init_f64(&neg, &cfg, ((lg_idx)1 << 40) + 1), LG_ERANGE);
    assert_null(neg);
    gpair_free(&big);
    free(din), free(dp);
    prob_free(&pr);

    /* a transposed graph of the right sizes that is not the transpose (a
     * directed graph given as its own): refused by every kind, GCN with
     * D = 1 included (its cursors fit the work buffer); it was taken on its
     * sizes and the gradient summed over the wrong edges */
    for (int kind = 0; kind < LG_CONV_COUNT; kind++) {
        const lg_idx F = 3, D = kind == LG_CONV_GCN ? 1 : (kind == LG_CONV_GIN ? 2 : F);
        lg_conv_config c = lg_conv_config_default((lg_conv_kind)kind, F, D);
        prob q;
        prob_init(&q, &c, random_graph(20, 3, 5, 1), 13);
        lg_graph_stats gs;
        assert_ok(lg_graph_stats_compute(q.gp.g, &gs));
        assert_false(gs.symmetric);
        double *qi = calloc((size_t)(q.n * F), sizeof(double)), *qp = calloc((size_t)q.P, sizeof(double));
        assert_true(qi && qp);
        assert_ok(lg_conv_forward_f64(q.out, q.cache, q.in, q.h0, q.params, q.gp.g, &c));
        assert_int_equal(lg_conv_backward_f64(qi, NULL, qp, q.R, q.cache, q.in, q.h0, q.params, q.gp.g, q.gp.g, &c),
                         LG_EINVAL);
        assert_non_null(strstr(lg_last_error(), "not the graph's transpose"));
        assert_ok(lg_conv_backward_f64(qi, NULL, qp, q.R, q.cache, q.in, q.h0, q.params, q.gp.g, q.gp.gT, &c));
        free(qi), free(qp);
        prob_free(&q);
    }
}

static void test_cache_out_of_memory(void **state) {
    (void)state;
    for (int kind = 0; kind < LG_CONV_COUNT; kind++) {
        lg_conv_config cfg = lg_conv_config_default((lg_conv_kind)kind, 8, 8);
        for (long k = 1;; k++) {
            lg_conv_cache *c = (lg_conv_cache *)1;
            lg_test_alloc_fail_at(k);
            lg_status st = lg_conv_cache_init_f32(&c, &cfg, 100);
            long live = lg_test_alloc_live();
            lg_test_alloc_reset();
            if (st == LG_OK) {
                lg_conv_cache_free(c);
                assert_true(k > 1);
                break;
            }
            assert_int_equal(st, LG_ENOMEM);
            assert_null(c);
            assert_int_equal(live, 0);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_gradients),
        cmocka_unit_test(test_fd_checker_catches_errors),
        cmocka_unit_test(test_fused_matches_naive),
        cmocka_unit_test(test_threads_bitwise),
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_cache_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
