/*
 * Internal helpers of src/nn shared by the generic kernels (the *_impl.h files,
 * compiled as f32 and f64) and written once in nn_common.c: argument checks,
 * the dropout mask, and the constants that shape the parallel loops.
 */
#ifndef LG_NN_COMMON_H
#define LG_NN_COMMON_H

#include "core/internal.h"

/* Width of a column block: the reductions across rows (bias and gain
 * gradients, PairNorm's means) give each task a block of this many columns,
 * summed over the rows in ascending order, so no sum depends on the threads. */
#define LG__NN_CB 16

/* Rows per task of the sparse linear forward. */
#define LG__NN_SPROWS 16

/* Work (elements touched) below which a loop runs on one thread: forking costs
 * more than it saves. The results do not depend on it. */
#define LG__NN_PAR_MIN 8192

/* Elements per chunk of the element-wise loops (a chunk is one call of a
 * kernel variant, core/isa.h). */
#define LG__NN_CHUNK 4096

/* Golden-ratio increment of splitmix64, spacing the dropout keys. */
#define LG__NN_GOLDEN 0x9e3779b97f4a7c15ULL

/* LG_EINVAL "<fn>: <name> is NULL" if ptr is NULL while need is true. */
#define LG__NN_NEED(ptr, need, name)                                                     \
    do {                                                                                 \
        if ((need) && !(ptr)) return lg__error(LG_EINVAL, "%s: %s is NULL", __func__, name); \
    } while (0)

/* db (out) += the column sums of n rows of dy (out columns): rows 0..n-1, or
 * rows[0..n-1] (listed in increasing order, over a dy whose other rows are
 * zero, the bits of the sum over every row: the full-graph model's bias
 * gradient of its output linear over its training rows). src/nn/linear_impl.h. */
void lg__colsum_add_f32(float *db, const float *dy, lg_idx n, lg_idx out, const lg_idx *rows);
void lg__colsum_add_f64(double *db, const double *dy, lg_idx n, lg_idx out, const lg_idx *rows);

/* Checks a matrix shape rows x cols: both >= 0 and rows * cols * 8 bytes
 * addressable. LG_EINVAL naming fn otherwise. */
lg_status lg__nn_shape(const char *fn, lg_idx rows, lg_idx cols);

/* Checks that v fits a BLAS (32-bit int) dimension: LG_ERANGE otherwise. */
lg_status lg__nn_blas_dim(const char *fn, lg_idx v);

/* Checks segment offsets: ptr NULL (one segment), or n_graphs >= 0 and
 * ptr[0] = 0 <= ptr[1] <= ... <= ptr[n_graphs] = n. LG_EINVAL otherwise. */
lg_status lg__nn_segments(const char *fn, const lg_idx *ptr, lg_idx n_graphs, lg_idx n);

/* Checks a sparse feature matrix: kind LG_FEAT_SPARSE, sizes >= 0, arrays
 * present, p[0] = 0, p non-decreasing, p[n] = nnz, column ids in [0, d).
 * O(n + nnz). LG_EINVAL naming fn and the first violation otherwise. */
lg_status lg__nn_csr_check(const char *fn, const lg_features *x);

/* Checks a dropout rate: p in [0, 1). LG_EINVAL otherwise. */
lg_status lg__nn_dropout_p(const char *fn, double p);

/* The arguments of a dropout operation fn on arrays a and b (named an, bn)
 * of count elements: count >= 0, the rate p in [0, 1) (lg__nn_dropout_p),
 * neither array NULL when count > 0, and, when distinct is the element size
 * (0: aliasing allowed), the two not overlapping. LG_EINVAL naming fn and
 * the first violation otherwise. */
lg_status lg__nn_dropout_args(const char *fn, lg_idx count, double p, const void *a, const char *an, const void *b,
                              const char *bn, size_t distinct);

/* The dropout stream of (seed, counter) and the drop threshold of p (see
 * lipgnn/nn.h). */
uint64_t lg__nn_dropout_stream(uint64_t seed, uint64_t counter);
uint64_t lg__nn_dropout_threshold(double p);

/* The mask of lipgnn/nn.h: element k of a stream survives iff
 *   mix32(mix32(lo + key_lo) ^ key_hi) >= threshold,
 * with lo, hi the low and high 32-bit words of k, key = lg_hash64(stream +
 * hi * LG__NN_GOLDEN) (key_lo, key_hi its words) and mix32 a bijection of
 * 32-bit words (Wellons' "lowbias32": x ^= x >> 16; x *= 0x7feb352d;
 * x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16). Everything per element is
 * 32-bit arithmetic, which vectorises at every width (eight or sixteen
 * lanes, one instruction a multiply); the key is computed once per chunk of
 * LG__NN_CHUNK elements, which never straddles a change of hi. Until
 * 2026-11-28 the rule was lg_hash64(stream + k * golden) >> 32 >= threshold:
 * two 64-bit multiplies an element, emulated by three each without AVX-512
 * (bench/README.md, "Changes made for this issue", stop 35). */
_Static_assert((1ULL << 32) % LG__NN_CHUNK == 0, "a chunk of the element-wise loops must not straddle 2^32");

static inline uint32_t lg__nn_mix32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* The key of the elements k of a stream with k >> 32 = hi. */
static inline uint64_t lg__nn_dropout_key(uint64_t stream, uint64_t hi) {
    return lg__hash64(stream + hi * LG__NN_GOLDEN);
}

/* 1 if the element of low word lo survives under key (threshold < 2^32). */
static inline int lg__nn_keep32(uint64_t key, uint64_t threshold, uint32_t lo) {
    return lg__nn_mix32(lg__nn_mix32(lo + (uint32_t)key) ^ (uint32_t)(key >> 32)) >= (uint32_t)threshold;
}

/* 1 if element k (>= 0) survives. */
static inline int lg__nn_dropout_keep(uint64_t stream, uint64_t threshold, lg_idx k) {
    return lg__nn_keep32(lg__nn_dropout_key(stream, (uint64_t)k >> 32), threshold, (uint32_t)k);
}

#endif /* LG_NN_COMMON_H */
