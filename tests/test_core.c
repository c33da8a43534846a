/* Tests of src/core: status strings, thread-local errors, allocator hook, RNG,
 * the OpenBLAS core check and the room for OpenBLAS's buffers under a memory
 * limit, the kernels' instruction set and LIPGNN_ISA, the version, the
 * passes' static partitions with stealing (core/steal.h). */
#include <ctype.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "testutil.h"
#include "core/internal.h"
#include "core/steal.h"

static void test_status_strings(void **state) {
    (void)state;
    for (int s = 0; s < LG_STATUS_COUNT; s++) {
        assert_non_null(lg_status_name((lg_status)s));
        assert_non_null(lg_strerror((lg_status)s));
        assert_true(strncmp(lg_status_name((lg_status)s), "LG_", 3) == 0);
        for (int t = 0; t < s; t++) assert_string_not_equal(lg_strerror((lg_status)s), lg_strerror((lg_status)t));
    }
    assert_string_equal(lg_status_name(LG_EPARSE), "LG_EPARSE");
    assert_string_equal(lg_status_name((lg_status)999), "LG_E?");
    assert_string_equal(lg_strerror((lg_status)-1), "unknown status");
}

static void test_error_message(void **state) {
    (void)state;
    lg_clear_error();
    assert_string_equal(lg_last_error(), "");
    assert_int_equal(lg__error(LG_EPARSE, "%s:%d: bad token '%s'", "f.mtx", 7, "x"), LG_EPARSE);
    assert_string_equal(lg_last_error(), "f.mtx:7: bad token 'x'");
    assert_int_equal(lg__nomem("buffers"), LG_ENOMEM);
    assert_string_equal(lg_last_error(), "out of memory: buffers");
}

static void *other_thread(void *arg) {
    (void)arg;
    /* a fresh thread has its own, empty message */
    int empty = lg_last_error()[0] == '\0';
    lg__error(LG_EIO, "from the other thread");
    return (void *)(intptr_t)empty;
}

static void test_error_is_thread_local(void **state) {
    (void)state;
    lg__error(LG_EINVAL, "main thread");
    pthread_t t;
    void *ret = NULL;
    assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_true((intptr_t)ret);
    assert_string_equal(lg_last_error(), "main thread");
}

static void test_allocator_hook(void **state) {
    (void)state;
    lg_test_alloc_fail_at(2);
    void *a = lg__malloc(10);
    void *b = lg__malloc(10); /* the 2nd fails */
    void *c = lg__calloc(3, 4);
    assert_non_null(a);
    assert_null(b);
    assert_non_null(c);
    assert_int_equal(lg_test_alloc_live(), 2);
    lg__free(a);
    lg__free(c);
    lg__free(NULL);
    assert_int_equal(lg_test_alloc_live(), 0);
    lg_test_alloc_reset();
    /* overflow of count * size is refused, not wrapped */
    assert_null(lg__malloc_array(SIZE_MAX / 2, 4));
    assert_null(lg__calloc(SIZE_MAX / 2, 4));
}

