/* genome.nodes and genome.connections over a genome's records, as dicts (gene_maps.c). */
#ifndef NEATPAR_GENE_MAPS_H
#define NEATPAR_GENE_MAPS_H

#include "genes.h"

/* genome.nodes or genome.connections of a genome whose genes are records */
typedef struct {
    PyObject_HEAD
    Genes *g;                    /* strong */
    int kind;                    /* NODE_GENES or CONN_GENES */
} GeneMap;

int make_map_types(PyObject *module, CoreState *st);
PyObject *genes_map(Genes *g, int kind);
PyObject *py_genes_slot(PyObject *mod, PyObject *args);

#endif
