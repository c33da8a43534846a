/* Helpers shared by the cmocka tests. */
#ifndef LG_TESTUTIL_H
#define LG_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lipgnn.h"

/* Exit status that ctest counts as "skipped" (SKIP_RETURN_CODE). */
#define LG_TEST_SKIP 77

/* The shared data directory ($LIPGNN_DATA), or NULL after printing that it is
 * unset, so that a test can skip() with a clear reason. */
const char *lg_test_data_dir(void);

/* Path of the data set `name` under $LIPGNN_DATA into buf; 0 if unavailable
 * (message printed). */
int lg_test_dataset_path(char *buf, size_t cap, const char *name);

/* A new, empty directory /tmp/PREFIX_XXXXXX (mkdtemp) into buf (cap bytes);
 * 0, or -1. lg_test_rmtree removes it with what it holds; 0, or -1. */
int lg_test_tmpdir(char *buf, size_t cap, const char *prefix);
int lg_test_rmtree(const char *dir);

/* This process's resident memory (VmRSS) and its peak (VmHWM), in bytes from
 * /proc/self/status (-1 where it cannot be read); lg_test_peak_reset sets the
 * peak back to the resident memory (writes 5 to /proc/self/clear_refs): 0, or
 * -1 where the kernel does not allow it. Meaningless under AddressSanitizer,
 * whose shadow memory and quarantine are resident too. */
long long lg_test_rss(void);
long long lg_test_peak_rss(void);
int lg_test_peak_reset(void);

/* Allocator that fails the k-th allocation from now on (k >= 1; 0 = never)
 * and counts live allocations, to test out-of-memory paths. */
void lg_test_alloc_fail_at(long k);
long lg_test_alloc_count(void); /* allocations made since lg_test_alloc_fail_at */
long lg_test_alloc_live(void);  /* allocations not yet freed */
void lg_test_alloc_reset(void); /* back to the C library's allocator */

/* One attempt of an out-of-memory sweep, run while the k-th allocation fails:
 * calls the code under test and returns its status. On LG_OK it checks the
 * result and frees all it made; otherwise it checks that the outputs were left
 * empty (NULL) and frees whatever the test owns. */
typedef lg_status (*lg_test_alloc_attempt)(void *ctx, long k);

/* The out-of-memory sweep: for k = 1, 2, ... (k < limit; limit 0 = no bound)
 * fails the k-th allocation and runs attempt(ctx, k). Every attempt before the
 * first LG_OK must return LG_ENOMEM, and after every attempt (the successful
 * one included) no allocation may be live. Fails the test when no attempt
 * below limit succeeds. Returns the number of failed attempts (the allocation
 * points visited before the successful run); the C library's allocator is back
 * on return. */
long lg_test_alloc_sweep(lg_test_alloc_attempt attempt, void *ctx, long limit);

/* Defines `static lg_status name(void *ctx, long k)`, an attempt for
 * lg_test_alloc_sweep over the creation of a layer's cache: with
 * `ctx_type *w = ctx` and `lg_<layer>_cache *c = start`, evaluates init (an
 * expression of c, w and k giving the status); on LG_OK frees c with
 * lg_<layer>_cache_free, otherwise asserts that c was reset to NULL. */
#define LG_TEST_CACHE_ATTEMPT(name, layer, ctx_type, start, init)                                           \
    static lg_status name(void *ctx, long k) {                                                              \
        (void)k;                                                                                            \
        ctx_type *w = ctx;                                                                                  \
        lg_##layer##_cache *c = (start);                                                                    \
        lg_status st = (init);                                                                              \
        if (st == LG_OK) lg_##layer##_cache_free(c);                                                        \
        else assert_null(c);                                                                                \
        return st;                                                                                          \
    }

/* The arguments of a layer's lg_<layer>_cache_init_shared_f32/_f64 after the
 * config (cfg: the layer's config), as the ctx of an LG_TEST_CACHE_ATTEMPT. */
typedef struct lg_test_shared_cache {
    const void *cfg;
    lg_idx n_cap, nnz_cap;
    void *ws;
    size_t ws_bytes;
} lg_test_shared_cache;

/* A data-set generator under test: *out as lg_sbm_generate or
 * lg_trees_generate leave it (opts: its options). */
typedef lg_status (*lg_test_generate_fn)(lg_dataset **out, const void *opts);

/* The estimate of a generator's (or the loader's) peak memory against the
 * truth: generate(opts) once, from a reset peak (lg_test_peak_reset) and a
 * trimmed heap (lg__heap_trim: what earlier tests freed is not reused unseen);
 * the peak resident memory it adds (VmHWM after, less VmRSS before) must be at
 * most estimate, estimate at most 1.3 times it (an estimate that refuses what
 * would fit fails too), and lg_dataset_bytes of the result at most estimate.
 * Prints the figures under the name what. Says so and checks nothing under
 * AddressSanitizer (its shadow memory is resident too) or where the peak
 * cannot be reset. */
