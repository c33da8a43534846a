#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "core/internal.h"
#include "core/isa.h"
#include "train/batch.h"
#include "train/model.h"

const char *lg_test_data_dir(void) {
    const char *d = getenv("LIPGNN_DATA");
    if (!d || !*d) {
        fprintf(stderr, "LIPGNN_DATA is unset: skipping the tests that need the shared data sets "
                        "(point it at the directory holding cora/ and pubmed/)\n");
        return NULL;
    }
    return d;
}

int lg_test_tmpdir(char *buf, size_t cap, const char *prefix) {
    const int n = snprintf(buf, cap, "/tmp/%s_XXXXXX", prefix);
    return n > 0 && (size_t)n < cap && mkdtemp(buf) ? 0 : -1;
}

int lg_test_rmtree(const char *dir) {
    char cmd[4200];
    const int n = snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return n > 0 && (size_t)n < sizeof cmd && system(cmd) == 0 ? 0 : -1;
}

/* The field's kB in /proc/self/status, in bytes; -1 if absent. */
static long long lg__status_bytes(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long long v = -1;
    const size_t k = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, k) && line[k] == ':') {
            v = 1024 * atoll(line + k + 1);
            break;
        }
    fclose(f);
    return v;
}

long long lg_test_rss(void) { return lg__status_bytes("VmRSS"); }
long long lg_test_peak_rss(void) { return lg__status_bytes("VmHWM"); }

