/* Tests of datasets/sbm.c: the stochastic-block-model generator (graph and
 * block structure, features, splits, determinism, option checks,
 * out-of-memory paths). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "core/internal.h"

static lg_dataset *gen(const lg_sbm_opts *o) {
    lg_dataset *ds = NULL;
    assert_ok(lg_sbm_generate(&ds, o));
    assert_non_null(ds);
    return ds;
}

static void test_defaults(void **state) {
    (void)state;
    lg_sbm_opts o;
    memset(&o, 0x5a, sizeof o);
    lg_sbm_opts_default(&o);
    assert_int_equal(o.nodes, 3000);
    assert_int_equal(o.edges, 12000);
    assert_int_equal(o.classes, 8);
    assert_true(o.within == 0.8 && o.signal == 0.5);
    assert_int_equal(o.features, 128);
    assert_int_equal(o.per_node, 16);
    assert_int_equal(o.train_per_class, 20);
    assert_int_equal(o.n_val, 500);
    assert_int_equal(o.n_test, 1000);
    lg_sbm_opts_default(NULL); /* no-op */
}

/* The default problem: sizes, symmetric graph without self-loops, the number
 * of edges and the share within blocks near their expectations (binomial:
 * well within 5 standard deviations), labels by block, features of per_node
 * distinct ascending binary columns, the class band's share near signal +
 * (1 - signal) / k, splits of the asked sizes, disjoint, train_per_class per
 * class. */
static void test_structure(void **state) {
    (void)state;
    lg_sbm_opts o;
    lg_sbm_opts_default(&o);
    o.seed = 7;
    lg_dataset *ds = gen(&o);
    const lg_graph *g = ds->graph;
    const lg_idx n = 3000, b = n / 8;
    assert_string_equal(ds->name, "sbm-3000-12000");
    assert_int_equal(g->n, n);
    assert_ok(lg_graph_check(g));
    assert_int_equal(ds->n_classes, 8);
    assert_int_equal(ds->n_graphs, 1);
    assert_int_equal(ds->graph_ptr[1], n);
    assert_null(ds->roots);
    lg_idx within = 0;
    for (lg_idx i = 0; i < n; i++) {
        assert_int_equal(ds->labels[i], LG_MIN(i / b, 7));
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
            lg_idx j = g->j[e];
            assert_true(j != i);
            within += ds->labels[j] == ds->labels[i];
            /* symmetric: i is an in-neighbour of j */
            int found = 0;
            for (lg_idx f = g->p[j]; f < g->p[j + 1]; f++) found |= g->j[f] == i;
            assert_true(found);
        }
    }
    double m = (double)g->nnz / 2, share = (double)within / (double)g->nnz;
    print_message("edges %.0f (expected 12000), within-block share %.4f (expected 0.8)\n", m, share);
    assert_true(fabs(m - 12000) < 5 * sqrt(12000));
    assert_true(fabs(share - 0.8) < 5 * sqrt(0.8 * 0.2 / m));
    const lg_features *x = ds->features;
    assert_int_equal(x->kind, LG_FEAT_SPARSE);
    assert_int_equal(x->d, 128);
    assert_int_equal(x->nnz, n * 16);
    lg_idx in_band = 0;
    for (lg_idx i = 0; i < n; i++) {
        assert_int_equal(x->p[i + 1] - x->p[i], 16);
        for (lg_idx q = x->p[i]; q < x->p[i + 1]; q++) {
            assert_true(x->x[q] == 1.0f);
            assert_true(x->j[q] >= 0 && x->j[q] < 128);
            if (q > x->p[i]) assert_true(x->j[q] > x->j[q - 1]);
            in_band += x->j[q] / 16 == ds->labels[i];
        }
    }
    /* each draw lands in the band with probability 0.5 + 0.5/8 = 0.5625; the
     * rejection of repeated columns lowers that a little */
    double band_share = (double)in_band / (double)x->nnz;
    print_message("share of feature columns in the class's band %.4f\n", band_share);
    assert_true(band_share > 0.45 && band_share < 0.57);
    assert_int_equal(ds->n_train, 160);
    assert_int_equal(ds->n_val, 500);
    assert_int_equal(ds->n_test, 1000);
    unsigned char *seen = calloc((size_t)n, 1);
    lg_idx per_class[8] = {0};
    assert_non_null(seen);
    const lg_idx *lists[3] = {ds->train, ds->val, ds->test};
    const lg_idx counts[3] = {ds->n_train, ds->n_val, ds->n_test};
    for (int s = 0; s < 3; s++)
        for (lg_idx k = 0; k < counts[s]; k++) {
            lg_idx v = lists[s][k];
            assert_true(v >= 0 && v < n && !seen[v]);
            seen[v] = 1;
            if (s == 0) per_class[ds->labels[v]]++;
        }
    for (int c = 0; c < 8; c++) assert_int_equal(per_class[c], 20);
    free(seen);
    lg_dataset_free(ds);
}

