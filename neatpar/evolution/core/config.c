/* The genome config read once into a Cfg, and ConfigView: a config read once for many operators. */
#include "config.h"
#include "genes.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* The genome config, read once per operation (or once per reproduction, see hold())          */


int
cfg_double(PyObject *config, const char *name, double *out)
{
    PyObject *v = PyObject_GetAttrString(config, name);
    if (!v)
        return -1;
    *out = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

static int
cfg_long(PyObject *config, const char *name, long *out)
{
    PyObject *v = PyObject_GetAttrString(config, name);
    if (!v)
        return -1;
    *out = PyLong_AsLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int
cfg_truth(PyObject *config, const char *name, int *out)
{
    PyObject *v = PyObject_GetAttrString(config, name);
    if (!v)
        return -1;
    *out = PyObject_IsTrue(v);
    Py_DECREF(v);
    return *out < 0 ? -1 : 0;
}

static int
cfg_keys(PyObject *config, const char *name, int64_t **out, Py_ssize_t *n)
{
    PyObject *v = PyObject_GetAttrString(config, name);
    PyObject *seq = v ? PySequence_Fast(v, "neatpar: input_keys and output_keys must be lists") : NULL;
    Py_XDECREF(v);
    if (!seq)
        return -1;
    *n = PySequence_Fast_GET_SIZE(seq);
    *out = PyMem_Malloc(sizeof(int64_t) * (*n + 1));
    for (Py_ssize_t i = 0; *out && i < *n; i++)
        (*out)[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (!*out) {
        PyErr_NoMemory();
        return -1;
    }
    return PyErr_Occurred() ? -1 : 0;
}

static int
cfg_float_attr(PyObject *config, const char *name, FloatCfg *f)
{
    char buf[64];
    f->name = name;
    const char *items[] = {"init_mean", "init_stdev", "replace_rate", "mutate_rate", "mutate_power",
                           "max_value", "min_value"};
    double *dst[] = {&f->init_mean, &f->init_stdev, &f->replace_rate, &f->mutate_rate, &f->mutate_power,
                     &f->max_value, &f->min_value};
    for (int i = 0; i < 7; i++) {
        snprintf(buf, sizeof buf, "%s_%s", name, items[i]);
        if (cfg_double(config, buf, dst[i]) < 0)
            return -1;
    }
    snprintf(buf, sizeof buf, "%s_init_type", name);
    f->init_type_raw = PyObject_GetAttrString(config, buf);
    if (!f->init_type_raw)
        return -1;
    PyObject *lower = PyObject_CallMethod(f->init_type_raw, "lower", NULL);
    if (!lower)
        return -1;
    /* FloatAttribute.init_value: 'gauss' or 'normal' in it, else 'uniform' in it */
    const char *s = PyUnicode_AsUTF8(lower);
    f->init_type = !s ? INIT_UNKNOWN
                      : (strstr(s, "gauss") || strstr(s, "normal")) ? INIT_GAUSS
                      : strstr(s, "uniform") ? INIT_UNIFORM : INIT_UNKNOWN;
    Py_DECREF(lower);
    return PyErr_Occurred() ? -1 : 0;
}

static int
cfg_str_attr(CoreState *st, PyObject *config, const char *name, StrCfg *s)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s_mutate_rate", name);
    if (cfg_double(config, buf, &s->mutate_rate) < 0)
        return -1;
    snprintf(buf, sizeof buf, "%s_options", name);
    PyObject *opts = PyObject_GetAttrString(config, buf);
    PyObject *seq = opts ? PySequence_Fast(opts, "neatpar: options must be a list") : NULL;
    Py_XDECREF(opts);
    if (!seq)
        return -1;
    s->n_options = PySequence_Fast_GET_SIZE(seq);
    s->options = PyMem_Malloc(sizeof(int32_t) * (s->n_options + 1));
    for (Py_ssize_t i = 0; s->options && i < s->n_options; i++)
        if ((s->options[i] = name_id(st, PySequence_Fast_GET_ITEM(seq, i))) < 0)
            break;
    Py_DECREF(seq);
    if (!s->options)
        PyErr_NoMemory();
    if (PyErr_Occurred())
        return -1;
    snprintf(buf, sizeof buf, "%s_default", name);
    PyObject *d = PyObject_GetAttrString(config, buf);
    if (!d)
        return -1;
    PyObject *lower = PyObject_CallMethod(d, "lower", NULL);
    const char *ls = lower ? PyUnicode_AsUTF8(lower) : NULL;
    s->random_default = ls && (strcmp(ls, "none") == 0 || strcmp(ls, "random") == 0);
    Py_XDECREF(lower);
    s->default_id = (ls && !s->random_default) ? name_id(st, d) : 0;
    Py_DECREF(d);
    return PyErr_Occurred() ? -1 : 0;
}

static int
cfg_bool_attr(PyObject *config, BoolCfg *b)
{
    if (cfg_double(config, "enabled_mutate_rate", &b->mutate_rate) < 0
        || cfg_double(config, "enabled_rate_to_true_add", &b->rate_to_true_add) < 0
        || cfg_double(config, "enabled_rate_to_false_add", &b->rate_to_false_add) < 0)
        return -1;
    /* BoolAttribute.init_value: str(default).lower() */
    PyObject *d = PyObject_GetAttrString(config, "enabled_default");
    PyObject *s = d ? PyObject_Str(d) : NULL;
    Py_XDECREF(d);
    b->default_lower = s ? PyObject_CallMethod(s, "lower", NULL) : NULL;
    Py_XDECREF(s);
    const char *v = b->default_lower ? PyUnicode_AsUTF8(b->default_lower) : NULL;
    if (!v)
        return -1;
    b->deflt = (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true")) ? BOOL_TRUE
             : (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "false")) ? BOOL_FALSE
             : (!strcmp(v, "random") || !strcmp(v, "none")) ? BOOL_RANDOM : BOOL_UNKNOWN;
    return 0;
}

static void
cfg_clear(Cfg *c)
{
    Py_CLEAR(c->config);
    Py_CLEAR(c->initial_connection);
    FloatCfg *fs[] = {&c->bias, &c->response, &c->time_constant, &c->weight};
    for (int i = 0; i < 4; i++)
        Py_CLEAR(fs[i]->init_type_raw);
    Py_CLEAR(c->enabled.default_lower);
    PyMem_Free(c->input_keys);
    PyMem_Free(c->output_keys);
    PyMem_Free(c->activation.options);
    PyMem_Free(c->aggregation.options);
    memset(c, 0, sizeof *c);
}

/* Whether the genome config's genes are neat-python's defaults with the attributes the records
   hold (the lists checked when the module was set up, unchanged since). */
int
standard_config(CoreState *st, PyObject *config)
{
    PyObject *nt = PyObject_GetAttrString(config, "node_gene_type");
    PyObject *ct = nt ? PyObject_GetAttrString(config, "connection_gene_type") : NULL;
    int ok = ct && nt == st->node_gene_type && ct == st->conn_gene_type && st->node_attribute_list != Py_None;
    Py_XDECREF(nt);
    Py_XDECREF(ct);
    PyErr_Clear();
    if (!ok)
        return 0;
    PyObject *nl = PyObject_GetAttrString(st->node_gene_type, "_gene_attributes");
    PyObject *cl = PyObject_GetAttrString(st->conn_gene_type, "_gene_attributes");
    ok = nl == st->node_attribute_list && cl == st->conn_attribute_list && PyList_Check(nl) && PyList_Check(cl)
         && PyList_GET_SIZE(nl) == 5 && PyList_GET_SIZE(cl) == 2;
    Py_XDECREF(nl);
    Py_XDECREF(cl);
    PyErr_Clear();
    return ok;
}

/* Whether this genome class keeps neatpar's operators (-1 on error). */
int
plain_type(CoreState *st, PyObject *type)
{
    if (type == st->genome_class)
        return 1;
    PyObject *known = PyDict_GetItemWithError(st->plain_types, type);
    if (known)
        return known == Py_True;
    if (PyErr_Occurred())
        return -1;
    PyObject *v = PyObject_CallOneArg(st->plain_class_fn, type);
    if (!v)
        return -1;
    int plain = PyObject_IsTrue(v);
    int rc = PyDict_SetItem(st->plain_types, type, plain ? Py_True : Py_False);
    Py_DECREF(v);
    return rc < 0 ? -1 : plain;
}

static int
cfg_load(CoreState *st, Cfg *c, PyObject *config)
{
    memset(c, 0, sizeof *c);
    c->st = st;
    c->config = Py_NewRef(config);
    c->standard = standard_config(st, config);
    PyObject *surer = PyObject_CallMethod(config, "check_structural_mutation_surer", NULL);
    if (!surer)
        goto fail;
    c->surer = PyObject_IsTrue(surer);
    Py_DECREF(surer);
    c->initial_connection = PyObject_GetAttrString(config, "initial_connection");
    PyObject *frac = PyObject_GetAttrString(config, "connection_fraction");
    if (!c->initial_connection || !frac)
        goto fail;
    c->connection_fraction = frac == Py_None ? 0.0 : PyFloat_AsDouble(frac);
    Py_DECREF(frac);
    if (c->surer < 0 || PyErr_Occurred()
        || cfg_long(config, "num_inputs", &c->num_inputs) < 0
        || cfg_long(config, "num_outputs", &c->num_outputs) < 0
        || cfg_long(config, "num_hidden", &c->num_hidden) < 0
        || cfg_truth(config, "feed_forward", &c->feed_forward) < 0
        || cfg_truth(config, "single_structural_mutation", &c->single_structural) < 0
        || cfg_double(config, "compatibility_disjoint_coefficient", &c->cdc) < 0
        || cfg_double(config, "compatibility_weight_coefficient", &c->cwc) < 0
        || cfg_double(config, "conn_add_prob", &c->conn_add) < 0
        || cfg_double(config, "conn_delete_prob", &c->conn_delete) < 0
        || cfg_double(config, "node_add_prob", &c->node_add) < 0
        || cfg_double(config, "node_delete_prob", &c->node_delete) < 0
        || cfg_keys(config, "input_keys", &c->input_keys, &c->n_input_keys) < 0
        || cfg_keys(config, "output_keys", &c->output_keys, &c->n_output_keys) < 0
        || cfg_float_attr(config, "bias", &c->bias) < 0
        || cfg_float_attr(config, "response", &c->response) < 0
        || cfg_float_attr(config, "time_constant", &c->time_constant) < 0
        || cfg_float_attr(config, "weight", &c->weight) < 0
        || cfg_bool_attr(config, &c->enabled) < 0
        || cfg_str_attr(st, config, "activation", &c->activation) < 0
        || cfg_str_attr(st, config, "aggregation", &c->aggregation) < 0)
        goto fail;
    return 0;
fail:
    cfg_clear(c);
    return -1;
}

static PyObject *
ConfigView_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)kwds;
    PyObject *config;
    if (!PyArg_ParseTuple(args, "O:ConfigView", &config))
        return NULL;
    ConfigView *v = PyObject_New(ConfigView, type);
    if (!v)
        return NULL;
    if (cfg_load(PyType_GetModuleState(type), &v->cfg, config) < 0) {
        memset(&v->cfg, 0, sizeof v->cfg);
        Py_DECREF(v);
        return NULL;
    }
    return (PyObject *)v;
}

