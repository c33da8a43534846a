/* Tests of src/graph/igraph_bridge.c: lg_graph <-> igraph_t in both
 * directions, undirected igraph graphs, errors and out-of-memory paths. */
#include <string.h>

#include <igraph.h>

#include "testutil.h"
#include "core/internal.h"

static int same_graph(const lg_graph *a, const lg_graph *b) {
    return a->n == b->n && a->nnz == b->nnz &&
           !memcmp(a->p, b->p, sizeof(lg_idx) * (size_t)(a->n + 1)) &&
           (a->nnz == 0 || !memcmp(a->j, b->j, sizeof(lg_idx) * (size_t)a->nnz));
}

/* 0->1, 2->1, 1->2, 3->0, 4->4 on 6 nodes (node 5 isolated). */
static lg_graph *small_directed(void) {
    lg_idx src[] = {0, 2, 1, 3, 4}, dst[] = {1, 1, 2, 0, 4};
    lg_graph *g = NULL;
    assert_ok(lg_graph_from_edges(&g, 6, 5, src, dst, 0));
    return g;
}

static void test_round_trip_directed(void **state) {
    (void)state;
    lg_graph *g = small_directed(), *h = NULL;
    igraph_t ig;
    assert_ok(lg_graph_to_igraph(g, &ig));
    assert_true(igraph_is_directed(&ig));
    assert_int_equal(igraph_vcount(&ig), 6);
    assert_int_equal(igraph_ecount(&ig), 5);
    /* each in-neighbour j of i is an igraph edge j -> i, and only those */
    lg_idx src[] = {0, 2, 1, 3, 4}, dst[] = {1, 1, 2, 0, 4};
    for (int e = 0; e < 5; e++) {
        igraph_integer_t eid = -1;
        assert_int_equal(igraph_get_eid(&ig, &eid, src[e], dst[e], IGRAPH_DIRECTED, 0), IGRAPH_SUCCESS);
        assert_true(eid >= 0);
    }
    igraph_integer_t eid = -1;
    igraph_get_eid(&ig, &eid, 1, 0, IGRAPH_DIRECTED, 0);
    assert_int_equal(eid, -1); /* 0 -> 1 exists, 1 -> 0 does not */
    assert_ok(lg_graph_from_igraph(&h, &ig, 0));
    assert_ok(lg_graph_check(h));
    assert_true(same_graph(g, h));
    lg_graph_free(h);
    /* flags pass through */
    assert_ok(lg_graph_from_igraph(&h, &ig, LG_GRAPH_REMOVE_SELF_LOOPS));
    assert_int_equal(h->nnz, 4);
    assert_int_equal(lg_graph_degree(h, 4), 0);
    lg_graph_free(h);
    assert_ok(lg_graph_from_igraph(&h, &ig, LG_GRAPH_ADD_SELF_LOOPS));
    assert_int_equal(h->nnz, 5 + 5); /* node 4 already had its loop */
    lg_graph_free(h);
    igraph_destroy(&ig);
    lg_graph_free(g);
}

static void test_undirected_ring(void **state) {
    (void)state;
    igraph_t ring;
    lg_igraph_prepare(1);
    assert_int_equal(igraph_ring(&ring, 5, IGRAPH_UNDIRECTED, 0, 1), IGRAPH_SUCCESS);
    lg_graph *g = NULL;
    assert_ok(lg_graph_from_igraph(&g, &ring, 0));
    assert_ok(lg_graph_check(g));
    assert_int_equal(g->n, 5);
    assert_int_equal(g->nnz, 10); /* both directions of the 5 edges */
    for (lg_idx i = 0; i < 5; i++) {
        lg_idx a = (i + 4) % 5, b = (i + 1) % 5;
        assert_int_equal(lg_graph_degree(g, i), 2);
        assert_int_equal(g->j[g->p[i]], LG_MIN(a, b));
        assert_int_equal(g->j[g->p[i] + 1], LG_MAX(a, b));
    }
    lg_graph_stats s;
    assert_ok(lg_graph_stats_compute(g, &s));
    assert_true(s.symmetric);
    lg_graph_free(g);
    assert_ok(lg_graph_from_igraph(&g, &ring, LG_GRAPH_ADD_SELF_LOOPS));
    assert_int_equal(g->nnz, 15);
    assert_int_equal(g->j[g->p[2] + 1], 2);
    /* and back: a directed igraph with every edge both ways and the loops */
    igraph_t back;
    assert_ok(lg_graph_to_igraph(g, &back));
    assert_true(igraph_is_directed(&back));
    assert_int_equal(igraph_ecount(&back), 15);
    lg_graph *h = NULL;
    assert_ok(lg_graph_from_igraph(&h, &back, 0));
    assert_true(same_graph(g, h));
    lg_graph_free(h);
    igraph_destroy(&back);
    lg_graph_free(g);
    igraph_destroy(&ring);
}

