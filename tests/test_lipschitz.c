/* The Lipschitz estimator (src/train/lipschitz.c, lipgnn/lipschitz.h):
 * its weight-norm bound against exact values, its power iteration against
 * the spectral norm of a Jacobian built column by column, estimates below the
 * theoretical bounds of normalised GAT and GT layers on small random graphs
 * at input scales up to 1e3 (and the unnormalised GAT's growth), a briefly
 * trained model layer by layer, the block backward against finite
 * differences, bad arguments and allocation failures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testgraph.h"
#include "train/lipschitz_internal.h"
#include "train/model.h"

/* ---- a single GAT or GT layer as a map ---------------------------------- */

typedef struct {
    int gt;
    lg_gat_config gc;
    lg_gt_config tc;
    lg_gat_cache *gcache;
    lg_gt_cache *tcache;
    double *params, *dparams;
    lg_idx count;
    const lg_graph *g, *gT;
    const double *last_in;
    lg_idx n, w_in, w_out;
} layer_map;

static lg_status lm_forward(void *ctx, const double *in, double *out) {
    layer_map *m = ctx;
    m->last_in = in; /* the callers keep it unchanged until the backward */
    if (m->gt) return lg_gt_forward_f64(out, m->tcache, in, m->params, m->g, &m->tc, 0, 0, 0);
    return lg_gat_forward_f64(out, m->gcache, in, m->params, m->g, &m->gc, 0, 0, 0);
}

static lg_status lm_backward(void *ctx, const double *d_out, double *d_in) {
    layer_map *m = ctx;
    memset(d_in, 0, sizeof(double) * (size_t)(m->n * m->w_in));
    memset(m->dparams, 0, sizeof(double) * (size_t)m->count);
    if (m->gt) return lg_gt_backward_f64(d_in, m->dparams, d_out, m->tcache, m->last_in, m->params, m->g, m->gT, &m->tc);
    return lg_gat_backward_f64(d_in, m->dparams, d_out, m->gcache, m->last_in, m->params, m->g, m->gT, &m->gc);
}

static void lm_init_gat(layer_map *m, const gpair *p, lg_gat_config gc, uint64_t seed) {
    memset(m, 0, sizeof *m);
    m->gc = gc;
    m->g = p->g;
    m->gT = p->gT;
    m->n = p->g->n;
    m->w_in = gc.in_dim;
    m->w_out = lg_gat_out_dim(&gc);
    lg_gat_layout lay;
    assert_ok(lg_gat_layout_get(&gc, &lay));
    m->count = lay.count;
    m->params = calloc((size_t)lay.count, sizeof(double));
    m->dparams = calloc((size_t)lay.count, sizeof(double));
    lg_rng r;
    lg_rng_seed(&r, seed);
    assert_ok(lg_gat_params_init_f64(m->params, &gc, &r));
    for (lg_idx k = lay.bias; k < lay.count; k++) m->params[k] = urand(&r); /* a bias, to be sure it does not count */
    assert_ok(lg_gat_cache_init_f64(&m->gcache, &gc, m->n, p->g->nnz));
}

static void lm_init_gt(layer_map *m, const gpair *p, lg_gt_config tc, uint64_t seed) {
    memset(m, 0, sizeof *m);
    m->gt = 1;
    m->tc = tc;
    m->g = p->g;
    m->gT = p->gT;
    m->n = p->g->n;
    m->w_in = tc.in_dim;
    m->w_out = lg_gt_out_dim(&tc);
    lg_gt_layout lay;
    assert_ok(lg_gt_layout_get(&tc, &lay));
    m->count = lay.count;
    m->params = calloc((size_t)lay.count, sizeof(double));
    m->dparams = calloc((size_t)lay.count, sizeof(double));
    lg_rng r;
    lg_rng_seed(&r, seed);
    assert_ok(lg_gt_params_init_f64(m->params, &tc, &r));
    for (lg_idx k = lay.bq; k < lay.gate; k++) m->params[k] = urand(&r);
    assert_ok(lg_gt_cache_init_f64(&m->tcache, &tc, m->n, p->g->nnz));
}

