/*
 * The model stack (src/train/model.h), generic over the scalar type: compiled
 * by model_f32.c and model_f64.c. Names: LG_FN(lg__model_init) etc.
 */
#include <math.h>
#include <string.h>

#include "attention/gat_internal.h"
#include "attention/gt_internal.h"
#include "attention/l2att_internal.h"
#include "conv/conv_internal.h"
#include "core/internal.h"
#include "graph/graph_internal.h"
#include "core/real.h"
#include "nn/nn_common.h"
#include "train/model.h"

#define LG_MODEL LG_FN(lg__model)

/* After-layer activations. */
enum { LG__ACT_NONE = 0, LG__ACT_ELU, LG__ACT_RELU };

/* One layer and what it keeps for backward. */
typedef struct {
    int gt;               /* 1: graph-transformer layer, 0: GAT               */
    int conv;             /* 1: baseline layer (GCN, GIN, GGNN, GCNII)        */
    lg_conv_config cc;    /* its configuration (baseline)                     */
    lg_conv_layout cl;    /* offsets inside its block (baseline)              */
    lg_conv_cache *ccache; /* the layer's own activations (baseline)          */
    lg_gat_config gc;     /* its configuration (GAT)                          */
    lg_gat_layout gl;     /* offsets inside its block (GAT)                   */
    lg_gat_cache *cache;  /* the layer's own activations (GAT)                */
    lg_gt_config tc;      /* its configuration (GT)                           */
    lg_gt_layout tl;      /* offsets inside its block (GT)                    */
    lg_gt_cache *tcache;  /* the layer's own activations (GT)                 */
    int l2;               /* 1: L2-attention layer (lipgnn/l2att.h)           */
    lg_l2att_config lc;   /* its configuration (L2)                           */
    lg_l2att_layout ll;   /* offsets inside its block (L2)                    */
    lg_l2att_cache *lcache; /* the layer's own activations (L2)               */
    int cos;              /* 1: cosine block (SCSA, CenterNorm, weighted residual) */
    lg_cosatt_config sc;  /* its configuration (cosine)                       */
    lg_cosatt_layout sl;  /* offsets inside its SCSA block (cosine)           */
    lg_cosatt_cache *scache; /* the layer's own activations (cosine)          */
    lg_idx cn_gain, cn_bias, alpha; /* cosine: CenterNorm gain, bias, residual alpha */
    lg_real *cn;          /* n x w_in  CenterNorm output (cosine)             */
    lg_idx off;           /* offset of its block in the parameter block       */
    lg_idx count;         /* its parameters, LayerNorm included               */
    lg_idx ln_gain, ln_bias; /* offsets of the LayerNorm gain and bias (or -1) */
    lg_idx w_in, w_out;   /* input and output widths                          */
    int actf;             /* LG__ACT_*: ELU after it (attention, all but the last),
                             ReLU (gcn, gin: all but the last; gcnii: all), none (ggnn) */
    int pn;               /* PairNorm after it (not after gcn's last: logits)  */
    int residual;         /* out = z + input                                  */
    lg_real *drop;        /* n x w_in   dropout(input) (p > 0) of a block that
                             does not share m->dropin (lg__drop_shared), and
                             of any block alone (lg__model_block_forward,
                             made on first use); else NULL                    */
    const lg_real *lin;   /* the layer's input in the last forward: drop, or,
                             in the model's forward, m->dropin where shared
                             (training, p > 0), and when the dropout is the
                             identity the block's input itself (no copy)     */
    const lg_real *lsrc;  /* the block's input in the last forward: what its
                             dropout read (the block before's out, or h0),
                             from which the backward makes m->dropin again   */
    lg_real *act;         /* n x w_out  layer output                          */
    lg_real *ln;          /* n x w_out  LayerNorm output (or NULL)            */
    lg_real *ln_mean, *ln_rstd; /* n each (or NULL)                           */
    lg_real *z;           /* = ln or act: the ELU'd tensor (in place)         */
    lg_real *out;         /* n x w_out  after residual and PairNorm (may = z) */
    lg_real *pn_rstd;     /* n (or NULL)                                      */
} LG_FN(lg__layer);

struct LG_MODEL {
    lg_model_config c;     /* configuration                                    */
    lg_idx n, f, classes;  /* nodes, input features, classes                  */
    int L;                 /* attention layers                                 */
    const int32_t *labels; /* n labels (the data set's)                        */
    const lg_idx *gptr;    /* graph segments for PairNorm                      */
    lg_idx n_graphs;
    lg_graph *g, *gT;      /* the model's graph (self-loops per config), transpose
                              (gT == g when sym)                               */
    lg__epos *tpos, *tedge; /* nnz each: the edge map of (g, gT) lent to the GAT
                              and GT layers (att_cache.h), made once (at each
                              bind for a batch model); NULL if no such layer;
                              tedge == tpos when sym                           */
    int sym;               /* 1: g (not a batch's) is symmetric, so it is its own
                              transpose and its edge map an involution: one
                              copy of each                                     */
    lg_idx *tnext;         /* n_cap: its counting-sort cursors (batch model)   */
    const lg_features *x;  /* input features                                   */
    lg_real *xd;           /* dense x as lg_real, when needed (or NULL)        */
    int sparse_in;         /* input linear takes sparse x                      */
    lg_idx hid;            /* width of h0                                      */
    lg_idx n_params;
    lg_real *params, *grads;
    lg_idx w_in_off, b_in_off, w_out_off, b_out_off; /* -1 when absent         */
    LG_FN(lg__layer) *layer;
    int io;                /* input and output linears (all but gat-classic, gcn) */
    int in_relu;           /* gcnii: h0 = ReLU(X W_in + b_in)                  */
    int io_drop;           /* gcnii: dropout on X (dense) and before the output linear */
    lg_real *xdrop;        /* n x f: dropout(X) (io_drop)                      */
    lg_real *odrop;        /* n x w_last: dropout(cur) before the output linear (io_drop) */
    lg_real *h0;           /* n x hid (or = xd for gat-classic and gcn)        */
    lg_real *dropin;       /* n x the widest input of the blocks that share it
                              (lg__drop_shared: all but the first, in a model
                              of three blocks or more): their input dropout
                              in the model's forward (training, p > 0), one
                              block's at a time, made again from its input
                              (the layer's lsrc) before the block's backward
                              reads it: the mask is a hash of the element's
                              index, so the bits are the forward's (not kept
                              per block: DeepGAT 30 keeps 19 MiB less,
                              bench/README.md); NULL without dropout or with
                              two blocks or fewer                            */
    lg_real *dh0;          /* n x hid: gcnii's gradient of h0 over the layers (or NULL) */
    lg_real *logits, *logp; /* n x classes                                     */
    lg_real *buf[5];       /* backward scratch, n x maxw each: [0], [1]
                              the gradients between blocks ([1] NULL when
                              one_grad), [4] scratch, [2] PairNorm's and [3]
                              LayerNorm's (or NULL)                            */
    int one_grad;          /* 1: every block that passes a gradient on is a
                              plain GAT, GT or L2 block (lg__block_in_place),
                              whose backward writes it over its own output's
                              gradient: one buffer between blocks, buf[0]     */
    void *ws;              /* backward workspace shared by the attention layers'
                              caches (their backward passes run one at a time):
                              the largest layer's, not one per layer          */
    size_t ws_bytes;
    lg_real *pn_work;      /* n                                                */
    lg_idx maxw;           /* the widest gradient between blocks: the blocks'
                              widths but the first block's input (gat-classic,
                              gcn), and the classes (not batch)              */
    size_t act_bytes, work_bytes; /* activations kept for backward; backward scratch */
    size_t other_bytes;    /* the model's graphs and their edge map              */
    int plan;              /* 1: sizes only, the big buffers are not allocated    */
    int batch;             /* 1: a batch model: g, gT, labels, gptr borrowed from
                              the bound batch (lg__model_bind)                    */
    lg_idx n_cap, nnz_cap; /* batch model: largest batch (nodes, edges)           */
    lg_idx r_cap;          /* batch model: most nodes read out                    */
    const lg_idx *read;    /* batch model: the nodes read out (logp rows)         */
    lg_idx nout;           /* rows of logits and logp: n, or the nodes read out   */
    const int32_t *olabels; /* their labels: labels, or rlabels                   */
    int32_t *rlabels;      /* batch model: r_cap labels of the nodes read out     */
    lg_real *hread, *dhread; /* batch model: r_cap x D, their last hidden rows and gradient */
    lg_real *dlog;         /* r_cap x classes: dL/d logits                        */
    int dlog_zero;         /* 1: dlog is all zero (as allocated; backward zeroes
                              the rows it wrote once it is done with them)     */
    const lg_idx *lrows;   /* the rows of logp the last forward computed
                              (lg__model_forward_rows), NULL: all of them    */
    lg_idx nlrows;
    int lrows_inc;         /* 1: lrows is strictly increasing (lg__model_eval
                              then takes any list of rows in it)             */
    int lout;              /* 1: so were its logits (the output layer on lrows
                              only, lg__out_rows_forward)                    */
    lg_real *oblk;         /* whole-graph model with an output layer:
                              LG__OUT_BLOCK x (2 D + classes), the blocks of
                              listed rows it gathers                          */
};

/* A linear map's weights w (fan_in x fan_out) and bias b (fan_out), in scheme
 * (lg_init): Glorot-uniform w and b left at 0, or nn.Linear's default, w then
 * b U(+-1/sqrt(fan_in)). */
static void LG_FN(lg__linear_init)(lg_real *w, lg_real *b, lg_idx fan_in, lg_idx fan_out, lg_init scheme,
                                   lg_rng *rng) {
    const int torch = scheme == LG_INIT_PYTORCH;
    const double bound = torch ? 1.0 / sqrt((double)fan_in) : sqrt(6.0 / (double)(fan_in + fan_out));
    for (lg_idx k = 0; k < fan_in * fan_out; k++) w[k] = (lg_real)((2 * lg_rng_double(rng) - 1) * bound);
    if (torch)
        for (lg_idx k = 0; k < fan_out; k++) b[k] = (lg_real)((2 * lg_rng_double(rng) - 1) * bound);
}

