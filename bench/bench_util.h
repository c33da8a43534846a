/*
 * Helpers shared by the benchmarks: wall-clock time, medians, fatal errors,
 * the benchmark graphs (a data set's from $LIPGNN_DATA, or a random one of the
 * same size) and random arrays. Header-only; each benchmark defines
 * lg_bench_prog (its name, for messages) before including it.
 */
#ifndef LG_BENCH_UTIL_H
#define LG_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lipgnn.h"

static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline void die(const char *what, lg_status st) {
    fprintf(stderr, "%s: %s: %s: %s\n", lg_bench_prog, what, lg_status_name(st), lg_last_error());
    exit(1);
}

/* A random symmetric graph with m undirected edges (u != v) on n nodes. */
static inline lg_graph *random_graph(lg_idx n, lg_idx m, uint64_t seed) {
    lg_rng r;
    lg_rng_seed(&r, seed);
    lg_idx *src = malloc(sizeof(lg_idx) * (size_t)m), *dst = malloc(sizeof(lg_idx) * (size_t)m);
    if (!src || !dst) die("random graph", LG_ENOMEM);
    for (lg_idx e = 0; e < m; e++) {
        do {
            src[e] = (lg_idx)lg_rng_below(&r, (uint64_t)n);
            dst[e] = (lg_idx)lg_rng_below(&r, (uint64_t)n);
        } while (src[e] == dst[e]);
    }
    lg_graph *g = NULL;
    lg_status st = lg_graph_from_edges(&g, n, m, src, dst, LG_GRAPH_SYMMETRIZE);
    if (st) die("random graph", st);
    free(src);
    free(dst);
    return g;
}

/* The graph of data set `name` from $LIPGNN_DATA, or a random one like it. */
static inline lg_graph *load_graph(const char *name, lg_idx n, lg_idx m_und, const char **source) {
    const char *dir = getenv("LIPGNN_DATA");
    if (dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        lg_dataset *ds = NULL;
        if (lg_dataset_load(&ds, path) == LG_OK) {
            lg_graph *g = NULL;
            lg_status st = lg_graph_copy(ds->graph, &g);
            lg_dataset_free(ds);
            if (st) die("graph copy", st);
            *source = "data";
            return g;
        }
        fprintf(stderr, "%s: %s: %s; using a random graph\n", lg_bench_prog, path, lg_last_error());
    }
    *source = "random";
    return random_graph(n, m_und, 1234 + (uint64_t)n);
}

static inline float *rand_array(lg_idx count, float scale, uint64_t seed) {
    float *a = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
    if (!a) die("alloc", LG_ENOMEM);
    lg_rng r;
    lg_rng_seed(&r, seed);
    for (lg_idx t = 0; t < count; t++) a[t] = scale * (2.0f * lg_rng_float(&r) - 1.0f);
    return a;
}

typedef struct bench_graph {
    const char *name;   /* "cora" or "pubmed"     */
    const char *source; /* "data" or "random"     */
    lg_graph *g, *gT;   /* the graph as benchmarked, and its transpose */
} bench_graph;

#endif
