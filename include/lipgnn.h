/*
 * lipgnn: graph neural networks with Lipschitz-normalised attention.
 *
 * The one public header. A worked example, loading a data set and looking at
 * its graph (link with -llipgnn, or `pkg-config --libs lipgnn`):
 *
 *     #include <stdio.h>
 *     #include <lipgnn.h>
 *
 *     int main(void) {
 *         lg_dataset *ds = NULL;
 *         lg_status st = lg_dataset_load(&ds, "data/cora");
 *         if (st != LG_OK) {                       // every call returns a status
 *             fprintf(stderr, "%s\n", lg_last_error());   // "...: line 12: ..."
 *             return 1;
 *         }
 *         lg_graph_stats gs;
 *         if (lg_graph_stats_compute(ds->graph, &gs) == LG_OK)
 *             printf("%lld nodes, %lld edges, max in-degree %lld\n",
 *                    (long long)gs.n, (long long)gs.edges, (long long)gs.in_max);
 *         lg_dataset_free(ds);                     // NULL-safe, like every _free
 *         return 0;
 *     }
 *
 * Conventions: public names start with lg_ (internal ones with lg__); every
 * fallible function returns an lg_status (LG_OK = 0) and leaves a message for
 * lg_last_error(); outputs come first in argument lists; objects made by a
 * function are released by the matching _free, which accepts NULL. Nothing in
 * the library exits or aborts on a caller's error. The library holds no global
 * mutable state besides settings made before use (lg_set_allocator).
 *
 * Speed of a program that links lipgnn depends on two environment variables
 * read when it loads, which the lipgnn command sets by restarting itself:
 * OPENBLAS_CORETYPE (Debian's OpenBLAS 0.3.21 takes AVX-512 CPUs for old
 * ones, 2-5x slower: lg_blas_check names the best type) and GOMP_SPINCOUNT
 * (libgomp's spinning at barriers, ruinous on a busy machine: lg_set_threads).
 *
 * The sub-headers below are included here; include only this file.
 */
#ifndef LIPGNN_H
#define LIPGNN_H

#include "lipgnn/core.h"
#include "lipgnn/graph.h"
#include "lipgnn/dataset.h"
#include "lipgnn/nn.h"
#include "lipgnn/gat.h"
#include "lipgnn/gt.h"
#include "lipgnn/l2att.h"
#include "lipgnn/cosatt.h"
#include "lipgnn/conv.h"
#include "lipgnn/train.h"
#include "lipgnn/lipschitz.h"

#endif /* LIPGNN_H */
