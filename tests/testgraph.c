/* Graphs and the finite-difference checker shared by the layer tests (testgraph.h). */
#include <math.h>
#include <stdlib.h>

#include "testgraph.h"

void gpair_free(gpair *p) {
    lg_graph_free(p->g);
    lg_graph_free(p->gT);
    p->g = p->gT = NULL;
}

/* Builds g from an edge list (self-loops added if asked) and its transpose. */
gpair gpair_from_edges(lg_idx n, lg_idx m, const lg_idx *src, const lg_idx *dst, int self_loops) {
    gpair p = {NULL, NULL};
    assert_ok(lg_graph_from_edges(&p.g, n, m, src, dst, self_loops ? LG_GRAPH_ADD_SELF_LOOPS : LG_GRAPH_REMOVE_SELF_LOOPS));
    assert_ok(lg_graph_transpose(p.g, &p.gT));
    return p;
}

/* 9 nodes: node 0 is a hub (in-neighbours 1..7), node 1 has one in-neighbour
 * (2), node 8 is isolated (an empty row without self-loops), nodes 2..7 get 1-3
 * random in-neighbours. */
gpair small_graph(uint64_t seed, int self_loops) {
    lg_idx src[64], dst[64], m = 0;
    lg_rng r;
    lg_rng_seed(&r, seed);
    for (lg_idx j = 1; j <= 7; j++) src[m] = j, dst[m++] = 0;
    src[m] = 2, dst[m++] = 1;
    for (lg_idx i = 2; i <= 7; i++) {
        lg_idx d = 1 + (lg_idx)lg_rng_below(&r, 3);
        for (lg_idx t = 0; t < d; t++) {
            lg_idx j = (lg_idx)lg_rng_below(&r, 8);
            if (j != i) src[m] = j, dst[m++] = i;
        }
    }
    return gpair_from_edges(9, m, src, dst, self_loops);
}

/* n nodes: node 0 a hub with n/3 in-neighbours, every 11th node without
 * in-edges, the others 0..2*avg random ones. */
gpair random_graph(lg_idx n, lg_idx avg, uint64_t seed, int self_loops) {
    lg_rng r;
    lg_rng_seed(&r, seed);
    lg_idx cap = n / 3 + n * (2 * avg + 1) + 1, m = 0;
    lg_idx *src = malloc(sizeof(lg_idx) * (size_t)cap), *dst = malloc(sizeof(lg_idx) * (size_t)cap);
    assert_non_null(src);
    assert_non_null(dst);
    for (lg_idx t = 0; t < n / 3; t++) src[m] = (lg_idx)lg_rng_below(&r, (uint64_t)n), dst[m++] = 0;
    for (lg_idx i = 1; i < n; i++) {
        if (i % 11 == 0) continue;
        lg_idx d = (lg_idx)lg_rng_below(&r, (uint64_t)(2 * avg + 1));
        for (lg_idx t = 0; t < d; t++) src[m] = (lg_idx)lg_rng_below(&r, (uint64_t)n), dst[m++] = i;
    }
    gpair p = gpair_from_edges(n, m, src, dst, self_loops);
    free(src);
    free(dst);
    return p;
}

double urand(lg_rng *r) { return 2.0 * lg_rng_double(r) - 1.0; }

/* The checker: number of entries with |an - fd| > rtol * max(1, |fd|); the
 * worst ratio error / allowed goes to *worst. Reports the first failure. */
int fd_compare(const char *what, const double *an, const double *fd, lg_idx m, double rtol, double *worst) {
    int fails = 0;
    for (lg_idx t = 0; t < m; t++) {
        double allowed = rtol * fmax(1.0, fabs(fd[t]));
        double err = fabs(an[t] - fd[t]);
        if (!(err <= allowed)) {
            if (!fails) print_message("  %s[%lld]: analytic %.12g, finite differences %.12g\n", what, (long long)t, an[t], fd[t]);
            fails++;
        }
        if (worst && err / allowed > *worst) *worst = err / allowed;
    }
    return fails;
}


void fd_grad_of(fd_loss_fn loss, void *ctx, double *v, lg_idx m, double *fd, int naive) {
    for (lg_idx t = 0; t < m; t++) {
        double old = v[t], h = 1e-6 * fmax(1.0, fabs(old));
        v[t] = old + h;
        double lp = loss(ctx, naive);
        v[t] = old - h;
        double lm = loss(ctx, naive);
        v[t] = old;
        fd[t] = (lp - lm) / (2.0 * h);
    }
}

void check_dropout_fraction(lg_idx nnz) {
    const lg_idx K = 2;
    lg_idx drop = 0;
    uint64_t key = lg_hash64(11 ^ lg_hash64(4));
    for (lg_idx e = 0; e < nnz; e++)
        for (lg_idx k = 0; k < K; k++) {
            uint64_t h = lg_hash64(key + ((uint64_t)e * 2u + (uint64_t)k) * 0x9E3779B97F4A7C15ULL);
            drop += (double)(h >> 11) * 0x1.0p-53 < 0.5;
        }
    double frac = (double)drop / (double)(nnz * K);
    assert_true(fabs(frac - 0.5) < 4 * sqrt(0.25 / (double)(nnz * K)));
}
