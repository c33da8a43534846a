/*
 * bench_edge: what the per-edge work of a GAT layer costs at the least, against
 * the dense products of the same layer (its floor), on Cora's or PubMed's
 * graph. Issue 8 asks for a ratio to the floor of 2.0 on the narrow deep
 * models; this says how much of it the per-edge passes take when written
 * plainly.
 *
 * The three passes below are the minimum a GAT layer's forward and backward
 * make over the edges, written as plainly as they can be (one OpenMP loop over
 * rows, static schedule, each inner loop over the C floats of a head for the
 * compiler to vectorise, at AVX-512 where the CPU has it): no LipschitzNorm, no
 * dropout, no arg-max bookkeeping, nothing kept for a later pass but what the
 * next pass needs. lipgnn's own layer does more than this (the norms, their
 * gradient, the arg-max routing, dropout), so these say what a straightforward
 * version of the least work costs: a yardstick for lipgnn's passes, not a
 * bound (tuned code can beat it):
 *   softmax+gather  out_i = sum_j softmax_j(LeakyReLU(sd_i + ss_j)) x_j, att kept
 *   gather-dot      datt_ij = dout_i . x_j (the softmax's backward needs it)
 *   gather-scatter  dx_j = sum_i att_ij dout_i, over the transposed graph
 * The floor is the layer's three products: X W (forward), X^T dZ and
 * dZ W^T (backward), n x F x KC each, through lg__gemm_f32 as the layer
 * calls them. In the same runs, lipgnn's own layer (lg_gat_forward_f32 and
 * _backward_f32, F = KC, LipschitzNorm, attention dropout 0.3, the edge map
 * lent as a model lends it: DeepGAT's hidden layer as it trains): its time beyond the floor is what its per-edge
 * passes (and its element-wise work) cost, to set against the plain passes.
 *
 * Usage: bench_edge [runs [graph [K C]]]   (defaults 30, cora, 1 64)
 * One JSON line per thread count (1, then OpenMP's count when it is more):
 * ns per edge of each plain pass, their sum per layer call (edge_us), the
 * floor (floor_us), lipgnn's layer (layer_us), medians over the runs, and
 * edge_over_floor = edge_us / floor_us, layer_beyond_floor = (layer_us -
 * floor_us) / floor_us. Cora's graph from $LIPGNN_DATA (a random graph of its size
 * otherwise, said on stderr), with self-loops.
 */
static const char *lg_bench_prog = "bench_edge";
#include <math.h>
#include <omp.h>

#include "bench_util.h"
#include "attention/gat_internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LG_BENCH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LG_BENCH_CLONES
#endif

typedef struct edge_ctx {
    const lg_graph *g, *gT; /* g: in-neighbours (row i: its sources j); gT: out-neighbours */
    lg_idx K, C;            /* heads, floats a head                    */
    const float *x;         /* n x KC: the projected features          */
    const float *sd, *ss;   /* n x K: target and source scores         */
    float *att;             /* nnz x K: attention (written by forward) */
    float *out;             /* n x KC                                   */
    const float *dout;      /* n x KC                                   */
    float *datt;            /* nnz x K                                  */
    float *dx;              /* n x KC                                   */
    const lg__epos *tedge;  /* nnz: edge of g at each position of gT    */
} edge_ctx;

LG_BENCH_CLONES static void pass_softmax_gather(const edge_ctx *c, lg_idx r0, lg_idx r1) {
    const lg_graph *g = c->g;
    const lg_idx K = c->K, C = c->C, KC = K * C;
    for (lg_idx i = r0; i < r1; i++) {
        float *o = c->out + i * KC;
        for (lg_idx q = 0; q < KC; q++) o[q] = 0;
        for (lg_idx k = 0; k < K; k++) {
            float mx = -INFINITY, sum = 0;
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                float s = c->sd[i * K + k] + c->ss[g->j[e] * K + k];
                s = s > 0 ? s : 0.2f * s;
                c->att[e * K + k] = s;
                mx = s > mx ? s : mx;
            }
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                float a = expf(c->att[e * K + k] - mx);
                c->att[e * K + k] = a;
                sum += a;
            }
            const float inv = 1.0f / sum;
            float *ok = o + k * C;
            for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
                const float a = c->att[e * K + k] *= inv;
                const float *xj = c->x + g->j[e] * KC + k * C;
#pragma omp simd
                for (lg_idx q = 0; q < C; q++) ok[q] += a * xj[q];
            }
        }
    }
}

