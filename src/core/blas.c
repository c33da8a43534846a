/* The OpenBLAS core-type check (see lg_blas_check in lipgnn/core.h) and the
 * room for OpenBLAS's buffers under an address-space limit. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS (not in POSIX 2008) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cblas.h>
#include <omp.h>

#include "core/internal.h"

/* What OpenBLAS's SkylakeX kernels need, and its Haswell kernels (CPUID). */
static int lg__has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512cd");
}

static int lg__has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* The best core type this CPU can run, from CPUID. */
static const char *lg__best_core(void) {
    if (lg__has_avx512()) return "SkylakeX";
    if (lg__has_avx2()) return "Haswell";
    if (__builtin_cpu_supports("avx")) return "Sandybridge";
    return "";
}

/* OpenBLAS's x86-64 core types (its DYNAMIC_ARCH names): what each needs of
 * the CPU (0 SSE3, 1 SSSE3, 2 SSE4.1, 3 AVX, 4 AVX2 + FMA, 5 FMA4, 6 AVX-512,
 * 7 AVX-512 BF16) and its speed rank (-1: not ranked, left alone). The sgemm
 * of each rank is faster than the ranks below it on a CPU that can run it.
 * Zen's kernels are of Haswell's class (their sgemm measured alike on a Zen 3:
 * bench/README.md), so an AVX-512 CPU that OpenBLAS takes for a Zen gets
 * SkylakeX recommended, and an AVX2 one keeps Zen. */
static const struct {
    const char *name;
    int need, rank;
} lg__cores[] = {{"Prescott", 0, 0},    {"Core2", 1, 1},       {"Penryn", 1, -1},     {"Dunnington", 1, -1},
                 {"Atom", 1, -1},       {"Nehalem", 2, 2},     {"Sandybridge", 3, 3}, {"Haswell", 4, 4},
                 {"Zen", 4, 4},         {"Bulldozer", 5, -1},  {"Piledriver", 5, -1}, {"Steamroller", 5, -1},
                 {"Excavator", 5, -1},  {"SkylakeX", 6, 5},    {"Cooperlake", 7, 6}};

/* The entry of name (any case), or -1. */
static int lg__core_find(const char *name) {
    for (int k = 0; k < (int)(sizeof lg__cores / sizeof *lg__cores); k++)
        if (strcasecmp(name, lg__cores[k].name) == 0) return k;
    return -1;
}

static int lg__core_rank(const char *name) {
    const int k = lg__core_find(name);
    return k < 0 ? -1 : lg__cores[k].rank; /* another AMD or other type: leave it alone */
}

int lg__blas_core_runs(const char *name) {
    const int k = lg__core_find(name);
    if (k < 0) return 1;
    __builtin_cpu_init();
    switch (lg__cores[k].need) {
    case 0: return __builtin_cpu_supports("sse3");
    case 1: return __builtin_cpu_supports("ssse3");
    case 2: return __builtin_cpu_supports("sse4.1");
    case 3: return __builtin_cpu_supports("avx");
    case 4: return lg__has_avx2();
    case 5: return __builtin_cpu_supports("fma4");
    case 6: return lg__has_avx512();
    default: return lg__has_avx512() && __builtin_cpu_supports("avx512bf16");
    }
}

static void lg__copy(char *dst, size_t cap, const char *src) {
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = '\0';
}

void lg_blas_check(lg_blas_info *info) {
    if (!info) return;
    memset(info, 0, sizeof *info);
    lg__copy(info->current, sizeof info->current, openblas_get_corename());
    lg__copy(info->best, sizeof info->best, lg__best_core());
    const char *env = getenv("OPENBLAS_CORETYPE");
    info->user_set = env != NULL && env[0] != '\0';
    info->threads = openblas_get_num_threads();
    int rc = lg__core_rank(info->current), rb = lg__core_rank(info->best);
    const int slower = rc >= 0 && rb >= 0 && rc < rb; /* the loaded core ranks below the best */
    info->recommend = slower && !info->user_set;
    info->user_slower = slower && info->user_set;
    info->user_ignored = info->user_set && strcasecmp(env, info->current) != 0;
    info->unsupported = !lg__blas_core_runs(info->current);
}

/* 0 unknown, 1 the loaded core runs here, 2 it does not (it cannot change
 * within a process: OpenBLAS chose it when it loaded) */
static int lg__blas_state;

lg_status lg__blas_core_usable(const char *fn) {
    int st = __atomic_load_n(&lg__blas_state, __ATOMIC_RELAXED);
    if (st == 0) {
        st = lg__blas_core_runs(openblas_get_corename()) ? 1 : 2;
        __atomic_store_n(&lg__blas_state, st, __ATOMIC_RELAXED);
    }
    if (st == 1) return LG_OK;
    const char *best = lg__best_core();
    return lg__error(LG_EUNSUPPORTED,
                     "%s: OpenBLAS runs its '%s' kernels, which need instructions this CPU does not have (its "
                     "dense products would stop the process); set OPENBLAS_CORETYPE=%s, or unset it, before the "
                     "program starts",
                     fn, openblas_get_corename(), best[0] ? best : "<a core type this CPU runs>");
}

/* The threads whose OpenBLAS buffers were found to fit. */
static int lg__blas_room_threads;

