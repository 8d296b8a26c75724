/*
 * ES-HyperNEAT's search in C (es_search.h): for a genome's CPPN, the hidden nodes and links of
 * its substrate network found by the quadtree algorithm of Risi and Stanley (2012), as PUREPLES'
 * ESNetwork finds them (neatpar/nn/es_hyperneat.py holds the definition; this file follows it
 * operation for operation).
 *
 * A query evaluates the CPPN (the population kernel's tables, compile.py) at (x1, y1, x2, y2, 1.0)
 * with neat-python's functions in neat-python's order (neat_functions.h), so each weight is
 * FeedForwardNetwork.activate's to the last bit, and maps output 0 as PUREPLES' query_cppn does.
 * A quad's variance is numpy's var() of the weights of its leaves (depth first, children in
 * order), its sums numpy's pairwise sums, so the thresholds see the same doubles as PUREPLES.
 * Build with -ffp-contract=off -fno-fast-math: a fused multiply-add would round differently.
 *
 * An exploration (the quadtree of one point) remembers the weights it queried: a quad's neighbour
 * is often its sibling or a cousin, whose weight is then not computed again (the same weight: a
 * query depends on its arguments alone).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "es_search.h"
#include "neat_functions.h"

typedef EsCppn Cppn;
typedef EsParams Params;
typedef EsFound Result;

/* One quad: its centre, half its side (PUREPLES' width), level, weight and first of 4 children. */
typedef struct {
    double x, y, width, w;
    long lvl;
    Py_ssize_t child;   /* -1: a leaf */
} Quad;

/* A growable array of `size`-byte items. */
typedef struct {
    void *items;
    Py_ssize_t count, cap, size;
} Vec;

static int vec_reserve(Vec *v, Py_ssize_t need)
{
    if (need <= v->cap) return 1;
    Py_ssize_t cap = v->cap ? v->cap : 64;
    while (cap < need) cap *= 2;
    void *grown = realloc(v->items, (size_t)(cap * v->size));
    if (grown == NULL) return 0;
    v->items = grown;
    v->cap = cap;
    return 1;
}

/* Everything one genome's search uses, kept between genomes of one call. */
struct EsSearch {
    const Cppn *t;
    const Params *p;
    int64_t g;
    Py_ssize_t stride;
    double *values, *x;                /* the CPPN's slots; a node's weighted inputs */
    Vec quads;                         /* Quad: the tree of the current exploration */
    Vec queue;                         /* Py_ssize_t: the quads to divide, in order */
    Vec leaves;                        /* double: a quad's leaf weights */
    Vec px, py;                        /* double: every point met (inputs, outputs, then targets) */
    Vec flags;                         /* char per point: HIDDEN, EXPLORE, FROM_INPUT, TO_OUTPUT */
    Vec point_table;                   /* Py_ssize_t: open addressing, point index + 1 (0 empty) */
    Vec src, dst;                      /* Py_ssize_t per link: point indices */
    Vec weight;                        /* double per link */
    Vec link_table;                    /* Py_ssize_t: open addressing, link index + 1 */
    Vec known;                         /* Known: the weights queried in the current exploration */
    Py_ssize_t known_count;
    uint32_t stamp;                    /* the current exploration's mark on its Known entries */
    const double *coord;               /* the current exploration's point, and its direction */
    int outgoing;
    int failed;                        /* out of memory */
};
typedef EsSearch Search;

/* A weight queried in an exploration: the bits of the point it was queried at. */
typedef struct { uint64_t x, y; double w; uint32_t stamp; } Known;

enum { HIDDEN = 1, EXPLORE = 2, NEXT = 4, FROM_INPUT = 8, TO_OUTPUT = 16 };

#define AT(vec, type, i) (((type *)(vec).items)[i])

/* ------------------------------------------------------------------ the CPPN */

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL; h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL; h ^= h >> 33;
    return h;
}

/* PUREPLES' query_cppn: the CPPN at (x1, y1, x2, y2, 1.0), output 0 mapped to a weight: 0.0
 * unless |o| > 0.2, else (o - 0.2) / 0.8 (o + 0.2 for o <= 0) times max_weight. */
