/*
 * The trainer (lipgnn/train.h): configurations, full-batch Adam training with
 * per-layer gradient norms and the explosion detector, ReduceLROnPlateau and
 * early stopping, checkpoints.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attention/att_cache.h"
#include "core/internal.h"
#include "graph/graph_internal.h"
#include "nn/nn_common.h"
#include "train/batch.h"
#include "train/checkpoint.h"
#include "train/model.h"
#include "train/optim.h"
#include "train/trainer_internal.h"

/* ------------------------------------------------------------------------- */
/* Names and configurations                                                   */
/* ------------------------------------------------------------------------- */

static const char *const lg__kind_names[LG_MODEL_COUNT] = {"gat", "gt", "gat-classic", "gcn", "gin", "ggnn", "gcnii", "l2", "cosine"};
static const char *const lg__node_names[LG_NODE_NORM_COUNT] = {"none", "pairnorm", "pairnorm-si", "layernorm"};

const char *lg_model_kind_name(lg_model_kind k) {
    return (unsigned)k < LG_MODEL_COUNT ? lg__kind_names[k] : "?";
}

lg_status lg_model_kind_parse(const char *name, lg_model_kind *out) {
    if (!out) return lg__error(LG_EINVAL, "lg_model_kind_parse: out is NULL");
    for (int k = 0; name && k < LG_MODEL_COUNT; k++)
        if (strcmp(name, lg__kind_names[k]) == 0) { *out = (lg_model_kind)k; return LG_OK; }
    return lg__error(LG_EINVAL, "unknown model '%s' (valid: gat, gt, gat-classic, gcn, gin, ggnn, gcnii, l2, cosine)", name ? name : "");
}

lg_status lg_norm_parse(const char *s, lg_att_norm *att, lg_node_norm *node) {
    char a[64] = "", b[64] = "";
    if (!att || !node) return lg__error(LG_EINVAL, "lg_norm_parse: att or node is NULL");
    if (!s || strlen(s) >= sizeof a) goto bad;
    const char *plus = strchr(s, '+');
    if (plus) {
        memcpy(a, s, (size_t)(plus - s));
        snprintf(b, sizeof b, "%s", plus + 1);
    } else {
        snprintf(a, sizeof a, "%s", s);
    }
    *att = LG_ATT_NORM_NONE;
    *node = LG_NODE_NORM_NONE;
    int got_att = 0, got_node = 0;
    const char *parts[2] = {a, b};
    for (int p = 0; p < (plus ? 2 : 1); p++) {
        int found = 0;
        for (int k = 0; k < LG_ATT_NORM_COUNT && !found; k++)
            if (k != LG_ATT_NORM_NONE && strcmp(parts[p], lg_att_norm_name((lg_att_norm)k)) == 0) {
                if (got_att) goto bad;
                *att = (lg_att_norm)k;
                got_att = found = 1;
            }
        for (int k = 1; k < LG_NODE_NORM_COUNT && !found; k++)
            if (strcmp(parts[p], lg__node_names[k]) == 0) {
                if (got_node) goto bad;
                *node = (lg_node_norm)k;
                got_node = found = 1;
            }
        if (!found && !plus && strcmp(parts[p], "none") == 0) found = 1;
        if (!found) goto bad;
    }
    return LG_OK;
bad:
    return lg__error(LG_EINVAL,
                     "unknown --norm '%s' (valid: none, lipschitz, lipschitz-ref, pairnorm, pairnorm-si, layernorm, "
                     "or an attention norm and a node norm joined by '+', e.g. lipschitz+layernorm)",
                     s ? s : "");
}

void lg_norm_format(char *buf, size_t cap, lg_att_norm att, lg_node_norm node) {
    if (!buf || !cap) return;
    if ((unsigned)node >= LG_NODE_NORM_COUNT || (unsigned)att >= LG_ATT_NORM_COUNT) {
        snprintf(buf, cap, "?");
        return;
    }
    if (att == LG_ATT_NORM_NONE) snprintf(buf, cap, "%s", lg__node_names[node]);
    else if (node == LG_NODE_NORM_NONE) snprintf(buf, cap, "%s", lg_att_norm_name(att));
    else snprintf(buf, cap, "%s+%s", lg_att_norm_name(att), lg__node_names[node]);
}

static const char *const lg__init_names[LG_INIT_COUNT] = {"glorot", "pytorch"};

const char *lg_init_name(lg_init s) { return (unsigned)s < LG_INIT_COUNT ? lg__init_names[s] : "?"; }

lg_status lg_init_parse(const char *name, lg_init *out) {
    if (!out) return lg__error(LG_EINVAL, "lg_init_parse: out is NULL");
    for (int k = 0; name && k < LG_INIT_COUNT; k++)
        if (strcmp(name, lg__init_names[k]) == 0) {
            *out = (lg_init)k;
            return LG_OK;
        }
    return lg__error(LG_EINVAL, "unknown --init '%s' (valid: glorot, pytorch)", name ? name : "");
}

void lg_model_config_default(lg_model_config *c, lg_model_kind kind) {
    if (!c) return;
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->layers = 10;
    c->hidden = 64;
    c->heads = 1;
    c->att_norm = LG_ATT_NORM_NONE;
    c->node_norm = LG_NODE_NORM_NONE;
    c->lip_scale = 1.0;
    c->dropout = 0.6;
    c->att_dropout = 0.3;
    c->self_loops = 1;
    if (kind == LG_MODEL_GT) {
        c->dropout = 0.5;
        c->self_loops = 0;
    } else if (kind == LG_MODEL_GAT_CLASSIC) {
        c->layers = 2;
        c->hidden = 8;
        c->heads = 8;
        c->att_dropout = 0.6;
        c->feature_norm_row = 1;
    } else if (kind == LG_MODEL_L2) { /* L2 attention: no attention dropout */
        c->att_dropout = 0;
    } else if (kind == LG_MODEL_COSINE) { /* LipsFormer-style blocks */
        c->att_dropout = 0;
        c->residual = 1;
    } else if (kind >= LG_MODEL_GCN && kind <= LG_MODEL_GCNII) { /* the baselines: no attention */
        c->att_dropout = 0;
        c->dropout = 0.5;
        c->self_loops = kind == LG_MODEL_GCN || kind == LG_MODEL_GCNII;
        if (kind == LG_MODEL_GCN) {
            c->layers = 2;
            c->hidden = 16;
            c->feature_norm_row = 1;
        } else if (kind == LG_MODEL_GCNII) {
            c->layers = 64;
            c->dropout = 0.6;
            c->feature_norm_row = 1;
        }
    }
    c->alpha = 0.1;
    c->lambda = 0.5;
}

lg_status lg_model_config_check(const lg_model_config *c) {
    if (!c) return lg__error(LG_EINVAL, "model config is NULL");
    if ((unsigned)c->kind >= LG_MODEL_COUNT) return lg__error(LG_EINVAL, "unknown model kind %d", (int)c->kind);
    if (c->layers < 1 || c->layers > 1000) return lg__error(LG_EINVAL, "--layers %d: must be in 1..1000", c->layers);
    if (c->kind == LG_MODEL_GAT_CLASSIC && c->layers != 2)
        return lg__error(LG_EINVAL, "--layers %d: gat-classic has exactly 2 layers", c->layers);
    if (c->hidden < 1 || c->hidden > 65536) return lg__error(LG_EINVAL, "--hidden %d: must be in 1..65536", c->hidden);
    if (c->heads < 1 || c->heads > 1024) return lg__error(LG_EINVAL, "--heads %d: must be in 1..1024", c->heads);
    /* the attention layers' width, heads x hidden, within the layers' own
     * dimension limit, said in the options' terms; the baselines ignore heads */
    if ((c->kind < LG_MODEL_GCN || c->kind > LG_MODEL_GCNII) && (long long)c->hidden * c->heads > LG__ATT_DIM_MAX)
        return lg__error(LG_EINVAL, "--hidden %d x --heads %d = %lld features per node: at most %lld", c->hidden,
                         c->heads, (long long)c->hidden * c->heads, (long long)LG__ATT_DIM_MAX);
    if ((unsigned)c->att_norm >= LG_ATT_NORM_COUNT || (unsigned)c->node_norm >= LG_NODE_NORM_COUNT)
        return lg__error(LG_EINVAL, "unknown normalisation");
    if (c->node_norm == LG_NODE_NORM_LAYERNORM && c->kind != LG_MODEL_GT && c->kind != LG_MODEL_GAT)
        return lg__error(LG_EINVAL, "--norm layernorm is for the deep attention stacks (--model gat, gt)");
    if (c->gate && c->kind != LG_MODEL_GT) return lg__error(LG_EINVAL, "--gate is for the graph transformer (--model gt)");
    if (c->kind == LG_MODEL_COSINE) {
        if (c->att_norm != LG_ATT_NORM_NONE || c->node_norm != LG_NODE_NORM_NONE)
            return lg__error(LG_EINVAL, "--norm: --model cosine normalises itself (cosine scores, CenterNorm): use none");
        if (c->att_dropout != 0) return lg__error(LG_EINVAL, "--att-dropout: --model cosine has no attention dropout");
        if (c->residual != 1) return lg__error(LG_EINVAL, "--model cosine always has its weighted residual");
    }
    if (c->kind >= LG_MODEL_GCN && c->kind <= LG_MODEL_GCNII && c->att_norm != LG_ATT_NORM_NONE)
        return lg__error(LG_EINVAL, "--norm %s: --model %s has no attention to normalise (use none, pairnorm or pairnorm-si)",
                         lg_att_norm_name(c->att_norm), lg_model_kind_name(c->kind));
    if (c->kind == LG_MODEL_L2 && c->att_norm != LG_ATT_NORM_NONE)
        return lg__error(LG_EINVAL, "--norm %s: --model l2's attention is Lipschitz without LipschitzNorm (use none, pairnorm or pairnorm-si)",
                         lg_att_norm_name(c->att_norm));
    if (c->kind == LG_MODEL_L2 && !c->self_loops)
        return lg__error(LG_EINVAL, "--model l2 needs the self-loops (every node attends to itself)");
    if (c->train_eps != 0 && c->train_eps != 1) return lg__error(LG_EINVAL, "train_eps must be 0 or 1");
    const int flags[4] = {c->residual, c->gate, c->self_loops, c->feature_norm_row};
    static const char *const flag_names[4] = {"residual", "gate", "self_loops", "feature_norm_row"};
    for (int k = 0; k < 4; k++)
        if (flags[k] != 0 && flags[k] != 1)
            return lg__error(LG_EINVAL, "%s must be 0 or 1, not %d", flag_names[k], flags[k]);
    if ((unsigned)c->init >= LG_INIT_COUNT)
        return lg__error(LG_EINVAL, "init %d is not LG_INIT_GLOROT or LG_INIT_PYTORCH", (int)c->init);
    if (c->init == LG_INIT_PYTORCH && c->kind != LG_MODEL_GAT && c->kind != LG_MODEL_GT)
        return lg__error(LG_EINVAL, "--init pytorch is for the LipschitzNorm authors' deep models (--model gat, gt)");
    if (!(c->alpha >= 0 && c->alpha <= 1)) return lg__error(LG_EINVAL, "--alpha must be in [0, 1]");
    if (!(c->lambda > 0 && c->lambda <= 1.7)) return lg__error(LG_EINVAL, "--lambda must be in (0, 1.7] (beta_1 = log(lambda + 1) <= 1)");
    if (c->residual && c->kind == LG_MODEL_GAT_CLASSIC)
        return lg__error(LG_EINVAL, "--residual: gat-classic has no layer whose widths match");
    if (c->residual && c->kind == LG_MODEL_GCN && c->layers < 3) /* features -> hidden -> classes */
        return lg__error(LG_EINVAL, "--residual: a gcn of %d layer%s has no hidden-to-hidden layer to add its input to "
                                    "(use --layers 3 or more)", c->layers, c->layers == 1 ? "" : "s");
    if (!(c->lip_scale > 0) || !isfinite(c->lip_scale)) return lg__error(LG_EINVAL, "--lip-scale must be a finite number > 0");
    if (!(c->dropout >= 0 && c->dropout < 1)) return lg__error(LG_EINVAL, "--dropout must be in [0, 1)");
    if (!(c->att_dropout >= 0 && c->att_dropout < 1)) return lg__error(LG_EINVAL, "--att-dropout must be in [0, 1)");
    return LG_OK;
}

