/*
 * The model benchmark suite (issue 8): whole models, one configuration per
 * run, one JSON line. bench/run_all.py runs every configuration, the PyTorch
 * peer beside it, and prints the speed-ups; see bench/README.md.
 *
 * A training epoch here is what both sides do per step: the training forward
 * (dropout on), the loss over the training nodes, backward, and Adam (lr
 * 0.005, weight decay 5e-4) on the trainer's own model and memory
 * (lg_trainer_init). The median over --epochs epochs after --warmup (wall
 * time; epoch_cpu_ms: the process's CPU time, all threads). An
 * inference pass is a forward pass without dropout (median of --infer).
 *
 * The floor: during one training epoch and one inference pass every lg__gemm
 * call is recorded (core/gemm.h, lg__gemm_trace); the same calls, at the same
 * shapes and leading dimensions, are then replayed alone on buffers of random
 * values in the same run and thread configuration: the time of the dense
 * products the model is made of. The sparse first product (Cora, PubMed,
 * TREES, SBM features are sparse) and every per-edge pass are not in it.
 * The cold replay (floor_cold_ms, cold_over_floor): the step's calls once more,
 * each on operands of its own, interleaved with the floor's replays (cold_init
 * below): the products with their operands out of the cache, as the model's
 * are, against the floor's, whose buffers stay in the cache when small.
 *
 * With 2 threads or more the line also carries xcore_rt_ns: the round trip of
 * a cache line bounced between two OpenMP threads, just before and just after
 * the timed epochs (xcore_rt_ns below; on a VM it varies with where the
 * hypervisor put the virtual CPUs, and the gather passes' scaling with it).
 *
 * Memory: RSS before the model is built (the data set loaded; the high-water
 * mark reset through /proc/self/clear_refs) and the peak (VmHWM) after the
 * run, against the trainer's own accounting (lg_trainer_memory): parameters,
 * gradients and Adam's moments, and the activations backward keeps. Every
 * allocation the library makes inside the timed loop is counted through the
 * allocator hook (it must be 0).
 *
 * --threads1: each timed epoch at T threads is paired with one at 1 thread
 * (lg_set_threads, in turn first and second), so that the 2-vs-1 ratio
 * (thread_speedup: the median over the pairs of their ratio) is measured in
 * one run, epoch beside epoch, rather than across two runs minutes apart on a
 * machine whose speed drifts. The model's bits do not depend on the thread
 * count, so the training is the same as 2E epochs at T threads (loss_last
 * tells). Built with cmake -DLG_PASS_TIMES=ON, the run also prints one JSON
 * line per pass of the GAT and graph-transformer layers ({"bench":"passes"}: microseconds per call
 * at 1 and at T threads over the timed epochs; see core/passtime.h).
 *
 * Usage: bench_models --list | --blas (OpenBLAS's core type: current and best)
 *        bench_models --config NAME [--threads T] [--epochs E] [--warmup W]
 *                     [--infer P] [--seed S] [--trees-count N] [--threads1] [--dump DIR]
 * --dump DIR writes the configuration's data set for the peer (bench/dump.h)
 * and the model's settings to DIR/model.json, and exits.
 */
#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lipgnn.h"
#include "core/gemm.h"
#include "core/passtime.h"
#include "core/internal.h"
#include "train/model.h"
#include "train/optim.h"
#include "train/trainer_internal.h"

static const char lg_bench_prog[] = "bench_models";
#include "bench_util.h"
#include "dump.h"

/* ------------------------------------------------------------------------- */
/* Configurations                                                             */
/* ------------------------------------------------------------------------- */

typedef struct bench_cfg {
    const char *name;   /* configuration name                                  */
    const char *data;   /* cora, pubmed, trees, sbm                            */
    lg_model_kind kind; /* model                                               */
    int layers, hidden, heads;
    lg_att_norm norm;
    const char *family; /* "narrow" (hidden 64, 1 head) or "dense" (8 x 64) or "classic" / "scale" */
    lg_idx sbm_n, sbm_m; /* SBM: nodes, undirected edges                        */
    int trees_depth;
} bench_cfg;

