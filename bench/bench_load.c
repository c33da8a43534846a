/*
 * Data-set loading speed: loads $LIPGNN_DATA/cora and $LIPGNN_DATA/pubmed
 * seven times each and prints one JSON line per data set:
 *   {"bench":"load","dataset":"pubmed","runs":7,"median_ms":...,"min_ms":...,
 *    "nodes":...,"edges":...,"nnz_features":...}
 * Exits 77 (skipped) when LIPGNN_DATA is unset, 1 when a load fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lipgnn.h"

static const char lg_bench_prog[] = "bench_load";
#include "bench_util.h"

enum { RUNS = 7 };

static int bench_one(const char *name) {
    char dir[4096];
    double ms[RUNS];
    lg_idx nodes = 0, edges = 0, nnz = 0;
    lg_status st = lg_dataset_resolve(name, dir, sizeof dir);
    if (st != LG_OK) {
        fprintf(stderr, "bench_load: %s\n", lg_last_error());
        return 1;
    }
    for (int r = 0; r < RUNS; r++) {
        lg_dataset *ds = NULL;
        double t0 = now_ms();
        st = lg_dataset_load(&ds, dir);
        ms[r] = now_ms() - t0;
        if (st != LG_OK) {
            fprintf(stderr, "bench_load: %s: %s\n", lg_status_name(st), lg_last_error());
            return 1;
        }
        nodes = ds->graph->n;
        edges = ds->graph->nnz;
        nnz = ds->features->nnz;
        lg_dataset_free(ds);
    }
    qsort(ms, RUNS, sizeof ms[0], cmp_double);
    printf("{\"bench\":\"load\",\"dataset\":\"%s\",\"runs\":%d,\"median_ms\":%.3f,\"min_ms\":%.3f,"
           "\"nodes\":%lld,\"edges\":%lld,\"nnz_features\":%lld}\n",
           name, RUNS, ms[RUNS / 2], ms[0], (long long)nodes, (long long)edges, (long long)nnz);
    fflush(stdout);
    return 0;
}

int main(void) {
    const char *root = getenv("LIPGNN_DATA");
    if (!root || !*root) {
        fprintf(stderr, "bench_load: LIPGNN_DATA is unset: point it at the directory holding cora/ and pubmed/ "
                        "(export LIPGNN_DATA=/path/to/data); skipping\n");
        return 77;
    }
    int bad = bench_one("cora");
    bad |= bench_one("pubmed");
    return bad ? 1 : 0;
}
