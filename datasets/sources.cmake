list(APPEND LG_SOURCES datasets/mtx.c datasets/dataset.c datasets/trees.c datasets/sbm.c)
