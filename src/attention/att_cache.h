/*
 * The buffers of an attention layer's cache (GAT, graph transformer), driven
 * by one table per layer kind: the same table gives the documented sizes
 * (lg_gat_memory, lg_gt_memory) and the allocation, so they cannot disagree.
 * Activations (kept from forward to backward) are always the cache's own;
 * backward's workspace is either its own too or carved from a buffer the
 * caller owns (lg_gat_cache_init_shared, lg_gt_cache_init_shared), so that
 * the layers of a deep model, whose backward passes run one after another,
 * share one workspace instead of keeping one each. Not installed.
 */
#ifndef LG_ATTENTION_ATT_CACHE_H
#define LG_ATTENTION_ATT_CACHE_H

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

/* Bytes of the nb buffers of b for scalars of rs bytes: *act the
 * activations, *work the workspace (the size a shared workspace needs). */
void lg__att_bufs_bytes(const lg__att_buf *b, int nb, size_t rs, size_t *act, size_t *work);

/* Sets every buffer field of the struct at base: activations allocated,
 * workspace buffers allocated too when ws is NULL, else carved from ws
 * (ws_bytes long, at least lg__att_bufs_bytes' work; lg_idx buffers first,
 * then scalars, then lg__epos ones, so every buffer is aligned as its
 * elements when ws is aligned for lg_idx).
 * Unneeded buffers stay NULL. LG_ENOMEM (naming what) with the buffers made
 * so far left for lg__att_bufs_free; LG_EINVAL if ws is too small. */
lg_status lg__att_bufs_alloc(void *base, const lg__att_buf *b, int nb, size_t rs, void *ws, size_t ws_bytes,
                             const char *what);

/* Frees the buffers lg__att_bufs_alloc allocated (not the ones carved from a
 * shared workspace: shared = 1). NULL fields are skipped. */
void lg__att_bufs_free(void *base, const lg__att_buf *b, int nb, int shared);

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

/* The graphs of a backward: g of the forward's size (n, nnz) and gT not NULL,
 * of g's size, with row pointers spanning [0, nnz) without a negative row
 * (its entries are checked by lg__graph_transpose_map). LG_EINVAL naming fn.
 * O(n). */
lg_status lg__att_check_backward_graphs(const lg_graph *g, const lg_graph *gT, lg_idx n, lg_idx nnz, const char *fn);

/* lg__att_after_fwd on a layer's cache (any struct with real_size and
 * have_fwd), for the kernels' scalar type. */
#define LG__ATT_AFTER_FWD(cache, fn)                                                                       \
    lg__att_after_fwd((cache) != NULL, (cache) ? (cache)->real_size : 0, sizeof(lg_real),                 \
                      (cache) ? (cache)->have_fwd : 0, fn)

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
} lg__att_tmap;

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
