/*
 * The deep models of attention-spec.md section 6 as one stack over one
 * parameter block: written once in model_impl.h, compiled for float (training)
 * and double (the whole-model finite-difference test).
 *
 * Forward, per layer l (0-based, L layers), cur = h0 first:
 *     drop_l = dropout(cur)                        feature dropout
 *     act_l  = layer_l(drop_l)                     GAT, GT, or a baseline (src/conv:
 *                                                  GCN, GIN, GGNN, GCNII(drop_l, h0))
 *     z_l    = LayerNorm(act_l) if chosen, else act_l
 *     z_l    = ELU(z_l)            except after the last layer (ReLU for gcn and gin,
 *                                  after every layer for gcnii, none for ggnn)
 *     out_l  = z_l + cur           if residual and widths match
 *     out_l  = PairNorm(out_l)     if chosen (not on gcn's last layer: the logits)
 *     cur    = out_l
 * cosine (LipsFormer-style) replaces the per-layer steps by
 *     out_l  = cur + alpha_l (*) SCSA_l(CenterNorm_l(dropout(cur)))
 * (lipgnn/cosatt.h; alpha_l per channel, learnt, initialised at 1/L; no
 * activation, LayerNorm or PairNorm), all widths = hidden.
 * h0 = X W_in + b_in (sparse or dense X; ReLU'd for gcnii); gat-classic and gcn
 * have no input linear (h0 = X, dense) and no output linear (their last layer
 * maps to the classes); otherwise logits = cur W_out + b_out. logp = log_softmax.
 * gcnii's layers all read h0 (the initial residual); backward sums their
 * gradients of h0 (dh0) into the input linear's. gcnii also drops out X (made
 * dense) before the input linear and cur before the output linear, as Chen
 * et al.'s model.
 *
 * Parameter block: [W_in F x H | b_in H] then per layer [layer block | LN gain
 * | LN bias] (cosine: [SCSA block | CenterNorm gain | CenterNorm bias | alpha])
 * then [W_out D x classes | b_out classes]. Gradients use the same
 * layout (and Adam's moments, in the trainer).
 */
#ifndef LG_TRAIN_MODEL_H
#define LG_TRAIN_MODEL_H

#include "lipgnn.h"

typedef struct lg__model_f32 lg__model_f32;
typedef struct lg__model_f64 lg__model_f64;

/* Parameter ranges of one attention layer (offsets in values). */
typedef struct lg__layer_range {
    lg_idx off, len;         /* the whole layer (incl. its LayerNorm)              */
    lg_idx att_off, att_len; /* its attention parameters: a contiguous run ...     */
    lg_idx str_off, str_rows, str_cols, str_stride; /* ... and a strided block
                                (str_rows rows of str_cols values, stride apart;
                                0 rows if none): GT's Wq and Wk columns of W      */
} lg__layer_range;

/* 1 if the model's input linear takes x sparse (its backward then needs x's
 * transpose); otherwise x is converted to a dense copy: gat-classic and gcn
 * have no input linear, gcnii drops out its input features. */
static inline int lg__model_takes_sparse(const lg_model_config *c, const lg_features *x) {
    return c->kind != LG_MODEL_GAT_CLASSIC && c->kind != LG_MODEL_GCN && c->kind != LG_MODEL_GCNII &&
           x->kind == LG_FEAT_SPARSE;
}

/* A mini-batch that a batch model (lg__model_init_batch) runs on, borrowed
 * until the next bind: the batch's graph with the self-loops the model wants
 * (c->self_loops) and its transpose, its features (same width and kind as the
 * model's x), its labels and its graph segments (PairNorm works per graph). */
typedef struct lg__batch {
    const lg_graph *g, *gT;    /* n nodes, at most the model's capacities     */
    const lg_features *x;      /* n x F                                       */
    const int32_t *labels;     /* n                                           */
    const lg_idx *graph_ptr;   /* n_graphs + 1 offsets                        */
    lg_idx n_graphs;
    const lg_idx *read;        /* the nodes whose outputs are computed: logp
                                  row k is node read[k] (at most the model's
                                  readout capacity)                          */
    lg_idx n_read;
} lg__batch;

/* Builds the model for features x (n x F; the data set's or a modified copy),
 * the data set's graph, labels and segments. Initialises the parameters from
 * rng (Glorot-uniform weights, zero biases, LayerNorm gain 1). */
lg_status lg__model_init_f32(lg__model_f32 **out, const lg_model_config *c, const lg_dataset *ds,
                             const lg_features *x, lg_rng *rng);
lg_status lg__model_init_f64(lg__model_f64 **out, const lg_model_config *c, const lg_dataset *ds,
                             const lg_features *x, lg_rng *rng);
