/* Tests of the model stack and the trainer: a whole-model finite-difference
 * check in double for every model variant, determinism across runs and
 * thread counts, bit-identical resume from a checkpoint, refusal of
 * mismatched checkpoints, the missing-feature setting, configuration checks,
 * out-of-memory paths, and the epochs at which the scheduler and early
 * stopping act, the split weight decay, mini-batch norms and order, and the
 * explosion detector across a checkpoint. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "core/gemm.h"
#include "core/internal.h"
#include "train/batch.h"
#include "train/checkpoint.h"
#include "train/model.h"
#include "train/trainer_internal.h"

/* One model of the finite-difference checks below: kind, norms, residual,
 * heads, layers, and sparse (1) or dense (0) features. */
typedef struct fd_case {
    lg_model_kind kind;
    lg_att_norm att;
    lg_node_norm node;
    int residual, heads, layers, sp;
} fd_case;

/* Checks the whole-model gradients of every case (hidden 3; GT's gate in case
 * gate_case) with feature dropout p (attention dropout 0.2 where the layer
 * has it) against central differences. */
static void fd_check_cases(const fd_case *cases, size_t count, const lg_dataset *dense, const lg_dataset *sparse,
                           double p, size_t gate_case) {
    for (size_t c = 0; c < count; c++) {
        lg_model_config mc;
        lg_model_config_default(&mc, cases[c].kind);
        mc.att_norm = cases[c].att;
        mc.node_norm = cases[c].node;
        mc.residual = cases[c].residual;
        mc.heads = cases[c].heads;
        mc.layers = cases[c].layers;
        mc.hidden = 3;
        mc.dropout = p;
        mc.att_dropout = 0.2;
        mc.gate = mc.kind == LG_MODEL_GT && c == gate_case;
        if (mc.kind < LG_MODEL_GCN) mc.self_loops = mc.kind == LG_MODEL_GT ? (int)(c % 2) : 1;
        if (mc.kind == LG_MODEL_GIN) mc.train_eps = cases[c].heads == 2, mc.heads = 1;
        if (mc.kind == LG_MODEL_GCNII) mc.alpha = 0.2, mc.lambda = 1.0;
        double worst;
        int bad = lg_test_model_fd_check(&mc, cases[c].sp ? sparse : dense, 1e-5, &worst, 0);
        if (bad)
            fail_msg("dropout %g, case %zu (%s): %d gradients differ from central differences (worst rel. error %.3g)",
                     p, c, lg_model_kind_name(mc.kind), bad, worst);
        print_message("dropout %g, case %zu: worst relative error %.2e\n", p, c, worst);
    }
}

static void test_model_gradients(void **state) {
    (void)state;
    lg_dataset *dense = lg_test_random_dataset(14, 5, 3, 0, 1), *sparse = lg_test_random_dataset(14, 6, 3, 1, 2);
    const fd_case cases[] = {
        {LG_MODEL_GAT, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 1, 3, 0},
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_NONE, 1, 1, 3, 1},
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_PAIRNORM, 1, 2, 3, 0},
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ_REF, LG_NODE_NORM_PAIRNORM_SI, 0, 2, 2, 1},
        {LG_MODEL_GAT, LG_ATT_NORM_NONE, LG_NODE_NORM_PAIRNORM, 1, 1, 4, 0},
        {LG_MODEL_GAT_CLASSIC, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 2, 2, 1},
        {LG_MODEL_GAT_CLASSIC, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_NONE, 0, 3, 2, 0},
        {LG_MODEL_GT, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 1, 3, 0},
        {LG_MODEL_GT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_LAYERNORM, 1, 2, 3, 1},
        {LG_MODEL_GT, LG_ATT_NORM_NONE, LG_NODE_NORM_LAYERNORM, 0, 1, 2, 0},
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
        /* L2 attention (att_dropout is unused by it) */
        {LG_MODEL_L2, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 1, 3, 0},
        {LG_MODEL_L2, LG_ATT_NORM_NONE, LG_NODE_NORM_PAIRNORM, 1, 2, 3, 1},
        /* DeepGAT with LayerNorm (after each layer, before the ELU) */
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_LAYERNORM, 1, 2, 3, 0},
        {LG_MODEL_GAT, LG_ATT_NORM_NONE, LG_NODE_NORM_LAYERNORM, 0, 1, 2, 1},
    };
    fd_check_cases(cases, sizeof cases / sizeof *cases, dense, sparse, 0.3, 9); /* the gate in one GT case */
    /* GAT + LayerNorm where attention dropout empties rows: the last node has only its
     * self-loop (lg_test_random_dataset), dropped with probability 0.9 in each layer, so
     * its layer output is the bias alone, a constant row that LayerNorm scales by
     * 1/sqrt(eps) (docs/results.md, "Why GAT-LayerNorm explodes") */
    for (int res = 0; res < 2; res++) {
        lg_model_config m2;
        lg_model_config_default(&m2, LG_MODEL_GAT);
        m2.node_norm = LG_NODE_NORM_LAYERNORM;
        m2.residual = res;
        m2.layers = 2;
        m2.hidden = 3;
        m2.dropout = 0;
        m2.att_dropout = 0.9;
        double worst;
        int bad = lg_test_model_fd_check(&m2, dense, 1e-5, &worst, 0);
        if (bad) fail_msg("GAT + LayerNorm, attention dropout 0.9, residual %d: %d gradients differ (worst %.3g)", res,
                          bad, worst);
        print_message("GAT + LayerNorm, attention dropout 0.9, residual %d: worst relative error %.2e\n", res, worst);
    }
    /* the checker catches a wrong gradient */
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_GAT);
    mc.layers = 2;
    mc.hidden = 3;
    double worst;
    assert_true(lg_test_model_fd_check(&mc, dense, 1e-5, &worst, 1) >= 1);
    lg_dataset_free(dense);
    lg_dataset_free(sparse);
}

/* Runs `epochs` epochs; returns the trainer (caller frees). */
static lg_trainer *run(const lg_dataset *ds, const lg_model_config *mc, const lg_train_config *tc, int epochs,
                       double *losses) {
    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, mc, tc, ds));
    assert_int_equal(lg_trainer_best_epoch(t), 0);
    lg_epoch_stats es;
    lg_train_summary s;
    lg_trainer_summary(t, &s); /* before any epoch the two agree on 0 (the summary gave -1) */
    assert_int_equal(s.best_epoch, 0);
    for (int e = 0; e < epochs; e++) {
        assert_ok(lg_trainer_epoch(t, &es));
        if (losses) losses[e] = es.train_loss_step;
        lg_trainer_summary(t, &s); /* the O(1) getter is the summary's best epoch */
        assert_int_equal(lg_trainer_best_epoch(t), s.best_epoch);
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

/* Without dropout (p = 0) the model's forward hands each layer the block's
 * input where the previous block left it, with no dropout buffer
 * (lg__block_forward): the gradients still match central differences, with
 * the backward in place (DeepGAT, DeepGT, L2) and not (residual, LayerNorm,
 * PairNorm, the baselines), and the model has one n x w_in buffer a layer
 * less than with dropout. */
static void test_model_no_dropout(void **state) {
    (void)state;
    lg_dataset *dense = lg_test_random_dataset(14, 5, 3, 0, 3), *sparse = lg_test_random_dataset(14, 6, 3, 1, 4);
    const fd_case cases[] = {
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_NONE, 0, 1, 3, 1},
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_PAIRNORM, 1, 2, 3, 0},
        {LG_MODEL_GAT, LG_ATT_NORM_NONE, LG_NODE_NORM_LAYERNORM, 0, 1, 2, 0},
        {LG_MODEL_GT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_NONE, 0, 2, 3, 0},
        {LG_MODEL_L2, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 1, 3, 1},
        {LG_MODEL_GCN, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0, 1, 3, 1},
        {LG_MODEL_GCNII, LG_ATT_NORM_NONE, LG_NODE_NORM_PAIRNORM, 1, 1, 3, 0},
    };
    fd_check_cases(cases, sizeof cases / sizeof *cases, dense, sparse, 0, 3); /* the gate in the GT case */
    /* DeepGAT, 4 layers of 2 heads of 8: the first layer's input is the input
     * linear's output (hidden, 8 wide), the others' the previous layer's (16
     * wide, concatenated heads): without dropout, n x 8 floats fewer
     * activations (the first block's dropped input, kept) and n x 16 floats
     * less workspace (the other blocks' dropped input, one at a time, made
     * again by their backward) */
    lg_model_config mc;
    lg_train_config tc;
    lg_model_config_default(&mc, LG_MODEL_GAT);
    mc.layers = 4;
    mc.hidden = 8;
    mc.heads = 2;
    lg_train_config_default(&tc);
    lg_trainer_mem with, without;
    assert_ok(lg_trainer_estimate(&mc, &tc, dense, &with));
    mc.dropout = 0;
    assert_ok(lg_trainer_estimate(&mc, &tc, dense, &without));
    assert_int_equal(with.activations - without.activations, sizeof(float) * 14 * 8);
    assert_int_equal(with.workspace - without.workspace, sizeof(float) * 14 * 16);
    /* at 2 layers a shared buffer would spare nothing: each block keeps its own */
    mc.layers = 2;
    assert_ok(lg_trainer_estimate(&mc, &tc, dense, &without));
    mc.dropout = 0.6;
    assert_ok(lg_trainer_estimate(&mc, &tc, dense, &with));
    assert_int_equal(with.activations - without.activations, sizeof(float) * 14 * (8 + 16));
    assert_int_equal(with.workspace, without.workspace);
    lg_dataset_free(dense);
    lg_dataset_free(sparse);
}

