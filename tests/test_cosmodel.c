/*
 * Tests of the deep cosine model (--model cosine, LG_MODEL_COSINE; blocks
 * out = h + alpha (*) SCSA(CenterNorm(dropout(h))), src/train/model_impl.h):
 * central finite differences of the whole f64 model's loss against its
 * backward for every parameter (dense and sparse features, 1 and 2 heads,
 * 1 and 3 layers, dropout on; and the mini-batch model on TREES), the
 * checker catching a wrong gradient, the
 * initial values (alpha = 1/L, CenterNorm (1, 0), spectral norm 1 of W and
 * W_O), configuration checks and names, and a short training run.
 *
 * Tolerance: |fd - analytic| / max(1e-4, |fd|, |analytic|) <= 1e-5, the one
 * of tests/test_train.c's whole-model check (h = 1e-6, double).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "train/batch.h"
#include "train/model.h"

/* n nodes, d features (dense or sparse), c classes; node n-1 receives no
 * edge, node 0 is a hub; a third of the nodes each in train, val, test. */
static lg_dataset *random_dataset(lg_idx n, lg_idx d, int c, int sparse, uint64_t seed) {
    lg_rng r;
    lg_rng_seed(&r, seed);
    lg_dataset *ds = calloc(1, sizeof *ds);
    assert_non_null(ds);
    ds->name = strdup("random");
    lg_idx m = 3 * n, k = 0;
    lg_idx *src = malloc(sizeof(lg_idx) * (size_t)(m + n)), *dst = malloc(sizeof(lg_idx) * (size_t)(m + n));
    assert_true(src && dst);
    for (lg_idx e = 0; e < m; e++) {
        src[k] = (lg_idx)lg_rng_below(&r, (uint64_t)n);
        dst[k] = (lg_idx)lg_rng_below(&r, (uint64_t)n);
        if (dst[k] != n - 1) k++;
    }
    for (lg_idx i = 1; i < n - 1; i++) src[k] = i, dst[k++] = 0;
    assert_ok(lg_graph_from_edges(&ds->graph, n, k, src, dst, 0));
    free(src), free(dst);
    lg_features *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->n = n;
    f->d = d;
    if (sparse) {
        f->kind = LG_FEAT_SPARSE;
        f->p = calloc((size_t)n + 1, sizeof(lg_idx));
        f->j = malloc(sizeof(lg_idx) * (size_t)(n * d));
        f->x = malloc(sizeof(float) * (size_t)(n * d));
        for (lg_idx i = 0; i < n; i++) {
            for (lg_idx q = 0; q < d; q++)
                if (lg_rng_below(&r, 2)) f->j[f->nnz] = q, f->x[f->nnz++] = (float)(lg_rng_double(&r) * 2);
            f->p[i + 1] = f->nnz;
        }
    } else {
        f->kind = LG_FEAT_DENSE;
        f->nnz = n * d;
        f->x = malloc(sizeof(float) * (size_t)(n * d));
        for (lg_idx q = 0; q < n * d; q++) f->x[q] = (float)(lg_rng_double(&r) * 2 - 1);
    }
    ds->features = f;
    ds->n_classes = c;
    ds->labels = malloc(sizeof(int32_t) * (size_t)n);
    for (lg_idx i = 0; i < n; i++) ds->labels[i] = (int32_t)lg_rng_below(&r, (uint64_t)c);
    ds->train = malloc(sizeof(lg_idx) * (size_t)n);
    ds->val = malloc(sizeof(lg_idx) * (size_t)n);
    ds->test = malloc(sizeof(lg_idx) * (size_t)n);
    for (lg_idx i = 0; i < n; i++) {
        if (i % 3 == 0) ds->train[ds->n_train++] = i;
        else if (i % 3 == 1) ds->val[ds->n_val++] = i;
        else ds->test[ds->n_test++] = i;
    }
    ds->n_graphs = 1;
    ds->graph_ptr = malloc(sizeof(lg_idx) * 2);
    ds->graph_ptr[0] = 0;
    ds->graph_ptr[1] = n;
    return ds;
}

