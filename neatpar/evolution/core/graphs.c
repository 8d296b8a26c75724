/* neat/graphs.py's creates_cycle, and whether a genome's whole graph has a cycle. */
#include "graphs.h"

#include <stdlib.h>

/* ------------------------------------------------------------------------------------------ */
/* Graphs (neat/graphs.py)                                                                     */

/* A small open-addressing set of node keys. */
typedef struct { int64_t *keys; uint8_t *used; size_t mask; } KeySet;

static int
keyset_init(KeySet *s, Py_ssize_t n)
{
    size_t size = 16;
    while (size < (size_t)n * 2 + 2)
        size <<= 1;
    s->mask = size - 1;
    s->keys = PyMem_Malloc(sizeof(int64_t) * size);
    s->used = PyMem_Calloc(size, 1);
    if (!s->keys || !s->used) {
        PyMem_Free(s->keys);
        PyMem_Free(s->used);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
keyset_free(KeySet *s)
{
    PyMem_Free(s->keys);
    PyMem_Free(s->used);
}

/* Adds key; returns 1 if it was new. */
static int
keyset_add(KeySet *s, int64_t key)
{
    size_t i = ((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> 20 & s->mask;
    while (s->used[i]) {
        if (s->keys[i] == key)
            return 0;
        i = (i + 1) & s->mask;
    }
    s->used[i] = 1;
    s->keys[i] = key;
    return 1;
}

static int
keyset_has(const KeySet *s, int64_t key)
{
    size_t i = ((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> 20 & s->mask;
    while (s->used[i]) {
        if (s->keys[i] == key)
            return 1;
        i = (i + 1) & s->mask;
    }
    return 0;
}

/* creates_cycle(list(g.connections), (i, o)): i == o, or i reachable from o over every
   connection gene (enabled or not). The answer does not depend on the order of the scan. */
int
creates_cycle(const Genes *g, int64_t i, int64_t o)
{
    if (i == o)
        return 1;
    KeySet visited;
    if (keyset_init(&visited, g->nc + 1) < 0)
        return -1;
    keyset_add(&visited, o);
    int found = 0;
    for (;;) {
        Py_ssize_t added = 0;
        for (Py_ssize_t k = 0; k < g->nc && !found; k++) {
            const Conn *c = &g->conns[k];
            if (keyset_has(&visited, c->in) && !keyset_has(&visited, c->out)) {
                if (c->out == i)
                    found = 1;
                keyset_add(&visited, c->out);
                added++;
            }
        }
        if (found || added == 0)
            break;
    }
    keyset_free(&visited);
    return found;
}

/* Whether the graph of all connection genes has no cycle (self-loops included); cached. */
int
is_acyclic(Genes *g)
{
    if (g->acyclic >= 0)
        return g->acyclic;
    /* Kahn's algorithm over node keys ranked by sorting. */
    Py_ssize_t m = g->nc, nk = 0;
    int64_t *keys = PyMem_Malloc(sizeof(int64_t) * (2 * m + 1));
    Py_ssize_t *indeg = NULL, *head = NULL, *next = NULL, *queue = NULL;
    int result = -1;
    if (!keys)
        goto done;
    for (Py_ssize_t k = 0; k < m; k++) {
        keys[nk++] = g->conns[k].in;
        keys[nk++] = g->conns[k].out;
    }
    qsort(keys, nk, sizeof(int64_t), cmp_int64);
    Py_ssize_t u = 0;
    for (Py_ssize_t k = 0; k < nk; k++)
        if (u == 0 || keys[u - 1] != keys[k])
            keys[u++] = keys[k];
    indeg = PyMem_Calloc(u + 1, sizeof(Py_ssize_t));
    head = PyMem_Malloc(sizeof(Py_ssize_t) * (u + 1));
    next = PyMem_Malloc(sizeof(Py_ssize_t) * (m + 1));
    queue = PyMem_Malloc(sizeof(Py_ssize_t) * (u + 1));
    if (!indeg || !head || !next || !queue)
        goto done;
    for (Py_ssize_t k = 0; k < u; k++)
        head[k] = -1;
    Py_ssize_t *src = PyMem_Malloc(sizeof(Py_ssize_t) * (m + 1)), *dst = PyMem_Malloc(sizeof(Py_ssize_t) * (m + 1));
    if (!src || !dst) {
        PyMem_Free(src);
        PyMem_Free(dst);
        goto done;
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        int64_t *p = bsearch(&g->conns[k].in, keys, u, sizeof(int64_t), cmp_int64);
        int64_t *q = bsearch(&g->conns[k].out, keys, u, sizeof(int64_t), cmp_int64);
        src[k] = p - keys;
        dst[k] = q - keys;
        next[k] = head[src[k]];
        head[src[k]] = k;
        indeg[dst[k]]++;
    }
    Py_ssize_t qh = 0, qt = 0, seen = 0;
    for (Py_ssize_t k = 0; k < u; k++)
        if (indeg[k] == 0)
            queue[qt++] = k;
    while (qh < qt) {
        Py_ssize_t v = queue[qh++];
        seen++;
        for (Py_ssize_t e = head[v]; e >= 0; e = next[e])
            if (--indeg[dst[e]] == 0)
                queue[qt++] = dst[e];
    }
    PyMem_Free(src);
    PyMem_Free(dst);
    result = g->acyclic = (seen == u);
done:
    if (result < 0)
        PyErr_NoMemory();
    PyMem_Free(keys);
    PyMem_Free(indeg);
    PyMem_Free(head);
    PyMem_Free(next);
    PyMem_Free(queue);
    return result;
}
