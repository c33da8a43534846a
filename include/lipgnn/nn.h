/*
 * lipgnn/nn.h: node-wise neural-network operations with hand-written backward
 * passes: linear (dense and sparse input), ELU, dropout, residual add,
 * PairNorm, LayerNorm, log-softmax + NLL, accuracy.
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 *
 * Conventions of this header:
 *  - Every operation exists in float (_f32, production) and double (_f64, for
 *    finite-difference checks); both are compiled from one generic kernel and
 *    are documented once, on the _f32 line.
 *  - Matrices are dense row-major; "n x d" means n rows (nodes) of d values.
 *  - A *_forward writes (overwrites) its outputs. A *_backward ADDS (+=) into
 *    its gradient outputs, so the caller zeroes them once per backward pass; a
 *    gradient pointer given as NULL is not computed.
 *  - Outputs come first. Every function that can fail returns an lg_status:
 *    LG_EINVAL for a NULL pointer where data is needed, a negative size, a
 *    size product that overflows, an invalid index or option; LG_ERANGE for a
 *    size beyond what BLAS (32-bit int) accepts. Nothing is written then.
 *  - Threads: OpenMP over rows (or over column blocks / segments for the
 *    reductions); each thread writes only what it owns, and every sum across
 *    rows runs in one fixed order, so results are bitwise identical whatever
 *    the number of OpenMP threads.
 *    The dense products (lg_linear_*) are OpenBLAS gemms. OpenBLAS's own
 *    threading changes the last bits of a gemm with its thread count (it
 *    splits the output, and its edge kernels round differently from its inner
 *    ones). So when OpenBLAS runs ONE thread (OPENBLAS_NUM_THREADS=1 or
 *    openblas_set_num_threads(1)), the products are done as fixed panels of
 *    rows, one single-threaded gemm each, over OpenMP: then every result here
 *    is the same whatever the thread count. With more OpenBLAS threads they
 *    are one gemm call each, reproducible only for a fixed OpenBLAS count.
 *  - No function allocates, except lg_features_transpose.
 */
#ifndef LIPGNN_NN_H
#define LIPGNN_NN_H

#include "lipgnn/dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Linear, dense input                                                        */
/* ------------------------------------------------------------------------- */

/* Forward: y (n x out) = x (n x in) w (in x out) + b (out; NULL: no bias).
 * One OpenBLAS gemm. y must not overlap x or w: LG_EINVAL ("y and x
 * overlap", "y and w overlap") if its bytes do. O(n in out). */
lg_status lg_linear_forward_f32(float *y, const float *x, const float *w, const float *b,
                                lg_idx n, lg_idx in, lg_idx out);
lg_status lg_linear_forward_f64(double *y, const double *x, const double *w, const double *b,
                                lg_idx n, lg_idx in, lg_idx out);

/* Backward, given dy (n x out):
 *   dx (n x in)   += dy w^T      (gemm)
 *   dw (in x out) += x^T dy      (gemm)
 *   db (out)      += column sums of dy (each column summed over rows 0..n-1 in
 *                    order, OpenMP over column blocks)
 * Any of dx, dw, db may be NULL (not computed); x is needed only for dw, w
 * only for dx. O(n in out). */
lg_status lg_linear_backward_f32(float *dx, float *dw, float *db, const float *dy, const float *x,
                                 const float *w, lg_idx n, lg_idx in, lg_idx out);
lg_status lg_linear_backward_f64(double *dx, double *dw, double *db, const double *dy,
                                 const double *x, const double *w, lg_idx n, lg_idx in, lg_idx out);

/* ------------------------------------------------------------------------- */
/* Linear, sparse input (features of kind LG_FEAT_SPARSE)                     */
/* ------------------------------------------------------------------------- */

/* *out = the transpose of the sparse matrix x (x->d rows, x->n columns, kind
 * LG_FEAT_SPARSE, column ids ascending in a row): the column view of a
 * feature matrix (no kernel of the library needs it). x is checked (row pointers monotone from 0
 * to nnz, column ids in range): LG_EINVAL otherwise. Free the result with
 * lg_features_free. O(n + d + nnz) time and memory; LG_ENOMEM possible. On
 * failure *out is NULL. */
lg_status lg_features_transpose(lg_features **out, const lg_features *x);