static void test_deterministic(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(60, 9, 4, 1, 3);
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
    lg_dataset *ds = lg_test_random_dataset(50, 7, 3, 0, 4);
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
    lg_dataset *ds2 = lg_test_random_dataset(50, 7, 3, 0, 99);
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

/* The summary's input and output linear layers' maxima: the largest of the
 * epochs' io_grad_norm, 0 before an epoch, NAN for a model without them (gcn),
 * kept across a checkpoint, and NAN (unknown) after loading one that predates
 * them (written here without that section). */
static void test_io_grad_norm_max(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(50, 7, 3, 0, 4);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    lg_trainer *t = NULL;
    lg_train_summary s;
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    lg_trainer_summary(t, &s);
    assert_true(s.max_io_grad_norm[0] == 0 && s.max_io_grad_norm[1] == 0);
    double mx[2] = {0, 0};
    lg_epoch_stats es;
    for (int e = 0; e < 6; e++) {
        assert_ok(lg_trainer_epoch(t, &es));
        for (int k = 0; k < 2; k++) {
            assert_true(isfinite(es.io_grad_norm[k]) && es.io_grad_norm[k] > 0);
            if (es.io_grad_norm[k] > mx[k]) mx[k] = es.io_grad_norm[k];
        }
        lg_trainer_summary(t, &s);
        assert_memory_equal(s.max_io_grad_norm, mx, sizeof mx);
    }
    /* kept by a checkpoint */
    char path[] = "/tmp/lg_iomax_XXXXXX", old[] = "/tmp/lg_iomax_old_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    fd = mkstemp(old);
    assert_true(fd >= 0);
    close(fd);
    assert_ok(lg_trainer_save(t, path));
    lg_trainer *b = NULL;
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_ok(lg_trainer_load(b, path));
    lg_trainer_summary(b, &s);
    assert_memory_equal(s.max_io_grad_norm, mx, sizeof mx);
    lg_trainer_free(b);
    /* the same checkpoint without section 11, as written before it: unknown */
    lg_ckpt *c = NULL;
    assert_ok(lg__ckpt_load(&c, path));
    lg_ckpt_section keep[16];
    uint32_t n = 0, dropped = 0;
    for (uint32_t k = 0; k < c->count && n < 16; k++)
        if (c->sections[k].tag != 11) keep[n++] = c->sections[k];
        else dropped++;
    assert_int_equal(dropped, 1);
    assert_ok(lg__ckpt_save(old, keep, n, -1));
    /* a negative maximum (crafted): refused, the trainer unchanged */
    const double neg[2] = {1, -2};
    keep[n] = (lg_ckpt_section){11, sizeof neg, neg};
    assert_ok(lg__ckpt_save(path, keep, n + 1, -1));
    lg__ckpt_free(c);
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_int_equal(lg_trainer_load(b, path), LG_EPARSE);
    assert_non_null(strstr(lg_last_error(), "negative gradient-norm maximum"));
    assert_int_equal(lg_trainer_epochs_done(b), 0);
    lg_trainer_free(b);
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_ok(lg_trainer_load(b, old));
    lg_trainer_summary(b, &s);
    assert_true(isnan(s.max_io_grad_norm[0]) && isnan(s.max_io_grad_norm[1]));
    assert_ok(lg_trainer_epoch(b, &es));
    lg_trainer_summary(b, &s);
    assert_true(isnan(s.max_io_grad_norm[0]) && isnan(s.max_io_grad_norm[1])); /* still unknown */
    lg_trainer_free(b);
    unlink(old);
    unlink(path);
    lg_trainer_free(t);
    /* gcn: no input or output linear layer */
    lg_model_config_default(&mc, LG_MODEL_GCN);
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    lg_trainer_summary(t, &s);
    assert_true(isnan(s.max_io_grad_norm[0]) && isnan(s.max_io_grad_norm[1]));
    assert_ok(lg_trainer_epoch(t, &es));
    lg_trainer_summary(t, &s);
    assert_true(isnan(s.max_io_grad_norm[0]) && isnan(s.max_io_grad_norm[1]));
    lg_trainer_free(t);
    lg_dataset_free(ds);
}

static void test_missing_features(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(90, 4, 3, 0, 5);
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

/* The public functions a caller can reach with a NULL or a value outside an
 * enum: an error or a neutral answer, no crash (each crashed or read out of
 * bounds). */
static void test_api_misuse(void **state) {
    (void)state;
    assert_int_equal(lg_model_kind_parse("gat", NULL), LG_EINVAL);
    assert_int_equal(lg_init_parse("glorot", NULL), LG_EINVAL);
    lg_att_norm a;
    lg_node_norm nn;
    assert_int_equal(lg_norm_parse("lipschitz+pairnorm", NULL, &nn), LG_EINVAL);
    assert_int_equal(lg_norm_parse("lipschitz+pairnorm", &a, NULL), LG_EINVAL);
    char buf[32];
    lg_norm_format(buf, sizeof buf, LG_ATT_NORM_LIPSCHITZ, (lg_node_norm)-4);
    assert_string_equal(buf, "?");
    lg_norm_format(buf, sizeof buf, (lg_att_norm)99, LG_NODE_NORM_NONE);
    assert_string_equal(buf, "?");
    lg_norm_format(NULL, 8, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_NONE);
    lg_model_config mc;
    lg_train_config tc;
    assert_int_equal(lg_checkpoint_config("x.ckpt", NULL, &tc), LG_EINVAL);
    assert_int_equal(lg_checkpoint_config("x.ckpt", &mc, NULL), LG_EINVAL);
    lg_model_config_default(NULL, LG_MODEL_GAT);
    lg_train_config_default(NULL);
    float att[4];
    assert_int_equal(lg_trainer_attention(NULL, 0, att), LG_EINVAL);
    assert_int_equal(lg_trainer_done(NULL), 1);
    assert_int_equal(lg_trainer_epochs_done(NULL), 0);
    assert_int_equal(lg_trainer_best_epoch(NULL), 0);
    assert_null(lg_trainer_graph(NULL));
    assert_int_equal(lg_trainer_classes(NULL), 0);
    assert_int_equal(lg_trainer_hidden_width(NULL), 0);
    assert_int_equal(lg_trainer_layers(NULL), 0);
    assert_int_equal(lg_trainer_layer_heads(NULL, 0), 0);
    lg_train_summary sum;
    memset(&sum, 0xff, sizeof sum);
    lg_trainer_summary(NULL, &sum);
    assert_int_equal(sum.epochs_run, 0);
    lg_trainer_mem mem;
    memset(&mem, 0xff, sizeof mem);
    lg_trainer_memory(NULL, &mem);
    assert_int_equal(mem.total, 0);
    assert_int_equal(lg_trainer_save_check(""), LG_EINVAL); /* as lg_trainer_save refuses it */
    assert_int_equal(lg_gt_out_dim(NULL), 0);
    { /* a data set made by hand without a name: messages say "(unnamed)" (printf's %s took the NULL) */
        lg_dataset *ds = lg_test_random_dataset(14, 5, 3, 0, 1);
        lg_model_config_default(&mc, LG_MODEL_GAT);
        lg_train_config_default(&tc);
        char *name = ds->name;
        ds->name = NULL;
        const lg_idx n_train = ds->n_train;
        ds->n_train = 0;
        lg_trainer *t = NULL;
        assert_int_equal(lg_trainer_init(&t, &mc, &tc, ds), LG_EINVAL);
        assert_non_null(strstr(lg_last_error(), "data set (unnamed) has no training nodes"));
        ds->n_train = n_train;
        ds->name = name;
        lg_dataset_free(ds);
    }
    /* flags are 0 or 1 */
    lg_model_config_default(&mc, LG_MODEL_GAT);
    int *mflags[] = {&mc.residual, &mc.self_loops, &mc.feature_norm_row};
    for (size_t k = 0; k < sizeof mflags / sizeof *mflags; k++) {
        const int keep = *mflags[k];
        *mflags[k] = 9;
        assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
        assert_non_null(strstr(lg_last_error(), "must be 0 or 1, not 9"));
        *mflags[k] = keep;
    }
    lg_model_config_default(&mc, LG_MODEL_GT);
    mc.gate = 2;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    lg_train_config_default(&tc);
    tc.plateau = 7;
    assert_int_equal(lg_train_config_check(&tc), LG_EINVAL);
    tc.plateau = 0;
    tc.stop_on_explosion = -3;
    assert_int_equal(lg_train_config_check(&tc), LG_EINVAL);
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
    assert_ok(lg_model_config_check(&mc));
    lg_model_config_default(&mc, LG_MODEL_GCN);
    mc.node_norm = LG_NODE_NORM_LAYERNORM;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    /* --residual where no layer's widths match: refused, not silently ignored */
    lg_model_config_default(&mc, LG_MODEL_GCN);
    mc.residual = 1;
    for (int layers = 1; layers <= 2; layers++) {
        mc.layers = layers;
        assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
        assert_non_null(strstr(lg_last_error(), "no hidden-to-hidden layer"));
    }
    mc.layers = 3;
    assert_ok(lg_model_config_check(&mc));
    lg_model_config_default(&mc, LG_MODEL_GAT_CLASSIC);
    mc.residual = 1;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    /* heads x hidden beyond the attention layers' limit: refused in the options' terms */
    lg_model_config_default(&mc, LG_MODEL_GT);
    mc.hidden = 65536;
    mc.heads = 256;
    assert_ok(lg_model_config_check(&mc)); /* 2^24 exactly */
    mc.heads = 257;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "--hidden 65536 x --heads 257"));
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
    /* l2: parsed, named, self-loops required, no LipschitzNorm */
    assert_ok(lg_model_kind_parse("l2", &k));
    assert_int_equal(k, LG_MODEL_L2);
    assert_string_equal(lg_model_kind_name(k), "l2");
    lg_model_config_default(&mc, LG_MODEL_L2);
    assert_true(mc.self_loops && mc.att_dropout == 0 && mc.layers == 10);
    assert_ok(lg_model_config_check(&mc));
    mc.att_norm = LG_ATT_NORM_LIPSCHITZ;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "l2"));
    mc.att_norm = LG_ATT_NORM_NONE;
    mc.self_loops = 0;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "self-loops"));
    lg_model_config_default(&mc, LG_MODEL_GCNII);
    assert_int_equal(mc.layers, 64);
    assert_true(mc.alpha == 0.1 && mc.lambda == 0.5 && mc.dropout == 0.6);
    mc.lambda = 2;
    assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    lg_model_config_default(&mc, LG_MODEL_GCN);
    assert_true(mc.layers == 2 && mc.hidden == 16 && mc.self_loops && mc.feature_norm_row);
    /* --init: glorot by default; pytorch for gat and gt only; names both ways */
    lg_init in;
    assert_ok(lg_init_parse("pytorch", &in));
    assert_int_equal(in, LG_INIT_PYTORCH);
    assert_ok(lg_init_parse("glorot", &in));
    assert_int_equal(in, LG_INIT_GLOROT);
    assert_int_equal(lg_init_parse("xavier", &in), LG_EINVAL);
    assert_int_equal(lg_init_parse(NULL, &in), LG_EINVAL);
    assert_string_equal(lg_init_name(LG_INIT_PYTORCH), "pytorch");
    assert_string_equal(lg_init_name((lg_init)9), "?");
    for (int kind = 0; kind < LG_MODEL_COUNT; kind++) {
        lg_model_config_default(&mc, (lg_model_kind)kind);
        assert_int_equal(mc.init, LG_INIT_GLOROT);
        mc.init = LG_INIT_PYTORCH;
        if (kind == LG_MODEL_GAT || kind == LG_MODEL_GT) assert_ok(lg_model_config_check(&mc));
        else {
            assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
            assert_non_null(strstr(lg_last_error(), "--init pytorch"));
        }
        mc.init = (lg_init)5;
        assert_int_equal(lg_model_config_check(&mc), LG_EINVAL);
    }
}

/* --init pytorch (the LipschitzNorm authors' code): the input and output
 * linears get nn.Linear's U(+-1/sqrt(fan in)) weights and biases, and so do
 * GT's layers; GAT's layers keep Glorot and zero biases (GATConv). Glorot
 * leaves every bias at zero. The scheme travels with a checkpoint. */
static void test_init_pytorch(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(40, 30, 3, 0, 12);
    const lg_idx F = 30, H = 8;
    for (int kind = 0; kind < 2; kind++) {
        lg_model_config mc;
        lg_train_config tc;
        small_config(&mc, &tc);
        mc.kind = kind ? LG_MODEL_GT : LG_MODEL_GAT;
        mc.self_loops = !kind;
        mc.dropout = 0.5;
        mc.hidden = H;
        const lg_idx D = H * mc.heads;
        double in_b[2] = {0, 0}, out_b[2] = {0, 0}, lay_b[2] = {0, 0}, in_w[2] = {0, 0};
        for (int s = 0; s < 2; s++) {
            mc.init = s ? LG_INIT_PYTORCH : LG_INIT_GLOROT;
            assert_ok(lg_model_config_check(&mc));
            lg__model_f32 *m = NULL;
            lg_rng rng;
            lg_rng_seed(&rng, 5);
            assert_ok(lg__model_init_f32(&m, &mc, ds, ds->features, &rng));
            const float *p = lg__model_params_f32(m);
            const lg_idx np = lg__model_nparams_f32(m);
            for (lg_idx k = 0; k < F * H; k++) in_w[s] = fmax(in_w[s], fabs(p[k]));
            for (lg_idx k = 0; k < H; k++) in_b[s] = fmax(in_b[s], fabs(p[F * H + k]));
            for (lg_idx k = np - 3; k < np; k++) out_b[s] = fmax(out_b[s], fabs(p[k]));
            /* layer 1 (D wide in): its bias block, GT's [bq|bk|bv|bskip] after
             * W (D x 4D); GAT's bias is the block's last D values before its
             * LayerNorm (none here) */
            lg__layer_range r = lg__model_layer_range_f32(m, 1);
            const lg_idx b0 = kind ? r.off + D * 4 * D : r.off + r.len - D, nb = kind ? 4 * D : D;
            for (lg_idx k = b0; k < b0 + nb; k++) lay_b[s] = fmax(lay_b[s], fabs(p[k]));
            lg__model_free_f32(m);
        }
        assert_true(in_b[0] == 0 && out_b[0] == 0 && lay_b[0] == 0);   /* Glorot: zero biases */
        assert_true(in_w[0] <= sqrt(6.0 / (double)(F + H)) && in_w[0] > 0.8 * sqrt(6.0 / (double)(F + H)));
        assert_true(in_w[1] <= 1 / sqrt((double)F) && in_w[1] > 0.8 / sqrt((double)F));
        assert_true(in_b[1] > 0 && in_b[1] <= 1 / sqrt((double)F));
        assert_true(out_b[1] > 0 && out_b[1] <= 1 / sqrt((double)D));
        if (kind) assert_true(lay_b[1] > 0.5 / sqrt((double)D) && lay_b[1] <= 1 / sqrt((double)D));
        else assert_true(lay_b[1] == 0); /* GAT's layers: Glorot, zero bias, whatever the scheme */
        /* the checkpoint keeps the scheme */
        char path[] = "/tmp/lg_init_XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        tc.epochs = 1;
        lg_trainer *t = NULL;
        assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
        assert_ok(lg_trainer_save(t, path));
        lg_trainer_free(t);
        lg_model_config mc2;
        lg_train_config tc2;
        assert_ok(lg_checkpoint_config(path, &mc2, &tc2));
        assert_int_equal(mc2.init, LG_INIT_PYTORCH);
        unlink(path);
    }
    lg_dataset_free(ds);
}


/* ---- mini-batches of trees ---- */


static void trees_config(lg_model_config *mc, lg_train_config *tc, int depth, int batch) {
    lg_model_config_default(mc, LG_MODEL_GAT);
    mc->layers = depth + 1;
    mc->hidden = 8;
    mc->heads = 2;
    mc->att_norm = LG_ATT_NORM_LIPSCHITZ;
    mc->node_norm = LG_NODE_NORM_PAIRNORM;
    mc->residual = 1;
    mc->dropout = 0.2;
    mc->att_dropout = 0.1;
    lg_train_config_default(tc);
    tc->seed = 9;
    tc->lr = 0.01;
    tc->batch_size = batch;
}

/* Records epoch e: losses[e] = the training pass's loss, evals[4e..4e+3] =
 * train loss and accuracy, test loss and accuracy (either may be NULL). */
static void record(const lg_epoch_stats *es, int e, double *losses, double *evals) {
    if (losses) losses[e] = es->train_loss_step;
    if (evals) {
        evals[4 * e] = es->train_loss;
        evals[4 * e + 1] = es->train_acc;
        evals[4 * e + 2] = es->test_loss;
        evals[4 * e + 3] = es->test_acc;
    }
}

/* Both trainers predict the same bits for every node of ds. */
static void assert_same_predictions(lg_trainer *a, lg_trainer *b, const lg_dataset *ds) {
    lg_idx n = ds->graph->n, C = ds->n_classes;
    float *pa = malloc(sizeof(float) * (size_t)(n * C)), *pb = malloc(sizeof(float) * (size_t)(n * C));
    assert_ok(lg_trainer_predict(a, pa, NULL));
    assert_ok(lg_trainer_predict(b, pb, NULL));
    assert_memory_equal(pa, pb, sizeof(float) * (size_t)(n * C));
    free(pa);
    free(pb);
}

/* Runs epochs epochs; losses, evals as record(); norms[e*L + l] = grad norm. */
static lg_trainer *run_norms(const lg_dataset *ds, const lg_model_config *mc, const lg_train_config *tc, int epochs,
                             double *losses, double *evals, double *norms) {
    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, mc, tc, ds));
    lg_epoch_stats es;
    for (int e = 0; e < epochs; e++) {
        assert_ok(lg_trainer_epoch(t, &es));
        record(&es, e, losses, evals);
        if (norms)
            for (int l = 0; l < es.layers; l++) {
                norms[e * es.layers + l] = es.grad_norm[l];
                assert_true(isfinite(es.grad_norm[l]) && es.grad_norm[l] > 0);
            }
    }
    return t;
}

/* Batch training is deterministic: same seed, same bits (losses, norms,
 * evaluation, predictions); another seed or batch size, another run. */
