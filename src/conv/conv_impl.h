/*
 * The baseline layers' kernels (lipgnn/conv.h), written once over lg_real
 * (core/real.h) and compiled as conv_f32.c and conv_f64.c.
 *
 * Every sparse product is one pass of lg__cprop over the CSR rows of a graph:
 *     y_i (+)= coef * s_i * sum_{e in row i} s_{j(e)} x_{j(e)} + self * x_i (+ bias)
 * with s = D^-1/2 (GCN, GCNII) or 1 (GIN, GGNN). Run over g it is the forward
 * aggregation; run over gT (row j lists the targets i of j's out-edges) it is
 * the transposed product that sends gradients back to the sources, because
 * the weights s_i s_j are symmetric in (i, j). Each thread writes only its own
 * rows, in CSR order: no atomics, the same bits whatever the thread count.
 * Dense products go through the node-wise linear ops of src/nn (lg__gemm).
 *
 * Forward / backward, per kind (g = dL/d out; ^T = the pass over gT):
 *   GCN    xw = H W;  out = P xw + b
 *          dxw = P^T g;  db += colsum g;  dW += H^T dxw;  dH += dxw W^T
 *   GIN    agg = (1+eps) H + A H;  hid = ReLU(agg W1 + b1);  out = hid W2 + b2
 *          dhid = g W2^T (dW2, db2);  dpre = ReLU'(dhid);  dagg = dpre W1^T (dW1, db1)
 *          deps += sum_i h_i . dagg_i;  dH += (1+eps) dagg + A^T dagg
 *   GGNN   xw = H W;  m = A xw;  gi = m Wi + bi;  gh = H Wh + bh;
 *          r = sig(gi_r + gh_r), z = sig(gi_z + gh_z), c = tanh(gi_n + r gh_n),
 *          out = (1 - z) c + z h
 *          dz = g (h - c), dc = g (1 - z), dh = g z;  dcp = dc (1 - c^2);
 *          drp = dcp gh_n r (1 - r);  dzp = dz z (1 - z);
 *          dgi = [drp | dzp | dcp],  dgh = [drp | dzp | dcp r]
 *          dm = dgi Wi^T (dWi, dbi);  dH += dgh Wh^T (dWh, dbh);
 *          dxw = A^T dm;  dH += dxw W^T (dW)
 *   GCNII  S = (1 - alpha) P H + alpha H0;  out = (1 - beta) S + beta S W
 *          gb = beta g;  dS = (1 - beta) g + gb W^T;  dW += S^T gb;
 *          dH0 += alpha dS;  dH += (1 - alpha) P^T dS
 */
#include <string.h>

#include "core/real.h"
#include "conv/conv_internal.h"

#if defined(LG_REAL_F32)
#define LG__CONV_TANH tanhf
#else
#define LG__CONV_TANH tanh
#endif

/* y (n x d): y_i = [acc ? y_i : 0] + coef s_i sum_{e in row i} s_j x_j
 * + self x_i + bias (s NULL: 1; bias NULL: none). g->n rows. */
static void LG_FN(lg__cprop)(lg_real *restrict y, const lg_real *restrict x, const lg_graph *g,
                             const lg_real *restrict s, lg_real coef, lg_real self, const lg_real *restrict bias,
                             lg_idx d, int acc) {
    const lg_idx n = g->n;
#pragma omp parallel for schedule(static) if ((g->nnz + n) * d >= 8192)
    for (lg_idx i = 0; i < n; i++) {
        lg_real *restrict yi = y + i * d;
        const lg_real *restrict xi = x + i * d;
        if (!acc)
            for (lg_idx c = 0; c < d; c++) yi[c] = 0;
        const lg_real ci = coef * (s ? s[i] : LG_R(1));
        for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) {
            const lg_idx j = g->j[e];
            const lg_real w = ci * (s ? s[j] : LG_R(1));
            const lg_real *restrict xj = x + j * d;
            for (lg_idx c = 0; c < d; c++) yi[c] += w * xj[c];
        }
        if (self != 0)
            for (lg_idx c = 0; c < d; c++) yi[c] += self * xi[c];
        if (bias)
            for (lg_idx c = 0; c < d; c++) yi[c] += bias[c];
    }
}

