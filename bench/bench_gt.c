/*
 * Benchmark of one graph-transformer layer (src/attention, lipgnn/gt.h):
 * forward, and forward plus backward, against the time of the layer's
 * OpenBLAS products alone measured in the same run (its floor: forward = the
 * one Z = X [Wq|Wk|Wv|Wskip] sgemm; forward+backward = that, dW = X^T dZ and
 * dX = dZ W^T, at the same shapes). One JSON line per measurement: the median
 * over `runs` runs after warm-up. See bench/README.md.
 *
 * Graphs: Cora's and PubMed's from $LIPGNN_DATA when set (cora/, pubmed/),
 * otherwise random symmetric graphs of the same sizes (2708 nodes, 5278
 * undirected edges = 10556 directed; 19717 nodes, 44324 = 88648). No
 * self-loops are added (the layer's default, as TransformerConv). Features
 * and parameters are random (their values do not change the work).
 *
 * Usage: bench_gt [runs [graph]]   (runs default 11; graph "cora" or
 * "pubmed", default both; OMP_NUM_THREADS and OPENBLAS_CORETYPE as in
 * bench/README.md)
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "lipgnn.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what, lg_status st) {
    fprintf(stderr, "bench_gt: %s: %s: %s\n", what, lg_status_name(st), lg_last_error());
    exit(1);
}

/* A random symmetric graph with m undirected edges (u != v) on n nodes. */
static lg_graph *random_graph(lg_idx n, lg_idx m, uint64_t seed) {
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
static lg_graph *load_graph(const char *name, lg_idx n, lg_idx m_und, const char **source) {
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
        fprintf(stderr, "bench_gt: %s: %s; using a random graph\n", path, lg_last_error());
    }
    *source = "random";
    return random_graph(n, m_und, 1234 + (uint64_t)n);
}

static float *rand_array(lg_idx count, float scale, uint64_t seed) {
    float *a = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
    if (!a) die("alloc", LG_ENOMEM);
    lg_rng r;
    lg_rng_seed(&r, seed);
    for (lg_idx t = 0; t < count; t++) a[t] = scale * (2.0f * lg_rng_float(&r) - 1.0f);
    return a;
}

typedef struct bench_graph {
    const char *name;   /* "cora" or "pubmed"               */
    const char *source; /* "data" or "random"               */
    lg_graph *g, *gT;   /* as given (no self-loops added)   */
} bench_graph;

