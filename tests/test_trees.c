/* Tests of datasets/trees.c: the TREES generator (shape, features, targets,
 * determinism, stratified split, option checks, out-of-memory paths). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "core/internal.h"

static lg_dataset *gen(int depth, lg_idx count, uint64_t seed, double f) {
    lg_trees_opts o;
    lg_trees_opts_default(&o);
    o.depth = depth;
    o.count = count;
    o.seed = seed;
    o.train_fraction = f;
    lg_dataset *ds = NULL;
    assert_ok(lg_trees_generate(&ds, &o));
    assert_non_null(ds);
    return ds;
}

/* The feature columns of row v of a sparse matrix, into cols (returns count). */
static lg_idx row_cols(const lg_features *F, lg_idx v, lg_idx *cols, lg_idx cap) {
    lg_idx k = 0;
    for (lg_idx q = F->p[v]; q < F->p[v + 1]; q++) {
        assert_true(F->x[q] == 1.0f);
        if (k < cap) cols[k] = F->j[q];
        k++;
    }
    return k;
}

static void test_defaults(void **state) {
    (void)state;
    lg_trees_opts o;
    memset(&o, 0x5a, sizeof o);
    lg_trees_opts_default(&o);
    assert_int_equal(o.depth, 3);
    assert_int_equal(o.count, 5000);
    assert_int_equal(o.seed, 0);
    assert_true(o.train_fraction == 0.8);
    lg_trees_opts_default(NULL); /* no crash */
}

/* Depth 3: every structural and content property, tree by tree. */
static void test_depth3_structure(void **state) {
    (void)state;
    const lg_idx count = 40, L = 8, nt = 15;
    lg_dataset *ds = gen(3, count, 7, 0.8);
    assert_string_equal(ds->name, "trees-d3");
    assert_int_equal(ds->n_graphs, count);
    assert_int_equal(ds->n_classes, L);
    assert_non_null(ds->graph);
    assert_ok(lg_graph_check(ds->graph));
    assert_int_equal(ds->graph->n, count * nt);
    assert_int_equal(ds->graph->nnz, count * (14 + 15));
    const lg_features *F = ds->features;
    assert_non_null(F);
    assert_int_equal(F->kind, LG_FEAT_SPARSE);
    assert_int_equal(F->n, count * nt);
    assert_int_equal(F->d, 2 * L);
    assert_int_equal(F->p[0], 0);
    assert_int_equal(F->p[F->n], F->nnz);
    for (lg_idx v = 0; v < F->n; v++)
        for (lg_idx q = F->p[v]; q < F->p[v + 1]; q++) {
            assert_in_range(F->j[q], 0, F->d - 1);
            if (q > F->p[v]) assert_true(F->j[q] > F->j[q - 1]);
        }
    assert_non_null(ds->graph_ptr);
    assert_non_null(ds->roots);
    const lg_graph *g = ds->graph;
    /* randomness across trees: leaf keys and leaf labels are random
     * permutations, independent of each other, and the root key varies */
    lg_idx key0[8], lab0[8], differ_key = 0, differ_lab = 0, lab_is_key = 0, leaves = 0;
    int root_keys[8] = {0};
    for (lg_idx t = 0; t < count; t++) {
        lg_idx off = t * nt, cols[4];
        assert_int_equal(row_cols(F, off, cols, 4), 1);
        root_keys[cols[0]] = 1;
        int dk = 0, dl = 0;
        for (lg_idx i = 0; i < L; i++) {
            assert_int_equal(row_cols(F, off + 7 + i, cols, 4), 2);
            if (t == 0) { key0[i] = cols[0]; lab0[i] = cols[1]; }
            dk |= cols[0] != key0[i];
            dl |= cols[1] != lab0[i];
            lab_is_key += cols[1] - L == cols[0];
            leaves++;
        }
        differ_key += dk;
        differ_lab += dl;
    }
    assert_true(differ_key > count / 2);
    assert_true(differ_lab > count / 2);
    assert_true(lab_is_key < leaves / 2); /* ~1/8 expected if independent */
    int distinct_root_keys = 0;
    for (int k = 0; k < 8; k++) distinct_root_keys += root_keys[k];
    assert_true(distinct_root_keys >= 5);
    for (lg_idx t = 0; t < count; t++) {
        lg_idx off = ds->graph_ptr[t];
        assert_int_equal(off, t * nt);
        assert_int_equal(ds->graph_ptr[t + 1] - off, nt);
        assert_int_equal(ds->roots[t], off);
        /* in-neighbours: interior v <- {v, 2v+1, 2v+2}; leaves <- {v} */
        for (lg_idx v = 0; v < nt; v++) {
            lg_idx i = off + v;
            if (v < 7) {
                assert_int_equal(lg_graph_degree(g, i), 3);
                assert_int_equal(g->j[g->p[i]], i);
                assert_int_equal(g->j[g->p[i] + 1], off + 2 * v + 1);
                assert_int_equal(g->j[g->p[i] + 2], off + 2 * v + 2);
            } else {
                assert_int_equal(lg_graph_degree(g, i), 1);
                assert_int_equal(g->j[g->p[i]], i);
            }
        }
        /* features: root = key only, interior nothing, leaves key + label */
        lg_idx cols[4];
        assert_int_equal(row_cols(F, off, cols, 4), 1);
        assert_in_range(cols[0], 0, L - 1);
        lg_idx root_key = cols[0] + 1;
        for (lg_idx v = 1; v < 7; v++) assert_int_equal(row_cols(F, off + v, cols, 4), 0);
        int seen_key[8] = {0}, seen_label[8] = {0};
        lg_idx expect = -1;
        for (lg_idx v = 7; v < nt; v++) {
            assert_int_equal(row_cols(F, off + v, cols, 4), 2);
            assert_in_range(cols[0], 0, L - 1);
            assert_in_range(cols[1], L, 2 * L - 1);
            lg_idx key = cols[0] + 1, label = cols[1] - L;
            assert_int_equal(seen_key[key - 1]++, 0);
            assert_int_equal(seen_label[label]++, 0);
            if (key == root_key) expect = label;
        }
        assert_int_not_equal(expect, -1);
        /* the target is the label attribute of the leaf with the root's key */
        assert_int_equal(ds->labels[off], expect);
        for (lg_idx v = 1; v < nt; v++) assert_int_equal(ds->labels[off + v], -1);
    }
    lg_dataset_free(ds);
}

