/*
 * HyperNEAT in C: a CPPN queried over every node pair of a substrate, and the substrates of many
 * agents evaluated in one call (neatpar/nn/hyperneat.py and substrate_population.py hold the
 * definitions; this file follows them operation for operation).
 *
 * query: the CPPN of genome g (the population kernel's tables, compile.py) is evaluated for a
 * block of BLOCK node pairs at once, node by node (node-major: each CPPN node's value for every
 * pair of the block before the next node), so the weighted sums run as plain loops over pairs.
 * Every pair's value is computed with neat-python's operations in neat-python's order (the
 * weighted inputs in link order, summed in that order as the running Python's sum() sums floats
 * (python_sum.h), then act(bias + response * s)), so each pair's outputs are
 * FeedForwardNetwork.activate's to the last bit. Build with
 * -ffp-contract=off -fno-fast-math: a fused multiply-add would round differently from Python.
 *
 * forward: the substrate network of each row, layer after layer: node j of a layer is
 * act(bias[j] + sum_i(value[i] * W[i][j])), the sum over the previous layer's nodes in order, as
 * the running Python's sum() sums floats: neat-python's FeedForwardNetwork of the links with a
 * nonzero weight (a zero weight adds +-0.0 to a sum that is never -0.0, which changes neither the
 * sum nor its compensation while they are finite, and a sum that is not finite ends as it is
 * whatever its compensation; a row whose values are not all finite skips zero weights, as the
 * network without those links does).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "neat_functions.h"

#define BLOCK 256   /* node pairs evaluated together by query */

/* Many sums at once, each kept in two arrays at its index j (its running total sum[j] and
 * compensation comp[j], python_sum.h's PythonSum): loops over the sums then vectorise. */
static inline void sum_add_at(double *sum, double *comp, Py_ssize_t j, double x)
{
    PythonSum s = {sum[j], comp[j]};
    python_sum_add(&s, x);
    sum[j] = s.sum;
    comp[j] = s.compensation;
}

static inline double sum_value_at(const double *sum, const double *comp, Py_ssize_t j)
{
    const PythonSum s = {sum[j], comp[j]};
    return python_sum_value(s);
}

/* ------------------------------------------------------------------ the CPPN query */

/* A population's CPPN tables, as their buffers hold them (see _kernel.c). */
typedef struct {
    const int64_t *genome_start, *link_start;
    const int32_t *node_slot, *link_src;
    const int8_t *node_act, *node_agg;
    const double *node_bias, *node_resp, *link_w;
} Cppn;

enum { CPPN_TABLES = 9 };

/* What a CPPN value depends on: nothing (a constant), the source, the target, or both. A node
 * that does not depend on the target has the same value for every target of a source: it is
 * computed once per source (and one that does not depend on the source once per target), with
 * the same operands, so to the same bits. */
enum { ON_NONE = 0, ON_SOURCE = 1, ON_TARGET = 2, ON_BOTH = 3 };

/* out[b] = activate(code, z[b]) for `count` values, the function chosen once (each case's loop
 * calls activate with a constant code, which the compiler folds). */
static void activate_all(int code, const double *z, double *out, Py_ssize_t count)
{
#define ACTIVATE_ALL(c) case c: for (Py_ssize_t b = 0; b < count; b++) out[b] = activate(c, z[b]); return;
    switch (code) {
    ACTIVATE_ALL(A_SIGMOID) ACTIVATE_ALL(A_TANH) ACTIVATE_ALL(A_SIN) ACTIVATE_ALL(A_GAUSS) ACTIVATE_ALL(A_RELU)
    ACTIVATE_ALL(A_ELU) ACTIVATE_ALL(A_LELU) ACTIVATE_ALL(A_SELU) ACTIVATE_ALL(A_SOFTPLUS) ACTIVATE_ALL(A_IDENTITY)
    ACTIVATE_ALL(A_CLAMPED) ACTIVATE_ALL(A_INV) ACTIVATE_ALL(A_LOG) ACTIVATE_ALL(A_EXP) ACTIVATE_ALL(A_ABS)
    ACTIVATE_ALL(A_HAT) ACTIVATE_ALL(A_SQUARE) ACTIVATE_ALL(A_CUBE)
    }
#undef ACTIVATE_ALL
    for (Py_ssize_t b = 0; b < count; b++) out[b] = activate(code, z[b]);
}