void lg_train_config_default(lg_train_config *c) {
    if (!c) return;
    memset(c, 0, sizeof *c);
    c->epochs = 200;
    c->lr = 0.005;
    c->weight_decay = 5e-4;
    c->layer_weight_decay = -1;
    c->explode_threshold = 1e3;
    c->explode_growth = 1e3;
    c->explode_window = 10;
}

lg_status lg_train_config_check(const lg_train_config *c) {
    if (!c) return lg__error(LG_EINVAL, "train config is NULL");
    if (c->epochs < 0) return lg__error(LG_EINVAL, "--epochs must be >= 0");
    if (!(c->lr > 0) || !isfinite(c->lr)) return lg__error(LG_EINVAL, "--lr must be a finite number > 0");
    if (!(c->weight_decay >= 0) || !isfinite(c->weight_decay)) return lg__error(LG_EINVAL, "--weight-decay must be >= 0");
    if (!isfinite(c->layer_weight_decay)) return lg__error(LG_EINVAL, "--layer-weight-decay must be finite");
    if (c->patience < 0) return lg__error(LG_EINVAL, "--patience must be >= 0");
    if (!(c->missing >= 0 && c->missing <= 1)) return lg__error(LG_EINVAL, "--missing must be in [0, 1]");
    if (!(c->explode_threshold > 0)) return lg__error(LG_EINVAL, "--explode-threshold must be > 0");
    if (!(c->explode_growth > 1)) return lg__error(LG_EINVAL, "--explode-growth must be > 1");
    if (c->explode_window < 0 || c->explode_window > 100000)
        return lg__error(LG_EINVAL, "--explode-window must be in 0..100000");
    if (c->batch_size < 0) return lg__error(LG_EINVAL, "--batch-size must be >= 0 (0: full batch)");
    if (c->plateau != 0 && c->plateau != 1) return lg__error(LG_EINVAL, "plateau must be 0 or 1, not %d", c->plateau);
    if (c->stop_on_explosion != 0 && c->stop_on_explosion != 1)
        return lg__error(LG_EINVAL, "stop_on_explosion must be 0 or 1, not %d", c->stop_on_explosion);
    return LG_OK;
}

/* ------------------------------------------------------------------------- */
/* The trainer                                                                */
/* ------------------------------------------------------------------------- */

/* Epoch times kept for the median: the first this many epochs. */
#define LG__MS_CAP 65536

/* Everything that evolves during training and that a checkpoint must restore
 * for a bit-identical continuation (plain data: saved as bytes). */
typedef struct lg__train_state {
    long epoch;              /* epochs completed                               */
    double lr;               /* current learning rate                          */
    double plateau_best;     /* best validation loss (scheduler)               */
    long plateau_bad;        /* epochs since it improved                       */
    double stop_best;        /* best validation loss (early stopping)          */
    long stop_bad;           /* epochs since it improved                       */
    int stopped_early;
    long best_epoch;         /* epoch of the best validation accuracy          */
    double best_val_acc, test_at_best, train_at_best;
    double last[6];          /* train/val/test loss, train/val/test accuracy   */
    double max_norm, max_att;
    int exploded;
    long explode_epoch;
    int explode_layer;
    char explode_reason[160];
} lg__train_state;

struct lg_trainer {
    lg_model_config mc;      /* model configuration                            */
    lg_train_config tc;      /* training configuration                         */
    const lg_dataset *ds;    /* the data (borrowed)                            */
    lg_features xv;          /* the features the model sees: ds's arrays, with
                                xval for the values if set                    */
    float *xval;             /* owned values (row-normalised, missing rows
                                zeroed), or NULL: ds's own, borrowed        */
    lg__model_f32 *model;
    float *m1, *m2;          /* Adam moments, parameter layout                 */
    lg_explode det;          /* explosion detector                             */
    lg__train_state s;
    int L;
    double *att_norm, *norm;     /* this epoch, per layer                      */
    double io_norm[2], bio[2];   /* this epoch's and one batch's: the input and
                                    output linear layers' (NAN: none)         */
    double *max_norm, *max_att;  /* over the run, per layer                    */
    double max_io[2];            /* over the run: the input and output linear
                                    layers' (NAN: none, or a checkpoint that
                                    predates their record)                    */
    double *ms;                  /* wall time of each epoch run in this process */
    long ms_cap, ms_count;
    double ms_total;             /* wall time of every epoch run in this process */
    int batch;                   /* 1: mini-batches of graphs (tc.batch_size)    */
    lg__batcher bat;             /* their buffers                                */
    double *bnorm, *batt;        /* per layer, one batch's gradient norms        */
    lg_progress_fn progress;     /* called after each batch (or NULL)            */
    void *progress_ctx;
    long done, total;            /* batches of this epoch: done, in all          */
    char *note;                  /* lg_trainer_set_note's text, or NULL: none    */
    lg_idx *evrows, nev;         /* whole graph: the splits' rows, increasing and
                                    each once, whose log-probabilities the
                                    evaluation's forward computes (TREES as one
                                    graph: 1000 roots of 511 000 nodes)         */
};

void lg_trainer_set_progress(lg_trainer *t, lg_progress_fn fn, void *ctx) {
    if (!t) return;
    t->progress = fn;
    t->progress_ctx = ctx;
}

/* One more batch of the epoch done. */
static void lg__tick(lg_trainer *t) {
    t->done++;
    if (t->progress) t->progress(t->progress_ctx, t->done, t->total);
}

/* 1 if the model sees other feature values than the data set's (row
 * normalisation, the missing-vector setting): the trainer then holds its own
 * copy of the values (the structure stays the data set's). */
static int lg__features_changed(const lg_model_config *mc, const lg_train_config *tc) {
    return mc->feature_norm_row || tc->missing > 0;
}

/* Bytes of the trainer's own feature values, if it needs them. */
static size_t lg__features_bytes(const lg_model_config *mc, const lg_train_config *tc, const lg_features *f) {
    return lg__features_changed(mc, tc) ? sizeof(float) * (size_t)f->nnz : 0;
}

/* The values of row i: [*lo, *hi) in x->x. */
static void lg__row(const lg_features *x, lg_idx i, lg_idx *lo, lg_idx *hi) {
    if (x->kind == LG_FEAT_SPARSE) { *lo = x->p[i]; *hi = x->p[i + 1]; }
    else { *lo = i * x->d; *hi = (i + 1) * x->d; }
}

/* The features the model sees: row-normalised if asked, and with the features
 * of a share `missing` of the non-training nodes set to zero (the paper's
 * missing-vector setting), chosen with an rng of its own from the seed. */
