/* The NEAT step in C: neat-python's DefaultGenome operators, draw for draw.

Data flow of one generation:

    parents (Genes, or gene objects read once)          random._inst (in place)
          |                                                   |
          +--> crossover --> mutate --> child Genes  <--------+
                                          |
                 speciate: distances over sorted key indexes, neat-python's cache order
                                          |
                 Python: species records, reporters (neatpar/evolution/species.py)

A genome's genes live in one `Genes` object: two arrays of fixed records in the dicts' order
(node and connection genes as neat-python's dicts would hold them). Every operator below repeats
neat-python 2.0.0's Python code (neat/genome.py, genes.py, attributes.py, species.py) step by
step: the same random calls in the same order, the same float expressions (no contraction), the
same iteration orders (the sets crossover and mutate_add_connection build are re-enacted in
pyset.h), the same cycle decisions. Where a comment names a neat-python line, that line is what
the code beside it does.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>

#include "rng.h"
#include "pyset.h"

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

typedef struct {
    PyObject_HEAD
    Node *nodes;
    Py_ssize_t nn, node_cap;
    Conn *conns;
    Py_ssize_t nc, conn_cap;
    struct View *view;           /* the genes laid out for lookups and distances: built when first
                                    needed, dropped on any change */
    int acyclic;                 /* -1 unknown, else whether the connection graph has no cycle */
} Genes;

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

static PyTypeObject GenesType;

/* Module state (one interpreter; the GIL guards it). */
static PyObject *names;          /* list: id -> activation/aggregation name */
static PyObject *name_ids;       /* dict: name -> id */
static PyObject *node_gene_type, *conn_gene_type;
static PyObject *node_attribute_list, *conn_attribute_list;  /* their _gene_attributes, as checked */
static PyObject *genome_class, *plain_class_fn, *plain_types;  /* neatpar's DefaultGenome; cls -> bool */
static PyObject *tracker_class;  /* neat-python's InnovationTracker, whose bookkeeping is done here */
static PyObject *reference_union, *reference_inputs, *sets_check;
static PyObject *random_module, *random_inst, *count_type;
static PyObject *genes_from_state_fn;  /* the module's _genes_from_state, for pickling */
static int rng_in_place = -1;    /* -1: not checked yet */
static int sets_emulated = -1;   /* -1: not checked yet */

static PyObject *str_genes, *str_nodes, *str_connections, *str_key, *str_fitness, *str_innovation,
    *str_weight, *str_enabled, *str_bias, *str_response, *str_activation, *str_aggregation,
    *str_time_constant, *str_node_indexer, *str_innovation_tracker, *str_get_innovation_number,
    *str_add_node_in, *str_add_node_out, *str_add_connection, *str_initial_connection,
    *str_representative, *empty_tuple, *one;

static int32_t
name_id(PyObject *name)
{
    PyObject *id = PyDict_GetItemWithError(name_ids, name);
    if (id)
        return (int32_t)PyLong_AsLong(id);
    if (PyErr_Occurred())
        return -1;
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "neatpar: activation and aggregation must be names (str), not %R", name);
        return -1;
    }
    Py_ssize_t n = PyList_GET_SIZE(names);
    PyObject *v = PyLong_FromSsize_t(n);
    if (!v || PyDict_SetItem(name_ids, name, v) < 0 || PyList_Append(names, name) < 0) {
        Py_XDECREF(v);
        return -1;
    }
    Py_DECREF(v);
    return (int32_t)n;
}

/* ------------------------------------------------------------------------------------------ */
/* Genes                                                                                       */

static void
genes_changed(Genes *g)
{
    PyMem_Free(g->view);
    g->view = NULL;
    g->acyclic = -1;
}

static int
reserve(void **arr, Py_ssize_t *cap, Py_ssize_t need, size_t item)
{
    if (need <= *cap)
        return 0;
    Py_ssize_t cap2 = *cap ? *cap : 8;
    while (cap2 < need)
        cap2 *= 2;
    void *p = PyMem_Realloc(*arr, cap2 * item);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    *arr = p;
    *cap = cap2;
    return 0;
}

static Genes *
genes_alloc(Py_ssize_t node_cap, Py_ssize_t conn_cap)
{
    Genes *g = PyObject_New(Genes, &GenesType);
    if (!g)
        return NULL;
    g->nodes = NULL;
    g->conns = NULL;
    g->nn = g->nc = g->node_cap = g->conn_cap = 0;
    g->view = NULL;
    g->acyclic = -1;
    if (reserve((void **)&g->nodes, &g->node_cap, node_cap, sizeof(Node)) < 0
        || reserve((void **)&g->conns, &g->conn_cap, conn_cap, sizeof(Conn)) < 0) {
        Py_DECREF(g);
        return NULL;
    }
    return g;
}

static void
genes_dealloc(Genes *g)
{
    PyMem_Free(g->nodes);
    PyMem_Free(g->conns);
    PyMem_Free(g->view);
    PyObject_Free(g);
}

static int
push_node(Genes *g, const Node *n)
{
    if (reserve((void **)&g->nodes, &g->node_cap, g->nn + 1, sizeof(Node)) < 0)
        return -1;
    g->nodes[g->nn++] = *n;
    return 0;
}

static Py_ssize_t
find_conn(const Genes *g, int64_t in, int64_t out)
{
    for (Py_ssize_t i = 0; i < g->nc; i++)
        if (g->conns[i].in == in && g->conns[i].out == out)
            return i;
    return -1;
}

/* self.connections[key] = gene: replaces in place when the key is there, else appends. */
static int
set_conn(Genes *g, const Conn *c)
{
    Py_ssize_t at = find_conn(g, c->in, c->out);
    if (at >= 0) {
        g->conns[at] = *c;
        return 0;
    }
    if (reserve((void **)&g->conns, &g->conn_cap, g->nc + 1, sizeof(Conn)) < 0)
        return -1;
    g->conns[g->nc++] = *c;
    return 0;
}

static int
cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int
cmp_node_idx(const void *a, const void *b)
{
    int64_t x = ((const NodeIdx *)a)->key, y = ((const NodeIdx *)b)->key;
    return x < y ? -1 : x > y;
}

static inline uint32_t
mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

static inline uint32_t
node_hash(int64_t key)
{
    return mix64((uint64_t)key);
}

static inline uint32_t
conn_hash(int64_t in, int64_t out)
{
    return mix64((uint64_t)in * 0x9E3779B97F4A7C15ULL ^ (uint64_t)out);
}

static size_t
table_size(Py_ssize_t n)
{
    size_t size = 8;
    while (size < (size_t)n * 2)
        size <<= 1;
    return size;
}

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

/* The genome's View (built once, until the genes change). */
static View *
view_of(Genes *g)
{
    if (g->view)
        return g->view;
    Py_ssize_t nn = g->nn, nc = g->nc;
    size_t nts = table_size(nn), cts = table_size(nc);
    size_t sizes[] = {sizeof(View), 8 * nn, 8 * nn, 8 * nn, 8 * nn, 4 * nn, 4 * nn, 4 * nn, 4 * nts,
                      8 * nc, 8 * nc, 4 * nc, 4 * cts, nc, 4 * nn, 4 * nc};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        total += ALIGN8(sizes[i]);
    char *block = PyMem_Malloc(total), *at = block;
    if (!block) {
        PyErr_NoMemory();
        return NULL;
    }
    void **parts[16];
    View *v = (View *)block;
    void *dummy;
    parts[0] = &dummy;
    parts[1] = (void **)&v->nkey; parts[2] = (void **)&v->nbias; parts[3] = (void **)&v->nresp;
    parts[4] = (void **)&v->ntc; parts[5] = (void **)&v->nact; parts[6] = (void **)&v->nagg;
    parts[7] = (void **)&v->nhash; parts[8] = (void **)&v->ntable; parts[9] = (void **)&v->ckey;
    parts[10] = (void **)&v->cw; parts[11] = (void **)&v->chash; parts[12] = (void **)&v->ctable;
    parts[13] = (void **)&v->cen;
    parts[14] = (void **)&v->nid; parts[15] = (void **)&v->cid;
    for (size_t i = 0; i < 16; i++) {
        *parts[i] = at;
        at += ALIGN8(sizes[i]);
    }
    v->nn = nn;
    v->nc = nc;
    v->nmask = (uint32_t)(nts - 1);
    v->cmask = (uint32_t)(cts - 1);
    memset(v->ntable, 0xff, 4 * nts);
    memset(v->ctable, 0xff, 4 * cts);
    for (Py_ssize_t i = 0; i < nn; i++) {
        const Node *n = &g->nodes[i];
        v->nkey[i] = n->key;
        v->nbias[i] = n->bias;
        v->nresp[i] = n->response;
        v->ntc[i] = n->time_constant;
        v->nact[i] = n->act;
        v->nagg[i] = n->agg;
        uint32_t h = v->nhash[i] = node_hash(n->key);
        for (h &= v->nmask; v->ntable[h] >= 0; h = (h + 1) & v->nmask)
            ;
        v->ntable[h] = (int32_t)i;
    }
    v->packed = 1;
    for (Py_ssize_t i = 0; i < nc; i++) {
        const Conn *c = &g->conns[i];
        v->packed &= c->in >= INT32_MIN && c->in <= INT32_MAX && c->out >= INT32_MIN && c->out <= INT32_MAX;
        v->ckey[i] = ((uint64_t)(uint32_t)c->in << 32) | (uint32_t)c->out;
        v->cw[i] = c->weight;
        v->cen[i] = c->enabled != 0;
        uint32_t h = v->chash[i] = conn_hash(c->in, c->out);
        for (h &= v->cmask; v->ctable[h] >= 0; h = (h + 1) & v->cmask)
            ;
        v->ctable[h] = (int32_t)i;
    }
    g->view = v;
    return v;
}

/* Position of the node with this key (its hash given), or -1. */
static inline Py_ssize_t
view_node(const View *v, int64_t key, uint32_t hash)
{
    uint32_t h = hash & v->nmask;
    int32_t p;
    while ((p = v->ntable[h]) >= 0 && v->nkey[p] != key)
        h = (h + 1) & v->nmask;
    return p;
}

static inline Py_ssize_t
node_pos(const Genes *g, int64_t key)
{
    return view_node(g->view, key, node_hash(key));
}

static int
has_node(const Genes *g, int64_t key)
{
    for (Py_ssize_t i = 0; i < g->nn; i++)
        if (g->nodes[i].key == key)
            return 1;
    return 0;
}

static PyObject *
Genes_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) || (kwds && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "Genes() takes no arguments");
        return NULL;
    }
    return (PyObject *)genes_alloc(0, 0);
}

static Genes *
genes_copy(const Genes *src)
{
    Genes *g = genes_alloc(src->nn, src->nc);
    if (!g)
        return NULL;
    memcpy(g->nodes, src->nodes, sizeof(Node) * src->nn);
    memcpy(g->conns, src->conns, sizeof(Conn) * src->nc);
    g->nn = src->nn;
    g->nc = src->nc;
    g->acyclic = src->acyclic;
    return g;
}

static PyObject *
Genes_copy(Genes *self, PyObject *unused)
{
    return (PyObject *)genes_copy(self);
}

static PyObject *
Genes_deepcopy(Genes *self, PyObject *memo)
{
    return (PyObject *)genes_copy(self);
}

static PyObject *
Genes_size(Genes *self, PyObject *unused)
{
    Py_ssize_t enabled = 0;
    for (Py_ssize_t i = 0; i < self->nc; i++)
        enabled += self->conns[i].enabled != 0;
    return Py_BuildValue("(nn)", self->nn, enabled);
}

/* Pickled form: a format number, node and connection records as bytes (this machine's layout of
   Node and Conn), names by value (ids are per process). */
#define GENES_FORMAT 1
static PyObject *
Genes_reduce(Genes *self, PyObject *unused)
{
    PyObject *local = PyDict_New(), *used = PyList_New(0), *nodes = NULL, *result = NULL;
    if (!local || !used)
        goto done;
    nodes = PyBytes_FromStringAndSize(NULL, sizeof(Node) * self->nn);
    if (!nodes)
        goto done;
    Node *out = (Node *)PyBytes_AS_STRING(nodes);
    for (Py_ssize_t i = 0; i < self->nn; i++) {
        out[i] = self->nodes[i];
        int32_t *fields[2] = {&out[i].act, &out[i].agg};
        for (int f = 0; f < 2; f++) {
            PyObject *name = PyList_GET_ITEM(names, *fields[f]);
            PyObject *id = PyDict_GetItemWithError(local, name);
            if (!id) {
                if (PyErr_Occurred())
                    goto done;
                id = PyLong_FromSsize_t(PyList_GET_SIZE(used));
                if (!id || PyDict_SetItem(local, name, id) < 0 || PyList_Append(used, name) < 0) {
                    Py_XDECREF(id);
                    goto done;
                }
                Py_DECREF(id);
                id = PyDict_GetItem(local, name);
            }
            *fields[f] = (int32_t)PyLong_AsLong(id);
        }
    }
    if (genes_from_state_fn)
        result = Py_BuildValue("(O(iNy#N))", genes_from_state_fn, GENES_FORMAT, nodes,
                               self->conns ? (const char *)self->conns : "",
                               (Py_ssize_t)(sizeof(Conn) * self->nc), PyList_AsTuple(used));
    nodes = NULL;
done:
    Py_XDECREF(nodes);
    Py_XDECREF(local);
    Py_XDECREF(used);
    return result;
}

static PyObject *
genes_from_state(PyObject *mod, PyObject *args)
{
    Py_buffer nb, cb;
    PyObject *used;
    int format;
    if (!PyArg_ParseTuple(args, "iy*y*O!", &format, &nb, &cb, &PyTuple_Type, &used))
        return NULL;
    if (format != GENES_FORMAT) {
        PyBuffer_Release(&nb);
        PyBuffer_Release(&cb);
        PyErr_Format(PyExc_ValueError, "neatpar: genes pickled in format %d; this neatpar reads format %d "
                     "(restore the checkpoint with the neatpar version that wrote it)", format, GENES_FORMAT);
        return NULL;
    }
    Genes *g = NULL;
    if (nb.len % sizeof(Node) || cb.len % sizeof(Conn)) {
        PyErr_SetString(PyExc_ValueError, "neatpar: genes state of the wrong size");
        goto done;
    }
    Py_ssize_t nn = nb.len / sizeof(Node), nc = cb.len / sizeof(Conn), nu = PyTuple_GET_SIZE(used);
    g = genes_alloc(nn, nc);
    if (!g)
        goto done;
    memcpy(g->nodes, nb.buf, nb.len);
    memcpy(g->conns, cb.buf, cb.len);
    g->nn = nn;
    g->nc = nc;
    for (Py_ssize_t i = 0; i < nn; i++) {
        int32_t *fields[2] = {&g->nodes[i].act, &g->nodes[i].agg};
        for (int f = 0; f < 2; f++) {
            if (*fields[f] < 0 || *fields[f] >= nu) {
                PyErr_SetString(PyExc_ValueError, "neatpar: genes state names a function it does not carry");
                Py_CLEAR(g);
                goto done;
            }
            int32_t id = name_id(PyTuple_GET_ITEM(used, *fields[f]));
            if (id < 0) {
                Py_CLEAR(g);
                goto done;
            }
            *fields[f] = id;
        }
    }
done:
    PyBuffer_Release(&nb);
    PyBuffer_Release(&cb);
    return (PyObject *)g;
}

/* (node records, connection records) as bytes, in the dicts' order (see gene_records). */
static PyObject *
Genes_records(Genes *self, PyObject *unused)
{
    return Py_BuildValue("(y#y#)", self->nodes ? (const char *)self->nodes : "", (Py_ssize_t)(sizeof(Node) * self->nn),
                         self->conns ? (const char *)self->conns : "", (Py_ssize_t)(sizeof(Conn) * self->nc));
}

/* enabled_links([Genes, ...]) -> (inputs, outputs, weights, starts): every enabled connection of
   each genome in its dict order, as int64/int64/float64 bytes, and where each genome's start
   (int64 bytes, one more than genomes) - what the kernel's compile walks. */
