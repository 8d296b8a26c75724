/* DefaultReproduction.reproduce's children, made in C (breed). */
#include "reproduction.h"
#include "genomes.h"
#include "operators.h"

#include <math.h>


/* A species' parents for its children: (gid, genome) pairs, their records and fitnesses read once. */
typedef struct {
    PyObject *pairs;             /* the list of (gid, genome) */
    Py_ssize_t n;
    Genes **genes;               /* owned */
    PyObject **fitness;          /* owned */
} Parents;

static void
parents_free(Parents *p)
{
    for (Py_ssize_t i = 0; i < p->n; i++) {
        Py_XDECREF(p->genes[i]);
        Py_XDECREF(p->fitness[i]);
    }
    PyMem_Free(p->genes);
    PyMem_Free(p->fitness);
}

static int
parents_load(CoreState *st, Parents *p, PyObject *pairs, PyObject *snapshots)
{
    p->pairs = pairs;
    p->n = PyList_GET_SIZE(pairs);
    p->genes = PyMem_Calloc(p->n + 1, sizeof(Genes *));
    p->fitness = PyMem_Calloc(p->n + 1, sizeof(PyObject *));
    if (!p->genes || !p->fitness) {
        p->n = 0;
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < p->n; i++) {
        PyObject *pair = PyList_GET_ITEM(pairs, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "breed(): parents are (genome_id, genome) pairs");
            return -1;
        }
        PyObject *genome = PyTuple_GET_ITEM(pair, 1);
        if (!(p->fitness[i] = PyObject_GetAttr(genome, st->str_fitness))
            || !(p->genes[i] = genes_of(st, genome, snapshots)))
            return -1;
    }
    return 0;
}

/* A new neatpar genome, as DefaultGenome(gid) makes it (key, _genes, fitness), without a Python
   frame; its Genes through *genes (borrowed). */
static PyObject *
new_genome(CoreState *st, PyObject *gid, Genes **genes)
{
    PyObject *genome = PyBaseObject_Type.tp_new((PyTypeObject *)st->genome_class, st->empty_tuple, NULL);
    Genes *g = genome ? genes_alloc(st, 0, 0) : NULL;
    if (!g || PyObject_SetAttr(genome, st->str_key, gid) < 0
        || PyObject_SetAttr(genome, st->str_genes, (PyObject *)g) < 0
        || PyObject_SetAttr(genome, st->str_fitness, Py_None) < 0) {
        Py_XDECREF(g);
        Py_XDECREF(genome);
        return NULL;
    }
    *genes = g;
    Py_DECREF(g);
    return genome;
}

/* One child, as DefaultReproduction.reproduce's loop makes it:
       parent1, parent2 = choice(old_members), choice(old_members)
       gid = next(genome_indexer); child = genome_type(gid)
       child.configure_crossover(parent1, parent2, config); child.mutate(config)
       new_population[gid] = child; ancestors[gid] = (parent1_id, parent2_id)
   `r` is drawing (begun); it is ended around any Python code that might draw itself. */
