/*
 * Tests of the L2-attention layer (src/attention/l2att*): the fused forward
 * against the naive oracle (tests/l2att_naive.c), central finite differences
 * of every gradient in double, bitwise reproducibility across thread counts,
 * the Lipschitz bound against power-iteration estimates of the Jacobian's
 * largest singular value, the Lambert function and the constants of the
 * bound, the contractive form and its inverse, misuse and out-of-memory
 * paths.
 *
 * Tolerances (stated once, not tuned to pass):
 *   finite differences (double, central, h = 1e-6 max(1, |v|)):
 *       |analytic - fd| <= 1e-6 * max(1, |fd|)
 *   fused double forward vs naive:   |a - b| <= 1e-12 (1 + |b|)
 *   fused float forward vs naive:    |a - b| <= 1e-4  (1 + |b|)
 *   thread counts:                   bitwise equal
 *   Jacobian estimate vs bound:      sigma <= bound (no slack: sigma is a
 *                                    power-iteration lower estimate)
 *   inverse (double):                max |x' - x| <= 1e-10
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "core/internal.h"
#include "l2att_naive.h"
#include "testgraph.h"
#include "graph/graph_internal.h"
#include "attention/l2att_internal.h"

/* ------------------------------------------------------------------------- */
/* A problem: config, graph, inputs, parameters, loss weights R               */
/* ------------------------------------------------------------------------- */

typedef struct prob {
    lg_l2att_config cfg;
    gpair gp;
    lg_idx n, F, D, P;
    double *in, *params, *R, *out;
    lg_l2att_cache *cache;
} prob;

static void prob_init(prob *pr, const lg_l2att_config *cfg, gpair gp, uint64_t seed, double in_scale) {
    memset(pr, 0, sizeof *pr);
    pr->cfg = *cfg;
    pr->gp = gp;
    pr->n = gp.g->n;
    pr->F = cfg->in_dim;
    pr->D = cfg->out_dim;
    lg_l2att_layout lay;
    assert_ok(lg_l2att_layout_get(cfg, &lay));
    pr->P = lay.count;
    pr->in = malloc(sizeof(double) * (size_t)(pr->n * pr->F + 1));
    pr->params = malloc(sizeof(double) * (size_t)pr->P);
    pr->R = malloc(sizeof(double) * (size_t)(pr->n * pr->D + 1));
    pr->out = malloc(sizeof(double) * (size_t)(pr->n * pr->D + 1));
    assert_true(pr->in && pr->params && pr->R && pr->out);
    lg_rng r;
    lg_rng_seed(&r, seed);
    for (lg_idx t = 0; t < pr->n * pr->F; t++) pr->in[t] = in_scale * urand(&r);
    assert_ok(lg_l2att_params_init_f64(pr->params, cfg, &r));
    for (lg_idx t = lay.bias; t < lay.count; t++) pr->params[t] = 0.1 * urand(&r);
    for (lg_idx t = 0; t < pr->n * pr->D; t++) pr->R[t] = urand(&r);
    assert_ok(lg_l2att_cache_init_f64(&pr->cache, cfg, pr->n, gp.g->nnz));
}

static void prob_free(prob *pr) {
    free(pr->in), free(pr->params), free(pr->R), free(pr->out);
    lg_l2att_cache_free(pr->cache);
    gpair_free(&pr->gp);
}

static double prob_loss(prob *pr, int naive) {
    if (naive) assert_int_equal(l2_naive_forward(pr->out, NULL, pr->in, pr->params, pr->gp.g, &pr->cfg), 0);
    else assert_ok(lg_l2att_forward_f64(pr->out, pr->cache, pr->in, pr->params, pr->gp.g, &pr->cfg));
    double L = 0;
    for (lg_idx t = 0; t < pr->n * pr->D; t++) L += pr->out[t] * pr->R[t];
    return L;
}

static double prob_loss_cb(void *pr, int naive) { return prob_loss(pr, naive); }

static void prob_grad(prob *pr, double *d_in, double *d_params) {
    memset(d_in, 0, sizeof(double) * (size_t)(pr->n * pr->F));
    memset(d_params, 0, sizeof(double) * (size_t)pr->P);
    (void)prob_loss(pr, 0);
    assert_ok(lg_l2att_backward_f64(d_in, d_params, pr->R, pr->cache, pr->in, pr->params, pr->gp.g, pr->gp.gT, &pr->cfg));
}

static float *to_f32(const double *x, lg_idx m) {
    float *y = malloc(sizeof(float) * (size_t)(m + 1));
    assert_non_null(y);
    for (lg_idx t = 0; t < m; t++) y[t] = (float)x[t];
    return y;
}

/* Complete graph on n nodes (dense attention), self-loops included. */
static gpair complete_graph(lg_idx n) {
    lg_idx *s = malloc(sizeof(lg_idx) * (size_t)(n * n)), *d = malloc(sizeof(lg_idx) * (size_t)(n * n)), m = 0;
    assert_true(s && d);
    for (lg_idx i = 0; i < n; i++)
        for (lg_idx j = 0; j < n; j++)
            if (i != j) s[m] = j, d[m++] = i;
    gpair p = gpair_from_edges(n, m, s, d, 1);
    free(s), free(d);
    return p;
}

/* Star: node 0 is an in-neighbour of each of the leaves 1..m (and of itself);
 * each leaf attends over {0, itself}. Largest neighbourhood 2, largest
 * out-degree m + 1. */
static gpair star_graph(lg_idx m) {
    lg_idx *s = malloc(sizeof(lg_idx) * (size_t)m), *d = malloc(sizeof(lg_idx) * (size_t)m);
    assert_true(s && d);
    for (lg_idx t = 0; t < m; t++) s[t] = 0, d[t] = t + 1;
    gpair p = gpair_from_edges(m + 1, m, s, d, 1);
    free(s), free(d);
    return p;
}

/* ------------------------------------------------------------------------- */
/* Configuration, layout, memory, misuse                                      */
/* ------------------------------------------------------------------------- */

