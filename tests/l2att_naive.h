/*
 * Naive reference of the L2-attention layer (test oracle only): double
 * precision, plain per-node loops, the formulas of lipgnn/l2att.h written out
 * literally (distances as ||q_i - q_j||^2, softmax by log-sum-exp, the
 * contractive scale from norms and a Lambert W by bisection), no fusion, no
 * threads. Compiled into test_l2att through tests/l2att.cmake.
 */
#ifndef LG_TESTS_L2ATT_NAIVE_H
#define LG_TESTS_L2ATT_NAIVE_H

#include "lipgnn.h"

/* W0(x) for x >= 0 by bisection on w e^w = x. */
double l2_naive_w0(double x);

/* The graph constant L_att(n_in, n_out) of lipgnn/l2att.h, from l2_naive_w0. */
double l2_naive_lip(lg_idx n_in, lg_idx n_out);

/* out (n x D) = the layer on g (every row must hold its self-loop); att (if
 * not NULL, nnz x K) the softmax weights. Contractive form as documented,
 * with the degree limits of g. Returns 0, or -1 (out of memory). */
int l2_naive_forward(double *out, double *att, const double *in, const double *params, const lg_graph *g,
                     const lg_l2att_config *cfg);

#endif
