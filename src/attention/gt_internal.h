/*
 * Internals of the graph-transformer layer shared by gt_common.c (the
 * type-independent parts) and gt_impl.h (the kernels, compiled for float and
 * double). Not installed.
 */
#ifndef LG_ATTENTION_GT_INTERNAL_H
#define LG_ATTENTION_GT_INTERNAL_H

#include "attention/att_cache.h"
#include "core/internal.h"

/* Nodes per chunk of the deterministic reductions over nodes (bias and gate
 * gradients): chunk b sums nodes [b*CHUNK, (b+1)*CHUNK) in order, then the
 * chunks are summed in order, so the result does not depend on threads. */
#define LG__GT_CHUNK 128

/* eps of the quadratic LipschitzNorm, added to the maximum of the products. */
#define LG__GT_EPS 1e-12

/* Which of the three products is the normaliser's maximum (paper's form:
 * nq nk, nq nv, nk nv; reference form: U nk, U nv, nk nv). */
enum { LG__GT_SEL_QK = 0, LG__GT_SEL_QV = 1, LG__GT_SEL_KV = 2 };

/* The layer's cache. Buffers are void* because one struct serves both scalar
 * types; real_size says which (the kernels cast to their lg_real). Sizes are
 * for the capacity (n_cap, nnz_cap); the last forward used (n, nnz).
 * P = 3KC + D (columns of Z), "lip" = a Lipschitz mode. */
struct lg_gt_cache {
    LG__ATT_HEAD;      /* real_size, capacity, workspace and edge-map mode     */
    lg_gt_config cfg;  /* configuration the cache was made for                */
    /* state of the last forward */
    int have_fwd;      /* 1 once a forward completed                          */
    lg_gt_config fcfg; /* the cfg it was called with                          */
    lg_idx n, nnz;     /* its graph's sizes                                   */
    int drop_on;       /* 1 if attention dropout was applied                  */
    uint64_t drop_key; /* mask key: lg_hash64(seed ^ lg_hash64(counter))      */
    double drop_p;     /* its probability                                     */
    /* activations (kept for backward) */
    void *z;     /* n x P: Z = H W + b = [q | k | v | r]                         */
    void *att;   /* nnz x K: softmax weights, before dropout                     */
    void *tsc;   /* nnz x K: the scores t_ij before the softmax, for B1's
                    normaliser term (Lipschitz modes)                          */
    void *nrm;   /* n x 3 x K: ||q_ik||, ||k_ik||, ||v_ik|| (lip)                */
    void *den;   /* n x K: the normaliser's max(...) + eps, 0 if N(i) empty (lip) */
    void *amax;  /* n x 3 x K lg_idx: arg-max neighbour of ||k||, of ||v|| (-1 if
                    N(i) empty) and the LG__GT_SEL_* of the product (lip)       */
    void *u;     /* K: U_k (reference form)                                      */
    void *msg;   /* n x D: aggregated messages m_i (gate)                        */
    void *gb;    /* n: gate values b_i (gate)                                    */
    /* backward workspace */
    void *dz;    /* n x P: dL/dZ                                                 */
    void *dm;    /* n x D: dL/dm_i                                               */
    void *eds;   /* nnz x K: dL/d att'_ij, scratch of the row pass               */
    void *rec;   /* nnz x RW, in TRANSPOSED order (position t of gT): what the
                    source pass needs of each edge: the weight of dm_i in dv_j,
                    dL/d(q_i . k_j), and (lip) the coefficients of k_j and v_j
                    sent by an arg-max; RW = 2K, or 4K in the Lipschitz modes  */
    void *ncf;   /* n x 2 x K: per source, the summed arg-max coefficients (lip) */
    void *dun;   /* (n + 1) x K: dL/dU_k of node i; last row = the total (ref)   */
    void *ga;    /* n: dL/d(gate logit) of node i (gate)                         */
    void *tpos;  /* nnz lg__epos: position in gT of each edge of g (NULL when
                    lent_map; a lent map is used when it fits the graphs)      */
    void *tnext; /* n lg_idx: counting-sort cursor for tpos                      */
    void *part;  /* (nchunk + 1) x (P + 3D gate): reduction partials, last row =
                    the total; then (B3) the workspace of dW's product split
                    along n (lg__gt_part_len)                                   */
};

/* Validates the pair (cache, cfg) for a kernel of scalar size rs. */
lg_status lg__gt_check_cache(const lg_gt_cache *cache, const lg_gt_config *cfg, size_t rs, const char *fn);

/* Allocates a cache's buffers for scalars of rs bytes, its workspace carved
 * from ws (ws_bytes long) if ws is not NULL (LG_ENOMEM, LG_EINVAL if ws is
 * too small; nothing leaked); lent_map = 1: without the edge map's buffers,
 * for a caller that lends one (lg__gt_cache_lend_tmap) before every
 * backward. */
lg_status lg__gt_cache_alloc(lg_gt_cache **out, const lg_gt_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                             size_t rs, void *ws, size_t ws_bytes, int lent_map);

/* lg_gt_memory of a cache made with lent_map (0: the same as lg_gt_memory). */
lg_status lg__gt_memory_ext(const lg_gt_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, int lent_map,
                            lg_gt_mem *mem);

/* Lends *m to the cache's backward passes (copied; the arrays stay the
 * caller's and must outlive their use). O(1). */
void lg__gt_cache_lend_tmap(lg_gt_cache *c, const lg__att_tmap *m);

/* Width of the reduction partials: P (bias) + 3D (gate vector, if any). */
lg_idx lg__gt_part_width(const lg_gt_config *cfg);

/* Reals of the cache's part at n nodes (lg__att_part_len): B2's partials,
 * lg__gt_part_width wide, then B3's split of H^T dZ (in_dim x P). */
lg_idx lg__gt_part_len(const lg_gt_config *cfg, lg_idx n);

#endif /* LG_ATTENTION_GT_INTERNAL_H */
