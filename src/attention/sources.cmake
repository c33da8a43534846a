list(APPEND LG_SOURCES src/attention/att_cache.c)
list(APPEND LG_SOURCES src/attention/gat.c src/attention/gat_f32.c src/attention/gat_f64.c)
list(APPEND LG_SOURCES src/attention/gt_common.c src/attention/gt_f32.c src/attention/gt_f64.c)
list(APPEND LG_SOURCES src/attention/l2att.c src/attention/l2att_f32.c src/attention/l2att_f64.c)
list(APPEND LG_SOURCES src/attention/cosatt.c src/attention/cosatt_f32.c src/attention/cosatt_f64.c)
# the attention layers' forward and backward in instruction-set variants (core/isa.h, LG__ISA_FILE)
list(APPEND LG_SOURCES src/attention/gat_f32_avx2.c src/attention/gat_f32_avx512.c)
list(APPEND LG_SOURCES src/attention/gt_f32_avx2.c src/attention/gt_f32_avx512.c)
# and again at one head of 64, and GAT at 8 heads of 64 and one head of 32 (the
# shape variants, att_common_impl.h: LG__ATT_SHAPE_K, _C)
list(APPEND LG_SOURCES src/attention/gat_f32_k1c64.c src/attention/gat_f32_avx2_k1c64.c
                       src/attention/gat_f32_avx512_k1c64.c)
list(APPEND LG_SOURCES src/attention/gat_f32_k8c64.c src/attention/gat_f32_avx2_k8c64.c
                       src/attention/gat_f32_avx512_k8c64.c)
list(APPEND LG_SOURCES src/attention/gat_f32_k1c32.c src/attention/gat_f32_avx2_k1c32.c
                       src/attention/gat_f32_avx512_k1c32.c)
list(APPEND LG_SOURCES src/attention/gt_f32_k1c64.c src/attention/gt_f32_avx2_k1c64.c
                       src/attention/gt_f32_avx512_k1c64.c)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set_source_files_properties(src/attention/gat_f32_avx2.c src/attention/gt_f32_avx2.c
                              src/attention/gat_f32_avx2_k1c64.c src/attention/gt_f32_avx2_k1c64.c
                              src/attention/gat_f32_avx2_k8c64.c src/attention/gat_f32_avx2_k1c32.c PROPERTIES
                              COMPILE_OPTIONS "-mavx2")
  set_source_files_properties(src/attention/gat_f32_avx512.c src/attention/gt_f32_avx512.c
                              src/attention/gat_f32_avx512_k1c64.c src/attention/gt_f32_avx512_k1c64.c
                              src/attention/gat_f32_avx512_k8c64.c src/attention/gat_f32_avx512_k1c32.c PROPERTIES
                              COMPILE_OPTIONS "-mavx512f;-mavx512dq;-mavx512bw;-mavx512vl")
endif()
