/*
 * Naive reference of the graph-transformer layer (test oracle only): double
 * precision, plain per-node loops, the formulas of docs/attention-spec.md
 * sections 3-4 written out literally (each of q, k, v, r computed on its own
 * from its weight block, squared norms, the max of the three products as
 * printed, U summed over edges, no fusion, no threads). Compiled into test_gt
 * through tests/gt.cmake.
 */
#ifndef LG_TESTS_GT_NAIVE_H
#define LG_TESTS_GT_NAIVE_H

#include "lipgnn.h"

/* out (n x D) = the layer on g. If att / t are not NULL they receive, per edge
 * and head (nnz x K), the softmax weights before dropout and the normalised
 * scores. If margin is not NULL it receives the smallest relative gap, over
 * every node and head, between a maximum the normaliser takes (max ||k_j||,
 * max ||v_j||, the max of the three products) and the runner-up (1 when
 * there is none): near 0 the layer sits on a kink. Dropout mask as documented
 * in lipgnn/gt.h (lg_gt_forward). Returns 0, or -1 if out of memory. */
int gt_naive_forward(double *out, double *att, double *t, double *margin, const double *in,
                     const double *params, const lg_graph *g, const lg_gt_config *cfg, int training,
                     uint64_t seed, uint64_t counter);

#endif
