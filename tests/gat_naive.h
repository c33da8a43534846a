/*
 * Naive reference of the GAT layer (test oracle only): double precision,
 * plain per-node loops, the formulas of docs/attention-spec.md sections 1-2
 * written out literally (squared norms, c_i and c_ij as printed, no fusion,
 * no threads). Compiled into test_gat through tests/gat.cmake.
 */
#ifndef LG_TESTS_GAT_NAIVE_H
#define LG_TESTS_GAT_NAIVE_H

#include "lipgnn.h"

/* out (n x D) = the layer on g; if att / c are not NULL they receive, per
 * edge and head (nnz x K), the softmax weights before dropout and the
 * normaliser the score was divided by. Dropout mask as documented in
 * lipgnn/gat.h (lg_gat_forward). Returns 0, or -1 if out of memory. */
int gat_naive_forward(double *out, double *att, double *c, const double *in, const double *params,
                      const lg_graph *g, const lg_gat_config *cfg, int training, uint64_t seed,
                      uint64_t counter);

#endif
