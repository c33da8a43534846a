/*
 * The scaled cosine-similarity attention layer's type-independent parts:
 * config validation, parameter layout, cache sizing, allocation and release.
 * The kernels are in cosatt_impl.h (compiled as cosatt_f32.c, cosatt_f64.c).
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "attention/att_cache.h"
#include "attention/cosatt_internal.h"

lg_cosatt_config lg_cosatt_config_default(lg_idx in_dim, lg_idx heads, lg_idx head_dim, lg_idx out_dim) {
    lg_cosatt_config c;
    memset(&c, 0, sizeof c);
    c.in_dim = in_dim;
    c.heads = heads;
    c.head_dim = head_dim;
    c.out_dim = out_dim;
    c.tau = 10.0;
    c.nu = 1.0;
    c.eps = 1e-6;
    c.spectral_init = 0;
    return c;
}

static lg_status lg__cos_pos(const char *name, double v) {
    if (!(isfinite(v) && v > 0))
        return lg__error(LG_EINVAL, "cosine-attention %s = %g: must be finite and > 0", name, v);
    return LG_OK;
}

lg_status lg_cosatt_config_check(const lg_cosatt_config *c) {
    if (!c) return lg__error(LG_EINVAL, "cosine-attention config is NULL");
    LG_CHECK(lg__att_check_dim("cosine-attention", "in_dim", c->in_dim));
    LG_CHECK(lg__att_check_dim("cosine-attention", "heads", c->heads));
    LG_CHECK(lg__att_check_dim("cosine-attention", "head_dim", c->head_dim));
    LG_CHECK(lg__att_check_dim("cosine-attention", "out_dim", c->out_dim));
    if (c->heads * c->head_dim > INT_MAX / 3)
        return lg__error(LG_EINVAL, "cosine-attention heads x head_dim = %lld: 3x that exceeds %d",
                         (long long)(c->heads * c->head_dim), INT_MAX);
    LG_CHECK(lg__cos_pos("tau", c->tau));
    LG_CHECK(lg__cos_pos("nu", c->nu));
    LG_CHECK(lg__cos_pos("eps", c->eps));
    if (c->spectral_init != 0 && c->spectral_init != 1)
        return lg__error(LG_EINVAL, "cosine-attention spectral_init = %d: must be 0 or 1", c->spectral_init);
    return LG_OK;
}

lg_status lg_cosatt_layout_get(const lg_cosatt_config *c, lg_cosatt_layout *lay) {
    if (!lay) return lg__error(LG_EINVAL, "lg_cosatt_layout_get: lay is NULL");
    LG_CHECK(lg_cosatt_config_check(c));
    const lg_idx kc = c->heads * c->head_dim, p = 3 * kc;
    lay->w = 0;
    lay->w_cols = p;
    lay->b = c->in_dim * p;
    lay->wo = lay->b + p;
    lay->bo = lay->wo + kc * c->out_dim;
    lay->count = lay->bo + c->out_dim;
    return LG_OK;
}

/* The cache's buffers: one table (att_cache.h) drives lg_cosatt_memory and
 * the allocation. */
enum { LG__COS_ACT = LG__ATT_ACT, LG__COS_WORK = LG__ATT_WORK };
typedef lg__att_buf lg__cos_buf;

#define LG__COS_NBUF 11

static lg_status lg__cos_bufs(const lg_cosatt_config *c, lg_idx n, lg_idx nnz, lg__cos_buf *b, lg_idx *nchunk) {
    const lg_idx K = c->heads, kc = c->heads * c->head_dim, p = 3 * kc, d = c->out_dim;
    if (n < 0 || nnz < 0)
        return lg__error(LG_EINVAL, "cosine-attention cache: negative size (n=%lld, nnz=%lld)", (long long)n,
                         (long long)nnz);
    if (n > INT_MAX)
        return lg__error(LG_ERANGE, "cosine-attention cache: %lld nodes exceed the BLAS limit %d", (long long)n,
                         INT_MAX);
    const lg_idx big = LG_MAX(n + 1, nnz), wide = LG_MAX(p + d, 3 * K);
    if (wide > (INT64_MAX / 16) / big)
        return lg__error(LG_ERANGE, "cosine-attention cache: %lld x %lld values overflow", (long long)big,
                         (long long)wide);
    LG_CHECK(lg__att_check_edges("cosine-attention", nnz));
    const lg_idx nch = (n + LG__COS_CHUNK - 1) / LG__COS_CHUNK;
    *nchunk = nch;
    int k = 0;
#define LG__B(field, kind_, idx_, cnt)                                                                     \
    b[k].off = offsetof(lg_cosatt_cache, field), b[k].kind = (kind_), b[k].idx = (idx_), b[k].count = (cnt), k++
    LG__B(zh, LG__COS_ACT, 0, n * p);
    LG__B(rinv, LG__COS_ACT, 0, n * 3 * K);
    LG__B(att, LG__COS_ACT, 0, nnz * K);
    LG__B(msg, LG__COS_ACT, 0, n * kc);
    LG__B(dz, LG__COS_WORK, 0, n * p);
    LG__B(dm, LG__COS_WORK, 0, n * kc);
    LG__B(eds, LG__COS_WORK, 0, nnz * K);
    LG__B(rec, LG__COS_WORK, 0, nnz * 2 * K);
    LG__B(tpos, LG__COS_WORK, LG__ATT_EPOS, nnz);
    LG__B(tnext, LG__COS_WORK, 1, n);
    LG__B(part, LG__COS_WORK, 0, (nch + 1) * (p + d));
#undef LG__B
    return k == LG__COS_NBUF ? LG_OK : lg__error(LG_EINVAL, "cosine-attention cache: internal buffer table");
}

