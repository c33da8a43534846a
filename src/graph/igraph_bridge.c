/*
 * The bridge between lg_graph and igraph_t. igraph, as Debian builds it, aborts
 * on error by default, is not thread-safe and has one global RNG: every path
 * into igraph first makes its error handler return, and igraph's error codes
 * become LG_EIGRAPH with igraph's own message. Single-threaded set-up code
 * only. The conversions use no randomness and leave igraph's RNG as they find
 * it (they had reseeded it with 0, so that a caller's graphs drawn between
 * two conversions were all the same); the generators (datasets/) seed it with
 * lg_igraph_prepare.
 */
#include <igraph.h>

#include "core/internal.h"

_Static_assert(sizeof(igraph_integer_t) == sizeof(lg_idx), "igraph_integer_t is lg_idx's size");
#include "graph/graph_internal.h"

/* igraph's handlers made to return (errors) and keep quiet (warnings). */
static void lg__igraph_handlers(void) {
    igraph_set_error_handler(igraph_error_handler_ignore);
    igraph_set_warning_handler(igraph_warning_handler_ignore);
}

void lg_igraph_prepare(uint64_t seed) {
    lg__igraph_handlers();
    igraph_rng_seed(igraph_rng_default(), (igraph_uint_t)seed);
}

lg_status lg__igraph_status(int code, const char *what) {
    igraph_error_t e = (igraph_error_t)code;
    if (e == IGRAPH_SUCCESS) return LG_OK;
    if (e == IGRAPH_ENOMEM) return lg__nomem(what);
    return lg__error(LG_EIGRAPH, "igraph: %s: %s", what, igraph_strerror(e));
}

lg_status lg_graph_to_igraph(const lg_graph *g, igraph_t *out) {
    igraph_vector_int_t edges;
    if (!out) return lg__error(LG_EINVAL, "lg_graph_to_igraph: out is NULL");
    LG_CHECK(lg__graph_check_arg(g, "g", "lg_graph_to_igraph"));
    lg__igraph_handlers(); /* igraph's RNG left as the caller has it */
    igraph_error_t e = igraph_vector_int_init(&edges, 2 * g->nnz);
    if (e) return lg__igraph_status(e, "edge vector");
    lg_idx k = 0;
    for (lg_idx i = 0; i < g->n; i++)
        for (lg_idx q = g->p[i]; q < g->p[i + 1]; q++) {
            VECTOR(edges)[k++] = g->j[q]; /* from the in-neighbour ... */
            VECTOR(edges)[k++] = i;       /* ... to the node */
        }
    e = igraph_create(out, &edges, g->n, IGRAPH_DIRECTED);
    igraph_vector_int_destroy(&edges);
    return lg__igraph_status(e, "igraph_create");
}

/* The graph of ig (lg_graph_from_igraph); with take, ig is destroyed as soon
 * as its edges are in the triplets, also on failure, so that igraph's graph
 * and lipgnn's compressed pattern are never alive together. igraph keeps an
 * edge's ends in two vectors of igraph_integer_t (IGRAPH_FROM, IGRAPH_TO), the
 * type of lg_idx: they are the source and target arrays, not copied. */
static lg_status lg__graph_from_igraph(lg_graph **out, igraph_t *ig, unsigned flags, int take) {
    struct cs_dl_sparse *T = NULL;
    *out = NULL;
    lg__igraph_handlers(); /* igraph's RNG left as the caller has it */
    if (!igraph_is_directed(ig)) flags |= LG_GRAPH_SYMMETRIZE;
    const lg_idx n = igraph_vcount(ig), m = igraph_ecount(ig);
    lg_status st = lg__graph_triplets(&T, n, m, VECTOR(ig->from), VECTOR(ig->to), flags);
    if (take) igraph_destroy(ig);
    if (st != LG_OK) return st;
    return lg__graph_from_triplets(out, T, flags);
}

lg_status lg_graph_from_igraph(lg_graph **out, const igraph_t *ig, unsigned flags) {
    if (!out || !ig) return lg__error(LG_EINVAL, "lg_graph_from_igraph: NULL argument");
    *out = NULL;
    LG_CHECK(lg__graph_flags_check(flags, "lg_graph_from_igraph"));
    return lg__graph_from_igraph(out, (igraph_t *)ig, flags, 0); /* read only */
}

lg_status lg__graph_from_igraph_take(lg_graph **out, igraph_t *ig, unsigned flags) {
    return lg__graph_from_igraph(out, ig, flags, 1);
}