static void test_batch_deterministic(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_trees(2, 60, 3);
    lg_model_config mc;
    lg_train_config tc;
    trees_config(&mc, &tc, 2, 7);
    enum { E = 6, L = 3 };
    double l1[E], l2[E], l3[E], v1[4 * E], v2[4 * E], n1[E * L], n2[E * L];
    lg_trainer *a = run_norms(ds, &mc, &tc, E, l1, v1, n1), *b = run_norms(ds, &mc, &tc, E, l2, v2, n2);
    assert_memory_equal(l1, l2, sizeof l1);
    assert_memory_equal(v1, v2, sizeof v1);
    assert_memory_equal(n1, n2, sizeof n1);
    assert_same_predictions(a, b, ds);
    lg_trainer_free(b);
    /* the training changed something, and every batch took a step: the loss moved */
    assert_true(l1[E - 1] != l1[0]);
    tc.seed = 10;
    b = run_norms(ds, &mc, &tc, E, l3, NULL, NULL);
    assert_true(memcmp(l1, l3, sizeof l1) != 0);
    lg_trainer_free(b);
    tc.seed = 9;
    tc.batch_size = 5;
    b = run_norms(ds, &mc, &tc, E, l3, NULL, NULL);
    assert_true(memcmp(l1, l3, sizeof l1) != 0);
    lg_trainer_free(b);
    lg_trainer_free(a);
    lg_dataset_free(ds);
}

/* Relative difference, with a floor for values near 0. */
static double rel(double a, double b) { return fabs(a - b) / fmax(1e-3, fmax(fabs(a), fabs(b))); }

/* A one-tree data set: batches of 1 tree and the full-batch path are the same
 * computation (same graph, same dropout streams, same Adam steps) except that
 * the batch model reads out the root alone (a product over 1 row instead of
 * 15, rounded differently): the same losses, norms, accuracies and
 * predictions up to rounding. And one batch holding every training tree (no
 * dropout) gives the full-batch loss and gradient norms up to rounding. */
static void test_batch_matches_full(void **state) {
    (void)state;
    enum { E = 5, L = 4 };
    lg_model_config mc;
    lg_train_config tc;
    lg_dataset *one = lg_test_trees(3, 1, 4);
    assert_int_equal(one->n_train, 1);
    trees_config(&mc, &tc, 3, 0);
    double lf[E], lb[E], vf[4 * E], vb[4 * E], nf[E * L], nb[E * L];
    lg_trainer *f = run_norms(one, &mc, &tc, E, lf, vf, nf);
    tc.batch_size = 1;
    lg_trainer *b = run_norms(one, &mc, &tc, E, lb, vb, nb);
    for (int e = 0; e < E; e++) {
        assert_true(rel(lf[e], lb[e]) < 1e-5);
        for (int k = 0; k < 4; k++) assert_true(rel(vf[4 * e + k], vb[4 * e + k]) < 1e-5);
        for (int l = 0; l < L; l++) assert_true(rel(nf[e * L + l], nb[e * L + l]) < 1e-4);
    }
    assert_true(lf[E - 1] != lf[0]); /* it trained */
    float pf[15 * 8], pb[15 * 8];
    assert_ok(lg_trainer_predict(f, pf, NULL));
    assert_ok(lg_trainer_predict(b, pb, NULL));
    for (int k = 0; k < 15 * 8; k++) assert_true(fabs(pf[k] - pb[k]) < 1e-4);
    lg_trainer_free(f);
    lg_trainer_free(b);
    lg_dataset_free(one);

    lg_dataset *ds = lg_test_trees(3, 40, 5);
    trees_config(&mc, &tc, 3, 0);
    mc.dropout = mc.att_dropout = 0;
    f = run_norms(ds, &mc, &tc, 1, lf, vf, nf);
    tc.batch_size = (int)ds->n_train;
    b = run_norms(ds, &mc, &tc, 1, lb, vb, nb);
    assert_true(fabs(lf[0] - lb[0]) <= 1e-6 * fabs(lf[0]));
    for (int l = 0; l < L; l++) assert_true(fabs(nf[l] - nb[l]) <= 1e-4 * fabs(nf[l]));
    for (int k = 0; k < 4; k++) assert_true(fabs(vf[k] - vb[k]) <= 1e-5 * fmax(1e-3, fabs(vf[k])));
    lg_trainer_free(f);
    lg_trainer_free(b);
    lg_dataset_free(ds);
}

/* The loss and the accuracy are taken at the roots only: labels given to
 * every other node change nothing, and the reported loss is the mean NLL of
 * the training roots in the predictions. */
static void test_batch_roots_only(void **state) {
    (void)state;
    enum { E = 3 };
    lg_dataset *ds = lg_test_trees(2, 50, 6);
    lg_model_config mc;
    lg_train_config tc;
    trees_config(&mc, &tc, 2, 8);
    double l1[E], l2[E], v1[4 * E], v2[4 * E];
    lg_trainer *a = run_norms(ds, &mc, &tc, E, l1, v1, NULL);
    lg_idx n = ds->graph->n, C = ds->n_classes;
    float *lp = malloc(sizeof(float) * (size_t)(n * C));
    assert_ok(lg_trainer_predict(a, lp, NULL));
    double sum = 0;
    lg_idx right = 0;
    for (lg_idx k = 0; k < ds->n_train; k++) {
        lg_idx r = ds->train[k];
        assert_int_equal(r, ds->roots[r / 7]); /* a root */
        sum -= lp[r * C + ds->labels[r]];
        lg_idx best = 0;
        for (lg_idx c = 1; c < C; c++)
            if (lp[r * C + c] > lp[r * C + best]) best = c;
        right += best == ds->labels[r];
    }
    assert_true(fabs(v1[4 * (E - 1)] - sum / (double)ds->n_train) <= 1e-6 * fabs(v1[4 * (E - 1)]));
    assert_true(v1[4 * (E - 1) + 1] == (double)right / (double)ds->n_train);
    /* label every non-root node (a loss over all nodes would change) */
    for (lg_idx i = 0; i < n; i++)
        if (ds->labels[i] < 0) ds->labels[i] = (int32_t)(i % C);
    lg_trainer *b = run_norms(ds, &mc, &tc, E, l2, v2, NULL);
    assert_memory_equal(l1, l2, sizeof l1);
    assert_memory_equal(v1, v2, sizeof v1);
    free(lp);
    lg_trainer_free(a);
    lg_trainer_free(b);
    lg_dataset_free(ds);
}

/* The batch model (read-out rows, borrowed batch graphs) against central
 * differences, in double, on a batch of 3 trees out of 6. */
static void test_batch_model_gradients(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_trees(2, 6, 12);
    struct { lg_model_kind kind; lg_att_norm att; lg_node_norm node; int residual; } cases[] = {
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_PAIRNORM, 1},
        {LG_MODEL_GAT, LG_ATT_NORM_NONE, LG_NODE_NORM_NONE, 0},
        {LG_MODEL_GAT_CLASSIC, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_NONE, 0},
        {LG_MODEL_GT, LG_ATT_NORM_LIPSCHITZ, LG_NODE_NORM_LAYERNORM, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int corrupt = 0; corrupt < 2; corrupt++) {
            lg_model_config mc;
            lg_model_config_default(&mc, cases[c].kind);
            mc.att_norm = cases[c].att;
            mc.node_norm = cases[c].node;
            mc.residual = cases[c].residual;
            mc.hidden = 3;
            mc.heads = 2;
            if (mc.kind != LG_MODEL_GAT_CLASSIC) mc.layers = 3;
            mc.dropout = 0.3;
            mc.att_dropout = 0.2;
            double worst;
            lg_idx batch_nodes;
            int bad = lg_test_batch_model_fd(&mc, ds, 1e-5, &worst, corrupt, &batch_nodes);
            assert_true(batch_nodes == 21);
            if (!corrupt && bad)
                fail_msg("batch case %zu (%s): %d gradients differ from central differences (worst %.3g)", c,
                         lg_model_kind_name(mc.kind), bad, worst);
            if (corrupt) assert_true(bad >= 1); /* the check catches a wrong gradient */
            else print_message("batch case %zu: worst relative error %.2e\n", c, worst);
        }
    lg_dataset_free(ds);
}

/* Binding a mini-batch builds the edge map that the attention layers borrow
 * (att_cache.h) and checks the batch's transposed graph on the way: a batch
 * whose gT is not its graph's transpose is refused, and the model then binds
 * a good one. */
static void test_batch_bind_checks_transpose(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_trees(2, 6, 12);
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_GAT);
    mc.att_norm = LG_ATT_NORM_LIPSCHITZ;
    mc.layers = 3;
    mc.hidden = 3;
    lg__batcher b;
    assert_ok(lg__batcher_init(&b, ds, ds->features, &mc, 3, 0));
    lg__batch bt;
    lg__batcher_fill(&b, 0, 0, 0, &bt);
    const lg_idx cap[3] = {b.n_cap, b.nnz_cap, b.t_cap};
    lg__model_f64 *m = NULL;
    lg_rng r;
    lg_rng_seed(&r, 5);
    assert_ok(lg__model_init_batch_f64(&m, &mc, ds, ds->features, cap, &r));
    /* a copy of gT with the first row of two or more entries reversed */
    const lg_graph *gT = bt.gT;
    lg_idx *jb = malloc(sizeof(lg_idx) * (size_t)gT->nnz), row = -1;
    assert_non_null(jb);
    memcpy(jb, gT->j, sizeof(lg_idx) * (size_t)gT->nnz);
    for (lg_idx i = 0; i < gT->n && row < 0; i++)
        if (gT->p[i + 1] - gT->p[i] >= 2) row = i;
    assert_true(row >= 0);
    lg_idx t = jb[gT->p[row]];
    jb[gT->p[row]] = jb[gT->p[row + 1] - 1];
    jb[gT->p[row + 1] - 1] = t;
    lg_graph bad = {gT->n, gT->nnz, gT->p, jb};
    lg__batch bb = bt;
    bb.gT = &bad;
    assert_int_equal(lg__model_bind_f64(m, &bb), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "transpose"));
    assert_ok(lg__model_bind_f64(m, &bt));
    free(jb);
    lg__model_free_f64(m);
    lg__batcher_destroy(&b);
    lg_dataset_free(ds);
}

static char *tmp_path(void) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/lg_batch_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    return path;
}

/* Save after 3 epochs, load into a new trainer, 5 more: the same bits as 8 in
 * a row. A checkpoint of another batch size is refused. */
static void test_batch_resume(void **state) {
    (void)state;
    enum { E = 8 };
    lg_dataset *ds = lg_test_trees(2, 45, 7);
    lg_model_config mc;
    lg_train_config tc;
    trees_config(&mc, &tc, 2, 6);
    tc.plateau = 1;
    double straight[E], resumed[E], vs[4 * E], vr[4 * E];
    lg_trainer *a = run_norms(ds, &mc, &tc, E, straight, vs, NULL);
    lg_trainer *b = run_norms(ds, &mc, &tc, 3, resumed, vr, NULL);
    const char *path = tmp_path();
    assert_ok(lg_trainer_save(b, path));
    lg_trainer_free(b);
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_ok(lg_trainer_load(b, path));
    lg_epoch_stats es;
    for (int e = 3; e < E; e++) {
        assert_ok(lg_trainer_epoch(b, &es));
        record(&es, e, resumed, vr);
    }
    assert_memory_equal(straight, resumed, sizeof straight);
    assert_memory_equal(vs, vr, sizeof vs);
    assert_same_predictions(a, b, ds);
    lg_trainer_free(b);
    lg_train_config other = tc;
    other.batch_size = 5;
    assert_ok(lg_trainer_init(&b, &mc, &other, ds));
    assert_int_equal(lg_trainer_load(b, path), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "--batch-size 6"));
    lg_trainer_free(b);

    /* a checkpoint of the first format (lipgnn 0.1.0 before the baselines'
     * and the mini-batch fields: the configurations below, frozen) is a
     * full-batch one */
    struct {
        lg_model_kind kind;
        int layers, hidden, heads;
        lg_att_norm att_norm;
        lg_node_norm node_norm;
        int residual;
        double lip_scale;
        int gate;
        double dropout, att_dropout;
        int self_loops, feature_norm_row;
    } m0 = {mc.kind, mc.layers, mc.hidden, mc.heads, mc.att_norm, mc.node_norm, mc.residual, mc.lip_scale,
            mc.gate, mc.dropout, mc.att_dropout, mc.self_loops, mc.feature_norm_row};
    struct {
        int epochs;
        double lr, weight_decay;
        int plateau, patience;
        uint64_t seed;
        double missing, explode_threshold, explode_growth;
        int explode_window, stop_on_explosion;
    } t0 = {tc.epochs, tc.lr, tc.weight_decay, tc.plateau, tc.patience, tc.seed, tc.missing, tc.explode_threshold,
            tc.explode_growth, tc.explode_window, tc.stop_on_explosion};
    lg_ckpt *ck = NULL;
    assert_ok(lg__ckpt_load(&ck, path));
    lg_ckpt_section sec[16];
    assert_true(ck->count <= 16);
    for (uint32_t k = 0; k < ck->count; k++) {
        sec[k] = ck->sections[k];
        if (sec[k].tag == 1) { sec[k].length = sizeof m0; sec[k].data = &m0; }
        if (sec[k].tag == 2) { sec[k].length = sizeof t0; sec[k].data = &t0; }
    }
    assert_ok(lg__ckpt_save(path, sec, ck->count, -1));
    lg__ckpt_free(ck);
    lg_model_config mc2;
    lg_train_config tc2;
    assert_ok(lg_checkpoint_config(path, &mc2, &tc2));
    assert_int_equal(tc2.batch_size, 0);
    assert_true(tc2.seed == tc.seed && tc2.lr == tc.lr && tc2.layer_weight_decay < 0);
    assert_true(mc2.kind == mc.kind && mc2.layers == mc.layers && mc2.hidden == mc.hidden && mc2.heads == mc.heads);
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_int_equal(lg_trainer_load(b, path), LG_EINVAL); /* batch 6 vs 0 */
    lg_trainer_free(b);
    tc2 = tc;
    tc2.batch_size = 0;
    assert_ok(lg_trainer_init(&b, &mc, &tc2, ds));
    assert_ok(lg_trainer_load(b, path));
    assert_int_equal(lg_trainer_epochs_done(b), 3);
    lg_trainer_free(b);
    unlink(path);
    lg_trainer_free(a);
    lg_dataset_free(ds);
}

static void count_batches(void *ctx, long done, long total) {
    long *c = ctx;
    assert_int_equal(done, c[0] + 1); /* one call per batch, in order */
    c[0] = done;
    c[1] = total;
}

