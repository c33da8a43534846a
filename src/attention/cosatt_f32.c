/* The cosine-attention kernels in float (cosatt_impl.h). */
#define LG_REAL_F32
#include "attention/cosatt_impl.h"