static double loss64(lg__model_f64 *m, const lg_idx *nodes, lg_idx count) {
    double loss;
    assert_ok(lg__model_forward_f64(m, 1, 11, 3));
    assert_ok(lg__model_eval_f64(m, nodes, count, &loss, NULL));
    return loss;
}

/* Every parameter of the built model m (moved off its initial values by r):
 * central differences of the loss over nodes vs the backward; corrupt: one
 * analytic entry made wrong. Returns the mismatches, *worst the largest
 * relative error. */
static int fd_model(lg__model_f64 *m, lg_rng *r, const lg_idx *nodes, lg_idx count, double tol, double *worst,
                    int corrupt) {
    double *p = lg__model_params_f64(m);
    const lg_idx np = lg__model_nparams_f64(m);
    for (lg_idx k = 0; k < np; k++) p[k] += 0.1 * (lg_rng_double(r) - 0.5); /* every path carries signal */
    loss64(m, nodes, count);
    assert_ok(lg__model_backward_f64(m, nodes, count, 1, 11, 3));
    double *g = malloc(sizeof(double) * (size_t)np);
    assert_non_null(g);
    memcpy(g, lg__model_grads_f64(m), sizeof(double) * (size_t)np);
    if (corrupt) g[np / 2] += 1e-3 + 0.01 * fabs(g[np / 2]);
    double gmax = 0;
    for (lg_idx k = 0; k < np; k++) gmax = fmax(gmax, fabs(g[k]));
    assert_true(gmax > 1e-3);
    int bad = 0;
    *worst = 0;
    const double h = 1e-6;
    for (lg_idx k = 0; k < np; k++) {
        double keep = p[k];
        p[k] = keep + h;
        double lp = loss64(m, nodes, count);
        p[k] = keep - h;
        double lm = loss64(m, nodes, count);
        p[k] = keep;
        double num = (lp - lm) / (2 * h), err = fabs(num - g[k]) / fmax(1e-4, fmax(fabs(num), fabs(g[k])));
        if (fabs(num - g[k]) < 1e-11) err = 0; /* below the rounding floor of the differences */
        if (err > *worst) *worst = err;
        if (err > tol) {
            if (!bad && !corrupt) print_message("  parameter %lld: analytic %.10g fd %.10g\n", (long long)k, g[k], num);
            bad++;
        }
    }
    free(g);
    return bad;
}

/* fd_model on a full-batch model of ds, loss over its training nodes. */
static int fd_check(const lg_model_config *mc, const lg_dataset *ds, double tol, double *worst, int corrupt) {
    lg__model_f64 *m = NULL;
    lg_rng r;
    lg_rng_seed(&r, 5);
    assert_ok(lg__model_init_f64(&m, mc, ds, ds->features, &r));
    int bad = fd_model(m, &r, ds->train, ds->n_train, tol, worst, corrupt);
    lg__model_free_f64(m);
    return bad;
}

static void test_model_gradients(void **state) {
    (void)state;
    lg_dataset *dense = random_dataset(14, 5, 3, 0, 1), *sparse = random_dataset(14, 6, 3, 1, 2);
    struct { int heads, layers, sp, loops; } cases[] = {{1, 1, 0, 1}, {2, 3, 0, 1}, {1, 3, 1, 0}, {2, 2, 1, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        lg_model_config mc;
        lg_model_config_default(&mc, LG_MODEL_COSINE);
        mc.heads = cases[c].heads;
        mc.layers = cases[c].layers;
        mc.self_loops = cases[c].loops;
        mc.hidden = 3;
        mc.dropout = 0.3;
        double worst;
        int bad = fd_check(&mc, cases[c].sp ? sparse : dense, 1e-5, &worst, 0);
        if (bad) fail_msg("case %zu: %d gradients differ from central differences (worst %.3g)", c, bad, worst);
        print_message("  case %zu: worst relative error %.2e\n", c, worst);
    }
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_COSINE);
    mc.layers = 2;
    mc.hidden = 3;
    double worst;
    assert_true(fd_check(&mc, dense, 1e-5, &worst, 1) >= 1);
    lg_dataset_free(dense);
    lg_dataset_free(sparse);
}

/* The batch model (TREES mini-batches: caches sized for the largest batch,
 * the graph of each batch bound): central differences over a batch of 3
 * trees of depth 2, loss at the roots. */
