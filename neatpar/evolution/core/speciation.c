/* Distances (DefaultGenome.distance) and DefaultSpeciesSet.speciate's distance work, on several
threads. */
#include "core.h"
#include "threads_shim.h"
#include "../../python_sum.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Distance (DefaultGenome.distance, genes' distance)                                         */

static int
scratch_reserve(Scratch *s, Py_ssize_t n)
{
    if (n <= s->cap)
        return 0;
    int32_t *m = PyMem_Realloc(s->match, sizeof(int32_t) * n);
    if (!m) {
        PyErr_NoMemory();
        return -1;
    }
    s->match = m;
    s->cap = n;
    return 0;
}

/* g0.distance(g1) over their views. match[p] is the position in g1 of g0's gene p, or -1 (slot n
   is a sink for genes of g1 that g0 lacks). The sums run in g0's dict order, as neat-python's. */
double
genes_distance(const Genes *ga, const Genes *gb, double cdc, double cwc, Scratch *s)
{
    const View *a = ga->view, *b = gb->view;
    double node_distance = 0.0, connection_distance = 0.0;
    int32_t *match = s->match;
    if (a->nn || b->nn) {
        Py_ssize_t matched = 0;
        memset(match, 0xff, sizeof(int32_t) * (a->nn + 1));
        if (a->nn)
            for (Py_ssize_t j = 0; j < b->nn; j++) {
                Py_ssize_t p = view_node(a, b->nkey[j], b->nhash[j]);
                int found = p >= 0;
                match[found ? p : a->nn] = (int32_t)j;
                matched += found;
            }
        Py_ssize_t disjoint = (b->nn - matched) + (a->nn - matched);
        for (Py_ssize_t k = 0; k < a->nn; k++) {
            int32_t m = match[k];
            if (m < 0)
                continue;
            /* DefaultNodeGene.distance */
            double d = fabs(a->nbias[k] - b->nbias[m]) + fabs(a->nresp[k] - b->nresp[m]);
            d += fabs(a->ntc[k] - b->ntc[m]);
            if (a->nact[k] != b->nact[m])
                d += 1.0;
            if (a->nagg[k] != b->nagg[m])
                d += 1.0;
            node_distance += d * cwc;
        }
        Py_ssize_t max_nodes = a->nn > b->nn ? a->nn : b->nn;
        node_distance = (node_distance + (cdc * (double)disjoint)) / (double)max_nodes;
    }
    if (a->nc || b->nc) {
        Py_ssize_t matched = 0;
        memset(match, 0xff, sizeof(int32_t) * (a->nc + 1));
        if (a->nc) {
            /* keys compared as packed words, or as pairs when an end of a key needs more than 32 bits */
            int packed = a->packed && b->packed;
            for (Py_ssize_t j = 0; j < b->nc; j++) {
                uint32_t h = b->chash[j] & a->cmask;
                int32_t p;
                if (packed)
                    while ((p = a->ctable[h]) >= 0 && a->ckey[p] != b->ckey[j])
                        h = (h + 1) & a->cmask;
                else
                    while ((p = a->ctable[h]) >= 0
                           && (ga->conns[p].in != gb->conns[j].in || ga->conns[p].out != gb->conns[j].out))
                        h = (h + 1) & a->cmask;
                int found = p >= 0;
                match[found ? p : a->nc] = (int32_t)j;
                matched += found;
            }
        }
        Py_ssize_t disjoint = (b->nc - matched) + (a->nc - matched);
        for (Py_ssize_t k = 0; k < a->nc; k++) {
            int32_t m = match[k];
            if (m < 0)
                continue;
            /* DefaultConnectionGene.distance */
            double d = fabs(a->cw[k] - b->cw[m]);
            if (a->cen[k] != b->cen[m])
                d += 1.0;
            connection_distance += d * cwc;
        }
        Py_ssize_t max_conn = a->nc > b->nc ? a->nc : b->nc;
        connection_distance = (connection_distance + (cdc * (double)disjoint)) / (double)max_conn;
    }
    return node_distance + connection_distance;
}

