/* neat/graphs.py's creates_cycle, and whether a genome's whole graph has a cycle (graphs.c). */
#ifndef NEATPAR_GRAPHS_H
#define NEATPAR_GRAPHS_H

#include "genes.h"

int creates_cycle(const Genes *g, int64_t i, int64_t o);
int is_acyclic(Genes *g);

#endif
