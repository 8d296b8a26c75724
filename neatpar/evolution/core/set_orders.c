/* The orders of the sets the operators walk: re-enacted (pyset.c), or computed by real Python sets
when the check at first use failed. */
#include "set_orders.h"


/* ------------------------------------------------------------------------------------------ */
/* Set orders: re-enacted, or computed by real sets when the check at first use failed        */

static PyObject *
keys_list(const int64_t *keys, Py_ssize_t n)
{
    PyObject *l = PyList_New(n);
    for (Py_ssize_t i = 0; l && i < n; i++) {
        PyObject *v = PyLong_FromLongLong(keys[i]);
        if (!v) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, v);
    }
    return l;
}

static Py_ssize_t
keys_from_list(PyObject *list, int64_t *dst, Py_ssize_t room)
{
    PyObject *seq = PySequence_Fast(list, "neatpar: a list of keys was expected");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > room) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_RuntimeError, "neatpar: a reference set order has more keys than expected");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        dst[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    return PyErr_Occurred() ? -1 : n;
}

/* list((set(dict.fromkeys(nodes)) - set(outputs)) | set(inputs)) into dst (room for
   n_nodes + n_inputs keys). Returns the length, -1 on error. */
Py_ssize_t
possible_inputs_order(CoreState *st, const int64_t *nodes, Py_ssize_t nn, const int64_t *outputs, Py_ssize_t no,
                      const int64_t *inputs, Py_ssize_t ni, int64_t *dst)
{
    if (st->sets_emulated < 0 && check_sets(st) < 0)
        return -1;
    if (st->sets_emulated) {
        PSet a, b, d, i, e;
        ps_init(&a); ps_init(&b); ps_init(&d); ps_init(&i); ps_init(&e);
        Py_ssize_t n = -1;
        int rc = ps_from_dict_keys(&a, nodes, nn);
        if (rc == 0)
            rc = ps_add_all(&b, outputs, no, 0);
        if (rc == 0)
            rc = ps_difference(&a, &b, &d);
        if (rc == 0)
            rc = ps_add_all(&i, inputs, ni, 0);
        if (rc == 0)
            rc = ps_merge(&e, &d);
        if (rc == 0)
            rc = ps_merge(&e, &i);
        if (rc == 0) {
            ps_order(&e, dst);
            n = e.used;
        }
        ps_free(&a); ps_free(&b); ps_free(&d); ps_free(&i); ps_free(&e);
        if (rc <= 0)
            return rc < 0 ? -1 : n;
        /* rc == 1: a case the emulation leaves to real sets */
    }
    PyObject *ln = keys_list(nodes, nn), *lo = keys_list(outputs, no), *li = keys_list(inputs, ni);
    PyObject *order = ln && lo && li ? PyObject_CallFunctionObjArgs(st->reference_inputs, ln, lo, li, NULL) : NULL;
    Py_XDECREF(ln); Py_XDECREF(lo); Py_XDECREF(li);
    if (!order)
        return -1;
    Py_ssize_t n = keys_from_list(order, dst, nn + ni);
    Py_DECREF(order);
    return n;
}

/* The union set(innovations of p1) | set(innovations of p2), built into u with payloads: a = the
   position in p1 of the last gene with that innovation, b = the same in p2. When the emulation is
   off, `order` receives the real set's iteration order (else order stays unused). */
int
innovation_union(CoreState *st, const Genes *p1, const Genes *p2, PSet *s1, PSet *s2, PSet *u, int64_t *order,
                 Py_ssize_t *n_order)
{
    int64_t *k1 = PyMem_Malloc(sizeof(int64_t) * (p1->nc + 1)), *k2 = PyMem_Malloc(sizeof(int64_t) * (p2->nc + 1));
    int rc = -1;
    if (!k1 || !k2) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < p1->nc; i++)
        k1[i] = p1->conns[i].innov;
    for (Py_ssize_t i = 0; i < p2->nc; i++)
        k2[i] = p2->conns[i].innov;
    if (ps_add_all(s1, k1, p1->nc, 0) < 0 || ps_add_all(s2, k2, p2->nc, 1) < 0
        || ps_merge(u, s1) < 0 || ps_merge(u, s2) < 0)
        goto done;
    *n_order = -1;
    if (!st->sets_emulated) {
        PyObject *l1 = keys_list(k1, p1->nc), *l2 = keys_list(k2, p2->nc);
        PyObject *res = l1 && l2 ? PyObject_CallFunctionObjArgs(st->reference_union, l1, l2, NULL) : NULL;
        Py_XDECREF(l1);
        Py_XDECREF(l2);
        if (!res)
            goto done;
        *n_order = keys_from_list(res, order, p1->nc + p2->nc);
        Py_DECREF(res);
        if (*n_order < 0)
            goto done;
    }
    rc = 0;
