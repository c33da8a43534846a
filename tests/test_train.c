/* Tests of the model stack and the trainer: a whole-model finite-difference
 * check in double for every model variant, determinism across runs and
 * thread counts, bit-identical resume from a checkpoint, refusal of
 * mismatched checkpoints, the missing-feature setting, configuration checks,
 * and out-of-memory paths. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "core/internal.h"
#include "train/checkpoint.h"
#include "train/model.h"

/* A random data set: n nodes, a random directed graph with a hub and a node
 * without in-neighbours, dense or sparse features, c classes. */
static lg_dataset *random_dataset(lg_idx n, lg_idx d, int c, int sparse, uint64_t seed) {
    lg_rng r;
    lg_rng_seed(&r, seed);
    lg_dataset *ds = calloc(1, sizeof *ds);
    ds->name = strdup("random");
    lg_idx m = 3 * n, k = 0;
    lg_idx *src = malloc(sizeof(lg_idx) * (size_t)(m + n)), *dst = malloc(sizeof(lg_idx) * (size_t)(m + n));
    for (lg_idx e = 0; e < m; e++) {
        src[k] = (lg_idx)lg_rng_below(&r, (uint64_t)n);
        dst[k] = (lg_idx)lg_rng_below(&r, (uint64_t)n);
        if (dst[k] != n - 1) k++; /* node n-1 receives nothing */
    }
    for (lg_idx i = 1; i < n - 1; i++) { src[k] = i; dst[k++] = 0; } /* hub 0 */
    assert_ok(lg_graph_from_edges(&ds->graph, n, k, src, dst, 0));
    free(src);
    free(dst);
    lg_features *f = calloc(1, sizeof *f);
    f->n = n;
    f->d = d;
    if (sparse) {
        f->kind = LG_FEAT_SPARSE;
        f->p = calloc((size_t)n + 1, sizeof(lg_idx));
        f->j = malloc(sizeof(lg_idx) * (size_t)(n * d));
        f->x = malloc(sizeof(float) * (size_t)(n * d));
        for (lg_idx i = 0; i < n; i++) {
            for (lg_idx q = 0; q < d; q++)
                if (lg_rng_below(&r, 2)) { f->j[f->nnz] = q; f->x[f->nnz++] = (float)(lg_rng_double(&r) * 2); }
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

/* Loss of the double model at its current parameters. */
static double loss64(lg__model_f64 *m, const lg_dataset *ds) {
    double loss;
    assert_ok(lg__model_forward_f64(m, 1, 11, 3));
    assert_ok(lg__model_eval_f64(m, ds->train, ds->n_train, &loss, NULL));
    return loss;
}

/* Central differences of the loss against the backward pass for every
 * parameter. Returns the number of mismatches; tol is relative. */
static int fd_check(const lg_model_config *mc, const lg_dataset *ds, double tol, double *worst, int corrupt) {
    lg__model_f64 *m = NULL;
    lg_rng r;
    lg_rng_seed(&r, 5);
    assert_ok(lg__model_init_f64(&m, mc, ds, ds->features, &r));
    double *p = lg__model_params_f64(m);
    lg_idx np = lg__model_nparams_f64(m);
    /* biases start at 0 and LayerNorm at (1, 0): move every parameter off its
     * initial value so that every path carries signal */
    for (lg_idx k = 0; k < np; k++) p[k] += 0.1 * (lg_rng_double(&r) - 0.5);
    loss64(m, ds);
    assert_ok(lg__model_backward_f64(m, ds->train, ds->n_train, 1, 11, 3));
    double *g = malloc(sizeof(double) * (size_t)np);
    memcpy(g, lg__model_grads_f64(m), sizeof(double) * (size_t)np);
    if (corrupt) g[np / 2] += 1e-3 + 0.01 * fabs(g[np / 2]); /* a deliberately wrong gradient */
    int bad = 0;
    double gmax = 0;
    for (lg_idx k = 0; k < np; k++) gmax = fmax(gmax, fabs(g[k]));
    assert_true(gmax > 1e-3); /* the loss does depend on the parameters */
    *worst = 0;
    const double h = 1e-6;
    for (lg_idx k = 0; k < np; k++) {
        double keep = p[k];
        p[k] = keep + h;
        double lp = loss64(m, ds);
        p[k] = keep - h;
        double lm = loss64(m, ds);
        p[k] = keep;
        double num = (lp - lm) / (2 * h), err = fabs(num - g[k]) / fmax(1e-4, fmax(fabs(num), fabs(g[k])));
        if (fabs(num - g[k]) < 1e-11) err = 0; /* below the central difference's rounding floor (~eps/h) */
        if (err > *worst) *worst = err;
        if (err > tol) bad++;
    }
    free(g);
    lg__model_free_f64(m);
    return bad;
}

static void test_model_gradients(void **state) {
    (void)state;
    lg_dataset *dense = random_dataset(14, 5, 3, 0, 1), *sparse = random_dataset(14, 6, 3, 1, 2);
    struct { lg_model_kind kind; lg_att_norm att; lg_node_norm node; int residual, heads, layers, sp; } cases[] = {
        {LG_MODEL_GAT, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 1, 3, 0},
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_NONE, 1, 1, 3, 1},
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_PAIRNORM, 1, 2, 3, 0},
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ_REF, LG_NODE_NORM_PAIRNORM_SI, 0, 2, 2, 1},
        {LG_MODEL_GAT, LG_ATT_NORM_NONE, LG_NODE_NORM_PAIRNORM, 1, 1, 4, 0},
        {LG_MODEL_GAT_CLASSIC, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 2, 2, 1},
        {LG_MODEL_GAT_CLASSIC, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_NONE, 0, 3, 2, 0},
        {LG_MODEL_GT, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 1, 3, 0},
        {LG_MODEL_GT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_LAYERNORM, 1, 2, 3, 1},
        {LG_MODEL_GT, LG_ATT_NORM_LIPSCHITZ_REF, LG_NODE_NORM_PAIRNORM, 1, 1, 2, 0},
        /* the baselines (heads: gin learns eps when 2) */
        {LG_MODEL_GCN, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 1, 3, 1},
        {LG_MODEL_GCN, LG_ATT_NORM_NONE, LG_NODE_NORM_PAIRNORM, 0, 1, 3, 0},
        {LG_MODEL_GIN, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 1, 2, 3, 0},
        {LG_MODEL_GIN, LG_ATT_NORM_NONE, LG_NODE_NORM_PAIRNORM, 0, 1, 2, 1},
        {LG_MODEL_GGNN, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 1, 3, 1},
        {LG_MODEL_GGNN, LG_ATT_NORM_NONE, LG_NODE_NORM_PAIRNORM_SI, 1, 1, 2, 0},
        {LG_MODEL_GCNII, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 1, 4, 1},
        {LG_MODEL_GCNII, LG_ATT_NORM_NONE, LG_NODE_NORM_PAIRNORM, 1, 1, 3, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        lg_model_config mc;
        lg_model_config_default(&mc, cases[c].kind);
        mc.att_norm = cases[c].att;
        mc.node_norm = cases[c].node;
        mc.residual = cases[c].residual;
        mc.heads = cases[c].heads;
        mc.layers = cases[c].layers;
        mc.hidden = 3;
        mc.dropout = 0.3;
        mc.att_dropout = 0.2;
        mc.gate = mc.kind == LG_MODEL_GT && c == 9; /* the gate in one GT case */
        if (mc.kind < LG_MODEL_GCN) mc.self_loops = mc.kind == LG_MODEL_GT ? (int)(c % 2) : 1;
        if (mc.kind == LG_MODEL_GIN) mc.train_eps = cases[c].heads == 2, mc.heads = 1;
        if (mc.kind == LG_MODEL_GCNII) mc.alpha = 0.2, mc.lambda = 1.0;
        double worst;
        int bad = fd_check(&mc, cases[c].sp ? sparse : dense, 1e-5, &worst, 0);
        if (bad) fail_msg("case %zu (%s): %d gradients differ from central differences (worst rel. error %.3g)", c,
                          lg_model_kind_name(mc.kind), bad, worst);
        print_message("case %zu: worst relative error %.2e\n", c, worst);
    }
    /* the checker catches a wrong gradient */
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_GAT);
    mc.layers = 2;
    mc.hidden = 3;
    double worst;
    assert_true(fd_check(&mc, dense, 1e-5, &worst, 1) >= 1);
    lg_dataset_free(dense);
    lg_dataset_free(sparse);
}