/* s_i = |N(i)|^-1/2 (0 for an empty row). */
static void LG_FN(lg__cdinv)(lg_real *s, const lg_graph *g) {
    for (lg_idx i = 0; i < g->n; i++) {
        lg_idx deg = g->p[i + 1] - g->p[i];
        s[i] = deg > 0 ? LG_R(1) / LG_SQRT((lg_real)deg) : LG_R(0);
    }
}

static inline lg_real LG_FN(lg__csig)(lg_real v) { return LG_R(1) / (LG_R(1) + LG_EXP(-v)); }

lg_status LG_FN(lg_conv_cache_init)(lg_conv_cache **out, const lg_conv_config *cfg, lg_idx n_cap) {
    return lg__conv_cache_alloc(out, cfg, n_cap, sizeof(lg_real));
}

static void LG_FN(lg__cuniform)(lg_real *w, lg_idx count, double bound, lg_rng *rng) {
    for (lg_idx k = 0; k < count; k++) w[k] = (lg_real)((2.0 * lg_rng_double(rng) - 1.0) * bound);
}

lg_status LG_FN(lg_conv_params_init)(lg_real *params, const lg_conv_config *cfg, lg_rng *rng) {
    lg_conv_layout lay;
    if (!params || !rng) return lg__error(LG_EINVAL, "lg_conv_params_init: NULL argument");
    LG_CHECK(lg_conv_layout_get(cfg, &lay));
    const lg_idx F = cfg->in_dim, D = cfg->out_dim;
    for (lg_idx k = 0; k < lay.count; k++) params[k] = 0;
    switch (cfg->kind) {
    case LG_CONV_GCN:
        LG_FN(lg__cuniform)(params + lay.w, F * D, sqrt(6.0 / (double)(F + D)), rng);
        break;
    case LG_CONV_GIN:
        LG_FN(lg__cuniform)(params + lay.w, F * D, sqrt(6.0 / (double)(F + D)), rng);
        LG_FN(lg__cuniform)(params + lay.w2, D * D, sqrt(6.0 / (double)(D + D)), rng);
        if (cfg->train_eps) params[lay.eps] = (lg_real)cfg->eps;
        break;
    case LG_CONV_GGNN: {
        LG_FN(lg__cuniform)(params + lay.w, F * F, sqrt(6.0 / (double)(F + F)), rng);
        LG_FN(lg__cuniform)(params + lay.wi, lay.count - lay.wi, 1.0 / sqrt((double)F), rng);
        break;
    }
    default:
        LG_FN(lg__cuniform)(params + lay.w, F * F, sqrt(6.0 / (double)(F + F)), rng);
        break;
    }
    return LG_OK;
}

