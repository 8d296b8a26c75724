/* The C core's private header: the records every part shares and each part's functions.

The NEAT step in C: neat-python's DefaultGenome operators, draw for draw.

Data flow of one generation:

    parents (Genes, or gene objects read once)          random._inst (in place)
          |                                                   |
          +--> crossover --> mutate --> child Genes  <--------+
                                          |
                 speciate: distances over sorted key indexes, neat-python's cache order
                                          |
                 Python: species records, reporters (neatpar/evolution/species.py)

A genome's genes live in one `Genes` object: two arrays of fixed records in the dicts' order
(node and connection genes as neat-python's dicts would hold them). Every operator repeats
neat-python 2.0.0's Python code (neat/genome.py, genes.py, attributes.py, species.py) step by
step: the same random calls in the same order, the same float expressions (no contraction), the
same iteration orders (the sets crossover and mutate_add_connection build are re-enacted in
pyset.c), the same cycle decisions. Where a comment names a neat-python line, that line is what
the code beside it does.

The parts, in the order a generation uses them:
    genes.c         the Genes records (type, views, pickling) and neat-python's gene objects
    gene_objects.c  gene objects over the records (neat-python's gene classes' interface)
    gene_maps.c     genome.nodes and genome.connections over the records, their views and iterators
    records.c       what the kernel's compile reads of many genomes' records
    config.c        the genome config read once into a Cfg (and ConfigView, a config read once)
    rng.c           draws from `random`'s own Mersenne Twister
    pyset.c         CPython's set tables re-enacted (their iteration order)
    set_orders.c    the set orders the operators walk: re-enacted, or real sets
    graphs.c        creates_cycle and whether a genome's graph has a cycle
    operators.c     attributes, configure_new, crossover, mutate
    speciation.c    distances and DefaultSpeciesSet.speciate's distance work
    threads_shim.c  the threads of a speciation's distances: POSIX or Win32 (threads_shim.h)
    reproduction.c  DefaultReproduction.reproduce's children (breed), members ranked and grouped
    ../_core.c      the module: its state, entry points and method tables
*/
#ifndef NEATPAR_CORE_H
#define NEATPAR_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef struct CoreState CoreState;   /* the module's state, below */

/* ------------------------------------------------------------------------------------------ */
/* Gene records                                                                                */

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
    uint32_t set;                /* with its own values: the attributes it has (bits, GENE_KEY first) */
    int kind;                    /* NODE_GENES or CONN_GENES */
};

#define GENE_KEY 1u

/* genome.nodes or genome.connections of a genome whose genes are records (gene_maps.c) */
typedef struct {
    PyObject_HEAD
    Genes *g;                    /* strong */
    int kind;                    /* NODE_GENES or CONN_GENES */
} GeneMap;

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

extern PyType_Spec genes_spec;

/* ------------------------------------------------------------------------------------------ */
/* The genome config (config.c)                                                               */

enum { INIT_GAUSS, INIT_UNIFORM, INIT_UNKNOWN };
enum { BOOL_FALSE, BOOL_TRUE, BOOL_RANDOM, BOOL_UNKNOWN };

typedef struct {
    double init_mean, init_stdev, replace_rate, mutate_rate, mutate_power, max_value, min_value;
    int init_type;
    PyObject *init_type_raw;     /* for neat-python's error message */
    const char *name;
} FloatCfg;

typedef struct {
    int deflt;
    PyObject *default_lower;
    double mutate_rate, rate_to_true_add, rate_to_false_add;
} BoolCfg;

typedef struct {
    int random_default;
    int32_t default_id;
    int32_t *options;
    Py_ssize_t n_options;
    double mutate_rate;
} StrCfg;

typedef struct {
    CoreState *st;               /* the module state it was read for */
    PyObject *config;            /* strong reference */
    int standard;                /* standard_config(config) */
    long num_inputs, num_outputs, num_hidden;
    int feed_forward, single_structural, surer;
    double cdc, cwc, conn_add, conn_delete, node_add, node_delete;
    PyObject *initial_connection;
    double connection_fraction;
    int64_t *input_keys, *output_keys;
    Py_ssize_t n_input_keys, n_output_keys;
    FloatCfg bias, response, time_constant, weight;
    BoolCfg enabled;
    StrCfg activation, aggregation;
} Cfg;

/* A genome config read once (what a reproduction or create_new passes to every operator it runs,
   instead of the config, so that it is read once, not once per genome). */
typedef struct {
    PyObject_HEAD
    Cfg cfg;
} ConfigView;

extern PyType_Spec config_view_spec;

