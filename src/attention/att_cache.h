/*
 * The caches of the attention layers (GAT, graph transformer, L2 and cosine
 * attention) and their one life cycle. A cache's buffers are driven by one
 * table per layer kind: the same table gives the documented sizes
 * (lg_gat_memory, ...) and the allocation, so they cannot disagree.
 * Activations (kept from forward to backward) are always the cache's own;
 * backward's workspace is either its own too or carved from a buffer the
 * caller owns (lg_gat_cache_init_shared, lg_gt_cache_init_shared), so that
 * the layers of a deep model, whose backward passes run one after another,
 * share one workspace instead of keeping one each. Not installed.
 */
#ifndef LG_ATTENTION_ATT_CACHE_H
#define LG_ATTENTION_ATT_CACHE_H

#include "core/gemm.h"
#include "core/internal.h"
#include "graph/graph_internal.h"

enum { LG__ATT_ACT = 0, LG__ATT_WORK = 1 };
/* element types of a buffer */
enum { LG__ATT_REAL = 0, LG__ATT_IDX = 1, LG__ATT_EPOS = 2 };

/* One buffer of a cache struct. */
typedef struct lg__att_buf {
    size_t off;   /* offsetof(the cache struct, its void * field)           */
    int kind;     /* LG__ATT_ACT or LG__ATT_WORK                            */
    int idx;      /* element type: LG__ATT_REAL (scalars of the cache's type),
                     LG__ATT_IDX (lg_idx) or LG__ATT_EPOS (lg__epos)        */
    lg_idx count; /* elements (0: not needed for this config)               */
} lg__att_buf;

/* The edge map between a graph and its transpose, made once by the caller
 * (a model: at its build, or at each bind of a mini-batch) with
 * lg__graph_transpose_map, which also checks that gT is g's transpose, and
 * lent to the GAT and graph-transformer caches, whose backward passes would
 * otherwise rebuild it on every call (their serial step B0). Not owned by
 * the caches. */
typedef struct lg__att_tmap {
    const lg_graph *g, *gT; /* the pair it was made for (identity)           */
    const lg__epos *tpos;   /* nnz: position in gT of each edge of g          */
    const lg__epos *tedge;  /* nnz: the edge of g at each position of gT      */
    int checked;            /* 1: the lender has checked g (lg_graph_check) and
                               keeps g and gT unchanged while lent, so the
                               layers skip their O(n + nnz) checks of exactly
                               these two graphs (a model's own full graph)    */
} lg__att_tmap;

/* A step of a backward's caller run between the layer's two last products:
 * after its input gradient d_in is complete and before the product of its
 * weights' gradient reads its input. A model whose blocks keep no dropped
 * copy of their input makes it again there, in the pass that takes d_in
 * through the block before's dropout and ELU backward
 * (lg_dropout_elu_backward_remake). Set in the cache's head (mid) for one
 * backward call and cleared by the caller after it; without
 * one (fn NULL), dW's product runs first, as the layers' contracts allow d_in
 * to alias in. The step's error ends the backward with it. */
typedef struct lg__att_mid {
    lg_status (*fn)(void *ctx); /* NULL: none */
    void *ctx;                  /* its argument */
} lg__att_mid;

/* One entry of a layer's buffer table: the void * field `field` of the cache
 * struct `type`, of kind (LG__ATT_ACT / LG__ATT_WORK), element type idx
 * (LG__ATT_REAL / LG__ATT_IDX / LG__ATT_EPOS) and count elements, appended at
 * b[k++]. */
#define LG__ATT_BUF(b, k, type, field, kind_, idx_, cnt)                                                   \
    ((b)[k].off = offsetof(type, field), (b)[k].kind = (kind_), (b)[k].idx = (idx_), (b)[k].count = (cnt), (k)++)

/* The fields every attention cache struct opens with (LG__ATT_HEAD). */
#define LG__ATT_HEAD_FIELDS                                                                                \
    size_t real_size;  /* sizeof(float) or sizeof(double)                               */               \
    lg_idx n_cap;      /* largest graph (nodes) it serves                                */               \
    lg_idx nnz_cap;    /* largest graph (edges) it serves                                */               \
    lg_idx nchunk;     /* reduction chunks for n_cap nodes                               */               \
    int ws_shared;     /* 1: the workspace buffers are carved from the caller's shared
                          workspace (not freed here)                                     */               \
    int lent_map;      /* 1: no edge map (tpos, ...) of its own: the backward uses the one
                          lent to it (lg__<layer>_cache_lend_tmap)                       */               \
    lg__att_tmap lent; /* the lent edge map (tpos NULL: none)                            */               \
    lg__att_mid mid;   /* the caller's step in the next backward (fn NULL: none)          */               \
    lg__graph_id fg;   /* the last forward's graph (lg__graph_id_of)                      */

