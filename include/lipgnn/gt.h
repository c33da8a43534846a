/*
 * lipgnn/gt.h: the sparse multi-head graph-transformer layer (TransformerConv,
 * Shi et al. 2020) with the quadratic LipschitzNorm (Dasoulas, Scaman &
 * Virmaux 2021, eq. 19): forward and hand-written backward, in float
 * (production) and double (finite-difference checks). The exact maths is
 * docs/attention-spec.md, sections 3 and 4.
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 *
 * Shapes (row-major): n nodes, F = in_dim, K = heads, C = head_dim,
 * D = lg_gt_out_dim(cfg) = K*C (concat) or C (mean), P = 3*K*C + D.
 *     in  n x F   layer input H (row i = h_i)
 *     out n x D   layer output
 *     params      one block of lg_gt_layout(cfg).count values:
 *         W      F x P   [Wq | Wk | Wv | Wskip], one matrix so that the four
 *                        dense maps are ONE gemm: z_i = h_i W + b holds
 *                        q_i (columns [0, KC)), k_i ([KC, 2KC)), v_i
 *                        ([2KC, 3KC)) and the skip term r_i ([3KC, P));
 *                        head k of q, k, v is columns [kC, kC+C) of its block
 *         b      P       [bq | bk | bv | bskip]
 *         gate   3D      w = [w_m ; w_r ; w_mr] (cfg.gate only; no bias)
 * Edge e (0 <= e < nnz) is position e of the graph's CSR (row i = target,
 * g->j[e] = source j); per-edge, per-head arrays are nnz x K, edge-major.
 *
 * Use (one layer; a model keeps one cache per layer):
 *     lg_set_threads(0);                      // once, before use (core.h)
 *     lg_gt_config cfg = lg_gt_config_default(F, K, C);
 *     cfg.norm = LG_ATT_NORM_LIPSCHITZ;
 *     lg_gt_layout lay;  lg_gt_layout_get(&cfg, &lay);      // lay.count params
 *     lg_gt_cache *cache; lg_gt_cache_init_f32(&cache, &cfg, n, g->nnz);
 *     lg_gt_forward_f32(out, cache, in, params, g, &cfg, 1, seed, epoch);
 *     lg_gt_backward_f32(d_in, d_params, d_out, cache, in, params, g, gT, &cfg);
 *     lg_gt_cache_free(cache);
 * Self-loops: the layer adds NONE (as TransformerConv); g carries exactly the
 * edges wanted (lg_graph_self_loops to add them), gT = its transpose
 * (lg_graph_transpose). Threads: OpenMP over CSR rows, no atomics; results
 * are bitwise identical whatever the number of threads once lg_set_threads
 * has pinned OpenBLAS to one thread (lipgnn then splits the dense products
 * itself, core.h); with OpenBLAS's own threads, as a program has it until
 * then, the products may round differently at another OpenBLAS thread count.
 */
#ifndef LIPGNN_GT_H
#define LIPGNN_GT_H

#include "lipgnn/gat.h" /* lg_att_norm, shared with the GAT layer */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Configuration and parameter layout                                         */
/* ------------------------------------------------------------------------- */

/* One graph-transformer layer's hyper-parameters. cfg.norm (lg_att_norm):
 *   LG_ATT_NORM_NONE           score s_ij = q_i . k_j / sqrt(C)
 *   LG_ATT_NORM_LIPSCHITZ      the paper's neighbour-wise form, per node i, head k:
 *                              (q_i . k_j) / (max(nq nk, nq nv, nk nv) + 1e-12),
 *                              nq = ||q_i||, nk = max_{j in N(i)} ||k_j||,
 *                              nv = max_{j in N(i)} ||v_j||  (no 1/sqrt(C))
 *   LG_ATT_NORM_LIPSCHITZ_REF  the reference code's: s_ij / (max(U nk, U nv,
 *                              nk nv) + 1e-12), U = sqrt(sum_i |N(i)| ||q_i||^2)
 *                              per head over the whole graph (couples all nodes) */