static lg_status lg__prepare_features(lg_trainer *t) {
    lg_status st = LG_OK;
    unsigned char *is_train = NULL;
    lg_idx *cand = NULL;
    const lg_features *f = t->ds->features;
    lg_features *x = &t->xv;
    *x = *f; /* the data set's arrays, borrowed */
    if (!lg__features_changed(&t->mc, &t->tc)) return LG_OK;
    LG_ALLOC(t->xval, f->nnz, "feature values");
    memcpy(t->xval, f->x, sizeof(float) * (size_t)f->nnz);
    x->x = t->xval;
    if (t->mc.feature_norm_row) {
        for (lg_idx i = 0; i < x->n; i++) {
            lg_idx lo, hi;
            lg__row(x, i, &lo, &hi);
            double sum = 0;
            for (lg_idx e = lo; e < hi; e++) sum += x->x[e];
            if (sum != 0)
                for (lg_idx e = lo; e < hi; e++) x->x[e] = (float)(x->x[e] / sum);
        }
    }
    if (t->tc.missing > 0) {
        LG_CALLOC(is_train, x->n, "missing-feature mask");
        for (lg_idx k = 0; k < t->ds->n_train; k++) is_train[t->ds->train[k]] = 1;
        LG_ALLOC(cand, x->n, "missing-feature nodes");
        lg_idx nc = 0;
        for (lg_idx i = 0; i < x->n; i++)
            if (!is_train[i]) cand[nc++] = i;
        lg_rng r;
        lg_rng_seed(&r, lg_hash64(t->tc.seed ^ 0x6d697373696e67ULL)); /* "missing" */
        lg_rng_shuffle(&r, cand, nc);
        lg_idx drop = (lg_idx)llround(t->tc.missing * (double)nc);
        for (lg_idx k = 0; k < drop; k++) {
            lg_idx lo, hi;
            lg__row(x, cand[k], &lo, &hi);
            for (lg_idx e = lo; e < hi; e++) x->x[e] = 0.0f;
        }
    }
fail:
    lg__free(is_train);
    lg__free(cand);
    return st;
}

void lg_trainer_free(lg_trainer *t) {
    if (!t) return;
    lg__model_free_f32(t->model);
    lg__free(t->xval);
    lg__free(t->m1);
    lg__free(t->m2);
    lg__explode_destroy(&t->det);
    lg__free(t->att_norm);
    lg__free(t->norm);
    lg__free(t->max_norm);
    lg__free(t->max_att);
    lg__free(t->ms);
    lg__free(t->evrows);
    lg__batcher_destroy(&t->bat);
    lg__free(t->bnorm);
    lg__free(t->batt);
    lg__free(t->note);
    lg__free(t);
}

/* t->evrows: the union of the three splits' rows (checked to lie in [0, n)),
 * in increasing order. O(n + splits). */
static lg_status lg__eval_rows(lg_trainer *t) {
    const lg_dataset *ds = t->ds;
    const lg_idx n = ds->graph->n;
    const lg_idx *split[3] = {ds->train, ds->val, ds->test}, cnt[3] = {ds->n_train, ds->n_val, ds->n_test};
    unsigned char *mark = lg__calloc((size_t)n, 1);
    if (!mark) return lg__nomem("evaluation rows");
    lg_idx nev = 0;
    for (int q = 0; q < 3; q++)
        for (lg_idx k = 0; k < cnt[q]; k++) {
            nev += !mark[split[q][k]];
            mark[split[q][k]] = 1;
        }
    t->evrows = lg__malloc_array((size_t)(nev ? nev : 1), sizeof *t->evrows);
    if (!t->evrows) {
        lg__free(mark);
        return lg__nomem("evaluation rows");
    }
    t->nev = 0;
    for (lg_idx i = 0; i < n; i++)
        if (mark[i]) t->evrows[t->nev++] = i;
    lg__free(mark);
    return LG_OK;
}

/* LG_OK if the data set's graph and features, which a caller may have made by
 * hand, are whole (lg_graph_check; the features' kind, sizes and arrays, a
 * sparse matrix's rows and columns), before anything reads them; else
 * LG_EINVAL naming fn and the fault. O(n + nnz + feature nnz). */
static lg_status lg__dataset_check_arg(const lg_dataset *ds, const char *fn) {
    if (!ds || !ds->graph || !ds->features || !ds->labels) return lg__error(LG_EINVAL, "%s: incomplete data set", fn);
    LG_CHECK(lg__graph_check_arg(ds->graph, "the data set's graph", fn));
    const lg_features *x = ds->features;
    if (x->n != ds->graph->n)
        return lg__error(LG_EINVAL, "%s: the features have %lld rows for %lld nodes", fn, (long long)x->n,
                         (long long)ds->graph->n);
    if (x->kind == LG_FEAT_SPARSE) return lg__nn_csr_check(fn, x);
    if (x->kind != LG_FEAT_DENSE) return lg__error(LG_EINVAL, "%s: unknown feature storage %d", fn, (int)x->kind);
    LG_CHECK(lg__nn_shape(fn, x->n, x->d));
    if (x->nnz != x->n * x->d)
        return lg__error(LG_EINVAL, "%s: dense features of %lld x %lld hold %lld values", fn, (long long)x->n,
                         (long long)x->d, (long long)x->nnz);
    if (x->nnz > 0 && !x->x) return lg__error(LG_EINVAL, "%s: the feature values are NULL", fn);
    return LG_OK;
}

static void lg__layer_norms(const lg_trainer *t, const float *g, double *norm, double *att, double io[2]);

lg_status lg_trainer_init(lg_trainer **out, const lg_model_config *mc, const lg_train_config *tc,
                          const lg_dataset *ds) {
    lg_status st = LG_OK;
    lg_trainer *t = NULL;
    if (!out) return lg__error(LG_EINVAL, "lg_trainer_init: out is NULL");
    *out = NULL;
    LG_CHECK(lg__dataset_check_arg(ds, "lg_trainer_init"));
    LG_CHECK(lg__blas_core_usable("lg_trainer_init"));
    LG_CHECK(lg_model_config_check(mc));
    LG_CHECK(lg_train_config_check(tc));
    if (ds->n_train < 1) return lg__error(LG_EINVAL, "data set %s has no training nodes", lg__name(ds->name));
    LG_CHECK(lg_nll_check(ds->labels, ds->graph->n, ds->n_classes, ds->train, ds->n_train));
    LG_CHECK(lg_nll_check(ds->labels, ds->graph->n, ds->n_classes, ds->val, ds->n_val));
    LG_CHECK(lg_nll_check(ds->labels, ds->graph->n, ds->n_classes, ds->test, ds->n_test));
    LG_CALLOC(t, 1, "trainer");
    t->mc = *mc;
    t->tc = *tc;
    t->ds = ds;
    LG_TRY(lg__prepare_features(t));
    lg_rng rng;
    lg_rng_seed(&rng, tc->seed);
    t->batch = tc->batch_size > 0;
    if (t->batch) {
        LG_TRY(lg__batcher_init(&t->bat, ds, &t->xv, mc, tc->batch_size, 0));
        const lg_idx cap[3] = {t->bat.n_cap, t->bat.nnz_cap, t->bat.t_cap};
        LG_TRY(lg__model_init_batch_f32(&t->model, mc, ds, &t->xv, cap, &rng));
    } else {
        LG_TRY(lg__model_init_f32(&t->model, mc, ds, &t->xv, &rng));
        LG_TRY(lg__eval_rows(t));
    }
    lg_idx np = lg__model_nparams_f32(t->model);
    LG_CALLOC(t->m1, np, "Adam moments");
    LG_CALLOC(t->m2, np, "Adam moments");
    t->L = lg__model_layers_f32(t->model);
    LG_CALLOC(t->att_norm, t->L, "gradient norms");
    LG_CALLOC(t->norm, t->L, "gradient norms");
    LG_CALLOC(t->max_norm, t->L, "gradient norms");
    LG_CALLOC(t->max_att, t->L, "gradient norms");
    LG_CALLOC(t->bnorm, t->L, "gradient norms");
    LG_CALLOC(t->batt, t->L, "gradient norms");
    /* the norms of the gradients as they are (zero): 0 for each layer, and
     * NAN for an input or output linear layer the model does not have */
    lg__layer_norms(t, lg__model_grads_f32(t->model), t->norm, t->att_norm, t->io_norm);
    t->max_io[0] = t->io_norm[0], t->max_io[1] = t->io_norm[1];
    t->ms_cap = tc->epochs > 0 ? LG_MIN(tc->epochs, LG__MS_CAP) : 1;
    LG_CALLOC(t->ms, t->ms_cap, "epoch times");
    lg_explode_opts eo = {tc->explode_threshold, tc->explode_growth, tc->explode_window};
    LG_TRY(lg__explode_init(&t->det, t->L, &eo));
    t->s.lr = tc->lr;
    t->s.plateau_best = t->s.stop_best = INFINITY;
    t->s.best_epoch = -1;
    t->s.best_val_acc = -1;
    t->s.explode_epoch = -1;
    t->s.explode_layer = -1;
    /* after the allocations: what is left of the address space must hold
     * OpenBLAS's buffers, which its first products will take */
    LG_TRY(lg__blas_room("lg_trainer_init"));
    *out = t;
    return LG_OK;
fail:
    lg_trainer_free(t);
    return st;
}

/* 1 if two model configurations describe the same model (field by field:
 * struct padding never takes part). */
static int lg__model_config_equal(const lg_model_config *a, const lg_model_config *b) {
    return a->kind == b->kind && a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads &&
           a->att_norm == b->att_norm && a->node_norm == b->node_norm && a->residual == b->residual &&
           a->lip_scale == b->lip_scale && a->gate == b->gate && a->dropout == b->dropout &&
           a->att_dropout == b->att_dropout && a->self_loops == b->self_loops &&
           a->feature_norm_row == b->feature_norm_row && a->train_eps == b->train_eps && a->alpha == b->alpha &&
           a->lambda == b->lambda;
}