static void test_config(void **state) {
    (void)state;
    lg_l2att_config c = lg_l2att_config_default(6, 3, 4);
    assert_int_equal(c.out_dim, 6);
    assert_true(c.contractive == 0.0);
    assert_ok(lg_l2att_config_check(&c));
    lg_l2att_layout lay;
    assert_ok(lg_l2att_layout_get(&c, &lay));
    assert_int_equal(lay.wq, 0);
    assert_int_equal(lay.v, 6 * 12);
    assert_int_equal(lay.wo, 6 * 12 + 3 * 16);
    assert_int_equal(lay.bias, lay.wo + 12 * 6);
    assert_int_equal(lay.count, lay.bias + 6);
    assert_int_equal(lg_l2att_config_check(NULL), LG_EINVAL);
    assert_int_equal(lg_l2att_layout_get(&c, NULL), LG_EINVAL);
    lg_l2att_config bad;
    bad = c, bad.in_dim = 0;
    assert_int_equal(lg_l2att_config_check(&bad), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "in_dim"));
    bad = c, bad.heads = -1;
    assert_int_equal(lg_l2att_config_check(&bad), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "heads"));
    bad = c, bad.head_dim = 0;
    assert_int_equal(lg_l2att_config_check(&bad), LG_EINVAL);
    bad = c, bad.out_dim = 0;
    assert_int_equal(lg_l2att_config_check(&bad), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "out_dim"));
    bad = c, bad.head_dim = (lg_idx)1 << 16, bad.heads = 1 << 4;
    assert_int_equal(lg_l2att_config_check(&bad), LG_EINVAL);
    double badc[] = {1.0, -0.1, 1.5, NAN};
    for (int t = 0; t < 4; t++) {
        bad = c, bad.contractive = badc[t];
        assert_int_equal(lg_l2att_config_check(&bad), LG_EINVAL);
        assert_non_null(strstr(lg_last_error(), "contractive"));
    }
    bad = c, bad.contractive = 0.5;
    assert_ok(lg_l2att_config_check(&bad));
    /* Glorot ranges */
    lg_rng r;
    lg_rng_seed(&r, 1);
    double *p = malloc(sizeof(double) * (size_t)lay.count);
    assert_non_null(p);
    assert_ok(lg_l2att_params_init_f64(p, &c, &r));
    double bq = sqrt(6.0 / 18), bv = sqrt(6.0 / 8), bo = sqrt(6.0 / 18), mq = 0, mv = 0, mo = 0;
    for (lg_idx t = lay.wq; t < lay.v; t++) mq = fmax(mq, fabs(p[t]));
    for (lg_idx t = lay.v; t < lay.wo; t++) mv = fmax(mv, fabs(p[t]));
    for (lg_idx t = lay.wo; t < lay.bias; t++) mo = fmax(mo, fabs(p[t]));
    assert_true(mq <= bq && mq > 0.5 * bq && mv <= bv && mv > 0.5 * bv && mo <= bo && mo > 0.5 * bo);
    for (lg_idx t = lay.bias; t < lay.count; t++) assert_true(p[t] == 0.0);
    assert_int_equal(lg_l2att_params_init_f64(NULL, &c, &r), LG_EINVAL);
    assert_int_equal(lg_l2att_params_init_f64(p, &c, NULL), LG_EINVAL);
    free(p);
}

static void test_memory(void **state) {
    (void)state;
    lg_l2att_config c = lg_l2att_config_default(6, 3, 4);
    lg_l2att_mem m4, m8;
    assert_ok(lg_l2att_memory(&c, 100, 700, 4, &m4));
    assert_ok(lg_l2att_memory(&c, 100, 700, 8, &m8));
    /* activations: Q, M, O (3 n KC) + P (nnz K) + qn (n K) */
    assert_int_equal(m8.activations, (size_t)8 * (3 * 100 * 12 + 700 * 3 + 100 * 3));
    assert_int_equal(m4.activations * 2, m8.activations);
    assert_true(m8.workspace > (size_t)8 * 3 * 100 * 12);
    assert_int_equal(lg_l2att_memory(&c, 100, 700, 3, &m4), LG_EINVAL);
    assert_int_equal(lg_l2att_memory(&c, -1, 700, 4, &m4), LG_EINVAL);
    assert_int_equal(lg_l2att_memory(&c, 100, 700, 4, NULL), LG_EINVAL);
    assert_int_equal(lg_l2att_memory(&c, (lg_idx)1 << 30, (lg_idx)1 << 60, 4, &m4), LG_ERANGE);
    assert_ok(lg_l2att_memory(&c, 100, LG__EPOS_MAX, 4, &m4)); /* 32-bit edge positions */
    assert_int_equal(lg_l2att_memory(&c, 100, LG__EPOS_MAX + 1, 4, &m4), LG_ERANGE);
}

static void test_misuse(void **state) {
    (void)state;
    lg_l2att_config c = lg_l2att_config_default(5, 2, 3);
    prob pr;
    prob_init(&pr, &c, small_graph(3, 1), 5, 1.0);
    double *d_in = calloc((size_t)(pr.n * 5), sizeof(double)), *dp = calloc((size_t)pr.P, sizeof(double));
    assert_true(d_in && dp);
    lg_l2att_cache *cache = pr.cache;
    const lg_graph *g = pr.gp.g, *gT = pr.gp.gT;
    /* backward before any forward */
    assert_int_equal(lg_l2att_backward_f64(d_in, dp, pr.R, cache, pr.in, pr.params, g, gT, &c), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "no forward"));
    double dummy;
    assert_int_equal(lg_l2att_last_scale(&dummy, NULL, cache), LG_EINVAL);
    /* NULLs */
    assert_int_equal(lg_l2att_forward_f64(NULL, cache, pr.in, pr.params, g, &c), LG_EINVAL);
    assert_int_equal(lg_l2att_forward_f64(pr.out, NULL, pr.in, pr.params, g, &c), LG_EINVAL);
    assert_int_equal(lg_l2att_forward_f64(pr.out, cache, NULL, pr.params, g, &c), LG_EINVAL);
    assert_int_equal(lg_l2att_forward_f64(pr.out, cache, pr.in, NULL, g, &c), LG_EINVAL);
    assert_int_equal(lg_l2att_forward_f64(pr.out, cache, pr.in, pr.params, NULL, &c), LG_EINVAL);
    assert_int_equal(lg_l2att_forward_f64(pr.out, cache, pr.in, pr.params, g, NULL), LG_EINVAL);
    /* out overlapping in: refused (it ran, writing over the in its backward
     * reads); out right after in: run */
    double *both = calloc((size_t)(pr.n * (5 + c.out_dim)), sizeof(double));
    assert_non_null(both);
    memcpy(both, pr.in, sizeof(double) * (size_t)(pr.n * 5));
    assert_int_equal(lg_l2att_forward_f64(both + 1, cache, both, pr.params, g, &c), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "out and in overlap"));
    assert_int_equal(lg_l2att_forward_f64(both, cache, both + pr.n * 5 - 1, pr.params, g, &c), LG_EINVAL);
    assert_ok(lg_l2att_forward_f64(both + pr.n * 5, cache, both, pr.params, g, &c));
    free(both);
    /* a graph without self-loops: the first node without one is named */
    gpair nl = small_graph(3, 0);
    assert_int_equal(lg_l2att_forward_f64(pr.out, cache, pr.in, pr.params, nl.g, &c), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "node 0 has no self-loop"));
    gpair_free(&nl);
    {   /* self-loops on 0, 1, 2 but not on 3 */
        lg_idx s[] = {0, 1, 2, 1}, d[] = {0, 1, 2, 3};
        lg_graph *g4 = NULL;
        assert_ok(lg_graph_from_edges(&g4, 4, 4, s, d, 0));
        lg_l2att_cache *c4;
        assert_ok(lg_l2att_cache_init_f64(&c4, &c, 4, 4));
        assert_int_equal(lg_l2att_forward_f64(pr.out, c4, pr.in, pr.params, g4, &c), LG_EINVAL);
        assert_non_null(strstr(lg_last_error(), "node 3 has no self-loop"));
        lg_l2att_cache_free(c4);
        lg_graph_free(g4);
    }
    /* a graph too big for the cache */
    gpair big = random_graph(50, 3, 9, 1);
    assert_int_equal(lg_l2att_forward_f64(pr.out, cache, pr.in, pr.params, big.g, &c), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "the cache was made for at most"));
    gpair_free(&big);
    /* config differing from the cache's; scalar type */
    lg_l2att_config c2 = c;
    c2.out_dim = 4;
    assert_int_equal(lg_l2att_forward_f64(pr.out, cache, pr.in, pr.params, g, &c2), LG_EINVAL);
    c2 = c, c2.heads = 0;
    assert_int_equal(lg_l2att_forward_f64(pr.out, cache, pr.in, pr.params, g, &c2), LG_EINVAL);
    float fo[200];
    assert_int_equal(lg_l2att_forward_f32(fo, (lg_l2att_cache *)cache, (const float *)pr.in, (const float *)pr.params, g, &c),
                     LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "double"));
    /* backward: wrong transpose, NULLs, a different graph */
    assert_ok(lg_l2att_forward_f64(pr.out, cache, pr.in, pr.params, g, &c));
    assert_int_equal(lg_l2att_backward_f64(d_in, dp, pr.R, cache, pr.in, pr.params, g, g, &c), LG_EINVAL);
    assert_int_equal(lg_l2att_backward_f64(d_in, dp, pr.R, cache, pr.in, pr.params, g, NULL, &c), LG_EINVAL);
    assert_int_equal(lg_l2att_backward_f64(d_in, NULL, pr.R, cache, pr.in, pr.params, g, gT, &c), LG_EINVAL);
    assert_int_equal(lg_l2att_backward_f64(d_in, dp, NULL, cache, pr.in, pr.params, g, gT, &c), LG_EINVAL);
    lg_graph same = *g; /* the forward's graph in another lg_graph */
    assert_int_equal(lg_l2att_backward_f64(d_in, dp, pr.R, cache, pr.in, pr.params, &same, gT, &c), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "graph is not the forward's"));
    gpair other = random_graph(6, 2, 4, 1);
    assert_int_equal(lg_l2att_backward_f64(d_in, dp, pr.R, cache, pr.in, pr.params, other.g, other.gT, &c), LG_EINVAL);
    gpair_free(&other);
    assert_ok(lg_l2att_backward_f64(NULL, dp, pr.R, cache, pr.in, pr.params, g, gT, &c)); /* d_in optional */
    /* bound and degrees */
    double B;
    assert_int_equal(lg_l2att_lipschitz_bound_f64(NULL, pr.params, &c, 2, 2), LG_EINVAL);
    assert_int_equal(lg_l2att_lipschitz_bound_f64(&B, NULL, &c, 2, 2), LG_EINVAL);
    assert_int_equal(lg_l2att_lipschitz_bound_f64(&B, pr.params, &c, 0, 2), LG_EINVAL);
    assert_int_equal(lg_l2att_lipschitz_bound_f64(&B, pr.params, &c, 2, 0), LG_EINVAL);
    lg_idx a, b;
    assert_int_equal(lg_l2att_graph_degrees(NULL, &a, &b), LG_EINVAL);
    assert_int_equal(lg_l2att_graph_degrees(g, NULL, &b), LG_EINVAL);
    assert_ok(lg_l2att_graph_degrees(g, &a, &b));
    assert_int_equal(a, 8); /* the hub: 1..7 and itself */
    assert_true(isnan(lg_l2att_attention_lip(0, 3)));
    assert_int_equal(lg_l2att_attention_f64(NULL, cache), LG_EINVAL);
    free(d_in), free(dp);
    prob_free(&pr);
}

