/* Helpers shared by the cmocka tests. */
#ifndef LG_TESTUTIL_H
#define LG_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "lipgnn.h"

/* Exit status that ctest counts as "skipped" (SKIP_RETURN_CODE). */
#define LG_TEST_SKIP 77

/* The shared data directory ($LIPGNN_DATA), or NULL after printing that it is
 * unset, so that a test can skip() with a clear reason. */
const char *lg_test_data_dir(void);

/* Path of the data set `name` under $LIPGNN_DATA into buf; 0 if unavailable
 * (message printed). */
int lg_test_dataset_path(char *buf, size_t cap, const char *name);

/* Allocator that fails the k-th allocation from now on (k >= 1; 0 = never)
 * and counts live allocations, to test out-of-memory paths. */
void lg_test_alloc_fail_at(long k);
long lg_test_alloc_count(void); /* allocations made since lg_test_alloc_fail_at */
long lg_test_alloc_live(void);  /* allocations not yet freed */
void lg_test_alloc_reset(void); /* back to the C library's allocator */

#define assert_ok(expr)                                                             \
    do {                                                                            \
        lg_status s__ = (expr);                                                     \
        if (s__ != LG_OK) fail_msg("%s -> %s: %s", #expr, lg_status_name(s__), lg_last_error()); \
    } while (0)

#endif
