/*
 * lipgnn/dataset.h: node-classification data sets: the directory loader
 * (Matrix Market graph and features, labels, splits), feature matrices, and the
 * TREES and SBM generators.
 *
 * Part of the umbrella header <lipgnn.h>; include that one.
 */
#ifndef LIPGNN_DATASET_H
#define LIPGNN_DATASET_H

#include "lipgnn/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a feature matrix is stored. */
typedef enum lg_feat_kind {
    LG_FEAT_DENSE = 0,  /* n x d row-major values                          */
    LG_FEAT_SPARSE = 1, /* compressed rows: p, j, x                        */
} lg_feat_kind;

/* An n x d node-feature matrix, dense or sparse (Cora's are 1.3% dense: they
 * stay sparse so that a model's first product is sparse x dense). */
typedef struct lg_features {
    lg_idx n;          /* rows (nodes)                                      */
    lg_idx d;          /* columns (features)                                */
    lg_feat_kind kind; /* storage                                           */
    lg_idx nnz;        /* stored values: n*d if dense                       */
    float *x;          /* DENSE: n*d values; SPARSE: nnz values             */
    lg_idx *p;         /* SPARSE: n+1 row pointers; NULL if dense           */
    lg_idx *j;         /* SPARSE: nnz column ids, ascending in a row; NULL if dense */
} lg_features;

/* Frees f and its arrays; NULL is a no-op. */
void lg_features_free(lg_features *f);

/* A node-classification data set. Node ids are 0-based. */
typedef struct lg_dataset {
    char *name;          /* the directory's base name, or "trees-d<D>"; may be NULL  */
    lg_graph *graph;     /* in-neighbour CSR as the files give it (self-loops not added) */
    lg_features *features; /* n x d node features                                 */
    int32_t *labels;     /* n class ids in [0, n_classes), -1 = no label          */
    int32_t n_classes;   /* number of classes                                     */
    lg_idx *train;       /* n_train node ids of the training split               */
    lg_idx *val;         /* n_val node ids of the validation split (may be 0)    */
    lg_idx *test;        /* n_test node ids of the test split                    */
    lg_idx n_train, n_val, n_test;
    lg_idx n_graphs;     /* graphs in the disjoint union: 1, or the TREES count  */
    lg_idx *graph_ptr;   /* n_graphs+1: graph g owns nodes [graph_ptr[g], graph_ptr[g+1]) */
    lg_idx *roots;       /* TREES: the root of each tree (n_graphs); NULL otherwise */
} lg_dataset;

/* Loads the data set in directory dir:
 *   graph.mtx    Matrix Market `coordinate pattern symmetric|general` n x n
 *                (symmetric: lower triangle, both directions made; general:
 *                entry (i, j) is the edge i -> j), 1-based; or, instead,
 *   edges.txt    one `u v` pair a line, 0-based, edge u -> v;
 *   features.mtx `coordinate real general` (kept sparse) or `array real general`
 *                (dense, column-major in the file), n x d;
 *   labels.txt   n lines, a class id >= 0 or -1 (no label);
 *   train.txt, val.txt, test.txt: node ids, one a line (val.txt may be absent).
 * n is the number of lines of labels.txt; every header must agree with it, and
 * no size declared in a header is allocated before it is checked against the
 * file's length. Bad input is LG_EIO or LG_EPARSE/LG_ERANGE/LG_ENUMERIC, with
 * lg_last_error() naming the file, the line and what is wrong. O(file sizes). */
lg_status lg_dataset_load(lg_dataset **out, const char *dir);

/* Resolves a data-set name to a directory: $LIPGNN_DATA/name (one '/'
 * between them whether or not LIPGNN_DATA ends in one). Writes the path and
 * its NUL into buf (cap bytes). LG_EINVAL for a NULL buf or cap 0, and for a
 * NULL or empty name, one holding '/', or "." or ".." (not a plain name);
 * LG_ENOTFOUND with a message saying so when LIPGNN_DATA is unset or empty,
 * or $LIPGNN_DATA/name is not a directory (the message lists the data sets
 * there); LG_ERANGE when the path and its NUL do not fit in cap bytes (as
 * lg_checkpoint_note), the message giving the bytes needed. Whenever it is
 * not LG_OK, buf (when cap > 0) holds "", except after LG_ENOTFOUND for a
 * missing directory, when it holds the path looked at. */
lg_status lg_dataset_resolve(const char *name, char *buf, size_t cap);

/* Frees ds and everything it owns; NULL is a no-op. */
void lg_dataset_free(lg_dataset *ds);

/* The bytes ds holds: its arrays and structs, as their element counts give
 * them (0 for NULL). O(1). */
size_t lg_dataset_bytes(const lg_dataset *ds);

/* An upper bound, without reading the data, on the peak resident memory that
 * lg_dataset_load(dir) adds: its stages followed allocation by allocation
 * (each file's text beside the arrays read from it, the graph's triplets and
 * CXSparse's compressed copies, the features' compressed rows; what earlier
 * files left), with the allocator's margin (1% and 1 MiB), from the files'
 * lengths, the Matrix Market headers (the first MiB of each .mtx file at most)
 * and the line counts of labels.txt, edges.txt and the splits (read in blocks,
 * nothing held). The result bounds lg_dataset_bytes of the loaded set too.
 * Files are not checked beyond what that needs: the load reports bad content.
 * LG_EIO for a missing directory or file, the reader's errors for a bad
 * header, LG_EUNSUPPORTED for an .mtx header longer than a MiB; *peak = 0
 * then. O(lengths of the text files other than the .mtx ones), O(1) memory. */
