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

#define LG__COS_NBUF 11

static lg_status lg__cos_bufs(const void *cfg, lg_idx n, lg_idx nnz, int lent_map, lg__att_buf *b, lg_idx *nchunk) {
    const lg_cosatt_config *c = cfg;
    (void)lent_map; /* the cosine cache always has its own edge map */
    const lg_idx K = c->heads, kc = c->heads * c->head_dim, p = 3 * kc, d = c->out_dim;
    /* n and nnz first (n <= INT_MAX after), then the counts (n + 1 overflowed before) */
    LG_CHECK(lg__att_check_sizes("cosine-attention", n, nnz, 0, 0));
    LG_CHECK(lg__att_check_sizes("cosine-attention", n, nnz, LG_MAX(n + 1, nnz), LG_MAX(p + d, 3 * K)));
    const lg_idx nch = (n + LG__COS_CHUNK - 1) / LG__COS_CHUNK;
    *nchunk = nch;
    int k = 0;
#define LG__B(field, kind_, idx_, cnt) LG__ATT_BUF(b, k, lg_cosatt_cache, field, kind_, idx_, cnt)
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
    return lg__att_check_table("cosine-attention", k, LG__COS_NBUF);
}

static const lg__att_kind lg__cos_kind = {"cosine-attention", "lg_cosatt_cache_init", sizeof(lg_cosatt_cache),
                                          offsetof(lg_cosatt_cache, cfg), sizeof(lg_cosatt_config), LG__COS_NBUF,
                                          lg__cos_bufs};
_Static_assert(offsetof(lg_cosatt_cache, head) == 0, "the cache opens with its head");

lg_status lg_cosatt_memory(const lg_cosatt_config *cfg, lg_idx n, lg_idx nnz, size_t real_size,
                           lg_cosatt_mem *mem) {
    LG_CHECK(lg__att_memory_args(mem, sizeof *mem, real_size, "lg_cosatt_memory"));
    LG_CHECK(lg_cosatt_config_check(cfg));
    return lg__att_memory(&lg__cos_kind, cfg, n, nnz, real_size, 0, &mem->activations, &mem->workspace);
}

void lg_cosatt_cache_free(lg_cosatt_cache *c) { lg__att_cache_free(&lg__cos_kind, c); }

lg_status lg__cos_cache_alloc(lg_cosatt_cache **out, const lg_cosatt_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                              size_t rs) {
    void *c = NULL;
    if (!out) return lg__error(LG_EINVAL, "lg_cosatt_cache_init: out is NULL");
    *out = NULL;
    LG_CHECK(lg_cosatt_config_check(cfg));
    LG_CHECK(lg__att_cache_alloc(&lg__cos_kind, &c, cfg, n_cap, nnz_cap, rs, NULL, 0, 0));
    *out = c;
    return LG_OK;
}

lg_status lg__cos_check_cache(const lg_cosatt_cache *cache, const lg_cosatt_config *cfg, size_t rs, const char *fn) {
    LG_CHECK(lg__att_check_head(cache ? &cache->head : NULL, rs, fn));
    LG_CHECK(lg_cosatt_config_check(cfg));
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