/* Forward: y (n x out) = x (n x in, sparse, n = x->n, in = x->d) w (in x out)
 * + b (out; NULL: no bias). The feature values are float in both variants (the
 * _f64 one converts them). OpenMP over rows of y; each row is built from its
 * non-zeros in storage order. x's structure is checked first (O(n + nnz)):
 * LG_EINVAL if invalid. O(nnz out). */
lg_status lg_linear_sparse_forward_f32(float *y, const lg_features *x, const float *w,
                                       const float *b, lg_idx out);
lg_status lg_linear_sparse_forward_f64(double *y, const lg_features *x, const double *w,
                                       const double *b, lg_idx out);

/* Backward, given dy (n x out) and the forward's x (n x in, sparse):
 *   dw (in x out) += x^T dy   (OpenMP over ranges of rows of dw, each thread
 *                              streaming x and dy in node order for the
 *                              non-zeros of its range: every element summed
 *                              over its non-zeros in ascending node order,
 *                              the same bits at any thread count; no
 *                              transpose of x is needed)
 *   db (out)      += column sums of dy (as in lg_linear_backward)
 * There is no dx: a sparse input is the raw features. dw or db may be NULL.
 * in: the rows of dw, which must be x->d (LG_EINVAL otherwise; before
 * 2026-11-26 this function took x's transpose, without in). x's structure is
 * checked (LG_EINVAL). O(nnz out + n log(nnz/n) threads). */
lg_status lg_linear_sparse_backward_f32(float *dw, float *db, const float *dy,
                                        const lg_features *x, lg_idx in, lg_idx out);
lg_status lg_linear_sparse_backward_f64(double *dw, double *db, const double *dy,
                                        const lg_features *x, lg_idx in, lg_idx out);

/* ------------------------------------------------------------------------- */
/* ELU (alpha = 1), ReLU and the residual add                                 */
/* ------------------------------------------------------------------------- */

/* Forward: y[k] = x[k] if x[k] > 0, else expm1(x[k]), k < count. y may equal
 * x (in place). O(count). */
lg_status lg_elu_forward_f32(float *y, const float *x, lg_idx count);
lg_status lg_elu_forward_f64(double *y, const double *x, lg_idx count);

/* Backward FROM THE OUTPUT y (so the forward may run in place):
 *   dx[k] += dy[k] * (y[k] > 0 ? 1 : y[k] + 1)      (y + 1 = exp(x) for x <= 0)
 * O(count). */
lg_status lg_elu_backward_f32(float *dx, const float *dy, const float *y, lg_idx count);
lg_status lg_elu_backward_f64(double *dx, const double *dy, const double *y, lg_idx count);

/* The same in place, when the incoming gradient is not needed afterwards:
 *   g[k] *= (y[k] > 0 ? 1 : y[k] + 1)
 * (the bits of lg_elu_backward into a zeroed dx, but for the sign of a zero
 * product). g and y must be different arrays: LG_EINVAL ("g and y are the
 * same array") for g == y with count > 0. O(count). */
lg_status lg_elu_backward_inplace_f32(float *g, const float *y, lg_idx count);
lg_status lg_elu_backward_inplace_f64(double *g, const double *y, lg_idx count);

/* ReLU. Forward: y[k] = max(x[k], 0); y may equal x. Backward FROM THE
 * OUTPUT y: dx[k] += dy[k] if y[k] > 0 (0 at the kink). O(count). */
lg_status lg_relu_forward_f32(float *y, const float *x, lg_idx count);
lg_status lg_relu_forward_f64(double *y, const double *x, lg_idx count);
lg_status lg_relu_backward_f32(float *dx, const float *dy, const float *y, lg_idx count);
lg_status lg_relu_backward_f64(double *dx, const double *dy, const double *y, lg_idx count);

/* y[k] += x[k], k < count. This is the residual forward (out += in), and also
 * its backward (d_in += d_out; d_out flows on unchanged). O(count). */
lg_status lg_add_f32(float *y, const float *x, lg_idx count);
lg_status lg_add_f64(double *y, const double *x, lg_idx count);

/* ------------------------------------------------------------------------- */
/* Dropout (inverted)                                                         */
/* ------------------------------------------------------------------------- */

