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


typedef struct gat_ctx {
    float *out, *din, *dparams;
    const float *in, *params, *dout;
    lg_gat_cache *cache;
    const bench_graph *bg;
    const lg_gat_config *cfg;
} gat_ctx;

static void gat_forward(void *v, uint64_t counter) {
    gat_ctx *c = v;
    lg_status st = lg_gat_forward_f32(c->out, c->cache, c->in, c->params, c->bg->g, c->cfg, 1, 42, counter);
    if (st) die("forward", st);
}

static void gat_backward(void *v) {
    gat_ctx *c = v;
    lg_status st = lg_gat_backward_f32(c->din, c->dparams, c->dout, c->cache, c->in, c->params, c->bg->g, c->bg->gT,
                                       c->cfg);
    if (st) die("backward", st);
}

/* training: attention dropout 0.3, as DeepGAT trains */
static void bench_layer(const bench_graph *bg, lg_idx F, lg_idx K, lg_idx C, lg_att_norm norm, int training, int runs,
                        const char *core) {
    const lg_graph *g = bg->g;
    lg_idx n = g->n;
    const double p = training ? 0.3 : 0.0;
    lg_gat_config cfg = lg_gat_config_default(F, K, C);
    cfg.norm = norm;
    cfg.att_dropout = p;
    lg_gat_layout lay;
    lg_status st = lg_gat_layout_get(&cfg, &lay);
    if (st) die("layout", st);
    lg_idx D = lg_gat_out_dim(&cfg);
    float *in = rand_array(n * F, 1.0f, 1), *params = rand_array(lay.count, 0.1f, 2), *dout = rand_array(n * D, 1.0f, 3);
    float *out = rand_array(n * D, 0, 4), *din = rand_array(n * F, 0, 5), *dparams = rand_array(lay.count, 0, 6);
    lg_gat_cache *cache = NULL;
    if ((st = lg_gat_cache_init_f32(&cache, &cfg, n, g->nnz))) die("cache", st);
    lg_gat_mem mem;
    if ((st = lg_gat_memory(&cfg, n, g->nnz, sizeof(float), &mem))) die("memory", st);
    gat_ctx ctx = {out, din, dparams, in, params, dout, cache, bg, &cfg};
    /* the floor: X W (W = params' first block, F x KC) and its backward */
    bench_layer_ops ops = {&ctx, gat_forward, gat_backward, n, F, K * C, in, params};
    bench_times t;
    bench_time_layer(&ops, runs, 3, &t);
    const char *passes[2] = {"forward", "forward+backward"};
    for (int k = 0; k < 2; k++)
        printf("{\"bench\":\"gat\",\"graph\":\"%s\",\"source\":\"%s\",\"n\":%lld,\"nnz\":%lld,\"in_dim\":%lld,"
               "\"heads\":%lld,\"head_dim\":%lld,\"norm\":\"%s\",\"att_dropout\":%g,\"pass\":\"%s\",\"ms\":%.3f,"
               "\"blas_floor_ms\":%.3f,\"ratio\":%.3f,\"min_ms\":%.3f,\"blas_floor_min_ms\":%.3f,\"runs\":%d,"
               "\"omp_threads\":%d,\"omp_wait_policy\":\"%s\",\"blas_core\":\"%s\",\"activation_bytes\":%zu,"
               "\"workspace_bytes\":%zu}\n",
               bg->name, bg->source, (long long)n, (long long)g->nnz, (long long)F, (long long)K, (long long)C,
               lg_att_norm_name(norm), p, passes[k], t.ms[k], t.floor_ms[k], t.ms[k] / t.floor_ms[k], t.min_ms[k],
               t.floor_min_ms[k], runs, omp_get_max_threads(),
               getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "", core, mem.activations, mem.workspace);
    fflush(stdout);
    lg_gat_cache_free(cache);
    free(in), free(params), free(dout), free(out), free(din), free(dparams);
}

int main(int argc, char **argv) { return bench_layers_main(argc, argv, 15, 1, bench_layer); }
