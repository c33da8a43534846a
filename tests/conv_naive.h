/* The naive per-node reference of the baseline layers (conv_naive.c), a test
 * oracle: each node's output from the definitions in lipgnn/conv.h, with
 * plain loops, sharing no code with src/conv. */
#ifndef LG_CONV_NAIVE_H
#define LG_CONV_NAIVE_H

#include "lipgnn.h"

/* out (n x D) for cfg on g; gin_pre (n x D, may be NULL): GIN's
 * pre-activation (agg W1 + b1), to keep samples clear of the ReLU's kink. */
void conv_naive_forward(double *out, double *gin_pre, const double *in, const double *h0, const double *params,
                        const lg_graph *g, const lg_conv_config *cfg);

#endif
