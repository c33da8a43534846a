/*
 * The TREES generator (lipgnn/dataset.h; docs/trees-spec.md): the
 * long-range benchmark of Dasoulas et al. (ICML 2021, section 7.2), after the
 * NeighborsMatch problem of Alon & Yahav (ICLR 2021).
 *
 * One tree's shape comes from igraph (igraph_kary_tree, in-tree: edges child
 * -> parent); every tree of the batch shares it, so it is built once and the
 * batch is the disjoint union of count copies. The content (keys, labels, root
 * key, split) comes from one lg_rng seeded with opts.seed, drawn tree after
 * tree, so it is the same on every platform and igraph's RNG plays no part.
 *
 * Layout of tree t (numbering of igraph's k-ary trees, checked on its edge
 * list): node v > 0 has parent (v - 1) / 2, so the root is node 0 and the 2^d
 * green leaves are the last 2^d nodes; global ids are graph_ptr[t] + v.
 */
#include <math.h>
#include <stdio.h>

#include <igraph.h>

#include "core/internal.h"
#include "graph/graph_internal.h"

/* Largest accepted number of nodes in a batch (2^40): keeps every count and
 * feature index far from overflow; memory runs out long before. */
#define LG__TREES_MAX_NODES ((lg_idx)1 << 40)

void lg_trees_opts_default(lg_trees_opts *o) {
    if (!o) return;
    o->depth = 3;
    o->count = 5000;
    o->seed = 0;
    o->train_fraction = 0.8;
}

/* *out = one tree of the given depth as an lg_graph: edges child -> parent
 * from igraph's in-tree, with self-loops. Fails with LG_EIGRAPH if igraph's
 * numbering is not the heap layout (parent of v is (v - 1) / 2) this file
 * relies on. O(2^d). */
static lg_status lg__trees_shape(lg_graph **out, int depth, uint64_t seed) {
    lg_status st = LG_OK;
    igraph_t t;
    igraph_vector_int_t edges;
    int have_t = 0, have_edges = 0;
    lg_idx *src = NULL, *dst = NULL;
    lg_idx n = ((lg_idx)1 << (depth + 1)) - 1;
    *out = NULL;
    lg_igraph_prepare(seed);
    igraph_error_t e = igraph_kary_tree(&t, n, 2, IGRAPH_TREE_IN);
    if (e) { st = lg__igraph_status(e, "igraph_kary_tree"); goto fail; }
    have_t = 1;
    e = igraph_vector_int_init(&edges, 0);
    if (e) { st = lg__igraph_status(e, "edge vector"); goto fail; }
    have_edges = 1;
    e = igraph_get_edgelist(&t, &edges, 0);
    if (e) { st = lg__igraph_status(e, "igraph_get_edgelist"); goto fail; }
    lg_idx m = igraph_ecount(&t);
    if (igraph_vcount(&t) != n || m != n - 1 || !igraph_is_directed(&t)) {
        st = lg__error(LG_EIGRAPH, "igraph_kary_tree(%lld, 2): %lld nodes and %lld edges, expected %lld and %lld",
                       (long long)n, (long long)igraph_vcount(&t), (long long)m, (long long)n, (long long)(n - 1));
        goto fail;
    }
    LG_ALLOC(src, m, "tree edges");
    LG_ALLOC(dst, m, "tree edges");
    for (lg_idx k = 0; k < m; k++) {
        lg_idx child = VECTOR(edges)[2 * k], parent = VECTOR(edges)[2 * k + 1];
        if (child <= 0 || child >= n || parent != (child - 1) / 2) {
            st = lg__error(LG_EIGRAPH, "igraph_kary_tree: edge %lld (%lld -> %lld) is not child -> (child-1)/2",
                           (long long)k, (long long)child, (long long)parent);
            goto fail;
        }
        src[k] = child;
        dst[k] = parent;
    }
    /* n - 1 distinct children, each with its one parent: the heap layout */
    st = lg_graph_from_edges(out, n, m, src, dst, LG_GRAPH_ADD_SELF_LOOPS);
    if (st == LG_OK && (*out)->nnz != 2 * n - 1) {
        lg_graph_free(*out);
        *out = NULL;
        st = lg__error(LG_EIGRAPH, "igraph_kary_tree: repeated edges in a tree of %lld nodes", (long long)n);
    }
fail:
    if (have_edges) igraph_vector_int_destroy(&edges);
    if (have_t) igraph_destroy(&t);
    lg__free(src);
    lg__free(dst);
    return st;
}

/* Splits the count trees into train and test, stratified by root label:
 * within each of the C classes the trees are shuffled, class c sends
 * floor(f * size_c) or that plus one of them to train (largest remainders
 * first, ties in a random order), so that train holds round(f * count) trees
 * in all. Fills ds->train / ds->test with the roots, ascending.
 * O(count + C log C). */
