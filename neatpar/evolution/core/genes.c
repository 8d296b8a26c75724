/* A genome's genes as records (Genes): the records and their edits, which keep the genome's live
gene objects in step (a removed record's object keeps its values, a moved one's follows it), the
views for lookups and distances, and the table of activation and aggregation names. The bottom of
the records: it calls no other part. */
#include "genes.h"

#include <string.h>

/* The id of an activation or aggregation name in the module's table of names (added when new). */
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

/* ------------------------------------------------------------------------------------------ */
/* Genes                                                                                       */

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

/* ------------------------------------------------------------------------------------------ */
/* The gene objects a Genes lists (gene_objects.c makes them)                                 */

/* The gene object takes its record's values as its own and leaves its Genes. */
void
gene_detach(Gene *o)
{
    Genes *g = o->owner;
    if (!g)
        return;
    if (o->kind == NODE_GENES)
        o->own.n = g->nodes[o->pos];
    else
        o->own.c = g->conns[o->pos];
    o->set = GENE_ALL(o->kind);
    if (o->pos < g->objects_len[o->kind] && g->objects[o->kind][o->pos] == o)
        g->objects[o->kind][o->pos] = NULL;
    o->owner = NULL;
    Py_DECREF(g);
}

/* The record at `pos` is about to be removed or replaced: its gene object keeps the values. */
void
gene_left(Genes *g, int kind, Py_ssize_t pos)
{
    if (pos < g->objects_len[kind] && g->objects[kind][pos])
        gene_detach(g->objects[kind][pos]);
}

/* The record at `from` moved to `to` (to < from: records move down as others are removed). */
void
gene_moved(Genes *g, int kind, Py_ssize_t from, Py_ssize_t to)
{
    if (from >= g->objects_len[kind])
        return;
    Gene **objects = g->objects[kind], *o = objects[from];
    objects[from] = NULL;
    objects[to] = o;
    if (o)
        o->pos = to;
}

/* ------------------------------------------------------------------------------------------ */
/* Edits                                                                                       */

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

/* ------------------------------------------------------------------------------------------ */
/* Lookups: the View                                                                           */

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
