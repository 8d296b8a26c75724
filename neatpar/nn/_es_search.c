/*
 * ES-HyperNEAT's search in C: for each genome's CPPN, the hidden nodes and links of its substrate
 * network found by the quadtree algorithm of Risi and Stanley (2012), as PUREPLES' ESNetwork
 * finds them (neatpar/nn/es_hyperneat.py holds the definition; this file follows it operation for
 * operation).
 *
 * A query evaluates the CPPN (the population kernel's tables, compile.py) at (x1, y1, x2, y2, 1.0)
 * with neat-python's functions in neat-python's order (neat_functions.h), so each weight is
 * FeedForwardNetwork.activate's to the last bit, and maps output 0 as PUREPLES' query_cppn does.
 * A quad's variance is numpy's var() of the weights of its leaves (depth first, children in
 * order), its sums numpy's pairwise sums, so the thresholds see the same doubles as PUREPLES.
 * Build with -ffp-contract=off -fno-fast-math: a fused multiply-add would round differently.
 *
 * discover(tables..., genomes, inputs, outputs, params) returns, per genome, the hidden nodes'
 * coordinates (sorted by y, then x) and the links (source, target, weight) between nodes numbered
 * inputs, outputs, hidden, sorted by target and then source. The GIL is released while it searches.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "neat_functions.h"

/* A population's CPPN tables, as their buffers hold them (see _kernel.c). */
typedef struct {
    const int64_t *genome_start, *link_start;
    const int32_t *node_slot, *link_src;
    const int8_t *node_act, *node_agg;
    const double *node_bias, *node_resp, *link_w;
} Cppn;

enum { CPPN_TABLES = 9, CPPN_INPUTS = 5 };

typedef struct {
    long initial_depth, max_depth, iteration_level;
    double variance_threshold, band_threshold, division_threshold, max_weight;
} Params;

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
typedef struct {
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
    int failed;                        /* out of memory */
} Search;

enum { HIDDEN = 1, EXPLORE = 2, NEXT = 4, FROM_INPUT = 8, TO_OUTPUT = 16 };

#define AT(vec, type, i) (((type *)(vec).items)[i])

/* ------------------------------------------------------------------ the CPPN */

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
    double w = v[CPPN_INPUTS];
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
static void divide(Search *s, const double *coord, int outgoing)
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
            const double w = query_from(s, coord, xs[k], ys[k], outgoing);
            AT(s->quads, Quad, first + k) = (Quad){xs[k], ys[k], half, w, lvl + 1, -1};
        }
        s->quads.count += 4;
        if (lvl < s->p->initial_depth || (lvl < s->p->max_depth && variance(s, at) > s->p->division_threshold))
            for (int k = 0; k < 4; k++) AT(s->queue, Py_ssize_t, s->queue.count++) = first + k;
        if (s->failed) return;
    }
}

/* ------------------------------------------------------------------ points and links */

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL; h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL; h ^= h >> 33;
    return h;
}

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
        const double d_left = fabs(q.w - query_from(s, coord, q.x - width, q.y, outgoing));
        const double d_right = fabs(q.w - query_from(s, coord, q.x + width, q.y, outgoing));
        const double d_top = fabs(q.w - query_from(s, coord, q.x, q.y - width, outgoing));
        const double d_bottom = fabs(q.w - query_from(s, coord, q.x, q.y + width, outgoing));
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
    divide(s, coord, outgoing);
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

/* One genome's network: hidden coordinates (x, y pairs), links (source, target pairs) and weights. */
typedef struct {
    double *hidden;
    int64_t *ends;
    double *weights;
    Py_ssize_t n_hidden, n_links;
} Result;

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
        r->ends = malloc(sizeof(int64_t) * (size_t)(2 * l + 1));
        r->weights = malloc(sizeof(double) * (size_t)(l + 1));
        ok = r->hidden && r->ends && r->weights;
        if (ok) {
            for (Py_ssize_t k = 0; k < h; k++) { r->hidden[2 * k] = order[k].x; r->hidden[2 * k + 1] = order[k].y; }
            for (Py_ssize_t k = 0; k < l; k++) {
                r->ends[2 * k] = links[k].source;
                r->ends[2 * k + 1] = links[k].target;
                r->weights[k] = links[k].w;
            }
            r->n_hidden = h;
            r->n_links = l;
        }
    }
    free(number); free(order); free(links);
    return ok;
}

static void search_free(Search *s)
{
    Vec *vecs[] = {&s->quads, &s->queue, &s->leaves, &s->px, &s->py, &s->flags, &s->point_table, &s->src, &s->dst,
                   &s->weight, &s->link_table};
    for (size_t k = 0; k < sizeof(vecs) / sizeof(vecs[0]); k++) free(vecs[k]->items);
    free(s->values);
    free(s->x);
}

static Vec vec_of(Py_ssize_t size) { Vec v = {NULL, 0, 0, size}; return v; }

