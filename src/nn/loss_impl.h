/*
 * Log-softmax, the negative log-likelihood over a list of nodes, its gradient
 * with respect to the logits, and accuracy; generic over the scalar (see
 * core/real.h), compiled by nn_f32.c and nn_f64.c. Contracts: lipgnn/nn.h.
 */
#include "core/real.h"
#include "nn/nn_common.h"

static lg_status LG_FN(lg__loss_args)(const char *fn, const void *a, lg_idx n, lg_idx c, const int32_t *labels,
                                      const lg_idx *nodes, lg_idx m) {
    LG_CHECK(lg__nn_shape(fn, n, c));
    if (m > 0 && c < 1) return lg__error(LG_EINVAL, "%s: no classes", fn);
    if (m > 0 && !a) return lg__error(LG_EINVAL, "%s: score matrix is NULL", fn);
    return lg_nll_check(labels, n, c, nodes, m);
}

/* li (c) = log_softmax(zi (c)), the row maximum subtracted: the one row
 * kernel of both forwards below */
static inline void LG_FN(lg__log_softmax_row)(lg_real *li, const lg_real *zi, lg_idx c) {
    lg_real mx = zi[0];
    for (lg_idx k = 1; k < c; k++) mx = zi[k] > mx ? zi[k] : mx;
    lg_real sum = 0;
    for (lg_idx k = 0; k < c; k++) sum += LG_EXP_NONPOS(zi[k] - mx); /* inline in float: core/fexp.h */
    lg_real lse = LG_LOG(sum);
    for (lg_idx k = 0; k < c; k++) li[k] = (zi[k] - mx) - lse;
}

/* logp (n x c) = log_softmax(logits (n x c)) row by row */
lg_status LG_FN(lg_log_softmax_forward)(lg_real *logp, const lg_real *logits, lg_idx n, lg_idx c) {
    LG_CHECK(lg__nn_shape(__func__, n, c));
    if (n > 0 && c < 1) return lg__error(LG_EINVAL, "%s: no classes", __func__);
    LG__NN_NEED(logp, n > 0, "logp");
    LG__NN_NEED(logits, n > 0, "logits");
#pragma omp parallel for schedule(static) if (n * c >= LG__NN_PAR_MIN / 4)
    for (lg_idx i = 0; i < n; i++) LG_FN(lg__log_softmax_row)(logp + i * c, logits + i * c, c);
    return LG_OK;
}

/* the listed rows of logp = log_softmax of those rows of logits, serially */
lg_status LG_FN(lg_log_softmax_rows_forward)(lg_real *logp, const lg_real *logits, lg_idx n, lg_idx c,
                                             const lg_idx *rows, lg_idx m) {
    LG_CHECK(lg__nn_shape(__func__, n, c));
    if (m < 0) return lg__error(LG_EINVAL, "%s: negative row count %lld", __func__, (long long)m);
    if (m > 0 && c < 1) return lg__error(LG_EINVAL, "%s: no classes", __func__);
    LG__NN_NEED(rows, m > 0, "rows");
    LG__NN_NEED(logp, m > 0, "logp");
    LG__NN_NEED(logits, m > 0, "logits");
    for (lg_idx k = 0; k < m; k++)
        if (rows[k] < 0 || rows[k] >= n)
            return lg__error(LG_EINVAL, "%s: rows[%lld] = %lld is outside 0..%lld", __func__, (long long)k,
                             (long long)rows[k], (long long)n - 1);
    for (lg_idx k = 0; k < m; k++) LG_FN(lg__log_softmax_row)(logp + rows[k] * c, logits + rows[k] * c, c);
    return LG_OK;
}

/* *loss = -(1/m) sum_k logp[nodes[k], labels[nodes[k]]] */
lg_status LG_FN(lg_nll_forward)(double *loss, const lg_real *logp, lg_idx n, lg_idx c, const int32_t *labels,
                                const lg_idx *nodes, lg_idx m) {
    LG__NN_NEED(loss, 1, "loss");
    LG_CHECK(LG_FN(lg__loss_args)(__func__, logp, n, c, labels, nodes, m));
    double sum = 0.0;
    for (lg_idx k = 0; k < m; k++) sum -= (double)logp[nodes[k] * c + labels[nodes[k]]];
    *loss = m > 0 ? sum / (double)m : 0.0;
    return LG_OK;
}

/* dlogits[i] += (dloss/m) (exp(logp[i]) - onehot(label_i)) for listed i */
lg_status LG_FN(lg_log_softmax_nll_backward)(lg_real *dlogits, const lg_real *logp, lg_idx n, lg_idx c,
                                             const int32_t *labels, const lg_idx *nodes, lg_idx m,
                                             double dloss) {
    LG_CHECK(LG_FN(lg__loss_args)(__func__, logp, n, c, labels, nodes, m));
    LG__NN_NEED(dlogits, m > 0, "dlogits");
    if (m == 0) return LG_OK;
    const lg_real w = (lg_real)(dloss / (double)m);
    for (lg_idx k = 0; k < m; k++) {
        const lg_idx i = nodes[k];
        const lg_real *li = logp + i * c;
        lg_real *di = dlogits + i * c;
        for (lg_idx q = 0; q < c; q++) di[q] += w * LG_EXP(li[q]);
        di[labels[i]] -= w;
    }
    return LG_OK;
}

/* *acc = share of listed nodes whose arg-max (lowest class on ties) is right */
lg_status LG_FN(lg_accuracy)(double *acc, const lg_real *scores, lg_idx n, lg_idx c, const int32_t *labels,
                             const lg_idx *nodes, lg_idx m) {
    LG__NN_NEED(acc, 1, "acc");
    LG_CHECK(LG_FN(lg__loss_args)(__func__, scores, n, c, labels, nodes, m));
    lg_idx right = 0;
    for (lg_idx k = 0; k < m; k++) {
        const lg_idx i = nodes[k];
        const lg_real *si = scores + i * c;
        lg_idx best = -1;
        for (lg_idx q = 0; q < c; q++)
            if (!isnan(si[q]) && (best < 0 || si[q] > si[best])) best = q;
        right += best == labels[i];
    }
    *acc = m > 0 ? (double)right / (double)m : 0.0;
    return LG_OK;
}
