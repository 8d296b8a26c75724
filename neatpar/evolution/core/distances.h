/* Distances (DefaultGenome.distance) and grids of them on several threads (distances.c). */
#ifndef NEATPAR_DISTANCES_H
#define NEATPAR_DISTANCES_H

#include "genes.h"

/* Distance scratch: per gene of the first genome, its position in the second, or -1 */
typedef struct {
    int32_t *match;
    Py_ssize_t cap;
} Scratch;

/* Dense numbers for the node keys and the connection keys of every genome in one speciation
   (each gene's in its View's nid / cid): a row genome's gene positions then go into arrays indexed
   by number, and matching a column genome's genes against them is one load per gene. */
typedef struct {
    Py_ssize_t nodes, conns;
} IdCounts;

double genes_distance(const Genes *ga, const Genes *gb, double cdc, double cwc, Scratch *s);
int prepare_distance(Genes *g, Scratch *s);
int number_genes(Genes **all, Py_ssize_t count, IdCounts *ids);
int grid_compute(int threads, Genes **rows, Py_ssize_t nrows, Genes **cols, Py_ssize_t ncols, double *out,
                 Py_ssize_t scratch, const IdCounts *ids, double cdc, double cwc);

#endif