lg_status LG_FN(lg_conv_forward)(lg_real *out, lg_conv_cache *cache, const lg_real *in, const lg_real *h0,
                                 const lg_real *params, const lg_graph *g, const lg_conv_config *cfg) {
    static const char fn[] = "lg_conv_forward";
    LG_CHECK(lg__conv_check_cache(cache, cfg, sizeof(lg_real), fn));
    if (!out || !in || !params) return lg__error(LG_EINVAL, "%s: out, in or params is NULL", fn);
    if (cfg->kind == LG_CONV_GCNII && !h0) return lg__error(LG_EINVAL, "%s: gcnii needs h0", fn);
    LG_CHECK(lg__conv_check_graph(cache, g, "graph", fn));
    const lg_idx n = g->n, F = cfg->in_dim, D = cfg->out_dim;
    lg_conv_layout lay;
    LG_CHECK(lg_conv_layout_get(cfg, &lay));
    const size_t ob = (size_t)(n * D) * sizeof(lg_real), ib = (size_t)(n * F) * sizeof(lg_real);
    LG_CHECK(lg__apart(fn, out, "out", ob, in, "in", ib));
    LG_CHECK(lg__apart(fn, out, "out", ob, h0, "h0", h0 ? ib : 0));
    LG_CHECK(lg__apart(fn, out, "out", ob, params, "params", (size_t)lay.count * sizeof(lg_real)));
    cache->have_fwd = 0;
    lg_real *act = cache->act, *work = cache->work;
    if (n > 0) switch (cfg->kind) {
        case LG_CONV_GCN: {
            lg_real *dinv = act, *xw = work;
            LG_FN(lg__cdinv)(dinv, g);
            LG_CHECK(LG_FN(lg_linear_forward)(xw, in, params + lay.w, NULL, n, F, D));
            LG_FN(lg__cprop)(out, xw, g, dinv, 1, 0, params + lay.b, D, 0);
            break;
        }
        case LG_CONV_GIN: {
            lg_real *agg = act, *hid = act + n * F;
            const lg_real ope = 1 + (cfg->train_eps ? params[lay.eps] : (lg_real)cfg->eps);
            LG_FN(lg__cprop)(agg, in, g, NULL, 1, ope, NULL, F, 0);
            LG_CHECK(LG_FN(lg_linear_forward)(hid, agg, params + lay.w, params + lay.b, n, F, D));
            LG_CHECK(LG_FN(lg_relu_forward)(hid, hid, n * D));
            LG_CHECK(LG_FN(lg_linear_forward)(out, hid, params + lay.w2, params + lay.b2, n, D, D));
            break;
        }
        case LG_CONV_GGNN: {
            lg_real *m = act, *gate = act + n * F;
            lg_real *gi = work, *gh = work + 3 * n * F, *xw = work + 7 * n * F;
            LG_CHECK(LG_FN(lg_linear_forward)(xw, in, params + lay.w, NULL, n, F, F));
            LG_FN(lg__cprop)(m, xw, g, NULL, 1, 0, NULL, F, 0);
            LG_CHECK(LG_FN(lg_linear_forward)(gi, m, params + lay.wi, params + lay.bi, n, F, 3 * F));
            LG_CHECK(LG_FN(lg_linear_forward)(gh, in, params + lay.wh, params + lay.bh, n, F, 3 * F));
#pragma omp parallel for schedule(static) if (n * F >= 8192)
            for (lg_idx i = 0; i < n; i++) {
                const lg_real *a = gi + i * 3 * F, *b = gh + i * 3 * F, *h = in + i * F;
                lg_real *gt = gate + i * 4 * F, *o = out + i * F;
                for (lg_idx c = 0; c < F; c++) {
                    lg_real r = LG_FN(lg__csig)(a[c] + b[c]);
                    lg_real z = LG_FN(lg__csig)(a[F + c] + b[F + c]);
                    lg_real hn = b[2 * F + c];
                    lg_real cc = LG__CONV_TANH(a[2 * F + c] + r * hn);
                    gt[c] = r;
                    gt[F + c] = z;
                    gt[2 * F + c] = cc;
                    gt[3 * F + c] = hn;
                    o[c] = (1 - z) * cc + z * h[c];
                }
            }
            break;
        }
        default: { /* GCNII */
            lg_real *dinv = act, *S = act + n;
            const lg_real al = (lg_real)cfg->alpha, be = (lg_real)cfg->beta;
            LG_FN(lg__cdinv)(dinv, g);
            LG_FN(lg__cprop)(S, in, g, dinv, 1 - al, 0, NULL, F, 0);
#pragma omp parallel for schedule(static) if (n * F >= 8192)
            for (lg_idx k = 0; k < n * F; k++) S[k] += al * h0[k];
            LG_CHECK(LG_FN(lg_linear_forward)(out, S, params + lay.w, NULL, n, F, F));
#pragma omp parallel for schedule(static) if (n * F >= 8192)
            for (lg_idx k = 0; k < n * F; k++) out[k] = (1 - be) * S[k] + be * out[k];
            break;
        }
        }
    cache->fcfg = *cfg;
    cache->fg = lg__graph_id_of(g);
    cache->have_fwd = 1;
    return LG_OK;
}

