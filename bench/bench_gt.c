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
#include "core/gemm.h"

static const char lg_bench_prog[] = "bench_gt";
#include "bench_util.h"


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
        lg__gemm_f32(CblasNoTrans, CblasNoTrans, n, P, F, in, F, W, P, 0.0f, z, P);
        double t3 = now_ms();
        lg__gemm_f32(CblasNoTrans, CblasNoTrans, n, P, F, in, F, W, P, 0.0f, z, P);
        lg__gemm_f32(CblasTrans, CblasNoTrans, F, P, n, in, F, dz, P, 1.0f, dparams, P);
        lg__gemm_f32(CblasNoTrans, CblasTrans, n, F, P, dz, P, W, P, 1.0f, din, F);
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
    lg_set_threads(0); /* OMP_NUM_THREADS threads; OpenBLAS pinned to one, products in panels */
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