int lg_test_peak_reset(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    const int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

void lg_test_assert_peak(const char *what, lg_test_generate_fn generate, const void *opts, size_t estimate) {
#if defined(__SANITIZE_ADDRESS__)
    (void)generate;
    (void)opts;
    fprintf(stderr, "%s: AddressSanitizer: resident memory not compared with the estimate (%.1f MiB)\n", what,
            estimate / 1048576.0);
#else
    /* transparent huge pages, where the system gives them unasked, would round
     * resident memory up to 2 MiB an array */
    (void)prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
    /* the heap's freed pages given back (lg__heap_trim), so that pages an
     * earlier case freed and the allocator kept resident are not reused unseen
     * (a load measured at 52 MiB after another one, where it takes 87 alone).
     * It does not undo the mmap threshold glibc raised meanwhile: test_dataset
     * loads each case in a new process for that. */
    lg__heap_trim();
    if (lg_test_peak_reset() != 0) {
        fprintf(stderr, "%s: /proc/self/clear_refs cannot be written: peak memory not compared\n", what);
        return;
    }
    const long long before = lg_test_rss();
    lg_dataset *ds = NULL;
    assert_int_equal(generate(&ds, opts), LG_OK);
    const long long used = lg_test_peak_rss() - before;
    fprintf(stderr, "%s: peak %.1f MiB, estimate %.1f MiB (%.2f), data set %.1f MiB\n", what, used / 1048576.0,
            estimate / 1048576.0, (double)estimate / (double)used, lg_dataset_bytes(ds) / 1048576.0);
    assert_true(before > 0 && used > 0);
    assert_true((double)used <= (double)estimate);
    assert_true((double)estimate <= 1.3 * (double)used);
    assert_true(lg_dataset_bytes(ds) <= estimate);
    lg_dataset_free(ds);
#endif
}

int lg_test_dataset_path(char *buf, size_t cap, const char *name) {
    const char *d = lg_test_data_dir();
    if (!d) return 0;
    snprintf(buf, cap, "%s/%s", d, name);
    struct stat sb;
    if (stat(buf, &sb) != 0) {
        fprintf(stderr, "LIPGNN_DATA=%s has no %s/: skipping\n", d, name);
        return 0;
    }
    return 1;
}

static long fail_at, count, live;

static void *t_malloc(size_t n) {
    if (fail_at && ++count >= fail_at) { if (count == fail_at) return NULL; }
    void *p = malloc(n);
    if (p) live++;
    return p;
}
static void *t_calloc(size_t a, size_t b) {
    if (fail_at && ++count >= fail_at) { if (count == fail_at) return NULL; }
    void *p = calloc(a, b);
    if (p) live++;
    return p;
}
static void *t_realloc(void *q, size_t n) {
    if (fail_at && ++count >= fail_at) { if (count == fail_at) return NULL; }
    void *p = realloc(q, n);
    if (p && !q) live++;
    return p;
}
static void t_free(void *p) {
    if (p) live--;
    free(p);
}

void lg_test_alloc_fail_at(long k) {
    fail_at = k;
    count = 0;
    live = 0;
    lg_allocator a = {t_malloc, t_calloc, t_realloc, t_free};
    lg_set_allocator(&a);
}
long lg_test_alloc_count(void) { return count; }
long lg_test_alloc_live(void) { return live; }
void lg_test_alloc_reset(void) { lg_set_allocator(NULL); }

long lg_test_alloc_sweep(lg_test_alloc_attempt attempt, void *ctx, long limit) {
    long failures = 0;
    int done = 0;
    for (long k = 1; (limit == 0 || k < limit) && !done; k++) {
        lg_test_alloc_fail_at(k);
        lg_status st = attempt(ctx, k);
        if (st == LG_OK) {
            done = 1;
        } else {
            assert_int_equal(st, LG_ENOMEM);
            failures++;
        }
        assert_int_equal(lg_test_alloc_live(), 0);
        lg_test_alloc_reset();
    }
    assert_true(done);
    return failures;
}

typedef struct dataset_sweep {
    lg_test_generate_fn generate;
    const void *opts;
    const lg_dataset *ref;
    int (*same)(const lg_dataset *, const lg_dataset *);
} dataset_sweep;

static lg_status dataset_attempt(void *ctx, long k) {
    (void)k;
    const dataset_sweep *w = ctx;
    lg_dataset *ds = NULL;
    lg_status st = w->generate(&ds, w->opts);
    if (st == LG_OK) {
        assert_true(w->same(w->ref, ds));
        lg_dataset_free(ds);
    } else {
        assert_null(ds);
    }
    return st;
}

long lg_test_dataset_alloc_sweep(lg_test_generate_fn generate, const void *opts, const lg_dataset *ref,
                                 int (*same)(const lg_dataset *, const lg_dataset *), long limit) {
    dataset_sweep w = {generate, opts, ref, same};
    return lg_test_alloc_sweep(dataset_attempt, &w, limit);
}

typedef struct trainer_sweep {
    const lg_dataset *ds;
    const lg_model_config *mc;
    const lg_train_config *tc;
} trainer_sweep;

static lg_status trainer_attempt(void *ctx, long k) {
    (void)k;
    const trainer_sweep *w = ctx;
    lg_trainer *t = NULL;
    lg_status st = lg_trainer_init(&t, w->mc, w->tc, w->ds);
    if (st == LG_OK) {
        lg_epoch_stats es;
        assert_int_equal(lg_trainer_epoch(t, &es), LG_OK); /* no allocation inside an epoch */
    } else {
        assert_null(t);
    }
    lg_trainer_free(t);
    return st;
}

long lg_test_trainer_alloc_sweep(const lg_dataset *ds, const lg_model_config *mc, const lg_train_config *tc,
                                 long limit) {
    trainer_sweep w = {ds, mc, tc};
    return lg_test_alloc_sweep(trainer_attempt, &w, limit);
}

void lg_test_in_place_backward(lg_test_backward_fn backward, void *ctx, lg_idx n, lg_idx F, lg_idx D, lg_idx P,
                               const double *d_out, const double *ref_in, const double *ref_p) {
    const lg_idx W = F > D ? F : D;
    double *buf = lg_test_dvec(n * W), *d_p = lg_test_dvec(P);
    for (lg_idx t = 0; t < n * W; t++) buf[t] = 1e300; /* beyond d_out: must not matter */
    memcpy(buf, d_out, sizeof(double) * (size_t)(n * D));
    backward(ctx, buf, d_p, buf);
    for (lg_idx t = 0; t < n * F; t++)
        if (buf[t] != ref_in[t]) fail_msg("in place: dL/d in[%lld] = %.17g, with separate buffers %.17g", (long long)t, buf[t], ref_in[t]);
    assert_memory_equal(d_p, ref_p, sizeof(double) * (size_t)P);
    free(buf);
    free(d_p);
}

double *lg_test_dvec(lg_idx n) {
    double *p = calloc((size_t)n + 1, sizeof(double));
    assert_non_null(p);
    return p;
}

float *lg_test_fvec(lg_idx n) {
    float *p = calloc((size_t)n + 1, sizeof(float));
    assert_non_null(p);
    return p;
}

int lg_test_use_isa(const char *name) {
    return lg_set_kernel_isa(name) == LG_OK && strcmp(lg_kernel_isa(), name) == 0;
}

int lg_test_use_kernel_variant(int v) {
    static const char *const isa[3] = {"baseline", "avx2", "avx512"};
    lg__set_shape_variants(v >= 3);
    return lg_test_use_isa(isa[v % 3]);
}

int lg_test_isa_variants(const char *test) {
    static const char *const isa[2] = {"avx2", "avx512"};
    int have = 0;
    for (int v = 0; v < 2; v++) {
        if (lg_test_use_isa(isa[v])) have++;
        else print_message("%s: this CPU has no %s (CPUID): that variant is not compared\n", test, isa[v]);
    }
    return have;
}

double lg_test_sq(const double *x, lg_idx n) {
    double s = 0;
    for (lg_idx c = 0; c < n; c++) s += x[c] * x[c];
    return s;
}

double lg_test_dot(const double *a, const double *b, lg_idx n) {
    double s = 0;
    for (lg_idx c = 0; c < n; c++) s += a[c] * b[c];
    return s;
}

const char *lg_test_graph_row(const lg_graph *g, lg_idx i) {
    static char buf[256];
    buf[0] = '\0';
    for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%lld", e > g->p[i] ? "," : "", (long long)g->j[e]);
    return buf;
}

lg_dataset *lg_test_trees(int depth, lg_idx n_trees, uint64_t seed) {
    lg_trees_opts o;
    lg_trees_opts_default(&o);
    o.depth = depth;
    o.count = n_trees;
    o.seed = seed;
    lg_dataset *ds = NULL;
    assert_ok(lg_trees_generate(&ds, &o));
    return ds;
}

void lg_test_dataset_split_thirds(lg_dataset *ds, lg_idx n) {
    ds->train = malloc(sizeof(lg_idx) * (size_t)n);
    ds->val = malloc(sizeof(lg_idx) * (size_t)n);
    ds->test = malloc(sizeof(lg_idx) * (size_t)n);
    for (lg_idx i = 0; i < n; i++) {
        if (i % 3 == 0) ds->train[ds->n_train++] = i;
        else if (i % 3 == 1) ds->val[ds->n_val++] = i;
        else ds->test[ds->n_test++] = i;
    }
    ds->n_graphs = 1;
    ds->graph_ptr = malloc(sizeof(lg_idx) * 2);
    ds->graph_ptr[0] = 0;
    ds->graph_ptr[1] = n;
}

void lg_test_misplit_init(lg_test_misplit *m) {
    const lg_idx src[] = {0, 0}, dst[] = {1, 2}, fp[] = {0, 1, 2, 2}, fj[] = {1, 2};
    m->g = m->gT = NULL;
    assert_ok(lg_graph_from_edges(&m->g, 3, 2, src, dst, 0));
    assert_ok(lg_graph_transpose(m->g, &m->gT));
    memcpy(m->fp, fp, sizeof fp);
    memcpy(m->fj, fj, sizeof fj);
    m->fake = (lg_graph){3, 2, m->fp, m->fj};
    assert_ok(lg_graph_check(&m->fake));
    assert_memory_not_equal(m->fake.p, m->gT->p, sizeof fp);
}

void lg_test_misplit_free(lg_test_misplit *m) {
    lg_graph_free(m->g);
    lg_graph_free(m->gT);
}

void lg_test_symmetrize(lg_dataset *ds) {
    const lg_graph *g = ds->graph;
    lg_idx *src = malloc(sizeof(lg_idx) * (size_t)(g->nnz + 1)), *dst = malloc(sizeof(lg_idx) * (size_t)(g->nnz + 1));
    assert_true(src && dst);
    for (lg_idx i = 0; i < g->n; i++)
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) src[e] = g->j[e], dst[e] = i; /* row i: j -> i */
    lg_graph *s = NULL;
    assert_ok(lg_graph_from_edges(&s, g->n, g->nnz, src, dst, LG_GRAPH_SYMMETRIZE));
    free(src);
    free(dst);
    lg_graph_free(ds->graph);
    ds->graph = s;
}

