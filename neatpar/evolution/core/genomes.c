/* A genome's records as Python code meets them: the Genes type (its copies, its pickled form, its
mappings), a genome's records read from wherever its genes are (genes_of, operand), and records
made into neat-python's own gene objects (materialize). */
#include "genomes.h"
#include "config.h"
#include "gene_maps.h"
#include "gene_objects.h"

#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* The Genes type                                                                              */

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
/* A genome's records, wherever its genes are                                                  */

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

/* The genome's own records for an operator, or NULL with no error set when the operator is not
   for C here: genes kept as objects, a class that changes an operator, or (empty_only) a genome
   that already has genes. */
Genes *
operand(CoreState *st, PyObject *genome, int empty_only)
{
    PyObject *g = PyObject_GetAttr(genome, st->str_genes);
    if (!g) {
        PyErr_Clear();
        return NULL;
    }
    int plain = Py_IS_TYPE(g, st->genes_type) ? plain_type(st, (PyObject *)Py_TYPE(genome)) : 0;
    if (plain <= 0 || (empty_only && (((Genes *)g)->nn || ((Genes *)g)->nc))) {
        Py_DECREF(g);
        return NULL;
    }
    return (Genes *)g;
}

/* ------------------------------------------------------------------------------------------ */
/* Records made into neat-python's gene objects                                                */

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