static int same_dataset(const lg_dataset *a, const lg_dataset *b) {
    const lg_features *A = a->features, *B = b->features;
    if (a->graph->n != b->graph->n || a->graph->nnz != b->graph->nnz || A->nnz != B->nnz) return 0;
    if (a->n_train != b->n_train || a->n_test != b->n_test) return 0;
    lg_idx n = a->graph->n;
    return !memcmp(a->graph->p, b->graph->p, sizeof(lg_idx) * (size_t)(n + 1)) &&
           !memcmp(a->graph->j, b->graph->j, sizeof(lg_idx) * (size_t)a->graph->nnz) &&
           !memcmp(A->p, B->p, sizeof(lg_idx) * (size_t)(n + 1)) &&
           !memcmp(A->j, B->j, sizeof(lg_idx) * (size_t)A->nnz) &&
           !memcmp(A->x, B->x, sizeof(float) * (size_t)A->nnz) &&
           !memcmp(a->labels, b->labels, sizeof(int32_t) * (size_t)n) &&
           !memcmp(a->train, b->train, sizeof(lg_idx) * (size_t)a->n_train) &&
           !memcmp(a->test, b->test, sizeof(lg_idx) * (size_t)a->n_test);
}

static void test_determinism(void **state) {
    (void)state;
    lg_dataset *a = gen(4, 30, 123, 0.8), *b = gen(4, 30, 123, 0.8), *c = gen(4, 30, 124, 0.8);
    assert_true(same_dataset(a, b));
    assert_false(same_dataset(a, c));
    /* the feature columns themselves differ, not only the split */
    assert_true(memcmp(a->features->j, c->features->j, sizeof(lg_idx) * (size_t)a->features->nnz) != 0);
    lg_dataset_free(a);
    lg_dataset_free(b);
    lg_dataset_free(c);
}

