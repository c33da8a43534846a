/* The OpenBLAS core-type check (see lg_blas_check in lipgnn/core.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>
#include <omp.h>

#include "core/internal.h"

/* Core types in increasing order of what they need of the CPU; OpenBLAS's
 * names (its DYNAMIC_ARCH list). The sgemm of each is faster than the ones
 * before it on a CPU that can run it. */
static const char *const lg__cores[] = {"Prescott", "Core2", "Nehalem", "Sandybridge",
                                        "Haswell", "SkylakeX", "Cooperlake"};

static int lg__core_rank(const char *name) {
    for (int k = 0; k < (int)(sizeof lg__cores / sizeof *lg__cores); k++)
        if (strcmp(name, lg__cores[k]) == 0) return k;
    return -1; /* an AMD or other type we do not rank: leave it alone */
}

/* The best core type this CPU can run, from CPUID. */
static const char *lg__best_core(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512cd"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
    if (__builtin_cpu_supports("avx")) return "Sandybridge";
    return "";
}

static void lg__copy(char *dst, size_t cap, const char *src) {
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = '\0';
}

void lg_blas_check(lg_blas_info *info) {
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
}

int lg_set_threads(int n) {
    if (n <= 0) n = omp_get_max_threads();
    omp_set_num_threads(n);
    openblas_set_num_threads(1);
    return n;
}
