/*
 * Internal access to a trainer's model and Adam state, for the benchmark
 * suite (bench/bench_models.c) and the PyTorch-peer export, which time and
 * check the training step (forward, backward, Adam) on the trainer's own
 * model, features and memory.
 */
#ifndef LG_TRAIN_TRAINER_INTERNAL_H
#define LG_TRAIN_TRAINER_INTERNAL_H

#include "lipgnn.h"
#include "train/model.h"

/* The trainer's model (its prepared features, graph and parameters). */
lg__model_f32 *lg__trainer_model(lg_trainer *t);

/* Adam's two moments (parameter layout, lg__model_nparams_f32 values each). */
void lg__trainer_moments(lg_trainer *t, float **m1, float **m2);

/* The features the model sees (row-normalised / masked as configured). */
const lg_features *lg__trainer_features(const lg_trainer *t);

/* The trainer's model configuration and data set (the Lipschitz estimator
 * builds a double copy of the model from them). */
const lg_model_config *lg__trainer_model_config(const lg_trainer *t);
const lg_dataset *lg__trainer_dataset(const lg_trainer *t);

#endif
