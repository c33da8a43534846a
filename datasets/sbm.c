/*
 * A synthetic node-classification problem: a stochastic block model (Holland,
 * Laskey & Leinhardt 1983) made with igraph's igraph_sbm_game, one class per
 * block, sparse class-dependent features and Planetoid-like splits
 * (lipgnn/dataset.h, lg_sbm_generate). igraph's RNG is seeded from the
 * options' seed (lg_igraph_prepare); everything else comes from lg_rng.
 * Single-threaded set-up code (igraph is not thread-safe).
 */
#include <igraph.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "graph/graph_internal.h"

void lg_sbm_opts_default(lg_sbm_opts *o) {
    if (!o) return;
    o->nodes = 3000;
    o->edges = 12000;
    o->classes = 8;
    o->within = 0.8;
    o->features = 128;
    o->per_node = 16;
    o->signal = 0.5;
    o->train_per_class = 20;
    o->n_val = 500;
    o->n_test = 1000;
    o->seed = 0;
}

/* The block sizes: n / k each, the last one taking the remainder. */
static lg_idx lg__sbm_block(const lg_sbm_opts *o) { return o->nodes / o->classes; }

/* The node pairs inside the blocks (*in) and between them (*out) of o's
 * nodes in o's classes (at least 2 nodes a class). */
static void lg__sbm_pairs(const lg_sbm_opts *o, double *in, double *out) {
    const lg_idx b = lg__sbm_block(o), k = o->classes;
    const double bd = (double)b, last = (double)(o->nodes - b * (k - 1));
    *in = (double)(k - 1) * bd * (bd - 1) / 2 + last * (last - 1) / 2;
    *out = ((double)o->nodes * (double)o->nodes - (double)(k - 1) * bd * bd - last * last) / 2;
}

/* Validates o: LG_EINVAL naming the first bad field. */
static lg_status lg__sbm_check(const lg_sbm_opts *o, double *p_in, double *p_out) {
    static const char fn[] = "lg_sbm_generate";
    if (o->classes < 2 || o->classes > 65536)
        return lg__error(LG_EINVAL, "%s: classes %d is outside 2..65536", fn, o->classes);
    if (o->nodes < 2 * (lg_idx)o->classes || o->nodes > ((lg_idx)1 << 31) - 1)
        return lg__error(LG_EINVAL, "%s: %lld nodes: need at least 2 per class (%d classes) and fewer than 2^31", fn,
                         (long long)o->nodes, o->classes);
    if (!(o->within >= 0 && o->within <= 1)) return lg__error(LG_EINVAL, "%s: within %g is outside [0, 1]", fn, o->within);
    if (!(o->signal >= 0 && o->signal <= 1)) return lg__error(LG_EINVAL, "%s: signal %g is outside [0, 1]", fn, o->signal);
    if (o->features < o->classes || o->features > (lg_idx)1 << 24)
        return lg__error(LG_EINVAL, "%s: %lld features: need at least one per class (%d) and at most 2^24", fn,
                         (long long)o->features, o->classes);
    if (o->per_node < 1 || o->per_node > o->features)
        return lg__error(LG_EINVAL, "%s: per_node %lld is outside 1..features (%lld)", fn, (long long)o->per_node,
                         (long long)o->features);
    /* with signal 1 every column comes from the class's band of d / k: a row
     * of more distinct columns than the band holds could never be drawn */
    if (o->signal == 1 && o->per_node > o->features / o->classes)
        return lg__error(LG_EINVAL, "%s: per_node %lld is more than the %lld columns of a class's band (features / classes) "
                         "that signal 1 draws from", fn, (long long)o->per_node, (long long)(o->features / o->classes));
    if (o->nodes > (INT64_MAX / 8) / o->per_node)
        return lg__error(LG_ERANGE, "%s: %lld x %lld feature values overflow", fn, (long long)o->nodes,
                         (long long)o->per_node);
    lg_idx b = lg__sbm_block(o), k = o->classes;
    if (o->train_per_class < 1 || o->train_per_class > b)
        return lg__error(LG_EINVAL, "%s: train_per_class %lld is outside 1..%lld (the nodes of a class)", fn,
                         (long long)o->train_per_class, (long long)b);
    /* train_per_class * k <= b k <= nodes; each split against the room the
     * ones before it left (a sum of the three could overflow) */
    const lg_idx ntrain = o->train_per_class * k, room = o->nodes - ntrain;
    if (o->n_val < 0 || o->n_val > room)
        return lg__error(LG_EINVAL, "%s: splits: n_val %lld is outside 0..%lld (the %lld nodes less %lld training ones)", fn,
                         (long long)o->n_val, (long long)room, (long long)o->nodes, (long long)ntrain);
    if (o->n_test < 1 || o->n_test > room - o->n_val)
        return lg__error(LG_EINVAL,
                         "%s: splits: n_test %lld is outside 1..%lld (the %lld nodes less %lld training and %lld validation "
                         "ones)",
                         fn, (long long)o->n_test, (long long)(room - o->n_val), (long long)o->nodes, (long long)ntrain,
                         (long long)o->n_val);
    /* expected edges m: a share `within` inside the blocks, the rest between */
    double pairs_in, pairs_out;
    lg__sbm_pairs(o, &pairs_in, &pairs_out);
    if (o->edges < 0) return lg__error(LG_EINVAL, "%s: edges %lld < 0", fn, (long long)o->edges);
    *p_in = o->within * (double)o->edges / pairs_in;
    *p_out = (1 - o->within) * (double)o->edges / pairs_out;
    if (*p_in > 1 || *p_out > 1)
        return lg__error(LG_EINVAL, "%s: %lld edges (%.0f%% within classes) are more than %lld nodes in %d classes can hold",
                         fn, (long long)o->edges, 100 * o->within, (long long)o->nodes, o->classes);
    return LG_OK;
}

