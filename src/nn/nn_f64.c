/* The src/nn kernels in double precision, for the finite-difference checks
 * (see core/real.h). */
#define LG_REAL_F64
#include "nn/linear_impl.h"
#include "nn/activation_impl.h"
#include "nn/pairnorm_impl.h"
#include "nn/layernorm_impl.h"
#include "nn/loss_impl.h"
#include "nn/spectral_impl.h"
#include "nn/centernorm_impl.h"