static PyObject *
enabled_links(PyObject *mod, PyObject *list)
{
    PyObject *seq = PySequence_Fast(list, "enabled_links() takes a list of Genes");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *g = PySequence_Fast_GET_ITEM(seq, i);
        if (!Py_IS_TYPE(g, &GenesType)) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "enabled_links() takes a list of Genes");
            return NULL;
        }
        for (Py_ssize_t k = 0; k < ((Genes *)g)->nc; k++)
            total += ((Genes *)g)->conns[k].enabled != 0;
    }
    PyObject *ins = PyBytes_FromStringAndSize(NULL, sizeof(int64_t) * total);
    PyObject *outs = PyBytes_FromStringAndSize(NULL, sizeof(int64_t) * total);
    PyObject *ws = PyBytes_FromStringAndSize(NULL, sizeof(double) * total);
    PyObject *starts = PyBytes_FromStringAndSize(NULL, sizeof(int64_t) * (n + 1));
    if (!ins || !outs || !ws || !starts) {
        Py_XDECREF(ins); Py_XDECREF(outs); Py_XDECREF(ws); Py_XDECREF(starts);
        Py_DECREF(seq);
        return NULL;
    }
    int64_t *pi = (int64_t *)PyBytes_AS_STRING(ins), *po = (int64_t *)PyBytes_AS_STRING(outs);
    double *pw = (double *)PyBytes_AS_STRING(ws);
    int64_t *ps = (int64_t *)PyBytes_AS_STRING(starts);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const Genes *g = (const Genes *)PySequence_Fast_GET_ITEM(seq, i);
        ps[i] = at;
        for (Py_ssize_t k = 0; k < g->nc; k++)
            if (g->conns[k].enabled) {
                pi[at] = g->conns[k].in;
                po[at] = g->conns[k].out;
                pw[at++] = g->conns[k].weight;
            }
    }
    ps[n] = at;
    Py_DECREF(seq);
    return Py_BuildValue("(NNNN)", ins, outs, ws, starts);
}

static PyObject *
py_names(PyObject *mod, PyObject *unused)
{
    return PyList_AsTuple(names);
}

static Py_ssize_t
Genes_len(Genes *self)
{
    return self->nn + self->nc;
}

static PyMethodDef Genes_methods[] = {
    {"__reduce__", (PyCFunction)Genes_reduce, METH_NOARGS, NULL},
    {"__copy__", (PyCFunction)Genes_copy, METH_NOARGS, NULL},
    {"__deepcopy__", (PyCFunction)Genes_deepcopy, METH_O, NULL},
    {"copy", (PyCFunction)Genes_copy, METH_NOARGS, "A copy of these genes."},
    {"size", (PyCFunction)Genes_size, METH_NOARGS, "(nodes, enabled connections), as DefaultGenome.size()."},
    {"records", (PyCFunction)Genes_records, METH_NOARGS, "(node records, connection records) as bytes."},
    {NULL}
};

static PySequenceMethods Genes_as_sequence = {.sq_length = (lenfunc)Genes_len};

static PyTypeObject GenesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "neatpar.evolution._core.Genes",
    .tp_doc = "A genome's node and connection genes as compact records, in the dicts' order.",
    .tp_basicsize = sizeof(Genes),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Genes_new,
    .tp_dealloc = (destructor)genes_dealloc,
    .tp_methods = Genes_methods,
    .tp_as_sequence = &Genes_as_sequence,
};

/* ------------------------------------------------------------------------------------------ */
/* Gene objects <-> records                                                                    */