static void test_batch_model_gradients(void **state) {
    (void)state;
    lg_trees_opts o;
    lg_trees_opts_default(&o);
    o.depth = 2;
    o.count = 6;
    o.seed = 12;
    lg_dataset *ds = NULL;
    assert_ok(lg_trees_generate(&ds, &o));
    for (int corrupt = 0; corrupt < 2; corrupt++) {
        lg_model_config mc;
        lg_model_config_default(&mc, LG_MODEL_COSINE);
        mc.hidden = 3;
        mc.heads = 2;
        mc.layers = 3;
        mc.dropout = 0.3;
        lg__batcher b;
        assert_ok(lg__batcher_init(&b, ds, ds->features, &mc, 3, 0));
        lg__batch bt;
        lg__batcher_fill(&b, 0, 0, 0, &bt);
        assert_true(bt.n_graphs == 3 && bt.n_read == 3);
        const lg_idx cap[3] = {b.n_cap, b.nnz_cap, b.t_cap};
        lg__model_f64 *m = NULL;
        lg_rng r;
        lg_rng_seed(&r, 5);
        assert_ok(lg__model_init_batch_f64(&m, &mc, ds, ds->features, cap, &r));
        assert_ok(lg__model_bind_f64(m, &bt));
        double worst;
        int bad = fd_model(m, &r, b.iota, b.n_targets, 1e-5, &worst, corrupt);
        if (!corrupt && bad) fail_msg("batch model: %d gradients differ (worst %.3g)", bad, worst);
        if (corrupt) assert_true(bad >= 1);
        else print_message("  batch model: worst relative error %.2e\n", worst);
        lg__model_free_f64(m);
        lg__batcher_destroy(&b);
    }
    lg_dataset_free(ds);
}

/* sigma_max of a rows x cols block (row stride ld) by 2000 power iterations. */
static double sigma_of(const float *w, lg_idx rows, lg_idx cols, lg_idx ld) {
    double v[64], u[64], s = 0;
    assert_true(rows <= 64 && cols <= 64);
    for (lg_idx c = 0; c < cols; c++) v[c] = 1 + 0.1 * (double)c;
    for (int it = 0; it < 2000; it++) {
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
    return s;
}

/* Initial values: per layer [SCSA | CenterNorm gain 1 | bias 0 | alpha 1/L],
 * W and W_O of spectral norm 1. */
static void test_initial_values(void **state) {
    (void)state;
    lg_dataset *ds = random_dataset(20, 7, 3, 0, 4);
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_COSINE);
    mc.layers = 4;
    mc.hidden = 6;
    mc.heads = 2;
    lg__model_f32 *m = NULL;
    lg_rng r;
    lg_rng_seed(&r, 1);
    assert_ok(lg__model_init_f32(&m, &mc, ds, ds->features, &r));
    const float *p = lg__model_params_f32(m);
    lg_cosatt_config sc = lg_cosatt_config_default(6, 2, 6, 6);
    lg_cosatt_layout sl;
    assert_ok(lg_cosatt_layout_get(&sc, &sl));
    for (int l = 0; l < 4; l++) {
        lg__layer_range lr = lg__model_layer_range_f32(m, l);
        assert_int_equal(lr.len, sl.count + 3 * 6);
        const float *blk = p + lr.off, *cn = blk + sl.count;
        for (int k = 0; k < 6; k++) {
            assert_true(cn[k] == 1.0f && cn[6 + k] == 0.0f);
            assert_true(cn[12 + k] == 0.25f); /* alpha = 1/L */
        }
        const double sw = sigma_of(blk + sl.w, 6, sl.w_cols, sl.w_cols), so = sigma_of(blk + sl.wo, 12, 6, 6);
        assert_true(fabs(sw - 1) < 1e-5 && fabs(so - 1) < 1e-5);
        /* the attention parameters named by the range: Wq, Wk columns, bq, bk */
        assert_int_equal(lr.str_cols, 2 * 12);
        assert_int_equal(lr.str_stride, sl.w_cols);
        assert_int_equal(lr.att_len, 24);
        assert_int_equal(lg__model_layer_heads_f32(m, l), 2);
    }
    assert_ok(lg__model_forward_f32(m, 0, 0, 0));
    float att[4096];
    assert_true(lg__model_graph_f32(m)->nnz * 2 <= 4096);
    assert_ok(lg__model_attention_f32(m, 1, att));
    assert_int_equal(lg__model_first_nonfinite_f32(m), -1);
    lg__model_free_f32(m);
    lg_dataset_free(ds);
}