/* One attempt of the sweep: an f32 cache of the config for 50 nodes, 300 edges. */
LG_TEST_CACHE_ATTEMPT(cache_attempt, l2att, lg_l2att_config, (lg_l2att_cache *)w,
                      lg_l2att_cache_init_f32(&c, w, 50, 300))

static void test_cache_out_of_memory(void **state) {
    (void)state;
    for (int contr = 0; contr <= 1; contr++) {
        lg_l2att_config cfg = lg_l2att_config_default(5, 2, 4);
        cfg.contractive = contr ? 0.5 : 0.0;
        lg_test_alloc_sweep(cache_attempt, &cfg, 100);
    }
}

/* ------------------------------------------------------------------------- */
/* Forward against the naive oracle                                           */
/* ------------------------------------------------------------------------- */

static const struct {
    lg_idx F, K, C, D;
} shapes[] = {{5, 1, 4, 5}, {5, 3, 2, 5}, {6, 2, 3, 4}, {4, 1, 1, 4}, {7, 4, 5, 3}};

static void test_forward_matches_naive(void **state) {
    (void)state;
    int cases = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
        for (int contr = 0; contr <= 1; contr++)
            for (int gi = 0; gi < 3; gi++) {
                lg_l2att_config cfg = lg_l2att_config_default(shapes[si].F, shapes[si].K, shapes[si].C);
                cfg.out_dim = shapes[si].D;
                cfg.contractive = contr ? 0.7 : 0.0;
                gpair gp = gi == 0 ? small_graph(11 + si, 1) : gi == 1 ? random_graph(300, 4, 5 + si, 1) : complete_graph(7);
                prob pr;
                prob_init(&pr, &cfg, gp, 40 + si, gi == 2 ? 3.0 : 1.0);
                lg_idx no = pr.n * pr.D, nnz = pr.gp.g->nnz, K = cfg.heads;
                double *ref = malloc(sizeof(double) * (size_t)no), *aref = malloc(sizeof(double) * (size_t)(nnz * K));
                double *att = malloc(sizeof(double) * (size_t)(nnz * K));
                assert_true(ref && aref && att);
                assert_int_equal(l2_naive_forward(ref, aref, pr.in, pr.params, pr.gp.g, &cfg), 0);
                assert_ok(lg_l2att_forward_f64(pr.out, pr.cache, pr.in, pr.params, pr.gp.g, &cfg));
                assert_ok(lg_l2att_attention_f64(att, pr.cache));
                for (lg_idx t = 0; t < no; t++)
                    if (!(fabs(pr.out[t] - ref[t]) <= 1e-12 * (1 + fabs(ref[t]))))
                        fail_msg("case %d: out[%lld] = %.17g, naive %.17g", cases, (long long)t, pr.out[t], ref[t]);
                for (lg_idx t = 0; t < nnz * K; t++) assert_true(fabs(att[t] - aref[t]) <= 1e-12);
                double s, B;
                assert_ok(lg_l2att_last_scale(&s, &B, pr.cache));
                if (contr) assert_true(B > 0 && fabs(s - 0.7 / B) <= 1e-12 * s);
                else assert_true(s == 1.0 && B == 0.0);
                /* float */
                float *in32 = to_f32(pr.in, pr.n * pr.F), *p32 = to_f32(pr.params, pr.P);
                float *o32 = malloc(sizeof(float) * (size_t)no);
                assert_non_null(o32);
                lg_l2att_cache *c32;
                assert_ok(lg_l2att_cache_init_f32(&c32, &cfg, pr.n, nnz));
                assert_ok(lg_l2att_forward_f32(o32, c32, in32, p32, pr.gp.g, &cfg));
                for (lg_idx t = 0; t < no; t++)
                    if (!(fabs(o32[t] - ref[t]) <= 1e-4 * (1 + fabs(ref[t]))))
                        fail_msg("case %d float: out[%lld] = %.9g, naive %.17g", cases, (long long)t, o32[t], ref[t]);
                lg_l2att_cache_free(c32);
                free(in32), free(p32), free(o32), free(ref), free(aref), free(att);
                prob_free(&pr);
                cases++;
            }
    print_message("%d forward cases match the oracle\n", cases);
}

/* ------------------------------------------------------------------------- */
/* Finite differences                                                         */
/* ------------------------------------------------------------------------- */