static void bench_layer(const bench_graph *bg, lg_idx F, lg_idx K, lg_idx C, lg_att_norm norm, int gate, double p,
                        int runs, const char *core) {
    const lg_graph *g = bg->g;
    lg_idx n = g->n;
    lg_gt_config cfg = lg_gt_config_default(F, K, C);
    cfg.norm = norm;
    cfg.gate = gate;
    cfg.att_dropout = p;
    lg_gt_layout lay;
    lg_status st = lg_gt_layout_get(&cfg, &lay);
    if (st) die("layout", st);
    lg_idx D = lg_gt_out_dim(&cfg), P = lay.w_cols;
    float *in = rand_array(n * F, 1.0f, 1), *params = rand_array(lay.count, 0.1f, 2), *dout = rand_array(n * D, 1.0f, 3);
    float *out = rand_array(n * D, 0, 4), *din = rand_array(n * F, 0, 5), *dparams = rand_array(lay.count, 0, 6);
    float *z = rand_array(n * P, 0, 7), *dz = rand_array(n * P, 1.0f, 8);
    lg_gt_cache *cache = NULL;
    if ((st = lg_gt_cache_init_f32(&cache, &cfg, n, g->nnz))) die("cache", st);
    lg_gt_mem mem;
    if ((st = lg_gt_memory(&cfg, n, g->nnz, sizeof(float), &mem))) die("memory", st);
    const float *W = params;
    double *t_f = malloc(sizeof(double) * (size_t)runs), *t_fb = malloc(sizeof(double) * (size_t)runs),
           *t_b1 = malloc(sizeof(double) * (size_t)runs), *t_b3 = malloc(sizeof(double) * (size_t)runs);
    if (!t_f || !t_fb || !t_b1 || !t_b3) die("alloc", LG_ENOMEM);
    const int warm = 2;
    for (int r = -warm; r < runs; r++) {
        double t0 = now_ms();
        if ((st = lg_gt_forward_f32(out, cache, in, params, g, &cfg, 1, 42, (uint64_t)(r + warm)))) die("forward", st);
        double t1 = now_ms();
        if ((st = lg_gt_forward_f32(out, cache, in, params, g, &cfg, 1, 42, (uint64_t)(r + warm)))) die("forward", st);
        if ((st = lg_gt_backward_f32(din, dparams, dout, cache, in, params, g, bg->gT, &cfg))) die("backward", st);
        double t2 = now_ms();
        /* the floor: the same products alone */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)P, (int)F, 1.0f, in, (int)F, W, (int)P, 0.0f,
                    z, (int)P);
        double t3 = now_ms();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)P, (int)F, 1.0f, in, (int)F, W, (int)P, 0.0f,
                    z, (int)P);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)F, (int)P, (int)n, 1.0f, in, (int)F, dz, (int)P, 1.0f,
                    dparams, (int)P);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)F, (int)P, 1.0f, dz, (int)P, W, (int)P, 1.0f,
                    din, (int)F);
        double t4 = now_ms();
        if (r >= 0) {
            t_f[r] = t1 - t0;
            t_fb[r] = t2 - t1;
            t_b1[r] = t3 - t2;
            t_b3[r] = t4 - t3;
        }
    }
    double mf = median(t_f, runs), mfb = median(t_fb, runs), mb1 = median(t_b1, runs), mb3 = median(t_b3, runs);
    const char *passes[2] = {"forward", "forward+backward"};
    double ms[2] = {mf, mfb}, floor_ms[2] = {mb1, mb3};
    for (int k = 0; k < 2; k++)
        printf("{\"bench\":\"gt\",\"graph\":\"%s\",\"source\":\"%s\",\"n\":%lld,\"nnz\":%lld,\"in_dim\":%lld,"
               "\"heads\":%lld,\"head_dim\":%lld,\"norm\":\"%s\",\"gate\":%d,\"att_dropout\":%g,\"pass\":\"%s\","
               "\"ms\":%.3f,\"blas_floor_ms\":%.3f,\"ratio\":%.3f,\"runs\":%d,\"omp_threads\":%d,"
               "\"blas_core\":\"%s\",\"activation_bytes\":%zu,\"workspace_bytes\":%zu}\n",
               bg->name, bg->source, (long long)n, (long long)g->nnz, (long long)F, (long long)K, (long long)C,
               lg_att_norm_name(norm), gate, p, passes[k], ms[k], floor_ms[k], ms[k] / floor_ms[k], runs,
               omp_get_max_threads(), core, mem.activations, mem.workspace);
    fflush(stdout);
    lg_gt_cache_free(cache);
    free(in), free(params), free(dout), free(out), free(din), free(dparams), free(z), free(dz);
    free(t_f), free(t_fb), free(t_b1), free(t_b3);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 11;
    if (runs < 1) runs = 11;
    lg_blas_info bi;
    lg_blas_check(&bi);
    if (bi.recommend)
        fprintf(stderr, "bench_gt: OpenBLAS runs as %s; set OPENBLAS_CORETYPE=%s for the intended figures\n", bi.current,
                bi.best);
    struct {
        const char *name;
        lg_idx n, m_und;
    } sets[2] = {{"cora", 2708, 5278}, {"pubmed", 19717, 44324}};
    struct {
        lg_idx F, K, C;
    } cfgs[2] = {{64, 1, 64}, {512, 8, 64}};
    const char *only = argc > 2 ? argv[2] : NULL;
    for (int s = 0; s < 2; s++) {
        if (only && strcmp(only, sets[s].name) != 0) continue;
        bench_graph bg = {sets[s].name, NULL, NULL, NULL};
        bg.g = load_graph(sets[s].name, sets[s].n, sets[s].m_und, &bg.source);
        lg_status st = lg_graph_transpose(bg.g, &bg.gT);
        if (st) die("transpose", st);
        for (int c = 0; c < 2; c++)
            for (int norm = 0; norm < LG_ATT_NORM_COUNT; norm++)
                bench_layer(&bg, cfgs[c].F, cfgs[c].K, cfgs[c].C, (lg_att_norm)norm, 0, 0.0, runs, bi.current);
        /* training with the gate and attention dropout 0.3 */
        bench_layer(&bg, 512, 8, 64, LG_ATT_NORM_LIPSCHITZ, 1, 0.3, runs, bi.current);
        lg_graph_free(bg.g);
        lg_graph_free(bg.gT);
    }
    return 0;
}
