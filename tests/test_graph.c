/* Tests of src/graph: construction through CXSparse, transpose, self-loops,
 * unions, checks, statistics, and the out-of-memory paths. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "core/internal.h"
#include "graph/graph_internal.h"


static void test_in_neighbour_rows(void **state) {
    (void)state;
    /* edges 0->1, 2->1, 1->2, 0->1 (duplicate), 3->3 (self-loop) */
    lg_idx src[] = {0, 2, 1, 0, 3}, dst[] = {1, 1, 2, 1, 3};
    lg_graph *g = NULL;
    assert_ok(lg_graph_from_edges(&g, 4, 5, src, dst, 0));
    assert_ok(lg_graph_check(g));
    assert_int_equal(g->n, 4);
    assert_int_equal(g->nnz, 4);
    assert_string_equal(lg_test_graph_row(g, 0), "");
    assert_string_equal(lg_test_graph_row(g, 1), "0,2"); /* row i lists the senders to i */
    assert_string_equal(lg_test_graph_row(g, 2), "1");
    assert_string_equal(lg_test_graph_row(g, 3), "3");
    assert_int_equal(lg_graph_degree(g, 1), 2);
    lg_graph_free(g);
}

static void test_flags(void **state) {
    (void)state;
    lg_idx src[] = {0, 2, 3}, dst[] = {1, 1, 3};
    lg_graph *g = NULL;
    assert_ok(lg_graph_from_edges(&g, 4, 3, src, dst, LG_GRAPH_SYMMETRIZE));
    assert_string_equal(lg_test_graph_row(g, 0), "1");
    assert_string_equal(lg_test_graph_row(g, 1), "0,2");
    assert_string_equal(lg_test_graph_row(g, 2), "1");
    assert_string_equal(lg_test_graph_row(g, 3), "3"); /* a self-loop mirrored is itself */
    lg_graph_free(g);
    assert_ok(lg_graph_from_edges(&g, 4, 3, src, dst, LG_GRAPH_ADD_SELF_LOOPS));
    assert_string_equal(lg_test_graph_row(g, 0), "0");
    assert_string_equal(lg_test_graph_row(g, 1), "0,1,2");
    assert_string_equal(lg_test_graph_row(g, 3), "3"); /* not duplicated */
    assert_int_equal(g->nnz, 6);
    lg_graph_free(g);
    assert_ok(lg_graph_from_edges(&g, 4, 3, src, dst, LG_GRAPH_REMOVE_SELF_LOOPS));
    assert_string_equal(lg_test_graph_row(g, 3), "");
    assert_int_equal(g->nnz, 2);
    lg_graph_free(g);
    assert_int_equal(lg_graph_from_edges(&g, 4, 3, src, dst, LG_GRAPH_ADD_SELF_LOOPS | LG_GRAPH_REMOVE_SELF_LOOPS),
                     LG_EINVAL);
    assert_null(g);
    /* unknown flag bits: refused, named (they were ignored) */
    g = (lg_graph *)&g;
    assert_int_equal(lg_graph_from_edges(&g, 4, 3, src, dst, 1u << 7), LG_EINVAL);
    assert_null(g);
    assert_non_null(strstr(lg_last_error(), "lg_graph_from_edges: flags 0x80 hold unknown bits 0x80"));
    assert_int_equal(lg_graph_from_edges(&g, 4, 3, src, dst, LG_GRAPH_SYMMETRIZE | 1u << 31), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "unknown bits 0x80000000"));
}