lg_status LG_FN(lg_conv_backward)(lg_real *d_in, lg_real *d_h0, lg_real *d_params, const lg_real *d_out,
                                  lg_conv_cache *cache, const lg_real *in, const lg_real *h0, const lg_real *params,
                                  const lg_graph *g, const lg_graph *gT, const lg_conv_config *cfg) {
    static const char fn[] = "lg_conv_backward";
    LG_CHECK(lg__conv_check_cache(cache, cfg, sizeof(lg_real), fn));
    if (!cache->have_fwd) return lg__error(LG_EINVAL, "%s: no forward has been run with this cache", fn);
    if (!d_params || !d_out || !in || !params) return lg__error(LG_EINVAL, "%s: d_params, d_out, in or params is NULL", fn);
    if (cfg->kind == LG_CONV_GCNII && !h0) return lg__error(LG_EINVAL, "%s: gcnii needs h0", fn);
    if (cfg->alpha != cache->fcfg.alpha || cfg->beta != cache->fcfg.beta || cfg->train_eps != cache->fcfg.train_eps ||
        cfg->eps != cache->fcfg.eps)
        return lg__error(LG_EINVAL, "%s: config differs from the forward's", fn);
    LG_CHECK(lg__graph_id_check(&cache->fg, g, fn)); /* checked by the forward */
    const int lent = g == cache->cg && gT && gT == cache->cgT; /* a checked pair (lg__conv_cache_lend_checked) */
    if (!lent) LG_CHECK(lg__graph_transpose_shape(g, gT, fn)); /* its entries below, by the transpose map */
    const lg_idx n = g->n, F = cfg->in_dim, D = cfg->out_dim;
    lg_conv_layout lay;
    LG_CHECK(lg_conv_layout_get(cfg, &lay));
    const lg_real *act = cache->act;
    lg_real *work = cache->work;
    if (n == 0) return LG_OK;
    /* gT's entries, as every attention backward checks them (a wrong transpose
     * of the right sizes gave wrong gradients silently); the work buffer, at
     * least 2 n scalars of every kind (lg__conv_sizes), holds the n cursors.
     * With its shape above this is the whole check: a gT that passes is g's
     * transpose, hence a valid graph (lg_graph_check is not needed again). */
    if (!lent && !lg__graph_transpose_map(NULL, NULL, (lg_idx *)work, g, gT))
        return lg__error(LG_EINVAL, "%s: transposed graph is not the graph's transpose", fn);
    switch (cfg->kind) {
    case LG_CONV_GCN: {
        const lg_real *dinv = act;
        lg_real *dxw = work;
        LG_FN(lg__cprop)(dxw, d_out, gT, dinv, 1, 0, NULL, D, 0);
        LG_CHECK(LG_FN(lg_linear_backward)(NULL, NULL, d_params + lay.b, d_out, NULL, NULL, n, F, D));
        LG_CHECK(LG_FN(lg_linear_backward)(d_in, d_params + lay.w, NULL, dxw, in, params + lay.w, n, F, D));
        break;
    }
    case LG_CONV_GIN: {
        const lg_real *agg = act, *hid = act + n * F;
        lg_real *dhid = work, *dpre = work + n * D, *dagg = work + 2 * n * D;
        const lg_real ope = 1 + (cfg->train_eps ? params[lay.eps] : (lg_real)cfg->eps);
        memset(dhid, 0, sizeof(lg_real) * (size_t)(n * D));
        memset(dpre, 0, sizeof(lg_real) * (size_t)(n * D));
        memset(dagg, 0, sizeof(lg_real) * (size_t)(n * F));
        LG_CHECK(LG_FN(lg_linear_backward)(dhid, d_params + lay.w2, d_params + lay.b2, d_out, hid, params + lay.w2, n, D, D));
        LG_CHECK(LG_FN(lg_relu_backward)(dpre, dhid, hid, n * D));
        LG_CHECK(LG_FN(lg_linear_backward)(dagg, d_params + lay.w, d_params + lay.b, dpre, agg, params + lay.w, n, F, D));
        if (cfg->train_eps) { /* one ordered sum: the same bits whatever the threads */
            lg_real s = 0;
            for (lg_idx k = 0; k < n * F; k++) s += in[k] * dagg[k];
            d_params[lay.eps] += s;
        }
        if (d_in) LG_FN(lg__cprop)(d_in, dagg, gT, NULL, 1, ope, NULL, F, 1);
        break;
    }
    case LG_CONV_GGNN: {
        const lg_real *m = act, *gate = act + n * F;
        lg_real *dgi = work, *dgh = work + 3 * n * F, *dm = work + 6 * n * F, *dxw = work + 7 * n * F;
#pragma omp parallel for schedule(static) if (n * F >= 8192)
        for (lg_idx i = 0; i < n; i++) {
            const lg_real *gt = gate + i * 4 * F, *go = d_out + i * F, *h = in + i * F;
            lg_real *a = dgi + i * 3 * F, *b = dgh + i * 3 * F;
            for (lg_idx c = 0; c < F; c++) {
                const lg_real r = gt[c], z = gt[F + c], cc = gt[2 * F + c], hn = gt[3 * F + c], gg = go[c];
                const lg_real dcp = gg * (1 - z) * (1 - cc * cc);
                const lg_real drp = dcp * hn * r * (1 - r);
                const lg_real dzp = gg * (h[c] - cc) * z * (1 - z);
                a[c] = b[c] = drp;
                a[F + c] = b[F + c] = dzp;
                a[2 * F + c] = dcp;
                b[2 * F + c] = dcp * r;
                if (d_in) d_in[i * F + c] += gg * z;
            }
        }
        memset(dm, 0, sizeof(lg_real) * (size_t)(n * F));
        LG_CHECK(LG_FN(lg_linear_backward)(dm, d_params + lay.wi, d_params + lay.bi, dgi, m, params + lay.wi, n, F, 3 * F));
        LG_CHECK(LG_FN(lg_linear_backward)(d_in, d_params + lay.wh, d_params + lay.bh, dgh, in, params + lay.wh, n, F, 3 * F));
        LG_FN(lg__cprop)(dxw, dm, gT, NULL, 1, 0, NULL, F, 0);
        LG_CHECK(LG_FN(lg_linear_backward)(d_in, d_params + lay.w, NULL, dxw, in, params + lay.w, n, F, F));
        break;
    }
    default: { /* GCNII */
        const lg_real *dinv = act, *S = act + n;
        lg_real *ds = work, *gb = work + n * F;
        const lg_real al = (lg_real)cfg->alpha, be = (lg_real)cfg->beta;
#pragma omp parallel for schedule(static) if (n * F >= 8192)
        for (lg_idx k = 0; k < n * F; k++) {
            gb[k] = be * d_out[k];
            ds[k] = (1 - be) * d_out[k];
        }
        LG_CHECK(LG_FN(lg_linear_backward)(ds, d_params + lay.w, NULL, gb, S, params + lay.w, n, F, F));
        if (d_h0)
#pragma omp parallel for schedule(static) if (n * F >= 8192)
            for (lg_idx k = 0; k < n * F; k++) d_h0[k] += al * ds[k];
        if (d_in) LG_FN(lg__cprop)(d_in, ds, gT, dinv, 1 - al, 0, NULL, F, 1);
        break;
    }
    }
    return LG_OK;
}

#undef LG__CONV_TANH