static lg_status lg__trees_split(lg_dataset *ds, lg_rng *rng, double f, const int32_t *tree_label) {
    lg_status st = LG_OK;
    lg_idx count = ds->n_graphs, C = ds->n_classes;
    lg_idx *start = NULL, *order = NULL, *take = NULL, *rank = NULL;
    unsigned char *in_train = NULL;
    double *rem = NULL;
    LG_CALLOC(start, C + 1, "split workspace");
    LG_ALLOC(order, count, "split workspace");
    LG_ALLOC(take, C, "split workspace");
    LG_ALLOC(rank, C, "split workspace");
    LG_ALLOC(rem, C, "split workspace");
    LG_CALLOC(in_train, count, "split workspace");
    /* counting sort of the trees by label, then a shuffle inside each class */
    for (lg_idx t = 0; t < count; t++) start[tree_label[t] + 1]++;
    for (lg_idx c = 0; c < C; c++) start[c + 1] += start[c];
    for (lg_idx c = 0; c < C; c++) take[c] = start[c];
    for (lg_idx t = 0; t < count; t++) order[take[tree_label[t]]++] = t;
    for (lg_idx c = 0; c < C; c++) lg_rng_shuffle(rng, order + start[c], start[c + 1] - start[c]);
    /* apportionment by largest remainders */
    lg_idx want = (lg_idx)llround(f * (double)count), got = 0;
    for (lg_idx c = 0; c < C; c++) {
        double share = f * (double)(start[c + 1] - start[c]);
        take[c] = (lg_idx)floor(share);
        rem[c] = share - (double)take[c];
        got += take[c];
        rank[c] = c;
    }
    lg_rng_shuffle(rng, rank, C); /* random tie order; then a stable insertion sort */
    for (lg_idx a = 1; a < C; a++) {
        lg_idx r = rank[a], b = a;
        while (b > 0 && rem[rank[b - 1]] < rem[r]) { rank[b] = rank[b - 1]; b--; }
        rank[b] = r;
    }
    for (lg_idx a = 0; a < C && got < want; a++) {
        lg_idx c = rank[a];
        if (take[c] < start[c + 1] - start[c]) { take[c]++; got++; }
    }
    ds->n_train = got;
    ds->n_test = count - got;
    for (lg_idx c = 0; c < C; c++)
        for (lg_idx k = 0; k < take[c]; k++) in_train[order[start[c] + k]] = 1;
    LG_ALLOC(ds->train, ds->n_train, "train split");
    LG_ALLOC(ds->test, ds->n_test, "test split");
    LG_ALLOC(ds->val, 1, "val split");
    ds->n_val = 0;
    lg_idx a = 0, b = 0;
    for (lg_idx t = 0; t < count; t++) {
        if (in_train[t]) ds->train[a++] = ds->roots[t];
        else ds->test[b++] = ds->roots[t];
    }
fail:
    lg__free(start);
    lg__free(order);
    lg__free(take);
    lg__free(rank);
    lg__free(rem);
    lg__free(in_train);
    return st;
}

/* Validates o: LG_EINVAL naming the first bad field. */
static lg_status lg__trees_check(const lg_trees_opts *o) {
    if (o->depth < 2 || o->depth > 10)
        return lg__error(LG_EINVAL, "TREES: depth %d is outside 2..10", o->depth);
    if (!(o->train_fraction > 0.0 && o->train_fraction < 1.0))
        return lg__error(LG_EINVAL, "TREES: train fraction %g is outside (0, 1)", o->train_fraction);
    const lg_idx nt = ((lg_idx)2 << o->depth) - 1;
    if (o->count < 1 || o->count > LG__TREES_MAX_NODES / nt)
        return lg__error(LG_EINVAL, "TREES: tree count %lld is outside 1..%lld for depth %d",
                         (long long)o->count, (long long)(LG__TREES_MAX_NODES / nt), o->depth);
    return LG_OK;
}

lg_status lg_trees_estimate(const lg_trees_opts *o, size_t *peak) {
    if (!o || !peak) return lg__error(LG_EINVAL, "lg_trees_estimate: NULL argument");
    *peak = 0;
    LG_CHECK(lg__trees_check(o));
    /* what lg_trees_generate allocates, in doubles (no overflow): the data
     * set, then the largest workspace beside it (the union's tree list, or
     * the split's: order, in_train, tree labels) and the one tree's shape */
    const double I = sizeof(lg_idx), L = (double)((lg_idx)1 << o->depth), nt = 2 * L - 1, c = (double)o->count;
    const double n = c * nt, graph_nnz = c * (2 * nt - 1), feat_nnz = c * (2 * L + 1);
    const double set = sizeof(lg_dataset) + 16 + sizeof(lg_graph) + I * (n + 1 + graph_nnz) /* graph */
                       + sizeof(lg_features) + I * (n + 1) + (I + sizeof(float)) * feat_nnz /* features */
                       + sizeof(int32_t) * n + I * c       /* labels; train and test */
                       + I * (c + 1) + I * c;              /* graph offsets, roots */
    const double work = c * (I + 1 + sizeof(int32_t)) + I * (5 * L + 1) + I * (nt + 1 + 2 * nt) + (I + 1) * 2 * nt;
    const double b = lg__resident_bytes(set + work);
    *peak = b < (double)SIZE_MAX ? (size_t)b : SIZE_MAX;
    return LG_OK;
}

