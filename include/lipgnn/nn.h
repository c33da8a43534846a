/* lipgnn/nn.h: placeholder, being written. Part of <lipgnn.h>. */
#ifndef LIPGNN_NN_H
#define LIPGNN_NN_H
#include "lipgnn/graph.h"
#endif