void LG_FN(lg__model_free)(LG_MODEL *m) {
    if (!m) return;
    if (m->layer)
        for (int l = 0; l < m->L; l++) {
            LG_FN(lg__layer) *y = &m->layer[l];
            lg_gat_cache_free(y->cache);
            lg_gt_cache_free(y->tcache);
            lg_cosatt_cache_free(y->scache);
            lg__free(y->cn);
            lg_conv_cache_free(y->ccache);
            lg_l2att_cache_free(y->lcache);
            lg__free(y->drop);
            lg__free(y->act);
            lg__free(y->ln);
            lg__free(y->ln_mean);
            lg__free(y->ln_rstd);
            if (y->out != y->z) lg__free(y->out);
            lg__free(y->pn_rstd);
        }
    lg__free(m->layer);
    if (!m->batch) {
        if (m->gT != m->g) lg_graph_free(m->gT);
        lg_graph_free(m->g);
    }
    if (m->tedge != m->tpos) lg__free(m->tedge);
    lg__free(m->tpos);
    lg__free(m->tnext);
    if (m->h0 != m->xd) lg__free(m->h0);
    lg__free(m->xd);
    lg__free(m->params);
    lg__free(m->grads);
    lg__free(m->logits);
    lg__free(m->logp);
    lg__free(m->ws); /* after the caches that borrow it */
    for (int k = 0; k < 5; k++) lg__free(m->buf[k]);
    lg__free(m->pn_work);
    lg__free(m->dh0);
    lg__free(m->dropin);
    lg__free(m->xdrop);
    lg__free(m->odrop);
    lg__free(m->rlabels);
    lg__free(m->hread);
    lg__free(m->dhread);
    lg__free(m->oblk);
    lg__free(m->dlog);
    lg__free(m);
}

/* Allocates an n x w buffer, counting its bytes; in plan mode only counts. */
static lg_status LG_FN(lg__buf)(const LG_MODEL *m, lg_real **p, lg_idx n, lg_idx w, size_t *bytes, const char *what) {
    lg_idx count = n * w;
    *bytes += (size_t)count * sizeof(lg_real);
    if (m->plan) {
        *p = NULL;
        return LG_OK;
    }
    *p = lg__calloc((size_t)(count > 0 ? count : 1), sizeof(lg_real));
    if (!*p) return lg__nomem(what);
    return LG_OK;
}

/* 1 if the backward of block y runs in place (lg__block_backward): an
 * attention layer (GAT, GT, L2) followed by ELU or nothing, without
 * LayerNorm, residual or PairNorm, whose input gradient is needed: then
 * dL/d z goes through the ELU in the incoming gradient's buffer, the layer
 * writes its input gradient to the outgoing one and the dropout's backward
 * runs there in place, so no third buffer is needed. */
static int LG_FN(lg__block_in_place)(const LG_FN(lg__layer) *y, int need_din) {
    return need_din && !y->conv && !y->cos && !y->pn && !y->residual && y->ln_gain < 0 &&
           (y->actf == LG__ACT_ELU || y->actf == LG__ACT_NONE);
}

/* 1 if the backward needs block l's input gradient: every block's but the
 * first's when there is no input linear (gat-classic, gcn: the features'
 * gradient is never used). */
static int LG_FN(lg__need_din)(const LG_MODEL *m, int l) { return !(l == 0 && !m->io); }

/* 1 if the model's forward runs block l's ELU and block l + 1's input
 * dropout as one pass (lg_elu_dropout_forward): block l ends with the ELU
 * (its output is z: no residual, PairNorm or cosine block). */
static int LG_FN(lg__fwd_fused)(const LG_MODEL *m, int l) {
    const LG_FN(lg__layer) *y = &m->layer[l];
    return l + 1 < m->L && y->actf == LG__ACT_ELU && !y->cos && y->out == y->z;
}

/* 1 if the model's backward runs block l + 1's input dropout backward and
 * block l's ELU backward as one pass (lg_dropout_elu_backward_inplace): both
 * blocks' backward run in place (lg__block_in_place) and block l has an ELU. */
static int LG_FN(lg__bwd_fused)(const LG_MODEL *m, int l) {
    return l + 1 < m->L && m->layer[l].actf == LG__ACT_ELU && LG_FN(lg__block_in_place)(&m->layer[l + 1], 1) &&
           LG_FN(lg__block_in_place)(&m->layer[l], LG_FN(lg__need_din)(m, l));
}

/* 1 if block l's input dropout writes the model's shared dropin, which its
 * backward writes again (training, p > 0): every block's after the first, when
 * the model has three blocks or more. Block 0's input is gat-classic's and
 * gcn's features, far wider than the blocks (a shared buffer as wide would be
 * a pass over them in the backward), and in a model of two blocks the shared
 * buffer would spare no memory. */
static int LG_FN(lg__drop_shared)(const LG_MODEL *m, int l) { return l > 0 && m->L > 2; }

/* 1 if the model's backward of block l runs block l - 1's pass of
 * lg__bwd_fused, on block l's input gradient, together with the making again
 * of its own dropped input (lg_dropout_elu_backward_remake: one mask for
 * both), in its layer's backward between the input gradient's product and
 * the weights' (lg__att_mid): block l's input in the last forward was the
 * shared dropin (lg__drop_shared, training with p > 0), dropped from block
 * l - 1's ELU output. Block l - 1's backward then skips that pass. */
static int LG_FN(lg__bwd_remade)(const LG_MODEL *m, int l) {
    return l > 0 && l < m->L && m->dropin && m->layer[l].lin == m->dropin && m->layer[l].lsrc == m->layer[l - 1].z &&
           LG_FN(lg__bwd_fused)(m, l - 1);
}

/* The step of lg__bwd_remade, run by the layer's backward (lg__att_mid). */
typedef struct {
    lg_real *g, *d;     /* block l's input gradient (n x w_in, in place); m->dropin */
    const lg_real *z;   /* block l - 1's ELU output                              */
    lg_idx count;       /* n w_in                                                */
    double p;           /* the dropout rate                                      */
    uint64_t seed, ctr; /* the mask's seed and counter (block l's input dropout) */
    int training;
} LG_FN(lg__remake_ctx);

static lg_status LG_FN(lg__remake_step)(void *v) {
    const LG_FN(lg__remake_ctx) *c = v;
    return LG_FN(lg_dropout_elu_backward_remake)(c->g, c->d, c->z, c->count, c->p, c->seed, c->ctr, c->training);
}

/* Directed edges of g once self-loops are added (add) or removed. O(nnz). */
static lg_idx LG_FN(lg__loops_nnz)(const lg_graph *g, int add) {
    lg_idx loops = 0;
    for (lg_idx i = 0; i < g->n; i++)
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) loops += g->j[e] == i;
    return add ? g->nnz - loops + g->n : g->nnz - loops;
}

/* xd (n x f, lg_real) = the input features m->x, dense. */
static void LG_FN(lg__fill_dense)(LG_MODEL *m) {
    const lg_features *x = m->x;
    if (x->kind == LG_FEAT_SPARSE) {
        memset(m->xd, 0, sizeof(lg_real) * (size_t)(m->n * m->f));
        for (lg_idx i = 0; i < m->n; i++)
            for (lg_idx e = x->p[i]; e < x->p[i + 1]; e++) m->xd[i * m->f + x->j[e]] = (lg_real)x->x[e];
    } else {
        for (lg_idx k = 0; k < m->n * m->f; k++) m->xd[k] = (lg_real)x->x[k];
    }
}

/* 1 if block y's attention layer is a GAT, a graph transformer or an L2
 * attention: the layers that share the model's backward workspace and borrow
 * its edge map. */
static int LG_FN(lg__layer_borrows)(const LG_FN(lg__layer) *y) { return !(y->conv || y->cos); }

/* 1 if any block of m borrows (the model then makes the map). */
static int LG_FN(lg__model_lends)(const LG_MODEL *m) {
    for (int l = 0; l < m->L; l++)
        if (LG_FN(lg__layer_borrows)(&m->layer[l])) return 1;
    return 0;
}

/* Lends the edge map of (m->g, m->gT) to every GAT, GT and L2 layer's cache;
 * a full-graph model's graphs, checked at its build and never changed, are
 * marked checked (a batch's are not: the layers check them), and lent so to
 * the convolution layers' caches too (gT made from g at the build). */
static void LG_FN(lg__model_lend_map)(LG_MODEL *m) {
    const lg__att_tmap map = {m->g, m->gT, m->tpos, m->tedge, !m->batch};
    for (int l = 0; l < m->L; l++) {
        if (m->layer[l].ccache && !m->batch) lg__conv_cache_lend_checked(m->layer[l].ccache, m->g, m->gT);
        if (m->layer[l].cache) lg__gat_cache_lend_tmap(m->layer[l].cache, &map);
        if (m->layer[l].tcache) lg__gt_cache_lend_tmap(m->layer[l].tcache, &map);
        if (m->layer[l].lcache) lg__l2att_cache_lend_tmap(m->layer[l].lcache, &map);
    }
}

/* lg__model_init, or with plan = 1 a model that only knows its sizes
 * (act_bytes, work_bytes, other_bytes, n_params): every big buffer, the
 * graphs and the caches are counted, not allocated. cap (not NULL): a batch
 * model for up to cap[0] nodes and cap[1] edges, without graphs of its own. */
