/*
 * The GAT layer's type-independent parts: normalisation-mode names, config
 * validation, parameter layout, cache sizing, allocation and release. The
 * kernels are in gat_impl.h (compiled as gat_f32.c and gat_f64.c).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "attention/att_cache.h"
#include "attention/gat_internal.h"

static const char *const lg__att_norm_names[LG_ATT_NORM_COUNT] = {"none", "lipschitz",
                                                                  "lipschitz-ref"};

const char *lg_att_norm_name(lg_att_norm m) {
    if ((int)m < 0 || m >= LG_ATT_NORM_COUNT) return "?";
    return lg__att_norm_names[m];
}

lg_status lg_att_norm_parse(const char *name, lg_att_norm *out) {
    if (!name || !out) return lg__error(LG_EINVAL, "lg_att_norm_parse: NULL argument");
    for (int m = 0; m < LG_ATT_NORM_COUNT; m++)
        if (strcmp(name, lg__att_norm_names[m]) == 0) {
            *out = (lg_att_norm)m;
            return LG_OK;
        }
    return lg__error(LG_EINVAL, "unknown attention normalisation '%s' (expected none, lipschitz or lipschitz-ref)",
                     name);
}

lg_gat_config lg_gat_config_default(lg_idx in_dim, lg_idx heads, lg_idx head_dim) {
    lg_gat_config c;
    memset(&c, 0, sizeof c);
    c.in_dim = in_dim;
    c.heads = heads;
    c.head_dim = head_dim;
    c.concat = 1;
    c.norm = LG_ATT_NORM_NONE;
    c.lip_scale = 1.0;
    c.negative_slope = 0.2;
    c.att_dropout = 0.0;
    return c;
}

lg_status lg_gat_config_check(const lg_gat_config *c) {
    if (!c) return lg__error(LG_EINVAL, "GAT config is NULL");
    LG_CHECK(lg__att_check_dim("GAT", "in_dim", c->in_dim));
    LG_CHECK(lg__att_check_dim("GAT", "heads", c->heads));
    LG_CHECK(lg__att_check_dim("GAT", "head_dim", c->head_dim));
    if (c->heads * c->head_dim > INT_MAX)
        return lg__error(LG_EINVAL, "GAT heads x head_dim = %lld exceeds %d", (long long)(c->heads * c->head_dim),
                         INT_MAX);
    if (c->concat != 0 && c->concat != 1)
        return lg__error(LG_EINVAL, "GAT concat = %d: must be 0 (mean) or 1 (concat)", c->concat);
    if ((int)c->norm < 0 || c->norm >= LG_ATT_NORM_COUNT)
        return lg__error(LG_EINVAL, "GAT norm = %d: not an lg_att_norm", (int)c->norm);
    if (!isfinite(c->lip_scale) || c->lip_scale <= 0.0)
        return lg__error(LG_EINVAL, "GAT lip_scale = %g: must be finite and > 0", c->lip_scale);
    if (!isfinite(c->negative_slope))
        return lg__error(LG_EINVAL, "GAT negative_slope = %g: must be finite", c->negative_slope);
    if (!(c->att_dropout >= 0.0 && c->att_dropout < 1.0))
        return lg__error(LG_EINVAL, "GAT att_dropout = %g: must lie in [0, 1)", c->att_dropout);
    return LG_OK;
}

lg_idx lg_gat_out_dim(const lg_gat_config *c) { return c->concat ? c->heads * c->head_dim : c->head_dim; }

lg_status lg_gat_layout_get(const lg_gat_config *c, lg_gat_layout *lay) {
    if (!lay) return lg__error(LG_EINVAL, "lg_gat_layout_get: lay is NULL");
    LG_CHECK(lg_gat_config_check(c));
    lg_idx kc = c->heads * c->head_dim;
    lay->w = 0;
    lay->a_dst = c->in_dim * kc;
    lay->a_src = lay->a_dst + kc;
    lay->bias = lay->a_src + kc;
    lay->count = lay->bias + lg_gat_out_dim(c);
    return LG_OK;
}

/* The cache's buffers: one table (att_cache.h) drives both lg_gat_memory and
 * the allocation, so the documented bytes are the allocated ones. */