static const bench_cfg cfgs[] = {
    {"gat-classic-cora", "cora", LG_MODEL_GAT_CLASSIC, 2, 8, 8, LG_ATT_NORM_NONE, "classic", 0, 0, 0},
    {"deepgat30-lip-cora", "cora", LG_MODEL_GAT, 30, 64, 1, LG_ATT_NORM_LIPSCHITZ, "narrow", 0, 0, 0},
    {"deepgat15-8x64-lip-cora", "cora", LG_MODEL_GAT, 15, 64, 8, LG_ATT_NORM_LIPSCHITZ, "dense", 0, 0, 0},
    {"deepgat15-8x64-lip-pubmed", "pubmed", LG_MODEL_GAT, 15, 64, 8, LG_ATT_NORM_LIPSCHITZ, "dense", 0, 0, 0},
    {"deepgt10-lip-cora", "cora", LG_MODEL_GT, 10, 64, 1, LG_ATT_NORM_LIPSCHITZ, "narrow", 0, 0, 0},
    {"trees8-gat9-lip", "trees", LG_MODEL_GAT, 9, 32, 1, LG_ATT_NORM_LIPSCHITZ, "narrow", 0, 0, 8},
    {"sbm100k-gat2-lip", "sbm", LG_MODEL_GAT, 2, 64, 1, LG_ATT_NORM_LIPSCHITZ, "scale", 100000, 1000000, 0},
    {"sbm1m-gat2-lip", "sbm", LG_MODEL_GAT, 2, 64, 1, LG_ATT_NORM_LIPSCHITZ, "scale", 1000000, 10000000, 0},
};
#define N_CFGS ((int)(sizeof cfgs / sizeof *cfgs))

/* ------------------------------------------------------------------------- */
/* Counting allocator: allocations made by the library inside the timed loop  */
/* ------------------------------------------------------------------------- */

static volatile int count_allocs;
static long n_allocs;
static void *cnt_malloc(size_t s) {
    if (count_allocs) __atomic_add_fetch(&n_allocs, 1, __ATOMIC_RELAXED);
    return malloc(s);
}
static void *cnt_calloc(size_t c, size_t s) {
    if (count_allocs) __atomic_add_fetch(&n_allocs, 1, __ATOMIC_RELAXED);
    return calloc(c, s);
}
static void *cnt_realloc(void *p, size_t s) {
    if (count_allocs) __atomic_add_fetch(&n_allocs, 1, __ATOMIC_RELAXED);
    return realloc(p, s);
}

/* CPU time of the whole process (all threads), ms: on a shared machine the
 * wall time includes the time other processes run; this does not. */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ------------------------------------------------------------------------- */
/* Resident memory                                                            */
/* ------------------------------------------------------------------------- */

/* A field of /proc/self/status in bytes (VmRSS, VmHWM), -1 if unreadable. */
static long long proc_status_bytes(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long long kb = -1;
    size_t len = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, len) && line[len] == ':') {
            kb = atoll(line + len + 1);
            break;
        }
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* Resets the peak RSS (VmHWM) to the current RSS; 0 on success. */
static int reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* ------------------------------------------------------------------------- */
/* Data sets                                                                  */
/* ------------------------------------------------------------------------- */

/* The library's stochastic block model (lg_sbm_generate): 8 classes, n
 * nodes, about m undirected edges, 80% within classes, sparse binary
 * class-dependent features (128 columns, 16 a row), Planetoid-like splits. */
static lg_dataset *sbm_dataset(lg_idx n, lg_idx m, uint64_t seed) {
    lg_sbm_opts o;
    lg_sbm_opts_default(&o);
    o.nodes = n;
    o.edges = m;
    o.seed = seed;
    lg_dataset *ds = NULL;
    lg_status st = lg_sbm_generate(&ds, &o);
    if (st) die("sbm", st);
    return ds;
}