static int
get_double(PyObject *obj, PyObject *name, double *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    *out = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

static int
get_int64(PyObject *obj, PyObject *name, int64_t *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int
get_name(PyObject *obj, PyObject *name, int32_t *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    *out = name_id(v);
    Py_DECREF(v);
    return *out < 0 ? -1 : 0;
}

static int
read_pair(PyObject *key, int64_t *in, int64_t *out)
{
    if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 2) {
        PyErr_Format(PyExc_TypeError, "neatpar: a connection key must be a pair of node keys, not %R", key);
        return -1;
    }
    *in = PyLong_AsLongLong(PyTuple_GET_ITEM(key, 0));
    if (*in == -1 && PyErr_Occurred())
        return -1;
    *out = PyLong_AsLongLong(PyTuple_GET_ITEM(key, 1));
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* Records of a genome whose genes are objects in dicts (neat-python's own genomes, or neatpar's
   after user code asked for the dicts). */
static Genes *
genes_from_dicts(PyObject *nodes, PyObject *conns)
{
    if (!PyDict_Check(nodes) || !PyDict_Check(conns)) {
        PyErr_SetString(PyExc_TypeError, "neatpar: genome.nodes and genome.connections must be dicts");
        return NULL;
    }
    Genes *g = genes_alloc(PyDict_GET_SIZE(nodes), PyDict_GET_SIZE(conns));
    if (!g)
        return NULL;
    Py_ssize_t pos = 0;
    PyObject *key, *gene;
    while (PyDict_Next(nodes, &pos, &key, &gene)) {
        Node *n = &g->nodes[g->nn];
        n->key = PyLong_AsLongLong(key);
        if ((n->key == -1 && PyErr_Occurred()) || get_double(gene, str_bias, &n->bias) < 0
            || get_double(gene, str_response, &n->response) < 0
            || get_name(gene, str_activation, &n->act) < 0 || get_name(gene, str_aggregation, &n->agg) < 0
            || get_double(gene, str_time_constant, &n->time_constant) < 0)
            goto fail;
        g->nn++;
    }
    pos = 0;
    while (PyDict_Next(conns, &pos, &key, &gene)) {
        Conn *c = &g->conns[g->nc];
        if (read_pair(key, &c->in, &c->out) < 0 || get_int64(gene, str_innovation, &c->innov) < 0
            || get_double(gene, str_weight, &c->weight) < 0)
            goto fail;
        PyObject *en = PyObject_GetAttr(gene, str_enabled);
        if (!en)
            goto fail;
        c->enabled = PyObject_IsTrue(en);
        c->pad = 0;
        Py_DECREF(en);
        if (c->enabled < 0)
            goto fail;
        g->nc++;
    }
    return g;
fail:
    Py_DECREF(g);
    return NULL;
}

/* The genome's records: its own Genes, its entry in `snapshots` (a dict id(genome) -> Genes that
   a reproduction reads once, or NULL), or its gene objects read now. New reference. */
static Genes *
genes_of(PyObject *genome, PyObject *snapshots)
{
    PyObject *g = PyObject_GetAttr(genome, str_genes);
    if (g && Py_IS_TYPE(g, &GenesType))
        return (Genes *)g;
    Py_XDECREF(g);
    PyErr_Clear();
    if (snapshots) {
        PyObject *id = PyLong_FromVoidPtr(genome);
        PyObject *snap = id ? PyDict_GetItemWithError(snapshots, id) : NULL;
        Py_XDECREF(id);
        if (snap)
            return (Genes *)Py_NewRef(snap);
        if (PyErr_Occurred())
            return NULL;
    }
    PyObject *nodes = PyObject_GetAttr(genome, str_nodes);
    PyObject *conns = nodes ? PyObject_GetAttr(genome, str_connections) : NULL;
    Genes *r = conns ? genes_from_dicts(nodes, conns) : NULL;
    Py_XDECREF(nodes);
    Py_XDECREF(conns);
    return r;
}

/* The genome's own Genes, which an operator fills or changes (neatpar genomes only). */
static Genes *
own_genes(PyObject *genome)
{
    PyObject *g = PyObject_GetAttr(genome, str_genes);
    if (g && Py_IS_TYPE(g, &GenesType))
        return (Genes *)g;
    Py_XDECREF(g);
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "neatpar: this genome keeps its genes as objects");
    return NULL;
}

static PyObject *
new_gene(PyObject *type)
{
    /* object.__new__: an instance without running __init__ (neat-python's __init__ only checks
       and stores the key, which the caller sets). */
    return PyBaseObject_Type.tp_new((PyTypeObject *)type, empty_tuple, NULL);
}

static int
set_float(PyObject *obj, PyObject *name, double v)
{
    PyObject *f = PyFloat_FromDouble(v);
    int rc = f ? PyObject_SetAttr(obj, name, f) : -1;
    Py_XDECREF(f);
    return rc;
}

static int
set_int(PyObject *obj, PyObject *name, int64_t v)
{
    PyObject *i = PyLong_FromLongLong(v);
    int rc = i ? PyObject_SetAttr(obj, name, i) : -1;
    Py_XDECREF(i);
    return rc;
}

/* (nodes, connections): dicts of neat-python's gene objects, attributes set in neat-python's
   order (key, [innovation,] then the gene attributes). */
static PyObject *
materialize(PyObject *mod, PyObject *arg)
{
    if (!Py_IS_TYPE(arg, &GenesType)) {
        PyErr_SetString(PyExc_TypeError, "materialize() needs Genes");
        return NULL;
    }
    Genes *g = (Genes *)arg;
    /* Many small objects at once: the cyclic collector would walk the whole heap several times
       on the way (they hold no cycles); it runs once afterwards instead. */
    int collecting = PyGC_Disable();
    PyObject *nodes = PyDict_New(), *conns = PyDict_New();
    if (!nodes || !conns)
        goto fail;
    for (Py_ssize_t i = 0; i < g->nn; i++) {
        const Node *n = &g->nodes[i];
        PyObject *gene = new_gene(node_gene_type);
        PyObject *key = PyLong_FromLongLong(n->key);
        int bad = !gene || !key || PyObject_SetAttr(gene, str_key, key) < 0
                  || set_float(gene, str_bias, n->bias) < 0 || set_float(gene, str_response, n->response) < 0
                  || PyObject_SetAttr(gene, str_activation, PyList_GET_ITEM(names, n->act)) < 0
                  || PyObject_SetAttr(gene, str_aggregation, PyList_GET_ITEM(names, n->agg)) < 0
                  || set_float(gene, str_time_constant, n->time_constant) < 0
                  || PyDict_SetItem(nodes, key, gene) < 0;
        Py_XDECREF(gene);
        Py_XDECREF(key);
        if (bad)
            goto fail;
    }
    for (Py_ssize_t i = 0; i < g->nc; i++) {
        const Conn *c = &g->conns[i];
        PyObject *gene = new_gene(conn_gene_type);
        PyObject *key = Py_BuildValue("(LL)", (long long)c->in, (long long)c->out);
        if (key)
            PyObject_GC_UnTrack(key);  /* a pair of ints: no cycle (what the collector would do) */
        int bad = !gene || !key || PyObject_SetAttr(gene, str_key, key) < 0
                  || set_int(gene, str_innovation, c->innov) < 0 || set_float(gene, str_weight, c->weight) < 0
                  || PyObject_SetAttr(gene, str_enabled, c->enabled ? Py_True : Py_False) < 0
                  || PyDict_SetItem(conns, key, gene) < 0;
        Py_XDECREF(gene);
        Py_XDECREF(key);
        if (bad)
            goto fail;
    }
    if (collecting)
        PyGC_Enable();
    return Py_BuildValue("(NN)", nodes, conns);
fail:
    if (collecting)
        PyGC_Enable();
    Py_XDECREF(nodes);
    Py_XDECREF(conns);
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* The genome config, read once per operation (or once per reproduction, see hold())          */

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


static int
cfg_double(PyObject *config, const char *name, double *out)
{
    PyObject *v = PyObject_GetAttrString(config, name);
    if (!v)
        return -1;
    *out = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

static int
cfg_long(PyObject *config, const char *name, long *out)
{
    PyObject *v = PyObject_GetAttrString(config, name);
    if (!v)
        return -1;
    *out = PyLong_AsLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int
cfg_truth(PyObject *config, const char *name, int *out)
{
    PyObject *v = PyObject_GetAttrString(config, name);
    if (!v)
        return -1;
    *out = PyObject_IsTrue(v);
    Py_DECREF(v);
    return *out < 0 ? -1 : 0;
}

static int
cfg_keys(PyObject *config, const char *name, int64_t **out, Py_ssize_t *n)
{
    PyObject *v = PyObject_GetAttrString(config, name);
    PyObject *seq = v ? PySequence_Fast(v, "neatpar: input_keys and output_keys must be lists") : NULL;
    Py_XDECREF(v);
    if (!seq)
        return -1;
    *n = PySequence_Fast_GET_SIZE(seq);
    *out = PyMem_Malloc(sizeof(int64_t) * (*n + 1));
    for (Py_ssize_t i = 0; *out && i < *n; i++)
        (*out)[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (!*out) {
        PyErr_NoMemory();
        return -1;
    }
    return PyErr_Occurred() ? -1 : 0;
}

static int
cfg_float_attr(PyObject *config, const char *name, FloatCfg *f)
{
    char buf[64];
    f->name = name;
    const char *items[] = {"init_mean", "init_stdev", "replace_rate", "mutate_rate", "mutate_power",
                           "max_value", "min_value"};
    double *dst[] = {&f->init_mean, &f->init_stdev, &f->replace_rate, &f->mutate_rate, &f->mutate_power,
                     &f->max_value, &f->min_value};
    for (int i = 0; i < 7; i++) {
        snprintf(buf, sizeof buf, "%s_%s", name, items[i]);
        if (cfg_double(config, buf, dst[i]) < 0)
            return -1;
    }
    snprintf(buf, sizeof buf, "%s_init_type", name);
    f->init_type_raw = PyObject_GetAttrString(config, buf);
    if (!f->init_type_raw)
        return -1;
    PyObject *lower = PyObject_CallMethod(f->init_type_raw, "lower", NULL);
    if (!lower)
        return -1;
    /* FloatAttribute.init_value: 'gauss' or 'normal' in it, else 'uniform' in it */
    const char *s = PyUnicode_AsUTF8(lower);
    f->init_type = !s ? INIT_UNKNOWN
                      : (strstr(s, "gauss") || strstr(s, "normal")) ? INIT_GAUSS
                      : strstr(s, "uniform") ? INIT_UNIFORM : INIT_UNKNOWN;
    Py_DECREF(lower);
    return PyErr_Occurred() ? -1 : 0;
}

static int
cfg_str_attr(PyObject *config, const char *name, StrCfg *s)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s_mutate_rate", name);
    if (cfg_double(config, buf, &s->mutate_rate) < 0)
        return -1;
    snprintf(buf, sizeof buf, "%s_options", name);
    PyObject *opts = PyObject_GetAttrString(config, buf);
    PyObject *seq = opts ? PySequence_Fast(opts, "neatpar: options must be a list") : NULL;
    Py_XDECREF(opts);
    if (!seq)
        return -1;
    s->n_options = PySequence_Fast_GET_SIZE(seq);
    s->options = PyMem_Malloc(sizeof(int32_t) * (s->n_options + 1));
    for (Py_ssize_t i = 0; s->options && i < s->n_options; i++)
        if ((s->options[i] = name_id(PySequence_Fast_GET_ITEM(seq, i))) < 0)
            break;
    Py_DECREF(seq);
    if (!s->options)
        PyErr_NoMemory();
    if (PyErr_Occurred())
        return -1;
    snprintf(buf, sizeof buf, "%s_default", name);
    PyObject *d = PyObject_GetAttrString(config, buf);
    if (!d)
        return -1;
    PyObject *lower = PyObject_CallMethod(d, "lower", NULL);
    const char *ls = lower ? PyUnicode_AsUTF8(lower) : NULL;
    s->random_default = ls && (strcmp(ls, "none") == 0 || strcmp(ls, "random") == 0);
    Py_XDECREF(lower);
    s->default_id = (ls && !s->random_default) ? name_id(d) : 0;
    Py_DECREF(d);
    return PyErr_Occurred() ? -1 : 0;
}

static int
cfg_bool_attr(PyObject *config, BoolCfg *b)
{
    if (cfg_double(config, "enabled_mutate_rate", &b->mutate_rate) < 0
        || cfg_double(config, "enabled_rate_to_true_add", &b->rate_to_true_add) < 0
        || cfg_double(config, "enabled_rate_to_false_add", &b->rate_to_false_add) < 0)
        return -1;
    /* BoolAttribute.init_value: str(default).lower() */
    PyObject *d = PyObject_GetAttrString(config, "enabled_default");
    PyObject *s = d ? PyObject_Str(d) : NULL;
    Py_XDECREF(d);
    b->default_lower = s ? PyObject_CallMethod(s, "lower", NULL) : NULL;
    Py_XDECREF(s);
    const char *v = b->default_lower ? PyUnicode_AsUTF8(b->default_lower) : NULL;
    if (!v)
        return -1;
    b->deflt = (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true")) ? BOOL_TRUE
             : (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "false")) ? BOOL_FALSE
             : (!strcmp(v, "random") || !strcmp(v, "none")) ? BOOL_RANDOM : BOOL_UNKNOWN;
    return 0;
}

static void
cfg_clear(Cfg *c)
{
    Py_CLEAR(c->config);
    Py_CLEAR(c->initial_connection);
    FloatCfg *fs[] = {&c->bias, &c->response, &c->time_constant, &c->weight};
    for (int i = 0; i < 4; i++)
        Py_CLEAR(fs[i]->init_type_raw);
    Py_CLEAR(c->enabled.default_lower);
    PyMem_Free(c->input_keys);
    PyMem_Free(c->output_keys);
    PyMem_Free(c->activation.options);
    PyMem_Free(c->aggregation.options);
    memset(c, 0, sizeof *c);
}

/* Whether the genome config's genes are neat-python's defaults with the attributes the records
   hold (the lists checked when the module was set up, unchanged since). */
static int
standard_config(PyObject *config)
{
    PyObject *nt = PyObject_GetAttrString(config, "node_gene_type");
    PyObject *ct = nt ? PyObject_GetAttrString(config, "connection_gene_type") : NULL;
    int ok = ct && nt == node_gene_type && ct == conn_gene_type && node_attribute_list != Py_None;
    Py_XDECREF(nt);
    Py_XDECREF(ct);
    PyErr_Clear();
    if (!ok)
        return 0;
    PyObject *nl = PyObject_GetAttrString(node_gene_type, "_gene_attributes");
    PyObject *cl = PyObject_GetAttrString(conn_gene_type, "_gene_attributes");
    ok = nl == node_attribute_list && cl == conn_attribute_list && PyList_Check(nl) && PyList_Check(cl)
         && PyList_GET_SIZE(nl) == 5 && PyList_GET_SIZE(cl) == 2;
    Py_XDECREF(nl);
    Py_XDECREF(cl);
    PyErr_Clear();
    return ok;
}

/* Whether this genome class keeps neatpar's operators (-1 on error). */
static int
plain_type(PyObject *type)
{
    if (type == genome_class)
        return 1;
    PyObject *known = PyDict_GetItemWithError(plain_types, type);
    if (known)
        return known == Py_True;
    if (PyErr_Occurred())
        return -1;
    PyObject *v = PyObject_CallOneArg(plain_class_fn, type);
    if (!v)
        return -1;
    int plain = PyObject_IsTrue(v);
    int rc = PyDict_SetItem(plain_types, type, plain ? Py_True : Py_False);
    Py_DECREF(v);
    return rc < 0 ? -1 : plain;
}

static int
cfg_load(Cfg *c, PyObject *config)
{
    memset(c, 0, sizeof *c);
    c->config = Py_NewRef(config);
    c->standard = standard_config(config);
    PyObject *surer = PyObject_CallMethod(config, "check_structural_mutation_surer", NULL);
    if (!surer)
        goto fail;
    c->surer = PyObject_IsTrue(surer);
    Py_DECREF(surer);
    c->initial_connection = PyObject_GetAttrString(config, "initial_connection");
    PyObject *frac = PyObject_GetAttrString(config, "connection_fraction");
    if (!c->initial_connection || !frac)
        goto fail;
    c->connection_fraction = frac == Py_None ? 0.0 : PyFloat_AsDouble(frac);
    Py_DECREF(frac);
    if (c->surer < 0 || PyErr_Occurred()
        || cfg_long(config, "num_inputs", &c->num_inputs) < 0
        || cfg_long(config, "num_outputs", &c->num_outputs) < 0
        || cfg_long(config, "num_hidden", &c->num_hidden) < 0
        || cfg_truth(config, "feed_forward", &c->feed_forward) < 0
        || cfg_truth(config, "single_structural_mutation", &c->single_structural) < 0
        || cfg_double(config, "compatibility_disjoint_coefficient", &c->cdc) < 0
        || cfg_double(config, "compatibility_weight_coefficient", &c->cwc) < 0
        || cfg_double(config, "conn_add_prob", &c->conn_add) < 0
        || cfg_double(config, "conn_delete_prob", &c->conn_delete) < 0
        || cfg_double(config, "node_add_prob", &c->node_add) < 0
        || cfg_double(config, "node_delete_prob", &c->node_delete) < 0
        || cfg_keys(config, "input_keys", &c->input_keys, &c->n_input_keys) < 0
        || cfg_keys(config, "output_keys", &c->output_keys, &c->n_output_keys) < 0
        || cfg_float_attr(config, "bias", &c->bias) < 0
        || cfg_float_attr(config, "response", &c->response) < 0
        || cfg_float_attr(config, "time_constant", &c->time_constant) < 0
        || cfg_float_attr(config, "weight", &c->weight) < 0
        || cfg_bool_attr(config, &c->enabled) < 0
        || cfg_str_attr(config, "activation", &c->activation) < 0
        || cfg_str_attr(config, "aggregation", &c->aggregation) < 0)
        goto fail;
    return 0;
fail:
    cfg_clear(c);
    return -1;
}

/* A genome config read once (what a reproduction or create_new passes to every operator it runs,
   instead of the config, so that it is read once, not once per genome). */
typedef struct {
    PyObject_HEAD
    Cfg cfg;
} ConfigView;

static PyTypeObject ConfigViewType;

static PyObject *
ConfigView_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *config;
    if (!PyArg_ParseTuple(args, "O:ConfigView", &config))
        return NULL;
    ConfigView *v = PyObject_New(ConfigView, &ConfigViewType);
    if (!v)
        return NULL;
    if (cfg_load(&v->cfg, config) < 0) {
        memset(&v->cfg, 0, sizeof v->cfg);
        Py_DECREF(v);
        return NULL;
    }
    return (PyObject *)v;
}

static void
ConfigView_dealloc(ConfigView *v)
{
    cfg_clear(&v->cfg);
    PyObject_Free(v);
}

static PyTypeObject ConfigViewType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "neatpar.evolution._core.ConfigView",
    .tp_doc = "ConfigView(genome_config): the config read once, for many operators in a row.",
    .tp_basicsize = sizeof(ConfigView),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = ConfigView_new,
    .tp_dealloc = (destructor)ConfigView_dealloc,
};

/* The config's records: a view's, or the config read into `local`. */
static Cfg *
cfg_acquire(PyObject *config, Cfg *local)
{
    if (Py_IS_TYPE(config, &ConfigViewType))
        return &((ConfigView *)config)->cfg;
    return cfg_load(local, config) < 0 ? NULL : local;
}

static void
cfg_release(Cfg *c, Cfg *local)
{
    if (c == local)
        cfg_clear(c);
}

static int
is_output(const Cfg *c, int64_t key)
{
    for (Py_ssize_t i = 0; i < c->n_output_keys; i++)
        if (c->output_keys[i] == key)
            return 1;
    return 0;
}

static int
is_input(const Cfg *c, int64_t key)
{
    for (Py_ssize_t i = 0; i < c->n_input_keys; i++)
        if (c->input_keys[i] == key)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Attributes (neat/attributes.py)                                                            */

/* FloatAttribute.clamp: max(min(value, max_value), min_value) */
static inline double
clamp(const FloatCfg *f, double v)
{
    double t = (f->max_value < v) ? f->max_value : v;
    return (f->min_value > t) ? f->min_value : t;
}

static int
float_init(Rng *r, const FloatCfg *f, double *out)
{
    if (f->init_type == INIT_GAUSS) {
        *out = clamp(f, rng_gauss(r, f->init_mean, f->init_stdev));
        return 0;
    }
    if (f->init_type == INIT_UNIFORM) {
        double lo = f->init_mean - (2 * f->init_stdev), hi = f->init_mean + (2 * f->init_stdev);
        lo = (lo > f->min_value) ? lo : f->min_value;   /* max(min_value, mean - 2 stdev) */
        hi = (hi < f->max_value) ? hi : f->max_value;   /* min(max_value, mean + 2 stdev) */
        *out = rng_uniform(r, lo, hi);
        return 0;
    }
    PyErr_Format(PyExc_RuntimeError, "Unknown init_type %R for %s_init_type", f->init_type_raw, f->name);
    return -1;
}

static int
float_mutate(Rng *r, const FloatCfg *f, double *v)
{
    double x = rng_random(r);
    if (x < f->mutate_rate) {
        *v = clamp(f, *v + rng_gauss(r, 0.0, f->mutate_power));
        return 0;
    }
    if (x < f->replace_rate + f->mutate_rate)
        return float_init(r, f, v);
    return 0;
}

static int
bool_init(Rng *r, const BoolCfg *b, int32_t *out)
{
    switch (b->deflt) {
    case BOOL_TRUE: *out = 1; return 0;
    case BOOL_FALSE: *out = 0; return 0;
    case BOOL_RANDOM: *out = rng_random(r) < 0.5; return 0;
    }
    PyErr_Format(PyExc_RuntimeError, "Unknown default value %R for enabled", b->default_lower);
    return -1;
}

static void
bool_mutate(Rng *r, const BoolCfg *b, int32_t *v)
{
    double rate = b->mutate_rate + (*v ? b->rate_to_false_add : b->rate_to_true_add);
    if (rate > 0) {
        double x = rng_random(r);
        if (x < rate)
            *v = rng_random(r) < 0.5;
    }
}

static int
str_init(Rng *r, const StrCfg *s, int32_t *out)
{
    if (!s->random_default) {
        *out = s->default_id;
        return 0;
    }
    Py_ssize_t i = rng_choice(r, s->n_options);
    if (i < 0)
        return -1;
    *out = s->options[i];
    return 0;
}

static int
str_mutate(Rng *r, const StrCfg *s, int32_t *v)
{
    if (s->mutate_rate > 0) {
        double x = rng_random(r);
        if (x < s->mutate_rate) {
            Py_ssize_t i = rng_choice(r, s->n_options);
            if (i < 0)
                return -1;
            *v = s->options[i];
        }
    }
    return 0;
}

/* DefaultGenome.create_node: init_attributes in _gene_attributes order */
static int
node_init(Rng *r, const Cfg *c, Node *n, int64_t key)
{
    n->key = key;
    return (float_init(r, &c->bias, &n->bias) < 0 || float_init(r, &c->response, &n->response) < 0
            || str_init(r, &c->activation, &n->act) < 0 || str_init(r, &c->aggregation, &n->agg) < 0
            || float_init(r, &c->time_constant, &n->time_constant) < 0) ? -1 : 0;
}

static int
conn_init(Rng *r, const Cfg *c, Conn *g, int64_t in, int64_t out, int64_t innov)
{
    g->in = in;
    g->out = out;
    g->innov = innov;
    g->pad = 0;
    return (float_init(r, &c->weight, &g->weight) < 0 || bool_init(r, &c->enabled, &g->enabled) < 0) ? -1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Python-side state the operators use: innovation numbers, node keys                         */

static PyObject *
tracker_of(const Cfg *c, const char *message)
{
    PyObject *t = PyObject_GetAttr(c->config, str_innovation_tracker);
    if (t && t == Py_None) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_AssertionError, message);
        return NULL;
    }
    return t;
}

/* config.innovation_tracker.get_innovation_number(i, o, kind); for neat-python's own tracker its
   method done here: the generation's number for (i, o, kind), else global_counter + 1, recorded. */
static int
innovation(PyObject *tracker, int64_t i, int64_t o, PyObject *kind, int64_t *out)
{
    PyObject *v = NULL;
    if (Py_IS_TYPE(tracker, (PyTypeObject *)tracker_class)) {
        PyObject *seen = PyObject_GetAttrString(tracker, "generation_innovations");
        PyObject *key = seen ? Py_BuildValue("(LLO)", (long long)i, (long long)o, kind) : NULL;
        v = key ? PyDict_GetItemWithError(seen, key) : NULL;
        if (v)
            Py_INCREF(v);
        else if (key && !PyErr_Occurred()) {
            PyObject *counter = PyObject_GetAttrString(tracker, "global_counter");
            v = counter ? PyNumber_Add(counter, one) : NULL;
            Py_XDECREF(counter);
            if (v && (PyObject_SetAttrString(tracker, "global_counter", v) < 0 || PyDict_SetItem(seen, key, v) < 0))
                Py_CLEAR(v);
        }
        Py_XDECREF(seen);
        Py_XDECREF(key);
    }
    else
        v = PyObject_CallMethod(tracker, "get_innovation_number", "LLO", (long long)i, (long long)o, kind);
    if (!v)
        return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* DefaultGenomeConfig.get_new_node_key */
static int
new_node_key(const Cfg *c, const Genes *g, int64_t *out)
{
    PyObject *indexer = PyObject_GetAttr(c->config, str_node_indexer);
    if (!indexer)
        return -1;
    if (indexer == Py_None) {
        Py_DECREF(indexer);
        int64_t start = c->num_outputs;
        if (g->nn) {
            start = g->nodes[0].key;
            for (Py_ssize_t i = 1; i < g->nn; i++)
                if (g->nodes[i].key > start)
                    start = g->nodes[i].key;
            start += 1;
        }
        indexer = PyObject_CallFunction(count_type, "L", (long long)start);
        if (!indexer || PyObject_SetAttr(c->config, str_node_indexer, indexer) < 0) {
            Py_XDECREF(indexer);
            return -1;
        }
    }
    PyObject *v = PyIter_Next(indexer);
    Py_DECREF(indexer);
    if (!v) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "neatpar: the node indexer ran out");
        return -1;
    }
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (*out == -1 && PyErr_Occurred())
        return -1;
    if (has_node(g, *out)) {
        PyErr_SetString(PyExc_AssertionError, "");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Graphs (neat/graphs.py)                                                                     */

/* A small open-addressing set of node keys. */
typedef struct { int64_t *keys; uint8_t *used; size_t mask; } KeySet;

static int
keyset_init(KeySet *s, Py_ssize_t n)
{
    size_t size = 16;
    while (size < (size_t)n * 2 + 2)
        size <<= 1;
    s->mask = size - 1;
    s->keys = PyMem_Malloc(sizeof(int64_t) * size);
    s->used = PyMem_Calloc(size, 1);
    if (!s->keys || !s->used) {
        PyMem_Free(s->keys);
        PyMem_Free(s->used);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
keyset_free(KeySet *s)
{
    PyMem_Free(s->keys);
    PyMem_Free(s->used);
}

/* Adds key; returns 1 if it was new. */
static int
keyset_add(KeySet *s, int64_t key)
{
    size_t i = ((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> 20 & s->mask;
    while (s->used[i]) {
        if (s->keys[i] == key)
            return 0;
        i = (i + 1) & s->mask;
    }
    s->used[i] = 1;
    s->keys[i] = key;
    return 1;
}

static int
keyset_has(const KeySet *s, int64_t key)
{
    size_t i = ((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> 20 & s->mask;
    while (s->used[i]) {
        if (s->keys[i] == key)
            return 1;
        i = (i + 1) & s->mask;
    }
    return 0;
}

/* creates_cycle(list(g.connections), (i, o)): i == o, or i reachable from o over every
   connection gene (enabled or not). The answer does not depend on the order of the scan. */
static int
creates_cycle(const Genes *g, int64_t i, int64_t o)
{
    if (i == o)
        return 1;
    KeySet visited;
    if (keyset_init(&visited, g->nc + 1) < 0)
        return -1;
    keyset_add(&visited, o);
    int found = 0;
    for (;;) {
        Py_ssize_t added = 0;
        for (Py_ssize_t k = 0; k < g->nc && !found; k++) {
            const Conn *c = &g->conns[k];
            if (keyset_has(&visited, c->in) && !keyset_has(&visited, c->out)) {
                if (c->out == i)
                    found = 1;
                keyset_add(&visited, c->out);
                added++;
            }
        }
        if (found || added == 0)
            break;
    }
    keyset_free(&visited);
    return found;
}

/* Whether the graph of all connection genes has no cycle (self-loops included); cached. */
static int
is_acyclic(Genes *g)
{
    if (g->acyclic >= 0)
        return g->acyclic;
    /* Kahn's algorithm over node keys ranked by sorting. */
    Py_ssize_t m = g->nc, nk = 0;
    int64_t *keys = PyMem_Malloc(sizeof(int64_t) * (2 * m + 1));
    Py_ssize_t *indeg = NULL, *head = NULL, *next = NULL, *queue = NULL;
    int result = -1;
    if (!keys)
        goto done;
    for (Py_ssize_t k = 0; k < m; k++) {
        keys[nk++] = g->conns[k].in;
        keys[nk++] = g->conns[k].out;
    }
    qsort(keys, nk, sizeof(int64_t), cmp_int64);
    Py_ssize_t u = 0;
    for (Py_ssize_t k = 0; k < nk; k++)
        if (u == 0 || keys[u - 1] != keys[k])
            keys[u++] = keys[k];
    indeg = PyMem_Calloc(u + 1, sizeof(Py_ssize_t));
    head = PyMem_Malloc(sizeof(Py_ssize_t) * (u + 1));
    next = PyMem_Malloc(sizeof(Py_ssize_t) * (m + 1));
    queue = PyMem_Malloc(sizeof(Py_ssize_t) * (u + 1));
    if (!indeg || !head || !next || !queue)
        goto done;
    for (Py_ssize_t k = 0; k < u; k++)
        head[k] = -1;
    Py_ssize_t *src = PyMem_Malloc(sizeof(Py_ssize_t) * (m + 1)), *dst = PyMem_Malloc(sizeof(Py_ssize_t) * (m + 1));
    if (!src || !dst) {
        PyMem_Free(src);
        PyMem_Free(dst);
        goto done;
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        int64_t *p = bsearch(&g->conns[k].in, keys, u, sizeof(int64_t), cmp_int64);
        int64_t *q = bsearch(&g->conns[k].out, keys, u, sizeof(int64_t), cmp_int64);
        src[k] = p - keys;
        dst[k] = q - keys;
        next[k] = head[src[k]];
        head[src[k]] = k;
        indeg[dst[k]]++;
    }
    Py_ssize_t qh = 0, qt = 0, seen = 0;
    for (Py_ssize_t k = 0; k < u; k++)
        if (indeg[k] == 0)
            queue[qt++] = k;
    while (qh < qt) {
        Py_ssize_t v = queue[qh++];
        seen++;
        for (Py_ssize_t e = head[v]; e >= 0; e = next[e])
            if (--indeg[dst[e]] == 0)
                queue[qt++] = dst[e];
    }
    PyMem_Free(src);
    PyMem_Free(dst);
    result = g->acyclic = (seen == u);
done:
    if (result < 0)
        PyErr_NoMemory();
    PyMem_Free(keys);
    PyMem_Free(indeg);
    PyMem_Free(head);
    PyMem_Free(next);
    PyMem_Free(queue);
    return result;
}

/* ------------------------------------------------------------------------------------------ */
/* Set orders: re-enacted, or computed by real sets when the check at first use failed        */

static int check_sets(void);

static PyObject *
keys_list(const int64_t *keys, Py_ssize_t n)
{
    PyObject *l = PyList_New(n);
    for (Py_ssize_t i = 0; l && i < n; i++) {
        PyObject *v = PyLong_FromLongLong(keys[i]);
        if (!v) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, v);
    }
    return l;
}

static Py_ssize_t
keys_from_list(PyObject *list, int64_t *dst, Py_ssize_t room)
{
    PyObject *seq = PySequence_Fast(list, "neatpar: a list of keys was expected");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > room) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_RuntimeError, "neatpar: a reference set order has more keys than expected");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        dst[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    return PyErr_Occurred() ? -1 : n;
}

/* list((set(dict.fromkeys(nodes)) - set(outputs)) | set(inputs)) into dst (room for
   n_nodes + n_inputs keys). Returns the length, -1 on error. */
static Py_ssize_t
possible_inputs_order(const int64_t *nodes, Py_ssize_t nn, const int64_t *outputs, Py_ssize_t no,
                      const int64_t *inputs, Py_ssize_t ni, int64_t *dst)
{
    if (sets_emulated < 0 && check_sets() < 0)
        return -1;
    if (sets_emulated) {
        PSet a, b, d, i, e;
        ps_init(&a); ps_init(&b); ps_init(&d); ps_init(&i); ps_init(&e);
        Py_ssize_t n = -1;
        int rc = ps_from_dict_keys(&a, nodes, nn);
        if (rc == 0)
            rc = ps_add_all(&b, outputs, no, 0);
        if (rc == 0)
            rc = ps_difference(&a, &b, &d);
        if (rc == 0)
            rc = ps_add_all(&i, inputs, ni, 0);
        if (rc == 0)
            rc = ps_merge(&e, &d);
        if (rc == 0)
            rc = ps_merge(&e, &i);
        if (rc == 0) {
            ps_order(&e, dst);
            n = e.used;
        }
        ps_free(&a); ps_free(&b); ps_free(&d); ps_free(&i); ps_free(&e);
        if (rc <= 0)
            return rc < 0 ? -1 : n;
        /* rc == 1: a case the emulation leaves to real sets */
    }
    PyObject *ln = keys_list(nodes, nn), *lo = keys_list(outputs, no), *li = keys_list(inputs, ni);
    PyObject *order = ln && lo && li ? PyObject_CallFunctionObjArgs(reference_inputs, ln, lo, li, NULL) : NULL;
    Py_XDECREF(ln); Py_XDECREF(lo); Py_XDECREF(li);
    if (!order)
        return -1;
    Py_ssize_t n = keys_from_list(order, dst, nn + ni);
    Py_DECREF(order);
    return n;
}

/* The union set(innovations of p1) | set(innovations of p2), built into u with payloads: a = the
   position in p1 of the last gene with that innovation, b = the same in p2. When the emulation is
   off, `order` receives the real set's iteration order (else order stays unused). */
static int
innovation_union(const Genes *p1, const Genes *p2, PSet *s1, PSet *s2, PSet *u, int64_t *order, Py_ssize_t *n_order)
{
    int64_t *k1 = PyMem_Malloc(sizeof(int64_t) * (p1->nc + 1)), *k2 = PyMem_Malloc(sizeof(int64_t) * (p2->nc + 1));
    int rc = -1;
    if (!k1 || !k2) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < p1->nc; i++)
        k1[i] = p1->conns[i].innov;
    for (Py_ssize_t i = 0; i < p2->nc; i++)
        k2[i] = p2->conns[i].innov;
    if (ps_add_all(s1, k1, p1->nc, 0) < 0 || ps_add_all(s2, k2, p2->nc, 1) < 0
        || ps_merge(u, s1) < 0 || ps_merge(u, s2) < 0)
        goto done;
    *n_order = -1;
    if (!sets_emulated) {
        PyObject *l1 = keys_list(k1, p1->nc), *l2 = keys_list(k2, p2->nc);
        PyObject *res = l1 && l2 ? PyObject_CallFunctionObjArgs(reference_union, l1, l2, NULL) : NULL;
        Py_XDECREF(l1);
        Py_XDECREF(l2);
        if (!res)
            goto done;
        *n_order = keys_from_list(res, order, p1->nc + p2->nc);
        Py_DECREF(res);
        if (*n_order < 0)
            goto done;
    }
    rc = 0;
done:
    PyMem_Free(k1);
    PyMem_Free(k2);
    return rc;
}

/* The check at first use: the emulated orders against real sets on varied keys. */
static int
check_sets(void)
{
    PyObject *ok = PyObject_CallNoArgs(sets_check);
    if (!ok)
        return -1;
    sets_emulated = PyObject_IsTrue(ok);
    Py_DECREF(ok);
    return sets_emulated < 0 ? -1 : 0;
}

static PyObject *
emulated_union(PyObject *mod, PyObject *args)
{
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO", &a, &b))
        return NULL;
    Py_ssize_t na = PySequence_Length(a), nb = PySequence_Length(b);
    if (na < 0 || nb < 0)
        return NULL;
    int64_t *ka = PyMem_Malloc(sizeof(int64_t) * (na + nb + 1));
    PyObject *result = NULL;
    PSet s1, s2, u;
    ps_init(&s1); ps_init(&s2); ps_init(&u);
    if (!ka)
        return PyErr_NoMemory();
    if (keys_from_list(a, ka, na) < 0 || keys_from_list(b, ka + na, nb) < 0)
        goto done;
    if (ps_add_all(&s1, ka, na, 0) == 0 && ps_add_all(&s2, ka + na, nb, 1) == 0
        && ps_merge(&u, &s1) == 0 && ps_merge(&u, &s2) == 0) {
        ps_order(&u, ka);
        result = keys_list(ka, u.used);
    }
done:
    ps_free(&s1); ps_free(&s2); ps_free(&u);
    PyMem_Free(ka);
    return result;
}

static PyObject *
emulated_inputs(PyObject *mod, PyObject *args)
{
    PyObject *nodes, *outs, *ins;
    if (!PyArg_ParseTuple(args, "OOO", &nodes, &outs, &ins))
        return NULL;
    Py_ssize_t nn = PySequence_Length(nodes), no = PySequence_Length(outs), ni = PySequence_Length(ins);
    if (nn < 0 || no < 0 || ni < 0)
        return NULL;
    int64_t *k = PyMem_Malloc(sizeof(int64_t) * (2 * (nn + no + ni) + 1));
    if (!k)
        return PyErr_NoMemory();
    PyObject *result = NULL;
    int64_t *kn = k, *ko = k + nn, *ki = ko + no, *dst = ki + ni;
    if (keys_from_list(nodes, kn, nn) >= 0 && keys_from_list(outs, ko, no) >= 0 && keys_from_list(ins, ki, ni) >= 0) {
        int saved = sets_emulated;
        sets_emulated = 1;  /* this entry point always re-enacts (it is what the check compares) */
        PSet a, b, d, i, e;
        ps_init(&a); ps_init(&b); ps_init(&d); ps_init(&i); ps_init(&e);
        int rc = ps_from_dict_keys(&a, kn, nn);
        if (rc == 0) rc = ps_add_all(&b, ko, no, 0);
        if (rc == 0) rc = ps_difference(&a, &b, &d);
        if (rc == 0) rc = ps_add_all(&i, ki, ni, 0);
        if (rc == 0) rc = ps_merge(&e, &d);
        if (rc == 0) rc = ps_merge(&e, &i);
        if (rc == 0) {
            ps_order(&e, dst);
            result = keys_list(dst, e.used);
        }
        else if (rc == 1)
            result = Py_NewRef(Py_None);
        ps_free(&a); ps_free(&b); ps_free(&d); ps_free(&i); ps_free(&e);
        sets_emulated = saved;
    }
    PyMem_Free(k);
    return result;
}

/* ------------------------------------------------------------------------------------------ */
/* Operators (neat/genome.py, neat/genes.py)                                                  */

static int
begin(Rng *r)
{
    if (rng_in_place < 0)
        rng_in_place = rng_layout_ok(random_module);
    return rng_begin(r, random_inst, rng_in_place);
}

/* DefaultGenome.configure_crossover into the empty child `g`, parent1 (`p1`) being the fitter. */
static int
crossover_genes(Rng *r, const Cfg *c, Genes *g, Genes *p1, Genes *p2)
{
    if (g->nn || g->nc) {
        PyErr_SetString(PyExc_ValueError, "neatpar: crossover fills an empty genome");
        return -1;
    }
    int rc = -1;
    PSet s1, s2, u;
    ps_init(&s1); ps_init(&s2); ps_init(&u);
    int64_t *order = NULL;
    if (!sets_emulated || sets_emulated < 0) {
        if (sets_emulated < 0 && check_sets() < 0)
            goto done;
        order = PyMem_Malloc(sizeof(int64_t) * (p1->nc + p2->nc + 1));
        if (!order) {
            PyErr_NoMemory();
            goto done;
        }
    }
    Py_ssize_t n_order;
    if (innovation_union(p1, p2, &s1, &s2, &u, order, &n_order) < 0)
        goto done;
    if (reserve((void **)&g->conns, &g->conn_cap, p1->nc + 4, sizeof(Conn)) < 0
        || reserve((void **)&g->nodes, &g->node_cap, p1->nn + 2, sizeof(Node)) < 0)
        goto done;
    /* A child's connection keys are a subset of parent1's: when parent1 has no cycle, no gene can
       close one and creates_cycle is False for every gene. */
    int check = 0;
    if (c->feed_forward) {
        int acyclic = is_acyclic(p1);
        if (acyclic < 0)
            goto done;
        check = !acyclic;
    }
    Py_ssize_t slots = n_order >= 0 ? n_order : (Py_ssize_t)u.mask + 1;
    for (Py_ssize_t s = 0; s < slots; s++) {
        const PSEntry *e;
        if (n_order >= 0) {
            e = ps_find(&u, order[s], ps_hash(order[s]));
            if (!e) {
                PyErr_SetString(PyExc_RuntimeError, "neatpar: reference set order has an unknown innovation");
                goto done;
            }
        }
        else {
            e = &u.table[s];
            if (!PS_IS_ACTIVE(e))
                continue;
        }
        if (PS_A(e) < 0)
            continue;  /* genes only in parent2 (less fit) are not inherited */
        const Conn *c1 = &p1->conns[PS_A(e)];
        Conn child = *c1;
        if (e->b >= 0) {
            const Conn *c2 = &p2->conns[e->b];
            if (c1->in != c2->in || c1->out != c2->out) {
                if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                        "Innovation number collision: innovation %lld assigned to both (%lld, %lld) and "
                        "(%lld, %lld). Treating as disjoint genes.", (long long)c1->innov,
                        (long long)c1->in, (long long)c1->out, (long long)c2->in, (long long)c2->out) < 0)
                    goto done;
            }
            else {
                /* BaseGene.crossover: each attribute from self if random() > 0.5, then the 75% rule */
                child.weight = rng_random(r) > 0.5 ? c1->weight : c2->weight;
                child.enabled = rng_random(r) > 0.5 ? c1->enabled : c2->enabled;
                if (!c1->enabled || !c2->enabled) {
                    if (rng_random(r) < 0.75)
                        child.enabled = 0;
                }
            }
        }
        if (check) {
            int cyc = creates_cycle(g, child.in, child.out);
            if (cyc < 0)
                goto done;
            if (cyc)
                continue;
        }
        g->conns[g->nc++] = child;
    }
    if (!view_of(p2))
        goto done;
    for (Py_ssize_t i = 0; i < p1->nn; i++) {
        const Node *n1 = &p1->nodes[i];
        Py_ssize_t j = node_pos(p2, n1->key);
        Node child = *n1;
        if (j >= 0) {
            const Node *n2 = &p2->nodes[j];
            child.bias = rng_random(r) > 0.5 ? n1->bias : n2->bias;
            child.response = rng_random(r) > 0.5 ? n1->response : n2->response;
            child.act = rng_random(r) > 0.5 ? n1->act : n2->act;
            child.agg = rng_random(r) > 0.5 ? n1->agg : n2->agg;
            child.time_constant = rng_random(r) > 0.5 ? n1->time_constant : n2->time_constant;
        }
        g->nodes[g->nn++] = child;
    }
    rc = 0;
done:
    ps_free(&s1); ps_free(&s2); ps_free(&u);
    PyMem_Free(order);
    genes_changed(g);
    return rc;
}

/* parent1 is genome1 if genome1.fitness > genome2.fitness, else genome2 */
static int
fitter_first(PyObject *f1, PyObject *f2)
{
    return PyObject_RichCompareBool(f1, f2, Py_GT);
}

/* DefaultGenome.configure_crossover(genome1, genome2) into the empty child `g`. */
static int
crossover(Rng *r, const Cfg *c, Genes *g, PyObject *genome1, PyObject *genome2, PyObject *snapshots)
{
    PyObject *f1 = PyObject_GetAttr(genome1, str_fitness), *f2 = f1 ? PyObject_GetAttr(genome2, str_fitness) : NULL;
    int gt = f2 ? fitter_first(f1, f2) : -1;
    Py_XDECREF(f1);
    Py_XDECREF(f2);
    if (gt < 0)
        return -1;
    Genes *p1 = genes_of(gt ? genome1 : genome2, snapshots), *p2 = p1 ? genes_of(gt ? genome2 : genome1, snapshots) : NULL;
    int rc = p2 ? crossover_genes(r, c, g, p1, p2) : -1;
    Py_XDECREF(p1);
    Py_XDECREF(p2);
    return rc;
}

static const char TRACKER_MUTATE[] = "Innovation tracker must be set before genome mutations. "
                                     "This should be set by the reproduction module.";

static int mutate_add_connection(Rng *r, const Cfg *c, Genes *g);

/* DefaultGenome.add_connection(config, i, o, weight, enabled, innovation) */
static int
add_connection(Rng *r, const Cfg *c, Genes *g, int64_t i, int64_t o, double weight, int enabled, int64_t innov)
{
    Conn cg;
    if (o < 0) {
        PyErr_SetString(PyExc_AssertionError, "");
        return -1;
    }
    if (conn_init(r, c, &cg, i, o, innov) < 0)
        return -1;
    cg.weight = weight;
    cg.enabled = enabled;
    return set_conn(g, &cg);
}

static int
mutate_add_node(Rng *r, const Cfg *c, Genes *g)
{
    if (g->nc == 0) {
        if (c->surer)
            return mutate_add_connection(r, c, g);
        return 0;
    }
    PyObject *tracker = tracker_of(c, TRACKER_MUTATE);
    if (!tracker)
        return -1;
    int rc = -1;
    Py_ssize_t at = rng_choice(r, g->nc);
    int64_t new_id, in_innov, out_innov;
    Node n;
    if (at < 0 || new_node_key(c, g, &new_id) < 0 || node_init(r, c, &n, new_id) < 0)
        goto done;
    n.bias = 0.0;  /* hasattr(ng, "bias"): ng.bias = 0.0 */
    if (push_node(g, &n) < 0)
        goto done;
    g->conns[at].enabled = 0;
    int64_t i = g->conns[at].in, o = g->conns[at].out;
    if (innovation(tracker, i, new_id, str_add_node_in, &in_innov) < 0
        || innovation(tracker, new_id, o, str_add_node_out, &out_innov) < 0
        || add_connection(r, c, g, i, new_id, 1.0, 1, in_innov) < 0)
        goto done;
    /* conn_to_split.weight: the split gene, wherever it now sits */
    Py_ssize_t split = find_conn(g, i, o);
    if (add_connection(r, c, g, new_id, o, g->conns[split].weight, 1, out_innov) < 0)
        goto done;
    rc = 0;
done:
    Py_DECREF(tracker);
    return rc;
}

static int
mutate_add_connection(Rng *r, const Cfg *c, Genes *g)
{
    PyObject *tracker = tracker_of(c, TRACKER_MUTATE);
    if (!tracker)
        return -1;
    int rc = -1;
    int64_t *keys = PyMem_Malloc(sizeof(int64_t) * (2 * (g->nn + c->n_input_keys) + 1));
    if (!keys) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t oi = rng_choice(r, g->nn);
    if (oi < 0)
        goto done;
    int64_t out_node = g->nodes[oi].key;
    int64_t *node_keys = keys + g->nn + c->n_input_keys;
    for (Py_ssize_t k = 0; k < g->nn; k++)
        node_keys[k] = g->nodes[k].key;
    Py_ssize_t np = possible_inputs_order(node_keys, g->nn, c->output_keys, c->n_output_keys,
                                          c->input_keys, c->n_input_keys, keys);
    if (np < 0)
        goto done;
    Py_ssize_t ii = rng_choice(r, np);
    if (ii < 0)
        goto done;
    int64_t in_node = keys[ii];
    Py_ssize_t existing = find_conn(g, in_node, out_node);
    if (existing >= 0) {
        if (c->surer) {
            g->conns[existing].enabled = 1;
        }
        rc = 0;
        goto done;
    }
    if (is_output(c, in_node) && is_output(c, out_node)) {
        rc = 0;
        goto done;
    }
    if (c->feed_forward) {
        int cyc = creates_cycle(g, in_node, out_node);
        if (cyc < 0)
            goto done;
        if (cyc) {
            rc = 0;
            goto done;
        }
    }
    int64_t innov;
    Conn cg;
    if (innovation(tracker, in_node, out_node, str_add_connection, &innov) < 0
        || conn_init(r, c, &cg, in_node, out_node, innov) < 0 || set_conn(g, &cg) < 0)
        goto done;
    rc = 0;
done:
    PyMem_Free(keys);
    Py_DECREF(tracker);
    return rc;
}

static int
mutate_delete_node(Rng *r, const Cfg *c, Genes *g)
{
    Py_ssize_t navail = 0;
    Py_ssize_t *avail = PyMem_Malloc(sizeof(Py_ssize_t) * (g->nn + 1));
    if (!avail) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < g->nn; k++)
        if (!is_output(c, g->nodes[k].key))
            avail[navail++] = k;
    if (navail == 0) {
        PyMem_Free(avail);
        return 0;
    }
    Py_ssize_t pick = rng_choice(r, navail);
    if (pick < 0) {
        PyMem_Free(avail);
        return -1;
    }
    Py_ssize_t at = avail[pick];
    PyMem_Free(avail);
    int64_t del_key = g->nodes[at].key;
    Py_ssize_t w = 0;
    for (Py_ssize_t k = 0; k < g->nc; k++)
        if (g->conns[k].in != del_key && g->conns[k].out != del_key)
            g->conns[w++] = g->conns[k];
    g->nc = w;
    memmove(&g->nodes[at], &g->nodes[at + 1], sizeof(Node) * (g->nn - at - 1));
    g->nn--;
    return 0;
}

static int
mutate_delete_connection(Rng *r, Genes *g)
{
    if (g->nc == 0)
        return 0;
    Py_ssize_t at = rng_choice(r, g->nc);
    if (at < 0)
        return -1;
    memmove(&g->conns[at], &g->conns[at + 1], sizeof(Conn) * (g->nc - at - 1));
    g->nc--;
    return 0;
}

/* DefaultGenome.mutate */
static int
mutate(Rng *r, const Cfg *c, Genes *g)
{
    int rc = 0;
    if (c->single_structural) {
        double sum = c->node_add + c->node_delete + c->conn_add + c->conn_delete;
        double div = sum > 1 ? sum : 1;  /* max(1, ...) */
        double x = rng_random(r);
        if (x < c->node_add / div)
            rc = mutate_add_node(r, c, g);
        else if (x < (c->node_add + c->node_delete) / div)
            rc = mutate_delete_node(r, c, g);
        else if (x < (c->node_add + c->node_delete + c->conn_add) / div)
            rc = mutate_add_connection(r, c, g);
        else if (x < (c->node_add + c->node_delete + c->conn_add + c->conn_delete) / div)
            rc = mutate_delete_connection(r, g);
    }
    else {
        if (rng_random(r) < c->node_add)
            rc = mutate_add_node(r, c, g);
        if (rc == 0 && rng_random(r) < c->node_delete)
            rc = mutate_delete_node(r, c, g);
        if (rc == 0 && rng_random(r) < c->conn_add)
            rc = mutate_add_connection(r, c, g);
        if (rc == 0 && rng_random(r) < c->conn_delete)
            rc = mutate_delete_connection(r, g);
    }
    genes_changed(g);
    if (rc < 0)
        return -1;
    for (Py_ssize_t k = 0; k < g->nc; k++) {
        Conn *cg = &g->conns[k];
        if (float_mutate(r, &c->weight, &cg->weight) < 0)
            return -1;
        bool_mutate(r, &c->enabled, &cg->enabled);
    }
    for (Py_ssize_t k = 0; k < g->nn; k++) {
        Node *n = &g->nodes[k];
        if (float_mutate(r, &c->bias, &n->bias) < 0 || float_mutate(r, &c->response, &n->response) < 0
            || str_mutate(r, &c->activation, &n->act) < 0 || str_mutate(r, &c->aggregation, &n->agg) < 0
            || float_mutate(r, &c->time_constant, &n->time_constant) < 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* configure_new and the initial connection schemes                                           */

static int
connect_pairs(Rng *r, const Cfg *c, Genes *g, PyObject *tracker, const int64_t *pairs, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t innov;
        Conn cg;
        if (innovation(tracker, pairs[2 * k], pairs[2 * k + 1], str_initial_connection, &innov) < 0
            || conn_init(r, c, &cg, pairs[2 * k], pairs[2 * k + 1], innov) < 0 || set_conn(g, &cg) < 0)
            return -1;
    }
    return 0;
}

/* compute_full_connections(config, direct): pairs into a new array (2 keys per pair). */
static int64_t *
full_connections(const Cfg *c, const Genes *g, int direct, Py_ssize_t *n)
{
    Py_ssize_t nh = 0, no = 0;
    for (Py_ssize_t k = 0; k < g->nn; k++) {
        if (is_output(c, g->nodes[k].key))
            no++;
        else
            nh++;
    }
    Py_ssize_t ni = c->n_input_keys;
    Py_ssize_t max = ni * nh + nh * no + ni * no + g->nn + 1;
    int64_t *p = PyMem_Malloc(sizeof(int64_t) * 2 * max);
    if (!p) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_ssize_t m = 0;
#define PAIR(a, b) do { p[2 * m] = (a); p[2 * m + 1] = (b); m++; } while (0)
    if (nh) {
        for (Py_ssize_t i = 0; i < ni; i++)
            for (Py_ssize_t k = 0; k < g->nn; k++)
                if (!is_output(c, g->nodes[k].key))
                    PAIR(c->input_keys[i], g->nodes[k].key);
        for (Py_ssize_t h = 0; h < g->nn; h++)
            if (!is_output(c, g->nodes[h].key))
                for (Py_ssize_t k = 0; k < g->nn; k++)
                    if (is_output(c, g->nodes[k].key))
                        PAIR(g->nodes[h].key, g->nodes[k].key);
    }
    if (direct || !nh)
        for (Py_ssize_t i = 0; i < ni; i++)
            for (Py_ssize_t k = 0; k < g->nn; k++)
                if (is_output(c, g->nodes[k].key))
                    PAIR(c->input_keys[i], g->nodes[k].key);
    if (!c->feed_forward)
        for (Py_ssize_t k = 0; k < g->nn; k++)
            PAIR(g->nodes[k].key, g->nodes[k].key);
#undef PAIR
    *n = m;
    return p;
}

/* The connection scheme's name as configure_new resolves it; `kind` is one of neat-python's
   allowed_connectivity names. */
static int
connect_initial(Rng *r, const Cfg *c, Genes *g, const char *kind)
{
    if (!strcmp(kind, "unconnected"))
        return 0;
    PyObject *tracker = tracker_of(c, "Innovation tracker must be set");
    if (!tracker)
        return -1;
    int rc = -1;
    int64_t *pairs = NULL;
    Py_ssize_t n = 0;
    if (!strncmp(kind, "fs_neat", 7)) {
        Py_ssize_t at = rng_choice(r, c->n_input_keys);
        if (at < 0)
            goto done;
        int64_t input_id = c->input_keys[at];
        pairs = PyMem_Malloc(sizeof(int64_t) * 2 * (g->nn + c->n_output_keys + 1));
        if (!pairs) {
            PyErr_NoMemory();
            goto done;
        }
        if (!strcmp(kind, "fs_neat_hidden")) {
            for (Py_ssize_t k = 0; k < g->nn; k++)
                if (!is_input(c, g->nodes[k].key)) {
                    pairs[2 * n] = input_id;
                    pairs[2 * n++ + 1] = g->nodes[k].key;
                }
        }
        else {
            for (Py_ssize_t k = 0; k < c->n_output_keys; k++) {
                pairs[2 * n] = input_id;
                pairs[2 * n++ + 1] = c->output_keys[k];
            }
        }
    }
    else {
        int direct = !strcmp(kind, "full_direct") || !strcmp(kind, "partial_direct");
        pairs = full_connections(c, g, direct, &n);
        if (!pairs)
            goto done;
        if (!strncmp(kind, "partial", 7)) {
            /* shuffle(all_connections); all_connections[:int(round(len * fraction))] */
            for (Py_ssize_t i = n - 1; i >= 1; i--) {
                Py_ssize_t j = rng_below(r, i + 1);
                int64_t a = pairs[2 * i], b = pairs[2 * i + 1];
                pairs[2 * i] = pairs[2 * j];
                pairs[2 * i + 1] = pairs[2 * j + 1];
                pairs[2 * j] = a;
                pairs[2 * j + 1] = b;
            }
            Py_ssize_t take = (Py_ssize_t)nearbyint((double)n * c->connection_fraction);
            n = take < n ? take : n;
        }
    }
    rc = connect_pairs(r, c, g, tracker, pairs, n);
done:
    PyMem_Free(pairs);
    Py_DECREF(tracker);
    return rc;
}

static int
configure_new(Rng *r, const Cfg *c, Genes *g, const char *kind)
{
    for (Py_ssize_t k = 0; k < c->n_output_keys; k++) {
        Node n;
        if (node_init(r, c, &n, c->output_keys[k]) < 0 || push_node(g, &n) < 0)
            return -1;
    }
    for (long h = 0; h < c->num_hidden; h++) {
        int64_t key;
        Node n;
        if (new_node_key(c, g, &key) < 0 || node_init(r, c, &n, key) < 0 || push_node(g, &n) < 0)
            return -1;
    }
    return connect_initial(r, c, g, kind);
}

/* ------------------------------------------------------------------------------------------ */
/* Distance (DefaultGenome.distance, genes' distance)                                         */

typedef struct {
    int32_t *match;              /* per gene of the first genome: position in the second, or -1 */
    Py_ssize_t cap;
} Scratch;

static int
scratch_reserve(Scratch *s, Py_ssize_t n)
{
    if (n <= s->cap)
        return 0;
    int32_t *m = PyMem_Realloc(s->match, sizeof(int32_t) * n);
    if (!m) {
        PyErr_NoMemory();
        return -1;
    }
    s->match = m;
    s->cap = n;
    return 0;
}

/* g0.distance(g1) over their views. match[p] is the position in g1 of g0's gene p, or -1 (slot n
   is a sink for genes of g1 that g0 lacks). The sums run in g0's dict order, as neat-python's. */
static double
genes_distance(const Genes *ga, const Genes *gb, double cdc, double cwc, Scratch *s)
{
    const View *a = ga->view, *b = gb->view;
    double node_distance = 0.0, connection_distance = 0.0;
    int32_t *match = s->match;
    if (a->nn || b->nn) {
        Py_ssize_t matched = 0;
        memset(match, 0xff, sizeof(int32_t) * (a->nn + 1));
        if (a->nn)
            for (Py_ssize_t j = 0; j < b->nn; j++) {
                Py_ssize_t p = view_node(a, b->nkey[j], b->nhash[j]);
                int found = p >= 0;
                match[found ? p : a->nn] = (int32_t)j;
                matched += found;
            }
        Py_ssize_t disjoint = (b->nn - matched) + (a->nn - matched);
        for (Py_ssize_t k = 0; k < a->nn; k++) {
            int32_t m = match[k];
            if (m < 0)
                continue;
            /* DefaultNodeGene.distance */
            double d = fabs(a->nbias[k] - b->nbias[m]) + fabs(a->nresp[k] - b->nresp[m]);
            d += fabs(a->ntc[k] - b->ntc[m]);
            if (a->nact[k] != b->nact[m])
                d += 1.0;
            if (a->nagg[k] != b->nagg[m])
                d += 1.0;
            node_distance += d * cwc;
        }
        Py_ssize_t max_nodes = a->nn > b->nn ? a->nn : b->nn;
        node_distance = (node_distance + (cdc * (double)disjoint)) / (double)max_nodes;
    }
    if (a->nc || b->nc) {
        Py_ssize_t matched = 0;
        memset(match, 0xff, sizeof(int32_t) * (a->nc + 1));
        if (a->nc) {
            /* keys compared as packed words, or as pairs when an end of a key needs more than 32 bits */
            int packed = a->packed && b->packed;
            for (Py_ssize_t j = 0; j < b->nc; j++) {
                uint32_t h = b->chash[j] & a->cmask;
                int32_t p;
                if (packed)
                    while ((p = a->ctable[h]) >= 0 && a->ckey[p] != b->ckey[j])
                        h = (h + 1) & a->cmask;
                else
                    while ((p = a->ctable[h]) >= 0
                           && (ga->conns[p].in != gb->conns[j].in || ga->conns[p].out != gb->conns[j].out))
                        h = (h + 1) & a->cmask;
                int found = p >= 0;
                match[found ? p : a->nc] = (int32_t)j;
                matched += found;
            }
        }
        Py_ssize_t disjoint = (b->nc - matched) + (a->nc - matched);
        for (Py_ssize_t k = 0; k < a->nc; k++) {
            int32_t m = match[k];
            if (m < 0)
                continue;
            /* DefaultConnectionGene.distance */
            double d = fabs(a->cw[k] - b->cw[m]);
            if (a->cen[k] != b->cen[m])
                d += 1.0;
            connection_distance += d * cwc;
        }
        Py_ssize_t max_conn = a->nc > b->nc ? a->nc : b->nc;
        connection_distance = (connection_distance + (cdc * (double)disjoint)) / (double)max_conn;
    }
    return node_distance + connection_distance;
}

static int
prepare_distance(Genes *g, Scratch *s)
{
    return (!view_of(g) || scratch_reserve(s, (g->nn > g->nc ? g->nn : g->nc) + 1) < 0) ? -1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Speciation (DefaultSpeciesSet.speciate's distance work)                                    */

static int distance_threads = 1;

/* Dense numbers for the node keys and the connection keys of every genome in one speciation
   (each gene's in its View's nid / cid): a row genome's gene positions then go into arrays indexed
   by number, and matching a column genome's genes against them is one load per gene. */
typedef struct {
    Py_ssize_t nodes, conns;
} IdCounts;

static int
number_genes(Genes **all, Py_ssize_t count, IdCounts *ids)
{
    Py_ssize_t total_n = 0, total_c = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        total_n += all[i]->view->nn;
        total_c += all[i]->view->nc;
    }
    size_t nts = table_size(total_n), cts = table_size(total_c);
    int32_t *ntab = PyMem_Malloc(4 * nts), *ctab = PyMem_Malloc(4 * cts);
    int64_t *nkeys = PyMem_Malloc(8 * (total_n + 1)), *cends = PyMem_Malloc(16 * (total_c + 1));
    int rc = -1;
    if (!ntab || !ctab || !nkeys || !cends) {
        PyErr_NoMemory();
        goto done;
    }
    memset(ntab, 0xff, 4 * nts);
    memset(ctab, 0xff, 4 * cts);
    uint32_t nmask = (uint32_t)(nts - 1), cmask = (uint32_t)(cts - 1);
    Py_ssize_t nn = 0, nc = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        const Genes *g = all[i];
        View *v = g->view;
        for (Py_ssize_t k = 0; k < v->nn; k++) {
            int64_t key = v->nkey[k];
            uint32_t h = v->nhash[k] & nmask;
            int32_t id;
            while ((id = ntab[h]) >= 0 && nkeys[id] != key)
                h = (h + 1) & nmask;
            if (id < 0) {
                id = ntab[h] = (int32_t)nn;
                nkeys[nn++] = key;
            }
            v->nid[k] = id;
        }
        for (Py_ssize_t k = 0; k < v->nc; k++) {
            int64_t in = g->conns[k].in, out = g->conns[k].out;
            uint32_t h = v->chash[k] & cmask;
            int32_t id;
            while ((id = ctab[h]) >= 0 && (cends[2 * id] != in || cends[2 * id + 1] != out))
                h = (h + 1) & cmask;
            if (id < 0) {
                id = ctab[h] = (int32_t)nc;
                cends[2 * nc] = in;
                cends[2 * nc++ + 1] = out;
            }
            v->cid[k] = id;
        }
    }
    ids->nodes = nn;
    ids->conns = nc;
    rc = 0;
done:
    PyMem_Free(ntab);
    PyMem_Free(ctab);
    PyMem_Free(nkeys);
    PyMem_Free(cends);
    return rc;
}

/* genes_distance(a, b) with a's gene positions laid out by dense number (npos, cpos; -1 where a
   lacks the gene): the same matches, the same sums in the same order. A term neat-python does not
   add is added as 0.0, which leaves the sum as it is (the sums start at +0.0 and never become
   -0.0), so that the loops have no unpredictable branch. */
static double
row_distance(const View *a, const View *b, const int32_t *npos, const int32_t *cpos, int32_t *match,
             double cdc, double cwc)
{
    double node_distance = 0.0, connection_distance = 0.0;
    if (a->nn || b->nn) {
        Py_ssize_t matched = 0;
        memset(match, 0xff, sizeof(int32_t) * (a->nn + 1));
        for (Py_ssize_t j = 0; j < b->nn; j++) {
            int32_t p = npos[b->nid[j]];
            int found = p >= 0;
            match[found ? p : a->nn] = (int32_t)j;
            matched += found;
        }
        Py_ssize_t disjoint = (b->nn - matched) + (a->nn - matched);
        if (b->nn)
            for (Py_ssize_t k = 0; k < a->nn; k++) {
                int32_t m = match[k], at = m < 0 ? 0 : m;
                /* DefaultNodeGene.distance */
                double d = fabs(a->nbias[k] - b->nbias[at]) + fabs(a->nresp[k] - b->nresp[at]);
                d += fabs(a->ntc[k] - b->ntc[at]);
                d += a->nact[k] != b->nact[at] ? 1.0 : 0.0;
                d += a->nagg[k] != b->nagg[at] ? 1.0 : 0.0;
                double term = d * cwc;
                node_distance += m >= 0 ? term : 0.0;
            }
        Py_ssize_t max_nodes = a->nn > b->nn ? a->nn : b->nn;
        node_distance = (node_distance + (cdc * (double)disjoint)) / (double)max_nodes;
    }
    if (a->nc || b->nc) {
        Py_ssize_t matched = 0;
        memset(match, 0xff, sizeof(int32_t) * (a->nc + 1));
        for (Py_ssize_t j = 0; j < b->nc; j++) {
            int32_t p = cpos[b->cid[j]];
            int found = p >= 0;
            match[found ? p : a->nc] = (int32_t)j;
            matched += found;
        }
        Py_ssize_t disjoint = (b->nc - matched) + (a->nc - matched);
        if (b->nc)
            for (Py_ssize_t k = 0; k < a->nc; k++) {
                int32_t m = match[k], at = m < 0 ? 0 : m;
                /* DefaultConnectionGene.distance */
                double d = fabs(a->cw[k] - b->cw[at]);
                d += a->cen[k] != b->cen[at] ? 1.0 : 0.0;
                double term = d * cwc;
                connection_distance += m >= 0 ? term : 0.0;
            }
        Py_ssize_t max_conn = a->nc > b->nc ? a->nc : b->nc;
        connection_distance = (connection_distance + (cdc * (double)disjoint)) / (double)max_conn;
    }
    return node_distance + connection_distance;
}

/* A grid of distances rows[r].distance(cols[c]), computed by several threads without the GIL
   (every genome's View built and its genes numbered beforehand; the threads only read). The work
   goes in tasks of one row and a block of columns, row by row, to whichever thread asks next (so
   a thread the machine keeps waiting holds up one block, not a share); a thread lays out its
   row's positions once for all the row's blocks it takes in a row. */
typedef struct {
    Genes **rows, **cols;
    Py_ssize_t nrows, ncols;
    double *out;                 /* nrows x ncols, row-major */
    atomic_size_t next_task;
    Py_ssize_t scratch;          /* genes of the largest genome */
    IdCounts ids;
    double cdc, cwc;
    atomic_int failed;
} Grid;

#define GRID_BLOCK 32

static void
lay_out(const View *a, int32_t *npos, int32_t *cpos, int on)
{
    for (Py_ssize_t k = 0; k < a->nn; k++)
        npos[a->nid[k]] = on ? (int32_t)k : -1;
    for (Py_ssize_t k = 0; k < a->nc; k++)
        cpos[a->cid[k]] = on ? (int32_t)k : -1;
}

static void *
grid_work(void *arg)
{
    Grid *g = arg;
    int32_t *match = malloc(sizeof(int32_t) * (g->scratch + 1));
    int32_t *npos = malloc(sizeof(int32_t) * (g->ids.nodes + 1)), *cpos = malloc(sizeof(int32_t) * (g->ids.conns + 1));
    if (!match || !npos || !cpos) {
        atomic_store(&g->failed, 1);
        goto done;
    }
    memset(npos, 0xff, sizeof(int32_t) * (g->ids.nodes + 1));
    memset(cpos, 0xff, sizeof(int32_t) * (g->ids.conns + 1));
    size_t blocks = (size_t)((g->ncols + GRID_BLOCK - 1) / GRID_BLOCK), tasks = blocks * (size_t)g->nrows;
    Py_ssize_t loaded = -1;
    for (;;) {
        size_t t = atomic_fetch_add(&g->next_task, 1);
        if (t >= tasks)
            break;
        Py_ssize_t r = (Py_ssize_t)(t / blocks), c0 = (Py_ssize_t)(t % blocks) * GRID_BLOCK;
        const View *a = g->rows[r]->view;
        if (r != loaded) {
            if (loaded >= 0)
                lay_out(g->rows[loaded]->view, npos, cpos, 0);
            lay_out(a, npos, cpos, 1);
            loaded = r;
        }
        Py_ssize_t c1 = c0 + GRID_BLOCK < g->ncols ? c0 + GRID_BLOCK : g->ncols;
        for (Py_ssize_t c = c0; c < c1; c++)
            g->out[r * g->ncols + c] = row_distance(a, g->cols[c]->view, npos, cpos, match, g->cdc, g->cwc);
    }
done:
    free(match);
    free(npos);
    free(cpos);
    return NULL;
}

static int
grid_compute(Genes **rows, Py_ssize_t nrows, Genes **cols, Py_ssize_t ncols, double *out, Py_ssize_t scratch,
             const IdCounts *ids, double cdc, double cwc)
{
    if (nrows * ncols == 0)
        return 0;
    int workers = nrows * ncols < 4096 ? 1 : distance_threads;
    pthread_t tids[16];
    int started[16] = {0};
    Grid grid;
    grid.rows = rows;
    grid.cols = cols;
    grid.nrows = nrows;
    grid.ncols = ncols;
    grid.out = out;
    atomic_init(&grid.next_task, 0);
    grid.scratch = scratch;
    grid.ids = *ids;
    grid.cdc = cdc;
    grid.cwc = cwc;
    atomic_init(&grid.failed, 0);
    Py_BEGIN_ALLOW_THREADS
    for (int w = 1; w < workers && w < 16; w++)
        started[w] = pthread_create(&tids[w], NULL, grid_work, &grid) == 0;
    grid_work(&grid);  /* this thread works too; tasks no thread could be had for are taken here */
    for (int w = 1; w < workers && w < 16; w++)
        if (started[w])
            pthread_join(tids[w], NULL);
    Py_END_ALLOW_THREADS
    if (atomic_load(&grid.failed)) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* GenomeDistanceCache, exactly: a distance asked for again (in either order) is the one computed
   first, and every new distance goes into the values neat-python averages, twice (once per order;
   once when both keys are equal).

   Genomes are numbered densely (members by position; an old representative not in the population
   after them). With distinct keys, a pair can be asked for twice only if one of its genomes is an
   old representative that is also a member (an elite kept its key): only such "hot" genomes keep
   a row of the distances computed with them. With repeated keys every genome is hot. */
typedef struct {
    int64_t *keys;               /* dense number -> key */
    Py_ssize_t count;            /* genomes numbered */
    int32_t *hot;                /* dense number -> hot row, or -1 */
    Py_ssize_t nhot;
    double *rows;                /* nhot x count */
    uint8_t *known;              /* nhot x count */
    double *values;
    Py_ssize_t nvalues, values_cap;
} DistCache;

static void
cache_free(DistCache *c)
{
    PyMem_Free(c->keys);
    PyMem_Free(c->hot);
    PyMem_Free(c->rows);
    PyMem_Free(c->known);
    PyMem_Free(c->values);
}

/* distances(genome0, genome1), genomes by dense number, with the fresh value `computed` (what
   genome0.distance(genome1) gives): the value computed first if the pair was asked for before,
   else `computed`, recorded. */
static int
cache_ask(DistCache *c, Py_ssize_t x, Py_ssize_t y, double computed, double *out)
{
    int32_t hx = c->hot[x], hy = c->hot[y];
    if (hx >= 0 && c->known[hx * c->count + y]) {
        *out = c->rows[hx * c->count + y];
        return 0;
    }
    if (hy >= 0 && c->known[hy * c->count + x]) {
        *out = c->rows[hy * c->count + x];
        return 0;
    }
    if (hx >= 0) {
        c->known[hx * c->count + y] = 1;
        c->rows[hx * c->count + y] = computed;
    }
    if (hy >= 0) {
        c->known[hy * c->count + x] = 1;
        c->rows[hy * c->count + x] = computed;
    }
    if (reserve((void **)&c->values, &c->values_cap, c->nvalues + 2, sizeof(double)) < 0)
        return -1;
    c->values[c->nvalues++] = computed;
    if (c->keys[x] != c->keys[y])
        c->values[c->nvalues++] = computed;
    *out = computed;
    return 0;
}

typedef struct {
    Genes *genes;                /* owned */
    int64_t key;                 /* genome.key */
    Py_ssize_t number;           /* dense number in the cache */
} Member;

static int
member_load(Member *m, PyObject *genome, Py_ssize_t *largest)
{
    m->genes = genes_of(genome, NULL);
    if (!m->genes || !view_of(m->genes))
        return -1;
    Py_ssize_t size = m->genes->nn > m->genes->nc ? m->genes->nn : m->genes->nc;
    if (size > *largest)
        *largest = size;
    PyObject *k = PyObject_GetAttr(genome, str_key);
    if (!k)
        return -1;
    m->key = PyLong_AsLongLong(k);
    Py_DECREF(k);
    return (m->key == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* Numbers every genome: members by position, an old representative by its member's number when
   it is one (an elite), else after them; the old representatives that are members are hot. Keys
   must be distinct among the members and among the old representatives (the caller sees to it). */
static int
cache_init(DistCache *c, Member *members, Py_ssize_t n, Member *olds, Py_ssize_t nold)
{
    memset(c, 0, sizeof *c);
    c->keys = PyMem_Malloc(sizeof(int64_t) * (n + nold + 1));
    c->hot = PyMem_Malloc(sizeof(int32_t) * (n + nold + 1));
    NodeIdx *sorted = PyMem_Malloc(sizeof(NodeIdx) * (n + 1));
    if (!c->keys || !c->hot || !sorted) {
        PyMem_Free(sorted);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        members[i].number = i;
        c->keys[i] = members[i].key;
        c->hot[i] = -1;
        sorted[i] = (NodeIdx){members[i].key, (int32_t)i};
    }
    qsort(sorted, n, sizeof(NodeIdx), cmp_node_idx);
    c->count = n;
    for (Py_ssize_t k = 0; k < nold; k++) {
        NodeIdx probe = {olds[k].key, 0};
        NodeIdx *at = n ? bsearch(&probe, sorted, n, sizeof(NodeIdx), cmp_node_idx) : NULL;
        if (at) {
            olds[k].number = at->pos;
            if (c->hot[at->pos] < 0)
                c->hot[at->pos] = (int32_t)c->nhot++;
        }
        else {
            olds[k].number = c->count;
            c->keys[c->count] = olds[k].key;
            c->hot[c->count++] = -1;
        }
    }
    PyMem_Free(sorted);
    size_t cells = (size_t)c->nhot * c->count;
    c->rows = PyMem_Malloc(sizeof(double) * (cells + 1));
    c->known = PyMem_Calloc(cells + 1, 1);
    if (!c->rows || !c->known) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* neat.math_util.mean and stdev of the cache's values, in its insertion order. Returns 1 where
   neat-python's stdev raises OverflowError: float.__pow__(x, 2) of a finite x whose square is out
   of range (an infinite or NaN x squares without an error). */
static int
spread(const DistCache *c, double *mean, double *sd)
{
    double sum = 0.0;
    for (Py_ssize_t i = 0; i < c->nvalues; i++)
        sum += c->values[i];
    double m = sum / (double)c->nvalues, ss = 0.0;
    for (Py_ssize_t i = 0; i < c->nvalues; i++) {
        double x = c->values[i] - m;
        /* float.__pow__(x, 2): libm pow on |x| (the sign of an even power drops) */
        double square = x == 0.0 ? 0.0 : pow(x < 0 ? -x : x, 2.0);
        if (isinf(square) && isfinite(x))
            return 1;
        ss += square;
    }
    *mean = m;
    *sd = sqrt(ss / (double)c->nvalues);
    return 0;
}

/* The OverflowError float.__pow__ raises, as an object to raise later (neat-python raises it
   after the species are updated). */
static PyObject *
overflow_error(void)
{
    errno = ERANGE;
    PyErr_SetFromErrno(PyExc_OverflowError);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

static PyObject *
new_group(PyObject *first)
{
    PyObject *lst = PyList_New(1);
    if (lst)
        PyList_SET_ITEM(lst, 0, Py_NewRef(first));
    return lst;
}

/* speciate(genome_config, population, unspeciated, old_representatives, threshold, indexer)
   -> (representatives [(sid, rid)], members [[gid, ...]], (mean, stdev), None, or the
      OverflowError neat-python's stdev raises)

   The two loops of DefaultSpeciesSet.speciate: each old species (ascending id) takes the closest
   unspeciated genome as its new representative; then each remaining genome (ascending key) joins
   the species of the closest representative under the threshold, or founds a species. The
   distances each loop needs are computed first, in parallel; the loops then run in order. */
static PyObject *
speciate(PyObject *mod, PyObject *args)
{
    PyObject *config, *population, *unspeciated, *old_reps, *indexer;
    double threshold;
    if (!PyArg_ParseTuple(args, "OO!O!O!dO", &config, &PyDict_Type, &population, &PyList_Type, &unspeciated,
                          &PyList_Type, &old_reps, &threshold, &indexer))
        return NULL;
    if (!standard_config(config))
        Py_RETURN_NOTIMPLEMENTED;
    double cdc, cwc;
    if (cfg_double(config, "compatibility_disjoint_coefficient", &cdc) < 0
        || cfg_double(config, "compatibility_weight_coefficient", &cwc) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(unspeciated), nold = PyList_GET_SIZE(old_reps), largest = 0;
    Member *members = PyMem_Calloc(n + nold + 1, sizeof(Member)), *olds = members ? members + n : NULL;
    Genes **genes = PyMem_Malloc(sizeof(Genes *) * (n + nold + 1));
    Py_ssize_t *alive = PyMem_Malloc(sizeof(Py_ssize_t) * (n + 1));
    Py_ssize_t *rep_of = PyMem_Malloc(sizeof(Py_ssize_t) * (n + nold + 1));    /* species -> member */
    double **rep_row = PyMem_Calloc(n + nold + 1, sizeof(double *));          /* species -> distances */
    Py_ssize_t *row_from = PyMem_Calloc(n + nold + 1, sizeof(Py_ssize_t));     /* first column of the row */
    double *d1 = NULL, *d2 = NULL;
    PyObject *rep_sids = PyList_New(0), *groups = PyList_New(0), *result = NULL;
    DistCache cache;
    memset(&cache, 0, sizeof cache);
    int cache_ready = 0;
    Py_ssize_t nreps = 0;
    if (!members || !genes || !alive || !rep_of || !rep_row || !row_from || !rep_sids || !groups) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *gid = PyList_GET_ITEM(unspeciated, i);
        PyObject *g = PyDict_GetItemWithError(population, gid);
        if (!g) {
            if (!PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, gid);
            goto done;
        }
        if (member_load(&members[i], g, &largest) < 0)
            goto done;
        genes[i] = members[i].genes;
        alive[i] = i;
    }
    for (Py_ssize_t k = 0; k < nold; k++) {
        PyObject *pair = PyList_GET_ITEM(old_reps, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "speciate(): old representatives are (sid, genome) pairs");
            goto done;
        }
        if (member_load(&olds[k], PyTuple_GET_ITEM(pair, 1), &largest) < 0)
            goto done;
        genes[n + k] = olds[k].genes;
    }
    if (cache_init(&cache, members, n, olds, nold) < 0)
        goto done;
    cache_ready = 1;
    IdCounts ids;
    if (number_genes(genes, n + nold, &ids) < 0)
        goto done;

    /* Phase 1: old representative k against every genome (those neat-python asks for are read). */
    d1 = PyMem_Malloc(sizeof(double) * (nold * n + 1));
    if (!d1 || grid_compute(genes + n, nold, genes, n, d1, largest, &ids, cdc, cwc) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t nalive = n;
    for (Py_ssize_t k = 0; k < nold; k++) {
        /* min(candidates, key=distance): the first closest in unspeciated order */
        if (nalive == 0) {
            PyErr_SetString(PyExc_ValueError, "min() arg is an empty sequence");
            goto done;
        }
        Py_ssize_t best = 0;
        double best_d = 0.0;
        for (Py_ssize_t a = 0; a < nalive; a++) {
            double d;
            if (cache_ask(&cache, olds[k].number, members[alive[a]].number, d1[k * n + alive[a]], &d) < 0)
                goto done;
            if (a == 0 || d < best_d) {
                best = a;
                best_d = d;
            }
        }
        /* new_rid = new_rep.key; unspeciated.remove(new_rid): the first genome with that key */
        int64_t rid = members[alive[best]].key;
        Py_ssize_t at = -1;
        for (Py_ssize_t a = 0; a < nalive && at < 0; a++) {
            long long gv = PyLong_AsLongLong(PyList_GET_ITEM(unspeciated, alive[a]));
            if (gv == -1 && PyErr_Occurred())
                goto done;
            if (gv == rid)
                at = a;
        }
        if (at < 0) {
            PyErr_SetString(PyExc_ValueError, "list.remove(x): x not in list");
            goto done;
        }
        rep_of[k] = alive[best];
        memmove(&alive[at], &alive[at + 1], sizeof(Py_ssize_t) * (nalive - at - 1));
        nalive--;
        PyObject *rid_obj = PyLong_FromLongLong(rid);
        PyObject *group = rid_obj ? new_group(rid_obj) : NULL;
        Py_XDECREF(rid_obj);
        int bad = !group || PyList_Append(rep_sids, PyTuple_GET_ITEM(PyList_GET_ITEM(old_reps, k), 0)) < 0
                  || PyList_Append(groups, group) < 0;
        Py_XDECREF(group);
        if (bad)
            goto done;
    }
    nreps = nold;

    /* Phase 2: the new representatives against the genomes left; a founder's row when it founds. */
    Genes **left = PyMem_Malloc(sizeof(Genes *) * (nalive + 1)), **rep_genes = PyMem_Malloc(sizeof(Genes *) * (nold + 1));
    if (!left || !rep_genes) {
        PyMem_Free(left);
        PyMem_Free(rep_genes);
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t a = 0; a < nalive; a++)
        left[a] = members[alive[a]].genes;
    for (Py_ssize_t k = 0; k < nold; k++)
        rep_genes[k] = members[rep_of[k]].genes;
    d2 = PyMem_Malloc(sizeof(double) * (nold * nalive + 1));
    int grid_failed = !d2 || grid_compute(rep_genes, nold, left, nalive, d2, largest, &ids, cdc, cwc) < 0;
    PyMem_Free(rep_genes);
    if (grid_failed) {
        PyMem_Free(left);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < nold; k++) {
        rep_row[k] = d2 + k * nalive;
        row_from[k] = 0;
    }
    for (Py_ssize_t a = 0; a < nalive; a++) {
        Member *g = &members[alive[a]];
        Py_ssize_t best = -1;
        double best_d = 0.0;
        for (Py_ssize_t k = 0; k < nreps; k++) {
            double d;
            if (cache_ask(&cache, members[rep_of[k]].number, g->number, rep_row[k][a - row_from[k]], &d) < 0) {
                PyMem_Free(left);
                goto done;
            }
            if (d < threshold && (best < 0 || d < best_d)) {
                best = k;
                best_d = d;
            }
        }
        PyObject *gid = PyList_GET_ITEM(unspeciated, alive[a]);
        if (best >= 0) {
            if (PyList_Append(PyList_GET_ITEM(groups, best), gid) < 0) {
                PyMem_Free(left);
                goto done;
            }
            continue;
        }
        PyObject *sid = PyIter_Next(indexer);
        PyObject *group = sid ? new_group(gid) : NULL;
        int bad = !group || PyList_Append(rep_sids, sid) < 0 || PyList_Append(groups, group) < 0;
        Py_XDECREF(sid);
        Py_XDECREF(group);
        Py_ssize_t rest = nalive - a - 1;
        double *row = bad ? NULL : PyMem_Malloc(sizeof(double) * (rest + 1));
        if (!row || grid_compute(&g->genes, 1, left + a + 1, rest, row, largest, &ids, cdc, cwc) < 0) {
            PyMem_Free(row);
            PyMem_Free(left);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "neatpar: the species indexer ran out");
            goto done;
        }
        rep_of[nreps] = alive[a];
        rep_row[nreps] = row;
        row_from[nreps] = a + 1;
        nreps++;
    }
    PyMem_Free(left);

    PyObject *stats;
    if (PyDict_GET_SIZE(population) > 1 && cache.nvalues > 0) {
        double m, sd;
        stats = spread(&cache, &m, &sd) ? overflow_error() : Py_BuildValue("(dd)", m, sd);
    }
    else {
        stats = Py_NewRef(Py_None);
    }
    PyObject *reps = stats ? PyList_New(nreps) : NULL;
    for (Py_ssize_t k = 0; reps && k < nreps; k++) {
        PyObject *rid = PyLong_FromLongLong(members[rep_of[k]].key);
        PyObject *pair = rid ? PyTuple_Pack(2, PyList_GET_ITEM(rep_sids, k), rid) : NULL;
        Py_XDECREF(rid);
        if (!pair) {
            Py_CLEAR(reps);
            break;
        }
        PyList_SET_ITEM(reps, k, pair);
    }
    if (reps)
        result = Py_BuildValue("(NON)", reps, groups, stats);
    else
        Py_XDECREF(stats);
done:
    if (members)
        for (Py_ssize_t i = 0; i < n + nold; i++)
            Py_XDECREF(members[i].genes);
    if (rep_row)
        for (Py_ssize_t k = nold; k < nreps; k++)
            PyMem_Free(rep_row[k]);
    PyMem_Free(members);
    PyMem_Free(genes);
    PyMem_Free(alive);
    PyMem_Free(rep_of);
    PyMem_Free(rep_row);
    PyMem_Free(row_from);
    PyMem_Free(d1);
    PyMem_Free(d2);
    if (cache_ready)
        cache_free(&cache);
    Py_XDECREF(rep_sids);
    Py_XDECREF(groups);
    return result;
}

static PyObject *
py_set_threads(PyObject *mod, PyObject *arg)
{
    long t = PyLong_AsLong(arg);
    if (t == -1 && PyErr_Occurred())
        return NULL;
    int previous = distance_threads;
    distance_threads = t < 1 ? 1 : t > 16 ? 16 : (int)t;
    return PyLong_FromLong(previous);
}

/* ------------------------------------------------------------------------------------------ */
/* Module functions                                                                            */

/* The genome's own records for an operator, or NULL with no error set when the operator is not
   for C here: genes kept as objects, a class that changes an operator, or (empty_only) a genome
   that already has genes. */
static Genes *
operand(PyObject *genome, int empty_only)
{
    PyObject *g = PyObject_GetAttr(genome, str_genes);
    if (!g) {
        PyErr_Clear();
        return NULL;
    }
    int plain = Py_IS_TYPE(g, &GenesType) ? plain_type((PyObject *)Py_TYPE(genome)) : 0;
    if (plain <= 0 || (empty_only && (((Genes *)g)->nn || ((Genes *)g)->nc))) {
        Py_DECREF(g);
        return NULL;
    }
    return (Genes *)g;
}

typedef int (*Operator)(Rng *, const Cfg *, Genes *, PyObject *, PyObject *);

/* Runs one operator on the genome's records; NotImplemented when it is not for C (the caller runs
   neat-python's code instead). */
static PyObject *
run_operator(Operator op, PyObject *genome, PyObject *config, int empty_only, PyObject *a, PyObject *b)
{
    Genes *g = operand(genome, empty_only);
    if (!g)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented);
    Cfg local, *c = cfg_acquire(config, &local);
    PyObject *result = NULL;
    if (c && !c->standard)
        result = Py_NewRef(Py_NotImplemented);
    else if (c) {
        Rng r;
        if (begin(&r) == 0) {
            int rc = op(&r, c, g, a, b);
            genes_changed(g);
            if (rng_end(&r) == 0 && rc == 0)
                result = Py_NewRef(Py_None);
        }
    }
    cfg_release(c, &local);
    Py_DECREF(g);
    return result;
}

static int
op_configure_new(Rng *r, const Cfg *c, Genes *g, PyObject *unused1, PyObject *unused2)
{
    const char *kind = PyUnicode_AsUTF8(c->initial_connection);
    return kind ? configure_new(r, c, g, kind) : -1;
}

static int
op_crossover(Rng *r, const Cfg *c, Genes *g, PyObject *genome1, PyObject *genome2)
{
    return crossover(r, c, g, genome1, genome2, NULL);
}

static int
op_mutate(Rng *r, const Cfg *c, Genes *g, PyObject *unused1, PyObject *unused2)
{
    return mutate(r, c, g);
}

static PyObject *
py_configure_new(PyObject *mod, PyObject *args)
{
    PyObject *genome, *config;
    if (!PyArg_ParseTuple(args, "OO", &genome, &config))
        return NULL;
    return run_operator(op_configure_new, genome, config, 1, NULL, NULL);
}

static PyObject *
py_crossover(PyObject *mod, PyObject *args)
{
    PyObject *genome, *g1, *g2, *config;
    if (!PyArg_ParseTuple(args, "OOOO", &genome, &g1, &g2, &config))
        return NULL;
    return run_operator(op_crossover, genome, config, 1, g1, g2);
}

static PyObject *
py_mutate(PyObject *mod, PyObject *args)
{
    PyObject *genome, *config;
    if (!PyArg_ParseTuple(args, "OO", &genome, &config))
        return NULL;
    return run_operator(op_mutate, genome, config, 0, NULL, NULL);
}

/* genome0.distance(genome1); NotImplemented for genes other than neat-python's defaults. */
static PyObject *
py_distance(PyObject *mod, PyObject *args)
{
    PyObject *g0, *g1, *config;
    if (!PyArg_ParseTuple(args, "OOO", &g0, &g1, &config))
        return NULL;
    if (!Py_IS_TYPE(config, &ConfigViewType) && !standard_config(config))
        Py_RETURN_NOTIMPLEMENTED;
    double cdc, cwc;
    if (cfg_double(config, "compatibility_disjoint_coefficient", &cdc) < 0
        || cfg_double(config, "compatibility_weight_coefficient", &cwc) < 0)
        return NULL;
    Genes *a = genes_of(g0, NULL), *b = a ? genes_of(g1, NULL) : NULL;
    Scratch s = {NULL, 0};
    PyObject *result = NULL;
    if (b && prepare_distance(a, &s) == 0 && prepare_distance(b, &s) == 0)
        result = PyFloat_FromDouble(genes_distance(a, b, cdc, cwc, &s));
    PyMem_Free(s.match);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return result;
}


/* A species' parents for its children: (gid, genome) pairs, their records and fitnesses read once. */
typedef struct {
    PyObject *pairs;             /* the list of (gid, genome) */
    Py_ssize_t n;
    Genes **genes;               /* owned */
    PyObject **fitness;          /* owned */
} Parents;

static void
parents_free(Parents *p)
{
    for (Py_ssize_t i = 0; i < p->n; i++) {
        Py_XDECREF(p->genes[i]);
        Py_XDECREF(p->fitness[i]);
    }
    PyMem_Free(p->genes);
    PyMem_Free(p->fitness);
}

static int
parents_load(Parents *p, PyObject *pairs, PyObject *snapshots)
{
    p->pairs = pairs;
    p->n = PyList_GET_SIZE(pairs);
    p->genes = PyMem_Calloc(p->n + 1, sizeof(Genes *));
    p->fitness = PyMem_Calloc(p->n + 1, sizeof(PyObject *));
    if (!p->genes || !p->fitness) {
        p->n = 0;
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < p->n; i++) {
        PyObject *pair = PyList_GET_ITEM(pairs, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "breed(): parents are (genome_id, genome) pairs");
            return -1;
        }
        PyObject *genome = PyTuple_GET_ITEM(pair, 1);
        if (!(p->fitness[i] = PyObject_GetAttr(genome, str_fitness)) || !(p->genes[i] = genes_of(genome, snapshots)))
            return -1;
    }
    return 0;
}

/* A new neatpar genome, as DefaultGenome(gid) makes it (key, _genes, fitness), without a Python
   frame; its Genes through *genes (borrowed). */
static PyObject *
new_genome(PyObject *gid, Genes **genes)
{
    PyObject *genome = PyBaseObject_Type.tp_new((PyTypeObject *)genome_class, empty_tuple, NULL);
    Genes *g = genome ? genes_alloc(0, 0) : NULL;
    if (!g || PyObject_SetAttr(genome, str_key, gid) < 0 || PyObject_SetAttr(genome, str_genes, (PyObject *)g) < 0
        || PyObject_SetAttr(genome, str_fitness, Py_None) < 0) {
        Py_XDECREF(g);
        Py_XDECREF(genome);
        return NULL;
    }
    *genes = g;
    Py_DECREF(g);
    return genome;
}

/* One child, as DefaultReproduction.reproduce's loop makes it:
       parent1, parent2 = choice(old_members), choice(old_members)
       gid = next(genome_indexer); child = genome_type(gid)
       child.configure_crossover(parent1, parent2, config); child.mutate(config)
       new_population[gid] = child; ancestors[gid] = (parent1_id, parent2_id)
   `r` is drawing (begun); it is ended around any Python code that might draw itself. */
static int
breed_one(Rng *r, const Cfg *c, const Parents *parents, PyObject *indexer, PyObject *genome_type,
          PyObject *population, PyObject *ancestors)
{
    Py_ssize_t i1 = rng_choice(r, parents->n), i2 = i1 < 0 ? -1 : rng_choice(r, parents->n);
    if (i2 < 0)
        return -1;
    PyObject *m1 = PyList_GET_ITEM(parents->pairs, i1), *m2 = PyList_GET_ITEM(parents->pairs, i2);
    PyObject *gid = PyIter_Next(indexer), *child = NULL;
    int rc = -1;
    if (!gid) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "neatpar: the genome indexer ran out");
        return -1;
    }
    Genes *g = NULL;
    if (genome_type == genome_class && c->standard) {
        int gt = fitter_first(parents->fitness[i1], parents->fitness[i2]);
        child = gt < 0 ? NULL : new_genome(gid, &g);
        if (!child || crossover_genes(r, c, g, parents->genes[gt ? i1 : i2], parents->genes[gt ? i2 : i1]) < 0
            || mutate(r, c, g) < 0)
            goto done;
        genes_changed(g);
    }
    else {
        /* another class: made by its own constructor, bred in C if it keeps neatpar's operators,
           else by its own methods (with the genome config itself) */
        PyObject *p1 = PyTuple_GET_ITEM(m1, 1), *p2 = PyTuple_GET_ITEM(m2, 1);
        if (rng_end(r) < 0)
            goto done;
        child = PyObject_CallOneArg(genome_type, gid);
        g = child && c->standard ? operand(child, 1) : NULL;
        int op = child && !PyErr_Occurred() ? 0 : -1;
        if (op == 0 && g) {
            op = begin(r);
            if (op == 0) {
                int gt = fitter_first(parents->fitness[i1], parents->fitness[i2]);
                if (gt < 0 || crossover_genes(r, c, g, parents->genes[gt ? i1 : i2], parents->genes[gt ? i2 : i1]) < 0
                    || mutate(r, c, g) < 0)
                    op = -1;
            }
            genes_changed(g);
            if (rng_end(r) < 0)
                op = -1;
        }
        else if (op == 0) {
            PyObject *v = PyObject_CallMethod(child, "configure_crossover", "OOO", p1, p2, c->config);
            Py_XDECREF(v);
            v = v ? PyObject_CallMethod(child, "mutate", "O", c->config) : NULL;
            Py_XDECREF(v);
            op = v ? 0 : -1;
        }
        Py_XDECREF(g);
        if (begin(r) < 0 || op < 0)
            goto done;
    }
    PyObject *pair = PyTuple_Pack(2, PyTuple_GET_ITEM(m1, 0), PyTuple_GET_ITEM(m2, 0));
    rc = (!pair || PyDict_SetItem(population, gid, child) < 0 || PyDict_SetItem(ancestors, gid, pair) < 0) ? -1 : 0;
    Py_XDECREF(pair);
done:
    Py_XDECREF(child);
    Py_DECREF(gid);
    return rc;
}

/* breed(view, [(elites, parents, spawn), ...], genome_indexer, genome_type, new_population,
         ancestors, snapshots): each species' elites (gid, genome) and then its `spawn` children,
   species after species, into new_population. */
static PyObject *
py_breed(PyObject *mod, PyObject *args)
{
    PyObject *view, *jobs, *indexer, *genome_type, *population, *ancestors, *snapshots;
    if (!PyArg_ParseTuple(args, "O!O!OOO!O!O", &ConfigViewType, &view, &PyList_Type, &jobs, &indexer,
                          &genome_type, &PyDict_Type, &population, &PyDict_Type, &ancestors, &snapshots))
        return NULL;
    const Cfg *c = &((ConfigView *)view)->cfg;
    PyObject *snaps = PyDict_Check(snapshots) ? snapshots : NULL;
    Rng r;
    if (begin(&r) < 0)
        return NULL;
    /* Thousands of new objects: the cyclic collector runs once afterwards, not on the way. */
    int collecting = PyGC_Disable(), rc = 0;
    for (Py_ssize_t j = 0; rc == 0 && j < PyList_GET_SIZE(jobs); j++) {
        PyObject *elites, *parents;
        Py_ssize_t spawn;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(jobs, j), "O!O!n;breed(): jobs are (elites, parents, spawn)",
                              &PyList_Type, &elites, &PyList_Type, &parents, &spawn)) {
            rc = -1;
            break;
        }
        for (Py_ssize_t e = 0; rc == 0 && e < PyList_GET_SIZE(elites); e++) {
            PyObject *pair = PyList_GET_ITEM(elites, e);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2
                || PyDict_SetItem(population, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "breed(): elites are (genome_id, genome) pairs");
                rc = -1;
            }
        }
        if (spawn <= 0 || rc < 0)
            continue;
        Parents ps = {NULL, 0, NULL, NULL};
        rc = parents_load(&ps, parents, snaps);
        for (; rc == 0 && spawn > 0; spawn--)
            rc = breed_one(&r, c, &ps, indexer, genome_type, population, ancestors);
        parents_free(&ps);
    }
    if (collecting)
        PyGC_Enable();
    if (rng_end(&r) < 0)
        rc = -1;
    return rc < 0 ? NULL : Py_NewRef(Py_None);
}

static PyObject *
py_genes_of(PyObject *mod, PyObject *genome)
{
    return (PyObject *)genes_of(genome, NULL);
}

static PyObject *
py_setup(PyObject *mod, PyObject *args)
{
    PyObject *nt, *ct, *nl, *cl, *gc, *pc, *tc, *ru, *ri, *chk;
    if (!PyArg_ParseTuple(args, "OOOOOOO!OOO", &nt, &ct, &nl, &cl, &gc, &pc, &PyType_Type, &tc, &ru, &ri, &chk))
        return NULL;
    Py_XSETREF(tracker_class, Py_NewRef(tc));
    Py_XSETREF(node_gene_type, Py_NewRef(nt));
    Py_XSETREF(conn_gene_type, Py_NewRef(ct));
    Py_XSETREF(node_attribute_list, Py_NewRef(nl));
    Py_XSETREF(conn_attribute_list, Py_NewRef(cl));
    Py_XSETREF(genome_class, Py_NewRef(gc));
    Py_XSETREF(plain_class_fn, Py_NewRef(pc));
    Py_XSETREF(reference_union, Py_NewRef(ru));
    Py_XSETREF(reference_inputs, Py_NewRef(ri));
    Py_XSETREF(sets_check, Py_NewRef(chk));
    Py_XSETREF(plain_types, PyDict_New());
    if (!plain_types)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
py_modes(PyObject *mod, PyObject *unused)
{
    if (rng_in_place < 0)
        rng_in_place = rng_layout_ok(random_module);
    if (sets_emulated < 0 && check_sets() < 0)
        return NULL;
    return Py_BuildValue("{s:O,s:O}", "random_in_place", rng_in_place ? Py_True : Py_False,
                         "sets_emulated", sets_emulated ? Py_True : Py_False);
}

/* Tests: draws(plan) -> values, each entry of `plan` one call on `random`'s generator made in C:
   ("random",), ("below", n), ("gauss", mu, sigma), ("uniform", a, b). */
static PyObject *
py_draws(PyObject *mod, PyObject *plan)
{
    PyObject *seq = PySequence_Fast(plan, "draws() takes a list of calls");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    Rng r;
    if (!out || begin(&r) < 0) {
        Py_XDECREF(out);
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n && out; i++) {
        const char *kind;
        double a = 0, b = 0;
        PyObject *call = PySequence_Fast_GET_ITEM(seq, i), *v = NULL;
        if (!PyArg_ParseTuple(call, "s|dd", &kind, &a, &b))
            ;
        else if (!strcmp(kind, "below"))
            v = a >= 1 ? PyLong_FromSsize_t(rng_below(&r, (Py_ssize_t)a)) : NULL;
        else if (!strcmp(kind, "random"))
            v = PyFloat_FromDouble(rng_random(&r));
        else if (!strcmp(kind, "gauss"))
            v = PyFloat_FromDouble(rng_gauss(&r, a, b));
        else if (!strcmp(kind, "uniform"))
            v = PyFloat_FromDouble(rng_uniform(&r, a, b));
        if (!v && !PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "draws(): unknown call");
        if (!v)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, v);
    }
    Py_DECREF(seq);
    if (rng_end(&r) < 0)
        Py_CLEAR(out);
    return out;
}

static PyObject *
py_force_modes(PyObject *mod, PyObject *args)
{
    int in_place, emulated;
    if (!PyArg_ParseTuple(args, "ii", &in_place, &emulated))
        return NULL;
    rng_in_place = in_place;
    sets_emulated = emulated;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"setup", py_setup, METH_VARARGS, "setup(node_gene_type, conn_gene_type, node_attributes, conn_attributes, genome_class, plain_class, tracker_class, union_ref, inputs_ref, sets_check)"},
    {"configure_new", py_configure_new, METH_VARARGS, "configure_new(genome, genome_config)"},
    {"crossover", py_crossover, METH_VARARGS, "crossover(child, genome1, genome2, genome_config)"},
    {"mutate", py_mutate, METH_VARARGS, "mutate(genome, genome_config)"},
    {"distance", py_distance, METH_VARARGS, "distance(genome0, genome1, genome_config)"},
    {"speciate", speciate, METH_VARARGS, "the distance work of DefaultSpeciesSet.speciate"},
    {"enabled_links", enabled_links, METH_O, "every enabled connection of each Genes, for compiling"},
    {"names", py_names, METH_NOARGS, "the activation and aggregation names records refer to, by id"},
    {"breed", py_breed, METH_VARARGS, "each species' elites and children, as DefaultReproduction.reproduce makes them"},
    {"set_threads", py_set_threads, METH_O, "set_threads(n) -> the previous n: threads that compute a speciation's distances"},
    {"materialize", materialize, METH_O, "materialize(genes) -> (nodes, connections) dicts of gene objects"},
    {"genes_of", py_genes_of, METH_O, "the genome's genes as records (read from its objects if need be)"},
    {"modes", py_modes, METH_NOARGS, "whether random is drawn in place and set orders are re-enacted"},
    {"_force_modes", py_force_modes, METH_VARARGS, "tests: force the fallback paths"},
    {"_draws", py_draws, METH_O, "tests: draws(plan) on random's generator, made in C"},
    {"_genes_from_state", genes_from_state, METH_VARARGS, NULL},
    {"emulated_union", emulated_union, METH_VARARGS, "the re-enacted order of set(a) | set(b)"},
    {"emulated_inputs", emulated_inputs, METH_VARARGS,
     "the re-enacted order of (set(dict.fromkeys(nodes)) - set(outputs)) | set(inputs), or None"},
    {NULL}
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "neatpar.evolution._core",
    "neat-python's genome operators and speciation distances in C, draw for draw.", -1, module_methods,
};

#define INTERN(var, text) do { if (!((var) = PyUnicode_InternFromString(text))) return NULL; } while (0)

PyMODINIT_FUNC
PyInit__core(void)
{
    if (PyType_Ready(&GenesType) < 0 || PyType_Ready(&ConfigViewType) < 0)
        return NULL;
    INTERN(str_genes, "_genes"); INTERN(str_nodes, "nodes"); INTERN(str_connections, "connections");
    INTERN(str_key, "key"); INTERN(str_fitness, "fitness"); INTERN(str_innovation, "innovation");
    INTERN(str_weight, "weight"); INTERN(str_enabled, "enabled"); INTERN(str_bias, "bias");
    INTERN(str_response, "response"); INTERN(str_activation, "activation");
    INTERN(str_aggregation, "aggregation"); INTERN(str_time_constant, "time_constant");
    INTERN(str_node_indexer, "node_indexer"); INTERN(str_innovation_tracker, "innovation_tracker");
    INTERN(str_get_innovation_number, "get_innovation_number"); INTERN(str_add_node_in, "add_node_in");
    INTERN(str_add_node_out, "add_node_out"); INTERN(str_add_connection, "add_connection");
    INTERN(str_initial_connection, "initial_connection"); INTERN(str_representative, "representative");
    INTERN(str_gauss_next, "gauss_next"); INTERN(str_getstate, "getstate"); INTERN(str_setstate, "setstate");
    empty_tuple = PyTuple_New(0);
    one = PyLong_FromLong(1);
    names = PyList_New(0);
    name_ids = PyDict_New();
    random_module = PyImport_ImportModule("random");
    random_inst = random_module ? PyObject_GetAttrString(random_module, "_inst") : NULL;
    PyObject *itertools = PyImport_ImportModule("itertools");
    count_type = itertools ? PyObject_GetAttrString(itertools, "count") : NULL;
    Py_XDECREF(itertools);
    if (!empty_tuple || !names || !name_ids || !random_inst || !count_type)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    genes_from_state_fn = PyObject_GetAttrString(m, "_genes_from_state");
    if (!genes_from_state_fn || PyModule_AddObjectRef(m, "Genes", (PyObject *)&GenesType) < 0
        || PyModule_AddObjectRef(m, "ConfigView", (PyObject *)&ConfigViewType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
