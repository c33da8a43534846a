/* The graph-transformer kernels in float (gt_impl.h): everything, forward and
 * backward as their baseline variant, and the dispatchers to the
 * instruction-set variants (gt_f32_avx2.c, gt_f32_avx512.c). */
#define LG_REAL_F32
#define LG__ISA_DISPATCH
#include "attention/gt_impl.h"
