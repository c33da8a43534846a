/*
 * lipgnn/lipschitz.h: per-layer Lipschitz constants of a trained model:
 * two estimates (lower bounds) and the theoretical upper bound, layer by
 * layer, as in the LipschitzNorm paper (Dasoulas, Scaman & Virmaux 2021,
 * Corollaries 1 and 2, eq. 22). What is estimated and the bound's
 * derivation: docs/lipschitz-estimator.md.
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 *
 * The map of block l: its input H (all nodes, n x w_in) -> its output
 * (n x w_out) in evaluation mode (no dropout): the attention (or baseline)
 * layer, LayerNorm if any, the activation (ELU, 1-Lipschitz; none after the
 * last layer), the residual and PairNorm if any, exactly as the model
 * computes it. Norm: Frobenius over the whole node-feature matrix.
 *
 *     lg_lip_config lc;  lg_lip_config_default(&lc);
 *     lg_lip_layer *rows = calloc(lg_trainer_layers(t), sizeof *rows);
 *     lg_lipschitz_estimate(rows, lg_trainer_layers(t), t, &lc, NULL, NULL);
 *     // rows[l].power <= Lip(block l) <= rows[l].bound; rows[l].ascent too
 */
#ifndef LIPGNN_LIPSCHITZ_H
#define LIPGNN_LIPSCHITZ_H

#include "lipgnn/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How hard the estimator works. */
typedef struct lg_lip_config {
    int iters;     /* power-iteration steps, and ascent steps per start (50)    */
    int starts;    /* gradient-ascent starts per layer (3; 0: no ascent)        */
    uint64_t seed; /* the random vectors and starts (1)                         */
    double radius; /* ascent starts at distance radius * ||H|| from the real
                      input H (0.1)                                             */
} lg_lip_config;

void lg_lip_config_default(lg_lip_config *c);

/* LG_OK, or LG_EINVAL naming the bad field (iters in [1, 100000], starts in
 * [0, 10000], radius finite and in (0, 100]). */
lg_status lg_lip_config_check(const lg_lip_config *c);

/* One layer's figures. */
typedef struct lg_lip_layer {
    int layer;          /* 0-based                                               */
    char kind[16];      /* the layer kind: "gat", "gt", "gcn", "gin", ...        */
    lg_idx heads;       /* attention heads (0 for the baselines)                 */
    lg_att_norm norm;   /* its score normalisation                               */
    double power;       /* power iteration: sigma_max of the Jacobian at the real
                           input (J v by central differences, J^T u by the
                           layer's backward); the largest ||J v|| seen, a
                           difference quotient: a lower bound of the constant */
    double ascent;      /* the best ||f(x) - f(y)|| / ||x - y|| over the ascent
                           (another lower bound); NaN when starts = 0          */
    double bound;       /* theoretical upper bound; INFINITY where none is known */
    char basis[48];     /* what the bound rests on ("corollary 1", "no
                           LipschitzNorm", "PairNorm: not Lipschitz", ...)       */
    double prod_power, prod_ascent, prod_bound; /* the products over layers
                           0..layer (eq. 22: prod_bound bounds the stack's
                           constant; the products of the estimates are not
                           lower bounds of it). A factor 0 makes a product 0  */
} lg_lip_layer;

/* Fills out[0..L) (cap >= L = lg_trainer_layers(t)) for the trainer's model
 * on its data set, in double precision (a double copy of the model with the
 * trainer's parameters; the trainer is not changed). progress (or NULL) is
 * called after each layer (done of total layers). A trainer of mini-batches
 * (no whole graph): LG_EUNSUPPORTED. Time: per layer, about
 * 4 iters + starts * iters * 5 passes of the layer (forward or backward).
 * Memory: a double model and O(n max width) vectors. */
lg_status lg_lipschitz_estimate(lg_lip_layer *out, int cap, lg_trainer *t, const lg_lip_config *c,
                                lg_progress_fn progress, void *ctx);