static int same_dataset(const lg_dataset *a, const lg_dataset *b) {
    const lg_graph *g = a->graph, *h = b->graph;
    if (g->n != h->n || g->nnz != h->nnz) return 0;
    if (memcmp(g->p, h->p, sizeof(lg_idx) * (size_t)(g->n + 1)) || memcmp(g->j, h->j, sizeof(lg_idx) * (size_t)g->nnz))
        return 0;
    const lg_features *x = a->features, *y = b->features;
    if (x->nnz != y->nnz || memcmp(x->j, y->j, sizeof(lg_idx) * (size_t)x->nnz)) return 0;
    if (a->n_train != b->n_train || memcmp(a->train, b->train, sizeof(lg_idx) * (size_t)a->n_train)) return 0;
    return memcmp(a->test, b->test, sizeof(lg_idx) * (size_t)a->n_test) == 0;
}

/* Same seed, same data set (igraph's RNG reseeded each time, even after
 * other igraph use); another seed, another one. An odd size: the last block
 * takes the remainder. */
static void test_determinism(void **state) {
    (void)state;
    lg_sbm_opts o;
    lg_sbm_opts_default(&o);
    o.nodes = 403;
    o.edges = 900;
    o.classes = 5;
    o.train_per_class = 10;
    o.n_val = 50;
    o.n_test = 100;
    o.seed = 11;
    lg_dataset *a = gen(&o), *b = gen(&o);
    assert_true(same_dataset(a, b));
    assert_int_equal(a->labels[402], 4);
    assert_int_equal(a->labels[399], 4);
    assert_int_equal(a->labels[79], 0);
    assert_int_equal(a->labels[80], 1);
    o.seed = 12;
    lg_dataset *c = gen(&o);
    assert_false(same_dataset(a, c));
    lg_dataset_free(a);
    lg_dataset_free(b);
    lg_dataset_free(c);
}

static void test_invalid(void **state) {
    (void)state;
    lg_sbm_opts o;
    lg_dataset *ds = (lg_dataset *)&ds; /* must be reset to NULL */
#define BAD(stmt, text)                                                  \
    do {                                                                 \
        lg_sbm_opts_default(&o);                                         \
        stmt;                                                            \
        assert_int_equal(lg_sbm_generate(&ds, &o), LG_EINVAL);           \
        assert_null(ds);                                                 \
        assert_non_null(strstr(lg_last_error(), text));                  \
    } while (0)
    BAD(o.classes = 1, "classes 1");
    BAD(o.nodes = 15, "15 nodes");
    BAD(o.within = 1.5, "within");
    BAD(o.within = NAN, "within");
    BAD(o.signal = -0.1, "signal");
    BAD(o.features = 7, "7 features");
    BAD(o.per_node = 0, "per_node 0");
    BAD(o.per_node = 129, "per_node 129");
    BAD((o.signal = 1, o.per_node = 17), "per_node 17"); /* bands of 128 / 8 = 16: never drawn (it hung) */
    BAD(o.train_per_class = 0, "train_per_class 0");
    BAD(o.train_per_class = 376, "train_per_class 376");
    BAD(o.n_test = 0, "splits");
    BAD(o.n_val = 2000, "splits");
    BAD(o.n_val = -1, "n_val -1");
    BAD(o.n_test = -5, "n_test -5");
    BAD(o.n_val = INT64_MAX, "n_val 9223372036854775807"); /* the sum of the splits overflowed */
    BAD(o.n_test = INT64_MAX, "n_test 9223372036854775807");
    BAD((o.n_val = INT64_MAX - 100, o.n_test = INT64_MAX - 100), "n_val");
    BAD(o.edges = -1, "edges -1");
    BAD(o.edges = 3000000, "more than");
#undef BAD
    lg_sbm_opts_default(&o);
    assert_int_equal(lg_sbm_generate(&ds, NULL), LG_EINVAL);
    assert_int_equal(lg_sbm_generate(NULL, &o), LG_EINVAL);
    /* no edges at all is a valid (if useless) graph */
    o.edges = 0;
    o.nodes = 200;
    o.n_val = 10;
    o.n_test = 10;
    ds = gen(&o);
    assert_int_equal(ds->graph->nnz, 0);
    lg_dataset_free(ds);
}

/* lg_sbm_generate with *out set to garbage first: it must reset it to NULL. */
static lg_status generate(lg_dataset **out, const void *o) {
    *out = (lg_dataset *)out;
    return lg_sbm_generate(out, o);
}

/* Every allocation of ours failing in turn: LG_ENOMEM and nothing leaked,
 * until the run that succeeds, which gives the reference's data set. */
