/*
 * lipgnn/train.h: deep attention models and their training: DeepGAT, DeepGT
 * and the classic 2-layer GAT (attention-spec.md section 6), Adam training
 * (full batch, or mini-batches of whole graphs such as TREES' trees) with
 * per-layer gradient norms, explosion detection and checkpoints.
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 *
 *     lg_set_threads(0);   // OpenMP's count; OpenBLAS on one thread (core.h)
 *     lg_model_config mc;  lg_model_config_default(&mc, LG_MODEL_GAT);
 *     mc.layers = 20;  mc.att_norm = LG_ATT_NORM_LIPSCHITZ;
 *     lg_train_config tc;  lg_train_config_default(&tc);
 *     lg_trainer *t = NULL;
 *     lg_status st = lg_trainer_init(&t, &mc, &tc, ds);     // ds: lg_dataset
 *     lg_epoch_stats es;
 *     for (int e = 0; st == LG_OK && e < tc.epochs && !lg_trainer_done(t); e++)
 *         if ((st = lg_trainer_epoch(t, &es)) == LG_OK && es.exploded_now)
 *             printf("epoch %ld: gradients exploded\n", es.epoch); // es.val_acc ...
 *     if (st != LG_OK) fprintf(stderr, "%s\n", lg_last_error());
 *     lg_train_summary s;  lg_trainer_summary(t, &s);        // best_epoch ...
 *     if (st == LG_OK) st = lg_trainer_save(t, "m.ckpt");     // lg_trainer_load
 *     lg_trainer_free(t);                                    // NULL-safe
 */
#ifndef LIPGNN_TRAIN_H
#define LIPGNN_TRAIN_H

#include "lipgnn/dataset.h"
#include "lipgnn/gat.h"
#include "lipgnn/gt.h"
#include "lipgnn/l2att.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which model. */
typedef enum lg_model_kind {
    LG_MODEL_GAT = 0,     /* DeepGAT: Linear, L GAT layers, Linear               */
    LG_MODEL_GT,          /* DeepGT: the same with graph-transformer layers       */
    LG_MODEL_GAT_CLASSIC, /* Velickovic et al.: 8 heads x 8, ELU, 1 head to classes */
    LG_MODEL_GCN,         /* Kipf & Welling: L GCN layers F -> hidden -> ... -> classes, ReLU */
    LG_MODEL_GIN,         /* Linear, L GIN layers (MLP Linear-ReLU-Linear), ReLU, Linear  */
    LG_MODEL_GGNN,        /* Linear, L GGNN steps (messages + GRU, own weights), Linear    */
    LG_MODEL_GCNII,       /* Linear + ReLU (= H0), L GCNII layers + ReLU, Linear          */
    LG_MODEL_L2,          /* Linear, L L2-attention layers (Kim et al. 2021, lipgnn/l2att.h), Linear */
    LG_MODEL_COSINE,      /* LipsFormer-style: Linear, L blocks h + alpha (*) SCSA(CenterNorm(
                             dropout(h))) (lipgnn/cosatt.h), Linear                  */
    LG_MODEL_COUNT
} lg_model_kind;

/* The normalisation applied to node representations after each layer. */
typedef enum lg_node_norm {
    LG_NODE_NORM_NONE = 0,
    LG_NODE_NORM_PAIRNORM,    /* PairNorm (PN), after the ELU and the residual    */
    LG_NODE_NORM_PAIRNORM_SI, /* PairNorm-SI                                       */
    LG_NODE_NORM_LAYERNORM,   /* LayerNorm right after the layer, before the ELU  */
    LG_NODE_NORM_COUNT
} lg_node_norm;

/* "gat", "gt", "gat-classic", "gcn", "gin", "ggnn", "gcnii", "l2", "cosine"; "?"
 * out of range. */
const char *lg_model_kind_name(lg_model_kind k);
lg_status lg_model_kind_parse(const char *name, lg_model_kind *out);

/* Parses a --norm value: one of none, lipschitz, lipschitz-ref, pairnorm,
 * pairnorm-si, layernorm, or an attention norm and a node norm joined by '+'
 * (e.g. "lipschitz+layernorm"). LG_EINVAL listing the valid names otherwise. */
lg_status lg_norm_parse(const char *s, lg_att_norm *att, lg_node_norm *node);

