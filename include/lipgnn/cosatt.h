/*
 * lipgnn/cosatt.h: the neighbour-wise multi-head scaled cosine-similarity
 * attention layer (SCSA) of LipsFormer (Qi, Wang, Chen, Shi & Zhang,
 * "LipsFormer: Introducing Lipschitz Continuity to Vision Transformers",
 * ICLR 2023), restricted to the in-neighbours of each node of a graph:
 * forward and hand-written backward, in float (production) and double
 * (finite-difference checks).
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 *
 * Worked example (F = 2, K = 1, C = 2, D = 2, tau = 10, nu = 1, eps -> 0,
 * biases 0, Wq = 3I, Wk = I, Wv = 2I, W_O = I): node 0 with in-neighbours
 * {0, 1}, inputs h_0 = (1, 0), h_1 = (0, 5). Then q_0 = (3, 0), k_0 = (1, 0),
 * k_1 = (0, 5), v_0 = (2, 0), v_1 = (0, 10); the hats are qhat_0 = khat_0 =
 * vhat_0 = (1, 0), khat_1 = vhat_1 = (0, 1); s_00 = 10, s_01 = 0;
 * att = (e^10, 1) / (e^10 + 1) = (0.9999546, 0.0000454) and
 * out_0 = m_0 = (0.9999546, 0.0000454). Scaling every input row by 1000
 * leaves the hats, the attention and out_0 unchanged (up to eps): that is
 * the point of the layer (tests/test_cosatt.c checks this example and
 * measures the Jacobian as the input scale grows).
 *
 * Maths (n nodes, F = in_dim, K = heads, C = head_dim, D = out_dim; row i
 * of g lists the in-neighbours N(i) of node i, exactly the edges wanted):
 *     Z = H W + b,  W = [Wq | Wk | Wv] (F x 3KC), b = [bq | bk | bv] (3KC);
 *         head h of q, k, v = columns [hC, (h+1)C) of its block
 *     xhat = x / sqrt(||x||^2 + eps) for every head slice x of q_i, k_i, v_i
 *         (eps > 0 inside the square root, so the map is smooth everywhere
 *         and 0 maps to 0; for ||x||^2 >> eps it is the unit vector)
 *     s_ij = tau * qhat_ih . khat_jh                    (per head h)
 *     att_ij = exp(s_ij - max) / sum_{j' in N(i)} exp(s_ij' - max)
 *     m_i = nu * concat_h sum_{j in N(i)} att_ij vhat_jh  (1 x KC)
 *     out_i = m_i W_O + b_O,  W_O (KC x D), b_O (D)
 * A node without in-neighbours has m_i = 0 and outputs b_O. Self-loops: the
 * layer adds none (lg_graph_self_loops adds them); gT = lg_graph_transpose(g).
 *
 * tau and nu. The form implemented is SCSA(X) = nu softmax(tau Qhat Khat^T)
 * Vhat with the rows of Q, K, V divided by sqrt(||.||^2 + eps), LipsFormer's
 * as summarised for this work (of the paper itself only the abstract was
 * read here). The released code
 * (IDEA-Research/LipsFormer, models/lipsformer_swin.py, WindowAttention) uses
 * a FIXED tau = 10 (a literal constant, no parameter), F.normalize on q and k
 * (eps 1e-12 as a floor on the norm, not added under the square root), and
 * leaves v unnormalised (nu = 1). Here tau and nu are FIXED configuration
 * values (defaults tau = 10 as in that code, nu = 1), not parameters: the
 * layer's Lipschitz bound (which grows with tau and nu) then holds by
 * construction and no gradient can raise it. v IS normalised, as in the
 * paper's formula. eps is a config field (default 1e-6); it makes the map
 * smooth at 0, at the price of a local slope up to ~1/sqrt(eps) for
 * ||x|| ~ sqrt(eps).
 *
 * Shapes (row-major):
 *     in      n x F       layer input H
 *     out     n x D       layer output
 *     params  one block of lg_cosatt_layout(cfg).count values:
 *             W (F x 3KC) | b (3KC) | W_O (KC x D) | b_O (D)
 * Edge e is position e of g's CSR (row i = target, g->j[e] = source j);
 * per-edge, per-head arrays are nnz x K, edge-major.
 *
 * Use:
 *     lg_cosatt_config cfg = lg_cosatt_config_default(F, K, C, D);
 *     lg_cosatt_layout lay;  lg_cosatt_layout_get(&cfg, &lay);
 *     lg_cosatt_params_init_f32(params, &cfg, &rng);
 *     lg_cosatt_cache *cache; lg_cosatt_cache_init_f32(&cache, &cfg, n, g->nnz);
 *     lg_cosatt_forward_f32(out, cache, in, params, g, &cfg);
 *     lg_cosatt_backward_f32(d_in, d_params, d_out, cache, in, params, g, gT, &cfg);
 *     lg_cosatt_cache_free(cache);
 *
 * Complexity: forward O(n F 3KC + n KC D) in two gemms + O(nnz K C) in one
 * fused row pass; backward the same order (four gemms, a row pass over g and
 * a source pass over gT). Threads: OpenMP over CSR rows, no atomics,
 * parameter-gradient sums over fixed chunks of nodes added in chunk order:
 * results are bitwise identical whatever the number of threads once
 * lg_set_threads has pinned OpenBLAS to one thread (core.h).
 * Not implemented: attention dropout, learnable tau / nu.
 */
