/* Gene objects over a genome's records: neat-python's DefaultNodeGene and DefaultConnectionGene
(subclasses of them, under their names), whose attributes are read from and written to one record
of a Genes. They are made when code asks for a gene, cost an allocation and no dict, and are
neat-python's genes to everything that uses them: the methods the classes define (copy,
crossover, mutate, distance, str, <, and a connection gene's == and hash) are inherited and run as
they are.

Ownership: a view holds its Genes (strong); the Genes lists its live views by record position
(borrowed, each view removing itself as it goes) and keeps their positions as records move. A
view whose record is removed, or whose Genes replaces the record with a new gene, takes the
record's values as its own and belongs to no genome from then on, as a gene object removed from
neat-python's dict does; a gene made by copy() or crossover() has values of its own too, and
becomes the view of the record it is assigned to (gene_maps.c). Pickled or deep-copied, a gene
object is neat-python's own gene with the same attributes. */
#include "gene_objects.h"

#include <stddef.h>
#include <string.h>

/* Attributes by kind (their bits in Gene.set: genes.h), by name. */
static const char *const CLASS_NAMES[2] = {"DefaultNodeGene", "DefaultConnectionGene"};
static const char *const NODE_NAMES[N_COUNT] = {"key", "bias", "response", "activation", "aggregation",
                                                "time_constant"};
static const char *const CONN_NAMES[C_COUNT] = {"key", "innovation", "weight", "enabled"};

static inline Node *
node_of(Gene *o)
{
    return o->owner ? &o->owner->nodes[o->pos] : &o->own.n;
}

static inline Conn *
conn_of(Gene *o)
{
    return o->owner ? &o->owner->conns[o->pos] : &o->own.c;
}

static inline CoreState *
state_of(Gene *o)
{
    return PyType_GetModuleState(Py_TYPE(o));
}

/* (a, b) as a tuple of ints: a connection key. */
PyObject *
int_pair(int64_t a, int64_t b)
{
    PyObject *t = PyTuple_New(2), *x = t ? PyLong_FromLongLong(a) : NULL, *y = x ? PyLong_FromLongLong(b) : NULL;
    if (!y) {
        Py_XDECREF(x);
        Py_XDECREF(t);
        return NULL;
    }
    PyTuple_SET_ITEM(t, 0, x);
    PyTuple_SET_ITEM(t, 1, y);
    return t;
}