/* Train and test partition the roots, ascending, and each label class sends
 * floor or ceil of f * its size to train, round(f * count) in all. */
static void check_split(const lg_dataset *ds, double f) {
    lg_idx count = ds->n_graphs, C = ds->n_classes;
    assert_int_equal(ds->n_val, 0);
    assert_int_equal(ds->n_train + ds->n_test, count);
    assert_int_equal(ds->n_train, (lg_idx)llround(f * (double)count));
    lg_idx *cls = calloc((size_t)C, sizeof *cls), *tr = calloc((size_t)C, sizeof *tr);
    int *mark = calloc((size_t)count, sizeof *mark);
    assert_non_null(cls);
    assert_non_null(tr);
    assert_non_null(mark);
    for (lg_idx t = 0; t < count; t++) cls[ds->labels[ds->roots[t]]]++;
    lg_idx nt = ds->graph_ptr[1];
    for (int s = 0; s < 2; s++) {
        const lg_idx *ids = s == 0 ? ds->train : ds->test;
        lg_idx m = s == 0 ? ds->n_train : ds->n_test;
        for (lg_idx k = 0; k < m; k++) {
            if (k > 0) assert_true(ids[k] > ids[k - 1]);
            assert_int_equal(ids[k] % nt, 0); /* a root */
            lg_idx t = ids[k] / nt;
            assert_in_range(t, 0, count - 1);
            assert_int_equal(mark[t]++, 0);
            if (s == 0) tr[ds->labels[ids[k]]]++;
        }
    }
    for (lg_idx c = 0; c < C; c++) {
        double share = f * (double)cls[c];
        assert_true((double)tr[c] >= floor(share) && (double)tr[c] <= ceil(share));
    }
    free(cls);
    free(tr);
    free(mark);
}

static void test_split(void **state) {
    (void)state;
    lg_dataset *ds = gen(2, 1000, 5, 0.8);
    check_split(ds, 0.8);
    /* per-label train share close to 0.8 */
    lg_idx cls[4] = {0}, tr[4] = {0};
    for (lg_idx t = 0; t < ds->n_graphs; t++) cls[ds->labels[ds->roots[t]]]++;
    for (lg_idx k = 0; k < ds->n_train; k++) tr[ds->labels[ds->train[k]]]++;
    for (int c = 0; c < 4; c++) {
        assert_true(cls[c] > 150); /* labels are spread over the classes */
        assert_true(fabs((double)tr[c] / (double)cls[c] - 0.8) < 0.01);
    }
    lg_dataset_free(ds);
    /* rounding: 7 trees at 0.5 -> 4 train; tiny and odd cases */
    ds = gen(3, 7, 1, 0.5);
    check_split(ds, 0.5);
    assert_int_equal(ds->n_train, 4);
    lg_dataset_free(ds);
    ds = gen(3, 1, 1, 0.8);
    check_split(ds, 0.8);
    assert_int_equal(ds->n_train, 1);
    lg_dataset_free(ds);
    ds = gen(3, 1, 1, 0.3);
    check_split(ds, 0.3);
    assert_int_equal(ds->n_test, 1);
    lg_dataset_free(ds);
    for (uint64_t seed = 0; seed < 20; seed++) {
        ds = gen(3, 50 + (lg_idx)seed, seed, 0.1 + 0.04 * (double)seed);
        check_split(ds, 0.1 + 0.04 * (double)seed);
        lg_dataset_free(ds);
    }
}

