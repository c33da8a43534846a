/*
 * Internals of the GAT layer shared by gat.c (type-independent parts) and
 * gat_impl.h (the kernels, compiled for float and double). Not installed.
 */
#ifndef LG_ATTENTION_GAT_INTERNAL_H
#define LG_ATTENTION_GAT_INTERNAL_H

#include "attention/att_cache.h"
#include "core/internal.h"

/* Nodes per chunk of the deterministic reductions over nodes (parameter
 * gradients): chunk b sums nodes [b*CHUNK, (b+1)*CHUNK) in order, then the
 * chunks are summed in order, so the result does not depend on threads. */
#define LG__GAT_CHUNK 128

/* eps of LipschitzNorm (inside the square root for the paper's form, added to
 * c_ij for the reference code's). */
#define LG__GAT_EPS 1e-12

/* The layer's cache. Buffers are void* because one struct serves both scalar
 * types; real_size says which (the kernels cast to their lg_real). Sizes are
 * for the capacity (n_cap, nnz_cap); the last forward used (n, nnz). */
struct lg_gat_cache {
    LG__ATT_HEAD;       /* real_size, capacity, workspace and edge-map mode    */
    lg_gat_config cfg;  /* configuration the cache was made for               */
    /* state of the last forward */
    int have_fwd;       /* 1 once a forward completed                         */
    lg_gat_config fcfg; /* the cfg it was called with                         */
    lg_idx n, nnz;      /* its graph's sizes                                  */
    int drop_on;        /* 1 if attention dropout was applied                 */
    uint64_t drop_key;  /* mask key: lg_hash64(seed ^ lg_hash64(counter))     */
    double drop_p;      /* its probability                                    */
    /* activations (kept for backward) */
    void *xp;     /* n x KC: X W                                              */
    void *att;    /* nnz x K: softmax weights, before dropout                 */
    void *tsc;    /* nnz x K: the scaled normalised scores t (before the
                     LeakyReLU), for B2 (not the reference form: it
                     recomputes them with their per-edge q_ij and c_ij)     */
    void *sd;     /* n x K: aeff_dst_k . x_ik                                 */
    void *ss;     /* n x NS: per node, aeff_src_k . x_ik for the K heads, then
                     (Lipschitz modes, NS = 2K; else NS = K) ||x_ik||: the
                     scalars gathered per edge share a cache line            */
    void *q;      /* n x K: sqrt(||x_i||^2 + max_j ||x_j||^2 + eps) (paper)   */
    void *nmax;   /* n x K: max_{j in N(i)} ||x_jk|| (Lipschitz modes)         */
    void *amax;   /* n x K lg_idx: arg-max neighbour of the norms, -1 if N(i) empty */
    void *aeff;   /* 2 x K x C: effective attention vectors: [dst; src] * alpha_k,
                     alpha_k = 1/||a_k|| (paper's form; 0 if a_k = 0) or 1   */
    void *anorm;  /* K: ||a_k||                                               */
    /* backward workspace */
    void *dxp;    /* n x KC: dL/d(X W)                                        */
    void *rec;    /* nnz x RW, in TRANSPOSED order (position t of gT): per edge
                     j -> i and head, dL/d att'_ij (B1), replaced by dL/ds_ij
                     (B2), and (Lipschitz modes) the coefficient of x_j in
                     d x_j; RW = K or 2K                                      */
    void *tpos;   /* nnz lg__epos: position in gT of each edge of g (NULL when
                     lent_map; a lent map is used when it fits the graphs)   */
    void *tedge;  /* nnz lg__epos: the edge of g at each position of gT        */
    void *tnext;  /* n lg_idx: counting-sort cursor for tpos                  */
    void *nsd;    /* n x K: sum_j dL/ds_ij over row i (target side)          */
    void *nss;    /* n x K: sum_i dL/ds_ij over out-edges of j (source side) */
    void *ncoef;  /* n x K: dL/dq / q of node i (applied to x_i and x_amax)   */
    void *ncw;    /* n x K: total coefficient of x_j in d x_j                 */
    void *ndan;   /* n x K: dL/d||a_k|| of row i (reference form)             */
    void *part;   /* (nchunk + 1) x PW: reduction partials, last row = total;
                     PW = 2KC + K + D; then (B4) the workspace of dW's product
                     split along n (lg__gat_part_len)                          */
    /* the forward's scratch, the cache's own (never in a shared workspace,
       which forward does not touch; not in its thread's stack, which
       OMP_STACKSIZE may make small: tests/test_cli.sh, case omp) */
    void *fscr;   /* fscr_n blocks of lg__gat_fscr_bytes: one per thread      */
    int fscr_n;   /* threads it serves                                        */
};

