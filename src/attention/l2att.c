/*
 * The L2-attention layer's type-independent parts: config validation,
 * parameter layout, the Lambert function and the graph constant of the
 * Lipschitz bound, degree and self-loop checks, cache sizing, allocation and
 * release. The kernels are in l2att_impl.h (l2att_f32.c, l2att_f64.c).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "attention/att_cache.h"
#include "attention/l2att_internal.h"

lg_l2att_config lg_l2att_config_default(lg_idx in_dim, lg_idx heads, lg_idx head_dim) {
    lg_l2att_config c;
    memset(&c, 0, sizeof c);
    c.in_dim = in_dim;
    c.heads = heads;
    c.head_dim = head_dim;
    c.out_dim = in_dim;
    c.contractive = 0.0;
    return c;
}

lg_status lg_l2att_config_check(const lg_l2att_config *c) {
    if (!c) return lg__error(LG_EINVAL, "L2-attention config is NULL");
    const struct {
        const char *name;
        lg_idx v;
    } dims[4] = {{"in_dim", c->in_dim}, {"heads", c->heads}, {"head_dim", c->head_dim}, {"out_dim", c->out_dim}};
    for (int t = 0; t < 4; t++) LG_CHECK(lg__att_check_dim("L2-attention", dims[t].name, dims[t].v));
    if (c->heads * c->head_dim > INT_MAX || c->heads * c->head_dim * c->head_dim > INT_MAX)
        return lg__error(LG_EINVAL, "L2-attention heads x head_dim^2 = %lld exceeds %d",
                         (long long)(c->heads * c->head_dim * c->head_dim), INT_MAX);
    if (!(c->contractive == 0.0 || (c->contractive > 0.0 && c->contractive < 1.0)))
        return lg__error(LG_EINVAL, "L2-attention contractive = %g: must be 0 (off) or lie in (0, 1)", c->contractive);
    return LG_OK;
}

lg_status lg_l2att_layout_get(const lg_l2att_config *c, lg_l2att_layout *lay) {
    if (!lay) return lg__error(LG_EINVAL, "lg_l2att_layout_get: lay is NULL");
    LG_CHECK(lg_l2att_config_check(c));
    lg_idx kc = c->heads * c->head_dim;
    lay->wq = 0;
    lay->v = c->in_dim * kc;
    lay->wo = lay->v + kc * c->head_dim;
    lay->bias = lay->wo + kc * c->out_dim;
    lay->count = lay->bias + c->out_dim;
    return LG_OK;
}

double lg_lambert_w0(double x) {
    if (!(x >= 0)) return NAN;
    if (x == 0) return 0;
    if (isinf(x)) return x;
    /* start: log1p for small x, log x - log log x for large; then Halley */
    double w = x < 2.718281828459045 ? log1p(x) * 0.75 : log(x) - log(log(x));
    if (w < 0) w = 0;
    for (int it = 0; it < 64; it++) {
        double ew = exp(w), f = w * ew - x;
        double d = ew * (w + 1) - (w + 2) * f / (2 * w + 2);
        double wn = w - f / d;
        if (fabs(wn - w) <= 1e-16 * (1 + fabs(wn))) {
            w = wn;
            break;
        }
        w = wn;
    }
    return w;
}

double lg_l2att_attention_lip(lg_idx n_in, lg_idx n_out) {
    if (n_in < 1 || n_out < 1) return NAN;
    const double e = 2.718281828459045;
    double w = lg_lambert_w0((double)(n_in - 1) / e);
    double kappa = 0.5 + 2 * lg_lambert_w0(1 / e) + 2 * LG__L2_BETA * sqrt(w);
    return sqrt((1 + 4 * w) * (1 + 2 * w + (double)(n_out - 1) * kappa));
}

