/* Novelty's k nearest neighbours, exact: for each query row, the mean Euclidean distance to its k
 * nearest rows of a reference set (one reference row per query may be excluded: the query itself).
 *
 * A distance is sqrt(sum over dimensions, in order, of (q[d] - r[d])^2) in double precision, without
 * fused multiply-adds (-ffp-contract=off), so that Python's `math` computes the same bits. The
 * squared distances of a block of reference rows are computed together, one dimension at a time
 * (the compiler vectorises this over rows; each row's sum still runs over the dimensions in order);
 * a query keeps its k smallest in an ascending buffer. The mean adds the k square roots in
 * ascending order and divides by k. With
 * fewer than k candidates, the mean is over all of them; with none, it is 0.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define BLOCK 256   /* reference rows whose distances are computed together (vectorised over rows) */

/* The mean distance of query q to its k nearest rows of refs_t (dims x n, one dimension per row
 * of n values), skipping row `skip`; best holds k doubles, block BLOCK doubles. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
/* Wider vectors where the processor has them (chosen when the module loads); each multiply and add
 * rounds as in the default build, so the results are the same bits. */
__attribute__((target_clones("avx2", "default")))
#endif
static double query_novelty(const double *q, const double *refs_t, Py_ssize_t n, Py_ssize_t dims,
                            Py_ssize_t skip, Py_ssize_t k, double *best, double *block) {
    Py_ssize_t filled = 0;
    double worst = INFINITY;
    for (Py_ssize_t start = 0; start < n; start += BLOCK) {
        Py_ssize_t count = n - start < BLOCK ? n - start : BLOCK;
        for (Py_ssize_t j = 0; j < count; j++)
            block[j] = 0.0;
        for (Py_ssize_t d = 0; d < dims; d++) {   /* each row's sum runs over d in order */
            const double *column = refs_t + d * n + start;
            const double qd = q[d];
            for (Py_ssize_t j = 0; j < count; j++) {
                double diff = qd - column[j];
                block[j] += diff * diff;
            }
        }
        for (Py_ssize_t j = 0; j < count; j++) {
            double s = block[j];
            if (!(s < worst) || start + j == skip)
                continue;
            Py_ssize_t i = filled < k ? filled++ : k - 1;   /* a free slot, or the largest's */
            while (i > 0 && best[i - 1] > s) {
                best[i] = best[i - 1];
                i--;
            }
            best[i] = s;
            if (filled == k)
                worst = best[k - 1];
        }
    }
    if (filled == 0)
        return 0.0;
    double total = 0.0;
    for (Py_ssize_t i = 0; i < filled; i++)
        total += sqrt(best[i]);
    return total / (double)filled;
}

/* novelty(queries, refs, exclude, k, dims, out): buffers of float64 (queries: q x dims, refs:
 * n x dims, out: q) and int64 (exclude: q, -1 for none). Releases the GIL while it computes. */
static PyObject *novelty(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bq, br, bx, bo;
    Py_ssize_t k, dims;
    if (!PyArg_ParseTuple(args, "y*y*y*nnw*", &bq, &br, &bx, &k, &dims, &bo))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t nq = dims > 0 ? bq.len / (Py_ssize_t)(sizeof(double) * dims) : 0;
    Py_ssize_t nr = dims > 0 ? br.len / (Py_ssize_t)(sizeof(double) * dims) : 0;
    if (dims <= 0 || k <= 0 || bq.len != nq * dims * (Py_ssize_t)sizeof(double) ||
        br.len != nr * dims * (Py_ssize_t)sizeof(double) || bx.len != nq * (Py_ssize_t)sizeof(int64_t) ||
        bo.len != nq * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "novelty: buffer sizes do not match the row counts, dims and k");
        goto done;
    }
    double *best = malloc(sizeof(double) * (size_t)(k + BLOCK));
    double *refs_t = malloc(sizeof(double) * (size_t)(nr * dims + 1));
    if (best == NULL || refs_t == NULL) {
        free(best);
        free(refs_t);
        PyErr_NoMemory();
        goto done;
    }
    const double *queries = bq.buf, *refs = br.buf;
    const int64_t *exclude = bx.buf;
    double *out = bo.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = 0; j < nr; j++)   /* one dimension per row: the distance loop runs along rows */
        for (Py_ssize_t d = 0; d < dims; d++)
            refs_t[d * nr + j] = refs[j * dims + d];
    for (Py_ssize_t i = 0; i < nq; i++)
        out[i] = query_novelty(queries + i * dims, refs_t, nr, dims, (Py_ssize_t)exclude[i], k, best, best + k);
    Py_END_ALLOW_THREADS
    free(best);
    free(refs_t);
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&bq);
    PyBuffer_Release(&br);
    PyBuffer_Release(&bx);
    PyBuffer_Release(&bo);
    return result;
}

static PyMethodDef methods[] = {
    {"novelty", novelty, METH_VARARGS, "Mean distance of each query row to its k nearest reference rows."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef knn_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "neatpar.search._knn",
    .m_doc = "Exact k-nearest-neighbour novelty (see knn.py).",
    .m_size = 0,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__knn(void) { return PyModuleDef_Init(&knn_def); }
