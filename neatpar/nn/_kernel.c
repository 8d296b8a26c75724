/*
 * The population kernel: evaluates every row's NEAT network in one call.
 *
 * Each function below is neat-python 2.0's definition, written with the same libm calls and the
 * same operations in the same order (Python's math.exp, math.tanh, float ** n call the C library
 * too), so outputs match neat-python's to the last bit. Build with -ffp-contract=off: a fused
 * multiply-add would round differently from Python.
 *
 * Tables (built by neatpar/nn/compile.py, one population):
 *   genome_start[G+1]            nodes of genome g: [genome_start[g], genome_start[g+1])
 *   node_slot, node_act, node_agg, node_bias, node_resp    per node, in evaluation order
 *   link_start[N+1]              links of node n: [link_start[n], link_start[n+1])
 *   link_src, link_w             per link: source slot in the row's value block, weight
 * Values: one block of `stride` doubles per row; slots 0..num_inputs-1 hold the inputs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { A_SIGMOID, A_TANH, A_SIN, A_GAUSS, A_RELU, A_ELU, A_LELU, A_SELU, A_SOFTPLUS, A_IDENTITY,
       A_CLAMPED, A_INV, A_LOG, A_EXP, A_ABS, A_HAT, A_SQUARE, A_CUBE, A_COUNT };
enum { G_SUM, G_PRODUCT, G_MAX, G_MIN, G_MAXABS, G_MEDIAN, G_MEAN, G_COUNT };

/* Python's min(hi, z) and max(lo, z) for floats, comparisons as CPython does them. */
static inline double py_min(double hi, double z) { return z < hi ? z : hi; }
static inline double py_max(double lo, double z) { return z > lo ? z : lo; }
static inline double clamp60(double z) { return py_max(-60.0, py_min(60.0, z)); }

static double activate(int code, double z)
{
    switch (code) {
    case A_SIGMOID: z = clamp60(5.0 * z); return 1.0 / (1.0 + exp(-z));
    case A_TANH: return tanh(clamp60(2.5 * z));
    case A_SIN: return sin(clamp60(5.0 * z));
    case A_GAUSS: z = py_max(-3.4, py_min(3.4, z)); return exp(-5.0 * pow(z, 2.0));
    case A_RELU: return z > 0.0 ? z : 0.0;
    case A_ELU: return z > 0.0 ? z : exp(z) - 1;
    case A_LELU: return z > 0.0 ? z : 0.005 * z;
    case A_SELU: {
        const double lam = 1.0507009873554804934193349852946;
        const double alpha = 1.6732632423543772848170429916717;
        return z > 0.0 ? lam * z : lam * alpha * (exp(z) - 1);
    }
    case A_SOFTPLUS: z = clamp60(5.0 * z); return 0.2 * log(1 + exp(z));
    case A_IDENTITY: return z;
    case A_CLAMPED: return py_max(-1.0, py_min(1.0, z));
    case A_INV: return z == 0.0 ? 0.0 : 1.0 / z;
    case A_LOG: return log(py_max(1e-7, z));
    case A_EXP: return exp(clamp60(z));
    case A_ABS: return fabs(z);
    case A_HAT: return py_max(0.0, 1 - fabs(z));
    case A_SQUARE: return pow(z, 2.0);
    case A_CUBE: return pow(z, 3.0);
    }
    return NAN;
}

/* Stable insertion sort: the same order as Python's (stable) list.sort() on floats. */
static void sort_stable(double *a, Py_ssize_t n)
{
    for (Py_ssize_t i = 1; i < n; i++) {
        double key = a[i];
        Py_ssize_t j = i - 1;
        while (j >= 0 && a[j] > key) { a[j + 1] = a[j]; j--; }
        a[j + 1] = key;
    }
}