/* The progress hook: called after every batch, training then evaluation. */
static void test_batch_progress(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_trees(2, 30, 3); /* 24 training trees, 6 test trees */
    lg_model_config mc;
    lg_train_config tc;
    trees_config(&mc, &tc, 2, 5);
    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    long c[2] = {0, 0};
    lg_trainer_set_progress(t, count_batches, c);
    lg_epoch_stats es;
    assert_ok(lg_trainer_epoch(t, &es));
    assert_int_equal(c[0], 5 + 5 + 2); /* 5 training batches, evaluation: 5 + 2 */
    assert_int_equal(c[1], 12);
    c[0] = 0;
    assert_ok(lg_trainer_epoch(t, &es));
    assert_int_equal(c[0], 12);
    lg_trainer_free(t);
    lg_dataset_free(ds);
}

/* Batch mode refuses what it cannot do: a negative batch size, a data set
 * whose graphs are joined by an edge; a batch trainer has no whole-graph
 * attention. */
static void test_batch_errors(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_trees(2, 10, 8);
    lg_model_config mc;
    lg_train_config tc;
    trees_config(&mc, &tc, 2, -1);
    lg_trainer *t = NULL;
    assert_int_equal(lg_trainer_init(&t, &mc, &tc, ds), LG_EINVAL);
    assert_null(t);
    assert_non_null(strstr(lg_last_error(), "--batch-size"));
    tc.batch_size = 3;
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    assert_null(lg_trainer_graph(t));
    float att[64];
    assert_int_equal(lg_trainer_attention(t, 0, att), LG_EUNSUPPORTED);
    lg_trainer_free(t);
    /* an edge from tree 1's root into tree 0 */
    lg_graph *g = ds->graph;
    lg_idx *src = malloc(sizeof(lg_idx) * (size_t)(g->nnz + 1)), *dst = malloc(sizeof(lg_idx) * (size_t)(g->nnz + 1));
    lg_idx m = 0;
    for (lg_idx i = 0; i < g->n; i++)
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) { src[m] = g->j[e]; dst[m++] = i; }
    src[m] = ds->roots[1];
    dst[m++] = 3;
    lg_graph *h = NULL;
    assert_ok(lg_graph_from_edges(&h, g->n, m, src, dst, 0));
    ds->graph = h;
    assert_int_equal(lg_trainer_init(&t, &mc, &tc, ds), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "joins two graphs"));
    lg_trainer_mem est;
    assert_int_equal(lg_trainer_estimate(&mc, &tc, ds, &est), LG_EINVAL);
    tc.batch_size = 0; /* full batch does not care */
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    lg_trainer_free(t);
    ds->graph = g;
    lg_graph_free(h);
    free(src);
    free(dst);
    lg_dataset_free(ds);
}

/* A data set made or changed by hand: lg_trainer_init and lg_trainer_estimate
 * check its graph and features before reading them, each fault LG_EINVAL
 * (they were read out of bounds, or the first epoch found a bad column). */
static void test_init_checks_dataset(void **state) {
    (void)state;
    lg_model_config mc;
    lg_train_config tc;
    lg_model_config_default(&mc, LG_MODEL_GAT);
    lg_train_config_default(&tc);
    mc.layers = 2;
    mc.hidden = 4;
    tc.epochs = 1;
    lg_trainer_mem est;
    for (int sparse = 0; sparse < 2; sparse++) {
        lg_dataset *ds = lg_test_random_dataset(40, 6, 3, sparse, 7);
        lg_graph *g = ds->graph;
        lg_features *x = ds->features;
        lg_trainer *t = NULL;
        assert_ok(lg_trainer_init(&t, &mc, &tc, ds)); /* as made: fine */
        lg_trainer_free(t);
        t = NULL;
        assert_true(g->nnz > 2);
        const lg_idx j0 = g->j[0], p1 = g->p[1];
        g->j[0] = 100000; /* a node id out of range */
        assert_int_equal(lg_trainer_init(&t, &mc, &tc, ds), LG_EINVAL);
        assert_null(t);
        assert_non_null(strstr(lg_last_error(), "lg_trainer_init: the data set's graph"));
        assert_int_equal(lg_trainer_estimate(&mc, &tc, ds, &est), LG_EINVAL);
        g->j[0] = j0;
        g->p[1] = g->nnz + 50; /* a row past the edges */
        assert_int_equal(lg_trainer_init(&t, &mc, &tc, ds), LG_EINVAL);
        assert_int_equal(lg_trainer_estimate(&mc, &tc, ds, &est), LG_EINVAL);
        g->p[1] = p1;
        const lg_feat_kind kind = x->kind;
        x->kind = (lg_feat_kind)7;
        assert_int_equal(lg_trainer_init(&t, &mc, &tc, ds), LG_EINVAL);
        assert_non_null(strstr(lg_last_error(), "unknown feature storage 7"));
        x->kind = kind;
        float *vals = x->x;
        x->x = NULL;
        assert_int_equal(lg_trainer_init(&t, &mc, &tc, ds), LG_EINVAL);
        x->x = vals;
        if (sparse) {
            assert_true(x->nnz > 0);
            const lg_idx c0 = x->j[0];
            x->j[0] = x->d; /* a column out of range: refused at init, not at the first epoch */
            assert_int_equal(lg_trainer_init(&t, &mc, &tc, ds), LG_EINVAL);
            assert_non_null(strstr(lg_last_error(), "outside [0, 6)"));
            x->j[0] = c0;
        } else {
            x->nnz--;
            assert_int_equal(lg_trainer_init(&t, &mc, &tc, ds), LG_EINVAL);
            x->nnz++;
        }
        x->n--; /* rows for another node count */
        assert_int_equal(lg_trainer_init(&t, &mc, &tc, ds), LG_EINVAL);
        x->n++;
        assert_null(t);
        assert_ok(lg_trainer_init(&t, &mc, &tc, ds)); /* mended: fine again */
        lg_trainer_free(t);
        lg_dataset_free(ds);
    }
}

/* The estimate for (mc, tc, ds) equals what lg_trainer_init allocates; returns
 * the trainer (caller frees) and the estimate. */
static lg_trainer *estimate_equals_memory(const lg_model_config *mc, const lg_train_config *tc, const lg_dataset *ds,
                                          lg_trainer_mem *est) {
    lg_trainer_mem got;
    assert_ok(lg_trainer_estimate(mc, tc, ds, est));
    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, mc, tc, ds));
    lg_trainer_memory(t, &got);
    assert_int_equal(est->params, got.params);
    assert_int_equal(est->activations, got.activations);
    assert_int_equal(est->workspace, got.workspace);
    assert_int_equal(est->other, got.other);
    assert_int_equal(est->total, got.total);
    assert_true(est->total > est->params && est->activations > 0);
    return t;
}

/* The estimate equals what the trainer allocates, for every model kind, on a
 * directed graph (sp) and a symmetric one (de: one graph and edge map less). */
static void test_memory_estimate(void **state) {
    (void)state;
    lg_dataset *sp = lg_test_random_dataset(40, 9, 3, 1, 8), *de = lg_test_random_dataset(40, 9, 3, 0, 9);
    lg_test_symmetrize(de);
    struct { lg_model_kind k; lg_node_norm nn; int residual; } cases[] = {
        {LG_MODEL_GAT, LG_NODE_NORM_PAIRNORM, 1}, {LG_MODEL_GT, LG_NODE_NORM_LAYERNORM, 1},
        {LG_MODEL_GAT_CLASSIC, LG_NODE_NORM_NONE, 0}, {LG_MODEL_GAT, LG_NODE_NORM_NONE, 0},
        {LG_MODEL_GCN, LG_NODE_NORM_PAIRNORM, 0}, {LG_MODEL_GIN, LG_NODE_NORM_NONE, 1},
        {LG_MODEL_GGNN, LG_NODE_NORM_NONE, 0}, {LG_MODEL_GCNII, LG_NODE_NORM_PAIRNORM, 0},
        {LG_MODEL_L2, LG_NODE_NORM_NONE, 0}, {LG_MODEL_L2, LG_NODE_NORM_PAIRNORM, 1}};
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
            lg_trainer_mem est;
            lg_trainer_free(estimate_equals_memory(&mc, &tc, d ? de : sp, &est));
        }
    lg_dataset_free(sp);
    lg_dataset_free(de);
    /* gat-classic and gcn never compute the gradient of their input features:
     * no backward buffer is as wide as them (400 features, hidden 8 x 2) */
    lg_dataset *wide = lg_test_random_dataset(40, 400, 3, 0, 10);
    for (int k = 0; k < 2; k++) {
        lg_model_config mc;
        lg_train_config tc;
        small_config(&mc, &tc);
        lg_model_config_default(&mc, k ? LG_MODEL_GCN : LG_MODEL_GAT_CLASSIC);
        lg_trainer_mem est;
        lg_trainer *t = estimate_equals_memory(&mc, &tc, wide, &est);
        assert_true(est.workspace < sizeof(float) * 40 * 400);
        lg_epoch_stats es;
        assert_ok(lg_trainer_epoch(t, &es));
        lg_trainer_free(t);
    }
    lg_dataset_free(wide);
    /* mini-batches of trees: every model kind, batch sizes 1, 7 and more
     * than the trees; a batch of 7 needs less than the whole forest */
    lg_dataset *tr = lg_test_trees(3, 30, 1);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int bs = 0; bs < 4; bs++) {
            static const int sizes[4] = {0, 1, 7, 100};
            lg_model_config mc;
            lg_train_config tc;
            trees_config(&mc, &tc, 3, sizes[bs]);
            lg_model_config_default(&mc, cases[c].k);
            mc.node_norm = cases[c].nn;
            mc.residual = cases[c].residual;
            lg_trainer_mem est, full;
            lg_trainer *t = estimate_equals_memory(&mc, &tc, tr, &est);
            lg_epoch_stats es;
            assert_ok(lg_trainer_epoch(t, &es));
            lg_trainer_free(t);
            tc.batch_size = 0;
            assert_ok(lg_trainer_estimate(&mc, &tc, tr, &full));
            if (sizes[bs] == 7) assert_true(est.activations * 3 < full.activations);
        }
    lg_dataset_free(tr);
}

/* lg_trainer_act_rms after lg_trainer_predict: the first value is the RMS
 * per node of the features (gat-classic, no row normalisation), the last the
 * RMS of the last hidden representation lg_trainer_predict returns (DeepGAT);
 * arguments checked, mini-batch trainers refused. */
static void test_act_rms(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(50, 7, 3, 1, 31);
    for (int k = 0; k < 2; k++) {
        lg_model_config mc;
        lg_train_config tc;
        small_config(&mc, &tc);
        if (k == 0) {
            lg_model_config_default(&mc, LG_MODEL_GAT_CLASSIC);
            mc.feature_norm_row = 0;
        }
        lg_trainer *t = NULL;
        assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
        const int L = lg_trainer_layers(t);
        const lg_idx n = ds->graph->n, H = lg_trainer_hidden_width(t);
        if (k == 0) { /* gat-classic: 8 heads, then 1; 0 for a layer outside [0, L) */
            assert_int_equal(L, 2);
            assert_int_equal(lg_trainer_layer_heads(t, 0), 8);
            assert_int_equal(lg_trainer_layer_heads(t, 1), 1);
            assert_int_equal(lg_trainer_layer_heads(t, 2), 0);
            assert_int_equal(lg_trainer_layer_heads(t, -1), 0);
        }
        double rms[16];
        float *hid = malloc(sizeof(float) * (size_t)(n * H));
        assert_non_null(hid);
        assert_ok(lg_trainer_predict(t, NULL, hid));
        assert_int_equal(lg_trainer_act_rms(t, rms, L), LG_EINVAL);
        assert_int_equal(lg_trainer_act_rms(t, NULL, 16), LG_EINVAL);
        assert_int_equal(lg_trainer_act_rms(NULL, rms, 16), LG_EINVAL);
        assert_ok(lg_trainer_act_rms(t, rms, L + 1));
        double s = 0;
        if (k == 0) {
            const lg_features *f = ds->features;
            for (lg_idx e = 0; e < f->nnz; e++) s += (double)f->x[e] * f->x[e];
            assert_true(fabs(rms[0] - sqrt(s / (double)n)) <= 1e-6 * rms[0]);
        } else {
            for (lg_idx e = 0; e < n * H; e++) s += (double)hid[e] * hid[e];
            assert_true(fabs(rms[L] - sqrt(s / (double)n)) <= 1e-6 * rms[L]);
        }
        for (int l = 0; l <= L; l++) assert_true(isfinite(rms[l]) && rms[l] > 0);
        free(hid);
        lg_trainer_free(t);
    }
    lg_dataset_free(ds);
    lg_dataset *tr = lg_test_trees(3, 30, 1);
    lg_model_config mc;
    lg_train_config tc;
    trees_config(&mc, &tc, 3, 7);
    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, &mc, &tc, tr));
    double rms[16];
    assert_int_equal(lg_trainer_act_rms(t, rms, 16), LG_EUNSUPPORTED);
    lg_trainer_free(t);
    lg_dataset_free(tr);
}

/* lg_trainer_params: the block's layout as train.h states it (the input
 * linear, the layers' ranges end to end, the output linear), the grad log's
 * 'all' norm of each layer as the norm of its range of the gradients;
 * lg_trainer_set_params: a trainer given another's parameters runs the same
 * epoch, bit for bit, and bad arguments change nothing. */