static int
breed_one(Rng *r, const Cfg *c, const Parents *parents, PyObject *indexer, PyObject *genome_type,
          PyObject *population, PyObject *ancestors)
{
    Py_ssize_t i1 = rng_choice(r, parents->n), i2 = i1 < 0 ? -1 : rng_choice(r, parents->n);
    if (i2 < 0)
        return -1;
    PyObject *m1 = PyList_GET_ITEM(parents->pairs, i1), *m2 = PyList_GET_ITEM(parents->pairs, i2);
    PyObject *gid = PyIter_Next(indexer), *child = NULL;
    int rc = -1;
    if (!gid) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "neatpar: the genome indexer ran out");
        return -1;
    }
    Genes *g = NULL;
    if (genome_type == c->st->genome_class && c->standard) {
        int gt = fitter_first(parents->fitness[i1], parents->fitness[i2]);
        child = gt < 0 ? NULL : new_genome(c->st, gid, &g);
        if (!child || crossover_genes(r, c, g, parents->genes[gt ? i1 : i2], parents->genes[gt ? i2 : i1]) < 0
            || mutate(r, c, g) < 0)
            goto done;
        genes_changed(g);
    }
    else {
        /* another class: made by its own constructor, bred in C if it keeps neatpar's operators,
           else by its own methods (with the genome config itself) */
        PyObject *p1 = PyTuple_GET_ITEM(m1, 1), *p2 = PyTuple_GET_ITEM(m2, 1);
        if (rng_end(r) < 0)
            goto done;
        child = PyObject_CallOneArg(genome_type, gid);
        g = child && c->standard ? operand(c->st, child, 1) : NULL;
        int op = child && !PyErr_Occurred() ? 0 : -1;
        if (op == 0 && g) {
            op = begin(c->st, r);
            if (op == 0) {
                int gt = fitter_first(parents->fitness[i1], parents->fitness[i2]);
                if (gt < 0 || crossover_genes(r, c, g, parents->genes[gt ? i1 : i2], parents->genes[gt ? i2 : i1]) < 0
                    || mutate(r, c, g) < 0)
                    op = -1;
            }
            genes_changed(g);
            if (rng_end(r) < 0)
                op = -1;
        }
        else if (op == 0) {
            PyObject *v = PyObject_CallMethod(child, "configure_crossover", "OOO", p1, p2, c->config);
            Py_XDECREF(v);
            v = v ? PyObject_CallMethod(child, "mutate", "O", c->config) : NULL;
            Py_XDECREF(v);
            op = v ? 0 : -1;
        }
        Py_XDECREF(g);
        if (begin(c->st, r) < 0 || op < 0)
            goto done;
    }
    PyObject *pair = PyTuple_Pack(2, PyTuple_GET_ITEM(m1, 0), PyTuple_GET_ITEM(m2, 0));
    if (pair && !PyObject_IS_GC(PyTuple_GET_ITEM(pair, 0)) && !PyObject_IS_GC(PyTuple_GET_ITEM(pair, 1)))
        PyObject_GC_UnTrack(pair);  /* two ids: what the collector would untrack at its first look */
    rc = (!pair || PyDict_SetItem(population, gid, child) < 0 || PyDict_SetItem(ancestors, gid, pair) < 0) ? -1 : 0;
    Py_XDECREF(pair);
done:
    Py_XDECREF(child);
    Py_DECREF(gid);
    return rc;
}

/* breed(view, [(elites, parents, spawn), ...], genome_indexer, genome_type, new_population,
         ancestors, snapshots): each species' elites (gid, genome) and then its `spawn` children,
   species after species, into new_population. */
PyObject *
py_breed(PyObject *mod, PyObject *args)
{
    CoreState *st = core_state(mod);
    PyObject *view, *jobs, *indexer, *genome_type, *population, *ancestors, *snapshots;
    if (!PyArg_ParseTuple(args, "O!O!OOO!O!O", st->config_view_type, &view, &PyList_Type, &jobs, &indexer,
                          &genome_type, &PyDict_Type, &population, &PyDict_Type, &ancestors, &snapshots))
        return NULL;
    const Cfg *c = &((ConfigView *)view)->cfg;
    PyObject *snaps = PyDict_Check(snapshots) ? snapshots : NULL;
    Rng r;
    if (begin(st, &r) < 0)
        return NULL;
    /* Thousands of new objects: the cyclic collector runs once afterwards, not on the way. */
    int collecting = PyGC_Disable(), rc = 0;
    for (Py_ssize_t j = 0; rc == 0 && j < PyList_GET_SIZE(jobs); j++) {
        PyObject *elites, *parents;
        Py_ssize_t spawn;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(jobs, j), "O!O!n;breed(): jobs are (elites, parents, spawn)",
                              &PyList_Type, &elites, &PyList_Type, &parents, &spawn)) {
            rc = -1;
            break;
        }
        for (Py_ssize_t e = 0; rc == 0 && e < PyList_GET_SIZE(elites); e++) {
            PyObject *pair = PyList_GET_ITEM(elites, e);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2
                || PyDict_SetItem(population, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "breed(): elites are (genome_id, genome) pairs");
                rc = -1;
            }
        }
        if (spawn <= 0 || rc < 0)
            continue;
        Parents ps = {NULL, 0, NULL, NULL};
        rc = parents_load(st, &ps, parents, snaps);
        for (; rc == 0 && spawn > 0; spawn--)
            rc = breed_one(&r, c, &ps, indexer, genome_type, population, ancestors);
        parents_free(&ps);
    }
    if (collecting)
        PyGC_Enable();
    if (rng_end(&r) < 0)
        rc = -1;
    return rc < 0 ? NULL : Py_NewRef(Py_None);
}

