/* Argument checks and dropout keys shared by the f32 and f64 kernels of
 * src/nn (see nn_common.h), and the loss's node-list check. */
#include <limits.h>
#include <math.h>

#include "nn/nn_common.h"

lg_status lg__nn_shape(const char *fn, lg_idx rows, lg_idx cols) {
    if (rows < 0 || cols < 0)
        return lg__error(LG_EINVAL, "%s: negative size %lld x %lld", fn, (long long)rows, (long long)cols);
    if (cols > 0 && rows > (lg_idx)(INT64_MAX / 8) / cols)
        return lg__error(LG_EINVAL, "%s: size %lld x %lld overflows", fn, (long long)rows, (long long)cols);
    return LG_OK;
}

lg_status lg__nn_blas_dim(const char *fn, lg_idx v) {
    if (v > INT_MAX)
        return lg__error(LG_ERANGE, "%s: dimension %lld exceeds BLAS's 32-bit limit", fn, (long long)v);
    return LG_OK;
}

lg_status lg__nn_segments(const char *fn, const lg_idx *ptr, lg_idx n_graphs, lg_idx n) {
    if (!ptr) return LG_OK;
    if (n_graphs < 0) return lg__error(LG_EINVAL, "%s: negative segment count %lld", fn, (long long)n_graphs);
    if (ptr[0] != 0 || ptr[n_graphs] != n)
        return lg__error(LG_EINVAL, "%s: segment offsets run from %lld to %lld, not from 0 to n = %lld", fn,
                         (long long)ptr[0], (long long)ptr[n_graphs], (long long)n);
    for (lg_idx g = 0; g < n_graphs; g++)
        if (ptr[g + 1] < ptr[g])
            return lg__error(LG_EINVAL, "%s: segment %lld has negative length (%lld .. %lld)", fn, (long long)g,
                             (long long)ptr[g], (long long)ptr[g + 1]);
    return LG_OK;
}

lg_status lg__nn_csr_check(const char *fn, const lg_features *x) {
    if (!x) return lg__error(LG_EINVAL, "%s: sparse matrix is NULL", fn);
    if (x->kind != LG_FEAT_SPARSE) return lg__error(LG_EINVAL, "%s: features are not sparse", fn);
    LG_CHECK(lg__nn_shape(fn, x->n, x->d));
    if (x->nnz < 0) return lg__error(LG_EINVAL, "%s: negative nnz %lld", fn, (long long)x->nnz);
    if (!x->p || (x->nnz > 0 && (!x->j || !x->x))) return lg__error(LG_EINVAL, "%s: sparse arrays are NULL", fn);
    if (x->p[0] != 0 || x->p[x->n] != x->nnz)
        return lg__error(LG_EINVAL, "%s: row pointers run from %lld to %lld, not from 0 to nnz = %lld", fn,
                         (long long)x->p[0], (long long)x->p[x->n], (long long)x->nnz);
    /* all pointers first: monotone from 0 to nnz, so every row lies in [0, nnz) */
    for (lg_idx i = 0; i < x->n; i++)
        if (x->p[i + 1] < x->p[i]) return lg__error(LG_EINVAL, "%s: row %lld has negative length", fn, (long long)i);
    for (lg_idx i = 0; i < x->n; i++) {
        for (lg_idx e = x->p[i]; e < x->p[i + 1]; e++)
            if (x->j[e] < 0 || x->j[e] >= x->d)
                return lg__error(LG_EINVAL, "%s: row %lld has column %lld outside [0, %lld)", fn, (long long)i,
                                 (long long)x->j[e], (long long)x->d);
    }
    return LG_OK;
}

lg_status lg__nn_dropout_p(const char *fn, double p) {
    if (!(p >= 0.0 && p < 1.0)) return lg__error(LG_EINVAL, "%s: dropout rate %g is outside [0, 1)", fn, p);
    return LG_OK;
}

lg_status lg__nn_dropout_args(const char *fn, lg_idx count, double p, const void *a, const char *an, const void *b,
                              const char *bn, size_t distinct) {
    if (count < 0) return lg__error(LG_EINVAL, "%s: negative count", fn);
    LG_CHECK(lg__nn_dropout_p(fn, p));
    if (count > 0 && !a) return lg__error(LG_EINVAL, "%s: %s is NULL", fn, an);
    if (count > 0 && !b) return lg__error(LG_EINVAL, "%s: %s is NULL", fn, bn);
    if (distinct && count > 0) LG_CHECK(lg__apart(fn, a, an, (size_t)count * distinct, b, bn, (size_t)count * distinct));
    return LG_OK;
}

uint64_t lg__nn_dropout_stream(uint64_t seed, uint64_t counter) { return lg_hash64(seed ^ lg_hash64(counter)); }

uint64_t lg__nn_dropout_threshold(double p) {
    /* p < 1, so p * 2^32 < 2^32 and the floor fits */
    return (uint64_t)(p * 4294967296.0);
}

int lg_dropout_kept(uint64_t seed, uint64_t counter, lg_idx k, double p) {
    if (!(p >= 0.0 && p < 1.0)) return 1;
    return lg__nn_dropout_keep(lg__nn_dropout_stream(seed, counter), lg__nn_dropout_threshold(p), k);
}

lg_status lg_nll_check(const int32_t *labels, lg_idx n, lg_idx n_classes, const lg_idx *nodes, lg_idx m) {
    if (m < 0 || n < 0 || n_classes < 0)
        return lg__error(LG_EINVAL, "lg_nll_check: negative size (n=%lld, classes=%lld, m=%lld)", (long long)n,
                         (long long)n_classes, (long long)m);
    if (m == 0) return LG_OK;
    if (!labels || !nodes) return lg__error(LG_EINVAL, "lg_nll_check: labels or node list is NULL");
    for (lg_idx k = 0; k < m; k++) {
        lg_idx i = nodes[k];
        if (i < 0 || i >= n)
            return lg__error(LG_EINVAL, "node list entry %lld: node %lld outside [0, %lld)", (long long)k,
                             (long long)i, (long long)n);
        if (labels[i] < 0 || labels[i] >= n_classes)
            return lg__error(LG_EINVAL, "node list entry %lld: node %lld has label %d, outside [0, %lld)%s",
                             (long long)k, (long long)i, (int)labels[i], (long long)n_classes,
                             labels[i] == -1 ? " (unlabelled nodes must not be listed)" : "");
    }
    return LG_OK;
}
