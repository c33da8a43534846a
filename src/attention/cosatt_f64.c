/* The cosine-attention kernels in double (cosatt_impl.h). */
#define LG_REAL_F64
#include "attention/cosatt_impl.h"