static void test_bad_edges(void **state) {
    (void)state;
    lg_idx src[] = {0, 5}, dst[] = {1, 1}, neg[] = {-1, 0};
    lg_graph *g = (lg_graph *)&g; /* must be reset to NULL on failure */
    assert_int_equal(lg_graph_from_edges(&g, 4, 2, src, dst, 0), LG_ERANGE);
    assert_null(g);
    assert_non_null(strstr(lg_last_error(), "edge 1 (5 -> 1)"));
    assert_int_equal(lg_graph_from_edges(&g, 4, 2, neg, dst, 0), LG_ERANGE);
    assert_int_equal(lg_graph_from_edges(&g, -1, 0, NULL, NULL, 0), LG_EINVAL);
    assert_int_equal(lg_graph_from_edges(&g, 4, 2, NULL, dst, 0), LG_EINVAL);
    assert_int_equal(lg_graph_from_edges(NULL, 4, 0, NULL, NULL, 0), LG_EINVAL);
    /* more nodes than CXSparse's unchecked sizes allow (2^61 wrapped its
     * n + 1 pointers to 8 bytes): refused before any allocation */
    assert_int_equal(lg_graph_from_edges(&g, (lg_idx)1 << 61, 0, NULL, NULL, 0), LG_ERANGE);
    assert_null(g);
    assert_non_null(strstr(lg_last_error(), "exceeds 2^40"));
    assert_int_equal(lg_graph_from_edges(&g, LG_GRAPH_MAX_NODES + 1, 2, src, dst, LG_GRAPH_ADD_SELF_LOOPS), LG_ERANGE);
    /* empty graphs are fine */
    assert_ok(lg_graph_from_edges(&g, 0, 0, NULL, NULL, LG_GRAPH_ADD_SELF_LOOPS));
    assert_int_equal(g->n, 0);
    assert_ok(lg_graph_check(g));
    lg_graph_free(g);
    lg_graph_free(NULL);
}

/* A random multigraph, compared with a naive construction (dense adjacency). */
static void test_random_against_dense(void **state) {
    (void)state;
    lg_rng r;
    lg_rng_seed(&r, 3);
    for (int trial = 0; trial < 20; trial++) {
        lg_idx n = 1 + (lg_idx)lg_rng_below(&r, 40), m = (lg_idx)lg_rng_below(&r, 200);
        lg_idx *src = malloc(sizeof(lg_idx) * (m + 1)), *dst = malloc(sizeof(lg_idx) * (m + 1));
        unsigned char *adj = calloc((size_t)(n * n), 1);
        unsigned flags = (unsigned)lg_rng_below(&r, 4) & (LG_GRAPH_SYMMETRIZE | LG_GRAPH_ADD_SELF_LOOPS);
        for (lg_idx e = 0; e < m; e++) {
            src[e] = (lg_idx)lg_rng_below(&r, (uint64_t)n);
            dst[e] = (lg_idx)lg_rng_below(&r, (uint64_t)n);
            adj[dst[e] * n + src[e]] = 1;
            if (flags & LG_GRAPH_SYMMETRIZE) adj[src[e] * n + dst[e]] = 1;
        }
        if (flags & LG_GRAPH_ADD_SELF_LOOPS)
            for (lg_idx i = 0; i < n; i++) adj[i * n + i] = 1;
        lg_graph *g = NULL, *t = NULL, *tt = NULL, *with = NULL, *without = NULL;
        assert_ok(lg_graph_from_edges(&g, n, m, src, dst, flags));
        assert_ok(lg_graph_check(g));
        lg_idx nnz = 0;
        for (lg_idx i = 0; i < n; i++) {
            lg_idx e = g->p[i];
            for (lg_idx j = 0; j < n; j++)
                if (adj[i * n + j]) { assert_true(e < g->p[i + 1]); assert_int_equal(g->j[e++], j); nnz++; }
            assert_int_equal(e, g->p[i + 1]);
        }
        assert_int_equal(g->nnz, nnz);
        /* transpose: row j lists the targets of j; twice gives g back */
        assert_ok(lg_graph_transpose(g, &t));
        assert_ok(lg_graph_check(t));
        for (lg_idx j = 0; j < n; j++) {
            lg_idx e = t->p[j];
            for (lg_idx i = 0; i < n; i++)
                if (adj[i * n + j]) assert_int_equal(t->j[e++], i);
            assert_int_equal(e, t->p[j + 1]);
        }
        assert_ok(lg_graph_transpose(t, &tt));
        assert_memory_equal(tt->p, g->p, sizeof(lg_idx) * (size_t)(n + 1));
        assert_memory_equal(tt->j, g->j, sizeof(lg_idx) * (size_t)(g->nnz ? g->nnz : 0));
        /* self-loop edits agree with a dense edit */
        assert_ok(lg_graph_self_loops(g, 1, &with));
        assert_ok(lg_graph_self_loops(g, 0, &without));
        assert_ok(lg_graph_check(with));
        assert_ok(lg_graph_check(without));
        lg_idx loops = 0;
        for (lg_idx i = 0; i < n; i++) loops += adj[i * n + i];
        assert_int_equal(with->nnz, nnz - loops + n);
        assert_int_equal(without->nnz, nnz - loops);
        for (lg_idx i = 0; i < n; i++) {
            int has = 0;
            for (lg_idx e = with->p[i]; e < with->p[i + 1]; e++) has += with->j[e] == i;
            assert_int_equal(has, 1);
            for (lg_idx e = without->p[i]; e < without->p[i + 1]; e++) assert_true(without->j[e] != i);
        }
        lg_graph_free(g); lg_graph_free(t); lg_graph_free(tt); lg_graph_free(with); lg_graph_free(without);
        free(src); free(dst); free(adj);
    }
}

