/* The GAT forward and backward in float at one head of 32 (the shape
 * variant, att_common_impl.h: LG__ATT_SHAPE_K, _C), baseline instruction set;
 * gat_f32.c dispatches. */
#define LG_REAL_F32
#define LG__ISA_FILE _base
#define LG__ATT_SHAPE_K 1
#define LG__ATT_SHAPE_C 32
#include "attention/gat_impl.h"