/* The --norm spelling of a pair ("none", "lipschitz+pairnorm", ...) into buf. */
void lg_norm_format(char *buf, size_t cap, lg_att_norm att, lg_node_norm node);

/* "glorot" / "pytorch" for an lg_init ("?" out of range); the inverse, with
 * LG_EINVAL naming the valid names for another. */
const char *lg_init_name(lg_init s);
lg_status lg_init_parse(const char *name, lg_init *out);

/* A model's hyper-parameters. */
typedef struct lg_model_config {
    lg_model_kind kind;    /* which model                                               */
    int layers;            /* L attention layers (gat-classic: 2)                      */
    int hidden;            /* width of each head (and of the input linear)             */
    int heads;             /* K heads, concatenated                                    */
    lg_att_norm att_norm;  /* score normalisation of every attention layer            */
    lg_node_norm node_norm; /* node normalisation after every layer                   */
    int residual;          /* h' = ELU(layer(dropout(h))) + h where widths match        */
    double lip_scale;      /* s of LipschitzNorm (1)                                    */
    int gate;              /* gt: gated skip connection                                 */
    double dropout;        /* feature dropout before every layer (gat 0.6, gt 0.5)     */
    double att_dropout;    /* attention dropout (gat 0.3, gat-classic 0.6, gt 0.3)     */
    int self_loops;        /* 1: add self-loops; 0: the graph as given                  */
    int feature_norm_row;  /* 1: row-normalise input features (gat-classic's default)  */
    int train_eps;         /* gin: 1 eps learnt per layer, 0 fixed at 0 (GIN-0, default) */
    lg_init init;          /* initialisation (lg_init): LG_INIT_GLOROT (default, the
                              spec's) everywhere, or LG_INIT_PYTORCH (gat, gt): the
                              input and output linears and GT's layers as the
                              authors' PyTorch code; GAT's layers stay Glorot, as
                              its GATConv                                         */
    double alpha;          /* gcnii: initial-residual weight (0.1)                     */
    double lambda;         /* gcnii: beta_l = log(lambda / l + 1), l = 1..L (0.5)     */
} lg_model_config;

/* The defaults of spec section 6 for kind: gat: 10 layers, hidden 64, 1 head,
 * dropout 0.6, attention dropout 0.3, self-loops, raw features; gt: dropout 0.5,
 * no self-loops; gat-classic: 2 layers, 8 heads x 8, dropout 0.6 and 0.6,
 * row-normalised features. No normalisation, no residual, lip_scale 1.
 * The baselines (no attention: att_norm none, heads and att_dropout unused):
 * gcn: 2 layers, hidden 16, dropout 0.5, self-loops, row-normalised features
 * (Kipf & Welling); gin, ggnn: 10 layers, hidden 64, dropout 0.5, no
 * self-loops, raw features, GIN-0 (eps fixed at 0); gcnii: 64 layers, hidden
 * 64, dropout 0.6, self-loops, row-normalised features, alpha 0.1, lambda 0.5
 * (Chen et al.). l2: as gat (10 layers, hidden 64 per head, 1 head, dropout
 * 0.6, self-loops, which it requires), no attention dropout (att_dropout is
 * unused), att_norm none (the only value it accepts: L2 attention is
 * Lipschitz without LipschitzNorm).
 * cosine: as gat (10 layers, hidden 64 = the width of the stream and of each head, 1 head, dropout 0.6, self-loops) without attention
 * dropout, with the weighted residual (residual 1, always on: alpha per
 * channel, learnt, initialised at 1/L), CenterNorm built in (node_norm and
 * att_norm must stay none), tau 10, nu 1, eps 1e-6, spectral initialisation
 * of each layer's W and W_O. */
void lg_model_config_default(lg_model_config *c, lg_model_kind kind);

/* LG_OK if c is usable (and meaningful: layernorm only for gat and gt, the gate only for
 * gt); LG_EINVAL naming the first bad field otherwise. */
lg_status lg_model_config_check(const lg_model_config *c);

