/*
 * Adam (Kingma & Ba 2015) as PyTorch's torch.optim.Adam computes it, with L2
 * weight decay added to the gradient (not decoupled), and the gradient-
 * explosion detector of the trainer.
 */
#ifndef LG_TRAIN_OPTIM_H
#define LG_TRAIN_OPTIM_H

#include <stddef.h>

#include "lipgnn.h"

/* Adam's hyper-parameters. */
typedef struct lg_adam {
    double lr;           /* learning rate (0.005 in the paper's runs)   */
    double beta1, beta2; /* moment decay rates (0.9, 0.999)             */
    double eps;          /* added to sqrt(v_hat) (1e-8)                 */
    double weight_decay; /* L2 coefficient added to the gradient (5e-4) */
} lg_adam;

/* One Adam step at step number t >= 1 over n parameters, in place:
 *   g = grad + wd * p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
 *   p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * Elementwise (OpenMP over fixed chunks): the same bits whatever the thread
 * count. O(n). */
void lg__adam_step(const lg_adam *a, long t, float *p, const float *grad, float *m, float *v, size_t n);

/* Settings of the explosion detector. */
typedef struct lg_explode_opts {
    double threshold; /* a layer's gradient norm above this is an explosion     */
    double growth;    /* ... or growth by more than this factor, to a norm of at
                         least threshold / growth, ...                          */
    int window;       /* ... over this many epochs (0 disables growth checks)   */
} lg_explode_opts;

/* The detector's state: per-layer history over the window. */
typedef struct lg_explode {
    lg_explode_opts o; /* settings                                              */
    int layers;        /* layers watched                                        */
    double *hist;      /* (window+1) x layers ring of past norms                */
    long seen;         /* epochs observed                                       */
    int fired;         /* 1 once an explosion was found                         */
    long epoch;        /* epoch of the first explosion (-1 if none)             */
    int layer;         /* its layer (-1: the loss)                              */
    char reason[160];  /* what was seen                                         */
} lg_explode;

lg_status lg__explode_init(lg_explode *d, int layers, const lg_explode_opts *o);
void lg__explode_destroy(lg_explode *d);

/* Observes one epoch: the loss, the attention layer whose output first held a
 * value that is not finite when the loss is not finite (-1: none or unknown),
 * and each layer's gradient norm. Returns 1 the first time an explosion is
 * seen, in this order: a non-finite loss; a non-finite norm (its first layer);
 * a norm above the threshold (the largest such layer, with their count); growth
 * by more than the factor against the same layer's norm window epochs earlier
 * (from epoch window + 1) to a norm of at least threshold / growth (one more
 * such window would cross the threshold). Then records it (epoch, layer: -1
 * for a loss not traced to a layer, reason); 0 otherwise. O(layers). */
int lg__explode_observe(lg_explode *d, long epoch, double loss, int loss_layer, const double *norms);

#endif
