/* The GAT forward and backward in float at one head of 32 (the shape
 * variant, att_common_impl.h: LG__ATT_SHAPE_K, _C), compiled for AVX2
 * (the flags in sources.cmake); gat_f32.c dispatches. */
#if defined(__x86_64__) && defined(__GNUC__) /* core/isa.h's LG__ISA_X86 (defined before it is included) */
#define LG_REAL_F32
#define LG__ISA_FILE _avx2
#define LG__ATT_SHAPE_K 1
#define LG__ATT_SHAPE_C 32
#include "attention/gat_impl.h"
#else
typedef int lg__gat_f32_avx2_k1c32_empty; /* ISO C: a translation unit is not empty */
#endif