#ifndef LIPGNN_COSATT_H
#define LIPGNN_COSATT_H

#include "lipgnn/core.h"
#include "lipgnn/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One layer's hyper-parameters. */
typedef struct lg_cosatt_config {
    lg_idx in_dim;    /* F: input width                                        */
    lg_idx heads;     /* K: attention heads                                    */
    lg_idx head_dim;  /* C: width of each head                                 */
    lg_idx out_dim;   /* D: output width (of W_O)                              */
    double tau;       /* score scale, finite, > 0 (default 10, as LipsFormer)  */
    double nu;        /* message scale, finite, > 0 (default 1)                */
    double eps;       /* inside the row norms, finite, > 0 (default 1e-6)      */
    int spectral_init; /* 1: lg_cosatt_params_init divides W and W_O by their
                          largest singular value (lg_spectral_rescale); 0: plain
                          Glorot-uniform (default 0)                           */
} lg_cosatt_config;

/* The defaults: tau 10, nu 1, eps 1e-6, no spectral initialisation. */
lg_cosatt_config lg_cosatt_config_default(lg_idx in_dim, lg_idx heads, lg_idx head_dim, lg_idx out_dim);

/* LG_OK if cfg is usable; LG_EINVAL naming the first bad field otherwise
 * (dimensions >= 1 and small enough for 32-bit BLAS, tau, nu, eps finite and
 * > 0, spectral_init 0 or 1). */
lg_status lg_cosatt_config_check(const lg_cosatt_config *cfg);

/* Offsets (in values) of each parameter in the layer's block. */
typedef struct lg_cosatt_layout {
    lg_idx w;      /* W = [Wq | Wk | Wv], F x w_cols (row stride w_cols = 3KC) */
    lg_idx w_cols; /* 3KC                                                      */
    lg_idx b;      /* b = [bq | bk | bv], 3KC                                  */
    lg_idx wo;     /* W_O, KC x D                                              */
    lg_idx bo;     /* b_O, D                                                   */
    lg_idx count;  /* total                                                    */
} lg_cosatt_layout;

/* Fills *lay for cfg (LG_EINVAL as lg_cosatt_config_check, or lay NULL). */
lg_status lg_cosatt_layout_get(const lg_cosatt_config *cfg, lg_cosatt_layout *lay);

/* Initialises a parameter block: W with Glorot-uniform bound sqrt(6/(F+KC))
 * per block (draws Wq, Wk, Wv in turn, each row-major), W_O with
 * sqrt(6/(KC+D)), biases 0. With cfg->spectral_init, W (as one F x 3KC
 * matrix) and W_O are then divided by their largest singular value
 * (lg_spectral_rescale, LG_SPECTRAL_ITERS iterations, start seeded from rng),
 * so that both have spectral norm ~1. O(F KC + KC D) (+ the power
 * iterations). LG_EINVAL for NULL or a bad config. */
lg_status lg_cosatt_params_init_f32(float *params, const lg_cosatt_config *cfg, lg_rng *rng);
lg_status lg_cosatt_params_init_f64(double *params, const lg_cosatt_config *cfg, lg_rng *rng);

