/* The base of the C core: Python's header and the module's state (CoreState, one per module
object), which every part reads. It declares no function of any part. */
#ifndef NEATPAR_STATE_H
#define NEATPAR_STATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* The module's state (../_core.c): one per module object, each reference it holds a strong one */
typedef struct CoreState {
    PyTypeObject *genes_type, *config_view_type;
    PyTypeObject *gene_types[2];  /* the gene objects' types (subclasses of neat-python's gene
                                     classes), NULL if this CPython lays those classes out otherwise */
    PyTypeObject *map_type, *map_view_type, *map_iter_type, *slot_type;  /* gene_maps.c */
    PyObject *neat_gene_classes[2];  /* neat.genes.DefaultNodeGene, DefaultConnectionGene */
    PyObject *reconstructor;     /* copyreg._reconstructor: a gene object without a key, pickled */
    PyObject *names;             /* list: id -> activation/aggregation name */
    PyObject *name_ids;          /* dict: name -> id */
    PyObject *node_gene_type, *conn_gene_type;                  /* from setup() */
    PyObject *node_attribute_list, *conn_attribute_list;        /* their _gene_attributes, as checked */
    PyObject *genome_class, *plain_class_fn, *plain_types;      /* neatpar's DefaultGenome; cls -> bool */
    PyObject *tracker_class;     /* neat-python's InnovationTracker, whose bookkeeping is done here */
    PyObject *reference_union, *reference_inputs, *sets_check;
    PyObject *random_module, *random_inst, *count_type;          /* random, random._inst, itertools.count */
    PyObject *genes_from_state_fn;  /* the module's _genes_from_state, for pickling */
    int rng_in_place;            /* -1: not checked yet */
    int sets_emulated;           /* -1: not checked yet */
    int distance_threads;        /* threads that compute a speciation's distances */
    PyObject *empty_tuple, *one;
    PyObject *str_genes, *str_nodes, *str_connections, *str_key, *str_fitness, *str_innovation,
        *str_weight, *str_enabled, *str_bias, *str_response, *str_activation, *str_aggregation,
        *str_time_constant, *str_node_indexer, *str_innovation_tracker, *str_add_node_in,
        *str_add_node_out, *str_add_connection, *str_initial_connection, *str_gauss_next, *str_getstate;
} CoreState;

/* A function in one of CPython's slot tables (PyType_Slot, PyModuleDef_Slot), whose field is a
   void *: ISO C converts a function pointer to an integer, not to a void * (CPython converts it back). */
#define SLOT_FN(f) ((void *)(uintptr_t)(f))

/* The state of this module object (every entry point's first line). A one-line inline: entry
   points run once per call from Python, often in a genome's inner loop. */
static inline CoreState *core_state(PyObject *module) { return (CoreState *)PyModule_GetState(module); }

#endif