static void test_params(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(50, 7, 3, 1, 32);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    mc.dropout = 0, mc.att_dropout = 0; /* the seed then sets the parameters alone */
    lg_trainer *a = NULL, *b = NULL, *c = NULL;
    assert_ok(lg_trainer_init(&a, &mc, &tc, ds));
    const float *p = NULL, *g = NULL;
    lg_idx n = 0, off = 0, len = 0;
    assert_ok(lg_trainer_params(a, &p, &g, &n));
    assert_non_null(p);
    assert_non_null(g);
    lg_train_summary s;
    lg_trainer_summary(a, &s);
    assert_int_equal(n, s.n_params);
    const int L = lg_trainer_layers(a);
    const lg_idx F = ds->features->d, H = lg_trainer_hidden_width(a), C = lg_trainer_classes(a);
    lg_idx end = F * mc.hidden + mc.hidden; /* after the input linear's W and b */
    for (int l = 0; l < L; l++) {
        assert_ok(lg_trainer_layer_params(a, l, &off, &len));
        assert_int_equal(off, end);
        assert_true(len > 0);
        end = off + len;
    }
    assert_int_equal(n, end + H * C + C); /* the output linear's W and b */
    float *p0 = malloc(sizeof(float) * (size_t)n);
    assert_non_null(p0);
    memcpy(p0, p, sizeof(float) * (size_t)n);
    lg_epoch_stats st;
    assert_ok(lg_trainer_epoch(a, &st));
    assert_ok(lg_trainer_params(a, &p, &g, &n));
    for (int l = 0; l < L; l++) {
        assert_ok(lg_trainer_layer_params(a, l, &off, &len));
        double q = 0;
        for (lg_idx k = off; k < off + len; k++) q += (double)g[k] * g[k];
        assert_true(st.grad_norm[l] > 0 && fabs(sqrt(q) - st.grad_norm[l]) <= 1e-6 * st.grad_norm[l]);
    }
    /* the linear layers' norms: of the block before layer 0's and after the last layer's */
    {
        lg_idx o0 = 0, l0 = 0, ol = 0, ll = 0;
        assert_ok(lg_trainer_layer_params(a, 0, &o0, &l0));
        assert_ok(lg_trainer_layer_params(a, L - 1, &ol, &ll));
        double q0 = 0, q1 = 0;
        for (lg_idx k = 0; k < o0; k++) q0 += (double)g[k] * g[k];
        for (lg_idx k = ol + ll; k < n; k++) q1 += (double)g[k] * g[k];
        assert_true(st.io_grad_norm[0] > 0 && fabs(sqrt(q0) - st.io_grad_norm[0]) <= 1e-6 * st.io_grad_norm[0]);
        assert_true(st.io_grad_norm[1] > 0 && fabs(sqrt(q1) - st.io_grad_norm[1]) <= 1e-6 * st.io_grad_norm[1]);
        lg_model_config mk;
        lg_model_config_default(&mk, LG_MODEL_GAT_CLASSIC); /* no linear layers: NAN */
        lg_epoch_stats sk;
        lg_trainer *k = NULL;
        assert_ok(lg_trainer_init(&k, &mk, &tc, ds));
        assert_ok(lg_trainer_epoch(k, &sk));
        assert_true(isnan(sk.io_grad_norm[0]) && isnan(sk.io_grad_norm[1]));
        lg_trainer_free(k);
    }
    const double la = st.train_loss_step;
    /* another seed's parameters give another first epoch; a's parameters the same one */
    tc.seed = 43;
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_ok(lg_trainer_init(&c, &mc, &tc, ds));
    assert_ok(lg_trainer_epoch(c, &st));
    assert_true(st.train_loss_step != la);
    float *bad = malloc(sizeof(float) * (size_t)n);
    assert_non_null(bad);
    memcpy(bad, p0, sizeof(float) * (size_t)n);
    bad[n / 2] = NAN;
    const float *pb = NULL;
    lg_idx nb = 0;
    assert_ok(lg_trainer_params(b, &pb, NULL, &nb));
    const float before = pb[n / 2];
    assert_int_equal(lg_trainer_set_params(b, bad, n), LG_EINVAL);
    assert_true(pb[n / 2] == before && pb[0] != p0[0]); /* unchanged, and not a's */
    assert_int_equal(lg_trainer_set_params(b, p0, n - 1), LG_EINVAL);
    assert_int_equal(lg_trainer_set_params(b, NULL, n), LG_EINVAL);
    assert_int_equal(lg_trainer_set_params(NULL, p0, n), LG_EINVAL);
    assert_ok(lg_trainer_set_params(b, p0, n));
    assert_memory_equal(pb, p0, sizeof(float) * (size_t)n);
    assert_ok(lg_trainer_set_params(b, pb, n)); /* its own block (a memcpy onto itself, undefined): a no-op */
    assert_memory_equal(pb, p0, sizeof(float) * (size_t)n);
    assert_ok(lg_trainer_epoch(b, &st));
    assert_true(st.train_loss_step == la);
    /* bad arguments */
    assert_int_equal(lg_trainer_params(NULL, &p, &g, &n), LG_EINVAL);
    assert_int_equal(lg_trainer_params(a, NULL, &g, &n), LG_EINVAL);
    assert_int_equal(lg_trainer_params(a, &p, &g, NULL), LG_EINVAL);
    assert_int_equal(lg_trainer_layer_params(a, -1, &off, &len), LG_EINVAL);
    assert_int_equal(lg_trainer_layer_params(a, L, &off, &len), LG_EINVAL);
    assert_int_equal(lg_trainer_layer_params(a, 0, NULL, &len), LG_EINVAL);
    assert_int_equal(lg_trainer_layer_params(NULL, 0, &off, &len), LG_EINVAL);
    free(bad);
    free(p0);
    lg_trainer_free(a);
    lg_trainer_free(b);
    lg_trainer_free(c);
    lg_dataset_free(ds);
}

/* The trainer reads the data set's features in place (nothing copied) unless
 * it changes their values (row normalisation, the missing-vector setting): it
 * then copies the values only, keeps the structure, and leaves the data set
 * as it was; the estimate counts exactly that copy. */
static void test_features_borrowed(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(50, 7, 3, 1, 21);
    const lg_features *f = ds->features;
    float *before = malloc(sizeof(float) * (size_t)f->nnz);
    assert_non_null(before);
    memcpy(before, f->x, sizeof(float) * (size_t)f->nnz);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    mc.feature_norm_row = 0;
    tc.missing = 0;
    lg_trainer_mem own, bor;
    lg_trainer *t = estimate_equals_memory(&mc, &tc, ds, &bor);
    assert_ptr_equal(lg__trainer_features(t)->x, f->x);
    lg_trainer_free(t);
    for (int v = 0; v < 2; v++) {
        mc.feature_norm_row = v == 0;
        tc.missing = v == 1 ? 0.5 : 0;
        t = estimate_equals_memory(&mc, &tc, ds, &own);
        const lg_features *x = lg__trainer_features(t);
        assert_ptr_not_equal(x->x, f->x);
        assert_ptr_equal(x->p, f->p);
        assert_ptr_equal(x->j, f->j);
        assert_int_equal(own.other - bor.other, sizeof(float) * (size_t)f->nnz);
        int changed = 0;
        for (lg_idx e = 0; e < f->nnz; e++) changed |= x->x[e] != f->x[e];
        assert_true(changed);
        lg_trainer_free(t);
        assert_memory_equal(f->x, before, sizeof(float) * (size_t)f->nnz);
    }
    free(before);
    lg_dataset_free(ds);
}

/* A symmetric graph is its own transpose: the model keeps one copy (and one
 * edge map, an involution) and its gradients still match central differences
 * (for every layer that takes the transpose), while a directed graph gets its
 * transpose (test_memory_estimate covers the counts of both). */
static void test_symmetric_graph_shared(void **state) {
    (void)state;
    lg_dataset *di = lg_test_random_dataset(16, 5, 3, 0, 31), *sy = lg_test_random_dataset(16, 5, 3, 0, 31);
    lg_test_symmetrize(sy);
    lg_graph_stats st;
    assert_ok(lg_graph_stats_compute(sy->graph, &st));
    assert_true(st.symmetric);
    assert_ok(lg_graph_stats_compute(di->graph, &st));
    assert_false(st.symmetric);
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_GAT);
    mc.layers = 3;
    mc.hidden = 3;
    mc.heads = 2;
    for (int d = 0; d < 2; d++) {
        lg__model_f32 *m = NULL;
        lg_rng rng;
        lg_rng_seed(&rng, 1);
        assert_ok(lg__model_init_f32(&m, &mc, d ? sy : di, (d ? sy : di)->features, &rng));
        if (d) assert_ptr_equal(lg__model_transpose_f32(m), lg__model_graph_f32(m));
        else assert_ptr_not_equal(lg__model_transpose_f32(m), lg__model_graph_f32(m));
        lg__model_free_f32(m);
    }
    struct { lg_model_kind kind; lg_att_norm att; int heads, self_loops; } cases[] = {
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, 2, 1}, {LG_MODEL_GAT, LG_ATT_NORM_NONE, 1, 0},
        {LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ_REF, 2, 1}, {LG_MODEL_GAT_CLASSIC, LG_ATT_NORM_NONE, 2, 1},
        {LG_MODEL_GT, LG_ATT_NORM_LIPSCHITZ, 2, 0}, {LG_MODEL_GT, LG_ATT_NORM_NONE, 1, 1},
        {LG_MODEL_L2, LG_ATT_NORM_NONE, 1, 1}, {LG_MODEL_GCN, LG_ATT_NORM_NONE, 1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        lg_model_config_default(&mc, cases[c].kind);
        mc.att_norm = cases[c].att;
        mc.heads = cases[c].heads;
        if (mc.kind != LG_MODEL_GAT_CLASSIC && mc.kind != LG_MODEL_GCN) mc.layers = 3;
        mc.hidden = 3;
        mc.dropout = 0.3;
        mc.att_dropout = mc.kind == LG_MODEL_L2 ? 0 : 0.2;
        mc.self_loops = cases[c].self_loops;
        double worst;
        int bad = lg_test_model_fd_check(&mc, sy, 1e-5, &worst, 0);
        if (bad) fail_msg("case %zu (%s): %d gradients differ from central differences (worst rel. error %.3g)", c,
                          lg_model_kind_name(mc.kind), bad, worst);
    }
    lg_dataset_free(di);
    lg_dataset_free(sy);
}

static void test_out_of_memory(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(20, 5, 3, 1, 6);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    lg_test_trainer_alloc_sweep(ds, &mc, &tc, 3000);
    lg_dataset_free(ds);
    /* the same in mini-batch mode */
    ds = lg_test_trees(2, 12, 2);
    trees_config(&mc, &tc, 2, 5);
    lg_test_trainer_alloc_sweep(ds, &mc, &tc, 3000);
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
    lg_dataset *ds = lg_test_random_dataset(30, 5, 3, 1, 8);
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
/* A trainer loaded from a checkpoint of `epochs` epochs of training whose
 * parameters [off, off + len) were replaced by vals (the checkpoint is a
 * temporary file, removed): weights that overflow, as a run may reach. The
 * training itself must not have exploded. */
static lg_trainer *patched_trainer(const lg_dataset *ds, const lg_model_config *mc, const lg_train_config *tc,
                                   int epochs, lg_idx off, const float *vals, lg_idx len) {
    char path[] = "/tmp/lg_patched_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    lg_trainer *t = run(ds, mc, tc, epochs, NULL);
    lg_train_summary s;
    lg_trainer_summary(t, &s);
    assert_false(s.exploded);
    assert_ok(lg_trainer_save(t, path));
    lg_trainer_free(t);
    patch_section(path, 4 /* parameters */, sizeof(float) * (size_t)off, vals, sizeof(float) * (size_t)len);
    assert_ok(lg_trainer_init(&t, mc, tc, ds));
    assert_ok(lg_trainer_load(t, path));
    unlink(path);
    return t;
}

static void test_nonfinite_located(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(40, 6, 3, 0, 12);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    mc.node_norm = LG_NODE_NORM_NONE;
    mc.residual = 0;
    tc.plateau = 0;
    mc.att_norm = LG_ATT_NORM_NONE;
    tc.stop_on_explosion = 1;
    /* layer 2's parameter block, from a model built the same way */
    lg__model_f32 *m = NULL;
    lg_rng rng;
    lg_rng_seed(&rng, 1);
    assert_ok(lg__model_init_f32(&m, &mc, ds, ds->features, &rng));
    lg__layer_range r = lg__model_layer_range_f32(m, 2);
    lg__model_free_f32(m);
    float *huge = malloc(sizeof(float) * (size_t)r.len);
    for (lg_idx k = 0; k < r.len; k++) huge[k] = 3e38f;
    lg_trainer *t = patched_trainer(ds, &mc, &tc, 3, r.off, huge, r.len);
    free(huge);
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
    lg_train_summary s;
    lg_trainer_summary(t, &s);
    assert_true(s.exploded);
    assert_int_equal(s.first_explosion_epoch, 4);
    assert_int_equal(s.explosion_layer, 2);
    assert_non_null(strstr(s.explosion_reason, "layer 2"));
    lg_trainer_free(t);
    lg_dataset_free(ds);
}

/* A loss that stops being finite at the output only (finite logits whose
 * spread overflows the log-softmax: the output bias 3e38 for class 0 and
 * -3e38 for the others) is reported as such, with no layer named, in a batch
 * model (its logits have the read-out rows only: the search for the first
 * non-finite value must stay inside them) and in a full-graph one (only the
 * training rows' log-probabilities computed). */
static void test_nonfinite_output(void **state) {
    (void)state;
    for (int batch = 0; batch < 2; batch++) {
        lg_dataset *ds = lg_test_trees(2, 12, 8);
        lg_model_config mc;
        lg_train_config tc;
        trees_config(&mc, &tc, 2, batch ? 4 : 0);
        tc.stop_on_explosion = 1;
        tc.plateau = 0;
        /* the output linear's block, last in the layout: W_out (D x C), b_out (C) */
        lg__model_f32 *m = NULL;
        lg_rng rng;
        lg_rng_seed(&rng, 1);
        assert_ok(lg__model_init_f32(&m, &mc, ds, ds->features, &rng));
        const lg_idx np = lg__model_nparams_f32(m), D = lg__model_hidden_width_f32(m), C = ds->n_classes;
        lg__model_free_f32(m);
        float *blk = calloc((size_t)(D * C + C), sizeof(float));
        for (lg_idx c = 0; c < C; c++) blk[D * C + c] = c == 0 ? 3e38f : -3e38f;
        lg_trainer *t = patched_trainer(ds, &mc, &tc, 2, np - D * C - C, blk, D * C + C);
        free(blk);
        int nonzero = 0; /* some training root has a label other than 0 */
        for (lg_idx k = 0; k < ds->n_train; k++) nonzero |= ds->labels[ds->train[k]] != 0;
        assert_true(nonzero);
        lg_epoch_stats es;
        assert_ok(lg_trainer_epoch(t, &es));
        assert_true(es.train_loss_step == INFINITY);
        assert_int_equal(es.exploded_now, 1);
        lg_train_summary s;
        lg_trainer_summary(t, &s);
        assert_int_equal(s.explosion_layer, -1);
        assert_string_equal(s.explosion_reason, "loss is inf");
        lg_trainer_free(t);
        lg_dataset_free(ds);
    }
}

/* The output bias's gradient: summed over the listed rows alone when they are
 * in increasing order (dL/d logits is zero elsewhere), over every row
 * otherwise; the same bits either way. */
static void test_output_bias_rows(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(300, 7, 4, 1, 23);
    static const lg_idx up[] = {4, 9, 10, 57, 130, 131, 299}, down[] = {299, 131, 130, 57, 10, 9, 4};
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_GAT);
    mc.layers = 2;
    mc.hidden = 6;
    lg__model_f32 *m = NULL;
    lg_rng rng;
    lg_rng_seed(&rng, 3);
    assert_ok(lg__model_init_f32(&m, &mc, ds, ds->features, &rng));
    const lg_idx np = lg__model_nparams_f32(m);
    float *g = malloc(sizeof(float) * (size_t)np);
    assert_ok(lg__model_forward_f32(m, 1, 4, 1));
    assert_ok(lg__model_backward_f32(m, up, 7, 1, 4, 1));
    memcpy(g, lg__model_grads_f32(m), sizeof(float) * (size_t)np);
    assert_ok(lg__model_backward_f32(m, down, 7, 1, 4, 1));
    assert_memory_equal(g, lg__model_grads_f32(m), sizeof(float) * (size_t)np);
    float gmax = 0; /* the bias gradient, last in the layout, is not trivially 0 */
    for (lg_idx c = 0; c < ds->n_classes; c++) gmax = fmaxf(gmax, fabsf(g[np - 1 - c]));
    assert_true(gmax > 1e-4f);
    free(g);
    lg__model_free_f32(m);
    lg_dataset_free(ds);
}

