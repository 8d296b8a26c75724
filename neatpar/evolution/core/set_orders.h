/* The orders of the sets the operators walk: re-enacted, or computed by real sets (set_orders.c). */
#ifndef NEATPAR_SET_ORDERS_H
#define NEATPAR_SET_ORDERS_H

#include "genes.h"
#include "pyset.h"

int check_sets(CoreState *st);
Py_ssize_t possible_inputs_order(CoreState *st, const int64_t *nodes, Py_ssize_t nn, const int64_t *outputs,
                                 Py_ssize_t no, const int64_t *inputs, Py_ssize_t ni, int64_t *dst);
int innovation_union(CoreState *st, const Genes *p1, const Genes *p2, PSet *s1, PSet *s2, PSet *u, int64_t *order,
                     Py_ssize_t *n_order);
PyObject *emulated_union(PyObject *mod, PyObject *args);
PyObject *emulated_inputs(PyObject *mod, PyObject *args);

#endif