/* Training hyper-parameters. */
typedef struct lg_train_config {
    int epochs;            /* epochs (200)                                              */
    double lr;             /* Adam learning rate (0.005)                               */
    double weight_decay;   /* L2 added to the gradient (5e-4)                          */
    double layer_weight_decay; /* L2 on the layers' parameters instead (not the input and
                              output linears); < 0: weight_decay (default -1; the CLI
                              uses 0.01 for gcnii, as Chen et al.)                    */
    int plateau;           /* 1: ReduceLROnPlateau(factor 0.1, patience 10) on val loss */
    int patience;          /* early stopping after this many epochs without a better
                              validation loss (0: off); both watch the training
                              loss where the data set has no validation split     */
    uint64_t seed;         /* everything random derives from it                        */
    double missing;        /* share of non-training nodes whose features are removed   */
    double explode_threshold; /* a layer gradient norm above it is an explosion (1e3) */
    double explode_growth;    /* ... or growth by more than this factor ... (1e3)      */
    int explode_window;       /* ... against the layer's norm this many epochs
                                 earlier (10; 0: no growth rule), to a norm of at
                                 least threshold / growth; from epoch window + 1     */
    int stop_on_explosion; /* 1: lg_trainer_done() becomes true at an explosion         */
    int batch_size;        /* graphs per mini-batch (0: full batch, the default); for a
                              data set of many graphs (TREES): see lg_trainer_epoch  */
} lg_train_config;

void lg_train_config_default(lg_train_config *c);
lg_status lg_train_config_check(const lg_train_config *c);

/* What one epoch measured. The arrays belong to the trainer (valid until the
 * next epoch). Losses and accuracies come from an evaluation pass (no dropout)
 * after the epoch's Adam step; train_loss_step is the training pass's loss. */
typedef struct lg_epoch_stats {
    long epoch;              /* 1-based                                            */
    double train_loss_step;  /* loss of the training (dropout) pass                */
    double train_loss, val_loss, test_loss;
    double train_acc, val_acc, test_acc;
    double lr;               /* learning rate used in this epoch                   */
    double ms;               /* wall time of the epoch (training + evaluation)     */
    int layers;              /* entries of the arrays below                        */
    const double *att_grad_norm; /* per layer: L2 norm of the attention parameters' gradient */
    const double *grad_norm;     /* per layer: L2 norm of all its parameters' gradient */
    int exploded_now;        /* 1 if the detector fired at this epoch              */
    double io_grad_norm[2];      /* the input and the output linear layers': L2 norm of
                                    their weight's and bias's gradient, as grad_norm (NAN
                                    in models without them: gat-classic, gcn); the
                                    explosion detector does not watch them (last: the
                                    fields before keep their places)               */
} lg_epoch_stats;

/* A run's results. */
typedef struct lg_train_summary {
    long epochs_run;
    double train_acc, val_acc, test_acc;  /* at the last epoch                     */
    double train_loss, val_loss, test_loss;
    long best_epoch;                       /* epoch of the best validation accuracy
                                              (training accuracy without a
                                              validation split), from 1; 0 before
                                              any epoch, as lg_trainer_best_epoch */
    double best_val_acc, test_acc_at_best_val, train_acc_at_best_val;
    int exploded;                          /* the detector fired                   */
    long first_explosion_epoch;            /* -1 if none                           */
    int explosion_layer;                   /* -1: the loss, or none                */
    char explosion_reason[160];
    double max_layer_grad_norm;            /* largest per-layer norm seen (these
                                              maxima are NaN once a norm was NaN) */
    double max_att_grad_norm;              /* largest attention-gradient norm seen */
    int layers;
    const double *max_grad_norm_per_layer; /* per layer, largest over the run      */
    const double *max_att_grad_norm_per_layer;
    double epoch_ms_median;
    lg_idx n_params;
    int stopped_early;                     /* early stopping ended the run         */
    int params_finite;                     /* 1: every parameter and Adam moment is a
                                              finite number (0: the run diverged; a
                                              checkpoint of it is refused by
                                              lg_trainer_load)                    */
    double epochs_ms_total;                /* wall time of the epochs this trainer
                                              ran (training + evaluation), ms: not
                                              those before a lg_trainer_load      */
    double max_io_grad_norm[2];            /* the input and output linear layers'
                                              largest norm over the run, as
                                              lg_epoch_stats.io_grad_norm; NAN in
                                              models without them, once one was
                                              NaN, or after a lg_trainer_load of a
                                              checkpoint that predates this record
                                              (last: the fields before keep their
                                              places)                             */
} lg_train_summary;

typedef struct lg_trainer lg_trainer; /* opaque */

