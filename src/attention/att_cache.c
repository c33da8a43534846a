/* The table-driven buffers of the attention caches (att_cache.h). */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "attention/att_cache.h"
#include "graph/graph_internal.h"

static size_t lg__att_elem_size(const lg__att_buf *b, size_t rs) {
    return b->idx == LG__ATT_IDX ? sizeof(lg_idx) : b->idx == LG__ATT_EPOS ? sizeof(lg__epos) : rs;
}

static size_t lg__att_buf_size(const lg__att_buf *b, size_t rs) { return (size_t)b->count * lg__att_elem_size(b, rs); }

/* Bytes of the nb buffers of b for scalars of rs bytes: *act the
 * activations, *work the workspace (the size a shared workspace needs). */
static void lg__att_bufs_bytes(const lg__att_buf *b, int nb, size_t rs, size_t *act, size_t *work) {
    *act = *work = 0;
    for (int k = 0; k < nb; k++) *(b[k].kind == LG__ATT_ACT ? act : work) += lg__att_buf_size(&b[k], rs);
}

/* Sets every buffer field of the cache at base: activations allocated,
 * workspace buffers allocated too when ws is NULL, else carved from ws
 * (ws_bytes long, at least lg__att_bufs_bytes' work; lg_idx buffers first,
 * then scalars, then lg__epos ones, so every buffer is aligned as its
 * elements when ws is aligned for lg_idx). Unneeded buffers stay NULL.
 * LG_ENOMEM (naming the layer) with the buffers made so far left for
 * lg__att_bufs_free; LG_EINVAL if ws is too small. */
static lg_status lg__att_bufs_alloc(void *base, const lg__att_buf *b, int nb, size_t rs, void *ws, size_t ws_bytes,
                                    const char *layer) {
    size_t act, work;
    lg__att_bufs_bytes(b, nb, rs, &act, &work);
    if (ws && (uintptr_t)ws % _Alignof(lg_idx) != 0)
        return lg__error(LG_EINVAL, "%s cache: the shared workspace is not aligned for lg_idx (%zu bytes)", layer,
                         (size_t)_Alignof(lg_idx));
    if (ws && ws_bytes < work)
        return lg__error(LG_EINVAL, "%s cache: the shared workspace has %zu bytes, the layer needs %zu", layer, ws_bytes,
                         work);
    size_t used = 0;
    /* passes 0-2: the shared lg_idx, scalar and lg__epos buffers, in order
     * of element size (so all stay aligned), pass 3: the cache's own */
    static const int order[3] = {LG__ATT_IDX, LG__ATT_REAL, LG__ATT_EPOS};
    for (int pass = 0; pass < 4; pass++)
        for (int k = 0; k < nb; k++) {
            if (b[k].count == 0) continue;
            int shared = ws && b[k].kind == LG__ATT_WORK;
            int wanted = pass == 3 ? !shared : shared && b[k].idx == order[pass];
            if (!wanted) continue;
            void **field = (void **)((char *)base + b[k].off);
            if (shared) {
                *field = (char *)ws + used;
                used += lg__att_buf_size(&b[k], rs);
            } else if (!(*field = lg__malloc_array((size_t)b[k].count, lg__att_elem_size(&b[k], rs)))) {
                return lg__error(LG_ENOMEM, "out of memory: %s cache buffer", layer);
            }
        }
    return LG_OK;
}

/* Frees the buffers lg__att_bufs_alloc allocated (not the ones carved from a
 * shared workspace: shared = 1). NULL fields are skipped. */
static void lg__att_bufs_free(void *base, const lg__att_buf *b, int nb, int shared) {
    for (int k = 0; k < nb; k++) {
        void **field = (void **)((char *)base + b[k].off);
        if (!(shared && b[k].kind == LG__ATT_WORK)) lg__free(*field);
        *field = NULL;
    }
}

lg_status lg__att_after_fwd(int present, size_t cache_rs, size_t rs, int have_fwd, const char *fn) {
    if (!present) return lg__error(LG_EINVAL, "%s: cache is NULL", fn);
    if (cache_rs != rs) return lg__error(LG_EINVAL, "%s: the cache was made for another scalar type", fn);
    if (!have_fwd) return lg__error(LG_EINVAL, "%s: no forward has been run with this cache", fn);
    return LG_OK;
}

lg_status lg__att_check_backward_graphs(const lg__att_head *h, const lg_graph *g, const lg_graph *gT, const char *fn) {
    if (h->lent.checked && g == h->lent.g && gT == h->lent.gT) return LG_OK; /* the lender's pair */
    return lg__graph_transpose_shape(g, gT, fn);
}

lg_status lg__att_check_edges(const char *layer, lg_idx nnz) {
    if (nnz > LG__EPOS_MAX)
        return lg__error(LG_ERANGE, "%s cache: %lld edges: at most %lld are supported (32-bit edge positions)", layer,
                         (long long)nnz, (long long)LG__EPOS_MAX);
    return LG_OK;
}

lg_status lg__att_check_dim(const char *layer, const char *name, lg_idx v) {
    if (v < 1 || v > LG__ATT_DIM_MAX)
        return lg__error(LG_EINVAL, "%s %s = %lld: must lie in [1, %lld]", layer, name, (long long)v,
                         (long long)LG__ATT_DIM_MAX);
    return LG_OK;
}

lg_status lg__att_memory_args(void *mem, size_t size, size_t real_size, const char *fn) {
    if (!mem) return lg__error(LG_EINVAL, "%s: mem is NULL", fn);
    memset(mem, 0, size);
    if (real_size != sizeof(float) && real_size != sizeof(double))
        return lg__error(LG_EINVAL, "%s: real_size %zu is neither 4 nor 8", fn, real_size);
    return LG_OK;
}