lg_dataset *lg_test_random_dataset(lg_idx n, lg_idx d, int c, int sparse, uint64_t seed) {
    lg_rng r;
    lg_rng_seed(&r, seed);
    lg_dataset *ds = calloc(1, sizeof *ds);
    assert_non_null(ds);
    ds->name = strdup("random");
    lg_idx m = 3 * n, k = 0;
    lg_idx *src = malloc(sizeof(lg_idx) * (size_t)(m + n)), *dst = malloc(sizeof(lg_idx) * (size_t)(m + n));
    assert_true(src && dst);
    for (lg_idx e = 0; e < m; e++) {
        src[k] = (lg_idx)lg_rng_below(&r, (uint64_t)n);
        dst[k] = (lg_idx)lg_rng_below(&r, (uint64_t)n);
        if (dst[k] != n - 1) k++; /* node n-1 receives nothing */
    }
    for (lg_idx i = 1; i < n - 1; i++) { src[k] = i; dst[k++] = 0; } /* hub 0 */
    assert_ok(lg_graph_from_edges(&ds->graph, n, k, src, dst, 0));
    free(src);
    free(dst);
    lg_features *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->n = n;
    f->d = d;
    if (sparse) {
        f->kind = LG_FEAT_SPARSE;
        f->p = calloc((size_t)n + 1, sizeof(lg_idx));
        f->j = malloc(sizeof(lg_idx) * (size_t)(n * d));
        f->x = malloc(sizeof(float) * (size_t)(n * d));
        for (lg_idx i = 0; i < n; i++) {
            for (lg_idx q = 0; q < d; q++)
                if (lg_rng_below(&r, 2)) { f->j[f->nnz] = q; f->x[f->nnz++] = (float)(lg_rng_double(&r) * 2); }
            f->p[i + 1] = f->nnz;
        }
    } else {
        f->kind = LG_FEAT_DENSE;
        f->nnz = n * d;
        f->x = malloc(sizeof(float) * (size_t)(n * d));
        for (lg_idx q = 0; q < n * d; q++) f->x[q] = (float)(lg_rng_double(&r) * 2 - 1);
    }
    ds->features = f;
    ds->n_classes = c;
    ds->labels = malloc(sizeof(int32_t) * (size_t)n);
    for (lg_idx i = 0; i < n; i++) ds->labels[i] = (int32_t)lg_rng_below(&r, (uint64_t)c);
    lg_test_dataset_split_thirds(ds, n);
    return ds;
}