static void test_alloc_failures(void **state) {
    (void)state;
    lg_sbm_opts o;
    lg_sbm_opts_default(&o);
    o.nodes = 200;
    o.edges = 500;
    o.n_val = 20;
    o.n_test = 20;
    o.train_per_class = 5;
    lg_dataset *ref = gen(&o);
    long failures = lg_test_dataset_alloc_sweep(generate, &o, ref, same_dataset, 1000);
    assert_true(failures > 3); /* the run that succeeded was the 5th or later */
    lg_dataset_free(ref);
}

/* lg_sbm_estimate: the statuses of lg_sbm_generate for bad options; then the
 * peak memory of an edge-heavy and a node-heavy problem against it
 * (lg_test_assert_peak). */
static void test_estimate(void **state) {
    (void)state;
    lg_sbm_opts o;
    size_t peak = 1;
    lg_sbm_opts_default(&o);
    assert_int_equal(lg_sbm_estimate(NULL, &peak), LG_EINVAL);
    assert_int_equal(lg_sbm_estimate(&o, NULL), LG_EINVAL);
    o.classes = 1;
    assert_int_equal(lg_sbm_estimate(&o, &peak), LG_EINVAL);
    assert_int_equal(peak, 0);
    lg_sbm_opts_default(&o);
    o.edges = o.nodes * o.nodes;
    assert_int_equal(lg_sbm_estimate(&o, &peak), LG_EINVAL); /* more edges than the blocks hold */
    lg_sbm_opts_default(&o);
    o.signal = 1;
    o.per_node = 17; /* more than a band of 16 columns */
    assert_int_equal(lg_sbm_estimate(&o, &peak), LG_EINVAL);
    o.per_node = 16; /* a whole band: valid */
    assert_ok(lg_sbm_estimate(&o, &peak));
    static const lg_idx splits[][2] = {{INT64_MAX, 1000}, {500, INT64_MAX}, {-1, 1000}, {500, -1}, {INT64_MAX, INT64_MAX}};
    for (size_t k = 0; k < sizeof splits / sizeof *splits; k++) {
        lg_sbm_opts_default(&o);
        o.n_val = splits[k][0];
        o.n_test = splits[k][1];
        peak = 1;
        assert_int_equal(lg_sbm_estimate(&o, &peak), LG_EINVAL);
        assert_int_equal(peak, 0);
        assert_non_null(strstr(lg_last_error(), "splits"));
    }
    static const lg_idx sizes[][2] = {{100000, 1500000}, {400000, 200000}};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        lg_sbm_opts_default(&o);
        o.nodes = sizes[k][0];
        o.edges = sizes[k][1];
        assert_ok(lg_sbm_estimate(&o, &peak));
        char what[64];
        snprintf(what, sizeof what, "sbm %lld nodes, %lld edges", (long long)o.nodes, (long long)o.edges);
        lg_test_assert_peak(what, generate, &o, peak);
    }
}

/* lg_sbm_max_edges is the generator's limit: that many edges are taken, one
 * more refused, across node counts, classes and shares within them. */
static void test_max_edges(void **state) {
    (void)state;
    lg_sbm_opts o;
    size_t peak;
    assert_int_equal(lg_sbm_max_edges(NULL), 0);
    static const struct { lg_idx nodes; int classes; double within; } c[] = {
        {16, 8, 0.8}, {20, 8, 0.8}, {61, 8, 0.8}, {1000, 8, 0.8}, {3000, 8, 0.8},
        {100, 2, 0.5}, {37, 3, 0.0}, {37, 3, 1.0}, {2000000, 8, 0.8}};
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        lg_sbm_opts_default(&o);
        o.nodes = c[k].nodes;
        o.classes = c[k].classes;
        o.within = c[k].within;
        o.train_per_class = 1;
        o.n_val = 0;
        o.n_test = 1;
        o.features = 128;
        o.per_node = 1;
        o.edges = lg_sbm_max_edges(&o);
        assert_true(o.edges > 0);
        assert_ok(lg_sbm_estimate(&o, &peak));
        o.edges++;
        assert_int_equal(lg_sbm_estimate(&o, &peak), LG_EINVAL);
        assert_non_null(strstr(lg_last_error(), "can hold"));
    }
    lg_sbm_opts_default(&o);
    o.nodes = 15; /* fewer than 2 a class */
    assert_int_equal(lg_sbm_max_edges(&o), 0);
    lg_sbm_opts_default(&o);
    o.within = 1.5;
    assert_int_equal(lg_sbm_max_edges(&o), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),     cmocka_unit_test(test_structure),
        cmocka_unit_test(test_determinism),  cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_alloc_failures), cmocka_unit_test(test_estimate),
        cmocka_unit_test(test_max_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
