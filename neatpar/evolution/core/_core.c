/* neatpar.evolution._core: the module's state, its entry points and method table (the parts are
listed in core.h). */
#include "core.h"

#include <string.h>

/* Module state (one interpreter; the GIL guards it). */
PyObject *names;          /* list: id -> activation/aggregation name */
PyObject *name_ids;       /* dict: name -> id */
PyObject *node_gene_type, *conn_gene_type;
PyObject *node_attribute_list, *conn_attribute_list;  /* their _gene_attributes, as checked */
PyObject *genome_class, *plain_class_fn, *plain_types;  /* neatpar's DefaultGenome; cls -> bool */
PyObject *tracker_class;  /* neat-python's InnovationTracker, whose bookkeeping is done here */
PyObject *reference_union, *reference_inputs, *sets_check;
PyObject *random_module, *random_inst, *count_type;
PyObject *genes_from_state_fn;  /* the module's _genes_from_state, for pickling */
int rng_in_place = -1;    /* -1: not checked yet */
int sets_emulated = -1;   /* -1: not checked yet */

PyObject *str_genes, *str_nodes, *str_connections, *str_key, *str_fitness, *str_innovation,
    *str_weight, *str_enabled, *str_bias, *str_response, *str_activation, *str_aggregation,
    *str_time_constant, *str_node_indexer, *str_innovation_tracker, *str_get_innovation_number,
    *str_add_node_in, *str_add_node_out, *str_add_connection, *str_initial_connection,
    *str_representative, *empty_tuple, *one;
PyObject *str_gauss_next, *str_getstate, *str_setstate;

/* ------------------------------------------------------------------------------------------ */
/* Module functions                                                                            */

/* The genome's own records for an operator, or NULL with no error set when the operator is not
   for C here: genes kept as objects, a class that changes an operator, or (empty_only) a genome
   that already has genes. */
Genes *
operand(PyObject *genome, int empty_only)
{
    PyObject *g = PyObject_GetAttr(genome, str_genes);
    if (!g) {
        PyErr_Clear();
        return NULL;
    }
    int plain = Py_IS_TYPE(g, &GenesType) ? plain_type((PyObject *)Py_TYPE(genome)) : 0;
    if (plain <= 0 || (empty_only && (((Genes *)g)->nn || ((Genes *)g)->nc))) {
        Py_DECREF(g);
        return NULL;
    }
    return (Genes *)g;
}

typedef int (*Operator)(Rng *, const Cfg *, Genes *, PyObject *, PyObject *);

/* Runs one operator on the genome's records; NotImplemented when it is not for C (the caller runs
   neat-python's code instead). */
PyObject *
run_operator(Operator op, PyObject *genome, PyObject *config, int empty_only, PyObject *a, PyObject *b)
{
    Genes *g = operand(genome, empty_only);
    if (!g)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented);
    Cfg local, *c = cfg_acquire(config, &local);
    PyObject *result = NULL;
    if (c && !c->standard)
        result = Py_NewRef(Py_NotImplemented);
    else if (c) {
        Rng r;
        if (begin(&r) == 0) {
            int rc = op(&r, c, g, a, b);
            genes_changed(g);
            if (rng_end(&r) == 0 && rc == 0)
                result = Py_NewRef(Py_None);
        }
    }
    cfg_release(c, &local);
    Py_DECREF(g);
    return result;
}

static int
op_configure_new(Rng *r, const Cfg *c, Genes *g, PyObject *unused1, PyObject *unused2)
{
    const char *kind = PyUnicode_AsUTF8(c->initial_connection);
    return kind ? configure_new(r, c, g, kind) : -1;
}

static int
op_crossover(Rng *r, const Cfg *c, Genes *g, PyObject *genome1, PyObject *genome2)
{
    return crossover(r, c, g, genome1, genome2, NULL);
}

static int
op_mutate(Rng *r, const Cfg *c, Genes *g, PyObject *unused1, PyObject *unused2)
{
    return mutate(r, c, g);
}

PyObject *
py_configure_new(PyObject *mod, PyObject *args)
{
    PyObject *genome, *config;
    if (!PyArg_ParseTuple(args, "OO", &genome, &config))
        return NULL;
    return run_operator(op_configure_new, genome, config, 1, NULL, NULL);
}

PyObject *
py_crossover(PyObject *mod, PyObject *args)
{
    PyObject *genome, *g1, *g2, *config;
    if (!PyArg_ParseTuple(args, "OOOO", &genome, &g1, &g2, &config))
        return NULL;
    return run_operator(op_crossover, genome, config, 1, g1, g2);
}

