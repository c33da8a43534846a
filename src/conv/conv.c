/*
 * The baseline layers' type-independent parts: names, config validation,
 * parameter layout, cache sizing, allocation and release. The kernels are in
 * conv_impl.h (compiled as conv_f32.c and conv_f64.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "conv/conv_internal.h"

static const char *const lg__conv_names[LG_CONV_COUNT] = {"gcn", "gin", "ggnn", "gcnii"};

const char *lg_conv_kind_name(lg_conv_kind k) {
    return (unsigned)k < LG_CONV_COUNT ? lg__conv_names[k] : "?";
}

lg_conv_config lg_conv_config_default(lg_conv_kind kind, lg_idx in_dim, lg_idx out_dim) {
    lg_conv_config c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.in_dim = in_dim;
    c.out_dim = out_dim;
    c.train_eps = 0;
    c.eps = 0;
    c.alpha = 0.1;
    c.beta = log(1.5); /* log(lambda / l + 1) for lambda 0.5, l = 1 */
    return c;
}

/* Dimensions are limited so that every BLAS argument fits an int and every
 * product of two of them fits lg_idx. */
#define LG__CONV_DIM_MAX ((lg_idx)1 << 24)

lg_status lg_conv_config_check(const lg_conv_config *c) {
    if (!c) return lg__error(LG_EINVAL, "conv config is NULL");
    if ((unsigned)c->kind >= LG_CONV_COUNT) return lg__error(LG_EINVAL, "unknown conv layer kind %d", (int)c->kind);
    if (c->in_dim < 1 || c->in_dim > LG__CONV_DIM_MAX / 4)
        return lg__error(LG_EINVAL, "%s in_dim = %lld: must lie in [1, %lld]", lg_conv_kind_name(c->kind),
                         (long long)c->in_dim, (long long)(LG__CONV_DIM_MAX / 4));
    if (c->out_dim < 1 || c->out_dim > LG__CONV_DIM_MAX / 4)
        return lg__error(LG_EINVAL, "%s out_dim = %lld: must lie in [1, %lld]", lg_conv_kind_name(c->kind),
                         (long long)c->out_dim, (long long)(LG__CONV_DIM_MAX / 4));
    if ((c->kind == LG_CONV_GGNN || c->kind == LG_CONV_GCNII) && c->out_dim != c->in_dim)
        return lg__error(LG_EINVAL, "%s: out_dim %lld must equal in_dim %lld", lg_conv_kind_name(c->kind),
                         (long long)c->out_dim, (long long)c->in_dim);
    if (c->kind == LG_CONV_GIN && c->train_eps != 0 && c->train_eps != 1)
        return lg__error(LG_EINVAL, "gin train_eps = %d: must be 0 or 1", c->train_eps);
    if (c->kind == LG_CONV_GIN && !isfinite(c->eps)) return lg__error(LG_EINVAL, "gin eps is not finite");
    if (c->kind == LG_CONV_GCNII) {
        if (!(c->alpha >= 0 && c->alpha <= 1)) return lg__error(LG_EINVAL, "gcnii alpha = %g: must lie in [0, 1]", c->alpha);
        if (!(c->beta >= 0 && c->beta <= 1)) return lg__error(LG_EINVAL, "gcnii beta = %g: must lie in [0, 1]", c->beta);
    }
    return LG_OK;
}

lg_status lg_conv_layout_get(const lg_conv_config *c, lg_conv_layout *lay) {
    LG_CHECK(lg_conv_config_check(c));
    if (!lay) return lg__error(LG_EINVAL, "lg_conv_layout_get: lay is NULL");
    const lg_idx F = c->in_dim, D = c->out_dim;
    lg_conv_layout l = {-1, -1, -1, -1, -1, -1, -1, -1, -1, 0};
    lg_idx off = 0;
    l.w = off;
    switch (c->kind) {
    case LG_CONV_GCN:
        off += F * D;
        l.b = off;
        off += D;
        break;
    case LG_CONV_GIN:
        off += F * D;
        l.b = off;
        off += D;
        l.w2 = off;
        off += D * D;
        l.b2 = off;
        off += D;
        if (c->train_eps) {
            l.eps = off;
            off += 1;
        }
        break;
    case LG_CONV_GGNN:
        off += F * F;
        l.wi = off;
        off += 3 * F * F;
        l.bi = off;
        off += 3 * F;
        l.wh = off;
        off += 3 * F * F;
        l.bh = off;
        off += 3 * F;
        break;
    default: /* GCNII */
        off += F * F;
        break;
    }
    l.count = off;
    *lay = l;
    return LG_OK;
}