/* acc[b] = sum([cols[src][b] * w, ...]) (the node's links in order) for every point, sum() of the
 * running Python (aggregate's G_SUM) with a compensation per point in comp; mean divides by the
 * number of links (0.0 for none), as aggregate's G_MEAN. */
static void sum_points(const Cppn *t, int64_t n, double *const *cols, Py_ssize_t count, int mean, double *restrict acc,
                       double *restrict comp)
{
    const int64_t l0 = t->link_start[n], l1 = t->link_start[n + 1];
    Py_ssize_t b;
    for (b = 0; b < count; b++) acc[b] = comp[b] = 0.0;
    for (int64_t l = l0; l < l1; l++) {
        const double *restrict src = cols[t->link_src[l]];
        const double w = t->link_w[l];
        for (b = 0; b < count; b++) sum_add_at(acc, comp, b, src[b] * w);
    }
    const double k = (double)(l1 - l0);
    for (b = 0; b < count; b++) acc[b] = sum_value_at(acc, comp, b);
    if (mean)
        for (b = 0; b < count; b++) acc[b] = k == 0.0 ? 0.0 : acc[b] / k;
}

/* Node n for `count` points: cols[slot] holds every slot's values (count each); the node's column
 * gets act(bias + response * agg([cols[src][b] * w, ...])). Sum, product and mean run as loops
 * over the points, the other aggregations through aggregate() point by point (scratch: acc and
 * comp of count doubles, x of the largest fan-in). */
static void eval_node(const Cppn *t, int64_t n, double *const *cols, Py_ssize_t count, double *acc, double *comp,
                      double *x)
{
    const int64_t l0 = t->link_start[n], l1 = t->link_start[n + 1];
    const int code = t->node_agg[n];
    Py_ssize_t b;
    if (code == G_SUM || code == G_MEAN) {
        sum_points(t, n, cols, count, code == G_MEAN, acc, comp);
    } else if (code == G_PRODUCT) {
        for (b = 0; b < count; b++) acc[b] = 1.0;
        for (int64_t l = l0; l < l1; l++) {
            const double *restrict src = cols[t->link_src[l]];
            const double w = t->link_w[l];
            for (b = 0; b < count; b++) acc[b] *= src[b] * w;
        }
    } else {
        for (b = 0; b < count; b++) {
            Py_ssize_t k = 0;
            for (int64_t l = l0; l < l1; l++, k++) x[k] = cols[t->link_src[l]][b] * t->link_w[l];
            acc[b] = aggregate(code, x, k);
        }
    }
    const double bias = t->node_bias[n], response = t->node_resp[n];
    for (b = 0; b < count; b++) acc[b] = bias + response * acc[b];
    activate_all(t->node_act[n], acc, cols[t->node_slot[n]], count);
}

/* PUREPLES' query_cppn mapping of a CPPN output to a weight: 0.0 unless |o| > threshold, else
 * (o - threshold) / (1.0 - threshold) * max_weight (o + threshold for o < 0, which is
 * o - copysign(threshold, o) exactly). Written without branches: the sign of o is random. */
static inline double map_weight(double o, double threshold, double scale_down, double max_weight)
{
    const double weight = (o - copysign(threshold, o)) / scale_down * max_weight;
    return fabs(o) > threshold ? weight : 0.0;
}

typedef struct {
    Py_ssize_t dims, num_inputs, stride, max_fan_in, weight_slot, gate_slot, offset;
    double threshold, max_weight;
} QueryArgs;

/* Scratch of one query call, sized for its largest genome. */
typedef struct {
    double *per_source;   /* stride columns of n_sources: values that depend on the source at most */
    double *per_target;   /* stride columns of n_targets + BLOCK: the targets repeated, so that any
                             block's targets are one contiguous run of every column */
    double *per_pair;     /* stride columns of BLOCK */
    double **cols;        /* stride column pointers */
    char *on, *evaluated, *read, *needed;   /* per slot */
    double *acc, *comp, *x;   /* eval_node's */
} Scratch;