static void
ConfigView_dealloc(ConfigView *v)
{
    PyTypeObject *type = Py_TYPE(v);
    cfg_clear(&v->cfg);
    PyObject_Free(v);
    Py_DECREF(type);
}

static PyType_Slot config_view_slots[] = {
    {Py_tp_doc, (void *)"ConfigView(genome_config): the config read once, for many operators in a row."},
    {Py_tp_new, SLOT_FN(ConfigView_new)},
    {Py_tp_dealloc, SLOT_FN(ConfigView_dealloc)},
    {0, NULL},
};

/* The ConfigView type, made once per module (a heap type in the module's state). */
PyType_Spec config_view_spec = {
    .name = "neatpar.evolution._core.ConfigView",
    .basicsize = sizeof(ConfigView),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = config_view_slots,
};

/* The config's records: a view's, or the config read into `local`. */
Cfg *
cfg_acquire(CoreState *st, PyObject *config, Cfg *local)
{
    if (Py_IS_TYPE(config, st->config_view_type))
        return &((ConfigView *)config)->cfg;
    return cfg_load(st, local, config) < 0 ? NULL : local;
}

void
cfg_release(Cfg *c, Cfg *local)
{
    if (c == local)
        cfg_clear(c);
}

int
is_output(const Cfg *c, int64_t key)
{
    for (Py_ssize_t i = 0; i < c->n_output_keys; i++)
        if (c->output_keys[i] == key)
            return 1;
    return 0;
}

int
is_input(const Cfg *c, int64_t key)
{
    for (Py_ssize_t i = 0; i < c->n_input_keys; i++)
        if (c->input_keys[i] == key)
            return 1;
    return 0;
}
