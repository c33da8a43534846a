/* The L2-attention kernels in double (l2att_impl.h). */
#define LG_REAL_F64
#include "attention/l2att_impl.h"
