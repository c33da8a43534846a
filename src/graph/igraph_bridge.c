/*
 * The bridge between lg_graph and igraph_t. igraph, as Debian builds it, aborts
 * on error by default, is not thread-safe and has one global RNG: every path
 * into igraph first calls lg_igraph_prepare, and igraph's error codes become
 * LG_EIGRAPH with igraph's own message. Single-threaded set-up code only.
 */
#include <igraph.h>

#include "core/internal.h"
#include "graph/graph_internal.h"

void lg_igraph_prepare(uint64_t seed) {
    igraph_set_error_handler(igraph_error_handler_ignore);
    igraph_set_warning_handler(igraph_warning_handler_ignore);
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
    if (!g || !out) return lg__error(LG_EINVAL, "lg_graph_to_igraph: NULL argument");
    lg_igraph_prepare(0);
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

lg_status lg_graph_from_igraph(lg_graph **out, const igraph_t *ig, unsigned flags) {
    lg_status st = LG_OK;
    igraph_vector_int_t edges;
    lg_idx *src = NULL, *dst = NULL;
    if (!out || !ig) return lg__error(LG_EINVAL, "lg_graph_from_igraph: NULL argument");
    *out = NULL;
    lg_igraph_prepare(0);
    igraph_error_t e = igraph_vector_int_init(&edges, 0);
    if (e) return lg__igraph_status(e, "edge vector");
    e = igraph_get_edgelist(ig, &edges, 0);
    if (e) { st = lg__igraph_status(e, "igraph_get_edgelist"); goto fail; }
    lg_idx m = igraph_ecount(ig);
    LG_ALLOC(src, m, "edge list");
    LG_ALLOC(dst, m, "edge list");
    for (lg_idx k = 0; k < m; k++) {
        src[k] = VECTOR(edges)[2 * k];
        dst[k] = VECTOR(edges)[2 * k + 1];
    }
    if (!igraph_is_directed(ig)) flags |= LG_GRAPH_SYMMETRIZE;
    st = lg_graph_from_edges(out, igraph_vcount(ig), m, src, dst, flags);
fail:
    igraph_vector_int_destroy(&edges);
    lg__free(src);
    lg__free(dst);
    return st;
}