static void test_union(void **state) {
    (void)state;
    lg_idx s1[] = {0}, d1[] = {1}, s2[] = {2, 0}, d2[] = {0, 1};
    lg_graph *a = NULL, *b = NULL, *u = NULL, *c = NULL;
    assert_ok(lg_graph_from_edges(&a, 2, 1, s1, d1, 0));
    assert_ok(lg_graph_from_edges(&b, 3, 2, s2, d2, LG_GRAPH_ADD_SELF_LOOPS));
    const lg_graph *parts[] = {a, b, a};
    lg_idx off[4];
    assert_ok(lg_graph_union(&u, 3, parts, off));
    assert_ok(lg_graph_check(u));
    assert_int_equal(u->n, 7);
    assert_int_equal(u->nnz, 1 + 5 + 1);
    assert_int_equal(off[0], 0); assert_int_equal(off[1], 2); assert_int_equal(off[2], 5); assert_int_equal(off[3], 7);
    assert_string_equal(lg_test_graph_row(u, 1), "0");
    assert_string_equal(lg_test_graph_row(u, 2), "2,4");
    assert_string_equal(lg_test_graph_row(u, 3), "2,3");
    assert_string_equal(lg_test_graph_row(u, 6), "5");
    assert_ok(lg_graph_copy(u, &c));
    assert_memory_equal(c->j, u->j, sizeof(lg_idx) * 7);
    const lg_graph *bad[] = {a, NULL};
    lg_graph *v = NULL;
    assert_int_equal(lg_graph_union(&v, 2, bad, NULL), LG_EINVAL);
    assert_ok(lg_graph_union(&v, 0, NULL, NULL));
    assert_int_equal(v->n, 0);
    lg_graph_free(v); lg_graph_free(a); lg_graph_free(b); lg_graph_free(u); lg_graph_free(c);
}

static void test_check_finds_defects(void **state) {
    (void)state;
    lg_idx p[] = {0, 2, 3}, j[] = {1, 0, 0};
    lg_graph g = {2, 3, p, j};
    assert_int_equal(lg_graph_check(&g), LG_EINVAL); /* row 0 unsorted */
    j[0] = 0; j[1] = 0;
    assert_int_equal(lg_graph_check(&g), LG_EINVAL); /* duplicate */
    j[1] = 1; j[2] = 2;
    assert_int_equal(lg_graph_check(&g), LG_EINVAL); /* id out of range */
    j[2] = 1;
    assert_ok(lg_graph_check(&g));
    p[2] = 4;
    assert_int_equal(lg_graph_check(&g), LG_EINVAL); /* p[n] != nnz */
    assert_int_equal(lg_graph_check(NULL), LG_EINVAL);
    /* a pointer past nnz, then one back down: refused before row 0 is read
     * beyond j's 3 entries (the ASan build checks that nothing is) */
    lg_idx p3[] = {0, 100, 2, 3}, j3[] = {0, 1, 2};
    lg_graph h = {3, 3, p3, j3};
    assert_int_equal(lg_graph_check(&h), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "row 1 has negative length"));
}

/* Every public function that takes a graph checks it first (a graph made by
 * hand): each defect of test_check_finds_defects, and a node id far out of
 * range, is LG_EINVAL naming the function, with *out NULL, where the
 * unchecked graph was read out of bounds (the ASan build checks it). */
