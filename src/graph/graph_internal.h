/* Internal graph helpers shared by the layers' backward passes. */
#ifndef LG_GRAPH_INTERNAL_H
#define LG_GRAPH_INTERNAL_H

#include "core/internal.h"

/* An edge's position in a graph of at most LG__EPOS_MAX edges: the entries of
 * the edge maps below, half the bytes of lg_idx (the maps are read once per
 * edge in every attention backward, and kept beside a model's graph). The
 * layers and the model that make such maps refuse larger graphs. */
typedef uint32_t lg__epos;
#define LG__EPOS_MAX ((lg_idx)UINT32_MAX)

/* Maps the edges of g to their places in gT (same n and nnz, each valid;
 * nnz <= LG__EPOS_MAX when tpos or tedge is given): tpos[e] = the position in
 * gT of edge e of g if tpos is not NULL, and, if tedge is not NULL, its
 * inverse tedge[tpos[e]] = e (both NULL: the check alone); tnext: n cursors of
 * workspace. A counting sort over the sources, which orders each source's
 * targets ascending as in every valid transpose. Returns 0 if gT is not g's
 * transpose, 1 otherwise. O(n + nnz), sequential. */
int lg__graph_transpose_map(lg__epos *tpos, lg__epos *tedge, lg_idx *tnext, const lg_graph *g, const lg_graph *gT);

/* 1 if every edge i -> j of the valid graph g has its j -> i (then g is its
 * own transpose, the same arrays), 0 otherwise: lg__graph_transpose_map of
 * (g, g) without a map. tnext: n lg_idx of workspace. O(n + nnz), sequential. */
int lg__graph_is_symmetric(const lg_graph *g, lg_idx *tnext);

/* lg_graph_transpose and lg_graph_self_loops for a graph already checked
 * (lg_graph_check: a data set's, checked by lg_trainer_init): the same
 * results and statuses, without checking g again. O(n + nnz). */
lg_status lg__graph_transpose(const lg_graph *g, lg_graph **out);
lg_status lg__graph_self_loops(const lg_graph *g, int add, lg_graph **out);

/* lg_graph_check(g) for a kernel's argument: LG_EINVAL "<fn>: <what> is NULL"
 * for NULL, otherwise lg_graph_check's status with its message prefixed by
 * "<fn>: <what>: ". O(n + nnz). */
lg_status lg__graph_check_arg(const lg_graph *g, const char *what, const char *fn);

/* The graph of a layer cache's last forward, as its backward and read-outs
 * must be given it again: the object and its two arrays (identity only; the
 * forward checked the contents, which the caller keeps unchanged). */
typedef struct lg__graph_id {
    const lg_graph *g; /* the graph (NULL: no forward yet)                   */
    const lg_idx *p;   /* its g->p then                                      */
    const lg_idx *j;   /* its g->j then                                      */
} lg__graph_id;

/* The identity of g (not NULL), to keep at a forward. O(1). */
static inline lg__graph_id lg__graph_id_of(const lg_graph *g) { return (lg__graph_id){g, g->p, g->j}; }

/* The check of the graph given to a backward or a read-out (fn): LG_EINVAL
 * if g is NULL, or is not the forward's `id` (another lg_graph, or its p or j
 * replaced since: a graph of the same sizes used to pass, and the gradient
 * was the forward's activations walked over another graph's edges). O(1). */
lg_status lg__graph_id_check(const lg__graph_id *id, const lg_graph *g, const char *fn);

/* The shape of gT as g's transpose (g valid): not NULL, g's n and nnz, its
 * arrays present, row pointers spanning [0, nnz) without a negative row, so
 * that lg__graph_transpose_map may then walk it to check its entries.
 * LG_EINVAL naming fn otherwise. O(n). */
lg_status lg__graph_transpose_shape(const lg_graph *g, const lg_graph *gT, const char *fn);

/* Every flag of lg_graph_from_edges and lg_graph_from_igraph (lipgnn/graph.h). */
#define LG__GRAPH_FLAGS_ALL (LG_GRAPH_SYMMETRIZE | LG_GRAPH_ADD_SELF_LOOPS | LG_GRAPH_REMOVE_SELF_LOOPS)

/* LG_EINVAL naming fn and the unknown bits of flags, if any. O(1). */
static inline lg_status lg__graph_flags_check(unsigned flags, const char *fn) {
    if (flags & ~(unsigned)LG__GRAPH_FLAGS_ALL)
        return lg__error(LG_EINVAL, "%s: flags 0x%x hold unknown bits 0x%x (known: 0x%x)", fn, flags,
                         flags & ~(unsigned)LG__GRAPH_FLAGS_ALL, (unsigned)LG__GRAPH_FLAGS_ALL);
    return LG_OK;
}

/* Construction in two steps, for lg_graph_from_edges and the igraph bridge
 * (graph.c): *T = the n x n pattern of the m edges src[e] -> dst[e] with the
 * flags' extra entries (a CXSparse triplet matrix without values, 16 bytes an
 * entry), after the checks of lg_graph_from_edges (its statuses and messages);
 * then *out = the graph of T, which lg__graph_from_triplets frees, also on
 * failure. Between the two, the caller may free the edges' arrays: the
 * triplets are the only copy needed. O(n + m) each. */
struct cs_dl_sparse;
lg_status lg__graph_triplets(struct cs_dl_sparse **T, lg_idx n, lg_idx m, const lg_idx *src, const lg_idx *dst,
                             unsigned flags);
lg_status lg__graph_from_triplets(lg_graph **out, struct cs_dl_sparse *T, unsigned flags);

/* lg_graph_from_igraph(out, ig, flags) that also destroys ig (igraph_destroy)
 * as soon as its edges are copied, also on failure: for set-up code that made
 * ig only to convert it, so that the two graphs are not alive together. */
struct igraph_s;
lg_status lg__graph_from_igraph_take(lg_graph **out, struct igraph_s *ig, unsigned flags);

/* t = the transpose of g into t's arrays (p: n+1 entries, j: nnz, allocated
 * by the caller); next: n cursors of workspace. The counting sort of
 * lg_graph_transpose, without allocating. O(n + nnz). */
void lg__graph_transpose_into(lg_graph *t, lg_idx *next, const lg_graph *g);

/* Row i of a graph with its self-loop added (add) or removed: the number of
 * neighbours (row: the len sorted ids of row i), and the row itself written
 * to dst with shift added to every id (returns the count). O(len). */
lg_idx lg__graph_row_loops_len(const lg_idx *row, lg_idx len, lg_idx i, int add);
lg_idx lg__graph_row_loops(lg_idx *dst, const lg_idx *row, lg_idx len, lg_idx i, int add, lg_idx shift);

/* An igraph error code (igraph_error_t) as our status: LG_OK for success,
 * LG_ENOMEM for igraph's out-of-memory, else LG_EIGRAPH with igraph's text
 * after "igraph: what: ". */
lg_status lg__igraph_status(int code, const char *what);

#endif
