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
 * of tests/test_train.c's whole-model check (both lg_test_model_fd of
 * tests/testutil.c; h = 1e-6, double).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "train/model.h"

static void test_model_gradients(void **state) {
    (void)state;
    lg_dataset *dense = lg_test_random_dataset(14, 5, 3, 0, 1), *sparse = lg_test_random_dataset(14, 6, 3, 1, 2);
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
        int bad = lg_test_model_fd_check(&mc, cases[c].sp ? sparse : dense, 1e-5, &worst, 0);
        if (bad) fail_msg("case %zu: %d gradients differ from central differences (worst %.3g)", c, bad, worst);
        print_message("  case %zu: worst relative error %.2e\n", c, worst);
    }
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_COSINE);
    mc.layers = 2;
    mc.hidden = 3;
    double worst;
    assert_true(lg_test_model_fd_check(&mc, dense, 1e-5, &worst, 1) >= 1);
    lg_dataset_free(dense);
    lg_dataset_free(sparse);
}

/* The batch model (TREES mini-batches: caches sized for the largest batch,
 * the graph of each batch bound): central differences over a batch of 3
 * trees of depth 2, loss at the roots. */
static void test_batch_model_gradients(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_trees(2, 6, 12);
    for (int corrupt = 0; corrupt < 2; corrupt++) {
        lg_model_config mc;
        lg_model_config_default(&mc, LG_MODEL_COSINE);
        mc.hidden = 3;
        mc.heads = 2;
        mc.layers = 3;
        mc.dropout = 0.3;
        double worst;
        int bad = lg_test_batch_model_fd(&mc, ds, 1e-5, &worst, corrupt, NULL);
        if (!corrupt && bad) fail_msg("batch model: %d gradients differ (worst %.3g)", bad, worst);
        if (corrupt) assert_true(bad >= 1);
        else print_message("  batch model: worst relative error %.2e\n", worst);
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
    lg_dataset *ds = lg_test_random_dataset(20, 7, 3, 0, 4);
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
    lg_dataset *ds = lg_test_random_dataset(60, 8, 3, 0, 9);
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
    lg_dataset *ds = lg_test_random_dataset(12, 5, 3, 1, 6);
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_COSINE);
    mc.layers = 2;
    mc.hidden = 4;
    mc.heads = 2;
    lg_train_config tc;
    lg_train_config_default(&tc);
    long failures = lg_test_trainer_alloc_sweep(ds, &mc, &tc, 3000);
    print_message("  %ld allocations swept\n", failures + 1);
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