/* Builds the model for ds (its features, graph and splits; ds must outlive the
 * trainer, unchanged: its features are read at every epoch, not copied, unless
 * mc->feature_norm_row or tc->missing make the trainer keep its own values),
 * initialises its parameters from tc->seed and Adam's state. Memory:
 * parameters, gradients, two Adam moments, and every activation backward needs
 * are allocated here, once. LG_EINVAL for bad configs or a data set the model
 * cannot use (no training nodes), or one that is not whole: its graph fails
 * lg_graph_check, or its features are not n rows of a known kind with their
 * arrays (sparse: rows and columns in range); checked before anything reads
 * them, as by lg_trainer_estimate. O(n + nnz + feature nnz) for the checks. */
lg_status lg_trainer_init(lg_trainer **out, const lg_model_config *mc, const lg_train_config *tc,
                          const lg_dataset *ds);

/* Frees t; NULL is a no-op. */
void lg_trainer_free(lg_trainer *t);

/* One epoch: training forward, backward, gradient norms, explosion check, Adam
 * step, evaluation, scheduler. Fills *st. Deterministic for a seed and a
 * thread count; after lg_set_threads, the same bits whatever the thread count
 * (it pins OpenBLAS to one thread and lipgnn splits the products itself);
 * without it, OpenBLAS's threaded sgemm may round differently at another
 * count.
 *
 * Mini-batches (tc.batch_size = B > 0; the data set must be a disjoint union
 * of graphs, ds->graph_ptr, as TREES is): the training graphs (those holding
 * training nodes) are visited in an order shuffled from (seed, epoch), B at a
 * time; each batch is the disjoint union of its graphs, its loss the mean NLL
 * over its training nodes (TREES: the roots), followed by one Adam step (step
 * number = batches done so far, dropout masks drawn per batch). Then:
 * train_loss_step = the mean loss over all training nodes of the epoch's
 * batches; att_grad_norm / grad_norm = per layer, the MEAN over the epoch's
 * batches of each batch's gradient norm (a non-finite batch makes it
 * non-finite); the evaluation runs in batches of B graphs too (same results
 * as one pass: graphs do not interact). Buffers are sized once for the
 * largest batch; nothing is allocated in an epoch. */
lg_status lg_trainer_epoch(lg_trainer *t, lg_epoch_stats *st);

/* Called by a mini-batch trainer after each batch of an epoch (training and
 * evaluation batches: done of total), e.g. to show progress within a long
 * epoch. fn NULL: none (the default). */
typedef void (*lg_progress_fn)(void *ctx, long done, long total);
void lg_trainer_set_progress(lg_trainer *t, lg_progress_fn fn, void *ctx);

/* 1 when training should stop: early stopping, or an explosion with
 * stop_on_explosion. */
int lg_trainer_done(const lg_trainer *t);

/* Epochs completed so far (a resumed trainer counts the earlier ones). */
long lg_trainer_epochs_done(const lg_trainer *t);

/* The epoch of the best validation accuracy so far (the best training
 * accuracy without a validation split), as lg_trainer_summary's best_epoch,
 * in O(1): after lg_trainer_epoch, equal to its es.epoch when that epoch is
 * the new best (the moment to save it); epochs count from 1. 0 before any
 * epoch (the summary's best_epoch too); 0 for NULL. */
long lg_trainer_best_epoch(const lg_trainer *t);

/* Fills *s (its arrays belong to the trainer). */
void lg_trainer_summary(const lg_trainer *t, lg_train_summary *s);

/* Saves everything a bit-identical continuation needs (configuration,
 * parameters, Adam moments, scheduler, best-so-far and detector state), and
 * t's note if it has one (lg_trainer_set_note), to path,
 * atomically, in lipgnn's versioned, checksummed format: into a new file
 * beside it, synced and renamed onto it. A symbolic link is followed to its
 * file; LG_EIO, with path left as it is, when path is not a regular file (a
 * directory, pipe or device) or cannot be written (lg_trainer_save_check). */
lg_status lg_trainer_save(const lg_trainer *t, const char *path);

/* The checks lg_trainer_save makes of path before it writes, to be made
 * before a long training: LG_OK, or LG_EIO naming path when what is there is
 * not a regular file or the directory of the file it replaces (a link's
 * target) takes no new file (missing, not a directory, not writable: found
 * by creating and removing an empty probe file there, as access() cannot
 * tell as root in /proc). Leaves path and its directory as they were. */