/* Runs `epochs` epochs; returns the trainer (caller frees). */
static lg_trainer *run(const lg_dataset *ds, const lg_model_config *mc, const lg_train_config *tc, int epochs,
                       double *losses) {
    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, mc, tc, ds));
    lg_epoch_stats es;
    for (int e = 0; e < epochs; e++) {
        assert_ok(lg_trainer_epoch(t, &es));
        if (losses) losses[e] = es.train_loss_step;
    }
    return t;
}

static void small_config(lg_model_config *mc, lg_train_config *tc) {
    lg_model_config_default(mc, LG_MODEL_GAT);
    mc->layers = 4;
    mc->hidden = 8;
    mc->heads = 2;
    mc->att_norm = LG_ATT_NORM_LIPSCHITZ;
    mc->node_norm = LG_NODE_NORM_PAIRNORM;
    mc->residual = 1;
    lg_train_config_default(tc);
    tc->seed = 42;
    tc->plateau = 1;
}

static void test_deterministic(void **state) {
    (void)state;
    lg_dataset *ds = random_dataset(60, 9, 4, 1, 3);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    double l1[10], l2[10], l3[10];
    lg_trainer *a = run(ds, &mc, &tc, 10, l1), *b = run(ds, &mc, &tc, 10, l2);
    assert_memory_equal(l1, l2, sizeof l1);
    /* same parameters, bit for bit: compare two checkpoints' parameter files */
    lg_train_summary sa, sb;
    lg_trainer_summary(a, &sa);
    lg_trainer_summary(b, &sb);
    assert_true(sa.test_acc == sb.test_acc && sa.max_layer_grad_norm == sb.max_layer_grad_norm);
    lg_trainer_free(b);
    /* a different seed gives a different run */
    tc.seed = 43;
    b = run(ds, &mc, &tc, 10, l3);
    assert_true(memcmp(l1, l3, sizeof l1) != 0);
    lg_trainer_free(b);
    /* 1 and 2 threads: the losses agree to 1e-4 relative */
    tc.seed = 42;
    omp_set_num_threads(1);
    b = run(ds, &mc, &tc, 10, l2);
    omp_set_num_threads(2);
    lg_trainer_free(b);
    b = run(ds, &mc, &tc, 10, l3);
    for (int e = 0; e < 10; e++) assert_true(fabs(l2[e] - l3[e]) <= 1e-4 * fabs(l2[e]));
    lg_trainer_free(a);
    lg_trainer_free(b);
    lg_dataset_free(ds);
}