static lg_dataset *load_dataset(const bench_cfg *c, uint64_t seed, lg_idx trees_count) {
    lg_dataset *ds = NULL;
    lg_status st;
    if (!strcmp(c->data, "sbm")) return sbm_dataset(c->sbm_n, c->sbm_m, seed);
    if (!strcmp(c->data, "trees")) {
        lg_trees_opts o;
        lg_trees_opts_default(&o);
        o.depth = c->trees_depth;
        o.count = trees_count;
        o.seed = seed;
        if ((st = lg_trees_generate(&ds, &o))) die("trees", st);
        return ds;
    }
    char dir[4096];
    if ((st = lg_dataset_resolve(c->data, dir, sizeof dir))) {
        fprintf(stderr, "bench_models: %s: %s (set LIPGNN_DATA to the directory holding cora/ and pubmed/)\n", c->name,
                lg_last_error());
        exit(77);
    }
    if ((st = lg_dataset_load(&ds, dir))) die(dir, st);
    return ds;
}

/* ------------------------------------------------------------------------- */
/* The floor: recorded lg__gemm calls replayed alone                          */
/* ------------------------------------------------------------------------- */

typedef struct replay {
    lg__gemm_log log;
    float *a, *b, *c; /* buffers large enough for every call */
    float *ws;        /* the largest workspace a call was lent (lg__gemm_ws) */
    size_t sa, sb, sc; /* their sizes (floats)                              */
} replay;

static void replay_record_begin(replay *r, int cap) {
    r->log.calls = calloc((size_t)cap, sizeof *r->log.calls);
    if (!r->log.calls) die("gemm log", LG_ENOMEM);
    r->log.cap = cap;
    r->log.count = 0;
    lg__gemm_trace = &r->log;
}

static void replay_record_end(replay *r) {
    lg__gemm_trace = NULL;
    if (r->log.count > r->log.cap) {
        fprintf(stderr, "bench_models: more than %d gemm calls\n", r->log.cap);
        exit(1);
    }
    size_t sa = 1, sb = 1, sc = 1, sw = 1;
    for (int q = 0; q < r->log.count; q++) {
        const lg__gemm_call *k = &r->log.calls[q];
        size_t ra = (size_t)(k->ta == CblasNoTrans ? k->M : k->K), rb = (size_t)(k->tb == CblasNoTrans ? k->K : k->N);
        sa = LG_MAX(sa, ra * (size_t)k->lda);
        sb = LG_MAX(sb, rb * (size_t)k->ldb);
        sc = LG_MAX(sc, (size_t)k->M * (size_t)k->ldc);
        sw = LG_MAX(sw, (size_t)k->wsn);
    }
    r->sa = sa, r->sb = sb, r->sc = sc;
    r->a = rand_array((lg_idx)sa, 1.0f, 11);
    r->b = rand_array((lg_idx)sb, 1.0f, 12);
    r->c = rand_array((lg_idx)sc, 0.0f, 13);
    r->ws = rand_array((lg_idx)sw, 0.0f, 14);
}

static double replay_once(const replay *r) {
    double t0 = now_ms();
    for (int q = 0; q < r->log.count; q++) {
        const lg__gemm_call *k = &r->log.calls[q];
        lg__gemm_ws_f32(k->ta, k->tb, k->M, k->N, k->K, r->a, k->lda, r->b, k->ldb, k->beta, r->c, k->ldc, r->ws,
                        k->wsn);
    }
    return now_ms() - t0;
}

/* --calls: every product of the training step replayed alone, `epochs`
 * times after a warm-up, on the floor's buffers; one JSON line each (its
 * place in the step, shape, median ms, GFLOP/s): where the floor goes. */
