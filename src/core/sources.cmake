list(APPEND LG_SOURCES src/core/status.c src/core/alloc.c src/core/rng.c src/core/blas.c)