/* ------------------------------------------------------------------------- */
/* Cache: activations kept for backward + backward's workspace, allocated     */
/* once; forward and backward allocate nothing.                               */
/* ------------------------------------------------------------------------- */

typedef struct lg_cosatt_cache lg_cosatt_cache; /* opaque */

typedef struct lg_cosatt_mem {
    size_t activations; /* the hats (n x 3KC), 1/sqrt(||x||^2+eps) (n x 3K),
                           attention (nnz x K), messages (n x KC)           */
    size_t workspace;   /* dZ (n x 3KC), dm (n x KC), per-edge scratch and
                           records, transpose map, reduction partials       */
} lg_cosatt_mem;

/* Bytes of a cache for cfg, n nodes, nnz edges, scalars of real_size (4 or
 * 8). LG_EINVAL for a bad config or size, LG_ERANGE on overflow. */
lg_status lg_cosatt_memory(const lg_cosatt_config *cfg, lg_idx n, lg_idx nnz, size_t real_size,
                           lg_cosatt_mem *mem);

/* *out = a cache for cfg and any graph of at most n_cap nodes and nnz_cap
 * edges. The _f32 cache serves the _f32 functions only, _f64 the _f64 ones.
 * LG_ENOMEM (nothing leaked, *out = NULL) if an allocation fails; LG_EINVAL
 * for a bad config or size; LG_ERANGE as lg_cosatt_memory if the sizes
 * overflow. */
lg_status lg_cosatt_cache_init_f32(lg_cosatt_cache **out, const lg_cosatt_config *cfg, lg_idx n_cap,
                                   lg_idx nnz_cap);
lg_status lg_cosatt_cache_init_f64(lg_cosatt_cache **out, const lg_cosatt_config *cfg, lg_idx n_cap,
                                   lg_idx nnz_cap);

/* Frees the cache; NULL is a no-op. */
void lg_cosatt_cache_free(lg_cosatt_cache *cache);

/* ------------------------------------------------------------------------- */
/* Forward and backward                                                       */
/* ------------------------------------------------------------------------- */

/* out (n x D) = the layer (maths above) on in (n x F), n = g->n. cfg must
 * equal the cache's (dimensions, tau, nu, eps); g must fit the cache. in and
 * params must stay unchanged until the matching backward; out must not alias
 * in (LG_EINVAL "out and in overlap" if their bytes do). LG_EINVAL (message,
 * nothing written) for a bad argument. Inputs of any
 * finite scale whose Z fits the scalar type are fine: the scores are bounded
 * by tau in absolute value. */
lg_status lg_cosatt_forward_f32(float *out, lg_cosatt_cache *cache, const float *in, const float *params,
                                const lg_graph *g, const lg_cosatt_config *cfg);
lg_status lg_cosatt_forward_f64(double *out, lg_cosatt_cache *cache, const double *in, const double *params,
                                const lg_graph *g, const lg_cosatt_config *cfg);

/* Backward of the last forward made with this cache (same in, params, g, cfg):
 *     d_in     n x F   += dL/d in (NULL to skip)
 *     d_params         += dL/d params, in the layout of lg_cosatt_layout
 *     d_out    n x D   dL/d out
 * gT must be g's transpose (the source-node terms dk_j, dv_j walk it).
 * LG_EINVAL if no forward preceded, if an argument is NULL, if g is not the
 * forward's (the same lg_graph with the same p and j arrays, O(1)), if cfg
 * differs, or if gT is not g's transpose. */
lg_status lg_cosatt_backward_f32(float *d_in, float *d_params, const float *d_out, lg_cosatt_cache *cache,
                                 const float *in, const float *params, const lg_graph *g, const lg_graph *gT,
                                 const lg_cosatt_config *cfg);
lg_status lg_cosatt_backward_f64(double *d_in, double *d_params, const double *d_out, lg_cosatt_cache *cache,
                                 const double *in, const double *params, const lg_graph *g,
                                 const lg_graph *gT, const lg_cosatt_config *cfg);

/* att (nnz x K, edge-major) = the softmax weights of the last forward; each
 * non-empty row sums to 1 per head. LG_EINVAL before any forward. */
lg_status lg_cosatt_attention_f32(float *att, const lg_cosatt_cache *cache);
lg_status lg_cosatt_attention_f64(double *att, const lg_cosatt_cache *cache);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_COSATT_H */
