/*
 * Internals of the L2-attention layer shared by l2att.c (type-independent
 * parts) and l2att_impl.h (the kernels, compiled for float and double). Not
 * installed.
 */
#ifndef LG_ATTENTION_L2ATT_INTERNAL_H
#define LG_ATTENTION_L2ATT_INTERNAL_H

#include "core/internal.h"
#include "attention/att_cache.h"

/* Nodes per chunk of the deterministic reductions over nodes (the bias
 * gradient): chunk b sums rows [b*CHUNK, (b+1)*CHUNK) in order, then the
 * chunks are summed in order. */
#define LG__L2_CHUNK 128

/* Added to the bound in the contractive form: out = c F / (B + EPS). */
#define LG__L2_EPS 1e-12

/* beta >= max_{u >= 0} sqrt(u) / (1 + e^u) (= 0.277855... at 1 + e^-u = 2u). */
#define LG__L2_BETA 0.27786

/* The layer's cache; buffers are void* (one struct serves both scalar types),
 * real_size says which. Sizes are for the capacity (n_cap, nnz_cap). */
struct lg_l2att_cache {
    LG__ATT_HEAD;         /* real_size, capacity, workspace and edge-map mode  */
    lg_l2att_config cfg;  /* configuration the cache was made for             */
    /* state of the last forward */
    int have_fwd;
    lg_l2att_config fcfg;
    lg_idx n, nnz;
    lg_idx n_in, n_out;   /* its graph's degree limits (contractive form)     */
    double bound;         /* B of the last forward (contractive form; else 0)  */
    double scale;         /* c / (B + eps), or 1                              */
    /* activations */
    void *q;     /* n x KC: Q = X W_Q                                        */
    void *qn;    /* n x K: ||q_i^h||^2                                       */
    void *att;   /* nnz x K: P                                               */
    void *m;     /* n x KC: m_i^h = sum_j P_ij q_j                           */
    void *o;     /* n x KC: o_i^h = m_i^h V_h                                */
    /* workspace */
    void *dO;    /* n x KC: dL/dO                                            */
    void *dM;    /* n x KC: dL/dM                                            */
    void *dQ;    /* n x KC: dL/dQ                                            */
    void *rec;   /* nnz x K, transposed order: dL/ds_ij                      */
    void *tpos;  /* nnz lg__epos: position in gT of each edge of g (NULL
                    when lent_map)                                          */
    void *tedge; /* nnz lg__epos: edge of g at each position of gT (same)     */
    void *tnext; /* n lg_idx: counting-sort cursors; forward: degree counts */
    void *gwo;   /* KC x D: O^T dL/dout (unscaled W_O gradient)             */
    void *part;  /* (nchunk + 1) x D: bias-gradient partials, last = total  */
    void *fx;    /* n x D: f(x) in lg_l2att_invert (contractive only)       */
};

lg_status lg__l2att_check_cache(const lg_l2att_cache *cache, const lg_l2att_config *cfg, size_t rs, const char *fn);
/* LG_EINVAL naming the first node of g without its self-loop (rows sorted). */
lg_status lg__l2att_check_loops(const lg_graph *g, const char *fn);
/* n_in, n_out of g using cnt (n counters of workspace). */
void lg__l2att_degrees(const lg_graph *g, lg_idx *cnt, lg_idx *n_in, lg_idx *n_out);
/* Allocates a cache's buffers for scalars of rs bytes, its workspace carved
 * from ws (ws_bytes long) if ws is not NULL (LG_ENOMEM, LG_EINVAL if ws is
 * too small; nothing leaked); lent_map = 1: without the edge map's buffers,
 * for a caller that lends one (lg__l2att_cache_lend_tmap) before every
 * backward. The workspace (also the forward's degree counts and
 * lg_l2att_invert's scratch) holds nothing between calls. */
lg_status lg__l2att_cache_alloc(lg_l2att_cache **out, const lg_l2att_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                                size_t rs, void *ws, size_t ws_bytes, int lent_map);

/* lg_l2att_memory of a cache made with lent_map (0: the same). */
lg_status lg__l2att_memory_ext(const lg_l2att_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, int lent_map,
                               lg_l2att_mem *mem);

/* Lends *m to the cache's backward passes (copied; the arrays stay the
 * caller's and must outlive their use). O(1). */
void lg__l2att_cache_lend_tmap(lg_l2att_cache *c, const lg__att_tmap *m);

#endif /* LG_ATTENTION_L2ATT_INTERNAL_H */