static void test_invalid(void **state) {
    (void)state;
    lg_trees_opts o;
    lg_dataset *ds = (lg_dataset *)&ds; /* must be reset to NULL */
    lg_trees_opts_default(&o);
    o.depth = 1;
    assert_int_equal(lg_trees_generate(&ds, &o), LG_EINVAL);
    assert_null(ds);
    assert_non_null(strstr(lg_last_error(), "depth 1"));
    o.depth = 11;
    assert_int_equal(lg_trees_generate(&ds, &o), LG_EINVAL);
    lg_trees_opts_default(&o);
    o.count = 0;
    assert_int_equal(lg_trees_generate(&ds, &o), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "count 0"));
    o.count = -5;
    assert_int_equal(lg_trees_generate(&ds, &o), LG_EINVAL);
    o.count = INT64_MAX;
    assert_int_equal(lg_trees_generate(&ds, &o), LG_EINVAL);
    lg_trees_opts_default(&o);
    double bad[] = {0.0, 1.0, -0.5, 1.5, NAN, INFINITY};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        o.train_fraction = bad[k];
        assert_int_equal(lg_trees_generate(&ds, &o), LG_EINVAL);
        assert_null(ds);
    }
    assert_non_null(strstr(lg_last_error(), "train fraction"));
    lg_trees_opts_default(&o);
    assert_int_equal(lg_trees_generate(&ds, NULL), LG_EINVAL);
    assert_int_equal(lg_trees_generate(NULL, &o), LG_EINVAL);
}

static void test_depth10(void **state) {
    (void)state;
    lg_dataset *ds = gen(10, 3, 42, 0.8);
    assert_string_equal(ds->name, "trees-d10");
    assert_int_equal(ds->graph->n, 3 * 2047);
    assert_int_equal(ds->graph->nnz, 3 * (2046 + 2047));
    assert_int_equal(ds->n_classes, 1024);
    assert_int_equal(ds->features->d, 2048);
    assert_int_equal(ds->features->nnz, 3 * (2 * 1024 + 1));
    assert_ok(lg_graph_check(ds->graph));
    /* the last node of tree 1 is a leaf whose parent is (v - 1) / 2 */
    lg_idx off = ds->graph_ptr[1], v = 2046, par = off + (v - 1) / 2;
    assert_int_equal(lg_graph_degree(ds->graph, par), 3);
    assert_int_equal(ds->graph->j[ds->graph->p[par] + 2], off + v);
    check_split(ds, 0.8);
    lg_dataset_free(ds);
}

static lg_status generate(lg_dataset **out, const void *o) { return lg_trees_generate(out, o); }

static void test_alloc_failures(void **state) {
    (void)state;
    lg_trees_opts o;
    lg_trees_opts_default(&o);
    o.depth = 2;
    o.count = 6;
    o.seed = 3;
    lg_dataset *ref = gen(2, 6, 3, 0.8);
    long failures = lg_test_dataset_alloc_sweep(generate, &o, ref, same_dataset, 1000);
    assert_true(failures > 8); /* the sweep went through many failure points (success at the 10th or later) */
    lg_dataset_free(ref);
}

/* lg_trees_estimate: the statuses of lg_trees_generate for bad options; then
 * the peak memory of a million nodes (depth 8, 2000 trees) and of many small
 * trees (depth 2, 100 000) against it (lg_test_assert_peak). */
static void test_estimate(void **state) {
    (void)state;
    lg_trees_opts o;
    size_t peak = 1;
    lg_trees_opts_default(&o);
    assert_int_equal(lg_trees_estimate(NULL, &peak), LG_EINVAL);
    assert_int_equal(lg_trees_estimate(&o, NULL), LG_EINVAL);
    o.depth = 11;
    assert_int_equal(lg_trees_estimate(&o, &peak), LG_EINVAL);
    assert_int_equal(peak, 0);
    lg_trees_opts_default(&o);
    o.count = 0;
    assert_int_equal(lg_trees_estimate(&o, &peak), LG_EINVAL);
    static const int shapes[][2] = {{8, 2000}, {2, 100000}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        lg_trees_opts_default(&o);
        o.depth = shapes[k][0];
        o.count = shapes[k][1];
        assert_ok(lg_trees_estimate(&o, &peak));
        char what[64];
        snprintf(what, sizeof what, "trees of depth %d, %lld of them", o.depth, (long long)o.count);
        lg_test_assert_peak(what, generate, &o, peak);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_depth3_structure),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_depth10),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
