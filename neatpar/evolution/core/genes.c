/* A genome's genes as records (Genes): the type, its views for lookups and distances, its pickled
form, and the conversions from and to neat-python's gene objects. */
#include "core.h"

#include <string.h>

int32_t
name_id(CoreState *st, PyObject *name)
{
    PyObject *id = PyDict_GetItemWithError(st->name_ids, name);
    if (id)
        return (int32_t)PyLong_AsLong(id);
    if (PyErr_Occurred())
        return -1;
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "neatpar: activation and aggregation must be names (str), not %R", name);
        return -1;
    }
    Py_ssize_t n = PyList_GET_SIZE(st->names);
    PyObject *v = PyLong_FromSsize_t(n);
    if (!v || PyDict_SetItem(st->name_ids, name, v) < 0 || PyList_Append(st->names, name) < 0) {
        Py_XDECREF(v);
        return -1;
    }
    Py_DECREF(v);
    return (int32_t)n;
}

/* ------------------------------------------------------------------------------------------ */
/* Genes                                                                                       */

/* The genes changed: which there are, or where (iterators over them stop), or any value. */
void
genes_changed(Genes *g)
{
    g->stamp++;
    genes_values_changed(g);
}

/* Some gene's values changed (the same genes in the same places). */
void
genes_values_changed(Genes *g)
{
    PyMem_Free(g->view);
    g->view = NULL;
    g->acyclic = -1;
}

/* Removals: the gene objects of removed records keep their values, those of moved ones follow. */
void
remove_node_at(Genes *g, Py_ssize_t at)
{
    gene_left(g, NODE_GENES, at);
    for (Py_ssize_t k = at + 1; k < g->nn; k++)
        gene_moved(g, NODE_GENES, k, k - 1);
    memmove(&g->nodes[at], &g->nodes[at + 1], sizeof(Node) * (g->nn - at - 1));
    g->nn--;
    genes_changed(g);
}

void
remove_conn_at(Genes *g, Py_ssize_t at)
{
    gene_left(g, CONN_GENES, at);
    for (Py_ssize_t k = at + 1; k < g->nc; k++)
        gene_moved(g, CONN_GENES, k, k - 1);
    memmove(&g->conns[at], &g->conns[at + 1], sizeof(Conn) * (g->nc - at - 1));
    g->nc--;
    genes_changed(g);
}

/* Every connection from or to the node `key`, removed (the others keep their order). */
void
remove_conns_of(Genes *g, int64_t key)
{
    Py_ssize_t w = 0;
    for (Py_ssize_t k = 0; k < g->nc; k++) {
        if (g->conns[k].in == key || g->conns[k].out == key) {
            gene_left(g, CONN_GENES, k);
            continue;
        }
        if (w != k) {
            gene_moved(g, CONN_GENES, k, w);
            g->conns[w] = g->conns[k];
        }
        w++;
    }
    g->nc = w;
    genes_changed(g);
}

int
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

Genes *
genes_alloc(CoreState *st, Py_ssize_t node_cap, Py_ssize_t conn_cap)
{
    Genes *g = PyObject_New(Genes, st->genes_type);
    if (!g)
        return NULL;
    g->nodes = NULL;
    g->conns = NULL;
    g->nn = g->nc = g->node_cap = g->conn_cap = 0;
    g->view = NULL;
    g->acyclic = -1;
    g->stamp = 0;
    g->objects[0] = g->objects[1] = NULL;
    g->objects_len[0] = g->objects_len[1] = 0;
    g->maps[0] = g->maps[1] = NULL;
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
    PyTypeObject *type = Py_TYPE(g);
    PyMem_Free(g->nodes);
    PyMem_Free(g->conns);
    PyMem_Free(g->view);
    PyMem_Free(g->objects[0]);  /* empty: each gene object holds its Genes */
    PyMem_Free(g->objects[1]);
    PyObject_Free(g);
    Py_DECREF(type);
}

int
push_node(Genes *g, const Node *n)
{
    if (reserve((void **)&g->nodes, &g->node_cap, g->nn + 1, sizeof(Node)) < 0)
        return -1;
    g->nodes[g->nn++] = *n;
    return 0;
}