/* x: the node's inputs (value * weight), in neat-python's order. */
static double aggregate(int code, double *x, Py_ssize_t n)
{
    double acc;
    Py_ssize_t i;
    switch (code) {
    case G_SUM:
        acc = 0.0;
        for (i = 0; i < n; i++) acc += x[i];
        return acc;
    case G_PRODUCT:
        acc = 1.0;
        for (i = 0; i < n; i++) acc *= x[i];
        return acc;
    case G_MEAN:
        if (n == 0) return 0.0;
        acc = 0.0;
        for (i = 0; i < n; i++) acc += x[i];
        return acc / (double)n;
    }
    if (n == 0) return 0.0;
    switch (code) {
    case G_MAX:
        acc = x[0];
        for (i = 1; i < n; i++) if (x[i] > acc) acc = x[i];
        return acc;
    case G_MIN:
        acc = x[0];
        for (i = 1; i < n; i++) if (x[i] < acc) acc = x[i];
        return acc;
    case G_MAXABS: {
        double best = fabs(x[0]);
        acc = x[0];
        for (i = 1; i < n; i++) if (fabs(x[i]) > best) { best = fabs(x[i]); acc = x[i]; }
        return acc;
    }
    case G_MEDIAN:
        if (n <= 2) return aggregate(G_MEAN, x, n);
        sort_stable(x, n);
        if (n % 2 == 1) return x[n / 2];
        return (x[n / 2 - 1] + x[n / 2]) / 2.0;
    }
    return NAN;
}

typedef struct {
    Py_buffer genome_start, node_slot, node_act, node_agg, node_bias, node_resp, link_start,
        link_src, link_w, genome_index, read, write;
} Buffers;

static void release(Buffers *b)
{
    Py_buffer *all[] = {&b->genome_start, &b->node_slot, &b->node_act, &b->node_agg, &b->node_bias,
                        &b->node_resp, &b->link_start, &b->link_src, &b->link_w, &b->genome_index,
                        &b->read, &b->write};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (all[i]->obj != NULL) PyBuffer_Release(all[i]);
}

/* run(tables..., genome_index, read, write, stride, max_fan_in)
 * Feed-forward: read and write are the same buffer (nodes in topological order).
 * Recurrent: every node reads the previous step's values (`read`) and writes `write`. */
static PyObject *run(PyObject *self, PyObject *args)
{
    Buffers b;
    memset(&b, 0, sizeof(b));
    Py_ssize_t stride, max_fan_in;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*w*nn", &b.genome_start, &b.node_slot,
                          &b.node_act, &b.node_agg, &b.node_bias, &b.node_resp, &b.link_start,
                          &b.link_src, &b.link_w, &b.genome_index, &b.read, &b.write, &stride,
                          &max_fan_in))
        return NULL;
    const int64_t *genome_start = b.genome_start.buf, *link_start = b.link_start.buf;
    const int64_t *genome_index = b.genome_index.buf;
    const int32_t *node_slot = b.node_slot.buf, *link_src = b.link_src.buf;
    const int8_t *node_act = b.node_act.buf, *node_agg = b.node_agg.buf;
    const double *node_bias = b.node_bias.buf, *node_resp = b.node_resp.buf, *link_w = b.link_w.buf;
    const double *read = b.read.buf;
    double *write = b.write.buf;
    Py_ssize_t rows = b.genome_index.len / (Py_ssize_t)sizeof(int64_t);
    double *x = malloc(sizeof(double) * (size_t)(max_fan_in > 0 ? max_fan_in : 1));
    if (x == NULL) { release(&b); return PyErr_NoMemory(); }

    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < rows; r++) {
        const int64_t g = genome_index[r];
        const double *in = read + r * stride;
        double *out = write + r * stride;
        for (int64_t n = genome_start[g]; n < genome_start[g + 1]; n++) {
            Py_ssize_t k = 0;
            for (int64_t l = link_start[n]; l < link_start[n + 1]; l++, k++)
                x[k] = in[link_src[l]] * link_w[l];
            double s = aggregate(node_agg[n], x, k);
            out[node_slot[n]] = activate(node_act[n], node_bias[n] + node_resp[n] * s);
        }
    }
    Py_END_ALLOW_THREADS

    free(x);
    release(&b);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "Evaluate every row's network once (see the module source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel",
                                    "neatpar's population kernel (C).", -1, methods};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