static void fd_case(const lg_l2att_config *cfg, gpair gp, uint64_t seed, double in_scale, double *worst) {
    prob pr;
    prob_init(&pr, cfg, gp, seed, in_scale);
    lg_idx nin = pr.n * pr.F;
    double *an_in = malloc(sizeof(double) * (size_t)nin), *an_p = malloc(sizeof(double) * (size_t)pr.P);
    double *fd_in = malloc(sizeof(double) * (size_t)nin), *fd_p = malloc(sizeof(double) * (size_t)pr.P);
    assert_true(an_in && an_p && fd_in && fd_p);
    prob_grad(&pr, an_in, an_p);
    fd_grad_of(prob_loss_cb, &pr, pr.in, nin, fd_in, 0);
    fd_grad_of(prob_loss_cb, &pr, pr.params, pr.P, fd_p, 0);
    lg_l2att_layout lay;
    assert_ok(lg_l2att_layout_get(cfg, &lay));
    const char *names[4] = {"W_Q", "V", "W_O", "b"};
    lg_idx offs[5] = {lay.wq, lay.v, lay.wo, lay.bias, lay.count};
    int fails = fd_compare("d_in", an_in, fd_in, nin, 1e-6, worst);
    for (int t = 0; t < 4; t++)
        fails += fd_compare(names[t], an_p + offs[t], fd_p + offs[t], offs[t + 1] - offs[t], 1e-6, worst);
    /* the naive oracle's loss agrees with the fused one's FD */
    fd_grad_of(prob_loss_cb, &pr, pr.params, pr.P, fd_p, 1);
    fails += fd_compare("params (naive FD)", an_p, fd_p, pr.P, 1e-6, NULL);
    if (fails)
        fail_msg("F=%lld K=%lld C=%lld D=%lld contractive=%g: %d gradient entries off", (long long)cfg->in_dim,
                 (long long)cfg->heads, (long long)cfg->head_dim, (long long)cfg->out_dim, cfg->contractive, fails);
    free(an_in), free(an_p), free(fd_in), free(fd_p);
    prob_free(&pr);
}

static void test_fd_gradients(void **state) {
    (void)state;
    double worst = 0;
    int cases = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
        for (int gi = 0; gi < 2; gi++) {
            lg_l2att_config cfg = lg_l2att_config_default(shapes[si].F, shapes[si].K, shapes[si].C);
            cfg.out_dim = shapes[si].D;
            fd_case(&cfg, gi ? complete_graph(6) : small_graph(21 + si, 1), 7 + si, gi ? 2.0 : 1.0, &worst);
            cases++;
        }
    print_message("%d FD cases, worst error / allowed = %.3g\n", cases, worst);
}

/* The checker rejects a perturbed gradient (the test can fail). */
static void test_fd_checker_catches_errors(void **state) {
    (void)state;
    lg_l2att_config cfg = lg_l2att_config_default(4, 2, 3);
    prob pr;
    prob_init(&pr, &cfg, small_graph(2, 1), 3, 1.0);
    double *an_in = malloc(sizeof(double) * (size_t)(pr.n * 4)), *an_p = malloc(sizeof(double) * (size_t)pr.P);
    double *fd_p = malloc(sizeof(double) * (size_t)pr.P);
    assert_true(an_in && an_p && fd_p);
    prob_grad(&pr, an_in, an_p);
    fd_grad_of(prob_loss_cb, &pr, pr.params, pr.P, fd_p, 0);
    assert_int_equal(fd_compare("params", an_p, fd_p, pr.P, 1e-6, NULL), 0);
    an_p[1] *= 1.0001; /* a relative error of 1e-4 */
    an_p[1] += 1e-5;
    assert_true(fd_compare("params (perturbed on purpose)", an_p, fd_p, pr.P, 1e-6, NULL) >= 1);
    free(an_in), free(an_p), free(fd_p);
    prob_free(&pr);
}

/* ------------------------------------------------------------------------- */
/* Threads                                                                    */
/* ------------------------------------------------------------------------- */

static void test_threads_bitwise(void **state) {
    (void)state;
    int maxt = omp_get_max_threads();
    for (int contr = 0; contr <= 1; contr++) {
        lg_l2att_config cfg = lg_l2att_config_default(16, 4, 8);
        cfg.contractive = contr ? 0.9 : 0.0;
        prob pr;
        prob_init(&pr, &cfg, random_graph(1500, 5, 77 + (uint64_t)contr, 1), 3, 1.0);
        lg_idx nin = pr.n * 16, no = pr.n * pr.D;
        float *in = to_f32(pr.in, nin), *par = to_f32(pr.params, pr.P), *R = to_f32(pr.R, no);
        float *out[2], *din[2], *dp[2];
        double *out64[2], *din64[2], *dp64[2];
        lg_l2att_cache *c = NULL;
        assert_ok(lg_l2att_cache_init_f32(&c, &cfg, pr.n, pr.gp.g->nnz));
        for (int r = 0; r < 2; r++) {
            omp_set_num_threads(r + 1);
            out[r] = malloc(sizeof(float) * (size_t)no);
            din[r] = calloc((size_t)nin, sizeof(float));
            dp[r] = calloc((size_t)pr.P, sizeof(float));
            out64[r] = malloc(sizeof(double) * (size_t)no);
            din64[r] = calloc((size_t)nin, sizeof(double));
            dp64[r] = calloc((size_t)pr.P, sizeof(double));
            assert_true(out[r] && din[r] && dp[r] && out64[r] && din64[r] && dp64[r]);
            assert_ok(lg_l2att_forward_f32(out[r], c, in, par, pr.gp.g, &cfg));
            assert_ok(lg_l2att_backward_f32(din[r], dp[r], R, c, in, par, pr.gp.g, pr.gp.gT, &cfg));
            assert_ok(lg_l2att_forward_f64(out64[r], pr.cache, pr.in, pr.params, pr.gp.g, &cfg));
            assert_ok(lg_l2att_backward_f64(din64[r], dp64[r], pr.R, pr.cache, pr.in, pr.params, pr.gp.g, pr.gp.gT, &cfg));
        }
        omp_set_num_threads(maxt);
        assert_memory_equal(out[0], out[1], sizeof(float) * (size_t)no);
        assert_memory_equal(din[0], din[1], sizeof(float) * (size_t)nin);
        assert_memory_equal(dp[0], dp[1], sizeof(float) * (size_t)pr.P);
        assert_memory_equal(out64[0], out64[1], sizeof(double) * (size_t)no);
        assert_memory_equal(din64[0], din64[1], sizeof(double) * (size_t)nin);
        assert_memory_equal(dp64[0], dp64[1], sizeof(double) * (size_t)pr.P);
        /* float gradients follow the double ones */
        double mx = 0;
        for (lg_idx t = 0; t < pr.P; t++) mx = fmax(mx, fabs(dp64[0][t]));
        for (lg_idx t = 0; t < pr.P; t++) assert_true(fabs(dp[0][t] - dp64[0][t]) <= 1e-3 * fmax(1, mx));
        for (int r = 0; r < 2; r++) free(out[r]), free(din[r]), free(dp[r]), free(out64[r]), free(din64[r]), free(dp64[r]);
        lg_l2att_cache_free(c);
        free(in), free(par), free(R);
        prob_free(&pr);
    }
}

/* ------------------------------------------------------------------------- */
/* The Lambert function and the constants of the bound                        */
/* ------------------------------------------------------------------------- */