static void lm_free(layer_map *m) {
    lg_gat_cache_free(m->gcache);
    lg_gt_cache_free(m->tcache);
    free(m->params);
    free(m->dparams);
}

static double lm_bound(const layer_map *m) {
    double b;
    if (m->gt) assert_ok(lg_lip_bound_gt(&b, &m->tc, m->params, m->g));
    else assert_ok(lg_lip_bound_gat(&b, &m->gc, m->params, m->g));
    return b;
}

static double *rand_input(lg_idx count, double scale, uint64_t seed) {
    lg_rng r;
    lg_rng_seed(&r, seed);
    double *x = malloc(sizeof(double) * (size_t)count);
    for (lg_idx k = 0; k < count; k++) x[k] = scale * urand(&r);
    return x;
}

/* the estimates of map m at x: power iteration and ascent */
static void estimates(layer_map *m, const double *x, int iters, int starts, double *power, double *ascent) {
    lg__lip_map f = {m->n * m->w_in, m->n * m->w_out, m, lm_forward, lm_backward};
    lg_rng r;
    lg_rng_seed(&r, 7);
    assert_ok(lg__lip_power(power, NULL, &f, x, iters, &r));
    *ascent = 0;
    if (starts) assert_ok(lg__lip_ascent(ascent, &f, x, starts, iters, 0.1, &r));
}

/* ---- the weight-norm bound ---------------------------------------------- */

static void test_spectral_norm(void **state) {
    (void)state;
    /* diag(3, 2, 1) in a 3 x 5 matrix with junk columns 3, 4 left out */
    double w[15] = {0, 3, 0, 9, 9, 2, 0, 0, 9, 9, 0, 0, -1, 9, 9};
    lg_idx cols[3] = {1, 0, 2};
    double up;
    assert_ok(lg_lip_spectral_norm(&up, w, 3, 5, cols, 3));
    assert_true(up >= 3 * (1 - 1e-12) && up <= 3 * pow(3.0, 1.0 / 8192) * (1 + 1e-12));
    /* random matrices, both shapes: upper >= sigma_max (power iteration to convergence) and close to it */
    for (int shape = 0; shape < 2; shape++) {
        lg_idx rows = shape ? 7 : 40, nc = shape ? 30 : 6;
        double *a = rand_input(rows * nc, 1, 11 + (uint64_t)shape), v[64], u[64], s = 0;
        lg_idx c[64];
        for (lg_idx k = 0; k < nc; k++) c[k] = k, v[k] = 1;
        for (int it = 0; it < 5000; it++) {
            for (lg_idx i = 0; i < rows; i++) {
                u[i] = 0;
                for (lg_idx k = 0; k < nc; k++) u[i] += a[i * nc + k] * v[k];
            }
            double nv = 0;
            for (lg_idx k = 0; k < nc; k++) {
                v[k] = 0;
                for (lg_idx i = 0; i < rows; i++) v[k] += a[i * nc + k] * u[i];
                nv += v[k] * v[k];
            }
            nv = sqrt(nv);
            s = sqrt(nv);
            for (lg_idx k = 0; k < nc; k++) v[k] /= nv;
        }
        assert_ok(lg_lip_spectral_norm(&up, a, rows, nc, c, nc));
        assert_true(up >= s * (1 - 1e-9));
        assert_true(up <= s * 1.001);
        free(a);
    }
    double z[4] = {0, 0, 0, 0};
    lg_idx c2[2] = {0, 1};
    assert_ok(lg_lip_spectral_norm(&up, z, 2, 2, c2, 2));
    assert_true(up == 0);
    c2[1] = 2;
    assert_int_equal(lg_lip_spectral_norm(&up, z, 2, 2, c2, 2), LG_EINVAL);
    assert_int_equal(lg_lip_spectral_norm(NULL, z, 2, 2, c2, 2), LG_EINVAL);
    /* a row stride whose extent overflows: refused, nothing read (it read out of bounds) */
    c2[1] = 1;
    up = -1;
    assert_int_equal(lg_lip_spectral_norm(&up, z, 2, INT64_MAX / 4, c2, 2), LG_ERANGE);
    assert_int_equal(lg_lip_spectral_norm(&up, z, 3, INT64_MAX / 16, c2, 2), LG_ERANGE);
    assert_ok(lg_lip_spectral_norm(&up, z, 1, INT64_MAX, c2, 2)); /* one row: the stride is never used */
    assert_true(up == 0);
    /* the documented errors; *upper = 0 after each */
    up = -1;
    assert_int_equal(lg_lip_spectral_norm(&up, z, 0, 2, c2, 2), LG_EINVAL);
    assert_true(up == 0);
    assert_non_null(strstr(lg_last_error(), "bad argument"));
    up = -1;
    assert_int_equal(lg_lip_spectral_norm(&up, z, 2, 2, c2, 0), LG_EINVAL);
    assert_true(up == 0);
    /* finite entries whose Gram product overflows: not "not finite" (which it said) */
    double big[4] = {1e300, 1e300, 1e300, 1e300};
    up = -1;
    assert_int_equal(lg_lip_spectral_norm(&up, big, 2, 2, c2, 2), LG_ENUMERIC);
    assert_true(up == 0);
    assert_non_null(strstr(lg_last_error(), "the Gram product of finite weights overflows"));
    assert_null(strstr(lg_last_error(), "not finite"));
    big[3] = NAN;
    up = -1;
    assert_int_equal(lg_lip_spectral_norm(&up, big, 2, 2, c2, 2), LG_ENUMERIC);
    assert_true(up == 0);
    assert_non_null(strstr(lg_last_error(), "weights not finite"));
}