lg_status lg_trainer_save_check(const char *path);

/* Restores a trainer made with the same configuration and data set from a
 * checkpoint. A truncated, damaged, foreign, wrong-version or mismatched (other
 * model, other data) file is refused with LG_EPARSE / LG_EINVAL and a message
 * naming what differs; t is unchanged then. Of the training configuration, the
 * seed, missing share, batch size and detector window must match; t's others
 * apply from the next epoch: its epochs, weight decay, scheduler, detector
 * threshold and growth, and
 * its learning rate when it differs from the checkpoint run's (the same one
 * keeps the checkpoint's current rate, which a plateau scheduler may have
 * lowered). */
lg_status lg_trainer_load(lg_trainer *t, const char *path);

/* Reads the model and training configurations stored in a checkpoint (to
 * rebuild a trainer for it, e.g. `lipgnn predict`). */
lg_status lg_checkpoint_config(const char *path, lg_model_config *mc, lg_train_config *tc);

/* The longest note lg_trainer_set_note takes, in bytes (without its NUL). */
#define LG_NOTE_MAX 65536

/* A text of the caller's that every later lg_trainer_save of t writes into the
 * checkpoint, for lg_checkpoint_note to read back, e.g. where the data set came
 * from (`lipgnn train` keeps its data options there, which predict and train
 * --resume take when given none). The trainer neither reads nor checks it:
 * it is not part of what lg_trainer_load restores or compares, and
 * lg_trainer_load leaves t's note as it is. note is copied; NULL or "": no
 * note (the checkpoint then has none). LG_EINVAL for a NULL t or a note longer
 * than LG_NOTE_MAX bytes, LG_ENOMEM; t's note is unchanged then. A lipgnn
 * that predates notes reads a checkpoint with one as before (it skips the
 * section it does not know). O(strlen(note)). */
lg_status lg_trainer_set_note(lg_trainer *t, const char *note);

/* The note of the checkpoint at path (lg_trainer_set_note) into buf, with its
 * NUL; *len (when len is not NULL) its length without the NUL, also when buf
 * is too small, so that a caller can pass cap 0 (buf may then be NULL) to
 * learn it. The file is read and verified as by lg_checkpoint_config: LG_EIO,
 * LG_EPARSE for one missing, damaged or not a checkpoint. LG_ENOTFOUND when
 * the checkpoint has no note (none was set, or it was written before
 * checkpoints held notes); LG_ERANGE when the note and its NUL do not fit in
 * cap bytes; LG_EPARSE for a note holding a NUL byte or longer than
 * LG_NOTE_MAX (a crafted file); LG_EINVAL for a NULL path, or a NULL buf with
 * cap > 0. Whenever it is not LG_OK, buf (when cap > 0) holds "". */
lg_status lg_checkpoint_note(const char *path, char *buf, size_t cap, size_t *len);

/* Evaluation pass (no dropout): writes the log-probabilities (n x classes) and
 * the last hidden representation (n x lg_trainer_hidden_width) when not NULL
 * (in batches of graphs for a mini-batch trainer). LG_ENUMERIC, naming the
 * first layer whose output is not finite, when the pass overflows (NaN or
 * +infinity among the log-probabilities). */
lg_status lg_trainer_predict(lg_trainer *t, float *logp, float *hidden);

/* Number of classes and width of the last hidden representation; 0 for a
 * NULL t (these value getters leave no message: test for 0). */
lg_idx lg_trainer_classes(const lg_trainer *t);
lg_idx lg_trainer_hidden_width(const lg_trainer *t);

/* The model's parameters: one block of *n floats, and *grads (if grads is not
 * NULL) the gradients of the last training step in the same layout (those of
 * its last mini-batch with --batch-size; the loss's, plus with a layer weight
 * decay its difference to the weight decay: what Adam took, without the
 * weight decay Adam adds itself): read-only views of the trainer's own
 * buffers, valid until lg_trainer_free, whose values change as it trains, loads
 * a checkpoint or is given parameters. The block,
 * in order: the input linear layer's weight (features x hidden, row-major:
 * X W) and bias (hidden), in the models that have one (all but gat-classic
 * and gcn); each attention layer's block (lg_trainer_layer_params: the
 * layout of its kind, lg_gat_layout_get, lg_gt_layout_get, ...; a cosine
 * layer's then its norm's gain, bias and alpha, width each; then with
 * --norm layernorm the LayerNorm's gain and bias, width each); the output
 * layer's weight (width x classes) and bias (classes), in the same models as
 * the input one. This is the layout of checkpoints and of the PyTorch peer.
 * LG_EINVAL for NULL t, params or n. O(1). */