static void replay_calls(const replay *r, int reps, const char *name) {
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!t) die("alloc", LG_ENOMEM);
    for (int q = 0; q < r->log.count; q++) {
        const lg__gemm_call *k = &r->log.calls[q];
        for (int e = -1; e < reps; e++) {
            double t0 = now_ms();
            lg__gemm_ws_f32(k->ta, k->tb, k->M, k->N, k->K, r->a, k->lda, r->b, k->ldb, k->beta, r->c, k->ldc, r->ws,
                            k->wsn);
            if (e >= 0) t[e] = now_ms() - t0;
        }
        const double ms = median(t, reps), fl = 2.0 * (double)k->M * (double)k->N * (double)k->K;
        printf("{\"bench\":\"call\",\"name\":\"%s\",\"call\":%d,\"op\":\"%c%c\",\"M\":%lld,\"N\":%lld,\"K\":%lld,"
               "\"beta\":%g,\"ws\":%lld,\"ms\":%.4f,\"gflops\":%.1f}\n",
               name, q, k->ta == CblasNoTrans ? 'n' : 't', k->tb == CblasNoTrans ? 'n' : 't', (long long)k->M,
               (long long)k->N, (long long)k->K, k->beta, (long long)k->wsn, ms, fl / ms * 1e-6);
    }
    free(t);
}

/* The cold replay (floor_cold_ms): the same calls, each on buffers of its own
 * (A, B and C) from a ring of slots of at least LG__COLD_BYTES in all, so that
 * no call finds its operands in the cache (32 MiB of L3 on the machines this
 * suite ran on), as the model's products read and write each layer's own
 * activations; the floor replays every call on one set, in the cache when
 * small. Not the floor: what the products cost with their operands in
 * memory, a bound on how much of the ratio the products' cache misses can
 * explain (bench/README.md). */
#define LG__COLD_BYTES ((size_t)256 << 20)

typedef struct cold_pool {
    float *mem;       /* nslot slots of slot floats: A, then B, then C      */
    size_t slot;      /* floats a slot                                      */
    int nslot;        /* slots: call q uses slot q % nslot                  */
} cold_pool;

static void cold_init(cold_pool *p, const replay *r) {
    p->slot = r->sa + r->sb + r->sc;
    size_t want = (LG__COLD_BYTES / sizeof(float) + p->slot - 1) / p->slot;
    p->nslot = (int)LG_MIN(want, (size_t)LG_MAX(r->log.count, 2));
    p->mem = malloc(sizeof(float) * p->slot * (size_t)p->nslot);
    if (!p->mem) die("cold replay pool", LG_ENOMEM);
    for (size_t t = 0; t < p->slot * (size_t)p->nslot; t++) p->mem[t] = (float)(t % 7) * 0.125f - 0.375f;
}

static double cold_once(const replay *r, const cold_pool *p) {
    double t0 = now_ms();
    for (int q = 0; q < r->log.count; q++) {
        const lg__gemm_call *k = &r->log.calls[q];
        float *a = p->mem + (size_t)(q % p->nslot) * p->slot, *b = a + r->sa, *c = b + r->sb;
        lg__gemm_ws_f32(k->ta, k->tb, k->M, k->N, k->K, a, k->lda, b, k->ldb, k->beta, c, k->ldc, r->ws, k->wsn);
    }
    return now_ms() - t0;
}

static double replay_flops(const replay *r) {
    double f = 0;
    for (int q = 0; q < r->log.count; q++)
        f += 2.0 * (double)r->log.calls[q].M * (double)r->log.calls[q].N * (double)r->log.calls[q].K;
    return f;
}

static void replay_free(replay *r) {
    free(r->log.calls);
    free(r->a);
    free(r->b);
    free(r->c);
    free(r->ws);
}

/* ------------------------------------------------------------------------- */
/* The machine's cross-core latency, beside each thread-scaling figure        */
/* ------------------------------------------------------------------------- */

/* Round-trip time of one cache line bounced between two OpenMP threads, ns
 * (median of 5 rounds of up to 20000 trips or 100 ms each); -1 with fewer than
 * 2 threads. On a VM it depends on where the hypervisor placed the virtual
 * CPUs and can change from one minute to the next; the passes that gather rows
 * another thread wrote (GAT row pass, B1, B2) scale with 2 threads only when it
 * is short (bench/README.md, "Thread scaling, pass by pass"). */