/* ---- power iteration finds the spectral norm of the Jacobian ------------- */

static void test_power_matches_jacobian(void **state) {
    (void)state;
    gpair p = small_graph(3, 1);
    for (int norm = 0; norm < 2; norm++) {
        lg_gat_config gc = lg_gat_config_default(3, 2, 2);
        gc.norm = norm ? LG_ATT_NORM_LIPSCHITZ : LG_ATT_NORM_NONE;
        layer_map m;
        lm_init_gat(&m, &p, gc, 5);
        lg_idx N = m.n * m.w_in, M = m.n * m.w_out;
        double *x = rand_input(N, 2, 9), *xp = malloc(sizeof(double) * (size_t)N);
        double *fp = malloc(sizeof(double) * (size_t)M), *fm = malloc(sizeof(double) * (size_t)M);
        double *J = malloc(sizeof(double) * (size_t)(M * N)); /* M x N, column q = d f / d x_q */
        for (lg_idx q = 0; q < N; q++) {
            memcpy(xp, x, sizeof(double) * (size_t)N);
            xp[q] = x[q] + 1e-6;
            assert_ok(lm_forward(&m, xp, fp));
            xp[q] = x[q] - 1e-6;
            assert_ok(lm_forward(&m, xp, fm));
            for (lg_idx o = 0; o < M; o++) J[o * N + q] = (fp[o] - fm[o]) / 2e-6;
        }
        lg_idx *cols = malloc(sizeof(lg_idx) * (size_t)N);
        for (lg_idx q = 0; q < N; q++) cols[q] = q;
        double sigma, power, ascent;
        assert_ok(lg_lip_spectral_norm(&sigma, J, M, N, cols, N)); /* within 1 + 1e-3 of sigma_max */
        estimates(&m, x, 300, 0, &power, &ascent);
        printf("GAT %s: power iteration %.6f, spectral norm of the Jacobian <= %.6f\n", norm ? "lipschitz" : "none", power,
               sigma);
        assert_true(power <= sigma * (1 + 1e-6));
        assert_true(power >= sigma * (1 - 2e-3));
        free(cols);
        free(J);
        free(fp);
        free(fm);
        free(xp);
        free(x);
        lm_free(&m);
    }
    gpair_free(&p);
}

/* ---- estimates below the bounds ------------------------------------------ */