/* discover(9 CPPN tables, genomes, inputs, outputs, stride, max_fan_in, initial_depth, max_depth,
 * iteration_level, variance_threshold, band_threshold, division_threshold, max_weight): for each
 * genome (int64 indices into the tables), (hidden, ends, weights) as bytes of float64 (x, y) pairs,
 * int64 (source, target) pairs and float64 weights. `inputs` and `outputs`: float64 (x, y) pairs,
 * no two alike. */
static PyObject *discover(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer tb[CPPN_TABLES], b_genomes, b_inputs, b_outputs;
    Py_ssize_t stride, max_fan_in;
    Params p;
    memset(tb, 0, sizeof(tb));
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*y*y*nnllldddd", &tb[0], &tb[1], &tb[2], &tb[3], &tb[4], &tb[5],
                          &tb[6], &tb[7], &tb[8], &b_genomes, &b_inputs, &b_outputs, &stride, &max_fan_in,
                          &p.initial_depth, &p.max_depth, &p.iteration_level, &p.variance_threshold,
                          &p.band_threshold, &p.division_threshold, &p.max_weight))
        return NULL;
    const Cppn t = {tb[0].buf, tb[6].buf, tb[1].buf, tb[7].buf, tb[2].buf, tb[3].buf, tb[4].buf, tb[5].buf,
                    tb[8].buf};
    const int64_t *genomes = b_genomes.buf;
    const Py_ssize_t n_genomes = b_genomes.len / (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t n_in = b_inputs.len / (Py_ssize_t)(2 * sizeof(double));
    const Py_ssize_t n_out = b_outputs.len / (Py_ssize_t)(2 * sizeof(double));
    const Py_ssize_t population = tb[0].len / (Py_ssize_t)sizeof(int64_t) - 1;
    PyObject *result = NULL;
    Result *found = calloc((size_t)(n_genomes > 0 ? n_genomes : 1), sizeof(Result));
    Search s = {&t, &p, 0, stride, NULL, NULL, vec_of(sizeof(Quad)), vec_of(sizeof(Py_ssize_t)),
                vec_of(sizeof(double)), vec_of(sizeof(double)), vec_of(sizeof(double)), vec_of(sizeof(char)),
                vec_of(sizeof(Py_ssize_t)), vec_of(sizeof(Py_ssize_t)), vec_of(sizeof(Py_ssize_t)),
                vec_of(sizeof(double)), vec_of(sizeof(Py_ssize_t)), 0};
    s.values = malloc(sizeof(double) * (size_t)(stride > 0 ? stride : 1));
    s.x = malloc(sizeof(double) * (size_t)(max_fan_in > 0 ? max_fan_in : 1));
    if (found == NULL || s.values == NULL || s.x == NULL) { PyErr_NoMemory(); goto done; }
    if (stride <= CPPN_INPUTS || p.max_depth > 12 || n_in < 1 || n_out < 1) {
        PyErr_SetString(PyExc_ValueError, "the CPPN's stride, the depth or the inputs and outputs do not fit");
        goto done;
    }
    for (Py_ssize_t k = 0; k < n_genomes; k++)
        if (genomes[k] < 0 || genomes[k] >= population) {
            PyErr_Format(PyExc_IndexError, "genome %lld is not in a population of %zd", (long long)genomes[k],
                         population);
            goto done;
        }
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n_genomes && ok; k++) {
        s.g = genomes[k];
        search_genome(&s, b_inputs.buf, n_in, b_outputs.buf, n_out);
        ok = !s.failed && collect(&s, n_in, n_out, &found[k]);
    }
    Py_END_ALLOW_THREADS
    if (!ok) { PyErr_NoMemory(); goto done; }
    result = PyList_New(n_genomes);
    for (Py_ssize_t k = 0; result != NULL && k < n_genomes; k++) {
        const Result *r = &found[k];
        PyObject *item = Py_BuildValue("(y#y#y#)", (const char *)r->hidden, (Py_ssize_t)sizeof(double) * 2 * r->n_hidden,
                                       (const char *)r->ends, (Py_ssize_t)sizeof(int64_t) * 2 * r->n_links,
                                       (const char *)r->weights, (Py_ssize_t)sizeof(double) * r->n_links);
        if (item == NULL) { Py_CLEAR(result); break; }
        PyList_SET_ITEM(result, k, item);
    }
done:  /* one exit: every buffer and array released on success and on failure */
    for (Py_ssize_t k = 0; found != NULL && k < n_genomes; k++) {
        free(found[k].hidden); free(found[k].ends); free(found[k].weights);
    }
    free(found);
    search_free(&s);
    for (int i = 0; i < CPPN_TABLES; i++) PyBuffer_Release(&tb[i]);
    PyBuffer_Release(&b_genomes); PyBuffer_Release(&b_inputs); PyBuffer_Release(&b_outputs);
    return result;
}

static PyMethodDef methods[] = {
    {"discover", discover, METH_VARARGS, "ES-HyperNEAT's hidden nodes and links for each genome (see the source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef es_search_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "neatpar.nn._es_search",
    .m_doc = "neatpar's ES-HyperNEAT search (C).",
    .m_size = 0,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__es_search(void) { return PyModuleDef_Init(&es_search_def); }
