/* The GCN / GIN / GGNN / GCNII kernels in double, for the finite-difference checks (conv_impl.h). */
#define LG_REAL_F64
#include "conv/conv_impl.h"
