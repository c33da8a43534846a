/*
 * libFuzzer harness of the data-set loader's labels and split readers
 * (datasets/dataset.c, through lg_dataset_load on a scratch directory).
 *
 * Input: up to six files separated by lines "----":
 *   labels.txt, train.txt, test.txt [, val.txt [, edges.txt [, features.mtx]]]
 * A missing val.txt is left absent (it is optional). A missing graph is an
 * empty edges.txt and missing features one column of ones for every data line
 * of labels.txt, so that most inputs reach the split readers.
 * Every input must be refused with a message or give a data set satisfying
 * what lipgnn/dataset.h promises; lg_dataset_load_estimate, made first, must
 * fail with a message and *peak = 0, or give a peak, and must succeed with at
 * least the loaded set's bytes whenever the load does.
 */
#define _GNU_SOURCE /* memmem */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lipgnn.h"
#include "fuzz_util.h"

enum { LG__NSEC = 6 };

/* Data lines of a labels file as the loader counts them: lines holding a
 * token whose first byte is not '#'. */
static long lg__data_lines(const char *b, size_t n) {
    long count = 0;
    size_t k = 0;
    while (k < n) {
        while (k < n && (b[k] == ' ' || b[k] == '\t' || b[k] == '\r' || b[k] == '\v' || b[k] == '\f')) k++;
        if (k < n && b[k] != '\n' && b[k] != '#') count++;
        while (k < n && b[k] != '\n') k++;
        k++;
    }
    return count;
}

static void lg__check_split(const lg_dataset *ds, const lg_idx *ids, lg_idx count, unsigned char *seen) {
    LG_FUZZ_REQUIRE(count >= 0 && (count == 0 || ids));
    for (lg_idx k = 0; k < count; k++) {
        lg_idx v = ids[k];
        LG_FUZZ_REQUIRE(v >= 0 && v < ds->graph->n);
        LG_FUZZ_REQUIRE(ds->labels[v] >= 0 && ds->labels[v] < ds->n_classes);
        LG_FUZZ_REQUIRE(!seen[v]); /* splits disjoint, no repeats */
        seen[v] = 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const names[LG__NSEC] = {"labels.txt", "train.txt", "test.txt", "val.txt", "edges.txt",
                                                "features.mtx"};
    static const char sep[] = "\n----\n";
    const char *b[LG__NSEC] = {0};
    size_t len[LG__NSEC] = {0};
    int ns = 0;
    const char *p = (const char *)data, *end = p + size;
    while (ns < LG__NSEC) {
        const char *q = memmem(p, (size_t)(end - p), sep, sizeof sep - 1);
        b[ns] = p;
        if (!q || ns == LG__NSEC - 1) {
            len[ns++] = (size_t)(end - p);
            break;
        }
        len[ns++] = (size_t)(q - p) + 1; /* keep the newline */
        p = q + sizeof sep - 1;
    }
    for (int s = 0; s < LG__NSEC; s++) {
        if (s < ns) lg_fuzz_write(names[s], b[s], len[s]);
        else lg_fuzz_remove(names[s]);
    }
    if (ns <= 4) lg_fuzz_write("edges.txt", "", 0);
    if (ns <= 5) {
        long n = lg__data_lines(b[0], len[0]);
        if (n > 100000) return 0;
        size_t cap = 96 + 4 * (size_t)n;
        char *f = malloc(cap);
        if (!f) return 0;
        int k = snprintf(f, cap, "%%%%MatrixMarket matrix array real general\n%ld 1\n", n);
        for (long i = 0; i < n; i++) memcpy(f + k + 2 * i, "1\n", 2);
        lg_fuzz_write("features.mtx", f, (size_t)k + 2 * (size_t)n);
        free(f);
    }

    size_t peak = 1;
    const lg_status est = lg_dataset_load_estimate(lg_fuzz_dir(), &peak);
    LG_FUZZ_REQUIRE(est == LG_OK ? peak > 0 : peak == 0 && lg_last_error()[0] != 0);
    lg_dataset *ds = NULL;
    lg_status st = lg_dataset_load(&ds, lg_fuzz_dir());
    if (st == LG_OK) LG_FUZZ_REQUIRE(est == LG_OK && peak >= lg_dataset_bytes(ds));
    if (st != LG_OK) {
        LG_FUZZ_REQUIRE(ds == NULL && lg_last_error()[0] != 0);
        return 0;
    }
    lg_idx n = ds->graph->n;
    LG_FUZZ_REQUIRE(n >= 1 && ds->features->n == n && ds->features->d >= 1);
    LG_FUZZ_REQUIRE(ds->n_classes >= 1 && ds->n_classes <= n);
    for (lg_idx i = 0; i < n; i++) LG_FUZZ_REQUIRE(ds->labels[i] >= -1 && ds->labels[i] < ds->n_classes);
    for (lg_idx e = 0; e < ds->features->nnz; e++) LG_FUZZ_REQUIRE(isfinite(ds->features->x[e]));
    LG_FUZZ_REQUIRE(ds->n_train >= 1);
    unsigned char *seen = calloc((size_t)n, 1);
    if (seen) {
        lg__check_split(ds, ds->train, ds->n_train, seen);
        lg__check_split(ds, ds->val, ds->n_val, seen);
        lg__check_split(ds, ds->test, ds->n_test, seen);
        free(seen);
    }
    lg_dataset_free(ds);
    return 0;
}