/* The mask is never stored: it is a function of (seed, counter, element index
 * k) and is recomputed by the backward pass, the same bits whatever the number
 * of threads. With stream = lg_hash64(seed ^ lg_hash64(counter)), lo and hi
 * the low and high 32-bit words of k, key = lg_hash64(stream + hi *
 * 0x9e3779b97f4a7c15) and mix32 the 32-bit mixer x ^= x >> 16;
 * x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16 (mod 2^32),
 * u_k = mix32(mix32(lo + (key mod 2^32)) ^ (key >> 32)) and element k is
 * dropped iff u_k < floor(p * 2^32). (lipgnn before 2026-11-28 drew u_k =
 * lg_hash64(stream + k * 0x9e3779b97f4a7c15) >> 32: other masks, the same
 * law.) The caller picks a new counter for every call that needs a fresh
 * mask (e.g. epoch * calls_per_epoch + call), and passes the same (seed,
 * counter, p) to the backward. */

/* 1 if element k is kept by the mask of (seed, counter, p), 0 if dropped.
 * p outside [0, 1) keeps everything. For tests and for callers that apply
 * the mask themselves (attention dropout has its own rule: lipgnn/gat.h). */
int lg_dropout_kept(uint64_t seed, uint64_t counter, lg_idx k, double p);

/* Forward: y[k] = x[k] / (1 - p) if kept, else 0, k < count; y = x when
 * training is 0 or p is 0 (evaluation). y may equal x. p must be in [0, 1)
 * (LG_EINVAL otherwise, NaN included). O(count). */
lg_status lg_dropout_forward_f32(float *y, const float *x, lg_idx count, double p, uint64_t seed,
                                 uint64_t counter, int training);
lg_status lg_dropout_forward_f64(double *y, const double *x, lg_idx count, double p,
                                 uint64_t seed, uint64_t counter, int training);

/* Backward: dx[k] += dy[k] / (1 - p) if kept, else nothing (dx += dy when not
 * training or p is 0), with the forward's (p, seed, counter). O(count). */
lg_status lg_dropout_backward_f32(float *dx, const float *dy, lg_idx count, double p,
                                  uint64_t seed, uint64_t counter, int training);
lg_status lg_dropout_backward_f64(double *dx, const double *dy, lg_idx count, double p,
                                  uint64_t seed, uint64_t counter, int training);

/* ELU and the next layer's input dropout fused (one pass over the data
 * instead of two; what DeepGAT and DeepGT blocks without residual or PairNorm
 * do between layers). Forward: z[k] = ELU(z[k]) in place, then d[k] =
 * dropout(z[k]) with (p, seed, counter, training): the bits of
 * lg_elu_forward(z, z, count) followed by lg_dropout_forward(d, z, ...). z and d
 * must not overlap (LG_EINVAL). O(count). */
lg_status lg_elu_dropout_forward_f32(float *z, float *d, lg_idx count, double p, uint64_t seed, uint64_t counter,
                                     int training);
lg_status lg_elu_dropout_forward_f64(double *z, double *d, lg_idx count, double p, uint64_t seed,
                                     uint64_t counter, int training);

/* Backward in place, from g = dL/d d to dL/d(the ELU's input), z the ELU's
 * output: the bits of lg_dropout_forward(g, g, ...) (the mask times 1/(1-p),
 * which is the dropout's backward) followed by lg_elu_backward_inplace(g, z).
 * g and z must not overlap (LG_EINVAL). O(count). */
lg_status lg_dropout_elu_backward_inplace_f32(float *g, const float *z, lg_idx count, double p, uint64_t seed,
                                              uint64_t counter, int training);
lg_status lg_dropout_elu_backward_inplace_f64(double *g, const double *z, lg_idx count, double p, uint64_t seed,
                                              uint64_t counter, int training);

/* The backward in place above and, in the same pass, d = the forward's
 * dropped copy made again: the bits of lg_dropout_elu_backward_inplace(g, z,
 * ...) and lg_dropout_forward(d, z, ...) with the same (p, seed, counter,
 * training), the mask computed once for both (a model's backward that keeps
 * no dropped copy makes it so for the layer that reads it). g, d and z must
 * not overlap (LG_EINVAL). O(count). */
lg_status lg_dropout_elu_backward_remake_f32(float *g, float *d, const float *z, lg_idx count, double p,
                                             uint64_t seed, uint64_t counter, int training);
lg_status lg_dropout_elu_backward_remake_f64(double *g, double *d, const double *z, lg_idx count, double p,
                                             uint64_t seed, uint64_t counter, int training);

/* ------------------------------------------------------------------------- */
/* PairNorm (Zhao & Akoglu 2020), per graph of a batch                        */
/* ------------------------------------------------------------------------- */

