/*
 * The population kernel's tables (_kernel.c's layout: genome_start, node_slot, link_start,
 * link_src, link_w) of ES-HyperNEAT's discovered networks, built genome after genome in C, so that
 * a population's networks cost no Python per genome (es_tables.c).
 */
#ifndef NEATPAR_ES_TABLES_H
#define NEATPAR_ES_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* One discovered network: nodes numbered inputs, outputs, then hidden; its links in any order. */
typedef struct {
    const double *hidden;     /* n_hidden (x, y) pairs */
    const int64_t *sources, *targets;
    const double *weights;
    int64_t n_hidden, n_links;
} EsNetwork;

/* The tables of the networks added so far, and the scratch space of the next one. */
typedef struct {
    int64_t n_in, n_out;
    const double *fixed_y;     /* the y of the inputs, then of the outputs */
    int64_t *genome_start, *link_start;
    int32_t *node_slot, *link_src;
    double *link_w;
    size_t genomes, nodes, links;
    size_t genome_start_cap, link_start_cap, node_slot_cap, link_src_cap, link_w_cap;
    int64_t stride;            /* the most slots a network uses (inputs and outputs at least) */
    void *order, *by_node;     /* scratch: nodes by (y, key); links by (node, source) */
    int64_t *position;         /* scratch: a node's place in its network's order, -1 for none */
    size_t order_cap, by_node_cap, position_cap;
} EsTables;

/* Empty tables for networks of n_in inputs and n_out outputs whose y are fixed_y (kept, not
 * copied); 0 when out of memory. */
int es_tables_init(EsTables *t, int64_t n_in, int64_t n_out, const double *fixed_y);

/* Append network `net`: each node a link enters, the inputs' aside, in order of (y, key), its
 * links by source (links into inputs are left out). 1 when done, 0 when out of memory, -1 when a
 * link names a node the network does not have. */
int es_tables_add(EsTables *t, const EsNetwork *net);

/* Release every array; the tables' fields are then empty. */
void es_tables_free(EsTables *t);

#endif
