/*
 * The CSR graph of in-neighbour lists (lipgnn/graph.h).
 *
 * Construction goes through CXSparse's 64-bit interface (Davis, "Direct
 * Methods for Sparse Linear Systems", SIAM 2006): the edges j -> i become the
 * triplet entries (row j, column i) of an n x n pattern (no values), so that
 * column i of the compressed matrix lists the in-neighbours of i; transposing
 * twice sorts every column (once for a symmetrised pattern, whose out-neighbour
 * lists are its in-neighbour lists), which leaves duplicates side by side for
 * the final copy to drop. Each stage is freed as soon as the next exists: the
 * peak is the triplets and the compressed pattern, 24 bytes an entry (an
 * undirected edge is two entries).
 */
#include <string.h>

#include <cs.h>

#include "core/internal.h"
#include "graph/graph_internal.h"

/* An empty graph struct with arrays for n nodes and nnz edges. */
static lg_status lg__graph_alloc(lg_graph **out, lg_idx n, lg_idx nnz) {
    lg_status st = LG_OK;
    lg_graph *g = NULL;
    *out = NULL;
    LG_CALLOC(g, 1, "graph");
    g->n = n;
    g->nnz = nnz;
    LG_CALLOC(g->p, (size_t)n + 1, "graph row pointers");
    LG_ALLOC(g->j, nnz, "graph neighbour ids");
    *out = g;
    return LG_OK;
fail:
    lg_graph_free(g);
    return st;
}

void lg_graph_free(lg_graph *g) {
    if (!g) return;
    lg__free(g->p);
    lg__free(g->j);
    lg__free(g);
}

/* Copies the compressed-column pattern A (columns sorted, duplicates adjacent)
 * into a new lg_graph, dropping the duplicates, and the self-loops when
 * LG_GRAPH_REMOVE_SELF_LOOPS is in flags. O(n + nnz). */
static lg_status lg__graph_from_csc(lg_graph **out, const cs_dl *A, unsigned flags) {
    const int drop_loops = (flags & LG_GRAPH_REMOVE_SELF_LOOPS) != 0;
    const lg_idx n = A->n;
    lg_idx nnz = 0;
    for (int pass = 0; pass < 2; pass++) { /* count, then copy */
        lg_graph *g = pass ? *out : NULL;
        lg_idx q = 0;
        for (lg_idx i = 0; i < n; i++) {
            for (lg_idx k = A->p[i]; k < A->p[i + 1]; k++) {
                const lg_idx s = A->i[k];
                if ((k > A->p[i] && s == A->i[k - 1]) || (drop_loops && s == i)) continue;
                if (g) g->j[q] = s;
                q++;
            }
            if (g) g->p[i + 1] = q;
        }
        if (!pass) {
            nnz = q;
            LG_CHECK(lg__graph_alloc(out, n, nnz));
        }
    }
    return LG_OK;
}