Py_ssize_t
find_conn(const Genes *g, int64_t in, int64_t out)
{
    for (Py_ssize_t i = 0; i < g->nc; i++)
        if (g->conns[i].in == in && g->conns[i].out == out)
            return i;
    return -1;
}

/* self.connections[key] = gene: replaces in place when the key is there, else appends. */
int
set_conn(Genes *g, const Conn *c)
{
    Py_ssize_t at = find_conn(g, c->in, c->out);
    if (at >= 0) {
        gene_left(g, CONN_GENES, at);  /* a new gene in the old one's place */
        g->conns[at] = *c;
        return 0;
    }
    if (reserve((void **)&g->conns, &g->conn_cap, g->nc + 1, sizeof(Conn)) < 0)
        return -1;
    g->conns[g->nc++] = *c;
    return 0;
}

int
cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int
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

size_t
table_size(Py_ssize_t n)
{
    size_t size = 8;
    while (size < (size_t)n * 2)
        size <<= 1;
    return size;
}

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

/* The genome's View (built once, until the genes change). */
View *
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
Py_ssize_t
view_node(const View *v, int64_t key, uint32_t hash)
{
    uint32_t h = hash & v->nmask;
    int32_t p;
    while ((p = v->ntable[h]) >= 0 && v->nkey[p] != key)
        h = (h + 1) & v->nmask;
    return p;
}

Py_ssize_t
node_pos(const Genes *g, int64_t key)
{
    return view_node(g->view, key, node_hash(key));
}

/* Where the node `key` is, -1 if nowhere, -2 on error (no memory for the lookup tables). */
Py_ssize_t
find_node(Genes *g, int64_t key)
{
    if (g->nn <= 16) {
        for (Py_ssize_t i = 0; i < g->nn; i++)
            if (g->nodes[i].key == key)
                return i;
        return -1;
    }
    View *v = view_of(g);
    return v ? view_node(v, key, node_hash(key)) : -2;
}

/* Where the connection (in, out) is, -1 if nowhere, -2 on error. */
Py_ssize_t
conn_pos(Genes *g, int64_t in, int64_t out)
{
    if (g->nc <= 16)
        return find_conn(g, in, out);
    View *v = view_of(g);
    if (!v)
        return -2;
    uint32_t h = conn_hash(in, out) & v->cmask;
    int32_t p;
    while ((p = v->ctable[h]) >= 0 && (g->conns[p].in != in || g->conns[p].out != out))
        h = (h + 1) & v->cmask;
    return p;
}

int
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
    return (PyObject *)genes_alloc(PyType_GetModuleState(type), 0, 0);
}

static Genes *
genes_copy(const Genes *src)
{
    Genes *g = genes_alloc(PyType_GetModuleState(Py_TYPE(src)), src->nn, src->nc);
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
    (void)unused;
    return (PyObject *)genes_copy(self);
}

static PyObject *
Genes_deepcopy(Genes *self, PyObject *memo)
{
    (void)memo;
    return (PyObject *)genes_copy(self);
}

static PyObject *
Genes_size(Genes *self, PyObject *unused)
{
    (void)unused;
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
    (void)unused;
    CoreState *st = PyType_GetModuleState(Py_TYPE(self));
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
            PyObject *name = PyList_GET_ITEM(st->names, *fields[f]);
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
    if (st->genes_from_state_fn)
        result = Py_BuildValue("(O(iNy#N))", st->genes_from_state_fn, GENES_FORMAT, nodes,
                               self->conns ? (const char *)self->conns : "",
                               (Py_ssize_t)(sizeof(Conn) * self->nc), PyList_AsTuple(used));
    nodes = NULL;
done:
    Py_XDECREF(nodes);
    Py_XDECREF(local);
    Py_XDECREF(used);
    return result;
}

