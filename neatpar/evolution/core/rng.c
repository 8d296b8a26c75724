/* Draws from Python's own `random` generator, exactly as Lib/random.py and _randommodule.c do.

neat-python draws every random number from the module-level `random` functions, which are bound
to one Mersenne Twister, `random._inst`. The C core draws from that same generator and leaves it
exactly as neat-python's Python code would: the same 32-bit words consumed in the same order, the
same arithmetic for random(), getrandbits(k), _randbelow(n), choice, uniform and gauss (whose
second value waits in the instance's `gauss_next`).

Access is in place: `_random.Random`'s C struct is {PyObject_HEAD; int index; uint32_t
state[624];}. The module checks that layout once against getstate() and the generator's own
output (rng_layout_ok); if it differs (another CPython), every call copies the state in with
getstate() and back with setstate() instead.
*/
#include "rng.h"

#include <math.h>

uint32_t
rng_u32(Rng *r)
{
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t y, *mt = r->mt;
    if (*r->index >= MT_N) {
        int kk;
        for (kk = 0; kk < MT_N - MT_M; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + MT_M] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < MT_N - 1; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (mt[MT_N - 1] & 0x80000000U) | (mt[0] & 0x7fffffffU);
        mt[MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 0x1U];
        *r->index = 0;
    }
    y = mt[(*r->index)++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

/* int.bit_length(): the bits of `n` up to its highest one set (0 for 0), in portable C. */
int
bit_length(uint64_t n)
{
    int k = 0;
    for (; n; n >>= 1)
        k++;
    return k;
}

/* random.random() */
double
rng_random(Rng *r)
{
    uint32_t a = rng_u32(r) >> 5, b = rng_u32(r) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* random._randbelow_with_getrandbits(n), n >= 1: k = n.bit_length(); getrandbits(k) until < n.
   Lists here never reach 2**32 entries; larger n is refused by the caller. */
Py_ssize_t
rng_below(Rng *r, Py_ssize_t n)
{
    int k = bit_length((uint64_t)n);
    uint32_t v = rng_u32(r) >> (32 - k);
    while ((Py_ssize_t)v >= n)
        v = rng_u32(r) >> (32 - k);
    return (Py_ssize_t)v;
}

/* random.choice(seq) for a sequence of length n: the index it picks (IndexError when empty). */
Py_ssize_t
rng_choice(Rng *r, Py_ssize_t n)
{
    if (n <= 0) {
        PyErr_SetString(PyExc_IndexError, "Cannot choose from an empty sequence");
        return -1;
    }
    if (n >= ((Py_ssize_t)1 << 32)) {
        PyErr_SetString(PyExc_OverflowError, "neatpar: choice from a sequence of 2**32 or more items");
        return -1;
    }
    return rng_below(r, n);
}

/* random.uniform(a, b) */
double
rng_uniform(Rng *r, double a, double b)
{
    return a + (b - a) * rng_random(r);
}

/* random.gauss(mu, sigma), with the cached second value */
double
rng_gauss(Rng *r, double mu, double sigma)
{
    double z;
    if (r->has_gauss) {
        z = r->gauss_next;
        r->has_gauss = 0;
    }
    else {
        double x2pi = rng_random(r) * 6.283185307179586;  /* math.tau */
        double g2rad = sqrt(-2.0 * log(1.0 - rng_random(r)));
        z = cos(x2pi) * g2rad;
        r->gauss_next = sin(x2pi) * g2rad;
        r->has_gauss = 1;
    }
    return mu + z * sigma;
}

/* Checks the in-place layout on a fresh generator: its state and its next draws must be ours. */
int
rng_layout_ok(PyObject *random_module)
{
    int ok = 0;
    PyObject *cls = PyObject_GetAttrString(random_module, "Random");
    PyObject *gen = cls ? PyObject_CallFunction(cls, "i", 20240229) : NULL;
    PyObject *state = gen ? PyObject_CallMethod(gen, "getstate", NULL) : NULL;
    if (state && PyTuple_Check(state) && PyTuple_GET_SIZE(state) == 3) {
        PyObject *words = PyTuple_GET_ITEM(state, 1);
        RandomMirror *m = (RandomMirror *)gen;
        ok = PyTuple_Check(words) && PyTuple_GET_SIZE(words) == MT_N + 1
             && PyLong_AsLong(PyTuple_GET_ITEM(words, MT_N)) == m->index;
        for (int i = 0; ok && i < MT_N; i++)
            ok = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(words, i)) == m->state[i];
        if (ok) {
            Rng r;
            r.copy = *m;
            r.index = &r.copy.index;
            r.mt = r.copy.state;
            r.has_gauss = 0;
            for (int i = 0; ok && i < 700; i++) {
                PyObject *v = PyObject_CallMethod(gen, "random", NULL);
                ok = v && PyFloat_AsDouble(v) == rng_random(&r);
                Py_XDECREF(v);
            }
        }
    }
    Py_XDECREF(state);
    Py_XDECREF(gen);
    Py_XDECREF(cls);
    PyErr_Clear();
    return ok;
}

/* Starts drawing from the module's generator (`inst`, random._inst): reads gauss_next (and the state,
   if not in place). */
int
rng_begin(Rng *r, CoreState *st)
{
    PyObject *inst = st->random_inst;
    int in_place = st->rng_in_place;
    r->st = st;
    r->inst = inst;
    r->in_place = in_place;
    PyObject *g = PyObject_GetAttr(inst, st->str_gauss_next);
    if (!g)
        return -1;
    r->has_gauss = g != Py_None;
    r->gauss_next = r->has_gauss ? PyFloat_AsDouble(g) : 0.0;
    Py_DECREF(g);
    if (r->has_gauss && r->gauss_next == -1.0 && PyErr_Occurred())
        return -1;
    if (in_place) {
        r->index = &((RandomMirror *)inst)->index;
        r->mt = ((RandomMirror *)inst)->state;
        return 0;
    }
    PyObject *state = PyObject_CallMethodNoArgs(inst, st->str_getstate);
    if (!state)
        return -1;
    PyObject *words = PyTuple_GetItem(state, 1);
    if (!words || PyTuple_GET_SIZE(words) != MT_N + 1) {
        Py_DECREF(state);
        PyErr_SetString(PyExc_RuntimeError, "neatpar: unexpected random.getstate() form");
        return -1;
    }
    for (int i = 0; i < MT_N; i++)
        r->copy.state[i] = (uint32_t)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(words, i));
    r->copy.index = (int)PyLong_AsLong(PyTuple_GET_ITEM(words, MT_N));
    Py_DECREF(state);
    r->index = &r->copy.index;
    r->mt = r->copy.state;
    return PyErr_Occurred() ? -1 : 0;
}

/* Leaves the generator as the draws left it. Keeps a pending exception. */
int
rng_end(Rng *r)
{
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    int rc = 0;
    PyObject *g = r->has_gauss ? PyFloat_FromDouble(r->gauss_next) : Py_NewRef(Py_None);
    if (!g || PyObject_SetAttr(r->inst, r->st->str_gauss_next, g) < 0)
        rc = -1;
    Py_XDECREF(g);
    if (!r->in_place && rc == 0) {
        PyObject *words = PyTuple_New(MT_N + 1);
        for (int i = 0; words && i < MT_N; i++)
            PyTuple_SET_ITEM(words, i, PyLong_FromUnsignedLong(r->copy.state[i]));
        if (words)
            PyTuple_SET_ITEM(words, MT_N, PyLong_FromLong(r->copy.index));
        PyObject *gn = r->has_gauss ? PyFloat_FromDouble(r->gauss_next) : Py_NewRef(Py_None);
        PyObject *res = words && gn ? PyObject_CallMethod(r->inst, "setstate", "((iOO))", 3, words, gn) : NULL;
        rc = res ? 0 : -1;
        Py_XDECREF(res);
        Py_XDECREF(words);
        Py_XDECREF(gn);
    }
    if (exc_type)
        PyErr_Restore(exc_type, exc_value, exc_tb);
    return exc_type ? -1 : rc;
}