static void test_gat_bound_holds(void **state) {
    (void)state;
    int checked = 0;
    double rmin = INFINITY, rmax = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gpair p = seed == 1 ? small_graph(seed, 1) : random_graph(30, 3, seed, 1);
        for (int variant = 0; variant < 3; variant++) {
            lg_gat_config gc = lg_gat_config_default(4, variant == 1 ? 1 : 2, 3);
            gc.norm = LG_ATT_NORM_LIPSCHITZ;
            if (variant == 2) {
                gc.concat = 0;
                gc.lip_scale = 2;
            }
            layer_map m;
            lm_init_gat(&m, &p, gc, seed * 10 + (uint64_t)variant);
            /* large attention vectors: the unnormalised scores would saturate */
            for (lg_idx k = 0; k < 2 * gc.heads * gc.head_dim; k++) m.params[gc.in_dim * gc.heads * gc.head_dim + k] *= 20;
            /* large weights in one head: the bound must carry ||W_k|| */
            if (variant == 0)
                for (lg_idx r = 0; r < gc.in_dim; r++)
                    for (lg_idx c = 0; c < gc.head_dim; c++) m.params[r * gc.heads * gc.head_dim + c] *= 8;
            double bound = lm_bound(&m);
            assert_true(isfinite(bound) && bound > 0);
            for (double scale = 1; scale <= 1000; scale *= 10) {
                double *x = rand_input(m.n * m.w_in, scale, seed + 100);
                double power, ascent;
                estimates(&m, x, 40, 2, &power, &ascent);
                if (!(power <= bound && ascent <= bound))
                    fail_msg("GAT seed %d variant %d scale %g: estimates %g, %g above the bound %g", (int)seed, variant,
                             scale, power, ascent, bound);
                assert_true(power > 0 && ascent > 0);
                rmin = fmin(rmin, bound / fmax(power, ascent));
                rmax = fmax(rmax, bound / fmax(power, ascent));
                checked++;
                free(x);
            }
            lm_free(&m);
        }
        gpair_free(&p);
    }
    assert_int_equal(checked, 3 * 3 * 4);
    printf("GAT: bound / largest estimate between %.3g and %.3g over %d cases\n", rmin, rmax, checked);
}

static void test_gt_bound_holds(void **state) {
    (void)state;
    double rmin = INFINITY, rmax = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gpair p = seed == 1 ? small_graph(seed, 0) : random_graph(30, 3, seed, seed == 3);
        for (int concat = 0; concat < 2; concat++) {
            lg_gt_config tc = lg_gt_config_default(4, 2, 3);
            tc.norm = LG_ATT_NORM_LIPSCHITZ;
            tc.concat = concat;
            layer_map m;
            lm_init_gt(&m, &p, tc, seed * 10 + (uint64_t)concat);
            if (concat) { /* a large skip weight: the bound must carry ||Wskip|| */
                lg_gt_layout lay;
                assert_ok(lg_gt_layout_get(&tc, &lay));
                for (lg_idx r = 0; r < tc.in_dim; r++)
                    for (lg_idx c = 3 * tc.heads * tc.head_dim; c < lay.w_cols; c++) m.params[lay.w + r * lay.w_cols + c] *= 40;
            }
            double bound = lm_bound(&m);
            assert_true(isfinite(bound) && bound > 0);
            for (double scale = 1; scale <= 1000; scale *= 10) {
                double *x = rand_input(m.n * m.w_in, scale, seed + 200);
                double power, ascent;
                estimates(&m, x, 40, 2, &power, &ascent);
                if (!(power <= bound && ascent <= bound))
                    fail_msg("GT seed %d concat %d scale %g: estimates %g, %g above the bound %g", (int)seed, concat, scale,
                             power, ascent, bound);
                rmin = fmin(rmin, bound / fmax(power, ascent));
                rmax = fmax(rmax, bound / fmax(power, ascent));
                free(x);
            }
            lm_free(&m);
        }
        gpair_free(&p);
    }
    printf("GT: bound / largest estimate between %.3g and %.3g\n", rmin, rmax);
}

/* Without the norm the constant grows with the scale of the inputs (no bound
 * is claimed); with it, the estimates stay below the same bound. */
