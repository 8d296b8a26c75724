/* What the population kernel's compile reads of many genomes' records at once (neatpar/nn/
compile.py, through evolution/gene_arrays.py): every genome's enabled connections, or all of them
with their enabled flags, and the attributes of the nodes its networks evaluate. No gene object
is made; the genomes keep their form. */
#include "records.h"
#include "genes.h"

#include <string.h>

/* The list's Genes (a TypeError naming `fn` for anything else); NULL on error, else a new
   reference to a sequence whose items are Genes. */
static PyObject *
genes_list(CoreState *st, PyObject *list, const char *fn)
{
    PyObject *seq = PySequence_Fast(list, fn);
    if (!seq)
        return NULL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++)
        if (!Py_IS_TYPE(PySequence_Fast_GET_ITEM(seq, i), st->genes_type)) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, fn);
            return NULL;
        }
    return seq;
}

static inline const Genes *
item(PyObject *seq, Py_ssize_t i)
{
    return (const Genes *)PySequence_Fast_GET_ITEM(seq, i);
}

/* links(list, enabled_only) -> (inputs, outputs, weights, enabled, starts): the connections of
   each genome in its dict order (every one, or the enabled ones), as int64 / int64 / float64 /
   uint8 bytes, and where each genome's start (int64 bytes, one more than genomes). */
static PyObject *
links(PyObject *mod, PyObject *list, int enabled_only, const char *fn)
{
    CoreState *st = core_state(mod);
    PyObject *seq = genes_list(st, list, fn);
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), total = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        for (Py_ssize_t k = 0; k < item(seq, i)->nc; k++)
            total += !enabled_only || item(seq, i)->conns[k].enabled;
    PyObject *ins = PyBytes_FromStringAndSize(NULL, sizeof(int64_t) * total);
    PyObject *outs = PyBytes_FromStringAndSize(NULL, sizeof(int64_t) * total);
    PyObject *ws = PyBytes_FromStringAndSize(NULL, sizeof(double) * total);
    PyObject *ens = PyBytes_FromStringAndSize(NULL, total);
    PyObject *starts = PyBytes_FromStringAndSize(NULL, sizeof(int64_t) * (n + 1));
    if (!ins || !outs || !ws || !ens || !starts) {
        Py_XDECREF(ins); Py_XDECREF(outs); Py_XDECREF(ws); Py_XDECREF(ens); Py_XDECREF(starts);
        Py_DECREF(seq);
        return NULL;
    }
    int64_t *pi = (int64_t *)PyBytes_AS_STRING(ins), *po = (int64_t *)PyBytes_AS_STRING(outs);
    double *pw = (double *)PyBytes_AS_STRING(ws);
    uint8_t *pe = (uint8_t *)PyBytes_AS_STRING(ens);
    int64_t *ps = (int64_t *)PyBytes_AS_STRING(starts);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const Genes *g = item(seq, i);
        ps[i] = at;
        for (Py_ssize_t k = 0; k < g->nc; k++)
            if (!enabled_only || g->conns[k].enabled) {
                pi[at] = g->conns[k].in;
                po[at] = g->conns[k].out;
                pe[at] = g->conns[k].enabled != 0;
                pw[at++] = g->conns[k].weight;
            }
    }
    ps[n] = at;
    Py_DECREF(seq);
    return Py_BuildValue("(NNNNN)", ins, outs, ws, ens, starts);
}

/* enabled_links([Genes, ...]): links() of the enabled connections (what a feed-forward network
   keeps). */
PyObject *
enabled_links(PyObject *mod, PyObject *list)
{
    return links(mod, list, 1, "enabled_links() takes a list of Genes");
}

/* all_links([Genes, ...]): links() of every connection (a recurrent network decides which nodes
   it needs over all of them). */
PyObject *
all_links(PyObject *mod, PyObject *list)
{
    return links(mod, list, 0, "all_links() takes a list of Genes");
}

/* node_table([Genes, ...], keys, starts) -> (activation ids, aggregation ids, biases, responses,
   time constants): for each genome i, the nodes keys[starts[i]:starts[i + 1]] (int64 bytes), as
   int32 / int32 / float64 / float64 / float64 bytes; ids index names(). A key the genome has no
   node gene for is the KeyError neat-python's create raises. */
PyObject *
node_table(PyObject *mod, PyObject *args)
{
    CoreState *st = core_state(mod);
    PyObject *list, *result = NULL;
    Py_buffer kb, sb;
    if (!PyArg_ParseTuple(args, "Oy*y*", &list, &kb, &sb))
        return NULL;
    PyObject *seq = genes_list(st, list, "node_table() takes a list of Genes");
    Py_ssize_t n = seq ? PySequence_Fast_GET_SIZE(seq) : 0, total = kb.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *keys = kb.buf, *starts = sb.buf;
    if (seq && (sb.len != (Py_ssize_t)sizeof(int64_t) * (n + 1) || starts[0] != 0 || starts[n] != total)) {
        PyErr_SetString(PyExc_ValueError, "node_table(): starts must bound keys, one more than genomes");
        goto done;
    }
    if (!seq)
        goto done;
    PyObject *acts = PyBytes_FromStringAndSize(NULL, sizeof(int32_t) * total);
    PyObject *aggs = PyBytes_FromStringAndSize(NULL, sizeof(int32_t) * total);
    PyObject *bias = PyBytes_FromStringAndSize(NULL, sizeof(double) * total);
    PyObject *resp = PyBytes_FromStringAndSize(NULL, sizeof(double) * total);
    PyObject *tau = PyBytes_FromStringAndSize(NULL, sizeof(double) * total);
    int rc = acts && aggs && bias && resp && tau ? 0 : -1;
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        Genes *g = (Genes *)PySequence_Fast_GET_ITEM(seq, i);
        for (int64_t k = starts[i]; rc == 0 && k < starts[i + 1]; k++) {
            Py_ssize_t pos = find_node(g, keys[k]);
            if (pos < 0) {
                if (pos == -1) {
                    PyObject *key = PyLong_FromLongLong(keys[k]);
                    if (key) {
                        PyObject *kargs = PyTuple_Pack(1, key);
                        if (kargs)
                            PyErr_SetObject(PyExc_KeyError, kargs);
                        Py_XDECREF(kargs);
                        Py_DECREF(key);
                    }
                }
                rc = -1;
                break;
            }
            const Node *node = &g->nodes[pos];
            ((int32_t *)PyBytes_AS_STRING(acts))[k] = node->act;
            ((int32_t *)PyBytes_AS_STRING(aggs))[k] = node->agg;
            ((double *)PyBytes_AS_STRING(bias))[k] = node->bias;
            ((double *)PyBytes_AS_STRING(resp))[k] = node->response;
            ((double *)PyBytes_AS_STRING(tau))[k] = node->time_constant;
        }
    }
    if (rc == 0)
        result = Py_BuildValue("(NNNNN)", acts, aggs, bias, resp, tau);
    else {
        Py_XDECREF(acts); Py_XDECREF(aggs); Py_XDECREF(bias); Py_XDECREF(resp); Py_XDECREF(tau);
    }
done:
    Py_XDECREF(seq);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&sb);
    return result;
}
