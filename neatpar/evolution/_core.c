/* neatpar.evolution._core: the module's state, its entry points and method tables. Imported only
by neatpar/evolution's Python modules; it follows the C extensions' convention
(docs/architecture/index.md, "The C extensions"): multi-phase init (core_exec fills the state);
built-in exceptions only, with one-line messages: a module function's argument error begins with
the function, a condition found in the data with "neatpar: ", and an error neat-python or CPython
raises in the same place is raised with its own text (the draw-for-draw guarantee covers errors).

The NEAT step in C: neat-python's DefaultGenome operators, draw for draw.

    parents (Genes, or gene objects read once)          random._inst (in place)
          |                                                   |
          +--> crossover --> mutate --> child Genes  <--------+
                                          |
                 speciate: distances over sorted key indexes, neat-python's cache order
                                          |
                 Python: species records, reporters (neatpar/evolution/species.py)

A genome's genes live in one `Genes` object: two arrays of fixed records in the dicts' order
(node and connection genes as neat-python's dicts would hold them). Every operator repeats
neat-python 2.0.0's Python code (neat/genome.py, genes.py, attributes.py, species.py) step by
step: the same random calls in the same order, the same float expressions (no contraction), the
same iteration orders (the sets crossover and mutate_add_connection build are re-enacted in
pyset.c), the same cycle decisions. Where a comment names a neat-python line, that line is what
the code beside it does.

The parts, in core/, in layers: each file includes its own header and headers of the layers below
it, never one above (tests/test_c_sources.py checks it), so calls go down only.
    8  ../_core.c      the module: its state, entry points and method tables
    7  speciation.c    DefaultSpeciesSet.speciate's distance work (the distance cache, the two loops)
       reproduction.c  DefaultReproduction.reproduce's children (breed), members ranked and grouped
    6  operators.c     attributes, configure_new, crossover, mutate
       distances.c     DefaultGenome.distance, and grids of distances on several threads
    5  genomes.c       the Genes type; a genome's records wherever its genes are; neat-python's gene objects made
    4  gene_maps.c     genome.nodes and genome.connections over the records, their views and iterators
    3  gene_objects.c  gene objects over the records (neat-python's gene classes' interface)
       config.c        the genome config read once into a Cfg (and ConfigView, a config read once)
       graphs.c        creates_cycle and whether a genome's graph has a cycle
       set_orders.c    the set orders the operators walk: re-enacted, or real sets
       records.c       what the kernel's compile reads of many genomes' records
    2  genes.c         the records: edits (keeping live gene objects in step), lookup views, name ids
    1  rng.c           draws from `random`'s own Mersenne Twister
       pyset.c         CPython's set tables re-enacted (their iteration order)
    0  state.h         Python's header and the module's state (CoreState)
       threads_shim.c  the threads of a speciation's distances: POSIX or Win32 (no Python)

Everything the module makes or is given lives in its state (CoreState, PEP 489's per-module
state, set up by core_exec): the Genes and ConfigView types, the gene objects' and the gene
mappings' types, the name table, what setup() hands over, `random`'s generator, the interned
attribute names. Process-global, and only that: the pool of set tables pyset.c keeps for reuse
(plain memory, no Python object; every use holds the GIL, which all interpreters that may import
this module share: see core_slots). */
#include "core/config.h"
#include "core/distances.h"
#include "core/gene_maps.h"
#include "core/gene_objects.h"
#include "core/genomes.h"
#include "core/operators.h"
#include "core/records.h"
#include "core/reproduction.h"
#include "core/set_orders.h"
#include "core/speciation.h"

#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Module functions                                                                            */

typedef int (*Operator)(Rng *, const Cfg *, Genes *, PyObject *, PyObject *);

/* Runs one operator on the genome's records; NotImplemented when it is not for C (the caller runs
   neat-python's code instead). */