static void test_unnormalised_grows(void **state) {
    (void)state;
    gpair p = random_graph(30, 3, 4, 1);
    double first[2] = {0, 0}, last[2] = {0, 0}, lip_bound = 0;
    for (int norm = 0; norm < 2; norm++) {
        lg_gat_config gc = lg_gat_config_default(4, 1, 4);
        gc.norm = norm ? LG_ATT_NORM_LIPSCHITZ : LG_ATT_NORM_NONE;
        layer_map m;
        lm_init_gat(&m, &p, gc, 21);
        double bound = lm_bound(&m);
        assert_true(norm ? isfinite(bound) : bound == INFINITY);
        if (norm) lip_bound = bound;
        for (double scale = 1; scale <= 1000; scale *= 10) {
            double *x = rand_input(m.n * m.w_in, scale, 300);
            double power, ascent;
            estimates(&m, x, 60, 0, &power, &ascent);
            printf("GAT %-9s input scale %6g: power-iteration estimate %10.4g  bound %g\n", norm ? "lipschitz" : "none",
                   scale, power, bound);
            if (scale == 1) first[norm] = power;
            last[norm] = power;
            if (norm) assert_true(power <= bound);
            free(x);
        }
        lm_free(&m);
    }
    /* unnormalised: grows with the scale, past the normalised layer's bound
       (same weights); normalised: does not grow */
    assert_true(last[0] > 10 * first[0]);
    assert_true(last[0] > lip_bound);
    assert_true(last[1] < 1.5 * first[1]);
    gpair_free(&p);
}

static void test_no_bound_cases(void **state) {
    (void)state;
    gpair p = small_graph(2, 1), q = small_graph(2, 0);
    lg_gat_config gc = lg_gat_config_default(3, 1, 2);
    layer_map m;
    lm_init_gat(&m, &p, gc, 1);
    double b;
    assert_ok(lg_lip_bound_gat(&b, &gc, m.params, p.g));
    assert_true(b == INFINITY);
    gc.norm = LG_ATT_NORM_LIPSCHITZ_REF;
    assert_ok(lg_lip_bound_gat(&b, &gc, m.params, p.g));
    assert_true(b == INFINITY);
    gc.norm = LG_ATT_NORM_LIPSCHITZ;
    assert_ok(lg_lip_bound_gat(&b, &gc, m.params, p.g));
    assert_true(isfinite(b));
    assert_ok(lg_lip_bound_gat(&b, &gc, m.params, q.g)); /* no self-loops: Corollary 1 does not apply */
    assert_true(b == INFINITY);
    /* a NaN weight: LG_ENUMERIC from the spectral norm, *bound = INFINITY */
    const double w0 = m.params[0];
    m.params[0] = NAN;
    b = 0;
    assert_int_equal(lg_lip_bound_gat(&b, &gc, m.params, p.g), LG_ENUMERIC);
    assert_true(b == INFINITY);
    assert_non_null(strstr(lg_last_error(), "lg_lip_spectral_norm: weights not finite"));
    m.params[0] = w0;
    assert_int_equal(lg_lip_bound_gat(NULL, &gc, m.params, p.g), LG_EINVAL);
    assert_int_equal(lg_lip_bound_gat(&b, &gc, m.params, NULL), LG_EINVAL);
    gc.heads = 0;
    assert_int_equal(lg_lip_bound_gat(&b, &gc, m.params, p.g), LG_EINVAL);
    lm_free(&m);
    lg_gt_config tc = lg_gt_config_default(3, 1, 2);
    tc.norm = LG_ATT_NORM_LIPSCHITZ;
    tc.gate = 1;
    lm_init_gt(&m, &q, tc, 1);
    assert_ok(lg_lip_bound_gt(&b, &tc, m.params, q.g));
    assert_true(b == INFINITY);
    lm_free(&m);
    gpair_free(&p);
    gpair_free(&q);
}

/* The estimator's defaults with iters power/ascent iterations and starts
 * random starts. */
static void lip_config(lg_lip_config *lc, int iters, int starts) {
    lg_lip_config_default(lc);
    lc->iters = iters;
    lc->starts = starts;
}

/* ---- a model, block by block --------------------------------------------- */

static void model_config(lg_model_config *mc, lg_model_kind kind, lg_att_norm norm) {
    lg_model_config_default(mc, kind);
    mc->layers = 3;
    mc->hidden = 8;
    mc->heads = 2;
    mc->att_norm = norm;
    mc->dropout = 0;
    mc->att_dropout = 0;
}