/* Each slot's dependence for genome g, in evaluation order (a slot no node evaluates is a
 * constant 0.0); `read`: the slots some node (or the query) reads; `needed`: the per-source slots
 * that pair values read. */
static void classify(const Cppn *t, int64_t g, const QueryArgs *a, Scratch *m)
{
    const Py_ssize_t d = a->dims;
    memset(m->on, ON_NONE, (size_t)a->stride);
    memset(m->evaluated, 0, (size_t)a->stride);
    memset(m->read, 0, (size_t)a->stride);
    memset(m->needed, 0, (size_t)a->stride);
    for (Py_ssize_t k = 0; k < d; k++) { m->on[k] = ON_SOURCE; m->on[d + k] = ON_TARGET; }
    for (int64_t n = t->genome_start[g]; n < t->genome_start[g + 1]; n++) {
        char on = ON_NONE;
        for (int64_t l = t->link_start[n]; l < t->link_start[n + 1]; l++) on |= m->on[t->link_src[l]];
        m->on[t->node_slot[n]] = on;
        m->evaluated[t->node_slot[n]] = 1;
        for (int64_t l = t->link_start[n]; l < t->link_start[n + 1]; l++) m->read[t->link_src[l]] = 1;
        if (on == ON_BOTH)
            for (int64_t l = t->link_start[n]; l < t->link_start[n + 1]; l++) m->needed[t->link_src[l]] = 1;
    }
    m->needed[a->weight_slot] = m->read[a->weight_slot] = 1;
    if (a->gate_slot >= 0) m->needed[a->gate_slot] = m->read[a->gate_slot] = 1;
}

/* The values of the nodes of genome g that depend on at most `side`, for `count` points whose
 * coordinates (`coords`, point j at coords[(j % period) * d]) go into slots `first`.. (no such
 * node reads the other side's coordinate slots, which are left as they are). */
static void side_pass(const Cppn *t, int64_t g, const QueryArgs *a, Scratch *m, char side, double *base,
                      Py_ssize_t count, const double *coords, Py_ssize_t period, Py_ssize_t first)
{
    const Py_ssize_t d = a->dims;
    for (Py_ssize_t slot = 0; slot < a->stride; slot++) {
        m->cols[slot] = base + slot * count;
        if (slot >= a->num_inputs && m->read[slot] && !m->evaluated[slot])   /* read but never computed: 0.0 */
            memset(m->cols[slot], 0, sizeof(double) * (size_t)count);
    }
    for (Py_ssize_t k = 0; k < d; k++) {
        double *col = m->cols[first + k];
        for (Py_ssize_t j = 0; j < count; j++) col[j] = coords[(j % period) * d + k];
    }
    for (Py_ssize_t j = 0; j < count; j++) m->cols[2 * d][j] = 1.0;
    for (int64_t n = t->genome_start[g]; n < t->genome_start[g + 1]; n++)
        if ((m->on[t->node_slot[n]] | side) == side) eval_node(t, n, m->cols, count, m->acc, m->comp, m->x);
}