/* Two models of config mc on ds with the same parameters (both drawn from
 * seed 5). */
static void twin_models(const lg_model_config *mc, const lg_dataset *ds, lg__model_f32 **a, lg__model_f32 **b) {
    lg_rng ra, rb;
    lg_rng_seed(&ra, 5);
    lg_rng_seed(&rb, 5);
    assert_ok(lg__model_init_f32(a, mc, ds, ds->features, &ra));
    assert_ok(lg__model_init_f32(b, mc, ds, ds->features, &rb));
}

/* lg__model_forward_rows: the log-softmax of a few listed rows gives the
 * same loss, log-probabilities and gradients, bit for bit, as the full
 * forward; eval and backward then refuse another list; the logit gradients
 * of one backward do not leak into the next (they are zeroed by their rows). */
static void test_forward_rows(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(60, 7, 4, 1, 21);
    static const lg_idx rows[] = {3, 41, 17, 58, 0}, other[] = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19};
    const lg_idx nr = 5, no = 14;
    const lg_model_kind kinds[] = {LG_MODEL_GAT, LG_MODEL_GT, LG_MODEL_GAT_CLASSIC};
    for (int q = 0; q < 3; q++) {
        lg_model_config mc;
        lg_model_config_default(&mc, kinds[q]);
        mc.layers = kinds[q] == LG_MODEL_GAT_CLASSIC ? 2 : 3;
        mc.hidden = 5;
        mc.att_norm = LG_ATT_NORM_LIPSCHITZ;
        lg__model_f32 *a = NULL, *b = NULL;
        lg_rng rb;
        twin_models(&mc, ds, &a, &b);
        const lg_idx np = lg__model_nparams_f32(a), C = ds->n_classes;
        float *ga = malloc(sizeof(float) * (size_t)np);
        double la, lb;
        /* a: the listed rows only; b: every row */
        assert_ok(lg__model_forward_rows_f32(a, 1, 9, 2, rows, nr));
        assert_ok(lg__model_forward_f32(b, 1, 9, 2));
        assert_int_equal(lg__model_first_nonfinite_f32(a), -1);
        assert_ok(lg__model_eval_f32(a, rows, nr, &la, NULL));
        assert_ok(lg__model_eval_f32(b, rows, nr, &lb, NULL));
        assert_memory_equal(&la, &lb, sizeof la);
        for (lg_idx k = 0; k < nr; k++)
            assert_memory_equal(lg__model_logp_f32(a) + rows[k] * C, lg__model_logp_f32(b) + rows[k] * C,
                                sizeof(float) * (size_t)C);
        /* the same list only: another pointer or count is refused */
        lg_idx copy[5];
        memcpy(copy, rows, sizeof copy);
        assert_int_equal(lg__model_eval_f32(a, copy, nr, &la, NULL), LG_EINVAL);
        assert_int_equal(lg__model_backward_f32(a, rows, nr - 1, 1, 9, 2), LG_EINVAL);
        assert_ok(lg__model_backward_f32(a, rows, nr, 1, 9, 2));
        assert_ok(lg__model_backward_f32(b, rows, nr, 1, 9, 2));
        assert_memory_equal(lg__model_grads_f32(a), lg__model_grads_f32(b), sizeof(float) * (size_t)np);
        /* a full forward and another list: a's previous rows must not remain in
         * its logit gradients (b's last backward had the same rows) */
        assert_ok(lg__model_forward_f32(a, 1, 9, 3));
        assert_ok(lg__model_backward_f32(a, other, no, 1, 9, 3));
        memcpy(ga, lg__model_grads_f32(a), sizeof(float) * (size_t)np);
        lg__model_free_f32(b);
        lg_rng_seed(&rb, 5);
        assert_ok(lg__model_init_f32(&b, &mc, ds, ds->features, &rb));
        assert_ok(lg__model_forward_f32(b, 1, 9, 3));
        assert_ok(lg__model_backward_f32(b, other, no, 1, 9, 3));
        assert_memory_equal(ga, lg__model_grads_f32(b), sizeof(float) * (size_t)np);
        /* a quarter of the rows or more: all rows are computed, any list goes */
        assert_ok(lg__model_forward_rows_f32(a, 0, 9, 4, ds->train, 15));
        assert_ok(lg__model_eval_f32(a, other, no, &la, NULL));
        /* rows outside the model: refused */
        static const lg_idx bad[] = {60};
        assert_int_equal(lg__model_forward_rows_f32(a, 0, 9, 4, bad, 1), LG_EINVAL);
        free(ga);
        lg__model_free_f32(a);
        lg__model_free_f32(b);
    }
    lg_dataset_free(ds);
}

/* lg__model_forward_rows with the rows in increasing order, fewer than a
 * quarter: a whole-graph model's output layer runs on those rows only (traced:
 * products of at most LG__OUT_BLOCK rows, two blocks here, against one of n
 * rows for the full forward), with the full forward's log-probabilities and
 * gradients within float rounding (OpenBLAS may round a product of 256 rows
 * otherwise than one of n, and dW_out is summed over the listed rows alone);
 * for GAT, GT and GCNII. */
static void test_forward_rows_output_layer(void **state) {
    (void)state;
    const lg_idx n = 1200, nr = 280;
    lg_dataset *ds = lg_test_random_dataset(n, 7, 4, 1, 23);
    lg_idx rows[280];
    for (lg_idx k = 0; k < nr; k++) rows[k] = 4 * k + 1;
    /* GAT, GT, and GCNII (whose output layer reads a dropout of the last hidden rows) */
    const lg_model_kind kinds[] = {LG_MODEL_GAT, LG_MODEL_GT, LG_MODEL_GCNII};
    for (int q0 = 0; q0 < 3; q0++) {
        lg_model_config mc;
        lg_model_config_default(&mc, kinds[q0]);
        mc.layers = 2;
        mc.hidden = 5;
        mc.att_norm = kinds[q0] == LG_MODEL_GCNII ? LG_ATT_NORM_NONE : LG_ATT_NORM_LIPSCHITZ;
        lg__model_f32 *a = NULL, *b = NULL;
        twin_models(&mc, ds, &a, &b);
        const lg_idx np = lg__model_nparams_f32(a), C = ds->n_classes;
        lg__gemm_call calls[64];
        lg__gemm_log log = {calls, 64, 0};
        lg_idx out_rows[2] = {0, 0}; /* rows of the output layer's products: a, b */
        for (int q = 0; q < 2; q++) {
            log.count = 0;
            lg__gemm_trace = &log;
            if (q == 0) assert_ok(lg__model_forward_rows_f32(a, 1, 9, 2, rows, nr));
            else assert_ok(lg__model_forward_f32(b, 1, 9, 2));
            lg__gemm_trace = NULL;
            assert_true(log.count <= log.cap);
            for (int k = 0; k < log.count; k++)
                if (calls[k].N == C && calls[k].ta == CblasNoTrans) {
                    assert_true(calls[k].M <= (q == 0 ? LG__OUT_BLOCK : n));
                    out_rows[q] += calls[k].M;
                }
        }
        assert_int_equal(out_rows[0], nr);
        assert_int_equal(out_rows[1], n);
        assert_int_equal(lg__model_first_nonfinite_f32(a), -1);
        for (lg_idx k = 0; k < nr * C; k++) { /* within a few float roundings */
            const lg_idx at = rows[k / C] * C + k % C;
            const float pa = lg__model_logp_f32(a)[at], pb = lg__model_logp_f32(b)[at];
            assert_true(fabsf(pa - pb) <= 4e-7f * (fabsf(pb) + 1));
        }
        assert_ok(lg__model_backward_f32(a, rows, nr, 1, 9, 2));
        assert_ok(lg__model_backward_f32(b, rows, nr, 1, 9, 2));
        const float *ga = lg__model_grads_f32(a), *gb = lg__model_grads_f32(b);
        float big = 0;
        for (lg_idx t = 0; t < np; t++) big = fmaxf(big, fabsf(gb[t]));
        assert_true(big > 0);
        for (lg_idx t = 0; t < np; t++) assert_true(fabsf(ga[t] - gb[t]) <= 1e-5f * (fabsf(gb[t]) + 1e-2f * big));
        lg__model_free_f32(a);
        lg__model_free_f32(b);
    }
    lg_dataset_free(ds);
}

/* A whole-graph trainer's evaluation, when the splits' rows are under a
 * quarter of the nodes, runs the output layer on those rows only (traced: its
 * forward products cover n_train rows for the training step and the splits'
 * union for the evaluation, not n) and still reports the losses and
 * accuracies of a full forward of the same parameters (lg_trainer_predict
 * after the epoch, the metrics over its log-probabilities): within float
 * rounding (lg__model_forward_rows), the accuracies exactly. The splits overlap
 * and are listed out of order, so the union and the look-up are exercised. */
static void test_trainer_eval_rows(void **state) {
    (void)state;
    const lg_idx n = 400;
    lg_dataset *ds = lg_test_random_dataset(n, 7, 4, 1, 29);
    ds->n_train = ds->n_val = ds->n_test = 0;
    for (lg_idx k = 0; k < 20; k++) ds->train[ds->n_train++] = (13 * k + 5) % n;
    for (lg_idx k = 0; k < 30; k++) ds->val[ds->n_val++] = (n - 1) - 9 * k; /* decreasing */
    for (lg_idx k = 0; k < 40; k++) ds->test[ds->n_test++] = (13 * k + 5) % n + (k % 2); /* half of them train's */
    char seen[400] = {0};
    lg_idx nunion = 0; /* the rows of the three splits, each once */
    const lg_idx *sp[3] = {ds->train, ds->val, ds->test}, ns[3] = {ds->n_train, ds->n_val, ds->n_test};
    for (int q = 0; q < 3; q++)
        for (lg_idx k = 0; k < ns[q]; k++) {
            nunion += !seen[sp[q][k]];
            seen[sp[q][k]] = 1;
        }
    assert_true(nunion < ds->n_train + ds->n_val + ds->n_test && 4 * nunion < n);
    lg_model_config mc;
    lg_train_config tc;
    lg_model_config_default(&mc, LG_MODEL_GAT);
    mc.layers = 2;
    mc.hidden = 8;
    mc.att_norm = LG_ATT_NORM_LIPSCHITZ;
    lg_train_config_default(&tc);
    tc.seed = 3;
    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    const lg_idx C = ds->n_classes;
    float *logp = malloc(sizeof(float) * (size_t)(n * C));
    assert_non_null(logp);
    lg__gemm_call calls[256];
    lg__gemm_log log = {calls, 256, 0};
    for (int epoch = 0; epoch < 3; epoch++) {
        lg_epoch_stats es;
        log.count = 0;
        lg__gemm_trace = &log;
        assert_ok(lg_trainer_epoch(t, &es));
        lg__gemm_trace = NULL;
        assert_true(log.count <= log.cap);
        lg_idx out_rows = 0; /* rows of the output layer's forward products */
        for (int k = 0; k < log.count; k++)
            if (calls[k].N == C && calls[k].ta == CblasNoTrans) out_rows += calls[k].M;
        assert_int_equal(out_rows, ds->n_train + nunion);
        assert_ok(lg_trainer_predict(t, logp, NULL));
        const lg_idx *split[3] = {ds->train, ds->val, ds->test}, cnt[3] = {ds->n_train, ds->n_val, ds->n_test};
        const double got_l[3] = {es.train_loss, es.val_loss, es.test_loss},
                     got_a[3] = {es.train_acc, es.val_acc, es.test_acc};
        for (int q = 0; q < 3; q++) {
            double l, a;
            assert_ok(lg_nll_forward_f32(&l, logp, n, C, ds->labels, split[q], cnt[q]));
            assert_ok(lg_accuracy_f32(&a, logp, n, C, ds->labels, split[q], cnt[q]));
            assert_true(fabs(l - got_l[q]) <= 1e-6 * (fabs(l) + 1e-3));
            assert_memory_equal(&a, &got_a[q], sizeof a);
        }
    }
    free(logp);
    lg_trainer_free(t);
    lg_dataset_free(ds);
}

/* lg__model_eval after a forward of an increasing list: any list of rows in it
 * (in any order) gives the loss and accuracy of what that forward computed for
 * them, and so the full forward's within float rounding; a row outside it is
 * refused, naming it; backward takes the list itself only. */