static lg_trainer *trained(const lg_dataset *ds, const lg_model_config *mc, int epochs) {
    lg_train_config tc;
    lg_train_config_default(&tc);
    tc.seed = 3;
    tc.weight_decay = 0;
    tc.batch_size = 0;
    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, mc, &tc, ds));
    lg_epoch_stats es;
    for (int e = 0; e < epochs; e++) assert_ok(lg_trainer_epoch(t, &es));
    return t;
}

/* The block backward is the transpose of the block's Jacobian: <u, J v> by
 * central differences = <J^T u, v>, for every block kind of the stack; for
 * gat-classic and gcn (variants 4, 5) the first block's input (the features)
 * is wider than any gradient training passes between blocks, so the model's
 * backward buffers are widened for it. */
static void test_block_backward(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_trees(2, 6, 1);
    /* dense random features: no ties among the norms (the normaliser's maximum
       is not differentiable at a tie, where differences would disagree) */
    lg_features feat = {0};
    feat.kind = LG_FEAT_DENSE;
    feat.n = ds->graph->n;
    feat.d = 5;
    feat.nnz = feat.n * feat.d;
    double *fx = rand_input(feat.nnz, 1, 77);
    feat.x = malloc(sizeof(float) * (size_t)feat.nnz);
    for (lg_idx k = 0; k < feat.nnz; k++) feat.x[k] = (float)fx[k];
    free(fx);
    int errors = 0;
    for (int variant = 0; variant < 6; variant++) {
        lg_model_config mc;
        model_config(&mc, variant == 1 ? LG_MODEL_GT : variant == 4 ? LG_MODEL_GAT_CLASSIC
                         : variant == 5 ? LG_MODEL_GCN : LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ);
        if (variant >= 4) { mc.hidden = 2; mc.heads = 1; mc.layers = 2; }
        if (variant == 5) mc.att_norm = LG_ATT_NORM_NONE;
        if (variant == 2) { mc.residual = 1; mc.node_norm = LG_NODE_NORM_PAIRNORM; mc.heads = 1; }
        if (variant == 3) { mc.att_norm = LG_ATT_NORM_NONE; mc.residual = 1; mc.heads = 1; }
        if (variant == 1) mc.node_norm = LG_NODE_NORM_LAYERNORM;
        lg_rng r;
        lg_rng_seed(&r, 5);
        lg__model_f64 *m = NULL;
        assert_ok(lg__model_init_f64(&m, &mc, ds, &feat, &r));
        assert_ok(lg__model_forward_f64(m, 0, 0, 0));
        for (int l = 0; l < mc.layers; l++) {
            lg__block_info b;
            assert_ok(lg__model_block_info_f64(m, l, &b));
            lg_idx N = b.n * b.w_in, M = b.n * b.w_out;
            if (variant >= 4 && l == 0) assert_true(b.w_in > 2 * b.w_out); /* the widening is exercised */
            double *x = malloc(sizeof(double) * (size_t)N), *v = rand_input(N, 1, 40 + (uint64_t)l);
            double *u = rand_input(M, 1, 50 + (uint64_t)l), *xp = malloc(sizeof(double) * (size_t)N);
            double *fp = malloc(sizeof(double) * (size_t)M), *fm = malloc(sizeof(double) * (size_t)M);
            double *ju = malloc(sizeof(double) * (size_t)N);
            memcpy(x, lg__model_block_input_f64(m, l), sizeof(double) * (size_t)N);
            const double h = 1e-6;
            for (lg_idx k = 0; k < N; k++) xp[k] = x[k] + h * v[k];
            assert_ok(lg__model_block_forward_f64(m, l, xp, fp));
            for (lg_idx k = 0; k < N; k++) xp[k] = x[k] - h * v[k];
            assert_ok(lg__model_block_forward_f64(m, l, xp, fm));
            double fd = 0, an = 0;
            for (lg_idx k = 0; k < M; k++) fd += u[k] * (fp[k] - fm[k]) / (2 * h);
            assert_ok(lg__model_block_forward_f64(m, l, x, fp));
            assert_ok(lg__model_block_backward_f64(m, l, u, ju));
            for (lg_idx k = 0; k < N; k++) an += ju[k] * v[k];
            if (fabs(fd - an) > 1e-5 * fmax(1, fabs(fd)) && ++errors)
                print_error("variant %d block %d: <u, J v> = %.10g by differences, %.10g by the backward", variant, l, fd, an);
            free(x);
            free(v);
            free(u);
            free(xp);
            free(fp);
            free(fm);
            free(ju);
        }
        lg__model_free_f64(m);
    }
    free(feat.x);
    lg_dataset_free(ds);
    assert_int_equal(errors, 0);
}