LG_BENCH_CLONES static void pass_gather_dot(const edge_ctx *c, lg_idx r0, lg_idx r1) {
    const lg_graph *g = c->g;
    const lg_idx K = c->K, C = c->C, KC = K * C;
    for (lg_idx i = r0; i < r1; i++) {
        const float *d = c->dout + i * KC;
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
            const float *xj = c->x + g->j[e] * KC;
            for (lg_idx k = 0; k < K; k++) {
                float s = 0;
#pragma omp simd reduction(+ : s)
                for (lg_idx q = 0; q < C; q++) s += d[k * C + q] * xj[k * C + q];
                c->datt[e * K + k] = s;
            }
        }
    }
}

LG_BENCH_CLONES static void pass_gather_scatter(const edge_ctx *c, lg_idx r0, lg_idx r1) {
    const lg_graph *gT = c->gT;
    const lg_idx K = c->K, C = c->C, KC = K * C;
    for (lg_idx j = r0; j < r1; j++) {
        float *dxj = c->dx + j * KC;
        for (lg_idx q = 0; q < KC; q++) dxj[q] = 0;
        for (lg_idx t = gT->p[j]; t < gT->p[j + 1]; t++) {
            const lg_idx i = gT->j[t], e = c->tedge[t];
            const float *d = c->dout + i * KC;
            for (lg_idx k = 0; k < K; k++) {
                const float a = c->att[e * K + k];
#pragma omp simd
                for (lg_idx q = 0; q < C; q++) dxj[k * C + q] += a * d[k * C + q];
            }
        }
    }
}

/* pass over rows [0, n) in one parallel region, each thread a contiguous
 * range (a static schedule; the parallel loop is here, not in the passes,
 * so that their clones for AVX-512 and AVX2 hold the loops) */
static void run_pass(void (*pass)(const edge_ctx *, lg_idx, lg_idx), const edge_ctx *c, lg_idx n) {
#pragma omp parallel
    {
        const lg_idx t = omp_get_thread_num(), T = omp_get_num_threads();
        pass(c, n * t / T, n * (t + 1) / T);
    }
}