static void test_eval_subset(void **state) {
    (void)state;
    const lg_idx n = 300;
    lg_dataset *ds = lg_test_random_dataset(n, 7, 4, 1, 31);
    lg_idx rows[40], sub[12], stray[3];
    for (lg_idx k = 0; k < 40; k++) rows[k] = 7 * k + 2;
    for (lg_idx k = 0; k < 12; k++) sub[k] = rows[39 - 3 * k]; /* decreasing, every third */
    stray[0] = rows[0], stray[1] = rows[0] + 1, stray[2] = rows[5];
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_GAT);
    mc.layers = 2;
    mc.hidden = 5;
    mc.att_norm = LG_ATT_NORM_LIPSCHITZ;
    lg__model_f32 *a = NULL, *b = NULL;
    twin_models(&mc, ds, &a, &b);
    assert_ok(lg__model_forward_rows_f32(a, 0, 9, 2, rows, 40));
    assert_ok(lg__model_forward_f32(b, 0, 9, 2));
    double la, lb, aa, ab, lr, ar;
    assert_ok(lg__model_eval_f32(a, sub, 12, &la, &aa));
    assert_ok(lg__model_eval_f32(b, sub, 12, &lb, &ab));
    const lg_idx C = ds->n_classes;
    assert_ok(lg_nll_forward_f32(&lr, lg__model_logp_f32(a), n, C, ds->labels, sub, 12));
    assert_ok(lg_accuracy_f32(&ar, lg__model_logp_f32(a), n, C, ds->labels, sub, 12));
    assert_memory_equal(&la, &lr, sizeof la);
    assert_memory_equal(&aa, &ar, sizeof aa);
    assert_true(fabs(la - lb) <= 1e-6 * fabs(lb) && la > 0);
    assert_memory_equal(&aa, &ab, sizeof aa);
    assert_int_equal(lg__model_eval_f32(a, stray, 3, &la, NULL), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "row 3 (entry 1)"));
    assert_int_equal(lg__model_backward_f32(a, sub, 12, 0, 9, 2), LG_EINVAL);
    lg__model_free_f32(a);
    lg__model_free_f32(b);
    lg_dataset_free(ds);
}

/* A checkpoint with its sections as lg__ckpt_load read them from src, and one
 * more (tag, bytes), written to dst: what a later lipgnn's section looks like
 * to this one. */
static void add_section(const char *src, const char *dst, uint32_t tag, const void *bytes, uint64_t n) {
    lg_ckpt *c = NULL;
    assert_ok(lg__ckpt_load(&c, src));
    lg_ckpt_section *s = malloc(sizeof *s * (c->count + 1));
    assert_non_null(s);
    memcpy(s, c->sections, sizeof *s * c->count);
    s[c->count] = (lg_ckpt_section){tag, n, bytes};
    assert_ok(lg__ckpt_save(dst, s, c->count + 1, -1));
    free(s);
    lg__ckpt_free(c);
}

static lg_status note_attempt(void *ctx, long k) {
    (void)k;
    lg_status st = lg_trainer_set_note(ctx, "a note");
    lg_trainer_set_note(ctx, NULL); /* (frees it: no allocation left live) */
    return st;
}

/* lg_trainer_set_note / lg_checkpoint_note: the note round trip, its errors,
 * a checkpoint without one (saved without a note, as every checkpoint before
 * notes), a note that lg_trainer_load neither restores nor needs, and a
 * section unknown to this lipgnn (a later one's) skipped as a lipgnn before
 * notes skips the note's. */
static void test_checkpoint_note(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(30, 5, 3, 0, 21);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    char path[] = "/tmp/lg_note_XXXXXX", other[64];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(other, sizeof other, "%s.more", path);
    lg_trainer *t = run(ds, &mc, &tc, 2, NULL);
    char buf[64];
    size_t len = 99;
    /* none set: the checkpoint has none */
    assert_ok(lg_trainer_save(t, path));
    memset(buf, 'x', sizeof buf);
    assert_int_equal(lg_checkpoint_note(path, buf, sizeof buf, &len), LG_ENOTFOUND);
    assert_string_equal(buf, "");
    assert_int_equal(len, 0);
    assert_non_null(strstr(lg_last_error(), "has no note"));
    {
        lg_ckpt *c = NULL;
        assert_ok(lg__ckpt_load(&c, path));
        assert_int_equal(c->count, 11); /* the sections of a checkpoint before notes and the io maxima, */
        assert_non_null(lg__ckpt_find(c, 11)); /* which it has                                               */
        assert_null(lg__ckpt_find(c, 10));
        lg__ckpt_free(c);
    }
    /* a note: read back whole, with its length; the buffer's size at its edge */
    const char *note = "lipgnn data options 1\n--data d\n--seed 7\n";
    const size_t nl = strlen(note);
    assert_ok(lg_trainer_set_note(t, note));
    assert_ok(lg_trainer_save(t, path));
    assert_ok(lg_checkpoint_note(path, buf, sizeof buf, &len));
    assert_string_equal(buf, note);
    assert_int_equal(len, nl);
    assert_ok(lg_checkpoint_note(path, buf, nl + 1, NULL));
    assert_string_equal(buf, note);
    memset(buf, 'x', sizeof buf);
    assert_int_equal(lg_checkpoint_note(path, buf, nl, &len), LG_ERANGE); /* no room for its NUL */
    assert_string_equal(buf, "");
    assert_int_equal(len, nl);
    len = 0;
    assert_int_equal(lg_checkpoint_note(path, NULL, 0, &len), LG_ERANGE); /* its length alone */
    assert_int_equal(len, nl);
    /* bad arguments */
    assert_int_equal(lg_checkpoint_note(NULL, buf, sizeof buf, &len), LG_EINVAL);
    assert_int_equal(lg_checkpoint_note(path, NULL, 8, &len), LG_EINVAL);
    assert_int_equal(lg_trainer_set_note(NULL, "x"), LG_EINVAL);
    char *huge = malloc(LG_NOTE_MAX + 2);
    assert_non_null(huge);
    memset(huge, 'a', LG_NOTE_MAX + 1);
    huge[LG_NOTE_MAX + 1] = '\0';
    assert_int_equal(lg_trainer_set_note(t, huge), LG_EINVAL);
    huge[LG_NOTE_MAX] = '\0'; /* the longest */
    assert_ok(lg_trainer_set_note(t, huge));
    free(huge);
    assert_ok(lg_trainer_set_note(t, note));
    /* not a checkpoint, or none there: the load's errors, buf emptied */
    strcpy(buf, "x");
    assert_int_not_equal(lg_checkpoint_note("/nonexistent/x.ckpt", buf, sizeof buf, &len), LG_OK);
    assert_string_equal(buf, "");
    /* a note of the caller's: lg_trainer_load leaves t's as it is, and loads
     * with or without one alike */
    lg_trainer *b = NULL;
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_ok(lg_trainer_set_note(b, "mine"));
    assert_ok(lg_trainer_load(b, path));
    assert_int_equal(lg_trainer_epochs_done(b), 2);
    assert_ok(lg_trainer_save(b, other));
    assert_ok(lg_checkpoint_note(other, buf, sizeof buf, NULL));
    assert_string_equal(buf, "mine");
    /* NULL and "" clear it: the next checkpoint has none */
    assert_ok(lg_trainer_set_note(b, ""));
    assert_ok(lg_trainer_save(b, other));
    assert_int_equal(lg_checkpoint_note(other, buf, sizeof buf, NULL), LG_ENOTFOUND);
    assert_ok(lg_trainer_set_note(b, "again"));
    assert_ok(lg_trainer_set_note(b, NULL));
    assert_ok(lg_trainer_save(b, other));
    assert_int_equal(lg_checkpoint_note(other, buf, sizeof buf, NULL), LG_ENOTFOUND);
    lg_trainer_free(b);
    /* a section this lipgnn does not know (a later lipgnn's) is skipped: the
     * checkpoint loads and continues as without it */
    add_section(path, other, 77, "later", 5);
    b = NULL;
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_ok(lg_trainer_load(b, other));
    assert_int_equal(lg_trainer_epochs_done(b), 2);
    lg_epoch_stats ea, eb;
    assert_ok(lg_trainer_epoch(t, &ea));
    assert_ok(lg_trainer_epoch(b, &eb));
    assert_memory_equal(&ea.train_loss_step, &eb.train_loss_step, sizeof ea.train_loss_step);
    assert_ok(lg_checkpoint_note(other, buf, sizeof buf, NULL));
    assert_string_equal(buf, note);
    lg_trainer_free(b);
    /* a crafted note: a NUL byte inside is refused */
    patch_section(path, 10 /* the note */, 3, "", 1);
    assert_int_equal(lg_checkpoint_note(path, buf, sizeof buf, &len), LG_EPARSE);
    assert_non_null(strstr(lg_last_error(), "NUL byte"));
    assert_string_equal(buf, "");
    /* out of memory: LG_ENOMEM, nothing left allocated (t's note freed first:
     * it was not counted) */
    assert_ok(lg_trainer_set_note(t, NULL));
    assert_int_equal(lg_test_alloc_sweep(note_attempt, t, 10), 1);
    lg_trainer_free(t);
    unlink(path);
    unlink(other);
    lg_dataset_free(ds);
}

/* Whether the scheduler and early stopping act at the documented epochs:
 * with a learning rate so small (1e-30) that no float parameter moves and
 * without dropout, the validation loss is the same at every epoch (checked),
 * so epoch 1 is the best and every later one a bad epoch. ReduceLROnPlateau
 * (patience 10, factor 0.1) cuts the rate after the 11th bad epoch (epoch 12):
 * es.lr, the rate an epoch used, is the configured one up to epoch 12, a tenth
 * of it from epoch 13, a hundredth from epoch 24 (the counter starts again
 * after a cut). Early stopping with patience P ends the run after P epochs
 * without a better validation loss: lg_trainer_done is false after epochs
 * 1..P and true after epoch P + 1, the summary saying so. (An off-by-one in
 * either counter, or another factor, went unseen.) */
static void test_plateau_patience_epochs(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(40, 5, 3, 0, 21);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    mc.dropout = mc.att_dropout = 0;
    tc.lr = 1e-30;
    tc.plateau = 1;
    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    lg_epoch_stats es;
    double val1 = 0;
    for (int e = 1; e <= 25; e++) {
        assert_ok(lg_trainer_epoch(t, &es));
        assert_int_equal(es.epoch, e);
        if (e == 1) val1 = es.val_loss;
        assert_memory_equal(&es.val_loss, &val1, sizeof val1); /* the premise: a constant loss */
        const double want = e <= 12 ? tc.lr : e <= 23 ? tc.lr * 0.1 : tc.lr * 0.1 * 0.1;
        if (es.lr != want) fail_msg("epoch %d ran at lr %g, expected %g", e, es.lr, want);
    }
    assert_false(lg_trainer_done(t)); /* no patience: never stops */
    lg_trainer_free(t);

    /* early stopping, patience 4, run as lg_trainer_epoch's documentation loops */
    enum { P = 4 };
    tc.plateau = 0;
    tc.patience = P;
    tc.epochs = 50;
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    int run_epochs = 0;
    for (int e = 0; e < tc.epochs && !lg_trainer_done(t); e++) {
        assert_ok(lg_trainer_epoch(t, &es));
        run_epochs++;
        assert_memory_equal(&es.val_loss, &val1, sizeof val1);
        if (lg_trainer_done(t) != (run_epochs == P + 1))
            fail_msg("patience %d: lg_trainer_done is %d after epoch %d", P, lg_trainer_done(t), run_epochs);
    }
    assert_int_equal(run_epochs, P + 1);
    assert_int_equal(lg_trainer_epochs_done(t), P + 1);
    lg_train_summary s;
    lg_trainer_summary(t, &s);
    assert_int_equal(s.stopped_early, 1);
    assert_int_equal(s.epochs_run, P + 1);
    assert_int_equal(s.best_epoch, 1);
    lg_trainer_free(t);
    lg_dataset_free(ds);
}

/* A mini-batch epoch reports per layer the MEAN over its batches of each
 * batch's gradient norm (lg_trainer_epoch), not their sum: two identical trees
 * (tree 1 made a copy of tree 0), batches of 1 tree, learning rate 1e-30 (the
 * parameters do not move between the batches), no dropout: both batches have
 * the gradient of one batch holding the two trees (the mean loss over two
 * equal roots), so every norm (layers, attention, input and output linears)
 * equals that one batch's, where a sum would double it. */
static void test_batch_norm_mean(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_trees(2, 2, 5);
    assert_int_equal(ds->n_graphs, 2);
    assert_int_equal(ds->n_train, 2);
    lg_graph *g = ds->graph;
    lg_features *x = ds->features;
    assert_int_equal(x->kind, LG_FEAT_SPARSE);
    const lg_idx m = ds->graph_ptr[1];
    assert_int_equal(ds->graph_ptr[2] - m, m);
    for (lg_idx i = 0; i < m; i++) { /* same shape; tree 1 takes tree 0's features and labels */
        assert_int_equal(g->p[i + m + 1] - g->p[i + m], g->p[i + 1] - g->p[i]);
        for (lg_idx e = 0; e < g->p[i + 1] - g->p[i]; e++)
            assert_int_equal(g->j[g->p[i + m] + e], g->j[g->p[i] + e] + m);
        assert_int_equal(x->p[i + m + 1] - x->p[i + m], x->p[i + 1] - x->p[i]);
        for (lg_idx e = 0; e < x->p[i + 1] - x->p[i]; e++) {
            x->j[x->p[i + m] + e] = x->j[x->p[i] + e];
            x->x[x->p[i + m] + e] = x->x[x->p[i] + e];
        }
        ds->labels[i + m] = ds->labels[i];
    }
    lg_model_config mc;
    lg_train_config tc;
    trees_config(&mc, &tc, 2, 1);
    mc.dropout = mc.att_dropout = 0;
    tc.lr = 1e-30;
    lg_trainer *one = NULL, *two = NULL;
    assert_ok(lg_trainer_init(&one, &mc, &tc, ds)); /* 2 batches of 1 tree */
    tc.batch_size = 2;
    assert_ok(lg_trainer_init(&two, &mc, &tc, ds)); /* 1 batch of 2 trees */
    lg_epoch_stats e1, e2;
    for (int e = 0; e < 2; e++) {
        assert_ok(lg_trainer_epoch(one, &e1));
        assert_ok(lg_trainer_epoch(two, &e2));
        assert_true(rel(e1.train_loss_step, e2.train_loss_step) < 1e-6);
        for (int l = 0; l < e1.layers; l++) {
            assert_true(e2.grad_norm[l] > 1e-4 && e2.att_grad_norm[l] > 1e-6);
            if (rel(e1.grad_norm[l], e2.grad_norm[l]) > 1e-5)
                fail_msg("epoch %d, layer %d: grad norm %.9g over 2 batches of 1 tree, %.9g in 1 batch of both "
                         "(not their mean)", e + 1, l, e1.grad_norm[l], e2.grad_norm[l]);
            assert_true(rel(e1.att_grad_norm[l], e2.att_grad_norm[l]) < 1e-5);
        }
        for (int k = 0; k < 2; k++) assert_true(rel(e1.io_grad_norm[k], e2.io_grad_norm[k]) < 1e-5);
    }
    lg_trainer_free(one);
    lg_trainer_free(two);
    lg_dataset_free(ds);
}