/* The forward row pass's groups of rows (gat_impl.h): at most LG__GAT_GR
 * rows, LG__GAT_GV values per row and head of a block of heads (rows x
 * heads), LG__GAT_GE edges (but a group of one row). A thread's block of
 * scratch: LG__GAT_GE ints (each edge's row in the group), then two arrays of
 * LG__GAT_GV scalars (the softmax's maxima and inverse sums): 6 KB in float,
 * 8 KB in double, a multiple of 64 bytes. */
#define LG__GAT_GR 64
#define LG__GAT_GV 256
#define LG__GAT_GE 1024
static inline size_t lg__gat_fscr_bytes(size_t rs) {
    return (LG__GAT_GE * sizeof(int) + 2 * LG__GAT_GV * rs + 63) / 64 * 64;
}

/* Makes the cache's forward scratch serve teams of up to `threads` threads:
 * allocates it anew when it serves fewer (at the cache's making, for
 * omp_get_max_threads(); a forward called with more threads after that
 * allocates once more). LG_ENOMEM (the cache unchanged) if it cannot. */
lg_status lg__gat_fscr_reserve(lg_gat_cache *c, int threads);

/* Values per node of the cache's ss for K heads: the K source scores, then
 * (Lipschitz modes, lip = 1) the K norms, so that a gathered source costs one
 * cache line. The layout's one definition (gat.c allocates, gat_impl.h reads). */
static inline lg_idx lg__gat_ns(lg_idx K, int lip) { return lip ? 2 * K : K; }
/* The norms in that layout: node j's K norms at LG__GAT_NORMS(ss, ...) + j NS
 * (ss a cache's ss as lg_real *, const or not); NULL without a normaliser or
 * nodes. */
#define LG__GAT_NORMS(ss, K, lip, n) ((lip) && (n) > 0 ? (ss) + (K) : NULL)

/* Reals of the cache's part at n nodes (lg__att_part_len): B2's and B3's
 * partials, PW = 2KC + K + D wide, then B4's split of H^T dXP (in_dim x KC). */
static inline lg_idx lg__gat_part_len(const lg_gat_config *c, lg_idx n) {
    const lg_idx kc = c->heads * c->head_dim;
    return lg__att_part_len(n, LG__GAT_CHUNK, 2 * kc + c->heads + lg_gat_out_dim(c), c->in_dim, kc);
}

/* Validates the pair (cache, cfg) for a kernel of scalar size rs. */
lg_status lg__gat_check_cache(const lg_gat_cache *cache, const lg_gat_config *cfg, size_t rs,
                              const char *fn);

/* Allocates a cache's buffers for scalars of rs bytes, its workspace carved
 * from ws (ws_bytes long) if ws is not NULL (LG_ENOMEM, LG_EINVAL if ws is
 * too small; nothing leaked); lent_map = 1: without the edge map's buffers,
 * for a caller that lends one (lg__gat_cache_lend_tmap) before every
 * backward. */
lg_status lg__gat_cache_alloc(lg_gat_cache **out, const lg_gat_config *cfg, lg_idx n_cap,
                              lg_idx nnz_cap, size_t rs, void *ws, size_t ws_bytes, int lent_map);

/* lg_gat_memory of a cache made with lent_map (0: the same as lg_gat_memory). */
lg_status lg__gat_memory_ext(const lg_gat_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, int lent_map,
                             lg_gat_mem *mem);

/* Lends *m to the cache's backward passes (copied; the arrays stay the
 * caller's and must outlive their use). O(1). */
void lg__gat_cache_lend_tmap(lg_gat_cache *c, const lg__att_tmap *m);

#endif /* LG_ATTENTION_GAT_INTERNAL_H */