/* The gene object's key as an object, made once (a view's key never changes). New reference. */
PyObject *
gene_key(PyObject *gene)
{
    Gene *o = (Gene *)gene;
    if (!o->key) {
        if (o->kind == NODE_GENES)
            o->key = PyLong_FromLongLong(node_of(o)->key);
        else
            o->key = int_pair(conn_of(o)->in, conn_of(o)->out);
    }
    return o->key ? Py_NewRef(o->key) : NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Views and the records they follow                                                          */

/* The list of views covers `pos` (-1: no memory). */
static int
cover(Genes *g, int kind, Py_ssize_t pos)
{
    if (pos < g->objects_len[kind])
        return 0;
    Py_ssize_t count = kind == NODE_GENES ? g->nn : g->nc, len = count > pos ? count : pos + 1;
    Gene **objects = PyMem_Realloc(g->objects[kind], sizeof(Gene *) * len);
    if (!objects) {
        PyErr_NoMemory();
        return -1;
    }
    memset(objects + g->objects_len[kind], 0, sizeof(Gene *) * (len - g->objects_len[kind]));
    g->objects[kind] = objects;
    g->objects_len[kind] = len;
    return 0;
}

/* The gene object of the record at `pos`: its live view, or a new one. New reference. */
PyObject *
gene_at(Genes *g, int kind, Py_ssize_t pos)
{
    if (pos < g->objects_len[kind] && g->objects[kind][pos])
        return Py_NewRef((PyObject *)g->objects[kind][pos]);
    CoreState *st = PyType_GetModuleState(Py_TYPE(g));
    PyTypeObject *type = st->gene_types[kind];
    if (!type) {
        PyErr_SetString(PyExc_RuntimeError, "neatpar: this CPython lays out neat-python's gene classes in a way "
                        "neatpar's gene objects do not know");
        return NULL;
    }
    if (cover(g, kind, pos) < 0)
        return NULL;
    Gene *o = (Gene *)type->tp_alloc(type, 0);
    if (!o)
        return NULL;
    /* What a view refers to (its Genes, its key) refers to nothing: no cycle runs through it, and
       the cyclic collector leaves it alone until code gives it an attribute of its own. */
    PyObject_GC_UnTrack(o);
    o->owner = (Genes *)Py_NewRef((PyObject *)g);
    o->pos = pos;
    o->kind = kind;
    o->set = GENE_ALL(kind);
    g->objects[kind][pos] = o;
    return (PyObject *)o;
}

/* A record's values changed through its view: the lookup tables' copies follow. */
void
gene_written(Genes *g, int kind, Py_ssize_t pos)
{
    View *v = g->view;
    if (!v)
        return;
    if (kind == NODE_GENES) {
        const Node *n = &g->nodes[pos];
        v->nbias[pos] = n->bias;
        v->nresp[pos] = n->response;
        v->ntc[pos] = n->time_constant;
        v->nact[pos] = n->act;
        v->nagg[pos] = n->agg;
    }
    else {
        v->cw[pos] = g->conns[pos].weight;
        v->cen[pos] = g->conns[pos].enabled != 0;
    }
}

/* A gene object of its own values, every attribute set and the key `key_record`'s: what a
   genome's mapping can make the view of the record it is assigned to. */
int
gene_adoptable(CoreState *st, PyObject *gene, int kind, const void *key_record)
{
    if (!st->gene_types[kind] || !Py_IS_TYPE(gene, st->gene_types[kind]))
        return 0;
    Gene *o = (Gene *)gene;
    if (o->owner || o->set != GENE_ALL(kind))
        return 0;
    if (kind == NODE_GENES)
        return o->own.n.key == ((const Node *)key_record)->key;
    const Conn *c = key_record;
    return o->own.c.in == c->in && o->own.c.out == c->out;
}

/* The adoptable `gene` becomes the view of the record at `pos` (which holds its values). */
int
gene_adopt(Genes *g, int kind, Py_ssize_t pos, PyObject *gene)
{
    Gene *o = (Gene *)gene;
    gene_left(g, kind, pos);
    if (cover(g, kind, pos) < 0)
        return -1;
    g->objects[kind][pos] = o;
    o->owner = (Genes *)Py_NewRef((PyObject *)g);
    o->pos = pos;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Reading any gene object's values                                                           */

static int
attr_double(PyObject *obj, PyObject *name, double *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    *out = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

static int
attr_name(CoreState *st, PyObject *obj, PyObject *name, int32_t *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    *out = name_id(st, v);
    Py_DECREF(v);
    return *out < 0 ? -1 : 0;
}

static PyObject *missing(Gene *o, int attr);

/* A gene object's values into a record (its key fields left as they are): neatpar's gene
   objects read directly, any other object's attributes read by name. */
int
gene_values(CoreState *st, PyObject *gene, int kind, void *record)
{
    if (st->gene_types[kind] && Py_IS_TYPE(gene, st->gene_types[kind])) {
        Gene *o = (Gene *)gene;
        if (!o->owner && o->set != GENE_ALL(kind)) {
            int attr = 1;
            while (o->set & (1u << attr))
                attr++;
            missing(o, attr);
            return -1;
        }
        if (kind == NODE_GENES) {
            Node *n = record, *from = node_of(o);
            int64_t key = n->key;
            *n = *from;
            n->key = key;
        }
        else {
            Conn *c = record, *from = conn_of(o);
            int64_t in = c->in, out = c->out;
            *c = *from;
            c->in = in;
            c->out = out;
        }
        return 0;
    }
    if (kind == NODE_GENES) {
        Node *n = record;
        return (attr_double(gene, st->str_bias, &n->bias) < 0 || attr_double(gene, st->str_response, &n->response) < 0
                || attr_name(st, gene, st->str_activation, &n->act) < 0
                || attr_name(st, gene, st->str_aggregation, &n->agg) < 0
                || attr_double(gene, st->str_time_constant, &n->time_constant) < 0) ? -1 : 0;
    }
    Conn *c = record;
    PyObject *innov = PyObject_GetAttr(gene, st->str_innovation);
    if (!innov)
        return -1;
    c->innov = PyLong_AsLongLong(innov);
    Py_DECREF(innov);
    if ((c->innov == -1 && PyErr_Occurred()) || attr_double(gene, st->str_weight, &c->weight) < 0)
        return -1;
    PyObject *en = PyObject_GetAttr(gene, st->str_enabled);
    if (!en)
        return -1;
    c->enabled = PyObject_IsTrue(en);
    c->pad = 0;
    Py_DECREF(en);
    return c->enabled < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Attributes                                                                                  */

/* neat-python's gene without the attribute: the AttributeError Python raises. NULL. */
static PyObject *
missing(Gene *o, int attr)
{
    PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '%s'", CLASS_NAMES[o->kind],
                 o->kind == NODE_GENES ? NODE_NAMES[attr] : CONN_NAMES[attr]);
    return NULL;
}

static PyObject *
node_get(Gene *o, void *closure)
{
    int attr = (int)(intptr_t)closure;
    if (!o->owner && !(o->set & (1u << attr)))
        return missing(o, attr);
    const Node *n = node_of(o);
    switch (attr) {
    case N_KEY: return gene_key((PyObject *)o);
    case N_BIAS: return PyFloat_FromDouble(n->bias);
    case N_RESPONSE: return PyFloat_FromDouble(n->response);
    case N_ACTIVATION: return Py_NewRef(PyList_GET_ITEM(state_of(o)->names, n->act));
    case N_AGGREGATION: return Py_NewRef(PyList_GET_ITEM(state_of(o)->names, n->agg));
    default: return PyFloat_FromDouble(n->time_constant);
    }
}

static PyObject *
conn_get(Gene *o, void *closure)
{
    int attr = (int)(intptr_t)closure;
    if (!o->owner && !(o->set & (1u << attr)))
        return missing(o, attr);
    const Conn *c = conn_of(o);
    switch (attr) {
    case C_KEY: return gene_key((PyObject *)o);
    case C_INNOVATION: return PyLong_FromLongLong(c->innov);
    case C_WEIGHT: return PyFloat_FromDouble(c->weight);
    default: return Py_NewRef(c->enabled ? Py_True : Py_False);
    }
}

/* A deleted attribute: gone from a gene of its own values; a genome's gene keeps all of its. */
static int
delete_attr(Gene *o, int attr)
{
    if (o->owner) {
        PyErr_Format(PyExc_AttributeError, "neatpar: a genome's gene keeps its attributes ('%s' cannot be deleted); "
                     "remove the gene from the genome instead",
                     o->kind == NODE_GENES ? NODE_NAMES[attr] : CONN_NAMES[attr]);
        return -1;
    }
    if (!(o->set & (1u << attr))) {
        missing(o, attr);
        return -1;
    }
    o->set &= ~(1u << attr);
    return 0;
}

/* A key written: a gene of its own takes any; a genome's gene keeps the key it has there. */
static int
key_unchanged(Gene *o, int same)
{
    if (same)
        return 0;
    PyErr_Format(PyExc_AttributeError, "neatpar: a genome's gene has the key it has in genome.%s; assign a copy "
                 "with the new key instead", o->kind == NODE_GENES ? "nodes" : "connections");
    return -1;
}

static int
written(Gene *o, int attr)
{
    if (o->owner)
        gene_written(o->owner, o->kind, o->pos);
    else
        o->set |= 1u << attr;
    return 0;
}

static int
node_set(Gene *o, PyObject *value, void *closure)
{
    int attr = (int)(intptr_t)closure;
    if (!value)
        return delete_attr(o, attr);
    Node *n = node_of(o);
    if (attr == N_KEY) {
        if (!PyLong_Check(value)) {
            PyErr_Format(PyExc_TypeError, "neatpar: a node gene's key is an int, not %R", value);
            return -1;
        }
        int64_t key = PyLong_AsLongLong(value);
        if (key == -1 && PyErr_Occurred())
            return -1;
        if (o->owner)
            return key_unchanged(o, key == n->key);
        n->key = key;
        Py_CLEAR(o->key);
        return written(o, attr);
    }
    if (attr == N_ACTIVATION || attr == N_AGGREGATION) {
        int32_t id = name_id(state_of(o), value);
        if (id < 0)
            return -1;
        *(attr == N_ACTIVATION ? &n->act : &n->agg) = id;
        return written(o, attr);
    }
    double v = PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred())
        return -1;
    *(attr == N_BIAS ? &n->bias : attr == N_RESPONSE ? &n->response : &n->time_constant) = v;
    return written(o, attr);
}

static int
conn_set(Gene *o, PyObject *value, void *closure)
{
    int attr = (int)(intptr_t)closure;
    if (!value)
        return delete_attr(o, attr);
    Conn *c = conn_of(o);
    if (attr == C_KEY) {
        int64_t in, out;
        if (!PyTuple_Check(value) || PyTuple_GET_SIZE(value) != 2 || !PyLong_Check(PyTuple_GET_ITEM(value, 0))
            || !PyLong_Check(PyTuple_GET_ITEM(value, 1))) {
            PyErr_Format(PyExc_TypeError, "neatpar: a connection gene's key is a pair of ints, not %R", value);
            return -1;
        }
        if (read_pair(value, &in, &out) < 0)
            return -1;
        if (o->owner)
            return key_unchanged(o, in == c->in && out == c->out);
        c->in = in;
        c->out = out;
        Py_CLEAR(o->key);
        return written(o, attr);
    }
    if (attr == C_INNOVATION) {
        int64_t innov = PyLong_AsLongLong(value);
        if (innov == -1 && PyErr_Occurred())
            return -1;
        c->innov = innov;
        return written(o, attr);
    }
    if (attr == C_ENABLED) {
        int truth = PyObject_IsTrue(value);
        if (truth < 0)
            return -1;
        c->enabled = truth;
        return written(o, attr);
    }
    double v = PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred())
        return -1;
    c->weight = v;
    return written(o, attr);
}

/* __dict__, the attributes code gives a gene object of its own: read or replaced, the object is
   watched by the cyclic collector from then on (what it holds may refer back to it). */
static PyObject *
gene_dict(PyObject *self, void *closure)
{
    PyObject *d = PyObject_GenericGetDict(self, closure);
    if (d && !PyObject_GC_IsTracked(self))
        PyObject_GC_Track(self);
    return d;
}

static int
gene_set_dict(PyObject *self, PyObject *value, void *closure)
{
    int rc = PyObject_GenericSetDict(self, value, closure);
    if (rc == 0 && !PyObject_GC_IsTracked(self))
        PyObject_GC_Track(self);
    return rc;
}

#define NODE_ATTR(name, attr, doc) {name, (getter)node_get, (setter)node_set, doc, (void *)(intptr_t)(attr)}
#define CONN_ATTR(name, attr, doc) {name, (getter)conn_get, (setter)conn_set, doc, (void *)(intptr_t)(attr)}

static PyGetSetDef node_getset[] = {
    NODE_ATTR("key", N_KEY, "The node's key (an int)."),
    NODE_ATTR("bias", N_BIAS, "The node's bias."),
    NODE_ATTR("response", N_RESPONSE, "The node's response."),
    NODE_ATTR("activation", N_ACTIVATION, "The node's activation function's name."),
    NODE_ATTR("aggregation", N_AGGREGATION, "The node's aggregation function's name."),
    NODE_ATTR("time_constant", N_TIME_CONSTANT, "The node's time constant (CTRNN)."),
    {"__dict__", gene_dict, gene_set_dict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyGetSetDef conn_getset[] = {
    CONN_ATTR("key", C_KEY, "The connection's key (input key, output key)."),
    CONN_ATTR("innovation", C_INNOVATION, "The connection's innovation number."),
    CONN_ATTR("weight", C_WEIGHT, "The connection's weight."),
    CONN_ATTR("enabled", C_ENABLED, "Whether the connection is enabled."),
    {"__dict__", gene_dict, gene_set_dict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ------------------------------------------------------------------------------------------ */
/* Pickling, the end of a view                                                                */

/* Pickled (and deep-copied) as neat-python's gene: its class called with the key (and the
   innovation number), then its attributes, in neat-python's order, and any other it was given. */
static PyObject *
gene_reduce(Gene *o, PyObject *unused)
{
    (void)unused;
    CoreState *st = state_of(o);
    int count = o->kind == NODE_GENES ? N_COUNT : C_COUNT;
    uint32_t has = o->owner ? GENE_ALL(o->kind) : o->set;
    PyObject *state = PyDict_New(), *args = NULL, *extra = NULL, *result = NULL;
    if (!state)
        return NULL;
    for (int attr = 0; attr < count; attr++) {
        if (!(has & (1u << attr)))
            continue;
        void *closure = (void *)(intptr_t)attr;
        PyObject *v = o->kind == NODE_GENES ? node_get(o, closure) : conn_get(o, closure);
        const char *name = o->kind == NODE_GENES ? NODE_NAMES[attr] : CONN_NAMES[attr];
        int rc = v ? PyDict_SetItemString(state, name, v) : -1;
        Py_XDECREF(v);
        if (rc < 0)
            goto done;
    }
    extra = PyObject_GenericGetDict((PyObject *)o, NULL);
    if (!extra || PyDict_Update(state, extra) < 0)
        goto done;
    /* The constructor's arguments: neat-python's __init__ checks and sets them as it does for its
       own genes (a gene without a key, made by __new__ alone, is made the same way). */
    PyObject *key = PyDict_GetItemString(state, "key"), *innov = PyDict_GetItemString(state, "innovation");
    PyObject *cls = st->neat_gene_classes[o->kind];
    if (key && (o->kind == NODE_GENES || innov))
        args = o->kind == NODE_GENES ? PyTuple_Pack(1, key) : PyTuple_Pack(2, key, innov);
    else
        args = Py_BuildValue("(OOO)", cls, (PyObject *)&PyBaseObject_Type, Py_None);
    if (args)
        result = Py_BuildValue("(OOO)", PyTuple_GET_SIZE(args) == 3 ? st->reconstructor : cls, args, state);
done:
    Py_XDECREF(extra);
    Py_XDECREF(args);
    Py_DECREF(state);
    return result;
}

/* The end of a view (or of a gene of its own): it leaves its Genes' list. A finalizer, not a
   dealloc: the base class's dealloc (CPython's, for Python classes) runs after it and clears what
   the base class keeps (its __dict__, its weak references). */
static void
gene_finalize(PyObject *self)
{
    Gene *o = (Gene *)self;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    gene_detach(o);
    Py_CLEAR(o->key);
    PyErr_Restore(type, value, tb);
}

/* Attribute access: the gene attributes by their interned names first (what code's attribute
   names are), then the generic lookup (methods, the base class's, other names, an attribute of
   its own, which makes the collector watch it). */
static PyObject *
gene_getattro(PyObject *self, PyObject *name)
{
    Gene *o = (Gene *)self;
    CoreState *st = state_of(o);
    if (o->kind == NODE_GENES) {
        if (name == st->str_bias) return node_get(o, (void *)(intptr_t)N_BIAS);
        if (name == st->str_activation) return node_get(o, (void *)(intptr_t)N_ACTIVATION);
        if (name == st->str_aggregation) return node_get(o, (void *)(intptr_t)N_AGGREGATION);
        if (name == st->str_response) return node_get(o, (void *)(intptr_t)N_RESPONSE);
        if (name == st->str_key) return node_get(o, (void *)(intptr_t)N_KEY);
        if (name == st->str_time_constant) return node_get(o, (void *)(intptr_t)N_TIME_CONSTANT);
    }
    else {
        if (name == st->str_weight) return conn_get(o, (void *)(intptr_t)C_WEIGHT);
        if (name == st->str_enabled) return conn_get(o, (void *)(intptr_t)C_ENABLED);
        if (name == st->str_key) return conn_get(o, (void *)(intptr_t)C_KEY);
        if (name == st->str_innovation) return conn_get(o, (void *)(intptr_t)C_INNOVATION);
    }
    return PyObject_GenericGetAttr(self, name);
}

static int
gene_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    Gene *o = (Gene *)self;
    CoreState *st = state_of(o);
    if (o->kind == NODE_GENES) {
        if (name == st->str_bias) return node_set(o, value, (void *)(intptr_t)N_BIAS);
        if (name == st->str_activation) return node_set(o, value, (void *)(intptr_t)N_ACTIVATION);
        if (name == st->str_aggregation) return node_set(o, value, (void *)(intptr_t)N_AGGREGATION);
        if (name == st->str_response) return node_set(o, value, (void *)(intptr_t)N_RESPONSE);
        if (name == st->str_key) return node_set(o, value, (void *)(intptr_t)N_KEY);
        if (name == st->str_time_constant) return node_set(o, value, (void *)(intptr_t)N_TIME_CONSTANT);
    }
    else {
        if (name == st->str_weight) return conn_set(o, value, (void *)(intptr_t)C_WEIGHT);
        if (name == st->str_enabled) return conn_set(o, value, (void *)(intptr_t)C_ENABLED);
        if (name == st->str_key) return conn_set(o, value, (void *)(intptr_t)C_KEY);
        if (name == st->str_innovation) return conn_set(o, value, (void *)(intptr_t)C_INNOVATION);
    }
    int rc = PyObject_GenericSetAttr(self, name, value);
    if (rc == 0 && !PyObject_GC_IsTracked(self))
        PyObject_GC_Track(self);
    return rc;
}

/* A gene of its own values, none set yet (the class's __init__, neat-python's, sets the key). */
static PyObject *
gene_new(PyTypeObject *type, int kind)
{
    Gene *o = (Gene *)type->tp_alloc(type, 0);
    if (o)
        o->kind = kind;
    return (PyObject *)o;
}

static PyObject *
node_gene_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)args, (void)kwds;
    return gene_new(type, NODE_GENES);
}

static PyObject *
conn_gene_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)args, (void)kwds;
    return gene_new(type, CONN_GENES);
}