/* The head of a cache, for the life cycle below. */
typedef struct lg__att_head {
    LG__ATT_HEAD_FIELDS
} lg__att_head;

/* The first member of every attention cache struct: its head both as an
 * lg__att_head (c->head, for the functions below) and as plain fields
 * (c->real_size, ...): the two share one layout (a union of structs with the
 * same members). */
#define LG__ATT_HEAD                                                                                       \
    union {                                                                                                \
        lg__att_head head;                                                                                 \
        struct {                                                                                           \
            LG__ATT_HEAD_FIELDS                                                                            \
        };                                                                                                 \
    }

/* What the shared life cycle needs of a layer kind (one const instance per
 * kind, next to its buffer table). */
typedef struct lg__att_kind {
    const char *name;    /* "GAT", "graph-transformer", ...: named in errors      */
    const char *init_fn; /* "lg_gat_cache_init": named when out is NULL           */
    size_t size;         /* sizeof the cache struct (LG__ATT_HEAD first)          */
    size_t cfg_off;      /* offsetof the cache's cfg                               */
    size_t cfg_size;     /* sizeof its config                                      */
    int nbuf;            /* entries of its buffer table, at most LG__ATT_NBUF_MAX  */
    /* the table for a validated config (const <layer>_config *) and a graph of
     * n nodes and nnz edges (lent_map: without the edge map's buffers), and
     * the reduction chunks for n nodes; LG_EINVAL / LG_ERANGE on sizes */
    lg_status (*bufs)(const void *cfg, lg_idx n, lg_idx nnz, int lent_map, lg__att_buf *b, lg_idx *nchunk);
} lg__att_kind;

#define LG__ATT_NBUF_MAX 32

/* The size checks that open a buffer table: LG_EINVAL (naming "<layer>
 * cache") if n or nnz is negative, LG_ERANGE if n exceeds INT_MAX (BLAS), if
 * big * wide values (the caller's bound on its largest count) could overflow,
 * or if nnz exceeds the edge map's positions (lg__att_check_edges). O(1). */
lg_status lg__att_check_sizes(const char *layer, lg_idx n, lg_idx nnz, lg_idx big, lg_idx wide);

/* Values of an attention cache's reduction partials at n nodes, (ceil(n /
 * chunk) + 1) x width, which the backward reuses, once they are summed, as the
 * workspace that splits its weight gradient's product H^T dZ (in_dim x cols,
 * inner dimension n) along n (core/gemm.h): the larger of the two. Non-
 * decreasing in n. O(1). */
static inline lg_idx lg__att_part_len(lg_idx n, lg_idx chunk, lg_idx width, lg_idx in_dim, lg_idx cols) {
    return LG_MAX(((n + chunk - 1) / chunk + 1) * width, lg__gemm_ksplit_len(in_dim, cols, n));
}

/* The end of a buffer table: LG_OK if it has the kind's nbuf entries (k). */
lg_status lg__att_check_table(const char *layer, int k, int nbuf);

/* Activation and workspace bytes (*act, *work) of a cache of kind k for a
 * validated cfg, a graph of n nodes and nnz edges and scalars of rs bytes
 * (lent_map: without the edge map's buffers). Errors of k->bufs. O(1). */
lg_status lg__att_memory(const lg__att_kind *k, const void *cfg, lg_idx n, lg_idx nnz, size_t rs, int lent_map,
                         size_t *act, size_t *work);

/* Allocates a zeroed cache of kind k for a validated cfg (copied in), graphs
 * of at most n_cap nodes and nnz_cap edges, scalars of rs bytes; its
 * workspace carved from ws (ws_bytes long) when ws is not NULL; lent_map as
 * in lg__att_memory. *out is the cache, or NULL on error (LG_EINVAL if out
 * is NULL, errors of k->bufs, LG_ENOMEM, LG_EINVAL if ws is shorter than the
 * workspace; nothing is left allocated). */
