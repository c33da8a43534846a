/* The transpose of a sparse feature matrix (a utility of the public API; the
 * sparse linear layer's backward streams x itself). */
#include <string.h>

#include "nn/nn_common.h"

/* t = the transpose of the valid sparse x into t's arrays (p: d+1 entries, j
 * and x: nnz each); next: d cursors of workspace. */
static void lg__features_transpose_into(lg_features *t, lg_idx *next, const lg_features *x) {
    t->n = x->d;
    t->d = x->n;
    t->kind = LG_FEAT_SPARSE;
    t->nnz = x->nnz;
    /* counting sort by column: visiting the rows of x in order leaves each
     * row of t ascending */
    memset(t->p, 0, sizeof(lg_idx) * ((size_t)x->d + 1));
    for (lg_idx e = 0; e < x->nnz; e++) t->p[x->j[e] + 1]++;
    for (lg_idx c = 0; c < x->d; c++) t->p[c + 1] += t->p[c];
    if (x->d) memcpy(next, t->p, sizeof(lg_idx) * (size_t)x->d);
    for (lg_idx i = 0; i < x->n; i++)
        for (lg_idx e = x->p[i]; e < x->p[i + 1]; e++) {
            lg_idx q = next[x->j[e]]++;
            t->j[q] = i;
            t->x[q] = x->x[e];
        }
}

lg_status lg_features_transpose(lg_features **out, const lg_features *x) {
    lg_status st = LG_OK;
    lg_features *t = NULL;
    lg_idx *next = NULL;
    if (!out) return lg__error(LG_EINVAL, "lg_features_transpose: out is NULL");
    *out = NULL;
    LG_CHECK(lg__nn_csr_check("lg_features_transpose", x));
    LG_CALLOC(t, 1, "transposed features");
    LG_CALLOC(t->p, (size_t)x->d + 1, "transposed feature row pointers");
    LG_ALLOC(t->j, x->nnz, "transposed feature column ids");
    LG_ALLOC(t->x, x->nnz, "transposed feature values");
    LG_ALLOC(next, x->d, "transpose workspace");
    lg__features_transpose_into(t, next, x);
    lg__free(next);
    *out = t;
    return LG_OK;
fail:
    lg__free(next);
    if (t) {
        lg__free(t->p);
        lg__free(t->j);
        lg__free(t->x);
        lg__free(t);
    }
    return st;
}