static void test_lambert_and_constants(void **state) {
    (void)state;
    assert_true(lg_lambert_w0(0) == 0);
    assert_true(isnan(lg_lambert_w0(-1)));
    for (double x = 1e-8; x < 1e12; x *= 1.7) {
        double w = lg_lambert_w0(x);
        assert_true(fabs(w * exp(w) - x) <= 1e-13 * x);
        assert_true(fabs(w - l2_naive_w0(x)) <= 1e-12 * (1 + w));
    }
    /* beta >= max sqrt(u)/(1+e^u), W0(1/e) = max u/(1+e^u) (grid, fine) */
    double mb = 0, mc = 0;
    for (double u = 0; u < 20; u += 1e-5) {
        mb = fmax(mb, sqrt(u) / (1 + exp(u)));
        mc = fmax(mc, u / (1 + exp(u)));
    }
    assert_true(mb <= 0.27786 && mb > 0.27785);
    assert_true(mc <= lg_lambert_w0(exp(-1.0)) && mc > lg_lambert_w0(exp(-1.0)) - 1e-9);
    /* the lemma: sum_k P_k u_k <= W0((N-1)/e) for P ~ e^{-u}, u_0 = 0, u >= 0;
     * equality at u_k = 1 + W0((N-1)/e) for all k >= 1 */
    lg_rng r;
    lg_rng_seed(&r, 5);
    for (lg_idx N = 2; N <= 200; N = N * 3 / 2 + 1) {
        double W = lg_lambert_w0((double)(N - 1) / exp(1.0)), best = 0;
        double u = 1 + W, z = 1 + (double)(N - 1) * exp(-u);
        double eq = (double)(N - 1) * u * exp(-u) / z;
        assert_true(fabs(eq - W) <= 1e-12 * (1 + W));
        for (int trial = 0; trial < 2000; trial++) {
            double num = 0, den = 1, sc = 4 * lg_rng_double(&r) * (1 + W);
            for (lg_idx k = 1; k < N; k++) {
                double uk = sc * lg_rng_double(&r);
                num += uk * exp(-uk);
                den += exp(-uk);
            }
            best = fmax(best, num / den);
        }
        assert_true(best <= W * (1 + 1e-12));
    }
    /* L_att: 1 on a graph of self-loops; the naive formula; monotone */
    assert_true(fabs(lg_l2att_attention_lip(1, 1) - 1) < 1e-15);
    for (lg_idx a = 1; a < 300; a = a * 2 + 1)
        for (lg_idx b = 1; b < 300; b = b * 2 + 1) {
            assert_true(fabs(lg_l2att_attention_lip(a, b) - l2_naive_lip(a, b)) <= 1e-12 * l2_naive_lip(a, b));
            assert_true(lg_l2att_attention_lip(a + 1, b) > lg_l2att_attention_lip(a, b));
            assert_true(lg_l2att_attention_lip(a, b + 1) > lg_l2att_attention_lip(a, b));
        }
}

/* ------------------------------------------------------------------------- */
/* Jacobian norm vs the bound                                                 */
/* ------------------------------------------------------------------------- */

/* sigma_max of the Jacobian of the layer (double) at pr->in, by power
 * iteration on J^T J: J v by central differences of the forward, J^T u by the
 * backward (d_in). A lower estimate of sigma_max. */
static double jac_sigma(prob *pr, int iters, uint64_t seed) {
    lg_idx nin = pr->n * pr->F, no = pr->n * pr->D;
    double *v = malloc(sizeof(double) * (size_t)nin), *x0 = malloc(sizeof(double) * (size_t)nin);
    double *op = malloc(sizeof(double) * (size_t)no), *om = malloc(sizeof(double) * (size_t)no);
    double *ju = malloc(sizeof(double) * (size_t)no), *u = malloc(sizeof(double) * (size_t)nin);
    double *dp = malloc(sizeof(double) * (size_t)pr->P);
    assert_true(v && x0 && op && om && ju && u && dp);
    memcpy(x0, pr->in, sizeof(double) * (size_t)nin);
    lg_rng r;
    lg_rng_seed(&r, seed);
    double nv = 0, xs = 0;
    for (lg_idx t = 0; t < nin; t++) v[t] = urand(&r), nv += v[t] * v[t], xs = fmax(xs, fabs(x0[t]));
    for (lg_idx t = 0; t < nin; t++) v[t] /= sqrt(nv);
    const double h = 1e-5 * fmax(1, xs);
    double sigma = 0;
    for (int it = 0; it < iters; it++) {
        for (lg_idx t = 0; t < nin; t++) pr->in[t] = x0[t] + h * v[t];
        assert_ok(lg_l2att_forward_f64(op, pr->cache, pr->in, pr->params, pr->gp.g, &pr->cfg));
        for (lg_idx t = 0; t < nin; t++) pr->in[t] = x0[t] - h * v[t];
        assert_ok(lg_l2att_forward_f64(om, pr->cache, pr->in, pr->params, pr->gp.g, &pr->cfg));
        double nj = 0;
        for (lg_idx t = 0; t < no; t++) ju[t] = (op[t] - om[t]) / (2 * h), nj += ju[t] * ju[t];
        sigma = sqrt(nj);
        memcpy(pr->in, x0, sizeof(double) * (size_t)nin);
        assert_ok(lg_l2att_forward_f64(op, pr->cache, pr->in, pr->params, pr->gp.g, &pr->cfg));
        memset(u, 0, sizeof(double) * (size_t)nin);
        assert_ok(lg_l2att_backward_f64(u, dp, ju, pr->cache, pr->in, pr->params, pr->gp.g, pr->gp.gT, &pr->cfg));
        double nu = 0;
        for (lg_idx t = 0; t < nin; t++) nu += u[t] * u[t];
        if (!(nu > 0)) break;
        for (lg_idx t = 0; t < nin; t++) v[t] = u[t] / sqrt(nu);
    }
    memcpy(pr->in, x0, sizeof(double) * (size_t)nin);
    free(v), free(x0), free(op), free(om), free(ju), free(u), free(dp);
    return sigma;
}

/* Spectral norm of the rows x cols block A (leading dimension ld) by power
 * iteration (an estimate from below, converged to ~1e-10 here). */
static double spec_norm(const double *A, lg_idx rows, lg_idx cols, lg_idx ld) {
    double *x = malloc(sizeof(double) * (size_t)cols), *y = malloc(sizeof(double) * (size_t)rows), s = 0;
    assert_true(x && y);
    for (lg_idx c = 0; c < cols; c++) x[c] = 1.0 + 0.1 * (double)c;
    for (int it = 0; it < 500; it++) {
        double ny = 0, nx = 0;
        for (lg_idx rr = 0; rr < rows; rr++) {
            y[rr] = 0;
            for (lg_idx c = 0; c < cols; c++) y[rr] += A[rr * ld + c] * x[c];
        }
        for (lg_idx c = 0; c < cols; c++) {
            x[c] = 0;
            for (lg_idx rr = 0; rr < rows; rr++) x[c] += A[rr * ld + c] * y[rr];
            nx += x[c] * x[c];
        }
        for (lg_idx rr = 0; rr < rows; rr++) ny += y[rr] * y[rr];
        (void)ny;
        s = sqrt(sqrt(nx)); /* ||A^T A x|| for unit x -> sigma^2 */
        for (lg_idx c = 0; c < cols; c++) x[c] /= sqrt(nx);
    }
    free(x), free(y);
    return s;
}