lg_status lg_dataset_load_estimate(const char *dir, size_t *peak);

/* Options of the TREES generator. */
typedef struct lg_trees_opts {
    int depth;             /* d in 2..10: 2^(d+1)-1 nodes, 2^d classes per tree */
    lg_idx count;          /* number of trees (the paper: 5000)                  */
    uint64_t seed;         /* everything random derives from it                  */
    double train_fraction; /* share of trees in the training split (0.8)        */
} lg_trees_opts;

/* Defaults: depth 3, 5000 trees, seed 0, train fraction 0.8. */
void lg_trees_opts_default(lg_trees_opts *o);

/* Generates TREES (Dasoulas et al. 2021, section 7.2, after Alon & Yahav 2021;
 * docs/trees-spec.md): count full binary trees of depth d, built with igraph,
 * in one disjoint union. Green leaves carry [one-hot key | one-hot label], the
 * root [one-hot key | 0], interior nodes zeros; features are sparse, width
 * 2 * 2^d. Edges go child -> parent, self-loops added. labels[root] is the
 * label of the leaf whose key equals the root's; other nodes are -1. train and
 * test list roots (split stratified by label where possible), val is empty.
 * Deterministic for a seed. O(count * 2^d). */
lg_status lg_trees_generate(lg_dataset **out, const lg_trees_opts *o);

/* *peak = the bytes that lg_trees_generate(o) would hold at its peak: the data
 * set (lg_dataset_bytes of the result) and the workspace beside it, computed
 * without allocating, so that a caller can refuse a problem that does not fit
 * before making it. Options checked as lg_trees_generate does (its statuses).
 * O(1). */
lg_status lg_trees_estimate(const lg_trees_opts *o, size_t *peak);

/* Options of the stochastic-block-model generator. */
typedef struct lg_sbm_opts {
    lg_idx nodes;           /* n: nodes (default 3000)                            */
    lg_idx edges;           /* m: expected undirected edges (default 12000)      */
    int classes;            /* k: blocks, one class each (default 8)             */
    double within;          /* expected share of the edges inside a block (0.8)  */
    lg_idx features;        /* d: feature columns (128)                          */
    lg_idx per_node;        /* non-zeros of a node's feature row (16)            */
    double signal;          /* probability that a non-zero falls in the class's
                               own band of d/k columns (0.5; else anywhere)     */
    lg_idx train_per_class; /* training nodes of each class (20)                 */
    lg_idx n_val, n_test;   /* validation and test nodes (500, 1000)             */
    uint64_t seed;          /* everything random derives from it                 */
} lg_sbm_opts;

/* The defaults above: a Cora-sized problem (3000 nodes, 12 000 edges, 8
 * classes, Planetoid-like splits) on which a 10-layer GAT without
 * LipschitzNorm fails and with it learns (lipgnn demo). */
void lg_sbm_opts_default(lg_sbm_opts *o);

/* Generates a stochastic block model (Holland, Laskey & Leinhardt 1983) with
 * igraph (igraph_sbm_game, its RNG seeded from o->seed): k blocks of n/k
 * nodes (the last takes the remainder), node i in block min(i / (n/k), k-1),
 * which is its class; an edge inside a block with probability p_in and
 * between blocks with p_out, chosen so that about m edges are expected, a
 * share `within` of them inside blocks; undirected (both directions stored),
 * no self-loops. Features: sparse, per_node distinct columns a row, each from
 * the class's band [c d/k, (c+1) d/k) with probability `signal`, else uniform
 * over d; values 1 (binary, as bag-of-words). Splits from a seeded random order:
 * train_per_class nodes of each class, then n_val validation and n_test test
 * nodes. Deterministic for a seed (and igraph version). LG_EINVAL naming the
 * first bad field (fewer than 2 nodes per class, splits that do not fit:
 * n_val < 0, n_test < 1 or more than the nodes the splits before leave,
 * per_node outside 1..d, or above the band's d/k columns when signal is 1,
 * more edges than the blocks can hold, ...). O(n per_node + m) expected. */
lg_status lg_sbm_generate(lg_dataset **out, const lg_sbm_opts *o);

/* The most edges (o->edges) lg_sbm_generate takes for o's nodes, classes
 * and share `within` (both edge probabilities at most 1; o's other fields
 * are not read); 0 for NULL or when those three fields are bad. O(1). */
lg_idx lg_sbm_max_edges(const lg_sbm_opts *o);

/* *peak = the bytes that lg_sbm_generate(o) would hold at its peak, computed
 * without allocating (options checked as lg_sbm_generate does, its statuses),
 * for the expected edge count plus six standard deviations, with 1% and
 * 1 MiB for the C library. The peak is the largest of four stages: inside
 * igraph_sbm_game (its edge list, the graph and its sorted indices: 58 bytes
 * an edge and 24 a node, measured with igraph 0.10.2, bench/README.md),
 * igraph's graph beside lipgnn's triplets (64 and 24), the sorted pattern (32
 * and 24), and the finished data set with the splits' workspace (16 bytes an
 * edge, 12 a feature value, 36 a node). O(1). */
lg_status lg_sbm_estimate(const lg_sbm_opts *o, size_t *peak);

#ifdef __cplusplus
}
#endif

#endif /* LIPGNN_DATASET_H */