lg_status lg_trainer_params(const lg_trainer *t, const float **params, const float **grads, lg_idx *n);

/* The range [*off, *off + *len) of attention layer l's block in
 * lg_trainer_params' (the layer's parameters and its LayerNorm's); the
 * gradient norm of the --grad-log 'all' group (lg_epoch_stats.grad_norm) is
 * the norm of this range of the loss's gradient: of lg_trainer_params' grads
 * in full batch without a layer weight decay (with one, grads hold its term
 * too; with mini-batches the norm is the mean over the epoch's batches, grads
 * the last batch's).
 * LG_EINVAL for NULL or l outside [0, lg_trainer_layers). O(1). */
lg_status lg_trainer_layer_params(const lg_trainer *t, int l, lg_idx *off, lg_idx *len);

/* Replaces the model's parameters by the n values of params (lg_trainer_params'
 * layout; copied), e.g. weights made elsewhere. Adam's moments and step count
 * are kept. LG_EINVAL for NULL, n other than the model's, or a value that is
 * not finite (the model is then unchanged). O(n). */
lg_status lg_trainer_set_params(lg_trainer *t, const float *params, lg_idx n);

/* Number of attention layers and heads of layer l, and the attention weights
 * (nnz x heads, edge-major over the model's graph) of layer l after the last
 * forward pass. The model's graph (with the self-loops it added) is returned by
 * lg_trainer_graph. A mini-batch trainer has no graph of the whole data set:
 * lg_trainer_graph returns NULL and lg_trainer_attention LG_EUNSUPPORTED.
 * lg_trainer_layers and lg_trainer_layer_heads return 0 for a NULL t or an l
 * outside [0, lg_trainer_layers), lg_trainer_graph NULL for a NULL t, and
 * leave no message (a value, not a status, is returned). */
int lg_trainer_layers(const lg_trainer *t);
lg_idx lg_trainer_layer_heads(const lg_trainer *t, int l);
lg_status lg_trainer_attention(const lg_trainer *t, int l, float *att);
const lg_graph *lg_trainer_graph(const lg_trainer *t);

/* The scale of the forward pass through the layers: rms[l] = ||H_l||_F /
 * sqrt(n) for l = 0..L (L = lg_trainer_layers; cap >= L + 1), H_l the input of
 * layer l over all n nodes (H_0: the features, or the input linear's output
 * where the model has one) and H_L the last layer's output, from the last
 * forward pass (lg_trainer_predict runs one in evaluation mode). A scale
 * that grows with l makes a deep model's first gradients large even where
 * each layer's attention is normalised. O(n * widths).
 * LG_EINVAL (NULL, cap too small); LG_EUNSUPPORTED for a mini-batch trainer. */
lg_status lg_trainer_act_rms(const lg_trainer *t, double *rms, int cap);

/* Bytes the trainer allocated: parameters + gradients + Adam state, and the
 * activations (and workspace) of the forward and backward passes. */
typedef struct lg_trainer_mem {
    size_t params;      /* parameters, gradients, 2 Adam moments               */
    size_t activations; /* forward activations kept for backward               */
    size_t workspace;   /* backward scratch                                    */
    size_t other;       /* the model's graphs, the features' copy and transpose */
    size_t total;       /* the sum                                             */
} lg_trainer_mem;
void lg_trainer_memory(const lg_trainer *t, lg_trainer_mem *m);

/* What lg_trainer_init would allocate for (mc, tc, ds), computed by the same
 * code without allocating it (O(L) small allocations; O(nnz) time), so that a
 * caller can refuse a model that does not fit before building it. Equal to
 * lg_trainer_memory of the trainer it would build (tested). */
lg_status lg_trainer_estimate(const lg_model_config *mc, const lg_train_config *tc, const lg_dataset *ds,
                              lg_trainer_mem *m);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_TRAIN_H */
