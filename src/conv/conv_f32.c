/* The GCN / GIN / GGNN / GCNII kernels in float (conv_impl.h). */
#define LG_REAL_F32
#include "conv/conv_impl.h"