static void test_rng(void **state) {
    (void)state;
    lg_rng a, b;
    lg_rng_seed(&a, 42);
    lg_rng_seed(&b, 42);
    for (int k = 0; k < 1000; k++) assert_true(lg_rng_next(&a) == lg_rng_next(&b));
    lg_rng_seed(&b, 43);
    int same = 0;
    for (int k = 0; k < 100; k++) same += lg_rng_next(&a) == lg_rng_next(&b);
    assert_true(same < 2);
    /* below(n) is in range and about uniform */
    long hist[10] = {0};
    for (int k = 0; k < 100000; k++) {
        uint64_t v = lg_rng_below(&a, 10);
        assert_true(v < 10);
        hist[v]++;
    }
    for (int k = 0; k < 10; k++) assert_true(hist[k] > 9500 && hist[k] < 10500);
    double sum = 0;
    for (int k = 0; k < 100000; k++) {
        float f = lg_rng_float(&a);
        double d = lg_rng_double(&a);
        assert_true(f >= 0.0f && f < 1.0f);
        assert_true(d >= 0.0 && d < 1.0);
        sum += d;
    }
    assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
    /* shuffle is a permutation, and deterministic */
    lg_idx v[100], w[100];
    for (int k = 0; k < 100; k++) v[k] = w[k] = k;
    lg_rng_seed(&a, 7);
    lg_rng_seed(&b, 7);
    lg_rng_shuffle(&a, v, 100);
    lg_rng_shuffle(&b, w, 100);
    int seen[100] = {0}, moved = 0;
    for (int k = 0; k < 100; k++) {
        assert_true(v[k] == w[k]);
        seen[v[k]]++;
        moved += v[k] != k;
    }
    for (int k = 0; k < 100; k++) assert_int_equal(seen[k], 1);
    assert_true(moved > 80);
    /* shuffle is uniform over all n! permutations, not only over the cyclic
     * ones (Sattolo's variant, j drawn from [0, i) instead of [0, i], never
     * gives the identity or a fixed point): over 6000 seeds with n = 3 each
     * of the 6 permutations appears about 1000 times (sd ~29; the bounds are
     * 5 sd, and the seeds are fixed) */
    long perm[6] = {0};
    for (uint64_t seed = 1; seed <= 6000; seed++) {
        lg_idx u[3] = {0, 1, 2};
        lg_rng_seed(&a, seed);
        lg_rng_shuffle(&a, u, 3);
        assert_true(u[0] + u[1] + u[2] == 3 && u[0] != u[1] && u[1] != u[2] && u[0] != u[2]);
        perm[2 * u[0] + (u[1] > u[2])]++; /* its rank: first element, then the order of the other two */
    }
    assert_true(perm[0] > 0); /* the identity (0, 1, 2) */
    for (int k = 0; k < 6; k++) assert_true(perm[k] > 850 && perm[k] < 1150);
    assert_true(lg_hash64(1) != lg_hash64(2));
}

/* The functions without a status: a NULL or an empty range is a no-op or a
 * neutral answer, not a crash (they dereferenced it, or divided by 0). */
static void test_null_safe(void **state) {
    (void)state;
    lg_rng_seed(NULL, 1);
    lg_rng r;
    lg_rng_seed(&r, 1);
    assert_int_equal(lg_rng_below(&r, 0), 0);
    lg_kernel_isa_info(NULL);
    lg_blas_check(NULL);
}

static void test_blas_check(void **state) {
    (void)state;
    lg_blas_info bi;
    const char *env = getenv("OPENBLAS_CORETYPE");
    lg_blas_check(&bi);
    assert_true(bi.current[0] != '\0');
    assert_true(bi.threads >= 1);
    assert_int_equal(bi.user_set, env && *env);
    if (bi.user_set) assert_false(bi.recommend);
    if (bi.recommend) assert_string_not_equal(bi.current, bi.best);
    assert_false(bi.recommend && bi.user_slower); /* one or the other: who chose */
    const int slower = bi.recommend || bi.user_slower; /* the loaded core ranks below the best */
    /* a core type set by the user is respected: never a recommendation, but
     * its cost is reported (the loaded core is the same: OpenBLAS read the
     * variable when it loaded) */
    setenv("OPENBLAS_CORETYPE", "Prescott", 1);
    lg_blas_check(&bi);
    assert_true(bi.user_set);
    assert_false(bi.recommend);
    assert_int_equal(bi.user_slower, slower);
    assert_int_equal(bi.user_ignored, strcmp(bi.current, "Prescott") != 0);
    /* a value OpenBLAS would not take (it runs a type of another name) is
     * flagged, whatever its case; the loaded type's own name, in any case, not */
    setenv("OPENBLAS_CORETYPE", "NoSuchCore", 1);
    lg_blas_check(&bi);
    assert_true(bi.user_set);
    assert_true(bi.user_ignored);
    char lower[sizeof bi.current];
    for (size_t k = 0; k < sizeof lower; k++) lower[k] = (char)tolower((unsigned char)bi.current[k]);
    setenv("OPENBLAS_CORETYPE", lower, 1);
    lg_blas_check(&bi);
    assert_false(bi.user_ignored);
    setenv("OPENBLAS_CORETYPE", bi.current, 1);
    lg_blas_check(&bi);
    assert_false(bi.user_ignored);
    unsetenv("OPENBLAS_CORETYPE");
    lg_blas_check(&bi);
    assert_false(bi.user_set);
    assert_false(bi.user_slower);
    assert_false(bi.user_ignored);
    assert_int_equal(bi.recommend, slower);
    if (env) setenv("OPENBLAS_CORETYPE", env, 1); else unsetenv("OPENBLAS_CORETYPE");
    /* this process runs its loaded core (it got here), so nothing refuses */
    assert_false(bi.unsupported);
    assert_int_equal(lg__blas_usable("test"), LG_OK);
}