static void test_resume_bit_identical(void **state) {
    (void)state;
    lg_dataset *ds = random_dataset(50, 7, 3, 0, 4);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    char path[] = "/tmp/lg_resume_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    double straight[8], resumed[8];
    lg_trainer *a = run(ds, &mc, &tc, 8, straight);
    lg_trainer *b = run(ds, &mc, &tc, 3, resumed);
    assert_ok(lg_trainer_save(b, path));
    lg_trainer_free(b);
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_ok(lg_trainer_load(b, path));
    assert_int_equal(lg_trainer_epochs_done(b), 3);
    lg_epoch_stats es;
    for (int e = 3; e < 8; e++) {
        assert_ok(lg_trainer_epoch(b, &es));
        resumed[e] = es.train_loss_step;
    }
    assert_memory_equal(straight, resumed, sizeof straight);
    float *pa = malloc(sizeof(float) * 50 * 3), *pb = malloc(sizeof(float) * 50 * 3);
    assert_ok(lg_trainer_predict(a, pa, NULL));
    assert_ok(lg_trainer_predict(b, pb, NULL));
    assert_memory_equal(pa, pb, sizeof(float) * 50 * 3);
    free(pa);
    free(pb);
    lg_train_summary sa, sb;
    lg_trainer_summary(a, &sa);
    lg_trainer_summary(b, &sb);
    assert_true(sa.best_val_acc == sb.best_val_acc && sa.best_epoch == sb.best_epoch);
    assert_true(sa.max_att_grad_norm == sb.max_att_grad_norm);
    lg_trainer_free(b);

    /* another model, another seed, another data set: refused, t unchanged */
    lg_model_config other = mc;
    other.layers = 3;
    assert_ok(lg_trainer_init(&b, &other, &tc, ds));
    assert_int_equal(lg_trainer_load(b, path), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "--layers 4"));
    assert_int_equal(lg_trainer_epochs_done(b), 0);
    lg_trainer_free(b);
    lg_train_config tc2 = tc;
    tc2.seed = 7;
    assert_ok(lg_trainer_init(&b, &mc, &tc2, ds));
    assert_int_equal(lg_trainer_load(b, path), LG_EINVAL);
    lg_trainer_free(b);
    lg_dataset *ds2 = random_dataset(50, 7, 3, 0, 99);
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds2));
    assert_int_equal(lg_trainer_load(b, path), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "another data set"));
    lg_trainer_free(b);
    lg_dataset_free(ds2);
    /* a damaged file */
    FILE *f = fopen(path, "r+b");
    fseek(f, 100, SEEK_SET);
    fputc(0x5a, f);
    fclose(f);
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_int_equal(lg_trainer_load(b, path), LG_EPARSE);
    lg_trainer_free(b);
    unlink(path);
    lg_trainer_free(a);
    lg_dataset_free(ds);
}

