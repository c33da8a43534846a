/* lg__gemm in float, and the benchmark trace hook (core/gemm.h). */
#define LG_REAL_F32
#include "core/gemm_impl.h"

lg__gemm_log *lg__gemm_trace = NULL;