lg_status lg__graph_triplets(cs_dl **T, lg_idx n, lg_idx m, const lg_idx *src, const lg_idx *dst, unsigned flags) {
    *T = NULL;
    if (n < 0 || m < 0) return lg__error(LG_EINVAL, "lg_graph_from_edges: negative size (n=%lld, m=%lld)", (long long)n, (long long)m);
    if (m > 0 && (!src || !dst)) return lg__error(LG_EINVAL, "lg_graph_from_edges: edge arrays are NULL");
    /* CXSparse allocates n + 1 pointers without checking the product (its
     * cs_malloc multiplies): n = 2^61 wrapped it to 8 bytes */
    if (n > LG_GRAPH_MAX_NODES)
        return lg__error(LG_ERANGE, "lg_graph_from_edges: n = %lld exceeds 2^40 nodes", (long long)n);
    if ((flags & LG_GRAPH_ADD_SELF_LOOPS) && (flags & LG_GRAPH_REMOVE_SELF_LOOPS))
        return lg__error(LG_EINVAL, "lg_graph_from_edges: adding and removing self-loops at once");
    for (lg_idx e = 0; e < m; e++) {
        if (src[e] < 0 || src[e] >= n || dst[e] < 0 || dst[e] >= n)
            return lg__error(LG_ERANGE, "edge %lld (%lld -> %lld) has a node id outside [0, %lld)",
                             (long long)e, (long long)src[e], (long long)dst[e], (long long)n);
    }
    const int sym = (flags & LG_GRAPH_SYMMETRIZE) != 0, loops = (flags & LG_GRAPH_ADD_SELF_LOOPS) != 0;
    /* the triplets' entries (and their bytes, two lg_idx each) must be
     * countable: a larger graph could not be held anyway */
    const lg_idx most = (lg_idx)LG_MIN((uint64_t)INT64_MAX, (uint64_t)(SIZE_MAX / (2 * sizeof(lg_idx))));
    if (m > (most - (loops ? n : 0)) / (sym ? 2 : 1)) /* n <= LG_GRAPH_MAX_NODES, far below most */
        return lg__error(LG_ENOMEM, "out of memory: a graph of %lld nodes and %lld edges%s is too large",
                         (long long)n, (long long)m, loops ? " with self-loops" : "");
    const lg_idx cap = m * (sym ? 2 : 1) + (loops ? n : 0);
    cs_dl *t = cs_dl_spalloc(n, n, cap > 0 ? cap : 1, 0, 1); /* a pattern: no values */
    if (!t) return lg__nomem("edge triplets");
    lg_idx nz = 0;
    for (lg_idx e = 0; e < m; e++) {
        /* entry (row = source, column = target): column i lists in-neighbours */
        t->i[nz] = src[e]; t->p[nz++] = dst[e];
        if (sym) { t->i[nz] = dst[e]; t->p[nz++] = src[e]; }
    }
    if (loops)
        for (lg_idx i = 0; i < n; i++) { t->i[nz] = i; t->p[nz++] = i; }
    t->nz = nz;
    *T = t;
    return LG_OK;
}

lg_status lg__graph_from_triplets(lg_graph **out, cs_dl *T, unsigned flags) {
    lg_status st = LG_OK;
    cs_dl *C = NULL, *Ct = NULL;
    *out = NULL;
    /* each stage freed as soon as the next exists: at most two copies of the
     * pattern are alive at once */
    C = cs_dl_compress(T);
    cs_dl_spfree(T);
    if (!C) return lg__nomem("compressed graph");
    Ct = cs_dl_transpose(C, 0); /* column j: out-neighbours of j, sorted */
    cs_dl_spfree(C);
    if (!Ct) return lg__nomem("graph transpose");
    if (flags & LG_GRAPH_SYMMETRIZE) { /* a symmetric pattern: out-neighbours are in-neighbours */
        C = Ct;
    } else {
        C = cs_dl_transpose(Ct, 0); /* column i: in-neighbours of i, sorted */
        cs_dl_spfree(Ct);
        if (!C) return lg__nomem("graph transpose");
    }
    st = lg__graph_from_csc(out, C, flags);
    cs_dl_spfree(C);
    return st;
}

lg_status lg_graph_from_edges(lg_graph **out, lg_idx n, lg_idx m, const lg_idx *src,
                              const lg_idx *dst, unsigned flags) {
    cs_dl *T = NULL;
    if (!out) return lg__error(LG_EINVAL, "lg_graph_from_edges: out is NULL");
    *out = NULL;
    LG_CHECK(lg__graph_flags_check(flags, "lg_graph_from_edges"));
    LG_CHECK(lg__graph_triplets(&T, n, m, src, dst, flags));
    return lg__graph_from_triplets(out, T, flags);
}