/* A layer weight decay L (GCNII's split decay) replaces the weight decay w on
 * the attention layers' parameters: lg_trainer_params' grads (what Adam
 * took, without the w Adam adds itself) hold, over each
 * lg_trainer_layer_params range, the loss's gradient plus (L - w) p0, p0 the
 * parameters the step started from, and the loss's gradient alone elsewhere.
 * Against a run without one (layer_weight_decay -1: w everywhere), same seed,
 * no dropout, after one epoch: L = 0.3 (w = 0.1), L = 0 (no decay at all on
 * the layers: a 0 is a decay, not "unset"), and L = w (the same as none). */
static void test_layer_weight_decay(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(40, 5, 3, 0, 22);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    mc.dropout = mc.att_dropout = 0;
    tc.weight_decay = 0.1;
    tc.layer_weight_decay = -1;
    lg_trainer *a = NULL;
    assert_ok(lg_trainer_init(&a, &mc, &tc, ds));
    const float *pa, *ga;
    lg_idx n;
    assert_ok(lg_trainer_params(a, &pa, &ga, &n));
    float *p0 = malloc(sizeof(float) * (size_t)n);
    assert_non_null(p0);
    memcpy(p0, pa, sizeof(float) * (size_t)n);
    lg_epoch_stats es;
    assert_ok(lg_trainer_epoch(a, &es));
    const int L = lg_trainer_layers(a);
    char *in_layer = calloc((size_t)n, 1);
    assert_non_null(in_layer);
    for (int l = 0; l < L; l++) {
        lg_idx off, len;
        assert_ok(lg_trainer_layer_params(a, l, &off, &len));
        memset(in_layer + off, 1, (size_t)len);
    }
    const double decays[3] = {0.3, 0, 0.1};
    for (int c = 0; c < 3; c++) {
        tc.layer_weight_decay = decays[c];
        lg_trainer *b = NULL;
        assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
        const float *pb, *gb;
        lg_idx nb;
        assert_ok(lg_trainer_params(b, &pb, &gb, &nb));
        assert_int_equal(nb, n);
        assert_memory_equal(pb, p0, sizeof(float) * (size_t)n); /* same start */
        assert_ok(lg_trainer_epoch(b, &es));
        const float dd = (float)(decays[c] - tc.weight_decay);
        double largest = 0;
        for (lg_idx k = 0; k < n; k++) {
            if (!in_layer[k]) {
                if (gb[k] != ga[k]) fail_msg("L = %g: parameter %lld outside the layers: grad %.9g, %.9g without "
                                             "a layer decay", decays[c], (long long)k, gb[k], ga[k]);
                continue;
            }
            const double want = (double)(dd * p0[k]), got = (double)gb[k] - (double)ga[k];
            largest = fmax(largest, fabs(want));
            if (fabs(got - want) > 1e-6 * fmax(fabs(gb[k]), fabs(ga[k])) + 1e-12)
                fail_msg("L = %g, w = %g: parameter %lld: grad %.9g - %.9g without a layer decay = %.9g, expected "
                         "(L - w) p0 = %.9g", decays[c], tc.weight_decay, (long long)k, gb[k], ga[k], got, want);
        }
        if (dd != 0) assert_true(largest > 1e-2); /* the term is there to be seen */
        lg_trainer_free(b);
    }
    free(in_layer);
    free(p0);
    lg_trainer_free(a);
    lg_dataset_free(ds);
}

/* The explosion detector's state is part of a checkpoint: its count of epochs
 * seen decides when the growth rule starts (from epoch window + 1) and where
 * its ring of past norms is read. A run whose layer-0 gradient norm grows
 * more than 3x from epoch 1 to 2 (0.8 -> 4.4; no normalisation, lr 0.05),
 * window 1, threshold 10 (never crossed by then; the growth counts from
 * 10 / 3), fires at epoch 2 by the growth rule; saved after epoch 1, loaded
 * into a new trainer and continued, it fires at the same epoch, layer and
 * reason (with the count lost, the growth rule waited a window and the
 * explosion went unseen). */
static void test_detector_resume(void **state) {
    (void)state;
    enum { E = 5 };
    lg_dataset *ds = lg_test_random_dataset(50, 7, 3, 0, 4);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    mc.att_norm = LG_ATT_NORM_NONE;
    mc.node_norm = LG_NODE_NORM_NONE;
    mc.dropout = mc.att_dropout = 0;
    tc.plateau = 0;
    tc.lr = 0.05;
    tc.explode_window = 1;
    tc.explode_growth = 3;
    tc.explode_threshold = 10;
    lg_trainer *a = run(ds, &mc, &tc, E, NULL);
    lg_train_summary sa, sb;
    lg_trainer_summary(a, &sa);
    assert_int_equal(sa.exploded, 1);
    assert_int_equal(sa.first_explosion_epoch, 2);
    assert_int_equal(sa.explosion_layer, 0);
    assert_non_null(strstr(sa.explosion_reason, "grew"));
    lg_trainer *b = run(ds, &mc, &tc, 1, NULL);
    char path[] = "/tmp/lg_detect_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_ok(lg_trainer_save(b, path));
    lg_trainer_free(b);
    assert_ok(lg_trainer_init(&b, &mc, &tc, ds));
    assert_ok(lg_trainer_load(b, path));
    lg_epoch_stats es;
    for (int e = 2; e <= E; e++) {
        assert_ok(lg_trainer_epoch(b, &es));
        if (es.exploded_now != (e == 2))
            fail_msg("resumed after epoch 1: exploded_now %d at epoch %d (the straight run fired at epoch 2)",
                     es.exploded_now, e);
    }
    lg_trainer_summary(b, &sb);
    assert_int_equal(sb.exploded, sa.exploded);
    assert_int_equal(sb.first_explosion_epoch, sa.first_explosion_epoch);
    assert_int_equal(sb.explosion_layer, sa.explosion_layer);
    assert_string_equal(sb.explosion_reason, sa.explosion_reason);
    unlink(path);
    lg_trainer_free(b);
    lg_trainer_free(a);
    lg_dataset_free(ds);
}

/* The mini-batch order of an epoch (lg__batcher_shuffle) is a permutation of
 * the training graphs drawn from (seed, epoch): the same for the same pair (a
 * resumed run draws it again), another at each epoch. And the trainer visits
 * the graphs in that order: batches of 1 tree, learning rate 1e-30 (the
 * parameters stay where they are), no dropout, so the gradient left after an
 * epoch (lg_trainer_params' grads: its last batch's) is the one of the tree
 * the order put last: the same tree, the same gradient; another tree,
 * another. (An order drawn once for all epochs went unseen.) */
static void test_batch_order_per_epoch(void **state) {
    (void)state;
    enum { E = 8 };
    lg_dataset *ds = lg_test_trees(2, 8, 13);
    lg_model_config mc;
    lg_train_config tc;
    trees_config(&mc, &tc, 2, 1);
    mc.dropout = mc.att_dropout = 0;
    tc.lr = 1e-30;
    lg__batcher b;
    assert_ok(lg__batcher_init(&b, ds, ds->features, &mc, 1, 0));
    const lg_idx G = b.ng[0];
    assert_true(G >= 3);
    lg_idx orders[E + 1][8], last[E + 1];
    assert_true(G <= 8);
    for (int e = 1; e <= E; e++) {
        lg__batcher_shuffle(&b, tc.seed, e);
        char seen[8] = {0};
        for (lg_idx k = 0; k < G; k++) {
            assert_true(b.order[k] >= 0 && b.order[k] < G && !seen[b.order[k]]); /* a permutation */
            seen[b.order[k]] = 1;
        }
        memcpy(orders[e], b.order, sizeof(lg_idx) * (size_t)G);
        last[e] = b.order[G - 1];
        for (int f = 1; f < e; f++)
            if (memcmp(orders[f], orders[e], sizeof(lg_idx) * (size_t)G) == 0)
                fail_msg("epochs %d and %d have the same batch order", f, e);
    }
    lg__batcher_shuffle(&b, tc.seed, 3); /* drawn again: the same */
    assert_memory_equal(b.order, orders[3], sizeof(lg_idx) * (size_t)G);
    lg__batcher_shuffle(&b, tc.seed + 1, 3); /* another seed, another order */
    assert_true(memcmp(b.order, orders[3], sizeof(lg_idx) * (size_t)G) != 0);
    lg__batcher_destroy(&b);

    lg_trainer *t = NULL;
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    const float *p, *g;
    lg_idx n;
    assert_ok(lg_trainer_params(t, &p, &g, &n));
    double norm[E + 1];
    lg_epoch_stats es;
    int distinct = 0;
    for (int e = 1; e <= E; e++) {
        assert_ok(lg_trainer_epoch(t, &es));
        double s = 0;
        for (lg_idx k = 0; k < n; k++) s += (double)g[k] * (double)g[k];
        norm[e] = sqrt(s);
        int fresh = 1;
        for (int f = 1; f < e; f++) {
            if (last[f] == last[e]) {
                fresh = 0;
                if (rel(norm[f], norm[e]) > 1e-6)
                    fail_msg("epochs %d and %d end with tree %lld, but with gradients of norms %.9g and %.9g", f, e,
                             (long long)last[e], norm[f], norm[e]);
            } else if (rel(norm[f], norm[e]) < 1e-3)
                fail_msg("epochs %d and %d end with trees %lld and %lld, but with the same gradient norm %.9g", f, e,
                         (long long)last[f], (long long)last[e], norm[e]);
        }
        distinct += fresh;
    }
    assert_true(distinct >= 2); /* the last tree changed: the test compared something */
    lg_trainer_free(t);
    lg_dataset_free(ds);
}

/* A checkpoint is refused by a trainer on a data set of the same sizes
 * (nodes, edges, features, classes, splits) whose edges differ: one edge's
 * source moved to another node, row pointers unchanged, so only the edges
 * tell the two apart (the fingerprint must hash them). LG_EINVAL naming the
 * mismatch; with the edge put back, the checkpoint loads. */
static void test_load_other_edges(void **state) {
    (void)state;
    lg_dataset *ds = lg_test_random_dataset(40, 5, 3, 0, 23);
    lg_model_config mc;
    lg_train_config tc;
    small_config(&mc, &tc);
    lg_trainer *t = run(ds, &mc, &tc, 2, NULL);
    char path[] = "/tmp/lg_edges_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_ok(lg_trainer_save(t, path));
    lg_trainer_free(t);
    /* the first entry of a row that can take its successor node instead, in order, without a duplicate */
    lg_graph *g = ds->graph;
    lg_idx at = -1;
    for (lg_idx i = 0; i < g->n && at < 0; i++)
        for (lg_idx e = g->p[i]; e < g->p[i + 1] && at < 0; e++)
            if (g->j[e] + 1 < g->n && (e + 1 == g->p[i + 1] || g->j[e + 1] > g->j[e] + 1)) at = e;
    assert_true(at >= 0);
    g->j[at]++;
    assert_ok(lg_graph_check(g));
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    assert_int_equal(lg_trainer_load(t, path), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "another data set"));
    assert_non_null(strstr(lg_last_error(), "edges"));
    assert_int_equal(lg_trainer_epochs_done(t), 0);
    lg_trainer_free(t);
    g->j[at]--;
    assert_ok(lg_trainer_init(&t, &mc, &tc, ds));
    assert_ok(lg_trainer_load(t, path));
    assert_int_equal(lg_trainer_epochs_done(t), 2);
    lg_trainer_free(t);
    unlink(path);
    lg_dataset_free(ds);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checkpoint_note),
        cmocka_unit_test(test_trainer_eval_rows), cmocka_unit_test(test_eval_subset),
        cmocka_unit_test(test_model_gradients), cmocka_unit_test(test_model_no_dropout),
        cmocka_unit_test(test_deterministic), cmocka_unit_test(test_init_checks_dataset), cmocka_unit_test(test_api_misuse),
        cmocka_unit_test(test_resume_bit_identical), cmocka_unit_test(test_io_grad_norm_max),
        cmocka_unit_test(test_missing_features),
        cmocka_unit_test(test_configs), cmocka_unit_test(test_init_pytorch), cmocka_unit_test(test_memory_estimate), cmocka_unit_test(test_features_borrowed), cmocka_unit_test(test_act_rms),
        cmocka_unit_test(test_params), cmocka_unit_test(test_symmetric_graph_shared),
        cmocka_unit_test(test_out_of_memory), cmocka_unit_test(test_restored_values),
        cmocka_unit_test(test_nonfinite_located),
        cmocka_unit_test(test_nonfinite_output),
        cmocka_unit_test(test_forward_rows),
        cmocka_unit_test(test_forward_rows_output_layer),
        cmocka_unit_test(test_output_bias_rows), cmocka_unit_test(test_batch_deterministic),
        cmocka_unit_test(test_batch_matches_full), cmocka_unit_test(test_batch_roots_only),
        cmocka_unit_test(test_batch_resume), cmocka_unit_test(test_batch_errors),
        cmocka_unit_test(test_batch_model_gradients), cmocka_unit_test(test_batch_bind_checks_transpose),
        cmocka_unit_test(test_batch_progress),
        cmocka_unit_test(test_plateau_patience_epochs), cmocka_unit_test(test_batch_norm_mean),
        cmocka_unit_test(test_layer_weight_decay), cmocka_unit_test(test_detector_resume),
        cmocka_unit_test(test_batch_order_per_epoch), cmocka_unit_test(test_load_other_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