int
prepare_distance(Genes *g, Scratch *s)
{
    return (!view_of(g) || scratch_reserve(s, (g->nn > g->nc ? g->nn : g->nc) + 1) < 0) ? -1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Speciation (DefaultSpeciesSet.speciate's distance work)                                    */

/* Dense numbers for the node keys and the connection keys of every genome in one speciation
   (each gene's in its View's nid / cid): a row genome's gene positions then go into arrays indexed
   by number, and matching a column genome's genes against them is one load per gene. */
typedef struct {
    Py_ssize_t nodes, conns;
} IdCounts;

static int
number_genes(Genes **all, Py_ssize_t count, IdCounts *ids)
{
    Py_ssize_t total_n = 0, total_c = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        total_n += all[i]->view->nn;
        total_c += all[i]->view->nc;
    }
    size_t nts = table_size(total_n), cts = table_size(total_c);
    int32_t *ntab = PyMem_Malloc(4 * nts), *ctab = PyMem_Malloc(4 * cts);
    int64_t *nkeys = PyMem_Malloc(8 * (total_n + 1)), *cends = PyMem_Malloc(16 * (total_c + 1));
    int rc = -1;
    if (!ntab || !ctab || !nkeys || !cends) {
        PyErr_NoMemory();
        goto done;
    }
    memset(ntab, 0xff, 4 * nts);
    memset(ctab, 0xff, 4 * cts);
    uint32_t nmask = (uint32_t)(nts - 1), cmask = (uint32_t)(cts - 1);
    Py_ssize_t nn = 0, nc = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        const Genes *g = all[i];
        View *v = g->view;
        for (Py_ssize_t k = 0; k < v->nn; k++) {
            int64_t key = v->nkey[k];
            uint32_t h = v->nhash[k] & nmask;
            int32_t id;
            while ((id = ntab[h]) >= 0 && nkeys[id] != key)
                h = (h + 1) & nmask;
            if (id < 0) {
                id = ntab[h] = (int32_t)nn;
                nkeys[nn++] = key;
            }
            v->nid[k] = id;
        }
        for (Py_ssize_t k = 0; k < v->nc; k++) {
            int64_t in = g->conns[k].in, out = g->conns[k].out;
            uint32_t h = v->chash[k] & cmask;
            int32_t id;
            while ((id = ctab[h]) >= 0 && (cends[2 * id] != in || cends[2 * id + 1] != out))
                h = (h + 1) & cmask;
            if (id < 0) {
                id = ctab[h] = (int32_t)nc;
                cends[2 * nc] = in;
                cends[2 * nc++ + 1] = out;
            }
            v->cid[k] = id;
        }
    }
    ids->nodes = nn;
    ids->conns = nc;
    rc = 0;
done:
    PyMem_Free(ntab);
    PyMem_Free(ctab);
    PyMem_Free(nkeys);
    PyMem_Free(cends);
    return rc;
}

/* genes_distance(a, b) with a's gene positions laid out by dense number (npos, cpos; -1 where a
   lacks the gene): the same matches, the same sums in the same order. A term neat-python does not
   add is added as 0.0, which leaves the sum as it is (the sums start at +0.0 and never become
   -0.0), so that the loops have no unpredictable branch. */