enum { LG__ACT = LG__ATT_ACT, LG__WORK = LG__ATT_WORK };
typedef lg__att_buf lg__gat_buf;

#define LG__NBUF 21

static lg_status lg__gat_bufs(const lg_gat_config *c, lg_idx n, lg_idx nnz, int lent_map, lg__gat_buf *b,
                              lg_idx *nchunk) {
    lg_idx K = c->heads, kc = c->heads * c->head_dim, d = lg_gat_out_dim(c);
    int lip = c->norm != LG_ATT_NORM_NONE, paper = c->norm == LG_ATT_NORM_LIPSCHITZ,
        ref = c->norm == LG_ATT_NORM_LIPSCHITZ_REF;
    if (n < 0 || nnz < 0) return lg__error(LG_EINVAL, "GAT cache: negative size (n=%lld, nnz=%lld)", (long long)n, (long long)nnz);
    if (n > INT_MAX) return lg__error(LG_ERANGE, "GAT cache: %lld nodes exceed the BLAS limit %d", (long long)n, INT_MAX);
    /* every count below is at most max(n, nnz) * kc or nchunk * (3kc + K) */
    lg_idx big = LG_MAX(n, nnz);
    if (big > 0 && kc > (INT64_MAX / 16) / big)
        return lg__error(LG_ERANGE, "GAT cache: %lld x %lld values overflow", (long long)big, (long long)kc);
    LG_CHECK(lg__att_check_edges("GAT", nnz));
    lg_idx nch = (n + LG__GAT_CHUNK - 1) / LG__GAT_CHUNK;
    *nchunk = nch;
    lg_idx pw = 2 * kc + K + d;
    int k = 0;
#define LG__B(field, kind_, idx_, cnt)                                                         \
    b[k].off = offsetof(lg_gat_cache, field), b[k].kind = (kind_), b[k].idx = (idx_), b[k].count = (cnt), k++
    LG__B(xp, LG__ACT, 0, n * kc);
    LG__B(att, LG__ACT, 0, nnz * K);
    LG__B(sd, LG__ACT, 0, n * K);
    LG__B(ss, LG__ACT, 0, n * K);
    LG__B(nrm, LG__ACT, 0, lip ? n * K : 0);
    LG__B(q, LG__ACT, 0, paper ? n * K : 0);
    LG__B(nmax, LG__ACT, 0, lip ? n * K : 0);
    LG__B(amax, LG__ACT, 1, lip ? n * K : 0);
    LG__B(aeff, LG__ACT, 0, 2 * kc);
    LG__B(anorm, LG__ACT, 0, K);
    LG__B(dxp, LG__WORK, 0, n * kc);
    LG__B(rec, LG__WORK, 0, nnz * (lip ? 2 : 1) * K);
    LG__B(tpos, LG__WORK, LG__ATT_EPOS, lent_map ? 0 : nnz);
    LG__B(tedge, LG__WORK, LG__ATT_EPOS, lent_map ? 0 : nnz);
    LG__B(tnext, LG__WORK, 1, lent_map ? 0 : n);
    LG__B(nsd, LG__WORK, 0, n * K);
    LG__B(nss, LG__WORK, 0, n * K);
    LG__B(ncoef, LG__WORK, 0, lip ? n * K : 0);
    LG__B(ncw, LG__WORK, 0, n * K);
    LG__B(ndan, LG__WORK, 0, ref ? n * K : 0);
    LG__B(part, LG__WORK, 0, (nch + 1) * pw);
#undef LG__B
    return k == LG__NBUF ? LG_OK : lg__error(LG_EINVAL, "GAT cache: internal buffer table");
}

lg_status lg__gat_memory_ext(const lg_gat_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, int lent_map,
                             lg_gat_mem *mem) {
    lg__gat_buf b[LG__NBUF];
    lg_idx nch = 0;
    LG_CHECK(lg__att_memory_args(mem, sizeof *mem, real_size, "lg_gat_memory"));
    LG_CHECK(lg_gat_config_check(cfg));
    LG_CHECK(lg__gat_bufs(cfg, n, nnz, lent_map, b, &nch));
    lg__att_bufs_bytes(b, LG__NBUF, real_size, &mem->activations, &mem->workspace);
    return LG_OK;
}

