/* Graphs and the finite-difference checker shared by the layer tests
 * (test_gat.c, test_conv.c). */
#ifndef LG_TESTGRAPH_H
#define LG_TESTGRAPH_H

#include "testutil.h"

typedef struct gpair {
    lg_graph *g;  /* in-neighbour CSR */
    lg_graph *gT; /* its transpose    */
} gpair;

void gpair_free(gpair *p);

/* Builds g from an edge list (self-loops added if asked) and its transpose. */
gpair gpair_from_edges(lg_idx n, lg_idx m, const lg_idx *src, const lg_idx *dst, int self_loops);

/* 9 nodes: node 0 is a hub (in-neighbours 1..7), node 1 has one in-neighbour
 * (2), node 8 is isolated (an empty row without self-loops), nodes 2..7 get 1-3
 * random in-neighbours. */
gpair small_graph(uint64_t seed, int self_loops);

/* n nodes: node 0 a hub with n/3 in-neighbours, every 11th node without
 * in-edges, the others 0..2*avg random ones. */
gpair random_graph(lg_idx n, lg_idx avg, uint64_t seed, int self_loops);

/* The attention dropout of seed 11, counter 4 at rate 0.5 over nnz edges x 2
 * heads, by the mask documented in gat.h (pair (e, k) dropped iff
 * (lg_hash64(key + (2 e + k) 0x9E3779B97F4A7C15) >> 11) 2^-53 < 0.5, key =
 * lg_hash64(11 ^ lg_hash64(4))): asserts that the fraction of dropped pairs is
 * within 4 standard deviations of 1/2. */
void check_dropout_fraction(lg_idx nnz);

/* Uniform in [-1, 1). */
double urand(lg_rng *r);

/* A loss through the fused kernel (naive = 0) or the naive oracle (1). */
typedef double (*fd_loss_fn)(void *ctx, int naive);

/* Central differences of loss(ctx, naive) with respect to v[0..m), step
 * h = 1e-6 max(1, |v|), into fd. */
void fd_grad_of(fd_loss_fn loss, void *ctx, double *v, lg_idx m, double *fd, int naive);

/* The checker: number of entries with |an - fd| > rtol * max(1, |fd|); the
 * worst ratio error / allowed goes to *worst (if not NULL). Reports the first
 * failure. */
int fd_compare(const char *what, const double *an, const double *fd, lg_idx m, double rtol, double *worst);

#endif