void lg__conv_sizes(const lg_conv_config *c, lg_idx n, lg_idx *act, lg_idx *work) {
    const lg_idx F = c->in_dim, D = c->out_dim;
    switch (c->kind) {
    case LG_CONV_GCN: *act = n; *work = n * LG_MAX(D, 2); break; /* >= n lg_idx: the backward's transpose check */
    case LG_CONV_GIN: *act = n * (F + D); *work = n * (2 * D + F); break;
    case LG_CONV_GGNN: *act = n * 5 * F; *work = n * 8 * F; break;
    default: *act = n + n * F; *work = 2 * n * F; break;
    }
}

lg_status lg_conv_memory(const lg_conv_config *cfg, lg_idx n, size_t real_size, lg_conv_mem *mem) {
    LG_CHECK(lg_conv_config_check(cfg));
    if (!mem) return lg__error(LG_EINVAL, "lg_conv_memory: mem is NULL");
    if (real_size != 4 && real_size != 8) return lg__error(LG_EINVAL, "lg_conv_memory: real_size %zu is not 4 or 8", real_size);
    if (n < 0) return lg__error(LG_EINVAL, "lg_conv_memory: negative n = %lld", (long long)n);
    if (n > LG_GRAPH_MAX_NODES) return lg__error(LG_ERANGE, "lg_conv_memory: n = %lld exceeds 2^40", (long long)n);
    lg_idx a, w;
    lg__conv_sizes(cfg, n, &a, &w);
    mem->activations = (size_t)a * real_size;
    mem->workspace = (size_t)w * real_size;
    return LG_OK;
}

lg_status lg__conv_cache_alloc(lg_conv_cache **out, const lg_conv_config *cfg, lg_idx n_cap, size_t rs) {
    lg_status st = LG_OK;
    lg_conv_cache *c = NULL;
    if (!out) return lg__error(LG_EINVAL, "lg_conv_cache_init: out is NULL");
    *out = NULL;
    LG_CHECK(lg_conv_config_check(cfg));
    if (n_cap < 0) return lg__error(LG_EINVAL, "lg_conv_cache_init: negative n_cap = %lld", (long long)n_cap);
    if (n_cap > LG_GRAPH_MAX_NODES)
        return lg__error(LG_ERANGE, "lg_conv_cache_init: n_cap = %lld exceeds 2^40", (long long)n_cap);
    lg_idx a, w;
    lg__conv_sizes(cfg, n_cap, &a, &w);
    LG_CALLOC(c, 1, "conv cache");
    c->cfg = *cfg;
    c->real_size = rs;
    c->n_cap = n_cap;
    c->act = lg__calloc((size_t)(a > 0 ? a : 1), rs);
    if (!c->act) { st = lg__nomem("conv cache activations"); goto fail; }
    c->work = lg__calloc((size_t)(w > 0 ? w : 1), rs);
    if (!c->work) { st = lg__nomem("conv cache workspace"); goto fail; }
    *out = c;
    return LG_OK;
fail:
    lg_conv_cache_free(c);
    return st;
}

void lg_conv_cache_free(lg_conv_cache *c) {
    if (!c) return;
    lg__free(c->act);
    lg__free(c->work);
    lg__free(c);
}

lg_status lg__conv_check_cache(const lg_conv_cache *cache, const lg_conv_config *cfg, size_t rs, const char *fn) {
    LG_CHECK(lg__blas_usable(fn));
    if (!cache) return lg__error(LG_EINVAL, "%s: cache is NULL", fn);
    if (!cfg) return lg__error(LG_EINVAL, "%s: cfg is NULL", fn);
    if (cache->real_size != rs) return lg__error(LG_EINVAL, "%s: the cache was made for another scalar type", fn);
    LG_CHECK(lg_conv_config_check(cfg));
    if (cfg->kind != cache->cfg.kind || cfg->in_dim != cache->cfg.in_dim || cfg->out_dim != cache->cfg.out_dim)
        return lg__error(LG_EINVAL, "%s: config (%s %lld -> %lld) differs from the cache's (%s %lld -> %lld)", fn,
                         lg_conv_kind_name(cfg->kind), (long long)cfg->in_dim, (long long)cfg->out_dim,
                         lg_conv_kind_name(cache->cfg.kind), (long long)cache->cfg.in_dim, (long long)cache->cfg.out_dim);
    return LG_OK;
}

void lg__conv_cache_lend_checked(lg_conv_cache *c, const lg_graph *g, const lg_graph *gT) {
    c->cg = g;
    c->cgT = gT;
}

lg_status lg__conv_check_graph(const lg_conv_cache *cache, const lg_graph *g, const char *what, const char *fn) {
    if (!(g && g == cache->cg)) LG_CHECK(lg__graph_check_arg(g, what, fn));
    if (g->n > cache->n_cap)
        return lg__error(LG_EINVAL, "%s: %s has %lld nodes, the cache was made for at most %lld", fn, what,
                         (long long)g->n, (long long)cache->n_cap);
    return LG_OK;
}
