/* The instruction set of lipgnn's own kernels (core/isa.h, lipgnn/core.h). */
#include <stdlib.h>
#include <string.h>

#include "core/isa.h"

/* -1: not decided yet; 0: baseline; 1: AVX-512 */
static int lg__isa = -1;

/* 1 if CPUID reports AVX-512 F, DQ, BW and VL (and the OS saves the
 * registers: __builtin_cpu_supports checks XGETBV too). */
static int lg__cpu_avx512(void) {
#if LG__ISA_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
    return 0;
#endif
}

int lg__isa_avx512(void) {
    int v = __atomic_load_n(&lg__isa, __ATOMIC_RELAXED);
    if (v < 0) {
        const char *e = getenv("LIPGNN_ISA");
        v = e && strcmp(e, "baseline") == 0 ? 0 : lg__cpu_avx512();
        __atomic_store_n(&lg__isa, v, __ATOMIC_RELAXED);
    }
    return v;
}

const char *lg_kernel_isa(void) { return lg__isa_avx512() ? "avx512" : "baseline"; }

lg_status lg_set_kernel_isa(const char *name) {
    if (!name) return lg__error(LG_EINVAL, "lg_set_kernel_isa: name is NULL");
    int v;
    if (strcmp(name, "baseline") == 0) v = 0;
    else if (strcmp(name, "auto") == 0) v = lg__cpu_avx512();
    else if (strcmp(name, "avx512") == 0) {
        if (!lg__cpu_avx512())
            return lg__error(LG_EUNSUPPORTED, "lg_set_kernel_isa: this CPU (as CPUID reports it) lacks AVX-512 F/DQ/BW/VL");
        v = 1;
    } else {
        return lg__error(LG_EINVAL, "lg_set_kernel_isa: '%s' is not auto, baseline or avx512", name);
    }
    __atomic_store_n(&lg__isa, v, __ATOMIC_RELAXED);
    return LG_OK;
}