PyObject *
py_mutate(PyObject *mod, PyObject *args)
{
    PyObject *genome, *config;
    if (!PyArg_ParseTuple(args, "OO", &genome, &config))
        return NULL;
    return run_operator(op_mutate, genome, config, 0, NULL, NULL);
}

/* genome0.distance(genome1); NotImplemented for genes other than neat-python's defaults. */
static PyObject *
py_distance(PyObject *mod, PyObject *args)
{
    PyObject *g0, *g1, *config;
    if (!PyArg_ParseTuple(args, "OOO", &g0, &g1, &config))
        return NULL;
    if (!Py_IS_TYPE(config, &ConfigViewType) && !standard_config(config))
        Py_RETURN_NOTIMPLEMENTED;
    double cdc, cwc;
    if (cfg_double(config, "compatibility_disjoint_coefficient", &cdc) < 0
        || cfg_double(config, "compatibility_weight_coefficient", &cwc) < 0)
        return NULL;
    Genes *a = genes_of(g0, NULL), *b = a ? genes_of(g1, NULL) : NULL;
    Scratch s = {NULL, 0};
    PyObject *result = NULL;
    if (b && prepare_distance(a, &s) == 0 && prepare_distance(b, &s) == 0)
        result = PyFloat_FromDouble(genes_distance(a, b, cdc, cwc, &s));
    PyMem_Free(s.match);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return result;
}


static PyObject *
py_genes_of(PyObject *mod, PyObject *genome)
{
    return (PyObject *)genes_of(genome, NULL);
}

static PyObject *
py_setup(PyObject *mod, PyObject *args)
{
    PyObject *nt, *ct, *nl, *cl, *gc, *pc, *tc, *ru, *ri, *chk;
    if (!PyArg_ParseTuple(args, "OOOOOOO!OOO", &nt, &ct, &nl, &cl, &gc, &pc, &PyType_Type, &tc, &ru, &ri, &chk))
        return NULL;
    Py_XSETREF(tracker_class, Py_NewRef(tc));
    Py_XSETREF(node_gene_type, Py_NewRef(nt));
    Py_XSETREF(conn_gene_type, Py_NewRef(ct));
    Py_XSETREF(node_attribute_list, Py_NewRef(nl));
    Py_XSETREF(conn_attribute_list, Py_NewRef(cl));
    Py_XSETREF(genome_class, Py_NewRef(gc));
    Py_XSETREF(plain_class_fn, Py_NewRef(pc));
    Py_XSETREF(reference_union, Py_NewRef(ru));
    Py_XSETREF(reference_inputs, Py_NewRef(ri));
    Py_XSETREF(sets_check, Py_NewRef(chk));
    Py_XSETREF(plain_types, PyDict_New());
    if (!plain_types)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
py_modes(PyObject *mod, PyObject *unused)
{
    if (rng_in_place < 0)
        rng_in_place = rng_layout_ok(random_module);
    if (sets_emulated < 0 && check_sets() < 0)
        return NULL;
    return Py_BuildValue("{s:O,s:O}", "random_in_place", rng_in_place ? Py_True : Py_False,
                         "sets_emulated", sets_emulated ? Py_True : Py_False);
}

/* Tests: draws(plan) -> values, each entry of `plan` one call on `random`'s generator made in C:
   ("random",), ("below", n), ("gauss", mu, sigma), ("uniform", a, b). */
static PyObject *
py_draws(PyObject *mod, PyObject *plan)
{
    PyObject *seq = PySequence_Fast(plan, "draws() takes a list of calls");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    Rng r;
    if (!out || begin(&r) < 0) {
        Py_XDECREF(out);
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n && out; i++) {
        const char *kind;
        double a = 0, b = 0;
        PyObject *call = PySequence_Fast_GET_ITEM(seq, i), *v = NULL;
        if (!PyArg_ParseTuple(call, "s|dd", &kind, &a, &b))
            ;
        else if (!strcmp(kind, "below"))
            v = a >= 1 ? PyLong_FromSsize_t(rng_below(&r, (Py_ssize_t)a)) : NULL;
        else if (!strcmp(kind, "random"))
            v = PyFloat_FromDouble(rng_random(&r));
        else if (!strcmp(kind, "gauss"))
            v = PyFloat_FromDouble(rng_gauss(&r, a, b));
        else if (!strcmp(kind, "uniform"))
            v = PyFloat_FromDouble(rng_uniform(&r, a, b));
        if (!v && !PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "draws(): unknown call");
        if (!v)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, v);
    }
    Py_DECREF(seq);
    if (rng_end(&r) < 0)
        Py_CLEAR(out);
    return out;
}

