/* neat-python's genome operators on records: attributes (neat/attributes.py), innovation numbers
and node keys, crossover and mutate (neat/genome.py, neat/genes.py), configure_new and the
initial connection schemes. */
#include "operators.h"
#include "genomes.h"
#include "graphs.h"
#include "set_orders.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Attributes (neat/attributes.py)                                                            */

/* FloatAttribute.clamp: max(min(value, max_value), min_value) */
static inline double
clamp(const FloatCfg *f, double v)
{
    double t = (f->max_value < v) ? f->max_value : v;
    return (f->min_value > t) ? f->min_value : t;
}

static int
float_init(Rng *r, const FloatCfg *f, double *out)
{
    if (f->init_type == INIT_GAUSS) {
        *out = clamp(f, rng_gauss(r, f->init_mean, f->init_stdev));
        return 0;
    }
    if (f->init_type == INIT_UNIFORM) {
        double lo = f->init_mean - (2 * f->init_stdev), hi = f->init_mean + (2 * f->init_stdev);
        lo = (lo > f->min_value) ? lo : f->min_value;   /* max(min_value, mean - 2 stdev) */
        hi = (hi < f->max_value) ? hi : f->max_value;   /* min(max_value, mean + 2 stdev) */
        *out = rng_uniform(r, lo, hi);
        return 0;
    }
    PyErr_Format(PyExc_RuntimeError, "Unknown init_type %R for %s_init_type", f->init_type_raw, f->name);
    return -1;
}

static int
float_mutate(Rng *r, const FloatCfg *f, double *v)
{
    double x = rng_random(r);
    if (x < f->mutate_rate) {
        *v = clamp(f, *v + rng_gauss(r, 0.0, f->mutate_power));
        return 0;
    }
    if (x < f->replace_rate + f->mutate_rate)
        return float_init(r, f, v);
    return 0;
}

static int
bool_init(Rng *r, const BoolCfg *b, int32_t *out)
{
    switch (b->deflt) {
    case BOOL_TRUE: *out = 1; return 0;
    case BOOL_FALSE: *out = 0; return 0;
    case BOOL_RANDOM: *out = rng_random(r) < 0.5; return 0;
    }
    PyErr_Format(PyExc_RuntimeError, "Unknown default value %R for enabled", b->default_lower);
    return -1;
}

static void
bool_mutate(Rng *r, const BoolCfg *b, int32_t *v)
{
    double rate = b->mutate_rate + (*v ? b->rate_to_false_add : b->rate_to_true_add);
    if (rate > 0) {
        double x = rng_random(r);
        if (x < rate)
            *v = rng_random(r) < 0.5;
    }
}

static int
str_init(Rng *r, const StrCfg *s, int32_t *out)
{
    if (!s->random_default) {
        *out = s->default_id;
        return 0;
    }
    Py_ssize_t i = rng_choice(r, s->n_options);
    if (i < 0)
        return -1;
    *out = s->options[i];
    return 0;
}

static int
str_mutate(Rng *r, const StrCfg *s, int32_t *v)
{
    if (s->mutate_rate > 0) {
        double x = rng_random(r);
        if (x < s->mutate_rate) {
            Py_ssize_t i = rng_choice(r, s->n_options);
            if (i < 0)
                return -1;
            *v = s->options[i];
        }
    }
    return 0;
}

/* DefaultGenome.create_node: init_attributes in _gene_attributes order */
static int
node_init(Rng *r, const Cfg *c, Node *n, int64_t key)
{
    n->key = key;
    return (float_init(r, &c->bias, &n->bias) < 0 || float_init(r, &c->response, &n->response) < 0
            || str_init(r, &c->activation, &n->act) < 0 || str_init(r, &c->aggregation, &n->agg) < 0
            || float_init(r, &c->time_constant, &n->time_constant) < 0) ? -1 : 0;
}