void lg__graph_transpose_into(lg_graph *t, lg_idx *next, const lg_graph *g) {
    /* counting sort by source: rows of t come out ascending because rows of g
     * are visited in order */
    t->n = g->n;
    t->nnz = g->nnz;
    memset(t->p, 0, sizeof(lg_idx) * ((size_t)g->n + 1));
    for (lg_idx e = 0; e < g->nnz; e++) t->p[g->j[e] + 1]++;
    for (lg_idx i = 0; i < g->n; i++) t->p[i + 1] += t->p[i];
    if (g->n) memcpy(next, t->p, sizeof(lg_idx) * (size_t)g->n);
    for (lg_idx i = 0; i < g->n; i++)
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) t->j[next[g->j[e]]++] = i;
}

lg_status lg__graph_transpose_shape(const lg_graph *g, const lg_graph *gT, const char *fn) {
    if (!gT) return lg__error(LG_EINVAL, "%s: transposed graph is NULL", fn);
    if (gT->n != g->n || gT->nnz != g->nnz || !gT->p || (gT->nnz > 0 && !gT->j))
        return lg__error(LG_EINVAL, "%s: transposed graph (%lld nodes, %lld edges) does not match the graph (%lld, %lld)",
                         fn, (long long)gT->n, (long long)gT->nnz, (long long)g->n, (long long)g->nnz);
    if (gT->p[0] != 0 || gT->p[gT->n] != gT->nnz)
        return lg__error(LG_EINVAL, "%s: the transposed graph's row pointers do not span [0, nnz)", fn);
    for (lg_idx j = 0; j < gT->n; j++)
        if (gT->p[j + 1] < gT->p[j])
            return lg__error(LG_EINVAL, "%s: transposed graph row %lld has negative length", fn, (long long)j);
    return LG_OK;
}

lg_status lg__graph_id_check(const lg__graph_id *id, const lg_graph *g, const char *fn) {
    if (!g) return lg__error(LG_EINVAL, "%s: graph is NULL", fn);
    if (g != id->g || g->p != id->p || g->j != id->j)
        return lg__error(LG_EINVAL, "%s: graph is not the forward's (another lg_graph, or its arrays replaced since)", fn);
    return LG_OK;
}

lg_status lg_graph_transpose(const lg_graph *g, lg_graph **out) {
    if (!out) return lg__error(LG_EINVAL, "lg_graph_transpose: out is NULL");
    *out = NULL;
    LG_CHECK(lg__graph_check_arg(g, "g", "lg_graph_transpose"));
    return lg__graph_transpose(g, out);
}

lg_status lg__graph_transpose(const lg_graph *g, lg_graph **out) {
    lg_status st = LG_OK;
    lg_idx *next = NULL;
    *out = NULL;
    LG_TRY(lg__graph_alloc(out, g->n, g->nnz));
    LG_ALLOC(next, g->n, "transpose workspace");
    lg__graph_transpose_into(*out, next, g);
    lg__free(next);
    return LG_OK;
fail:
    lg__free(next);
    lg_graph_free(*out);
    *out = NULL;
    return st;
}

lg_status lg_graph_copy(const lg_graph *g, lg_graph **out) {
    if (!out) return lg__error(LG_EINVAL, "lg_graph_copy: out is NULL");
    *out = NULL;
    LG_CHECK(lg__graph_check_arg(g, "g", "lg_graph_copy"));
    LG_CHECK(lg__graph_alloc(out, g->n, g->nnz));
    memcpy((*out)->p, g->p, sizeof(lg_idx) * ((size_t)g->n + 1));
    if (g->nnz) memcpy((*out)->j, g->j, sizeof(lg_idx) * (size_t)g->nnz);
    return LG_OK;
}

lg_idx lg__graph_row_loops_len(const lg_idx *row, lg_idx len, lg_idx i, int add) {
    int has = 0;
    for (lg_idx e = 0; e < len; e++) has |= row[e] == i;
    return len + (add ? !has : -has);
}

