/* The GAT kernels in float (gat_impl.h). */
#define LG_REAL_F32
#include "attention/gat_impl.h"
