/* A genome's genes as records (genes.c): the records, their lookup views, the edits that keep a
genome's live gene objects in step, and the table of activation and aggregation names. */
#ifndef NEATPAR_GENES_H
#define NEATPAR_GENES_H

#include "state.h"

typedef struct {
    int64_t key;
    double bias, response, time_constant;
    int32_t act, agg;            /* ids in the name table */
} Node;

typedef struct {
    int64_t in, out, innov;
    double weight;
    int32_t enabled, pad;
} Conn;

typedef struct { int64_t key; int32_t pos; } NodeIdx;

typedef struct Gene Gene;     /* a gene object (gene_objects.c) */

enum { NODE_GENES = 0, CONN_GENES = 1 };   /* a genome's two kinds of genes, as indexes */

typedef struct {
    PyObject_HEAD
    Node *nodes;
    Py_ssize_t nn, node_cap;
    Conn *conns;
    Py_ssize_t nc, conn_cap;
    struct View *view;           /* the genes laid out for lookups and distances: built when first
                                    needed, dropped on any change but a gene object's attribute
                                    written (which writes it through) */
    int acyclic;                 /* -1 unknown, else whether the connection graph has no cycle */
    uint64_t stamp;              /* changes whenever a gene is added, removed or moved (iterators check it) */
    Gene **objects[2];           /* the gene objects alive, by record position (borrowed: each
                                    removes itself as it goes), or NULL; [NODE_GENES], [CONN_GENES] */
    Py_ssize_t objects_len[2];   /* the positions those arrays cover (others have no object) */
    PyObject *maps[2];           /* borrowed: the live mappings genome.nodes, genome.connections */
} Genes;

/* A gene object: neat-python's DefaultNodeGene or DefaultConnectionGene interface (a subclass of
   it) over one record of a genome's Genes, or over values of its own once it belongs to no genome
   (made by copy(), crossover(), or left by a gene its genome removed). A view holds its Genes;
   the Genes lists its live views by position and keeps their positions as records move. */
struct Gene {
    PyObject_HEAD
    void *base_weakrefs;         /* where the base class (a Python class) keeps its weak references */
    Genes *owner;                /* strong; NULL: the values below are its own */
    Py_ssize_t pos;              /* the record's position in owner */
    union { Node n; Conn c; } own;
    PyObject *key;               /* its key as an object, once made (an int or a pair of ints), or NULL */
    uint32_t set;                /* with its own values: the attributes it has (bits, below) */
    int kind;                    /* NODE_GENES or CONN_GENES */
};

/* A gene object's attributes, by kind: their bits in Gene.set, in neat-python's order (key,
   innovation, then the class's _gene_attributes), the order a pickled gene's dict keeps. */
enum { N_KEY, N_BIAS, N_RESPONSE, N_ACTIVATION, N_AGGREGATION, N_TIME_CONSTANT, N_COUNT };
enum { C_KEY, C_INNOVATION, C_WEIGHT, C_ENABLED, C_COUNT };
#define GENE_ALL(kind) ((kind) == NODE_GENES ? (1u << N_COUNT) - 1 : (1u << C_COUNT) - 1)

/* A genome's genes laid out for key lookups and distances: attribute arrays in dict order, each
   gene's key hash, open-addressing tables of positions (-1 empty), connection keys packed into one
   word (in << 32 | out) when every end fits 32 bits (`packed`). One allocation. */
typedef struct View {
    Py_ssize_t nn, nc;
    int64_t *nkey;
    double *nbias, *nresp, *ntc;
    int32_t *nact, *nagg;
    uint32_t *nhash;
    int32_t *ntable;
    uint32_t nmask;
    uint64_t *ckey;
    double *cw;
    uint32_t *chash;
    int32_t *ctable;
    uint32_t cmask;
    uint8_t *cen;
    int packed;
    int32_t *nid, *cid;          /* each gene's dense number within one speciation (number_genes) */
} View;

int32_t name_id(CoreState *st, PyObject *name);
int read_pair(PyObject *key, int64_t *in, int64_t *out);
int reserve(void **arr, Py_ssize_t *cap, Py_ssize_t need, size_t item);
int cmp_int64(const void *a, const void *b);
int cmp_node_idx(const void *a, const void *b);

Genes *genes_alloc(CoreState *st, Py_ssize_t node_cap, Py_ssize_t conn_cap);
void genes_changed(Genes *g);
void genes_values_changed(Genes *g);

void gene_detach(Gene *o);
void gene_left(Genes *g, int kind, Py_ssize_t pos);
void gene_moved(Genes *g, int kind, Py_ssize_t from, Py_ssize_t to);

int push_node(Genes *g, const Node *n);
int set_conn(Genes *g, const Conn *c);
void remove_node_at(Genes *g, Py_ssize_t at);
void remove_conn_at(Genes *g, Py_ssize_t at);
void remove_conns_of(Genes *g, int64_t key);

size_t table_size(Py_ssize_t n);
View *view_of(Genes *g);
Py_ssize_t view_node(const View *v, int64_t key, uint32_t hash);
Py_ssize_t node_pos(const Genes *g, int64_t key);
Py_ssize_t find_node(Genes *g, int64_t key);
Py_ssize_t find_conn(const Genes *g, int64_t in, int64_t out);
Py_ssize_t conn_pos(Genes *g, int64_t in, int64_t out);
int has_node(const Genes *g, int64_t key);

#endif