/* One genome's weights: out[offset + s * n_targets + t] for every source s and target t. */
static void query_genome(const Cppn *t, int64_t g, const QueryArgs *a, Scratch *m, const double *sources,
                         Py_ssize_t n_sources, const double *targets, Py_ssize_t n_targets, double *out)
{
    const Py_ssize_t pairs = n_sources * n_targets, repeated = n_targets + BLOCK;
    const double scale_down = 1.0 - a->threshold;
    classify(t, g, a, m);
    side_pass(t, g, a, m, ON_SOURCE, m->per_source, n_sources, sources, n_sources, 0);
    side_pass(t, g, a, m, ON_TARGET, m->per_target, repeated, targets, n_targets, a->dims);
    for (Py_ssize_t p0 = 0; p0 < pairs; p0 += BLOCK) {
        const Py_ssize_t count = pairs - p0 < BLOCK ? pairs - p0 : BLOCK, s0 = p0 / n_targets, t0 = p0 % n_targets;
        for (Py_ssize_t slot = 0; slot < a->stride; slot++) {
            double *col = m->per_pair + slot * BLOCK;
            if (m->on[slot] == ON_SOURCE) {
                if (m->needed[slot]) {   /* runs of one source's value, one per source of the block */
                    const double *v = m->per_source + slot * n_sources;
                    for (Py_ssize_t j = 0, s = s0, tg = t0; j < count; s++, tg = 0)
                        for (const double value = v[s]; tg < n_targets && j < count; tg++, j++) col[j] = value;
                }
                m->cols[slot] = col;
            } else if (m->on[slot] == ON_BOTH) {
                m->cols[slot] = col;
            } else {                     /* constant or per target: the block's run of the repeated targets */
                m->cols[slot] = m->per_target + slot * repeated + t0;
            }
        }
        for (int64_t n = t->genome_start[g]; n < t->genome_start[g + 1]; n++)
            if (m->on[t->node_slot[n]] == ON_BOTH) eval_node(t, n, m->cols, count, m->acc, m->comp, m->x);
        const double *o = m->cols[a->weight_slot];
        double *w = out + a->offset + p0;
        for (Py_ssize_t b = 0; b < count; b++) w[b] = map_weight(o[b], a->threshold, scale_down, a->max_weight);
        if (a->gate_slot >= 0) {
            const double *gate = m->cols[a->gate_slot];
            for (Py_ssize_t b = 0; b < count; b++) w[b] = gate[b] > 0.0 ? w[b] : 0.0;
        }
    }
}

static int scratch_alloc(Scratch *m, const QueryArgs *a, Py_ssize_t n_sources, Py_ssize_t n_targets)
{
    const size_t stride = (size_t)a->stride, repeated = (size_t)(n_targets + BLOCK);
    size_t longest = (size_t)n_sources > repeated ? (size_t)n_sources : repeated;
    m->per_source = malloc(sizeof(double) * stride * (size_t)n_sources);
    m->per_target = malloc(sizeof(double) * stride * repeated);
    m->per_pair = malloc(sizeof(double) * stride * BLOCK);
    m->cols = malloc(sizeof(double *) * stride);
    m->on = malloc(stride);
    m->evaluated = malloc(stride);
    m->read = malloc(stride);
    m->needed = malloc(stride);
    m->acc = malloc(sizeof(double) * longest);
    m->comp = malloc(sizeof(double) * longest);
    m->x = malloc(sizeof(double) * (size_t)(a->max_fan_in > 0 ? a->max_fan_in : 1));
    return m->per_source && m->per_target && m->per_pair && m->cols && m->on && m->evaluated && m->read && m->needed &&
           m->acc && m->comp && m->x;
}

static void scratch_free(Scratch *m)
{
    free(m->per_source); free(m->per_target); free(m->per_pair); free(m->cols); free(m->on);
    free(m->evaluated); free(m->read); free(m->needed); free(m->acc); free(m->comp); free(m->x);
}

/* query(genome_start, node_slot, node_act, node_agg, node_bias, node_resp, link_start, link_src,
 *       link_w, genomes, sources, targets, outs, dims, num_inputs, stride, max_fan_in,
 *       weight_output, gate_output, threshold, max_weight, offset)
 * For genome genomes[k]: the CPPN on (sources[s], targets[t], 1.0) (each `dims` coordinates) for
 * every pair, sources outer; its output `weight_output` mapped (map_weight), set to 0.0 where
 * output `gate_output` (>= 0: link expression) is not > 0, written into outs[k] (a writable
 * float64 buffer) from `offset` on. The GIL is released while it computes. */
