/*
 * The population kernel's tables of ES-HyperNEAT's discovered networks (es_tables.h), as
 * neatpar/nn/es_hyperneat.py describes them: per network, each node that a link enters (inputs
 * aside) in order of (y, key), each node's links in order of source (then as given), the weights
 * copied as they are. Pure C: the caller (_es_search.c) holds the Python objects.
 */
#include "es_tables.h"

#include <stdlib.h>
#include <string.h>

typedef struct { double y; int64_t key; } Node;
typedef struct { int64_t node, source, at; } Entry;

static int by_y_then_key(const void *a, const void *b)
{
    const Node *p = a, *q = b;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return p->key < q->key ? -1 : p->key > q->key;
}

/* By node, source, then the link's place in the network: a stable order of (node, source). */
static int by_node_then_source(const void *a, const void *b)
{
    const Entry *p = a, *q = b;
    if (p->node != q->node) return p->node < q->node ? -1 : 1;
    if (p->source != q->source) return p->source < q->source ? -1 : 1;
    return p->at < q->at ? -1 : p->at > q->at;
}

/* Room for `need` items of `size` bytes in *items (capacity *cap); 0 when out of memory. */
static int reserve(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 1;
    size_t grown = *cap ? *cap : 64;
    while (grown < need) grown *= 2;
    void *moved = realloc(*items, grown * size);
    if (moved == NULL) return 0;
    *items = moved;
    *cap = grown;
    return 1;
}

int es_tables_init(EsTables *t, int64_t n_in, int64_t n_out, const double *fixed_y)
{
    memset(t, 0, sizeof(*t));
    t->n_in = n_in;
    t->n_out = n_out;
    t->fixed_y = fixed_y;
    t->stride = n_in + n_out;
    if (!reserve((void **)&t->genome_start, &t->genome_start_cap, 1, sizeof(int64_t)) ||
        !reserve((void **)&t->link_start, &t->link_start_cap, 1, sizeof(int64_t)) ||
        !reserve((void **)&t->node_slot, &t->node_slot_cap, 1, sizeof(int32_t)) ||
        !reserve((void **)&t->link_src, &t->link_src_cap, 1, sizeof(int32_t)) ||
        !reserve((void **)&t->link_w, &t->link_w_cap, 1, sizeof(double)))
        return 0;
    t->genome_start[0] = 0;
    t->link_start[0] = 0;
    return 1;
}

int es_tables_add(EsTables *t, const EsNetwork *net)
{
    const int64_t fixed = t->n_in + t->n_out, count = fixed + net->n_hidden;
    for (int64_t l = 0; l < net->n_links; l++)
        if (net->sources[l] < 0 || net->sources[l] >= count || net->targets[l] < 0 || net->targets[l] >= count)
            return -1;
    if (!reserve((void **)&t->position, &t->position_cap, (size_t)count, sizeof(int64_t)) ||
        !reserve(&t->order, &t->order_cap, (size_t)count, sizeof(Node)) ||
        !reserve(&t->by_node, &t->by_node_cap, (size_t)net->n_links, sizeof(Entry)) ||
        !reserve((void **)&t->genome_start, &t->genome_start_cap, t->genomes + 2, sizeof(int64_t)))
        return 0;
    int64_t *position = t->position;
    Node *order = t->order;
    Entry *entries = t->by_node;
    for (int64_t k = 0; k < count; k++) position[k] = -1;
    size_t nodes = 0, links = 0;
    for (int64_t l = 0; l < net->n_links; l++) {
        const int64_t target = net->targets[l];
        if (target < t->n_in || position[target] >= 0) continue;
        position[target] = 0;
        order[nodes++] = (Node){target < fixed ? t->fixed_y[target] : net->hidden[2 * (target - fixed) + 1], target};
    }
    qsort(order, nodes, sizeof(Node), by_y_then_key);
    for (size_t k = 0; k < nodes; k++) position[order[k].key] = (int64_t)k;
    for (int64_t l = 0; l < net->n_links; l++)
        if (net->targets[l] >= t->n_in) entries[links++] = (Entry){position[net->targets[l]], net->sources[l], l};
    qsort(entries, links, sizeof(Entry), by_node_then_source);
    if (!reserve((void **)&t->node_slot, &t->node_slot_cap, t->nodes + nodes, sizeof(int32_t)) ||
        !reserve((void **)&t->link_start, &t->link_start_cap, t->nodes + nodes + 1, sizeof(int64_t)) ||
        !reserve((void **)&t->link_src, &t->link_src_cap, t->links + links, sizeof(int32_t)) ||
        !reserve((void **)&t->link_w, &t->link_w_cap, t->links + links, sizeof(double)))
        return 0;
    for (size_t k = 0, e = 0; k < nodes; k++) {
        t->node_slot[t->nodes + k] = (int32_t)order[k].key;
        for (; e < links && entries[e].node == (int64_t)k; e++) {
            t->link_src[t->links + e] = (int32_t)entries[e].source;
            t->link_w[t->links + e] = net->weights[entries[e].at];
        }
        t->link_start[t->nodes + k + 1] = (int64_t)(t->links + e);
    }
    t->nodes += nodes;
    t->links += links;
    t->genome_start[++t->genomes] = (int64_t)t->nodes;
    if (count > t->stride) t->stride = count;
    return 1;
}

void es_tables_free(EsTables *t)
{
    free(t->genome_start); free(t->link_start); free(t->node_slot); free(t->link_src); free(t->link_w);
    free(t->order); free(t->by_node); free(t->position);
    memset(t, 0, sizeof(*t));
}
