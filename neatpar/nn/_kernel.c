/*
 * The population kernel: evaluates every row's NEAT network in one call.
 *
 * neatpar.nn._kernel, imported only by nn/kernel.py and nn/compile.py, which check what users pass.
 * It follows the C extensions' convention (docs/architecture/index.md, "The C extensions"):
 * multi-phase init (no state, nothing to add: no exec slot); built-in exceptions only, one-line
 * messages (neatpar/errors.py's are raised by the wrappers).
 *
 * Each function below is neat-python 2.0's definition, written with the same libm calls and the
 * same operations in the same order (Python's math.exp, math.tanh, float ** n call the C library
 * too), so outputs match neat-python's to the last bit. Build with -ffp-contract=off: a fused
 * multiply-add would round differently from Python. Where CPython itself does more than one C
 * operation (float ** n, list.sort, sum() of floats), its steps are copied, as the Python this
 * extension is built for takes them (sum() compensates from 3.12, list.sort's runs changed in 3.13).
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
#include "neat_functions.h"   /* neat-python's functions, shared with _substrate.c */

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

/* A population's tables, as their buffers hold them. */
typedef struct {
    const int64_t *genome_start, *link_start;
    const int32_t *node_slot, *link_src;
    const int8_t *node_act, *node_agg;
    const double *node_bias, *node_resp, *link_w;
} Net;

static Net net_of(const Buffers *b)
{
    Net t = {b->genome_start.buf, b->link_start.buf, b->node_slot.buf, b->link_src.buf, b->node_act.buf,
             b->node_agg.buf, b->node_bias.buf, b->node_resp.buf, b->link_w.buf};
    return t;
}

/* Node n's value from the values `in`: act(bias + response * agg([in[src] * w, ...])), the
 * weighted inputs in link order (x: scratch of max_fan_in doubles). */
static inline double node_value(const Net *t, int64_t n, const double *in, double *x)
{
    Py_ssize_t k = 0;
    for (int64_t l = t->link_start[n]; l < t->link_start[n + 1]; l++, k++)
        x[k] = in[t->link_src[l]] * t->link_w[l];
    const double s = aggregate(t->node_agg[n], x, k);
    return activate(t->node_act[n], t->node_bias[n] + t->node_resp[n] * s);
}

/* run(tables..., genome_index, read, write, stride, max_fan_in)
 * Feed-forward: read and write are the same buffer (nodes in topological order).
 * Recurrent: every node reads the previous step's values (`read`) and writes `write`. */
