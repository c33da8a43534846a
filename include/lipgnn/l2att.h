/*
 * lipgnn/l2att.h: neighbour-wise multi-head L2 self-attention (Kim,
 * Papamakarios & Mnih, "The Lipschitz Constant of Self-Attention", ICML 2021)
 * on a graph: forward, hand-written backward, a Lipschitz upper bound, a
 * contractive form and its inverse for invertible residual layers, in float
 * (production) and double (finite-difference checks). Maths, the bound and its
 * proof: docs/l2-attention.md.
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 *
 * Worked example (one layer; g must hold every self-loop, gT = its transpose):
 *
 *     lg_graph *g, *gT;                       // from lg_graph_from_edges(...,
 *                                             //   LG_GRAPH_ADD_SELF_LOOPS)
 *     lg_l2att_config cfg = lg_l2att_config_default(F, 4, 8);  // K=4, C=8, D=F
 *     lg_l2att_layout lay;  lg_l2att_layout_get(&cfg, &lay);   // lay.count
 *     lg_l2att_params_init_f32(params, &cfg, &rng);
 *     lg_l2att_cache *cache; lg_l2att_cache_init_f32(&cache, &cfg, g->n, g->nnz);
 *     lg_l2att_forward_f32(out, cache, in, params, g, &cfg);
 *     lg_l2att_backward_f32(d_in, d_params, d_out, cache, in, params, g, gT, &cfg);
 *     double B; lg_idx nin, nout;
 *     lg_l2att_graph_degrees(g, &nin, &nout);
 *     lg_l2att_lipschitz_bound_f32(&B, params, &cfg, nin, nout); // Lip_2 <= B
 *     lg_l2att_cache_free(cache);
 *
 * Shapes (row-major): n nodes, F = in_dim, K = heads, C = head_dim, D = out_dim.
 *     in  n x F   layer input X (row i = x_i)
 *     out n x D   layer output
 *     params      one block of lg_l2att_layout(cfg).count values:
 *         W_Q   F x K*C    tied query/key map; head h = columns [hC, hC+C)
 *         V     K x C x C  per-head value map V_h (row-major C x C)
 *         W_O   K*C x D    output map
 *         b     D          bias
 * The layer (N(i) = in-neighbours of i in g, i in N(i) required):
 *     q_i^h  = x_i W_Q^h                                      (C wide)
 *     s_ij^h = -||q_i^h - q_j^h||^2 / sqrt(C)
 *            = -(||q_i||^2 + ||q_j||^2 - 2 q_i . q_j) / sqrt(C)   (0 for j = i)
 *     P_ij^h = softmax over j in N(i) of s_ij^h (maximum subtracted)
 *     m_i^h  = sum_j P_ij^h q_j^h,   o_i^h = m_i^h V_h
 *     F(X)_i = [o_i^1, ..., o_i^K] W_O + b
 * so head h is P^h X W_Q^h V_h: the paper's P X A_h W^{V,h}, A_h = W_Q^h
 * W_Q^h^T / sqrt(C), with A_h W^{V,h} factored through W_Q^h (the keys are
 * tied to the queries: with an untied key map the layer is not Lipschitz).
 * Contractive form (cfg.contractive = c in (0, 1)): out = c F(X) / (B + 1e-12)
 * with B = lg_l2att_lipschitz_bound of the current parameters on g, so
 * Lip_2(out) <= c and y = x + out is invertible (lg_l2att_invert).
 * Edge e (0 <= e < nnz) is position e of g's CSR; per-edge arrays are nnz x K.
 * Threads: OpenMP over CSR rows, no atomics; every result is bitwise identical
 * whatever the number of threads once lg_set_threads has pinned OpenBLAS to
 * one thread (core.h).
 */
#ifndef LIPGNN_L2ATT_H
#define LIPGNN_L2ATT_H

#include "lipgnn/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One L2-attention layer's hyper-parameters. */
typedef struct lg_l2att_config {
    lg_idx in_dim;      /* F: input width                                        */
    lg_idx heads;       /* K: attention heads                                    */
    lg_idx head_dim;    /* C: width of each head                                 */
    lg_idx out_dim;     /* D: output width (default F, for residual layers)      */
    double contractive; /* c in (0, 1): out = c F / B; 0: off (out = F)          */
} lg_l2att_config;

/* The defaults: D = F, contractive off. */
lg_l2att_config lg_l2att_config_default(lg_idx in_dim, lg_idx heads, lg_idx head_dim);

/* LG_OK if cfg is usable; LG_EINVAL naming the first bad field otherwise
 * (dimensions in [1, 2^24], K*C and K*C*C small enough for 32-bit BLAS,
 * contractive 0 or in (0, 1)). NULL: LG_EINVAL. */
lg_status lg_l2att_config_check(const lg_l2att_config *cfg);