static lg_status LG_FN(lg__model_build)(LG_MODEL **out, const lg_model_config *c, const lg_dataset *ds,
                                        const lg_features *x, lg_rng *rng, int plan, const lg_idx *cap) {
    lg_status st = LG_OK;
    LG_MODEL *m = NULL;
    *out = NULL;
    LG_CHECK(lg_model_config_check(c));
    LG_CALLOC(m, 1, "model");
    m->plan = plan;
    m->c = *c;
    m->batch = cap != NULL;
    m->n = m->batch ? cap[0] : ds->graph->n;
    m->n_cap = m->n;
    m->f = x->d;
    m->classes = ds->n_classes;
    m->labels = ds->labels;
    m->gptr = ds->graph_ptr;
    m->n_graphs = ds->n_graphs;
    m->x = x;
    m->L = c->kind == LG_MODEL_GAT_CLASSIC ? 2 : c->layers;
    m->io = c->kind != LG_MODEL_GAT_CLASSIC && c->kind != LG_MODEL_GCN;
    m->in_relu = c->kind == LG_MODEL_GCNII;
    m->io_drop = c->kind == LG_MODEL_GCNII;
    const int conv = c->kind >= LG_MODEL_GCN && c->kind <= LG_MODEL_GCNII;
    const int pn = c->node_norm == LG_NODE_NORM_PAIRNORM || c->node_norm == LG_NODE_NORM_PAIRNORM_SI;
    if (!m->batch && x->n != m->n) { st = lg__error(LG_EINVAL, "features have %lld rows for %lld nodes", (long long)x->n, (long long)m->n); goto fail; }
    if (m->classes < 1) { st = lg__error(LG_EINVAL, "data set %s has no classes", lg__name(ds->name)); goto fail; }
    const lg_idx nnz_g = m->batch ? cap[1] : LG_FN(lg__loops_nnz)(ds->graph, c->self_loops);
    m->nnz_cap = nnz_g;
    m->r_cap = m->batch ? cap[2] : m->n;
    m->nout = m->n;
    m->olabels = m->labels;
    if (m->batch) {
        m->labels = m->olabels = NULL;
        m->gptr = NULL;
        m->n_graphs = 0;
    } else {
        /* self-loops added or removed keep a graph symmetric or not */
        lg_idx *tnext = NULL; /* the check's workspace */
        LG_ALLOC(tnext, m->n, "symmetry check");
        m->sym = lg__graph_is_symmetric(ds->graph, tnext);
        lg__free(tnext);
        m->other_bytes += (m->sym ? 1 : 2) * sizeof(lg_idx) * (size_t)(m->n + 1 + nnz_g);
    }
    if (!plan && !m->batch) {
        LG_TRY(lg__graph_self_loops(ds->graph, c->self_loops, &m->g)); /* ds checked by the trainer */
        /* checked once here: the layers then skip their per-call checks of
         * this graph (its lent edge map says so: lg__model_lend_map) */
        LG_TRY(lg_graph_check(m->g));
        if (m->sym) m->gT = m->g;
        else LG_TRY(lg__graph_transpose(m->g, &m->gT));
    }

    /* input: gat-classic, gcn and dense features need x as lg_real */
    int classic = c->kind == LG_MODEL_GAT_CLASSIC;
    m->sparse_in = lg__model_takes_sparse(c, x);
    if (!m->sparse_in) {
        LG_TRY(LG_FN(lg__buf)(m, &m->xd, m->n, m->f, &m->act_bytes, "dense features"));
        if (!plan && !m->batch) LG_FN(lg__fill_dense)(m);
    }

    /* layers and the parameter layout */
    LG_CALLOC(m->layer, m->L, "model layers");
    lg_idx off = 0, w = m->io ? c->hidden : m->f;
    m->hid = w;
    m->w_in_off = m->b_in_off = m->w_out_off = m->b_out_off = -1;
    if (m->io) {
        m->w_in_off = off;
        off += m->f * c->hidden;
        m->b_in_off = off;
        off += c->hidden;
    }
    /* the gradient buffers between blocks hold dL/d(a block's input) and
     * dL/d(its output): not the input features' (gat-classic and gcn do not
     * compute it; the Lipschitz estimator widens them, lg__model_widen) */
    m->maxw = m->io ? w : 1;
    for (int l = 0; l < m->L; l++) {
        LG_FN(lg__layer) *y = &m->layer[l];
        int last = l == m->L - 1;
        if (c->kind == LG_MODEL_COSINE) {
            y->cos = 1;
            y->sc = lg_cosatt_config_default(w, c->heads, c->hidden, w);
            y->sc.spectral_init = 1;
            LG_TRY(lg_cosatt_layout_get(&y->sc, &y->sl));
            y->w_in = y->w_out = w;
            y->off = off;
            off += y->sl.count;
            y->cn_gain = off;
            y->cn_bias = off + w;
            y->alpha = off + 2 * w;
            off += 3 * w;
        } else if (c->kind == LG_MODEL_GT) {
            y->gt = 1;
            y->tc = lg_gt_config_default(w, c->heads, c->hidden);
            y->tc.norm = c->att_norm;
            y->tc.gate = c->gate;
            y->tc.att_dropout = c->att_dropout;
            LG_TRY(lg_gt_layout_get(&y->tc, &y->tl));
            y->w_in = w;
            y->w_out = lg_gt_out_dim(&y->tc);
            y->off = off;
            off += y->tl.count;
        } else if (c->kind == LG_MODEL_L2) { /* width w -> w, K heads of width hidden */
            y->l2 = 1;
            y->lc = lg_l2att_config_default(w, c->heads, c->hidden);
            LG_TRY(lg_l2att_layout_get(&y->lc, &y->ll));
            y->w_in = w;
            y->w_out = y->lc.out_dim;
            y->off = off;
            off += y->ll.count;
        } else if (conv) {
            static const lg_conv_kind ck[] = {LG_CONV_GCN, LG_CONV_GIN, LG_CONV_GGNN, LG_CONV_GCNII};
            y->conv = 1;
            y->cc = lg_conv_config_default(ck[c->kind - LG_MODEL_GCN], w, m->io ? c->hidden : last ? m->classes : c->hidden);
            y->cc.train_eps = c->train_eps;
            y->cc.alpha = c->alpha;
            y->cc.beta = log(c->lambda / (double)(l + 1) + 1);
            LG_TRY(lg_conv_layout_get(&y->cc, &y->cl));
            y->w_in = w;
            y->w_out = y->cc.out_dim;
            y->off = off;
            off += y->cl.count;
        } else {
        if (classic)
            y->gc = last ? lg_gat_config_default(w, 1, m->classes) : lg_gat_config_default(w, c->heads, c->hidden);
        else
            y->gc = lg_gat_config_default(w, c->heads, c->hidden);
        if (classic && last) y->gc.concat = 0;
        y->gc.norm = c->att_norm;
        y->gc.lip_scale = c->lip_scale;
        y->gc.att_dropout = c->att_dropout;
        LG_TRY(lg_gat_layout_get(&y->gc, &y->gl));
        y->w_in = w;
        y->w_out = lg_gat_out_dim(&y->gc);
        y->off = off;
        off += y->gl.count;
        if (y->gl.a_src != y->gl.a_dst + y->gc.heads * y->gc.head_dim) {
            st = lg__error(LG_EINVAL, "GAT layout: a_src does not follow a_dst");
            goto fail;
        }
        }
        y->ln_gain = y->ln_bias = -1;
        if (c->node_norm == LG_NODE_NORM_LAYERNORM) {
            y->ln_gain = off;
            off += y->w_out;
            y->ln_bias = off;
            off += y->w_out;
        }
        y->count = off - y->off;
        y->actf = c->kind == LG_MODEL_GGNN || y->cos ? LG__ACT_NONE
                 : c->kind == LG_MODEL_GCNII ? LG__ACT_RELU
                 : last ? LG__ACT_NONE
                 : conv ? LG__ACT_RELU
                        : LG__ACT_ELU;
        y->pn = pn && !(last && c->kind == LG_MODEL_GCN);
        y->residual = c->residual && y->w_in == y->w_out && !y->cos; /* cosine: its own */
        w = y->w_out;
        m->maxw = LG_MAX(m->maxw, w);
    }
    if (m->io) {
        m->w_out_off = off;
        off += w * m->classes;
        m->b_out_off = off;
        off += m->classes;
    }
    m->n_params = off;
    if (plan) goto buffers;
    LG_CALLOC(m->params, off, "parameters");
    LG_CALLOC(m->grads, off, "gradients");

    /* initial parameters: input linear, layers in order, output linear */
    if (m->io)
        LG_FN(lg__linear_init)(m->params + m->w_in_off, m->params + m->b_in_off, m->f, c->hidden, c->init, rng);
    for (int l = 0; l < m->L; l++) {
        LG_FN(lg__layer) *y = &m->layer[l];
        if (y->cos) {
            LG_TRY(LG_FN(lg_cosatt_params_init)(m->params + y->off, &y->sc, rng));
            for (lg_idx k = 0; k < y->w_in; k++) m->params[y->cn_gain + k] = 1; /* bias stays 0 */
            LG_TRY(LG_FN(lg_wresidual_init)(m->params + y->alpha, y->w_out, m->L));
        } else if (y->gt) LG_TRY(LG_FN(lg_gt_params_init_as)(m->params + y->off, &y->tc, c->init, rng));
        else if (y->conv) LG_TRY(LG_FN(lg_conv_params_init)(m->params + y->off, &y->cc, rng));
        else if (y->l2) LG_TRY(LG_FN(lg_l2att_params_init)(m->params + y->off, &y->lc, rng));
        else LG_TRY(LG_FN(lg_gat_params_init)(m->params + y->off, &y->gc, rng));
        if (y->ln_gain >= 0)
            for (lg_idx k = 0; k < y->w_out; k++) m->params[y->ln_gain + k] = 1;
    }
    if (m->io)
        LG_FN(lg__linear_init)(m->params + m->w_out_off, m->params + m->b_out_off, w, m->classes, c->init, rng);

    /* activations, allocated once */
buffers:
    /* the edge map of (g, gT) that the GAT and GT layers' backward passes
     * borrow instead of each rebuilding it on every call: made here once, or
     * at each bind for a batch model (lg__model_bind), which also needs the
     * counting sort's cursors */
    if (LG_FN(lg__model_lends)(m)) {
        LG_TRY(lg__att_check_edges("model", nnz_g));
        m->other_bytes += sizeof(lg__epos) * (size_t)((m->sym ? 1 : 2) * nnz_g) +
                          sizeof(lg_idx) * (size_t)(m->batch ? m->n_cap : 0);
        if (!plan) {
            LG_ALLOC(m->tpos, nnz_g, "edge map");
            if (m->sym) m->tedge = m->tpos; /* tpos of a symmetric g maps each edge to its reverse */
            else LG_ALLOC(m->tedge, nnz_g, "edge map");
            LG_ALLOC(m->tnext, m->n, "edge map cursors");
        }
        if (!plan && !m->batch) {
            /* gT was made from g above: the map's own check cannot fail */
            if (!lg__graph_transpose_map(m->tpos, m->sym ? NULL : m->tedge, m->tnext, m->g, m->gT)) {
                st = lg__error(LG_EINVAL, "model: the graph's transpose does not match it");
                goto fail;
            }
            lg__free(m->tnext);
            m->tnext = NULL;
        }
    }
    if (!m->io) m->h0 = m->xd;
    else LG_TRY(LG_FN(lg__buf)(m, &m->h0, m->n, m->hid, &m->act_bytes, "input activations"));
    /* one backward workspace for every GAT, GT and L2 layer: the largest */
    for (int l = 0; l < m->L; l++) {
        LG_FN(lg__layer) *y = &m->layer[l];
        if (!LG_FN(lg__layer_borrows)(y)) continue;
        size_t wb;
        if (y->l2) {
            lg_l2att_mem lm;
            LG_TRY(lg__l2att_memory_ext(&y->lc, m->n, nnz_g, sizeof(lg_real), 1, &lm));
            wb = lm.workspace;
        } else if (y->gt) {
            lg_gt_mem tm;
            LG_TRY(lg__gt_memory_ext(&y->tc, m->n, nnz_g, sizeof(lg_real), 1, &tm));
            wb = tm.workspace;
        } else {
            lg_gat_mem gm;
            LG_TRY(lg__gat_memory_ext(&y->gc, m->n, nnz_g, sizeof(lg_real), 1, &gm));
            wb = gm.workspace;
        }
        m->ws_bytes = LG_MAX(m->ws_bytes, wb);
    }
    m->work_bytes += m->ws_bytes;
    if (!plan && m->ws_bytes > 0 && !(m->ws = lg__malloc(m->ws_bytes))) {
        st = lg__nomem("attention layers' backward workspace");
        goto fail;
    }
    lg_idx win_max = 0; /* the widest input of the blocks that share dropin */
    for (int l = 0; l < m->L; l++) {
        LG_FN(lg__layer) *y = &m->layer[l];
        if (y->cos) {
            if (!plan) LG_TRY(LG_FN(lg_cosatt_cache_init)(&y->scache, &y->sc, m->n, nnz_g));
            lg_cosatt_mem sm;
            LG_TRY(lg_cosatt_memory(&y->sc, m->n, nnz_g, sizeof(lg_real), &sm));
            m->act_bytes += sm.activations;
            m->work_bytes += sm.workspace;
            LG_TRY(LG_FN(lg__buf)(m, &y->cn, m->n, y->w_in, &m->act_bytes, "CenterNorm activations"));
        } else if (y->gt) {
            if (!plan) LG_TRY(lg__gt_cache_alloc(&y->tcache, &y->tc, m->n, nnz_g, sizeof(lg_real), m->ws, m->ws_bytes, 1));
            lg_gt_mem tm;
            LG_TRY(lg__gt_memory_ext(&y->tc, m->n, nnz_g, sizeof(lg_real), 1, &tm));
            m->act_bytes += tm.activations;
        } else if (y->l2) {
            if (!plan)
                LG_TRY(lg__l2att_cache_alloc(&y->lcache, &y->lc, m->n, nnz_g, sizeof(lg_real), m->ws, m->ws_bytes, 1));
            lg_l2att_mem lm;
            LG_TRY(lg__l2att_memory_ext(&y->lc, m->n, nnz_g, sizeof(lg_real), 1, &lm));
            m->act_bytes += lm.activations;
        } else if (y->conv) {
            if (!plan) LG_TRY(LG_FN(lg_conv_cache_init)(&y->ccache, &y->cc, m->n));
            lg_conv_mem cm;
            LG_TRY(lg_conv_memory(&y->cc, m->n, sizeof(lg_real), &cm));
            m->act_bytes += cm.activations;
            m->work_bytes += cm.workspace;
        } else {
            if (!plan) LG_TRY(lg__gat_cache_alloc(&y->cache, &y->gc, m->n, nnz_g, sizeof(lg_real), m->ws, m->ws_bytes, 1));
            lg_gat_mem gm;
            LG_TRY(lg__gat_memory_ext(&y->gc, m->n, nnz_g, sizeof(lg_real), 1, &gm));
            m->act_bytes += gm.activations;
        }
        /* the block's input dropout: a buffer of its own, or the model's
         * dropin (below; lg__drop_shared) */
        if (LG_FN(lg__drop_shared)(m, l)) win_max = LG_MAX(win_max, y->w_in);
        else if (m->c.dropout > 0)
            LG_TRY(LG_FN(lg__buf)(m, &y->drop, m->n, y->w_in, &m->act_bytes, "dropout activations"));
        LG_TRY(LG_FN(lg__buf)(m, &y->act, m->n, y->w_out, &m->act_bytes, "layer activations"));
        y->z = y->act;
        if (y->ln_gain >= 0) {
            LG_TRY(LG_FN(lg__buf)(m, &y->ln, m->n, y->w_out, &m->act_bytes, "LayerNorm activations"));
            LG_TRY(LG_FN(lg__buf)(m, &y->ln_mean, m->n, 1, &m->act_bytes, "LayerNorm statistics"));
            LG_TRY(LG_FN(lg__buf)(m, &y->ln_rstd, m->n, 1, &m->act_bytes, "LayerNorm statistics"));
            y->z = y->ln;
        }
        if (y->pn || y->residual || y->cos) LG_TRY(LG_FN(lg__buf)(m, &y->out, m->n, y->w_out, &m->act_bytes, "residual activations"));
        else y->out = y->z;
        if (y->pn) LG_TRY(LG_FN(lg__buf)(m, &y->pn_rstd, m->n, 1, &m->act_bytes, "PairNorm statistics"));
    }
    /* the input dropout of the blocks that share it, one block at a time (not
     * kept: the backward makes it again); without dropout (p = 0) the model's
     * forward reads each block's input in place (lg__block_forward); one
     * block alone (lg__model_block_forward) makes a buffer of its own on
     * first use */
    if (m->c.dropout > 0 && win_max > 0)
        LG_TRY(LG_FN(lg__buf)(m, &m->dropin, m->n, win_max, &m->work_bytes, "dropout buffer"));
    LG_TRY(LG_FN(lg__buf)(m, &m->logits, m->r_cap, m->classes, &m->act_bytes, "logits"));
    LG_TRY(LG_FN(lg__buf)(m, &m->logp, m->r_cap, m->classes, &m->act_bytes, "log-probabilities"));
    if (m->batch) { /* the outputs of the nodes read out only */
        lg_idx D = m->layer[m->L - 1].w_out;
        size_t lb = sizeof(int32_t) * (size_t)LG_MAX(m->r_cap, 1);
        m->act_bytes += lb;
        if (!plan && !(m->rlabels = lg__malloc(lb))) { st = lg__nomem("read-out labels"); goto fail; }
        LG_TRY(LG_FN(lg__buf)(m, &m->hread, m->r_cap, D, &m->act_bytes, "read-out activations"));
        LG_TRY(LG_FN(lg__buf)(m, &m->dhread, m->r_cap, D, &m->work_bytes, "read-out gradients"));
    } else {
        m->maxw = LG_MAX(m->maxw, m->classes);
        if (m->w_out_off >= 0)
            LG_TRY(LG_FN(lg__buf)(m, &m->oblk, LG__OUT_BLOCK, 2 * m->layer[m->L - 1].w_out + m->classes, &m->work_bytes,
                                  "output-layer blocks"));
    }
    LG_TRY(LG_FN(lg__buf)(m, &m->dlog, m->r_cap, m->classes, &m->work_bytes, "logit gradients"));
    m->dlog_zero = 1; /* calloc'd */
    int any_pn = 0, any_ln = 0, any_scratch = 0; /* (cosine blocks use buf[2], buf[3], buf[4]) */
    for (int l = 0; l < m->L; l++) {
        any_pn |= m->layer[l].pn || m->layer[l].cos, any_ln |= m->layer[l].ln_gain >= 0 || m->layer[l].cos;
        any_scratch |= !LG_FN(lg__block_in_place)(&m->layer[l], LG_FN(lg__need_din)(m, l));
    }
    /* one gradient buffer between blocks when every block that passes a
     * gradient on does it in place (GAT, GT and L2 backward passes may write
     * d_in over d_out). The only other users of a second buffer are
     * gcnii's initial residual, input ReLU and output dropout, and its conv
     * blocks are never in place. */
    m->one_grad = 1;
    for (int l = 0; l < m->L; l++) {
        const LG_FN(lg__layer) *y = &m->layer[l];
        if (!LG_FN(lg__need_din)(m, l)) continue; /* passes nothing on */
        m->one_grad &= LG_FN(lg__block_in_place)(y, 1);
    }
    for (int k = 0; k < 5; k++)
        if ((k != 1 || !m->one_grad) && (k != 2 || any_pn) && (k != 3 || any_ln) && (k != 4 || any_scratch))
            LG_TRY(LG_FN(lg__buf)(m, &m->buf[k], m->n, m->maxw, &m->work_bytes, "backward buffers"));
    LG_TRY(LG_FN(lg__buf)(m, &m->pn_work, m->n, 1, &m->work_bytes, "PairNorm workspace"));
    if (c->kind == LG_MODEL_GCNII) LG_TRY(LG_FN(lg__buf)(m, &m->dh0, m->n, m->hid, &m->work_bytes, "initial-residual gradient"));
    if (m->io_drop) {
        LG_TRY(LG_FN(lg__buf)(m, &m->xdrop, m->n, m->f, &m->act_bytes, "input dropout"));
        LG_TRY(LG_FN(lg__buf)(m, &m->odrop, m->n, m->layer[m->L - 1].w_out, &m->act_bytes, "output dropout"));
    }
    if (!plan && !m->batch) LG_FN(lg__model_lend_map)(m);
    *out = m;
    return LG_OK;
fail:
    LG_FN(lg__model_free)(m);
    return st;
}

