/* lg__gemm in double. */
#define LG_REAL_F64
#include "core/gemm_impl.h"