/* Offsets (in values) of each parameter in the layer's block. */
typedef struct lg_l2att_layout {
    lg_idx wq;    /* W_Q, F x K*C   */
    lg_idx v;     /* V, K x C x C   */
    lg_idx wo;    /* W_O, K*C x D   */
    lg_idx bias;  /* b, D           */
    lg_idx count; /* total          */
} lg_l2att_layout;

/* Fills *lay for cfg (LG_EINVAL as lg_l2att_config_check, or lay NULL). */
lg_status lg_l2att_layout_get(const lg_l2att_config *cfg, lg_l2att_layout *lay);

/* Glorot-uniform initialisation: W_Q ~ U(+-sqrt(6/(F + K*C))), each V_h ~
 * U(+-sqrt(6/(2C))), W_O ~ U(+-sqrt(6/(K*C + D))), b = 0. Draws from rng in
 * the order W_Q, V, W_O. LG_EINVAL for NULL or a bad cfg. */
lg_status lg_l2att_params_init_f32(float *params, const lg_l2att_config *cfg, lg_rng *rng);
lg_status lg_l2att_params_init_f64(double *params, const lg_l2att_config *cfg, lg_rng *rng);

/* ------------------------------------------------------------------------- */
/* The Lipschitz bound (docs/l2-attention.md, section 3)                      */
/* ------------------------------------------------------------------------- */

/* *n_in = max_i |N(i)| (largest in-neighbourhood, self-loop included) and
 * *n_out = max_j |{i : j in N(i)}| (largest out-degree, self-loop included)
 * of g. O(n + nnz), allocates n counters (LG_ENOMEM). LG_EINVAL for NULL or
 * an invalid graph. */
lg_status lg_l2att_graph_degrees(const lg_graph *g, lg_idx *n_in, lg_idx *n_out);

/* The principal branch W0 of the Lambert function (w e^w = x) for x >= 0;
 * NaN for x < 0 or NaN. Relative accuracy ~1e-15. */
double lg_lambert_w0(double x);

/* L_att(n_in, n_out): a proven upper bound on the 2-norm Lipschitz constant of
 * the parameter-free core Q -> (sum_j P_ij(Q) q_j)_i (any head width C, any
 * graph with every self-loop whose neighbourhoods have at most n_in members and
 * whose nodes have at most n_out out-edges, self-loops included):
 *     w = W0((n_in - 1)/e),
 *     L_att = sqrt((1 + 4w) (1 + 2w + (n_out - 1)(1/2 + 2 W0(1/e) + 2 beta sqrt(w)))),
 * beta = 0.27786 >= max_u sqrt(u)/(1 + e^u). 1 for n_in = n_out = 1. NaN if
 * n_in < 1 or n_out < 1. See docs/l2-attention.md 3 for the proof. */
double lg_l2att_attention_lip(lg_idx n_in, lg_idx n_out);

/* *bound = B = L_att(n_in, n_out) sqrt(sum_h ||W_Q^h||_F^2 ||V_h||_F^2) ||W_O||_F,
 * an upper bound on Lip_2 of F (the non-contractive layer) on every graph with
 * those degree limits (Frobenius norms bound the spectral norms; B is
 * differentiable where it is not 0). Computed in double. LG_EINVAL for NULL,
 * a bad cfg, or n_in, n_out < 1. O(F K C + K C^2 + K C D). */
lg_status lg_l2att_lipschitz_bound_f32(double *bound, const float *params, const lg_l2att_config *cfg, lg_idx n_in,
                                       lg_idx n_out);
lg_status lg_l2att_lipschitz_bound_f64(double *bound, const double *params, const lg_l2att_config *cfg, lg_idx n_in,
                                       lg_idx n_out);

/* ------------------------------------------------------------------------- */
/* Cache                                                                      */
/* ------------------------------------------------------------------------- */

typedef struct lg_l2att_cache lg_l2att_cache; /* opaque */

typedef struct lg_l2att_mem {
    size_t activations; /* kept for backward: Q, M, O (3 n K C), P (nnz K),
                           ||q_i||^2 (n K)                                   */
    size_t workspace;   /* backward: dO, dM, dQ (3 n K C), records (nnz K),
                           edge maps, d W_O scratch (K C D), partials; forward:
                           degree counters; invert: f(x) (n D) if contractive */
} lg_l2att_mem;

/* Bytes of a cache for cfg, n, nnz and scalars of real_size (4 or 8) bytes.
 * LG_EINVAL for a bad argument, LG_ERANGE if the sizes overflow. */
lg_status lg_l2att_memory(const lg_l2att_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, lg_l2att_mem *mem);

/* *out = a cache for cfg and graphs of at most n_cap nodes and nnz_cap edges.
 * The _f32 cache serves the _f32 functions only. LG_ENOMEM (nothing leaked,
 * *out = NULL) if an allocation fails. */