lg_status lg_gat_memory(const lg_gat_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, lg_gat_mem *mem) {
    return lg__gat_memory_ext(cfg, n, nnz, real_size, 0, mem);
}

void lg__gat_cache_lend_tmap(lg_gat_cache *c, const lg__att_tmap *m) { c->lent = *m; }

void lg_gat_cache_free(lg_gat_cache *c) {
    if (!c) return;
    lg__gat_buf b[LG__NBUF];
    lg_idx nch;
    /* the table only needs the config, which was validated at allocation */
    if (lg__gat_bufs(&c->cfg, 0, 0, c->lent_map, b, &nch) == LG_OK) lg__att_bufs_free(c, b, LG__NBUF, c->ws_shared);
    lg__free(c);
}

lg_status lg__gat_cache_alloc(lg_gat_cache **out, const lg_gat_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                              size_t rs, void *ws, size_t ws_bytes, int lent_map) {
    lg_status st = LG_OK;
    lg_gat_cache *c = NULL;
    lg__gat_buf b[LG__NBUF];
    lg_idx nch = 0;
    if (!out) return lg__error(LG_EINVAL, "lg_gat_cache_init: out is NULL");
    *out = NULL;
    LG_CHECK(lg_gat_config_check(cfg));
    LG_CHECK(lg__gat_bufs(cfg, n_cap, nnz_cap, lent_map, b, &nch));
    LG_CALLOC(c, 1, "GAT cache");
    c->cfg = *cfg;
    c->real_size = rs;
    c->n_cap = n_cap;
    c->nnz_cap = nnz_cap;
    c->nchunk = nch;
    c->ws_shared = ws != NULL;
    c->lent_map = lent_map;
    LG_TRY(lg__att_bufs_alloc(c, b, LG__NBUF, rs, ws, ws_bytes, "GAT cache buffer"));
    *out = c;
    return LG_OK;
fail:
    lg_gat_cache_free(c);
    return st;
}

lg_status lg__gat_check_cache(const lg_gat_cache *cache, const lg_gat_config *cfg, size_t rs, const char *fn) {
    if (!cache) return lg__error(LG_EINVAL, "%s: cache is NULL", fn);
    LG_CHECK(lg_gat_config_check(cfg));
    if (cache->real_size != rs)
        return lg__error(LG_EINVAL, "%s: the cache was made for %s, not %s", fn,
                         cache->real_size == sizeof(float) ? "float" : "double",
                         rs == sizeof(float) ? "float" : "double");
    const lg_gat_config *c = &cache->cfg;
    if (c->in_dim != cfg->in_dim || c->heads != cfg->heads || c->head_dim != cfg->head_dim ||
        c->concat != cfg->concat || c->norm != cfg->norm)
        return lg__error(LG_EINVAL,
                         "%s: config (F=%lld, K=%lld, C=%lld, %s, %s) differs from the cache's (F=%lld, K=%lld, "
                         "C=%lld, %s, %s)",
                         fn, (long long)cfg->in_dim, (long long)cfg->heads, (long long)cfg->head_dim,
                         cfg->concat ? "concat" : "mean", lg_att_norm_name(cfg->norm), (long long)c->in_dim,
                         (long long)c->heads, (long long)c->head_dim, c->concat ? "concat" : "mean",
                         lg_att_norm_name(c->norm));
    return LG_OK;
}

lg_status lg__gat_check_graph(const lg_gat_cache *cache, const lg_graph *g, const char *what, const char *fn) {
    LG_CHECK(lg__graph_check_arg(g, what, fn));
    if (g->n > cache->n_cap || g->nnz > cache->nnz_cap)
        return lg__error(LG_EINVAL, "%s: %s has %lld nodes and %lld edges, the cache was made for at most %lld and %lld",
                         fn, what, (long long)g->n, (long long)g->nnz, (long long)cache->n_cap,
                         (long long)cache->nnz_cap);
    return LG_OK;
}
