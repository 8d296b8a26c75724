/* DefaultReproduction.reproduce's children, and a species' members ranked (reproduction.c). */
#ifndef NEATPAR_REPRODUCTION_H
#define NEATPAR_REPRODUCTION_H

#include "state.h"

PyObject *py_breed(PyObject *mod, PyObject *args);
PyObject *py_ranked(PyObject *mod, PyObject *members);
PyObject *py_members_of(PyObject *mod, PyObject *args);

#endif