lg_status lg_trees_generate(lg_dataset **out, const lg_trees_opts *o) {
    lg_status st = LG_OK;
    lg_dataset *ds = NULL;
    lg_graph *shape = NULL;
    const lg_graph **copies = NULL;
    lg_idx *keys = NULL, *labs = NULL;
    int32_t *tree_label = NULL;
    if (!out) return lg__error(LG_EINVAL, "lg_trees_generate: out is NULL");
    *out = NULL;
    if (!o) return lg__error(LG_EINVAL, "lg_trees_generate: options are NULL");
    LG_CHECK(lg__trees_check(o));
    const int d = o->depth;
    const lg_idx L = (lg_idx)1 << d;      /* leaves = classes = keys        */
    const lg_idx nt = 2 * L - 1;          /* nodes per tree                 */
    const lg_idx first_leaf = L - 1;      /* leaves are nodes L-1 .. 2L-2   */
    const lg_idx count = o->count;
    const lg_idx n = count * nt;

    LG_TRY(lg__trees_shape(&shape, d, o->seed));
    LG_CALLOC(ds, 1, "TREES data set");
    LG_ALLOC(ds->name, 16, "data set name");
    snprintf(ds->name, 16, "trees-d%d", d);
    ds->n_classes = (int32_t)L;
    ds->n_graphs = count;

    /* the batch: count copies of the one shape */
    LG_ALLOC(copies, count, "tree list");
    for (lg_idx t = 0; t < count; t++) copies[t] = shape;
    LG_ALLOC(ds->graph_ptr, count + 1, "graph offsets");
    LG_TRY(lg_graph_union(&ds->graph, count, copies, ds->graph_ptr));
    lg__free(copies);
    copies = NULL;
    LG_ALLOC(ds->roots, count, "tree roots");
    for (lg_idx t = 0; t < count; t++) ds->roots[t] = ds->graph_ptr[t]; /* node 0 */

    /* features: a leaf holds 2 values, the root 1, interior nodes none */
    lg_features *F = NULL;
    LG_CALLOC(F, 1, "TREES features");
    ds->features = F;
    F->n = n;
    F->d = 2 * L;
    F->kind = LG_FEAT_SPARSE;
    F->nnz = count * (2 * L + 1);
    LG_ALLOC(F->p, n + 1, "feature row pointers");
    LG_ALLOC(F->j, F->nnz, "feature column ids");
    LG_ALLOC(F->x, F->nnz, "feature values");
    LG_ALLOC(ds->labels, n, "labels");
    LG_ALLOC(tree_label, count, "tree labels");
    LG_ALLOC(keys, L, "leaf keys");
    LG_ALLOC(labs, L, "leaf labels");

    lg_rng rng;
    lg_rng_seed(&rng, o->seed);
    lg_idx q = 0; /* next feature entry */
    F->p[0] = 0;
    for (lg_idx t = 0; t < count; t++) {
        /* draws, in this order: leaf keys, leaf labels, root key */
        for (lg_idx i = 0; i < L; i++) { keys[i] = i + 1; labs[i] = i; }
        lg_rng_shuffle(&rng, keys, L);
        lg_rng_shuffle(&rng, labs, L);
        lg_idx root_key = (lg_idx)lg_rng_below(&rng, (uint64_t)L) + 1;
        lg_idx target = -1;
        for (lg_idx i = 0; i < L; i++)
            if (keys[i] == root_key) target = labs[i];
        tree_label[t] = (int32_t)target;
        lg_idx base = t * nt;
        for (lg_idx v = 0; v < nt; v++) {
            lg_idx g = base + v;
            ds->labels[g] = -1;
            if (v == 0) {
                F->j[q] = root_key - 1;
                F->x[q++] = 1.0f;
            } else if (v >= first_leaf) {
                lg_idx i = v - first_leaf;
                F->j[q] = keys[i] - 1; /* key columns 0..L-1 ...        */
                F->x[q++] = 1.0f;
                F->j[q] = L + labs[i]; /* ... then label columns L..2L-1 */
                F->x[q++] = 1.0f;
            }
            F->p[g + 1] = q;
        }
        ds->labels[base] = (int32_t)target;
    }
    LG_TRY(lg__trees_split(ds, &rng, o->train_fraction, tree_label));

    lg_graph_free(shape);
    lg__free(keys);
    lg__free(labs);
    lg__free(tree_label);
    *out = ds;
    return LG_OK;
fail:
    lg_graph_free(shape);
    lg__free(copies);
    lg__free(keys);
    lg__free(labs);
    lg__free(tree_label);
    lg_dataset_free(ds); /* NULL-safe; frees whatever was built */
    return st;
}