int main(int argc, char **argv) {
    const int maxt = lg_set_threads(0);
    int runs = argc > 1 ? atoi(argv[1]) : 30;
    if (runs < 3) runs = 30;
    const char *name = argc > 2 ? argv[2] : "cora";
    const lg_idx K = argc > 4 ? atoll(argv[3]) : 1, C = argc > 4 ? atoll(argv[4]) : 64;
    if (strcmp(name, "cora") && strcmp(name, "pubmed")) {
        fprintf(stderr, "%s: graph must be cora or pubmed\n", lg_bench_prog);
        return 2;
    }
    if (K < 1 || C < 1 || K * C > 4096) {
        fprintf(stderr, "%s: K and C must be >= 1, K C at most 4096\n", lg_bench_prog);
        return 2;
    }
    const char *core = bench_blas_core();
    bench_graph bg;
    if (!strcmp(name, "cora")) bench_graph_open(&bg, "cora", 2708, 5278, 1);
    else bench_graph_open(&bg, "pubmed", 19717, 44324, 1);
    const lg_graph *g = bg.g;
    const lg_idx n = g->n, nnz = g->nnz, KC = K * C, F = KC; /* a hidden layer: F = KC */

    /* the edge map of (g, gT), made once: the plain scatter's edge at each
     * position of gT, and lent to lipgnn's layer as a model lends it (else each
     * backward rebuilds it serially, which a model's layer never does) */
    lg__epos *tpos = malloc(sizeof(lg__epos) * (size_t)nnz), *tedge = malloc(sizeof(lg__epos) * (size_t)nnz);
    lg_idx *tnext = malloc(sizeof(lg_idx) * (size_t)(n + 1));
    if (!tpos || !tedge || !tnext) die("alloc", LG_ENOMEM);
    if (!lg__graph_transpose_map(tpos, tedge, tnext, g, bg.gT)) die("edge map", LG_EINVAL);
    edge_ctx c = {g, bg.gT, K, C, rand_array(n * KC, 1.0f, 1), rand_array(n * K, 1.0f, 2), rand_array(n * K, 1.0f, 3),
                  rand_array(nnz * K, 0, 4), rand_array(n * KC, 0, 5), rand_array(n * KC, 1.0f, 6),
                  rand_array(nnz * K, 0, 7), rand_array(n * KC, 0, 8), tedge};
    float *h = rand_array(n * F, 1.0f, 9), *w = rand_array(F * KC, 0.1f, 10), *z = rand_array(n * KC, 0, 11),
          *dz = rand_array(n * KC, 1.0f, 12), *dw = rand_array(F * KC, 0, 13), *dh = rand_array(n * F, 0, 14);
    /* lipgnn's layer */
    lg_gat_config cfg = lg_gat_config_default(F, K, C);
    cfg.norm = LG_ATT_NORM_LIPSCHITZ;
    cfg.att_dropout = 0.3;
    lg_gat_layout lay;
    lg_status st = lg_gat_layout_get(&cfg, &lay);
    if (st) die("layout", st);
    float *lprm = rand_array(lay.count, 0.1f, 15), *ldp = rand_array(lay.count, 0, 16), *lout = rand_array(n * KC, 0, 17),
          *ldin = rand_array(n * F, 0, 18);
    lg_gat_cache *cache = NULL;
    if ((st = lg_gat_cache_init_f32(&cache, &cfg, n, nnz))) die("cache", st);
    const lg__att_tmap map = {g, bg.gT, tpos, tedge, 1};
    lg__gat_cache_lend_tmap(cache, &map);
    double *tm[5];
    for (int k = 0; k < 5; k++)
        if (!(tm[k] = malloc(sizeof(double) * (size_t)runs))) die("alloc", LG_ENOMEM);

    int counts[2] = {1, maxt};
    for (int tc = 0; tc < (maxt > 1 ? 2 : 1); tc++) {
        omp_set_num_threads(counts[tc]);
        for (int r = -3; r < runs; r++) {
            double t0 = now_ms();
            run_pass(pass_softmax_gather, &c, n);
            double t1 = now_ms();
            run_pass(pass_gather_dot, &c, n);
            double t2 = now_ms();
            run_pass(pass_gather_scatter, &c, n);
            double t3 = now_ms();
            lg__gemm_f32(CblasNoTrans, CblasNoTrans, n, KC, F, h, F, w, KC, 0.0f, z, KC);
            lg__gemm_f32(CblasTrans, CblasNoTrans, F, KC, n, h, F, dz, KC, 1.0f, dw, KC);
            lg__gemm_f32(CblasNoTrans, CblasTrans, n, F, KC, dz, KC, w, KC, 1.0f, dh, F);
            double t4 = now_ms();
            if ((st = lg_gat_forward_f32(lout, cache, h, lprm, g, &cfg, 1, 42, (uint64_t)(r + 3)))) die("forward", st);
            if ((st = lg_gat_backward_f32(ldin, ldp, dz, cache, h, lprm, g, bg.gT, &cfg))) die("backward", st);
            double t5 = now_ms();
            if (r >= 0)
                tm[0][r] = t1 - t0, tm[1][r] = t2 - t1, tm[2][r] = t3 - t2, tm[3][r] = t4 - t3, tm[4][r] = t5 - t4;
        }
        double med[5];
        for (int k = 0; k < 5; k++) med[k] = median(tm[k], runs);
        const double edge_us = (med[0] + med[1] + med[2]) * 1e3, floor_us = med[3] * 1e3, layer_us = med[4] * 1e3;
        printf("{\"bench\":\"edge\",\"graph\":\"%s\",\"source\":\"%s\",\"n\":%lld,\"nnz\":%lld,\"heads\":%lld,"
               "\"head_dim\":%lld,\"threads\":%d,\"runs\":%d,\"blas_core\":\"%s\","
               "\"ns_per_edge\":{\"softmax_gather\":%.2f,\"gather_dot\":%.2f,\"gather_scatter\":%.2f},"
               "\"edge_us\":%.1f,\"floor_us\":%.1f,\"layer_us\":%.1f,\"edge_over_floor\":%.3f,"
               "\"layer_beyond_floor\":%.3f}\n",
               name, bg.source, (long long)n, (long long)nnz, (long long)K, (long long)C, counts[tc], runs, core,
               med[0] * 1e6 / (double)nnz, med[1] * 1e6 / (double)nnz, med[2] * 1e6 / (double)nnz, edge_us, floor_us,
               layer_us, edge_us / floor_us, (layer_us - floor_us) / floor_us);
        fflush(stdout);
    }
    for (int k = 0; k < 5; k++) free(tm[k]);
    lg_gat_cache_free(cache);
    free(tpos), free(tedge), free(tnext);
    free(lprm), free(ldp), free(lout), free(ldin);
    free((void *)c.x), free((void *)c.sd), free((void *)c.ss), free(c.att), free(c.out), free((void *)c.dout);
    free(c.datt), free(c.dx);
    free(h), free(w), free(z), free(dz), free(dw), free(dh);
    bench_graph_close(&bg);
    return 0;
}