lg_idx lg__graph_row_loops(lg_idx *dst, const lg_idx *row, lg_idx len, lg_idx i, int add, lg_idx shift) {
    /* rows are sorted: one merge pass */
    lg_idx k = 0;
    int placed = 0;
    for (lg_idx e = 0; e < len; e++) {
        lg_idx j = row[e];
        if (add && !placed && j >= i) {
            dst[k++] = i + shift;
            placed = 1;
            if (j == i) continue;
        }
        if (j == i) continue; /* removing, or already placed */
        dst[k++] = j + shift;
    }
    if (add && !placed) dst[k++] = i + shift;
    return k;
}

lg_status lg_graph_self_loops(const lg_graph *g, int add, lg_graph **out) {
    if (!out) return lg__error(LG_EINVAL, "lg_graph_self_loops: out is NULL");
    *out = NULL;
    LG_CHECK(lg__graph_check_arg(g, "g", "lg_graph_self_loops"));
    return lg__graph_self_loops(g, add, out);
}

lg_status lg__graph_self_loops(const lg_graph *g, int add, lg_graph **out) {
    *out = NULL;
    /* first counting then filling */
    lg_idx nnz = 0;
    for (lg_idx i = 0; i < g->n; i++) nnz += lg__graph_row_loops_len(g->j + g->p[i], g->p[i + 1] - g->p[i], i, add);
    LG_CHECK(lg__graph_alloc(out, g->n, nnz));
    lg_graph *h = *out;
    for (lg_idx i = 0; i < g->n; i++)
        h->p[i + 1] = h->p[i] + lg__graph_row_loops(h->j + h->p[i], g->j + g->p[i], g->p[i + 1] - g->p[i], i, add, 0);
    return LG_OK;
}

lg_status lg_graph_union(lg_graph **out, lg_idx count, const lg_graph *const *graphs,
                         lg_idx *offsets) {
    if (!out) return lg__error(LG_EINVAL, "lg_graph_union: out is NULL");
    *out = NULL;
    if (count < 0 || (count > 0 && !graphs)) return lg__error(LG_EINVAL, "lg_graph_union: bad graph list");
    lg_idx n = 0, nnz = 0;
    for (lg_idx k = 0; k < count; k++) {
        char what[48];
        snprintf(what, sizeof what, "graph %lld", (long long)k);
        LG_CHECK(lg__graph_check_arg(graphs[k], what, "lg_graph_union"));
        if (graphs[k]->n > INT64_MAX - n || graphs[k]->nnz > INT64_MAX - nnz)
            return lg__error(LG_ENOMEM, "out of memory: lg_graph_union: the union is too large");
        n += graphs[k]->n;
        nnz += graphs[k]->nnz;
    }
    LG_CHECK(lg__graph_alloc(out, n, nnz));
    lg_graph *u = *out;
    lg_idx off = 0, eoff = 0;
    for (lg_idx k = 0; k < count; k++) {
        const lg_graph *g = graphs[k];
        if (offsets) offsets[k] = off;
        for (lg_idx i = 0; i < g->n; i++) u->p[off + i + 1] = eoff + g->p[i + 1];
        for (lg_idx e = 0; e < g->nnz; e++) u->j[eoff + e] = off + g->j[e];
        off += g->n;
        eoff += g->nnz;
    }
    if (offsets) offsets[count] = off;
    return LG_OK;
}

lg_status lg_graph_check(const lg_graph *g) {
    if (!g) return lg__error(LG_EINVAL, "graph is NULL");
    if (g->n < 0 || g->nnz < 0) return lg__error(LG_EINVAL, "graph has a negative size");
    if (!g->p || (g->nnz > 0 && !g->j)) return lg__error(LG_EINVAL, "graph arrays are NULL");
    if (g->p[0] != 0 || g->p[g->n] != g->nnz)
        return lg__error(LG_EINVAL, "graph row pointers do not span [0, nnz)");
    /* every pointer first: monotone from 0 to nnz, so that every row lies
     * inside j before any row is read */
    for (lg_idx i = 0; i < g->n; i++)
        if (g->p[i + 1] < g->p[i]) return lg__error(LG_EINVAL, "graph row %lld has negative length", (long long)i);
    for (lg_idx i = 0; i < g->n; i++) {
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
            if (g->j[e] < 0 || g->j[e] >= g->n)
                return lg__error(LG_EINVAL, "graph row %lld has node id %lld outside [0, %lld)",
                                 (long long)i, (long long)g->j[e], (long long)g->n);
            if (e > g->p[i] && g->j[e] <= g->j[e - 1])
                return lg__error(LG_EINVAL, "graph row %lld is not sorted or has a duplicate", (long long)i);
        }
    }
    return LG_OK;
}

