/*
 * Writes what the PyTorch peer needs to check one full-model step of lipgnn
 * (tests/test_peer.sh, bench/peer_torch.py check): a small tie-free data set
 * (random graph with two nodes that have no in-neighbour, sparse features with
 * random values), the model's settings with dropout off, its initial
 * parameters (lipgnn's layout, float32) and the loss and gradients of one
 * training step (forward, mean NLL over the training nodes, backward) through
 * the trainer's own model.
 *
 * Usage: peer_export DIR MODEL NORM LAYERS HIDDEN HEADS [SEED]
 *   e.g. peer_export /tmp/x gat lipschitz 4 8 2
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lipgnn.h"
#include "core/internal.h"
#include "train/model.h"
#include "train/trainer_internal.h"
#include "bench/dump.h"

static int fail(const char *what) {
    fprintf(stderr, "peer_export: %s: %s\n", what, lg_last_error());
    return 1;
}

/* n nodes, m random undirected edges among nodes 2..n-1 (nodes 0 and 1 have
 * no neighbour), d sparse features (about 40% non-zero, values in [0.1, 1.1)),
 * 3 classes, every other node in the training split. */
static lg_dataset *make_data(uint64_t seed) {
    const lg_idx n = 48, m = 110, d = 12;
    lg_rng r;
    lg_rng_seed(&r, seed);
    lg_dataset *ds = calloc(1, sizeof *ds);
    lg_features *x = calloc(1, sizeof *x);
    lg_idx *src = malloc(sizeof(lg_idx) * m), *dst = malloc(sizeof(lg_idx) * m);
    if (!ds || !x || !src || !dst) return NULL;
    for (lg_idx e = 0; e < m; e++) {
        do {
            src[e] = 2 + (lg_idx)lg_rng_below(&r, (uint64_t)(n - 2));
            dst[e] = 2 + (lg_idx)lg_rng_below(&r, (uint64_t)(n - 2));
        } while (src[e] == dst[e]);
    }
    if (lg_graph_from_edges(&ds->graph, n, m, src, dst, LG_GRAPH_SYMMETRIZE)) return NULL;
    free(src);
    free(dst);
    x->n = n;
    x->d = d;
    x->kind = LG_FEAT_SPARSE;
    x->p = malloc(sizeof(lg_idx) * (size_t)(n + 1));
    x->j = malloc(sizeof(lg_idx) * (size_t)(n * d));
    x->x = malloc(sizeof(float) * (size_t)(n * d));
    ds->labels = malloc(sizeof(int32_t) * (size_t)n);
    ds->train = malloc(sizeof(lg_idx) * (size_t)n);
    ds->graph_ptr = malloc(sizeof(lg_idx) * 2);
    ds->name = strdup("peer-check");
    if (!x->p || !x->j || !x->x || !ds->labels || !ds->train || !ds->graph_ptr || !ds->name) return NULL;
    x->p[0] = 0;
    for (lg_idx i = 0; i < n; i++) {
        for (lg_idx c = 0; c < d; c++)
            if (lg_rng_double(&r) < 0.4 || c == i % d) { /* no empty row */
                x->j[x->nnz] = c;
                x->x[x->nnz++] = 0.1f + lg_rng_float(&r);
            }
        x->p[i + 1] = x->nnz;
        ds->labels[i] = (int32_t)lg_rng_below(&r, 3);
        if (i % 2 == 0) ds->train[ds->n_train++] = i;
    }
    ds->features = x;
    ds->n_classes = 3;
    ds->n_graphs = 1;
    ds->graph_ptr[0] = 0;
    ds->graph_ptr[1] = n;
    return ds;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "Usage: peer_export DIR MODEL NORM LAYERS HIDDEN HEADS [SEED]\n");
        return 2;
    }
    const char *dir = argv[1];
    uint64_t seed = argc > 7 ? strtoull(argv[7], NULL, 10) : 7;
    lg_model_config mc;
    lg_model_kind kind;
    lg_node_norm node;
    if (lg_model_kind_parse(argv[2], &kind)) return fail("model");
    lg_model_config_default(&mc, kind);
    if (lg_norm_parse(argv[3], &mc.att_norm, &node)) return fail("norm");
    mc.node_norm = node;
    mc.layers = atoi(argv[4]);
    mc.hidden = atoi(argv[5]);
    mc.heads = atoi(argv[6]);
    mc.dropout = 0;
    mc.att_dropout = 0;
    lg_train_config tc;
    lg_train_config_default(&tc);
    tc.seed = seed;
    lg_set_threads(0);
    lg_dataset *ds = make_data(seed);
    if (!ds) return fail("data");
    lg_trainer *t = NULL;
    if (lg_trainer_init(&t, &mc, &tc, ds)) return fail("trainer");
    lg__model_f32 *m = lg__trainer_model(t);
    lg_idx np = lg__model_nparams_f32(m);
    char what[256];
    snprintf(what, sizeof what, "%s %s, %d layers, hidden %d, %d heads", argv[2], argv[3],
             kind == LG_MODEL_GAT_CLASSIC ? 2 : mc.layers, mc.hidden, mc.heads);
    if (lg_dump_dataset(ds, dir) || lg_dump_model(dir, "check", "check", &mc, &tc) ||
        lg_dump_array(dir, "params.bin", lg__model_params_f32(m), sizeof(float), (size_t)np)) {
        perror(dir);
        return 1;
    }
    double loss = 0;
    if (lg__model_forward_f32(m, 1, seed, 1) || lg__model_eval_f32(m, ds->train, ds->n_train, &loss, NULL) ||
        lg__model_backward_f32(m, ds->train, ds->n_train, 1, seed, 1))
        return fail("step");
    if (lg_dump_array(dir, "grads.bin", lg__model_grads_f32(m), sizeof(float), (size_t)np)) {
        perror(dir);
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/step.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f, "{\"what\":\"%s\",\"loss\":%.17g,\"params\":%lld}\n", what, loss, (long long)np);
    fclose(f);
    lg_trainer_free(t);
    lg_dataset_free(ds);
    return 0;
}