static void check_rows(const lg_lip_layer *rows, int L, int bounded) {
    double pb = 1;
    for (int l = 0; l < L; l++) {
        const lg_lip_layer *w = &rows[l];
        printf("  layer %d %-3s heads %lld  power %.4g  ascent %.4g  bound %.4g (%s)\n", w->layer, w->kind,
               (long long)w->heads, w->power, w->ascent, w->bound, w->basis);
        assert_int_equal(w->layer, l);
        assert_true(isfinite(w->power) && w->power > 0);
        assert_true(isfinite(w->ascent) && w->ascent > 0);
        if (bounded) {
            assert_true(isfinite(w->bound));
            if (!(w->power <= w->bound && w->ascent <= w->bound))
                fail_msg("layer %d: estimates %g, %g above the bound %g", l, w->power, w->ascent, w->bound);
        } else {
            assert_true(w->bound == INFINITY);
        }
        pb *= w->bound;
        assert_true(w->prod_bound == pb);
    }
}

static void test_trained_model(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_trees(2, 40, 2);
    lg_lip_config lc;
    lip_config(&lc, 30, 2);
    lg_lip_layer rows[3];
    static const struct { lg_model_kind kind; lg_att_norm norm; int residual; int bounded; const char *basis; } cases[] = {
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, 0, 1, "corollary 1"},
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, 1, 1, "corollary 1 + residual"},
        {LG_MODEL_GT, LG_ATT_NORM_LIPSCHITZ, 0, 1, "corollary 2"},
        {LG_MODEL_GAT, LG_ATT_NORM_NONE, 0, 0, "no LipschitzNorm"},
        {LG_MODEL_GIN, LG_ATT_NORM_NONE, 0, 0, "no bound known for this kind"},
        {LG_MODEL_L2, LG_ATT_NORM_NONE, 0, 1, "L2 attention: graph bound"},
        {LG_MODEL_L2, LG_ATT_NORM_NONE, 1, 1, "L2 attention: graph bound + residual"},
        {LG_MODEL_COSINE, LG_ATT_NORM_NONE, 1, 1, "cosine block (eps^-1/2: loose)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        lg_model_config mc;
        model_config(&mc, cases[c].kind, cases[c].norm);
        mc.residual = cases[c].residual;
        if (cases[c].residual) mc.heads = 1;
        lg_trainer *t = trained(ds, &mc, 15);
        printf("%s, norm %s%s:\n", lg_model_kind_name(mc.kind), lg_att_norm_name(mc.att_norm),
               mc.residual ? ", residual" : "");
        assert_ok(lg_lipschitz_estimate(rows, 3, t, &lc, NULL, NULL));
        check_rows(rows, 3, cases[c].bounded);
        if (strcmp(rows[0].basis, cases[c].basis)) fail_msg("basis '%s', expected '%s'", rows[0].basis, cases[c].basis);
        /* same seed, same figures */
        lg_lip_layer again[3];
        assert_ok(lg_lipschitz_estimate(again, 3, t, &lc, NULL, NULL));
        for (int l = 0; l < 3; l++) assert_true(again[l].power == rows[l].power && again[l].ascent == rows[l].ascent);
        lg_trainer_free(t);
    }
    lg_dataset_free(ds);
}

static int progress_calls;
static void count_progress(void *ctx, long done, long total) {
    (void)ctx;
    assert_int_equal(total, 3);
    assert_int_equal(done, ++progress_calls);
}