/* Advised beyond what the check maps: room for what a run maps later
 * (malloc's arenas, the buffers of its output), in MiB. */
#define LG__BLAS_SLACK_MIB 64ull

/* The finite one of RLIMIT_AS and RLIMIT_DATA (the smaller if both), in
 * bytes, with its name, the address space or data it counts (bytes,
 * from /proc/self/statm; 0 if unknown); 0 if neither is set. */
static unsigned long long lg__blas_limit(const char **opt, unsigned long long *used) {
    struct rlimit as, data;
    unsigned long long lim = 0;
    int field = 0; /* statm's: 1 size (address space), 6 data + stack */
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        lim = as.rlim_cur;
        *opt = "address-space limit (ulimit -v)";
        field = 1;
    }
    if (getrlimit(RLIMIT_DATA, &data) == 0 && data.rlim_cur != RLIM_INFINITY && (!lim || data.rlim_cur < lim)) {
        lim = data.rlim_cur;
        *opt = "data limit (ulimit -d)";
        field = 6;
    }
    *used = 0;
    FILE *f = field ? fopen("/proc/self/statm", "r") : NULL;
    if (f) {
        unsigned long long v[6] = {0};
        if (fscanf(f, "%llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 6)
            *used = v[field - 1] * (unsigned long long)sysconf(_SC_PAGESIZE);
        fclose(f);
    }
    return lim;
}

lg_status lg__blas_room(const char *fn) {
    const int t = omp_get_max_threads();
    const int have = __atomic_load_n(&lg__blas_room_threads, __ATOMIC_RELAXED);
    if (t <= have) return LG_OK;
    const int k = t - have;
    void **map = lg__malloc_array((size_t)k, sizeof *map);
    if (!map) return lg__nomem("OpenBLAS buffer check");
    /* the team first, so that its threads' stacks are mapped already: the
     * products will run in it */
    int team = 0;
#pragma omp parallel num_threads(t)
    __atomic_fetch_add(&team, 1, __ATOMIC_RELAXED); /* a body, which GCC does not drop */
    /* one map per buffer, as OpenBLAS makes them (private, anonymous,
     * read-write), all held at once, then released: pages never touched */
    int got = 0;
    while (got < k) {
        void *p = mmap(NULL, LG__BLAS_BUFFER_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) break;
        map[got++] = p;
    }
    for (int i = 0; i < got; i++) munmap(map[i], LG__BLAS_BUFFER_BYTES);
    lg__free(map);
    if (got == k) {
        /* the largest count seen wins; a smaller one checked at the same time is within it */
        int cur = have;
        while (cur < t && !__atomic_compare_exchange_n(&lg__blas_room_threads, &cur, t, 0, __ATOMIC_RELAXED,
                                                       __ATOMIC_RELAXED)) {
        }
        return LG_OK;
    }
    const unsigned long long mib = 1ull << 20, need = (unsigned long long)k * LG__BLAS_BUFFER_BYTES;
    const char *opt = "";
    unsigned long long used;
    const unsigned long long lim = lg__blas_limit(&opt, &used);
    /* OpenBLAS started a thread per core but one, unless told otherwise */
    const char *obt = getenv("OPENBLAS_NUM_THREADS");
    const char *pool = obt && !strcmp(obt, "1") ? ""
                       : "; and set OPENBLAS_NUM_THREADS=1 before the program starts: OpenBLAS's own threads, "
                         "which lipgnn does not use, hold one each";
    char what[192];
    snprintf(what, sizeof what, "its products take a buffer of %zu MiB of address space (little of it resident) in "
             "each thread that runs them, %d here%s", LG__BLAS_BUFFER_BYTES >> 20, k,
             k < t ? " beyond those found to fit before" : "");
    if (lim && used)
        return lg__error(LG_ENOMEM,
                         "%s: the %s of %llu MiB, %llu MiB of it in use, leaves too little for OpenBLAS: %s, "
                         "and OpenBLAS 0.3.21 would wait for one forever; raise the limit to %llu MiB or more, or "
                         "use fewer threads%s",
                         fn, opt, lim / mib, used / mib, what, (used + need + mib - 1) / mib + LG__BLAS_SLACK_MIB, pool);
    if (lim)
        return lg__error(LG_ENOMEM,
                         "%s: the %s of %llu MiB leaves too little for OpenBLAS: %s, and OpenBLAS 0.3.21 "
                         "would wait for one forever; raise the limit by %llu MiB or more, or use fewer threads%s",
                         fn, opt, lim / mib, what, need / mib, pool);
    return lg__error(LG_ENOMEM,
                     "%s: the system refused the address space OpenBLAS needs (vm.overcommit_memory=2?): %s, and "
                     "OpenBLAS 0.3.21 would wait for one forever; free memory or use fewer threads%s",
                     fn, what, pool);
}

lg_status lg__blas_usable(const char *fn) {
    LG_CHECK(lg__blas_core_usable(fn));
    return lg__blas_room(fn);
}

int lg_set_threads(int n) {
    if (n <= 0) n = LG_MAX(omp_get_max_threads(), 1); /* libgomp's int wraps OMP_NUM_THREADS=2147483648 */
    if (n > LG_MAX_THREADS) n = LG_MAX_THREADS;
    omp_set_num_threads(n);
    openblas_set_num_threads(1);
    return n;
}