PyObject *
genes_from_state(PyObject *mod, PyObject *args)
{
    CoreState *st = core_state(mod);
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
    g = genes_alloc(st, nn, nc);
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
            int32_t id = name_id(st, PyTuple_GET_ITEM(used, *fields[f]));
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
    (void)unused;
    return Py_BuildValue("(y#y#)", self->nodes ? (const char *)self->nodes : "", (Py_ssize_t)(sizeof(Node) * self->nn),
                         self->conns ? (const char *)self->conns : "", (Py_ssize_t)(sizeof(Conn) * self->nc));
}

PyObject *
py_names(PyObject *mod, PyObject *unused)
{
    (void)unused;
    return PyList_AsTuple(core_state(mod)->names);
}

static Py_ssize_t
Genes_len(Genes *self)
{
    return self->nn + self->nc;
}

static PyObject *
Genes_maps(Genes *self, PyObject *unused)
{
    (void)unused;
    PyObject *nodes = genes_map(self, NODE_GENES), *conns = nodes ? genes_map(self, CONN_GENES) : NULL;
    if (!conns) {
        Py_XDECREF(nodes);
        return NULL;
    }
    return Py_BuildValue("(NN)", nodes, conns);
}

static PyMethodDef Genes_methods[] = {
    {"maps", (PyCFunction)Genes_maps, METH_NOARGS, "(nodes, connections): the mappings over these records."},
    {"__reduce__", (PyCFunction)Genes_reduce, METH_NOARGS, NULL},
    {"__copy__", (PyCFunction)Genes_copy, METH_NOARGS, NULL},
    {"__deepcopy__", (PyCFunction)Genes_deepcopy, METH_O, NULL},
    {"copy", (PyCFunction)Genes_copy, METH_NOARGS, "A copy of these genes."},
    {"size", (PyCFunction)Genes_size, METH_NOARGS, "(nodes, enabled connections), as DefaultGenome.size()."},
    {"records", (PyCFunction)Genes_records, METH_NOARGS, "(node records, connection records) as bytes."},
    {NULL, NULL, 0, NULL}
};

static PyType_Slot genes_slots[] = {
    {Py_tp_doc, (void *)"A genome's node and connection genes as compact records, in the dicts' order."},
    {Py_tp_new, SLOT_FN(Genes_new)},
    {Py_tp_dealloc, SLOT_FN(genes_dealloc)},
    {Py_tp_methods, Genes_methods},
    {Py_sq_length, SLOT_FN(Genes_len)},
    {0, NULL},
};

/* The Genes type, made once per module (a heap type in the module's state). */
PyType_Spec genes_spec = {
    .name = "neatpar.evolution._core.Genes",
    .basicsize = sizeof(Genes),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = genes_slots,
};

/* ------------------------------------------------------------------------------------------ */
/* Gene objects <-> records                                                                    */

/* A connection key, (in, out), read. */
int
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

/* A genome's nodes or connections (a mapping: neatpar's over records, a dict, or any other)
   appended to `g` as records, in the mapping's order: keys from the mapping, the rest from its
   gene objects. */
static int
append_mapping(CoreState *st, Genes *g, PyObject *mapping, int kind)
{
    if (Py_IS_TYPE(mapping, st->map_type)) {
        const GeneMap *m = (const GeneMap *)mapping;
        Py_ssize_t n = kind == NODE_GENES ? m->g->nn : m->g->nc;
        if (kind == NODE_GENES) {
            if (reserve((void **)&g->nodes, &g->node_cap, g->nn + n, sizeof(Node)) < 0)
                return -1;
            memcpy(g->nodes + g->nn, m->g->nodes, sizeof(Node) * n);
            g->nn += n;
        }
        else {
            if (reserve((void **)&g->conns, &g->conn_cap, g->nc + n, sizeof(Conn)) < 0)
                return -1;
            memcpy(g->conns + g->nc, m->g->conns, sizeof(Conn) * n);
            g->nc += n;
        }
        return 0;
    }
    PyObject *items = PyDict_Check(mapping) ? PyDict_Items(mapping) : PyMapping_Items(mapping);
    if (!items)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_SetString(PyExc_TypeError, "neatpar: genome.nodes and genome.connections must be mappings");
            rc = -1;
            break;
        }
        PyObject *key = PyTuple_GET_ITEM(item, 0), *gene = PyTuple_GET_ITEM(item, 1);
        if (kind == NODE_GENES) {
            Node n;
            n.key = PyLong_AsLongLong(key);
            rc = ((n.key == -1 && PyErr_Occurred()) || gene_values(st, gene, NODE_GENES, &n) < 0
                  || push_node(g, &n) < 0) ? -1 : 0;
        }
        else {
            Conn c;
            rc = (read_pair(key, &c.in, &c.out) < 0 || gene_values(st, gene, CONN_GENES, &c) < 0
                  || reserve((void **)&g->conns, &g->conn_cap, g->nc + 1, sizeof(Conn)) < 0) ? -1 : 0;
            if (rc == 0)
                g->conns[g->nc++] = c;
        }
    }
    Py_DECREF(items);
    return rc;
}