lg_status LG_FN(lg__model_init)(LG_MODEL **out, const lg_model_config *c, const lg_dataset *ds,
                                const lg_features *x, lg_rng *rng) {
    return LG_FN(lg__model_build)(out, c, ds, x, rng, 0, NULL);
}

lg_status LG_FN(lg__model_init_batch)(LG_MODEL **out, const lg_model_config *c, const lg_dataset *ds,
                                      const lg_features *x, const lg_idx cap[3], lg_rng *rng) {
    if (cap[0] < 1 || cap[1] < 0 || cap[2] < 1 || cap[2] > cap[0])
        return lg__error(LG_EINVAL, "batch model: capacity %lld nodes, %lld edges, %lld read out", (long long)cap[0],
                         (long long)cap[1], (long long)cap[2]);
    return LG_FN(lg__model_build)(out, c, ds, x, rng, 0, cap);
}

lg_status LG_FN(lg__model_bind)(LG_MODEL *m, const lg__batch *b) {
    if (!m->batch) return lg__error(LG_EINVAL, "lg__model_bind: not a batch model");
    if (!b || !b->g || !b->gT || !b->x || !b->labels || !b->graph_ptr)
        return lg__error(LG_EINVAL, "lg__model_bind: incomplete batch");
    if (b->g->n > m->n_cap || b->g->nnz > m->nnz_cap || b->gT->n != b->g->n || b->gT->nnz != b->g->nnz)
        return lg__error(LG_EINVAL, "lg__model_bind: a batch of %lld nodes and %lld edges for a model of %lld and %lld",
                         (long long)b->g->n, (long long)b->g->nnz, (long long)m->n_cap, (long long)m->nnz_cap);
    if (b->x->n != b->g->n || b->x->d != m->f || b->x->kind != m->x->kind)
        return lg__error(LG_EINVAL, "lg__model_bind: batch features do not match the model");
    if (!b->read || b->n_read < 0 || b->n_read > m->r_cap)
        return lg__error(LG_EINVAL, "lg__model_bind: %lld nodes read out, capacity %lld", (long long)b->n_read,
                         (long long)m->r_cap);
    for (lg_idx k = 0; k < b->n_read; k++) {
        if (b->read[k] < 0 || b->read[k] >= b->g->n)
            return lg__error(LG_EINVAL, "lg__model_bind: read-out node %lld outside the batch", (long long)b->read[k]);
        m->rlabels[k] = b->labels[b->read[k]];
    }
    m->read = b->read;
    m->nout = b->n_read;
    m->olabels = m->rlabels;
    m->n = b->g->n;
    m->g = (lg_graph *)b->g; /* borrowed: a batch model never frees them */
    m->gT = (lg_graph *)b->gT;
    m->x = b->x;
    m->labels = b->labels;
    m->gptr = b->graph_ptr;
    if (m->tpos) { /* the batch's edge map, checking its gT */
        if (!lg__graph_transpose_map(m->tpos, m->tedge, m->tnext, m->g, m->gT))
            return lg__error(LG_EINVAL, "lg__model_bind: the batch's transposed graph is not its graph's transpose");
        LG_FN(lg__model_lend_map)(m);
    }
    m->n_graphs = b->n_graphs;
    if (!m->sparse_in) LG_FN(lg__fill_dense)(m);
    return LG_OK;
}

