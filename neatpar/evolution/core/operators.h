/* neat-python's genome operators on records: configure_new, crossover, mutate (operators.c). */
#ifndef NEATPAR_OPERATORS_H
#define NEATPAR_OPERATORS_H

#include "config.h"
#include "genes.h"
#include "rng.h"

int begin(CoreState *st, Rng *r);
int fitter_first(PyObject *f1, PyObject *f2);
int crossover_genes(Rng *r, const Cfg *c, Genes *g, Genes *p1, Genes *p2);
int crossover(Rng *r, const Cfg *c, Genes *g, PyObject *genome1, PyObject *genome2, PyObject *snapshots);
int mutate(Rng *r, const Cfg *c, Genes *g);
int configure_new(Rng *r, const Cfg *c, Genes *g, const char *kind);

#endif