static int
conn_init(Rng *r, const Cfg *c, Conn *g, int64_t in, int64_t out, int64_t innov)
{
    g->in = in;
    g->out = out;
    g->innov = innov;
    g->pad = 0;
    return (float_init(r, &c->weight, &g->weight) < 0 || bool_init(r, &c->enabled, &g->enabled) < 0) ? -1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Python-side state the operators use: innovation numbers, node keys                         */

static PyObject *
tracker_of(const Cfg *c, const char *message)
{
    PyObject *t = PyObject_GetAttr(c->config, c->st->str_innovation_tracker);
    if (t && t == Py_None) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_AssertionError, message);
        return NULL;
    }
    return t;
}

/* config.innovation_tracker.get_innovation_number(i, o, kind); for neat-python's own tracker its
   method done here: the generation's number for (i, o, kind), else global_counter + 1, recorded. */
static int
innovation(CoreState *st, PyObject *tracker, int64_t i, int64_t o, PyObject *kind, int64_t *out)
{
    PyObject *v = NULL;
    if (Py_IS_TYPE(tracker, (PyTypeObject *)st->tracker_class)) {
        PyObject *seen = PyObject_GetAttrString(tracker, "generation_innovations");
        PyObject *key = seen ? Py_BuildValue("(LLO)", (long long)i, (long long)o, kind) : NULL;
        v = key ? PyDict_GetItemWithError(seen, key) : NULL;
        if (v)
            Py_INCREF(v);
        else if (key && !PyErr_Occurred()) {
            PyObject *counter = PyObject_GetAttrString(tracker, "global_counter");
            v = counter ? PyNumber_Add(counter, st->one) : NULL;
            Py_XDECREF(counter);
            if (v && (PyObject_SetAttrString(tracker, "global_counter", v) < 0 || PyDict_SetItem(seen, key, v) < 0))
                Py_CLEAR(v);
        }
        Py_XDECREF(seen);
        Py_XDECREF(key);
    }
    else
        v = PyObject_CallMethod(tracker, "get_innovation_number", "LLO", (long long)i, (long long)o, kind);
    if (!v)
        return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* DefaultGenomeConfig.get_new_node_key */
static int
new_node_key(const Cfg *c, const Genes *g, int64_t *out)
{
    PyObject *indexer = PyObject_GetAttr(c->config, c->st->str_node_indexer);
    if (!indexer)
        return -1;
    if (indexer == Py_None) {
        Py_DECREF(indexer);
        int64_t start = c->num_outputs;
        if (g->nn) {
            start = g->nodes[0].key;
            for (Py_ssize_t i = 1; i < g->nn; i++)
                if (g->nodes[i].key > start)
                    start = g->nodes[i].key;
            start += 1;
        }
        indexer = PyObject_CallFunction(c->st->count_type, "L", (long long)start);
        if (!indexer || PyObject_SetAttr(c->config, c->st->str_node_indexer, indexer) < 0) {
            Py_XDECREF(indexer);
            return -1;
        }
    }
    PyObject *v = PyIter_Next(indexer);
    Py_DECREF(indexer);
    if (!v) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "neatpar: the node indexer ran out");
        return -1;
    }
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (*out == -1 && PyErr_Occurred())
        return -1;
    if (has_node(g, *out)) {
        PyErr_SetString(PyExc_AssertionError, "");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Operators (neat/genome.py, neat/genes.py)                                                  */

int
begin(CoreState *st, Rng *r)
{
    if (st->rng_in_place < 0)
        st->rng_in_place = rng_layout_ok(st->random_module);
    return rng_begin(r, st);
}

/* The connection gene parent1's `c1` passes to the child: c1 with, when parent2 has a gene of the
   same innovation (`c2`, or NULL), the attributes crossed (or, where the keys differ, c1 with the
   warning neat-python gives). */
static int
cross_connection(Rng *r, const Conn *c1, const Conn *c2, Conn *child)
{
    *child = *c1;
    if (!c2)
        return 0;
    if (c1->in != c2->in || c1->out != c2->out)
        return PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                "Innovation number collision: innovation %lld assigned to both (%lld, %lld) and "
                "(%lld, %lld). Treating as disjoint genes.", (long long)c1->innov,
                (long long)c1->in, (long long)c1->out, (long long)c2->in, (long long)c2->out);
    /* BaseGene.crossover: each attribute from self if random() > 0.5, then the 75% rule */
    child->weight = rng_random(r) > 0.5 ? c1->weight : c2->weight;
    child->enabled = rng_random(r) > 0.5 ? c1->enabled : c2->enabled;
    if (!c1->enabled || !c2->enabled) {
        if (rng_random(r) < 0.75)
            child->enabled = 0;
    }
    return 0;
}