/* Appends to buf (cap bytes, NUL-terminated) the options in which the
 * checkpoint's model a differs from this run's b: "--dropout 0.6 (this run
 * 0.1)", separated by "; ". The fields lg__model_config_equal compares. */
static void lg__model_config_diff(char *buf, size_t cap, const lg_model_config *a, const lg_model_config *b) {
    size_t n = strlen(buf);
#define LG__DIFF(cond, ...)                                                                      \
    do {                                                                                        \
        if ((cond) && n < cap) {                                                                \
            int w_ = snprintf(buf + n, cap - n, "%s", n ? "; " : "");                           \
            if (w_ > 0) n += (size_t)w_;                                                        \
            if (n < cap && (w_ = snprintf(buf + n, cap - n, __VA_ARGS__)) > 0) n += (size_t)w_; \
        }                                                                                       \
    } while (0)
    char na[64], nb[64];
    lg_norm_format(na, sizeof na, a->att_norm, a->node_norm);
    lg_norm_format(nb, sizeof nb, b->att_norm, b->node_norm);
    LG__DIFF(a->kind != b->kind, "--model %s (this run %s)", lg_model_kind_name(a->kind), lg_model_kind_name(b->kind));
    LG__DIFF(a->layers != b->layers, "--layers %d (this run %d)", a->layers, b->layers);
    LG__DIFF(a->hidden != b->hidden, "--hidden %d (this run %d)", a->hidden, b->hidden);
    LG__DIFF(a->heads != b->heads, "--heads %d (this run %d)", a->heads, b->heads);
    LG__DIFF(a->att_norm != b->att_norm || a->node_norm != b->node_norm, "--norm %s (this run %s)", na, nb);
    LG__DIFF(a->residual != b->residual, "residual %s (this run %s)", a->residual ? "on" : "off",
             b->residual ? "on" : "off");
    LG__DIFF(a->lip_scale != b->lip_scale, "--lip-scale %g (this run %g)", a->lip_scale, b->lip_scale);
    LG__DIFF(a->gate != b->gate, "gate %s (this run %s)", a->gate ? "on" : "off", b->gate ? "on" : "off");
    LG__DIFF(a->dropout != b->dropout, "--dropout %g (this run %g)", a->dropout, b->dropout);
    LG__DIFF(a->att_dropout != b->att_dropout, "--att-dropout %g (this run %g)", a->att_dropout, b->att_dropout);
    LG__DIFF(a->self_loops != b->self_loops, "--self-loops %s (this run %s)", a->self_loops ? "on" : "off",
             b->self_loops ? "on" : "off");
    LG__DIFF(a->feature_norm_row != b->feature_norm_row, "--feature-norm %s (this run %s)",
             a->feature_norm_row ? "row" : "none", b->feature_norm_row ? "row" : "none");
    LG__DIFF(a->train_eps != b->train_eps, "train-eps %s (this run %s)", a->train_eps ? "on" : "off",
             b->train_eps ? "on" : "off");
    LG__DIFF(a->alpha != b->alpha, "--alpha %g (this run %g)", a->alpha, b->alpha);
    LG__DIFF(a->lambda != b->lambda, "--lambda %g (this run %g)", a->lambda, b->lambda);
#undef LG__DIFF
}

static double lg__now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* L2 norm of v[off .. off+len), summed in double in index order. */
static double lg__norm(const float *v, lg_idx off, lg_idx len) {
    double s = 0;
    for (lg_idx k = off; k < off + len; k++) s += (double)v[k] * (double)v[k];
    return sqrt(s);
}

/* Per layer, the L2 norm of the gradient g of all its parameters (norm) and
 * of its attention parameters (att). */
static void lg__layer_norms(const lg_trainer *t, const float *g, double *norm, double *att, double io[2]) {
    /* the input linear layer's parameters come before layer 0's, the output
     * one's after the last layer's (lg_trainer_params); none: NAN */
    const lg__layer_range r0 = lg__model_layer_range_f32(t->model, 0), rl = lg__model_layer_range_f32(t->model, t->L - 1);
    const lg_idx end = rl.off + rl.len, np = lg__model_nparams_f32(t->model);
    io[0] = r0.off > 0 ? lg__norm(g, 0, r0.off) : NAN;
    io[1] = np > end ? lg__norm(g, end, np - end) : NAN;
    for (int l = 0; l < t->L; l++) {
        lg__layer_range r = lg__model_layer_range_f32(t->model, l);
        norm[l] = lg__norm(g, r.off, r.len);
        double a = lg__norm(g, r.att_off, r.att_len), att2 = a * a;
        for (lg_idx q = 0; q < r.str_rows; q++) {
            double x = lg__norm(g, r.str_off + q * r.str_stride, r.str_cols);
            att2 += x * x;
        }
        att[l] = sqrt(att2);
    }
}

/* The layers' own L2 (GCNII's split weight decay), added to the gradient g
 * before Adam, which adds weight_decay to every parameter: g += (layer decay
 * - weight decay) p over the layers' parameters. */
static void lg__layer_decay(const lg_trainer *t, const float *p, float *g) {
    if (!(t->tc.layer_weight_decay >= 0 && t->tc.layer_weight_decay != t->tc.weight_decay)) return;
    const float dd = (float)(t->tc.layer_weight_decay - t->tc.weight_decay);
    for (int l = 0; l < t->L; l++) {
        lg__layer_range r = lg__model_layer_range_f32(t->model, l);
        for (lg_idx k = r.off; k < r.off + r.len; k++) g[k] += dd * p[k];
    }
}

/* The training pass of a mini-batch epoch (see lg_trainer_epoch): batches in
 * this epoch's order, one Adam step each; the mean loss and mean per-layer
 * gradient norms; *bad_layer: where the first batch loss that is not finite
 * started (lg__model_first_nonfinite_f32), or unchanged. */
static lg_status lg__train_batches(lg_trainer *t, long epoch, const lg_adam *a, double *loss_step, int *bad_layer) {
    lg__batcher *b = &t->bat;
    float *p = lg__model_params_f32(t->model), *g = lg__model_grads_f32(t->model);
    const size_t np = (size_t)lg__model_nparams_f32(t->model);
    const uint64_t nb = (uint64_t)lg__batcher_count(b, 0), seed = t->tc.seed;
    double sum = 0;
    lg_idx total = 0;
    memset(t->norm, 0, sizeof(double) * (size_t)t->L);
    t->io_norm[0] = t->io_norm[1] = 0;
    memset(t->att_norm, 0, sizeof(double) * (size_t)t->L);
    lg__batcher_shuffle(b, seed, epoch);
    for (uint64_t k = 0; k < nb; k++) {
        const uint64_t step = (uint64_t)(epoch - 1) * nb + k + 1; /* Adam's step, the dropout stream */
        lg__batch bt;
        double loss;
        lg__batcher_fill(b, 0, 1, (lg_idx)k, &bt);
        LG_CHECK(lg__model_bind_f32(t->model, &bt));
        LG_CHECK(lg__model_forward_f32(t->model, 1, seed, step));
        LG_CHECK(lg__model_eval_f32(t->model, b->iota, b->n_targets, &loss, NULL));
        if (!isfinite(loss) && *bad_layer == -1) *bad_layer = lg__model_first_nonfinite_f32(t->model);
        LG_CHECK(lg__model_backward_f32(t->model, b->iota, b->n_targets, 1, seed, step));
        sum += loss * (double)b->n_targets;
        total += b->n_targets;
        lg__layer_norms(t, g, t->bnorm, t->batt, t->bio);
        for (int l = 0; l < t->L; l++) {
            t->norm[l] += t->bnorm[l];
            t->att_norm[l] += t->batt[l];
        }
        t->io_norm[0] += t->bio[0], t->io_norm[1] += t->bio[1];
        lg__layer_decay(t, p, g);
        lg__adam_step(a, (long)step, p, g, t->m1, t->m2, np);
        lg__tick(t);
    }
    for (int l = 0; l < t->L; l++) {
        t->norm[l] /= (double)nb;
        t->att_norm[l] /= (double)nb;
    }
    t->io_norm[0] /= (double)nb, t->io_norm[1] /= (double)nb;
    *loss_step = total ? sum / (double)total : 0;
    return LG_OK;
}

/* Loss and accuracy over split s (0 train, 1 val, 2 test), in batches. */
static lg_status lg__eval_batches(lg_trainer *t, int s, long epoch, double *loss, double *acc) {
    lg__batcher *b = &t->bat;
    const lg_idx nb = lg__batcher_count(b, s);
    double sum = 0;
    long long right = 0;
    lg_idx total = 0;
    for (lg_idx k = 0; k < nb; k++) {
        lg__batch bt;
        double l, a;
        lg__batcher_fill(b, s, 0, k, &bt);
        LG_CHECK(lg__model_bind_f32(t->model, &bt));
        LG_CHECK(lg__model_forward_f32(t->model, 0, t->tc.seed, (uint64_t)epoch));
        LG_CHECK(lg__model_eval_f32(t->model, b->iota, b->n_targets, &l, &a));
        sum += l * (double)b->n_targets;
        right += llround(a * (double)b->n_targets); /* a = right / count exactly */
        total += b->n_targets;
        lg__tick(t);
    }
    *loss = total ? sum / (double)total : 0;
    *acc = total ? (double)right / (double)total : 0;
    return LG_OK;
}

/* The larger of a running maximum m and x, NaN once either is NaN: a NaN
 * norm sticks (a later finite one replaced it, and the run's maximum and its
 * layers' disagreed). */
