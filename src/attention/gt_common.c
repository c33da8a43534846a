/*
 * The graph-transformer layer's type-independent parts: config validation,
 * parameter layout, cache sizing, allocation and release. The kernels are in
 * gt_impl.h (compiled as gt_f32.c and gt_f64.c).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "attention/att_cache.h"
#include "attention/gt_internal.h"

lg_gt_config lg_gt_config_default(lg_idx in_dim, lg_idx heads, lg_idx head_dim) {
    lg_gt_config c;
    memset(&c, 0, sizeof c);
    c.in_dim = in_dim;
    c.heads = heads;
    c.head_dim = head_dim;
    c.concat = 1;
    c.norm = LG_ATT_NORM_NONE;
    c.gate = 0;
    c.att_dropout = 0.0;
    return c;
}

lg_status lg_gt_config_check(const lg_gt_config *c) {
    if (!c) return lg__error(LG_EINVAL, "graph-transformer config is NULL");
    LG_CHECK(lg__att_check_dim("graph-transformer", "in_dim", c->in_dim));
    LG_CHECK(lg__att_check_dim("graph-transformer", "heads", c->heads));
    LG_CHECK(lg__att_check_dim("graph-transformer", "head_dim", c->head_dim));
    if (c->concat != 0 && c->concat != 1)
        return lg__error(LG_EINVAL, "graph-transformer concat = %d: must be 0 (mean) or 1 (concat)", c->concat);
    /* P = 3KC + D <= 4KC is a BLAS dimension */
    if (c->heads * c->head_dim > INT_MAX / 4)
        return lg__error(LG_EINVAL, "graph-transformer heads x head_dim = %lld: 4x that exceeds %d",
                         (long long)(c->heads * c->head_dim), INT_MAX);
    if ((int)c->norm < 0 || c->norm >= LG_ATT_NORM_COUNT)
        return lg__error(LG_EINVAL, "graph-transformer norm = %d: not an lg_att_norm", (int)c->norm);
    if (c->gate != 0 && c->gate != 1)
        return lg__error(LG_EINVAL, "graph-transformer gate = %d: must be 0 or 1", c->gate);
    if (!(c->att_dropout >= 0.0 && c->att_dropout < 1.0))
        return lg__error(LG_EINVAL, "graph-transformer att_dropout = %g: must lie in [0, 1)", c->att_dropout);
    return LG_OK;
}

lg_idx lg_gt_out_dim(const lg_gt_config *c) { return !c ? 0 : c->concat ? c->heads * c->head_dim : c->head_dim; }

lg_status lg_gt_layout_get(const lg_gt_config *c, lg_gt_layout *lay) {
    if (!lay) return lg__error(LG_EINVAL, "lg_gt_layout_get: lay is NULL");
    LG_CHECK(lg_gt_config_check(c));
    lg_idx kc = c->heads * c->head_dim, d = lg_gt_out_dim(c), p = 3 * kc + d;
    lay->w = 0;
    lay->w_cols = p;
    lay->bq = c->in_dim * p;
    lay->bk = lay->bq + kc;
    lay->bv = lay->bk + kc;
    lay->bskip = lay->bv + kc;
    lay->gate = lay->bskip + d;
    lay->count = lay->gate + (c->gate ? 3 * d : 0);
    return LG_OK;
}

lg_idx lg__gt_part_width(const lg_gt_config *c) {
    lg_idx d = lg_gt_out_dim(c);
    return 3 * c->heads * c->head_dim + d + (c->gate ? 3 * d : 0);
}

lg_idx lg__gt_part_len(const lg_gt_config *c, lg_idx n) {
    const lg_idx p = 3 * c->heads * c->head_dim + lg_gt_out_dim(c);
    return lg__att_part_len(n, LG__GT_CHUNK, lg__gt_part_width(c), c->in_dim, p);
}

/* The cache's buffers: one table (att_cache.h) drives both lg_gt_memory and
 * the allocation, so the documented bytes are the allocated ones. */
enum { LG__GT_ACT = LG__ATT_ACT, LG__GT_WORK = LG__ATT_WORK };

#define LG__GT_NBUF 19