/* The connection genes, in the order of the union of the parents' innovations (`u`'s table, or
   `order` when n_order >= 0): each of parent1's crossed, and kept unless `check` and it would
   close a cycle in the child. */
static int
cross_connections(Rng *r, Genes *g, const Genes *p1, const Genes *p2, const PSet *u, const int64_t *order,
                  Py_ssize_t n_order, int check)
{
    Py_ssize_t slots = n_order >= 0 ? n_order : (Py_ssize_t)u->mask + 1;
    for (Py_ssize_t s = 0; s < slots; s++) {
        const PSEntry *e;
        if (n_order >= 0) {
            e = ps_find(u, order[s], ps_hash(order[s]));
            if (!e) {
                PyErr_SetString(PyExc_RuntimeError, "neatpar: reference set order has an unknown innovation");
                return -1;
            }
        }
        else {
            e = &u->table[s];
            if (!PS_IS_ACTIVE(e))
                continue;
        }
        if (PS_A(e) < 0)
            continue;  /* genes only in parent2 (less fit) are not inherited */
        Conn child;
        if (cross_connection(r, &p1->conns[PS_A(e)], e->b >= 0 ? &p2->conns[e->b] : NULL, &child) < 0)
            return -1;
        if (check) {
            int cyc = creates_cycle(g, child.in, child.out);
            if (cyc < 0)
                return -1;
            if (cyc)
                continue;
        }
        g->conns[g->nc++] = child;
    }
    return 0;
}

/* The node genes: parent1's, each crossed with parent2's gene of the same key where it has one. */
static int
cross_nodes(Rng *r, Genes *g, const Genes *p1, Genes *p2)
{
    if (!view_of(p2))
        return -1;
    for (Py_ssize_t i = 0; i < p1->nn; i++) {
        const Node *n1 = &p1->nodes[i];
        Py_ssize_t j = node_pos(p2, n1->key);
        Node child = *n1;
        if (j >= 0) {
            const Node *n2 = &p2->nodes[j];
            child.bias = rng_random(r) > 0.5 ? n1->bias : n2->bias;
            child.response = rng_random(r) > 0.5 ? n1->response : n2->response;
            child.act = rng_random(r) > 0.5 ? n1->act : n2->act;
            child.agg = rng_random(r) > 0.5 ? n1->agg : n2->agg;
            child.time_constant = rng_random(r) > 0.5 ? n1->time_constant : n2->time_constant;
        }
        g->nodes[g->nn++] = child;
    }
    return 0;
}

