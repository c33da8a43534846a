/*
 * lipgnn/gat.h: the sparse multi-head graph attention layer (GAT, Velickovic et
 * al. 2018) with LipschitzNorm (Dasoulas, Scaman & Virmaux 2021): forward and
 * hand-written backward, in float (production) and double (finite-difference
 * checks). The exact maths is docs/attention-spec.md, sections 1 and 2.
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 *
 * Shapes (row-major): n nodes, F = in_dim, K = heads, C = head_dim,
 * D = lg_gat_out_dim(cfg) = K*C (concat) or C (mean).
 *     in  n x F   layer input H (row i = h_i)
 *     out n x D   layer output
 *     params      one block of lg_gat_layout(cfg).count values:
 *         W      F x K*C   x_i = h_i W; head k is columns [kC, kC+C)
 *         a_dst  K x C     query half of a_k (multiplies the target x_i)
 *         a_src  K x C     key half of a_k (multiplies the source x_j)
 *         bias   D
 * Edge e (0 <= e < nnz) is position e of the graph's CSR (row i = target,
 * g->j[e] = source j); per-edge, per-head arrays are nnz x K, edge-major.
 *
 * Use (one layer; a model keeps one cache per layer):
 *     lg_set_threads(0);                      // once, before use (core.h)
 *     lg_gat_config cfg = lg_gat_config_default(F, K, C);
 *     cfg.norm = LG_ATT_NORM_LIPSCHITZ;
 *     lg_gat_layout lay;  lg_gat_layout_get(&cfg, &lay);     // lay.count params
 *     lg_gat_cache *cache; lg_gat_cache_init_f32(&cache, &cfg, n, g->nnz);
 *     lg_gat_forward_f32(out, cache, in, params, g, &cfg, 1, seed, epoch);
 *     lg_gat_backward_f32(d_in, d_params, d_out, cache, in, params, g, gT, &cfg);
 *     lg_gat_cache_free(cache);
 * g carries the self-loops wanted (lg_graph_self_loops), gT = its transpose
 * (lg_graph_transpose). Threads: OpenMP over CSR rows, no atomics; results are
 * bitwise identical whatever the number of threads once lg_set_threads has
 * pinned OpenBLAS to one thread (lipgnn then splits the dense products itself,
 * core.h); with OpenBLAS's own threads, as a program has it until then, the
 * products (x = h W, the weight gradient) may round differently at another
 * OpenBLAS thread count.
 */
#ifndef LIPGNN_GAT_H
#define LIPGNN_GAT_H

#include "lipgnn/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Attention-score normalisation (shared with the graph-transformer layer)     */
/* ------------------------------------------------------------------------- */

/* How attention scores are normalised before the softmax. */
typedef enum lg_att_norm {
    LG_ATT_NORM_NONE = 0,      /* raw scores (c = 1)                                */
    LG_ATT_NORM_LIPSCHITZ,     /* the paper's neighbour-wise form, per node i, head k:
                                  c_i = ||a_k|| sqrt(||x_i||^2 + max_{j in N(i)} ||x_j||^2 + 1e-12) */
    LG_ATT_NORM_LIPSCHITZ_REF, /* the reference code's per-edge form:
                                  c_ij = 4 ||a_k|| sqrt(max_{j' in N(i)} ||x_j'||^2 + ||x_j||^2) + 1e-12 */
    LG_ATT_NORM_COUNT
} lg_att_norm;

/* "none", "lipschitz", "lipschitz-ref"; "?" for an out-of-range value. */
const char *lg_att_norm_name(lg_att_norm m);

/* *out = the mode named name (the strings of lg_att_norm_name). LG_EINVAL with
 * a message listing the valid names otherwise. */
lg_status lg_att_norm_parse(const char *name, lg_att_norm *out);

/* ------------------------------------------------------------------------- */
/* Configuration and parameter layout                                         */
/* ------------------------------------------------------------------------- */