lg_status lg_cosatt_memory(const lg_cosatt_config *cfg, lg_idx n, lg_idx nnz, size_t real_size,
                           lg_cosatt_mem *mem) {
    lg__cos_buf b[LG__COS_NBUF];
    lg_idx nch = 0;
    LG_CHECK(lg__att_memory_args(mem, sizeof *mem, real_size, "lg_cosatt_memory"));
    LG_CHECK(lg_cosatt_config_check(cfg));
    LG_CHECK(lg__cos_bufs(cfg, n, nnz, b, &nch));
    lg__att_bufs_bytes(b, LG__COS_NBUF, real_size, &mem->activations, &mem->workspace);
    return LG_OK;
}

void lg_cosatt_cache_free(lg_cosatt_cache *c) {
    if (!c) return;
    lg__cos_buf b[LG__COS_NBUF];
    lg_idx nch;
    /* the table only needs the config, which was validated at allocation */
    if (lg__cos_bufs(&c->cfg, 0, 0, b, &nch) == LG_OK) lg__att_bufs_free(c, b, LG__COS_NBUF, 0);
    lg__free(c);
}

lg_status lg__cos_cache_alloc(lg_cosatt_cache **out, const lg_cosatt_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                              size_t rs) {
    lg_status st = LG_OK;
    lg_cosatt_cache *c = NULL;
    lg__cos_buf b[LG__COS_NBUF];
    lg_idx nch = 0;
    if (!out) return lg__error(LG_EINVAL, "lg_cosatt_cache_init: out is NULL");
    *out = NULL;
    LG_CHECK(lg_cosatt_config_check(cfg));
    LG_CHECK(lg__cos_bufs(cfg, n_cap, nnz_cap, b, &nch));
    LG_CALLOC(c, 1, "cosine-attention cache");
    c->cfg = *cfg;
    c->real_size = rs;
    c->n_cap = n_cap;
    c->nnz_cap = nnz_cap;
    c->nchunk = nch;
    LG_TRY(lg__att_bufs_alloc(c, b, LG__COS_NBUF, rs, NULL, 0, "cosine-attention cache buffer"));
    *out = c;
    return LG_OK;
fail:
    lg_cosatt_cache_free(c);
    return st;
}

lg_status lg__cos_check_cache(const lg_cosatt_cache *cache, const lg_cosatt_config *cfg, size_t rs, const char *fn) {
    if (!cache) return lg__error(LG_EINVAL, "%s: cache is NULL", fn);
    LG_CHECK(lg_cosatt_config_check(cfg));
    if (cache->real_size != rs)
        return lg__error(LG_EINVAL, "%s: the cache was made for %s, not %s", fn,
                         cache->real_size == sizeof(float) ? "float" : "double", rs == sizeof(float) ? "float" : "double");
    const lg_cosatt_config *c = &cache->cfg;
    if (c->in_dim != cfg->in_dim || c->heads != cfg->heads || c->head_dim != cfg->head_dim ||
        c->out_dim != cfg->out_dim || c->tau != cfg->tau || c->nu != cfg->nu || c->eps != cfg->eps)
        return lg__error(LG_EINVAL,
                         "%s: config (F=%lld, K=%lld, C=%lld, D=%lld, tau %g, nu %g, eps %g) differs from the "
                         "cache's (F=%lld, K=%lld, C=%lld, D=%lld, tau %g, nu %g, eps %g)",
                         fn, (long long)cfg->in_dim, (long long)cfg->heads, (long long)cfg->head_dim,
                         (long long)cfg->out_dim, cfg->tau, cfg->nu, cfg->eps, (long long)c->in_dim,
                         (long long)c->heads, (long long)c->head_dim, (long long)c->out_dim, c->tau, c->nu, c->eps);
    return LG_OK;
}

lg_status lg__cos_check_graph(const lg_cosatt_cache *cache, const lg_graph *g, const char *what, const char *fn) {
    LG_CHECK(lg__graph_check_arg(g, what, fn));
    if (g->n > cache->n_cap || g->nnz > cache->nnz_cap)
        return lg__error(LG_EINVAL,
                         "%s: %s has %lld nodes and %lld edges, the cache was made for at most %lld and %lld", fn,
                         what, (long long)g->n, (long long)g->nnz, (long long)cache->n_cap,
                         (long long)cache->nnz_cap);
    return LG_OK;
}
