/*
 * neatpar.nn._es_search: ES-HyperNEAT's search over a population (es_search.h) and the population
 * kernel's tables of the networks found (es_tables.h), called from neatpar/nn/es_hyperneat.py.
 *
 * discover(tables..., genomes, inputs, outputs, params) returns, per genome, the hidden nodes'
 * coordinates (sorted by y, then x) and the links (source, target, weight) between nodes numbered
 * inputs, outputs, hidden, sorted by target and then source; population(the same arguments) the
 * population kernel's tables of those networks, with no Python object per genome; tables(...) the
 * kernel's tables of networks given as arrays. The GIL is released while it searches.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "es_search.h"
#include "es_tables.h"

/* ------------------------------------------------------------------ the calls from Python */

/* A call's arguments: the CPPN tables, the genomes, the substrate, the parameters. */
typedef struct {
    Py_buffer tb[ES_CPPN_TABLES], genomes, inputs, outputs;
    Py_ssize_t stride, max_fan_in, n_genomes, n_in, n_out;
    EsCppn cppn;
    EsParams p;
} Call;

static void call_release(Call *c)
{
    for (int i = 0; i < ES_CPPN_TABLES; i++) PyBuffer_Release(&c->tb[i]);
    PyBuffer_Release(&c->genomes); PyBuffer_Release(&c->inputs); PyBuffer_Release(&c->outputs);
}

/* Parse and check a call's arguments (see discover); 0 with an exception set, buffers released. */
static int call_parse(PyObject *args, Call *c)
{
    Py_buffer *tb = c->tb;
    memset(c, 0, sizeof(*c));
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*y*nnllldddd", &tb[0], &tb[1], &tb[2], &tb[3], &tb[4], &tb[5],
                          &tb[6], &tb[7], &tb[8], &c->genomes, &c->inputs, &c->outputs, &c->stride, &c->max_fan_in,
                          &c->p.initial_depth, &c->p.max_depth, &c->p.iteration_level, &c->p.variance_threshold,
                          &c->p.band_threshold, &c->p.division_threshold, &c->p.max_weight))
        return 0;
    c->cppn = (EsCppn){tb[0].buf, tb[6].buf, tb[1].buf, tb[7].buf, tb[2].buf, tb[3].buf, tb[4].buf, tb[5].buf,
                     tb[8].buf};
    c->n_genomes = c->genomes.len / (Py_ssize_t)sizeof(int64_t);
    c->n_in = c->inputs.len / (Py_ssize_t)(2 * sizeof(double));
    c->n_out = c->outputs.len / (Py_ssize_t)(2 * sizeof(double));
    const Py_ssize_t population = tb[0].len / (Py_ssize_t)sizeof(int64_t) - 1;
    const int64_t *genomes = c->genomes.buf;
    if (c->stride <= ES_CPPN_INPUTS || c->p.max_depth > 12 || c->n_in < 1 || c->n_out < 1) {
        PyErr_SetString(PyExc_ValueError, "the CPPN's stride, the depth or the inputs and outputs do not fit");
        call_release(c);
        return 0;
    }
    for (Py_ssize_t k = 0; k < c->n_genomes; k++)
        if (genomes[k] < 0 || genomes[k] >= population) {
            PyErr_Format(PyExc_IndexError, "genome %lld is not in a population of %zd", (long long)genomes[k],
                         population);
            call_release(c);
            return 0;
        }
    return 1;
}

/* Genome k of the call searched and its network collected into r; 0 when out of memory. */
static int search_one(EsSearch *s, const Call *c, Py_ssize_t k, EsFound *r)
{
    return es_search_genome(s, ((const int64_t *)c->genomes.buf)[k], c->inputs.buf, c->n_in, c->outputs.buf, c->n_out, r);
}

