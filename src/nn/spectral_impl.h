/*
 * Spectral rescaling of a weight matrix (LipsFormer's spectral
 * initialisation): w /= sigma_max(w), sigma_max estimated by power iteration
 * from a seeded start. Generic over the scalar (core/real.h); compiled by
 * nn_f32.c and nn_f64.c. Contract: lipgnn/nn.h. Runs once at initialisation:
 * it allocates two vectors and iterates in double, serially (bitwise
 * reproducible, independent of threads).
 */
#include "core/real.h"
#include "nn/nn_common.h"

lg_status LG_FN(lg_spectral_rescale)(lg_real *w, lg_idx rows, lg_idx cols, lg_idx ld, int iters, uint64_t seed,
                                     double *sigma) {
    LG_CHECK(lg__nn_shape(__func__, rows, cols));
    LG__NN_NEED(w, rows > 0 && cols > 0, "w");
    if (ld < cols) return lg__error(LG_EINVAL, "%s: ld = %lld < cols = %lld", __func__, (long long)ld, (long long)cols);
    /* the extent (rows - 1) ld + cols, addressable as lg__nn_shape's sizes
     * (cols <= INT64_MAX / 8 there) */
    if (rows > 1 && cols > 0 && ld > ((lg_idx)(INT64_MAX / 8) - cols) / (rows - 1))
        return lg__error(LG_EINVAL, "%s: %lld rows of stride ld = %lld overflow", __func__, (long long)rows,
                         (long long)ld);
    if (iters < 1) return lg__error(LG_EINVAL, "%s: iters = %d: must be >= 1", __func__, iters);
    if (sigma) *sigma = 0;
    if (rows == 0 || cols == 0) return LG_OK;
    double *v = lg__malloc_array((size_t)cols, sizeof(double)), *u = lg__malloc_array((size_t)rows, sizeof(double));
    if (!v || !u) {
        lg__free(v);
        lg__free(u);
        return lg__nomem("spectral rescale vectors");
    }
    lg_rng r;
    lg_rng_seed(&r, seed);
    for (lg_idx c = 0; c < cols; c++) v[c] = 2.0 * lg_rng_double(&r) - 1.0;
    double s = 0;
    for (int it = 0; it < iters; it++) {
        /* v <- v / ||v||; u = W v; s = ||u||; u <- u / s; v = W^T u */
        double nv = 0;
        for (lg_idx c = 0; c < cols; c++) nv += v[c] * v[c];
        nv = sqrt(nv);
        if (!(nv > 0)) break; /* W v = 0 (W = 0 or v in its null space): s stays 0 */
        for (lg_idx c = 0; c < cols; c++) v[c] /= nv;
        double nu = 0;
        for (lg_idx i = 0; i < rows; i++) {
            double a = 0;
            for (lg_idx c = 0; c < cols; c++) a += (double)w[i * ld + c] * v[c];
            u[i] = a;
            nu += a * a;
        }
        s = sqrt(nu); /* ||W v|| with ||v|| = 1: a lower bound on sigma_max that increases */
        if (!(s > 0)) break;
        for (lg_idx i = 0; i < rows; i++) u[i] /= s;
        for (lg_idx c = 0; c < cols; c++) v[c] = 0;
        for (lg_idx i = 0; i < rows; i++)
            for (lg_idx c = 0; c < cols; c++) v[c] += (double)w[i * ld + c] * u[i];
    }
    lg__free(v);
    lg__free(u);
    if (!isfinite(s)) return lg__error(LG_EINVAL, "%s: the matrix has a non-finite entry or norm", __func__);
    if (s > 0)
        for (lg_idx i = 0; i < rows; i++)
            for (lg_idx c = 0; c < cols; c++) w[i * ld + c] = (lg_real)((double)w[i * ld + c] / s);
    if (sigma) *sigma = s;
    return LG_OK;
}
