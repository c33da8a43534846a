/*
 * The GAT layer's type-independent parts: normalisation-mode names, config
 * validation, parameter layout, cache sizing, allocation and release. The
 * kernels are in gat_impl.h (compiled as gat_f32.c and gat_f64.c).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <omp.h>

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

lg_idx lg_gat_out_dim(const lg_gat_config *c) { return !c ? 0 : c->concat ? c->heads * c->head_dim : c->head_dim; }

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

#define LG__NBUF 21

static lg_status lg__gat_bufs(const void *cfg, lg_idx n, lg_idx nnz, int lent_map, lg__att_buf *b, lg_idx *nchunk) {
    const lg_gat_config *c = cfg;
    lg_idx K = c->heads, kc = c->heads * c->head_dim;
    int lip = c->norm != LG_ATT_NORM_NONE, paper = c->norm == LG_ATT_NORM_LIPSCHITZ,
        ref = c->norm == LG_ATT_NORM_LIPSCHITZ_REF;
    /* every count below is at most 2 max(n, nnz) kc or nchunk (3kc + K): the
     * check leaves a factor 16 (part's split workspace, when larger, is at
     * most LG__GEMM_KSPLIT_WS values: core/gemm.h) */
    LG_CHECK(lg__att_check_sizes("GAT", n, nnz, LG_MAX(n, nnz), kc));
    lg_idx nch = (n + LG__GAT_CHUNK - 1) / LG__GAT_CHUNK;
    *nchunk = nch;
    int k = 0;
#define LG__B(field, kind_, idx_, cnt) LG__ATT_BUF(b, k, lg_gat_cache, field, kind_, idx_, cnt)
    LG__B(xp, LG__ACT, 0, n * kc);
    LG__B(att, LG__ACT, 0, nnz * K);
    LG__B(tsc, LG__ACT, 0, ref ? 0 : nnz * K);
    LG__B(sd, LG__ACT, 0, n * K);
    LG__B(ss, LG__ACT, 0, n * lg__gat_ns(K, lip));
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
    LG__B(part, LG__WORK, 0, lg__gat_part_len(c, n));
#undef LG__B
    return lg__att_check_table("GAT", k, LG__NBUF);
}

static const lg__att_kind lg__gat_kind = {"GAT", "lg_gat_cache_init", sizeof(lg_gat_cache),
                                          offsetof(lg_gat_cache, cfg), sizeof(lg_gat_config), LG__NBUF, lg__gat_bufs};
_Static_assert(offsetof(lg_gat_cache, head) == 0, "the cache opens with its head");

lg_status lg__gat_memory_ext(const lg_gat_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, int lent_map,
                             lg_gat_mem *mem) {
    LG_CHECK(lg__att_memory_args(mem, sizeof *mem, real_size, "lg_gat_memory"));
    LG_CHECK(lg_gat_config_check(cfg));
    return lg__att_memory(&lg__gat_kind, cfg, n, nnz, real_size, lent_map, &mem->activations, &mem->workspace);
}

lg_status lg_gat_memory(const lg_gat_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, lg_gat_mem *mem) {
    return lg__gat_memory_ext(cfg, n, nnz, real_size, 0, mem);
}

void lg__gat_cache_lend_tmap(lg_gat_cache *c, const lg__att_tmap *m) { c->lent = *m; }

void lg_gat_cache_free(lg_gat_cache *c) {
    if (c) lg__free(c->fscr);
    lg__att_cache_free(&lg__gat_kind, c);
}

lg_status lg__gat_fscr_reserve(lg_gat_cache *c, int threads) {
    if (threads <= c->fscr_n) return LG_OK;
    void *b = lg__malloc_array((size_t)threads, lg__gat_fscr_bytes(c->real_size));
    if (!b) return lg__error(LG_ENOMEM, "out of memory: GAT forward scratch for %d threads", threads);
    lg__free(c->fscr);
    c->fscr = b;
    c->fscr_n = threads;
    return LG_OK;
}

lg_status lg__gat_cache_alloc(lg_gat_cache **out, const lg_gat_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                              size_t rs, void *ws, size_t ws_bytes, int lent_map) {
    void *c = NULL;
    if (!out) return lg__error(LG_EINVAL, "lg_gat_cache_init: out is NULL");
    *out = NULL;
    LG_CHECK(lg_gat_config_check(cfg));
    LG_CHECK(lg__att_cache_alloc(&lg__gat_kind, &c, cfg, n_cap, nnz_cap, rs, ws, ws_bytes, lent_map));
    lg_status st = lg__gat_fscr_reserve(c, omp_get_max_threads());
    if (st != LG_OK) {
        lg_gat_cache_free(c);
        return st;
    }
    *out = c;
    return LG_OK;
}

lg_status lg__gat_check_cache(const lg_gat_cache *cache, const lg_gat_config *cfg, size_t rs, const char *fn) {
    LG_CHECK(lg__att_check_head(cache ? &cache->head : NULL, rs, fn));
    LG_CHECK(lg_gat_config_check(cfg));
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

