/*
 * Static partitions with stealing, for the attention layers' per-node passes.
 *
 * The items [0, n) of a pass (rows, or chunks of rows) are split among the T
 * threads of the parallel region as schedule(static) splits them: contiguous
 * ranges, the first n % T threads one item more. So each thread works on the
 * rows it wrote in the passes before (bench/README.md: a row written by one
 * core and read by the other crosses a link that costs hundreds of ns on
 * these VMs). Each thread takes its own range's items in chunks from the
 * front; once its range is empty it takes the chunks left in the other
 * threads' ranges, in thread order after its own. A thread that runs slower
 * than the other (on this project's VMs one of the two virtual CPUs often runs
 * these passes at half the other's speed: bench/README.md, "Stop 42") then no
 * longer holds up the whole pass, which with a static schedule ends when its
 * slowest thread ends. (A thread the kernel has preempted still holds up the
 * region's closing barrier: no help on a machine busier than its cores.)
 *
 * Only for passes whose items are independent: which thread runs an item,
 * and in which order, changes no value, so every result keeps the bits of
 * schedule(static) whatever the thread count and the timing. One relaxed
 * atomic add per chunk, on a counter in a cache line of its own; the region's
 * closing barrier orders the items' writes before anything after the pass.
 *
 *     lg__steal st;
 *     lg__steal_reset(&st);
 *     #pragma omp parallel
 *     LG__STEAL_FOR(&st, n, ch, i) { ... item i ... }
 */
#ifndef LG_CORE_STEAL_H
#define LG_CORE_STEAL_H

#include <omp.h>

#include "core/internal.h"

#define LG__STEAL_MAX 64 /* threads; in a larger team every thread keeps its range */

typedef struct lg__steal {
    struct {
        _Alignas(64) lg_idx next; /* items of thread t's range taken, from its front */
    } c[LG__STEAL_MAX];
} lg__steal;

/* A thread's cursor: the ranges it has emptied (its own first), and the
 * chunk it was given. */
typedef struct lg__steal_it {
    int v;
    lg_idx i0, i1;
} lg__steal_it;

/* Before the parallel region, by the thread that opens it: every counter a
 * team of at most omp_get_max_threads() threads uses, to 0. O(threads). */
static inline void lg__steal_reset(lg__steal *s) {
    const int T = LG_MIN(omp_get_max_threads(), LG__STEAL_MAX);
    for (int t = 0; t < T; t++) s->c[t].next = 0;
}

/* Thread w's range [*lo, *hi) of n items among T, as schedule(static). */
static inline void lg__steal_range(lg_idx n, int T, int w, lg_idx *lo, lg_idx *hi) {
    const lg_idx q = n / T, r = n % T;
    *lo = (lg_idx)w * q + LG_MIN((lg_idx)w, r);
    *hi = *lo + q + ((lg_idx)w < r);
}

/* The calling thread's next chunk of at most ch >= 1 items into it->i0, i1:
 * 1, or 0 once every range is empty. it starts as {0}. */
static inline int lg__steal_next(lg__steal *s, lg_idx n, lg_idx ch, lg__steal_it *it) {
    const int T = omp_get_num_threads(), t = omp_get_thread_num();
    if (T > LG__STEAL_MAX) { /* no counters: the static range alone */
        if (it->v++) return 0;
        lg__steal_range(n, T, t, &it->i0, &it->i1);
        return it->i1 > it->i0;
    }
    for (; it->v < T; it->v++) {
        const int w = (t + it->v) % T;
        lg_idx lo, hi;
        lg__steal_range(n, T, w, &lo, &hi);
        const lg_idx c0 = lo + __atomic_fetch_add(&s->c[w].next, ch, __ATOMIC_RELAXED);
        if (c0 < hi) {
            it->i0 = c0;
            it->i1 = LG_MIN(c0 + ch, hi);
            return 1;
        }
    }
    return 0;
}

/* The items of a pass, as the body of an omp parallel region (above). */
#define LG__STEAL_FOR(st, n, ch, i)                                                          \
    for (lg__steal_it it_##i = {0, 0, 0}; lg__steal_next((st), (n), (ch), &it_##i);)         \
        for (lg_idx i = it_##i.i0; i < it_##i.i1; i++)

/* Chunks of rows for a row pass over n rows: at least 32 rows, and at most
 * about 512 chunks in all. */
static inline lg_idx lg__steal_rows(lg_idx n) { return LG_MAX((lg_idx)32, n / 512); }

#endif