static void test_empty_and_errors(void **state) {
    (void)state;
    lg_graph *g = NULL, *h = (lg_graph *)&h;
    assert_ok(lg_graph_from_edges(&g, 0, 0, NULL, NULL, 0));
    igraph_t ig;
    assert_ok(lg_graph_to_igraph(g, &ig));
    assert_int_equal(igraph_vcount(&ig), 0);
    assert_ok(lg_graph_from_igraph(&h, &ig, 0));
    assert_int_equal(h->n, 0);
    assert_int_equal(h->nnz, 0);
    lg_graph_free(h);
    assert_int_equal(lg_graph_from_igraph(&h, &ig, LG_GRAPH_ADD_SELF_LOOPS | LG_GRAPH_REMOVE_SELF_LOOPS),
                     LG_EINVAL);
    assert_null(h);
    assert_int_equal(lg_graph_from_igraph(&h, &ig, 1u << 3), LG_EINVAL); /* unknown bits (they were ignored) */
    assert_null(h);
    assert_non_null(strstr(lg_last_error(), "lg_graph_from_igraph: flags 0x8 hold unknown bits 0x8"));
    assert_int_equal(lg_graph_from_igraph(&h, NULL, 0), LG_EINVAL);
    assert_int_equal(lg_graph_from_igraph(NULL, &ig, 0), LG_EINVAL);
    igraph_destroy(&ig);
    lg_graph_free(g);
    igraph_t unused;
    assert_int_equal(lg_graph_to_igraph(NULL, &unused), LG_EINVAL);
    g = small_directed();
    assert_int_equal(lg_graph_to_igraph(g, NULL), LG_EINVAL);
    lg_graph_free(g);
    /* a graph made by hand with a node id out of range (it became a vertex
     * 1000 of igraph) or a row pointer past its edges (read beyond them) */
    lg_idx p[] = {0, 1, 2}, j[] = {1, 1000}, pb[] = {0, 1, 100};
    lg_graph bad = {2, 2, p, j}, badp = {2, 2, pb, j};
    assert_int_equal(lg_graph_to_igraph(&bad, &unused), LG_EINVAL);
    assert_non_null(strstr(lg_last_error(), "lg_graph_to_igraph: g:"));
    j[1] = 0;
    assert_int_equal(lg_graph_to_igraph(&badp, &unused), LG_EINVAL);
}

/* The conversions leave igraph's RNG alone: a draw after them is the draw
 * the seed gives without them (they had reseeded it with 0, so that graphs a
 * caller drew between conversions were all the same). */
static void test_rng_untouched(void **state) {
    (void)state;
    lg_igraph_prepare(5);
    const igraph_integer_t want = igraph_rng_get_integer(igraph_rng_default(), 0, 1 << 30);
    lg_igraph_prepare(5);
    lg_graph *g = small_directed(), *h = NULL;
    igraph_t ig;
    assert_ok(lg_graph_to_igraph(g, &ig));
    assert_ok(lg_graph_from_igraph(&h, &ig, 0));
    assert_int_equal(igraph_rng_get_integer(igraph_rng_default(), 0, 1 << 30), want);
    igraph_destroy(&ig);
    lg_graph_free(h);
    lg_graph_free(g);
}

static lg_status from_igraph_attempt(void *ctx, long k) {
    (void)k;
    lg_graph *h = NULL;
    lg_status st = lg_graph_from_igraph(&h, ctx, LG_GRAPH_ADD_SELF_LOOPS);
    if (st == LG_OK) lg_graph_free(h);
    else assert_null(h);
    return st;
}

/* igraph's own allocations do not go through the hook; lipgnn's do. */
static void test_alloc_failures(void **state) {
    (void)state;
    lg_graph *g = small_directed();
    igraph_t ig;
    assert_ok(lg_graph_to_igraph(g, &ig));
    long failures = lg_test_alloc_sweep(from_igraph_attempt, &ig, 100);
    assert_true(failures > 0); /* the run that succeeded was the 2nd or later */
    igraph_destroy(&ig);
    lg_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_directed),
        cmocka_unit_test(test_undirected_ring),
        cmocka_unit_test(test_empty_and_errors),
        cmocka_unit_test(test_rng_untouched),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
