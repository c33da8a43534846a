/*
 * The Lipschitz estimator's two searches over any map f: R^n_in -> R^n_out
 * given by its forward and the transposed Jacobian at the last forward's
 * input (lipschitz.c runs them on the blocks of a model; the tests on single
 * layers too). Not installed.
 */
#ifndef LG_TRAIN_LIPSCHITZ_INTERNAL_H
#define LG_TRAIN_LIPSCHITZ_INTERNAL_H

#include "lipgnn.h"

/* A map in double precision. */
typedef struct lg__lip_map {
    lg_idx n_in, n_out; /* flattened sizes of its input and output           */
    void *ctx;          /* passed to both functions                          */
    /* out (n_out) = f(in (n_in)); keeps what backward needs */
    lg_status (*forward)(void *ctx, const double *in, double *out);
    /* d_in (n_in, overwritten) = J^T d_out, J = f's Jacobian at the input of
       the last forward */
    lg_status (*backward)(void *ctx, const double *d_out, double *d_in);
} lg__lip_map;

/* Power iteration on J^T J at x0: v unit and random (from rng), then iters
 * times: u = (f(x0 + h v) - f(x0 - h v)) / 2h (h = 1e-6 max(1, ||x0||)),
 * w = J^T u (backward at x0), v = w / ||w||; stops early once ||u|| changes by
 * less than 1e-9 relatively. *est = the largest ||u|| seen (each a difference
 * quotient of f: a lower bound of its Lipschitz constant). *steps (or NULL) =
 * the iterations run. Cost per step: 3 forwards, 1 backward. */
lg_status lg__lip_power(double *est, int *steps, const lg__lip_map *f, const double *x0, int iters, lg_rng *rng);

/* Gradient ascent of R(x, y) = ||f(x) - f(y)|| / ||x - y|| from `starts`
 * random starts: x = x0 + radius max(||x0||, 1) xi, y = x + 0.1 radius
 * max(||x0||, 1) eta (xi, eta random unit directions), then up to iters
 * steps along the normalised gradient (from the backward at x and at y) of
 * length t ||x - y||, t adapted by a line search (accept an increase, grow t;
 * otherwise halve t, at most 10 times). *best = the largest R seen (a lower
 * bound of f's Lipschitz constant). Cost per step: about 3 forwards and 2
 * backwards. */
lg_status lg__lip_ascent(double *best, const lg__lip_map *f, const double *x0, int starts, int iters, double radius,
                         lg_rng *rng);

#endif
