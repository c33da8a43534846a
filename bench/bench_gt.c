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


typedef struct gt_ctx {
    float *out, *din, *dparams;
    const float *in, *params, *dout;
    lg_gt_cache *cache;
    const bench_graph *bg;
    const lg_gt_config *cfg;
} gt_ctx;

static void gt_forward(void *v, uint64_t counter) {
    gt_ctx *c = v;
    lg_status st = lg_gt_forward_f32(c->out, c->cache, c->in, c->params, c->bg->g, c->cfg, 1, 42, counter);
    if (st) die("forward", st);
}

static void gt_backward(void *v) {
    gt_ctx *c = v;
    lg_status st =
        lg_gt_backward_f32(c->din, c->dparams, c->dout, c->cache, c->in, c->params, c->bg->g, c->bg->gT, c->cfg);
    if (st) die("backward", st);
}

/* training: the gate and attention dropout 0.3 */
static void bench_layer(const bench_graph *bg, lg_idx F, lg_idx K, lg_idx C, lg_att_norm norm, int training, int runs,
                        const char *core) {
    const lg_graph *g = bg->g;
    lg_idx n = g->n;
    const int gate = training;
    const double p = training ? 0.3 : 0.0;
    lg_gt_config cfg = lg_gt_config_default(F, K, C);
    cfg.norm = norm;
    cfg.gate = gate;
    cfg.att_dropout = p;
    lg_gt_layout lay;
    lg_status st = lg_gt_layout_get(&cfg, &lay);
    if (st) die("layout", st);
    lg_idx D = lg_gt_out_dim(&cfg);
    float *in = rand_array(n * F, 1.0f, 1), *params = rand_array(lay.count, 0.1f, 2), *dout = rand_array(n * D, 1.0f, 3);
    float *out = rand_array(n * D, 0, 4), *din = rand_array(n * F, 0, 5), *dparams = rand_array(lay.count, 0, 6);
    lg_gt_cache *cache = NULL;
    if ((st = lg_gt_cache_init_f32(&cache, &cfg, n, g->nnz))) die("cache", st);
    lg_gt_mem mem;
    if ((st = lg_gt_memory(&cfg, n, g->nnz, sizeof(float), &mem))) die("memory", st);
    gt_ctx ctx = {out, din, dparams, in, params, dout, cache, bg, &cfg};
    /* the floor: X [W_Q W_K W_V W_skip] (F x P, params' first block) and its backward */
    bench_layer_ops ops = {&ctx, gt_forward, gt_backward, n, F, lay.w_cols, in, params + lay.w};
    bench_times t;
    bench_time_layer(&ops, runs, 2, &t);
    const char *passes[2] = {"forward", "forward+backward"};
    for (int k = 0; k < 2; k++)
        printf("{\"bench\":\"gt\",\"graph\":\"%s\",\"source\":\"%s\",\"n\":%lld,\"nnz\":%lld,\"in_dim\":%lld,"
               "\"heads\":%lld,\"head_dim\":%lld,\"norm\":\"%s\",\"gate\":%d,\"att_dropout\":%g,\"pass\":\"%s\","
               "\"ms\":%.3f,\"blas_floor_ms\":%.3f,\"ratio\":%.3f,\"runs\":%d,\"omp_threads\":%d,"
               "\"blas_core\":\"%s\",\"activation_bytes\":%zu,\"workspace_bytes\":%zu}\n",
               bg->name, bg->source, (long long)n, (long long)g->nnz, (long long)F, (long long)K, (long long)C,
               lg_att_norm_name(norm), gate, p, passes[k], t.ms[k], t.floor_ms[k], t.ms[k] / t.floor_ms[k], runs,
               omp_get_max_threads(), core, mem.activations, mem.workspace);
    fflush(stdout);
    lg_gt_cache_free(cache);
    free(in), free(params), free(dout), free(out), free(din), free(dparams);
}

int main(int argc, char **argv) { return bench_layers_main(argc, argv, 11, 0, bench_layer); }