/* Which core types this CPU can execute (CPUID): the rule behind
 * lg_blas_info.unsupported and the CLI's restart away from a core type that
 * would stop the process with SIGILL. */
static void test_blas_core_runs(void **state) {
    (void)state;
    __builtin_cpu_init();
    const int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                       __builtin_cpu_supports("avx512cd");
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    assert_int_equal(lg__blas_core_runs("SkylakeX"), avx512);
    assert_int_equal(lg__blas_core_runs("skylakex"), avx512); /* any case, as OpenBLAS reads it */
    assert_int_equal(lg__blas_core_runs("Cooperlake"), avx512 && __builtin_cpu_supports("avx512bf16"));
    assert_int_equal(lg__blas_core_runs("Haswell"), avx2);
    assert_int_equal(lg__blas_core_runs("ZEN"), avx2);
    assert_int_equal(lg__blas_core_runs("Sandybridge"), __builtin_cpu_supports("avx"));
    assert_int_equal(lg__blas_core_runs("Piledriver"), __builtin_cpu_supports("fma4"));
    assert_int_equal(lg__blas_core_runs("Prescott"), __builtin_cpu_supports("sse3"));
    assert_int_equal(lg__blas_core_runs("NoSuchCore"), 1); /* not ours to judge */
    /* the best core lg_blas_check names always runs here */
    lg_blas_info bi;
    lg_blas_check(&bi);
    if (bi.best[0]) assert_int_equal(lg__blas_core_runs(bi.best), 1);
    assert_int_equal(bi.unsupported, !lg__blas_core_runs(bi.current));
}

/* lg_kernel_isa_info: the choice, the CPU's widest variant, and whether
 * LIPGNN_ISA names a variant (a cap) or nothing (ignored, which the CLI says). */
