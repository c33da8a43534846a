/*
 * Writes a data set as raw arrays for the PyTorch peer (bench/peer_torch.py),
 * so that both sides train on the same bits: DIR/meta.json and
 *   graph_p.bin, graph_j.bin   the in-neighbour CSR as given (int64)
 *   feat_p.bin, feat_j.bin     sparse features' CSR (int64; absent if dense)
 *   feat_x.bin                 feature values (float32; n*d if dense)
 *   labels.bin (int32), train.bin (int64)
 * Header-only; used by bench/bench_models.c (--dump) and tests/peer_export.c.
 * Returns 0, or -1 with errno set.
 */
#ifndef LG_BENCH_DUMP_H
#define LG_BENCH_DUMP_H

#include <stdio.h>
#include <sys/stat.h>

#include "lipgnn.h"

static inline int lg_dump_array(const char *dir, const char *file, const void *data, size_t size, size_t count) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = count ? fwrite(data, size, count, f) : 0;
    return fclose(f) == 0 && w == count ? 0 : -1;
}

static inline int lg_dump_dataset(const lg_dataset *ds, const char *dir) {
    _Static_assert(sizeof(lg_idx) == 8, "the dump writes lg_idx as int64");
    mkdir(dir, 0777);
    const lg_graph *g = ds->graph;
    const lg_features *x = ds->features;
    int sparse = x->kind == LG_FEAT_SPARSE;
    if (lg_dump_array(dir, "graph_p.bin", g->p, sizeof(lg_idx), (size_t)g->n + 1) ||
        lg_dump_array(dir, "graph_j.bin", g->j, sizeof(lg_idx), (size_t)g->nnz) ||
        lg_dump_array(dir, "feat_x.bin", x->x, sizeof(float), (size_t)x->nnz) ||
        (sparse && (lg_dump_array(dir, "feat_p.bin", x->p, sizeof(lg_idx), (size_t)x->n + 1) ||
                    lg_dump_array(dir, "feat_j.bin", x->j, sizeof(lg_idx), (size_t)x->nnz))) ||
        lg_dump_array(dir, "labels.bin", ds->labels, sizeof(int32_t), (size_t)g->n) ||
        lg_dump_array(dir, "train.bin", ds->train, sizeof(lg_idx), (size_t)ds->n_train))
        return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "{\"name\":\"%s\",\"nodes\":%lld,\"nnz\":%lld,\"features\":%lld,\"feature_kind\":\"%s\","
               "\"feature_nnz\":%lld,\"classes\":%d,\"n_train\":%lld}\n",
            ds->name, (long long)g->n, (long long)g->nnz, (long long)x->d, sparse ? "sparse" : "dense",
            (long long)x->nnz, ds->n_classes, (long long)ds->n_train);
    return fclose(f) == 0 ? 0 : -1;
}

/* DIR/model.json: the model's settings as the peer reads them. */
static inline int lg_dump_model(const char *dir, const char *config, const char *family, const lg_model_config *mc,
                                const lg_train_config *tc) {
    char path[4096];
    snprintf(path, sizeof path, "%s/model.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "{\"config\":\"%s\",\"family\":\"%s\",\"model\":\"%s\",\"layers\":%d,\"hidden\":%d,\"heads\":%d,"
               "\"norm\":\"%s\",\"dropout\":%.17g,\"att_dropout\":%.17g,\"self_loops\":%d,\"feature_norm_row\":%d,"
               "\"lr\":%.17g,\"weight_decay\":%.17g}\n",
            config, family, lg_model_kind_name(mc->kind), mc->kind == LG_MODEL_GAT_CLASSIC ? 2 : mc->layers, mc->hidden,
            mc->heads, lg_att_norm_name(mc->att_norm), mc->dropout, mc->att_dropout, mc->self_loops, mc->feature_norm_row,
            tc->lr, tc->weight_decay);
    return fclose(f) == 0 ? 0 : -1;
}

#endif