static double lg__max_nan(double m, double x) { return isnan(m) || isnan(x) ? NAN : x > m ? x : m; }

lg_status lg_trainer_epoch(lg_trainer *t, lg_epoch_stats *es) {
    if (!t || !es) return lg__error(LG_EINVAL, "lg_trainer_epoch: NULL argument");
    const lg_dataset *ds = t->ds;
    lg__train_state *s = &t->s;
    double t0 = lg__now_ms();
    long epoch = s->epoch + 1;
    uint64_t seed = t->tc.seed;
    memset(es, 0, sizeof *es);
    es->epoch = epoch;
    es->lr = s->lr;

    /* training: forward, backward, gradient norms, Adam (per batch) */
    lg_adam a = {s->lr, 0.9, 0.999, 1e-8, t->tc.weight_decay};
    int bad_layer = -1; /* where a loss that is not finite started, for the detector's report */
    if (t->batch) {
        t->done = 0;
        t->total = lg__batcher_count(&t->bat, 0); /* training, then evaluation of every split */
        for (int q = 0; q < LG__SPLITS; q++) t->total += lg__batcher_count(&t->bat, q);
        LG_CHECK(lg__train_batches(t, epoch, &a, &es->train_loss_step, &bad_layer));
    } else {
        /* the output layer and log-softmax of the training rows only: all the loss needs */
        LG_CHECK(lg__model_forward_rows_f32(t->model, 1, seed, (uint64_t)epoch, ds->train, ds->n_train));
        LG_CHECK(lg__model_eval_f32(t->model, ds->train, ds->n_train, &es->train_loss_step, NULL));
        /* before backward reuses anything */
        if (!isfinite(es->train_loss_step)) bad_layer = lg__model_first_nonfinite_f32(t->model);
        LG_CHECK(lg__model_backward_f32(t->model, ds->train, ds->n_train, 1, seed, (uint64_t)epoch));
        float *p = lg__model_params_f32(t->model), *g = lg__model_grads_f32(t->model);
        lg__layer_norms(t, g, t->norm, t->att_norm, t->io_norm);
        lg__layer_decay(t, p, g);
        lg__adam_step(&a, epoch, p, g, t->m1, t->m2, (size_t)lg__model_nparams_f32(t->model));
    }

    /* largest norms and the detector */
    for (int l = 0; l < t->L; l++) {
        t->max_norm[l] = lg__max_nan(t->max_norm[l], t->norm[l]);
        t->max_att[l] = lg__max_nan(t->max_att[l], t->att_norm[l]);
        s->max_norm = lg__max_nan(s->max_norm, t->norm[l]);
        s->max_att = lg__max_nan(s->max_att, t->att_norm[l]);
    }
    t->max_io[0] = lg__max_nan(t->max_io[0], t->io_norm[0]);
    t->max_io[1] = lg__max_nan(t->max_io[1], t->io_norm[1]);
    es->exploded_now = lg__explode_observe(&t->det, epoch, es->train_loss_step, bad_layer, t->norm);
    if (es->exploded_now) {
        s->exploded = 1;
        s->explode_epoch = t->det.epoch;
        s->explode_layer = t->det.layer;
        snprintf(s->explode_reason, sizeof s->explode_reason, "%s", t->det.reason);
    }

    /* evaluation */
    if (t->batch) {
        LG_CHECK(lg__eval_batches(t, 0, epoch, &es->train_loss, &es->train_acc));
        LG_CHECK(lg__eval_batches(t, 1, epoch, &es->val_loss, &es->val_acc));
        LG_CHECK(lg__eval_batches(t, 2, epoch, &es->test_loss, &es->test_acc));
    } else {
        /* the splits' rows only: their log-probabilities equal a full forward's
         * within float rounding (lg__model_forward_rows) */
        LG_CHECK(lg__model_forward_rows_f32(t->model, 0, seed, (uint64_t)epoch, t->evrows, t->nev));
        LG_CHECK(lg__model_eval_f32(t->model, ds->train, ds->n_train, &es->train_loss, &es->train_acc));
        LG_CHECK(lg__model_eval_f32(t->model, ds->val, ds->n_val, &es->val_loss, &es->val_acc));
        LG_CHECK(lg__model_eval_f32(t->model, ds->test, ds->n_test, &es->test_loss, &es->test_acc));
    }

    /* best validation accuracy; scheduler; early stopping (validation loss,
     * or the training loss when there is no validation split) */
    if (ds->n_val > 0 ? es->val_acc > s->best_val_acc : es->train_acc > s->best_val_acc) {
        s->best_val_acc = ds->n_val > 0 ? es->val_acc : es->train_acc;
        s->test_at_best = es->test_acc;
        s->train_at_best = es->train_acc;
        s->best_epoch = epoch;
    }
    double watch = ds->n_val > 0 ? es->val_loss : es->train_loss;
    if (t->tc.plateau) {
        if (watch < s->plateau_best * (1 - 1e-4)) { s->plateau_best = watch; s->plateau_bad = 0; }
        else if (++s->plateau_bad > 10) { s->lr *= 0.1; s->plateau_bad = 0; }
    }
    if (t->tc.patience > 0) {
        if (watch < s->stop_best) { s->stop_best = watch; s->stop_bad = 0; }
        else if (++s->stop_bad >= t->tc.patience) s->stopped_early = 1;
    }
    double last[6] = {es->train_loss, es->val_loss, es->test_loss, es->train_acc, es->val_acc, es->test_acc};
    memcpy(s->last, last, sizeof last);
    s->epoch = epoch;
    es->layers = t->L;
    es->att_grad_norm = t->att_norm;
    es->grad_norm = t->norm;
    es->io_grad_norm[0] = t->io_norm[0], es->io_grad_norm[1] = t->io_norm[1];
    es->ms = lg__now_ms() - t0;
    if (t->ms_count < t->ms_cap) t->ms[t->ms_count++] = es->ms;
    t->ms_total += es->ms;
    return LG_OK;
}

int lg_trainer_done(const lg_trainer *t) {
    if (!t) return 1; /* nothing to train */
    return t->s.stopped_early || (t->tc.stop_on_explosion && t->s.exploded);
}

long lg_trainer_epochs_done(const lg_trainer *t) { return t ? t->s.epoch : 0; }

long lg_trainer_best_epoch(const lg_trainer *t) { return t && t->s.best_epoch > 0 ? t->s.best_epoch : 0; }

static int lg__cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Index of the first of n floats at p (unaligned bytes) that is not finite, or
 * below zero when nonneg; n if none. */
static size_t lg__bad_float(const void *p, size_t n, int nonneg) {
    const unsigned char *b = p;
    for (size_t k = 0; k < n; k++) {
        float v;
        memcpy(&v, b + k * sizeof v, sizeof v);
        if (!isfinite(v) || (nonneg && v < 0)) return k;
    }
    return n;
}

void lg_trainer_summary(const lg_trainer *t, lg_train_summary *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!t) return;
    const lg__train_state *s = &t->s;
    out->epochs_run = s->epoch;
    out->train_loss = s->last[0];
    out->val_loss = s->last[1];
    out->test_loss = s->last[2];
    out->train_acc = s->last[3];
    out->val_acc = s->last[4];
    out->test_acc = s->last[5];
    out->best_epoch = lg_trainer_best_epoch(t); /* 0 before any epoch (the state's -1, kept by checkpoints) */
    out->best_val_acc = s->best_val_acc < 0 ? 0 : s->best_val_acc;
    out->test_acc_at_best_val = s->test_at_best;
    out->train_acc_at_best_val = s->train_at_best;
    out->exploded = s->exploded;
    out->first_explosion_epoch = s->explode_epoch;
    out->explosion_layer = s->explode_layer;
    snprintf(out->explosion_reason, sizeof out->explosion_reason, "%s", s->explode_reason);
    out->max_layer_grad_norm = s->max_norm;
    out->max_att_grad_norm = s->max_att;
    out->layers = t->L;
    out->max_grad_norm_per_layer = t->max_norm;
    out->max_att_grad_norm_per_layer = t->max_att;
    out->max_io_grad_norm[0] = t->max_io[0], out->max_io_grad_norm[1] = t->max_io[1];
    out->n_params = lg__model_nparams_f32(t->model);
    out->stopped_early = s->stopped_early;
    out->epochs_ms_total = t->ms_total;
    {
        const size_t np = (size_t)lg__model_nparams_f32(t->model);
        out->params_finite = lg__bad_float(lg__model_params_f32(t->model), np, 0) == np &&
                             lg__bad_float(t->m1, np, 0) == np && lg__bad_float(t->m2, np, 1) == np;
    }
    /* median epoch time (this process's first LG__MS_CAP epochs); sorted in a
     * copy, skipped (0) if the copy cannot be allocated */
    double *tmp = t->ms_count > 0 ? lg__malloc_array((size_t)t->ms_count, sizeof(double)) : NULL;
    if (tmp) {
        memcpy(tmp, t->ms, sizeof(double) * (size_t)t->ms_count);
        qsort(tmp, (size_t)t->ms_count, sizeof(double), lg__cmp_double);
        out->epoch_ms_median = t->ms_count % 2 ? tmp[t->ms_count / 2]
                                               : 0.5 * (tmp[t->ms_count / 2 - 1] + tmp[t->ms_count / 2]);
        lg__free(tmp);
    }
}

/* ------------------------------------------------------------------------- */
/* Checkpoints                                                                */
/* ------------------------------------------------------------------------- */

