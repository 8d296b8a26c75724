/* DefaultSpeciesSet.speciate's distance work (speciation.c). */
#ifndef NEATPAR_SPECIATION_H
#define NEATPAR_SPECIATION_H

#include "state.h"

PyObject *speciate(PyObject *mod, PyObject *args);
PyObject *py_set_threads(PyObject *mod, PyObject *arg);

#endif