/* One GAT layer's hyper-parameters. */
typedef struct lg_gat_config {
    lg_idx in_dim;         /* F: input width                                      */
    lg_idx heads;          /* K: attention heads                                  */
    lg_idx head_dim;       /* C: width of each head                               */
    int concat;            /* 1: heads concatenated (D = K*C); 0: averaged (D = C)  */
    lg_att_norm norm;      /* score normalisation                                 */
    double lip_scale;      /* s > 0: e_ij = LeakyReLU(s * s_ij / c); both Lipschitz
                              modes; ignored by LG_ATT_NORM_NONE. Default 1       */
    double negative_slope; /* LeakyReLU slope for negative scores, default 0.2    */
    double att_dropout;    /* p in [0, 1): attention dropout, training only        */
} lg_gat_config;

/* The defaults: concat, no normalisation, lip_scale 1, slope 0.2, no dropout. */
lg_gat_config lg_gat_config_default(lg_idx in_dim, lg_idx heads, lg_idx head_dim);

/* LG_OK if cfg is usable; LG_EINVAL naming the first bad field otherwise
 * (dimensions >= 1 and small enough for 32-bit BLAS, norm in range, lip_scale
 * finite and > 0, slope finite, att_dropout in [0, 1)). */
lg_status lg_gat_config_check(const lg_gat_config *cfg);

/* D: the output width, K*C if concat, C otherwise (0 for a NULL cfg). */
lg_idx lg_gat_out_dim(const lg_gat_config *cfg);

/* Offsets (in values, not bytes) of each parameter in the layer's block. */
typedef struct lg_gat_layout {
    lg_idx w;     /* W, F x K*C                               */
    lg_idx a_dst; /* a_dst, K x C                             */
    lg_idx a_src; /* a_src, K x C                             */
    lg_idx bias;  /* bias, D                                  */
    lg_idx count; /* total number of parameters of the layer */
} lg_gat_layout;

/* Fills *lay for cfg (validated: LG_EINVAL as lg_gat_config_check). */
lg_status lg_gat_layout_get(const lg_gat_config *cfg, lg_gat_layout *lay);

/* Initialises a parameter block as PyTorch Geometric's GATConv does: W and the
 * attention vectors Glorot-uniform (W: bound sqrt(6/(F + K*C)); a_dst, a_src:
 * sqrt(6/(K + C))), bias 0. Draws from rng in the order W, a_dst, a_src. */
lg_status lg_gat_params_init_f32(float *params, const lg_gat_config *cfg, lg_rng *rng);
lg_status lg_gat_params_init_f64(double *params, const lg_gat_config *cfg, lg_rng *rng);

/* ------------------------------------------------------------------------- */
/* Cache: activations kept between forward and backward, and backward's       */
/* workspace. Allocated once, reused by every call (no allocation inside      */
/* forward or backward but one: see lg_gat_cache_init).                       */
/* ------------------------------------------------------------------------- */

typedef struct lg_gat_cache lg_gat_cache; /* opaque */

/* Bytes of a cache for graphs of up to n nodes and nnz edges. */
typedef struct lg_gat_mem {
    size_t activations; /* what backward needs from forward: X W (n x K*C),
                           attention and scores (nnz x K each; the scores
                           not in the reference form), per-node scores and
                           norms                                              */
    size_t workspace;   /* backward's scratch: d(X W) (n x K*C), per-edge and
                           per-node gradients, reduction partials (at least
                           the split weight gradient's partials)             */
} lg_gat_mem;

/* Fills *mem for cfg, n, nnz and a scalar of real_size bytes (4 or 8).
 * LG_EINVAL for a bad config or size, LG_ERANGE if the sizes overflow. */
lg_status lg_gat_memory(const lg_gat_config *cfg, lg_idx n, lg_idx nnz, size_t real_size,
                        lg_gat_mem *mem);