/* The bound with spectral norms (tighter than the Frobenius one of the
 * library), for the same graph constant. */
static double spec_bound(const prob *pr, lg_idx nin, lg_idx nout) {
    const lg_l2att_config *c = &pr->cfg;
    lg_idx F = c->in_dim, K = c->heads, C = c->head_dim, KC = K * C, D = c->out_dim;
    const double *Wq = pr->params, *V = Wq + F * KC, *Wo = V + KC * C;
    double S = 0;
    for (lg_idx h = 0; h < K; h++) {
        double a = spec_norm(Wq + h * C, F, C, KC), b = spec_norm(V + h * C * C, C, C, C);
        S += a * a * b * b;
    }
    return l2_naive_lip(nin, nout) * sqrt(S) * spec_norm(Wo, KC, D, D);
}

static void test_jacobian_vs_bound(void **state) {
    (void)state;
    omp_set_num_threads(1);
    double worst_frob = 0, worst_spec = 0, worst_core = 0;
    for (int gi = 0; gi < 4; gi++)
        for (size_t si = 0; si < 3; si++)
            for (int sc = 0; sc < 4; sc++) {
                static const double scales[4] = {0.1, 1.0, 3.0, 10.0};
                lg_l2att_config cfg = lg_l2att_config_default(shapes[si].F, shapes[si].K, shapes[si].C);
                cfg.out_dim = shapes[si].D;
                gpair gp = gi == 0 ? small_graph(31 + si, 1)
                         : gi == 1 ? random_graph(40, 3, 8 + si, 1)
                         : gi == 2 ? complete_graph(8)
                                   : star_graph(12);
                prob pr;
                prob_init(&pr, &cfg, gp, 100 + si * 7 + (uint64_t)sc, scales[sc]);
                lg_idx nin, nout;
                assert_ok(lg_l2att_graph_degrees(pr.gp.g, &nin, &nout));
                double B;
                assert_ok(lg_l2att_lipschitz_bound_f64(&B, pr.params, &cfg, nin, nout));
                double Bs = spec_bound(&pr, nin, nout), sig = jac_sigma(&pr, 40, 3 + (uint64_t)sc);
                if (!(sig <= Bs && Bs <= B * (1 + 1e-12)))
                    fail_msg("graph %d shape %zu scale %g: sigma %.6g, spectral bound %.6g, bound %.6g", gi, si,
                             scales[sc], sig, Bs, B);
                worst_frob = fmax(worst_frob, sig / B);
                worst_spec = fmax(worst_spec, sig / Bs);
                prob_free(&pr);
            }
    /* the parameter-free core: F = C = D, K = 1, W_Q = V = W_O = I: sigma <= L_att */
    for (int gi = 0; gi < 4; gi++)
        for (int sc = 0; sc < 6; sc++) {
            static const double scales[6] = {0.05, 0.5, 1.0, 1.5, 2.5, 5.0};
            lg_l2att_config cfg = lg_l2att_config_default(3, 1, 3);
            gpair gp = gi == 0 ? small_graph(5, 1) : gi == 1 ? random_graph(40, 3, 2, 1) : gi == 2 ? complete_graph(8) : star_graph(12);
            prob pr;
            prob_init(&pr, &cfg, gp, 200 + (uint64_t)sc, scales[sc]);
            lg_l2att_layout lay;
            assert_ok(lg_l2att_layout_get(&cfg, &lay));
            memset(pr.params, 0, sizeof(double) * (size_t)pr.P);
            for (lg_idx c = 0; c < 3; c++)
                pr.params[lay.wq + c * 3 + c] = pr.params[lay.v + c * 3 + c] = pr.params[lay.wo + c * 3 + c] = 1;
            lg_idx nin, nout;
            assert_ok(lg_l2att_graph_degrees(pr.gp.g, &nin, &nout));
            double L = lg_l2att_attention_lip(nin, nout), sig = jac_sigma(&pr, 60, 11 + (uint64_t)sc);
            if (!(sig <= L)) fail_msg("core, graph %d scale %g: sigma %.6g > L_att %.6g", gi, scales[sc], sig, L);
            worst_core = fmax(worst_core, sig / L);
            prob_free(&pr);
        }
    omp_set_num_threads(omp_get_num_procs());
    print_message("largest sigma / bound: Frobenius %.4f, spectral %.4f, core (W = I) %.4f\n", worst_frob, worst_spec,
                  worst_core);
}

/* The parameter-free core (W_Q = V = W_O = I, C = 2) against L_att under a
 * search for bad inputs: from random starts at several scales, random
 * perturbations of X kept when they raise the estimated sigma_max (hill
 * climbing, 60 steps). The bound must hold at every point visited. */
static void test_core_bound_search(void **state) {
    (void)state;
    omp_set_num_threads(1);
    double worst = 0;
    for (int gi = 0; gi < 5; gi++) {
        static const lg_idx sizes[4] = {2, 3, 5, 8};
        lg_l2att_config cfg = lg_l2att_config_default(2, 1, 2);
        gpair gp = gi < 4 ? complete_graph(sizes[gi]) : star_graph(6);
        prob pr;
        prob_init(&pr, &cfg, gp, 500 + (uint64_t)gi, 1.0);
        lg_l2att_layout lay;
        assert_ok(lg_l2att_layout_get(&cfg, &lay));
        memset(pr.params, 0, sizeof(double) * (size_t)pr.P);
        for (lg_idx c = 0; c < 2; c++) pr.params[lay.wq + c * 2 + c] = pr.params[lay.v + c * 2 + c] = pr.params[lay.wo + c * 2 + c] = 1;
        lg_idx nin, nout;
        assert_ok(lg_l2att_graph_degrees(pr.gp.g, &nin, &nout));
        const double L = lg_l2att_attention_lip(nin, nout);
        lg_idx nv = pr.n * 2;
        double *best = malloc(sizeof(double) * (size_t)nv);
        assert_non_null(best);
        lg_rng r;
        lg_rng_seed(&r, 77 + (uint64_t)gi);
        double gbest = 0;
        for (int start = 0; start < 4; start++) {
            double sc = 0.5 * (double)(start + 1);
            for (lg_idx t = 0; t < nv; t++) pr.in[t] = sc * urand(&r);
            double cur = jac_sigma(&pr, 30, 1);
            memcpy(best, pr.in, sizeof(double) * (size_t)nv);
            for (int step = 0; step < 60; step++) {
                double amp = 0.3 * sc * (1 - step / 80.0);
                for (lg_idx t = 0; t < nv; t++) pr.in[t] = best[t] + amp * urand(&r);
                double s = jac_sigma(&pr, 30, 1);
                if (!(s <= L)) fail_msg("core, graph %d: sigma %.6g > L_att %.6g", gi, s, L);
                if (s > cur) cur = s, memcpy(best, pr.in, sizeof(double) * (size_t)nv);
            }
            gbest = fmax(gbest, cur);
        }
        print_message("core search, %s (n_in %lld, n_out %lld): best sigma %.4f, L_att %.4f, ratio %.3f\n",
                      gi < 4 ? "complete graph" : "star of 6", (long long)nin, (long long)nout, gbest, L, gbest / L);
        worst = fmax(worst, gbest / L);
        free(best);
        prob_free(&pr);
    }
    omp_set_num_threads(omp_get_num_procs());
    print_message("core search: largest sigma / L_att = %.3f\n", worst);
}