static double xcore_rt_ns(void) {
    enum { ROUNDS = 5, TRIPS = 20000 };
    static _Alignas(64) atomic_int flag; /* 1: ping, 0: pong, 2: stop */
    double r[ROUNDS];
    int ok = 0;
#pragma omp parallel num_threads(2)
    {
        const int me = omp_get_thread_num();
        if (omp_get_num_threads() == 2) {
            for (int k = 0; k < ROUNDS; k++) {
                if (me == 0) atomic_store(&flag, 0);
#pragma omp barrier
                if (me == 0) {
                    double t0 = now_ms(), t = t0;
                    long trips = 0;
                    while (trips < TRIPS && t - t0 < 100) {
                        atomic_store_explicit(&flag, 1, memory_order_release);
                        while (atomic_load_explicit(&flag, memory_order_acquire) == 1) {}
                        if (++trips % 256 == 0) t = now_ms();
                    }
                    t = now_ms();
                    atomic_store_explicit(&flag, 2, memory_order_release);
                    r[k] = (t - t0) * 1e6 / (double)trips;
                } else {
                    int v;
                    while ((v = atomic_load_explicit(&flag, memory_order_acquire)) != 2)
                        if (v == 1) atomic_store_explicit(&flag, 0, memory_order_release);
                }
#pragma omp barrier
            }
#pragma omp single
            ok = 1;
        }
    }
    return ok ? median(r, ROUNDS) : -1;
}

static void usage(FILE *f) {
    fprintf(f, "Usage: bench_models --list | --blas\n"
               "       bench_models --config NAME [--threads T] [--epochs E] [--warmup W] [--infer P] [--seed S]\n"
               "                    [--trees-count N] [--threads1] [--calls]\n"
               "                    [--dump DIR]\n"
               "One JSON line per run (see bench/README.md). Configurations:\n");
    for (int k = 0; k < N_CFGS; k++) fprintf(f, "  %s\n", cfgs[k].name);
}

/* One training step as the peer does it: forward (dropout on), loss, backward, Adam. */
static double train_step(lg__model_f32 *m, const lg_dataset *ds, const lg_train_config *tc, float *m1, float *m2,
                         long step) {
    const uint64_t seed = tc->seed;
    lg_status st;
    double loss = 0;
    /* as lg_trainer_epoch: the log-softmax of the training rows only */
    if ((st = lg__model_forward_rows_f32(m, 1, seed, (uint64_t)step, ds->train, ds->n_train))) die("forward", st);
    if ((st = lg__model_eval_f32(m, ds->train, ds->n_train, &loss, NULL))) die("loss", st);
    if ((st = lg__model_backward_f32(m, ds->train, ds->n_train, 1, seed, (uint64_t)step))) die("backward", st);
    lg_adam a = {tc->lr, 0.9, 0.999, 1e-8, tc->weight_decay};
    lg__adam_step(&a, step, lg__model_params_f32(m), lg__model_grads_f32(m), m1, m2, (size_t)lg__model_nparams_f32(m));
    return loss;
}