void lg_test_assert_peak(const char *what, lg_test_generate_fn generate, const void *opts, size_t estimate);

/* lg_test_alloc_sweep over generate(&ds, opts), ds starting NULL: a failed
 * attempt must leave ds NULL; the successful one must give a data set that
 * same(ref, ds) finds equal to ref. Returns the failed attempts. */
long lg_test_dataset_alloc_sweep(lg_test_generate_fn generate, const void *opts, const lg_dataset *ref,
                                 int (*same)(const lg_dataset *, const lg_dataset *), long limit);

/* lg_test_alloc_sweep over lg_trainer_init(mc, tc, ds): an attempt that
 * succeeds must also run one lg_trainer_epoch with LG_OK (an epoch allocates
 * nothing); a failed one must leave the trainer NULL. */
long lg_test_trainer_alloc_sweep(const lg_dataset *ds, const lg_model_config *mc, const lg_train_config *tc,
                                 long limit);

/* n zeroed doubles / floats, with one spare element (so n = 0 gives a valid
 * pointer); fails the test if out of memory. Free with free. */
double *lg_test_dvec(lg_idx n);
float *lg_test_fvec(lg_idx n);

/* The in-place contract of an attention layer's backward (d_in may be
 * d_out): backward(ctx, d_in, d_params, d_out) must run the layer's forward
 * and then its backward (double). Called once with d_in = d_out = a buffer of
 * n x max(F, D) holding d_out (n x D) and 1e300 beyond it, and d_params
 * zeroed (P values); the buffer's first n x F values must then be ref_in and
 * d_params ref_p, bit for bit (the results with separate buffers). */
typedef void (*lg_test_backward_fn)(void *ctx, double *d_in, double *d_params, const double *d_out);
void lg_test_in_place_backward(lg_test_backward_fn backward, void *ctx, lg_idx n, lg_idx F, lg_idx D, lg_idx P,
                               const double *d_out, const double *ref_in, const double *ref_p);

/* Kernel variants (lg_set_kernel_isa). lg_test_use_isa: selects variant name
 * ("baseline", "avx2", "avx512") and returns 1 if this CPU has it, else 0.
 * lg_test_isa_variants: how many of avx2 and avx512 this CPU has, saying for
 * the others (with test's name) that they are not compared. Both leave a
 * variant selected: end with lg_set_kernel_isa("auto"). */
int lg_test_use_isa(const char *name);
int lg_test_isa_variants(const char *test);

/* The attention kernels' variants, v = 0..LG_TEST_KERNEL_VARIANTS-1: the
 * instruction set v % 3 (baseline, avx2, avx512) with the shape variants
 * (core/isa.h; one head of 64, GAT's 8 heads of 64 and one head of 32) off
 * for v < 3 and on from 3. Selects variant v
 * and returns 1 if this CPU has its instruction set, else 0. v = 0, the
 * general baseline, is what the others are compared with. End with
 * lg_test_use_kernel_variant(0) and lg_set_kernel_isa("auto"). */
#define LG_TEST_KERNEL_VARIANTS 6
int lg_test_use_kernel_variant(int v);

/* sum_c x[c]^2 and sum_c a[c] b[c] over c = 0..n-1, summed in that order
 * (for the naive oracles). */
double lg_test_sq(const double *x, lg_idx n);
double lg_test_dot(const double *a, const double *b, lg_idx n);

/* Row i of g as "a,b,c" (a static buffer, overwritten by the next call). */
const char *lg_test_graph_row(const lg_graph *g, lg_idx i);

/* The TREES data set of lg_trees_generate with the given depth, n_trees
 * (opts.count) and seed (other options default); fails the test if generation fails. */
lg_dataset *lg_test_trees(int depth, lg_idx n_trees, uint64_t seed);

/* Fills ds->train, ->val, ->test with the nodes 0..n-1 by i % 3 (0: train,
 * 1: val, 2: test) and makes ds one graph of n nodes (n_graphs, graph_ptr).
 * Uses no cmocka assertion (callable from threads). */
void lg_test_dataset_split_thirds(lg_dataset *ds, lg_idx n);

/* A random data set: n nodes, 3n random directed edges except into node n-1
 * (which receives none), plus edges 1..n-2 -> 0 (a hub); d dense features in
 * [-1, 1) or sparse ones (each entry present with probability 1/2, value in
 * [0, 2)); c classes drawn at random; split by lg_test_dataset_split_thirds.
 * Deterministic in seed. Free with lg_dataset_free. */
