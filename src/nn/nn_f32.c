/* The src/nn kernels in single precision (see core/real.h). */
#define LG_REAL_F32
#include "nn/linear_impl.h"
#include "nn/activation_impl.h"
#include "nn/pairnorm_impl.h"
#include "nn/layernorm_impl.h"
#include "nn/loss_impl.h"
#include "nn/spectral_impl.h"
#include "nn/centernorm_impl.h"
