/*
 * Internals of the scaled cosine-similarity attention layer shared by
 * cosatt.c (type-independent parts) and cosatt_impl.h (the kernels, compiled
 * for float and double). Not installed.
 */
#ifndef LG_ATTENTION_COSATT_INTERNAL_H
#define LG_ATTENTION_COSATT_INTERNAL_H

#include "attention/att_cache.h"
#include "core/internal.h"

/* Nodes per chunk of the deterministic reductions over nodes (bias
 * gradients): chunk b sums nodes [b*CHUNK, (b+1)*CHUNK) in order, then the
 * chunks are summed in order, independent of the thread count. */
#define LG__COS_CHUNK 128

/* The layer's cache. void* buffers serve both scalar types (real_size says
 * which). Sizes are for the capacity (n_cap, nnz_cap); the last forward used
 * (n, nnz). P = 3KC. */
struct lg_cosatt_cache {
    LG__ATT_HEAD;         /* real_size, capacity (its workspace and edge map
                             are always its own)                              */
    lg_cosatt_config cfg; /* configuration the cache was made for             */
    int have_fwd;         /* 1 once a forward completed                       */
    lg_idx n, nnz;        /* the last forward's graph sizes                   */
    /* activations */
    void *zh;   /* n x P: [qhat | khat | vhat] per head                         */
    void *rinv; /* n x 3 x K: 1 / sqrt(||x||^2 + eps) of q, k, v per head        */
    void *att;  /* nnz x K: softmax weights                                     */
    void *msg;  /* n x KC: m_i (the input of W_O)                               */
    /* backward workspace */
    void *dz;    /* n x P: dL/d hats, then dL/dZ                                */
    void *dm;    /* n x KC: dL/dm_i                                             */
    void *eds;   /* nnz x K: dL/d att_ij (scratch of the row pass)              */
    void *rec;   /* nnz x 2K in transposed order (position in gT): nu att_ij and
                    tau ds_ij, what the source pass needs of each edge         */
    void *tpos;  /* nnz lg__epos: position in gT of each edge of g               */
    void *tnext; /* n lg_idx: counting-sort cursors                            */
    void *part;  /* (nchunk + 1) x (P + D): bias-gradient partials, last row =
                    the total                                                  */
};

/* Validates (cache, cfg) for a kernel of scalar size rs. */
lg_status lg__cos_check_cache(const lg_cosatt_cache *cache, const lg_cosatt_config *cfg, size_t rs, const char *fn);

/* Allocates a cache for scalars of rs bytes (LG_ENOMEM, nothing leaked). */
lg_status lg__cos_cache_alloc(lg_cosatt_cache **out, const lg_cosatt_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                              size_t rs);

#endif /* LG_ATTENTION_COSATT_INTERNAL_H */
