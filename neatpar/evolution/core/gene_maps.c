/* genome.nodes and genome.connections of a genome whose genes are records: mappings over the
Genes that behave as neat-python's dicts (the genes in the same order, keys as the dicts'
keys, every dict method a genome's code uses: [], in, len, iteration, keys/values/items, get,
pop, popitem, setdefault, update, clear, copy, ==, assignment and deletion), handing out the
records' gene objects (gene_objects.c); their views and iterators; and the descriptor a genome
class holds them by.

A gene assigned to a mapping gives its record its values: a gene object of its own values (made by
copy() or crossover()) becomes the view of that record, so changes through it count as they do
for the object a dict holds; any other object (neat-python's own gene, say) is read as it is
then. Removing a gene leaves its object with its values, as a dict leaves the object it held. */
#include "gene_maps.h"
#include "config.h"
#include "gene_objects.h"

#include <math.h>
#include <string.h>

enum { KEYS, VALUES, ITEMS };

typedef struct {
    PyObject_HEAD
    GeneMap *map;                /* strong */
    int what;                    /* KEYS, VALUES or ITEMS */
} MapView;

typedef struct {
    PyObject_HEAD
    GeneMap *map;                /* strong */
    int what, reverse;
    Py_ssize_t next, len;        /* the next position; the length it started with */
    uint64_t stamp;              /* the Genes' stamp it started with */
    PyObject *pair;              /* items(): the last (key, gene) handed out, made again when nobody kept it */
} MapIter;

static inline Py_ssize_t
count_of(const GeneMap *m)
{
    return m->kind == NODE_GENES ? m->g->nn : m->g->nc;
}

/* The positional arguments of a dict method: between 1 and 2 (-1: a TypeError set). */
static int
one_or_two(const char *method, Py_ssize_t nargs)
{
    if (nargs == 1 || nargs == 2)
        return 0;
    PyErr_Format(PyExc_TypeError, "%s expected 1 or 2 arguments, got %zd", method, nargs);
    return -1;
}

static inline CoreState *
map_state(PyObject *o)
{
    return PyType_GetModuleState(Py_TYPE(o));
}

/* ------------------------------------------------------------------------------------------ */
/* Keys                                                                                        */

/* A node key in a lookup: 1 read, 0 no gene has it (a dict would not find it), -1 error
   (unhashable, as a dict says). Ints and what equals them (True, 2.0, numpy's ints). */
static int
lookup_int(PyObject *k, int64_t *out)
{
    if (PyFloat_Check(k)) {
        double d = PyFloat_AS_DOUBLE(k);
        if (d != floor(d) || fabs(d) >= 9.2e18)
            return 0;
        *out = (int64_t)d;
        return 1;
    }
    if (!PyLong_Check(k) && !PyIndex_Check(k))
        return PyObject_Hash(k) == -1 ? -1 : 0;
    PyObject *i = PyNumber_Index(k);
    if (!i)
        return -1;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow)
        return 0;
    *out = v;
    return 1;
}

/* The position of `key` in the mapping: -1 not there, -2 error. */
static Py_ssize_t
map_find(GeneMap *m, PyObject *key)
{
    int64_t a, b = 0;
    int r;
    if (m->kind == NODE_GENES)
        r = lookup_int(key, &a);
    else if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 2)
        r = PyObject_Hash(key) == -1 ? -1 : 0;
    else {
        r = lookup_int(PyTuple_GET_ITEM(key, 0), &a);
        if (r > 0)
            r = lookup_int(PyTuple_GET_ITEM(key, 1), &b);
    }
    if (r <= 0)
        return r - 1;
    return m->kind == NODE_GENES ? find_node(m->g, a) : conn_pos(m->g, a, b);
}

static PyObject *
key_at(const GeneMap *m, Py_ssize_t pos)
{
    if (m->kind == NODE_GENES)
        return PyLong_FromLongLong(m->g->nodes[pos].key);
    return int_pair(m->g->conns[pos].in, m->g->conns[pos].out);
}

