/*
 * Benchmark of one GAT layer (src/attention): forward, and forward plus
 * backward, against the time of the layer's OpenBLAS products alone measured
 * in the same run (its floor: forward = the X W sgemm; forward+backward = X W,
 * dW = X^T dY and dX = dY W^T). One JSON line per measurement: the median over
 * `runs` runs after warm-up. See bench/README.md.
 *
 * Graphs: Cora's and PubMed's from $LIPGNN_DATA when set (cora/, pubmed/),
 * otherwise random symmetric graphs of the same sizes (2708 nodes, 5278
 * undirected edges; 19717 nodes, 44324); self-loops added in both cases.
 * Features and parameters are random (their values do not change the work).
 *
 * Usage: bench_gat [runs [graph]]   (runs default 15; graph: cora or pubmed,
 * default both; OMP_NUM_THREADS and OPENBLAS_CORETYPE as in bench/README.md)
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
    fprintf(stderr, "bench_gat: %s: %s: %s\n", what, lg_status_name(st), lg_last_error());
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
        fprintf(stderr, "bench_gat: %s: %s; using a random graph\n", path, lg_last_error());
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
    const char *name;   /* "cora" or "pubmed"     */
    const char *source; /* "data" or "random"     */
    lg_graph *g, *gT;   /* with self-loops        */
} bench_graph;

static void bench_layer(const bench_graph *bg, lg_idx F, lg_idx K, lg_idx C, lg_att_norm norm, double p, int runs,
                        const char *core) {
    const lg_graph *g = bg->g;
    lg_idx n = g->n, KC = K * C;
    lg_gat_config cfg = lg_gat_config_default(F, K, C);
    cfg.norm = norm;
    cfg.att_dropout = p;
    lg_gat_layout lay;
    lg_status st = lg_gat_layout_get(&cfg, &lay);
    if (st) die("layout", st);
    lg_idx D = lg_gat_out_dim(&cfg);
    float *in = rand_array(n * F, 1.0f, 1), *params = rand_array(lay.count, 0.1f, 2), *dout = rand_array(n * D, 1.0f, 3);
    float *out = rand_array(n * D, 0, 4), *din = rand_array(n * F, 0, 5), *dparams = rand_array(lay.count, 0, 6);
    float *y = rand_array(n * KC, 0, 7), *dy = rand_array(n * KC, 1.0f, 8);
    lg_gat_cache *cache = NULL;
    if ((st = lg_gat_cache_init_f32(&cache, &cfg, n, g->nnz))) die("cache", st);
    lg_gat_mem mem;
    if ((st = lg_gat_memory(&cfg, n, g->nnz, sizeof(float), &mem))) die("memory", st);
    const float *W = params;
    double *t_f = malloc(sizeof(double) * (size_t)runs), *t_fb = malloc(sizeof(double) * (size_t)runs),
           *t_b1 = malloc(sizeof(double) * (size_t)runs), *t_b3 = malloc(sizeof(double) * (size_t)runs);
    if (!t_f || !t_fb || !t_b1 || !t_b3) die("alloc", LG_ENOMEM);
    const int warm = 3;
    for (int r = -warm; r < runs; r++) {
        double t0 = now_ms();
        if ((st = lg_gat_forward_f32(out, cache, in, params, g, &cfg, 1, 42, (uint64_t)(r + warm)))) die("forward", st);
        double t1 = now_ms();
        if ((st = lg_gat_forward_f32(out, cache, in, params, g, &cfg, 1, 42, (uint64_t)(r + warm)))) die("forward", st);
        if ((st = lg_gat_backward_f32(din, dparams, dout, cache, in, params, g, bg->gT, &cfg))) die("backward", st);
        double t2 = now_ms();
        /* the floor: the same products alone */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)KC, (int)F, 1.0f, in, (int)F, W, (int)KC,
                    0.0f, y, (int)KC);
        double t3 = now_ms();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)KC, (int)F, 1.0f, in, (int)F, W, (int)KC,
                    0.0f, y, (int)KC);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)F, (int)KC, (int)n, 1.0f, in, (int)F, dy, (int)KC,
                    1.0f, dparams, (int)KC);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)F, (int)KC, 1.0f, dy, (int)KC, W, (int)KC,
                    1.0f, din, (int)F);
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
    double mins[2] = {t_f[0], t_fb[0]}, floor_mins[2] = {t_b1[0], t_b3[0]}; /* sorted by median() */
    for (int k = 0; k < 2; k++)
        printf("{\"bench\":\"gat\",\"graph\":\"%s\",\"source\":\"%s\",\"n\":%lld,\"nnz\":%lld,\"in_dim\":%lld,"
               "\"heads\":%lld,\"head_dim\":%lld,\"norm\":\"%s\",\"att_dropout\":%g,\"pass\":\"%s\",\"ms\":%.3f,"
               "\"blas_floor_ms\":%.3f,\"ratio\":%.3f,\"min_ms\":%.3f,\"blas_floor_min_ms\":%.3f,\"runs\":%d,"
               "\"omp_threads\":%d,\"omp_wait_policy\":\"%s\",\"blas_core\":\"%s\",\"activation_bytes\":%zu,"
               "\"workspace_bytes\":%zu}\n",
               bg->name, bg->source, (long long)n, (long long)g->nnz, (long long)F, (long long)K, (long long)C,
               lg_att_norm_name(norm), p, passes[k], ms[k], floor_ms[k], ms[k] / floor_ms[k], mins[k], floor_mins[k], runs,
               omp_get_max_threads(), getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "", core, mem.activations,
               mem.workspace);
    fflush(stdout);
    lg_gat_cache_free(cache);
    free(in), free(params), free(dout), free(out), free(din), free(dparams), free(y), free(dy);
    free(t_f), free(t_fb), free(t_b1), free(t_b3);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 15;
    if (runs < 1) runs = 15;
    const char *only = argc > 2 ? argv[2] : NULL;
    lg_blas_info bi;
    lg_blas_check(&bi);
    if (bi.recommend)
        fprintf(stderr, "bench_gat: OpenBLAS runs as %s; set OPENBLAS_CORETYPE=%s for the intended figures\n", bi.current,
                bi.best);
    struct {
        const char *name;
        lg_idx n, m_und;
    } sets[2] = {{"cora", 2708, 5278}, {"pubmed", 19717, 44324}};
    struct {
        lg_idx F, K, C;
    } cfgs[2] = {{64, 1, 64}, {512, 8, 64}};
    for (int s = 0; s < 2; s++) {
        if (only && strcmp(only, sets[s].name) != 0) continue;
        bench_graph bg = {sets[s].name, NULL, NULL, NULL};
        lg_graph *g0 = load_graph(sets[s].name, sets[s].n, sets[s].m_und, &bg.source);
        lg_status st = lg_graph_self_loops(g0, 1, &bg.g);
        if (st) die("self-loops", st);
        if ((st = lg_graph_transpose(bg.g, &bg.gT))) die("transpose", st);
        lg_graph_free(g0);
        for (int c = 0; c < 2; c++)
            for (int norm = 0; norm < LG_ATT_NORM_COUNT; norm++)
                bench_layer(&bg, cfgs[c].F, cfgs[c].K, cfgs[c].C, (lg_att_norm)norm, 0.0, runs, bi.current);
        /* training as DeepGAT does: attention dropout 0.3 */
        bench_layer(&bg, 512, 8, 64, LG_ATT_NORM_LIPSCHITZ, 0.3, runs, bi.current);
        lg_graph_free(bg.g);
        lg_graph_free(bg.gT);
    }
    return 0;
}
