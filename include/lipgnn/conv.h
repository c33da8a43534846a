/*
 * lipgnn/conv.h: the non-attention baseline layers of the paper's comparisons,
 * forward and hand-written backward, in float (production) and double
 * (finite-difference checks):
 *
 *   GCN   (Kipf & Welling 2017)   out = P H W + b,  P = D^-1/2 A D^-1/2
 *   GIN   (Xu et al. 2019)        out = MLP((1 + eps) h_i + sum_{j in N(i)} h_j),
 *                                 MLP = Linear -> ReLU -> Linear, eps learnable or fixed
 *   GGNN  (Li et al. 2016)        m_i = sum_{j in N(i)} W h_j,  out_i = GRU(m_i, h_i)
 *   GCNII (Chen et al. 2020)      S = (1 - alpha) P H + alpha H0,
 *                                 out = S ((1 - beta) I + beta W)
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 *
 * The graph g is the in-neighbour CSR (row i lists the sources j of edges
 * j -> i) with the self-loops wanted: P uses deg_i = |N(i)| (the row length,
 * self-loop included), so D^-1/2 (A + I) D^-1/2 is P of a graph with
 * self-loops (lg_graph_self_loops), as GCN and GCNII use it; GIN and GGNN sum
 * over N(i) as given (a self-loop in g is one more term). Activations between
 * layers (ReLU ...) are not part of a layer.
 *
 * Shapes (row-major): n nodes, F = in_dim, D = out_dim.
 *     in  n x F, out n x D. GGNN and GCNII need D = F. GCNII also reads H0 (n x F).
 *     params, one block of lg_conv_layout(cfg).count values (x W convention):
 *       GCN    W F x D | b D
 *       GIN    W1 F x D | b1 D | W2 D x D | b2 D | eps 1 (only if train_eps)
 *       GGNN   W F x F | Wi F x 3F | bi 3F | Wh F x 3F | bh 3F
 *              (GRU gate columns in the order r | z | n, as PyTorch's GRUCell:
 *               r = sig(m Wi_r + bi_r + h Wh_r + bh_r), z likewise,
 *               c = tanh(m Wi_n + bi_n + r * (h Wh_n + bh_n)),
 *               out = (1 - z) * c + z * h)
 *       GCNII  W F x F (no bias, as PyTorch Geometric's GCN2Conv)
 *
 * Use (one layer; a model keeps one cache per layer):
 *     lg_conv_config cfg = lg_conv_config_default(LG_CONV_GCN, F, D);
 *     lg_conv_layout lay;  lg_conv_layout_get(&cfg, &lay);
 *     lg_conv_cache *c;    lg_conv_cache_init_f32(&c, &cfg, n);
 *     lg_conv_forward_f32(out, c, in, NULL, params, g, &cfg);
 *     lg_conv_backward_f32(d_in, NULL, d_params, d_out, c, in, NULL, params, g, gT, &cfg);
 *     lg_conv_cache_free(c);
 * Threads: dense products through OpenBLAS in fixed panels, sparse
 * aggregation as OpenMP passes over CSR rows (each thread writes the rows it
 * owns; backward walks gT, the transpose); no atomics; results are bitwise
 * identical whatever the number of threads.
 */
#ifndef LIPGNN_CONV_H
#define LIPGNN_CONV_H

#include "lipgnn/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which layer. */
typedef enum lg_conv_kind {
    LG_CONV_GCN = 0,
    LG_CONV_GIN,
    LG_CONV_GGNN,
    LG_CONV_GCNII,
    LG_CONV_COUNT
} lg_conv_kind;

/* "gcn", "gin", "ggnn", "gcnii"; "?" out of range. */
const char *lg_conv_kind_name(lg_conv_kind k);

/* One layer's hyper-parameters. */
typedef struct lg_conv_config {
    lg_conv_kind kind; /* which layer                                          */
    lg_idx in_dim;     /* F                                                    */
    lg_idx out_dim;    /* D (= F for GGNN and GCNII)                           */
    int train_eps;     /* GIN: 1 eps is a parameter (initialised to eps), 0 fixed */
    double eps;        /* GIN: the fixed eps, or the initial value of the learnt one */
    double alpha;      /* GCNII: weight of the initial residual H0, in [0, 1]  */
    double beta;       /* GCNII: identity mapping, in [0, 1]; the GCNII model uses
                          beta_l = log(lambda / l + 1) for layer l = 1, 2, ... */
} lg_conv_config;

/* The defaults: train_eps 0, eps 0 (GIN-0), alpha 0.1 and beta = log(lambda / l + 1) for
 * lambda 0.5 and l = 1 (GCNII's; set beta per layer). */
lg_conv_config lg_conv_config_default(lg_conv_kind kind, lg_idx in_dim, lg_idx out_dim);

/* LG_OK if cfg is usable; LG_EINVAL naming the first bad field otherwise. */
lg_status lg_conv_config_check(const lg_conv_config *cfg);

