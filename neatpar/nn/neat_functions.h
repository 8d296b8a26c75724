/*
 * neat-python 2.0's built-in activation and aggregation functions in C, to the last bit.
 *
 * One definition for the two extensions that evaluate networks (_kernel.c, _substrate.c), kept
 * in a header of static functions so that each caller's loops over one function code inline it
 * (the substrate's per-node loops rely on that for their speed). The same
 * libm calls in the same order as Python's math module makes them (math.exp, math.tanh and float
 * ** n call the C library too), and CPython's own steps where it does more than one C operation
 * (float ** n, list.sort, sum). Compile with -ffp-contract=off -fno-fast-math: a fused
 * multiply-add rounds differently from Python. Include after Python.h (Py_ssize_t). Each build is
 * for one Python, and follows its steps where they changed: sum() of floats (compensated from
 * 3.12, python_sum.h) and list.sort's runs (3.13).
 *
 * Codes: the order of BUILTIN_ACTIVATIONS and BUILTIN_AGGREGATIONS in neatpar/nn/compile.py.
 */
#ifndef NEATPAR_NEAT_FUNCTIONS_H
#define NEATPAR_NEAT_FUNCTIONS_H

#include <math.h>

#include "../python_sum.h"   /* sum() of floats as the Python this is built for computes it */

enum { A_SIGMOID, A_TANH, A_SIN, A_GAUSS, A_RELU, A_ELU, A_LELU, A_SELU, A_SOFTPLUS, A_IDENTITY,
       A_CLAMPED, A_INV, A_LOG, A_EXP, A_ABS, A_HAT, A_SQUARE, A_CUBE, A_COUNT };
enum { G_SUM, G_PRODUCT, G_MAX, G_MIN, G_MAXABS, G_MEDIAN, G_MEAN, G_COUNT };

/* Python's min(hi, z) and max(lo, z) for floats, comparisons as CPython does them. */
static inline double py_min(double hi, double z) { return z < hi ? z : hi; }
static inline double py_max(double lo, double z) { return z > lo ? z : lo; }
static inline double clamp60(double z) { return py_max(-60.0, py_min(60.0, z)); }

/* The C library's pow, called through a volatile pointer: compilers replace a visible pow(z, 2.0)
 * by z * z, which CPython does not do and which rounds differently from glibc's pow on some inputs. */
static double (*volatile libm_pow)(double, double) = pow;

/* CPython's float ** n for a positive integer n (floatobject.c, float_pow): 0, infinities, NaN and
 * +-1 are answered without pow; otherwise pow(|z|, n), negated when z < 0 and n is odd. Where
 * CPython raises OverflowError, this returns the infinity pow returned. */
static double py_int_pow(double z, double n, int odd)
{
    if (isnan(z)) return z;
    if (isinf(z)) return odd ? z : fabs(z);
    if (z == 0.0) return odd ? z : 0.0;
    const int negate = odd && z < 0.0;
    const double a = fabs(z);
    if (a == 1.0) return negate ? -1.0 : 1.0;
    const double r = libm_pow(a, n);
    return negate ? -r : r;
}

static double activate(int code, double z)
{
    switch (code) {
    case A_SIGMOID: z = clamp60(5.0 * z); return 1.0 / (1.0 + exp(-z));
    case A_TANH: return tanh(clamp60(2.5 * z));
    case A_SIN: return sin(clamp60(5.0 * z));
    case A_GAUSS: z = py_max(-3.4, py_min(3.4, z)); return exp(-5.0 * py_int_pow(z, 2.0, 0));
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
    case A_SQUARE: return py_int_pow(z, 2.0, 0);
    case A_CUBE: return py_int_pow(z, 3.0, 1);
    }
    return NAN;
}

/* a[0:n] reversed in place (listobject.c's reverse_slice). */
static void py_reverse(double *a, Py_ssize_t n)
{
    for (Py_ssize_t i = 0, j = n - 1; i < j; i++, j--) { const double t = a[i]; a[i] = a[j]; a[j] = t; }
}

#if PY_VERSION_HEX >= 0x030D0000
/* CPython 3.13's count_run (listobject.c, gh-116554): an ascending run, or a descending one in
 * which runs of "equal" values (neither < the other) may sit, made ascending in place: each
 * equal run is reversed as it ends, then the whole run, which keeps equal values stable; then
 * the run goes on while it ascends. Returns its length. */
static Py_ssize_t py_count_run(double *a, Py_ssize_t n)
{
    Py_ssize_t k = 1, neq = 0;
    while (k < n && !(a[k] < a[k - 1])) k++;
    if (k == n) return n;
    if (k > 1) {             /* a[k] < a[k - 1] ends an ascending run: descending only if all equal */
        if (a[0] < a[k - 1]) return k;
        py_reverse(a, k);
    }
    for (k++; k < n; k++) {
        if (a[k] < a[k - 1]) {
            if (neq) { py_reverse(a + k - neq - 1, neq + 1); neq = 0; }
        } else if (a[k - 1] < a[k]) {
            break;
        } else {
            neq++;
        }
    }
    if (neq) py_reverse(a + k - neq - 1, neq + 1);
    py_reverse(a, k);
    while (k < n && !(a[k] < a[k - 1])) k++;
    return k;
}
#else
/* CPython 3.11's and 3.12's count_run (listobject.c): the leading run, ascending (each next value
 * not < the last) or strictly descending, which is reversed. Returns its length. */
static Py_ssize_t py_count_run(double *a, Py_ssize_t n)
{
    Py_ssize_t run = 2;
    if (a[1] < a[0]) {
        while (run < n && a[run] < a[run - 1]) run++;
        py_reverse(a, run);
    } else {
        while (run < n && !(a[run] < a[run - 1])) run++;
    }
    return run;
}
#endif

/* CPython's list.sort() of a list of floats shorter than 64 (listobject.c: one run, so
 * count_run finds the leading run and binarysort inserts the rest), all with the float
 * comparison a < b. Any stable sort gives the same result without NaN; with NaN, only CPython's
 * own steps do (exactly so for fewer than 64 values), and 3.13 changed count_run. */
static void py_sort(double *a, Py_ssize_t n)
{
    if (n < 2) return;
    for (Py_ssize_t start = py_count_run(a, n); start < n; start++) {
        const double pivot = a[start];
        Py_ssize_t l = 0, r = start;
        do {
            const Py_ssize_t p = l + ((r - l) >> 1);
            if (pivot < a[p]) r = p; else l = p + 1;
        } while (l < r);
        for (Py_ssize_t p = start; p > l; p--) a[p] = a[p - 1];
        a[l] = pivot;
    }
}

/* x: the node's inputs (value * weight), in neat-python's order. sum and mean (and median's mean of
 * at most 2) are the builtin sum() of the running Python (python_sum.h): left to right from 0 up
 * to 3.11, compensated from 3.12; neat-python hands sum() a list of exact floats. */
static double aggregate(int code, double *x, Py_ssize_t n)
{
    double acc;
    Py_ssize_t i;
    switch (code) {
    case G_SUM:
        return python_sum(x, n);
    case G_PRODUCT:
        acc = 1.0;
        for (i = 0; i < n; i++) acc *= x[i];
        return acc;
    case G_MEAN:   /* neat.math_util.mean: sum(values) / len(values); 0.0 for none */
        return n == 0 ? 0.0 : python_sum(x, n) / (double)n;
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
        py_sort(x, n);
        if (n % 2 == 1) return x[n / 2];
        return (x[n / 2 - 1] + x[n / 2]) / 2.0;
    }
    return NAN;
}

#endif /* NEATPAR_NEAT_FUNCTIONS_H */
