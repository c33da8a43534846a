#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

const char *lg_test_data_dir(void) {
    const char *d = getenv("LIPGNN_DATA");
    if (!d || !*d) {
        fprintf(stderr, "LIPGNN_DATA is unset: skipping the tests that need the shared data sets "
                        "(point it at the directory holding cora/ and pubmed/)\n");
        return NULL;
    }
    return d;
}

int lg_test_dataset_path(char *buf, size_t cap, const char *name) {
    const char *d = lg_test_data_dir();
    if (!d) return 0;
    snprintf(buf, cap, "%s/%s", d, name);
    struct stat sb;
    if (stat(buf, &sb) != 0) {
        fprintf(stderr, "LIPGNN_DATA=%s has no %s/: skipping\n", d, name);
        return 0;
    }
    return 1;
}

static long fail_at, count, live;

static void *t_malloc(size_t n) {
    if (fail_at && ++count >= fail_at) { if (count == fail_at) return NULL; }
    void *p = malloc(n);
    if (p) live++;
    return p;
}
static void *t_calloc(size_t a, size_t b) {
    if (fail_at && ++count >= fail_at) { if (count == fail_at) return NULL; }
    void *p = calloc(a, b);
    if (p) live++;
    return p;
}
static void *t_realloc(void *q, size_t n) {
    if (fail_at && ++count >= fail_at) { if (count == fail_at) return NULL; }
    void *p = realloc(q, n);
    if (p && !q) live++;
    return p;
}
static void t_free(void *p) {
    if (p) live--;
    free(p);
}

void lg_test_alloc_fail_at(long k) {
    fail_at = k;
    count = 0;
    live = 0;
    lg_allocator a = {t_malloc, t_calloc, t_realloc, t_free};
    lg_set_allocator(&a);
}
long lg_test_alloc_count(void) { return count; }
long lg_test_alloc_live(void) { return live; }
void lg_test_alloc_reset(void) { lg_set_allocator(NULL); }
