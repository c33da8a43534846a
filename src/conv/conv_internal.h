/*
 * Internals of the baseline layers shared by conv.c (type-independent parts)
 * and conv_impl.h (the kernels, compiled for float and double). Not installed.
 */
#ifndef LG_CONV_CONV_INTERNAL_H
#define LG_CONV_CONV_INTERNAL_H

#include "core/internal.h"
#include "graph/graph_internal.h"

/* The layer's cache. Buffers are void* because one struct serves both scalar
 * types; real_size says which. Layout of the two buffers per kind (values):
 *   act:  GCN    dinv n
 *         GIN    agg n x F | hid n x D (after the ReLU)
 *         GGNN   m n x F | gates n x 4F (r | z | c | h Wh_n + bh_n, per node)
 *         GCNII  dinv n | S n x F
 *   work: GCN    xw n x D (forward) = dxw (backward)
 *         GIN    dhid n x D | dpre n x D | dagg n x F
 *         GGNN   gi n x 3F | gh n x 3F (forward; dgi, dgh in backward) | dm n x F | xw n x F
 *         GCNII  ds n x F | gb n x F                                          */
struct lg_conv_cache {
    lg_conv_config cfg;     /* configuration the cache was made for            */
    size_t real_size;       /* sizeof(float) or sizeof(double)                 */
    lg_idx n_cap;           /* largest graph (nodes) it serves                 */
    int have_fwd;           /* 1 once a forward completed                      */
    lg_conv_config fcfg;    /* the cfg the last forward was called with        */
    lg__graph_id fg;        /* its graph (lg__graph_id_of)                     */
    void *act;              /* activations kept for backward                   */
    void *work;             /* scratch                                         */
    const lg_graph *cg, *cgT; /* a pair its owner checked (g valid, gT its
                               transpose) and keeps unchanged while lent: the
                               calls on exactly these skip their O(n + nnz)
                               checks (lg__conv_cache_lend_checked); NULL: none */
};

/* Values (not bytes) of the two buffers for cfg and n nodes. */
void lg__conv_sizes(const lg_conv_config *cfg, lg_idx n, lg_idx *act, lg_idx *work);

/* Validates the pair (cache, cfg) for a kernel of scalar size rs: same kind
 * and dimensions, same scalar type; and that the loaded OpenBLAS kernels run
 * on this CPU (lg__blas_usable). */
lg_status lg__conv_check_cache(const lg_conv_cache *cache, const lg_conv_config *cfg, size_t rs, const char *fn);

/* Validates g (lg_graph_check) and that it fits the cache. */
lg_status lg__conv_check_graph(const lg_conv_cache *cache, const lg_graph *g, const char *what, const char *fn);

/* Lends the cache the pair (g, gT), which the caller has checked (g with
 * lg_graph_check, gT made as g's transpose) and keeps unchanged while lent:
 * forward and backward on exactly these graphs skip their checks of them (a
 * model's own full graph, as its lent edge map does for the attention
 * layers). NULLs end the lending. O(1). */
void lg__conv_cache_lend_checked(lg_conv_cache *c, const lg_graph *g, const lg_graph *gT);

/* Allocates a cache for scalars of rs bytes (LG_ENOMEM, nothing leaked). */
lg_status lg__conv_cache_alloc(lg_conv_cache **out, const lg_conv_config *cfg, lg_idx n_cap, size_t rs);

#endif /* LG_CONV_CONV_INTERNAL_H */