lg_status lg__att_tmap_pick(const lg__att_tmap *lent, lg__epos *tpos, lg__epos *tedge, lg_idx *tnext,
                            const lg_graph *g, const lg_graph *gT, const lg__epos **tpos_out,
                            const lg__epos **tedge_out, const char *fn) {
    if (lent->tpos && lent->g == g && lent->gT == gT) {
        *tpos_out = lent->tpos;
        *tedge_out = lent->tedge;
        return LG_OK;
    }
    if (!tpos || !tnext)
        return lg__error(LG_EINVAL, "%s: the cache was made for a lent edge map, and none was lent for these graphs", fn);
    if (!lg__graph_transpose_map(tpos, tedge, tnext, g, gT))
        return lg__error(LG_EINVAL, "%s: the transposed graph is not the transpose of the graph", fn);
    *tpos_out = tpos;
    *tedge_out = tedge;
    return LG_OK;
}

lg_status lg__att_check_sizes(const char *layer, lg_idx n, lg_idx nnz, lg_idx big, lg_idx wide) {
    if (n < 0 || nnz < 0)
        return lg__error(LG_EINVAL, "%s cache: negative size (n=%lld, nnz=%lld)", layer, (long long)n, (long long)nnz);
    if (n > INT_MAX)
        return lg__error(LG_ERANGE, "%s cache: %lld nodes exceed the BLAS limit %d", layer, (long long)n, INT_MAX);
    if (big > 0 && wide > (INT64_MAX / 16) / big)
        return lg__error(LG_ERANGE, "%s cache: %lld x %lld values overflow", layer, (long long)big, (long long)wide);
    return lg__att_check_edges(layer, nnz);
}

lg_status lg__att_check_table(const char *layer, int k, int nbuf) {
    return k == nbuf && nbuf <= LG__ATT_NBUF_MAX ? LG_OK
                                                 : lg__error(LG_EINVAL, "%s cache: internal buffer table", layer);
}

lg_status lg__att_memory(const lg__att_kind *k, const void *cfg, lg_idx n, lg_idx nnz, size_t rs, int lent_map,
                         size_t *act, size_t *work) {
    lg__att_buf b[LG__ATT_NBUF_MAX];
    lg_idx nch = 0;
    LG_CHECK(k->bufs(cfg, n, nnz, lent_map, b, &nch));
    lg__att_bufs_bytes(b, k->nbuf, rs, act, work);
    return LG_OK;
}

void lg__att_cache_free(const lg__att_kind *k, void *c) {
    if (!c) return;
    lg__att_head *h = c;
    lg__att_buf b[LG__ATT_NBUF_MAX];
    lg_idx nch;
    /* the table only needs the config, which was validated at allocation */
    if (k->bufs((char *)c + k->cfg_off, 0, 0, h->lent_map, b, &nch) == LG_OK)
        lg__att_bufs_free(c, b, k->nbuf, h->ws_shared);
    lg__free(c);
}

lg_status lg__att_cache_alloc(const lg__att_kind *k, void **out, const void *cfg, lg_idx n_cap, lg_idx nnz_cap,
                              size_t rs, void *ws, size_t ws_bytes, int lent_map) {
    lg_status st = LG_OK;
    void *c = NULL;
    lg__att_buf b[LG__ATT_NBUF_MAX];
    lg_idx nch = 0;
    if (!out) return lg__error(LG_EINVAL, "%s: out is NULL", k->init_fn);
    *out = NULL;
    LG_CHECK(k->bufs(cfg, n_cap, nnz_cap, lent_map, b, &nch));
    if (!(c = lg__calloc(1, k->size))) return lg__error(LG_ENOMEM, "out of memory: %s cache", k->name);
    lg__att_head *h = c;
    memcpy((char *)c + k->cfg_off, cfg, k->cfg_size);
    h->real_size = rs;
    h->n_cap = n_cap;
    h->nnz_cap = nnz_cap;
    h->nchunk = nch;
    h->ws_shared = ws != NULL;
    h->lent_map = lent_map;
    LG_TRY(lg__att_bufs_alloc(c, b, k->nbuf, rs, ws, ws_bytes, k->name));
    *out = c;
    return LG_OK;
fail:
    lg__att_cache_free(k, c);
    return st;
}

lg_status lg__att_check_head(const lg__att_head *h, size_t rs, const char *fn) {
    LG_CHECK(lg__blas_usable(fn));
    if (!h) return lg__error(LG_EINVAL, "%s: cache is NULL", fn);
    if (h->real_size != rs)
        return lg__error(LG_EINVAL, "%s: the cache was made for %s, not %s", fn,
                         h->real_size == sizeof(float) ? "float" : "double", rs == sizeof(float) ? "float" : "double");
    return LG_OK;
}

lg_status lg__att_check_graph(const lg__att_head *h, const lg_graph *g, const char *what, const char *fn) {
    if (!(h->lent.checked && g && g == h->lent.g)) LG_CHECK(lg__graph_check_arg(g, what, fn));
    if (g->n > h->n_cap || g->nnz > h->nnz_cap)
        return lg__error(LG_EINVAL, "%s: %s has %lld nodes and %lld edges, the cache was made for at most %lld and %lld",
                         fn, what, (long long)g->n, (long long)g->nnz, (long long)h->n_cap, (long long)h->nnz_cap);
    return LG_OK;
}