/* Which PairNorm. */
typedef enum lg_pairnorm_mode {
    LG_PAIRNORM_PN = 0, /* out_i = s xc_i / sqrt(1e-12 + mean_i ||xc_i||^2)      */
    LG_PAIRNORM_SI = 1, /* "PN-SI": out_i = s xc_i / sqrt(1e-12 + ||xc_i||^2)    */
} lg_pairnorm_mode;

/* Forward, per segment (graph) g of nodes [graph_ptr[g], graph_ptr[g+1]):
 *   xc_i = x_i - mean over the segment of x_i, then out_i as the mode says,
 *   scale s > 0 (the paper: 1).
 * out, x: n x d (out may equal x). rstd (n): saved for the backward, the
 * factor 1/sqrt(...) of each row (for PN the same within a segment).
 * graph_ptr holds n_graphs + 1 non-decreasing offsets from 0 to n (empty
 * segments are allowed); graph_ptr NULL means one segment [0, n). Sums over
 * rows run in row order (OpenMP over segment x column-block tasks and over
 * rows). O(n d). */
lg_status lg_pairnorm_forward_f32(float *out, float *rstd, const float *x, lg_idx n, lg_idx d,
                                  const lg_idx *graph_ptr, lg_idx n_graphs, lg_pairnorm_mode mode,
                                  double scale);
lg_status lg_pairnorm_forward_f64(double *out, double *rstd, const double *x, lg_idx n, lg_idx d,
                                  const lg_idx *graph_ptr, lg_idx n_graphs, lg_pairnorm_mode mode,
                                  double scale);

/* Backward through the mean and the norms, from the forward's out and rstd:
 *   dx (n x d) += J^T dout (dout: n x d).
 * work: scratch of n values (overwritten). Same graph_ptr, mode, scale as the
 * forward. O(n d). */
lg_status lg_pairnorm_backward_f32(float *dx, float *work, const float *dout, const float *out,
                                   const float *rstd, lg_idx n, lg_idx d, const lg_idx *graph_ptr,
                                   lg_idx n_graphs, lg_pairnorm_mode mode, double scale);
lg_status lg_pairnorm_backward_f64(double *dx, double *work, const double *dout,
                                   const double *out, const double *rstd, lg_idx n, lg_idx d,
                                   const lg_idx *graph_ptr, lg_idx n_graphs,
                                   lg_pairnorm_mode mode, double scale);

/* ------------------------------------------------------------------------- */
/* LayerNorm, per node over its features                                      */
/* ------------------------------------------------------------------------- */

/* Forward (PyTorch's nn.LayerNorm(d), eps 1e-5, biased variance):
 *   y_i = (x_i - mean_i) * rstd_i * gain + bias,  rstd_i = 1/sqrt(var_i + 1e-5).
 * y, x: n x d; gain, bias: d (NULL: 1 and 0). mean, rstd (n each) are saved
 * for the backward. The mean is taken as x_i0 + mean(x_i - x_i0), so a
 * constant row gives exactly y_i = bias. y may equal x only if no backward
 * follows (the backward reads x). OpenMP over rows. O(n d). */
lg_status lg_layernorm_forward_f32(float *y, float *mean, float *rstd, const float *x,
                                   const float *gain, const float *bias, lg_idx n, lg_idx d);
lg_status lg_layernorm_forward_f64(double *y, double *mean, double *rstd, const double *x,
                                   const double *gain, const double *bias, lg_idx n, lg_idx d);

/* Backward, given dy (n x d), the forward's x, mean, rstd and gain (NULL: 1):
 *   dx (n x d) += rstd_i (g_i - mean(g_i) - xhat_i mean(g_i * xhat_i)),
 *                 g_i = dy_i * gain, xhat_i = (x_i - mean_i) rstd_i
 *   dgain (d)  += sum over rows of dy_i * xhat_i
 *   dbias (d)  += sum over rows of dy_i
 * (the two sums in row order, OpenMP over column blocks). dx, dgain, dbias may
 * be NULL. O(n d). */
lg_status lg_layernorm_backward_f32(float *dx, float *dgain, float *dbias, const float *dy,
                                    const float *x, const float *mean, const float *rstd,
                                    const float *gain, lg_idx n, lg_idx d);
lg_status lg_layernorm_backward_f64(double *dx, double *dgain, double *dbias, const double *dy,
                                    const double *x, const double *mean, const double *rstd,
                                    const double *gain, lg_idx n, lg_idx d);