/* Fills the table for cfg and capacities (n, nnz); *nchunk = reduction chunks. */
static lg_status lg__gt_bufs(const void *cfg, lg_idx n, lg_idx nnz, int lent_map, lg__att_buf *b, lg_idx *nchunk) {
    const lg_gt_config *c = cfg;
    lg_idx K = c->heads, kc = c->heads * c->head_dim, d = lg_gt_out_dim(c), p = 3 * kc + d;
    int lip = c->norm != LG_ATT_NORM_NONE, ref = c->norm == LG_ATT_NORM_LIPSCHITZ_REF, gate = c->gate;
    /* every count below is at most max(n + 1, nnz) * max(p, 4K) or (nchunk + 1) * (p + 3d)
     * (part's split workspace, when larger, is at most LG__GEMM_KSPLIT_WS: core/gemm.h) */
    /* n and nnz first (n <= INT_MAX after), then the counts (n + 1 overflowed before) */
    LG_CHECK(lg__att_check_sizes("graph-transformer", n, nnz, 0, 0));
    LG_CHECK(lg__att_check_sizes("graph-transformer", n, nnz, LG_MAX(n + 1, nnz), LG_MAX(p, 4 * K)));
    lg_idx nch = (n + LG__GT_CHUNK - 1) / LG__GT_CHUNK;
    *nchunk = nch;
    int k = 0;
#define LG__B(field, kind_, idx_, cnt) LG__ATT_BUF(b, k, lg_gt_cache, field, kind_, idx_, cnt)
    LG__B(z, LG__GT_ACT, 0, n * p);
    LG__B(att, LG__GT_ACT, 0, nnz * K);
    LG__B(tsc, LG__GT_ACT, 0, lip ? nnz * K : 0);
    LG__B(nrm, LG__GT_ACT, 0, lip ? 3 * n * K : 0);
    LG__B(den, LG__GT_ACT, 0, lip ? n * K : 0);
    LG__B(amax, LG__GT_ACT, 1, lip ? 3 * n * K : 0);
    LG__B(u, LG__GT_ACT, 0, ref ? K : 0);
    LG__B(msg, LG__GT_ACT, 0, gate ? n * d : 0);
    LG__B(gb, LG__GT_ACT, 0, gate ? n : 0);
    LG__B(dz, LG__GT_WORK, 0, n * p);
    LG__B(dm, LG__GT_WORK, 0, n * d);
    LG__B(eds, LG__GT_WORK, 0, nnz * K);
    LG__B(rec, LG__GT_WORK, 0, nnz * (lip ? 4 : 2) * K);
    LG__B(ncf, LG__GT_WORK, 0, lip ? 2 * n * K : 0);
    LG__B(dun, LG__GT_WORK, 0, ref ? (n + 1) * K : 0);
    LG__B(ga, LG__GT_WORK, 0, gate ? n : 0);
    LG__B(tpos, LG__GT_WORK, LG__ATT_EPOS, lent_map ? 0 : nnz);
    LG__B(tnext, LG__GT_WORK, 1, lent_map ? 0 : n);
    LG__B(part, LG__GT_WORK, 0, lg__gt_part_len(c, n));
#undef LG__B
    return lg__att_check_table("graph-transformer", k, LG__GT_NBUF);
}

static const lg__att_kind lg__gt_kind = {"graph-transformer", "lg_gt_cache_init", sizeof(lg_gt_cache),
                                         offsetof(lg_gt_cache, cfg), sizeof(lg_gt_config), LG__GT_NBUF, lg__gt_bufs};
_Static_assert(offsetof(lg_gt_cache, head) == 0, "the cache opens with its head");

lg_status lg__gt_memory_ext(const lg_gt_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, int lent_map,
                            lg_gt_mem *mem) {
    LG_CHECK(lg__att_memory_args(mem, sizeof *mem, real_size, "lg_gt_memory"));
    LG_CHECK(lg_gt_config_check(cfg));
    return lg__att_memory(&lg__gt_kind, cfg, n, nnz, real_size, lent_map, &mem->activations, &mem->workspace);
}

lg_status lg_gt_memory(const lg_gt_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, lg_gt_mem *mem) {
    return lg__gt_memory_ext(cfg, n, nnz, real_size, 0, mem);
}

void lg__gt_cache_lend_tmap(lg_gt_cache *c, const lg__att_tmap *m) { c->lent = *m; }

void lg_gt_cache_free(lg_gt_cache *c) { lg__att_cache_free(&lg__gt_kind, c); }

lg_status lg__gt_cache_alloc(lg_gt_cache **out, const lg_gt_config *cfg, lg_idx n_cap, lg_idx nnz_cap, size_t rs,
                             void *ws, size_t ws_bytes, int lent_map) {
    void *c = NULL;
    if (!out) return lg__error(LG_EINVAL, "lg_gt_cache_init: out is NULL");
    *out = NULL;
    LG_CHECK(lg_gt_config_check(cfg));
    LG_CHECK(lg__att_cache_alloc(&lg__gt_kind, &c, cfg, n_cap, nnz_cap, rs, ws, ws_bytes, lent_map));
    *out = c;
    return LG_OK;
}

lg_status lg__gt_check_cache(const lg_gt_cache *cache, const lg_gt_config *cfg, size_t rs, const char *fn) {
    LG_CHECK(lg__att_check_head(cache ? &cache->head : NULL, rs, fn));
    LG_CHECK(lg_gt_config_check(cfg));
    const lg_gt_config *c = &cache->cfg;
    if (c->in_dim != cfg->in_dim || c->heads != cfg->heads || c->head_dim != cfg->head_dim ||
        c->concat != cfg->concat || c->norm != cfg->norm || c->gate != cfg->gate)
        return lg__error(LG_EINVAL,
                         "%s: config (F=%lld, K=%lld, C=%lld, %s, %s, gate %d) differs from the cache's (F=%lld, "
                         "K=%lld, C=%lld, %s, %s, gate %d)",
                         fn, (long long)cfg->in_dim, (long long)cfg->heads, (long long)cfg->head_dim,
                         cfg->concat ? "concat" : "mean", lg_att_norm_name(cfg->norm), cfg->gate,
                         (long long)c->in_dim, (long long)c->heads, (long long)c->head_dim,
                         c->concat ? "concat" : "mean", lg_att_norm_name(c->norm), c->gate);
    return LG_OK;
}

