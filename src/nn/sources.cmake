list(APPEND LG_SOURCES src/nn/nn_common.c src/nn/sparse.c src/nn/nn_f32.c src/nn/nn_f64.c)