/* discover(9 CPPN tables, genomes, inputs, outputs, stride, max_fan_in, initial_depth, max_depth,
 * iteration_level, variance_threshold, band_threshold, division_threshold, max_weight): for each
 * genome (int64 indices into the tables), (hidden, sources, targets, weights) as bytes of float64
 * (x, y) pairs, int64 node keys and float64 weights. `inputs` and `outputs`: float64 (x, y)
 * pairs, no two alike. */
static PyObject *discover(PyObject *self, PyObject *args)
{
    (void)self;
    Call c;
    if (!call_parse(args, &c)) return NULL;
    PyObject *result = NULL;
    EsSearch *s = es_search_new(&c.cppn, &c.p, c.stride, c.max_fan_in);
    EsFound *found = calloc((size_t)(c.n_genomes > 0 ? c.n_genomes : 1), sizeof(EsFound));
    int ok = s != NULL && found != NULL;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t k = 0; k < c.n_genomes && ok; k++) ok = search_one(s, &c, k, &found[k]);
        Py_END_ALLOW_THREADS
    }
    if (!ok) PyErr_NoMemory();
    else result = PyList_New(c.n_genomes);
    for (Py_ssize_t k = 0; result != NULL && k < c.n_genomes; k++) {
        const EsFound *r = &found[k];
        PyObject *item = Py_BuildValue("(y#y#y#y#)", (const char *)r->hidden, (Py_ssize_t)sizeof(double) * 2 * r->n_hidden,
                                       (const char *)r->sources, (Py_ssize_t)sizeof(int64_t) * r->n_links,
                                       (const char *)r->targets, (Py_ssize_t)sizeof(int64_t) * r->n_links,
                                       (const char *)r->weights, (Py_ssize_t)sizeof(double) * r->n_links);
        if (item == NULL) { Py_CLEAR(result); break; }
        PyList_SET_ITEM(result, k, item);
    }
    for (Py_ssize_t k = 0; found != NULL && k < c.n_genomes; k++) es_found_free(&found[k]);
    free(found);
    es_search_free(s);
    call_release(&c);
    return result;
}

/* The kernel's tables as a tuple (genome_start, node_slot, link_start, link_src, link_w: bytes;
 * stride), or NULL with an exception set. */
static PyObject *tables_tuple(const EsTables *t)
{
    return Py_BuildValue("(y#y#y#y#y#L)", (const char *)t->genome_start, (Py_ssize_t)(sizeof(int64_t) * (t->genomes + 1)),
                         (const char *)t->node_slot, (Py_ssize_t)(sizeof(int32_t) * t->nodes),
                         (const char *)t->link_start, (Py_ssize_t)(sizeof(int64_t) * (t->nodes + 1)),
                         (const char *)t->link_src, (Py_ssize_t)(sizeof(int32_t) * t->links),
                         (const char *)t->link_w, (Py_ssize_t)(sizeof(double) * t->links), (long long)t->stride);
}

/* The y of a call's inputs, then outputs; NULL when out of memory. */
static double *fixed_ys(const Call *c)
{
    double *y = malloc(sizeof(double) * (size_t)(c->n_in + c->n_out));
    const double *in = c->inputs.buf, *out = c->outputs.buf;
    for (Py_ssize_t i = 0; y != NULL && i < c->n_in; i++) y[i] = in[2 * i + 1];
    for (Py_ssize_t j = 0; y != NULL && j < c->n_out; j++) y[c->n_in + j] = out[2 * j + 1];
    return y;
}

/* population(the arguments of discover): the kernel's tables of the networks the genomes
 * discover, in the genomes' order (es_tables.h), as tables() gives them. */