static PyObject *query(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer tb[CPPN_TABLES], b_genomes, b_sources, b_targets;
    PyObject *outs;
    QueryArgs a;
    Py_ssize_t weight_output, gate_output;
    Scratch m;
    memset(tb, 0, sizeof(tb));
    memset(&m, 0, sizeof(m));
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*y*O!nnnnnnddn", &tb[0], &tb[1], &tb[2], &tb[3], &tb[4],
                          &tb[5], &tb[6], &tb[7], &tb[8], &b_genomes, &b_sources, &b_targets, &PyTuple_Type, &outs,
                          &a.dims, &a.num_inputs, &a.stride, &a.max_fan_in, &weight_output, &gate_output,
                          &a.threshold, &a.max_weight, &a.offset))
        return NULL;
    const Cppn t = {tb[0].buf, tb[6].buf, tb[1].buf, tb[7].buf, tb[2].buf, tb[3].buf, tb[4].buf, tb[5].buf,
                    tb[8].buf};
    const int64_t *genomes = b_genomes.buf;
    const Py_ssize_t n_genomes = b_genomes.len / (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t n_sources = b_sources.len / (Py_ssize_t)sizeof(double) / a.dims;
    const Py_ssize_t n_targets = b_targets.len / (Py_ssize_t)sizeof(double) / a.dims;
    a.weight_slot = a.num_inputs + weight_output;
    a.gate_slot = gate_output >= 0 ? a.num_inputs + gate_output : -1;
    Py_buffer *out = calloc((size_t)(n_genomes > 0 ? n_genomes : 1), sizeof(Py_buffer));
    Py_ssize_t held = 0;
    PyObject *result = NULL;
    if (out == NULL || !scratch_alloc(&m, &a, n_sources, n_targets)) { PyErr_NoMemory(); goto done; }
    if (PyTuple_GET_SIZE(outs) != n_genomes) {
        PyErr_Format(PyExc_ValueError, "%zd output buffers for %zd genomes", PyTuple_GET_SIZE(outs), n_genomes);
        goto done;
    }
    if (a.dims < 1 || a.num_inputs != 2 * a.dims + 1 || a.stride < a.num_inputs ||
        a.weight_slot >= a.stride || a.gate_slot >= a.stride) {
        PyErr_SetString(PyExc_ValueError, "the CPPN's inputs, outputs and stride do not fit the coordinates");
        goto done;
    }
    const Py_ssize_t population = tb[0].len / (Py_ssize_t)sizeof(int64_t) - 1;
    for (Py_ssize_t k = 0; k < n_genomes; k++)
        if (genomes[k] < 0 || genomes[k] >= population) {
            PyErr_Format(PyExc_IndexError, "genome %lld is not in a population of %zd", (long long)genomes[k],
                         population);
            goto done;
        }
    for (; held < n_genomes; held++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(outs, held), &out[held], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
            goto done;
        if (out[held].len < (Py_ssize_t)sizeof(double) * (a.offset + n_sources * n_targets)) {
            PyErr_Format(PyExc_ValueError, "output buffer %zd holds %zd bytes, fewer than the weights need", held,
                         out[held].len);
            held++;
            goto done;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n_genomes; k++)
        query_genome(&t, genomes[k], &a, &m, b_sources.buf, n_sources, b_targets.buf, n_targets, out[k].buf);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:  /* one exit: every buffer and scratch array released on success and on failure */
    for (Py_ssize_t k = 0; k < held; k++) PyBuffer_Release(&out[k]);
    free(out);
    scratch_free(&m);
    for (int i = 0; i < CPPN_TABLES; i++) PyBuffer_Release(&tb[i]);
    PyBuffer_Release(&b_genomes); PyBuffer_Release(&b_sources); PyBuffer_Release(&b_targets);
    return result;
}

/* ------------------------------------------------------------------ the substrate networks */

enum { CHUNK = 16 };  /* at most this many targets' sums in registers over one pass of the sources */
enum { AHEAD = 16 };  /* weight rows asked for before they are read: a step streams megabytes of them */

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

static int all_finite(const double *v, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) if (!isfinite(v[i])) return 0;
    return 1;
}

/* sum[j] = sum_i(v[i] * W[i][j]) for the `width` (a constant where it is inlined: 16 or 8)
 * targets from j0, each sum() of the running Python over i in order. */