static void test_functions_check_graph(void **state) {
    (void)state;
    lg_idx p[] = {0, 1, 2, 3, 4, 5}, j[] = {1, 2, 3, 4, 1000}, pb[] = {0, 1, 2, 3, 4, 100};
    lg_idx jn[] = {1, 2, 3, 4, -7}, pu[] = {0, 2, 3, 4, 5, 5}, ju[] = {3, 1, 4, 0, 1};
    lg_graph bad[] = {{5, 5, p, j}, {5, 5, pb, j}, {5, 5, p, jn}, {5, 5, pu, ju}};
    lg_graph_stats gs;
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        lg_graph *out = (lg_graph *)&out;
        assert_int_equal(lg_graph_transpose(&bad[k], &out), LG_EINVAL);
        assert_null(out);
        assert_non_null(strstr(lg_last_error(), "lg_graph_transpose: g:"));
        out = (lg_graph *)&out;
        assert_int_equal(lg_graph_self_loops(&bad[k], 1, &out), LG_EINVAL);
        assert_null(out);
        assert_int_equal(lg_graph_self_loops(&bad[k], 0, &out), LG_EINVAL);
        out = (lg_graph *)&out;
        assert_int_equal(lg_graph_copy(&bad[k], &out), LG_EINVAL);
        assert_null(out);
        const lg_graph *two[2] = {&bad[k], &bad[k]};
        out = (lg_graph *)&out;
        assert_int_equal(lg_graph_union(&out, 2, two, NULL), LG_EINVAL);
        assert_null(out);
        assert_non_null(strstr(lg_last_error(), "lg_graph_union: graph 0:"));
        assert_int_equal(lg_graph_stats_compute(&bad[k], &gs), LG_EINVAL);
        assert_non_null(strstr(lg_last_error(), "lg_graph_stats_compute"));
    }
    assert_int_equal(lg_graph_transpose(NULL, &(lg_graph *){NULL}), LG_EINVAL);
    assert_int_equal(lg_graph_stats_compute(NULL, &gs), LG_EINVAL);
    /* a node count whose self-loops cannot be held: refused (LG_ERANGE, above
     * LG_GRAPH_MAX_NODES), where the triplets' size wrapped around and the
     * loops were written past it */
    lg_graph *g = (lg_graph *)&g;
    assert_int_equal(lg_graph_from_edges(&g, (lg_idx)1 << 62, 0, NULL, NULL, LG_GRAPH_ADD_SELF_LOOPS), LG_ERANGE);
    assert_null(g);
    lg_idx s1[] = {0}, d1[] = {1};
    assert_int_equal(lg_graph_from_edges(&g, INT64_MAX, 1, s1, d1, LG_GRAPH_ADD_SELF_LOOPS | LG_GRAPH_SYMMETRIZE),
                     LG_ERANGE);
    assert_null(g);
}

static void test_stats(void **state) {
    (void)state;
    /* star into 0 from 1..3, plus 0 -> 1, a self-loop on 2, node 4 isolated */
    lg_idx src[] = {1, 2, 3, 0, 2}, dst[] = {0, 0, 0, 1, 2};
    lg_graph *g = NULL;
    assert_ok(lg_graph_from_edges(&g, 5, 5, src, dst, 0));
    lg_graph_stats s;
    assert_ok(lg_graph_stats_compute(g, &s));
    assert_int_equal(s.n, 5);
    assert_int_equal(s.edges, 5);
    assert_int_equal(s.self_loops, 1);
    assert_int_equal(s.in_min, 0);
    assert_int_equal(s.in_max, 3);
    assert_int_equal(s.out_max, 1);
    assert_int_equal(s.out_min, 0);
    assert_int_equal(s.isolated, 1);
    assert_false(s.symmetric);
    assert_true(s.in_mean > 0.799 && s.in_mean < 0.801);
    lg_graph_free(g);
    assert_ok(lg_graph_from_edges(&g, 5, 4, src, dst, LG_GRAPH_SYMMETRIZE));
    assert_ok(lg_graph_stats_compute(g, &s));
    assert_true(s.symmetric);
    lg_graph_free(g);
    /* isolated counts nodes with no edge either way: on a directed graph (not
     * symmetrised) the single edge 0 -> 1 touches both its source (which
     * receives nothing) and its destination (which sends nothing) */
    const lg_idx s1[] = {0}, d1[] = {1};
    assert_ok(lg_graph_from_edges(&g, 2, 1, s1, d1, 0));
    assert_ok(lg_graph_stats_compute(g, &s));
    assert_false(s.symmetric);
    assert_int_equal(s.in_min, 0);
    assert_int_equal(s.out_min, 0);
    assert_int_equal(s.isolated, 0);
    lg_graph_free(g);
}

