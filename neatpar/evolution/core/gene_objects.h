/* Gene objects over a genome's records: neat-python's gene classes' interface (gene_objects.c). */
#ifndef NEATPAR_GENE_OBJECTS_H
#define NEATPAR_GENE_OBJECTS_H

#include "genes.h"

int make_gene_types(PyObject *module, CoreState *st);
PyObject *gene_at(Genes *g, int kind, Py_ssize_t pos);
PyObject *gene_key(PyObject *gene);
PyObject *int_pair(int64_t a, int64_t b);
void gene_written(Genes *g, int kind, Py_ssize_t pos);
int gene_values(CoreState *st, PyObject *gene, int kind, void *record);
int gene_adoptable(CoreState *st, PyObject *gene, int kind, const void *key_record);
int gene_adopt(Genes *g, int kind, Py_ssize_t pos, PyObject *gene);

#endif