/* ------------------------------------------------------------------------------------------ */
/* A species' members ranked, and a species' members as a dict                                */

typedef struct {
    double fitness;
    int64_t key;
    PyObject *pair;
} Ranked;

static int
cmp_ranked(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    if (x->fitness != y->fitness)
        return x->fitness < y->fitness ? 1 : -1;
    return x->key < y->key ? 1 : x->key > y->key ? -1 : 0;
}

/* ranked(members) -> [(gid, genome), ...] in descending (fitness, gid) order, as
   sorted(members.items(), reverse=True, key=lambda x: (x[1].fitness, x[0])) gives it; None when
   a fitness is not a float or is NaN, or a key not an int of 64 bits (that sort then decides).
   The pairs' keys are distinct, so no two compare equal and the order is the sort's exactly. */
PyObject *
py_ranked(PyObject *mod, PyObject *members)
{
    CoreState *st = core_state(mod);
    if (!PyDict_Check(members)) {
        PyErr_SetString(PyExc_TypeError, "ranked() takes a dict of members");
        return NULL;
    }
    Py_ssize_t n = PyDict_GET_SIZE(members), pos = 0, i = 0;
    Ranked *r = PyMem_Malloc(sizeof(Ranked) * (n + 1));
    PyObject *items = PyList_New(n), *key, *genome, *result = NULL;
    if (!r || !items) {
        PyMem_Free(r);
        Py_XDECREF(items);
        return PyErr_NoMemory();
    }
    while (PyDict_Next(members, &pos, &key, &genome)) {
        PyObject *fitness = PyObject_GetAttr(genome, st->str_fitness);
        if (!fitness)
            goto done;
        int usable = PyFloat_CheckExact(fitness) && !isnan(PyFloat_AS_DOUBLE(fitness)) && PyLong_CheckExact(key);
        r[i].fitness = usable ? PyFloat_AS_DOUBLE(fitness) : 0.0;
        Py_DECREF(fitness);
        int overflow = 0;
        r[i].key = usable ? PyLong_AsLongLongAndOverflow(key, &overflow) : 0;
        if (!usable || overflow) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        r[i].pair = PyTuple_Pack(2, key, genome);
        if (!r[i].pair)
            goto done;
        PyList_SET_ITEM(items, i, r[i].pair);
        i++;
    }
    qsort(r, n, sizeof(Ranked), cmp_ranked);
    result = PyList_New(n);
    for (Py_ssize_t k = 0; result && k < n; k++)
        PyList_SET_ITEM(result, k, Py_NewRef(r[k].pair));
done:
    PyMem_Free(r);
    Py_DECREF(items);
    return result;
}

/* members_of(population, group, sid, genome_to_species) -> {gid: population[gid] for gid in
   group}, each gid set to sid in genome_to_species on the way (DefaultSpeciesSet.speciate's loop
   over one species' members). */
PyObject *
py_members_of(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *population, *group, *sid, *to_species;
    if (!PyArg_ParseTuple(args, "O!O!OO!", &PyDict_Type, &population, &PyList_Type, &group, &sid, &PyDict_Type,
                          &to_species))
        return NULL;
    PyObject *members = PyDict_New();
    for (Py_ssize_t i = 0; members && i < PyList_GET_SIZE(group); i++) {
        PyObject *gid = PyList_GET_ITEM(group, i), *genome = PyDict_GetItemWithError(population, gid);
        if (!genome) {
            if (!PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, gid);
            Py_CLEAR(members);
        }
        else if (PyDict_SetItem(to_species, gid, sid) < 0 || PyDict_SetItem(members, gid, genome) < 0)
            Py_CLEAR(members);
    }
    return members;
}
