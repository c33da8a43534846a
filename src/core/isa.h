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

/* Whole kernel files in variants: the attention layers' forward and backward,
 * whose per-edge loops sit inside their OpenMP regions, are written once in
 * an impl file and named LG__ISA_FN(LG_FN(lg__NAME)) there. Compiled with
 * LG__ISA_FILE defined as _avx2 or _avx512 (and that instruction set's -m
 * flags, src/attention/sources.cmake), they become lg__NAME_f32_avx2 and so
 * on, and the file holds only them; compiled with LG__ISA_DISPATCH (the float
 * build), lg__NAME_f32_base; without either (the double build), lg__NAME_f64.
 * LG__ISA_PUBLIC(ret, pub, impl, params, args) then defines the public
 * function pub params (named parameters; args: the names, parenthesised),
 * which calls the variant of impl that lg__isa_level picks (declaring the
 * other files' variants first), or impl itself in the double build. The same
 * bits as the element-wise kernels above: the compiler only vectorises the
 * same source wider (fixed-order sums, no FMA contraction, the same libm). */
#if defined(LG__ISA_FILE)
#define LG__ISA_FN(name) LG__CAT(name, LG__ISA_FILE)
#elif defined(LG__ISA_DISPATCH)
#define LG__ISA_FN(name) LG__CAT(name, _base)
#if LG__ISA_X86 /* the declarations of impl's variants in the other files */
#define LG__ISA_DECL_OTHERS(ret, impl, params) \
    ret LG__CAT(impl, _avx2) params;           \
    ret LG__CAT(impl, _avx512) params;
#else
#define LG__ISA_DECL_OTHERS(ret, impl, params)
#endif
#define LG__ISA_DECL_ALL(ret, impl, params) \
    ret LG__CAT(impl, _base) params;        \
    LG__ISA_DECL_OTHERS(ret, impl, params)
#define LG__ISA_PUBLIC(ret, pub, impl, params, args) \
    LG__ISA_DECL_OTHERS(ret, impl, params)           \
    ret pub params { return LG__ISA_PICK(impl) args; }
/* one step of a shape dispatcher: the shaped variant's call when cond holds */
#define LG__ISA_SHAPE_TRY(shaped, cond, args) \
    if ((cond) && lg__shape_variants()) return LG__ISA_PICK(shaped) args;
#define LG__ISA_PUBLIC_SHAPE(ret, pub, impl, shaped, cond, params, args) \
    LG__ISA_DECL_OTHERS(ret, impl, params)                               \
    LG__ISA_DECL_ALL(ret, shaped, params)                                \
    ret pub params {                                                     \
        LG__ISA_SHAPE_TRY(shaped, cond, args)                            \
        return LG__ISA_PICK(impl) args;                                  \
    }
#define LG__ISA_PUBLIC_SHAPE3(ret, pub, impl, shaped1, cond1, shaped2, cond2, shaped3, cond3, params, args) \
    LG__ISA_DECL_OTHERS(ret, impl, params)                                                                  \
    LG__ISA_DECL_ALL(ret, shaped1, params)                                                                  \
    LG__ISA_DECL_ALL(ret, shaped2, params)                                                                  \
    LG__ISA_DECL_ALL(ret, shaped3, params)                                                                  \
    ret pub params {                                                                                        \
        LG__ISA_SHAPE_TRY(shaped1, cond1, args)                                                             \
        LG__ISA_SHAPE_TRY(shaped2, cond2, args)                                                             \
        LG__ISA_SHAPE_TRY(shaped3, cond3, args)                                                             \
        return LG__ISA_PICK(impl) args;                                                                     \
    }
#else
#define LG__ISA_FN(name) name
#define LG__ISA_PUBLIC(ret, pub, impl, params, args) \
    ret pub params { return impl args; }
#define LG__ISA_PUBLIC_SHAPE(ret, pub, impl, shaped, cond, params, args) \
    ret pub params { return impl args; }
#define LG__ISA_PUBLIC_SHAPE3(ret, pub, impl, shaped1, cond1, shaped2, cond2, shaped3, cond3, params, args) \
    ret pub params { return impl args; }
#endif

/* Shape variants: a kernel file compiled once more per instruction set with
 * some of its run-time sizes fixed at compile time (the attention layers at
 * one head of 64, and GAT at 8 heads of 64 and one head of 32:
 * src/attention/att_common_impl.h,
 * LG__ATT_SHAPE_K and _C), so that the compiler unrolls the per-edge loops
 * over a row and the loops over heads and channels. The same source and the
 * same order of every operation: the same bits as the general variant
 * (test_gat, test_gt). LG__ISA_PUBLIC_SHAPE(ret, pub, impl, shaped, cond,
 * params, args) is LG__ISA_PUBLIC that calls the shaped variant when cond (an
 * expression of the arguments) holds; LG__ISA_PUBLIC_SHAPE3 the same with three
 * shaped variants, tried in order.
 * lg__shape_variants() is 1 unless lg__set_shape_variants(0) turned them off
 * (tests, to compare the two; not thread-safe: set before the calls). */
int lg__shape_variants(void);
void lg__set_shape_variants(int on);

#endif /* LG_CORE_ISA_H */