static double
row_distance(const View *a, const View *b, const int32_t *npos, const int32_t *cpos, int32_t *match,
             double cdc, double cwc)
{
    double node_distance = 0.0, connection_distance = 0.0;
    if (a->nn || b->nn) {
        Py_ssize_t matched = 0;
        memset(match, 0xff, sizeof(int32_t) * (a->nn + 1));
        for (Py_ssize_t j = 0; j < b->nn; j++) {
            int32_t p = npos[b->nid[j]];
            int found = p >= 0;
            match[found ? p : a->nn] = (int32_t)j;
            matched += found;
        }
        Py_ssize_t disjoint = (b->nn - matched) + (a->nn - matched);
        if (b->nn)
            for (Py_ssize_t k = 0; k < a->nn; k++) {
                int32_t m = match[k], at = m < 0 ? 0 : m;
                /* DefaultNodeGene.distance */
                double d = fabs(a->nbias[k] - b->nbias[at]) + fabs(a->nresp[k] - b->nresp[at]);
                d += fabs(a->ntc[k] - b->ntc[at]);
                d += a->nact[k] != b->nact[at] ? 1.0 : 0.0;
                d += a->nagg[k] != b->nagg[at] ? 1.0 : 0.0;
                double term = d * cwc;
                node_distance += m >= 0 ? term : 0.0;
            }
        Py_ssize_t max_nodes = a->nn > b->nn ? a->nn : b->nn;
        node_distance = (node_distance + (cdc * (double)disjoint)) / (double)max_nodes;
    }
    if (a->nc || b->nc) {
        Py_ssize_t matched = 0;
        memset(match, 0xff, sizeof(int32_t) * (a->nc + 1));
        for (Py_ssize_t j = 0; j < b->nc; j++) {
            int32_t p = cpos[b->cid[j]];
            int found = p >= 0;
            match[found ? p : a->nc] = (int32_t)j;
            matched += found;
        }
        Py_ssize_t disjoint = (b->nc - matched) + (a->nc - matched);
        if (b->nc)
            for (Py_ssize_t k = 0; k < a->nc; k++) {
                int32_t m = match[k], at = m < 0 ? 0 : m;
                /* DefaultConnectionGene.distance */
                double d = fabs(a->cw[k] - b->cw[at]);
                d += a->cen[k] != b->cen[at] ? 1.0 : 0.0;
                double term = d * cwc;
                connection_distance += m >= 0 ? term : 0.0;
            }
        Py_ssize_t max_conn = a->nc > b->nc ? a->nc : b->nc;
        connection_distance = (connection_distance + (cdc * (double)disjoint)) / (double)max_conn;
    }
    return node_distance + connection_distance;
}

/* A grid of distances rows[r].distance(cols[c]), computed by several threads without the GIL
   (every genome's View built and its genes numbered beforehand; the threads only read). The work
   goes in tasks of one row and a block of columns, row by row, to whichever thread asks next (so
   a thread the machine keeps waiting holds up one block, not a share); a thread lays out its
   row's positions once for all the row's blocks it takes in a row. */
typedef struct {
    Genes **rows, **cols;
    Py_ssize_t nrows, ncols;
    double *out;                 /* nrows x ncols, row-major */
    Py_ssize_t scratch;          /* genes of the largest genome */
    IdCounts ids;
    double cdc, cwc;
} Grid;

#define GRID_BLOCK 32

static void
lay_out(const View *a, int32_t *npos, int32_t *cpos, int on)
{
    for (Py_ssize_t k = 0; k < a->nn; k++)
        npos[a->nid[k]] = on ? (int32_t)k : -1;
    for (Py_ssize_t k = 0; k < a->nc; k++)
        cpos[a->cid[k]] = on ? (int32_t)k : -1;
}

/* One thread's share of the grid: tasks taken until none is left; -1 when its scratch could not be had. */
static int
grid_work(void *arg, Tasks *tasks)
{
    Grid *g = arg;
    int32_t *match = malloc(sizeof(int32_t) * (g->scratch + 1));
    int32_t *npos = malloc(sizeof(int32_t) * (g->ids.nodes + 1)), *cpos = malloc(sizeof(int32_t) * (g->ids.conns + 1));
    int rc = -1;
    if (!match || !npos || !cpos)
        goto done;
    memset(npos, 0xff, sizeof(int32_t) * (g->ids.nodes + 1));
    memset(cpos, 0xff, sizeof(int32_t) * (g->ids.conns + 1));
    size_t blocks = (size_t)((g->ncols + GRID_BLOCK - 1) / GRID_BLOCK), count = blocks * (size_t)g->nrows;
    Py_ssize_t loaded = -1;
    for (;;) {
        size_t t = next_task(tasks);
        if (t >= count)
            break;
        Py_ssize_t r = (Py_ssize_t)(t / blocks), c0 = (Py_ssize_t)(t % blocks) * GRID_BLOCK;
        const View *a = g->rows[r]->view;
        if (r != loaded) {
            if (loaded >= 0)
                lay_out(g->rows[loaded]->view, npos, cpos, 0);
            lay_out(a, npos, cpos, 1);
            loaded = r;
        }
        Py_ssize_t c1 = c0 + GRID_BLOCK < g->ncols ? c0 + GRID_BLOCK : g->ncols;
        for (Py_ssize_t c = c0; c < c1; c++)
            g->out[r * g->ncols + c] = row_distance(a, g->cols[c]->view, npos, cpos, match, g->cdc, g->cwc);
    }
    rc = 0;
done:
    free(match);
    free(npos);
    free(cpos);
    return rc;
}

