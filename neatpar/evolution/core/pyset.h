/* CPython's set tables re-enacted on int64 keys, for their iteration order (pyset.c). */
#ifndef NEATPAR_PYSET_H
#define NEATPAR_PYSET_H

#include "state.h"

#define PS_MINSIZE 8
#define PS_LINEAR_PROBES 9
#define PS_PERTURB_SHIFT 5

/* An entry: the key and two payload positions. `tag` is 0 for an empty slot, 1 for a dummy (a
   discarded key), and 3 + the first payload for a key (payloads are >= -1). The hash is not kept:
   it is recomputed from the key (for ints, equal keys are equal hashes). */
typedef struct {
    int64_t key;
    int32_t tag, b;
} PSEntry;

#define PS_EMPTY 0
#define PS_DUMMY 1
#define PS_IS_ACTIVE(e) ((e)->tag >= 2)
#define PS_A(e) ((e)->tag - 3)
#define PS_SET_A(e, v) ((e)->tag = (int32_t)(v) + 3)

typedef struct {
    PSEntry *table;
    size_t mask;
    Py_ssize_t fill, used;
    PSEntry small[PS_MINSIZE];
} PSet;

Py_hash_t ps_hash(int64_t v);
void ps_init(PSet *s);
void ps_free(PSet *s);
int ps_add(PSet *s, int64_t key, Py_hash_t hash, PSEntry **out, int *added);
PSEntry *ps_find(const PSet *s, int64_t key, Py_hash_t hash);
int ps_merge(PSet *so, const PSet *other);
int ps_add_all(PSet *s, const int64_t *keys, Py_ssize_t n, int second);
int ps_from_dict_keys(PSet *s, const int64_t *keys, Py_ssize_t n);
int ps_difference(const PSet *a, const PSet *b, PSet *out);
void ps_order(const PSet *s, int64_t *dst);

#endif