lg_status LG_FN(lg__model_plan)(const lg_model_config *c, const lg_dataset *ds, const lg_features *x, const lg_idx *cap,
                                lg_idx *n_params, size_t *activations, size_t *workspace, size_t *other) {
    LG_MODEL *m = NULL;
    LG_CHECK(LG_FN(lg__model_build)(&m, c, ds, x, NULL, 1, cap));
    *n_params = m->n_params;
    *activations = m->act_bytes;
    *workspace = m->work_bytes;
    *other = m->other_bytes;
    LG_FN(lg__model_free)(m);
    return LG_OK;
}

/* Dropout counters: a distinct stream per (epoch, layer, site). */
static uint64_t LG_FN(lg__ctr)(uint64_t epoch, int l, int site) { return epoch * 4096u + (uint64_t)l * 4u + (uint64_t)site; }

static lg_pairnorm_mode LG_FN(lg__pn_mode)(const LG_MODEL *m) {
    return m->c.node_norm == LG_NODE_NORM_PAIRNORM_SI ? LG_PAIRNORM_SI : LG_PAIRNORM_PN;
}

/* Block l of the stack (the header's per-layer steps: dropout, layer,
 * LayerNorm, activation, residual, PairNorm) from its input cur (n x w_in)
 * to y->out (n x w_out). One function for the model's forward (fused: 1 when
 * lg__fwd_fused(m, l - 1), block l's input dropout already written by block
 * l - 1, and block l writes block l + 1's when lg__fwd_fused(m, l)) and for
 * lg__model_block_forward (fused 0: each block alone). */
static lg_status LG_FN(lg__block_forward)(LG_MODEL *m, int l, const lg_real *cur, int training, uint64_t seed,
                                          uint64_t epoch, int fused) {
    const lg_idx n = m->n;
    LG_FN(lg__layer) *y = &m->layer[l];
    /* the input dropout is the identity (not training, or p = 0): the model's
     * forward reads the block's input where it is (kept until the backward,
     * which reads it there), not a copy; otherwise it writes the block's drop
     * or the model's dropin (lg__drop_shared), which the block's backward
     * makes again from cur (lsrc); one block alone writes its drop, as the
     * caller's input need not outlive the call */
    const int ident = !training || m->c.dropout == 0.0;
    lg_real *dst = fused && LG_FN(lg__drop_shared)(m, l) ? m->dropin : y->drop;
    y->lin = fused && ident ? cur : dst;
    y->lsrc = cur;
    if (!(fused && ident) && !(fused && l > 0 && LG_FN(lg__fwd_fused)(m, l - 1)))
        LG_CHECK(LG_FN(lg_dropout_forward)(dst, cur, n * y->w_in, m->c.dropout, seed, LG_FN(lg__ctr)(epoch, l, 0),
                                           training));
    const lg_real *lin = y->lin;
    if (y->cos) { /* out = cur + alpha (*) SCSA(CenterNorm(drop)) */
        LG_CHECK(LG_FN(lg_centernorm_forward)(y->cn, lin, m->params + y->cn_gain, m->params + y->cn_bias, n,
                                              y->w_in));
        LG_CHECK(LG_FN(lg_cosatt_forward)(y->act, y->scache, y->cn, m->params + y->off, m->g, &y->sc));
        return LG_FN(lg_wresidual_forward)(y->out, cur, y->act, m->params + y->alpha, n, y->w_out);
    }
    if (y->gt)
        LG_CHECK(LG_FN(lg_gt_forward)(y->act, y->tcache, lin, m->params + y->off, m->g, &y->tc, training, seed,
                                      LG_FN(lg__ctr)(epoch, l, 1)));
    else if (y->l2)
        LG_CHECK(LG_FN(lg_l2att_forward)(y->act, y->lcache, lin, m->params + y->off, m->g, &y->lc));
    else if (y->conv)
        LG_CHECK(LG_FN(lg_conv_forward)(y->act, y->ccache, lin, m->dh0 ? m->h0 : NULL, m->params + y->off, m->g,
                                        &y->cc));
    else
        LG_CHECK(LG_FN(lg_gat_forward)(y->act, y->cache, lin, m->params + y->off, m->g, &y->gc, training, seed,
                                       LG_FN(lg__ctr)(epoch, l, 1)));
    if (y->ln)
        LG_CHECK(LG_FN(lg_layernorm_forward)(y->ln, y->ln_mean, y->ln_rstd, y->act, m->params + y->ln_gain,
                                             m->params + y->ln_bias, n, y->w_out));
    if (fused && !ident && LG_FN(lg__fwd_fused)(m, l)) /* and block l + 1's input dropout (where its lin is) */
        return LG_FN(lg_elu_dropout_forward)(y->z, LG_FN(lg__drop_shared)(m, l + 1) ? m->dropin : m->layer[l + 1].drop,
                                             n * y->w_out, m->c.dropout, seed,
                                             LG_FN(lg__ctr)(epoch, l + 1, 0), training);
    if (y->actf == LG__ACT_ELU) LG_CHECK(LG_FN(lg_elu_forward)(y->z, y->z, n * y->w_out));
    if (y->actf == LG__ACT_RELU) LG_CHECK(LG_FN(lg_relu_forward)(y->z, y->z, n * y->w_out));
    if (y->out != y->z) memcpy(y->out, y->z, sizeof(lg_real) * (size_t)(n * y->w_out));
    if (y->residual) LG_CHECK(LG_FN(lg_add)(y->out, cur, n * y->w_out));
    if (y->pn)
        LG_CHECK(LG_FN(lg_pairnorm_forward)(y->out, y->pn_rstd, y->out, n, y->w_out, m->gptr, m->n_graphs,
                                            LG_FN(lg__pn_mode)(m), 1.0));
    return LG_OK;
}

lg_status LG_FN(lg__model_forward)(LG_MODEL *m, int training, uint64_t seed, uint64_t epoch) {
    return LG_FN(lg__model_forward_rows)(m, training, seed, epoch, NULL, 0);
}

/* 1 if rows[0..count) is strictly increasing (so no row is listed twice)
 * within [0, n). O(count). */
static int LG_FN(lg__rows_increasing)(const lg_idx *rows, lg_idx count, lg_idx n) {
    for (lg_idx k = 0; k < count; k++)
        if (rows[k] < 0 || rows[k] >= n || (k > 0 && rows[k] <= rows[k - 1])) return 0;
    return 1;
}

/* The output layer, logits = h W_out + b_out, on the listed rows of h (n x D)
 * only, LG__OUT_BLOCK rows at a time: gathered into m->oblk, one product,
 * scattered into their rows of logits. rows: distinct. O(count D classes). */
static lg_status LG_FN(lg__out_rows_forward)(LG_MODEL *m, const lg_real *h, const lg_idx *rows, lg_idx count) {
    const lg_idx D = m->layer[m->L - 1].w_out, nc = m->classes;
    lg_real *xb = m->oblk, *yb = xb + LG__OUT_BLOCK * D;
    for (lg_idx b0 = 0; b0 < count; b0 += LG__OUT_BLOCK) {
        const lg_idx nb = LG_MIN((lg_idx)LG__OUT_BLOCK, count - b0);
        for (lg_idx k = 0; k < nb; k++) memcpy(xb + k * D, h + rows[b0 + k] * D, sizeof(lg_real) * (size_t)D);
        LG_CHECK(LG_FN(lg_linear_forward)(yb, xb, m->params + m->w_out_off, m->params + m->b_out_off, nb, D, nc));
        for (lg_idx k = 0; k < nb; k++)
            memcpy(m->logits + rows[b0 + k] * nc, yb + k * nc, sizeof(lg_real) * (size_t)nc);
    }
    return LG_OK;
}

/* Its backward: dh (n x D, zero) gets dL/dh at the listed rows, dW_out +=
 * h^T dL/dlogits over them, block by block in list order (the rows' logit
 * gradients are m->dlog's; the bias gradient is the caller's). */