static PyObject *run(PyObject *self, PyObject *args)
{
    (void)self;
    Buffers b;
    memset(&b, 0, sizeof(b));
    Py_ssize_t stride, max_fan_in;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*w*nn", &b.genome_start, &b.node_slot,
                          &b.node_act, &b.node_agg, &b.node_bias, &b.node_resp, &b.link_start,
                          &b.link_src, &b.link_w, &b.genome_index, &b.read, &b.write, &stride,
                          &max_fan_in))
        return NULL;
    const Net t = net_of(&b);
    const int64_t *genome_index = b.genome_index.buf;
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
        for (int64_t n = t.genome_start[g]; n < t.genome_start[g + 1]; n++)
            out[t.node_slot[n]] = node_value(&t, n, in, x);
    }
    Py_END_ALLOW_THREADS

    free(x);
    release(&b);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ continuous time
 * ctrnn_run(tables..., node_tau, genome_index, inputs, state, outputs, num_inputs, num_outputs,
 *           stride, max_fan_in, advance_time, time_step)
 * neat-python 2.0's CTRNN.advance(inputs, advance_time, time_step) for every row, operation for
 * operation: while time < final: dt = min(time_step, final - time); the two value buffers swap
 * roles (ivalues = values[active], ovalues = values[1 - active], active = 1 - active); inputs go
 * into both; each node's z = act(bias + response * agg(ivalues[src] * w)) moves its *ovalues*
 * entry: ov += dt / tau * (-ov + z); time += dt. Outputs are read from values[1 - active], the
 * buffer the last step read (CTRNN.advance's own choice: the outputs lag one step behind).
 * State row r (`width` = 2 * stride + 2 doubles): values[0], values[1], active (0.0 or 1.0),
 * time_seconds; all zeros is a fresh network (CTRNN.reset()). Returns the first row whose time
 * can no longer advance (time + dt == time, where neat-python would loop forever), or -1. */
static PyObject *ctrnn_run(PyObject *self, PyObject *args)
{
    (void)self;
    Buffers b;
    Py_buffer b_tau, b_inputs, b_state, b_outputs;
    memset(&b, 0, sizeof(b));
    Py_ssize_t num_inputs, num_outputs, stride, max_fan_in;
    double advance_time, time_step;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*y*w*w*nnnndd", &b.genome_start, &b.node_slot,
                          &b.node_act, &b.node_agg, &b.node_bias, &b.node_resp, &b.link_start, &b.link_src,
                          &b.link_w, &b_tau, &b.genome_index, &b_inputs, &b_state, &b_outputs, &num_inputs,
                          &num_outputs, &stride, &max_fan_in, &advance_time, &time_step))
        return NULL;
    const Net t = net_of(&b);
    const int64_t *genome_index = b.genome_index.buf;
    const double *node_tau = b_tau.buf, *inputs = b_inputs.buf;
    double *state = b_state.buf, *outputs = b_outputs.buf;
    const Py_ssize_t rows = b.genome_index.len / (Py_ssize_t)sizeof(int64_t), width = 2 * stride + 2;
    Py_ssize_t stuck = -1;
    double *x = malloc(sizeof(double) * (size_t)(max_fan_in > 0 ? max_fan_in : 1));
    PyObject *result = NULL;
    if (x == NULL) { PyErr_NoMemory(); goto done; }

    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < rows && stuck < 0; r++) {
        const int64_t g = genome_index[r];
        const double *in = inputs + r * num_inputs;
        double *row = state + r * width;
        double *values[2] = {row, row + stride};
        int active = row[2 * stride] != 0.0;
        double time = row[2 * stride + 1];
        const double final_time = time + advance_time;
        while (time < final_time) {
            const double remaining = final_time - time;
            const double dt = remaining < time_step ? remaining : time_step;   /* min(time_step, remaining) */
            double *iv = values[active], *ov = values[1 - active];
            active = 1 - active;
            for (Py_ssize_t i = 0; i < num_inputs; i++) { iv[i] = in[i]; ov[i] = in[i]; }
            for (int64_t n = t.genome_start[g]; n < t.genome_start[g + 1]; n++) {
                const double z = node_value(&t, n, iv, x);
                double *o = ov + t.node_slot[n];
                *o = *o + dt / node_tau[n] * (-*o + z);
            }
            const double next = time + dt;
            if (next == time) { stuck = r; break; }
            time = next;
        }
        row[2 * stride] = active ? 1.0 : 0.0;
        row[2 * stride + 1] = time;
        const double *last = values[1 - active];
        for (Py_ssize_t o = 0; o < num_outputs; o++) outputs[r * num_outputs + o] = last[num_inputs + o];
    }
    Py_END_ALLOW_THREADS

    result = PyLong_FromSsize_t(stuck);
done:
    free(x);
    release(&b);
    PyBuffer_Release(&b_tau); PyBuffer_Release(&b_inputs); PyBuffer_Release(&b_state); PyBuffer_Release(&b_outputs);
    return result;
}

