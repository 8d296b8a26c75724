/* A sum of doubles as CPython's builtin sum() computes it for exact floats from its default start
 * 0, which neat-python's aggregations and statistics (neat.math_util.mean, variance) rely on:
 * left to right through Python 3.11; from 3.12 with Neumaier's compensation (an improved
 * Kahan-Babuska sum), the compensation added at the end only where it is finite and not zero.
 * Each extension is built for one Python, so the rule is chosen when it is compiled. Included by
 * the population kernel, the substrate and the NEAT step; it includes nothing of neatpar's. */
#ifndef NEATPAR_PYTHON_SUM_H
#define NEATPAR_PYTHON_SUM_H

#include <Python.h>
#include <math.h>

#if PY_VERSION_HEX >= 0x030C0000
#define NEATPAR_COMPENSATED_SUM 1
#else
#define NEATPAR_COMPENSATED_SUM 0
#endif

/* A running sum: start with {0.0, 0.0}, add each term in order, read it with python_sum_value.
   (From 0.0, the first add gives 0 + x as sum() does; a non-finite term leaves a compensation
   that is never added, as in CPython.) */
typedef struct {
    double sum;
    double compensation;
} PythonSum;

static inline void
python_sum_add(PythonSum *s, double x)
{
#if NEATPAR_COMPENSATED_SUM
    /* CPython: if |sum| >= |x|: c += (sum - t) + x, else c += (x - t) + sum. The same operations
       on operands chosen without a branch, so that loops over many sums (the substrate's)
       vectorise: gcc does not if-convert floating-point arithmetic under its default
       -ftrapping-math, but does choose between values. */
    const double t = s->sum + x;
    const int sum_larger = fabs(s->sum) >= fabs(x);
    const double larger = sum_larger ? s->sum : x, smaller = sum_larger ? x : s->sum;
    s->compensation += (larger - t) + smaller;
    s->sum = t;
#else
    s->sum += x;
#endif
}

static inline double
python_sum_value(PythonSum s)
{
    return s.compensation != 0.0 && isfinite(s.compensation) ? s.sum + s.compensation : s.sum;
}

/* python_sum_add for a sum added to on its own (not in a loop over many sums): the same
   operations, but both candidate compensations computed and the one CPython takes picked by
   index. Compilers make the choice between values a branch here, which the data make
   unpredictable (twice as slow on random terms); python_sum_add's form is the one gcc
   vectorises in loops over many sums. */
static inline void
python_sum_add_one(PythonSum *s, double x)
{
#if NEATPAR_COMPENSATED_SUM
    const double t = s->sum + x;
    const double compensation[2] = {(x - t) + s->sum, (s->sum - t) + x};   /* |sum| < |x|, >= */
    s->compensation += compensation[fabs(s->sum) >= fabs(x)];
    s->sum = t;
#else
    s->sum += x;
#endif
}

/* sum(x[:n]) of exact floats. */
static inline double
python_sum(const double *x, Py_ssize_t n)
{
    PythonSum s = {0.0, 0.0};
    for (Py_ssize_t i = 0; i < n; i++)
        python_sum_add_one(&s, x[i]);
    return python_sum_value(s);
}

#endif /* NEATPAR_PYTHON_SUM_H */
