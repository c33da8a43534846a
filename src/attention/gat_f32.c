/* The GAT kernels in float (gat_impl.h): everything, forward and backward as
 * their baseline variant, and the dispatchers to the instruction-set variants
 * (gat_f32_avx2.c, gat_f32_avx512.c). */
#define LG_REAL_F32
#define LG__ISA_DISPATCH
#include "attention/gat_impl.h"