static void
key_error(PyObject *key)
{
    PyObject *args = PyTuple_Pack(1, key);
    if (args) {
        PyErr_SetObject(PyExc_KeyError, args);
        Py_DECREF(args);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* The mapping                                                                                 */

/* genome.nodes or genome.connections of `g` (one mapping per Genes while it lives). New reference. */
PyObject *
genes_map(Genes *g, int kind)
{
    if (g->maps[kind])
        return Py_NewRef(g->maps[kind]);
    CoreState *st = PyType_GetModuleState(Py_TYPE(g));
    GeneMap *m = PyObject_New(GeneMap, st->map_type);
    if (!m)
        return NULL;
    m->g = (Genes *)Py_NewRef((PyObject *)g);
    m->kind = kind;
    g->maps[kind] = (PyObject *)m;
    return (PyObject *)m;
}

static void
map_dealloc(GeneMap *m)
{
    PyTypeObject *type = Py_TYPE(m);
    if (m->g->maps[m->kind] == (PyObject *)m)
        m->g->maps[m->kind] = NULL;
    Py_DECREF(m->g);
    PyObject_Free(m);
    Py_DECREF(type);
}

static Py_ssize_t
map_len(GeneMap *m)
{
    return count_of(m);
}

static PyObject *
map_subscript(GeneMap *m, PyObject *key)
{
    Py_ssize_t pos = map_find(m, key);
    if (pos == -1)
        key_error(key);
    return pos < 0 ? NULL : gene_at(m->g, m->kind, pos);
}

static int
map_contains(GeneMap *m, PyObject *key)
{
    Py_ssize_t pos = map_find(m, key);
    return pos == -2 ? -1 : pos >= 0;
}

/* The record `value` gives at `key` (a key a genome's gene may have). */
static int
record_of(CoreState *st, int kind, PyObject *key, PyObject *value, void *record)
{
    if (kind == NODE_GENES) {
        Node *n = record;
        if (!PyLong_Check(key)) {
            PyErr_Format(PyExc_TypeError, "neatpar: genome.nodes takes node keys (ints), not %R", key);
            return -1;
        }
        n->key = PyLong_AsLongLong(key);
        if (n->key == -1 && PyErr_Occurred())
            return -1;
    }
    else {
        Conn *c = record;
        if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 2 || !PyLong_Check(PyTuple_GET_ITEM(key, 0))
            || !PyLong_Check(PyTuple_GET_ITEM(key, 1))) {
            PyErr_Format(PyExc_TypeError, "neatpar: genome.connections takes keys (input key, output key), "
                         "not %R", key);
            return -1;
        }
        if (read_pair(key, &c->in, &c->out) < 0)
            return -1;
    }
    return gene_values(st, value, kind, record);
}

/* mapping[key] = value: the record at key replaced in place, or a new one at the end. */
static int
map_assign(GeneMap *m, PyObject *key, PyObject *value)
{
    CoreState *st = map_state((PyObject *)m);
    Genes *g = m->g;
    union { Node n; Conn c; } rec;
    if (record_of(st, m->kind, key, value, &rec) < 0)
        return -1;
    Py_ssize_t pos = m->kind == NODE_GENES ? find_node(g, rec.n.key) : conn_pos(g, rec.c.in, rec.c.out);
    if (pos == -2)
        return -1;
    if (pos >= 0) {
        if (pos < g->objects_len[m->kind] && (PyObject *)g->objects[m->kind][pos] == value)
            return 0;  /* its own gene, assigned again */
        gene_left(g, m->kind, pos);
        if (m->kind == NODE_GENES)
            g->nodes[pos] = rec.n;
        else
            g->conns[pos] = rec.c;
        gene_written(g, m->kind, pos);
    }
    else {
        int rc = m->kind == NODE_GENES ? push_node(g, &rec.n)
                 : reserve((void **)&g->conns, &g->conn_cap, g->nc + 1, sizeof(Conn));
        if (rc < 0)
            return -1;
        if (m->kind == CONN_GENES)
            g->conns[g->nc++] = rec.c;
        pos = count_of(m) - 1;
        genes_changed(g);
    }
    return gene_adoptable(st, value, m->kind, &rec) ? gene_adopt(g, m->kind, pos, value) : 0;
}

static int
map_ass_subscript(GeneMap *m, PyObject *key, PyObject *value)
{
    if (value)
        return map_assign(m, key, value);
    Py_ssize_t pos = map_find(m, key);
    if (pos == -1)
        key_error(key);
    if (pos < 0)
        return -1;
    if (m->kind == NODE_GENES)
        remove_node_at(m->g, pos);
    else
        remove_conn_at(m->g, pos);
    return 0;
}

static PyObject *make_iter(GeneMap *m, int what, int reverse);
static PyObject *make_view(GeneMap *m, int what);

static PyObject *
map_iter(GeneMap *m)
{
    return make_iter(m, KEYS, 0);
}

static PyObject *
map_keys(GeneMap *m, PyObject *unused)
{
    (void)unused;
    return make_view(m, KEYS);
}

static PyObject *
map_values(GeneMap *m, PyObject *unused)
{
    (void)unused;
    return make_view(m, VALUES);
}

static PyObject *
map_items(GeneMap *m, PyObject *unused)
{
    (void)unused;
    return make_view(m, ITEMS);
}

static PyObject *
map_reversed(GeneMap *m, PyObject *unused)
{
    (void)unused;
    return make_iter(m, KEYS, 1);
}

static PyObject *
map_get(GeneMap *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (one_or_two("get", nargs) < 0)
        return NULL;
    Py_ssize_t pos = map_find(m, args[0]);
    if (pos == -2)
        return NULL;
    if (pos < 0)
        return Py_NewRef(nargs > 1 ? args[1] : Py_None);
    return gene_at(m->g, m->kind, pos);
}

/* The gene at pos, removed (its object keeps the values). */
static PyObject *
take(GeneMap *m, Py_ssize_t pos)
{
    PyObject *gene = gene_at(m->g, m->kind, pos);
    if (!gene)
        return NULL;
    if (m->kind == NODE_GENES)
        remove_node_at(m->g, pos);
    else
        remove_conn_at(m->g, pos);
    return gene;
}

static PyObject *
map_pop(GeneMap *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (one_or_two("pop", nargs) < 0)
        return NULL;
    Py_ssize_t pos = map_find(m, args[0]);
    if (pos == -2)
        return NULL;
    if (pos == -1) {
        if (nargs > 1)
            return Py_NewRef(args[1]);
        key_error(args[0]);
        return NULL;
    }
    return take(m, pos);
}

static PyObject *
map_popitem(GeneMap *m, PyObject *unused)
{
    (void)unused;
    Py_ssize_t n = count_of(m);
    if (n == 0) {
        PyErr_SetString(PyExc_KeyError, "popitem(): dictionary is empty");
        return NULL;
    }
    PyObject *key = key_at(m, n - 1), *gene = key ? take(m, n - 1) : NULL;
    if (!gene) {
        Py_XDECREF(key);
        return NULL;
    }
    return Py_BuildValue("(NN)", key, gene);
}

static PyObject *
map_setdefault(GeneMap *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (one_or_two("setdefault", nargs) < 0)
        return NULL;
    Py_ssize_t pos = map_find(m, args[0]);
    if (pos == -2)
        return NULL;
    if (pos == -1) {
        if (map_assign(m, args[0], nargs > 1 ? args[1] : Py_None) < 0)
            return NULL;
        pos = map_find(m, args[0]);
        if (pos < 0)
            return NULL;
    }
    return gene_at(m->g, m->kind, pos);
}

/* update(other=(), **genes): dict.update's arguments, read into a dict first. */
static PyObject *
map_update(GeneMap *m, PyObject *args, PyObject *kwargs)
{
    PyObject *other = NULL;
    if (!PyArg_UnpackTuple(args, "update", 0, 1, &other))
        return NULL;
    PyObject *pending = PyDict_New();
    int rc = pending ? 0 : -1;
    if (rc == 0 && other)
        rc = PyObject_HasAttrString(other, "keys") ? PyDict_Merge(pending, other, 1) : PyDict_MergeFromSeq2(pending, other, 1);
    if (rc == 0 && kwargs)
        rc = PyDict_Merge(pending, kwargs, 1);
    Py_ssize_t at = 0;
    PyObject *key, *value;
    while (rc == 0 && PyDict_Next(pending, &at, &key, &value))
        rc = map_assign(m, key, value);
    Py_XDECREF(pending);
    return rc < 0 ? NULL : Py_NewRef(Py_None);
}

static PyObject *
map_clear(GeneMap *m, PyObject *unused)
{
    (void)unused;
    for (Py_ssize_t pos = count_of(m) - 1; pos >= 0; pos--)
        gene_left(m->g, m->kind, pos);
    if (m->kind == NODE_GENES)
        m->g->nn = 0;
    else
        m->g->nc = 0;
    genes_changed(m->g);
    Py_RETURN_NONE;
}

/* A dict of the same keys and gene objects (dict.copy: shallow). */
static PyObject *
map_copy(GeneMap *m, PyObject *unused)
{
    (void)unused;
    PyObject *d = PyDict_New();
    for (Py_ssize_t pos = 0; d && pos < count_of(m); pos++) {
        PyObject *key = key_at(m, pos), *gene = key ? gene_at(m->g, m->kind, pos) : NULL;
        if (!gene || PyDict_SetItem(d, key, gene) < 0)
            Py_CLEAR(d);
        Py_XDECREF(key);
        Py_XDECREF(gene);
    }
    return d;
}

/* Pickled and copied (copy.copy, copy.deepcopy) as a dict of the genes. */
static PyObject *
map_reduce(GeneMap *m, PyObject *unused)
{
    PyObject *d = map_copy(m, unused), *items = d ? PyDict_Items(d) : NULL;
    Py_XDECREF(d);
    return items ? Py_BuildValue("(O(N))", (PyObject *)&PyDict_Type, items) : NULL;
}

static PyObject *
as_dict(CoreState *st, PyObject *o)
{
    return Py_IS_TYPE(o, st->map_type) ? map_copy((GeneMap *)o, NULL) : Py_NewRef(o);
}

/* == and != as between dicts (`a` is a mapping over records: the slot's own type). */
static PyObject *
map_richcompare(PyObject *a, PyObject *b, int op)
{
    if (op != Py_EQ && op != Py_NE)
        Py_RETURN_NOTIMPLEMENTED;
    CoreState *st = map_state(a);
    PyObject *x = as_dict(st, a), *y = x ? as_dict(st, b) : NULL;
    PyObject *r = y ? PyObject_RichCompare(x, y, op) : NULL;
    Py_XDECREF(x);
    Py_XDECREF(y);
    return r;
}

static PyObject *
map_repr(GeneMap *m)
{
    PyObject *d = map_copy(m, NULL), *r = d ? PyObject_Repr(d) : NULL;
    Py_XDECREF(d);
    return r;
}

static PyMethodDef map_methods[] = {
    {"keys", (PyCFunction)map_keys, METH_NOARGS, "The keys, as dict.keys()."},
    {"values", (PyCFunction)map_values, METH_NOARGS, "The gene objects, as dict.values()."},
    {"items", (PyCFunction)map_items, METH_NOARGS, "(key, gene object) pairs, as dict.items()."},
    {"get", (PyCFunction)(void (*)(void))map_get, METH_FASTCALL, "get(key, default=None), as dict.get."},
    {"pop", (PyCFunction)(void (*)(void))map_pop, METH_FASTCALL, "pop(key[, default]), as dict.pop."},
    {"popitem", (PyCFunction)map_popitem, METH_NOARGS, "The last (key, gene) removed, as dict.popitem()."},
    {"setdefault", (PyCFunction)(void (*)(void))map_setdefault, METH_FASTCALL, "As dict.setdefault."},
    {"update", (PyCFunction)(void (*)(void))map_update, METH_VARARGS | METH_KEYWORDS, "As dict.update."},
    {"clear", (PyCFunction)map_clear, METH_NOARGS, "Every gene removed."},
    {"copy", (PyCFunction)map_copy, METH_NOARGS, "A dict of the same keys and gene objects."},
    {"__reversed__", (PyCFunction)map_reversed, METH_NOARGS, "The keys, last first."},
    {"__reduce__", (PyCFunction)map_reduce, METH_NOARGS, "Pickled as a dict of the genes."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot map_slots[] = {
    {Py_tp_doc, (void *)"A genome's genes (genome.nodes or genome.connections) over its records, as a dict."},
    {Py_tp_dealloc, SLOT_FN(map_dealloc)},
    {Py_mp_length, SLOT_FN(map_len)},
    {Py_mp_subscript, SLOT_FN(map_subscript)},
    {Py_mp_ass_subscript, SLOT_FN(map_ass_subscript)},
    {Py_sq_contains, SLOT_FN(map_contains)},
    {Py_tp_iter, SLOT_FN(map_iter)},
    {Py_tp_richcompare, SLOT_FN(map_richcompare)},
    {Py_tp_repr, SLOT_FN(map_repr)},
    {Py_tp_hash, SLOT_FN(PyObject_HashNotImplemented)},
    {Py_tp_methods, map_methods},
    {0, NULL},
};

static PyType_Spec map_spec = {
    .name = "neatpar.evolution._core.GeneMap",
    .basicsize = sizeof(GeneMap),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_MAPPING,
    .slots = map_slots,
};

/* ------------------------------------------------------------------------------------------ */
/* Iterators                                                                                   */

static PyObject *
make_iter(GeneMap *m, int what, int reverse)
{
    MapIter *it = PyObject_New(MapIter, map_state((PyObject *)m)->map_iter_type);
    if (!it)
        return NULL;
    it->map = (GeneMap *)Py_NewRef((PyObject *)m);
    it->what = what;
    it->reverse = reverse;
    it->len = count_of(m);
    it->next = reverse ? it->len - 1 : 0;
    it->stamp = m->g->stamp;
    it->pair = NULL;
    return (PyObject *)it;
}

static void
iter_dealloc(MapIter *it)
{
    PyTypeObject *type = Py_TYPE(it);
    Py_DECREF(it->map);
    Py_XDECREF(it->pair);
    PyObject_Free(it);
    Py_DECREF(type);
}

static PyObject *
iter_next(MapIter *it)
{
    GeneMap *m = it->map;
    Py_ssize_t pos = it->next;
    if (pos < 0 || pos >= it->len)
        return NULL;
    if (m->g->stamp != it->stamp) {
        it->next = -1;
        PyErr_SetString(PyExc_RuntimeError, count_of(m) != it->len ? "dictionary changed size during iteration"
                                                                    : "dictionary keys changed during iteration");
        return NULL;
    }
    it->next = it->reverse ? pos - 1 : pos + 1;
    if (it->what == KEYS)
        return key_at(m, pos);
    PyObject *gene = gene_at(m->g, m->kind, pos);
    if (it->what == VALUES || !gene)
        return gene;
    PyObject *key = gene_key(gene);
    if (!key) {
        Py_DECREF(gene);
        return NULL;
    }
    /* dict's items iterator's way: the pair nobody kept is filled again */
    PyObject *pair = it->pair;
    if (pair && Py_REFCNT(pair) == 1) {
        Py_INCREF(pair);
        Py_SETREF(PyTuple_GET_ITEM(pair, 0), key);
        Py_SETREF(PyTuple_GET_ITEM(pair, 1), gene);
        if (!PyObject_GC_IsTracked(pair))
            PyObject_GC_Track(pair);
        return pair;
    }
    pair = PyTuple_New(2);
    if (!pair) {
        Py_DECREF(key);
        Py_DECREF(gene);
        return NULL;
    }
    PyTuple_SET_ITEM(pair, 0, key);
    PyTuple_SET_ITEM(pair, 1, gene);
    Py_XSETREF(it->pair, Py_NewRef(pair));
    return pair;
}

static PyObject *
iter_length_hint(MapIter *it, PyObject *unused)
{
    (void)unused;
    Py_ssize_t left = it->next < 0 || it->next >= it->len ? 0 : it->reverse ? it->next + 1 : it->len - it->next;
    return PyLong_FromSsize_t(left);
}

static PyMethodDef iter_methods[] = {
    {"__length_hint__", (PyCFunction)iter_length_hint, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot iter_slots[] = {
    {Py_tp_dealloc, SLOT_FN(iter_dealloc)},
    {Py_tp_iter, SLOT_FN(PyObject_SelfIter)},
    {Py_tp_iternext, SLOT_FN(iter_next)},
    {Py_tp_methods, iter_methods},
    {0, NULL},
};

static PyType_Spec iter_spec = {
    .name = "neatpar.evolution._core.GeneMapIterator",
    .basicsize = sizeof(MapIter),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = iter_slots,
};

/* ------------------------------------------------------------------------------------------ */
/* keys(), values(), items()                                                                   */

static PyObject *
make_view(GeneMap *m, int what)
{
    MapView *v = PyObject_New(MapView, map_state((PyObject *)m)->map_view_type);
    if (!v)
        return NULL;
    v->map = (GeneMap *)Py_NewRef((PyObject *)m);
    v->what = what;
    return (PyObject *)v;
}

static void
view_dealloc(MapView *v)
{
    PyTypeObject *type = Py_TYPE(v);
    Py_DECREF(v->map);
    PyObject_Free(v);
    Py_DECREF(type);
}

static Py_ssize_t
view_len(MapView *v)
{
    return count_of(v->map);
}

static PyObject *
view_iter(MapView *v)
{
    return make_iter(v->map, v->what, 0);
}

static PyObject *
view_reversed(MapView *v, PyObject *unused)
{
    (void)unused;
    return make_iter(v->map, v->what, 1);
}

static int
view_contains(MapView *v, PyObject *x)
{
    if (v->what == KEYS)
        return map_contains(v->map, x);
    if (v->what == ITEMS) {
        if (!PyTuple_Check(x) || PyTuple_GET_SIZE(x) != 2)
            return 0;
        Py_ssize_t pos = map_find(v->map, PyTuple_GET_ITEM(x, 0));
        if (pos < 0)
            return pos == -2 ? -1 : 0;
        PyObject *gene = gene_at(v->map->g, v->map->kind, pos);
        int r = gene ? PyObject_RichCompareBool(gene, PyTuple_GET_ITEM(x, 1), Py_EQ) : -1;
        Py_XDECREF(gene);
        return r;
    }
    PyObject *it = view_iter(v), *gene;
    int found = it ? 0 : -1;
    while (found == 0 && it && (gene = PyIter_Next(it))) {
        found = PyObject_RichCompareBool(gene, x, Py_EQ);
        Py_DECREF(gene);
    }
    Py_XDECREF(it);
    return found < 0 || PyErr_Occurred() ? -1 : found;
}

static int
is_set_view(CoreState *st, PyObject *o)
{
    return Py_IS_TYPE(o, st->map_view_type) && ((MapView *)o)->what != VALUES;
}

/* keys() and items() compare and combine as sets (dict_keys and dict_items do); `a` is a view. */
static PyObject *
view_richcompare(PyObject *a, PyObject *b, int op)
{
    CoreState *st = map_state(a);
    if (!is_set_view(st, a) || !(PyAnySet_Check(b) || is_set_view(st, b) || PyDictKeys_Check(b) || PyDictItems_Check(b)))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *x = PySet_New(a), *y = x ? PySet_New(b) : NULL, *r = y ? PyObject_RichCompare(x, y, op) : NULL;
    Py_XDECREF(x);
    Py_XDECREF(y);
    return r;
}

typedef PyObject *(*SetOp)(PyObject *, PyObject *);

static PyObject *
set_op(PyObject *a, PyObject *b, SetOp op)
{
    PyObject *x = PySet_New(a), *y = x ? PySet_New(b) : NULL, *r = y ? op(x, y) : NULL;
    Py_XDECREF(x);
    Py_XDECREF(y);
    return r;
}

static PyObject *view_and(PyObject *a, PyObject *b) { return set_op(a, b, PyNumber_And); }
static PyObject *view_or(PyObject *a, PyObject *b) { return set_op(a, b, PyNumber_Or); }
static PyObject *view_xor(PyObject *a, PyObject *b) { return set_op(a, b, PyNumber_Xor); }
static PyObject *view_sub(PyObject *a, PyObject *b) { return set_op(a, b, PyNumber_Subtract); }

static PyObject *
view_isdisjoint(MapView *v, PyObject *other)
{
    PyObject *r = set_op((PyObject *)v, other, PyNumber_And);
    if (!r)
        return NULL;
    Py_ssize_t n = PySet_GET_SIZE(r);
    Py_DECREF(r);
    return PyBool_FromLong(n == 0);
}

static PyObject *
view_repr(MapView *v)
{
    static const char *const names[] = {"dict_keys", "dict_values", "dict_items"};
    PyObject *list = PySequence_List((PyObject *)v), *r = list ? PyUnicode_FromFormat("%s(%R)", names[v->what], list) : NULL;
    Py_XDECREF(list);
    return r;
}

static PyMethodDef view_methods[] = {
    {"__reversed__", (PyCFunction)view_reversed, METH_NOARGS, NULL},
    {"isdisjoint", (PyCFunction)view_isdisjoint, METH_O, "Whether it shares nothing with the iterable."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot view_slots[] = {
    {Py_tp_dealloc, SLOT_FN(view_dealloc)},
    {Py_sq_length, SLOT_FN(view_len)},
    {Py_sq_contains, SLOT_FN(view_contains)},
    {Py_tp_iter, SLOT_FN(view_iter)},
    {Py_tp_richcompare, SLOT_FN(view_richcompare)},
    {Py_tp_repr, SLOT_FN(view_repr)},
    {Py_nb_and, SLOT_FN(view_and)},
    {Py_nb_or, SLOT_FN(view_or)},
    {Py_nb_xor, SLOT_FN(view_xor)},
    {Py_nb_subtract, SLOT_FN(view_sub)},
    {Py_tp_methods, view_methods},
    {0, NULL},
};

static PyType_Spec view_spec = {
    .name = "neatpar.evolution._core.GeneMapView",
    .basicsize = sizeof(MapView),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = view_slots,
};

/* ------------------------------------------------------------------------------------------ */
/* The genome class's descriptor: genome.nodes, genome.connections                            */

/* For a genome of a class that keeps neatpar's operators, with its genes as records: the records'
   mapping. Otherwise (genes kept as objects, a class that changes an operator) `get(genome, kind)`
   answers; an assignment or deletion calls `set(genome, kind, value, deleted)`. */
typedef struct {
    PyObject_HEAD
    int kind;
    PyObject *get, *set;         /* strong */
} GenesSlot;

static int
slot_traverse(GenesSlot *s, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(s));
    Py_VISIT(s->get);
    Py_VISIT(s->set);
    return 0;
}

static int
slot_clear(GenesSlot *s)
{
    Py_CLEAR(s->get);
    Py_CLEAR(s->set);
    return 0;
}

static void
slot_dealloc(GenesSlot *s)
{
    PyTypeObject *type = Py_TYPE(s);
    PyObject_GC_UnTrack(s);
    slot_clear(s);
    PyObject_GC_Del(s);
    Py_DECREF(type);
}

static PyObject *
slot_get(GenesSlot *s, PyObject *genome, PyObject *type)
{
    (void)type;
    if (!genome)
        return Py_NewRef((PyObject *)s);
    CoreState *st = map_state((PyObject *)s);
    PyObject *g = PyObject_GetAttr(genome, st->str_genes);
    if (!g)
        PyErr_Clear();
    else if (Py_IS_TYPE(g, st->genes_type) && st->gene_types[0] && st->plain_types) {
        int plain = plain_type(st, (PyObject *)Py_TYPE(genome));
        PyObject *map = plain > 0 ? genes_map((Genes *)g, s->kind) : NULL;
        Py_DECREF(g);
        if (map || plain < 0)
            return map;
        g = NULL;
    }
    Py_XDECREF(g);
    return PyObject_CallFunction(s->get, "Oi", genome, s->kind);
}

static int
slot_set(GenesSlot *s, PyObject *genome, PyObject *value)
{
    PyObject *r = PyObject_CallFunction(s->set, "OiOO", genome, s->kind, value ? value : Py_None,
                                        value ? Py_False : Py_True);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyType_Slot slot_slots[] = {
    {Py_tp_dealloc, SLOT_FN(slot_dealloc)},
    {Py_tp_traverse, SLOT_FN(slot_traverse)},
    {Py_tp_clear, SLOT_FN(slot_clear)},
    {Py_tp_descr_get, SLOT_FN(slot_get)},
    {Py_tp_descr_set, SLOT_FN(slot_set)},
    {0, NULL},
};

static PyType_Spec slot_spec = {
    .name = "neatpar.evolution._core.GenesSlot",
    .basicsize = sizeof(GenesSlot),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = slot_slots,
};

/* genes_slot(kind, get, set) -> the descriptor of genome.nodes (kind 0) or genome.connections (1). */
PyObject *
py_genes_slot(PyObject *mod, PyObject *args)
{
    CoreState *st = core_state(mod);
    int kind;
    PyObject *get, *set;
    if (!PyArg_ParseTuple(args, "iOO", &kind, &get, &set))
        return NULL;
    if (kind != NODE_GENES && kind != CONN_GENES) {
        PyErr_SetString(PyExc_ValueError, "genes_slot(): kind must be 0 (nodes) or 1 (connections)");
        return NULL;
    }
    GenesSlot *s = PyObject_GC_New(GenesSlot, st->slot_type);
    if (!s)
        return NULL;
    s->kind = kind;
    s->get = Py_NewRef(get);
    s->set = Py_NewRef(set);
    PyObject_GC_Track(s);
    return (PyObject *)s;
}

/* The mappings' types, their views', iterators' and the descriptor's (in the module's state). */
int
make_map_types(PyObject *module, CoreState *st)
{
    st->map_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &map_spec, NULL);
    st->map_view_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &view_spec, NULL);
    st->map_iter_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &iter_spec, NULL);
    st->slot_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &slot_spec, NULL);
    return st->map_type && st->map_view_type && st->map_iter_type && st->slot_type ? 0 : -1;
}
