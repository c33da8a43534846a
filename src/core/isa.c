/* The instruction set of lipgnn's own kernels (core/isa.h, lipgnn/core.h). */
#include <stdlib.h>
#include <string.h>

#include "core/isa.h"

/* -1: not decided yet; else LG__ISA_BASE, LG__ISA_AVX2 or LG__ISA_AVX512 */
static int lg__isa = -1;

static const char *const lg__isa_names[] = {"baseline", "avx2", "avx512"};

/* The best variant CPUID allows: AVX-512 needs F, DQ, BW and VL, AVX2 needs
 * AVX2 (__builtin_cpu_supports also checks, through XGETBV, that the OS saves
 * the registers). */
static int lg__cpu_level(void) {
#if LG__ISA_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        return LG__ISA_AVX512;
    if (__builtin_cpu_supports("avx2")) return LG__ISA_AVX2;
#endif
    return LG__ISA_BASE;
}

/* The level named name, or -1 ("auto" is not a level). */
static int lg__isa_named(const char *name) {
    for (int v = 0; v < 3; v++)
        if (strcmp(name, lg__isa_names[v]) == 0) return v;
    return -1;
}

int lg__isa_level(void) {
    int v = __atomic_load_n(&lg__isa, __ATOMIC_RELAXED);
    if (v < 0) {
        /* LIPGNN_ISA=baseline|avx2 caps the level; anything else: CPUID's */
        const char *e = getenv("LIPGNN_ISA");
        const int cap = e ? lg__isa_named(e) : -1;
        v = lg__cpu_level();
        if (cap >= 0 && cap < v) v = cap;
        __atomic_store_n(&lg__isa, v, __ATOMIC_RELAXED);
    }
    return v;
}

const char *lg_kernel_isa(void) { return lg__isa_names[lg__isa_level()]; }

void lg_kernel_isa_info(lg_isa_info *info) {
    if (!info) return;
    const char *e = getenv("LIPGNN_ISA");
    info->chosen = lg_kernel_isa();
    info->cpu = lg__isa_names[lg__cpu_level()];
    info->env = e && e[0] ? e : NULL;
    info->env_valid = info->env && (lg__isa_named(e) >= 0 || strcmp(e, "auto") == 0);
}

lg_status lg_set_kernel_isa(const char *name) {
    if (!name) return lg__error(LG_EINVAL, "lg_set_kernel_isa: name is NULL");
    int v = strcmp(name, "auto") == 0 ? lg__cpu_level() : lg__isa_named(name);
    if (v < 0) return lg__error(LG_EINVAL, "lg_set_kernel_isa: '%s' is not auto, baseline, avx2 or avx512", name);
    if (v > lg__cpu_level())
        return lg__error(LG_EUNSUPPORTED, "lg_set_kernel_isa: this CPU (as CPUID reports it) lacks %s", name);
    __atomic_store_n(&lg__isa, v, __ATOMIC_RELAXED);
    return LG_OK;
}

/* 1: the attention layers' shape variants run where they apply (core/isa.h) */
static int lg__shapes_on = 1;

int lg__shape_variants(void) { return __atomic_load_n(&lg__shapes_on, __ATOMIC_RELAXED); }

void lg__set_shape_variants(int on) { __atomic_store_n(&lg__shapes_on, on ? 1 : 0, __ATOMIC_RELAXED); }