/* DefaultGenome.configure_crossover into the empty child `g`, parent1 (`p1`) being the fitter. */
int
crossover_genes(Rng *r, const Cfg *c, Genes *g, Genes *p1, Genes *p2)
{
    if (g->nn || g->nc) {
        PyErr_SetString(PyExc_ValueError, "neatpar: crossover fills an empty genome");
        return -1;
    }
    int rc = -1;
    PSet s1, s2, u;
    ps_init(&s1); ps_init(&s2); ps_init(&u);
    int64_t *order = NULL;
    if (!c->st->sets_emulated || c->st->sets_emulated < 0) {
        if (c->st->sets_emulated < 0 && check_sets(c->st) < 0)
            goto done;
        order = PyMem_Malloc(sizeof(int64_t) * (p1->nc + p2->nc + 1));
        if (!order) {
            PyErr_NoMemory();
            goto done;
        }
    }
    Py_ssize_t n_order;
    if (innovation_union(c->st, p1, p2, &s1, &s2, &u, order, &n_order) < 0)
        goto done;
    if (reserve((void **)&g->conns, &g->conn_cap, p1->nc + 4, sizeof(Conn)) < 0
        || reserve((void **)&g->nodes, &g->node_cap, p1->nn + 2, sizeof(Node)) < 0)
        goto done;
    /* A child's connection keys are a subset of parent1's: when parent1 has no cycle, no gene can
       close one and creates_cycle is False for every gene. */
    int check = 0;
    if (c->feed_forward) {
        int acyclic = is_acyclic(p1);
        if (acyclic < 0)
            goto done;
        check = !acyclic;
    }
    if (cross_connections(r, g, p1, p2, &u, order, n_order, check) == 0 && cross_nodes(r, g, p1, p2) == 0)
        rc = 0;
done:
    ps_free(&s1); ps_free(&s2); ps_free(&u);
    PyMem_Free(order);
    genes_changed(g);
    return rc;
}

/* parent1 is genome1 if genome1.fitness > genome2.fitness, else genome2 */
int
fitter_first(PyObject *f1, PyObject *f2)
{
    return PyObject_RichCompareBool(f1, f2, Py_GT);
}

/* DefaultGenome.configure_crossover(genome1, genome2) into the empty child `g`. */
int
crossover(Rng *r, const Cfg *c, Genes *g, PyObject *genome1, PyObject *genome2, PyObject *snapshots)
{
    PyObject *f1 = PyObject_GetAttr(genome1, c->st->str_fitness);
    PyObject *f2 = f1 ? PyObject_GetAttr(genome2, c->st->str_fitness) : NULL;
    int gt = f2 ? fitter_first(f1, f2) : -1;
    Py_XDECREF(f1);
    Py_XDECREF(f2);
    if (gt < 0)
        return -1;
    Genes *p1 = genes_of(c->st, gt ? genome1 : genome2, snapshots);
    Genes *p2 = p1 ? genes_of(c->st, gt ? genome2 : genome1, snapshots) : NULL;
    int rc = p2 ? crossover_genes(r, c, g, p1, p2) : -1;
    Py_XDECREF(p1);
    Py_XDECREF(p2);
    return rc;
}

static const char TRACKER_MUTATE[] = "Innovation tracker must be set before genome mutations. "
                                     "This should be set by the reproduction module.";

static int mutate_add_connection(Rng *r, const Cfg *c, Genes *g);

/* DefaultGenome.add_connection(config, i, o, weight, enabled, innovation) */
static int
add_connection(Rng *r, const Cfg *c, Genes *g, int64_t i, int64_t o, double weight, int enabled, int64_t innov)
{
    Conn cg;
    if (o < 0) {
        PyErr_SetString(PyExc_AssertionError, "");
        return -1;
    }
    if (conn_init(r, c, &cg, i, o, innov) < 0)
        return -1;
    cg.weight = weight;
    cg.enabled = enabled;
    return set_conn(g, &cg);
}

