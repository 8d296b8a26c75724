/* What the population kernel's compile reads of many genomes' records at once (records.c). */
#ifndef NEATPAR_RECORDS_H
#define NEATPAR_RECORDS_H

#include "state.h"

PyObject *enabled_links(PyObject *mod, PyObject *list);
PyObject *all_links(PyObject *mod, PyObject *list);
PyObject *node_table(PyObject *mod, PyObject *args);

#endif