/* ------------------------------------------------------------------------------------------ */
/* Draws (rng.c)                                                                               */

#define MT_N 624
#define MT_M 397

typedef struct {
    PyObject_HEAD
    int index;
    uint32_t state[MT_N];
} RandomMirror;

typedef struct {
    CoreState *st;           /* the module state: the generator, its attributes' names */
    PyObject *inst;          /* random._inst (borrowed from the module state) */
    int *index;              /* points into the generator, or into `copy` */
    uint32_t *mt;
    int has_gauss;           /* gauss_next is a float, not None */
    double gauss_next;
    int in_place;
    RandomMirror copy;       /* used when the layout check failed */
} Rng;

/* ------------------------------------------------------------------------------------------ */
/* Set tables (pyset.c)                                                                        */

#define PS_MINSIZE 8
#define PS_LINEAR_PROBES 9
#define PS_PERTURB_SHIFT 5

/* An entry: the key and two payload positions. `tag` is 0 for an empty slot, 1 for a dummy (a
   discarded key), and 3 + the first payload for a key (payloads are >= -1). The hash is not kept:
   it is recomputed from the key (for ints, equal keys are equal hashes). */
typedef struct {
    int64_t key;
    int32_t tag, b;
} PSEntry;

#define PS_EMPTY 0
#define PS_DUMMY 1
#define PS_IS_ACTIVE(e) ((e)->tag >= 2)
#define PS_A(e) ((e)->tag - 3)
#define PS_SET_A(e, v) ((e)->tag = (int32_t)(v) + 3)

typedef struct {
    PSEntry *table;
    size_t mask;
    Py_ssize_t fill, used;
    PSEntry small[PS_MINSIZE];
} PSet;

/* ------------------------------------------------------------------------------------------ */
/* Distance scratch (speciation.c)                                                             */

typedef struct {
    int32_t *match;              /* per gene of the first genome: position in the second, or -1 */
    Py_ssize_t cap;
} Scratch;

/* ------------------------------------------------------------------------------------------ */
/* The module's state (../_core.c): one per module object, each reference it holds a strong one */

struct CoreState {
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
};

/* A function in one of CPython's slot tables (PyType_Slot, PyModuleDef_Slot), whose field is a
   void *: ISO C converts a function pointer to an integer, not to a void * (CPython converts it back). */
#define SLOT_FN(f) ((void *)(uintptr_t)(f))

/* The state of this module object (every entry point's first line). A one-line inline: entry
   points run once per call from Python, often in a genome's inner loop. */
static inline CoreState *core_state(PyObject *module) { return (CoreState *)PyModule_GetState(module); }

/* ------------------------------------------------------------------------------------------ */
/* genes.c                                                                                     */

int32_t name_id(CoreState *st, PyObject *name);
void genes_changed(Genes *g);
void genes_values_changed(Genes *g);
void remove_node_at(Genes *g, Py_ssize_t at);
void remove_conn_at(Genes *g, Py_ssize_t at);
void remove_conns_of(Genes *g, int64_t key);
Py_ssize_t conn_pos(Genes *g, int64_t in, int64_t out);
Py_ssize_t find_node(Genes *g, int64_t key);
int read_pair(PyObject *key, int64_t *in, int64_t *out);
int reserve(void **arr, Py_ssize_t *cap, Py_ssize_t need, size_t item);
Genes *genes_alloc(CoreState *st, Py_ssize_t node_cap, Py_ssize_t conn_cap);
int push_node(Genes *g, const Node *n);
Py_ssize_t find_conn(const Genes *g, int64_t in, int64_t out);
int set_conn(Genes *g, const Conn *c);
int cmp_int64(const void *a, const void *b);
int cmp_node_idx(const void *a, const void *b);
size_t table_size(Py_ssize_t n);
View *view_of(Genes *g);
Py_ssize_t view_node(const View *v, int64_t key, uint32_t hash);
Py_ssize_t node_pos(const Genes *g, int64_t key);
int has_node(const Genes *g, int64_t key);
Genes *genes_of(CoreState *st, PyObject *genome, PyObject *snapshots);
PyObject *genes_from_state(PyObject *mod, PyObject *args);
PyObject *py_names(PyObject *mod, PyObject *unused);
PyObject *materialize(PyObject *mod, PyObject *arg);

/* gene_objects.c                                                                              */

