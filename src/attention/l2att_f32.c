/* The L2-attention kernels in float (l2att_impl.h). */
#define LG_REAL_F32
#include "attention/l2att_impl.h"