enum {
    LG__CK_MODEL = 1,  /* lg_model_config bytes                      */
    LG__CK_TRAIN = 2,  /* lg_train_config bytes                      */
    LG__CK_DATA = 3,   /* data fingerprint                           */
    LG__CK_PARAMS = 4, /* parameters (float)                         */
    LG__CK_M1 = 5,     /* Adam first moments                         */
    LG__CK_M2 = 6,     /* Adam second moments                        */
    LG__CK_STATE = 7,  /* lg__train_state bytes                      */
    LG__CK_DETECT = 8, /* detector: seen, fired, and its history     */
    LG__CK_MAXNORM = 9, /* per-layer maxima                           */
    LG__CK_IOMAX = 11,  /* the input and output linear layers' maxima (2
                           doubles); absent in checkpoints written before
                           them: restored as NAN, unknown            */
    LG__CK_NOTE = 10    /* the caller's note (lg_trainer_set_note): its
                           bytes, without the terminating NUL; absent
                           when none was set, and in every checkpoint
                           written before notes. lg_trainer_load never
                           reads it, and a lipgnn that predates it skips
                           it as any tag it does not look for        */
};

/* What identifies the data a checkpoint was trained on. */
typedef struct lg__data_fp {
    lg_idx n, nnz, d, classes, n_train, n_val, n_test;
    uint64_t hash; /* of labels, splits and the graph structure */
} lg__data_fp;

static void lg__fingerprint(const lg_dataset *ds, lg__data_fp *fp) {
    memset(fp, 0, sizeof *fp);
    fp->n = ds->graph->n;
    fp->nnz = ds->graph->nnz;
    fp->d = ds->features->d;
    fp->classes = ds->n_classes;
    fp->n_train = ds->n_train;
    fp->n_val = ds->n_val;
    fp->n_test = ds->n_test;
    uint64_t h = LG_FNV_START;
    h = lg__fnv1a(h, ds->labels, sizeof(int32_t) * (size_t)fp->n);
    h = lg__fnv1a(h, ds->train, sizeof(lg_idx) * (size_t)fp->n_train);
    if (fp->n_val) h = lg__fnv1a(h, ds->val, sizeof(lg_idx) * (size_t)fp->n_val);
    if (fp->n_test) h = lg__fnv1a(h, ds->test, sizeof(lg_idx) * (size_t)fp->n_test);
    h = lg__fnv1a(h, ds->graph->p, sizeof(lg_idx) * (size_t)(fp->n + 1));
    if (fp->nnz) h = lg__fnv1a(h, ds->graph->j, sizeof(lg_idx) * (size_t)fp->nnz);
    fp->hash = h;
}

lg_status lg_trainer_save_check(const char *path) {
    char real[PATH_MAX];
    const char *file;
    return lg__ckpt_target(path, real, &file);
}

lg_status lg_trainer_save(const lg_trainer *t, const char *path) {
    if (!t || !path) return lg__error(LG_EINVAL, "lg_trainer_save: NULL argument");
    lg__data_fp fp;
    lg__fingerprint(t->ds, &fp);
    lg_idx np = lg__model_nparams_f32(t->model);
    int64_t seen = t->det.seen, fired = t->det.fired;
    int64_t det_head[2] = {seen, fired};
    size_t hist = sizeof(double) * (size_t)(t->det.o.window + 1) * (size_t)(t->L ? t->L : 1);
    lg_ckpt_section s[12] = {
        {LG__CK_MODEL, sizeof t->mc, &t->mc},
        {LG__CK_TRAIN, sizeof t->tc, &t->tc},
        {LG__CK_DATA, sizeof fp, &fp},
        {LG__CK_PARAMS, sizeof(float) * (uint64_t)np, lg__model_params_f32(t->model)},
        {LG__CK_M1, sizeof(float) * (uint64_t)np, t->m1},
        {LG__CK_M2, sizeof(float) * (uint64_t)np, t->m2},
        {LG__CK_STATE, sizeof t->s, &t->s},
        {LG__CK_DETECT, sizeof det_head, det_head},
        {LG__CK_DETECT + 100, hist, t->det.hist},
        {LG__CK_MAXNORM, sizeof(double) * 2 * (uint64_t)t->L, NULL},
        {LG__CK_IOMAX, sizeof t->max_io, t->max_io},
        {LG__CK_NOTE, t->note ? strlen(t->note) : 0, t->note},
    };
    double *mx = lg__malloc_array((size_t)(2 * t->L + 1), sizeof(double));
    if (!mx) return lg__nomem("checkpoint");
    memcpy(mx, t->max_norm, sizeof(double) * (size_t)t->L);
    memcpy(mx + t->L, t->max_att, sizeof(double) * (size_t)t->L);
    s[9].data = mx;
    lg_status st = lg__ckpt_save(path, s, t->note ? 12 : 11, -1);
    lg__free(mx);
    return st;
}

lg_status lg_trainer_set_note(lg_trainer *t, const char *note) {
    if (!t) return lg__error(LG_EINVAL, "lg_trainer_set_note: t is NULL");
    const size_t len = note ? strnlen(note, LG_NOTE_MAX + 1) : 0;
    if (len > LG_NOTE_MAX)
        return lg__error(LG_EINVAL, "lg_trainer_set_note: a note of more than %d bytes", LG_NOTE_MAX);
    char *copy = NULL;
    if (len) {
        if (!(copy = lg__malloc(len + 1))) return lg__nomem("checkpoint note");
        memcpy(copy, note, len + 1);
    }
    lg__free(t->note);
    t->note = copy;
    return LG_OK;
}

lg_status lg_checkpoint_note(const char *path, char *buf, size_t cap, size_t *len) {
    if (len) *len = 0;
    if (!path || (!buf && cap)) return lg__error(LG_EINVAL, "lg_checkpoint_note: path or buf is NULL");
    if (buf && cap) buf[0] = '\0';
    lg_ckpt *c = NULL;
    LG_CHECK(lg__ckpt_load(&c, path));
    lg_status st = LG_OK;
    const lg_ckpt_section *s = lg__ckpt_find(c, LG__CK_NOTE);
    if (!s) {
        st = lg__error(LG_ENOTFOUND, "%s: the checkpoint has no note (none was set, or it was written before "
                       "checkpoints held notes)", path);
    } else if (s->length > LG_NOTE_MAX || memchr(s->data, 0, s->length)) {
        st = lg__error(LG_EPARSE, "%s: checkpoint note of %llu bytes %s (a damaged or crafted file)", path,
                       (unsigned long long)s->length, s->length > LG_NOTE_MAX ? "is too long" : "holds a NUL byte");
    } else {
        if (len) *len = (size_t)s->length;
        if (s->length >= cap)
            st = lg__error(LG_ERANGE, "%s: the checkpoint's note has %llu bytes, the buffer room for %zu and a NUL", path,
                           (unsigned long long)s->length, cap ? cap - 1 : 0);
        else {
            memcpy(buf, s->data, s->length);
            buf[s->length] = '\0';
        }
    }
    lg__ckpt_free(c);
    return st;
}

/* The section with tag, of exactly len bytes, or an error naming it. */
static lg_status lg__section(const lg_ckpt *c, const char *path, uint32_t tag, uint64_t len, const void **data) {
    const lg_ckpt_section *s = lg__ckpt_find(c, tag);
    if (!s) return lg__error(LG_EPARSE, "%s: checkpoint has no section %u", path, tag);
    if (s->length != len)
        return lg__error(LG_EINVAL, "%s: section %u has %llu bytes, this model needs %llu (another model or data set)",
                         path, tag, (unsigned long long)s->length, (unsigned long long)len);
    *data = s->data;
    return LG_OK;
}

/* The configuration layouts of lipgnn 0.1.0's first checkpoints (before
 * the baselines' and the mini-batch fields): read and completed with the
 * defaults of those fields, so that such checkpoints stay usable. */
typedef struct lg__model_config_v0 {
    lg_model_kind kind;
    int layers, hidden, heads;
    lg_att_norm att_norm;
    lg_node_norm node_norm;
    int residual;
    double lip_scale;
    int gate;
    double dropout, att_dropout;
    int self_loops, feature_norm_row;
} lg__model_config_v0;
typedef struct lg__train_config_v0 {
    int epochs;
    double lr, weight_decay;
    int plateau, patience;
    uint64_t seed;
    double missing, explode_threshold, explode_growth;
    int explode_window, stop_on_explosion;
} lg__train_config_v0;

/* init took the padding after train_eps: lg_model_config kept its size, so
 * the checkpoints written before it, which hold 0 there (the memset of
 * lg_model_config_default), read as LG_INIT_GLOROT, what they were made with. */
_Static_assert(offsetof(lg_model_config, init) == offsetof(lg_model_config, train_eps) + sizeof(int) &&
                   offsetof(lg_model_config, alpha) == offsetof(lg_model_config, init) + sizeof(lg_init) &&
                   offsetof(lg_model_config, alpha) % sizeof(double) == 0,
               "lg_model_config.init must fill the padding before alpha (checkpoint layout)");

/* The model and training configurations of a checkpoint (either layout);
 * LG_EPARSE / LG_EINVAL naming what is missing or of another size. */