/* Loss of the double model at its current parameters, over nodes. */
static double model_loss64(lg__model_f64 *m, const lg_idx *nodes, lg_idx n_nodes) {
    double loss;
    assert_ok(lg__model_forward_f64(m, 1, 11, 3));
    assert_ok(lg__model_eval_f64(m, nodes, n_nodes, &loss, NULL));
    return loss;
}

int lg_test_model_fd(lg__model_f64 *m, lg_rng *r, const lg_idx *nodes, lg_idx n_nodes, double tol, double *worst,
                     int corrupt) {
    double *p = lg__model_params_f64(m);
    const lg_idx np = lg__model_nparams_f64(m);
    /* biases start at 0 and LayerNorm at (1, 0): move every parameter off its
     * initial value so that every path carries signal */
    for (lg_idx k = 0; k < np; k++) p[k] += 0.1 * (lg_rng_double(r) - 0.5);
    model_loss64(m, nodes, n_nodes);
    assert_ok(lg__model_backward_f64(m, nodes, n_nodes, 1, 11, 3));
    double *g = malloc(sizeof(double) * (size_t)np);
    assert_non_null(g);
    memcpy(g, lg__model_grads_f64(m), sizeof(double) * (size_t)np);
    if (corrupt) g[np / 2] += 1e-3 + 0.01 * fabs(g[np / 2]); /* a deliberately wrong gradient */
    double gmax = 0;
    for (lg_idx k = 0; k < np; k++) gmax = fmax(gmax, fabs(g[k]));
    assert_true(gmax > 1e-3); /* the loss does depend on the parameters */
    int bad = 0;
    *worst = 0;
    const double h = 1e-6;
    for (lg_idx k = 0; k < np; k++) {
        double keep = p[k];
        p[k] = keep + h;
        double lp = model_loss64(m, nodes, n_nodes);
        p[k] = keep - h;
        double lm = model_loss64(m, nodes, n_nodes);
        p[k] = keep;
        double num = (lp - lm) / (2 * h), err = fabs(num - g[k]) / fmax(1e-4, fmax(fabs(num), fabs(g[k])));
        if (fabs(num - g[k]) < 1e-11) err = 0; /* below the central difference's rounding floor (~eps/h) */
        if (err > *worst) *worst = err;
        if (err > tol) {
            if (!bad && !corrupt) print_message("  parameter %lld: analytic %.10g fd %.10g\n", (long long)k, g[k], num);
            bad++;
        }
    }
    free(g);
    return bad;
}

