/* lipgnn/gat.h: placeholder, being written. Part of <lipgnn.h>. */
#ifndef LIPGNN_GAT_H
#define LIPGNN_GAT_H
#include "lipgnn/graph.h"
#endif