/* ------------------------------------------------------------------------- */
/* Log-softmax, NLL loss and accuracy over a list of nodes                    */
/* ------------------------------------------------------------------------- */

/* Checks a node list for the loss: every nodes[k] (k < m) in [0, n) and its
 * label labels[nodes[k]] in [0, n_classes) (so a -1 "no label" node must not
 * be listed). LG_EINVAL naming the first offender. The functions below call
 * it themselves. O(m). */
lg_status lg_nll_check(const int32_t *labels, lg_idx n, lg_idx n_classes, const lg_idx *nodes,
                       lg_idx m);

/* Forward: logp (n x c) = log_softmax of each row of logits (n x c), with the
 * row maximum subtracted. logp may equal logits. c >= 1. OpenMP over rows.
 * O(n c). */
lg_status lg_log_softmax_forward_f32(float *logp, const float *logits, lg_idx n, lg_idx c);
lg_status lg_log_softmax_forward_f64(double *logp, const double *logits, lg_idx n, lg_idx c);

/* The same for the listed rows only (rows[k] in [0, n); a row listed twice is
 * computed twice, with the same values): each row's bits are those
 * lg_log_softmax_forward gives it; the other rows of logp are not written.
 * For a loss over a few labelled nodes of a large graph (the full-graph
 * trainer: the training nodes). Serial over the list. O(m c). */
lg_status lg_log_softmax_rows_forward_f32(float *logp, const float *logits, lg_idx n, lg_idx c,
                                          const lg_idx *rows, lg_idx m);
lg_status lg_log_softmax_rows_forward_f64(double *logp, const double *logits, lg_idx n, lg_idx c,
                                          const lg_idx *rows, lg_idx m);

/* *loss = -(1/m) sum over k < m of logp[nodes[k], labels[nodes[k]]], summed
 * in double in list order (0 when m = 0). Checks the list (lg_nll_check).
 * O(m). */
lg_status lg_nll_forward_f32(double *loss, const float *logp, lg_idx n, lg_idx c,
                             const int32_t *labels, const lg_idx *nodes, lg_idx m);
lg_status lg_nll_forward_f64(double *loss, const double *logp, lg_idx n, lg_idx c,
                             const int32_t *labels, const lg_idx *nodes, lg_idx m);

/* Backward of loss = nll(log_softmax(logits)) with respect to the LOGITS,
 * given the forward's logp and dloss (1 for the plain loss):
 *   dlogits[i] += (dloss / m) (exp(logp[i]) - onehot(labels[i]))  for each
 *   listed i (a node listed twice counts twice); other rows are untouched
 *   (zero if the caller zeroed dlogits). Serial over the list. O(m c). */
lg_status lg_log_softmax_nll_backward_f32(float *dlogits, const float *logp, lg_idx n, lg_idx c,
                                          const int32_t *labels, const lg_idx *nodes, lg_idx m,
                                          double dloss);
lg_status lg_log_softmax_nll_backward_f64(double *dlogits, const double *logp, lg_idx n, lg_idx c,
                                          const int32_t *labels, const lg_idx *nodes, lg_idx m,
                                          double dloss);

/* *acc = the share of listed nodes whose arg-max over scores[i] (n x c, logits
 * or log-probabilities) equals its label; ties go to the lowest class, NaN
 * scores never win. 0 when m = 0. Checks the list. O(m c). */
lg_status lg_accuracy_f32(double *acc, const float *scores, lg_idx n, lg_idx c,
                          const int32_t *labels, const lg_idx *nodes, lg_idx m);
lg_status lg_accuracy_f64(double *acc, const double *scores, lg_idx n, lg_idx c,
                          const int32_t *labels, const lg_idx *nodes, lg_idx m);

/* ------------------------------------------------------------------------- */
/* Spectral initialisation (LipsFormer)                                       */
/* ------------------------------------------------------------------------- */

/* Power iterations used by the layers' spectral initialisation. */
#define LG_SPECTRAL_ITERS 100

/* Divides the rows x cols matrix w (row stride ld >= cols) by its largest
 * singular value sigma_max, estimated by `iters` power iterations in double
 * from a start vector uniform in [-1, 1)^cols drawn from lg_rng seeded with
 * seed: v <- v/||v||, u = W v, s = ||u||, v = W^T (u/s). s = ||W v|| with a
 * unit v never exceeds sigma_max, and approaches it at the rate
 * (sigma_2/sigma_1)^(2 iters) (a few hundred iterations for an exact value
 * unless sigma_1 and sigma_2 are nearly equal). *sigma (if not NULL) = the s
 * used; a zero matrix is left as it is (s = 0). Serial, deterministic;
 * allocates two vectors (LG_ENOMEM). O(iters rows cols). LG_EINVAL for NULL w
 * with a non-empty shape, a negative size, ld < cols, an extent
 * (rows - 1) ld + cols (or rows cols) of more than 2^60 elements, iters < 1,
 * or a non-finite norm. */