lg_status lg_graph_stats_compute(const lg_graph *g, lg_graph_stats *s) {
    lg_status st = LG_OK;
    lg_idx *outdeg = NULL;
    unsigned char *touched = NULL;
    if (!s) return lg__error(LG_EINVAL, "lg_graph_stats_compute: s is NULL");
    memset(s, 0, sizeof *s);
    LG_CHECK(lg__graph_check_arg(g, "g", "lg_graph_stats_compute"));
    s->n = g->n;
    s->edges = g->nnz;
    LG_CALLOC(outdeg, g->n, "degree workspace");
    LG_CALLOC(touched, g->n, "degree workspace");
    s->in_min = g->n ? INT64_MAX : 0;
    for (lg_idx i = 0; i < g->n; i++) {
        lg_idx d = 0;
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
            lg_idx j = g->j[e];
            if (j == i) { s->self_loops++; continue; }
            d++;
            outdeg[j]++;
            touched[i] = touched[j] = 1;
        }
        s->in_min = LG_MIN(s->in_min, d);
        s->in_max = LG_MAX(s->in_max, d);
    }
    s->in_mean = g->n ? (double)(g->nnz - s->self_loops) / (double)g->n : 0.0;
    s->out_min = g->n ? INT64_MAX : 0;
    for (lg_idx i = 0; i < g->n; i++) {
        s->out_min = LG_MIN(s->out_min, outdeg[i]);
        s->out_max = LG_MAX(s->out_max, outdeg[i]);
        s->isolated += !touched[i];
    }
    s->symmetric = lg__graph_is_symmetric(g, outdeg); /* outdeg's last use is above */
fail:
    lg__free(outdeg);
    lg__free(touched);
    return st;
}

int lg__graph_is_symmetric(const lg_graph *g, lg_idx *tnext) {
    /* g is its own transpose: the check of lg__graph_transpose_map, whose
     * cursor walks each row in order (a few times faster than a binary search
     * per edge, whose unpredictable branches serialise the cache misses) */
    return lg__graph_transpose_map(NULL, NULL, tnext, g, g);
}

int lg__graph_transpose_map(lg__epos *tpos, lg__epos *tedge, lg_idx *tnext, const lg_graph *g, const lg_graph *gT) {
    for (lg_idx j = 0; j < g->n; j++) tnext[j] = gT->p[j];
    for (lg_idx i = 0; i < g->n; i++)
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
            const lg_idx j = g->j[e], t = tnext[j]++;
            if (t >= gT->p[j + 1] || gT->j[t] != i) return 0;
            if (tpos) tpos[e] = (lg__epos)t;
            if (tedge) tedge[t] = (lg__epos)e;
        }
    return 1; /* nnz edges in nnz distinct slots, each matching: gT = g^T */
}

lg_status lg__graph_check_arg(const lg_graph *g, const char *what, const char *fn) {
    if (!g) return lg__error(LG_EINVAL, "%s: %s is NULL", fn, what);
    lg_status st = lg_graph_check(g);
    if (st != LG_OK) {
        char msg[256]; /* lg__error writes the buffer lg_last_error reads */
        snprintf(msg, sizeof msg, "%s", lg_last_error());
        return lg__error(st, "%s: %s: %s", fn, what, msg);
    }
    return LG_OK;
}
