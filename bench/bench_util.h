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

#include <cblas.h>

#include "lipgnn.h"
#include "core/gemm.h"

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

/* One attention layer under benchmark: its two passes on a context, and the
 * dense products they are made of (their floor): the projection Z = X W
 * (n x P from F columns) in forward, and dW += X^T dZ, dX += dZ W^T in
 * backward, through lg__gemm_f32 as the layer calls them (core/gemm.h). */
typedef struct bench_layer_ops {
    void *ctx;
    void (*forward)(void *ctx, uint64_t counter); /* counter: dropout's   */
    void (*backward)(void *ctx);                   /* after a forward      */
    lg_idx n, F, P;                                /* the projection shape */
    const float *x, *w;                            /* X: n x F, W: F x P   */
} bench_layer_ops;

/* Milliseconds of forward ([0]) and forward + backward ([1]): medians over
 * `runs` runs after `warm` warm-up runs, and the minima; each run times the
 * passes, then the floor's products alone (random operands of the same
 * shapes). */
typedef struct bench_times {
    double ms[2], floor_ms[2];         /* medians */
    double min_ms[2], floor_min_ms[2]; /* minima  */
} bench_times;

static inline void bench_time_layer(const bench_layer_ops *o, int runs, int warm, bench_times *t) {
    const lg_idx n = o->n, F = o->F, P = o->P;
    float *z = rand_array(n * P, 0, 7), *dz = rand_array(n * P, 1.0f, 8), *dw = rand_array(F * P, 0, 9),
          *dx = rand_array(n * F, 0, 10);
    double *tm[4];
    for (int k = 0; k < 4; k++)
        if (!(tm[k] = malloc(sizeof(double) * (size_t)runs))) die("alloc", LG_ENOMEM);
    for (int r = -warm; r < runs; r++) {
        double t0 = now_ms();
        o->forward(o->ctx, (uint64_t)(r + warm));
        double t1 = now_ms();
        o->forward(o->ctx, (uint64_t)(r + warm));
        o->backward(o->ctx);
        double t2 = now_ms();
        lg__gemm_f32(CblasNoTrans, CblasNoTrans, n, P, F, o->x, F, o->w, P, 0.0f, z, P);
        double t3 = now_ms();
        lg__gemm_f32(CblasNoTrans, CblasNoTrans, n, P, F, o->x, F, o->w, P, 0.0f, z, P);
        lg__gemm_f32(CblasTrans, CblasNoTrans, F, P, n, o->x, F, dz, P, 1.0f, dw, P);
        lg__gemm_f32(CblasNoTrans, CblasTrans, n, F, P, dz, P, o->w, P, 1.0f, dx, F);
        double t4 = now_ms();
        if (r >= 0) tm[0][r] = t1 - t0, tm[1][r] = t2 - t1, tm[2][r] = t3 - t2, tm[3][r] = t4 - t3;
    }
    for (int k = 0; k < 4; k++) {
        double med = median(tm[k], runs), mn = tm[k][0]; /* sorted by median() */
        if (k < 2) t->ms[k] = med, t->min_ms[k] = mn;
        else t->floor_ms[k - 2] = med, t->floor_min_ms[k - 2] = mn;
        free(tm[k]);
    }
    free(z), free(dz), free(dw), free(dx);
}

/* Loads the benchmark graph `name` (load_graph) into bg, with self-loops
 * added when self_loops, and its transpose. */
static inline void bench_graph_open(bench_graph *bg, const char *name, lg_idx n, lg_idx m_und, int self_loops) {
    bg->name = name;
    lg_graph *g0 = load_graph(name, n, m_und, &bg->source);
    lg_status st = LG_OK;
    if (self_loops) {
        if ((st = lg_graph_self_loops(g0, 1, &bg->g))) die("self-loops", st);
        lg_graph_free(g0);
    } else {
        bg->g = g0;
    }
    if ((st = lg_graph_transpose(bg->g, &bg->gT))) die("transpose", st);
}

static inline void bench_graph_close(bench_graph *bg) {
    lg_graph_free(bg->g);
    lg_graph_free(bg->gT);
    bg->g = bg->gT = NULL;
}

/* OpenBLAS's core type, with a warning on stderr when it is not the best one
 * for this CPU (bench/README.md: OPENBLAS_CORETYPE). */
static inline const char *bench_blas_core(void) {
    static lg_blas_info bi;
    lg_blas_check(&bi);
    if (bi.recommend)
        fprintf(stderr, "%s: OpenBLAS runs as %s; set OPENBLAS_CORETYPE=%s for the intended figures\n", lg_bench_prog,
                bi.current, bi.best);
    return bi.current;
}

/* One benchmark of a layer: F inputs, K heads of C, the norm; training = 1:
 * the training form (attention dropout 0.3, and what else the layer's
 * deep model uses), else no dropout. */
typedef void (*bench_layer_fn)(const bench_graph *bg, lg_idx F, lg_idx K, lg_idx C, lg_att_norm norm, int training,
                               int runs, const char *core);

/* The main of bench_gat and bench_gt: argv [runs [graph]]; on Cora's and
 * PubMed's graphs (self-loops added when self_loops), every norm at one head
 * of 64 and at 8 heads of 64, then 8 heads of 64 with LipschitzNorm in the
 * training form. */
static inline int bench_layers_main(int argc, char **argv, int default_runs, int self_loops, bench_layer_fn layer) {
    lg_set_threads(0); /* OMP_NUM_THREADS threads; OpenBLAS pinned to one, products in panels */
    int runs = argc > 1 ? atoi(argv[1]) : default_runs;
    if (runs < 1) runs = default_runs;
    const char *only = argc > 2 ? argv[2] : NULL;
    const char *core = bench_blas_core();
    static const struct {
        const char *name;
        lg_idx n, m_und;
    } sets[2] = {{"cora", 2708, 5278}, {"pubmed", 19717, 44324}};
    static const struct {
        lg_idx F, K, C;
    } cfgs[2] = {{64, 1, 64}, {512, 8, 64}};
    for (int s = 0; s < 2; s++) {
        if (only && strcmp(only, sets[s].name) != 0) continue;
        bench_graph bg;
        bench_graph_open(&bg, sets[s].name, sets[s].n, sets[s].m_und, self_loops);
        for (int c = 0; c < 2; c++)
            for (int norm = 0; norm < LG_ATT_NORM_COUNT; norm++)
                layer(&bg, cfgs[c].F, cfgs[c].K, cfgs[c].C, (lg_att_norm)norm, 0, runs, core);
        layer(&bg, 512, 8, 64, LG_ATT_NORM_LIPSCHITZ, 1, runs, core);
        bench_graph_close(&bg);
    }
    return 0;
}

#endif