typedef struct lg_gt_config {
    lg_idx in_dim;      /* F: input width                                         */
    lg_idx heads;       /* K: attention heads                                     */
    lg_idx head_dim;    /* C: width of each head                                  */
    int concat;         /* 1: heads concatenated (D = K*C); 0: averaged (D = C)   */
    lg_att_norm norm;   /* score normalisation (above)                            */
    int gate;           /* 1: out_i = b_i r_i + (1 - b_i) m_i, b_i = sigmoid(w .
                           [m_i, r_i, m_i - r_i]); 0: out_i = r_i + m_i          */
    double att_dropout; /* p in [0, 1): attention dropout, training only          */
} lg_gt_config;

/* The defaults: concat, no normalisation, no gate, no dropout. */
lg_gt_config lg_gt_config_default(lg_idx in_dim, lg_idx heads, lg_idx head_dim);

/* LG_OK if cfg is usable; LG_EINVAL naming the first bad field otherwise
 * (dimensions >= 1 and small enough for 32-bit BLAS, concat and gate 0 or 1,
 * norm in range, att_dropout in [0, 1)). */
lg_status lg_gt_config_check(const lg_gt_config *cfg);

/* D: the output width, K*C if concat, C otherwise (0 for a NULL cfg). */
lg_idx lg_gt_out_dim(const lg_gt_config *cfg);

/* Offsets (in values, not bytes) of each parameter in the layer's block. */
typedef struct lg_gt_layout {
    lg_idx w;      /* W = [Wq | Wk | Wv | Wskip], F x w_cols                     */
    lg_idx w_cols; /* P = 3KC + D: row stride of W; Wq starts at column 0, Wk at
                      KC, Wv at 2KC, Wskip at 3KC                                */
    lg_idx bq;     /* bq, KC (the bias block b = [bq|bk|bv|bskip] is contiguous) */
    lg_idx bk;     /* bk, KC                                                     */
    lg_idx bv;     /* bv, KC                                                     */
    lg_idx bskip;  /* bskip, D                                                   */
    lg_idx gate;   /* gate vector w, 3D (= count when cfg.gate is 0: absent)     */
    lg_idx count;  /* total number of parameters of the layer                   */
} lg_gt_layout;

/* Fills *lay for cfg (validated: LG_EINVAL as lg_gt_config_check). */
lg_status lg_gt_layout_get(const lg_gt_config *cfg, lg_gt_layout *lay);

/* Initialises a parameter block: Glorot-uniform weights (spec section 6):
 * Wq, Wk, Wv with bound sqrt(6/(F + KC)), Wskip sqrt(6/(F + D)), the gate
 * vector (a 3D x 1 map) sqrt(6/(3D + 1)); every bias 0. Draws from rng in the
 * order Wq, Wk, Wv, Wskip (each row-major, F rows), then the gate. */
lg_status lg_gt_params_init_f32(float *params, const lg_gt_config *cfg, lg_rng *rng);
lg_status lg_gt_params_init_f64(double *params, const lg_gt_config *cfg, lg_rng *rng);

/* The same in scheme (lg_init): LG_INIT_GLOROT is lg_gt_params_init;
 * LG_INIT_PYTORCH is TransformerConv built from nn.Linear, as in the
 * LipschitzNorm authors' DeepGT: W and b U(+-1/sqrt(F)), the gate vector
 * U(+-1/sqrt(3D)). Draws W in the order above, then b, then the gate.
 * LG_EINVAL for another scheme. O(F P). */
lg_status lg_gt_params_init_as_f32(float *params, const lg_gt_config *cfg, lg_init scheme, lg_rng *rng);
lg_status lg_gt_params_init_as_f64(double *params, const lg_gt_config *cfg, lg_init scheme, lg_rng *rng);

/* ------------------------------------------------------------------------- */
/* Cache: activations kept between forward and backward, and backward's       */
/* workspace. Allocated once, reused by every call (no allocation inside      */
/* forward or backward).                                                      */
/* ------------------------------------------------------------------------- */

typedef struct lg_gt_cache lg_gt_cache; /* opaque */