static double query(Search *s, double x1, double y1, double x2, double y2)
{
    const Cppn *t = s->t;
    double *v = s->values;
    memset(v, 0, sizeof(double) * (size_t)s->stride);
    v[0] = x1; v[1] = y1; v[2] = x2; v[3] = y2; v[4] = 1.0;
    for (int64_t n = t->genome_start[s->g]; n < t->genome_start[s->g + 1]; n++) {
        Py_ssize_t k = 0;
        for (int64_t l = t->link_start[n]; l < t->link_start[n + 1]; l++, k++) s->x[k] = v[t->link_src[l]] * t->link_w[l];
        const double sum = aggregate(t->node_agg[n], s->x, k);
        v[t->node_slot[n]] = activate(t->node_act[n], t->node_bias[n] + t->node_resp[n] * sum);
    }
    double w = v[ES_CPPN_INPUTS];
    if (fabs(w) > 0.2) {
        if (w > 0) w = (w - 0.2) / 0.8;
        else w = (w + 0.2) / 0.8;
        return w * s->p->max_weight;
    }
    return 0.0;
}

/* The weight between `coord` and a point, the coordinate first when `outgoing`. */
static double query_from(Search *s, const double *coord, double x, double y, int outgoing)
{
    return outgoing ? query(s, coord[0], coord[1], x, y) : query(s, x, y, coord[0], coord[1]);
}

static uint64_t raw_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof(b));
    return b;
}

/* Room for one more Known in the table (kept at most half full); 0 when out of memory. */
static int known_room(Search *s)
{
    if (2 * (s->known_count + 1) <= s->known.cap) return 1;
    const Py_ssize_t cap = s->known.cap ? 2 * s->known.cap : 256;
    Known *old = s->known.items, *grown = calloc((size_t)cap, sizeof(Known));
    if (grown == NULL) return 0;
    for (Py_ssize_t i = 0; i < s->known.cap; i++)
        if (old[i].stamp == s->stamp) {
            uint64_t h = mix(old[i].x * 31u + mix(old[i].y)) & (uint64_t)(cap - 1);
            while (grown[h].stamp) h = (h + 1) & (uint64_t)(cap - 1);
            grown[h] = old[i];
        }
    free(old);
    s->known.items = grown;
    s->known.cap = cap;
    return 1;
}

/* The weight between the exploration's point and (x, y): a point met before in this exploration
 * (a quad's sibling, or a neighbour's centre) is not queried again. The query is a function of its
 * arguments, so the weight is the one a query would give; points are told apart by their bits. */
static double weigh(Search *s, double x, double y)
{
    if (!known_room(s)) {
        s->failed = 1;
        return 0.0;
    }
    Known *known = s->known.items;
    const uint64_t bx = raw_bits(x), by = raw_bits(y), mask = (uint64_t)s->known.cap - 1;
    uint64_t h = mix(bx * 31u + mix(by)) & mask;
    for (; known[h].stamp == s->stamp; h = (h + 1) & mask)
        if (known[h].x == bx && known[h].y == by) return known[h].w;
    const double w = query_from(s, s->coord, x, y, s->outgoing);
    known[h] = (Known){bx, by, w, s->stamp};
    s->known_count++;
    return w;
}

/* ------------------------------------------------------------------ numpy's var() */

/* numpy's pairwise summation of float64 (its reduction's inner loop), added to 0.0 as a
 * reduction's initial value is. */