/* A batch model: parameters as lg__model_init (same rng draws), every buffer
 * sized for batches of up to cap[0] nodes and cap[1] edges (self-loops
 * included) of which up to cap[2] are read out; it owns no graph:
 * lg__model_bind gives it each batch. Only the read-out nodes get logits and
 * log-probabilities (TREES: the roots; the output layer, classes wide, is
 * the model's largest), so lg__model_logp has n_read rows, and
 * lg__model_eval / lg__model_backward take row numbers in it (0..n_read-1).
 * ds and x give only the classes and the features' width and kind. */
lg_status lg__model_init_batch_f32(lg__model_f32 **out, const lg_model_config *c, const lg_dataset *ds,
                                   const lg_features *x, const lg_idx cap[3], lg_rng *rng);
lg_status lg__model_init_batch_f64(lg__model_f64 **out, const lg_model_config *c, const lg_dataset *ds,
                                   const lg_features *x, const lg_idx cap[3], lg_rng *rng);
/* Makes the batch model run on b (no allocation; dense input copied into the
 * model's buffer). LG_EINVAL if b exceeds the capacities or does not match. */
lg_status lg__model_bind_f32(lg__model_f32 *m, const lg__batch *b);
lg_status lg__model_bind_f64(lg__model_f64 *m, const lg__batch *b);
void lg__model_free_f32(lg__model_f32 *m);
void lg__model_free_f64(lg__model_f64 *m);

/* The parameter and gradient blocks and their length. */
float *lg__model_params_f32(lg__model_f32 *m);
double *lg__model_params_f64(lg__model_f64 *m);
float *lg__model_grads_f32(lg__model_f32 *m);
double *lg__model_grads_f64(lg__model_f64 *m);
lg_idx lg__model_nparams_f32(const lg__model_f32 *m);
lg_idx lg__model_nparams_f64(const lg__model_f64 *m);

/* Forward pass: computes logp (n x classes). training: dropout on, with masks
 * from (seed, epoch). */
lg_status lg__model_forward_f32(lg__model_f32 *m, int training, uint64_t seed, uint64_t epoch);
lg_status lg__model_forward_f64(lg__model_f64 *m, int training, uint64_t seed, uint64_t epoch);
/* The same, with the log-softmax only for rows[0..count) of logp (row numbers
 * as lg__model_eval takes them) when they are fewer than a quarter of its rows
 * (the full-graph trainer: its training nodes; TREES: 800 roots of 511 000
 * nodes, 256 classes). When they are also listed in increasing order, a
 * whole-graph model's output layer computes their logits only, LG__OUT_BLOCK
 * rows at a time, and the backward makes the output layer's gradients from
 * those rows alone (dW_out summed over them: other bits than a full
 * backward's). The computed rows of logp then equal lg__model_forward's within
 * float rounding, not always bit for bit: OpenBLAS may round a product of 256
 * rows differently from one of n rows (its kernels for small products; with
 * Debian's 0.3.21, Haswell or Zen kernels, 16 classes over a width of 32: a
 * third of the logits differ in the last bit; test_train's shapes agree bit
 * for bit). Without that output-layer path each computed row has the bits
 * lg__model_forward gives it (the same row function). Until the next
 * forward, lg__model_backward then takes that list only (the same pointer and
 * count; LG_EINVAL otherwise), lg__model_eval that list or, when it is
 * increasing, any list of rows in it (LG_EINVAL for a row not computed), and
 * the list must stay valid (lg__model_first_nonfinite reads it). */
#define LG__OUT_BLOCK 256
lg_status lg__model_forward_rows_f32(lg__model_f32 *m, int training, uint64_t seed, uint64_t epoch,
                                     const lg_idx *rows, lg_idx count);
lg_status lg__model_forward_rows_f64(lg__model_f64 *m, int training, uint64_t seed, uint64_t epoch,
                                     const lg_idx *rows, lg_idx count);

/* Loss (mean NLL) and accuracy over a node list, from the last forward. */
lg_status lg__model_eval_f32(const lg__model_f32 *m, const lg_idx *nodes, lg_idx count, double *loss,
                             double *acc);
lg_status lg__model_eval_f64(const lg__model_f64 *m, const lg_idx *nodes, lg_idx count, double *loss,
                             double *acc);

/* Backward of the mean NLL over nodes, after a forward with the same
 * (training, seed, epoch): grads = dLoss/dparams (overwritten, not added). */
lg_status lg__model_backward_f32(lg__model_f32 *m, const lg_idx *nodes, lg_idx count, int training,
                                 uint64_t seed, uint64_t epoch);
lg_status lg__model_backward_f64(lg__model_f64 *m, const lg_idx *nodes, lg_idx count, int training,
                                 uint64_t seed, uint64_t epoch);