static void test_configs(void **state) {
    (void)state;
    lg_model_kind k;
    assert_ok(lg_model_kind_parse("cosine", &k));
    assert_int_equal(k, LG_MODEL_COSINE);
    assert_string_equal(lg_model_kind_name(LG_MODEL_COSINE), "cosine");
    assert_true(LG_MODEL_COSINE > LG_MODEL_GCNII && LG_MODEL_COSINE < LG_MODEL_COUNT);
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_COSINE);
    assert_ok(lg_model_config_check(&mc));
    assert_true(mc.residual == 1 && mc.att_dropout == 0 && mc.self_loops == 1 && mc.layers == 10 && mc.hidden == 64);
    mc.att_norm = LG_ATT_NORM_LIPSCHITZ;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    lg_model_config_default(&mc, LG_MODEL_COSINE);
    mc.node_norm = LG_NODE_NORM_PAIRNORM;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    lg_model_config_default(&mc, LG_MODEL_COSINE);
    mc.att_dropout = 0.3;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    lg_model_config_default(&mc, LG_MODEL_COSINE);
    mc.residual = 0;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    /* the baselines' check still holds after the new kind */
    lg_model_config_default(&mc, LG_MODEL_GCNII);
    mc.att_norm = LG_ATT_NORM_LIPSCHITZ;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
}

/* 60 epochs on a small random data set: finite, and the training loss falls. */
static void test_training_runs(void **state) {
    (void)state;
    lg_dataset *ds = random_dataset(60, 8, 3, 0, 9);
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_COSINE);
    mc.layers = 6;
    mc.hidden = 8;
    mc.heads = 2;
    mc.dropout = 0;
    lg_train_config tc;
    lg_train_config_default(&tc);
    tc.lr = 0.01;
    tc.weight_decay = 0;
    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    lg_epoch_stats es;
    double first = 0, last = 0;
    for (int e = 0; e < 60; e++) {
        assert_ok(lg_trainer_epoch(t, &es));
        if (e == 0) first = es.train_loss;
        last = es.train_loss;
        assert_true(isfinite(es.train_loss));
    }
    print_message("  training loss %.4f -> %.4f, train accuracy %.3f\n", first, last, es.train_acc);
    assert_true(last < 0.8 * first);
    lg_trainer_free(t);
    lg_dataset_free(ds);
}

/* Fails the k-th allocation of trainer init + one epoch for k = 1, 2, ...
 * until one succeeds: each failure is LG_ENOMEM without a leak (the spectral
 * initialisation's vectors included), and the epoch allocates nothing. */
static void test_out_of_memory(void **state) {
    (void)state;
    lg_dataset *ds = random_dataset(12, 5, 3, 1, 6);
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_COSINE);
    mc.layers = 2;
    mc.hidden = 4;
    mc.heads = 2;
    lg_train_config tc;
    lg_train_config_default(&tc);
    int ok = 0;
    long k;
    for (k = 1; k < 3000 && !ok; k++) {
        lg_test_alloc_fail_at(k);
        lg_trainer *t = NULL;
        lg_status st = lg_trainer_init(&t, &mc, &tc, ds);
        if (st == LG_OK) {
            lg_epoch_stats es;
            assert_int_equal(lg_trainer_epoch(t, &es), LG_OK);
            ok = 1;
        } else {
            assert_int_equal(st, LG_ENOMEM);
            assert_null(t);
        }
        lg_trainer_free(t);
        assert_int_equal(lg_test_alloc_live(), 0);
        lg_test_alloc_reset();
    }
    assert_true(ok);
    print_message("  %ld allocations swept\n", k - 1);
    lg_dataset_free(ds);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configs),
        cmocka_unit_test(test_initial_values),
        cmocka_unit_test(test_model_gradients),
        cmocka_unit_test(test_batch_model_gradients),
        cmocka_unit_test(test_training_runs),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