/* *out = a cache for cfg and any graph of at most n_cap nodes and nnz_cap edges
 * (a smaller graph may use it too, e.g. the batches of a data set of trees).
 * The _f32 cache serves the _f32 functions only, _f64 the _f64 ones. Memory:
 * lg_gat_memory's activations + workspace, and the forward's scratch: 6 KB
 * (8 KB in double) per thread of omp_get_max_threads() at its making; a
 * forward run later with more threads allocates it anew, once (LG_ENOMEM if
 * it cannot, the cache unchanged). LG_ENOMEM (nothing leaked, *out = NULL) if
 * an allocation fails. */
lg_status lg_gat_cache_init_f32(lg_gat_cache **out, const lg_gat_config *cfg, lg_idx n_cap,
                                lg_idx nnz_cap);
lg_status lg_gat_cache_init_f64(lg_gat_cache **out, const lg_gat_config *cfg, lg_idx n_cap,
                                lg_idx nnz_cap);

/* As lg_gat_cache_init, but backward's workspace is not allocated: it is
 * carved from ws (ws_bytes long, at least lg_gat_memory(cfg, n_cap, nnz_cap)'s
 * workspace; aligned for lg_idx, as malloc'ed memory is), which the caller
 * owns and keeps alive while the cache lives. Forward does not touch it and
 * backward keeps nothing in it between calls, so caches whose backward calls
 * never run at the same time may share one ws: the layers of a deep model
 * then need one layer's workspace (the largest) instead of one each.
 * LG_EINVAL if ws is NULL or too small; otherwise as lg_gat_cache_init. */
lg_status lg_gat_cache_init_shared_f32(lg_gat_cache **out, const lg_gat_config *cfg, lg_idx n_cap,
                                       lg_idx nnz_cap, void *ws, size_t ws_bytes);
lg_status lg_gat_cache_init_shared_f64(lg_gat_cache **out, const lg_gat_config *cfg, lg_idx n_cap,
                                       lg_idx nnz_cap, void *ws, size_t ws_bytes);

/* Frees the cache (not a shared workspace); NULL is a no-op. */
void lg_gat_cache_free(lg_gat_cache *cache);

/* ------------------------------------------------------------------------- */
/* Forward and backward                                                       */
/* ------------------------------------------------------------------------- */

/* out (n x D) = GAT(in (n x F)) on graph g (n = g->n nodes, rows = in-neighbour
 * lists, self-loops as wanted), spec section 1-2:
 *     x_i = h_i W;  s_ij = a_dst_k . x_ik + a_src_k . x_jk;
 *     e_ij = LeakyReLU(s * s_ij / c)  (c, s per cfg->norm);
 *     att_ij = softmax over j in N(i) (maximum subtracted);
 *     out_i = concat or mean over heads of sum_j att'_ij x_jk, + bias.
 * A node with no in-neighbour outputs the bias alone. Training with
 * att_dropout p > 0: att'_ij = att_ij * keep / (1 - p), where edge e, head k is
 * dropped iff (lg_hash64(key + (e*K + k) * 0x9E3779B97F4A7C15) >> 11) * 2^-53
 * < p, key = lg_hash64(seed ^ lg_hash64(counter)): the mask depends only on
 * (seed, counter, e, k), not on threads. Otherwise att' = att.
 * cfg must match the cache's (dimensions and norm); g->n and g->nnz must fit
 * it. g, in and params must stay unchanged until the matching backward. out must
 * not alias in: LG_EINVAL ("out and in overlap") if the bytes of out (n x D)
 * and in (n x F) overlap. O(n F K C) in OpenBLAS + O(nnz K C) in fused row
 * passes. LG_EINVAL (message) for a bad argument, nothing written then. */
lg_status lg_gat_forward_f32(float *out, lg_gat_cache *cache, const float *in, const float *params,
                             const lg_graph *g, const lg_gat_config *cfg, int training,
                             uint64_t seed, uint64_t counter);
lg_status lg_gat_forward_f64(double *out, lg_gat_cache *cache, const double *in,
                             const double *params, const lg_graph *g, const lg_gat_config *cfg,
                             int training, uint64_t seed, uint64_t counter);

