list(APPEND LG_SOURCES src/conv/conv.c src/conv/conv_f32.c src/conv/conv_f64.c)