static PyObject *
run_operator(CoreState *st, Operator op, PyObject *genome, PyObject *config, int empty_only, PyObject *a,
             PyObject *b)
{
    Genes *g = operand(st, genome, empty_only);
    if (!g)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented);
    Cfg local, *c = cfg_acquire(st, config, &local);
    PyObject *result = NULL;
    if (c && !c->standard)
        result = Py_NewRef(Py_NotImplemented);
    else if (c) {
        Rng r;
        if (begin(st, &r) == 0) {
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
    (void)unused1, (void)unused2;
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
    (void)unused1, (void)unused2;
    return mutate(r, c, g);
}

static PyObject *
py_configure_new(PyObject *mod, PyObject *args)
{
    PyObject *genome, *config;
    if (!PyArg_ParseTuple(args, "OO", &genome, &config))
        return NULL;
    return run_operator(core_state(mod), op_configure_new, genome, config, 1, NULL, NULL);
}

static PyObject *
py_crossover(PyObject *mod, PyObject *args)
{
    PyObject *genome, *g1, *g2, *config;
    if (!PyArg_ParseTuple(args, "OOOO", &genome, &g1, &g2, &config))
        return NULL;
    return run_operator(core_state(mod), op_crossover, genome, config, 1, g1, g2);
}

static PyObject *
py_mutate(PyObject *mod, PyObject *args)
{
    PyObject *genome, *config;
    if (!PyArg_ParseTuple(args, "OO", &genome, &config))
        return NULL;
    return run_operator(core_state(mod), op_mutate, genome, config, 0, NULL, NULL);
}

/* genome0.distance(genome1); NotImplemented for genes other than neat-python's defaults. */
static PyObject *
py_distance(PyObject *mod, PyObject *args)
{
    CoreState *st = core_state(mod);
    PyObject *g0, *g1, *config;
    if (!PyArg_ParseTuple(args, "OOO", &g0, &g1, &config))
        return NULL;
    if (!Py_IS_TYPE(config, st->config_view_type) && !standard_config(st, config))
        Py_RETURN_NOTIMPLEMENTED;
    double cdc, cwc;
    if (cfg_double(config, "compatibility_disjoint_coefficient", &cdc) < 0
        || cfg_double(config, "compatibility_weight_coefficient", &cwc) < 0)
        return NULL;
    Genes *a = genes_of(st, g0, NULL), *b = a ? genes_of(st, g1, NULL) : NULL;
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
    return (PyObject *)genes_of(core_state(mod), genome, NULL);
}

static PyObject *
py_setup(PyObject *mod, PyObject *args)
{
    CoreState *st = core_state(mod);
    PyObject *nt, *ct, *nl, *cl, *gc, *pc, *tc, *ru, *ri, *chk;
    if (!PyArg_ParseTuple(args, "OOOOOOO!OOO", &nt, &ct, &nl, &cl, &gc, &pc, &PyType_Type, &tc, &ru, &ri, &chk))
        return NULL;
    Py_XSETREF(st->tracker_class, Py_NewRef(tc));
    Py_XSETREF(st->node_gene_type, Py_NewRef(nt));
    Py_XSETREF(st->conn_gene_type, Py_NewRef(ct));
    Py_XSETREF(st->node_attribute_list, Py_NewRef(nl));
    Py_XSETREF(st->conn_attribute_list, Py_NewRef(cl));
    Py_XSETREF(st->genome_class, Py_NewRef(gc));
    Py_XSETREF(st->plain_class_fn, Py_NewRef(pc));
    Py_XSETREF(st->reference_union, Py_NewRef(ru));
    Py_XSETREF(st->reference_inputs, Py_NewRef(ri));
    Py_XSETREF(st->sets_check, Py_NewRef(chk));
    Py_XSETREF(st->plain_types, PyDict_New());
    if (!st->plain_types)
        return NULL;
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
    {"all_links", all_links, METH_O, "every connection of each Genes with its enabled flag, for compiling"},
    {"node_table", node_table, METH_VARARGS, "node_table(genes, keys, starts): the attributes of those nodes"},
    {"names", py_names, METH_NOARGS, "the activation and aggregation names records refer to, by id"},
    {"breed", py_breed, METH_VARARGS, "each species' elites and children, as DefaultReproduction.reproduce makes them"},
    {"ranked", py_ranked, METH_O, "ranked(members): (gid, genome) pairs by descending (fitness, gid), or None"},
    {"members_of", py_members_of, METH_VARARGS, "members_of(population, group, sid, genome_to_species): a species' members"},
    {"set_threads", py_set_threads, METH_O, "set_threads(n) -> the previous n: threads that compute a speciation's distances"},
    {"materialize", materialize, METH_O, "materialize(genes) -> (nodes, connections) dicts of gene objects"},
    {"genes_of", py_genes_of, METH_O, "the genome's genes as records (read from its objects if need be)"},
    {"genes_slot", py_genes_slot, METH_VARARGS, "genes_slot(kind, get, set): the descriptor of genome.nodes or genome.connections"},
    {"_genes_from_state", genes_from_state, METH_VARARGS, NULL},
    {"emulated_union", emulated_union, METH_VARARGS, "the re-enacted order of set(a) | set(b)"},
    {"emulated_inputs", emulated_inputs, METH_VARARGS,
     "the re-enacted order of (set(dict.fromkeys(nodes)) - set(outputs)) | set(inputs), or None"},
    {NULL, NULL, 0, NULL}
};

/* ------------------------------------------------------------------------------------------ */
/* Test hooks: functions only the tests call, in the module's one entry for them, `_testing`   */

/* modes() -> whether random is drawn in place and set orders are re-enacted (checked now if not yet). */
static PyObject *
py_modes(PyObject *mod, PyObject *unused)
{
    (void)unused;
    CoreState *st = core_state(mod);
    if (st->rng_in_place < 0)
        st->rng_in_place = rng_layout_ok(st->random_module);
    if (st->sets_emulated < 0 && check_sets(st) < 0)
        return NULL;
    return Py_BuildValue("{s:O,s:O}", "random_in_place", st->rng_in_place ? Py_True : Py_False,
                         "sets_emulated", st->sets_emulated ? Py_True : Py_False);
}

/* draws(plan) -> values, each entry of `plan` one call on `random`'s generator made in C:
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
    if (!out || begin(core_state(mod), &r) < 0) {
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

/* force_modes(in_place, emulated): the fallback paths of another CPython, forced. */
static PyObject *
py_force_modes(PyObject *mod, PyObject *args)
{
    CoreState *st = core_state(mod);
    int in_place, emulated;
    if (!PyArg_ParseTuple(args, "ii", &in_place, &emulated))
        return NULL;
    st->rng_in_place = in_place;
    st->sets_emulated = emulated;
    Py_RETURN_NONE;
}

static PyMethodDef testing_methods[] = {
    {"modes", py_modes, METH_NOARGS, "whether random is drawn in place and set orders are re-enacted"},
    {"force_modes", py_force_modes, METH_VARARGS, "force_modes(in_place, emulated): force the fallback paths"},
    {"draws", py_draws, METH_O, "draws(plan) on random's generator, made in C"},
    {NULL, NULL, 0, NULL}
};

/* _core._testing: a module object holding the test hooks, each bound to this module (its state). */
static int
add_testing(PyObject *m)
{
    PyObject *testing = PyModule_New("neatpar.evolution._core._testing");
    if (!testing)
        return -1;
    PyObject *name = PyModule_GetNameObject(m);
    int rc = name ? 0 : -1;
    for (PyMethodDef *def = testing_methods; rc == 0 && def->ml_name; def++) {
        PyObject *f = PyCFunction_NewEx(def, m, name);
        rc = f ? PyModule_AddObjectRef(testing, def->ml_name, f) : -1;
        Py_XDECREF(f);
    }
    Py_XDECREF(name);
    if (rc == 0)
        rc = PyModule_AddObjectRef(m, "_testing", testing);
    Py_DECREF(testing);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* The module: its state and multi-phase initialisation (PEP 489)                              */

/* Every object the state holds, for traverse and clear. */
#define CORE_OBJECTS(X) \
    X(genes_type) X(config_view_type) X(gene_types[0]) X(gene_types[1]) X(map_type) X(map_view_type) \
    X(map_iter_type) X(slot_type) X(neat_gene_classes[0]) X(neat_gene_classes[1]) X(reconstructor) X(names) X(name_ids) X(node_gene_type) X(conn_gene_type) \
    X(node_attribute_list) X(conn_attribute_list) X(genome_class) X(plain_class_fn) X(plain_types) \
    X(tracker_class) X(reference_union) X(reference_inputs) X(sets_check) X(random_module) X(random_inst) \
    X(count_type) X(genes_from_state_fn) X(empty_tuple) X(one) X(str_genes) X(str_nodes) X(str_connections) \
    X(str_key) X(str_fitness) X(str_innovation) X(str_weight) X(str_enabled) X(str_bias) X(str_response) \
    X(str_activation) X(str_aggregation) X(str_time_constant) X(str_node_indexer) X(str_innovation_tracker) \
    X(str_add_node_in) X(str_add_node_out) X(str_add_connection) X(str_initial_connection) X(str_gauss_next) \
    X(str_getstate)

static int
core_traverse(PyObject *m, visitproc visit, void *arg)
{
    CoreState *st = core_state(m);
#define VISIT(field) Py_VISIT(st->field);
    CORE_OBJECTS(VISIT)
#undef VISIT
    return 0;
}

static int
core_clear(PyObject *m)
{
    CoreState *st = core_state(m);
#define CLEAR(field) Py_CLEAR(st->field);
    CORE_OBJECTS(CLEAR)
#undef CLEAR
    return 0;
}

static void
core_free(void *m)
{
    core_clear((PyObject *)m);
}

#define INTERN(var, text) do { if (!((var) = PyUnicode_InternFromString(text))) return -1; } while (0)

/* Fills the new module's state and adds its types and test hooks. */
static int
core_exec(PyObject *m)
{
    CoreState *st = core_state(m);
    st->rng_in_place = -1;       /* not checked yet */
    st->sets_emulated = -1;      /* not checked yet */
    st->distance_threads = 1;
    st->genes_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &genes_spec, NULL);
    st->config_view_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &config_view_spec, NULL);
    if (!st->genes_type || !st->config_view_type || make_map_types(m, st) < 0)
        return -1;
    INTERN(st->str_genes, "_genes"); INTERN(st->str_nodes, "nodes"); INTERN(st->str_connections, "connections");
    INTERN(st->str_key, "key"); INTERN(st->str_fitness, "fitness"); INTERN(st->str_innovation, "innovation");
    INTERN(st->str_weight, "weight"); INTERN(st->str_enabled, "enabled"); INTERN(st->str_bias, "bias");
    INTERN(st->str_response, "response"); INTERN(st->str_activation, "activation");
    INTERN(st->str_aggregation, "aggregation"); INTERN(st->str_time_constant, "time_constant");
    INTERN(st->str_node_indexer, "node_indexer"); INTERN(st->str_innovation_tracker, "innovation_tracker");
    INTERN(st->str_add_node_in, "add_node_in"); INTERN(st->str_add_node_out, "add_node_out");
    INTERN(st->str_add_connection, "add_connection"); INTERN(st->str_initial_connection, "initial_connection");
    INTERN(st->str_gauss_next, "gauss_next"); INTERN(st->str_getstate, "getstate");
    st->empty_tuple = PyTuple_New(0);
    st->one = PyLong_FromLong(1);
    st->names = PyList_New(0);
    st->name_ids = PyDict_New();
    st->random_module = PyImport_ImportModule("random");
    st->random_inst = st->random_module ? PyObject_GetAttrString(st->random_module, "_inst") : NULL;
    PyObject *itertools = PyImport_ImportModule("itertools");
    st->count_type = itertools ? PyObject_GetAttrString(itertools, "count") : NULL;
    Py_XDECREF(itertools);
    if (!st->empty_tuple || !st->one || !st->names || !st->name_ids || !st->random_inst || !st->count_type
        || make_gene_types(m, st) < 0)
        return -1;
    st->genes_from_state_fn = PyObject_GetAttrString(m, "_genes_from_state");
    if (st->gene_types[0] && (PyModule_AddObjectRef(m, "NodeGene", (PyObject *)st->gene_types[0]) < 0
                              || PyModule_AddObjectRef(m, "ConnectionGene", (PyObject *)st->gene_types[1]) < 0))
        return -1;
    if (!st->genes_from_state_fn || PyModule_AddObjectRef(m, "Genes", (PyObject *)st->genes_type) < 0
        || PyModule_AddObjectRef(m, "GeneMap", (PyObject *)st->map_type) < 0
        || PyModule_AddObjectRef(m, "ConfigView", (PyObject *)st->config_view_type) < 0 || add_testing(m) < 0)
        return -1;
    return 0;
}

static PyModuleDef_Slot core_slots[] = {
    {Py_mod_exec, SLOT_FN(core_exec)},
#ifdef Py_mod_multiple_interpreters
    /* pyset.c's pool of tables is shared by the process: one GIL for every interpreter that imports this */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef core_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "neatpar.evolution._core",
    .m_doc = "neat-python's genome operators and speciation distances in C, draw for draw.",
    .m_size = sizeof(CoreState),
    .m_methods = module_methods,
    .m_slots = core_slots,
    .m_traverse = core_traverse,
    .m_clear = core_clear,
    .m_free = core_free,
};

PyMODINIT_FUNC
PyInit__core(void)
{
    return PyModuleDef_Init(&core_def);
}
