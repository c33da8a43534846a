list(APPEND LG_SOURCES src/attention/gat.c src/attention/gat_f32.c src/attention/gat_f64.c)
list(APPEND LG_SOURCES src/attention/gt_common.c src/attention/gt_f32.c src/attention/gt_f64.c)
list(APPEND LG_SOURCES src/attention/cosatt.c src/attention/cosatt_f32.c src/attention/cosatt_f64.c)