/* Bytes of a cache for graphs of up to n nodes and nnz edges. */
typedef struct lg_gt_mem {
    size_t activations; /* what backward needs from forward: Z = H W + b (n x P),
                           attention (nnz x K; and the scores, nnz x K, in the
                           Lipschitz modes), norms, arg-maxima, normalisers,
                           and with the gate the messages (n x D) and b_i     */
    size_t workspace;   /* backward's scratch: dZ (n x P), d message (n x D),
                           per-edge and per-node coefficients, partials (at
                           least the split weight gradient's)                 */
} lg_gt_mem;

/* Fills *mem for cfg, n, nnz and a scalar of real_size bytes (4 or 8).
 * LG_EINVAL for a bad config or size, LG_ERANGE if the sizes overflow. */
lg_status lg_gt_memory(const lg_gt_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, lg_gt_mem *mem);

/* *out = a cache for cfg and any graph of at most n_cap nodes and nnz_cap edges
 * (a smaller graph may use it too). The _f32 cache serves the _f32 functions
 * only, _f64 the _f64 ones. Memory: lg_gt_memory's activations + workspace.
 * LG_EINVAL and LG_ERANGE as lg_gt_memory; LG_ENOMEM (nothing leaked,
 * *out = NULL) if an allocation fails. */
lg_status lg_gt_cache_init_f32(lg_gt_cache **out, const lg_gt_config *cfg, lg_idx n_cap, lg_idx nnz_cap);
lg_status lg_gt_cache_init_f64(lg_gt_cache **out, const lg_gt_config *cfg, lg_idx n_cap, lg_idx nnz_cap);

/* As lg_gt_cache_init, with backward's workspace carved from the caller's
 * ws (ws_bytes long, at least lg_gt_memory(cfg, n_cap, nnz_cap)'s workspace,
 * aligned for lg_idx), kept alive by the caller while the cache lives; caches
 * whose backward calls never overlap may share it (lg_gat_cache_init_shared
 * says why). LG_EINVAL if ws is NULL or too small. */
lg_status lg_gt_cache_init_shared_f32(lg_gt_cache **out, const lg_gt_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                                      void *ws, size_t ws_bytes);
lg_status lg_gt_cache_init_shared_f64(lg_gt_cache **out, const lg_gt_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                                      void *ws, size_t ws_bytes);

/* Frees the cache (not a shared workspace); NULL is a no-op. */
void lg_gt_cache_free(lg_gt_cache *cache);

/* ------------------------------------------------------------------------- */
/* Forward and backward                                                       */
/* ------------------------------------------------------------------------- */

/* out (n x D) = TransformerConv(in (n x F)) on graph g (n = g->n nodes, rows =
 * in-neighbour lists, exactly the edges wanted), spec sections 3-4:
 *     z_i = h_i W + b = [q_i | k_i | v_i | r_i];
 *     t_ij = normalised score of q_ik, k_jk per cfg->norm (head k);
 *     att_ij = softmax over j in N(i) of t_ij (maximum subtracted);
 *     m_i = concat or mean over heads of sum_j att'_ij v_jk;
 *     out_i = r_i + m_i, or with the gate b_i r_i + (1 - b_i) m_i.
 * A node with no in-neighbour has m_i = 0: it outputs r_i (b_i r_i with the
 * gate). Training with att_dropout p > 0: att'_ij = att_ij * keep / (1 - p),
 * where edge e, head k is dropped iff
 * (lg_hash64(key + (e*K + k) * 0x9E3779B97F4A7C15) >> 11) * 2^-53 < p,
 * key = lg_hash64(seed ^ lg_hash64(counter)) (the GAT layer's rule): the mask
 * depends only on (seed, counter, e, k), not on threads. Otherwise att' = att.
 * cfg must match the cache's; g->n and g->nnz must fit it. in and params must
 * stay unchanged until the matching backward. out must not alias in:
 * LG_EINVAL ("out and in overlap") if the bytes of out (n x D) and in (n x F)
 * overlap. Range:
 * the products q_i . k_j, ||q_i|| ||k_j|| (and U ||k||) must be finite in the
 * scalar type (in float, norms up to ~1e19); the normalised scores are
 * invariant to a common scale of q, k and v (up to eps), and huge scores
 * without the norm are harmless (the softmax subtracts its maximum).
 * O(n F P) in OpenBLAS + O(nnz K C) in fused row passes. LG_EINVAL (message)
 * for a bad argument, nothing written then. */