static double pairwise_sum(const double *a, Py_ssize_t n)
{
    if (n < 8) {
        double res = -0.0;
        for (Py_ssize_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        Py_ssize_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

/* numpy.var(a): mean = sum / n; sum of (a - mean)**2 over n. `a` is overwritten. */
static double np_var(double *a, Py_ssize_t n)
{
    const double mean = (0.0 + pairwise_sum(a, n)) / (double)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        const double d = a[i] - mean;
        a[i] = d * d;
    }
    return (0.0 + pairwise_sum(a, n)) / (double)n;
}

/* PUREPLES' get_weights: the weights of the leaves under quad q, depth first, children in order. */
static void collect_leaves(Search *s, Py_ssize_t q)
{
    const Quad *quad = &AT(s->quads, Quad, q);
    if (quad->child >= 0) {
        const Py_ssize_t c = quad->child;
        for (int k = 0; k < 4; k++) collect_leaves(s, c + k);
        return;
    }
    if (!vec_reserve(&s->leaves, s->leaves.count + 1)) { s->failed = 1; return; }
    AT(s->leaves, double, s->leaves.count++) = quad->w;
}

static double variance(Search *s, Py_ssize_t q)
{
    s->leaves.count = 0;
    collect_leaves(s, q);
    if (s->failed) return 0.0;
    return np_var((double *)s->leaves.items, s->leaves.count);
}

/* ------------------------------------------------------------------ the quadtree */

/* PUREPLES' division_initialization: the root (0, 0) of width 1.0 at level 1, divided breadth
 * first; every quad taken from the queue gets its 4 children (-,-), (-,+), (+,+), (+,-) and their
 * weights, and they are queued while its level is below initial_depth, or below max_depth with a
 * variance (of those 4 weights) above division_threshold. */
static void divide(Search *s)
{
    s->quads.count = s->queue.count = 0;
    if (!vec_reserve(&s->quads, 1) || !vec_reserve(&s->queue, 1)) { s->failed = 1; return; }
    AT(s->quads, Quad, 0) = (Quad){0.0, 0.0, 1.0, 0.0, 1, -1};
    AT(s->queue, Py_ssize_t, 0) = 0;
    s->quads.count = s->queue.count = 1;
    for (Py_ssize_t head = 0; head < s->queue.count; head++) {
        if (!vec_reserve(&s->quads, s->quads.count + 4) || !vec_reserve(&s->queue, s->queue.count + 4)) {
            s->failed = 1;
            return;
        }
        const Py_ssize_t at = AT(s->queue, Py_ssize_t, head), first = s->quads.count;
        Quad *p = &AT(s->quads, Quad, at);
        const double half = p->width / 2.0;
        const double xs[4] = {p->x - half, p->x - half, p->x + half, p->x + half};
        const double ys[4] = {p->y - half, p->y + half, p->y + half, p->y - half};
        const long lvl = p->lvl;
        p->child = first;
        for (int k = 0; k < 4; k++) {
            const double w = weigh(s, xs[k], ys[k]);
            AT(s->quads, Quad, first + k) = (Quad){xs[k], ys[k], half, w, lvl + 1, -1};
        }
        s->quads.count += 4;
        if (lvl < s->p->initial_depth || (lvl < s->p->max_depth && variance(s, at) > s->p->division_threshold))
            for (int k = 0; k < 4; k++) AT(s->queue, Py_ssize_t, s->queue.count++) = first + k;
        if (s->failed) return;
    }
}

/* ------------------------------------------------------------------ points and links */

static uint64_t bits(double v)
{
    uint64_t b;
    v += 0.0;   /* -0.0 and 0.0 are one coordinate, as Python's == and hash() take them */
    memcpy(&b, &v, sizeof(b));
    return b;
}

static uint64_t point_hash(double x, double y) { return mix(bits(x) * 31u + mix(bits(y))); }

static int table_grow(Vec *table, Py_ssize_t count)
{
    if (table->cap >= 4 * (count + 1)) return 1;
    Py_ssize_t cap = 64;
    while (cap < 4 * (count + 1)) cap *= 2;
    free(table->items);
    table->items = calloc((size_t)cap, sizeof(Py_ssize_t));
    if (table->items == NULL) { table->cap = 0; return 0; }
    table->cap = cap;
    return 2;   /* rebuilt empty: the caller reinserts */
}

/* The index of point (x, y), added when new (-1 when memory ran out). */
static Py_ssize_t point_index(Search *s, double x, double y)
{
    const int grown = table_grow(&s->point_table, s->px.count);
    if (!grown) { s->failed = 1; return -1; }
    Py_ssize_t *slots = (Py_ssize_t *)s->point_table.items;
    const uint64_t mask = (uint64_t)s->point_table.cap - 1;
    if (grown == 2)
        for (Py_ssize_t i = 0; i < s->px.count; i++) {
            uint64_t h = point_hash(AT(s->px, double, i), AT(s->py, double, i)) & mask;
            while (slots[h]) h = (h + 1) & mask;
            slots[h] = i + 1;
        }
    uint64_t h = point_hash(x, y) & mask;
    while (slots[h]) {
        const Py_ssize_t i = slots[h] - 1;
        if (AT(s->px, double, i) == x && AT(s->py, double, i) == y) return i;
        h = (h + 1) & mask;
    }
    if (!vec_reserve(&s->px, s->px.count + 1) || !vec_reserve(&s->py, s->py.count + 1) ||
        !vec_reserve(&s->flags, s->flags.count + 1)) { s->failed = 1; return -1; }
    const Py_ssize_t i = s->px.count;
    AT(s->px, double, i) = x; AT(s->py, double, i) = y; AT(s->flags, char, i) = 0;
    s->px.count++; s->py.count++; s->flags.count++;
    slots[h] = i + 1;
    return i;
}

/* Add the link a -> b of weight w unless it is there (a set of links by their end points);
 * returns its index, -1 when memory ran out. */
static Py_ssize_t add_link(Search *s, Py_ssize_t a, Py_ssize_t b, double w)
{
    const int grown = table_grow(&s->link_table, s->src.count);
    if (!grown) { s->failed = 1; return -1; }
    Py_ssize_t *slots = (Py_ssize_t *)s->link_table.items;
    const uint64_t mask = (uint64_t)s->link_table.cap - 1;
    if (grown == 2)
        for (Py_ssize_t i = 0; i < s->src.count; i++) {
            uint64_t h = mix(((uint64_t)AT(s->src, Py_ssize_t, i) << 32) ^ (uint64_t)AT(s->dst, Py_ssize_t, i)) & mask;
            while (slots[h]) h = (h + 1) & mask;
            slots[h] = i + 1;
        }
    uint64_t h = mix(((uint64_t)a << 32) ^ (uint64_t)b) & mask;
    while (slots[h]) {
        const Py_ssize_t i = slots[h] - 1;
        if (AT(s->src, Py_ssize_t, i) == a && AT(s->dst, Py_ssize_t, i) == b) return i;
        h = (h + 1) & mask;
    }
    if (!vec_reserve(&s->src, s->src.count + 1) || !vec_reserve(&s->dst, s->dst.count + 1) ||
        !vec_reserve(&s->weight, s->weight.count + 1)) { s->failed = 1; return -1; }
    const Py_ssize_t i = s->src.count;
    AT(s->src, Py_ssize_t, i) = a; AT(s->dst, Py_ssize_t, i) = b; AT(s->weight, double, i) = w;
    s->src.count++; s->dst.count++; s->weight.count++;
    slots[h] = i + 1;
    return i;
}

/* ------------------------------------------------------------------ pruning and extraction */

static double py_min2(double a, double b) { return b < a ? b : a; }   /* Python's min(a, b) */
static double py_max2(double a, double b) { return b > a ? b : a; }   /* Python's max(a, b) */

/* PUREPLES' pruning_extraction under quad p: a child of variance above variance_threshold is
 * searched further; any other is a link when its band (the larger of the smaller differences to
 * its left and right neighbours and to those above and below, at p's width) is above
 * band_threshold, its weight not 0.0, the link going up (y1 < y2) and not to itself. `mark`: the
 * flag set on each new link's target (HIDDEN when exploring from inputs and hidden nodes). */
static void prune(Search *s, const double *coord, Py_ssize_t coord_point, Py_ssize_t p, int outgoing, char mark)
{
    for (int k = 0; k < 4 && !s->failed; k++) {
        const Py_ssize_t c = AT(s->quads, Quad, p).child + k;
        if (variance(s, c) > s->p->variance_threshold) {
            prune(s, coord, coord_point, c, outgoing, mark);
            continue;
        }
        const Quad q = AT(s->quads, Quad, c);
        const double width = AT(s->quads, Quad, p).width;
        const double d_left = fabs(q.w - weigh(s, q.x - width, q.y));
        const double d_right = fabs(q.w - weigh(s, q.x + width, q.y));
        const double d_top = fabs(q.w - weigh(s, q.x, q.y - width));
        const double d_bottom = fabs(q.w - weigh(s, q.x, q.y + width));
        if (!(py_max2(py_min2(d_top, d_bottom), py_min2(d_left, d_right)) > s->p->band_threshold)) continue;
        const double x1 = outgoing ? coord[0] : q.x, y1 = outgoing ? coord[1] : q.y;
        const double x2 = outgoing ? q.x : coord[0], y2 = outgoing ? q.y : coord[1];
        if (q.w == 0.0 || !(y1 < y2) || (x1 == x2 && y1 == y2)) continue;
        const Py_ssize_t point = point_index(s, q.x, q.y);
        if (point < 0) return;
        if (outgoing) add_link(s, coord_point, point, q.w);
        else add_link(s, point, coord_point, q.w);
        AT(s->flags, char, point) |= mark;
    }
}

/* The links found from (or, not `outgoing`, to) the point of index `at`. */
static void explore(Search *s, Py_ssize_t at, int outgoing, char mark)
{
    const double coord[2] = {AT(s->px, double, at), AT(s->py, double, at)};
    s->coord = coord;
    s->outgoing = outgoing;
    s->known_count = 0;
    if (++s->stamp == 0) {   /* the stamps wrapped: forget every entry */
        if (s->known.items) memset(s->known.items, 0, sizeof(Known) * (size_t)s->known.cap);
        s->stamp = 1;
    }
    divide(s);
    if (!s->failed) prune(s, coord, at, 0, outgoing, mark);
}

/* ------------------------------------------------------------------ one genome */

/* PUREPLES' clean_net: the points reached from an input and those reaching an output, over the
 * links; the nodes of the network are the points of both. */
static void clean(Search *s, Py_ssize_t n_in, Py_ssize_t n_out)
{
    char *flags = (char *)s->flags.items;
    const Py_ssize_t *src = (const Py_ssize_t *)s->src.items, *dst = (const Py_ssize_t *)s->dst.items;
    for (Py_ssize_t i = 0; i < n_in; i++) flags[i] |= FROM_INPUT;
    for (Py_ssize_t j = 0; j < n_out; j++) flags[n_in + j] |= TO_OUTPUT;
    for (int changed = 1; changed;) {
        changed = 0;
        for (Py_ssize_t l = 0; l < s->src.count; l++)
            if ((flags[src[l]] & FROM_INPUT) && !(flags[dst[l]] & FROM_INPUT)) { flags[dst[l]] |= FROM_INPUT; changed = 1; }
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (Py_ssize_t l = 0; l < s->src.count; l++)
            if ((flags[dst[l]] & TO_OUTPUT) && !(flags[src[l]] & TO_OUTPUT)) { flags[src[l]] |= TO_OUTPUT; changed = 1; }
    }
}

static void table_clear(Vec *table)
{
    if (table->items) memset(table->items, 0, sizeof(Py_ssize_t) * (size_t)table->cap);
}

/* The search of genome g: every point and link found, the points' flags after clean(). */
static void search_genome(Search *s, const double *inputs, Py_ssize_t n_in, const double *outputs, Py_ssize_t n_out)
{
    s->px.count = s->py.count = s->flags.count = 0;
    s->src.count = s->dst.count = s->weight.count = 0;
    table_clear(&s->point_table);
    table_clear(&s->link_table);
    for (Py_ssize_t i = 0; i < n_in; i++) point_index(s, inputs[2 * i], inputs[2 * i + 1]);
    for (Py_ssize_t j = 0; j < n_out; j++) point_index(s, outputs[2 * j], outputs[2 * j + 1]);
    for (Py_ssize_t i = 0; i < n_in && !s->failed; i++) explore(s, i, 1, HIDDEN);   /* from the inputs */
    for (Py_ssize_t k = 0; k < s->flags.count; k++)
        if (AT(s->flags, char, k) & HIDDEN) AT(s->flags, char, k) |= EXPLORE;
    for (long it = 0; it < s->p->iteration_level && !s->failed; it++) {   /* from hidden nodes */
        const Py_ssize_t known = s->flags.count;
        for (Py_ssize_t k = 0; k < known && !s->failed; k++)
            if (AT(s->flags, char, k) & EXPLORE) explore(s, k, 1, HIDDEN);
        for (Py_ssize_t k = 0; k < s->flags.count; k++) {   /* unexplored = hidden - unexplored */
            char *f = &AT(s->flags, char, k);
            *f = (char)(((*f & HIDDEN) && !(*f & EXPLORE)) ? (*f | EXPLORE) : (*f & ~EXPLORE));
        }
    }
    for (Py_ssize_t j = 0; j < n_out && !s->failed; j++) explore(s, n_in + j, 0, 0);   /* to the outputs */
    if (!s->failed) clean(s, n_in, n_out);
}

typedef struct { double y, x; Py_ssize_t point; } Ordered;
typedef struct { int64_t target, source; double w; } Link;

static int by_y_then_x(const void *a, const void *b)
{
    const Ordered *p = a, *q = b;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return 0;
}

static int by_target_then_source(const void *a, const void *b)
{
    const Link *p = a, *q = b;
    if (p->target != q->target) return p->target < q->target ? -1 : 1;
    return p->source < q->source ? -1 : p->source > q->source;
}

/* The network of the points of both flags: hidden nodes numbered after the inputs and outputs in
 * order of (y, x), the links between kept points sorted by target and source. 0 when out of memory. */
static int collect(Search *s, Py_ssize_t n_in, Py_ssize_t n_out, Result *r)
{
    const char both = FROM_INPUT | TO_OUTPUT;
    const Py_ssize_t fixed = n_in + n_out, points = s->flags.count;
    int64_t *number = malloc(sizeof(int64_t) * (size_t)(points > 0 ? points : 1));
    Ordered *order = malloc(sizeof(Ordered) * (size_t)(points > 0 ? points : 1));
    Link *links = malloc(sizeof(Link) * (size_t)(s->src.count > 0 ? s->src.count : 1));
    int ok = number && order && links;
    if (ok) {
        Py_ssize_t h = 0, l = 0;
        for (Py_ssize_t k = 0; k < points; k++) {
            number[k] = k < fixed ? k : -1;
            if (k >= fixed && (AT(s->flags, char, k) & both) == both)
                order[h++] = (Ordered){AT(s->py, double, k), AT(s->px, double, k), k};
        }
        qsort(order, (size_t)h, sizeof(Ordered), by_y_then_x);
        for (Py_ssize_t k = 0; k < h; k++) number[order[k].point] = fixed + k;
        for (Py_ssize_t k = 0; k < s->src.count; k++) {
            const Py_ssize_t a = AT(s->src, Py_ssize_t, k), b = AT(s->dst, Py_ssize_t, k);
            if ((AT(s->flags, char, a) & both) == both && (AT(s->flags, char, b) & both) == both)
                links[l++] = (Link){number[b], number[a], AT(s->weight, double, k)};
        }
        qsort(links, (size_t)l, sizeof(Link), by_target_then_source);
        r->hidden = malloc(sizeof(double) * (size_t)(2 * h + 1));
        r->sources = malloc(sizeof(int64_t) * (size_t)(l + 1));
        r->targets = malloc(sizeof(int64_t) * (size_t)(l + 1));
        r->weights = malloc(sizeof(double) * (size_t)(l + 1));
        ok = r->hidden && r->sources && r->targets && r->weights;
        if (ok) {
            for (Py_ssize_t k = 0; k < h; k++) { r->hidden[2 * k] = order[k].x; r->hidden[2 * k + 1] = order[k].y; }
            for (Py_ssize_t k = 0; k < l; k++) {
                r->sources[k] = links[k].source;
                r->targets[k] = links[k].target;
                r->weights[k] = links[k].w;
            }
            r->n_hidden = h;
            r->n_links = l;
        }
    }
    free(number); free(order); free(links);
    return ok;
}

static Vec vec_of(Py_ssize_t size) { Vec v = {NULL, 0, 0, size}; return v; }

/* ------------------------------------------------------------------ es_search.h */

EsSearch *es_search_new(const EsCppn *cppn, const EsParams *params, Py_ssize_t stride, Py_ssize_t max_fan_in)
{
    Search *s = malloc(sizeof(Search));
    if (s == NULL) return NULL;
    *s = (Search){.t = cppn, .p = params, .stride = stride, .quads = vec_of(sizeof(Quad)),
                  .queue = vec_of(sizeof(Py_ssize_t)), .leaves = vec_of(sizeof(double)), .px = vec_of(sizeof(double)),
                  .py = vec_of(sizeof(double)), .flags = vec_of(sizeof(char)), .point_table = vec_of(sizeof(Py_ssize_t)),
                  .src = vec_of(sizeof(Py_ssize_t)), .dst = vec_of(sizeof(Py_ssize_t)), .weight = vec_of(sizeof(double)),
                  .link_table = vec_of(sizeof(Py_ssize_t)), .known = vec_of(sizeof(Known))};
    s->values = malloc(sizeof(double) * (size_t)(stride > 0 ? stride : 1));
    s->x = malloc(sizeof(double) * (size_t)(max_fan_in > 0 ? max_fan_in : 1));
    if (s->values == NULL || s->x == NULL) {
        es_search_free(s);
        return NULL;
    }
    return s;
}

int es_search_genome(EsSearch *s, int64_t genome, const double *inputs, Py_ssize_t n_in, const double *outputs,
                     Py_ssize_t n_out, EsFound *found)
{
    s->g = genome;
    search_genome(s, inputs, n_in, outputs, n_out);
    return !s->failed && collect(s, n_in, n_out, found);
}

void es_found_free(EsFound *found)
{
    free(found->hidden); free(found->sources); free(found->targets); free(found->weights);
    memset(found, 0, sizeof(*found));
}

void es_search_free(EsSearch *s)
{
    if (s == NULL) return;
    Vec *vecs[] = {&s->quads, &s->queue, &s->leaves, &s->px, &s->py, &s->flags, &s->point_table, &s->src, &s->dst,
                   &s->weight, &s->link_table, &s->known};
    for (size_t k = 0; k < sizeof(vecs) / sizeof(vecs[0]); k++) free(vecs[k]->items);
    free(s->values);
    free(s->x);
    free(s);
}