static int
mutate_add_node(Rng *r, const Cfg *c, Genes *g)
{
    if (g->nc == 0) {
        if (c->surer)
            return mutate_add_connection(r, c, g);
        return 0;
    }
    PyObject *tracker = tracker_of(c, TRACKER_MUTATE);
    if (!tracker)
        return -1;
    int rc = -1;
    Py_ssize_t at = rng_choice(r, g->nc);
    int64_t new_id, in_innov, out_innov;
    Node n;
    if (at < 0 || new_node_key(c, g, &new_id) < 0 || node_init(r, c, &n, new_id) < 0)
        goto done;
    n.bias = 0.0;  /* hasattr(ng, "bias"): ng.bias = 0.0 */
    if (push_node(g, &n) < 0)
        goto done;
    g->conns[at].enabled = 0;
    int64_t i = g->conns[at].in, o = g->conns[at].out;
    if (innovation(c->st, tracker, i, new_id, c->st->str_add_node_in, &in_innov) < 0
        || innovation(c->st, tracker, new_id, o, c->st->str_add_node_out, &out_innov) < 0
        || add_connection(r, c, g, i, new_id, 1.0, 1, in_innov) < 0)
        goto done;
    /* conn_to_split.weight: the split gene, wherever it now sits */
    Py_ssize_t split = find_conn(g, i, o);
    if (add_connection(r, c, g, new_id, o, g->conns[split].weight, 1, out_innov) < 0)
        goto done;
    rc = 0;
done:
    Py_DECREF(tracker);
    return rc;
}

static int
mutate_add_connection(Rng *r, const Cfg *c, Genes *g)
{
    PyObject *tracker = tracker_of(c, TRACKER_MUTATE);
    if (!tracker)
        return -1;
    int rc = -1;
    int64_t *keys = PyMem_Malloc(sizeof(int64_t) * (2 * (g->nn + c->n_input_keys) + 1));
    if (!keys) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t oi = rng_choice(r, g->nn);
    if (oi < 0)
        goto done;
    int64_t out_node = g->nodes[oi].key;
    int64_t *node_keys = keys + g->nn + c->n_input_keys;
    for (Py_ssize_t k = 0; k < g->nn; k++)
        node_keys[k] = g->nodes[k].key;
    Py_ssize_t np = possible_inputs_order(c->st, node_keys, g->nn, c->output_keys, c->n_output_keys,
                                          c->input_keys, c->n_input_keys, keys);
    if (np < 0)
        goto done;
    Py_ssize_t ii = rng_choice(r, np);
    if (ii < 0)
        goto done;
    int64_t in_node = keys[ii];
    Py_ssize_t existing = find_conn(g, in_node, out_node);
    if (existing >= 0) {
        if (c->surer) {
            g->conns[existing].enabled = 1;
        }
        rc = 0;
        goto done;
    }
    if (is_output(c, in_node) && is_output(c, out_node)) {
        rc = 0;
        goto done;
    }
    if (c->feed_forward) {
        int cyc = creates_cycle(g, in_node, out_node);
        if (cyc < 0)
            goto done;
        if (cyc) {
            rc = 0;
            goto done;
        }
    }
    int64_t innov;
    Conn cg;
    if (innovation(c->st, tracker, in_node, out_node, c->st->str_add_connection, &innov) < 0
        || conn_init(r, c, &cg, in_node, out_node, innov) < 0 || set_conn(g, &cg) < 0)
        goto done;
    rc = 0;
done:
    PyMem_Free(keys);
    Py_DECREF(tracker);
    return rc;
}

static int
mutate_delete_node(Rng *r, const Cfg *c, Genes *g)
{
    Py_ssize_t navail = 0;
    Py_ssize_t *avail = PyMem_Malloc(sizeof(Py_ssize_t) * (g->nn + 1));
    if (!avail) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < g->nn; k++)
        if (!is_output(c, g->nodes[k].key))
            avail[navail++] = k;
    if (navail == 0) {
        PyMem_Free(avail);
        return 0;
    }
    Py_ssize_t pick = rng_choice(r, navail);
    if (pick < 0) {
        PyMem_Free(avail);
        return -1;
    }
    Py_ssize_t at = avail[pick];
    PyMem_Free(avail);
    remove_conns_of(g, g->nodes[at].key);
    remove_node_at(g, at);
    return 0;
}

static int
mutate_delete_connection(Rng *r, Genes *g)
{
    if (g->nc == 0)
        return 0;
    Py_ssize_t at = rng_choice(r, g->nc);
    if (at < 0)
        return -1;
    remove_conn_at(g, at);
    return 0;
}

