/* lg__gemm in float. */
#define LG_REAL_F32
#include "core/gemm_impl.h"
