/* DefaultSpeciesSet.speciate's distance work: neat-python's distance cache re-enacted, and the two
loops that pick representatives and place genomes (their distances from distances.c). */
#include "speciation.h"
#include "config.h"
#include "distances.h"
#include "genomes.h"
#include "../../python_sum.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* GenomeDistanceCache, exactly: a distance asked for again (in either order) is the one computed
   first, and every new distance goes into the values neat-python averages, twice (once per order;
   once when both keys are equal).

   Genomes are numbered densely (members by position; an old representative not in the population
   after them). With distinct keys, a pair can be asked for twice only if one of its genomes is an
   old representative that is also a member (an elite kept its key): only such "hot" genomes keep
   a row of the distances computed with them. With repeated keys every genome is hot. */
typedef struct {
    int64_t *keys;               /* dense number -> key */
    Py_ssize_t count;            /* genomes numbered */
    int32_t *hot;                /* dense number -> hot row, or -1 */
    Py_ssize_t nhot;
    double *rows;                /* nhot x count */
    uint8_t *known;              /* nhot x count */
    double *values;
    Py_ssize_t nvalues, values_cap;
} DistCache;

static void
cache_free(DistCache *c)
{
    PyMem_Free(c->keys);
    PyMem_Free(c->hot);
    PyMem_Free(c->rows);
    PyMem_Free(c->known);
    PyMem_Free(c->values);
}

/* distances(genome0, genome1), genomes by dense number, with the fresh value `computed` (what
   genome0.distance(genome1) gives): the value computed first if the pair was asked for before,
   else `computed`, recorded. */
static int
cache_ask(DistCache *c, Py_ssize_t x, Py_ssize_t y, double computed, double *out)
{
    int32_t hx = c->hot[x], hy = c->hot[y];
    if (hx >= 0 && c->known[hx * c->count + y]) {
        *out = c->rows[hx * c->count + y];
        return 0;
    }
    if (hy >= 0 && c->known[hy * c->count + x]) {
        *out = c->rows[hy * c->count + x];
        return 0;
    }
    if (hx >= 0) {
        c->known[hx * c->count + y] = 1;
        c->rows[hx * c->count + y] = computed;
    }
    if (hy >= 0) {
        c->known[hy * c->count + x] = 1;
        c->rows[hy * c->count + x] = computed;
    }
    if (reserve((void **)&c->values, &c->values_cap, c->nvalues + 2, sizeof(double)) < 0)
        return -1;
    c->values[c->nvalues++] = computed;
    if (c->keys[x] != c->keys[y])
        c->values[c->nvalues++] = computed;
    *out = computed;
    return 0;
}

typedef struct {
    Genes *genes;                /* owned */
    int64_t key;                 /* genome.key */
    Py_ssize_t number;           /* dense number in the cache */
} Member;

/* Whether a genome's class computes distances as neat-python's (its `distance` one of the
   functions in `distances`); the last class found so is remembered in *known. -1 on error. */
static int
distance_kept(PyObject *genome, PyObject *distances, PyObject **known)
{
    PyObject *type = (PyObject *)Py_TYPE(genome);
    if (type == *known)
        return 1;
    PyObject *fn = PyObject_GetAttrString(type, "distance");
    if (!fn)
        return -1;
    int found = PySequence_Contains(distances, fn);
    Py_DECREF(fn);
    if (found > 0)
        *known = type;
    return found;
}