/* DefaultGenome.mutate */
int
mutate(Rng *r, const Cfg *c, Genes *g)
{
    int rc = 0;
    if (c->single_structural) {
        double sum = c->node_add + c->node_delete + c->conn_add + c->conn_delete;
        double div = sum > 1 ? sum : 1;  /* max(1, ...) */
        double x = rng_random(r);
        if (x < c->node_add / div)
            rc = mutate_add_node(r, c, g);
        else if (x < (c->node_add + c->node_delete) / div)
            rc = mutate_delete_node(r, c, g);
        else if (x < (c->node_add + c->node_delete + c->conn_add) / div)
            rc = mutate_add_connection(r, c, g);
        else if (x < (c->node_add + c->node_delete + c->conn_add + c->conn_delete) / div)
            rc = mutate_delete_connection(r, g);
    }
    else {
        if (rng_random(r) < c->node_add)
            rc = mutate_add_node(r, c, g);
        if (rc == 0 && rng_random(r) < c->node_delete)
            rc = mutate_delete_node(r, c, g);
        if (rc == 0 && rng_random(r) < c->conn_add)
            rc = mutate_add_connection(r, c, g);
        if (rc == 0 && rng_random(r) < c->conn_delete)
            rc = mutate_delete_connection(r, g);
    }
    genes_changed(g);
    if (rc < 0)
        return -1;
    for (Py_ssize_t k = 0; k < g->nc; k++) {
        Conn *cg = &g->conns[k];
        if (float_mutate(r, &c->weight, &cg->weight) < 0)
            return -1;
        bool_mutate(r, &c->enabled, &cg->enabled);
    }
    for (Py_ssize_t k = 0; k < g->nn; k++) {
        Node *n = &g->nodes[k];
        if (float_mutate(r, &c->bias, &n->bias) < 0 || float_mutate(r, &c->response, &n->response) < 0
            || str_mutate(r, &c->activation, &n->act) < 0 || str_mutate(r, &c->aggregation, &n->agg) < 0
            || float_mutate(r, &c->time_constant, &n->time_constant) < 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* configure_new and the initial connection schemes                                           */

static int
connect_pairs(Rng *r, const Cfg *c, Genes *g, PyObject *tracker, const int64_t *pairs, Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t innov;
        Conn cg;
        if (innovation(c->st, tracker, pairs[2 * k], pairs[2 * k + 1], c->st->str_initial_connection, &innov) < 0
            || conn_init(r, c, &cg, pairs[2 * k], pairs[2 * k + 1], innov) < 0 || set_conn(g, &cg) < 0)
            return -1;
    }
    return 0;
}

/* compute_full_connections(config, direct): pairs into a new array (2 keys per pair). */
static int64_t *
full_connections(const Cfg *c, const Genes *g, int direct, Py_ssize_t *n)
{
    Py_ssize_t nh = 0, no = 0;
    for (Py_ssize_t k = 0; k < g->nn; k++) {
        if (is_output(c, g->nodes[k].key))
            no++;
        else
            nh++;
    }
    Py_ssize_t ni = c->n_input_keys;
    Py_ssize_t max = ni * nh + nh * no + ni * no + g->nn + 1;
    int64_t *p = PyMem_Malloc(sizeof(int64_t) * 2 * max);
    if (!p) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_ssize_t m = 0;
#define PAIR(a, b) do { p[2 * m] = (a); p[2 * m + 1] = (b); m++; } while (0)
    if (nh) {
        for (Py_ssize_t i = 0; i < ni; i++)
            for (Py_ssize_t k = 0; k < g->nn; k++)
                if (!is_output(c, g->nodes[k].key))
                    PAIR(c->input_keys[i], g->nodes[k].key);
        for (Py_ssize_t h = 0; h < g->nn; h++)
            if (!is_output(c, g->nodes[h].key))
                for (Py_ssize_t k = 0; k < g->nn; k++)
                    if (is_output(c, g->nodes[k].key))
                        PAIR(g->nodes[h].key, g->nodes[k].key);
    }
    if (direct || !nh)
        for (Py_ssize_t i = 0; i < ni; i++)
            for (Py_ssize_t k = 0; k < g->nn; k++)
                if (is_output(c, g->nodes[k].key))
                    PAIR(c->input_keys[i], g->nodes[k].key);
    if (!c->feed_forward)
        for (Py_ssize_t k = 0; k < g->nn; k++)
            PAIR(g->nodes[k].key, g->nodes[k].key);
#undef PAIR
    *n = m;
    return p;
}

/* The connection scheme's name as configure_new resolves it; `kind` is one of neat-python's
   allowed_connectivity names. */
static int
connect_initial(Rng *r, const Cfg *c, Genes *g, const char *kind)
{
    if (!strcmp(kind, "unconnected"))
        return 0;
    PyObject *tracker = tracker_of(c, "Innovation tracker must be set");
    if (!tracker)
        return -1;
    int rc = -1;
    int64_t *pairs = NULL;
    Py_ssize_t n = 0;
    if (!strncmp(kind, "fs_neat", 7)) {
        Py_ssize_t at = rng_choice(r, c->n_input_keys);
        if (at < 0)
            goto done;
        int64_t input_id = c->input_keys[at];
        pairs = PyMem_Malloc(sizeof(int64_t) * 2 * (g->nn + c->n_output_keys + 1));
        if (!pairs) {
            PyErr_NoMemory();
            goto done;
        }
        if (!strcmp(kind, "fs_neat_hidden")) {
            for (Py_ssize_t k = 0; k < g->nn; k++)
                if (!is_input(c, g->nodes[k].key)) {
                    pairs[2 * n] = input_id;
                    pairs[2 * n++ + 1] = g->nodes[k].key;
                }
        }
        else {
            for (Py_ssize_t k = 0; k < c->n_output_keys; k++) {
                pairs[2 * n] = input_id;
                pairs[2 * n++ + 1] = c->output_keys[k];
            }
        }
    }
    else {
        int direct = !strcmp(kind, "full_direct") || !strcmp(kind, "partial_direct");
        pairs = full_connections(c, g, direct, &n);
        if (!pairs)
            goto done;
        if (!strncmp(kind, "partial", 7)) {
            /* shuffle(all_connections); all_connections[:int(round(len * fraction))] */
            for (Py_ssize_t i = n - 1; i >= 1; i--) {
                Py_ssize_t j = rng_below(r, i + 1);
                int64_t a = pairs[2 * i], b = pairs[2 * i + 1];
                pairs[2 * i] = pairs[2 * j];
                pairs[2 * i + 1] = pairs[2 * j + 1];
                pairs[2 * j] = a;
                pairs[2 * j + 1] = b;
            }
            Py_ssize_t take = (Py_ssize_t)nearbyint((double)n * c->connection_fraction);
            n = take < n ? take : n;
        }
    }
    rc = connect_pairs(r, c, g, tracker, pairs, n);
done:
    PyMem_Free(pairs);
    Py_DECREF(tracker);
    return rc;
}

int
configure_new(Rng *r, const Cfg *c, Genes *g, const char *kind)
{
    for (Py_ssize_t k = 0; k < c->n_output_keys; k++) {
        Node n;
        if (node_init(r, c, &n, c->output_keys[k]) < 0 || push_node(g, &n) < 0)
            return -1;
    }
    for (long h = 0; h < c->num_hidden; h++) {
        int64_t key;
        Node n;
        if (new_node_key(c, g, &key) < 0 || node_init(r, c, &n, key) < 0 || push_node(g, &n) < 0)
            return -1;
    }
    return connect_initial(r, c, g, kind);
}