lg_status lg_spectral_rescale_f32(float *w, lg_idx rows, lg_idx cols, lg_idx ld, int iters, uint64_t seed,
                                  double *sigma);
lg_status lg_spectral_rescale_f64(double *w, lg_idx rows, lg_idx cols, lg_idx ld, int iters, uint64_t seed,
                                  double *sigma);

/* ------------------------------------------------------------------------- */
/* CenterNorm and the weighted residual shortcut (LipsFormer)                 */
/* ------------------------------------------------------------------------- */

/* CenterNorm (Qi et al., LipsFormer, ICLR 2023), per node over its d >= 2
 * features:
 *     y_i = gain * (d/(d-1)) (x_i - mean(x_i)) + bias
 * (no division by the standard deviation: unlike LayerNorm it is Lipschitz,
 * with constant max|gain| d/(d-1), the centring projection having norm 1).
 * y, x: n x d; gain, bias: d (NULL: 1 and 0). The mean is taken as
 * x_i0 + mean(x_i - x_i0). y may equal x only if no backward follows (the
 * backward reads x for dgain). OpenMP over rows. O(n d). LG_EINVAL for d < 2,
 * a bad shape or a NULL array with n > 0. */
lg_status lg_centernorm_forward_f32(float *y, const float *x, const float *gain, const float *bias, lg_idx n,
                                    lg_idx d);
lg_status lg_centernorm_forward_f64(double *y, const double *x, const double *gain, const double *bias,
                                    lg_idx n, lg_idx d);

/* Backward, given dy (n x d), the forward's x and gain (NULL: 1):
 *     dx (n x d) += (d/(d-1)) (g_i - mean(g_i)),  g_i = dy_i * gain
 *     dgain (d)  += sum over rows of dy_i * (d/(d-1)) (x_i - mean(x_i))
 *     dbias (d)  += sum over rows of dy_i
 * (sums in row order over column blocks: bitwise independent of threads).
 * dx, dgain, dbias may be NULL; x may be NULL when dgain is. O(n d). */
lg_status lg_centernorm_backward_f32(float *dx, float *dgain, float *dbias, const float *dy, const float *x,
                                     const float *gain, lg_idx n, lg_idx d);
lg_status lg_centernorm_backward_f64(double *dx, double *dgain, double *dbias, const double *dy,
                                     const double *x, const double *gain, lg_idx n, lg_idx d);

/* The weighted residual shortcut of LipsFormer, y = x + alpha (*) f(x) with
 * a learnable per-channel alpha (d), initialised at 1/L for a stack of L
 * layers: alpha[c] = 1/layers (layers >= 1, LG_EINVAL otherwise). */
lg_status lg_wresidual_init_f32(float *alpha, lg_idx d, lg_idx layers);
lg_status lg_wresidual_init_f64(double *alpha, lg_idx d, lg_idx layers);

/* y_ic = x_ic + alpha_c f_ic (n x d). y may alias x or f (elementwise).
 * O(n d). */
lg_status lg_wresidual_forward_f32(float *y, const float *x, const float *f, const float *alpha, lg_idx n,
                                   lg_idx d);
lg_status lg_wresidual_forward_f64(double *y, const double *x, const double *f, const double *alpha, lg_idx n,
                                   lg_idx d);

/* Backward: dx += dy; df += alpha (*) dy; dalpha (d) += sum over rows of
 * dy (*) f (row order, column blocks). Any of dx, df, dalpha may be NULL
 * (alpha is needed for df, f for dalpha); dx and df must not alias:
 * LG_EINVAL ("dx and df overlap") if both are given and their bytes
 * overlap. O(n d). */
lg_status lg_wresidual_backward_f32(float *dx, float *df, float *dalpha, const float *dy, const float *f,
                                    const float *alpha, lg_idx n, lg_idx d);
lg_status lg_wresidual_backward_f64(double *dx, double *df, double *dalpha, const double *dy, const double *f,
                                    const double *alpha, lg_idx n, lg_idx d);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_NN_H */