static int
member_load(CoreState *st, Member *m, PyObject *genome, Py_ssize_t *largest)
{
    m->genes = genes_of(st, genome, NULL);
    if (!m->genes || !view_of(m->genes))
        return -1;
    Py_ssize_t size = m->genes->nn > m->genes->nc ? m->genes->nn : m->genes->nc;
    if (size > *largest)
        *largest = size;
    PyObject *k = PyObject_GetAttr(genome, st->str_key);
    if (!k)
        return -1;
    m->key = PyLong_AsLongLong(k);
    Py_DECREF(k);
    return (m->key == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* Numbers every genome: members by position, an old representative by its member's number when
   it is one (an elite), else after them; the old representatives that are members are hot. Keys
   must be distinct among the members and among the old representatives: 1 (and nothing made)
   where they are not. */
static int
cache_init(DistCache *c, Member *members, Py_ssize_t n, Member *olds, Py_ssize_t nold)
{
    memset(c, 0, sizeof *c);
    c->keys = PyMem_Malloc(sizeof(int64_t) * (n + nold + 1));
    c->hot = PyMem_Malloc(sizeof(int32_t) * (n + nold + 1));
    NodeIdx *sorted = PyMem_Malloc(sizeof(NodeIdx) * (n + 1));
    if (!c->keys || !c->hot || !sorted) {
        PyMem_Free(sorted);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        members[i].number = i;
        c->keys[i] = members[i].key;
        c->hot[i] = -1;
        sorted[i] = (NodeIdx){members[i].key, (int32_t)i};
    }
    qsort(sorted, n, sizeof(NodeIdx), cmp_node_idx);
    int repeated = 0;
    for (Py_ssize_t i = 1; i < n && !repeated; i++)
        repeated = sorted[i].key == sorted[i - 1].key;
    for (Py_ssize_t k = 0; k < nold && !repeated; k++)
        for (Py_ssize_t j = 0; j < k && !repeated; j++)
            repeated = olds[k].key == olds[j].key;
    if (repeated) {
        PyMem_Free(sorted);
        return 1;
    }
    c->count = n;
    for (Py_ssize_t k = 0; k < nold; k++) {
        NodeIdx probe = {olds[k].key, 0};
        NodeIdx *at = n ? bsearch(&probe, sorted, n, sizeof(NodeIdx), cmp_node_idx) : NULL;
        if (at) {
            olds[k].number = at->pos;
            if (c->hot[at->pos] < 0)
                c->hot[at->pos] = (int32_t)c->nhot++;
        }
        else {
            olds[k].number = c->count;
            c->keys[c->count] = olds[k].key;
            c->hot[c->count++] = -1;
        }
    }
    PyMem_Free(sorted);
    size_t cells = (size_t)c->nhot * c->count;
    c->rows = PyMem_Malloc(sizeof(double) * (cells + 1));
    c->known = PyMem_Calloc(cells + 1, 1);
    if (!c->rows || !c->known) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* neat.math_util.mean and stdev of the cache's values, in its insertion order. Returns 1 where
   neat-python's stdev raises OverflowError: float.__pow__(x, 2) of a finite x whose square is out
   of range (an infinite or NaN x squares without an error). */
static int
spread(const DistCache *c, double *mean, double *sd)
{
    const double m = python_sum(c->values, c->nvalues) / (double)c->nvalues;
    PythonSum ss = {0.0, 0.0};
    for (Py_ssize_t i = 0; i < c->nvalues; i++) {
        double x = c->values[i] - m;
        /* float.__pow__(x, 2): libm pow on |x| (the sign of an even power drops) */
        double square = x == 0.0 ? 0.0 : pow(x < 0 ? -x : x, 2.0);
        if (isinf(square) && isfinite(x))
            return 1;
        python_sum_add(&ss, square);
    }
    *mean = m;
    *sd = sqrt(python_sum_value(ss) / (double)c->nvalues);
    return 0;
}

/* The OverflowError float.__pow__ raises, as an object to raise later (neat-python raises it
   after the species are updated). */
static PyObject *
overflow_error(void)
{
    errno = ERANGE;
    PyErr_SetFromErrno(PyExc_OverflowError);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

static PyObject *
new_group(PyObject *first)
{
    PyObject *lst = PyList_New(1);
    if (lst)
        PyList_SET_ITEM(lst, 0, Py_NewRef(first));
    return lst;
}

/* One speciate call's work: its arguments, its genomes' records, the distance cache, and the
   species it builds (species k: representative member rep_of[k], id rep_sids[k], members'
   ids groups[k]). */
typedef struct {
    CoreState *st;
    PyObject *population, *unspeciated, *old_reps, *indexer;   /* the arguments (borrowed) */
    double threshold, cdc, cwc;
    Py_ssize_t n, nold, largest;      /* members (the unspeciated), old representatives, genes of the largest */
    Member *members, *olds;           /* olds: the old representatives, after the members */
    Genes **genes;                    /* every genome's records: members, then old representatives */
    IdCounts ids;
    DistCache cache;
    Py_ssize_t *alive, nalive;        /* the members not yet placed, in unspeciated order */
    Py_ssize_t *rep_of, nreps;        /* species -> its representative member */
    double **rep_row;                 /* species -> its distances to the members left after phase 1 */
    Py_ssize_t *row_from;             /* species -> the first of those members its row covers */
    double *d1, *d2;                  /* phase 1's grid of distances, phase 2's */
    Genes **left;                     /* phase 2: the records of the members left */
    PyObject *rep_sids, *groups;
} Speciation;

/* Whether neat-python's code speciates instead (1): a genome of a class that changes distance
   (when `distances` is given). -1 on error. */
static int
distance_changed(PyObject *population, PyObject *unspeciated, PyObject *old_reps, PyObject *distances)
{
    PyObject *known = NULL;
    for (Py_ssize_t i = 0; distances && i < PyList_GET_SIZE(old_reps) + PyList_GET_SIZE(unspeciated); i++) {
        PyObject *g = NULL;
        if (i < PyList_GET_SIZE(old_reps)) {
            PyObject *pair = PyList_GET_ITEM(old_reps, i);
            if (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2)
                g = PyTuple_GET_ITEM(pair, 1);
        }
        else {
            g = PyDict_GetItemWithError(population, PyList_GET_ITEM(unspeciated, i - PyList_GET_SIZE(old_reps)));
            if (!g && PyErr_Occurred())
                return -1;
        }
        int kept = g ? distance_kept(g, distances, &known) : 1;
        if (kept <= 0)
            return kept < 0 ? -1 : 1;
    }
    return 0;
}

/* The call's arrays, and every genome's records read: the members by position, then the old
   representatives. */
static int
sp_load(Speciation *sp)
{
    Py_ssize_t n = sp->n, nold = sp->nold;
    sp->members = PyMem_Calloc(n + nold + 1, sizeof(Member));
    sp->olds = sp->members ? sp->members + n : NULL;
    sp->genes = PyMem_Malloc(sizeof(Genes *) * (n + nold + 1));
    sp->alive = PyMem_Malloc(sizeof(Py_ssize_t) * (n + 1));
    sp->rep_of = PyMem_Malloc(sizeof(Py_ssize_t) * (n + nold + 1));
    sp->rep_row = PyMem_Calloc(n + nold + 1, sizeof(double *));
    sp->row_from = PyMem_Calloc(n + nold + 1, sizeof(Py_ssize_t));
    sp->rep_sids = PyList_New(0);
    sp->groups = PyList_New(0);
    if (!sp->members || !sp->genes || !sp->alive || !sp->rep_of || !sp->rep_row || !sp->row_from || !sp->rep_sids
        || !sp->groups) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *gid = PyList_GET_ITEM(sp->unspeciated, i);
        PyObject *g = PyDict_GetItemWithError(sp->population, gid);
        if (!g) {
            if (!PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, gid);
            return -1;
        }
        if (member_load(sp->st, &sp->members[i], g, &sp->largest) < 0)
            return -1;
        sp->genes[i] = sp->members[i].genes;
        sp->alive[i] = i;
    }
    for (Py_ssize_t k = 0; k < nold; k++) {
        PyObject *pair = PyList_GET_ITEM(sp->old_reps, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "speciate(): old representatives are (sid, genome) pairs");
            return -1;
        }
        if (member_load(sp->st, &sp->olds[k], PyTuple_GET_ITEM(pair, 1), &sp->largest) < 0)
            return -1;
        sp->genes[n + k] = sp->olds[k].genes;
    }
    return 0;
}

static void
sp_free(Speciation *sp)
{
    if (sp->members)
        for (Py_ssize_t i = 0; i < sp->n + sp->nold; i++)
            Py_XDECREF(sp->members[i].genes);
    if (sp->rep_row)
        for (Py_ssize_t k = sp->nold; k < sp->nreps; k++)
            PyMem_Free(sp->rep_row[k]);
    PyMem_Free(sp->members);
    PyMem_Free(sp->genes);
    PyMem_Free(sp->alive);
    PyMem_Free(sp->rep_of);
    PyMem_Free(sp->rep_row);
    PyMem_Free(sp->row_from);
    PyMem_Free(sp->d1);
    PyMem_Free(sp->d2);
    PyMem_Free(sp->left);
    cache_free(&sp->cache);  /* zeroed at the start: whatever cache_init made, or nothing */
    Py_XDECREF(sp->rep_sids);
    Py_XDECREF(sp->groups);
}

/* min(candidates, key=distance) for old species k: the first closest member left, in unspeciated
   order (its place in alive, through *best). */
static int
closest_member(Speciation *sp, Py_ssize_t k, Py_ssize_t *best)
{
    if (sp->nalive == 0) {
        PyErr_SetString(PyExc_ValueError, "min() arg is an empty sequence");
        return -1;
    }
    double best_d = 0.0;
    *best = 0;
    for (Py_ssize_t a = 0; a < sp->nalive; a++) {
        double d;
        Py_ssize_t m = sp->alive[a];
        if (cache_ask(&sp->cache, sp->olds[k].number, sp->members[m].number, sp->d1[k * sp->n + m], &d) < 0)
            return -1;
        if (a == 0 || d < best_d) {
            *best = a;
            best_d = d;
        }
    }
    return 0;
}

/* Old species k's new representative, alive[best]: new_rid = new_rep.key;
   unspeciated.remove(new_rid) (the first member left with that key leaves the candidates). */
static int
take_representative(Speciation *sp, Py_ssize_t k, Py_ssize_t best)
{
    int64_t rid = sp->members[sp->alive[best]].key;
    Py_ssize_t at = -1;
    for (Py_ssize_t a = 0; a < sp->nalive && at < 0; a++) {
        long long gv = PyLong_AsLongLong(PyList_GET_ITEM(sp->unspeciated, sp->alive[a]));
        if (gv == -1 && PyErr_Occurred())
            return -1;
        if (gv == rid)
            at = a;
    }
    if (at < 0) {
        PyErr_SetString(PyExc_ValueError, "list.remove(x): x not in list");
        return -1;
    }
    sp->rep_of[k] = sp->alive[best];
    memmove(&sp->alive[at], &sp->alive[at + 1], sizeof(Py_ssize_t) * (sp->nalive - at - 1));
    sp->nalive--;
    PyObject *rid_obj = PyLong_FromLongLong(rid);
    PyObject *group = rid_obj ? new_group(rid_obj) : NULL;
    Py_XDECREF(rid_obj);
    int bad = !group || PyList_Append(sp->rep_sids, PyTuple_GET_ITEM(PyList_GET_ITEM(sp->old_reps, k), 0)) < 0
              || PyList_Append(sp->groups, group) < 0;
    Py_XDECREF(group);
    return bad ? -1 : 0;
}

/* Phase 1: each old species (ascending id) takes the closest member left as its new
   representative. Old representative k against every member first (those asked for are read). */
static int
choose_representatives(Speciation *sp)
{
    sp->d1 = PyMem_Malloc(sizeof(double) * (sp->nold * sp->n + 1));
    if (!sp->d1 || grid_compute(sp->st->distance_threads, sp->genes + sp->n, sp->nold, sp->genes, sp->n, sp->d1,
                                sp->largest, &sp->ids, sp->cdc, sp->cwc) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    sp->nalive = sp->n;
    for (Py_ssize_t k = 0; k < sp->nold; k++) {
        Py_ssize_t best;
        if (closest_member(sp, k, &best) < 0 || take_representative(sp, k, best) < 0)
            return -1;
    }
    sp->nreps = sp->nold;
    return 0;
}

/* Phase 2's first distances: the new representatives against the members left. */
static int
representative_rows(Speciation *sp)
{
    Py_ssize_t nold = sp->nold, nalive = sp->nalive;
    sp->left = PyMem_Malloc(sizeof(Genes *) * (nalive + 1));
    Genes **rep_genes = PyMem_Malloc(sizeof(Genes *) * (nold + 1));
    if (!sp->left || !rep_genes) {
        PyMem_Free(rep_genes);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t a = 0; a < nalive; a++)
        sp->left[a] = sp->members[sp->alive[a]].genes;
    for (Py_ssize_t k = 0; k < nold; k++)
        rep_genes[k] = sp->members[sp->rep_of[k]].genes;
    sp->d2 = PyMem_Malloc(sizeof(double) * (nold * nalive + 1));
    int grid_failed = !sp->d2 || grid_compute(sp->st->distance_threads, rep_genes, nold, sp->left, nalive, sp->d2,
                                              sp->largest, &sp->ids, sp->cdc, sp->cwc) < 0;
    PyMem_Free(rep_genes);
    if (grid_failed) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < nold; k++) {
        sp->rep_row[k] = sp->d2 + k * nalive;
        sp->row_from[k] = 0;
    }
    return 0;
}

/* The species whose representative is closest to member left `a` under the threshold, the first
   such in species order (-1: none), through *best. */
static int
closest_species(Speciation *sp, Py_ssize_t a, Py_ssize_t *best)
{
    const Member *g = &sp->members[sp->alive[a]];
    double best_d = 0.0;
    *best = -1;
    for (Py_ssize_t k = 0; k < sp->nreps; k++) {
        double d;
        if (cache_ask(&sp->cache, sp->members[sp->rep_of[k]].number, g->number, sp->rep_row[k][a - sp->row_from[k]],
                      &d) < 0)
            return -1;
        if (d < sp->threshold && (*best < 0 || d < best_d)) {
            *best = k;
            best_d = d;
        }
    }
    return 0;
}

/* Member left `a` founds a species: its id next(indexer), and its row of distances to the members
   left after it. */
static int
found_species(Speciation *sp, Py_ssize_t a)
{
    Member *g = &sp->members[sp->alive[a]];
    PyObject *sid = PyIter_Next(sp->indexer);
    PyObject *group = sid ? new_group(PyList_GET_ITEM(sp->unspeciated, sp->alive[a])) : NULL;
    int bad = !group || PyList_Append(sp->rep_sids, sid) < 0 || PyList_Append(sp->groups, group) < 0;
    Py_XDECREF(sid);
    Py_XDECREF(group);
    Py_ssize_t rest = sp->nalive - a - 1;
    double *row = bad ? NULL : PyMem_Malloc(sizeof(double) * (rest + 1));
    if (!row || grid_compute(sp->st->distance_threads, &g->genes, 1, sp->left + a + 1, rest, row, sp->largest,
                             &sp->ids, sp->cdc, sp->cwc) < 0) {
        PyMem_Free(row);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "neatpar: the species indexer ran out");
        return -1;
    }
    sp->rep_of[sp->nreps] = sp->alive[a];
    sp->rep_row[sp->nreps] = row;
    sp->row_from[sp->nreps] = a + 1;
    sp->nreps++;
    return 0;
}

/* Phase 2: each member left (ascending key) joins the species of the closest representative
   under the threshold, or founds a species. */
static int
place_members(Speciation *sp)
{
    if (representative_rows(sp) < 0)
        return -1;
    for (Py_ssize_t a = 0; a < sp->nalive; a++) {
        Py_ssize_t best;
        if (closest_species(sp, a, &best) < 0)
            return -1;
        if (best < 0 ? found_species(sp, a) < 0
                     : PyList_Append(PyList_GET_ITEM(sp->groups, best), PyList_GET_ITEM(sp->unspeciated, sp->alive[a])) < 0)
            return -1;
    }
    return 0;
}

/* speciate()'s answer once both phases ran: the representatives as (sid, rid) pairs, the groups,
   and the mean and stdev of the distances neat-python averages (None for a population of one or
   no distance; the OverflowError its stdev raises, as an object). */
static PyObject *
sp_result(Speciation *sp)
{
    PyObject *stats;
    if (PyDict_GET_SIZE(sp->population) > 1 && sp->cache.nvalues > 0) {
        double m, sd;
        stats = spread(&sp->cache, &m, &sd) ? overflow_error() : Py_BuildValue("(dd)", m, sd);
    }
    else {
        stats = Py_NewRef(Py_None);
    }
    PyObject *reps = stats ? PyList_New(sp->nreps) : NULL;
    for (Py_ssize_t k = 0; reps && k < sp->nreps; k++) {
        PyObject *rid = PyLong_FromLongLong(sp->members[sp->rep_of[k]].key);
        PyObject *pair = rid ? PyTuple_Pack(2, PyList_GET_ITEM(sp->rep_sids, k), rid) : NULL;
        Py_XDECREF(rid);
        if (!pair) {
            Py_CLEAR(reps);
            break;
        }
        PyList_SET_ITEM(reps, k, pair);
    }
    if (!reps) {
        Py_XDECREF(stats);
        return NULL;
    }
    return Py_BuildValue("(NON)", reps, sp->groups, stats);
}

/* speciate(genome_config, population, unspeciated, old_representatives, threshold, indexer[, distances])
   -> (representatives [(sid, rid)], members [[gid, ...]], (mean, stdev), None, or the
      OverflowError neat-python's stdev raises)

   The two loops of DefaultSpeciesSet.speciate: each old species (ascending id) takes the closest
   unspeciated genome as its new representative; then each remaining genome (ascending key) joins
   the species of the closest representative under the threshold, or founds a species. The
   distances each loop needs are computed first, in parallel; the loops then run in order.
   NotImplemented (neat-python's code decides) where a genome's class has a `distance` other than
   those in `distances` (when given) or genome keys repeat (the distance cache is keyed by genome
   key; neat-python's tolerates repeats, the C one does not). */
PyObject *
speciate(PyObject *mod, PyObject *args)
{
    Speciation sp;
    memset(&sp, 0, sizeof sp);
    sp.st = core_state(mod);
    PyObject *config, *distances = NULL;
    if (!PyArg_ParseTuple(args, "OO!O!O!dO|O!", &config, &PyDict_Type, &sp.population, &PyList_Type,
                          &sp.unspeciated, &PyList_Type, &sp.old_reps, &sp.threshold, &sp.indexer, &PyTuple_Type,
                          &distances))
        return NULL;
    if (!standard_config(sp.st, config))
        Py_RETURN_NOTIMPLEMENTED;
    int changed = distance_changed(sp.population, sp.unspeciated, sp.old_reps, distances);
    if (changed != 0)
        return changed < 0 ? NULL : Py_NewRef(Py_NotImplemented);
    if (cfg_double(config, "compatibility_disjoint_coefficient", &sp.cdc) < 0
        || cfg_double(config, "compatibility_weight_coefficient", &sp.cwc) < 0)
        return NULL;
    sp.n = PyList_GET_SIZE(sp.unspeciated);
    sp.nold = PyList_GET_SIZE(sp.old_reps);
    PyObject *result = NULL;
    int cached = sp_load(&sp) < 0 ? -1 : cache_init(&sp.cache, sp.members, sp.n, sp.olds, sp.nold);
    if (cached > 0)
        result = Py_NewRef(Py_NotImplemented);
    else if (cached == 0 && number_genes(sp.genes, sp.n + sp.nold, &sp.ids) == 0 && choose_representatives(&sp) == 0
             && place_members(&sp) == 0)
        result = sp_result(&sp);
    sp_free(&sp);
    return result;
}

PyObject *
py_set_threads(PyObject *mod, PyObject *arg)
{
    long t = PyLong_AsLong(arg);
    if (t == -1 && PyErr_Occurred())
        return NULL;
    CoreState *st = core_state(mod);
    int previous = st->distance_threads;
    st->distance_threads = t < 1 ? 1 : t > 16 ? 16 : (int)t;
    return PyLong_FromLong(previous);
}
