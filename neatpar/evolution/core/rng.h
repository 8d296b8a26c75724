/* Draws from Python's own `random` generator (rng.c). */
#ifndef NEATPAR_RNG_H
#define NEATPAR_RNG_H

#include "state.h"

#define MT_N 624
#define MT_M 397

typedef struct {
    PyObject_HEAD
    int index;
    uint32_t state[MT_N];
} RandomMirror;

typedef struct {
    CoreState *st;           /* the module state: the generator, its attributes' names */
    PyObject *inst;          /* random._inst (borrowed from the module state) */
    int *index;              /* points into the generator, or into `copy` */
    uint32_t *mt;
    int has_gauss;           /* gauss_next is a float, not None */
    double gauss_next;
    int in_place;
    RandomMirror copy;       /* used when the layout check failed */
} Rng;

int bit_length(uint64_t n);
uint32_t rng_u32(Rng *r);
double rng_random(Rng *r);
Py_ssize_t rng_below(Rng *r, Py_ssize_t n);
Py_ssize_t rng_choice(Rng *r, Py_ssize_t n);
double rng_uniform(Rng *r, double a, double b);
double rng_gauss(Rng *r, double mu, double sigma);
int rng_layout_ok(PyObject *random_module);
int rng_begin(Rng *r, CoreState *st);
int rng_end(Rng *r);

#endif
