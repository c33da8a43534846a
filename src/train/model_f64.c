/* The model stack in double (finite-difference checks). */
#define LG_REAL_F64
#include "train/model_impl.h"