static lg_status LG_FN(lg__out_rows_backward)(LG_MODEL *m, lg_real *dh, const lg_real *h, const lg_idx *rows,
                                              lg_idx count) {
    const lg_idx D = m->layer[m->L - 1].w_out, nc = m->classes;
    lg_real *xb = m->oblk, *yb = xb + LG__OUT_BLOCK * D, *db = yb + LG__OUT_BLOCK * nc;
    for (lg_idx b0 = 0; b0 < count; b0 += LG__OUT_BLOCK) {
        const lg_idx nb = LG_MIN((lg_idx)LG__OUT_BLOCK, count - b0);
        for (lg_idx k = 0; k < nb; k++) {
            memcpy(xb + k * D, h + rows[b0 + k] * D, sizeof(lg_real) * (size_t)D);
            memcpy(yb + k * nc, m->dlog + rows[b0 + k] * nc, sizeof(lg_real) * (size_t)nc);
        }
        memset(db, 0, sizeof(lg_real) * (size_t)(nb * D));
        LG_CHECK(LG_FN(lg_linear_backward)(db, m->grads + m->w_out_off, NULL, yb, xb, m->params + m->w_out_off, nb, D,
                                           nc));
        for (lg_idx k = 0; k < nb; k++) memcpy(dh + rows[b0 + k] * D, db + k * D, sizeof(lg_real) * (size_t)D);
    }
    return LG_OK;
}

lg_status LG_FN(lg__model_forward_rows)(LG_MODEL *m, int training, uint64_t seed, uint64_t epoch, const lg_idx *rows,
                                        lg_idx count) {
    const lg_idx n = m->n;
    m->lrows = NULL; /* until the log-softmax below */
    m->nlrows = 0;
    m->lrows_inc = 0;
    m->lout = 0;
    if (m->w_in_off >= 0) {
        if (m->sparse_in)
            LG_CHECK(LG_FN(lg_linear_sparse_forward)(m->h0, m->x, m->params + m->w_in_off, m->params + m->b_in_off, m->hid));
        else {
            const lg_real *xin = m->xd;
            if (m->xdrop) {
                LG_CHECK(LG_FN(lg_dropout_forward)(m->xdrop, m->xd, n * m->f, m->c.dropout, seed,
                                                   LG_FN(lg__ctr)(epoch, m->L, 1), training));
                xin = m->xdrop;
            }
            LG_CHECK(LG_FN(lg_linear_forward)(m->h0, xin, m->params + m->w_in_off, m->params + m->b_in_off, n, m->f, m->hid));
        }
        if (m->in_relu) LG_CHECK(LG_FN(lg_relu_forward)(m->h0, m->h0, n * m->hid));
    }
    const lg_real *cur = m->h0;
    for (int l = 0; l < m->L; l++) {
        LG_CHECK(LG_FN(lg__block_forward)(m, l, cur, training, seed, epoch, 1));
        cur = m->layer[l].out;
    }
    const LG_FN(lg__layer) *last = &m->layer[m->L - 1];
    if (m->odrop) {
        LG_CHECK(LG_FN(lg_dropout_forward)(m->odrop, cur, n * last->w_out, m->c.dropout, seed, LG_FN(lg__ctr)(epoch, m->L, 0),
                                           training));
        cur = m->odrop;
    }
    if (m->batch) { /* the read-out rows only */
        lg_real *h = m->w_out_off >= 0 ? m->hread : m->logits;
        for (lg_idx k = 0; k < m->nout; k++)
            memcpy(h + k * last->w_out, cur + m->read[k] * last->w_out, sizeof(lg_real) * (size_t)last->w_out);
        cur = m->hread;
    }
    const lg_idx no = m->nout;
    /* a few rows of many, each once (TREES: the roots of 511 000 nodes, 256
     * classes): the output layer on those rows only */
    const int few = rows && 4 * count < no;
    const int inc = few && LG_FN(lg__rows_increasing)(rows, count, no);
    if (inc && !m->batch && m->w_out_off >= 0) {
        LG_CHECK(LG_FN(lg__out_rows_forward)(m, cur, rows, count));
        m->lout = 1;
    } else if (m->w_out_off >= 0)
        LG_CHECK(LG_FN(lg_linear_forward)(m->logits, cur, m->params + m->w_out_off, m->params + m->b_out_off, no,
                                          last->w_out, m->classes));
    else if (!m->batch)
        memcpy(m->logits, cur, sizeof(lg_real) * (size_t)(n * m->classes));
    if (!few) return LG_FN(lg_log_softmax_forward)(m->logp, m->logits, no, m->classes);
    LG_CHECK(LG_FN(lg_log_softmax_rows_forward)(m->logp, m->logits, no, m->classes, rows, count));
    m->lrows = rows;
    m->nlrows = count;
    m->lrows_inc = inc;
    return LG_OK;
}

/* After a forward restricted to some rows, only those rows' logp exist:
 * backward must take that same list; eval too, or (subset) any list of rows
 * in it when it is increasing (each looked up: O(count log nlrows)). */
static lg_status LG_FN(lg__model_rows_match)(const LG_MODEL *m, const lg_idx *nodes, lg_idx count, int subset,
                                             const char *fn) {
    if (!m->lrows || (nodes == m->lrows && count == m->nlrows)) return LG_OK;
    if (!(subset && m->lrows_inc) || (count > 0 && !nodes))
        return lg__error(LG_EINVAL, "%s: the last forward computed the log-probabilities of %lld listed rows "
                         "only; pass that list", fn, (long long)m->nlrows);
    for (lg_idx k = 0; k < count; k++) {
        lg_idx lo = 0, hi = m->nlrows; /* the first listed row >= nodes[k] */
        while (lo < hi) {
            const lg_idx mid = lo + (hi - lo) / 2;
            if (m->lrows[mid] < nodes[k]) lo = mid + 1;
            else hi = mid;
        }
        if (lo == m->nlrows || m->lrows[lo] != nodes[k])
            return lg__error(LG_EINVAL, "%s: row %lld (entry %lld) is not among the %lld rows whose "
                             "log-probabilities the last forward computed", fn, (long long)nodes[k], (long long)k,
                             (long long)m->nlrows);
    }
    return LG_OK;
}

lg_status LG_FN(lg__model_eval)(const LG_MODEL *m, const lg_idx *nodes, lg_idx count, double *loss, double *acc) {
    LG_CHECK(LG_FN(lg__model_rows_match)(m, nodes, count, 1, "lg__model_eval"));
    if (loss) LG_CHECK(LG_FN(lg_nll_forward)(loss, m->logp, m->nout, m->classes, m->olabels, nodes, count));
    if (acc) LG_CHECK(LG_FN(lg_accuracy)(acc, m->logp, m->nout, m->classes, m->olabels, nodes, count));
    return LG_OK;
}

/* Backward of block l after its forward (lg__block_forward, same training,
 * seed, epoch): from dcur = dL/d out_l (n x w_out) to dprev = dL/d(its input)
 * (n x w_in, overwritten; NULL: not needed), adding the block's parameter
 * gradients to grads. Scratch: dprev itself (until the end), buf[4], and
 * buf[2] (PairNorm, cosine) and buf[3] (LayerNorm, cosine), which exist only
 * in models that have them (dcur and dprev must be buf[0] and buf[1], or
 * both buf[0] when one_grad). With fused (the model's backward), when
 * lg__bwd_fused(m, l) dcur is still dL/d(block l + 1's dropped input), the
 * mask not applied, and when lg__bwd_fused(m, l - 1) dprev is left so for
 * block l - 1, or (lg__bwd_remade(m, l)) taken through block l - 1's
 * dropout and ELU backward by the layer's backward, which makes dropin
 * again in that pass; lg__model_block_backward passes 0. */
