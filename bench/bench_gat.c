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
#include "core/gemm.h"

static const char lg_bench_prog[] = "bench_gat";
#include "bench_util.h"


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
        lg__gemm_f32(CblasNoTrans, CblasNoTrans, n, KC, F, in, F, W, KC, 0.0f, y, KC);
        double t3 = now_ms();
        lg__gemm_f32(CblasNoTrans, CblasNoTrans, n, KC, F, in, F, W, KC, 0.0f, y, KC);
        lg__gemm_f32(CblasTrans, CblasNoTrans, F, KC, n, in, F, dy, KC, 1.0f, dparams, KC);
        lg__gemm_f32(CblasNoTrans, CblasTrans, n, F, KC, dy, KC, W, KC, 1.0f, din, F);
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
    lg_set_threads(0); /* OMP_NUM_THREADS threads; OpenBLAS pinned to one, products in panels */
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