static PyMethodDef gene_methods[] = {
    {"__reduce__", (PyCFunction)gene_reduce, METH_NOARGS, "Pickled as neat-python's gene with these attributes."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot node_gene_slots[] = {
    {Py_tp_doc, (void *)"neat-python's DefaultNodeGene over a genome's node record (neatpar)."},
    {Py_tp_getset, node_getset},
    {Py_tp_new, SLOT_FN(node_gene_new)},
    {Py_tp_getattro, SLOT_FN(gene_getattro)},
    {Py_tp_setattro, SLOT_FN(gene_setattro)},
    {Py_tp_methods, gene_methods},
    {Py_tp_finalize, SLOT_FN(gene_finalize)},
    {0, NULL},
};

static PyType_Slot conn_gene_slots[] = {
    {Py_tp_doc, (void *)"neat-python's DefaultConnectionGene over a genome's connection record (neatpar)."},
    {Py_tp_getset, conn_getset},
    {Py_tp_new, SLOT_FN(conn_gene_new)},
    {Py_tp_getattro, SLOT_FN(gene_getattro)},
    {Py_tp_setattro, SLOT_FN(gene_setattro)},
    {Py_tp_methods, gene_methods},
    {Py_tp_finalize, SLOT_FN(gene_finalize)},
    {0, NULL},
};

/* Named as neat-python's classes, so that reprs, str() and class names read as neat-python's.
   Mutable types, as their bases (neat-python's Python classes) are: an immutable type made from a
   mutable base is deprecated since Python 3.12 and refused from 3.14. */
static PyType_Spec gene_specs[2] = {
    {.name = "neat.genes.DefaultNodeGene", .basicsize = sizeof(Gene), .flags = Py_TPFLAGS_DEFAULT,
     .slots = node_gene_slots},
    {.name = "neat.genes.DefaultConnectionGene", .basicsize = sizeof(Gene), .flags = Py_TPFLAGS_DEFAULT,
     .slots = conn_gene_slots},
};

/* Whether a gene object fits after the base class's layout (its fields start at `owner`). */
static int
layout_fits(PyTypeObject *base)
{
    return base->tp_itemsize == 0 && base->tp_basicsize <= (Py_ssize_t)offsetof(Gene, owner)
           && base->tp_weaklistoffset <= (Py_ssize_t)offsetof(Gene, base_weakrefs)
           && (base->tp_dictoffset <= 0
               || base->tp_dictoffset + (Py_ssize_t)sizeof(PyObject *) <= (Py_ssize_t)offsetof(Gene, owner));
}

/* The gene objects' types, subclasses of neat-python's gene classes (in the module's state;
   none, and gene dicts of neat-python's own objects, where those classes are laid out otherwise). */
int
make_gene_types(PyObject *module, CoreState *st)
{
    PyObject *genes = PyImport_ImportModule("neat.genes"), *copyreg = PyImport_ImportModule("copyreg");
    int rc = -1;
    if (!genes || !copyreg)
        goto done;
    st->reconstructor = PyObject_GetAttrString(copyreg, "_reconstructor");
    st->neat_gene_classes[0] = PyObject_GetAttrString(genes, "DefaultNodeGene");
    st->neat_gene_classes[1] = st->neat_gene_classes[0] ? PyObject_GetAttrString(genes, "DefaultConnectionGene") : NULL;
    if (!st->reconstructor || !st->neat_gene_classes[1])
        goto done;
    rc = 0;
    for (int kind = 0; kind < 2; kind++) {
        PyObject *base = st->neat_gene_classes[kind];
        if (!PyType_Check(base) || !layout_fits((PyTypeObject *)base))
            continue;
        st->gene_types[kind] = (PyTypeObject *)PyType_FromModuleAndSpec(module, &gene_specs[kind], base);
        if (!st->gene_types[kind]) {
            rc = -1;
            break;
        }
    }
    if (rc == 0 && (!st->gene_types[0] || !st->gene_types[1])) {
        Py_CLEAR(st->gene_types[0]);
        Py_CLEAR(st->gene_types[1]);
    }
done:
    Py_XDECREF(genes);
    Py_XDECREF(copyreg);
    return rc;
}
