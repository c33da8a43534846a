/*
 * Mini-batches of whole graphs for a data set made of many disjoint graphs
 * (TREES: one tree each): a batch is the disjoint union of up to B of them,
 * with the nodes of one split (the roots, for TREES) as the loss and accuracy
 * targets. The batcher owns every buffer a batch needs, sized once for the
 * largest possible batch, and fills them with no allocation.
 *
 * Splits are indexed 0 train, 1 val, 2 test. For each split the batcher keeps
 * the graphs that hold at least one of its nodes (ascending), and, per such
 * graph, those nodes (in split order); a batch of split s takes graphs from
 * that list by position.
 */
#ifndef LG_TRAIN_BATCH_H
#define LG_TRAIN_BATCH_H

#include "train/model.h"

enum { LG__SPLITS = 3 };

typedef struct lg__batcher {
    const lg_dataset *ds;     /* graphs, labels, splits (borrowed)                   */
    const lg_features *x;     /* features the model sees, n x F (borrowed)           */
    lg_idx B;                 /* graphs per batch                                     */
    int self_loops;           /* batch graphs get self-loops added (1) or removed (0) */
    lg_idx ng[LG__SPLITS];    /* graphs holding nodes of each split                   */
    lg_idx *sg[LG__SPLITS];   /* those graphs' ids, ascending                          */
    lg_idx *sp[LG__SPLITS];   /* ng+1 offsets into sn                                 */
    lg_idx *sn[LG__SPLITS];   /* the split's nodes grouped by graph (global ids)      */
    lg_idx *order;            /* ng[0] positions: the training order of an epoch      */
    lg_idx n_cap, nnz_cap, xnnz_cap, t_cap; /* largest batch: nodes, edges (after
                                 self-loops), feature values, targets (or nodes of
                                 the largest graph, if more)                       */
    /* the current batch */
    lg_graph g, gT;           /* its graph (self-loops as wanted) and transpose      */
    lg_features xb;           /* its features                                         */
    int32_t *labels;          /* n_cap labels                                         */
    lg_idx *gptr;             /* B+1 graph offsets                                    */
    lg_idx n_graphs;          /* graphs in it                                         */
    lg_idx *targets;          /* its target nodes (batch ids), the nodes read out     */
    lg_idx n_targets;
    lg_idx *iota;             /* 0, 1, ..., t_cap-1: the read-out rows of the targets  */
    lg_idx *work;             /* transpose cursors: max(n_cap, F)                     */
    size_t bytes;             /* bytes of every buffer above                          */
    int plan;                 /* sizes only                                           */
} lg__batcher;

/* Sets the batcher up for batches of B graphs of ds (x: the features, n x F,
 * with ds's structure), for a model with configuration c. Checks that ds is a
 * disjoint union (graph_ptr covers the nodes; no edge between two graphs):
 * LG_EINVAL naming the first violation otherwise. plan: computes the sizes
 * (b->bytes, the capacities) without keeping buffers. O(n + nnz + G log G). */
lg_status lg__batcher_init(lg__batcher *b, const lg_dataset *ds, const lg_features *x, const lg_model_config *c,
                           lg_idx B, int plan);
void lg__batcher_destroy(lg__batcher *b);

/* Number of batches of split s (0 if it has no graph). */
lg_idx lg__batcher_count(const lg__batcher *b, int s);

/* Puts this epoch's training order in b->order: a permutation of the
 * training graphs drawn from (seed, epoch) alone, so that a resumed run draws
 * the same. */
void lg__batcher_shuffle(lg__batcher *b, uint64_t seed, long epoch);

/* Fills batch k of split s (s in 0..2: B graphs, by position in b->order for
 * s = 0 when ordered, else ascending, targets = the split's nodes; s = -1:
 * graph k alone, targets = all its nodes) and describes it in *out (read =
 * the targets). */
void lg__batcher_fill(lg__batcher *b, int s, int ordered, lg_idx k, lg__batch *out);

/* The nodes of the data set covered by batch k of split -1 (graph k): [*lo, *hi). */
void lg__batcher_span(const lg__batcher *b, lg_idx k, lg_idx *lo, lg_idx *hi);

#endif