/* ------------------------------------------------------------------ feed-forward structure
 * ff_structure(src, dst, conn_start, num_inputs, num_outputs,
 *              node_key, genome_node_start, link_conn, node_link_start, link_slot, node_slot, stride)
 * For each genome (its enabled connections src[k] -> dst[k], k in [conn_start[g], conn_start[g+1]),
 * in the genome's connection order), what neat-python's FeedForwardNetwork.create evaluates: the
 * nodes an output depends on, in an order where every node comes after its sources (Kahn's; nodes
 * on a cycle never become ready and are left out), each with all its incoming links in
 * connection order. Slots: input key -j-1 -> j, output key o -> num_inputs + o, then the other
 * evaluated nodes in evaluation order. Outputs are written into the preallocated arrays; returns
 * (nodes written, links written). */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static Py_ssize_t find_key(const int64_t *keys, Py_ssize_t n, int64_t key)
{
    Py_ssize_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (keys[mid] == key) return mid;
        if (keys[mid] < key) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

/* One genome's graph, shared by both structure walks: its distinct non-input node keys (outputs,
   links' targets, non-input sources) sorted into keys; each of its nc links' ends as indices into
   them (dense_src -1 for an input); each node's incoming links in connection order (pred, from
   pred_start); required set for the outputs and every non-input node they depend on. Returns the
   number of keys. */
static Py_ssize_t genome_graph(const int64_t *src, const int64_t *dst, Py_ssize_t nc, Py_ssize_t num_outputs,
                               int64_t *keys, Py_ssize_t *dense_src, Py_ssize_t *dense_dst, Py_ssize_t *pred_start,
                               Py_ssize_t *pred, Py_ssize_t *fill, Py_ssize_t *stack, char *required)
{
    Py_ssize_t n = 0;
    for (Py_ssize_t o = 0; o < num_outputs; o++) keys[n++] = o;
    for (Py_ssize_t k = 0; k < nc; k++) {
        keys[n++] = dst[k];
        if (src[k] >= 0) keys[n++] = src[k];
    }
    qsort(keys, n, sizeof(int64_t), cmp_i64);
    Py_ssize_t u = 0;
    for (Py_ssize_t i = 0; i < n; i++) if (i == 0 || keys[i] != keys[i - 1]) keys[u++] = keys[i];
    n = u;
    for (Py_ssize_t i = 0; i <= n; i++) pred_start[i] = 0;
    for (Py_ssize_t k = 0; k < nc; k++) {
        dense_dst[k] = find_key(keys, n, dst[k]);
        dense_src[k] = src[k] >= 0 ? find_key(keys, n, src[k]) : -1;
        pred_start[dense_dst[k] + 1]++;
    }
    for (Py_ssize_t i = 0; i < n; i++) pred_start[i + 1] += pred_start[i];
    for (Py_ssize_t i = 0; i < n; i++) fill[i] = pred_start[i];
    for (Py_ssize_t k = 0; k < nc; k++) pred[fill[dense_dst[k]]++] = k;  /* connection order kept */
    memset(required, 0, n);
    Py_ssize_t top = 0;
    for (Py_ssize_t o = 0; o < num_outputs; o++) { Py_ssize_t d = find_key(keys, n, o); required[d] = 1; stack[top++] = d; }
    while (top) {
        Py_ssize_t v = stack[--top];
        for (Py_ssize_t p = pred_start[v]; p < pred_start[v + 1]; p++) {
            Py_ssize_t s = dense_src[pred[p]];
            if (s >= 0 && !required[s]) { required[s] = 1; stack[top++] = s; }
        }
    }
    return n;
}

static PyObject *ff_structure(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer b_src, b_dst, b_cs, b_key, b_gns, b_lc, b_nls, b_lslot, b_nslot, b_stride;
    Py_ssize_t num_inputs, num_outputs;
    if (!PyArg_ParseTuple(args, "y*y*y*nnw*w*w*w*w*w*w*", &b_src, &b_dst, &b_cs, &num_inputs, &num_outputs,
                          &b_key, &b_gns, &b_lc, &b_nls, &b_lslot, &b_nslot, &b_stride))
        return NULL;
    const int64_t *src = b_src.buf, *dst = b_dst.buf, *cs = b_cs.buf;
    int64_t *node_key = b_key.buf, *gns = b_gns.buf, *link_conn = b_lc.buf, *nls = b_nls.buf;
    int32_t *link_slot = b_lslot.buf, *node_slot = b_nslot.buf;
    int64_t *stride_out = b_stride.buf;
    Py_ssize_t genomes = b_cs.len / (Py_ssize_t)sizeof(int64_t) - 1;
    Py_ssize_t max_conn = 0;
    for (Py_ssize_t g = 0; g < genomes; g++)
        if (cs[g + 1] - cs[g] > max_conn) max_conn = cs[g + 1] - cs[g];
    Py_ssize_t cap = 2 * max_conn + num_outputs + 1;
    int64_t *keys = malloc(sizeof(int64_t) * cap);
    Py_ssize_t *pred_start = malloc(sizeof(Py_ssize_t) * (cap + 1)), *pred = malloc(sizeof(Py_ssize_t) * (max_conn + 1));
    Py_ssize_t *succ_start = malloc(sizeof(Py_ssize_t) * (cap + 1)), *succ = malloc(sizeof(Py_ssize_t) * (max_conn + 1));
    Py_ssize_t *fill = malloc(sizeof(Py_ssize_t) * (cap + 1)), *stack = malloc(sizeof(Py_ssize_t) * (cap + 1));
    Py_ssize_t *waiting = malloc(sizeof(Py_ssize_t) * (cap + 1)), *order = malloc(sizeof(Py_ssize_t) * (cap + 1));
    Py_ssize_t *slot = malloc(sizeof(Py_ssize_t) * (cap + 1));
    char *required = malloc(cap + 1);
    Py_ssize_t dst_of_conn_cap = max_conn + 1;
    Py_ssize_t *dense_dst = malloc(sizeof(Py_ssize_t) * dst_of_conn_cap), *dense_src = malloc(sizeof(Py_ssize_t) * dst_of_conn_cap);
    PyObject *result = NULL;
    if (!keys || !pred_start || !pred || !succ_start || !succ || !fill || !stack || !waiting || !order || !slot ||
        !required || !dense_dst || !dense_src) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t nodes_out = 0, links_out = 0;
    gns[0] = 0;
    nls[0] = 0;
    for (Py_ssize_t g = 0; g < genomes; g++) {
        Py_ssize_t c0 = cs[g], nc = cs[g + 1] - cs[g];
        Py_ssize_t n = genome_graph(src + c0, dst + c0, nc, num_outputs, keys, dense_src, dense_dst, pred_start, pred,
                                    fill, stack, required);
        for (Py_ssize_t i = 0; i <= n; i++) succ_start[i] = 0;
        /* successors among required nodes, and waiting counts */
        for (Py_ssize_t k = 0; k < nc; k++)
            if (dense_src[k] >= 0 && required[dense_dst[k]]) succ_start[dense_src[k] + 1]++;
        for (Py_ssize_t i = 0; i < n; i++) succ_start[i + 1] += succ_start[i];
        for (Py_ssize_t i = 0; i < n; i++) fill[i] = succ_start[i];
        for (Py_ssize_t k = 0; k < nc; k++)
            if (dense_src[k] >= 0 && required[dense_dst[k]]) succ[fill[dense_src[k]]++] = dense_dst[k];
        Py_ssize_t count = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            waiting[i] = 0;
            if (!required[i]) continue;
            for (Py_ssize_t p = pred_start[i]; p < pred_start[i + 1]; p++) if (dense_src[pred[p]] >= 0) waiting[i]++;
            if (waiting[i] == 0) order[count++] = i;
        }
        for (Py_ssize_t q = 0; q < count; q++)
            for (Py_ssize_t p = succ_start[order[q]]; p < succ_start[order[q] + 1]; p++)
                if (--waiting[succ[p]] == 0) order[count++] = succ[p];
        /* slots and output */
        Py_ssize_t next_slot = num_inputs + num_outputs;
        for (Py_ssize_t i = 0; i < n; i++) slot[i] = keys[i] < num_outputs ? num_inputs + keys[i] : -1;
        for (Py_ssize_t q = 0; q < count; q++) if (slot[order[q]] < 0) slot[order[q]] = next_slot++;
        for (Py_ssize_t q = 0; q < count; q++) {
            Py_ssize_t v = order[q];
            node_key[nodes_out] = keys[v];
            node_slot[nodes_out] = (int32_t)slot[v];
            for (Py_ssize_t p = pred_start[v]; p < pred_start[v + 1]; p++) {
                Py_ssize_t k = pred[p], s = dense_src[k];
                link_conn[links_out] = c0 + k;
                link_slot[links_out] = (int32_t)(s >= 0 ? slot[s] : (-src[c0 + k] - 1));
                links_out++;
            }
            nodes_out++;
            nls[nodes_out] = links_out;
        }
        gns[g + 1] = nodes_out;
        stride_out[g] = next_slot;
    }
    result = Py_BuildValue("nn", nodes_out, links_out);
done:  /* one exit: every buffer and scratch array released on success and on failure */
    free(keys); free(pred_start); free(pred); free(succ_start); free(succ); free(fill); free(stack);
    free(waiting); free(order); free(slot); free(required); free(dense_dst); free(dense_src);
    PyBuffer_Release(&b_src); PyBuffer_Release(&b_dst); PyBuffer_Release(&b_cs); PyBuffer_Release(&b_key);
    PyBuffer_Release(&b_gns); PyBuffer_Release(&b_lc); PyBuffer_Release(&b_nls); PyBuffer_Release(&b_lslot);
    PyBuffer_Release(&b_nslot); PyBuffer_Release(&b_stride);
    return result;
}

