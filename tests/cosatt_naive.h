/*
 * Naive reference of the scaled cosine-similarity attention layer (test
 * oracle only): double precision, plain per-node loops, the formulas of
 * lipgnn/cosatt.h written out literally (q, k, v of each node computed on
 * their own from their weight columns, each head's norm as sqrt(sum x^2 +
 * eps), the softmax with exp and a plain sum, the output map as an explicit
 * double loop). No fusion, no threads, no BLAS. Compiled into test_cosatt
 * through tests/cosatt.cmake.
 */
#ifndef LG_TESTS_COSATT_NAIVE_H
#define LG_TESTS_COSATT_NAIVE_H

#include "lipgnn.h"

/* out (n x D) = the layer on g; att (nnz x K, may be NULL) the softmax
 * weights. Returns 0, or -1 if out of memory. */
int cosatt_naive_forward(double *out, double *att, const double *in, const double *params, const lg_graph *g,
                         const lg_cosatt_config *cfg);

#endif