int make_gene_types(PyObject *module, CoreState *st);
PyObject *gene_at(Genes *g, int kind, Py_ssize_t pos);
PyObject *gene_key(PyObject *gene);
PyObject *int_pair(int64_t a, int64_t b);
void gene_left(Genes *g, int kind, Py_ssize_t pos);
void gene_moved(Genes *g, int kind, Py_ssize_t from, Py_ssize_t to);
void gene_written(Genes *g, int kind, Py_ssize_t pos);
int gene_values(CoreState *st, PyObject *gene, int kind, void *record);
int gene_adoptable(CoreState *st, PyObject *gene, int kind, const void *key_record);
int gene_adopt(Genes *g, int kind, Py_ssize_t pos, PyObject *gene);

/* gene_maps.c                                                                                 */

int make_map_types(PyObject *module, CoreState *st);
PyObject *genes_map(Genes *g, int kind);
PyObject *py_genes_slot(PyObject *mod, PyObject *args);

/* records.c                                                                                   */

PyObject *enabled_links(PyObject *mod, PyObject *list);
PyObject *all_links(PyObject *mod, PyObject *list);
PyObject *node_table(PyObject *mod, PyObject *args);

/* config.c                                                                                    */

int cfg_double(PyObject *config, const char *name, double *out);
int standard_config(CoreState *st, PyObject *config);
int plain_type(CoreState *st, PyObject *type);
Cfg *cfg_acquire(CoreState *st, PyObject *config, Cfg *local);
void cfg_release(Cfg *c, Cfg *local);
int is_output(const Cfg *c, int64_t key);
int is_input(const Cfg *c, int64_t key);

/* rng.c                                                                                       */

int bit_length(uint64_t n);
uint32_t rng_u32(Rng *r);
double rng_random(Rng *r);
Py_ssize_t rng_below(Rng *r, Py_ssize_t n);
Py_ssize_t rng_choice(Rng *r, Py_ssize_t n);
double rng_uniform(Rng *r, double a, double b);
double rng_gauss(Rng *r, double mu, double sigma);
int rng_layout_ok(PyObject *random_module);
int rng_begin(Rng *r, CoreState *st);
int rng_end(Rng *r);

/* pyset.c                                                                                     */

Py_hash_t ps_hash(int64_t v);
void ps_init(PSet *s);
void ps_free(PSet *s);
int ps_add(PSet *s, int64_t key, Py_hash_t hash, PSEntry **out, int *added);
PSEntry *ps_find(const PSet *s, int64_t key, Py_hash_t hash);
int ps_merge(PSet *so, const PSet *other);
int ps_add_all(PSet *s, const int64_t *keys, Py_ssize_t n, int second);
int ps_from_dict_keys(PSet *s, const int64_t *keys, Py_ssize_t n);
int ps_difference(const PSet *a, const PSet *b, PSet *out);
void ps_order(const PSet *s, int64_t *dst);

/* set_orders.c                                                                                */

int check_sets(CoreState *st);
Py_ssize_t possible_inputs_order(CoreState *st, const int64_t *nodes, Py_ssize_t nn, const int64_t *outputs,
                                 Py_ssize_t no, const int64_t *inputs, Py_ssize_t ni, int64_t *dst);
int innovation_union(CoreState *st, const Genes *p1, const Genes *p2, PSet *s1, PSet *s2, PSet *u, int64_t *order,
                     Py_ssize_t *n_order);
PyObject *emulated_union(PyObject *mod, PyObject *args);
PyObject *emulated_inputs(PyObject *mod, PyObject *args);

/* graphs.c                                                                                    */

int creates_cycle(const Genes *g, int64_t i, int64_t o);
int is_acyclic(Genes *g);

/* operators.c                                                                                 */

int begin(CoreState *st, Rng *r);
int crossover_genes(Rng *r, const Cfg *c, Genes *g, Genes *p1, Genes *p2);
int fitter_first(PyObject *f1, PyObject *f2);
int crossover(Rng *r, const Cfg *c, Genes *g, PyObject *genome1, PyObject *genome2, PyObject *snapshots);
int mutate(Rng *r, const Cfg *c, Genes *g);
int configure_new(Rng *r, const Cfg *c, Genes *g, const char *kind);

/* speciation.c                                                                                */

double genes_distance(const Genes *ga, const Genes *gb, double cdc, double cwc, Scratch *s);
int prepare_distance(Genes *g, Scratch *s);
PyObject *speciate(PyObject *mod, PyObject *args);
PyObject *py_set_threads(PyObject *mod, PyObject *arg);

/* reproduction.c                                                                              */

PyObject *py_breed(PyObject *mod, PyObject *args);
PyObject *py_ranked(PyObject *mod, PyObject *members);
PyObject *py_members_of(PyObject *mod, PyObject *args);

/* ../_core.c                                                                                  */

Genes *operand(CoreState *st, PyObject *genome, int empty_only);

#endif