lg_idx lg_sbm_max_edges(const lg_sbm_opts *o) {
    if (!o || o->classes < 2 || o->classes > 65536 || o->nodes < 2 * (lg_idx)o->classes ||
        !(o->within >= 0 && o->within <= 1))
        return 0;
    double pairs_in, pairs_out, m = 1e300;
    lg__sbm_pairs(o, &pairs_in, &pairs_out);
    if (o->within > 0) m = pairs_in / o->within;
    if (o->within < 1 && pairs_out / (1 - o->within) < m) m = pairs_out / (1 - o->within);
    lg_idx e = m < 9e18 ? (lg_idx)floor(m) : (lg_idx)9e18;
    /* the largest e that lg__sbm_check's divisions take (floor may round up past it) */
    while (e > 0 && (o->within * (double)e / pairs_in > 1 || (1 - o->within) * (double)e / pairs_out > 1)) e--;
    return e;
}

lg_status lg_sbm_estimate(const lg_sbm_opts *o, size_t *peak) {
    double p_in = 0, p_out = 0;
    if (!o || !peak) return lg__error(LG_EINVAL, "lg_sbm_estimate: NULL argument");
    *peak = 0;
    LG_CHECK(lg__sbm_check(o, &p_in, &p_out));
    /* in doubles (no overflow); e: edges, with six standard deviations of
     * the binomial count above the expected m */
    const double I = sizeof(lg_idx), n = (double)o->nodes, m = (double)o->edges, e = m + 6 * sqrt(m) + 16;
    const double vals = n * (double)o->per_node;
    /* (1) inside igraph_sbm_game: its edge list, the graph, the sort of its
     *     indices (measured, igraph 0.10.2: 56.7 bytes an edge, 24 a node) */
    const double in_igraph = 58 * e + 24 * n;
    /* (2) igraph's graph (4 vectors of edges, 2 of nodes, and room for a
     *     third: the measured peak at 100k nodes, 1.5M edges needed it) beside
     *     the triplets (2 entries an edge, 2 ids an entry):
     *     lg__graph_from_igraph_take */
    const double beside = (4 * I * e + 3 * I * n) + 2 * 2 * I * e;
    /* (3) the compressed pattern and its transpose, each 2 entries an edge,
     *     with their column pointers and the transpose's workspace */
    const double sorted = 2 * (2 * I * e + I * n) + I * n;
    /* (4) the data set (graph, labels, features, splits) and the split order */
    const double set = sizeof(lg_dataset) + 96 + sizeof(lg_graph) + I * (n + 1 + 2 * e) + sizeof(int32_t) * n +
                       sizeof(lg_features) + I * (n + 1) + (I + sizeof(float)) * vals + (double)o->features +
                       I * n /* order */ + I * (double)(o->train_per_class * o->classes + o->n_val + o->n_test);
    double b = in_igraph;
    if (beside > b) b = beside;
    if (sorted > b) b = sorted;
    if (set > b) b = set;
    b = lg__resident_bytes(b);
    *peak = b < (double)SIZE_MAX ? (size_t)b : SIZE_MAX;
    return LG_OK;
}

/* ds->graph = the SBM's graph (undirected, both directions). */
static lg_status lg__sbm_graph(lg_dataset *ds, const lg_sbm_opts *o, double p_in, double p_out) {
    lg_status st = LG_OK;
    const int k = o->classes;
    const lg_idx b = lg__sbm_block(o);
    igraph_matrix_t pref;
    igraph_vector_int_t sizes;
    igraph_t ig;
    int have_pref = 0, have_sizes = 0;
    lg_igraph_prepare(o->seed);
    LG_TRY(lg__igraph_status(igraph_matrix_init(&pref, k, k), "preference matrix"));
    have_pref = 1;
    LG_TRY(lg__igraph_status(igraph_vector_int_init(&sizes, k), "block sizes"));
    have_sizes = 1;
    for (int c = 0; c < k; c++) VECTOR(sizes)[c] = c < k - 1 ? b : o->nodes - b * (k - 1);
    for (int r = 0; r < k; r++)
        for (int c = 0; c < k; c++) MATRIX(pref, r, c) = r == c ? p_in : p_out;
    LG_TRY(lg__igraph_status(igraph_sbm_game(&ig, (igraph_integer_t)o->nodes, &pref, &sizes, 0, 0), "igraph_sbm_game"));
    lg__heap_trim(); /* the game's edge list, freed (14 of 64 MB stayed resident at 1.5M edges) */
    st = lg__graph_from_igraph_take(&ds->graph, &ig, 0); /* destroys ig */
    lg__heap_trim();
fail:
    if (have_pref) igraph_matrix_destroy(&pref);
    if (have_sizes) igraph_vector_int_destroy(&sizes);
    return st;
}