static lg_status lg__section_configs(const lg_ckpt *c, const char *path, lg_model_config *mc, lg_train_config *tc) {
    const lg_ckpt_section *sm = lg__ckpt_find(c, LG__CK_MODEL), *st = lg__ckpt_find(c, LG__CK_TRAIN);
    if (sm && st && sm->length == sizeof(lg__model_config_v0) && st->length == sizeof(lg__train_config_v0)) {
        lg__model_config_v0 m;
        lg__train_config_v0 t;
        memcpy(&m, sm->data, sizeof m);
        memcpy(&t, st->data, sizeof t);
        if (!(m.kind >= 0 && m.kind <= LG_MODEL_GAT_CLASSIC))
            return lg__error(LG_EPARSE, "%s: model kind %d unknown to the first checkpoint format", path, (int)m.kind);
        lg_model_config_default(mc, m.kind); /* the new fields */
        mc->layers = m.layers;
        mc->hidden = m.hidden;
        mc->heads = m.heads;
        mc->att_norm = m.att_norm;
        mc->node_norm = m.node_norm;
        mc->residual = m.residual;
        mc->lip_scale = m.lip_scale;
        mc->gate = m.gate;
        mc->dropout = m.dropout;
        mc->att_dropout = m.att_dropout;
        mc->self_loops = m.self_loops;
        mc->feature_norm_row = m.feature_norm_row;
        lg_train_config_default(tc);
        tc->epochs = t.epochs;
        tc->lr = t.lr;
        tc->weight_decay = t.weight_decay;
        tc->plateau = t.plateau;
        tc->patience = t.patience;
        tc->seed = t.seed;
        tc->missing = t.missing;
        tc->explode_threshold = t.explode_threshold;
        tc->explode_growth = t.explode_growth;
        tc->explode_window = t.explode_window;
        tc->stop_on_explosion = t.stop_on_explosion;
        tc->batch_size = 0; /* full batch, the only kind then */
        return LG_OK;
    }
    const void *d = NULL;
    LG_CHECK(lg__section(c, path, LG__CK_MODEL, sizeof *mc, &d));
    memcpy(mc, d, sizeof *mc);
    LG_CHECK(lg__section(c, path, LG__CK_TRAIN, sizeof *tc, &d));
    memcpy(tc, d, sizeof *tc);
    return LG_OK;
}

lg_status lg_checkpoint_config(const char *path, lg_model_config *mc, lg_train_config *tc) {
    lg_ckpt *c = NULL;
    if (!mc || !tc) return lg__error(LG_EINVAL, "lg_checkpoint_config: mc or tc is NULL");
    LG_CHECK(lg__ckpt_load(&c, path));
    lg_status st = lg__section_configs(c, path, mc, tc);
    if (st == LG_OK) st = lg_model_config_check(mc);
    lg__ckpt_free(c);
    return st;
}

/* The restored values must make sense too, not only the file's checksum (which
 * stops accidents, not a crafted or re-summed file): finite parameters and Adam
 * moments (second moments >= 0), and a training and detector state in range. */
static lg_status lg__restored_check(const char *path, const void *params, const void *m1, const void *m2, size_t np,
                                    const void *state, const void *detect, int L) {
    const void *arrays[3] = {params, m1, m2};
    static const char *const names[3] = {"parameter", "Adam first moment", "Adam second moment"};
    for (int a = 0; a < 3; a++) {
        size_t k = lg__bad_float(arrays[a], np, a == 2);
        if (k < np)
            return lg__error(LG_EPARSE,
                             "%s: checkpoint %s %zu is not a finite number%s (the run that saved it diverged, or the "
                             "file is damaged or crafted)", path, names[a], k, a == 2 ? " >= 0" : "");
    }
    lg__train_state s;
    int64_t dh[2];
    memcpy(&s, state, sizeof s);
    memcpy(dh, detect, sizeof dh);
    const char *bad = NULL;
    if (s.epoch < 0) bad = "negative epoch count";
    else if (!(s.lr > 0) || !isfinite(s.lr)) bad = "learning rate not a finite number > 0";
    else if (s.plateau_bad < 0 || s.stop_bad < 0) bad = "negative scheduler counter";
    else if ((unsigned)s.stopped_early > 1 || (unsigned)s.exploded > 1) bad = "flag neither 0 nor 1";
    else if (s.best_epoch < -1 || s.best_epoch > s.epoch) bad = "best epoch out of range";
    else if (s.explode_epoch < -1 || s.explode_epoch > s.epoch || s.explode_layer < -1 || s.explode_layer >= L)
        bad = "explosion epoch or layer out of range";
    else if (!memchr(s.explode_reason, 0, sizeof s.explode_reason)) bad = "explosion message not terminated";
    else if (dh[0] < 0 || dh[0] > s.epoch || (uint64_t)dh[1] > 1) bad = "explosion detector state out of range";
    if (bad) return lg__error(LG_EPARSE, "%s: checkpoint training state: %s (a damaged or crafted file)", path, bad);
    return LG_OK;
}

lg_status lg_trainer_load(lg_trainer *t, const char *path) {
    lg_ckpt *c = NULL;
    const void *d = NULL;
    lg_status st = LG_OK;
    if (!t || !path) return lg__error(LG_EINVAL, "lg_trainer_load: NULL argument");
    LG_CHECK(lg__ckpt_load(&c, path));
    lg_model_config mc;
    lg_train_config tc;
    LG_TRY(lg__section_configs(c, path, &mc, &tc));
    if (!lg__model_config_equal(&mc, &t->mc)) {
        char diff[384] = "";
        lg__model_config_diff(diff, sizeof diff, &mc, &t->mc);
        st = lg__error(LG_EINVAL, "%s: checkpoint of another model: %s", path, diff);
        goto fail;
    }
    if (tc.seed != t->tc.seed || tc.missing != t->tc.missing || tc.batch_size != t->tc.batch_size ||
        tc.explode_window != t->tc.explode_window) { /* (the detector keeps window + 1 epochs of norms) */
        st = lg__error(LG_EINVAL,
                       "%s: checkpoint made with --seed %llu --missing %g --batch-size %d --explode-window %d, this run "
                       "has --seed %llu --missing %g --batch-size %d --explode-window %d",
                       path, (unsigned long long)tc.seed, tc.missing, tc.batch_size, tc.explode_window,
                       (unsigned long long)t->tc.seed, t->tc.missing, t->tc.batch_size, t->tc.explode_window);
        goto fail;
    }
    lg__data_fp fp, mine;
    lg__fingerprint(t->ds, &mine);
    LG_TRY(lg__section(c, path, LG__CK_DATA, sizeof fp, &d));
    memcpy(&fp, d, sizeof fp);
    if (memcmp(&fp, &mine, sizeof fp) != 0) {
        char what[160];
        if (fp.n == mine.n && fp.nnz == mine.nnz && fp.d == mine.d && fp.classes == mine.classes &&
            fp.n_train == mine.n_train && fp.n_val == mine.n_val && fp.n_test == mine.n_test)
            snprintf(what, sizeof what, "the same sizes, but other labels, splits or edges: data made from a seed, "
                     "as --trees or --sbm, need the checkpoint's --seed");
        else
            snprintf(what, sizeof what, "%lld nodes, %lld edges, %lld features, %lld classes, splits %lld / %lld / %lld",
                     (long long)fp.n, (long long)fp.nnz, (long long)fp.d, (long long)fp.classes,
                     (long long)fp.n_train, (long long)fp.n_val, (long long)fp.n_test);
        st = lg__error(LG_EINVAL, "%s: checkpoint of another data set (%s); this is %s (%lld nodes, %lld edges, %lld "
                       "features, %lld classes, splits %lld / %lld / %lld)", path, what, lg__name(t->ds->name),
                       (long long)mine.n, (long long)mine.nnz, (long long)mine.d, (long long)mine.classes,
                       (long long)mine.n_train, (long long)mine.n_val, (long long)mine.n_test);
        goto fail;
    }
    lg_idx np = lg__model_nparams_f32(t->model);
    const void *pp = NULL, *p1 = NULL, *p2 = NULL, *ps = NULL, *pd = NULL, *ph = NULL, *pm = NULL;
    size_t hist = sizeof(double) * (size_t)(t->det.o.window + 1) * (size_t)(t->L ? t->L : 1);
    LG_TRY(lg__section(c, path, LG__CK_PARAMS, sizeof(float) * (uint64_t)np, &pp));
    LG_TRY(lg__section(c, path, LG__CK_M1, sizeof(float) * (uint64_t)np, &p1));
    LG_TRY(lg__section(c, path, LG__CK_M2, sizeof(float) * (uint64_t)np, &p2));
    LG_TRY(lg__section(c, path, LG__CK_STATE, sizeof t->s, &ps));
    LG_TRY(lg__section(c, path, LG__CK_DETECT, 2 * sizeof(int64_t), &pd));
    LG_TRY(lg__section(c, path, LG__CK_DETECT + 100, hist, &ph));
    LG_TRY(lg__section(c, path, LG__CK_MAXNORM, sizeof(double) * 2 * (uint64_t)t->L, &pm));
    const void *pio = NULL; /* (absent before the input and output layers' maxima were kept) */
    if (lg__ckpt_find(c, LG__CK_IOMAX)) {
        LG_TRY(lg__section(c, path, LG__CK_IOMAX, sizeof t->max_io, &pio));
        double io[2];
        memcpy(io, pio, sizeof io);
        if (io[0] < 0 || io[1] < 0) { /* (NAN: none, or a norm that was NaN) */
            st = lg__error(LG_EPARSE, "%s: a negative gradient-norm maximum (a damaged or crafted file)", path);
            goto fail;
        }
    }
    LG_TRY(lg__restored_check(path, pp, p1, p2, (size_t)np, ps, pd, t->L));
    /* everything verified: now change t */
    memcpy(lg__model_params_f32(t->model), pp, sizeof(float) * (size_t)np);
    memcpy(t->m1, p1, sizeof(float) * (size_t)np);
    memcpy(t->m2, p2, sizeof(float) * (size_t)np);
    memcpy(&t->s, ps, sizeof t->s);
    /* another learning rate than the checkpoint's run was given: it applies
     * from the next epoch (the checkpoint's current one, which --plateau may
     * have lowered, was kept, and the new one ignored) */
    if (tc.lr != t->tc.lr) t->s.lr = t->tc.lr;
    int64_t dh[2];
    memcpy(dh, pd, sizeof dh);
    t->det.seen = (long)dh[0];
    t->det.fired = (int)dh[1];
    t->det.epoch = t->s.explode_epoch;
    t->det.layer = t->s.explode_layer;
    memcpy(t->det.hist, ph, hist);
    memcpy(t->max_norm, pm, sizeof(double) * (size_t)t->L);
    memcpy(t->max_att, (const double *)pm + t->L, sizeof(double) * (size_t)t->L);
    t->max_io[0] = t->max_io[1] = NAN; /* (a checkpoint written before this record) */
    if (pio) memcpy(t->max_io, pio, sizeof t->max_io);
fail:
    lg__ckpt_free(c);
    return st;
}