lg_status lg__att_cache_alloc(const lg__att_kind *k, void **out, const void *cfg, lg_idx n_cap, lg_idx nnz_cap,
                              size_t rs, void *ws, size_t ws_bytes, int lent_map);

/* Frees a cache of kind k made by lg__att_cache_alloc, and its own buffers.
 * NULL-safe. */
void lg__att_cache_free(const lg__att_kind *k, void *c);

/* The check that opens a layer's cache check (so every forward and backward):
 * LG_EUNSUPPORTED if the loaded OpenBLAS kernels cannot run on this CPU
 * (lg__blas_usable), LG_EINVAL naming fn if the cache (h) is NULL or was made
 * for scalars of another size than rs. */
lg_status lg__att_check_head(const lg__att_head *h, size_t rs, const char *fn);

/* LG_EINVAL naming fn and what (e.g. "graph") unless g is a valid graph
 * (lg__graph_check_arg) within the cache's capacity. O(n + nnz); O(1) for
 * the graph of a checked lent map (h->lent.checked: its lender checked it). */
lg_status lg__att_check_graph(const lg__att_head *h, const lg_graph *g, const char *what, const char *fn);

/* Dimensions of the attention layers' configs lie in [1, LG__ATT_DIM_MAX], so
 * that every BLAS argument fits an int and every product of two fits lg_idx. */
#define LG__ATT_DIM_MAX ((lg_idx)1 << 24)

/* LG_ERANGE (naming the layer) if a graph of nnz edges is too large for the
 * edge map's 32-bit positions (more than LG__EPOS_MAX edges). */
lg_status lg__att_check_edges(const char *layer, lg_idx nnz);

/* LG_EINVAL, "<layer> <name> = v: must lie in [1, LG__ATT_DIM_MAX]", unless
 * v lies there (layer: "GAT", "graph-transformer", ...). */
lg_status lg__att_check_dim(const char *layer, const char *name, lg_idx v);

/* The preamble of a layer's lg_<layer>_memory (fn): LG_EINVAL if mem is NULL,
 * else zeroes it (size bytes) and gives LG_EINVAL unless real_size is 4 or 8. */
lg_status lg__att_memory_args(void *mem, size_t size, size_t real_size, const char *fn);

/* The check before a read-out or a backward of any attention layer: LG_EINVAL
 * (naming fn) if the cache is absent (present = 0), was made for another
 * scalar size than rs, or has seen no forward. */
lg_status lg__att_after_fwd(int present, size_t cache_rs, size_t rs, int have_fwd, const char *fn);

/* The graphs of a backward, g already found to be the forward's
 * (lg__graph_id_check): lg__graph_transpose_shape of (g, gT) (its entries
 * are checked by lg__graph_transpose_map); O(1) for the pair of a checked
 * lent map (h->lent.checked). */
lg_status lg__att_check_backward_graphs(const lg__att_head *h, const lg_graph *g, const lg_graph *gT, const char *fn);

/* lg__att_after_fwd on a layer's cache (any struct with real_size and
 * have_fwd), for the kernels' scalar type. */
#define LG__ATT_AFTER_FWD(cache, fn)                                                                       \
    lg__att_after_fwd((cache) != NULL, (cache) ? (cache)->real_size : 0, sizeof(lg_real),                 \
                      (cache) ? (cache)->have_fwd : 0, fn)


/* The map a backward on (g, gT) uses: the lent one when lent->tpos is set
 * and it was made for exactly these graphs (the caller keeps them unchanged
 * while it is lent, as a forward's graph until its backward); else, when
 * the cache has its own buffers (tpos, tnext; tedge may be NULL), built
 * there by lg__graph_transpose_map (O(nnz), serial), which checks gT.
 * LG_EINVAL naming fn if gT is not g's transpose, or if the cache has no
 * buffers of its own (made for a lent map) and the lent map is for other
 * graphs. */
lg_status lg__att_tmap_pick(const lg__att_tmap *lent, lg__epos *tpos, lg__epos *tedge, lg_idx *tnext,
                            const lg_graph *g, const lg_graph *gT, const lg__epos **tpos_out,
                            const lg__epos **tedge_out, const char *fn);

#endif /* LG_ATTENTION_ATT_CACHE_H */