lg_status lg_sbm_generate(lg_dataset **out, const lg_sbm_opts *o) {
    lg_status st = LG_OK;
    lg_dataset *ds = NULL;
    unsigned char *used = NULL;
    lg_idx *order = NULL, *per_class = NULL;
    double p_in = 0, p_out = 0;
    if (!out || !o) return lg__error(LG_EINVAL, "lg_sbm_generate: NULL argument");
    *out = NULL;
    LG_CHECK(lg__sbm_check(o, &p_in, &p_out));
    const lg_idx n = o->nodes, d = o->features, per = o->per_node, k = o->classes, b = lg__sbm_block(o);
    const lg_idx nvals = n * per, ntrain = o->train_per_class * k;
    LG_CALLOC(ds, 1, "SBM data set");
    LG_TRY(lg__sbm_graph(ds, o, p_in, p_out));
    char name[96];
    snprintf(name, sizeof name, "sbm-%lld-%lld", (long long)n, (long long)o->edges);
    LG_ALLOC(ds->name, strlen(name) + 1, "SBM name");
    memcpy(ds->name, name, strlen(name) + 1);
    ds->n_classes = (int32_t)k;
    LG_ALLOC(ds->labels, n, "SBM labels");
    LG_CALLOC(ds->features, 1, "SBM features");
    lg_features *x = ds->features;
    x->n = n;
    x->d = d;
    x->kind = LG_FEAT_SPARSE;
    LG_ALLOC(x->p, n + 1, "SBM features");
    LG_ALLOC(x->j, nvals, "SBM features");
    LG_ALLOC(x->x, nvals, "SBM features");
    LG_CALLOC(used, d, "SBM features");
    /* features: per_node distinct columns a row, each drawn with probability
     * `signal` from the class's band of d / k columns, else from all d */
    lg_rng r;
    lg_rng_seed(&r, o->seed ^ 0x5eedf00dULL);
    const lg_idx band = d / k;
    lg_idx nnz = 0;
    x->p[0] = 0;
    for (lg_idx i = 0; i < n; i++) {
        lg_idx c = LG_MIN(i / b, k - 1);
        ds->labels[i] = (int32_t)c;
        for (lg_idx t = 0; t < per; t++) {
            lg_idx col;
            do {
                col = lg_rng_double(&r) < o->signal ? c * band + (lg_idx)lg_rng_below(&r, (uint64_t)band)
                                                    : (lg_idx)lg_rng_below(&r, (uint64_t)d);
            } while (used[col]);
            used[col] = 1;
        }
        for (lg_idx col = 0; col < d; col++) /* ascending columns */
            if (used[col]) {
                x->j[nnz] = col;
                x->x[nnz++] = 1; /* binary, as bag-of-words features */
                used[col] = 0;
            }
        x->p[i + 1] = nnz;
    }
    x->nnz = nnz;
    /* splits: a random order; train_per_class of each class, then n_val, n_test */
    LG_ALLOC(order, n, "SBM splits");
    LG_CALLOC(per_class, k, "SBM splits");
    LG_ALLOC(ds->train, ntrain, "SBM splits");
    LG_ALLOC(ds->val, o->n_val, "SBM splits");
    LG_ALLOC(ds->test, o->n_test, "SBM splits");
    for (lg_idx i = 0; i < n; i++) order[i] = i;
    lg_rng_shuffle(&r, order, n);
    for (lg_idx q = 0; q < n; q++) {
        lg_idx i = order[q];
        if (per_class[ds->labels[i]] < o->train_per_class) {
            per_class[ds->labels[i]]++;
            ds->train[ds->n_train++] = i;
        } else if (ds->n_val < o->n_val) {
            ds->val[ds->n_val++] = i;
        } else if (ds->n_test < o->n_test) {
            ds->test[ds->n_test++] = i;
        }
    }
    ds->n_graphs = 1;
    LG_ALLOC(ds->graph_ptr, 2, "SBM data set");
    ds->graph_ptr[0] = 0;
    ds->graph_ptr[1] = n;
    lg__free(used);
    lg__free(order);
    lg__free(per_class);
    *out = ds;
    return LG_OK;
fail:
    lg__free(used);
    lg__free(order);
    lg__free(per_class);
    lg_dataset_free(ds);
    return st;
}