/* ------------------------------------------------------------------------- */
/* Read-outs                                                                  */
/* ------------------------------------------------------------------------- */

/* No silent NaN: LG_ENUMERIC naming where the last forward's outputs (count
 * log-probabilities) stop being finite, e.g. weights so large that the pass
 * overflows. O(count). */
static lg_status lg__check_outputs(const lg_trainer *t, lg_idx count) {
    const float *lp = lg__model_logp_f32(t->model);
    for (lg_idx k = 0; k < count; k++)
        if (isnan(lp[k]) || lp[k] == INFINITY) {
            int at = lg__model_first_nonfinite_f32(t->model);
            char where[64];
            if (at == -2) snprintf(where, sizeof where, "the input layer");
            else if (at >= 0 && at < t->L) snprintf(where, sizeof where, "attention layer %d", at);
            else snprintf(where, sizeof where, "the output layer");
            return lg__error(LG_ENUMERIC, "the model's outputs are not finite numbers (first in %s): its weights "
                             "overflow the forward pass", where);
        }
    return LG_OK;
}

lg_status lg_trainer_predict(lg_trainer *t, float *logp, float *hidden) {
    if (!t) return lg__error(LG_EINVAL, "lg_trainer_predict: NULL argument");
    const lg_idx C = t->ds->n_classes, H = lg__model_hidden_width_f32(t->model);
    if (t->batch) { /* graph by graph: graph k is nodes [lo, hi), all read out */
        for (lg_idx k = 0; k < lg__batcher_count(&t->bat, -1); k++) {
            lg__batch bt;
            lg_idx lo, hi;
            lg__batcher_fill(&t->bat, -1, 0, k, &bt);
            lg__batcher_span(&t->bat, k, &lo, &hi);
            LG_CHECK(lg__model_bind_f32(t->model, &bt));
            LG_CHECK(lg__model_forward_f32(t->model, 0, t->tc.seed, 0));
            LG_CHECK(lg__check_outputs(t, (hi - lo) * C));
            if (logp) memcpy(logp + lo * C, lg__model_logp_f32(t->model), sizeof(float) * (size_t)((hi - lo) * C));
            if (hidden)
                memcpy(hidden + lo * H, lg__model_hidden_f32(t->model), sizeof(float) * (size_t)((hi - lo) * H));
        }
        return LG_OK;
    }
    LG_CHECK(lg__model_forward_f32(t->model, 0, t->tc.seed, 0));
    const lg_idx n = t->ds->graph->n;
    LG_CHECK(lg__check_outputs(t, n * C));
    if (logp) memcpy(logp, lg__model_logp_f32(t->model), sizeof(float) * (size_t)(n * C));
    if (hidden) memcpy(hidden, lg__model_hidden_f32(t->model), sizeof(float) * (size_t)(n * H));
    return LG_OK;
}

lg_idx lg_trainer_classes(const lg_trainer *t) { return t ? t->ds->n_classes : 0; }
lg_idx lg_trainer_hidden_width(const lg_trainer *t) { return t ? lg__model_hidden_width_f32(t->model) : 0; }
int lg_trainer_layers(const lg_trainer *t) { return t ? t->L : 0; }

lg_status lg_trainer_params(const lg_trainer *t, const float **params, const float **grads, lg_idx *n) {
    if (!t || !params || !n) return lg__error(LG_EINVAL, "lg_trainer_params: t, params or n is NULL");
    *params = lg__model_params_f32(t->model);
    if (grads) *grads = lg__model_grads_f32(t->model);
    *n = lg__model_nparams_f32(t->model);
    return LG_OK;
}

lg_status lg_trainer_layer_params(const lg_trainer *t, int l, lg_idx *off, lg_idx *len) {
    if (!t || !off || !len) return lg__error(LG_EINVAL, "lg_trainer_layer_params: t, off or len is NULL");
    if (l < 0 || l >= t->L) return lg__error(LG_EINVAL, "lg_trainer_layer_params: layer %d of %d", l, t->L);
    const lg__layer_range r = lg__model_layer_range_f32(t->model, l);
    *off = r.off;
    *len = r.len;
    return LG_OK;
}

lg_status lg_trainer_set_params(lg_trainer *t, const float *params, lg_idx n) {
    if (!t || !params) return lg__error(LG_EINVAL, "lg_trainer_set_params: t or params is NULL");
    const lg_idx np = lg__model_nparams_f32(t->model);
    if (n != np) return lg__error(LG_EINVAL, "lg_trainer_set_params: %lld values for a model of %lld", (long long)n,
                                  (long long)np);
    const size_t bad = lg__bad_float(params, (size_t)n, 0);
    if (bad < (size_t)n) return lg__error(LG_EINVAL, "lg_trainer_set_params: value %zu is not finite", bad);
    float *p = lg__model_params_f32(t->model);
    if (p != params) memmove(p, params, sizeof(float) * (size_t)n); /* (its own block: nothing to do) */
    return LG_OK;
}
lg_idx lg_trainer_layer_heads(const lg_trainer *t, int l) {
    return (t && l >= 0 && l < t->L) ? lg__model_layer_heads_f32(t->model, l) : 0;
}
lg_status lg_trainer_attention(const lg_trainer *t, int l, float *att) {
    if (!t) return lg__error(LG_EINVAL, "lg_trainer_attention: t is NULL");
    if (t->batch)
        return lg__error(LG_EUNSUPPORTED, "attention weights of the whole graph: this model was trained in mini-batches "
                         "(--batch-size %d); its checkpoint with --batch-size 0 is another run", t->tc.batch_size);
    return lg__model_attention_f32(t->model, l, att);
}
lg_status lg_trainer_act_rms(const lg_trainer *t, double *rms, int cap) {
    if (!t || !rms) return lg__error(LG_EINVAL, "lg_trainer_act_rms: NULL argument");
    const int L = lg_trainer_layers(t);
    if (cap < L + 1) return lg__error(LG_EINVAL, "lg_trainer_act_rms: room for %d values, the model has %d", cap, L + 1);
    if (t->batch)
        return lg__error(LG_EUNSUPPORTED, "activations of the whole graph: this model was trained in mini-batches "
                         "(--batch-size %d); its checkpoint with --batch-size 0 is another run", t->tc.batch_size);
    lg__model_act_rms_f32(t->model, rms);
    return LG_OK;
}
const lg_graph *lg_trainer_graph(const lg_trainer *t) { return !t || t->batch ? NULL : lg__model_graph_f32(t->model); }

void lg_trainer_memory(const lg_trainer *t, lg_trainer_mem *m) {
    if (!m) return;
    memset(m, 0, sizeof *m);
    if (!t) return;
    lg_idx np = lg__model_nparams_f32(t->model);
    m->params = sizeof(float) * (size_t)np * 4;
    lg__model_memory_f32(t->model, &m->activations, &m->workspace, &m->other);
    m->other += lg__features_bytes(&t->mc, &t->tc, &t->xv) + t->bat.bytes;
    m->total = m->params + m->activations + m->workspace + m->other;
}

lg_status lg_trainer_estimate(const lg_model_config *mc, const lg_train_config *tc, const lg_dataset *ds,
                              lg_trainer_mem *m) {
    if (!m) return lg__error(LG_EINVAL, "lg_trainer_estimate: NULL argument");
    memset(m, 0, sizeof *m);
    LG_CHECK(lg__dataset_check_arg(ds, "lg_trainer_estimate"));
    LG_CHECK(lg_model_config_check(mc));
    LG_CHECK(lg_train_config_check(tc));
    lg_idx np;
    /* the features the model sees have the data set's structure */
    lg__batcher b;
    memset(&b, 0, sizeof b);
    if (tc->batch_size > 0) LG_CHECK(lg__batcher_init(&b, ds, ds->features, mc, tc->batch_size, 1));
    const lg_idx cap[3] = {b.n_cap, b.nnz_cap, b.t_cap};
    LG_CHECK(lg__model_plan_f32(mc, ds, ds->features, tc->batch_size > 0 ? cap : NULL, &np, &m->activations,
                                &m->workspace, &m->other));
    m->params = sizeof(float) * (size_t)np * 4;
    m->other += lg__features_bytes(mc, tc, ds->features) + b.bytes;
    m->total = m->params + m->activations + m->workspace + m->other;
    return LG_OK;
}

/* Internal accessors (train/trainer_internal.h). */
lg__model_f32 *lg__trainer_model(lg_trainer *t) { return t->model; }
const lg_model_config *lg__trainer_model_config(const lg_trainer *t) { return &t->mc; }
const lg_dataset *lg__trainer_dataset(const lg_trainer *t) { return t->ds; }
void lg__trainer_moments(lg_trainer *t, float **m1, float **m2) {
    *m1 = t->m1;
    *m2 = t->m2;
}
const lg_features *lg__trainer_features(const lg_trainer *t) { return &t->xv; }
