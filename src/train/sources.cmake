list(APPEND LG_SOURCES src/train/checkpoint.c src/train/optim.c)