int main(int argc, char **argv) {
    lg_allocator al = {cnt_malloc, cnt_calloc, cnt_realloc, free};
    lg_set_allocator(&al);
    const char *name = NULL, *dump = NULL;
    int threads = 0, epochs = 10, warmup = 2, passes = 10, pair1 = 0, calls = 0;
    uint64_t seed = 1;
    lg_idx trees_count = 1000; /* the paper: 5000 (2.6M nodes; see bench/README.md) */
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (!strcmp(a, "--blas")) { /* what run_all.py sets OPENBLAS_CORETYPE to */
            lg_blas_info bi;
            lg_blas_check(&bi);
            printf("{\"current\":\"%s\",\"best\":\"%s\",\"user_set\":%d}\n", bi.current, bi.best, bi.user_set);
            return 0;
        } else if (!strcmp(a, "--list")) {
            for (int q = 0; q < N_CFGS; q++) printf("%s %s\n", cfgs[q].name, cfgs[q].family);
            return 0;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (v && !strcmp(a, "--config")) name = argv[++k];
        else if (v && !strcmp(a, "--threads")) threads = atoi(argv[++k]);
        else if (v && !strcmp(a, "--epochs")) epochs = atoi(argv[++k]);
        else if (v && !strcmp(a, "--warmup")) warmup = atoi(argv[++k]);
        else if (v && !strcmp(a, "--infer")) passes = atoi(argv[++k]);
        else if (v && !strcmp(a, "--seed")) seed = strtoull(argv[++k], NULL, 10);
        else if (v && !strcmp(a, "--trees-count")) trees_count = atoll(argv[++k]);
        else if (v && !strcmp(a, "--dump")) dump = argv[++k];
        else if (!strcmp(a, "--threads1")) pair1 = 1;
        else if (!strcmp(a, "--calls")) calls = 1;
        else {
            fprintf(stderr, "bench_models: bad argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    const bench_cfg *c = NULL;
    for (int q = 0; name && q < N_CFGS; q++)
        if (!strcmp(cfgs[q].name, name)) c = &cfgs[q];
    if (!c || epochs < 1 || warmup < 0 || passes < 1 || trees_count < 1) {
        fprintf(stderr, "bench_models: %s\n", !name ? "--config is required" : !c ? "unknown configuration" : "bad numbers");
        usage(stderr);
        return 2;
    }
    threads = lg_set_threads(threads);
    lg_blas_info bi;
    lg_blas_check(&bi);
    if (bi.recommend)
        fprintf(stderr, "bench_models: OpenBLAS runs as %s; set OPENBLAS_CORETYPE=%s for the intended figures\n", bi.current,
                bi.best);

    double t_setup = now_ms();
    lg_dataset *ds = load_dataset(c, seed, trees_count);
    double setup_ms = now_ms() - t_setup;

    lg_model_config mc;
    lg_model_config_default(&mc, c->kind);
    mc.att_norm = c->norm;
    if (c->kind != LG_MODEL_GAT_CLASSIC) {
        mc.layers = c->layers;
        mc.hidden = c->hidden;
        mc.heads = c->heads;
    }
    lg_train_config tc;
    lg_train_config_default(&tc);
    tc.seed = seed;
    tc.epochs = warmup + epochs;

    if (dump) {
        if (lg_dump_dataset(ds, dump) || lg_dump_model(dump, c->name, c->family, &mc, &tc)) {
            perror(dump);
            return 1;
        }
        lg_dataset_free(ds);
        return 0;
    }

    /* memory before the model: the data set is loaded. Heap pages freed by
     * its construction (the SBM's generator) would stay resident and be
     * reused by the model without growing the RSS: returned first, so that
     * the growth counts the model's every byte */
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    int peak_ok = reset_peak_rss() == 0;
    long long rss_before = proc_status_bytes("VmRSS");
    lg_trainer *t = NULL;
    lg_status st = lg_trainer_init(&t, &mc, &tc, ds);
    if (st) die("trainer", st);
    lg_trainer_mem mem;
    lg_trainer_memory(t, &mem);
    lg__model_f32 *m = lg__trainer_model(t);
    float *m1, *m2;
    lg__trainer_moments(t, &m1, &m2);

    /* training epochs */
    double *ep = malloc(sizeof(double) * (size_t)epochs), *inf = malloc(sizeof(double) * (size_t)passes);
    double *epc = malloc(sizeof(double) * (size_t)epochs);
    double *ep1 = malloc(sizeof(double) * (size_t)epochs), *epc1 = malloc(sizeof(double) * (size_t)epochs);
    if (!ep || !inf || !epc || !ep1 || !epc1) die("alloc", LG_ENOMEM);
    double loss_first = 0, loss_last = 0;
    long step = 0;
    const double xcore0 = threads >= 2 ? xcore_rt_ns() : -1; /* before and after the timed epochs */
    count_allocs = 1;
    for (int e = -warmup; e < epochs; e++) {
        for (int r = 0; r < 1 + (pair1 && e >= 0); r++) { /* with --threads1: T and 1 thread, in turn first */
            const int one = pair1 && e >= 0 && r == (e & 1);
            if (pair1) lg_set_threads(one ? 1 : threads);
            step++;
#ifdef LG_PASS_TIMES
            lg__pass_times_enable(e >= 0); /* the timed epochs only */
#endif
            double t0 = now_ms(), c0 = cpu_ms();
            double loss = train_step(m, ds, &tc, m1, m2, step);
            double t1 = now_ms(), c1 = cpu_ms();
            if (e >= 0) {
                (one ? ep1 : ep)[e] = t1 - t0;
                (one ? epc1 : epc)[e] = c1 - c0;
            }
            if (step == 1) loss_first = loss;
            loss_last = loss;
        }
    }
    lg_set_threads(threads);
#ifdef LG_PASS_TIMES
    lg__pass_times_enable(0);
#endif
    const double xcore1 = threads >= 2 ? xcore_rt_ns() : -1;
    /* inference passes */
    for (int e = -1; e < passes; e++) {
        double t0 = now_ms();
        if ((st = lg__model_forward_f32(m, 0, seed, 0))) die("inference", st);
        if (e >= 0) inf[e] = now_ms() - t0;
    }
    count_allocs = 0;
    long allocs = n_allocs;
    long long rss_peak = proc_status_bytes("VmHWM"), rss_end = proc_status_bytes("VmRSS");

    /* the floor: record the products of one step and of one inference, replay them */
    replay rt, ri;
    replay_record_begin(&rt, 1 << 16);
    (void)train_step(m, ds, &tc, m1, m2, step + 1);
    replay_record_end(&rt);
    replay_record_begin(&ri, 1 << 16);
    if ((st = lg__model_forward_f32(m, 0, seed, 0))) die("inference", st);
    replay_record_end(&ri);
    double *ft = malloc(sizeof(double) * (size_t)epochs), *fi = malloc(sizeof(double) * (size_t)epochs);
    if (!ft || !fi) die("alloc", LG_ENOMEM);
    /* the cold replay of the training step's calls (cold_init), interleaved
     * with the floor's first ncold replays, so that both see the machine of the
     * same moment: fco, each cold replay over the floor's replay beside it */
    cold_pool cp;
    cold_init(&cp, &rt);
    const int ncold = LG_MIN(epochs, 5);
    double fc[5], fco[5];
    for (int e = -1; e < epochs; e++) {
        double a = replay_once(&rt), b = replay_once(&ri), cz = e < ncold ? cold_once(&rt, &cp) : 0;
        if (e >= 0) {
            ft[e] = a;
            fi[e] = b;
        }
        if (e >= 0 && e < ncold) {
            fc[e] = cz;
            fco[e] = cz / a;
        }
    }
    free(cp.mem);
    if (calls) replay_calls(&rt, epochs, c->name);
    const double fl_cold = median(fc, ncold), cold_over = median(fco, ncold);
    double *pr = malloc(sizeof(double) * (size_t)epochs); /* per pair: 1 thread / T threads */
    if (!pr) die("alloc", LG_ENOMEM);
    for (int e = 0; e < epochs; e++) pr[e] = pair1 ? ep1[e] / ep[e] : 0;
    double ms = median(ep, epochs), ms_inf = median(inf, passes), fl = median(ft, epochs), fl_inf = median(fi, epochs);
    double ms_min = ep[0], ms_cpu = median(epc, epochs);
    char pair[160] = "";
    if (pair1) {
        double ms1 = median(ep1, epochs);
        snprintf(pair, sizeof pair, "\"threads1_epoch_ms\":%.3f,\"threads1_epoch_cpu_ms\":%.3f,\"thread_speedup\":%.3f,",
                 ms1, median(epc1, epochs), median(pr, epochs));
    }

    char xcore[96] = ""; /* the cross-core round trip before and after the timed epochs */
    if (threads >= 2 && xcore0 > 0 && xcore1 > 0)
        snprintf(xcore, sizeof xcore, "\"xcore_rt_ns\":[%.0f,%.0f],", xcore0, xcore1);
    const lg_graph *g = lg_trainer_graph(t);
    char norm[64];
    lg_norm_format(norm, sizeof norm, mc.att_norm, mc.node_norm);
    size_t budget = mem.params + mem.activations; /* params, grads, 2 moments; kept activations */
    long long grown = rss_peak - rss_before;
    printf("{\"bench\":\"models\",\"name\":\"%s\",\"family\":\"%s\",\"config\":{\"model\":\"%s\",\"data\":\"%s\","
           "\"nodes\":%lld,\"edges\":%lld,\"features\":%lld,\"feature_nnz\":%lld,\"classes\":%d,\"train_nodes\":%lld,"
           "\"layers\":%d,\"hidden\":%d,\"heads\":%d,\"norm\":\"%s\",\"dropout\":%g,\"att_dropout\":%g,\"params\":%lld},"
           "\"threads\":%d,\"blas_core\":\"%s\",\"kernel_isa\":\"%s\",\"epochs\":%d,\"warmup\":%d,\"infer_passes\":%d,"
           "\"epoch_ms\":%.3f,\"epoch_ms_min\":%.3f,\"epoch_cpu_ms\":%.3f,%s%s\"infer_ms\":%.3f,\"floor_ms\":%.3f,\"floor_infer_ms\":%.3f,"
           "\"ratio\":%.3f,\"infer_ratio\":%.3f,\"floor_cold_ms\":%.3f,\"cold_over_floor\":%.3f,\"cold_ratio\":%.3f,\"cold_slots\":%d,\"gemm_calls\":%d,\"gemm_gflop\":%.3f,"
           "\"rss_before_bytes\":%lld,\"peak_rss_bytes\":%lld,\"rss_end_bytes\":%lld,\"peak_ok\":%d,"
           "\"params_adam_bytes\":%zu,\"activation_bytes\":%zu,\"workspace_bytes\":%zu,\"other_bytes\":%zu,"
           "\"mem_ratio\":%.3f,\"mem_ratio_accounted\":%.3f,\"allocs_in_loop\":%ld,\"loss_first\":%.6f,\"loss_last\":%.6f,\"setup_ms\":%.1f}\n",
           c->name, c->family, lg_model_kind_name(mc.kind), ds->name, (long long)g->n, (long long)g->nnz,
           (long long)ds->features->d, (long long)ds->features->nnz, ds->n_classes, (long long)ds->n_train,
           c->kind == LG_MODEL_GAT_CLASSIC ? 2 : mc.layers, mc.hidden, mc.heads, norm, mc.dropout, mc.att_dropout,
           (long long)lg__model_nparams_f32(m), threads, bi.current, lg_kernel_isa(), epochs, warmup, passes, ms, ms_min, ms_cpu, pair, xcore, ms_inf, fl, fl_inf,
           ms / fl, ms_inf / fl_inf, fl_cold, cold_over, ms / fl_cold, cp.nslot, rt.log.count, replay_flops(&rt) * 1e-9, rss_before, rss_peak, rss_end, peak_ok,
           mem.params, mem.activations, mem.workspace, mem.other, (double)grown / (double)budget,
           (double)(mem.params + mem.activations + mem.workspace + mem.other) / (double)budget, allocs, loss_first,
           loss_last, setup_ms);
    fflush(stdout);
#ifdef LG_PASS_TIMES /* cmake -DLG_PASS_TIMES=ON: the attention layers' passes, at 1 and at T threads (with --threads1) */
    lg__pass_times_report(stdout);
#endif
    replay_free(&rt);
    replay_free(&ri);
    free(ep), free(inf), free(epc), free(ep1), free(epc1), free(pr), free(ft), free(fi);
    lg_trainer_free(t);
    lg_dataset_free(ds);
    return 0;
}
