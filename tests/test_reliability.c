/* Reliability (issue 9): every allocation failure while loading Cora and
 * building and training a model for one epoch returns LG_ENOMEM with nothing
 * leaked; two models trained at once in two threads of one process give the
 * same bits as when trained one after the other. */
#include <pthread.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct cora_sweep {
    const char *path;
    const lg_model_config *mc;
    const lg_train_config *tc;
} cora_sweep;

/* One attempt of the sweep: load, build, one epoch (which must not allocate). */
static lg_status cora_attempt(void *ctx, long k) {
    (void)k;
    const cora_sweep *w = ctx;
    lg_dataset *ds = NULL;
    lg_trainer *t = NULL;
    lg_status st = lg_dataset_load(&ds, w->path);
    if (st == LG_OK) st = lg_trainer_init(&t, w->mc, w->tc, ds);
    if (st == LG_OK) {
        lg_epoch_stats es;
        assert_int_equal(lg_trainer_epoch(t, &es), LG_OK); /* must not allocate */
    }
    lg_trainer_free(t);
    lg_dataset_free(ds);
    return st;
}

static void test_alloc_sweep_cora(void **state) {
    (void)state;
    char path[4096];
    if (!lg_test_dataset_path(path, sizeof path, "cora")) skip();
    lg_model_config mc;
    lg_model_config_default(&mc, LG_MODEL_GAT);
    mc.layers = 2;
    mc.hidden = 8;
    mc.att_norm = LG_ATT_NORM_LIPSCHITZ;
    mc.node_norm = LG_NODE_NORM_PAIRNORM;
    mc.residual = 1;
    lg_train_config tc;
    lg_train_config_default(&tc);
    tc.missing = 0.5; /* the feature-removal path allocates too */
    cora_sweep w = {path, &mc, &tc};
    long failures = lg_test_alloc_sweep(cora_attempt, &w, 100000);
    print_message("%ld allocation points, each failure handled\n", failures);
    assert_true(failures > 20);
}

/* A random data set (no igraph: this runs in threads). */
static lg_dataset *random_dataset(uint64_t seed) {
    lg_rng r;
    lg_rng_seed(&r, seed);
    const lg_idx n = 300, m = 1200, d = 12;
    lg_dataset *ds = calloc(1, sizeof *ds);
    ds->name = strdup("random");
    lg_idx *src = malloc(sizeof(lg_idx) * m), *dst = malloc(sizeof(lg_idx) * m);
    for (lg_idx e = 0; e < m; e++) {
        src[e] = (lg_idx)lg_rng_below(&r, n);
        dst[e] = (lg_idx)lg_rng_below(&r, n);
    }
    assert_ok(lg_graph_from_edges(&ds->graph, n, m, src, dst, LG_GRAPH_SYMMETRIZE));
    free(src);
    free(dst);
    lg_features *f = calloc(1, sizeof *f);
    f->n = n;
    f->d = d;
    f->kind = LG_FEAT_DENSE;
    f->nnz = n * d;
    f->x = malloc(sizeof(float) * (size_t)(n * d));
    for (lg_idx q = 0; q < n * d; q++) f->x[q] = (float)lg_rng_double(&r);
    ds->features = f;
    ds->n_classes = 4;
    ds->labels = malloc(sizeof(int32_t) * n);
    for (lg_idx i = 0; i < n; i++) ds->labels[i] = (int32_t)lg_rng_below(&r, 4);
    lg_test_dataset_split_thirds(ds, n);
    return ds;
}

typedef struct job {
    lg_model_kind kind;   /* model                             */
    lg_att_norm norm;     /* its attention norm                */
    uint64_t seed;        /* data and training seed            */
    double losses[8];     /* training loss of each epoch       */
    float *logp;          /* final log-probabilities (n x 4)   */
    lg_status st;
} job;

static void *run_job(void *arg) {
    job *j = arg;
    omp_set_num_threads(1); /* one thread each */
    lg_dataset *ds = random_dataset(j->seed);
    lg_model_config mc;
    lg_model_config_default(&mc, j->kind);
    mc.layers = 3;
    mc.hidden = 8;
    mc.heads = 2;
    mc.att_norm = j->norm;
    lg_train_config tc;
    lg_train_config_default(&tc);
    tc.seed = j->seed;
    lg_trainer *t = NULL;
    j->st = lg_trainer_init(&t, &mc, &tc, ds);
    for (int e = 0; e < 8 && j->st == LG_OK; e++) {
        lg_epoch_stats es;
        j->st = lg_trainer_epoch(t, &es);
        j->losses[e] = es.train_loss_step;
    }
    j->logp = malloc(sizeof(float) * 300 * 4);
    if (j->st == LG_OK) j->st = lg_trainer_predict(t, j->logp, NULL);
    lg_trainer_free(t);
    lg_dataset_free(ds);
    return NULL;
}

static void test_two_models_two_threads(void **state) {
    (void)state;
    lg_set_threads(1);
    job seq[2] = {{LG_MODEL_GAT, LG_ATT_NORM_LIPSCHITZ, 11, {0}, NULL, LG_OK},
                  {LG_MODEL_GT, LG_ATT_NORM_LIPSCHITZ_REF, 12, {0}, NULL, LG_OK}};
    job par[2];
    memcpy(par, seq, sizeof par);
    run_job(&seq[0]);
    run_job(&seq[1]);
    pthread_t th[2];
    for (int k = 0; k < 2; k++) assert_int_equal(pthread_create(&th[k], NULL, run_job, &par[k]), 0);
    for (int k = 0; k < 2; k++) assert_int_equal(pthread_join(th[k], NULL), 0);
    for (int k = 0; k < 2; k++) {
        assert_ok(seq[k].st);
        assert_ok(par[k].st);
        assert_memory_equal(seq[k].losses, par[k].losses, sizeof seq[k].losses);
        assert_memory_equal(seq[k].logp, par[k].logp, sizeof(float) * 300 * 4);
        free(seq[k].logp);
        free(par[k].logp);
    }
    lg_set_threads(0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_sweep_cora),
        cmocka_unit_test(test_two_models_two_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