lg_status lg_gt_forward_f32(float *out, lg_gt_cache *cache, const float *in, const float *params,
                            const lg_graph *g, const lg_gt_config *cfg, int training, uint64_t seed,
                            uint64_t counter);
lg_status lg_gt_forward_f64(double *out, lg_gt_cache *cache, const double *in, const double *params,
                            const lg_graph *g, const lg_gt_config *cfg, int training, uint64_t seed,
                            uint64_t counter);

/* Backward of the last forward made with this cache (same in, params, g, cfg):
 *     d_in     n x F   += dL/d in   (NULL to skip; one gemm saved)
 *     d_params         += dL/d params (W, the four biases, the gate vector),
 *                         in the layout of lg_gt_layout
 *     d_out    n x D   dL/d out
 * d_in may be d_out itself (a buffer of n x max(F, D)): dL/d out is read
 * first, and dL/d in is then written over it (=, not +=), so that a deep
 * model needs one gradient buffer between layers instead of two.
 * gT must be the transpose of g (source-node gradients, dk_j and dv_j, walk
 * it). The gradient flows through the normaliser: through the norms, through
 * the maximum of the three products to its arg-max (the first on a tie, in
 * the order nq nk, nq nv, nk nv), through the per-node maxima to their
 * arg-max neighbours (lowest-numbered on a tie) and, for the reference form,
 * through U to every query. The gradient of a norm at a zero vector is taken
 * as 0, so everything stays finite. O(n F P) in OpenBLAS + O(nnz K C) fused.
 * LG_EINVAL if no forward preceded, if arguments differ from the forward's in
 * size or cfg, if g is not the forward's lg_graph (the same object with the
 * same p and j arrays; O(1), its contents not checked again), or if gT is not
 * g's transpose. */
lg_status lg_gt_backward_f32(float *d_in, float *d_params, const float *d_out, lg_gt_cache *cache,
                             const float *in, const float *params, const lg_graph *g, const lg_graph *gT,
                             const lg_gt_config *cfg);
lg_status lg_gt_backward_f64(double *d_in, double *d_params, const double *d_out, lg_gt_cache *cache,
                             const double *in, const double *params, const lg_graph *g,
                             const lg_graph *gT, const lg_gt_config *cfg);

/* ------------------------------------------------------------------------- */
/* Read-outs of the last forward (for export and diagnostics)                 */
/* ------------------------------------------------------------------------- */

/* att (nnz x K, edge-major) = the softmax weights att_ij of the last forward,
 * before attention dropout. Each non-empty row sums to 1 per head. */
lg_status lg_gt_attention_f32(float *att, const lg_gt_cache *cache);
lg_status lg_gt_attention_f64(double *att, const lg_gt_cache *cache);

/* c (n x K) = what q_i . k_j was divided by at node i, head k in the last
 * forward: sqrt(C) (LG_ATT_NORM_NONE), max(nq nk, nq nv, nk nv) + 1e-12
 * (LIPSCHITZ), sqrt(C) (max(U nk, U nv, nk nv) + 1e-12) (LIPSCHITZ_REF); 0 for
 * a node without in-neighbours in the Lipschitz modes. */
lg_status lg_gt_normaliser_f32(float *c, const lg_gt_cache *cache);
lg_status lg_gt_normaliser_f64(double *c, const lg_gt_cache *cache);

/* t (nnz x K) = the normalised scores t_ij of the last forward, before the
 * softmax. With LG_ATT_NORM_LIPSCHITZ |t| <= 1. g: the forward's (the same
 * lg_graph with the same arrays: LG_EINVAL otherwise). */
lg_status lg_gt_scores_f32(float *t, const lg_gt_cache *cache, const lg_graph *g);
lg_status lg_gt_scores_f64(double *t, const lg_gt_cache *cache, const lg_graph *g);

/* b (n) = the gate values b_i of the last forward (cfg.gate; LG_EINVAL
 * without the gate). */
lg_status lg_gt_gate_f32(float *b, const lg_gt_cache *cache);
lg_status lg_gt_gate_f64(double *b, const lg_gt_cache *cache);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_GT_H */