static inline void sums_chunk(const double *restrict weights, Py_ssize_t n_in, Py_ssize_t n_out, Py_ssize_t j0,
                              const double *restrict v, double *restrict sum, int width)
{
    double a[CHUNK] = {0.0}, c[CHUNK] = {0.0};   /* running totals and compensations */
    for (Py_ssize_t i = 0; i < n_in; i++) {
        const double x = v[i];
        const double *restrict w = weights + i * n_out + j0;
        if (i + AHEAD < n_in) PREFETCH(w + AHEAD * n_out);
        for (int j = 0; j < width; j++) sum_add_at(a, c, j, x * w[j]);
    }
    for (int j = 0; j < width; j++) sum[j0 + j] = sum_value_at(a, c, j);
}

/* The same for the targets from j0 to the end (fewer than CHUNK / 2), or for every target skipping
 * zero weights (`sparse`: a row whose values are not all finite, where 0.0 * inf is NaN but a
 * missing link adds nothing); comp: scratch for the compensations. */
static void sums_rest(const double *restrict weights, Py_ssize_t n_in, Py_ssize_t n_out, Py_ssize_t j0,
                      const double *restrict v, double *restrict sum, double *restrict comp, int sparse)
{
    for (Py_ssize_t j = j0; j < n_out; j++) sum[j] = comp[j] = 0.0;
    for (Py_ssize_t i = 0; i < n_in; i++) {
        const double x = v[i];
        const double *restrict w = weights + i * n_out;
        if (sparse) {
            for (Py_ssize_t j = j0; j < n_out; j++) if (w[j] != 0.0) sum_add_at(sum, comp, j, x * w[j]);
        } else {
            for (Py_ssize_t j = j0; j < n_out; j++) sum_add_at(sum, comp, j, x * w[j]);
        }
    }
    for (Py_ssize_t j = j0; j < n_out; j++) sum[j] = sum_value_at(sum, comp, j);
}

/* One layer of one row: next[j] = act(bias[j] + sum_i(v[i] * W[i][j])) (scratch: sum and comp of
 * n_out doubles). */
static void layer(const double *weights, Py_ssize_t n_in, Py_ssize_t n_out, int act, const double *v, double *next,
                  double *sum, double *comp)
{
    const double *bias = weights + n_in * n_out;
    Py_ssize_t j0 = 0;
    if (all_finite(v, n_in)) {
        for (; j0 + CHUNK <= n_out; j0 += CHUNK) sums_chunk(weights, n_in, n_out, j0, v, sum, CHUNK);
        if (j0 + CHUNK / 2 <= n_out) {
            sums_chunk(weights, n_in, n_out, j0, v, sum, CHUNK / 2);
            j0 += CHUNK / 2;
        }
        sums_rest(weights, n_in, n_out, j0, v, sum, comp, 0);
    } else {
        sums_rest(weights, n_in, n_out, 0, v, sum, comp, 1);
    }
    for (Py_ssize_t j = 0; j < n_out; j++) sum[j] = bias[j] + sum[j];
    activate_all(act, sum, next, n_out);
}

typedef struct {
    const int64_t *sizes;
    Py_ssize_t layers, widest;
    int act;
} Shape;

/* One row through every layer (scratch: 4 * widest doubles: two layers' values, the sums and
 * their compensations). */
static void forward_row(const double *weights, const Shape *s, const double *input, double *output, double *scratch)
{
    const double *cur = input;
    for (Py_ssize_t k = 0; k < s->layers; k++) {
        const Py_ssize_t n_in = (Py_ssize_t)s->sizes[k], n_out = (Py_ssize_t)s->sizes[k + 1];
        double *next = k + 1 == s->layers ? output : scratch + (k % 2) * s->widest;
        layer(weights, n_in, n_out, s->act, cur, next, scratch + 2 * s->widest, scratch + 3 * s->widest);
        cur = next;
        weights += n_in * n_out + n_out;
    }
}

/* forward(blocks, group, order, inputs, outputs, sizes, activation)
 * blocks: a tuple of float64 buffers, one genome's weights each: for every layer k (sizes[k] ->
 * sizes[k+1]) W_k (source-major, sizes[k] x sizes[k+1]) then its biases (sizes[k+1]). Row r (of
 * inputs, sizes[0] each, and outputs, sizes[-1] each) is driven by blocks[group[r]]; the rows
 * `order` lists are evaluated, in that order (rows of one block after one another share its
 * weights in the cache), the others left as they are (callers on several threads give each a
 * part of the rows). */
