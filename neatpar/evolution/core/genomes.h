/* A genome's records as Python code meets them (genomes.c): the Genes type, a genome's records
read from wherever its genes are, records made into neat-python's gene objects. */
#ifndef NEATPAR_GENOMES_H
#define NEATPAR_GENOMES_H

#include "genes.h"

extern PyType_Spec genes_spec;

Genes *genes_of(CoreState *st, PyObject *genome, PyObject *snapshots);
Genes *operand(CoreState *st, PyObject *genome, int empty_only);
PyObject *genes_from_state(PyObject *mod, PyObject *args);
PyObject *py_names(PyObject *mod, PyObject *unused);
PyObject *materialize(PyObject *mod, PyObject *arg);

#endif
