/* Distances: DefaultGenome.distance between two genomes, and grids of them for a speciation,
worked out on several threads over genes numbered densely. */
#include "distances.h"
#include "threads_shim.h"

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
/* A speciation's distances: genes numbered densely, grids on several threads                 */

/* Numbers the genes of every genome in `all` (their Views built), counts into *ids. */
int
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

/* rows[r].distance(cols[c]) into out (row-major), on `threads` threads for a large grid. */
int
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