int lg_test_model_fd_check(const lg_model_config *mc, const lg_dataset *ds, double tol, double *worst,
                           int corrupt) {
    lg__model_f64 *m = NULL;
    lg_rng r;
    lg_rng_seed(&r, 5);
    assert_ok(lg__model_init_f64(&m, mc, ds, ds->features, &r));
    int bad = lg_test_model_fd(m, &r, ds->train, ds->n_train, tol, worst, corrupt);
    lg__model_free_f64(m);
    return bad;
}

int lg_test_batch_model_fd(const lg_model_config *mc, const lg_dataset *ds, double tol, double *worst, int corrupt,
                           lg_idx *batch_nodes) {
    lg__batcher b;
    assert_ok(lg__batcher_init(&b, ds, ds->features, mc, 3, 0));
    lg__batch bt;
    lg__batcher_fill(&b, 0, 0, 0, &bt);
    assert_true(bt.n_graphs == 3 && bt.n_read == 3);
    if (batch_nodes) *batch_nodes = bt.g->n;
    const lg_idx cap[3] = {b.n_cap, b.nnz_cap, b.t_cap};
    lg__model_f64 *m = NULL;
    lg_rng r;
    lg_rng_seed(&r, 5);
    assert_ok(lg__model_init_batch_f64(&m, mc, ds, ds->features, cap, &r));
    assert_ok(lg__model_bind_f64(m, &bt));
    int bad = lg_test_model_fd(m, &r, b.iota, b.n_targets, tol, worst, corrupt);
    lg__model_free_f64(m);
    lg__batcher_destroy(&b);
    return bad;
}
