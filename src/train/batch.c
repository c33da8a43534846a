/* Mini-batches of whole graphs (src/train/batch.h). */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "graph/graph_internal.h"
#include "nn/nn_common.h"
#include "train/batch.h"

/* *p = count elements of size bytes, counted in b->bytes; only counted in
 * plan mode. */
static lg_status lg__take(lg__batcher *b, void **p, lg_idx count, size_t size, const char *what) {
    size_t c = (size_t)(count > 0 ? count : 1);
    b->bytes += c * size;
    *p = NULL;
    if (b->plan) return LG_OK;
    *p = lg__malloc_array(c, size);
    return *p ? LG_OK : lg__nomem(what);
}
#define LG__TAKE(p, count, what) LG_TRY(lg__take(b, (void **)&(p), (count), sizeof *(p), what))

void lg__batcher_destroy(lg__batcher *b) {
    if (!b) return;
    for (int s = 0; s < LG__SPLITS; s++) {
        lg__free(b->sg[s]);
        lg__free(b->sp[s]);
        lg__free(b->sn[s]);
    }
    lg__free(b->order);
    lg__free(b->g.p);
    lg__free(b->g.j);
    lg__free(b->gT.p);
    lg__free(b->gT.j);
    lg__free(b->xb.p);
    lg__free(b->xb.j);
    lg__free(b->xb.x);
    lg__free(b->labels);
    lg__free(b->gptr);
    lg__free(b->targets);
    lg__free(b->iota);
    lg__free(b->work);
    memset(b, 0, sizeof *b);
}

static int lg__desc(const void *a, const void *c) {
    lg_idx x = *(const lg_idx *)a, y = *(const lg_idx *)c;
    return (x < y) - (x > y);
}

/* Sum of the B largest of v[0..n) (v is sorted, descending). */
static lg_idx lg__top_sum(lg_idx *v, lg_idx n, lg_idx B) {
    qsort(v, (size_t)n, sizeof *v, lg__desc);
    lg_idx s = 0;
    for (lg_idx k = 0; k < n && k < B; k++) s += v[k];
    return s;
}