static void test_missing_features(void **state) {
    (void)state;
    lg_dataset *ds = random_dataset(90, 4, 3, 0, 5);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    mc.dropout = 0;
    mc.att_dropout = 0;
    /* with every non-training feature removed, changing those features
     * changes nothing */
    tc.missing = 1.0;
    double l1[3], l2[3];
    lg_trainer *a = run(ds, &mc, &tc, 3, l1);
    for (lg_idx i = 0; i < ds->graph->n; i++)
        if (i % 3 != 0)
            for (lg_idx q = 0; q < 4; q++) ds->features->x[i * 4 + q] += 1.0f;
    lg_trainer *b = run(ds, &mc, &tc, 3, l2);
    assert_memory_equal(l1, l2, sizeof l1);
    lg_trainer_free(a);
    lg_trainer_free(b);
    /* with none removed, it does */
    tc.missing = 0;
    a = run(ds, &mc, &tc, 1, l1);
    for (lg_idx q = 0; q < 90 * 4; q++) ds->features->x[q] *= 2;
    b = run(ds, &mc, &tc, 1, l2);
    assert_true(l1[0] != l2[0]);
    lg_trainer_free(a);
    lg_trainer_free(b);
    lg_dataset_free(ds);
}

static void test_configs(void **state) {
    (void)state;
    lg_model_config mc;
    lg_att_norm a;
    lg_node_norm nn;
    assert_ok(lg_norm_parse("lipschitz+layernorm", &a, &nn));
    assert_int_equal(a, LG_ATT_NORM_LIPSCHITZ);
    assert_int_equal(nn, LG_NODE_NORM_LAYERNORM);
    assert_ok(lg_norm_parse("pairnorm-si", &a, &nn));
    assert_int_equal(a, LG_ATT_NORM_NONE);
    assert_int_equal(nn, LG_NODE_NORM_PAIRNORM_SI);
    assert_ok(lg_norm_parse("none", &a, &nn));
    assert_int_equal(lg_norm_parse("lipschitz+lipschitz-ref", &a, &nn), LG_EINVAL);
    assert_int_equal(lg_norm_parse("bogus", &a, &nn), LG_EINVAL);
    assert_int_equal(lg_norm_parse("none+pairnorm", &a, &nn), LG_EINVAL);
    char buf[64];
    lg_norm_format(buf, sizeof buf, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_PAIRNORM);
    assert_string_equal(buf, "lipschitz+pairnorm");
    lg_model_config_default(&mc, LG_MODEL_GAT);
    assert_ok(lg_model_config_check(&mc));
    mc.node_norm = LG_NODE_NORM_LAYERNORM;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    lg_model_config_default(&mc, LG_MODEL_GAT_CLASSIC);
    assert_int_equal(mc.heads, 8);
    assert_true(mc.feature_norm_row);
    mc.layers = 3;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    lg_model_config_default(&mc, LG_MODEL_GAT);
    mc.dropout = 1.0;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    lg_train_config tc;
    lg_train_config_default(&tc);
    assert_ok(lg_train_config_check(&tc));
    tc.lr = -1;
    assert_int_equal(lg_train_config_check(&tc), LG_EINVAL);
    lg_train_config_default(&tc);
    tc.explode_window = 100000;
    assert_ok(lg_train_config_check(&tc));
    tc.explode_window = 2147483647; /* its history of window+1 rows would overflow */
    assert_int_equal(lg_train_config_check(&tc), LG_EINVAL);
    lg_train_config_default(&tc);
    assert_true(tc.layer_weight_decay < 0); /* the same as weight_decay */
    tc.layer_weight_decay = NAN;
    assert_int_equal(lg_train_config_check(&tc), LG_EINVAL);
    lg_model_kind k;
    assert_ok(lg_model_kind_parse("gat-classic", &k));
    assert_int_equal(k, LG_MODEL_GAT_CLASSIC);
    assert_int_equal(lg_model_kind_parse("bogus", &k), LG_EINVAL);
    const char *base[] = {"gcn", "gin", "ggnn", "gcnii"};
    for (int b = 0; b < 4; b++) { /* the baselines: parsed, named, and without attention */
        assert_ok(lg_model_kind_parse(base[b], &k));
        assert_int_equal(k, LG_MODEL_GCN + b);
        assert_string_equal(lg_model_kind_name(k), base[b]);
        lg_model_config_default(&mc, k);
        assert_ok(lg_model_config_check(&mc));
        mc.att_norm = LG_ATT_NORM_LIPSCHITZ;
        assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    }
    lg_model_config_default(&mc, LG_MODEL_GCNII);
    assert_int_equal(mc.layers, 64);
    assert_true(mc.alpha == 0.1 && mc.lambda == 0.5 && mc.dropout == 0.6);
    mc.lambda = 2;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    lg_model_config_default(&mc, LG_MODEL_GCN);
    assert_true(mc.layers == 2 && mc.hidden == 16 && mc.self_loops && mc.feature_norm_row);
}

