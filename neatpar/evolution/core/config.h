/* The genome config read once into a Cfg, and ConfigView, a config read once for many operators
(config.c). */
#ifndef NEATPAR_CONFIG_H
#define NEATPAR_CONFIG_H

#include "state.h"

enum { INIT_GAUSS, INIT_UNIFORM, INIT_UNKNOWN };
enum { BOOL_FALSE, BOOL_TRUE, BOOL_RANDOM, BOOL_UNKNOWN };

typedef struct {
    double init_mean, init_stdev, replace_rate, mutate_rate, mutate_power, max_value, min_value;
    int init_type;
    PyObject *init_type_raw;     /* for neat-python's error message */
    const char *name;
} FloatCfg;

typedef struct {
    int deflt;
    PyObject *default_lower;
    double mutate_rate, rate_to_true_add, rate_to_false_add;
} BoolCfg;

typedef struct {
    int random_default;
    int32_t default_id;
    int32_t *options;
    Py_ssize_t n_options;
    double mutate_rate;
} StrCfg;

typedef struct {
    CoreState *st;               /* the module state it was read for */
    PyObject *config;            /* strong reference */
    int standard;                /* standard_config(config) */
    long num_inputs, num_outputs, num_hidden;
    int feed_forward, single_structural, surer;
    double cdc, cwc, conn_add, conn_delete, node_add, node_delete;
    PyObject *initial_connection;
    double connection_fraction;
    int64_t *input_keys, *output_keys;
    Py_ssize_t n_input_keys, n_output_keys;
    FloatCfg bias, response, time_constant, weight;
    BoolCfg enabled;
    StrCfg activation, aggregation;
} Cfg;

/* A genome config read once (what a reproduction or create_new passes to every operator it runs,
   instead of the config, so that it is read once, not once per genome). */
typedef struct {
    PyObject_HEAD
    Cfg cfg;
} ConfigView;

extern PyType_Spec config_view_spec;

int cfg_double(PyObject *config, const char *name, double *out);
int standard_config(CoreState *st, PyObject *config);
int plain_type(CoreState *st, PyObject *type);
Cfg *cfg_acquire(CoreState *st, PyObject *config, Cfg *local);
void cfg_release(Cfg *c, Cfg *local);
int is_output(const Cfg *c, int64_t key);
int is_input(const Cfg *c, int64_t key);

#endif