static PyObject *
py_force_modes(PyObject *mod, PyObject *args)
{
    int in_place, emulated;
    if (!PyArg_ParseTuple(args, "ii", &in_place, &emulated))
        return NULL;
    rng_in_place = in_place;
    sets_emulated = emulated;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"setup", py_setup, METH_VARARGS, "setup(node_gene_type, conn_gene_type, node_attributes, conn_attributes, genome_class, plain_class, tracker_class, union_ref, inputs_ref, sets_check)"},
    {"configure_new", py_configure_new, METH_VARARGS, "configure_new(genome, genome_config)"},
    {"crossover", py_crossover, METH_VARARGS, "crossover(child, genome1, genome2, genome_config)"},
    {"mutate", py_mutate, METH_VARARGS, "mutate(genome, genome_config)"},
    {"distance", py_distance, METH_VARARGS, "distance(genome0, genome1, genome_config)"},
    {"speciate", speciate, METH_VARARGS, "the distance work of DefaultSpeciesSet.speciate"},
    {"enabled_links", enabled_links, METH_O, "every enabled connection of each Genes, for compiling"},
    {"names", py_names, METH_NOARGS, "the activation and aggregation names records refer to, by id"},
    {"breed", py_breed, METH_VARARGS, "each species' elites and children, as DefaultReproduction.reproduce makes them"},
    {"set_threads", py_set_threads, METH_O, "set_threads(n) -> the previous n: threads that compute a speciation's distances"},
    {"materialize", materialize, METH_O, "materialize(genes) -> (nodes, connections) dicts of gene objects"},
    {"genes_of", py_genes_of, METH_O, "the genome's genes as records (read from its objects if need be)"},
    {"modes", py_modes, METH_NOARGS, "whether random is drawn in place and set orders are re-enacted"},
    {"_force_modes", py_force_modes, METH_VARARGS, "tests: force the fallback paths"},
    {"_draws", py_draws, METH_O, "tests: draws(plan) on random's generator, made in C"},
    {"_genes_from_state", genes_from_state, METH_VARARGS, NULL},
    {"emulated_union", emulated_union, METH_VARARGS, "the re-enacted order of set(a) | set(b)"},
    {"emulated_inputs", emulated_inputs, METH_VARARGS,
     "the re-enacted order of (set(dict.fromkeys(nodes)) - set(outputs)) | set(inputs), or None"},
    {NULL}
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "neatpar.evolution._core",
    "neat-python's genome operators and speciation distances in C, draw for draw.", -1, module_methods,
};

#define INTERN(var, text) do { if (!((var) = PyUnicode_InternFromString(text))) return NULL; } while (0)

PyMODINIT_FUNC
PyInit__core(void)
{
    if (PyType_Ready(&GenesType) < 0 || PyType_Ready(&ConfigViewType) < 0)
        return NULL;
    INTERN(str_genes, "_genes"); INTERN(str_nodes, "nodes"); INTERN(str_connections, "connections");
    INTERN(str_key, "key"); INTERN(str_fitness, "fitness"); INTERN(str_innovation, "innovation");
    INTERN(str_weight, "weight"); INTERN(str_enabled, "enabled"); INTERN(str_bias, "bias");
    INTERN(str_response, "response"); INTERN(str_activation, "activation");
    INTERN(str_aggregation, "aggregation"); INTERN(str_time_constant, "time_constant");
    INTERN(str_node_indexer, "node_indexer"); INTERN(str_innovation_tracker, "innovation_tracker");
    INTERN(str_get_innovation_number, "get_innovation_number"); INTERN(str_add_node_in, "add_node_in");
    INTERN(str_add_node_out, "add_node_out"); INTERN(str_add_connection, "add_connection");
    INTERN(str_initial_connection, "initial_connection"); INTERN(str_representative, "representative");
    INTERN(str_gauss_next, "gauss_next"); INTERN(str_getstate, "getstate"); INTERN(str_setstate, "setstate");
    empty_tuple = PyTuple_New(0);
    one = PyLong_FromLong(1);
    names = PyList_New(0);
    name_ids = PyDict_New();
    random_module = PyImport_ImportModule("random");
    random_inst = random_module ? PyObject_GetAttrString(random_module, "_inst") : NULL;
    PyObject *itertools = PyImport_ImportModule("itertools");
    count_type = itertools ? PyObject_GetAttrString(itertools, "count") : NULL;
    Py_XDECREF(itertools);
    if (!empty_tuple || !names || !name_ids || !random_inst || !count_type)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    genes_from_state_fn = PyObject_GetAttrString(m, "_genes_from_state");
    if (!genes_from_state_fn || PyModule_AddObjectRef(m, "Genes", (PyObject *)&GenesType) < 0
        || PyModule_AddObjectRef(m, "ConfigView", (PyObject *)&ConfigViewType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