/* The theoretical upper bound of one GAT layer (docs/lipschitz-estimator.md):
 * the Lipschitz constant of H -> GAT(H) over the whole graph g (Frobenius
 * norms), from Corollary 1, B_i = e^s / sqrt(|N(i)|) + s sqrt(8) per node
 * and head (s = cfg->lip_scale), as
 *     sqrt( max_j sum_{i : j in N(i)} B_i^2 ) * sqrt( sum_k ||W_k||^2 )
 * (concat; the mean of heads: (1/K) sum_k ||W_k|| instead), the spectral
 * norms ||W_k|| bounded from above (lg_lip_spectral_norm). *bound = INFINITY
 * where no bound is known: no normalisation, the reference code's form, a
 * node with in-neighbours but no self-loop. O(nnz + K F C^2 log).
 * LG_EINVAL for a NULL argument, a bad config or graph; LG_ENUMERIC (from
 * lg_lip_spectral_norm, its message naming it) for a NaN or infinite
 * parameter among the W_k, or weights whose Gram product overflows; LG_ENOMEM.
 * After a failure past the argument checks *bound = INFINITY. */
lg_status lg_lip_bound_gat(double *bound, const lg_gat_config *cfg, const double *params, const lg_graph *g);

/* The same for a graph-transformer layer, from Corollary 2,
 * B_i = e^sqrt(3) / sqrt(|N(i)|) + 2 sqrt(6):
 *     ||Wskip|| + sqrt( sum_k Bq^2 ||Wq_k||^2 + Bkv^2 ||[Wk_k Wv_k]||^2 ),
 * Bq^2 = max_i B_i^2, Bkv^2 = max_j sum_{i : j in N(i)} B_i^2 (mean of
 * heads: the mean of the per-head roots). INFINITY for no normalisation, the
 * reference form and the gate. Errors as lg_lip_bound_gat (LG_ENUMERIC
 * from lg_lip_spectral_norm for a non-finite Wq, Wk, Wv or Wskip; *bound =
 * INFINITY after a failure past the argument checks). */
lg_status lg_lip_bound_gt(double *bound, const lg_gt_config *cfg, const double *params, const lg_graph *g);

/* The same for a block of `--model cosine` (docs/cosine-attention.md):
 * h -> h + alpha (*) SCSA(CenterNorm(h)), SCSA = scaled cosine-similarity
 * attention (lipgnn/cosatt.h; gain and alpha: cfg->in_dim values each; the
 * block's own residual included). With n_out the largest out-degree of g
 * and the spectral norms a_q, a_k, a_v of head h's columns of W and ||W_O||:
 *     1 + max|alpha| (D/(D-1)) max|gain| ||W_O|| nu eps^-1/2
 *         sqrt( sum_h (sqrt(n_out) a_v + 2 tau a_q + 2 tau sqrt(n_out) a_k)^2 ),
 * from: the row normalisation u/sqrt(|u|^2 + eps) is eps^-1/2-Lipschitz and
 * maps into the unit ball, so the scores move by at most tau (|dq_i| + |dk_j|)
 * and each message by 2 |d score| through the softmax; a row-stochastic P
 * whose columns hold at most n_out entries has ||P||_2 <= sqrt(n_out).
 * Loose by design (eps^-1/2 = 1000 at the default eps): valid, not tight.
 * O(nnz + K F C^2 log). Errors as lg_lip_bound_gat (LG_ENUMERIC from
 * lg_lip_spectral_norm for a non-finite W or W_O; *bound = INFINITY after a
 * failure past the argument checks). */
lg_status lg_lip_bound_cosine(double *bound, const lg_cosatt_config *cfg, const double *params, const double *gain,
                              const double *alpha, const lg_graph *g);

/* *upper = an upper bound of the spectral norm of the rows x ncols matrix
 * made of the columns cols[0..ncols) of the row-major matrix w (row stride
 * ld), within a factor (min(rows, ncols))^(1/2^13) of it: sqrt of
 * trace(M^(2^12))^(1/2^12), M the smaller Gram matrix, by repeated squaring
 * with normalisation; 0 for a zero matrix. O(rows ncols min(rows, ncols) +
 * 12 min^3). Errors ("bad argument" and the field): LG_EINVAL for a NULL
 * upper, w or cols, rows < 1 or ncols < 1, or a column outside [0, ld);
 * LG_ERANGE if the extent read, (rows - 1) ld + max(cols) + 1, or rows ncols
 * exceeds 2^60 elements; LG_ENUMERIC "weights not finite" for a NaN or
 * infinite entry among the columns, and "the Gram product of finite weights
 * overflows" for finite entries too large to square and sum in double
 * (about 1e154 and beyond); LG_ENOMEM. On every failure *upper (when upper
 * is not NULL) is 0. */
lg_status lg_lip_spectral_norm(double *upper, const double *w, lg_idx rows, lg_idx ld, const lg_idx *cols,
                               lg_idx ncols);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_LIPSCHITZ_H */