done:
    PyMem_Free(k1);
    PyMem_Free(k2);
    return rc;
}

/* The check at first use: the emulated orders against real sets on varied keys. */
int
check_sets(CoreState *st)
{
    PyObject *ok = PyObject_CallNoArgs(st->sets_check);
    if (!ok)
        return -1;
    st->sets_emulated = PyObject_IsTrue(ok);
    Py_DECREF(ok);
    return st->sets_emulated < 0 ? -1 : 0;
}

PyObject *
emulated_union(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *a, *b;
    if (!PyArg_ParseTuple(args, "OO", &a, &b))
        return NULL;
    Py_ssize_t na = PySequence_Length(a), nb = PySequence_Length(b);
    if (na < 0 || nb < 0)
        return NULL;
    int64_t *ka = PyMem_Malloc(sizeof(int64_t) * (na + nb + 1));
    PyObject *result = NULL;
    PSet s1, s2, u;
    ps_init(&s1); ps_init(&s2); ps_init(&u);
    if (!ka)
        return PyErr_NoMemory();
    if (keys_from_list(a, ka, na) < 0 || keys_from_list(b, ka + na, nb) < 0)
        goto done;
    if (ps_add_all(&s1, ka, na, 0) == 0 && ps_add_all(&s2, ka + na, nb, 1) == 0
        && ps_merge(&u, &s1) == 0 && ps_merge(&u, &s2) == 0) {
        ps_order(&u, ka);
        result = keys_list(ka, u.used);
    }
done:
    ps_free(&s1); ps_free(&s2); ps_free(&u);
    PyMem_Free(ka);
    return result;
}

PyObject *
emulated_inputs(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *nodes, *outs, *ins;
    if (!PyArg_ParseTuple(args, "OOO", &nodes, &outs, &ins))
        return NULL;
    Py_ssize_t nn = PySequence_Length(nodes), no = PySequence_Length(outs), ni = PySequence_Length(ins);
    if (nn < 0 || no < 0 || ni < 0)
        return NULL;
    int64_t *k = PyMem_Malloc(sizeof(int64_t) * (2 * (nn + no + ni) + 1));
    if (!k)
        return PyErr_NoMemory();
    PyObject *result = NULL;
    int64_t *kn = k, *ko = k + nn, *ki = ko + no, *dst = ki + ni;
    if (keys_from_list(nodes, kn, nn) >= 0 && keys_from_list(outs, ko, no) >= 0 && keys_from_list(ins, ki, ni) >= 0) {
        PSet a, b, d, i, e;
        ps_init(&a); ps_init(&b); ps_init(&d); ps_init(&i); ps_init(&e);
        int rc = ps_from_dict_keys(&a, kn, nn);
        if (rc == 0) rc = ps_add_all(&b, ko, no, 0);
        if (rc == 0) rc = ps_difference(&a, &b, &d);
        if (rc == 0) rc = ps_add_all(&i, ki, ni, 0);
        if (rc == 0) rc = ps_merge(&e, &d);
        if (rc == 0) rc = ps_merge(&e, &i);
        if (rc == 0) {
            ps_order(&e, dst);
            result = keys_list(dst, e.used);
        }
        else if (rc == 1)
            result = Py_NewRef(Py_None);
        ps_free(&a); ps_free(&b); ps_free(&d); ps_free(&i); ps_free(&e);
    }
    PyMem_Free(k);
    return result;
}