lg_status lg_l2att_cache_init_f32(lg_l2att_cache **out, const lg_l2att_config *cfg, lg_idx n_cap, lg_idx nnz_cap);
lg_status lg_l2att_cache_init_f64(lg_l2att_cache **out, const lg_l2att_config *cfg, lg_idx n_cap, lg_idx nnz_cap);

/* NULL is a no-op. */
void lg_l2att_cache_free(lg_l2att_cache *cache);

/* ------------------------------------------------------------------------- */
/* Forward, backward, inverse                                                 */
/* ------------------------------------------------------------------------- */

/* out (n x D) = the layer on in (n x F) over g (see the top of this file).
 * g must contain the self-loop of every node: LG_EINVAL naming the first node
 * without one otherwise (checked in O(n + nnz)); it must fit the cache. cfg
 * must match the cache's. in, params and g must stay unchanged until the
 * matching backward; out must not alias in (LG_EINVAL "out and in overlap"
 * if their bytes do). Cost: O(n F K C) + O(n K C^2) +
 * O(n K C D) in gemms, O(nnz K C) in one fused row pass, O(n + nnz) checks.
 * LG_EINVAL (message) for a bad argument, nothing written then. With
 * cfg.contractive, LG_ENUMERIC if the bound is not finite. Scores use the
 * expanded form: inputs whose squared head norms ||q_i^h||^2 overflow the
 * scalar type give non-finite outputs (no rescaling is attempted), and
 * nearly equal q_i, q_j of large norm lose relative accuracy in s_ij. */
lg_status lg_l2att_forward_f32(float *out, lg_l2att_cache *cache, const float *in, const float *params,
                               const lg_graph *g, const lg_l2att_config *cfg);
lg_status lg_l2att_forward_f64(double *out, lg_l2att_cache *cache, const double *in, const double *params,
                               const lg_graph *g, const lg_l2att_config *cfg);

/* Backward of the last forward with this cache (same in, params, g, cfg):
 *     d_in     n x F  += dL/d in  (NULL to skip)
 *     d_params        += dL/d params (layout of lg_l2att_layout), including,
 *                        in the contractive form, the path through the bound B
 *     d_out    n x D  dL/d out
 * d_in may be d_out itself (a buffer of n x max(F, D)): dL/d out is read
 * first, and dL/d in is then written over it (=, not +=), so that a deep
 * model needs one gradient buffer between layers instead of two.
 * gT must be g's transpose (checked, O(n + nnz)): the source-node terms walk it.
 * Same cost as the forward. LG_EINVAL if no forward preceded or an argument
 * differs from the forward's (g: the same lg_graph with the same p and j
 * arrays, O(1)). */
lg_status lg_l2att_backward_f32(float *d_in, float *d_params, const float *d_out, lg_l2att_cache *cache,
                                const float *in, const float *params, const lg_graph *g, const lg_graph *gT,
                                const lg_l2att_config *cfg);
lg_status lg_l2att_backward_f64(double *d_in, double *d_params, const double *d_out, lg_l2att_cache *cache,
                                const double *in, const double *params, const lg_graph *g, const lg_graph *gT,
                                const lg_l2att_config *cfg);

/* Inverse of the residual layer y = x + f(x), f = the contractive layer
 * (cfg.contractive in (0, 1) and D = F required, else LG_EINVAL): the
 * fixed-point iteration x <- y - f(x) from x = y, stopped when the largest
 * absolute change of an entry is < tol or after max_iter iterations. x (n x F)
 * receives the last iterate, *iters (if not NULL) the iterations made. Since
 * Lip_2(f) <= c < 1 the iteration contracts: ||x_k - x|| <= c^k ||f(y)||/(1-c)
 * in the Frobenius norm. LG_ERANGE if tol was not reached within max_iter
 * (x then holds the last iterate). Uses the cache (its forward state is
 * overwritten). tol > 0, max_iter >= 1. Cost: one forward per iteration. */
lg_status lg_l2att_invert_f32(float *x, int *iters, lg_l2att_cache *cache, const float *y, const float *params,
                              const lg_graph *g, const lg_l2att_config *cfg, double tol, int max_iter);
lg_status lg_l2att_invert_f64(double *x, int *iters, lg_l2att_cache *cache, const double *y, const double *params,
                              const lg_graph *g, const lg_l2att_config *cfg, double tol, int max_iter);

/* att (nnz x K) = the softmax weights P_ij^h of the last forward. */
lg_status lg_l2att_attention_f32(float *att, const lg_l2att_cache *cache);
lg_status lg_l2att_attention_f64(double *att, const lg_l2att_cache *cache);

/* *scale = the factor applied to F by the last forward: c / (B + 1e-12) in the
 * contractive form, 1 otherwise; *bound (if not NULL) = B (0 if not
 * contractive). */
lg_status lg_l2att_last_scale(double *scale, double *bound, const lg_l2att_cache *cache);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_L2ATT_H */