static lg_status LG_FN(lg__block_backward)(LG_MODEL *m, int l, lg_real *dcur, lg_real *dprev, int training,
                                           uint64_t seed, uint64_t epoch, int fused) {
    const lg_idx n = m->n;
    LG_FN(lg__layer) *y = &m->layer[l];
    const size_t out_sz = sizeof(lg_real) * (size_t)(n * y->w_out), in_sz = sizeof(lg_real) * (size_t)(n * y->w_in);
    const int remake = fused && LG_FN(lg__bwd_remade)(m, l); /* the layer's backward makes it (below) */
    if (m->dropin && y->lin == m->dropin && !remake) /* the forward's dropped input, the same bits from the same input */
        LG_CHECK(LG_FN(lg_dropout_forward)(m->dropin, y->lsrc, n * y->w_in, m->c.dropout, seed,
                                           LG_FN(lg__ctr)(epoch, l, 0), training));
    if (y->cos) { /* back through out = cur + alpha (*) SCSA(CenterNorm(dropout(cur))) */
        memset(m->buf[3], 0, out_sz);
        LG_CHECK(LG_FN(lg_wresidual_backward)(NULL, m->buf[3], m->grads + y->alpha, dcur, y->act,
                                              m->params + y->alpha, n, y->w_out));
        memset(m->buf[4], 0, in_sz);
        LG_CHECK(LG_FN(lg_cosatt_backward)(m->buf[4], m->grads + y->off, m->buf[3], y->scache, y->cn,
                                           m->params + y->off, m->g, m->gT, &y->sc));
        memset(m->buf[2], 0, in_sz);
        LG_CHECK(LG_FN(lg_centernorm_backward)(m->buf[2], m->grads + y->cn_gain, m->grads + y->cn_bias, m->buf[4],
                                               y->lin, m->params + y->cn_gain, n, y->w_in));
        if (!dprev) return LG_OK;
        memset(dprev, 0, in_sz);
        LG_CHECK(LG_FN(lg_dropout_backward)(dprev, m->buf[2], n * y->w_in, m->c.dropout, seed,
                                            LG_FN(lg__ctr)(epoch, l, 0), training));
        return LG_FN(lg_add)(dprev, dcur, n * y->w_in);
    }
    if (LG_FN(lg__block_in_place)(y, dprev != NULL)) {
        /* dcur = dL/d out_l = dL/d z_l becomes dL/d act_l in place (it is not
         * needed afterwards: no residual), the layer writes dL/d drop_l to
         * dprev, and the dropout's backward (its mask times 1/(1-p), which is
         * its forward) runs there in place */
        if (fused && LG_FN(lg__bwd_remade)(m, l + 1)) {
            /* done: block l + 1's backward ran that pass with its dropin's making */
        } else if (fused && LG_FN(lg__bwd_fused)(m, l)) /* with block l + 1's input dropout backward */
            LG_CHECK(LG_FN(lg_dropout_elu_backward_inplace)(dcur, y->z, n * y->w_out, m->c.dropout, seed,
                                                            LG_FN(lg__ctr)(epoch, l + 1, 0), training));
        else if (y->actf == LG__ACT_ELU)
            LG_CHECK(LG_FN(lg_elu_backward_inplace)(dcur, y->z, n * y->w_out));
        /* one_grad: dprev is dcur, which the layer's backward overwrites */
        if (dprev != dcur) memset(dprev, 0, in_sz);
        /* remake: block l - 1's dropout and ELU backward on dprev and the
         * making of dropin, in one pass the layer runs before dW's product */
        LG_FN(lg__remake_ctx) rc = {dprev, m->dropin, l > 0 ? m->layer[l - 1].z : NULL, n * y->w_in, m->c.dropout,
                                    seed, LG_FN(lg__ctr)(epoch, l, 0), training};
        lg__att_head *h = y->gt ? &y->tcache->head : y->l2 ? &y->lcache->head : &y->cache->head;
        if (remake) h->mid = (lg__att_mid){LG_FN(lg__remake_step), &rc};
        const lg_status st =
            y->gt   ? LG_FN(lg_gt_backward)(dprev, m->grads + y->off, dcur, y->tcache, y->lin, m->params + y->off, m->g,
                                            m->gT, &y->tc)
            : y->l2 ? LG_FN(lg_l2att_backward)(dprev, m->grads + y->off, dcur, y->lcache, y->lin, m->params + y->off,
                                               m->g, m->gT, &y->lc)
                    : LG_FN(lg_gat_backward)(dprev, m->grads + y->off, dcur, y->cache, y->lin, m->params + y->off, m->g,
                                             m->gT, &y->gc);
        h->mid = (lg__att_mid){NULL, NULL}; /* for this call only */
        LG_CHECK(st);
        /* block l - 1 applies the mask, or the layer did (remake) */
        if (fused && l > 0 && LG_FN(lg__bwd_fused)(m, l - 1)) return LG_OK;
        return LG_FN(lg_dropout_forward)(dprev, dprev, n * y->w_in, m->c.dropout, seed, LG_FN(lg__ctr)(epoch, l, 0),
                                         training);
    }
    /* dcur = dL/d out_l */
    const lg_real *g = dcur;
    if (y->pn) {
        memset(m->buf[2], 0, out_sz);
        LG_CHECK(LG_FN(lg_pairnorm_backward)(m->buf[2], m->pn_work, dcur, y->out, y->pn_rstd, n, y->w_out, m->gptr,
                                             m->n_graphs, LG_FN(lg__pn_mode)(m), 1.0));
        g = m->buf[2];
    }
    /* g = dL/d(z_l + residual); through the ELU or ReLU into gz, which lives
     * in dprev (dead until the dropout backward at the end) when there is one */
    const int need_din = dprev != NULL;
    const lg_real *gz = g;
    if (y->actf != LG__ACT_NONE) {
        lg_real *t = need_din ? dprev : m->buf[4];
        memset(t, 0, out_sz);
        if (y->actf == LG__ACT_ELU) LG_CHECK(LG_FN(lg_elu_backward)(t, g, y->z, n * y->w_out));
        else LG_CHECK(LG_FN(lg_relu_backward)(t, g, y->z, n * y->w_out));
        gz = t;
    }
    /* ga = dL/d act_l (through the LayerNorm: buf[3] exists then); the layer's
     * input gradient goes to a buffer that is neither ga nor dprev */
    const lg_real *ga = gz;
    lg_real *dlayer_in = m->buf[4];
    if (y->ln) {
        lg_real *t = need_din ? m->buf[4] : m->buf[3];
        memset(t, 0, out_sz);
        LG_CHECK(LG_FN(lg_layernorm_backward)(t, m->grads + y->ln_gain, m->grads + y->ln_bias, gz, y->act,
                                              y->ln_mean, y->ln_rstd, m->params + y->ln_gain, n, y->w_out));
        ga = t;
        dlayer_in = m->buf[3];
    }
    if (need_din) memset(dlayer_in, 0, in_sz);
    if (y->gt)
        LG_CHECK(LG_FN(lg_gt_backward)(need_din ? dlayer_in : NULL, m->grads + y->off, ga, y->tcache, y->lin,
                                       m->params + y->off, m->g, m->gT, &y->tc));
    else if (y->l2)
        LG_CHECK(LG_FN(lg_l2att_backward)(need_din ? dlayer_in : NULL, m->grads + y->off, ga, y->lcache, y->lin,
                                          m->params + y->off, m->g, m->gT, &y->lc));
    else if (y->conv)
        LG_CHECK(LG_FN(lg_conv_backward)(need_din ? dlayer_in : NULL, m->dh0, m->grads + y->off, ga, y->ccache, y->lin,
                                         m->dh0 ? m->h0 : NULL, m->params + y->off, m->g, m->gT, &y->cc));
    else
        LG_CHECK(LG_FN(lg_gat_backward)(need_din ? dlayer_in : NULL, m->grads + y->off, ga, y->cache, y->lin,
                                        m->params + y->off, m->g, m->gT, &y->gc));
    if (!need_din) return LG_OK;
    memset(dprev, 0, in_sz);
    LG_CHECK(LG_FN(lg_dropout_backward)(dprev, dlayer_in, n * y->w_in, m->c.dropout, seed, LG_FN(lg__ctr)(epoch, l, 0),
                                        training));
    if (y->residual) LG_CHECK(LG_FN(lg_add)(dprev, g, n * y->w_in));
    return LG_OK;
}

lg_status LG_FN(lg__model_backward)(LG_MODEL *m, const lg_idx *nodes, lg_idx count, int training, uint64_t seed,
                                    uint64_t epoch) {
    const lg_idx n = m->n;
    LG_CHECK(LG_FN(lg__model_rows_match)(m, nodes, count, 0, "lg__model_backward"));
    memset(m->grads, 0, sizeof(lg_real) * (size_t)m->n_params);
    if (m->dh0) memset(m->dh0, 0, sizeof(lg_real) * (size_t)(n * m->hid));
    const lg_idx no = m->nout;
    lg_real *dlog = m->dlog, *dcur = m->buf[0], *dprev = m->one_grad ? m->buf[0] : m->buf[1];
    if (!m->dlog_zero) memset(dlog, 0, sizeof(lg_real) * (size_t)(no * m->classes));
    m->dlog_zero = 0;
    LG_CHECK(LG_FN(lg_log_softmax_nll_backward)(dlog, m->logp, no, m->classes, m->olabels, nodes, count, 1.0));
    const LG_FN(lg__layer) *last = &m->layer[m->L - 1];
    const lg_idx D = last->w_out;
    /* dh = dL/d(the last layer's output after the output dropout, if any) */
    lg_real *dh = m->odrop ? dprev : dcur;
    if (m->batch) { /* back through the read-out rows */
        const lg_real *dr = dlog;
        if (m->w_out_off >= 0) {
            memset(m->dhread, 0, sizeof(lg_real) * (size_t)(no * D));
            LG_CHECK(LG_FN(lg_linear_backward)(m->dhread, m->grads + m->w_out_off, m->grads + m->b_out_off, dlog,
                                               m->hread, m->params + m->w_out_off, no, D, m->classes));
            dr = m->dhread;
        }
        memset(dh, 0, sizeof(lg_real) * (size_t)(n * D));
        for (lg_idx k = 0; k < no; k++)
            for (lg_idx q = 0; q < D; q++) dh[m->read[k] * D + q] += dr[k * D + q];
    } else if (m->w_out_off >= 0) {
        const lg_real *hL = m->odrop ? m->odrop : last->out;
        memset(dh, 0, sizeof(lg_real) * (size_t)(n * D));
        /* dlog is zero but in the listed rows: listed in increasing order, the
         * bias gradient sums those rows only, with the same bits (TREES: 800
         * rows of 511 000) */
        const int increasing = LG_FN(lg__rows_increasing)(nodes, count, n);
        lg_real *db = m->grads + m->b_out_off;
        if (m->lout) /* the forward's rows (lg__model_rows_match): increasing */
            LG_CHECK(LG_FN(lg__out_rows_backward)(m, dh, hL, nodes, count));
        else
            LG_CHECK(LG_FN(lg_linear_backward)(dh, m->grads + m->w_out_off, increasing ? NULL : db, dlog, hL,
                                               m->params + m->w_out_off, n, D, m->classes));
        if (increasing) LG_FN(lg__colsum_add)(db, dlog, count, m->classes, nodes);
    } else {
        memcpy(dh, dlog, sizeof(lg_real) * (size_t)(n * m->classes));
    }
    /* dlog is done with: back to zero by the rows written (TREES: 800 rows, not 511 000) */
    for (lg_idx k = 0; k < count; k++) memset(dlog + nodes[k] * m->classes, 0, sizeof(lg_real) * (size_t)m->classes);
    m->dlog_zero = 1;
    if (m->odrop) { /* (gcnii: never one_grad) */
        memset(dcur, 0, sizeof(lg_real) * (size_t)(n * D));
        LG_CHECK(LG_FN(lg_dropout_backward)(dcur, dh, n * D, m->c.dropout, seed, LG_FN(lg__ctr)(epoch, m->L, 0),
                                            training));
    }
    for (int l = m->L - 1; l >= 0; l--) {
        const int need_din = LG_FN(lg__need_din)(m, l);
        LG_CHECK(LG_FN(lg__block_backward)(m, l, dcur, need_din ? dprev : NULL, training, seed, epoch, 1));
        if (!need_din) break;
        lg_real *t = dcur;
        dcur = dprev;
        dprev = t;
    }
    if (m->w_in_off >= 0) {
        if (m->dh0) LG_CHECK(LG_FN(lg_add)(dcur, m->dh0, n * m->hid)); /* the initial residual's paths */
        if (m->in_relu) { /* through h0 = ReLU(...) */
            memset(dprev, 0, sizeof(lg_real) * (size_t)(n * m->hid));
            LG_CHECK(LG_FN(lg_relu_backward)(dprev, dcur, m->h0, n * m->hid));
            lg_real *t = dcur;
            dcur = dprev;
            dprev = t;
        }
        if (m->sparse_in)
            LG_CHECK(LG_FN(lg_linear_sparse_backward)(m->grads + m->w_in_off, m->grads + m->b_in_off, dcur, m->x, m->f, m->hid));
        else
            LG_CHECK(LG_FN(lg_linear_backward)(NULL, m->grads + m->w_in_off, m->grads + m->b_in_off, dcur,
                                               m->xdrop ? m->xdrop : m->xd, NULL, n, m->f, m->hid));
    }
    return LG_OK;
}

lg_real *LG_FN(lg__model_params)(LG_MODEL *m) { return m->params; }
lg_real *LG_FN(lg__model_grads)(LG_MODEL *m) { return m->grads; }
lg_idx LG_FN(lg__model_nparams)(const LG_MODEL *m) { return m->n_params; }