/* Backward of the last forward made with this cache (same in, params, g, cfg):
 *     d_in     n x F   += dL/d in   (NULL to skip; one sgemm saved)
 *     d_params         += dL/d params, in the layout of lg_gat_layout
 *     d_out    n x D   dL/d out
 * d_in may be d_out itself (a buffer of n x max(F, D)): dL/d out is read
 * first, and dL/d in is then written over it (=, not +=), so that a deep
 * model needs one gradient buffer between layers instead of two.
 * gT must be the transpose of g (source-node gradients walk it). The gradient
 * flows through the normaliser: through the norms, and through the maximum to
 * its arg-max neighbour (lowest-numbered on a tie). It stays finite where
 * every vector under a square root is zero. LipschitzNorm with a_k = 0: the
 * normalised scores of head k are 0 (uniform attention; the paper's form is
 * invariant to the scale of a_k, so no limit exists there) and no gradient
 * reaches a_k through them. O(n F K C) in OpenBLAS + O(nnz K C) fused.
 * g must be the forward's graph: the same lg_graph, with the same p and j
 * arrays, else LG_EINVAL (O(1); its contents, checked by the forward, are not
 * checked again: keep them unchanged). A cache serves one call at a time.
 * LG_EINVAL if no forward preceded, if arguments differ from the forward's in
 * size or cfg, or if gT is not g's transpose (checked in O(n + nnz)). */
lg_status lg_gat_backward_f32(float *d_in, float *d_params, const float *d_out,
                              lg_gat_cache *cache, const float *in, const float *params,
                              const lg_graph *g, const lg_graph *gT, const lg_gat_config *cfg);
lg_status lg_gat_backward_f64(double *d_in, double *d_params, const double *d_out,
                              lg_gat_cache *cache, const double *in, const double *params,
                              const lg_graph *g, const lg_graph *gT, const lg_gat_config *cfg);

/* ------------------------------------------------------------------------- */
/* Read-outs of the last forward (for export and diagnostics)                 */
/* ------------------------------------------------------------------------- */

/* att (nnz x K, edge-major) = the softmax weights att_ij of the last forward,
 * before attention dropout. Each non-empty row sums to 1 per head. */
lg_status lg_gat_attention_f32(float *att, const lg_gat_cache *cache);
lg_status lg_gat_attention_f64(double *att, const lg_gat_cache *cache);

/* c (n x K) = the per-node normaliser c_i = ||a_k|| sqrt(||x_i||^2 + max_j
 * ||x_j||^2 + 1e-12) of the last forward (LG_ATT_NORM_LIPSCHITZ); 1 for
 * LG_ATT_NORM_NONE; LG_EINVAL for LG_ATT_NORM_LIPSCHITZ_REF (per edge: use
 * lg_gat_edge_normaliser). With LG_ATT_NORM_LIPSCHITZ, 0 for a node without
 * in-neighbours. */
lg_status lg_gat_node_normaliser_f32(float *c, const lg_gat_cache *cache);
lg_status lg_gat_node_normaliser_f64(double *c, const lg_gat_cache *cache);

/* c (nnz x K) = what the score of edge e, head k was divided by in the last
 * forward: c_i of its target, c_ij, or 1 per cfg->norm. g: the forward's
 * (the same lg_graph with the same arrays: LG_EINVAL otherwise). */
lg_status lg_gat_edge_normaliser_f32(float *c, const lg_gat_cache *cache, const lg_graph *g);
lg_status lg_gat_edge_normaliser_f64(double *c, const lg_gat_cache *cache, const lg_graph *g);

/* e (nnz x K) = the normalised scores s * s_ij / c of the last forward, before
 * the LeakyReLU (raw s_ij for LG_ATT_NORM_NONE). With LG_ATT_NORM_LIPSCHITZ
 * |e| <= s. g: the forward's (the same lg_graph: LG_EINVAL otherwise). */
lg_status lg_gat_scores_f32(float *e, const lg_gat_cache *cache, const lg_graph *g);
lg_status lg_gat_scores_f64(double *e, const lg_gat_cache *cache, const lg_graph *g);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_GAT_H */
