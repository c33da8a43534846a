/* The GAT kernels in double, for the finite-difference checks (gat_impl.h). */
#define LG_REAL_F64
#include "attention/gat_impl.h"