/* ------------------------------------------------------------------ recurrent structure
 * rec_structure(src, dst, enabled, conn_start, num_inputs, num_outputs,
 *               node_key, genome_node_start, link_conn, node_link_start, link_slot, node_slot, stride)
 * For each genome (all its connections src[k] -> dst[k], k in [conn_start[g], conn_start[g+1]), in
 * the genome's connection order, enabled[k] their flags), what neat-python's RecurrentNetwork.create
 * (and CTRNN.create) keeps: required = the outputs and every non-input node they depend on over all
 * connections, enabled or not; then each enabled connection whose ends include a required node is a
 * link of its target, the targets in order of their first such connection, each with its links in
 * connection order. Slots: input key -j-1 -> j, output key o -> num_inputs + o, then the other
 * evaluated nodes in that order, then each source no node evaluates (a constant 0.0) as links meet
 * it. The output arrays as ff_structure's; returns (nodes written, links written). */
static PyObject *rec_structure(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer b_src, b_dst, b_en, b_cs, b_key, b_gns, b_lc, b_nls, b_lslot, b_nslot, b_stride;
    Py_ssize_t num_inputs, num_outputs;
    if (!PyArg_ParseTuple(args, "y*y*y*y*nnw*w*w*w*w*w*w*", &b_src, &b_dst, &b_en, &b_cs, &num_inputs, &num_outputs,
                          &b_key, &b_gns, &b_lc, &b_nls, &b_lslot, &b_nslot, &b_stride))
        return NULL;
    const int64_t *src = b_src.buf, *dst = b_dst.buf, *cs = b_cs.buf;
    const uint8_t *en = b_en.buf;
    int64_t *node_key = b_key.buf, *gns = b_gns.buf, *link_conn = b_lc.buf, *nls = b_nls.buf;
    int32_t *link_slot = b_lslot.buf, *node_slot = b_nslot.buf;
    int64_t *stride_out = b_stride.buf;
    Py_ssize_t genomes = b_cs.len / (Py_ssize_t)sizeof(int64_t) - 1;
    Py_ssize_t max_conn = 0;
    for (Py_ssize_t g = 0; g < genomes; g++)
        if (cs[g + 1] - cs[g] > max_conn) max_conn = cs[g + 1] - cs[g];
    Py_ssize_t cap = 2 * max_conn + num_outputs + 1;
    int64_t *keys = malloc(sizeof(int64_t) * cap);
    Py_ssize_t *pred_start = malloc(sizeof(Py_ssize_t) * (cap + 1)), *pred = malloc(sizeof(Py_ssize_t) * (max_conn + 1));
    Py_ssize_t *fill = malloc(sizeof(Py_ssize_t) * (cap + 1)), *stack = malloc(sizeof(Py_ssize_t) * (cap + 1));
    Py_ssize_t *order = malloc(sizeof(Py_ssize_t) * (cap + 1)), *slot = malloc(sizeof(Py_ssize_t) * (cap + 1));
    Py_ssize_t *nlinks = malloc(sizeof(Py_ssize_t) * (cap + 1)), *link_at = malloc(sizeof(Py_ssize_t) * (cap + 1));
    Py_ssize_t *kept = malloc(sizeof(Py_ssize_t) * (max_conn + 1));
    char *required = malloc(cap + 1), *listed = malloc(cap + 1);
    Py_ssize_t *dense_dst = malloc(sizeof(Py_ssize_t) * (max_conn + 1)), *dense_src = malloc(sizeof(Py_ssize_t) * (max_conn + 1));
    PyObject *result = NULL;
    if (!keys || !pred_start || !pred || !fill || !stack || !order || !slot || !nlinks || !link_at || !kept ||
        !required || !listed || !dense_dst || !dense_src) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t nodes_out = 0, links_out = 0;
    gns[0] = 0;
    nls[0] = 0;
    for (Py_ssize_t g = 0; g < genomes; g++) {
        Py_ssize_t c0 = cs[g], nc = cs[g + 1] - cs[g];
        Py_ssize_t n = genome_graph(src + c0, dst + c0, nc, num_outputs, keys, dense_src, dense_dst, pred_start, pred,
                                    fill, stack, required);
        /* the links kept, their targets in order of first appearance */
        memset(listed, 0, n);
        Py_ssize_t count = 0, nkept = 0;
        for (Py_ssize_t k = 0; k < nc; k++) {
            Py_ssize_t d = dense_dst[k], s = dense_src[k];
            if (!en[c0 + k] || !(required[d] || (s >= 0 && required[s]))) continue;
            if (!listed[d]) { listed[d] = 1; nlinks[d] = 0; order[count++] = d; }
            nlinks[d]++;
            kept[nkept++] = k;
        }
        Py_ssize_t at = 0;
        for (Py_ssize_t q = 0; q < count; q++) { link_at[order[q]] = at; at += nlinks[order[q]]; }
        for (Py_ssize_t j = 0; j < nkept; j++) {
            Py_ssize_t k = kept[j];
            link_conn[links_out + link_at[dense_dst[k]]++] = c0 + k;
        }
        /* slots: inputs and outputs fixed, then the evaluated nodes, then sources nothing evaluates */
        Py_ssize_t next_slot = num_inputs + num_outputs;
        for (Py_ssize_t i = 0; i < n; i++) slot[i] = keys[i] < num_outputs ? num_inputs + keys[i] : -1;
        for (Py_ssize_t q = 0; q < count; q++) if (slot[order[q]] < 0) slot[order[q]] = next_slot++;
        for (Py_ssize_t q = 0; q < count; q++) {
            Py_ssize_t v = order[q];
            node_key[nodes_out] = keys[v];
            node_slot[nodes_out] = (int32_t)slot[v];
            for (Py_ssize_t j = 0; j < nlinks[v]; j++, links_out++) {
                Py_ssize_t k = link_conn[links_out] - c0, s = dense_src[k];
                if (s >= 0 && slot[s] < 0) slot[s] = next_slot++;
                link_slot[links_out] = (int32_t)(s >= 0 ? slot[s] : (-src[c0 + k] - 1));
            }
            nodes_out++;
            nls[nodes_out] = links_out;
        }
        gns[g + 1] = nodes_out;
        stride_out[g] = next_slot;
    }
    result = Py_BuildValue("nn", nodes_out, links_out);
done:  /* one exit: every buffer and scratch array released on success and on failure */
    free(keys); free(pred_start); free(pred); free(fill); free(stack); free(order); free(slot); free(nlinks);
    free(link_at); free(kept); free(required); free(listed); free(dense_dst); free(dense_src);
    PyBuffer_Release(&b_src); PyBuffer_Release(&b_dst); PyBuffer_Release(&b_en); PyBuffer_Release(&b_cs);
    PyBuffer_Release(&b_key); PyBuffer_Release(&b_gns); PyBuffer_Release(&b_lc); PyBuffer_Release(&b_nls);
    PyBuffer_Release(&b_lslot); PyBuffer_Release(&b_nslot); PyBuffer_Release(&b_stride);
    return result;
}

static PyMethodDef methods[] = {
    {"run", run, METH_VARARGS, "Evaluate every row's network once (see the module source)."},
    {"ff_structure", ff_structure, METH_VARARGS, "Feed-forward structure of a population (see the source)."},
    {"rec_structure", rec_structure, METH_VARARGS, "Recurrent (and CTRNN) structure of a population (see the source)."},
    {"ctrnn_run", ctrnn_run, METH_VARARGS, "Advance every row's CTRNN by one advance() (see the source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef kernel_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "neatpar.nn._kernel",
    .m_doc = "neatpar's population kernel (C).",
    .m_size = 0,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModuleDef_Init(&kernel_def); }