/* The transpose check every attention backward makes (lg__graph_transpose_map)
 * bounds each row's cursor by the row's end: a cursor that ran past row 0's
 * end into row 1 took the mis-split transpose of lg_test_misplit (test_gat
 * sees it from a layer). */
static void test_transpose_map_rows(void **state) {
    (void)state;
    lg_test_misplit ms;
    lg_test_misplit_init(&ms);
    lg_idx tnext[3];
    assert_false(lg__graph_transpose_map(NULL, NULL, tnext, ms.g, &ms.fake));
    assert_true(lg__graph_transpose_map(NULL, NULL, tnext, ms.g, ms.gT));
    lg_test_misplit_free(&ms);
}

/* The symmetry check (the transpose map's cursor walk over (g, g)): an edge
 * without its reverse is found wherever it lies (the first row, a middle one,
 * the last: each only seen from its own row), and a ring with both
 * directions passes. */
static void test_symmetric_positions(void **state) {
    (void)state;
    enum { N = 64 };
    lg_idx src[2 * N], dst[2 * N];
    for (lg_idx i = 0; i < N; i++) { /* a ring, both directions */
        src[2 * i] = i, dst[2 * i] = (i + 1) % N;
        src[2 * i + 1] = (i + 1) % N, dst[2 * i + 1] = i;
    }
    const lg_idx drop[] = {-1, 0, N, 2 * N - 2}; /* none; the edge left alone in row 0, N/2, N-1 */
    for (size_t d = 0; d < sizeof drop / sizeof drop[0]; d++) {
        lg_idx s2[2 * N], d2[2 * N], m = 0;
        for (lg_idx e = 0; e < 2 * N; e++)
            if (e != drop[d]) s2[m] = src[e], d2[m] = dst[e], m++;
        lg_graph *g = NULL;
        lg_graph_stats st;
        assert_ok(lg_graph_from_edges(&g, N, m, s2, d2, 0));
        assert_ok(lg_graph_stats_compute(g, &st));
        assert_int_equal(st.symmetric, drop[d] < 0);
        lg_graph_free(g);
    }
}

typedef struct graph_sweep {
    const lg_graph *g; /* the 5-cycle, symmetrised */
    lg_graph *h;       /* the output, kept across attempts */
    int op;            /* which operation */
} graph_sweep;

static lg_status graph_attempt(void *ctx, long k) {
    (void)k;
    graph_sweep *w = ctx;
    static const lg_idx src[] = {0, 1, 2, 3, 4}, dst[] = {1, 2, 3, 4, 0};
    const lg_graph *g = w->g, *parts[] = {w->g, w->g};
    lg_status st;
    lg_graph_stats s;
    switch (w->op) {
    case 0: st = lg_graph_from_edges(&w->h, 5, 5, src, dst, LG_GRAPH_ADD_SELF_LOOPS); break;
    case 1: st = lg_graph_transpose(g, &w->h); break;
    case 2: st = lg_graph_self_loops(g, 1, &w->h); break;
    case 3: st = lg_graph_union(&w->h, 2, parts, NULL); break;
    default: w->h = NULL; st = lg_graph_stats_compute(g, &s); break;
    }
    if (st == LG_OK) lg_graph_free(w->h);
    else assert_null(w->h);
    return st;
}

/* Every allocation failure returns LG_ENOMEM and leaks nothing. */
static void test_out_of_memory(void **state) {
    (void)state;
    lg_idx src[] = {0, 1, 2, 3, 4}, dst[] = {1, 2, 3, 4, 0};
    lg_graph *g = NULL;
    assert_ok(lg_graph_from_edges(&g, 5, 5, src, dst, LG_GRAPH_SYMMETRIZE));
    graph_sweep w = {g, NULL, 0};
    for (w.op = 0; w.op < 5; w.op++) lg_test_alloc_sweep(graph_attempt, &w, 100);
    lg_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_neighbour_rows), cmocka_unit_test(test_flags),
        cmocka_unit_test(test_bad_edges),         cmocka_unit_test(test_random_against_dense),
        cmocka_unit_test(test_union),             cmocka_unit_test(test_check_finds_defects),
        cmocka_unit_test(test_functions_check_graph),
        cmocka_unit_test(test_stats), cmocka_unit_test(test_transpose_map_rows), cmocka_unit_test(test_symmetric_positions),             cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
