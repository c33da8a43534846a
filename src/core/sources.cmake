list(APPEND LG_SOURCES src/core/status.c src/core/alloc.c src/core/file.c src/core/rng.c src/core/blas.c src/core/isa.c src/core/passtime.c src/core/gemm_f32.c src/core/gemm_f64.c)