/* Read-outs of the float model. */
const float *lg__model_logp_f32(const lg__model_f32 *m);     /* n (or n_read) x classes */
const float *lg__model_hidden_f32(const lg__model_f32 *m);   /* n x hidden width */
lg_idx lg__model_hidden_width_f32(const lg__model_f32 *m);
int lg__model_layers_f32(const lg__model_f32 *m);
lg__layer_range lg__model_layer_range_f32(const lg__model_f32 *m, int l);
lg_idx lg__model_layer_heads_f32(const lg__model_f32 *m, int l);
lg_status lg__model_attention_f32(const lg__model_f32 *m, int l, float *att);
const lg_graph *lg__model_graph_f32(const lg__model_f32 *m);
const lg_graph *lg__model_transpose_f32(const lg__model_f32 *m); /* the graph itself when symmetric */
void lg__model_memory_f32(const lg__model_f32 *m, size_t *activations, size_t *workspace, size_t *other);

/* After a forward pass, where values first stopped being finite, in the order
 * of the pass: -2 the input linear layer's output, l in [0, L) the output of
 * attention layer l, L the logits (output linear layer, log-softmax), -1 if
 * every value is finite. O(n x the widths): for reports, when the loss is not
 * finite. */
int lg__model_first_nonfinite_f32(const lg__model_f32 *m);
int lg__model_first_nonfinite_f64(const lg__model_f64 *m);

/* The sizes lg__model_init would allocate for (c, ds, x) (cap NULL), or
 * lg__model_init_batch with these capacities, computed by the
 * same code without allocating the buffers: parameters, activations kept for
 * backward, backward workspace, and the model's graphs and feature transpose. */
lg_status lg__model_plan_f32(const lg_model_config *c, const lg_dataset *ds, const lg_features *x, const lg_idx *cap,
                             lg_idx *n_params, size_t *activations, size_t *workspace, size_t *other);

/* One block of the stack (the header's per-layer steps, dropout to PairNorm)
 * as a function of its input, in evaluation mode (no dropout), for the
 * Lipschitz estimator (src/train/lipschitz.c). Kinds of layer: */
typedef enum { LG__BLOCK_GAT = 0, LG__BLOCK_GT, LG__BLOCK_CONV, LG__BLOCK_L2, LG__BLOCK_COS } lg__block_kind;
typedef struct lg__block_info {
    lg__block_kind kind;
    const lg_gat_config *gc;  /* GAT: its configuration (else NULL)             */
    const lg_gt_config *tc;   /* GT: its configuration (else NULL)              */
    const lg_l2att_config *lc; /* L2 attention: its configuration (else NULL)   */
    const lg_cosatt_config *sc; /* cosine block: its SCSA configuration (else NULL) */
    const void *cn_gain, *alpha; /* cosine block: CenterNorm gain, residual alpha */
    const void *params;       /* its parameter block (the model's scalar type)  */
    lg_idx n, w_in, w_out;    /* nodes, input and output widths                 */
    const char *act;          /* activation after it: "elu", "relu", "none"     */
    int residual;             /* out = z + input                                */
    int layernorm, pairnorm;  /* LayerNorm before the activation, PairNorm after */
    const lg_graph *g, *gT;   /* the model's graph (with its self-loops), transpose */
} lg__block_info;

/* out (n x w_out) = block l of input in (n x w_in; not a buffer of the
 * model), evaluation mode. Keeps the block's activations for
 * lg__model_block_backward (a copy of in among them: in need not outlive the
 * call; in a model without dropout, the first call for a block allocates that
 * copy's buffer, which may fail with LG_ENOMEM); overwrites what the full
 * forward left in block l (lg__model_block_input(m, l + 1) then holds this
 * output). */
lg_status lg__model_block_forward_f32(lg__model_f32 *m, int l, const float *in, float *out);
lg_status lg__model_block_forward_f64(lg__model_f64 *m, int l, const double *in, double *out);
/* d_in (n x w_in, overwritten) = J^T d_out, J the Jacobian of block l at the
 * input of its last lg__model_block_forward. Parameter gradients are added to
 * the model's (garbage for training: callers that train zero them). The
 * first call for the first block of gat-classic or gcn (whose input gradient
 * training never computes) widens the model's backward buffers to its input
 * width: an allocation, which may fail with LG_ENOMEM. */
lg_status lg__model_block_backward_f32(lg__model_f32 *m, int l, const float *d_out, float *d_in);
lg_status lg__model_block_backward_f64(lg__model_f64 *m, int l, const double *d_out, double *d_in);
/* After lg__model_forward: rms[l] (l = 0..L) = ||H_l||_F / sqrt(n), H_l the
 * input of block l (H_L: the last block's output). O(n * widths). */
void lg__model_act_rms_f32(const lg__model_f32 *m, double *rms);
void lg__model_act_rms_f64(const lg__model_f64 *m, double *rms);
/* After lg__model_forward: the input of block l (h0 for l = 0). */
const float *lg__model_block_input_f32(const lg__model_f32 *m, int l);
const double *lg__model_block_input_f64(const lg__model_f64 *m, int l);
/* What block l is (pointers into the model, valid while it lives). */
lg_status lg__model_block_info_f32(const lg__model_f32 *m, int l, lg__block_info *b);
lg_status lg__model_block_info_f64(const lg__model_f64 *m, int l, lg__block_info *b);

#endif
