/* The graph-transformer kernels in float (gt_impl.h). */
#define LG_REAL_F32
#include "attention/gt_impl.h"