void lg__l2att_degrees(const lg_graph *g, lg_idx *cnt, lg_idx *n_in, lg_idx *n_out) {
    lg_idx mi = 0, mo = 0;
    for (lg_idx i = 0; i < g->n; i++) {
        cnt[i] = 0;
        mi = LG_MAX(mi, g->p[i + 1] - g->p[i]);
    }
    for (lg_idx e = 0; e < g->nnz; e++) cnt[g->j[e]]++;
    for (lg_idx i = 0; i < g->n; i++) mo = LG_MAX(mo, cnt[i]);
    *n_in = mi;
    *n_out = mo;
}

lg_status lg_l2att_graph_degrees(const lg_graph *g, lg_idx *n_in, lg_idx *n_out) {
    static const char fn[] = "lg_l2att_graph_degrees";
    if (!n_in || !n_out) return lg__error(LG_EINVAL, "%s: NULL output", fn);
    LG_CHECK(lg__graph_check_arg(g, "graph", fn));
    lg_idx *cnt = lg__malloc_array((size_t)(g->n > 0 ? g->n : 1), sizeof(lg_idx));
    if (!cnt) return lg__nomem("lg_l2att_graph_degrees counters");
    lg__l2att_degrees(g, cnt, n_in, n_out);
    lg__free(cnt);
    return LG_OK;
}

lg_status lg__l2att_check_loops(const lg_graph *g, const char *fn) {
    for (lg_idx i = 0; i < g->n; i++) {
        lg_idx lo = g->p[i], hi = g->p[i + 1]; /* binary search: rows are sorted */
        while (lo < hi) {
            lg_idx mid = lo + (hi - lo) / 2;
            if (g->j[mid] < i) lo = mid + 1;
            else hi = mid;
        }
        if (lo == g->p[i + 1] || g->j[lo] != i)
            return lg__error(LG_EINVAL,
                             "%s: node %lld has no self-loop (L2 attention needs i in N(i) for every node: "
                             "lg_graph_self_loops)",
                             fn, (long long)i);
    }
    return LG_OK;
}

/* The cache's buffers: one table (att_cache.h) drives lg_l2att_memory and the
 * allocation. */
enum { LG__ACT = LG__ATT_ACT, LG__WORK = LG__ATT_WORK };

#define LG__L2_NBUF 15

static lg_status lg__l2_bufs(const void *cfg, lg_idx n, lg_idx nnz, int lent_map, lg__att_buf *b, lg_idx *nchunk) {
    const lg_l2att_config *c = cfg;
    lg_idx K = c->heads, kc = c->heads * c->head_dim, D = c->out_dim;
    LG_CHECK(lg__att_check_sizes("L2-attention", n, nnz, LG_MAX(LG_MAX(n, nnz), kc), LG_MAX(kc, D)));
    lg_idx nch = (n + LG__L2_CHUNK - 1) / LG__L2_CHUNK;
    *nchunk = nch;
    int k = 0;
#define LG__B(field, kind_, idx_, cnt) LG__ATT_BUF(b, k, lg_l2att_cache, field, kind_, idx_, cnt)
    LG__B(q, LG__ACT, 0, n * kc);
    LG__B(qn, LG__ACT, 0, n * K);
    LG__B(att, LG__ACT, 0, nnz * K);
    LG__B(m, LG__ACT, 0, n * kc);
    LG__B(o, LG__ACT, 0, n * kc);
    LG__B(dO, LG__WORK, 0, n * kc);
    LG__B(dM, LG__WORK, 0, n * kc);
    LG__B(dQ, LG__WORK, 0, n * kc);
    LG__B(rec, LG__WORK, 0, nnz * K);
    LG__B(tpos, LG__WORK, LG__ATT_EPOS, lent_map ? 0 : nnz);
    LG__B(tedge, LG__WORK, LG__ATT_EPOS, lent_map ? 0 : nnz);
    LG__B(tnext, LG__WORK, 1, n);
    LG__B(gwo, LG__WORK, 0, kc * D);
    LG__B(part, LG__WORK, 0, (nch + 1) * D);
    LG__B(fx, LG__WORK, 0, c->contractive > 0 ? n * D : 0);
#undef LG__B
    return lg__att_check_table("L2-attention", k, LG__L2_NBUF);
}