static PyObject *forward(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *blocks;
    Py_buffer b_group, b_order, b_inputs, b_outputs, b_sizes;
    int act;
    if (!PyArg_ParseTuple(args, "O!y*y*y*w*y*i", &PyTuple_Type, &blocks, &b_group, &b_order, &b_inputs,
                          &b_outputs, &b_sizes, &act))
        return NULL;
    Shape s = {b_sizes.buf, b_sizes.len / (Py_ssize_t)sizeof(int64_t) - 1, 1, act};
    for (Py_ssize_t k = 0; k <= s.layers; k++) if ((Py_ssize_t)s.sizes[k] > s.widest) s.widest = (Py_ssize_t)s.sizes[k];
    const Py_ssize_t n_blocks = PyTuple_GET_SIZE(blocks), rows = b_group.len / (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t steps = b_order.len / (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t n0 = (Py_ssize_t)s.sizes[0], n_last = (Py_ssize_t)s.sizes[s.layers];
    const int64_t *group = b_group.buf, *order = b_order.buf;
    const double *inputs = b_inputs.buf;
    double *outputs = b_outputs.buf;
    Py_buffer *held = calloc((size_t)(n_blocks > 0 ? n_blocks : 1), sizeof(Py_buffer));
    const double **weights = calloc((size_t)(n_blocks > 0 ? n_blocks : 1), sizeof(double *));
    double *scratch = malloc(sizeof(double) * (size_t)(4 * s.widest));
    Py_ssize_t n_held = 0;
    PyObject *result = NULL;
    if (held == NULL || weights == NULL || scratch == NULL) { PyErr_NoMemory(); goto done; }
    Py_ssize_t need = 0;
    for (Py_ssize_t k = 0; k < s.layers; k++) need += (Py_ssize_t)(s.sizes[k] * s.sizes[k + 1] + s.sizes[k + 1]);
    if (b_inputs.len < (Py_ssize_t)sizeof(double) * rows * n0 ||
        b_outputs.len < (Py_ssize_t)sizeof(double) * rows * n_last) {
        PyErr_SetString(PyExc_ValueError, "inputs and outputs must have one row per entry of group");
        goto done;
    }
    for (Py_ssize_t q = 0; q < steps; q++)
        if (order[q] < 0 || order[q] >= rows || group[order[q]] < 0 || group[order[q]] >= n_blocks) {
            PyErr_Format(PyExc_IndexError, "row %zd: order or group out of range", q);
            goto done;
        }
    for (; n_held < n_blocks; n_held++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(blocks, n_held), &held[n_held], PyBUF_C_CONTIGUOUS) < 0) goto done;
        weights[n_held] = held[n_held].buf;
        if (held[n_held].len < (Py_ssize_t)sizeof(double) * need) {
            PyErr_Format(PyExc_ValueError, "weight block %zd holds %zd bytes, fewer than the layers need", n_held,
                         held[n_held].len);
            n_held++;
            goto done;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t q = 0; q < steps; q++) {
        const int64_t r = order[q];
        forward_row(weights[group[r]], &s, inputs + r * n0, outputs + r * n_last, scratch);
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    for (Py_ssize_t k = 0; k < n_held; k++) PyBuffer_Release(&held[k]);
    free(held); free(weights); free(scratch);
    PyBuffer_Release(&b_group); PyBuffer_Release(&b_order); PyBuffer_Release(&b_inputs);
    PyBuffer_Release(&b_outputs); PyBuffer_Release(&b_sizes);
    return result;
}

static PyMethodDef methods[] = {
    {"query", query, METH_VARARGS, "Map CPPN outputs over node pairs to substrate weights (see the source)."},
    {"forward", forward, METH_VARARGS, "Evaluate every row's substrate network once (see the source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef substrate_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "neatpar.nn._substrate",
    .m_doc = "neatpar's HyperNEAT substrate query and networks (C).",
    .m_size = 0,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__substrate(void) { return PyModuleDef_Init(&substrate_def); }