/* With N = the largest neighbourhood alone, the dense bound of Kim et al.
 * would not hold on a graph: on a star whose centre feeds m leaves (every
 * neighbourhood has 2 members), at equal inputs J = P (x) I and
 * ||P||_2 >= sqrt(1 + m/4). The out-degree term of L_att covers it. */
static void test_star_needs_out_degree(void **state) {
    (void)state;
    omp_set_num_threads(1);
    lg_l2att_config cfg = lg_l2att_config_default(2, 1, 2);
    prob pr;
    prob_init(&pr, &cfg, star_graph(64), 1, 1.0);
    lg_l2att_layout lay;
    assert_ok(lg_l2att_layout_get(&cfg, &lay));
    memset(pr.params, 0, sizeof(double) * (size_t)pr.P);
    for (lg_idx c = 0; c < 2; c++) pr.params[lay.wq + c * 2 + c] = pr.params[lay.v + c * 2 + c] = pr.params[lay.wo + c * 2 + c] = 1;
    for (lg_idx t = 0; t < pr.n * 2; t++) pr.in[t] = 0.3; /* equal inputs */
    double sig = jac_sigma(&pr, 100, 4);
    double dense_in = sqrt(2.0) * (4 * lg_lambert_w0(1 / exp(1.0)) + 1); /* sqrt(N)(4 W0((N-1)/e) + 1), N = 2 */
    double L = lg_l2att_attention_lip(2, 65);
    print_message("star, 64 leaves: sigma %.4f, sqrt(1 + m/4) = %.4f, dense bound with N = 2: %.4f, L_att(2, 65) = %.4f\n",
                  sig, sqrt(17.0), dense_in, L);
    assert_true(sig >= sqrt(17.0) * (1 - 1e-6));
    assert_true(sig > dense_in);
    assert_true(sig <= L);
    prob_free(&pr);
    omp_set_num_threads(omp_get_num_procs());
}

/* ------------------------------------------------------------------------- */
/* Contractive form and inverse                                               */
/* ------------------------------------------------------------------------- */

/* Every gradient of out = c F / (B + eps), the path through the bound B
 * (Frobenius norms of W_Q^h, V_h, W_O) included. */
static void test_fd_contractive(void **state) {
    (void)state;
    double worst = 0;
    int cases = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
        for (int gi = 0; gi < 2; gi++) {
            lg_l2att_config cfg = lg_l2att_config_default(shapes[si].F, shapes[si].K, shapes[si].C);
            cfg.out_dim = shapes[si].D;
            cfg.contractive = gi ? 0.5 : 0.9;
            fd_case(&cfg, gi ? complete_graph(6) : small_graph(51 + si, 1), 17 + si, gi ? 2.0 : 1.0, &worst);
            cases++;
        }
    print_message("%d contractive FD cases, worst error / allowed = %.3g\n", cases, worst);
}

/* The contractive layer's Jacobian norm stays below c. */
static void test_contractive_jacobian(void **state) {
    (void)state;
    omp_set_num_threads(1);
    double worst = 0;
    for (int gi = 0; gi < 3; gi++)
        for (int sc = 0; sc < 3; sc++) {
            static const double scales[3] = {0.3, 1.0, 4.0};
            lg_l2att_config cfg = lg_l2att_config_default(5, 2, 3);
            cfg.contractive = 0.9;
            gpair gp = gi == 0 ? small_graph(61, 1) : gi == 1 ? complete_graph(8) : star_graph(10);
            prob pr;
            prob_init(&pr, &cfg, gp, 300 + (uint64_t)sc, scales[sc]);
            double sig = jac_sigma(&pr, 40, 5);
            assert_true(sig <= 0.9);
            worst = fmax(worst, sig / 0.9);
            prob_free(&pr);
        }
    omp_set_num_threads(omp_get_num_procs());
    print_message("contractive, c = 0.9: largest sigma / c = %.4f\n", worst);
}

static void test_invert(void **state) {
    (void)state;
    for (int gi = 0; gi < 3; gi++)
        for (int sc = 0; sc < 2; sc++) {
            lg_l2att_config cfg = lg_l2att_config_default(6, 2, 3);
            cfg.contractive = sc ? 0.9 : 0.5;
            gpair gp = gi == 0 ? small_graph(71, 1) : gi == 1 ? random_graph(300, 4, 9, 1) : complete_graph(10);
            prob pr;
            prob_init(&pr, &cfg, gp, 400 + (uint64_t)gi, sc ? 3.0 : 1.0);
            lg_idx nv = pr.n * 6;
            double *y = malloc(sizeof(double) * (size_t)nv), *x = malloc(sizeof(double) * (size_t)nv);
            assert_true(y && x);
            assert_ok(lg_l2att_forward_f64(pr.out, pr.cache, pr.in, pr.params, pr.gp.g, &cfg));
            for (lg_idx t = 0; t < nv; t++) y[t] = pr.in[t] + pr.out[t];
            int it = -1;
            assert_ok(lg_l2att_invert_f64(x, &it, pr.cache, y, pr.params, pr.gp.g, &cfg, 1e-13, 1000));
            double err = 0;
            for (lg_idx t = 0; t < nv; t++) err = fmax(err, fabs(x[t] - pr.in[t]));
            print_message("invert: graph %d, c = %g: %d iterations, max |x' - x| = %.3g\n", gi, cfg.contractive, it, err);
            assert_true(it >= 1 && it < 1000);
            assert_true(err <= 1e-10);
            /* float: to its precision */
            float *y32 = to_f32(y, nv), *x32 = to_f32(y, nv), *p32 = to_f32(pr.params, pr.P);
            lg_l2att_cache *c32;
            assert_ok(lg_l2att_cache_init_f32(&c32, &cfg, pr.n, pr.gp.g->nnz));
            assert_ok(lg_l2att_invert_f32(x32, &it, c32, y32, p32, pr.gp.g, &cfg, 1e-5, 1000));
            double e32 = 0;
            for (lg_idx t = 0; t < nv; t++) e32 = fmax(e32, fabs(x32[t] - pr.in[t]));
            assert_true(e32 <= 1e-4 * (sc ? 10 : 1));
            /* errors */
            if (gi == 0 && sc == 0) {
                assert_int_equal(lg_l2att_invert_f64(x, &it, pr.cache, y, pr.params, pr.gp.g, &cfg, 1e-300, 2), LG_ERANGE);
                assert_int_equal(it, 2);
                assert_int_equal(lg_l2att_invert_f64(x, &it, pr.cache, y, pr.params, pr.gp.g, &cfg, 0, 10), LG_EINVAL);
                assert_int_equal(lg_l2att_invert_f64(x, &it, pr.cache, y, pr.params, pr.gp.g, &cfg, 1e-9, 0), LG_EINVAL);
                assert_int_equal(lg_l2att_invert_f64(y, &it, pr.cache, y, pr.params, pr.gp.g, &cfg, 1e-9, 10), LG_EINVAL);
                assert_int_equal(lg_l2att_invert_f64(NULL, &it, pr.cache, y, pr.params, pr.gp.g, &cfg, 1e-9, 10), LG_EINVAL);
                lg_l2att_config off = cfg;
                off.contractive = 0;
                lg_l2att_cache *c0;
                assert_ok(lg_l2att_cache_init_f64(&c0, &off, pr.n, pr.gp.g->nnz));
                assert_int_equal(lg_l2att_invert_f64(x, &it, c0, y, pr.params, pr.gp.g, &off, 1e-9, 10), LG_EINVAL);
                assert_non_null(strstr(lg_last_error(), "contractive"));
                lg_l2att_cache_free(c0);
                lg_l2att_config nd = cfg;
                nd.out_dim = 5;
                assert_ok(lg_l2att_cache_init_f64(&c0, &nd, pr.n, pr.gp.g->nnz));
                assert_int_equal(lg_l2att_invert_f64(x, &it, c0, y, pr.params, pr.gp.g, &nd, 1e-9, 10), LG_EINVAL);
                lg_l2att_cache_free(c0);
                /* a forward with contractive differing from the backward's */
                lg_l2att_config c2 = cfg;
                c2.contractive = 0.3;
                double *dp = calloc((size_t)pr.P, sizeof(double));
                assert_non_null(dp);
                assert_ok(lg_l2att_forward_f64(pr.out, pr.cache, pr.in, pr.params, pr.gp.g, &cfg));
                assert_int_equal(lg_l2att_backward_f64(NULL, dp, pr.R, pr.cache, pr.in, pr.params, pr.gp.g, pr.gp.gT, &c2),
                                 LG_EINVAL);
                free(dp);
            }
            lg_l2att_cache_free(c32);
            free(y32), free(x32), free(p32), free(y), free(x);
            prob_free(&pr);
        }
}

