list(APPEND LG_SOURCES src/train/batch.c src/train/checkpoint.c src/train/lipschitz.c src/train/optim.c src/train/model_f32.c src/train/model_f64.c src/train/trainer.c)
# Adam's loop vectorises only without errno's branch after sqrtf (src/train/optim.c)
set_source_files_properties(src/train/optim.c PROPERTIES COMPILE_OPTIONS "-fno-math-errno")