lg_status LG_FN(lg__model_attention)(const LG_MODEL *m, int l, lg_real *att) {
    if (l < 0 || l >= m->L) return lg__error(LG_EINVAL, "layer %d outside 0..%d", l, m->L - 1);
    if (m->layer[l].conv)
        return lg__error(LG_EINVAL, "--model %s has no attention weights", lg_model_kind_name(m->c.kind));
    if (m->layer[l].gt) return LG_FN(lg_gt_attention)(att, m->layer[l].tcache);
    if (m->layer[l].l2) return LG_FN(lg_l2att_attention)(att, m->layer[l].lcache);
    if (m->layer[l].cos) return LG_FN(lg_cosatt_attention)(att, m->layer[l].scache);
    return LG_FN(lg_gat_attention)(att, m->layer[l].cache);
}

const lg_real *LG_FN(lg__model_logp)(const LG_MODEL *m) { return m->logp; }

/* The last hidden representation: the input of the output linear (DeepGAT,
 * DeepGT), or the first layer's output (gat-classic). */
const lg_real *LG_FN(lg__model_hidden)(const LG_MODEL *m) {
    return m->w_out_off >= 0 ? m->layer[m->L - 1].out : m->layer[0].out;
}
lg_idx LG_FN(lg__model_hidden_width)(const LG_MODEL *m) {
    return m->w_out_off >= 0 ? m->layer[m->L - 1].w_out : m->layer[0].w_out;
}
int LG_FN(lg__model_layers)(const LG_MODEL *m) { return m->L; }

static int LG_FN(lg__all_finite)(const lg_real *v, lg_idx len) {
    for (lg_idx k = 0; k < len; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}

int LG_FN(lg__model_first_nonfinite)(const LG_MODEL *m) {
    if (m->w_in_off >= 0 && !LG_FN(lg__all_finite)(m->h0, m->n * m->hid)) return -2;
    for (int l = 0; l < m->L; l++)
        if (!LG_FN(lg__all_finite)(m->layer[l].out, m->n * m->layer[l].w_out)) return l;
    if (!m->lout && !LG_FN(lg__all_finite)(m->logits, m->nout * m->classes)) return m->L;
    if (!m->lrows) return LG_FN(lg__all_finite)(m->logp, m->nout * m->classes) ? -1 : m->L;
    for (lg_idx k = 0; k < m->nlrows; k++) { /* the rows the forward computed */
        const lg_idx r = m->lrows[k] * m->classes;
        if (!LG_FN(lg__all_finite)(m->logp + r, m->classes) || !LG_FN(lg__all_finite)(m->logits + r, m->classes))
            return m->L;
    }
    return -1;
}
lg_idx LG_FN(lg__model_layer_heads)(const LG_MODEL *m, int l) {
    return m->layer[l].gt ? m->layer[l].tc.heads : m->layer[l].l2 ? m->layer[l].lc.heads
           : m->layer[l].cos ? m->layer[l].sc.heads : m->layer[l].conv ? 0 : m->layer[l].gc.heads;
}
const lg_graph *LG_FN(lg__model_graph)(const LG_MODEL *m) { return m->g; }
const lg_graph *LG_FN(lg__model_transpose)(const LG_MODEL *m) { return m->gT; }

lg__layer_range LG_FN(lg__model_layer_range)(const LG_MODEL *m, int l) {
    const LG_FN(lg__layer) *y = &m->layer[l];
    lg__layer_range r = {y->off, y->count, 0, 0, 0, 0, 0, 0};
    if (y->gt) { /* Wq, Wk (columns [0, 2KC) of W, row stride P) and bq, bk */
        lg_idx kc2 = 2 * y->tc.heads * y->tc.head_dim;
        r.att_off = y->off + y->tl.bq;
        r.att_len = kc2;
        r.str_off = y->off + y->tl.w;
        r.str_rows = y->tc.in_dim;
        r.str_cols = kc2;
        r.str_stride = y->tl.w_cols;
    } else if (y->l2) { /* the tied query/key map W_Q */
        r.att_off = y->off + y->ll.wq;
        r.att_len = y->ll.v - y->ll.wq;
    } else if (y->cos) { /* Wq, Wk (columns [0, 2KC) of W, row stride 3KC) and bq, bk */
        lg_idx kc2 = 2 * y->sc.heads * y->sc.head_dim;
        r.att_off = y->off + y->sl.b;
        r.att_len = kc2;
        r.str_off = y->off + y->sl.w;
        r.str_rows = y->sc.in_dim;
        r.str_cols = kc2;
        r.str_stride = y->sl.w_cols;
    } else if (y->conv) { /* no attention parameters */
        r.att_off = y->off;
        r.att_len = 0;
    } else { /* a_dst, a_src */
        r.att_off = y->off + y->gl.a_dst;
        r.att_len = 2 * y->gc.heads * y->gc.head_dim;
    }
    return r;
}

void LG_FN(lg__model_memory)(const LG_MODEL *m, size_t *activations, size_t *workspace, size_t *other) {
    *activations = m->act_bytes;
    *workspace = m->work_bytes;
    *other = m->other_bytes;
}

/* ---- one block at a time (the Lipschitz estimator, src/train/lipschitz.c) ---- */

lg_status LG_FN(lg__model_block_forward)(LG_MODEL *m, int l, const lg_real *in, lg_real *out) {
    if (!m || l < 0 || l >= m->L || !in || !out)
        return lg__error(LG_EINVAL, "lg__model_block_forward: bad argument (layer %d)", l);
    LG_FN(lg__layer) *y = &m->layer[l];
    if (in == y->out || in == y->drop) return lg__error(LG_EINVAL, "lg__model_block_forward: input aliases the model's");
    if (!y->drop) { /* no buffer of its own (no dropout, or dropin shared): the copy of the input the backward reads */
        const lg_idx rows = m->batch ? m->n_cap : m->n;
        y->drop = lg__calloc((size_t)(rows * y->w_in > 0 ? rows * y->w_in : 1), sizeof(lg_real));
        if (!y->drop) return lg__nomem("dropout activations");
    }
    LG_CHECK(LG_FN(lg__block_forward)(m, l, in, 0, 0, 0, 0));
    memcpy(out, y->out, sizeof(lg_real) * (size_t)(m->n * y->w_out));
    return LG_OK;
}

/* Widens the backward buffers that exist to n x w (w > maxw): the first
 * block's input gradient of gat-classic and gcn, which training never
 * computes, for lg__model_block_backward. Their contents are not kept. */
static lg_status LG_FN(lg__model_widen)(LG_MODEL *m, lg_idx w) {
    const lg_idx rows = m->batch ? m->n_cap : m->n;
    for (int k = 0; k < 5; k++) {
        if (!m->buf[k]) continue;
        lg_real *p = lg__calloc((size_t)(rows * w), sizeof(lg_real));
        if (!p) return lg__nomem("backward buffers");
        lg__free(m->buf[k]);
        m->buf[k] = p;
        m->work_bytes += sizeof(lg_real) * (size_t)(rows * (w - m->maxw));
    }
    m->maxw = w;
    return LG_OK;
}

lg_status LG_FN(lg__model_block_backward)(LG_MODEL *m, int l, const lg_real *d_out, lg_real *d_in) {
    if (!m || l < 0 || l >= m->L || !d_out || !d_in)
        return lg__error(LG_EINVAL, "lg__model_block_backward: bad argument (layer %d)", l);
    const LG_FN(lg__layer) *y = &m->layer[l];
    if (y->w_in > m->maxw) LG_CHECK(LG_FN(lg__model_widen)(m, y->w_in));
    if (m->dh0) memset(m->dh0, 0, sizeof(lg_real) * (size_t)(m->n * m->hid));
    lg_real *din = m->one_grad ? m->buf[0] : m->buf[1];
    memcpy(m->buf[0], d_out, sizeof(lg_real) * (size_t)(m->n * y->w_out));
    LG_CHECK(LG_FN(lg__block_backward)(m, l, m->buf[0], din, 0, 0, 0, 0));
    memcpy(d_in, din, sizeof(lg_real) * (size_t)(m->n * y->w_in));
    return LG_OK;
}

void LG_FN(lg__model_act_rms)(const LG_MODEL *m, double *rms) {
    for (int l = 0; l <= m->L; l++) {
        const lg_real *h = l == 0 ? m->h0 : m->layer[l - 1].out;
        const lg_idx count = m->n * (l == 0 ? m->layer[0].w_in : m->layer[l - 1].w_out);
        double s = 0;
        for (lg_idx t = 0; t < count; t++) s += (double)h[t] * (double)h[t];
        rms[l] = m->n > 0 ? sqrt(s / (double)m->n) : 0;
    }
}

const lg_real *LG_FN(lg__model_block_input)(const LG_MODEL *m, int l) {
    return l == 0 ? m->h0 : m->layer[l - 1].out;
}

lg_status LG_FN(lg__model_block_info)(const LG_MODEL *m, int l, lg__block_info *b) {
    if (!m || !b || l < 0 || l >= m->L) return lg__error(LG_EINVAL, "lg__model_block_info: bad argument (layer %d)", l);
    const LG_FN(lg__layer) *y = &m->layer[l];
    memset(b, 0, sizeof *b);
    b->kind = y->gt ? LG__BLOCK_GT : y->l2 ? LG__BLOCK_L2 : y->cos ? LG__BLOCK_COS : y->conv ? LG__BLOCK_CONV : LG__BLOCK_GAT;
    b->gc = y->conv || y->gt || y->l2 || y->cos ? NULL : &y->gc;
    b->tc = y->gt ? &y->tc : NULL;
    b->lc = y->l2 ? &y->lc : NULL;
    b->sc = y->cos ? &y->sc : NULL;
    b->cn_gain = y->cos ? m->params + y->cn_gain : NULL;
    b->alpha = y->cos ? m->params + y->alpha : NULL;
    b->params = m->params + y->off;
    b->n = m->n;
    b->w_in = y->w_in;
    b->w_out = y->w_out;
    b->act = y->actf == LG__ACT_ELU ? "elu" : y->actf == LG__ACT_RELU ? "relu" : "none";
    b->residual = y->residual;
    b->layernorm = y->ln != NULL;
    b->pairnorm = y->pn;
    b->g = m->g;
    b->gT = m->gT;
    return LG_OK;
}