static int
grid_compute(int threads, Genes **rows, Py_ssize_t nrows, Genes **cols, Py_ssize_t ncols, double *out,
             Py_ssize_t scratch, const IdCounts *ids, double cdc, double cwc)
{
    if (nrows * ncols == 0)
        return 0;
    int workers = nrows * ncols < 4096 ? 1 : threads;
    Grid grid;
    grid.rows = rows;
    grid.cols = cols;
    grid.nrows = nrows;
    grid.ncols = ncols;
    grid.out = out;
    grid.scratch = scratch;
    grid.ids = *ids;
    grid.cdc = cdc;
    grid.cwc = cwc;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = run_on_threads(workers, grid_work, &grid);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

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

/* speciate(genome_config, population, unspeciated, old_representatives, threshold, indexer[, distances])
   -> (representatives [(sid, rid)], members [[gid, ...]], (mean, stdev), None, or the
      OverflowError neat-python's stdev raises)

   The two loops of DefaultSpeciesSet.speciate: each old species (ascending id) takes the closest
   unspeciated genome as its new representative; then each remaining genome (ascending key) joins
   the species of the closest representative under the threshold, or founds a species. The
   distances each loop needs are computed first, in parallel; the loops then run in order.
   NotImplemented (neat-python's code decides) where a genome's class has a `distance` other than
   those in `distances` (when given) or genome keys repeat. */
PyObject *
speciate(PyObject *mod, PyObject *args)
{
    CoreState *st = core_state(mod);
    PyObject *config, *population, *unspeciated, *old_reps, *indexer, *distances = NULL, *known = NULL;
    double threshold;
    if (!PyArg_ParseTuple(args, "OO!O!O!dO|O!", &config, &PyDict_Type, &population, &PyList_Type, &unspeciated,
                          &PyList_Type, &old_reps, &threshold, &indexer, &PyTuple_Type, &distances))
        return NULL;
    if (!standard_config(st, config))
        Py_RETURN_NOTIMPLEMENTED;
    /* neat-python's code for genomes whose class changes distance, and for repeated keys (the
       distance cache is keyed by genome key; neat-python's tolerates them, the C one does not) */
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
                return NULL;
        }
        int kept = g ? distance_kept(g, distances, &known) : 1;
        if (kept < 0)
            return NULL;
        if (!kept)
            Py_RETURN_NOTIMPLEMENTED;
    }
    double cdc, cwc;
    if (cfg_double(config, "compatibility_disjoint_coefficient", &cdc) < 0
        || cfg_double(config, "compatibility_weight_coefficient", &cwc) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(unspeciated), nold = PyList_GET_SIZE(old_reps), largest = 0;
    Member *members = PyMem_Calloc(n + nold + 1, sizeof(Member)), *olds = members ? members + n : NULL;
    Genes **genes = PyMem_Malloc(sizeof(Genes *) * (n + nold + 1));
    Py_ssize_t *alive = PyMem_Malloc(sizeof(Py_ssize_t) * (n + 1));
    Py_ssize_t *rep_of = PyMem_Malloc(sizeof(Py_ssize_t) * (n + nold + 1));    /* species -> member */
    double **rep_row = PyMem_Calloc(n + nold + 1, sizeof(double *));          /* species -> distances */
    Py_ssize_t *row_from = PyMem_Calloc(n + nold + 1, sizeof(Py_ssize_t));     /* first column of the row */
    double *d1 = NULL, *d2 = NULL;
    PyObject *rep_sids = PyList_New(0), *groups = PyList_New(0), *result = NULL;
    DistCache cache;
    memset(&cache, 0, sizeof cache);
    Py_ssize_t nreps = 0;
    if (!members || !genes || !alive || !rep_of || !rep_row || !row_from || !rep_sids || !groups) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *gid = PyList_GET_ITEM(unspeciated, i);
        PyObject *g = PyDict_GetItemWithError(population, gid);
        if (!g) {
            if (!PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, gid);
            goto done;
        }
        if (member_load(st, &members[i], g, &largest) < 0)
            goto done;
        genes[i] = members[i].genes;
        alive[i] = i;
    }
    for (Py_ssize_t k = 0; k < nold; k++) {
        PyObject *pair = PyList_GET_ITEM(old_reps, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "speciate(): old representatives are (sid, genome) pairs");
            goto done;
        }
        if (member_load(st, &olds[k], PyTuple_GET_ITEM(pair, 1), &largest) < 0)
            goto done;
        genes[n + k] = olds[k].genes;
    }
    int cached = cache_init(&cache, members, n, olds, nold);
    if (cached != 0) {
        if (cached > 0)
            result = Py_NewRef(Py_NotImplemented);
        goto done;
    }
    IdCounts ids;
    if (number_genes(genes, n + nold, &ids) < 0)
        goto done;

    /* Phase 1: old representative k against every genome (those neat-python asks for are read). */
    d1 = PyMem_Malloc(sizeof(double) * (nold * n + 1));
    if (!d1 || grid_compute(st->distance_threads, genes + n, nold, genes, n, d1, largest, &ids, cdc, cwc) < 0) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t nalive = n;
    for (Py_ssize_t k = 0; k < nold; k++) {
        /* min(candidates, key=distance): the first closest in unspeciated order */
        if (nalive == 0) {
            PyErr_SetString(PyExc_ValueError, "min() arg is an empty sequence");
            goto done;
        }
        Py_ssize_t best = 0;
        double best_d = 0.0;
        for (Py_ssize_t a = 0; a < nalive; a++) {
            double d;
            if (cache_ask(&cache, olds[k].number, members[alive[a]].number, d1[k * n + alive[a]], &d) < 0)
                goto done;
            if (a == 0 || d < best_d) {
                best = a;
                best_d = d;
            }
        }
        /* new_rid = new_rep.key; unspeciated.remove(new_rid): the first genome with that key */
        int64_t rid = members[alive[best]].key;
        Py_ssize_t at = -1;
        for (Py_ssize_t a = 0; a < nalive && at < 0; a++) {
            long long gv = PyLong_AsLongLong(PyList_GET_ITEM(unspeciated, alive[a]));
            if (gv == -1 && PyErr_Occurred())
                goto done;
            if (gv == rid)
                at = a;
        }
        if (at < 0) {
            PyErr_SetString(PyExc_ValueError, "list.remove(x): x not in list");
            goto done;
        }
        rep_of[k] = alive[best];
        memmove(&alive[at], &alive[at + 1], sizeof(Py_ssize_t) * (nalive - at - 1));
        nalive--;
        PyObject *rid_obj = PyLong_FromLongLong(rid);
        PyObject *group = rid_obj ? new_group(rid_obj) : NULL;
        Py_XDECREF(rid_obj);
        int bad = !group || PyList_Append(rep_sids, PyTuple_GET_ITEM(PyList_GET_ITEM(old_reps, k), 0)) < 0
                  || PyList_Append(groups, group) < 0;
        Py_XDECREF(group);
        if (bad)
            goto done;
    }
    nreps = nold;

    /* Phase 2: the new representatives against the genomes left; a founder's row when it founds. */
    Genes **left = PyMem_Malloc(sizeof(Genes *) * (nalive + 1)), **rep_genes = PyMem_Malloc(sizeof(Genes *) * (nold + 1));
    if (!left || !rep_genes) {
        PyMem_Free(left);
        PyMem_Free(rep_genes);
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t a = 0; a < nalive; a++)
        left[a] = members[alive[a]].genes;
    for (Py_ssize_t k = 0; k < nold; k++)
        rep_genes[k] = members[rep_of[k]].genes;
    d2 = PyMem_Malloc(sizeof(double) * (nold * nalive + 1));
    int grid_failed = !d2 || grid_compute(st->distance_threads, rep_genes, nold, left, nalive, d2, largest, &ids, cdc,
                                          cwc) < 0;
    PyMem_Free(rep_genes);
    if (grid_failed) {
        PyMem_Free(left);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < nold; k++) {
        rep_row[k] = d2 + k * nalive;
        row_from[k] = 0;
    }
    for (Py_ssize_t a = 0; a < nalive; a++) {
        Member *g = &members[alive[a]];
        Py_ssize_t best = -1;
        double best_d = 0.0;
        for (Py_ssize_t k = 0; k < nreps; k++) {
            double d;
            if (cache_ask(&cache, members[rep_of[k]].number, g->number, rep_row[k][a - row_from[k]], &d) < 0) {
                PyMem_Free(left);
                goto done;
            }
            if (d < threshold && (best < 0 || d < best_d)) {
                best = k;
                best_d = d;
            }
        }
        PyObject *gid = PyList_GET_ITEM(unspeciated, alive[a]);
        if (best >= 0) {
            if (PyList_Append(PyList_GET_ITEM(groups, best), gid) < 0) {
                PyMem_Free(left);
                goto done;
            }
            continue;
        }
        PyObject *sid = PyIter_Next(indexer);
        PyObject *group = sid ? new_group(gid) : NULL;
        int bad = !group || PyList_Append(rep_sids, sid) < 0 || PyList_Append(groups, group) < 0;
        Py_XDECREF(sid);
        Py_XDECREF(group);
        Py_ssize_t rest = nalive - a - 1;
        double *row = bad ? NULL : PyMem_Malloc(sizeof(double) * (rest + 1));
        if (!row || grid_compute(st->distance_threads, &g->genes, 1, left + a + 1, rest, row, largest, &ids, cdc,
                                 cwc) < 0) {
            PyMem_Free(row);
            PyMem_Free(left);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "neatpar: the species indexer ran out");
            goto done;
        }
        rep_of[nreps] = alive[a];
        rep_row[nreps] = row;
        row_from[nreps] = a + 1;
        nreps++;
    }
    PyMem_Free(left);

    PyObject *stats;
    if (PyDict_GET_SIZE(population) > 1 && cache.nvalues > 0) {
        double m, sd;
        stats = spread(&cache, &m, &sd) ? overflow_error() : Py_BuildValue("(dd)", m, sd);
    }
    else {
        stats = Py_NewRef(Py_None);
    }
    PyObject *reps = stats ? PyList_New(nreps) : NULL;
    for (Py_ssize_t k = 0; reps && k < nreps; k++) {
        PyObject *rid = PyLong_FromLongLong(members[rep_of[k]].key);
        PyObject *pair = rid ? PyTuple_Pack(2, PyList_GET_ITEM(rep_sids, k), rid) : NULL;
        Py_XDECREF(rid);
        if (!pair) {
            Py_CLEAR(reps);
            break;
        }
        PyList_SET_ITEM(reps, k, pair);
    }
    if (reps)
        result = Py_BuildValue("(NON)", reps, groups, stats);
    else
        Py_XDECREF(stats);
done:
    if (members)
        for (Py_ssize_t i = 0; i < n + nold; i++)
            Py_XDECREF(members[i].genes);
    if (rep_row)
        for (Py_ssize_t k = nold; k < nreps; k++)
            PyMem_Free(rep_row[k]);
    PyMem_Free(members);
    PyMem_Free(genes);
    PyMem_Free(alive);
    PyMem_Free(rep_of);
    PyMem_Free(rep_row);
    PyMem_Free(row_from);
    PyMem_Free(d1);
    PyMem_Free(d2);
    cache_free(&cache);  /* zeroed at the start: whatever cache_init made, or nothing */
    Py_XDECREF(rep_sids);
    Py_XDECREF(groups);
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