/* The estimate equals what the trainer allocates, for every model kind. */
static void test_memory_estimate(void **state) {
    (void)state;
    lg_dataset *sp = random_dataset(40, 9, 3, 1, 8), *de = random_dataset(40, 9, 3, 0, 9);
    struct { lg_model_kind k; lg_node_norm nn; int residual; } cases[] = {
        {LG_MODEL_GAT, LG_NODE_NORM_PAIRNORM, 1}, {LG_MODEL_GT, LG_NODE_NORM_LAYERNORM, 1},
        {LG_MODEL_GAT_CLASSIC, LG_NODE_NORM_NONE, 0}, {LG_MODEL_GAT, LG_NODE_NORM_NONE, 0},
        {LG_MODEL_GCN, LG_NODE_NORM_PAIRNORM, 0}, {LG_MODEL_GIN, LG_NODE_NORM_NONE, 1},
        {LG_MODEL_GGNN, LG_NODE_NORM_NONE, 0}, {LG_MODEL_GCNII, LG_NODE_NORM_PAIRNORM, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int d = 0; d < 2; d++) {
            lg_model_config mc;
            lg_train_config tc;
            small_config(&mc, &tc);
            lg_model_config_default(&mc, cases[c].k);
            mc.node_norm = cases[c].nn;
            mc.residual = cases[c].residual;
            if (cases[c].k != LG_MODEL_GAT_CLASSIC) { mc.layers = 3; mc.hidden = 5; mc.heads = 2; }
            if (cases[c].k == LG_MODEL_GIN) mc.train_eps = 1;
            lg_trainer_mem est, got;
            lg_dataset *ds = d ? de : sp;
            assert_ok(lg_trainer_estimate(&mc, &tc, ds, &est));
            lg_trainer *t = NULL;
            assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
            lg_trainer_memory(t, &got);
            assert_int_equal(est.params, got.params);
            assert_int_equal(est.activations, got.activations);
            assert_int_equal(est.workspace, got.workspace);
            assert_int_equal(est.other, got.other);
            assert_int_equal(est.total, got.total);
            assert_true(est.total > est.params && est.activations > 0);
            lg_trainer_free(t);
        }
    lg_dataset_free(sp);
    lg_dataset_free(de);
}

static void test_out_of_memory(void **state) {
    (void)state;
    lg_dataset *ds = random_dataset(20, 5, 3, 1, 6);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    int ok = 0;
    for (long k = 1; k < 2000 && !ok; k++) {
        lg_test_alloc_fail_at(k);
        lg_trainer *t = NULL;
        lg_status st = lg_trainer_init(&t, &mc, &tc, ds);
        if (st == LG_OK) {
            lg_epoch_stats es;
            st = lg_trainer_epoch(t, &es);
            assert_int_equal(st, LG_OK); /* no allocation inside an epoch */
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
    lg_dataset_free(ds);
}

/* Overwrites n bytes at offset off of the checkpoint section with this tag and
 * writes the right checksum: a crafted file that only its values give away. */
static void patch_section(const char *path, uint32_t tag, size_t off, const void *bytes, size_t n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char buf[1 << 16];
    size_t size = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(size > 24 && size < sizeof buf);
    uint32_t count;
    memcpy(&count, buf + 12, 4);
    size_t pos = 16;
    int found = 0;
    for (uint32_t k = 0; k < count && !found; k++) {
        uint32_t t;
        uint64_t len;
        memcpy(&t, buf + pos, 4);
        memcpy(&len, buf + pos + 8, 8);
        if (t == tag) {
            assert_true(off + n <= len);
            if (n) memcpy(buf + pos + 16 + off, bytes, n);
            found = 1;
        }
        pos += 16 + (size_t)len;
    }
    assert_true(found);
    uint64_t h = lg__fnv1a(LG_FNV_START, buf, size - 8);
    memcpy(buf + size - 8, &h, 8);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, size, f), size);
    fclose(f);
}

/* A checkpoint with a valid checksum but values no run can produce (NaN
 * parameters, negative second moments, a negative detector count that would
 * index before its history) is refused, and the trainer stays unchanged. */
static void test_restored_values(void **state) {
    (void)state;
    lg_dataset *ds = random_dataset(30, 5, 3, 1, 8);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    char good[] = "/tmp/lg_restore_XXXXXX", path[64];
    int fd = mkstemp(good);
    assert_true(fd >= 0);
    close(fd);
    snprintf(path, sizeof path, "%s.bad", good);
    lg_trainer *a = run(ds, &mc, &tc, 3, NULL);
    assert_ok(lg_trainer_save(a, good));
    lg_trainer_free(a);
    const float nan = NAN, neg = -1.0f;
    const int64_t seen = -5, epoch = -1;
    struct { uint32_t tag; size_t off; const void *b; size_t n; const char *msg; } cases[] = {
        {4, 0, NULL, 0, NULL}, /* re-summed, unchanged: loads */
        {4, 0, &nan, sizeof nan, "parameter 0 is not a finite number"},
        {5, 4 * sizeof(float), &nan, sizeof nan, "Adam first moment 4"},
        {6, sizeof(float), &neg, sizeof neg, "Adam second moment 1 is not a finite number >= 0"},
        {7, 0, &epoch, sizeof epoch, "negative epoch count"},
        {8, 0, &seen, sizeof seen, "explosion detector state"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "cp %s %s", good, path);
        assert_int_equal(system(cmd), 0);
        patch_section(path, cases[c].tag, cases[c].off, cases[c].b, cases[c].n);
        lg_trainer *t = NULL;
        assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
        lg_status st = lg_trainer_load(t, path);
        if (!cases[c].msg) {
            assert_ok(st);
            assert_int_equal(lg_trainer_epochs_done(t), 3);
        } else {
            assert_int_equal(st, LG_EPARSE);
            assert_non_null(strstr(lg_last_error(), cases[c].msg));
            assert_int_equal(lg_trainer_epochs_done(t), 0);
            lg_epoch_stats es;
            assert_ok(lg_trainer_epoch(t, &es)); /* still a sound fresh trainer */
            assert_true(isfinite(es.train_loss));
        }
        lg_trainer_free(t);
    }
    unlink(path);
    unlink(good);
    lg_dataset_free(ds);
}

/* Values that stop being finite during training are caught by the explosion
 * detector in the epoch where they first occur, with the layer whose output
 * they first reach: a (finite, so accepted) checkpoint whose attention layer 2
 * holds weights of 3e38 overflows that layer's scores in the next epoch. */
static void test_nonfinite_located(void **state) {
    (void)state;
    lg_dataset *ds = random_dataset(40, 6, 3, 0, 12);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    mc.node_norm = LG_NODE_NORM_NONE;
    mc.residual = 0;
    tc.plateau = 0;
    mc.att_norm = LG_ATT_NORM_NONE;
    tc.stop_on_explosion = 1;
    char path[] = "/tmp/lg_nonfinite_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    lg_trainer *t = run(ds, &mc, &tc, 3, NULL);
    lg_train_summary s;
    lg_trainer_summary(t, &s);
    assert_false(s.exploded);
    assert_ok(lg_trainer_save(t, path));
    lg_trainer_free(t);
    /* layer 2's parameter block, from a model built the same way */
    lg__model_f32 *m = NULL;
    lg_rng rng;
    lg_rng_seed(&rng, 1);
    assert_ok(lg__model_init_f32(&m, &mc, ds, ds->features, &rng));
    lg__layer_range r = lg__model_layer_range_f32(m, 2);
    lg__model_free_f32(m);
    float *huge = malloc(sizeof(float) * (size_t)r.len);
    for (lg_idx k = 0; k < r.len; k++) huge[k] = 3e38f;
    patch_section(path, 4 /* parameters */, sizeof(float) * (size_t)r.off, huge, sizeof(float) * (size_t)r.len);
    free(huge);
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    assert_ok(lg_trainer_load(t, path));
    /* predictions: an error naming the layer, not NaN */
    float *logp = malloc(sizeof(float) * 40 * 3);
    assert_int_equal(lg_trainer_predict(t, logp, NULL), LG_ENUMERIC);
    assert_non_null(strstr(lg_last_error(), "attention layer 2"));
    free(logp);
    lg_epoch_stats es;
    assert_ok(lg_trainer_epoch(t, &es));
    assert_false(isfinite(es.train_loss_step));
    assert_int_equal(es.exploded_now, 1);
    assert_true(lg_trainer_done(t));
    lg_trainer_summary(t, &s);
    assert_true(s.exploded);
    assert_int_equal(s.first_explosion_epoch, 4);
    assert_int_equal(s.explosion_layer, 2);
    assert_non_null(strstr(s.explosion_reason, "layer 2"));
    lg_trainer_free(t);
    unlink(path);
    lg_dataset_free(ds);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_gradients), cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_resume_bit_identical), cmocka_unit_test(test_missing_features),
        cmocka_unit_test(test_configs), cmocka_unit_test(test_memory_estimate),
        cmocka_unit_test(test_out_of_memory), cmocka_unit_test(test_restored_values),
        cmocka_unit_test(test_nonfinite_located),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