lg_dataset *lg_test_random_dataset(lg_idx n, lg_idx d, int c, int sparse, uint64_t seed);

/* ds's graph made symmetric: every edge i -> j gains its j -> i. */
void lg_test_symmetrize(lg_dataset *ds);

/* A wrong transpose of the right sizes whose rows are mis-split, for the
 * transpose checks (test_graph directly, test_gat from a layer): g (n = 3)
 * has node 0 sending to 1 and 2 (rows 1 = [0] and 2 = [0]), so gT's row 0 is
 * [1, 2]; fake (p = [0, 1, 2, 2], j = [1, 2]) is a valid CSR of g's n and nnz,
 * unlike gT, which a walk of per-row cursors that ignored where each row ends
 * would read 1 then 2 from row 0's cursor and take. fake points into the
 * struct's own arrays: initialise it in place, do not copy it. */
typedef struct lg_test_misplit {
    lg_graph *g, *gT; /* g and its real transpose                  */
    lg_graph fake;    /* the mis-split one (p = fp, j = fj)         */
    lg_idx fp[4], fj[2];
} lg_test_misplit;
void lg_test_misplit_init(lg_test_misplit *m);
void lg_test_misplit_free(lg_test_misplit *m);

/* The whole-model finite-difference check (double model of src/train/model.h).
 * Moves every parameter of the built model m off its initial value by
 * 0.1 (U[0,1) - 0.5) drawn from r, then compares the backward's gradient of
 * the loss over nodes[0..n_nodes) (forward in training mode, seed 11, epoch 3) with
 * central differences (h = 1e-6) for every parameter: error
 * |fd - an| / max(1e-4, |fd|, |an|), taken as 0 when |fd - an| < 1e-11.
 * Asserts that some |an| > 1e-3. corrupt: one analytic entry (np / 2) is made
 * wrong first, to test the checker. Returns the number of errors above tol
 * (the first reported when !corrupt); *worst gets the largest error. */
struct lg__model_f64;
int lg_test_model_fd(struct lg__model_f64 *m, lg_rng *r, const lg_idx *nodes, lg_idx n_nodes, double tol,
                     double *worst, int corrupt);

/* lg_test_model_fd on the full-batch double model of mc on ds (initialised
 * and moved with an RNG seeded 5), loss over ds's training nodes. */
int lg_test_model_fd_check(const lg_model_config *mc, const lg_dataset *ds, double tol, double *worst,
                           int corrupt);

/* lg_test_model_fd on the mini-batch double model of mc on ds: the first
 * batch of 3 graphs in data order (lg__batcher, batch size 3; asserts that it
 * holds and read 3 graphs), the model's caches sized by the batcher, its
 * parameters initialised and moved with an RNG seeded 5, the loss over the
 * batch's targets. *batch_nodes (if not NULL) gets the batch graph's nodes. */
int lg_test_batch_model_fd(const lg_model_config *mc, const lg_dataset *ds, double tol, double *worst, int corrupt,
                           lg_idx *batch_nodes);

/* A layer's refusal of one bad config field: b = ok (a valid lg_<layer>_config)
 * with b.field = value must make lg_<layer>_config_check fail with LG_EINVAL
 * and a message naming the field, lg_<layer>_cache_init_f32 (4 nodes, 4
 * edges) fail with LG_EINVAL and the cache reset to NULL, and
 * lg_<layer>_layout_get fail with LG_EINVAL. layer: cosatt, gt (the layers
 * whose API has these three calls with these arguments). */
#define LG_TEST_BAD_CONFIG(layer, ok, b, field, value)                                                      \
    do {                                                                                                    \
        b = ok;                                                                                             \
        b.field = value;                                                                                    \
        assert_int_equal(lg_##layer##_config_check(&b), LG_EINVAL);                                         \
        assert_non_null(strstr(lg_last_error(), #field));                                                   \
        lg_##layer##_cache *c_ = (lg_##layer##_cache *)1;                                                   \
        assert_int_equal(lg_##layer##_cache_init_f32(&c_, &b, 4, 4), LG_EINVAL);                            \
        assert_null(c_);                                                                                    \
        lg_##layer##_layout l_;                                                                             \
        assert_int_equal(lg_##layer##_layout_get(&b, &l_), LG_EINVAL);                                      \
    } while (0)

#define assert_ok(expr)                                                             \
    do {                                                                            \
        lg_status s__ = (expr);                                                     \
        if (s__ != LG_OK) fail_msg("%s -> %s: %s", #expr, lg_status_name(s__), lg_last_error()); \
    } while (0)

#endif
