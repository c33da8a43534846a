list(APPEND LG_SOURCES src/train/checkpoint.c)