static PyObject *population(PyObject *self, PyObject *args)
{
    (void)self;
    Call c;
    if (!call_parse(args, &c)) return NULL;
    PyObject *result = NULL;
    EsSearch *s = es_search_new(&c.cppn, &c.p, c.stride, c.max_fan_in);
    EsFound r = {0};
    EsTables t = {0};
    double *y = fixed_ys(&c);
    int ok = s != NULL && y != NULL && es_tables_init(&t, c.n_in, c.n_out, y);
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t k = 0; k < c.n_genomes && ok; k++) {
            ok = search_one(s, &c, k, &r);
            if (ok) {
                const EsNetwork net = {r.hidden, r.sources, r.targets, r.weights, r.n_hidden, r.n_links};
                ok = es_tables_add(&t, &net) == 1;   /* the search's links name its own nodes */
            }
            es_found_free(&r);
        }
        Py_END_ALLOW_THREADS
    }
    if (!ok) PyErr_NoMemory();
    else result = tables_tuple(&t);
    es_tables_free(&t);
    free(y);
    es_search_free(s);
    call_release(&c);
    return result;
}

/* tables(fixed_y, n_in, hidden, sources, targets, weights): the kernel's tables of given networks
 * (lists of float64 (x, y) pairs, int64 keys and float64 weights, one item per network) on a
 * substrate whose inputs and outputs have the float64 y of `fixed_y`, the inputs first. */
static PyObject *tables(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer fixed_y;
    Py_ssize_t n_in;
    PyObject *lists[4];
    if (!PyArg_ParseTuple(args, "y*nO!O!O!O!", &fixed_y, &n_in, &PyList_Type, &lists[0], &PyList_Type, &lists[1],
                          &PyList_Type, &lists[2], &PyList_Type, &lists[3]))
        return NULL;
    const Py_ssize_t count = PyList_GET_SIZE(lists[0]), n_out = fixed_y.len / (Py_ssize_t)sizeof(double) - n_in;
    PyObject *result = NULL;
    EsTables t = {0};
    int ok = n_in >= 0 && n_out >= 0;
    if (!ok) PyErr_SetString(PyExc_ValueError, "fixed_y holds fewer nodes than the inputs");
    else if (!(ok = es_tables_init(&t, n_in, n_out, fixed_y.buf))) PyErr_NoMemory();
    for (int i = 1; ok && i < 4; i++)
        if (PyList_GET_SIZE(lists[i]) != count) {
            PyErr_SetString(PyExc_ValueError, "the networks' lists differ in length");
            ok = 0;
        }
    for (Py_ssize_t k = 0; ok && k < count; k++) {
        Py_buffer b[4];
        int got = 0;
        for (; got < 4; got++)
            if (PyObject_GetBuffer(PyList_GET_ITEM(lists[got], k), &b[got], PyBUF_C_CONTIGUOUS) < 0) break;
        ok = got == 4;
        if (ok) {
            const Py_ssize_t links = b[1].len / (Py_ssize_t)sizeof(int64_t);
            const EsNetwork net = {b[0].buf, b[1].buf, b[2].buf, b[3].buf, b[0].len / (Py_ssize_t)(2 * sizeof(double)),
                                   links};
            const int added = (b[2].len != b[1].len || b[3].len != links * (Py_ssize_t)sizeof(double)) ? -1
                                                                                                       : es_tables_add(&t, &net);
            if (added != 1) {
                if (added == 0) PyErr_NoMemory();
                else PyErr_Format(PyExc_ValueError, "network %zd: a link names a node it does not have", k);
                ok = 0;
            }
        }
        while (got > 0) PyBuffer_Release(&b[--got]);
    }
    if (ok) result = tables_tuple(&t);
    es_tables_free(&t);
    PyBuffer_Release(&fixed_y);
    return result;
}

static PyMethodDef methods[] = {
    {"discover", discover, METH_VARARGS, "ES-HyperNEAT's hidden nodes and links for each genome (see the source)."},
    {"population", population, METH_VARARGS, "The kernel's tables of the networks the genomes discover."},
    {"tables", tables, METH_VARARGS, "The kernel's tables of given discovered networks."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef es_search_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "neatpar.nn._es_search",
    .m_doc = "neatpar's ES-HyperNEAT search (C).",
    .m_size = 0,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__es_search(void) { return PyModuleDef_Init(&es_search_def); }