static const lg__att_kind lg__l2_kind = {"L2-attention", "lg_l2att_cache_init", sizeof(lg_l2att_cache),
                                         offsetof(lg_l2att_cache, cfg), sizeof(lg_l2att_config), LG__L2_NBUF,
                                         lg__l2_bufs};
_Static_assert(offsetof(lg_l2att_cache, head) == 0, "the cache opens with its head");

lg_status lg__l2att_memory_ext(const lg_l2att_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, int lent_map,
                               lg_l2att_mem *mem) {
    LG_CHECK(lg__att_memory_args(mem, sizeof *mem, real_size, "lg_l2att_memory"));
    LG_CHECK(lg_l2att_config_check(cfg));
    return lg__att_memory(&lg__l2_kind, cfg, n, nnz, real_size, lent_map, &mem->activations, &mem->workspace);
}

lg_status lg_l2att_memory(const lg_l2att_config *cfg, lg_idx n, lg_idx nnz, size_t real_size, lg_l2att_mem *mem) {
    return lg__l2att_memory_ext(cfg, n, nnz, real_size, 0, mem);
}

void lg__l2att_cache_lend_tmap(lg_l2att_cache *c, const lg__att_tmap *m) { c->lent = *m; }

void lg_l2att_cache_free(lg_l2att_cache *c) { lg__att_cache_free(&lg__l2_kind, c); }

lg_status lg__l2att_cache_alloc(lg_l2att_cache **out, const lg_l2att_config *cfg, lg_idx n_cap, lg_idx nnz_cap,
                                size_t rs, void *ws, size_t ws_bytes, int lent_map) {
    void *c = NULL;
    if (!out) return lg__error(LG_EINVAL, "lg_l2att_cache_init: out is NULL");
    *out = NULL;
    LG_CHECK(lg_l2att_config_check(cfg));
    LG_CHECK(lg__att_cache_alloc(&lg__l2_kind, &c, cfg, n_cap, nnz_cap, rs, ws, ws_bytes, lent_map));
    *out = c;
    return LG_OK;
}

lg_status lg__l2att_check_cache(const lg_l2att_cache *cache, const lg_l2att_config *cfg, size_t rs, const char *fn) {
    LG_CHECK(lg__att_check_head(cache ? &cache->head : NULL, rs, fn));
    LG_CHECK(lg_l2att_config_check(cfg));
    const lg_l2att_config *c = &cache->cfg;
    if (c->in_dim != cfg->in_dim || c->heads != cfg->heads || c->head_dim != cfg->head_dim ||
        c->out_dim != cfg->out_dim || (c->contractive > 0) != (cfg->contractive > 0))
        return lg__error(LG_EINVAL,
                         "%s: config (F=%lld, K=%lld, C=%lld, D=%lld, contractive %g) differs from the cache's "
                         "(F=%lld, K=%lld, C=%lld, D=%lld, contractive %g)",
                         fn, (long long)cfg->in_dim, (long long)cfg->heads, (long long)cfg->head_dim,
                         (long long)cfg->out_dim, cfg->contractive, (long long)c->in_dim, (long long)c->heads,
                         (long long)c->head_dim, (long long)c->out_dim, c->contractive);
    return LG_OK;
}

lg_status lg_l2att_last_scale(double *scale, double *bound, const lg_l2att_cache *cache) {
    if (!scale || !cache) return lg__error(LG_EINVAL, "lg_l2att_last_scale: NULL argument");
    if (!cache->have_fwd) return lg__error(LG_EINVAL, "lg_l2att_last_scale: no forward has been run with this cache");
    *scale = cache->scale;
    if (bound) *bound = cache->bound;
    return LG_OK;
}
