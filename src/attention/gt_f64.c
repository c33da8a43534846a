/* The graph-transformer kernels in double, for the finite-difference checks (gt_impl.h). */
#define LG_REAL_F64
#include "attention/gt_impl.h"