/* A cache made for a lent edge map has none of its own, refuses a backward
 * without one or with one made for other graphs, and with the right one gives
 * the bits of a cache with its own map (which ignores a lent one). */
static void test_lent_edge_map(void **state) {
    (void)state;
    lg_l2att_config cfg = lg_l2att_config_default(5, 2, 3);
    prob pr;
    prob_init(&pr, &cfg, random_graph(200, 5, 17, 1), 19, 1.0);
    const lg_idx n = pr.n, nnz = pr.gp.g->nnz;
    double *din[2], *dp[2];
    for (int v = 0; v < 2; v++) din[v] = calloc((size_t)(n * pr.F), sizeof(double)), dp[v] = calloc((size_t)pr.P, sizeof(double));
    lg_l2att_mem own, lent;
    assert_ok(lg_l2att_memory(&cfg, n, nnz, sizeof(double), &own));
    assert_ok(lg__l2att_memory_ext(&cfg, n, nnz, sizeof(double), 1, &lent));
    assert_int_equal(own.workspace - lent.workspace, 2 * sizeof(lg__epos) * (size_t)nnz);
    assert_int_equal(own.activations, lent.activations);
    lg__epos *tpos = malloc(sizeof(lg__epos) * (size_t)nnz), *tedge = malloc(sizeof(lg__epos) * (size_t)nnz);
    lg_idx *tnext = malloc(sizeof(lg_idx) * (size_t)n);
    assert_true(tpos && tedge && tnext && lg__graph_transpose_map(tpos, tedge, tnext, pr.gp.g, pr.gp.gT));
    lg_graph *gT2 = NULL; /* an equal transpose, but another graph */
    assert_ok(lg_graph_transpose(pr.gp.g, &gT2));
    const lg__att_tmap map = {pr.gp.g, pr.gp.gT, tpos, tedge, 0}, other = {pr.gp.g, gT2, tpos, tedge, 0};
    lg__l2att_cache_lend_tmap(pr.cache, &other); /* ignored: the cache has its own map */
    prob_grad(&pr, din[0], dp[0]);
    lg_l2att_cache *c = NULL;
    assert_ok(lg__l2att_cache_alloc(&c, &cfg, n, nnz, sizeof(double), NULL, 0, 1));
    assert_null(c->tpos);
    assert_ok(lg_l2att_forward_f64(pr.out, c, pr.in, pr.params, pr.gp.g, &cfg));
    assert_int_equal(lg_l2att_backward_f64(din[1], dp[1], pr.R, c, pr.in, pr.params, pr.gp.g, pr.gp.gT, &cfg), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "lent edge map"));
    lg__l2att_cache_lend_tmap(c, &other);
    assert_int_equal(lg_l2att_backward_f64(din[1], dp[1], pr.R, c, pr.in, pr.params, pr.gp.g, pr.gp.gT, &cfg), LG_EINVAL);
    lg__l2att_cache_lend_tmap(c, &map);
    assert_ok(lg_l2att_backward_f64(din[1], dp[1], pr.R, c, pr.in, pr.params, pr.gp.g, pr.gp.gT, &cfg));
    assert_memory_equal(din[0], din[1], sizeof(double) * (size_t)(n * pr.F));
    assert_memory_equal(dp[0], dp[1], sizeof(double) * (size_t)pr.P);
    lg_l2att_cache_free(c);
    lg_graph_free(gT2);
    free(tpos), free(tedge), free(tnext);
    for (int v = 0; v < 2; v++) free(din[v]), free(dp[v]);
    prob_free(&pr);
}

static void l2_fwd_bwd(void *ctx, double *d_in, double *d_params, const double *d_out) {
    prob *pr = ctx;
    (void)prob_loss(pr, 0);
    assert_ok(lg_l2att_backward_f64(d_in, d_params, d_out, pr->cache, pr->in, pr->params, pr->gp.g, pr->gp.gT, &pr->cfg));
}

/* d_in may be d_out (lg_l2att_backward's contract): the input gradient is
 * then written over the output's, bit for bit the separate buffers' result,
 * with outputs narrower and wider than the inputs and the contractive form;
 * whatever lies beyond dL/d out in the buffer does not matter. */
static void test_d_in_over_d_out(void **state) {
    (void)state;
    const struct { lg_idx F, K, C, D; double contractive; } cases[] = {{5, 2, 3, 5, 0}, {6, 1, 4, 3, 0}, {3, 2, 2, 7, 0.5}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        lg_l2att_config cfg = lg_l2att_config_default(cases[c].F, cases[c].K, cases[c].C);
        cfg.out_dim = cases[c].D;
        cfg.contractive = cases[c].contractive;
        prob pr;
        prob_init(&pr, &cfg, random_graph(80, 5, 23 + (uint64_t)c, 1), 29 + (uint64_t)c, 1.0);
        double *ref_in = lg_test_dvec(pr.n * pr.F), *ref_p = lg_test_dvec(pr.P);
        prob_grad(&pr, ref_in, ref_p);
        lg_test_in_place_backward(l2_fwd_bwd, &pr, pr.n, pr.F, pr.D, pr.P, pr.R, ref_in, ref_p);
        free(ref_in), free(ref_p);
        prob_free(&pr);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_cache_out_of_memory),
        cmocka_unit_test(test_forward_matches_naive),
        cmocka_unit_test(test_fd_gradients),
        cmocka_unit_test(test_fd_checker_catches_errors),
        cmocka_unit_test(test_threads_bitwise),
        cmocka_unit_test(test_lambert_and_constants),
        cmocka_unit_test(test_jacobian_vs_bound),
        cmocka_unit_test(test_core_bound_search),
        cmocka_unit_test(test_star_needs_out_degree),
        cmocka_unit_test(test_fd_contractive),
        cmocka_unit_test(test_contractive_jacobian),
        cmocka_unit_test(test_invert),
        cmocka_unit_test(test_lent_edge_map),
        cmocka_unit_test(test_d_in_over_d_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