/* Offsets (in values) of each parameter in the layer's block; -1 if the kind
 * has no such parameter. */
typedef struct lg_conv_layout {
    lg_idx w;     /* W (GCN, GGNN, GCNII) or W1 (GIN)      */
    lg_idx b;     /* b (GCN) or b1 (GIN)                   */
    lg_idx w2;    /* GIN: W2, D x D                        */
    lg_idx b2;    /* GIN: b2, D                            */
    lg_idx eps;   /* GIN with train_eps: eps               */
    lg_idx wi;    /* GGNN: Wi, F x 3F                      */
    lg_idx bi;    /* GGNN: bi, 3F                          */
    lg_idx wh;    /* GGNN: Wh, F x 3F                      */
    lg_idx bh;    /* GGNN: bh, 3F                          */
    lg_idx count; /* total number of parameters            */
} lg_conv_layout;

lg_status lg_conv_layout_get(const lg_conv_config *cfg, lg_conv_layout *lay);

/* Initialises a parameter block: W, W1, W2 Glorot-uniform, biases 0, eps =
 * cfg->eps; GGNN's GRU weights and biases uniform in +-1/sqrt(F) (PyTorch's
 * GRUCell). Draws from rng in layout order. */
lg_status lg_conv_params_init_f32(float *params, const lg_conv_config *cfg, lg_rng *rng);
lg_status lg_conv_params_init_f64(double *params, const lg_conv_config *cfg, lg_rng *rng);

/* Cache: activations kept between forward and backward, and backward's
 * workspace, for graphs of at most n_cap nodes (any number of edges). */
typedef struct lg_conv_cache lg_conv_cache; /* opaque */

typedef struct lg_conv_mem {
    size_t activations; /* what backward needs from forward   */
    size_t workspace;   /* forward and backward scratch       */
} lg_conv_mem;

/* Fills *mem for cfg, n and a scalar of real_size bytes (4 or 8). LG_EINVAL
 * for a bad config (lg_conv_config_check), a NULL mem, real_size not 4 or 8,
 * or a negative n; LG_ERANGE for n above 2^40. */
lg_status lg_conv_memory(const lg_conv_config *cfg, lg_idx n, size_t real_size, lg_conv_mem *mem);

/* *out = a cache for cfg and graphs of at most n_cap nodes. The _f32 cache
 * serves the _f32 functions only, _f64 the _f64 ones. LG_EINVAL for a NULL
 * out, a bad config or a negative n_cap, LG_ERANGE for n_cap above 2^40 (as
 * lg_conv_memory); LG_ENOMEM (nothing leaked, *out = NULL) if an allocation
 * fails. */
lg_status lg_conv_cache_init_f32(lg_conv_cache **out, const lg_conv_config *cfg, lg_idx n_cap);
lg_status lg_conv_cache_init_f64(lg_conv_cache **out, const lg_conv_config *cfg, lg_idx n_cap);
void lg_conv_cache_free(lg_conv_cache *cache);

/* out (n x D) = layer(in (n x F)) on g (n = g->n). h0 (n x F): GCNII's
 * initial representation (NULL for the other kinds). in, h0, params and g must
 * stay unchanged until the matching backward; out must not alias them
 * (LG_EINVAL "out and in overlap", "... h0 ...", "... params ..." if their
 * bytes do). LG_EINVAL (message) for a bad argument, nothing written then. */
lg_status lg_conv_forward_f32(float *out, lg_conv_cache *cache, const float *in, const float *h0,
                              const float *params, const lg_graph *g, const lg_conv_config *cfg);
lg_status lg_conv_forward_f64(double *out, lg_conv_cache *cache, const double *in, const double *h0,
                              const double *params, const lg_graph *g, const lg_conv_config *cfg);

/* Backward of the last forward made with this cache:
 *     d_in     n x F  += dL/d in   (NULL to skip)
 *     d_h0     n x F  += dL/d h0   (GCNII; NULL to skip)
 *     d_params        += dL/d params
 *     d_out    n x D  dL/d out
 * g must be the forward's lg_graph, with the same p and j arrays (O(1); its
 * contents are not checked again). gT must be g's transpose: LG_EINVAL
 * otherwise (checked in O(n + nnz), as the attention layers' backward checks
 * it). LG_EINVAL if no forward preceded or arguments differ from the
 * forward's. */
lg_status lg_conv_backward_f32(float *d_in, float *d_h0, float *d_params, const float *d_out,
                               lg_conv_cache *cache, const float *in, const float *h0, const float *params,
                               const lg_graph *g, const lg_graph *gT, const lg_conv_config *cfg);
lg_status lg_conv_backward_f64(double *d_in, double *d_h0, double *d_params, const double *d_out,
                               lg_conv_cache *cache, const double *in, const double *h0, const double *params,
                               const lg_graph *g, const lg_graph *gT, const lg_conv_config *cfg);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_CONV_H */
