/* The model stack in float (training). */
#define LG_REAL_F32
#include "train/model_impl.h"