/* Records of a genome whose genes are objects in mappings (neat-python's own genomes, or
   neatpar's kept as objects). */
static Genes *
genes_from_mappings(CoreState *st, PyObject *nodes, PyObject *conns)
{
    Genes *g = genes_alloc(st, 0, 0);
    if (g && (append_mapping(st, g, nodes, NODE_GENES) < 0 || append_mapping(st, g, conns, CONN_GENES) < 0))
        Py_CLEAR(g);
    return g;
}

/* The genome's records: its own Genes, its entry in `snapshots` (a dict id(genome) -> Genes that
   a reproduction reads once, or NULL), or its gene objects read now. New reference. */
Genes *
genes_of(CoreState *st, PyObject *genome, PyObject *snapshots)
{
    PyObject *g = PyObject_GetAttr(genome, st->str_genes);
    if (g && Py_IS_TYPE(g, st->genes_type))
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
    PyObject *nodes = PyObject_GetAttr(genome, st->str_nodes);
    PyObject *conns = nodes ? PyObject_GetAttr(genome, st->str_connections) : NULL;
    Genes *r = conns ? genes_from_mappings(st, nodes, conns) : NULL;
    Py_XDECREF(nodes);
    Py_XDECREF(conns);
    return r;
}

static PyObject *
new_gene(CoreState *st, PyObject *type)
{
    /* object.__new__: an instance without running __init__ (neat-python's __init__ only checks
       and stores the key, which the caller sets). */
    return PyBaseObject_Type.tp_new((PyTypeObject *)type, st->empty_tuple, NULL);
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
PyObject *
materialize(PyObject *mod, PyObject *arg)
{
    CoreState *st = core_state(mod);
    if (!Py_IS_TYPE(arg, st->genes_type)) {
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
        PyObject *gene = new_gene(st, st->node_gene_type);
        PyObject *key = PyLong_FromLongLong(n->key);
        int bad = !gene || !key || PyObject_SetAttr(gene, st->str_key, key) < 0
                  || set_float(gene, st->str_bias, n->bias) < 0 || set_float(gene, st->str_response, n->response) < 0
                  || PyObject_SetAttr(gene, st->str_activation, PyList_GET_ITEM(st->names, n->act)) < 0
                  || PyObject_SetAttr(gene, st->str_aggregation, PyList_GET_ITEM(st->names, n->agg)) < 0
                  || set_float(gene, st->str_time_constant, n->time_constant) < 0
                  || PyDict_SetItem(nodes, key, gene) < 0;
        Py_XDECREF(gene);
        Py_XDECREF(key);
        if (bad)
            goto fail;
    }
    for (Py_ssize_t i = 0; i < g->nc; i++) {
        const Conn *c = &g->conns[i];
        PyObject *gene = new_gene(st, st->conn_gene_type);
        PyObject *key = Py_BuildValue("(LL)", (long long)c->in, (long long)c->out);
        if (key)
            PyObject_GC_UnTrack(key);  /* a pair of ints: no cycle (what the collector would do) */
        int bad = !gene || !key || PyObject_SetAttr(gene, st->str_key, key) < 0
                  || set_int(gene, st->str_innovation, c->innov) < 0 || set_float(gene, st->str_weight, c->weight) < 0
                  || PyObject_SetAttr(gene, st->str_enabled, c->enabled ? Py_True : Py_False) < 0
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