/* The graph holding node v: the largest q with gp[q] <= v. O(log G). */
static lg_idx lg__graph_of(const lg_idx *gp, lg_idx G, lg_idx v) {
    lg_idx lo = 0, hi = G - 1;
    while (lo < hi) {
        lg_idx mid = lo + (hi - lo + 1) / 2;
        if (gp[mid] <= v) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

lg_status lg__batcher_init(lg__batcher *b, const lg_dataset *ds, const lg_features *x, const lg_model_config *c,
                           lg_idx B, int plan) {
    lg_status st = LG_OK;
    lg_idx *vals = NULL, *cnt = NULL, *pos = NULL;
    memset(b, 0, sizeof *b);
    b->ds = ds;
    b->x = x;
    b->B = B;
    b->plan = plan;
    b->self_loops = c->self_loops;
    const lg_graph *G0 = ds->graph;
    const lg_idx n = G0->n, G = ds->n_graphs, F = x->d;
    const lg_idx *gp = ds->graph_ptr;
    if (B < 1) return lg__error(LG_EINVAL, "batch size %lld: must be >= 1 graph", (long long)B);
    if (G < 1 || !gp || gp[0] != 0 || gp[G] != n)
        return lg__error(LG_EINVAL, "data set %s: its graph segments do not cover its %lld nodes (mini-batches need a "
                         "data set of whole graphs)", lg__name(ds->name), (long long)n);
    for (lg_idx q = 0; q < G; q++)
        if (gp[q + 1] < gp[q]) return lg__error(LG_EINVAL, "data set %s: graph %lld has a negative size", lg__name(ds->name), (long long)q);
    if (x->n != n) return lg__error(LG_EINVAL, "features have %lld rows for %lld nodes", (long long)x->n, (long long)n);
    if (B > G) B = b->B = G; /* no batch holds more graphs than there are */

    LG_ALLOC(vals, G, "batch sizes");
    LG_ALLOC(cnt, G, "batch sizes");
    LG_ALLOC(pos, G, "batch sizes");
    /* every edge inside its graph; per graph: nodes, edges after self-loops,
     * feature values */
    for (lg_idx q = 0; q < G; q++) {
        lg_idx e = 0;
        for (lg_idx v = gp[q]; v < gp[q + 1]; v++) {
            const lg_idx *row = G0->j + G0->p[v], len = G0->p[v + 1] - G0->p[v];
            for (lg_idx k = 0; k < len; k++)
                if (row[k] < gp[q] || row[k] >= gp[q + 1]) {
                    st = lg__error(LG_EINVAL, "data set %s: edge %lld -> %lld joins two graphs (mini-batches need a "
                                   "data set of disjoint graphs)", lg__name(ds->name), (long long)row[k], (long long)v);
                    goto fail;
                }
            e += lg__graph_row_loops_len(row, len, v, c->self_loops);
        }
        vals[q] = e;
    }
    b->nnz_cap = lg__top_sum(vals, G, B);
    for (lg_idx q = 0; q < G; q++) vals[q] = gp[q + 1] - gp[q];
    b->n_cap = lg__top_sum(vals, G, B);
    b->t_cap = vals[0]; /* the largest graph: predict reads out every node of one graph */
    for (lg_idx q = 0; q < G; q++)
        vals[q] = x->kind == LG_FEAT_SPARSE ? x->p[gp[q + 1]] - x->p[gp[q]] : (gp[q + 1] - gp[q]) * F;
    b->xnnz_cap = lg__top_sum(vals, G, B);

    /* per split: its graphs and, per graph, its nodes */
    for (int s = 0; s < LG__SPLITS; s++) {
        const lg_idx *nodes = s == 0 ? ds->train : s == 1 ? ds->val : ds->test;
        lg_idx m = s == 0 ? ds->n_train : s == 1 ? ds->n_val : ds->n_test;
        memset(cnt, 0, sizeof *cnt * (size_t)G);
        for (lg_idx k = 0; k < m; k++) {
            if (nodes[k] < 0 || nodes[k] >= n) {
                st = lg__error(LG_EINVAL, "data set %s: split node %lld outside [0, %lld)", lg__name(ds->name),
                               (long long)nodes[k], (long long)n);
                goto fail;
            }
            cnt[lg__graph_of(gp, G, nodes[k])]++;
        }
        lg_idx ng = 0;
        for (lg_idx q = 0; q < G; q++) {
            pos[q] = ng;
            ng += cnt[q] > 0;
        }
        b->ng[s] = ng;
        LG__TAKE(b->sg[s], ng, "batch split lists");
        LG__TAKE(b->sp[s], ng + 1, "batch split lists");
        LG__TAKE(b->sn[s], m, "batch split lists");
        if (!plan) {
            b->sp[s][0] = 0;
            for (lg_idx q = 0; q < G; q++)
                if (cnt[q]) {
                    b->sg[s][pos[q]] = q;
                    b->sp[s][pos[q] + 1] = cnt[q];
                }
            for (lg_idx k = 0; k < ng; k++) b->sp[s][k + 1] += b->sp[s][k];
            for (lg_idx q = 0; q < G; q++) vals[q] = cnt[q] ? b->sp[s][pos[q]] : 0; /* cursors */
            for (lg_idx k = 0; k < m; k++) {
                lg_idx q = lg__graph_of(gp, G, nodes[k]);
                b->sn[s][vals[q]++] = nodes[k];
            }
        }
        lg_idx t = lg__top_sum(cnt, G, B);
        if (t > b->t_cap) b->t_cap = t;
    }

    /* the batch's buffers */
    LG__TAKE(b->order, b->ng[0], "batch order");
    LG__TAKE(b->g.p, b->n_cap + 1, "batch graph");
    LG__TAKE(b->g.j, b->nnz_cap, "batch graph");
    LG__TAKE(b->gT.p, b->n_cap + 1, "batch graph");
    LG__TAKE(b->gT.j, b->nnz_cap, "batch graph");
    if (x->kind == LG_FEAT_SPARSE) {
        LG__TAKE(b->xb.p, b->n_cap + 1, "batch features");
        LG__TAKE(b->xb.j, b->xnnz_cap, "batch features");
    }
    LG__TAKE(b->xb.x, b->xnnz_cap, "batch features");
    LG__TAKE(b->labels, b->n_cap, "batch labels");
    LG__TAKE(b->gptr, B + 1, "batch graph offsets");
    LG__TAKE(b->targets, b->t_cap, "batch targets");
    LG__TAKE(b->iota, b->t_cap, "batch targets");
    if (!plan)
        for (lg_idx k = 0; k < b->t_cap; k++) b->iota[k] = k;
    LG__TAKE(b->work, b->n_cap, "batch workspace");
    lg__free(vals);
    lg__free(cnt);
    lg__free(pos);
    return LG_OK;
fail:
    lg__free(vals);
    lg__free(cnt);
    lg__free(pos);
    lg__batcher_destroy(b);
    return st;
}

lg_idx lg__batcher_count(const lg__batcher *b, int s) {
    if (s < 0) return b->ds->n_graphs;
    return (b->ng[s] + b->B - 1) / b->B;
}

void lg__batcher_shuffle(lg__batcher *b, uint64_t seed, long epoch) {
    for (lg_idx k = 0; k < b->ng[0]; k++) b->order[k] = k;
    lg_rng r;
    lg_rng_seed(&r, lg_hash64(seed ^ 0x6261746368ULL) ^ lg_hash64((uint64_t)epoch)); /* "batch" */
    lg_rng_shuffle(&r, b->order, b->ng[0]);
}

void lg__batcher_fill(lg__batcher *b, int s, int ordered, lg_idx k, lg__batch *out) {
    const lg_dataset *ds = b->ds;
    const lg_graph *G0 = ds->graph;
    const lg_features *x = b->x;
    const lg_idx *gp = ds->graph_ptr, F = x->d;
    const int sparse = x->kind == LG_FEAT_SPARSE;
    lg_idx per = s < 0 ? 1 : b->B, total = s < 0 ? ds->n_graphs : b->ng[s];
    lg_idx lo = k * per, cnt = LG_MIN(per, total - lo);
    lg_idx n = 0, e = 0, xe = 0, t = 0;
    b->g.p[0] = 0;
    if (sparse) b->xb.p[0] = 0;
    for (lg_idx i = 0; i < cnt; i++) {
        lg_idx at = lo + i;
        if (s == 0 && ordered) at = b->order[at];
        lg_idx q = s < 0 ? at : b->sg[s][at];
        lg_idx a = gp[q], z = gp[q + 1], shift = n - a;
        b->gptr[i] = n;
        for (lg_idx v = a; v < z; v++) {
            lg_idx r = v + shift;
            e += lg__graph_row_loops(b->g.j + e, G0->j + G0->p[v], G0->p[v + 1] - G0->p[v], v, b->self_loops, shift);
            b->g.p[r + 1] = e;
            b->labels[r] = ds->labels[v];
            if (sparse) {
                for (lg_idx f = x->p[v]; f < x->p[v + 1]; f++, xe++) {
                    b->xb.j[xe] = x->j[f];
                    b->xb.x[xe] = x->x[f];
                }
                b->xb.p[r + 1] = xe;
            } else {
                memcpy(b->xb.x + r * F, x->x + v * F, sizeof(float) * (size_t)F);
            }
        }
        if (s >= 0)
            for (lg_idx u = b->sp[s][at]; u < b->sp[s][at + 1]; u++) b->targets[t++] = b->sn[s][u] + shift;
        else
            for (lg_idx v = a; v < z; v++) b->targets[t++] = v + shift;
        n += z - a;
    }
    b->gptr[cnt] = n;
    b->n_graphs = cnt;
    b->n_targets = t;
    b->g.n = n;
    b->g.nnz = e;
    b->xb.n = n;
    b->xb.d = F;
    b->xb.kind = x->kind;
    b->xb.nnz = sparse ? xe : n * F;
    lg__graph_transpose_into(&b->gT, b->work, &b->g);
    out->g = &b->g;
    out->gT = &b->gT;
    out->x = &b->xb;
    out->labels = b->labels;
    out->graph_ptr = b->gptr;
    out->n_graphs = cnt;
    out->read = b->targets;
    out->n_read = t;
}

void lg__batcher_span(const lg__batcher *b, lg_idx k, lg_idx *lo, lg_idx *hi) {
    *lo = b->ds->graph_ptr[k];
    *hi = b->ds->graph_ptr[k + 1];
}