static void test_isa_info(void **state) {
    (void)state;
    const char *env = getenv("LIPGNN_ISA");
    static const char *const names[] = {"baseline", "avx2", "avx512"};
    lg_isa_info ii;
    int chosen = -1, cpu = -1;
    lg_kernel_isa_info(&ii);
    for (int v = 0; v < 3; v++) {
        if (strcmp(ii.chosen, names[v]) == 0) chosen = v;
        if (strcmp(ii.cpu, names[v]) == 0) cpu = v;
    }
    assert_true(chosen >= 0 && cpu >= 0);
    assert_true(chosen <= cpu); /* a cap never widens */
    assert_string_equal(ii.chosen, lg_kernel_isa());
    static const struct { const char *value; int valid; } cases[] = {
        {"baseline", 1}, {"avx2", 1}, {"avx512", 1}, {"auto", 1},
        {"avx", 0}, {"AVX2", 0}, {"avx2 ", 0}, {"foo", 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        setenv("LIPGNN_ISA", cases[k].value, 1);
        lg_kernel_isa_info(&ii);
        assert_non_null(ii.env);
        assert_string_equal(ii.env, cases[k].value);
        assert_int_equal(ii.env_valid, cases[k].valid);
    }
    setenv("LIPGNN_ISA", "", 1); /* empty: as unset */
    lg_kernel_isa_info(&ii);
    assert_null(ii.env);
    assert_false(ii.env_valid);
    unsetenv("LIPGNN_ISA");
    lg_kernel_isa_info(&ii);
    assert_null(ii.env);
    assert_false(ii.env_valid);
    if (env) setenv("LIPGNN_ISA", env, 1);
}

/* Static partitions with stealing (core/steal.h): each thread's range is
 * schedule(static)'s; every item runs exactly once, for any n, chunk and
 * team size (including n = 0, n below the team, a chunk above n); a thread
 * that has not started when the other ends gets nothing, its range taken by
 * the other. */
static void test_steal(void **state) {
    (void)state;
    const int maxt = omp_get_max_threads();
    enum { NMAX = 1000 };
    static int seen[NMAX], by[NMAX];
    const lg_idx ns[] = {0, 1, 3, 7, 64, 999, 1000}, chs[] = {1, 5, 32, 2000};
    for (int T = 1; T <= 4; T++)
        for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
            for (size_t b = 0; b < sizeof chs / sizeof *chs; b++) {
                const lg_idx n = ns[a], ch = chs[b];
                memset(seen, 0, sizeof seen);
                lg__steal st;
                omp_set_num_threads(T);
                lg__steal_reset(&st);
#pragma omp parallel
                LG__STEAL_FOR(&st, n, ch, i) {
#pragma omp atomic
                    seen[i]++;
                }
                for (lg_idx i = 0; i < n; i++) assert_int_equal(seen[i], 1);
            }
    /* the ranges are schedule(static)'s */
    for (int T = 1; T <= 5; T++) {
        lg_idx prev = 0;
        for (int w = 0; w < T; w++) {
            lg_idx lo, hi;
            lg__steal_range(23, T, w, &lo, &hi);
            assert_int_equal(lo, prev);
            assert_true(hi - lo == 23 / T || hi - lo == 23 / T + 1);
            assert_true((hi - lo == 23 / T + 1) == (w < 23 % T));
            prev = hi;
        }
        assert_int_equal(prev, 23);
    }
    /* thread 0 starts only once thread 1 has ended: thread 1 runs every item */
    omp_set_num_threads(2);
    int done = 0, team = 0;
    lg__steal st;
    lg__steal_reset(&st);
    memset(seen, 0, sizeof seen);
#pragma omp parallel
    {
        const int t = omp_get_thread_num();
        if (t == 0) {
            team = omp_get_num_threads();
            while (team == 2 && !__atomic_load_n(&done, __ATOMIC_ACQUIRE)) sched_yield();
        }
        LG__STEAL_FOR(&st, NMAX, 16, i) {
            seen[i]++;
            by[i] = t;
        }
        if (t == 1) __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    for (lg_idx i = 0; i < NMAX; i++) {
        assert_int_equal(seen[i], 1);
        if (team == 2) assert_int_equal(by[i], 1);
    }
    if (team != 2) print_message("test_steal: the team had %d thread(s): stealing not exercised\n", team);
    omp_set_num_threads(maxt);
}

#if !defined(__SANITIZE_ADDRESS__) /* test_blas_room's helpers */
/* statm's field (1 address space, 6 data + stack), in bytes */
static unsigned long long statm_bytes(int field) {
    unsigned long long v[6] = {0};
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    int ok = fscanf(f, "%llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 6;
    fclose(f);
    return ok ? v[field - 1] * (unsigned long long)sysconf(_SC_PAGESIZE) : 0;
}

/* lg__blas_room at a thread count t, under the soft limit res = what the
 * process counts against it now + 64 MiB (less than one OpenBLAS buffer),
 * the limit restored before returning */
static lg_status room_under(int res, int field, int t) {
    struct rlimit old, lim;
    assert_int_equal(getrlimit(res, &old), 0);
    lim = old;
    lim.rlim_cur = (rlim_t)(statm_bytes(field) + (64ull << 20));
    if (old.rlim_max != RLIM_INFINITY && lim.rlim_cur > old.rlim_max) lim.rlim_cur = old.rlim_max;
    lg_set_threads(t);
    assert_int_equal(setrlimit(res, &lim), 0);
    lg_status st = lg__blas_room("test");
    assert_int_equal(setrlimit(res, &old), 0);
    return st;
}
#endif

/* OpenBLAS 0.3.21 retries forever a buffer it cannot map (a hang, one core
 * busy): the entries of dense products refuse instead, with LG_ENOMEM and a
 * message naming the limit, when an address-space (ulimit -v) or data
 * (ulimit -d) limit leaves no room for one buffer per thread. Not in an
 * AddressSanitizer build, whose shadow memory no such limit admits. */
static void test_blas_room(void **state) {
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip();
#else
    const int maxt = omp_get_max_threads();
    if (!statm_bytes(1)) skip(); /* no /proc */
    /* 62 threads, more than any test here runs, their stacks made before
     * any limit: the check starts them first */
    int team = 0;
#pragma omp parallel num_threads(62)
    __atomic_fetch_add(&team, 1, __ATOMIC_RELAXED);
    assert_int_equal(team, 62);
    lg_status st = room_under(RLIMIT_AS, 1, 61);
    assert_int_equal(st, LG_ENOMEM);
    assert_non_null(strstr(lg_last_error(), "test: the address-space limit (ulimit -v) of "));
    assert_non_null(strstr(lg_last_error(), "leaves too little for OpenBLAS"));
    assert_non_null(strstr(lg_last_error(), "raise the limit to "));
    /* without the limit the same buffers fit (unmapped again), and are then
     * counted as taken: a limit set afterwards is not checked again */
    lg_set_threads(61);
    assert_int_equal(lg__blas_room("test"), LG_OK);
    assert_int_equal(room_under(RLIMIT_AS, 1, 61), LG_OK);
    assert_int_equal(room_under(RLIMIT_AS, 1, 40), LG_OK);
    /* one thread more: one buffer more, refused under a data limit */
    st = room_under(RLIMIT_DATA, 6, 62);
    assert_int_equal(st, LG_ENOMEM);
    assert_non_null(strstr(lg_last_error(), "test: the data limit (ulimit -d) of "));
    assert_non_null(strstr(lg_last_error(), "1 here beyond those found to fit before"));
    lg_set_threads(62);
    assert_int_equal(lg__blas_room("test"), LG_OK);
    lg_set_threads(maxt);
#endif
}

/* lg_set_threads returns the count in effect: n itself, LG_MAX_THREADS above
 * it, and for n <= 0 OpenMP's count, which libgomp wraps from an
 * OMP_NUM_THREADS beyond INT_MAX (2147483648: -2147483648; the ctest
 * core_threads_wrapped runs this file so) into a count of 1. The first test:
 * the others set the count. */
static void test_set_threads(void **state) {
    (void)state;
    const int maxt = omp_get_max_threads();
    const char *env = getenv("OMP_NUM_THREADS");
    const int wrapped = env && !strcmp(env, "2147483648");
    if (wrapped) assert_true(maxt < 1); /* the libgomp this test is about */
    const int got = lg_set_threads(0);
    assert_int_equal(got, wrapped ? 1 : maxt);
    assert_int_equal(omp_get_max_threads(), got);
    assert_int_equal(lg_set_threads(3), 3);
    assert_int_equal(omp_get_max_threads(), 3);
    assert_int_equal(lg_set_threads(LG_MAX_THREADS + 1), LG_MAX_THREADS);
    assert_int_equal(lg_set_threads(got), got);
}

static void test_version(void **state) {
    (void)state;
    assert_string_equal(lg_version(), LG_VERSION_STRING);
    char buf[64];
    snprintf(buf, sizeof buf, "%d.%d.%d", LG_VERSION_MAJOR, LG_VERSION_MINOR, LG_VERSION_PATCH);
    assert_string_equal(lg_version(), buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_threads), cmocka_unit_test(test_status_strings), cmocka_unit_test(test_error_message),
        cmocka_unit_test(test_error_is_thread_local), cmocka_unit_test(test_allocator_hook),
        cmocka_unit_test(test_rng), cmocka_unit_test(test_null_safe), cmocka_unit_test(test_blas_check), cmocka_unit_test(test_blas_room),
        cmocka_unit_test(test_blas_core_runs), cmocka_unit_test(test_isa_info),
        cmocka_unit_test(test_version), cmocka_unit_test(test_steal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
