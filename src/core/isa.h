/*
 * Kernels compiled three times: for baseline x86-64 (SSE2), AVX2 and AVX-512
 * (F, DQ, BW, VL), the variant chosen at run time from CPUID (lg_kernel_isa).
 * The body of such a kernel is written once, as an always-inline function
 * NAME_body; LG__ISA_VARIANTS makes NAME_base, NAME_avx2 and NAME_avx512 from
 * it (the compiler vectorises the same source for each instruction set),
 * LG__ISA_PICK(NAME) is the one to call. All give the same bits: element-wise
 * work only, no reassociation, and no FMA contraction (-ffp-contract=off).
 * Valgrind 3.19 masks AVX-512 in CPUID, so under it the AVX2 (or baseline)
 * variant runs. Not installed.
 */
#ifndef LG_CORE_ISA_H
#define LG_CORE_ISA_H

#include "core/internal.h"

#define LG__CAT_(a, b) a##b
#define LG__CAT(a, b) LG__CAT_(a, b)

#if defined(__x86_64__) && defined(__GNUC__)
#define LG__ISA_X86 1
#define LG__TARGET_AVX2 __attribute__((target("avx2")))
#define LG__TARGET_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
#else
#define LG__ISA_X86 0
#define LG__TARGET_AVX2
#define LG__TARGET_AVX512
#endif

/* The variants, in order: what lg__isa_level returns. */
enum { LG__ISA_BASE = 0, LG__ISA_AVX2 = 1, LG__ISA_AVX512 = 2 };

#define LG__ALWAYS_INLINE static inline __attribute__((always_inline))

/* The variant that runs (LG__ISA_BASE, _AVX2 or _AVX512; see lg_kernel_isa).
 * Cheap: a global read after the first call. */
int lg__isa_level(void);

#if LG__ISA_X86
#define LG__ISA_VARIANTS(name, params, args)                                             \
    static void LG__CAT(name, _base) params { LG__CAT(name, _body) args; }               \
    LG__TARGET_AVX2 static void LG__CAT(name, _avx2) params { LG__CAT(name, _body) args; } \
    LG__TARGET_AVX512 static void LG__CAT(name, _avx512) params { LG__CAT(name, _body) args; }
#define LG__ISA_PICK(name)                                                                   \
    (lg__isa_level() == LG__ISA_AVX512 ? LG__CAT(name, _avx512)                              \
     : lg__isa_level() == LG__ISA_AVX2 ? LG__CAT(name, _avx2)                                \
                                       : LG__CAT(name, _base))
#else
#define LG__ISA_VARIANTS(name, params, args)                                             \
    static void LG__CAT(name, _base) params { LG__CAT(name, _body) args; }
#define LG__ISA_PICK(name) LG__CAT(name, _base)
#endif

#endif /* LG_CORE_ISA_H */