static void test_bad_arguments(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_trees(2, 8, 2);
    lg_model_config mc;
    model_config(&mc, LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ);
    lg_trainer *t = trained(ds, &mc, 1);
    lg_lip_config lc;
    lip_config(&lc, 3, 1);
    lg_lip_layer rows[3];
    assert_int_equal(lg_lipschitz_estimate(NULL, 3, t, &lc, NULL, NULL), LG_EINVAL);
    assert_int_equal(lg_lipschitz_estimate(rows, 3, NULL, &lc, NULL, NULL), LG_EINVAL);
    assert_int_equal(lg_lipschitz_estimate(rows, 3, t, NULL, NULL, NULL), LG_EINVAL);
    assert_int_equal(lg_lipschitz_estimate(rows, 2, t, &lc, NULL, NULL), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "has 3"));
    lc.iters = 0;
    assert_int_equal(lg_lipschitz_estimate(rows, 3, t, &lc, NULL, NULL), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "iters"));
    lc.iters = 3;
    lc.radius = NAN;
    assert_int_equal(lg_lipschitz_estimate(rows, 3, t, &lc, NULL, NULL), LG_EINVAL);
    lc.radius = 0.1;
    lc.starts = -1;
    assert_int_equal(lg_lipschitz_estimate(rows, 3, t, &lc, NULL, NULL), LG_EINVAL);
    lc.starts = 0;
    progress_calls = 0;
    assert_ok(lg_lipschitz_estimate(rows, 3, t, &lc, count_progress, NULL));
    assert_int_equal(progress_calls, 3);
    assert_true(isnan(rows[0].ascent));
    lg_trainer_free(t);
    /* a mini-batch trainer has no whole graph */
    lg_train_config tc;
    lg_train_config_default(&tc);
    tc.batch_size = 4;
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    assert_int_equal(lg_lipschitz_estimate(rows, 3, t, &lc, NULL, NULL), LG_EUNSUPPORTED);
    lg_trainer_free(t);
    lg_dataset_free(ds);
}

typedef struct estimate_sweep {
    lg_lip_layer *rows; /* 3 of them */
    lg_trainer *t;
    const lg_lip_config *lc;
} estimate_sweep;

static lg_status estimate_attempt(void *ctx, long k) {
    (void)k;
    const estimate_sweep *w = ctx;
    return lg_lipschitz_estimate(w->rows, 3, w->t, w->lc, NULL, NULL);
}

/* Every allocation of the estimate may fail (LG_ENOMEM, nothing leaked): for
 * GT, and for gat-classic on features wider than its layers, whose first
 * block widens the model's backward buffers (lg__model_widen). */
static void test_out_of_memory(void **state) {
    (void)state;
    for (int k = 0; k < 2; k++) {
        lg_dataset *ds = k ? lg_test_random_dataset(30, 40, 3, 0, 5) : lg_test_trees(2, 6, 2);
        lg_model_config mc;
        model_config(&mc, k ? LG_MODEL_GAT_CLASSIC : LG_MODEL_GT, LG_ATT_NORM_LIPSCHITZ);
        if (k) { mc.layers = 2; mc.hidden = 2; mc.heads = 1; }
        lg_trainer *t = trained(ds, &mc, 1);
        lg_lip_config lc;
        lip_config(&lc, 2, 1);
        lg_lip_layer rows[3];
        estimate_sweep w = {rows, t, &lc};
        lg_test_alloc_sweep(estimate_attempt, &w, 5000);
        lg_trainer_free(t);
        lg_dataset_free(ds);
    }
}

int main(void) {
    /* one thread: thousands of tiny passes, each an OpenMP region, crawl when
       spinning threads are descheduled on a loaded machine (README); nothing
       here depends on the thread count */
    lg_set_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spectral_norm),      cmocka_unit_test(test_power_matches_jacobian),
        cmocka_unit_test(test_gat_bound_holds),    cmocka_unit_test(test_gt_bound_holds),
        cmocka_unit_test(test_unnormalised_grows), cmocka_unit_test(test_no_bound_cases),
        cmocka_unit_test(test_block_backward),     cmocka_unit_test(test_trained_model),
        cmocka_unit_test(test_bad_arguments),      cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
