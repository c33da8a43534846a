/*
 * lipgnn/graph.h: the CSR graph of in-neighbour lists, its transpose, disjoint
 * unions (batches) and the bridge to igraph.
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 */
#ifndef LIPGNN_GRAPH_H
#define LIPGNN_GRAPH_H

#include "lipgnn/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A directed graph as compressed rows of IN-neighbours: row i lists the nodes
 * j that send a message to i (edge j -> i), ascending and without duplicates.
 * The same struct holds the transpose (row j lists the nodes j sends to),
 * which backward passes walk to gather source-node gradients. */
typedef struct lg_graph {
    lg_idx n;   /* number of nodes                                          */
    lg_idx nnz; /* number of directed edges (self-loops included)           */
    lg_idx *p;  /* row pointers, n+1 entries: row i is j[p[i] .. p[i+1])    */
    lg_idx *j;  /* nnz neighbour ids, ascending within each row             */
} lg_graph;

/* Flags for lg_graph_from_edges and lg_graph_from_igraph. */
enum {
    LG_GRAPH_SYMMETRIZE = 1u << 0,         /* add j -> i for every i -> j         */
    LG_GRAPH_ADD_SELF_LOOPS = 1u << 1,     /* add i -> i where missing            */
    LG_GRAPH_REMOVE_SELF_LOOPS = 1u << 2,  /* drop every i -> i                   */
};

/* The most nodes lg_graph_from_edges and lg_graph_from_igraph take: 2^40. */
#define LG_GRAPH_MAX_NODES ((lg_idx)1 << 40)

/* Builds the in-neighbour CSR of the m edges src[e] -> dst[e] on n nodes,
 * through CXSparse (a pattern's triplets, compress, transpose twice to sort,
 * once when symmetrised; repeated edges kept once). Ids must lie in [0, n):
 * LG_ERANGE otherwise, naming the edge. ADD and REMOVE self-loops together are
 * LG_EINVAL, as is a flags word with a bit that is none of the LG_GRAPH_*
 * flags above (the message names the unknown bits); LG_EINVAL too for a NULL
 * out, a negative n or m, or NULL edge arrays with m > 0; LG_ERANGE for n
 * above LG_GRAPH_MAX_NODES. O(n + m) time and memory: at most 24 bytes an
 * entry (an edge, two when symmetrised) and 24 a node beside the caller's
 * arrays.
 * On success *out is a new graph for lg_graph_free; on failure *out is NULL. */
lg_status lg_graph_from_edges(lg_graph **out, lg_idx n, lg_idx m, const lg_idx *src,
                              const lg_idx *dst, unsigned flags);

/* lg_graph_transpose, _self_loops, _copy, _union, _stats_compute and
 * lg_graph_to_igraph check the graphs they are given (a graph made by hand
 * included) with lg_graph_check first: LG_EINVAL naming the function and the
 * fault when one is not a valid CSR, with *out NULL. */

/* *out = the transpose of g (row j lists the nodes that j sends to, ascending).
 * O(n + nnz). */
lg_status lg_graph_transpose(const lg_graph *g, lg_graph **out);

/* *out = a copy of g with self-loops added (add != 0, without duplicating the
 * existing ones) or removed (add == 0). O(n + nnz). */
lg_status lg_graph_self_loops(const lg_graph *g, int add, lg_graph **out);

/* *out = a deep copy of g. */
lg_status lg_graph_copy(const lg_graph *g, lg_graph **out);

/* *out = the disjoint union of count graphs, graph k's node v becoming node
 * offsets[k] + v. If offsets is not NULL it receives count+1 entries
 * (offsets[count] = total nodes). O(total nodes + edges). */
lg_status lg_graph_union(lg_graph **out, lg_idx count, const lg_graph *const *graphs,
                         lg_idx *offsets);

/* Checks every invariant of g (sizes, monotone p, ids in range, rows sorted and
 * duplicate-free). LG_EINVAL with a message naming the first violation. */
lg_status lg_graph_check(const lg_graph *g);

/* Frees g and its arrays; NULL is a no-op. */
void lg_graph_free(lg_graph *g);

/* Number of in-neighbours of node i (self-loop included if present). */
static inline lg_idx lg_graph_degree(const lg_graph *g, lg_idx i) { return g->p[i + 1] - g->p[i]; }

/* Degree statistics of a graph, self-loops excluded. */
typedef struct lg_graph_stats {
    lg_idx n;             /* nodes                                              */
    lg_idx edges;         /* directed edges, self-loops included                */
    lg_idx self_loops;    /* edges i -> i                                       */
    lg_idx in_min, in_max; /* smallest and largest in-degree                    */
    double in_mean;        /* mean in-degree                                    */
    lg_idx out_min, out_max; /* smallest and largest out-degree                 */
    lg_idx isolated;      /* nodes with no edge to or from another node         */
    int symmetric;        /* 1 if every j -> i has its i -> j                   */
} lg_graph_stats;

/* Fills st. O(n + nnz) time, O(n) memory (LG_ENOMEM possible). */
lg_status lg_graph_stats_compute(const lg_graph *g, lg_graph_stats *st);

/* ------------------------------------------------------------------------- */
/* igraph bridge. igraph (as Debian builds it) is not thread-safe and has one  */
/* global RNG: call these from single-threaded set-up code only.              */
/* ------------------------------------------------------------------------- */

struct igraph_s; /* igraph_t */

/* Makes igraph return errors instead of aborting (its default), and seeds its
 * global RNG from seed. lipgnn's generators (lg_sbm_generate,
 * lg_trees_generate) call this with their seed; the conversions below set the
 * handlers alone and leave igraph's RNG as they find it. Callers that use
 * igraph directly before lipgnn may call it too. */
void lg_igraph_prepare(uint64_t seed);

/* Initialises *out (an uninitialised igraph_t) as the directed graph with an
 * edge j -> i for every in-neighbour j of i. The caller destroys it with
 * igraph_destroy. igraph errors become LG_EIGRAPH with igraph's message. */
lg_status lg_graph_to_igraph(const lg_graph *g, struct igraph_s *out);

/* *out = the lipgnn graph of ig: each directed edge u -> v becomes an
 * in-neighbour u of v; an undirected graph's edges go both ways. flags as in
 * lg_graph_from_edges, which it is, on igraph's own arrays of edge ends (no
 * copy of them): unknown bits of flags are LG_EINVAL; LG_EINVAL for a NULL
 * out or ig. */
lg_status lg_graph_from_igraph(lg_graph **out, const struct igraph_s *ig, unsigned flags);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_GRAPH_H */
