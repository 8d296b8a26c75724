/*
 * ES-HyperNEAT's search of one genome's CPPN at a time (es_search.c): the hidden nodes and links
 * of its substrate network, as PUREPLES' ESNetwork finds them. Include after Python.h.
 */
#ifndef NEATPAR_ES_SEARCH_H
#define NEATPAR_ES_SEARCH_H

#include <stdint.h>

enum { ES_CPPN_TABLES = 9, ES_CPPN_INPUTS = 5 };   /* the CPPN's tables; its inputs x1, y1, x2, y2, 1.0 */

/* A population's CPPN tables, as their buffers hold them (see _kernel.c). */
typedef struct {
    const int64_t *genome_start, *link_start;
    const int32_t *node_slot, *link_src;
    const int8_t *node_act, *node_agg;
    const double *node_bias, *node_resp, *link_w;
} EsCppn;

/* The search's parameters (neatpar/nn/es_substrate.py's ESParams). */
typedef struct {
    long initial_depth, max_depth, iteration_level;
    double variance_threshold, band_threshold, division_threshold, max_weight;
} EsParams;

/* One genome's network: hidden coordinates (x, y pairs, by y then x; node keys after the inputs
 * and outputs), each link's source, target and weight, sorted by target and then source. */
typedef struct {
    double *hidden;
    int64_t *sources, *targets;
    double *weights;
    Py_ssize_t n_hidden, n_links;
} EsFound;

/* The search's state, kept from genome to genome of one population. */
typedef struct EsSearch EsSearch;

/* A search of the CPPNs of `cppn` (stride slots, at most max_fan_in links into a node); NULL when
 * out of memory. `cppn` and `params` are kept, not copied. */
EsSearch *es_search_new(const EsCppn *cppn, const EsParams *params, Py_ssize_t stride, Py_ssize_t max_fan_in);

/* The network genome `genome` of the tables finds between `inputs` and `outputs` ((x, y) pairs, no
 * two alike), into *found (es_found_free releases it); 0 when out of memory. */
int es_search_genome(EsSearch *s, int64_t genome, const double *inputs, Py_ssize_t n_in, const double *outputs,
                     Py_ssize_t n_out, EsFound *found);

void es_found_free(EsFound *found);
void es_search_free(EsSearch *s);

#endif
